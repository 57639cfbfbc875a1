//! Writing what fabricopt builds in formats other tools read.

pub mod topology;
