//! Evaluation of a batch of genomes. Every evaluation of a run goes through [`evaluate_all`],
//! the one place a search's evaluations are spread over threads and, under MPI, ranks.

use crate::search::{Evaluation, SearchProblem};

/// The evaluations of `genomes`, in their order, in parallel: rayon threads, and the ranks of
/// an MPI job (`cluster::map`). Since `evaluate` draws no random numbers ([`SearchProblem`])
/// and the order is kept, the result depends on neither the thread nor the rank count.
pub(crate) fn evaluate_all<P: SearchProblem>(
    problem: &P,
    genomes: &[P::Genome],
) -> Vec<Evaluation> {
    crate::cluster::map("search evaluation", genomes, |g| problem.evaluate(g))
}
