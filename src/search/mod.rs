//! Multi-objective search: the [`SearchProblem`] abstraction, NSGA-II and SMS-EMOA, exact
//! hypervolume, real-coded benchmark problems (ZDT, DTLZ) and the ExaNeSt link-arrangement
//! problem. See docs/search.md.

pub mod algorithms;
pub mod checkpoint;
pub mod config;
pub mod dominance;
pub mod engine;
pub mod front;
pub mod hypervolume;
pub mod problem;
pub mod problems;
pub mod real;
pub mod stats;

pub use algorithms::{Algorithm, AlgorithmName};
pub use config::SearchConfig;
pub use engine::{GenerationRecord, Individual, RunOutcome, RunSettings, run, run_seed};
pub use problem::{Evaluation, Objective, SearchProblem, Sense};
