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
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::routing::paths::PortGraph;
use crate::routing::table::lmc::LmcFitter;
use crate::routing::table::load::{RouterDemand, average_hops, channel_loads};
use crate::routing::table::{CandidateSet, RouterPath, RoutingTable, pair_index, pair_of};
use crate::search::problem::{Evaluation, Objective, SearchProblem};
use crate::topology::Topology;

mod config;
mod hill_climb;
#[cfg(test)]
mod tests;

pub use config::EvolveConfig;

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
    /// One gene per trained pair (`pairs[gene]`) choosing among its candidates; every other
    /// pair keeps candidate 0 (DOR). `channels[gene][k]` are candidate `k`'s channels.
    Candidates {
        cands: CandidateSet,
        pairs: Vec<usize>,
        channels: Vec<Vec<Vec<usize>>>,
    },
    /// Minimal output ports per (router, destination), `ports[pair_index(n, r, d)]`, and the
    /// DOR choice per entry (gene 0 decodes to it).
    DestinationBased { ports: Vec<Vec<(u16, u32)>> },
}

/// Refuses a table search whose candidate set would exceed `MAX_PATHS` (`trained` pairs get
/// 2^bits candidates, the others their DOR path as shared next hops) or `MAX_TABLE_ROUTERS`
/// (called with 0 before anything sized by router pairs is built, then with the training
/// pairs). The training traffic's demand, summed by router, is then at most 8 bytes per router
/// pair (`Traffic::aggregated_demand`).
pub(crate) fn check_table_search_size(topo: &Topology, bits: u32, trained: usize) -> Result<()> {
    crate::routing::table::candidates::check_set_size(
        topo.num_routers(),
        bits,
        Some(trained),
        "topology",
    )
}

/// The training patterns scaled to one flit per terminal per cycle (the unit of the
/// fitness and the bounds).
pub(crate) fn normalised_demands(topo: &Topology, demands: Vec<RouterDemand>) -> Vec<RouterDemand> {
    let terminals = topo.num_terminals() as f64;
    demands
        .into_iter()
        .map(|d| {
            // The offered load per terminal, counting traffic that stays on one router too,
            // is the pattern's sum / terminals.
            let total: f64 = d.demand.iter().sum();
            if total > 0.0 {
                d.scaled(terminals / total)
            } else {
                d
            }
        })
        .collect()
}

/// Share of the initial population drawn as the seed genome when there is one: enough that a
/// small population has it (a GA with elitism then never returns anything worse), few enough
/// to leave room for diversity.
const SEED_GENOME_SHARE: f64 = 0.2;

/// The sum of the training patterns (one or more).
pub(crate) fn combined_demand(demands: &[RouterDemand]) -> RouterDemand {
    let mut combined = demands[0].clone();
    for d in &demands[1..] {
        for (c, x) in combined.demand.iter_mut().zip(&d.demand) {
            *c += x;
        }
    }
    combined
}

/// The demand vectors whose channel maxima the searches lower: every pattern for
/// `aggregate = "worst"`; for `"average"` (a mean of maxima, which no move lowers directly)
/// their sum, the usual stand-in.
pub(crate) fn load_targets<'a>(
    demands: &'a [RouterDemand],
    combined: &'a RouterDemand,
    aggregate: Aggregate,
) -> Vec<&'a [f64]> {
    match aggregate {
        Aggregate::Worst => demands.iter().map(|d| &d.demand[..]).collect(),
        Aggregate::Average => vec![&combined.demand[..]],
    }
}

/// Which router pairs carry training traffic in any pattern.
pub(crate) fn trained_pairs(demands: &[RouterDemand]) -> Vec<bool> {
    let mut trained = vec![false; demands.first().map_or(0, |d| d.demand.len())];
    for d in demands {
        for (t, &x) in trained.iter_mut().zip(&d.demand) {
            *t |= x > 0.0;
        }
    }
    trained
}

pub struct RoutingTableProblem {
    topo: Topology,
    decoding: Decoding,
    /// Training patterns at one flit per terminal per cycle.
    demands: Vec<RouterDemand>,
    /// Sum of the training demands (the average hop count's weights).
    combined: RouterDemand,
    /// Genes of one source router are contiguous: `blocks` are their ranges (the block
    /// crossover swaps whole ones).
    blocks: Vec<std::ops::Range<usize>>,
    /// A genome to seed the initial population with (the negotiated-congestion paths of
    /// `routes evolve`), drawn for a share [`SEED_GENOME_SHARE`] of it.
    seed_genome: Option<Vec<u8>>,
    /// With LMC export: every genome's table is fitted to 2^lmc destination trees per
    /// destination (`routing::table::lmc`) before it is evaluated, so the search sees the
    /// constraint a fabric imposes.
    lmc: Option<LmcFitter>,
    ops: TableOperators,
    objectives: Vec<Objective>,
    extras: Vec<String>,
}

impl RoutingTableProblem {
    /// Candidate-path genome: one gene per pair with demand in some training pattern. `demands`
    /// are the training patterns (any scale; they are normalised to one flit per terminal per
    /// cycle). Pairs without training demand keep candidate 0 (DOR).
    pub fn with_candidates(
        topo: Topology,
        cands: CandidateSet,
        demands: Vec<RouterDemand>,
        ops: TableOperators,
    ) -> Result<Self> {
        if demands.iter().any(|d| d.demand.len() != cands.num_pairs()) {
            return Err(Error::field(
                "traffic",
                "a training pattern's router pairs do not match the candidate set",
            ));
        }
        let trained = trained_pairs(&demands);
        let pairs: Vec<usize> = (0..trained.len()).filter(|&p| trained[p]).collect();
        let channels = pairs
            .iter()
            .map(|&pair| {
                cands
                    .paths(pair)
                    .iter()
                    .map(|p| p.channels(&topo))
                    .collect()
            })
            .collect();
        let n = topo.num_routers();
        let blocks = source_blocks(n, &pairs);
        Self::new(
            topo,
            Decoding::Candidates {
                cands,
                pairs,
                channels,
            },
            blocks,
            demands,
            ops,
        )
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
        let blocks = (0..n).map(|s| s * (n - 1)..(s + 1) * (n - 1)).collect();
        Self::new(
            topo,
            Decoding::DestinationBased { ports },
            blocks,
            demands,
            ops,
        )
    }

    fn new(
        topo: Topology,
        decoding: Decoding,
        blocks: Vec<std::ops::Range<usize>>,
        demands: Vec<RouterDemand>,
        ops: TableOperators,
    ) -> Result<Self> {
        if demands.is_empty() {
            return Err(Error::field(
                "traffic",
                "needs at least one training pattern",
            ));
        }
        let demands = normalised_demands(&topo, demands);
        let combined = combined_demand(&demands);
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
            blocks,
            seed_genome: None,
            lmc: None,
            ops,
            objectives: vec![Objective::minimise("max_channel_load")],
            extras: vec!["throughput_bound".into(), "avg_hops".into()],
        })
    }

    /// Seeds the initial population with `genome` (a share [`SEED_GENOME_SHARE`] of it).
    pub fn with_seed_genome(mut self, genome: Vec<u8>) -> Result<Self> {
        self.check_genome(&genome)
            .map_err(|e| Error::field("seed genome", e))?;
        self.seed_genome = Some(genome);
        Ok(self)
    }

    /// Fits every genome's table to `fitter`'s destination trees (its base must be this
    /// problem's DOR table).
    pub fn with_lmc(mut self, fitter: LmcFitter) -> Self {
        self.lmc = Some(fitter);
        self
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn demands(&self) -> &[RouterDemand] {
        &self.demands
    }

    pub(crate) fn num_genes(&self) -> usize {
        match &self.decoding {
            Decoding::Candidates { pairs, .. } => pairs.len(),
            Decoding::DestinationBased { ports } => ports.len(),
        }
    }

    /// The candidate set of a candidate-path genome (None: destination-based).
    pub(crate) fn candidates(&self) -> Option<&CandidateSet> {
        match &self.decoding {
            Decoding::Candidates { cands, .. } => Some(cands),
            Decoding::DestinationBased { .. } => None,
        }
    }

    /// The router pair of each gene of a candidate-path genome (None: destination-based).
    pub(crate) fn gene_pairs(&self) -> Option<&[usize]> {
        match &self.decoding {
            Decoding::Candidates { pairs, .. } => Some(pairs),
            Decoding::DestinationBased { .. } => None,
        }
    }

    fn alleles(&self, g: usize) -> usize {
        match &self.decoding {
            Decoding::Candidates { cands, pairs, .. } => cands.count(pairs[g]),
            Decoding::DestinationBased { ports } => ports[g].len(),
        }
    }

    /// The table of `genome`, fitted to the LMC trees when the problem has them.
    pub fn table(&self, genome: &[u8]) -> RoutingTable {
        let mut table = self.unfitted_table(genome);
        if let Some(fitter) = &self.lmc {
            let own: Vec<usize> = match &self.decoding {
                Decoding::Candidates { pairs, .. } => pairs.clone(),
                Decoding::DestinationBased { .. } => (0..table.num_pairs()).collect(),
            };
            let fitted = fitter.fit(&self.topo, &own, |i| table.pair_path(i));
            for (pair, _, path) in fitted.pairs {
                if let Some(q) = path {
                    table.set_path(pair, q);
                }
            }
        }
        table
    }

    /// The table `genome` decodes to, before any LMC fitting.
    pub fn unfitted_table(&self, genome: &[u8]) -> RoutingTable {
        match &self.decoding {
            Decoding::Candidates { cands, pairs, .. } => RoutingTable::from_pair_choices(
                cands,
                pairs.iter().copied().zip(genome.iter().copied()),
            ),
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
                RoutingTable::from_paths(n, paths).expect("one path per pair")
            }
        }
    }

    pub(crate) fn dor_genome(&self) -> Vec<u8> {
        vec![0; self.num_genes()]
    }

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

    fn bandwidth(&self, channel: usize) -> f64 {
        self.topo.links[channel / 2].params.bandwidth
    }

    /// Channel utilisation of a candidate-path genome under each of `targets` (demand
    /// vectors in `pair_index` order).
    fn candidate_channel_loads(&self, genome: &[u8], targets: &[&[f64]]) -> Vec<Vec<f64>> {
        let Decoding::Candidates {
            pairs, channels, ..
        } = &self.decoding
        else {
            unreachable!("candidate-path genomes only");
        };
        targets
            .iter()
            .map(|d| {
                let mut load = vec![0.0; 2 * self.topo.links.len()];
                for (g, &pair) in pairs.iter().enumerate() {
                    let rate = d[pair];
                    if rate != 0.0 {
                        for &c in &channels[g][genome[g] as usize] {
                            load[c] += rate;
                        }
                    }
                }
                for (c, l) in load.iter_mut().enumerate() {
                    *l /= self.bandwidth(c);
                }
                load
            })
            .collect()
    }

    fn genome_loads(&self, genome: &[u8]) -> (Vec<f64>, f64) {
        let (
            Decoding::Candidates {
                pairs, channels, ..
            },
            None,
        ) = (&self.decoding, &self.lmc)
        else {
            // Destination-based, or fitted to LMC trees: from the whole table (slower).

            let table = self.table(genome);
            return (
                self.pattern_loads(&table),
                average_hops(&table, &self.combined),
            );
        };
        let patterns: Vec<&[f64]> = self.demands.iter().map(|d| &d.demand[..]).collect();
        let loads = self
            .candidate_channel_loads(genome, &patterns)
            .iter()
            .map(|l| l.iter().copied().fold(0.0, f64::max))
            .collect();
        let total: f64 = self.combined.demand.iter().sum();
        let hops = if total == 0.0 {
            0.0
        } else {
            pairs
                .iter()
                .enumerate()
                .map(|(g, &pair)| {
                    self.combined.demand[pair] * channels[g][genome[g] as usize].len() as f64
                })
                .sum::<f64>()
                / total
        };
        (loads, hops)
    }
}

/// Contiguous gene ranges per source router of the (sorted) `pairs`.
fn source_blocks(n: usize, pairs: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut blocks: Vec<std::ops::Range<usize>> = Vec::new();
    for (g, &pair) in pairs.iter().enumerate() {
        let s = pair_of(n, pair).0;
        match blocks.last_mut() {
            Some(b) if pair_of(n, pairs[b.start]).0 == s => b.end = g + 1,
            _ => blocks.push(g..g + 1),
        }
    }
    blocks
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
        if let Some(g) = &self.seed_genome
            && rng.random_bool(SEED_GENOME_SHARE)
        {
            return g.clone();
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
        match self.ops.crossover {
            Crossover::Uniform => {
                for g in 0..x.len() {
                    if rng.random_bool(0.5) {
                        std::mem::swap(&mut x[g], &mut y[g]);
                    }
                }
            }
            Crossover::Blocks => {
                for block in &self.blocks {
                    if rng.random_bool(0.5) {
                        x[block.clone()].swap_with_slice(&mut y[block.clone()]);
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
