//! What a search problem provides to the engines: a genome type, its variation operators and
//! an evaluation to a vector of minimised objectives plus a constraint violation.

use std::fmt::Debug;

use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Whether the user-facing value of an objective is minimised or maximised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sense {
    Minimise,
    Maximise,
}

/// One objective: its name (CSV column, JSON key) and direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Objective {
    pub name: String,
    pub sense: Sense,
}

impl Objective {
    pub(crate) fn minimise(name: &str) -> Self {
        Objective {
            name: name.to_string(),
            sense: Sense::Minimise,
        }
    }

    pub fn maximise(name: &str) -> Self {
        Objective {
            name: name.to_string(),
            sense: Sense::Maximise,
        }
    }

    /// Internal (minimised) value -> the natural sign shown to users.
    pub(crate) fn natural(&self, internal: f64) -> f64 {
        match self.sense {
            Sense::Minimise => internal,
            Sense::Maximise => -internal,
        }
    }

    /// Natural value -> the internal (minimised) value.
    pub fn internal(&self, natural: f64) -> f64 {
        self.natural(natural)
    }
}

/// The result of evaluating one genome.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Evaluation {
    /// Objective values, all minimised (maximised objectives are negated).
    pub objectives: Vec<f64>,
    /// Constraint violation: 0 when feasible, larger when more infeasible. Engines use
    /// constrained domination: feasible beats infeasible, less violation beats more.
    pub violation: f64,
    /// Figures reported for every individual but not optimised (see
    /// [`SearchProblem::extra_names`]), e.g. diameter and average distance.
    pub extras: Vec<f64>,
}

impl Evaluation {
    pub(crate) fn feasible(&self) -> bool {
        self.violation <= 0.0
    }
}

/// A multi-objective problem. Implementations must be deterministic: `evaluate` may not draw
/// random numbers (the engine evaluates in parallel and results must not depend on the thread
/// count); the operators draw only from the `rng` they are given.
pub trait SearchProblem: Sync {
    type Genome: Clone + Debug + Send + Sync + Serialize + DeserializeOwned;

    /// Short identifier (`zdt1`, `exanest`), stored in checkpoints.
    fn name(&self) -> String;

    fn objectives(&self) -> &[Objective];

    /// Names of [`Evaluation::extras`], in order.
    fn extra_names(&self) -> &[String] {
        &[]
    }

    /// The default reference point for the hypervolume, in the internal (minimised) space.
    fn reference_point(&self) -> Vec<f64>;

    fn random_genome(&self, rng: &mut ChaCha8Rng) -> Self::Genome;

    /// Produces two children from two parents. The problem applies its own crossover
    /// probability (returning copies of the parents when it does not cross).
    fn crossover(
        &self,
        a: &Self::Genome,
        b: &Self::Genome,
        rng: &mut ChaCha8Rng,
    ) -> (Self::Genome, Self::Genome);

    /// Mutates in place, applying the problem's own mutation probabilities.
    fn mutate(&self, genome: &mut Self::Genome, rng: &mut ChaCha8Rng);

    fn evaluate(&self, genome: &Self::Genome) -> Evaluation;

    /// Whether `genome` is one this problem can evaluate and vary (the right length, every
    /// gene in range); the reason when not. Genomes read from a checkpoint or a file are
    /// checked with it before use, since the operators and `evaluate` assume valid genomes.
    fn check_genome(&self, genome: &Self::Genome) -> Result<(), String>;

    /// Compact text for a genome (a CSV cell): e.g. `5/17/8/22`.
    fn describe(&self, genome: &Self::Genome) -> String;
}
