//! Evolving routing tables (docs/sources.md §4, done better): one gene per ordered router pair picks
//! one of the pair's 2^b candidate paths (`routing::table::candidates`); or, for
//! destination-based tables, one gene per (router, destination) picks one of the router's
//! minimal output ports toward that destination. Runs on the shared engine as
//! [`AlgorithmName::Ga`](crate::search::AlgorithmName::Ga).
//!
//! Fitness (minimised): the exact maximum channel utilisation of the table under the training
//! traffic, per unit of offered load (1 flit per terminal per cycle), so `1 / fitness` is the
//! throughput bound of the table; worst or average over several training patterns. The
//! demand-weighted average hop count is reported (and breaks ties by a 1e-6 weight). The
//! simulated fidelity (latency from the flit simulator) is applied by the caller to the elite.

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::routing::paths::PortGraph;
use crate::routing::table::load::{RouterDemand, average_hops, channel_loads};
use crate::routing::table::{CandidateSet, RouterPath, RoutingTable, pair_index, pair_of};
use crate::search::problem::{Evaluation, Objective, SearchProblem};
use crate::topology::Topology;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Crossover {
    /// Every gene from either parent.
    Uniform,
    /// All genes of one source router from the same parent.
    #[default]
    Blocks,
    /// The seed's one-point crossover.
    SinglePoint,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    /// The worst training pattern's max channel load.
    #[default]
    Worst,
    /// The mean over the training patterns.
    Average,
}

impl Aggregate {
    /// Combines one value per training pattern (max loads, or lower bounds of them: the worst
    /// or the mean of lower bounds is a lower bound of the worst or mean).
    pub fn apply(self, values: &[f64]) -> f64 {
        match self {
            Aggregate::Worst => values.iter().copied().fold(0.0, f64::max),
            Aggregate::Average => values.iter().sum::<f64>() / values.len() as f64,
        }
    }
}

/// Variation and fitness parameters of the routing-table GA.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TableOperators {
    pub crossover: Crossover,
    pub p_cross: f64,
    /// Expected number of genes a mutation changes.
    pub mutation_genes: f64,
    /// Probability that a child also gets the hill-climbing step (re-route pairs off the most
    /// loaded channel while that lowers the maximum).
    pub hill_climb: f64,
    /// Probability that an initial genome is the DOR table (candidate 0 everywhere), so that
    /// elitism never returns anything worse than DOR.
    pub p_dor_initial: f64,
    pub aggregate: Aggregate,
}

impl Default for TableOperators {
    fn default() -> Self {
        TableOperators {
            crossover: Crossover::Blocks,
            p_cross: 0.8,
            mutation_genes: 2.0,
            hill_climb: 0.0,
            p_dor_initial: 0.05,
            aggregate: Aggregate::Worst,
        }
    }
}

/// How genes decode to paths.
enum Decoding {
    /// The candidates and the channels of each (`channels[pair][k]`, for the hill climber).
    Candidates(CandidateSet, Vec<Vec<Vec<usize>>>),
    /// Minimal output ports per (router, destination), `ports[pair_index(n, r, d)]`, and the
    /// DOR choice per entry (gene 0 decodes to it).
    DestinationBased { ports: Vec<Vec<(u16, u32)>> },
}

/// Refuses a table search whose candidate set (generated for every table, destination-based
/// ones included, for the candidate bound) would exceed `MAX_PATHS`, before anything sized by
/// router pairs is built. The training traffic's demand matrices are checked by
/// `Traffic::check_matrix_memory`.
pub(crate) fn check_table_search_size(topo: &Topology, bits: u32) -> Result<()> {
    use crate::routing::table::candidates::{MAX_PATHS, candidate_paths};
    let n = topo.num_routers();
    let paths = candidate_paths(n, bits);
    if paths > MAX_PATHS {
        return Err(Error::field(
            "topology",
            format!(
                "{n} routers are too many for an evolved table: {} router pairs with {} \
                 candidate path(s) each are {paths} paths (at most {MAX_PATHS})",
                n * (n - 1),
                1usize.checked_shl(bits).unwrap_or(usize::MAX)
            ),
        ));
    }
    Ok(())
}

pub struct RoutingTableProblem {
    topo: Topology,
    decoding: Decoding,
    /// Training patterns at one flit per terminal per cycle.
    demands: Vec<RouterDemand>,
    /// Sum of the training demands (the hill climber's target).
    combined: RouterDemand,
    ops: TableOperators,
    objectives: Vec<Objective>,
    extras: Vec<String>,
}

impl RoutingTableProblem {
    /// Candidate-path genome. `demands` are the training patterns (any scale; they are
    /// normalised to one flit per terminal per cycle).
    pub fn with_candidates(
        topo: Topology,
        cands: CandidateSet,
        demands: Vec<RouterDemand>,
        ops: TableOperators,
    ) -> Result<Self> {
        let channels = cands
            .paths
            .iter()
            .map(|paths| paths.iter().map(|p| p.channels(&topo)).collect())
            .collect();
        Self::new(topo, Decoding::Candidates(cands, channels), demands, ops)
    }

    /// Destination-based genome: one minimal next hop per (router, destination). Gene 0 is
    /// the lowest-numbered minimal port (the first shortest path).
    pub fn destination_based(
        topo: Topology,
        demands: Vec<RouterDemand>,
        ops: TableOperators,
    ) -> Result<Self> {
        let graph = PortGraph::new(&topo);
        let n = topo.num_routers();
        let dist: Vec<Vec<u32>> = (0..n).map(|d| graph.bfs(d).0).collect();
        let mut ports = vec![Vec::new(); n * (n - 1)];
        for r in 0..n {
            for d in (0..n).filter(|&d| d != r) {
                let mut minimal: Vec<(u16, u32)> = graph
                    .out(r)
                    .iter()
                    .filter(|h| dist[d][h.peer as usize] + 1 == dist[d][r])
                    .map(|h| (h.port, h.peer))
                    .collect();
                minimal.dedup_by_key(|h| h.1);
                if minimal.is_empty() {
                    return Err(Error::field(
                        "topology",
                        format!("router {d} is unreachable from router {r}"),
                    ));
                }
                ports[pair_index(n, r, d)] = minimal;
            }
        }
        Self::new(topo, Decoding::DestinationBased { ports }, demands, ops)
    }

    fn new(
        topo: Topology,
        decoding: Decoding,
        demands: Vec<RouterDemand>,
        ops: TableOperators,
    ) -> Result<Self> {
        if demands.is_empty() {
            return Err(Error::field(
                "traffic",
                "needs at least one training pattern",
            ));
        }
        let terminals = topo.num_terminals() as f64;
        let demands: Vec<RouterDemand> = demands
            .iter()
            .map(|d| {
                // Normalise: the offered load per terminal, counting traffic that stays on
                // one router too, is the pattern's sum / terminals.
                let total: f64 = d.demand.iter().sum();
                if total > 0.0 {
                    d.scaled(terminals / total)
                } else {
                    d.clone()
                }
            })
            .collect();
        let mut combined = demands[0].clone();
        for d in &demands[1..] {
            for (c, x) in combined.demand.iter_mut().zip(&d.demand) {
                *c += x;
            }
        }
        for (field, p) in [
            ("evolve.p_cross", ops.p_cross),
            ("evolve.hill_climb", ops.hill_climb),
            ("evolve.p_dor_initial", ops.p_dor_initial),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(Error::field(field, format!("{p} is not a probability")));
            }
        }
        if ops.mutation_genes.is_nan() || ops.mutation_genes < 0.0 {
            return Err(Error::field("evolve.mutation_genes", "must be >= 0"));
        }
        Ok(RoutingTableProblem {
            topo,
            decoding,
            demands,
            combined,
            ops,
            objectives: vec![Objective::minimise("max_channel_load")],
            extras: vec!["throughput_bound".into(), "avg_hops".into()],
        })
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The training patterns, normalised to one flit per terminal per cycle.
    pub fn demands(&self) -> &[RouterDemand] {
        &self.demands
    }

    pub(crate) fn num_genes(&self) -> usize {
        match &self.decoding {
            Decoding::Candidates(c, _) => c.num_pairs(),
            Decoding::DestinationBased { ports } => ports.len(),
        }
    }

    /// Choices available to gene `g`.
    fn alleles(&self, g: usize) -> usize {
        match &self.decoding {
            Decoding::Candidates(c, _) => c.per_pair(),
            Decoding::DestinationBased { ports } => ports[g].len(),
        }
    }

    /// The table a genome encodes.
    pub fn table(&self, genome: &[u8]) -> RoutingTable {
        match &self.decoding {
            Decoding::Candidates(c, _) => RoutingTable::from_choice(c, genome),
            Decoding::DestinationBased { ports } => {
                let n = self.topo.num_routers();
                let paths = (0..n * (n - 1))
                    .map(|pair| {
                        let (s, d) = pair_of(n, pair);
                        let mut path = RouterPath {
                            routers: vec![s as u32],
                            ports: Vec::new(),
                        };
                        let mut r = s;
                        // Minimal next hops strictly decrease the distance: no loops.
                        while r != d {
                            let i = pair_index(n, r, d);
                            let (port, peer) = ports[i][genome[i] as usize % ports[i].len()];
                            path.ports.push(port);
                            path.routers.push(peer);
                            r = peer as usize;
                        }
                        path
                    })
                    .collect();
                RoutingTable {
                    num_routers: n,
                    paths,
                }
            }
        }
    }

    /// The DOR genome (candidate 0 / first minimal port everywhere).
    pub(crate) fn dor_genome(&self) -> Vec<u8> {
        vec![0; self.num_genes()]
    }

    /// Max channel load per training pattern (unit load) of a table.
    pub(crate) fn pattern_loads(&self, table: &RoutingTable) -> Vec<f64> {
        self.demands
            .iter()
            .map(|d| {
                channel_loads(&self.topo, table, d)
                    .into_iter()
                    .fold(0.0, f64::max)
            })
            .collect()
    }

    fn aggregate(&self, loads: &[f64]) -> f64 {
        self.ops.aggregate.apply(loads)
    }

    /// Max load per training pattern and the average hops of a genome. Candidate genomes use
    /// the precomputed channels of each candidate (the GA's hot path: no table is built);
    /// the sums run in the same order as `channel_loads` and `average_hops`, so the figures
    /// equal those of the decoded table.
    fn genome_loads(&self, genome: &[u8]) -> (Vec<f64>, f64) {
        let Decoding::Candidates(_, channels) = &self.decoding else {
            let table = self.table(genome);
            return (
                self.pattern_loads(&table),
                average_hops(&table, &self.combined),
            );
        };
        let chosen = |pair: usize| &channels[pair][genome[pair] as usize];
        let mut load = vec![0.0; 2 * self.topo.links.len()];
        let loads = self
            .demands
            .iter()
            .map(|d| {
                load.fill(0.0);
                for (pair, &rate) in d.demand.iter().enumerate() {
                    if rate != 0.0 {
                        for &c in chosen(pair) {
                            load[c] += rate;
                        }
                    }
                }
                load.iter()
                    .enumerate()
                    .map(|(c, l)| l / self.topo.links[c / 2].params.bandwidth)
                    .fold(0.0, f64::max)
            })
            .collect();
        let total: f64 = self.combined.demand.iter().sum();
        let hops = if total == 0.0 {
            0.0
        } else {
            self.combined
                .demand
                .iter()
                .enumerate()
                .map(|(pair, &d)| d * chosen(pair).len() as f64)
                .sum::<f64>()
                / total
        };
        (loads, hops)
    }

    /// Re-routes pairs off the most loaded channel (of the combined training demand) while
    /// that lowers its load without creating a new maximum; candidate genomes only.
    fn hill_climb(&self, genome: &mut [u8], rng: &mut ChaCha8Rng) {
        let Decoding::Candidates(cands, channels) = &self.decoding else {
            return;
        };
        let table = RoutingTable::from_choice(cands, genome);
        let mut load = channel_loads(&self.topo, &table, &self.combined);
        for _ in 0..64 {
            let (hot, &max) = load
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .expect("channels");
            if max <= 0.0 {
                return;
            }
            let mut users: Vec<usize> = (0..genome.len())
                .filter(|&p| self.combined.demand[p] > 0.0)
                .filter(|&p| channels[p][genome[p] as usize].contains(&hot))
                .collect();
            users.shuffle(rng);
            let mut moved = false;
            'pairs: for p in users {
                let rate = self.combined.demand[p];
                let old = &channels[p][genome[p] as usize];
                let mut options: Vec<usize> = (0..cands.per_pair()).collect();
                options.shuffle(rng);
                for k in options {
                    let new = &channels[p][k];
                    if new.contains(&hot) {
                        continue;
                    }
                    let bw = |c: usize| self.topo.links[c / 2].params.bandwidth;
                    let fits = new.iter().all(|&c| {
                        let back = if old.contains(&c) { rate / bw(c) } else { 0.0 };
                        load[c] - back + rate / bw(c) < max
                    });
                    if fits {
                        for &c in old {
                            load[c] -= rate / bw(c);
                        }
                        for &c in new {
                            load[c] += rate / bw(c);
                        }
                        genome[p] = k as u8;
                        moved = true;
                        break 'pairs;
                    }
                }
            }
            if !moved {
                return;
            }
        }
    }
}

impl SearchProblem for RoutingTableProblem {
    type Genome = Vec<u8>;

    fn name(&self) -> String {
        format!("routing-tables-{}", self.topo.name)
    }

    fn objectives(&self) -> &[Objective] {
        &self.objectives
    }

    fn extra_names(&self) -> &[String] {
        &self.extras
    }

    /// Twice the DOR table's load is a safe bound for any table worth keeping.
    fn reference_point(&self) -> Vec<f64> {
        let dor = self.table(&self.dor_genome());
        vec![2.0 * self.aggregate(&self.pattern_loads(&dor))]
    }

    fn random_genome(&self, rng: &mut ChaCha8Rng) -> Vec<u8> {
        if rng.random_bool(self.ops.p_dor_initial) {
            return self.dor_genome();
        }
        (0..self.num_genes())
            .map(|g| rng.random_range(0..self.alleles(g)) as u8)
            .collect()
    }

    fn crossover(&self, a: &Vec<u8>, b: &Vec<u8>, rng: &mut ChaCha8Rng) -> (Vec<u8>, Vec<u8>) {
        let (mut x, mut y) = (a.clone(), b.clone());
        if !rng.random_bool(self.ops.p_cross) {
            return (x, y);
        }
        let n = self.topo.num_routers();
        match self.ops.crossover {
            Crossover::Uniform => {
                for g in 0..x.len() {
                    if rng.random_bool(0.5) {
                        std::mem::swap(&mut x[g], &mut y[g]);
                    }
                }
            }
            Crossover::Blocks => {
                for s in 0..n {
                    if rng.random_bool(0.5) {
                        let block = s * (n - 1)..(s + 1) * (n - 1);
                        x[block.clone()].swap_with_slice(&mut y[block]);
                    }
                }
            }
            Crossover::SinglePoint => {
                let cut = rng.random_range(1..x.len().max(2));
                x[cut..].swap_with_slice(&mut y[cut..]);
            }
        }
        (x, y)
    }

    fn mutate(&self, genome: &mut Vec<u8>, rng: &mut ChaCha8Rng) {
        let p = (self.ops.mutation_genes / genome.len() as f64).min(1.0);
        for (g, gene) in genome.iter_mut().enumerate() {
            if rng.random_bool(p) {
                let alleles = self.alleles(g);
                if alleles > 1 {
                    // A different allele, uniformly.
                    let k = rng.random_range(1..alleles);
                    *gene = ((*gene as usize + k) % alleles) as u8;
                }
            }
        }
        if self.ops.hill_climb > 0.0 && rng.random_bool(self.ops.hill_climb) {
            self.hill_climb(genome, rng);
        }
    }

    fn evaluate(&self, genome: &Vec<u8>) -> Evaluation {
        let (loads, hops) = self.genome_loads(genome);
        let max_load = self.aggregate(&loads);
        Evaluation {
            // Hops break ties between tables of equal maximum load.
            objectives: vec![max_load + 1e-6 * hops],
            violation: 0.0,
            extras: vec![
                // 0 marks "no load" (JSON, and so checkpoints, have no infinity).
                if max_load > 0.0 { 1.0 / max_load } else { 0.0 },
                hops,
            ],
        }
    }

    fn check_genome(&self, genome: &Vec<u8>) -> std::result::Result<(), String> {
        if genome.len() != self.num_genes() {
            return Err(format!(
                "has {} genes but this table needs {}",
                genome.len(),
                self.num_genes()
            ));
        }
        match (0..genome.len()).find(|&g| usize::from(genome[g]) >= self.alleles(g)) {
            Some(g) => Err(format!(
                "gene {} = {} is not below its {} choices",
                g + 1,
                genome[g],
                self.alleles(g)
            )),
            None => Ok(()),
        }
    }

    /// One character per gene (alleles are below 36).
    fn describe(&self, genome: &Vec<u8>) -> String {
        genome
            .iter()
            .map(|&g| char::from_digit(u32::from(g), 36).unwrap_or('?'))
            .collect()
    }
}

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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::search::config::GaOptions;
    use crate::search::{AlgorithmName, RunSettings, Termination, run};
    use crate::topology::TopologyConfig;
    use crate::traffic::{Traffic, TrafficConfig};

    fn mesh(spec: &str) -> Topology {
        TopologyConfig::parse_spec(spec)
            .unwrap()
            .build(Path::new("."), 1)
            .unwrap()
    }

    fn demand(topo: &Topology, pattern: &str) -> RouterDemand {
        let cfg: TrafficConfig =
            toml::from_str(&format!("pattern = \"{pattern}\"\nload = 0.1\n")).unwrap();
        let traffic = Traffic::build(&[cfg], topo, 1, Path::new(".")).unwrap();
        RouterDemand::from_terminal_matrix(topo, &traffic.traffic_matrix(0))
    }

    fn settings(population: usize, generations: usize) -> RunSettings {
        RunSettings {
            algorithm: AlgorithmName::Ga,
            population,
            termination: Termination::Generations(generations),
            seed: 7,
            reference_point: vec![100.0],
            checkpoint_dir: None,
            resume: false,
            force: false,
            config: serde_json::Value::Null,
            progress: false,
            label: "test".into(),
            archive_limit: Some(0),
            ga: GaOptions::default(),
        }
    }

    #[test]
    fn destination_based_tables_are_minimal_and_decode_dor_from_zeros() {
        let topo = mesh("mesh:4x4");
        let d = demand(&topo, "transpose");
        let p = RoutingTableProblem::destination_based(topo.clone(), vec![d], Default::default())
            .unwrap();
        let dor = p.table(&p.dor_genome());
        dor.validate(&topo).unwrap();
        assert!(dor.is_destination_based());
        // Every path is minimal: hops = Manhattan distance.
        for path in &dor.paths {
            let (s, t) = (path.source(), path.destination());
            let manhattan = (s % 4).abs_diff(t % 4) + (s / 4).abs_diff(t / 4);
            assert_eq!(path.hops(), manhattan);
        }
    }

    #[test]
    fn the_ga_lowers_the_max_channel_load_of_transpose() {
        // Transpose on a 4x4 mesh: dimension-order routing piles the traffic onto a few
        // channels along the diagonal; minimal destination-based tables can spread it.
        let topo = mesh("mesh:4x4");
        let d = demand(&topo, "transpose");
        let p = RoutingTableProblem::destination_based(topo, vec![d], Default::default()).unwrap();
        let dor_load = p.evaluate(&p.dor_genome()).objectives[0];
        let outcome = run(&p, &settings(40, 40)).unwrap();
        let best = outcome.front[0].evaluation.objectives[0];
        assert!(best < 0.8 * dor_load, "GA {best} vs DOR {dor_load}");
        // The reported throughput bound is 1 / max load.
        let e = &outcome.front[0].evaluation;
        assert!((e.extras[0] * best - 1.0).abs() < 1e-3);
        // Determinism: the same seed gives the same table.
        let again = run(&p, &settings(40, 40)).unwrap();
        assert_eq!(again.front[0].genome, outcome.front[0].genome);
    }

    #[test]
    fn operators_keep_genes_valid() {
        let topo = mesh("mesh:3x3");
        let d = demand(&topo, "uniform");
        let ops = TableOperators {
            crossover: Crossover::Uniform,
            mutation_genes: 10.0,
            ..Default::default()
        };
        let p = RoutingTableProblem::destination_based(topo.clone(), vec![d], ops).unwrap();
        let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(3);
        let a = p.random_genome(&mut rng);
        let b = p.random_genome(&mut rng);
        let (mut x, _) = p.crossover(&a, &b, &mut rng);
        p.mutate(&mut x, &mut rng);
        p.table(&x).validate(&topo).unwrap();
        assert_eq!(p.describe(&x).len(), 72);
    }
}
