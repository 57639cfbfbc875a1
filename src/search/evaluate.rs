//! Evaluation of a batch of genomes. Every evaluation of a run goes through [`evaluate_all`],
//! so distributing the evaluations (MPI, say) means replacing this one function.

use rayon::prelude::*;

use crate::search::{Evaluation, SearchProblem};

/// The evaluations of `genomes`, in their order. Runs in parallel with rayon; since
/// `evaluate` draws no random numbers ([`SearchProblem`]) and the order is kept, the result
/// does not depend on the thread count.
pub(crate) fn evaluate_all<P: SearchProblem>(
    problem: &P,
    genomes: &[P::Genome],
) -> Vec<Evaluation> {
    genomes.par_iter().map(|g| problem.evaluate(g)).collect()
}
