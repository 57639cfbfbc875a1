//! The search algorithms behind one trait, and the registry that names them.
//!
//! An algorithm is a generation step: breed offspring from the population with the run's
//! random stream, then select the survivors among the population and the evaluated offspring.
//! Everything else — evaluation, the archive, termination, progress and checkpoints — belongs
//! to the run loop (`engine.rs`), so adding an algorithm is one file implementing
//! [`Algorithm`] plus one line in the `registry!` below (docs/search.md).

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::search::SearchProblem;
use crate::search::engine::{Individual, RunSettings};

/// One generation step of a search algorithm on problem `P`. The run loop breeds offspring
/// with [`Algorithm::offspring`], evaluates them, adds them to the archive and then calls
/// [`Algorithm::survive`], in steps of [`Algorithm::step_size`] until the generation's batch
/// is done.
pub trait Algorithm<P: SearchProblem> {
    /// `count` offspring genomes (not yet evaluated) bred from `population`. Draws from `rng`
    /// only, in a fixed order, so the offspring depend on the seed alone.
    fn offspring(
        &self,
        problem: &P,
        population: &[Individual<P::Genome>],
        count: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<P::Genome>;

    /// The next population of `mu` members from `population` and its evaluated `offspring`.
    fn survive(
        &self,
        population: Vec<Individual<P::Genome>>,
        offspring: Vec<Individual<P::Genome>>,
        mu: usize,
    ) -> Vec<Individual<P::Genome>>;

    /// How many of a generation's `batch` offspring one step breeds and selects: all of them
    /// for a generational algorithm (the default), 1 for a steady-state one.
    fn step_size(&self, batch: usize) -> usize {
        batch
    }
}

/// What an algorithm optimises: several objectives (offered by `search`) or the first one
/// only (the GA of `routes evolve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objectives {
    Multi,
    Single,
}

/// Declares the registry from one line per algorithm: the variant of [`AlgorithmName`], its
/// name in problem files, checkpoints and output folders (then accepted aliases), its label in
/// reports, its file (module) and type, constructed by `new(&RunSettings)`, what it optimises
/// ([`Objectives`]: `Multi` ones are offered by `search`) and a one-line description (also the
/// command line's help for its name).
macro_rules! registry {
    ($($variant:ident: $name:literal $(| $alias:literal)*, $label:literal, $module:ident::$type:ident, $objectives:ident, $doc:literal;)*) => {
        $(pub mod $module;)*

        /// A registered algorithm, as named in problem files, checkpoints, output folders and
        /// on the command line.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum AlgorithmName {
            $(#[doc = $doc] #[serde(rename = $name $(, alias = $alias)*)] $variant,)*
        }

        impl AlgorithmName {
            /// Every registered algorithm, in registry order.
            pub(crate) const ALL: &[AlgorithmName] = &[$(AlgorithmName::$variant,)*];

            /// The name in files, checkpoints and output folders (`nsga2`).
            pub fn name(self) -> &'static str {
                match self {
                    $(AlgorithmName::$variant => $name,)*
                }
            }

            /// Other names accepted for it (`nsga-ii`).
            pub(crate) fn aliases(self) -> &'static [&'static str] {
                match self {
                    $(AlgorithmName::$variant => &[$($alias),*],)*
                }
            }

            /// The name in reports and on the progress bar (`NSGA-II`).
            pub fn label(self) -> &'static str {
                match self {
                    $(AlgorithmName::$variant => $label,)*
                }
            }

            /// One line on what it does.
            pub(crate) fn description(self) -> &'static str {
                match self {
                    $(AlgorithmName::$variant => $doc,)*
                }
            }

            /// What it optimises.
            pub fn objectives(self) -> Objectives {
                match self {
                    $(AlgorithmName::$variant => Objectives::$objectives,)*
                }
            }

            /// The algorithm, set up for a run with `settings`.
            pub fn build<P: SearchProblem>(self, settings: &RunSettings) -> Box<dyn Algorithm<P>> {
                match self {
                    $(AlgorithmName::$variant => Box::new($module::$type::new(settings)),)*
                }
            }
        }
    };
}

impl AlgorithmName {
    /// The algorithm called `name` or one of its aliases.
    pub(crate) fn from_name(name: &str) -> Option<AlgorithmName> {
        AlgorithmName::ALL
            .iter()
            .copied()
            .find(|a| a.name() == name || a.aliases().contains(&name))
    }
}

registry! {
    Nsga2: "nsga2" | "nsga-ii", "NSGA-II", nsga2::Nsga2, Multi, "(mu + lambda) by fronts and crowding";
    SmsEmoa: "sms-emoa" | "smsemoa", "SMS-EMOA", sms_emoa::SmsEmoa, Multi, "(mu + 1) by hypervolume";
    Ga: "ga", "GA", ga::Ga, Single, "single-objective GA with elitism (routing tables)";
}
