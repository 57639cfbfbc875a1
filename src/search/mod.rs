//! Multi-objective search: the [`SearchProblem`] abstraction, NSGA-II and SMS-EMOA, exact
//! hypervolume, real-coded benchmark problems (ZDT, DTLZ) and the ExaNeSt link-arrangement
//! problem. See docs/search.md.

pub mod benchmarks;
pub mod checkpoint;
pub mod config;
pub mod dominance;
pub mod engine;
pub mod exanest;
pub mod exanest_compare;
pub mod exanest_report;
pub mod front;
pub mod ga;
pub mod hypervolume;
pub mod nsga2;
pub mod problem;
pub mod real;
pub mod routing_tables;
pub mod sms_emoa;
pub mod stats;

pub use config::{Algorithm, SearchConfig};
pub use engine::{GenerationRecord, Individual, RunOutcome, RunSettings, run, run_seed};
pub use problem::{Evaluation, Objective, SearchProblem, Sense};
