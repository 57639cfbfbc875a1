//! The `[search]` table of a problem file.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::search::AlgorithmName;
use crate::search::algorithms::Objectives;

/// Which algorithms a search runs: one multi-objective algorithm of the registry
/// ([`AlgorithmName`] with [`Objectives::Multi`]) by its name or an alias, or `both`, which
/// runs NSGA-II then SMS-EMOA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlgorithmChoice {
    One(AlgorithmName),
    Both,
}

impl Default for AlgorithmChoice {
    fn default() -> Self {
        AlgorithmChoice::One(AlgorithmName::Nsga2)
    }
}

impl AlgorithmChoice {
    /// The name of `both` in problem files and on the command line.
    pub(crate) const BOTH: &str = "both";
    /// What `both` runs.
    pub(crate) const BOTH_DESCRIPTION: &str = "NSGA-II, then SMS-EMOA";

    pub fn algorithms(self) -> Vec<AlgorithmName> {
        match self {
            AlgorithmChoice::One(a) => vec![a],
            AlgorithmChoice::Both => vec![AlgorithmName::Nsga2, AlgorithmName::SmsEmoa],
        }
    }

    /// The algorithms a search may run alone: the multi-objective ones of the registry.
    pub fn offered() -> impl Iterator<Item = AlgorithmName> {
        AlgorithmName::ALL
            .iter()
            .copied()
            .filter(|a| a.objectives() == Objectives::Multi)
    }

    /// The choice called `name` (an offered algorithm's name or alias, or `both`).
    pub(crate) fn from_name(name: &str) -> Option<AlgorithmChoice> {
        if name == Self::BOTH {
            return Some(AlgorithmChoice::Both);
        }
        AlgorithmName::from_name(name)
            .filter(|a| a.objectives() == Objectives::Multi)
            .map(AlgorithmChoice::One)
    }

    pub fn name(self) -> &'static str {
        match self {
            AlgorithmChoice::One(a) => a.name(),
            AlgorithmChoice::Both => Self::BOTH,
        }
    }

    /// Every accepted spelling, as a derived enum lists them in errors: each algorithm's
    /// names in alphabetical order, then `both`.
    fn spellings() -> &'static [&'static str] {
        static SPELLINGS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
        SPELLINGS.get_or_init(|| {
            let mut all = Vec::new();
            for a in Self::offered() {
                let mut names: Vec<&'static str> = a.aliases().to_vec();
                names.push(a.name());
                names.sort_unstable();
                all.extend(names);
            }
            all.push(Self::BOTH);
            all
        })
    }
}

impl Serialize for AlgorithmChoice {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for AlgorithmChoice {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        AlgorithmChoice::from_name(&name)
            .ok_or_else(|| serde::de::Error::unknown_variant(&name, AlgorithmChoice::spellings()))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProblemKind {
    #[serde(rename = "zdt1")]
    Zdt1,
    #[serde(rename = "zdt2")]
    Zdt2,
    #[serde(rename = "zdt3")]
    Zdt3,
    #[serde(rename = "dtlz2")]
    Dtlz2,
    /// The ExaNeSt link-arrangement problem; T = (R, N, M) comes from `[topology]`.
    #[serde(rename = "exanest")]
    Exanest,
}

/// Real-coded variation (SBX crossover, polynomial mutation) for the benchmark problems.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RealOperators {
    pub sbx_eta: f64,
    pub sbx_probability: f64,
    pub mutation_eta: f64,
    /// Per-variable mutation probability; default 1 / number of variables.
    pub mutation_probability: Option<f64>,
}

impl Default for RealOperators {
    fn default() -> Self {
        RealOperators {
            sbx_eta: 15.0,
            sbx_probability: 0.9,
            mutation_eta: 20.0,
            mutation_probability: None,
        }
    }
}

/// Which path-diversity definition f2 uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Diversity {
    /// Average number of edge-disjoint shortest paths (the paper's definition).
    #[default]
    #[serde(rename = "disjoint")]
    Disjoint,
    /// Average number of shortest paths.
    #[serde(rename = "shortest-paths")]
    ShortestPaths,
}

/// How f1 (bisection width) is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum BisectionMode {
    /// Best cut of the multilevel FM partitioner (the paper uses Kernighan-Lin).
    #[default]
    #[serde(rename = "heuristic")]
    Heuristic,
    /// Proven minimum bisection (branch and bound; small systems only).
    #[serde(rename = "exact")]
    Exact,
}

/// What happens to disconnected genomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum InvalidPolicy {
    /// Keep them with a constraint violation (components - 1): constrained domination.
    #[default]
    #[serde(rename = "constrain")]
    Constrain,
    /// The seed's rule: a disconnected child is discarded (the parent is kept instead).
    #[serde(rename = "discard")]
    Discard,
}

/// Parameters of the ExaNeSt link-arrangement problem (docs/sources.md §3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExanestSearch {
    pub p_cross: f64,
    pub p_mut: f64,
    pub p_new: f64,
    pub p_ext: f64,
    pub diversity: Diversity,
    pub bisection: BisectionMode,
    pub invalid: InvalidPolicy,
    /// FM partitioner restarts per evaluation (heuristic bisection).
    pub bisection_restarts: usize,
}

impl Default for ExanestSearch {
    fn default() -> Self {
        ExanestSearch {
            p_cross: 0.8,
            p_mut: 0.8,
            p_new: 0.5,
            p_ext: 0.0,
            diversity: Diversity::Disjoint,
            bisection: BisectionMode::Heuristic,
            invalid: InvalidPolicy::Constrain,
            bisection_restarts: 4,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    pub problem: ProblemKind,
    #[serde(default)]
    pub algorithm: AlgorithmChoice,
    #[serde(default = "default_population")]
    pub population: usize,
    /// Stop after this many generations (one generation = `population` evaluations, also
    /// for the steady-state SMS-EMOA). Give this or `evaluations`.
    pub generations: Option<usize>,
    /// Stop after this many evaluations (including the initial population).
    pub evaluations: Option<usize>,
    /// Independent runs (seeds derived from the problem seed and the run index).
    #[serde(default = "default_runs")]
    pub runs: usize,
    /// Decision variables of the real-coded problems (default 30 for ZDT, 12 for DTLZ2).
    pub variables: Option<usize>,
    /// Objectives of DTLZ2 (default 3).
    pub objectives: Option<usize>,
    /// Hypervolume reference point in each objective's natural sign (default: the problem's).
    pub reference_point: Option<Vec<f64>>,
    /// Write a checkpoint every generation under populations/<name>/.
    #[serde(default = "default_true")]
    pub checkpoint: bool,
    #[serde(default)]
    pub real: RealOperators,
    #[serde(default)]
    pub exanest: ExanestSearch,
}

/// Largest population a run accepts: memory, and the quadratic non-dominated sorting per
/// generation, grow with it (docs/reliability.md).
pub(crate) const MAX_POPULATION: usize = 100_000;

/// Largest evaluation budget of one run (10^12, beyond any run that can finish): keeps every
/// counter derived from it far from overflow.
pub(crate) const MAX_EVALUATIONS: usize = 1_000_000_000_000;

/// Largest number of decision variables of the real-coded benchmarks.
pub(crate) const MAX_VARIABLES: usize = 1_000_000;

/// Largest number of DTLZ2 objectives: the exact hypervolume's cost grows exponentially with
/// the dimension.
pub(crate) const MAX_OBJECTIVES: usize = 10;

/// Checks a population size against [`MAX_POPULATION`] (`field` names it in errors).
pub(crate) fn check_population(field: &str, population: usize, minimum: usize) -> Result<()> {
    if population < minimum {
        return Err(Error::field(field, format!("must be at least {minimum}")));
    }
    if population > MAX_POPULATION {
        return Err(Error::field(
            field,
            format!("{population} is above the limit of {MAX_POPULATION}"),
        ));
    }
    Ok(())
}

/// The evaluation budget of `generations` generations after the initial population, checked
/// against overflow and [`MAX_EVALUATIONS`] (`field` names the generations in errors).
pub(crate) fn generations_budget(
    field: &str,
    population: usize,
    generations: usize,
) -> Result<usize> {
    generations
        .checked_add(1)
        .and_then(|g| g.checked_mul(population))
        .filter(|&e| e <= MAX_EVALUATIONS)
        .ok_or_else(|| {
            Error::field(
                field,
                format!(
                    "{generations} generations of a population of {population} are more than \
                     the limit of {MAX_EVALUATIONS} evaluations"
                ),
            )
        })
}

/// Refuses a run whose populations would not fit in this machine's memory: about three
/// populations of `genome_bytes` each are alive at once (parents, children, archive). Skipped
/// where the total memory cannot be read.
pub(crate) fn check_population_memory(
    field: &str,
    population: usize,
    genome_bytes: usize,
) -> Result<()> {
    let Some(total) = crate::sim::machine_memory() else {
        return Ok(());
    };
    let total = usize::try_from(total).unwrap_or(usize::MAX);
    // Per individual: the genome plus its evaluation and vector headers.
    let per_individual = genome_bytes.saturating_add(128);
    let needed = population.saturating_mul(per_individual).saturating_mul(3);
    if needed > total {
        let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
        return Err(Error::field(
            field,
            format!(
                "a population of {population} genomes of {genome_bytes} bytes needs about \
                 {:.1} GiB, more than this machine's {:.1} GiB",
                gib(needed),
                gib(total)
            ),
        ));
    }
    Ok(())
}

fn default_population() -> usize {
    100
}

fn default_runs() -> usize {
    1
}

fn default_true() -> bool {
    true
}

fn probability(field: &str, p: f64) -> Result<()> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(Error::field(
            field,
            format!("{p} is not a probability in [0, 1]"),
        ))
    }
}

impl SearchConfig {
    /// Checks ranges; errors name the field relative to `[search]` (`search.population`).
    pub fn validate(&self) -> Result<()> {
        check_population("search.population", self.population, 4)?;
        if self.runs == 0 {
            return Err(Error::field("search.runs", "must be at least 1"));
        }
        match (self.generations, self.evaluations) {
            (Some(_), Some(_)) => {
                return Err(Error::field(
                    "search.evaluations",
                    "give either `generations` or `evaluations`, not both",
                ));
            }
            (None, None) => {
                return Err(Error::field(
                    "search.generations",
                    "missing: give `generations` or `evaluations`",
                ));
            }
            (_, Some(e)) if e < self.population => {
                return Err(Error::field(
                    "search.evaluations",
                    format!(
                        "{e} is less than the population ({}) needs for its first generation",
                        self.population
                    ),
                ));
            }
            (_, Some(e)) if e > MAX_EVALUATIONS => {
                return Err(Error::field(
                    "search.evaluations",
                    format!("{e} is above the limit of {MAX_EVALUATIONS}"),
                ));
            }
            (Some(g), None) => {
                generations_budget("search.generations", self.population, g)?;
            }
            _ => {}
        }
        if let Some(n) = self.variables.filter(|&n| n > MAX_VARIABLES) {
            return Err(Error::field(
                "search.variables",
                format!("{n} is above the limit of {MAX_VARIABLES}"),
            ));
        }
        if let Some(m) = self.objectives.filter(|&m| m > MAX_OBJECTIVES) {
            return Err(Error::field(
                "search.objectives",
                format!(
                    "{m} is above the limit of {MAX_OBJECTIVES} (the exact hypervolume's cost \
                     grows exponentially with the number of objectives)"
                ),
            ));
        }
        let r = &self.real;
        probability("search.real.sbx_probability", r.sbx_probability)?;
        if let Some(p) = r.mutation_probability {
            probability("search.real.mutation_probability", p)?;
        }
        for (field, eta) in [
            ("search.real.sbx_eta", r.sbx_eta),
            ("search.real.mutation_eta", r.mutation_eta),
        ] {
            if !(eta.is_finite() && eta >= 0.0) {
                return Err(Error::field(field, format!("{eta} must be >= 0")));
            }
        }
        let x = &self.exanest;
        probability("search.exanest.p_cross", x.p_cross)?;
        probability("search.exanest.p_mut", x.p_mut)?;
        probability("search.exanest.p_new", x.p_new)?;
        probability("search.exanest.p_ext", x.p_ext)?;
        if x.bisection_restarts == 0 {
            return Err(Error::field(
                "search.exanest.bisection_restarts",
                "must be at least 1",
            ));
        }
        Ok(())
    }

    /// Total evaluation budget of one run (after [`SearchConfig::validate`], which refuses
    /// budgets that overflow).
    pub fn evaluation_budget(&self) -> usize {
        match (self.generations, self.evaluations) {
            (_, Some(e)) => e,
            (Some(g), None) => self.population.saturating_mul(g.saturating_add(1)),
            (None, None) => self.population,
        }
    }
}

/// Parent selection of the single-objective GA.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Selection {
    /// The best of `size` members drawn uniformly.
    Tournament { size: usize },
    /// Probability proportional to `(1 / cost)^power` (the seed: power 7).
    Roulette { power: f64 },
}

impl Default for Selection {
    fn default() -> Self {
        Selection::Tournament { size: 2 }
    }
}

/// Settings of [`AlgorithmName::Ga`] (ignored by the multi-objective algorithms).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GaOptions {
    pub selection: Selection,
    /// Best members of the old population carried over unchanged.
    pub elite: usize,
}

impl Default for GaOptions {
    fn default() -> Self {
        GaOptions {
            selection: Selection::default(),
            elite: 2,
        }
    }
}
