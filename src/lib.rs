//! fabricopt: designs HPC interconnects.
//!
//! Data flows one way: problem file → topology → routing + traffic → simulator → metrics →
//! search → export. A module uses only the modules before it in the order of
//! `docs/architecture.md` ("Module order"), which `tests/module_order.rs` enforces.

pub mod bounds;
pub mod cli;
pub mod cluster;
pub mod error;
pub mod export;
pub mod files;
pub mod learn;
pub mod params;
pub mod pipeline;
pub mod problem_file;
pub mod registry;
pub mod routing;
pub mod search;
pub mod sim;
pub mod topology;
pub mod traffic;

pub use error::{Error, Result};
