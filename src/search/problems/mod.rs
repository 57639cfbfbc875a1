//! The problems the engine searches, kept apart from it: the real-coded benchmarks (ZDT, DTLZ2),
//! the ExaNeSt link-arrangement problem with its report and Jellyfish comparison, and the
//! evolution of routing tables. Each implements [`SearchProblem`](crate::search::SearchProblem);
//! the engine knows none of them.

pub mod benchmarks;
pub mod exanest;
pub(crate) mod exanest_compare;
pub(crate) mod exanest_report;
pub mod routing_tables;
