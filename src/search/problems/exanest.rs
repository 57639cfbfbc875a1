//! The ExaNeSt link-arrangement problem (docs/sources.md §3): find the one-chassis genome of a
//! T = (R, N, M) system that maximises bisection width (f1) and path diversity (f2) while
//! minimising the number of active links per chassis (f3).
//!
//! Genome: `2R` genes, gene `i` (1-based) is 0 (link unused) or an offset in the internal range
//! `[2R - i + 1, 2NR - i]` or the external range `[2NR - i + 1, 2MNR - i]`; decoding is
//! [`exanest_links`]. Genes `1..=R` are router 0's links, `R+1..=2R` router 1's.
//!
//! Operators as in the paper: guided crossover swaps a prefix of each router's half between
//! the parents; guided mutation adds one link to each router (probability `p_new`; external
//! with probability `p_ext`) or removes one from each. Disconnected genomes are either kept
//! with a constraint violation of (components - 1) (`invalid = "constrain"`, the default) or,
//! as in the paper, never produced (`invalid = "discard"`: a disconnected child is replaced by
//! its parent, a disconnecting mutation is undone).
//!
//! Evaluation uses the system's translation symmetry ([`exanest_symmetry`]): distances and
//! path diversity need BFS only from one representative per orbit (the two routers of one
//! chassis when chassis can be rotated).

use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};
use crate::search::config::{BisectionMode, Diversity, ExanestSearch, InvalidPolicy, SearchConfig};
use crate::search::problem::{Evaluation, Objective, SearchProblem};
use crate::topology::TopologyConfig;
use crate::topology::generators::exanest::ExanestParams;
use crate::topology::generators::{
    check_exanest_dims, exanest_links, exanest_router_of, exanest_symmetry,
};
use crate::topology::graph::RouterGraph;
use crate::topology::metrics::bisection::{exact_bisection, fm_refine, partition};
use crate::topology::metrics::summarize;
use crate::topology::symmetry::Symmetry;

/// Exact-bisection search nodes per evaluation before falling back to the heuristic cut.
const EXACT_NODE_BUDGET: u64 = 2_000_000;

/// Everything measured for one genome.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExanestFigures {
    pub active_links: usize,
    /// Cables in the whole system (active genes x chassis).
    pub cables: usize,
    pub components: usize,
    pub bisection: u64,
    /// Whether `bisection` is proven minimal (exact mode and the search finished).
    pub bisection_exact: bool,
    /// Average over ordered router pairs of edge-disjoint shortest paths.
    pub disjoint_paths: f64,
    /// Average over ordered router pairs of the number of shortest paths.
    pub shortest_paths: f64,
    /// None when disconnected.
    pub diameter: Option<u32>,
    pub avg_distance: f64,
}

pub struct ExanestProblem {
    pub r: usize,
    pub n: usize,
    pub m: usize,
    pub params: ExanestSearch,
    seed: u64,
    objectives: Vec<Objective>,
    extras: Vec<String>,
    /// Starting cuts that follow the chassis structure (see [`chassis_cuts`]).
    chassis_cuts: Vec<Vec<bool>>,
}

/// Balanced cuts that repeat with the chassis index: router (chassis c, side s) is on side
/// `pattern[(c mod k) * 2 + s]` for every period k in {1, 2, 4} dividing the chassis count
/// and every balanced pattern; plus each chassis-contiguous half of the chassis ring taken in
/// steps of u (u coprime with the chassis count). Minimum bisections of these arrangements are
/// very often of this form (all router 0s against all router 1s, alternating chassis, ...),
/// and the multilevel partitioner alone misses some of them (measured: docs/search.md).
fn chassis_cuts(chassis: usize) -> Vec<Vec<bool>> {
    let routers = 2 * chassis;
    let mut cuts: Vec<Vec<bool>> = Vec::new();
    for k in [1usize, 2, 4].into_iter().filter(|k| chassis % k == 0) {
        let cells = 2 * k;
        // Patterns with cell 0 on side `true` (a cut and its complement are the same).
        for mask in 0u32..(1 << cells) {
            if mask.count_ones() as usize != k || mask & 1 == 0 {
                continue;
            }
            cuts.push(
                (0..routers)
                    .map(|v| mask >> (((v / 2) % k) * 2 + v % 2) & 1 == 1)
                    .collect(),
            );
        }
    }
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    for u in (1..chassis.div_ceil(2)).filter(|&u| gcd(u, chassis) == 1) {
        cuts.push(
            (0..routers)
                .map(|v| (v / 2 * u) % chassis < chassis / 2)
                .collect(),
        );
    }
    cuts.retain(|c| c.iter().filter(|&&b| b).count() == routers / 2);
    cuts.sort();
    cuts.dedup();
    cuts
}

/// Names of [`Evaluation::extras`], in order.
pub(crate) const EXTRA_NAMES: [&str; 6] = [
    "diameter",
    "avg_distance",
    "disjoint_paths",
    "shortest_paths",
    "f2_paper_scale",
    "cables",
];

impl ExanestProblem {
    pub fn new(r: usize, n: usize, m: usize, params: &ExanestSearch, seed: u64) -> Result<Self> {
        // Validates the dimensions before sizing anything by them (no genes active).
        check_exanest_dims(r, n, m)?;
        exanest_links(r, n, m, &vec![0; 2 * r])?;
        if m == 1 && params.p_ext > 0.0 {
            return Err(Error::field(
                "search.exanest.p_ext",
                format!(
                    "{} asks for external links but M = 1 has no other cabinet; set it to 0",
                    params.p_ext
                ),
            ));
        }
        let f2 = match params.diversity {
            Diversity::Disjoint => "path_diversity",
            Diversity::ShortestPaths => "shortest_path_count",
        };
        Ok(ExanestProblem {
            r,
            n,
            m,
            params: params.clone(),
            seed,
            objectives: vec![
                Objective::maximise("bisection"),
                Objective::maximise(f2),
                Objective::minimise("active_links"),
            ],
            extras: EXTRA_NAMES.iter().map(ToString::to_string).collect(),
            chassis_cuts: chassis_cuts(n * m),
        })
    }

    /// Reads T = (R, N, M) from the problem file's `[topology]` (kind "exanest", no genome) and
    /// the parameters from `[search.exanest]`; errors name the field (the caller adds the file).
    pub fn from_config(
        topo: &TopologyConfig,
        search: Option<&SearchConfig>,
        seed: u64,
    ) -> Result<Self> {
        if topo.kind.as_deref() != Some("exanest") {
            return Err(Error::field(
                "topology.kind",
                "the exanest search needs kind = \"exanest\" with r, n and m",
            ));
        }
        let params: ExanestParams = topo.read_params().map_err(|e| e.prefix_field("topology"))?;
        if params.genome.is_some() {
            return Err(Error::field(
                "topology.genome",
                "the search finds the genome; remove it (keep r, n and m)",
            ));
        }
        let dim = |name: &str, v: Option<usize>| {
            v.ok_or_else(|| Error::field(format!("topology.{name}"), "missing"))
        };
        let (r, n, m) = (
            dim("r", params.r)?,
            dim("n", params.n)?,
            dim("m", params.m)?,
        );
        let search =
            search.ok_or_else(|| Error::field("search", "missing: add a [search] table"))?;
        check_exanest_dims(r, n, m)
            .and_then(|_| exanest_links(r, n, m, &vec![0; 2 * r]))
            .map_err(|e| e.prefix_field("topology"))?;
        Self::new(r, n, m, &search.exanest, seed)
    }

    pub fn routers(&self) -> usize {
        2 * self.n * self.m
    }

    /// The genes owned by each router of a chassis (0-based indices).
    fn halves(&self) -> [std::ops::Range<usize>; 2] {
        [0..self.r, self.r..2 * self.r]
    }

    /// Inclusive range of internal values for 0-based gene `idx`.
    pub(crate) fn internal_range(&self, idx: usize) -> (usize, usize) {
        let i = idx + 1;
        (2 * self.r + 1 - i, 2 * self.n * self.r - i)
    }

    /// Inclusive range of external values (None when M = 1).
    pub(crate) fn external_range(&self, idx: usize) -> Option<(usize, usize)> {
        let i = idx + 1;
        (self.m > 1).then(|| {
            (
                2 * self.n * self.r + 1 - i,
                2 * self.m * self.n * self.r - i,
            )
        })
    }

    /// A fresh value for gene `idx`: external with probability `p_ext` (when there is more
    /// than one cabinet), else internal, uniform over the range.
    fn random_gene(&self, idx: usize, rng: &mut ChaCha8Rng) -> usize {
        let (lo, hi) = match self.external_range(idx) {
            Some(ext) if rng.random_bool(self.params.p_ext) => ext,
            _ => self.internal_range(idx),
        };
        rng.random_range(lo..=hi)
    }

    /// The router-level multigraph of a genome (genes must be in range).
    pub fn graph(&self, genome: &[usize]) -> RouterGraph {
        let cables = exanest_links(self.r, self.n, self.m, genome)
            .expect("operators only produce in-range genes");
        RouterGraph::from_edges(
            self.routers(),
            cables.iter().map(|c| {
                (
                    exanest_router_of(self.r, c.from),
                    exanest_router_of(self.r, c.to),
                )
            }),
        )
    }

    pub fn is_connected(&self, genome: &[usize]) -> bool {
        self.graph(genome).is_connected()
    }

    /// All figures of one genome.
    pub(crate) fn figures(&self, genome: &[usize]) -> ExanestFigures {
        let graph = self.graph(genome);
        let active_links = genome.iter().filter(|&&s| s != 0).count();
        let cables = active_links * self.n * self.m;
        let components = graph.components().len();
        let has_internal = genome
            .iter()
            .enumerate()
            .any(|(idx, &s)| s != 0 && s <= self.internal_range(idx).1);
        let has_external = genome
            .iter()
            .enumerate()
            .any(|(idx, &s)| s > self.internal_range(idx).1);
        let symmetry = exanest_symmetry(self.n, self.m, has_internal, has_external);
        debug_assert!(symmetry.is_automorphism_of(&graph));
        let need_disjoint = components == 1;
        let dist = summarize(&graph, Some(&symmetry), need_disjoint, &|| {});
        let (bisection, bisection_exact) = if components > 1 {
            (0, true)
        } else {
            let (side, cut) = self.bisection_upper(&graph, &symmetry);
            match self.params.bisection {
                BisectionMode::Heuristic => (cut, false),
                BisectionMode::Exact => {
                    match exact_bisection(&graph, Some((cut, side)), EXACT_NODE_BUDGET) {
                        Some((width, _)) => (width, true),
                        None => (cut, false),
                    }
                }
            }
        };
        ExanestFigures {
            active_links,
            cables,
            components,
            bisection,
            bisection_exact,
            disjoint_paths: dist.disjoint_shortest.unwrap_or(0.0),
            shortest_paths: dist.shortest_paths,
            diameter: dist.diameter,
            avg_distance: dist.avg_distance,
        }
    }

    /// The best cut of the multilevel partitioner and of the chassis-structured starting cuts
    /// (the four smallest refined by FM).
    fn bisection_upper(&self, graph: &RouterGraph, symmetry: &Symmetry) -> (Vec<bool>, u64) {
        let best = partition(
            graph,
            Some(symmetry),
            self.params.bisection_restarts,
            self.seed,
        );
        let mut sized: Vec<(u64, usize)> = self
            .chassis_cuts
            .iter()
            .enumerate()
            .map(|(i, c)| (graph.cut_size(c), i))
            .collect();
        sized.sort_unstable();
        sized
            .iter()
            .take(4)
            .map(|&(_, i)| fm_refine(graph, self.chassis_cuts[i].clone(), self.seed))
            .chain(std::iter::once(best))
            .min_by_key(|(_, cut)| *cut)
            .expect("at least the partitioner's cut")
    }

    /// The paper's normalisation of f2, `2 * sum_{i<j} SDP / ((n + 1) n)`, from our average
    /// over ordered pairs: multiply by `(n - 1) / (n + 1)`.
    pub(crate) fn paper_scale(&self, average_over_pairs: f64) -> f64 {
        let n = self.routers() as f64;
        average_over_pairs * (n - 1.0) / (n + 1.0)
    }

    /// Replaces a disconnected `child` by `parent` under the discard policy.
    fn keep_valid(&self, child: &mut Vec<usize>, parent: &[usize]) {
        if self.params.invalid == InvalidPolicy::Discard && !self.is_connected(child) {
            child.clear();
            child.extend_from_slice(parent);
        }
    }
}

impl SearchProblem for ExanestProblem {
    type Genome = Vec<usize>;

    fn name(&self) -> String {
        format!("exanest-{}-{}-{}", self.r, self.n, self.m)
    }

    fn objectives(&self) -> &[Objective] {
        &self.objectives
    }

    fn extra_names(&self) -> &[String] {
        &self.extras
    }

    /// Natural-sign reference (f1 = 0, f2 = 0, f3 = 2R + 1): every connected genome with at
    /// least one link dominates it, so the hypervolume is in units of links x paths x genes.
    fn reference_point(&self) -> Vec<f64> {
        vec![0.0, 0.0, (2 * self.r + 1) as f64]
    }

    /// Each router gets a uniform number (1..=R) of active links at random positions; under
    /// the discard policy genomes are redrawn until connected (at most 1,000 tries).
    fn random_genome(&self, rng: &mut ChaCha8Rng) -> Vec<usize> {
        let mut genome = vec![0; 2 * self.r];
        for attempt in 0..1000 {
            genome.fill(0);
            for half in self.halves() {
                let k = rng.random_range(1..=self.r);
                let positions: Vec<usize> = half.collect();
                for &idx in positions.choose_multiple(rng, k) {
                    genome[idx] = self.random_gene(idx, rng);
                }
            }
            if self.params.invalid == InvalidPolicy::Constrain
                || attempt == 999
                || self.is_connected(&genome)
            {
                break;
            }
        }
        genome
    }

    /// Guided crossover: with probability `p_cross`, c1 in [1, R] and c2 in [R+1, 2R] are
    /// drawn and genes 1..=c1 and R+1..=c2 are exchanged (a prefix of each router's half).
    fn crossover(
        &self,
        a: &Vec<usize>,
        b: &Vec<usize>,
        rng: &mut ChaCha8Rng,
    ) -> (Vec<usize>, Vec<usize>) {
        let (mut x, mut y) = (a.clone(), b.clone());
        if rng.random_bool(self.params.p_cross) {
            let c1 = rng.random_range(1..=self.r);
            let c2 = rng.random_range(self.r + 1..=2 * self.r);
            for idx in (0..c1).chain(self.r..c2) {
                std::mem::swap(&mut x[idx], &mut y[idx]);
            }
            self.keep_valid(&mut x, a);
            self.keep_valid(&mut y, b);
        }
        (x, y)
    }

    /// Guided mutation: with probability `p_mut`; then with probability `p_new` one unused
    /// gene of each router gets a fresh value, else one active gene of each router is cleared.
    fn mutate(&self, genome: &mut Vec<usize>, rng: &mut ChaCha8Rng) {
        if !rng.random_bool(self.params.p_mut) {
            return;
        }
        let before = genome.clone();
        let add = rng.random_bool(self.params.p_new);
        for half in self.halves() {
            let candidates: Vec<usize> = half.filter(|&idx| (genome[idx] == 0) == add).collect();
            if let Some(&idx) = candidates.choose(rng) {
                genome[idx] = if add { self.random_gene(idx, rng) } else { 0 };
            }
        }
        self.keep_valid(genome, &before);
    }

    fn evaluate(&self, genome: &Vec<usize>) -> Evaluation {
        let f = self.figures(genome);
        let f2 = match self.params.diversity {
            Diversity::Disjoint => f.disjoint_paths,
            Diversity::ShortestPaths => f.shortest_paths,
        };
        Evaluation {
            objectives: vec![-(f.bisection as f64), -f2, f.active_links as f64],
            violation: (f.components - 1) as f64,
            extras: vec![
                // -1 marks a disconnected genome (JSON has no NaN).
                f.diameter.map_or(-1.0, f64::from),
                f.avg_distance,
                f.disjoint_paths,
                f.shortest_paths,
                self.paper_scale(f2),
                f.cables as f64,
            ],
        }
    }

    fn check_genome(&self, genome: &Vec<usize>) -> std::result::Result<(), String> {
        exanest_links(self.r, self.n, self.m, genome)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn describe(&self, genome: &Vec<usize>) -> String {
        genome
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/")
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::topology::generators::exanest;
    use crate::topology::metrics::{MetricsOptions, compute};
    use crate::topology::spec::LinkParams;

    fn problem(r: usize, n: usize, m: usize, p_ext: f64, invalid: InvalidPolicy) -> ExanestProblem {
        let params = ExanestSearch {
            p_ext,
            invalid,
            ..ExanestSearch::default()
        };
        ExanestProblem::new(r, n, m, &params, 1).unwrap()
    }

    fn in_range(p: &ExanestProblem, genome: &[usize]) -> bool {
        genome.iter().enumerate().all(|(idx, &s)| {
            let (lo, hi) = p.internal_range(idx);
            let ext = p.external_range(idx);
            s == 0 || (lo..=hi).contains(&s) || ext.is_some_and(|(a, b)| (a..=b).contains(&s))
        })
    }

    #[test]
    fn figures_match_the_topology_metrics() {
        // The worked example: evaluation through the search path equals `fabricopt topo`.
        let p = problem(2, 4, 2, 0.5, InvalidPolicy::Constrain);
        let genome = vec![5, 17, 8, 22];
        let f = p.figures(&genome);
        let topo = exanest(2, 4, 2, &genome, 1, &LinkParams::default()).unwrap();
        let (m, _) = compute(&topo, &MetricsOptions::default(), &|| {});
        assert_eq!(f.components, 1);
        assert_eq!(f.diameter, m.diameter);
        assert!((f.avg_distance - m.avg_distance).abs() < 1e-12);
        assert!((f.disjoint_paths - m.path_diversity.disjoint_shortest).abs() < 1e-12);
        assert!((f.shortest_paths - m.path_diversity.shortest_paths).abs() < 1e-12);
        assert_eq!(Some(f.bisection), m.bisection.exact);
        assert_eq!(f.active_links, 4);
        assert_eq!(f.cables, 32);
        let e = p.evaluate(&genome);
        assert_eq!(e.objectives[2], 4.0);
        assert_eq!(e.violation, 0.0);
    }

    #[test]
    fn symmetry_holds_for_random_genomes() {
        // The evaluation trusts the chassis/cabinet symmetry: check it on many genomes of
        // every kind (internal only, external only, mixed).
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for (m, p_ext) in [(1, 0.0), (3, 0.5), (3, 1.0), (2, 0.25)] {
            let p = problem(3, 4, m, p_ext, InvalidPolicy::Constrain);
            for _ in 0..40 {
                let g = p.random_genome(&mut rng);
                let graph = p.graph(&g);
                let has_int = g
                    .iter()
                    .enumerate()
                    .any(|(i, &s)| s != 0 && s <= p.internal_range(i).1);
                let has_ext = g
                    .iter()
                    .enumerate()
                    .any(|(i, &s)| s > p.internal_range(i).1);
                let sym = exanest_symmetry(p.n, p.m, has_int, has_ext);
                assert!(sym.is_automorphism_of(&graph), "{g:?}");
                // Path diversity from representatives equals the full computation.
                let full = summarize(&graph, None, true, &|| {});
                let fast = summarize(&graph, Some(&sym), true, &|| {});
                assert!(fast.sources < full.sources);
                assert_eq!(
                    (fast.diameter, fast.connected),
                    (full.diameter, full.connected)
                );
                for (a, b) in [
                    (fast.avg_distance, full.avg_distance),
                    (fast.shortest_paths, full.shortest_paths),
                    (
                        fast.disjoint_shortest.unwrap(),
                        full.disjoint_shortest.unwrap(),
                    ),
                ] {
                    assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{g:?}");
                }
            }
        }
    }

    #[test]
    fn operators_keep_genes_in_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let p = problem(8, 16, 4, 0.5, InvalidPolicy::Constrain);
        let mut pop: Vec<Vec<usize>> = (0..20).map(|_| p.random_genome(&mut rng)).collect();
        for _ in 0..200 {
            let i = rng.random_range(0..pop.len());
            let j = rng.random_range(0..pop.len());
            let (mut a, mut b) = p.crossover(&pop[i], &pop[j], &mut rng);
            p.mutate(&mut a, &mut rng);
            p.mutate(&mut b, &mut rng);
            assert!(in_range(&p, &a) && in_range(&p, &b), "{a:?} {b:?}");
            pop[i] = a;
            pop[j] = b;
        }
        // Internal-only when p_ext = 0.
        let p = problem(8, 16, 4, 0.0, InvalidPolicy::Constrain);
        for _ in 0..50 {
            let g = p.random_genome(&mut rng);
            assert!(
                g.iter()
                    .enumerate()
                    .all(|(i, &s)| s == 0 || s <= p.internal_range(i).1)
            );
        }
    }

    #[test]
    fn crossover_swaps_a_prefix_of_each_half() {
        let params = ExanestSearch {
            p_cross: 1.0,
            ..ExanestSearch::default()
        };
        let p = ExanestProblem::new(4, 8, 1, &params, 1).unwrap();
        let a = vec![8, 9, 10, 11, 8, 9, 10, 11];
        let b = vec![20, 21, 22, 23, 20, 21, 22, 23];
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..50 {
            let (x, y) = p.crossover(&a, &b, &mut rng);
            for half in [0..4, 4..8] {
                // Within each half: a prefix from the other parent, then the rest from one's own.
                let from_b: Vec<bool> = half.clone().map(|i| x[i] == b[i]).collect();
                let k = from_b.iter().take_while(|&&f| f).count();
                assert!(k >= 1 && from_b[k..].iter().all(|&f| !f), "{x:?}");
                for i in half {
                    assert_eq!(x[i] + y[i], a[i] + b[i]);
                }
            }
        }
    }

    #[test]
    fn mutation_adds_or_removes_one_link_per_router() {
        let params = ExanestSearch {
            p_mut: 1.0,
            ..ExanestSearch::default()
        };
        let p = ExanestProblem::new(4, 8, 1, &params, 1).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let (mut added, mut removed) = (0, 0);
        for _ in 0..200 {
            let before = vec![8, 0, 10, 0, 0, 9, 0, 11];
            let mut g = before.clone();
            p.mutate(&mut g, &mut rng);
            let count = |h: std::ops::Range<usize>, v: &[usize]| h.filter(|&i| v[i] != 0).count();
            let d0 = count(0..4, &g) as i64 - count(0..4, &before) as i64;
            let d1 = count(4..8, &g) as i64 - count(4..8, &before) as i64;
            assert_eq!(d0, d1);
            assert_eq!(d0.abs(), 1);
            if d0 > 0 { added += 1 } else { removed += 1 }
        }
        // p_new = 0.5: both kinds happen.
        assert!(added > 60 && removed > 60, "{added} {removed}");
    }

    #[test]
    fn discard_policy_never_produces_disconnected_genomes() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let p = problem(8, 16, 1, 0.0, InvalidPolicy::Discard);
        let mut pop: Vec<Vec<usize>> = (0..10).map(|_| p.random_genome(&mut rng)).collect();
        assert!(pop.iter().all(|g| p.is_connected(g)));
        for _ in 0..100 {
            let (mut a, _) = p.crossover(&pop[0], &pop[1], &mut rng);
            p.mutate(&mut a, &mut rng);
            assert!(p.is_connected(&a));
            pop.rotate_left(1);
            pop[0] = a;
        }
        // Constrain policy: a disconnected genome gets violation = components - 1.
        let p = problem(2, 4, 1, 0.0, InvalidPolicy::Constrain);
        // Gene 1 = 4 links router 0 of chassis c to router 0 of chassis c+1: one ring of
        // router-0s, and every router 1 alone: 1 + 4 components.
        let e = p.evaluate(&vec![4, 0, 0, 0]);
        assert_eq!(e.violation, 4.0);
        assert_eq!(e.extras[0], -1.0);
    }

    #[test]
    fn paper_scale_converts_the_average() {
        let p = problem(8, 16, 1, 0.0, InvalidPolicy::Constrain);
        assert!((p.paper_scale(33.0) - 33.0 * 31.0 / 33.0).abs() < 1e-12);
    }

    #[test]
    fn p_ext_without_other_cabinets_is_an_error() {
        let params = ExanestSearch {
            p_ext: 0.5,
            ..ExanestSearch::default()
        };
        let err = ExanestProblem::new(8, 16, 1, &params, 1)
            .err()
            .unwrap()
            .to_string();
        assert!(err.starts_with("search.exanest.p_ext:"), "{err}");
    }
}
