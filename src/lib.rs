//! fabricopt: designs HPC interconnects.
//!
//! Data flows one way: problem file → topology → routing + traffic → simulator → metrics →
//! search → export. See `docs/architecture.md`.

pub mod bounds;
pub mod cli;
pub mod error;
pub mod export;
pub mod learn;
pub mod problem;
pub mod routing;
pub mod search;
pub mod sim;
pub mod topology;
pub mod traffic;

pub use error::{Error, Result};
