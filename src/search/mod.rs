//! Multi-objective search: the [`SearchProblem`] abstraction, a generic engine (the run loop
//! with its [`Termination`], observers and [`evaluate_all`]; the [`Algorithm`]s NSGA-II,
//! SMS-EMOA and a single-objective GA; exact hypervolume; checkpoints) and, in `problems/`,
//! the problems it searches: real-coded benchmarks (ZDT, DTLZ), the ExaNeSt link arrangement
//! and routing tables. See docs/search.md.

pub mod algorithms;
pub mod checkpoint;
pub mod config;
pub(crate) mod dominance;
pub mod engine;
pub mod evaluate;
pub mod front;
pub mod hypervolume;
pub(crate) mod observer;
pub mod problem;
pub mod problems;
pub mod real;
pub mod stats;
pub mod termination;

pub use algorithms::AlgorithmName;
pub(crate) use config::SearchConfig;
pub(crate) use engine::{Individual, RunOutcome, run_seed};
pub use engine::{RunSettings, run};
pub(crate) use problem::Objective;
pub use problem::{Evaluation, SearchProblem};
pub use termination::Termination;
