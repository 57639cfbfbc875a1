//! Writing what fabricopt builds in formats other tools read, and SVG plots. Files are
//! written through [`crate::files`].

pub mod lmc;
pub mod plot;
pub mod qos;
pub mod routes;
pub mod topology;
