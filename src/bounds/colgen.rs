//! Min-congestion routing over all paths by column generation: a path LP over a growing set of
//! paths per router pair, priced by shortest paths under the LP's dual channel weights.
//!
//! * Master LP: `x[pair][k] >= 0`, `sum_k x[pair][k] = 1`, for every channel
//!   `sum demand[pair] * x[pair][k] / bandwidth <= t` over the paths using it; minimise `t`.
//! * Pricing: with `y_c` the duals of the channel rows, a path of `pair` improves the master
//!   when `sum_{c in path} y_c / bandwidth_c` is below the cheapest path the pair already has;
//!   one Dijkstra per source router finds the cheapest path of each of its pairs.
//! * Certificates, independent of the solver's accuracy: the lower bound is the Lagrangian
//!   (weak duality) bound of the weights, `sum_pairs demand * dist_y(pair) / sum_c y_c` (see
//!   `mcf.rs`), raised by a dual (Lagrangian) ascent after every master solve; the upper bound
//!   is the max channel load of the master's flow, renormalised per pair, or of an average of
//!   the ascent's shortest-path routings, both actual fractional routings. The gap between
//!   them is reported.
//! * Pricing runs at the master's duals and at the ascent's lengths (near-optimal duals price
//!   the paths an optimal flow needs; interior-point duals of an incomplete master often do
//!   not), with ties broken differently per source.
//!
//! Its columns are what the routing-table search needs: the paths of an optimal fractional
//! routing (docs/bounds.md, "Column generation").

use std::collections::HashSet;

use good_lp::{DualValues, constraint::ConstraintReference};
use good_lp::{
    Expression, ProblemVariables, Solution, SolutionWithDual, SolverModel, Variable, constraint,
    variable,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::lp::LpSolver;
use super::mcf::{ASCENT, dijkstra, lagrangian_ascent};
use super::path_ipm::{self, MasterPair};
use super::{Bound, BoundKind, Network, check_demand, demand_by_source};
use crate::error::{Error, Result};
use crate::routing::table::load::RouterDemand;
use crate::routing::table::{CandidateSet, RouterPath, pair_index};
use crate::topology::Topology;
use crate::topology::model::Endpoint;

/// Stopping rule of [`column_generation`].
#[derive(Clone, Debug)]
pub(crate) struct ColumnGenOptions {
    /// Stop once `upper / lower - 1 <= target_gap`.
    pub target_gap: f64,
    /// Stop after this many master solves whatever the gap.
    pub max_rounds: usize,
    /// Stop once this many paths per pair (on average) have been generated beyond the
    /// initial ones: Clarabel's solve grew much faster than linearly in the columns (on a
    /// 32x32 mesh transpose, 1.3 s at 3.6 paths per pair, 45 s at 5.3; a 16x16 transpose
    /// converges at about 20); the dense interior point's cost grows linearly in them.
    pub max_new_paths_per_pair: f64,
    /// ... and once this many paths have been generated in all.
    pub max_new_paths: usize,
    pub solver: MasterSolver,
}

/// What solves the master LP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MasterSolver {
    /// The interior point of `path_ipm.rs`, on the master's structure; a master it does not
    /// solve goes to Clarabel.
    DenseInteriorPoint,
    /// A general LP solver through good_lp (only the tests cross-check against it).
    #[cfg(test)]
    Lp(LpSolver),
}

impl MasterSolver {
    fn name(self) -> &'static str {
        match self {
            MasterSolver::DenseInteriorPoint => "dense interior point",
            #[cfg(test)]
            MasterSolver::Lp(s) => s.name(),
        }
    }
}

impl Default for ColumnGenOptions {
    fn default() -> Self {
        ColumnGenOptions {
            target_gap: 1e-3,
            max_rounds: 100,
            max_new_paths_per_pair: 24.0,
            max_new_paths: 8_000,
            // An interior point even with the `highs` feature: its duals are central, so
            // every pricing round adds paths for most pairs; HiGHS's vertex duals add a few
            // (29 per round on the 32x32 transpose; 100 rounds leave a 16x16 transpose at a
            // 40x gap). Our own on the master's structure: Clarabel's sparse factor of the
            // nearly dense system took 13 of the 32x32 transpose's 14 minutes.
            solver: MasterSolver::DenseInteriorPoint,
        }
    }
}

/// Gap above which a round runs the dual ascent and prices at its lengths.
const ASCENT_GAP: f64 = 0.05;

/// Relative length jitter when pricing at the ascent's lengths (see `price`), to pick among
/// paths the near-optimal lengths make (nearly) equally short. On the dragonfly group shift
/// from minimum-hop paths the master's load after three rounds was 4.7 without jitter, 3.4
/// with 0.1% and 3.1 with 1% (optimum 1.94).
const JITTER: f64 = 1e-2;

/// One path of a pair in the fractional routing, and the share of the pair's demand on it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PathShare {
    pub path: RouterPath,
    pub share: f64,
}

/// The result of [`column_generation`].
#[derive(Clone, Debug)]
pub(crate) struct ColumnGeneration {
    /// Certified lower bound on the max channel load of every routing, with the gap to the
    /// achievable `upper`.
    pub bound: Bound,
    /// Max channel load of the best fractional routing found (achievable by splitting
    /// flows): the master's, or an average of the dual ascent's shortest-path routings.
    pub upper: f64,
    /// Max channel load of the master's routing, the one `paths` describe (>= `upper`).
    pub paths_upper: f64,
    /// Master LPs solved.
    pub rounds: usize,
    /// Paths generated in total, the initial ones included.
    pub columns: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Per pair with demand (`pair_index` order): its paths carrying flow, largest share first.
    pub paths: Vec<(usize, Vec<PathShare>)>,
}

/// A path as network-channel indices (into `Network::chans`).
type Column = Vec<usize>;

/// One pair with demand and its columns.
struct PairColumns {
    pair: usize,
    src: usize,
    dst: usize,
    /// Demand scaled to O(1).
    demand: f64,
    columns: Vec<Column>,
    known: HashSet<Column>,
}

impl PairColumns {
    fn add(&mut self, c: Column) -> bool {
        if self.known.insert(c.clone()) {
            self.columns.push(c);
            true
        } else {
            false
        }
    }
}

/// What one master solve returns.
struct Master {
    /// Share of each column, per pair (clamped to >= 0 and renormalised).
    shares: Vec<Vec<f64>>,
    /// Non-negative dual weight of every network channel (0 for channels no column uses).
    weights: Vec<f64>,
}

impl Master {
    /// From a solver's shares as solved (slightly negative or off 1 within its tolerance).
    fn new(raw_shares: Vec<Vec<f64>>, weights: Vec<f64>) -> Master {
        let shares = raw_shares
            .into_iter()
            .map(|xs| renormalised(xs.into_iter().map(|v| v.max(0.0))))
            .collect();
        Master { shares, weights }
    }
}

/// Column generation for min-congestion routing of `demand` over all paths of `topo`. The
/// initial columns are each pair's distinct candidates in `initial` (so the result is never
/// worse than the candidate LP), or its minimum-hop path.
pub(crate) fn column_generation(
    topo: &Topology,
    demand: &RouterDemand,
    initial: Option<&CandidateSet>,
    opts: &ColumnGenOptions,
) -> Result<ColumnGeneration> {
    let start = std::time::Instant::now();
    let net = Network::new(topo);
    check_demand(topo, &net, demand)?;
    let n = net.n;
    let method = format!("column-generation path LP ({})", opts.solver.name());
    let scale = demand.demand.iter().copied().fold(0.0, f64::max);
    if scale == 0.0 {
        return Ok(ColumnGeneration {
            bound: Bound::new(0.0, BoundKind::Exact, method),
            upper: 0.0,
            paths_upper: 0.0,
            rounds: 0,
            columns: 0,
            seconds: start.elapsed().as_secs_f64(),
            paths: Vec::new(),
        });
    }
    let mut net_of_channel = vec![usize::MAX; 2 * topo.links.len()];
    for (e, ch) in net.chans.iter().enumerate() {
        net_of_channel[ch.channel] = e;
    }
    let by_source = demand_by_source(demand);
    let sources: Vec<(usize, Vec<(usize, f64)>)> = by_source
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.is_empty())
        .map(|(s, d)| (s, d.clone()))
        .collect();
    let scaled_sources: Vec<(usize, Vec<(usize, f64)>)> = sources
        .iter()
        .map(|(s, d)| (*s, d.iter().map(|&(t, r)| (t, r / scale)).collect()))
        .collect();
    let unit: Vec<f64> = net.chans.iter().map(|c| 1.0 / c.cap).collect();
    let mut pairs: Vec<PairColumns> = Vec::new();
    let mut first_of_source = Vec::with_capacity(sources.len());
    for (s, dests) in &sources {
        first_of_source.push(pairs.len());
        let (_, parent, _) = dijkstra(&net, &unit, *s, dests);
        for &(d, rate) in dests {
            let pair = pair_index(n, *s, d);
            let mut pc = PairColumns {
                pair,
                src: *s,
                dst: d,
                demand: rate / scale,
                columns: Vec::new(),
                known: HashSet::new(),
            };
            if let Some(c) = initial {
                for p in c.paths(pair).iter() {
                    if let Some(col) = column_of(topo, &net_of_channel, p, *s, d) {
                        pc.add(col);
                    }
                }
            }
            if pc.columns.is_empty() {
                pc.add(tree_path(&net, &parent, *s, d));
            }
            pairs.push(pc);
        }
    }

    let initial_columns: usize = pairs.iter().map(|p| p.columns.len()).sum();
    let mut rounds = 0;
    // Masters the dense interior point left to Clarabel.
    let mut fallbacks = 0;
    // The even split over the initial columns: an achievable start, and the first ascent's
    // target (the master's is not known before its solve, beside which the ascent runs).
    let mut best_shares: Vec<Vec<f64>> = pairs
        .iter()
        .map(|p| vec![1.0 / p.columns.len() as f64; p.columns.len()])
        .collect();
    let even = channel_utilisation(&net, &pairs, &best_shares);
    let mut upper = even.iter().copied().fold(0.0_f64, f64::max);
    let mut lower = 0.0_f64;
    // The lengths that certify `lower`, where the next dual ascent starts.
    let mut best_len: Vec<f64> = unit.clone();
    // Max load of the best averaged routing the ascents formed (achievable, but not a
    // routing over the columns).
    let mut averaged_upper = f64::INFINITY;
    // The first round's ascent starts from 1/bandwidth, the second's from the lengths
    // concentrated on the channels the first master's flow loads most, later ones from the
    // lengths that certify `lower`. Both first starts, as neither is best everywhere: from
    // concentrated lengths alone the dragonfly group shift's lower end stalled at 0.56
    // (optimum 1.94), from 1/bandwidth alone its achievable end stayed 19% above.
    let mut sharp_start: Option<Vec<f64>> = None;
    loop {
        // While the gap is wide, a dual ascent (from the starts above) runs beside the master
        // (Clarabel's solve is single-threaded and, on a 32x32 mesh, takes longer than the
        // ascent), and its lengths price paths as well as the master's duals (Wentges-style
        // smoothing): near-optimal lengths price the paths an optimal flow uses. Below
        // ASCENT_GAP the master's own duals do.
        let wide = upper > lower * (1.0 + ASCENT_GAP);
        let target = upper.min(averaged_upper);
        let (master, ascent) = rayon::join(
            || solve_master(&net, &pairs, opts.solver),
            || {
                let start = sharp_start.take().unwrap_or_else(|| best_len.clone());
                wide.then(|| lagrangian_ascent(&net, &start, &scaled_sources, target, ASCENT))
            },
        );
        let (master, fell_back) = master?;
        fallbacks += usize::from(fell_back);
        rounds += 1;
        let u = achieved_load(&net, &pairs, &master.shares);
        if u < upper {
            upper = u;
            best_shares = master.shares.clone();
        }
        // Lengths: the duals, plus a tie-breaker far below them so that channels without a
        // dual still prefer short paths (any non-negative lengths certify a lower bound).
        let top = master.weights.iter().copied().fold(0.0, f64::max);
        let tie = if top > 0.0 { top * 1e-7 } else { 1.0 };
        let len: Vec<f64> = master
            .weights
            .iter()
            .zip(&net.chans)
            .map(|(y, c)| (y + tie) / c.cap)
            .collect();
        let (routed, from_duals) =
            price(&net, &len, &sources, &first_of_source, &pairs, scale, None);
        let volume: f64 = net.chans.iter().zip(&len).map(|(c, l)| c.cap * l).sum();
        if routed / volume > lower {
            lower = routed / volume;
            best_len = len.clone();
        }
        let load = channel_utilisation(&net, &pairs, &best_shares);
        let sharp = sharpen(&net, &load, upper, &scaled_sources);
        if rounds == 1 {
            sharp_start = Some(sharp.1.clone());
        }
        if sharp.0 > lower {
            (lower, best_len) = sharp;
        }
        let mut from_ascent = Vec::new();
        if let Some(ascent) = ascent {
            averaged_upper = averaged_upper.min(ascent.upper);
            if ascent.bound > lower {
                lower = ascent.bound;
                best_len = ascent.len;
            }
            let seed = rounds as u64;
            from_ascent = price(
                &net,
                &best_len,
                &sources,
                &first_of_source,
                &pairs,
                scale,
                Some(seed),
            )
            .1;
        }
        // At most one new path per pair and round, the master's first, else the ascent's: the
        // master's cost grows fast with its paths (two per pair and round made the 32x32
        // transpose's master 12,285 paths instead of 10,470).
        let mut added = 0;
        let mut from_ascent = from_ascent.into_iter();
        for (per_source, &first) in from_duals.into_iter().zip(&first_of_source) {
            let ascent_paths = from_ascent.next().unwrap_or_default();
            let mut ascent_paths = ascent_paths.into_iter();
            for (j, col) in per_source.into_iter().enumerate() {
                let ascent_col = ascent_paths.next().filter(|c| !c.is_empty());
                let pc = &mut pairs[first + j];
                let added_master = !col.is_empty() && pc.add(col);
                if added_master || ascent_col.is_some_and(|c| pc.add(c)) {
                    added += 1;
                }
            }
        }
        let columns: usize = pairs.iter().map(|p| p.columns.len()).sum();
        if added == 0
            // The master's flow, not the averaged one: its paths are the result too.
            || upper <= lower * (1.0 + opts.target_gap)
            || rounds >= opts.max_rounds
            || (columns - initial_columns) as f64 > opts.max_new_paths_per_pair * pairs.len() as f64
            || columns - initial_columns > opts.max_new_paths
        {
            break;
        }
    }
    let columns = pairs.iter().map(|p| p.columns.len()).sum();
    // The returned routing: each pair's columns with a share above 1e-6, renormalised, and
    // its own max load (what a candidate set holding these paths can reach).
    let kept: Vec<Vec<f64>> = best_shares
        .iter()
        .map(|shares| renormalised(shares.iter().map(|&x| if x > 1e-6 { x } else { 0.0 })))
        .collect();
    let paths_upper = achieved_load(&net, &pairs, &kept);
    let upper = upper.min(averaged_upper).min(paths_upper);
    let gap = (upper / lower - 1.0).max(0.0);
    let paths = pairs
        .iter()
        .zip(&kept)
        .map(|(pc, shares)| {
            let mut kept: Vec<PathShare> = pc
                .columns
                .iter()
                .zip(shares)
                .filter(|&(_, &x)| x > 0.0)
                .map(|(c, &x)| PathShare {
                    path: router_path(topo, &net, pc.src, c),
                    share: x,
                })
                .collect();
            kept.sort_by(|a, b| b.share.total_cmp(&a.share));
            debug_assert!(kept.iter().all(|p| p.path.destination() == pc.dst));
            (pc.pair, kept)
        })
        .collect();
    Ok(ColumnGeneration {
        bound: Bound::new(
            lower * scale,
            BoundKind::Approximate { gap },
            if fallbacks > 0 {
                format!(
                    "{method}, {rounds} rounds ({fallbacks} solved by clarabel), {columns} paths"
                )
            } else {
                format!("{method}, {rounds} rounds, {columns} paths")
            },
        ),
        upper: upper * scale,
        paths_upper: paths_upper * scale,
        rounds,
        columns,
        seconds: start.elapsed().as_secs_f64(),
        paths,
    })
}

/// Lengths concentrated on the channels a routing with utilisation `load` (max `upper`) loads
/// most, and the bound they certify: the best of a few concentrations. Interior-point duals
/// spread over every tight channel and certify little until the columns are nearly complete,
/// while an optimal dual lives where the best flow is tight (complementary slackness). Any
/// non-negative weights give a valid bound.
fn sharpen(
    net: &Network,
    load: &[f64],
    upper: f64,
    scaled_sources: &[(usize, Vec<(usize, f64)>)],
) -> (f64, Vec<f64>) {
    [8.0, 32.0, 128.0, 512.0]
        .into_iter()
        .map(|beta| {
            let sharp: Vec<f64> = load
                .iter()
                .zip(&net.chans)
                .map(|(u, c)| (beta * (u / upper - 1.0)).exp() / c.cap)
                .collect();
            (super::mcf::dual_bound(net, &sharp, scaled_sources), sharp)
        })
        .reduce(|a, b| if b.0 > a.0 { b } else { a })
        .expect("four concentrations")
}

/// Pricing under lengths `len`: the demand-weighted shortest distances of all pairs (the
/// Lagrangian numerator, in scaled demand) and, per source and pair, its shortest path when
/// that is shorter than every column the pair has (else an empty column).
///
/// With `jitter`, each source's lengths are scaled by `1 + 1e-3 u` (`u` uniform in [0, 1),
/// seeded by `jitter` and the source) before the search, so that pairs of different sources
/// break ties among equally short paths differently. Near-optimal lengths tie many paths
/// (every intermediate group of a dragonfly's non-minimal paths), and an optimal flow needs
/// them spread; unjittered trees all pick the same ones.
fn price(
    net: &Network,
    len: &[f64],
    sources: &[(usize, Vec<(usize, f64)>)],
    first_of_source: &[usize],
    pairs: &[PairColumns],
    scale: f64,
    jitter: Option<u64>,
) -> (f64, Vec<Vec<Column>>) {
    let priced: Vec<(f64, Vec<Column>)> = sources
        .par_iter()
        .zip(first_of_source)
        .map(|((s, dests), &first)| {
            let jittered: Vec<f64>;
            let len = match jitter {
                Some(seed) => {
                    let mut rng = ChaCha8Rng::seed_from_u64(
                        seed ^ (*s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    );
                    jittered = len
                        .iter()
                        .map(|l| l * (1.0 + JITTER * rng.random::<f64>()))
                        .collect();
                    &jittered
                }
                None => len,
            };
            let (dist, parent, _) = dijkstra(net, len, *s, dests);
            let mut routed = 0.0;
            let mut new = Vec::new();
            for (j, &(d, rate)) in dests.iter().enumerate() {
                routed += rate / scale * dist[d];
                let cheapest = pairs[first + j]
                    .columns
                    .iter()
                    .map(|c| c.iter().map(|&e| len[e]).sum::<f64>())
                    .fold(f64::INFINITY, f64::min);
                new.push(if dist[d] < cheapest * (1.0 - 1e-9) {
                    tree_path(net, &parent, *s, d)
                } else {
                    Vec::new()
                });
            }
            (routed, new)
        })
        .collect();
    let routed = priced.iter().map(|(r, _)| r).sum();
    (routed, priced.into_iter().map(|(_, new)| new).collect())
}

/// The path from `s` to `d` in a shortest-path tree.
fn tree_path(net: &Network, parent: &[usize], s: usize, d: usize) -> Column {
    let mut col = Vec::new();
    let mut v = d;
    while v != s {
        let e = parent[v];
        col.push(e);
        v = net.chans[e].from;
    }
    col.reverse();
    col
}

/// A candidate path as a column (None if it uses a channel that is not router-to-router or
/// does not join `s` to `d`, which a validated candidate never does).
fn column_of(
    topo: &Topology,
    net_of_channel: &[usize],
    p: &RouterPath,
    s: usize,
    d: usize,
) -> Option<Column> {
    if p.source() != s || p.destination() != d || p.validate(topo).is_err() {
        return None;
    }
    p.channels(topo)
        .into_iter()
        .map(|c| Some(net_of_channel[c]).filter(|&e| e != usize::MAX))
        .collect()
}

fn router_path(topo: &Topology, net: &Network, s: usize, col: &Column) -> RouterPath {
    let mut path = RouterPath {
        routers: vec![s as u32],
        ports: Vec::with_capacity(col.len()),
    };
    for &e in col {
        let Endpoint::Router { port, .. } = topo.channel_ends(net.chans[e].channel).0 else {
            unreachable!("network channels join routers");
        };
        path.ports.push(port as u16);
        path.routers.push(net.chans[e].to as u32);
    }
    path
}

/// Non-negative `shares` scaled to sum to 1; all zero (a solver failure in disguise) becomes
/// an even split, still a valid routing.
fn renormalised(shares: impl Iterator<Item = f64>) -> Vec<f64> {
    let xs: Vec<f64> = shares.collect();
    let total: f64 = xs.iter().sum();
    if total > 0.0 {
        xs.iter().map(|v| v / total).collect()
    } else {
        vec![1.0 / xs.len() as f64; xs.len()]
    }
}

/// Utilisation of every channel when each pair splits over its columns by `shares`.
fn channel_utilisation(net: &Network, pairs: &[PairColumns], shares: &[Vec<f64>]) -> Vec<f64> {
    let mut load = vec![0.0; net.chans.len()];
    for (pc, x) in pairs.iter().zip(shares) {
        for (c, &share) in pc.columns.iter().zip(x) {
            for &e in c {
                load[e] += pc.demand * share;
            }
        }
    }
    for (l, c) in load.iter_mut().zip(&net.chans) {
        *l /= c.cap;
    }
    load
}

/// Max channel utilisation of the routing that splits each pair over its columns by `shares`.
fn achieved_load(net: &Network, pairs: &[PairColumns], shares: &[Vec<f64>]) -> f64 {
    channel_utilisation(net, pairs, shares)
        .into_iter()
        .fold(0.0, f64::max)
}

/// Solves the master LP over the current columns. The second value is true when the dense
/// interior point did not converge and Clarabel solved it instead.
fn solve_master(
    net: &Network,
    pairs: &[PairColumns],
    solver: MasterSolver,
) -> Result<(Master, bool)> {
    match solver {
        MasterSolver::DenseInteriorPoint => {
            let bandwidth: Vec<f64> = net.chans.iter().map(|c| c.cap).collect();
            let master: Vec<MasterPair> = pairs
                .iter()
                .map(|pc| MasterPair {
                    demand: pc.demand,
                    columns: &pc.columns,
                })
                .collect();
            match path_ipm::solve(&bandwidth, &master) {
                Some(sol) => Ok((Master::new(sol.shares, sol.weights), false)),
                None => Ok((solve_master_lp(net, pairs, LpSolver::Clarabel)?, true)),
            }
        }
        #[cfg(test)]
        MasterSolver::Lp(s) => Ok((solve_master_lp(net, pairs, s)?, false)),
    }
}

/// Builds and solves the master LP over the current columns with a general LP solver.
fn solve_master_lp(net: &Network, pairs: &[PairColumns], solver: LpSolver) -> Result<Master> {
    let mut vars = ProblemVariables::new();
    let t = vars.add(variable().min(0.0));
    let mut load: Vec<Expression> = vec![Expression::from(0.0); net.chans.len()];
    let mut used = vec![false; net.chans.len()];
    let mut x: Vec<Vec<Variable>> = Vec::with_capacity(pairs.len());
    let mut convexity = Vec::with_capacity(pairs.len());
    for pc in pairs {
        let mut sum = Expression::from(0.0);
        let xs: Vec<Variable> = pc
            .columns
            .iter()
            .map(|c| {
                let v = vars.add(variable().min(0.0));
                sum += v;
                for &e in c {
                    load[e].add_mul(pc.demand, v);
                    used[e] = true;
                }
                v
            })
            .collect();
        convexity.push(constraint::eq(sum, 1.0));
        x.push(xs);
    }
    let mut rows = Vec::new();
    let mut channel_rows = Vec::new();
    for (e, expr) in load.into_iter().enumerate() {
        if used[e] {
            channel_rows.push(e);
            rows.push(constraint::leq(expr * (1.0 / net.chans[e].cap), t));
        }
    }
    let lp_error = |e: good_lp::ResolutionError| Error::field("lp", format!("{e}"));
    // The same steps for each solver; their model types differ.
    macro_rules! solve {
        ($solver:expr) => {{
            let mut model = vars.minimise(t).using($solver);
            for c in convexity {
                model.add_constraint(c);
            }
            let refs: Vec<ConstraintReference> =
                rows.into_iter().map(|c| model.add_constraint(c)).collect();
            let mut solution = model.solve().map_err(lp_error)?;
            let shares: Vec<Vec<f64>> = x
                .iter()
                .map(|xs| xs.iter().map(|&v| solution.value(v)).collect())
                .collect();
            let duals = solution.compute_dual();
            let mut weights = vec![0.0; net.chans.len()];
            for (&e, r) in channel_rows.iter().zip(refs) {
                // Sign conventions differ between solvers; the weight is the magnitude.
                weights[e] = duals.dual(r).abs();
            }
            (shares, weights)
        }};
    }
    let (shares, weights) = match solver {
        #[cfg(test)]
        LpSolver::Microlp => {
            return Err(Error::field(
                "lp",
                "column generation needs dual values, which microlp does not give",
            ));
        }
        LpSolver::Clarabel => solve!(good_lp::clarabel),
        #[cfg(feature = "highs")]
        LpSolver::Highs => solve!(good_lp::highs),
    };
    Ok(Master::new(shares, weights))
}
