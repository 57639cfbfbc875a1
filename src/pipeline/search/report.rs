//! The report of `search` ([`SearchReport`], the `--json` output) and its parts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::search::AlgorithmName;
use crate::search::problems::exanest_compare::Comparison;
use crate::search::problems::exanest_report::TableReport;

/// What a `search` command found. Printed as JSON with its keys in alphabetical order.
#[derive(Clone, Debug, Serialize)]
pub struct SearchReport {
    /// The problem file's `name` (else its file stem).
    pub problem: String,
    /// The problem's seed; run k uses `run_seed(seed, k)`.
    pub seed: u64,
    pub population: usize,
    /// Evaluations per run.
    pub evaluation_budget: usize,
    /// Hypervolume reference point, natural sign.
    pub reference_point: Vec<f64>,
    /// The first run of the first algorithm: its algorithm, hypervolume, evaluations,
    /// generations and front (members as in `front.json`).
    pub algorithm: &'static str,
    pub hypervolume: f64,
    pub evaluations: usize,
    pub generations: usize,
    pub front: serde_json::Value,
    /// Median hypervolume of each algorithm's runs, by algorithm name.
    pub median_hypervolume: BTreeMap<&'static str, f64>,
    /// Every run, algorithm-major.
    pub runs: Vec<RunReport>,
    /// ExaNeSt only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exanest: Option<ExanestReport>,
    /// Runs per algorithm.
    #[serde(skip)]
    pub runs_per_algorithm: usize,
    /// The algorithms, in the order they ran.
    #[serde(skip)]
    pub algorithms: Vec<AlgorithmName>,
    #[serde(skip)]
    pub out_dir: PathBuf,
    /// The first run of each algorithm, as a table.
    #[serde(skip)]
    pub first_fronts: Vec<FrontTable>,
}

/// One run's figures.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub algorithm: &'static str,
    /// Index of the run within its algorithm.
    pub run: usize,
    pub seed: u64,
    pub hypervolume: f64,
    pub evaluations: usize,
    pub generations: usize,
    /// Members of its final front.
    pub front_size: usize,
    /// Wall-clock seconds (including the time before a resume).
    pub seconds: f64,
}

/// A front as a table: objective values (natural sign) and extras, then the genome.
#[derive(Clone, Debug)]
pub struct FrontTable {
    /// The algorithm's label.
    pub label: &'static str,
    /// Objective names, then the extras' names.
    pub columns: Vec<String>,
    /// Each member's values (in `columns` order) and its genome as the problem describes it.
    pub rows: Vec<(Vec<f64>, String)>,
}

/// The ExaNeSt additions (`exanest` in the report).
#[derive(Clone, Debug, Serialize)]
pub struct ExanestReport {
    /// The seed paper's Table II layout.
    pub table: TableReport,
    /// Null unless the system has at most 40 routers and f1 is the partitioner's.
    pub bisection_check: Option<BisectionCheck>,
    /// Best-f1 front members with 4, 8 and 12 links against Jellyfish graphs.
    pub jellyfish: Vec<Comparison>,
    /// T = (8, 16, 1): the paper's own columns are printed beside the table.
    #[serde(skip)]
    pub paper: bool,
    /// Jellyfish graphs per compared member.
    #[serde(skip)]
    pub jellyfish_samples: usize,
}

/// The branch-and-bound check of the distinct front members' f1.
#[derive(Clone, Debug, Serialize)]
pub struct BisectionCheck {
    pub members: usize,
    pub proven: usize,
    /// Proven members whose heuristic f1 equals the proven minimum.
    pub heuristic_exact: usize,
    pub largest_gap: u64,
    /// The proven members that disagree.
    pub mismatches: Vec<Mismatch>,
}

/// A front member whose heuristic bisection is not the proven one.
#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    pub genome: String,
    pub heuristic: u64,
    pub exact: u64,
}
