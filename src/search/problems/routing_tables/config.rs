//! The `[evolve]` table of a problem file: the routing-table GA's parameters.

use serde::{Deserialize, Serialize};

use super::{Aggregate, Crossover, TableOperators};
use crate::error::{Error, Result};

/// The `[evolve]` table of a problem file (`fabricopt routes evolve`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvolveConfig {
    /// Candidate paths per pair: 2^bits.
    pub bits: u32,
    pub population: usize,
    pub generations: usize,
    /// `tournament` or `roulette`.
    pub selection: String,
    pub tournament_size: usize,
    /// Roulette weight `(1 / cost)^power` (the seed: 7).
    pub roulette_power: f64,
    pub elite: usize,
    pub crossover: Crossover,
    pub p_cross: f64,
    pub mutation_genes: f64,
    pub hill_climb: f64,
    pub p_dor_initial: f64,
    pub aggregate: Aggregate,
    /// Evolve one next hop per (router, destination) among the minimal ports instead of
    /// candidate paths (exportable as an InfiniBand linear forwarding table).
    pub destination_based: bool,
    /// Distinct best tables (by the analytical fitness) simulated at the end; the best
    /// simulated one is reported. 0 = analytical only.
    pub simulate_elite: usize,
    /// Offered loads of the simulated fidelity (default: each traffic class's `load`).
    pub training_loads: Vec<f64>,
    /// Export for InfiniBand with this LID Mask Control: the best table is constrained to
    /// `2^lmc` destination trees per destination (the first DOR), and `best.lmc.lft` plus
    /// `best.lid` (the source-to-LID offsets) are written. 0..=7; absent: no LMC export.
    pub lmc: Option<u8>,
}

impl Default for EvolveConfig {
    fn default() -> Self {
        let ops = TableOperators::default();
        EvolveConfig {
            bits: 3,
            population: 100,
            generations: 100,
            selection: "tournament".into(),
            tournament_size: 2,
            roulette_power: 7.0,
            elite: 2,
            crossover: ops.crossover,
            p_cross: ops.p_cross,
            mutation_genes: ops.mutation_genes,
            hill_climb: ops.hill_climb,
            p_dor_initial: ops.p_dor_initial,
            aggregate: ops.aggregate,
            destination_based: false,
            simulate_elite: 4,
            training_loads: Vec::new(),
            lmc: None,
        }
    }
}

impl EvolveConfig {
    pub fn operators(&self) -> TableOperators {
        TableOperators {
            crossover: self.crossover,
            p_cross: self.p_cross,
            mutation_genes: self.mutation_genes,
            hill_climb: self.hill_climb,
            p_dor_initial: self.p_dor_initial,
            aggregate: self.aggregate,
        }
    }

    /// The GA's evaluation budget: the initial population and `generations` more, checked
    /// against overflow and the limit.
    pub fn evaluation_budget(&self) -> Result<usize> {
        crate::search::config::generations_budget(
            "evolve.generations",
            self.population,
            self.generations,
        )
    }

    /// GA selection and elitism; errors name the field.
    pub fn ga_options(&self) -> Result<crate::search::config::GaOptions> {
        use crate::search::config::{GaOptions, Selection};
        let selection = match self.selection.as_str() {
            "tournament" if self.tournament_size >= 1 => Selection::Tournament {
                size: self.tournament_size,
            },
            "tournament" => {
                return Err(Error::field("evolve.tournament_size", "must be at least 1"));
            }
            "roulette" if self.roulette_power.is_finite() && self.roulette_power >= 0.0 => {
                Selection::Roulette {
                    power: self.roulette_power,
                }
            }
            "roulette" => {
                return Err(Error::field(
                    "evolve.roulette_power",
                    "must be a number >= 0",
                ));
            }
            other => {
                return Err(Error::field(
                    "evolve.selection",
                    format!("unknown `{other}` (expected tournament or roulette)"),
                ));
            }
        };
        crate::search::config::check_population("evolve.population", self.population, 4)?;
        self.evaluation_budget()?;
        if self.elite >= self.population {
            return Err(Error::field(
                "evolve.elite",
                "must be smaller than the population",
            ));
        }
        if !(1..=5).contains(&self.bits) {
            return Err(Error::field(
                "evolve.bits",
                "must be in 1..=5 (2 to 32 candidates)",
            ));
        }
        Ok(GaOptions {
            selection,
            elite: self.elite,
        })
    }
}
