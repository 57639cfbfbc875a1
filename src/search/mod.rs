//! Multi-objective search: the [`SearchProblem`] abstraction, NSGA-II and SMS-EMOA, exact
//! hypervolume, real-coded benchmark problems (ZDT, DTLZ) and the ExaNeSt link-arrangement
//! problem. See docs/search.md.

pub mod config;
pub mod exanest;
pub mod exanest_compare;
pub mod exanest_report;
pub mod hypervolume;
pub mod problem;
pub mod stats;

pub use config::{Algorithm, SearchConfig};
pub use problem::{Evaluation, Objective, SearchProblem, Sense};
