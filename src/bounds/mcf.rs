//! Garg–Könemann / Fleischer approximation of min-congestion multicommodity flow, for networks
//! too large for the exact edge LP.
//!
//! Both ends are certified, independently of how well the iteration converged:
//! * upper bound: the averaged flow routes all demand, so its max channel load is achievable;
//! * lower bound: for any channel lengths `l >= 0`, every routing has max load
//!   `t >= sum_pairs demand * dist_l(s, d) / sum_c bandwidth_c * l_c` (LP weak duality:
//!   `sum_c l_c load_c >= sum_pairs demand * dist_l` and `sum_c l_c load_c <= t sum_c l_c bw_c`).
//!
//! The multiplicative length updates only steer `l` towards the dual optimum.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rayon::prelude::*;

use super::{Bound, BoundKind, Network, check_demand, demand_by_source};
use crate::error::Result;
use crate::routing::table::load::RouterDemand;
use crate::topology::Topology;

/// Stopping rule of [`routing_bound_approx`]. The iteration is deterministic (no clock), so
/// the same input always gives the same bound.
#[derive(Clone, Debug)]
pub(crate) struct ApproxOptions {
    /// Stop once `upper / lower - 1 <= target_gap`.
    pub target_gap: f64,
    /// Length update step (Garg–Könemann's ε): smaller converges closer but more slowly.
    pub epsilon: f64,
    /// Stop after this many phases (each routes every source's demand once) whatever the gap.
    pub max_phases: usize,
}

impl Default for ApproxOptions {
    fn default() -> Self {
        ApproxOptions {
            target_gap: 0.05,
            epsilon: 0.05,
            max_phases: 400,
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
struct Item(f64, usize);
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Item {
    // Min-heap on distance, ties by router id so that trees do not depend on heap internals.
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// Shortest-path tree from `s` under `len`: distances, the channel into each router
/// (`usize::MAX` for the source and unreached routers), and routers in settling order.
pub(super) fn dijkstra(
    net: &Network,
    len: &[f64],
    s: usize,
    dests: &[(usize, f64)],
) -> (Vec<f64>, Vec<usize>, Vec<usize>) {
    let mut dist = vec![f64::INFINITY; net.n];
    let mut parent = vec![usize::MAX; net.n];
    // 0: unsettled, 1: settled, 2: an unsettled destination. The search stops once every
    // destination is settled: what it settled by then is exactly what a full search settles
    // first (same distances, parents and order), and a permutation's single destination is
    // usually settled long before the whole network.
    let mut state = vec![0u8; net.n];
    let mut pending = 0usize;
    for &(d, _) in dests {
        if state[d] == 0 {
            state[d] = 2;
            pending += 1;
        }
    }
    let mut order = Vec::with_capacity(net.n);
    let mut heap = BinaryHeap::new();
    dist[s] = 0.0;
    heap.push(Item(0.0, s));
    while let Some(Item(d, v)) = heap.pop() {
        if state[v] == 1 {
            continue;
        }
        if state[v] == 2 {
            pending -= 1;
        }
        state[v] = 1;
        order.push(v);
        if pending == 0 && !dests.is_empty() {
            break;
        }
        for &e in &net.out[v] {
            let w = net.chans[e].to;
            let nd = d + len[e];
            if nd < dist[w] {
                dist[w] = nd;
                parent[w] = e;
                heap.push(Item(nd, w));
            }
        }
    }
    (dist, parent, order)
}

/// Flow per channel when `s` sends `dest_rate[v]` to every router `v` along the tree.
fn tree_flow(
    net: &Network,
    parent: &[usize],
    order: &[usize],
    dest_rate: &[f64],
    flow: &mut Vec<(usize, f64)>,
) {
    let mut sub = dest_rate.to_vec();
    flow.clear();
    for &v in order.iter().skip(1).rev() {
        let e = parent[v];
        if sub[v] > 0.0 {
            flow.push((e, sub[v]));
            sub[net.chans[e].from] += sub[v];
        }
    }
}

/// Flow per channel when every source sends its demand along its shortest-path tree under
/// `len`. The trees are grown in parallel, a block of sources at a time, and added in source
/// order: the same sums whatever the thread count, in memory for one block's flows.
fn tree_loads(net: &Network, len: &[f64], sources: &[(usize, Vec<(usize, f64)>)]) -> Vec<f64> {
    const BLOCK: usize = 64;
    let mut load = vec![0.0; net.chans.len()];
    for block in sources.chunks(BLOCK) {
        let flows: Vec<Vec<(usize, f64)>> = block
            .par_iter()
            .map(|(s, dests)| {
                let (_, parent, order) = dijkstra(net, len, *s, dests);
                let mut dest_rate = vec![0.0; net.n];
                for &(d, rate) in dests {
                    dest_rate[d] = rate;
                }
                let mut flow = Vec::new();
                tree_flow(net, &parent, &order, &dest_rate, &mut flow);
                flow
            })
            .collect();
        for flow in flows {
            for (e, f) in flow {
                load[e] += f;
            }
        }
    }
    load
}

/// The routers that send, each with its (destination, rate) list.
type Sources = Vec<(usize, Vec<(usize, f64)>)>;

/// The router network of `topo` and its [`Sources`] under `demand`, after checking that the
/// demand fits the network.
fn network_and_sources(topo: &Topology, demand: &RouterDemand) -> Result<(Network, Sources)> {
    let net = Network::new(topo);
    check_demand(topo, &net, demand)?;
    let sources = demand_by_source(demand)
        .into_iter()
        .enumerate()
        .filter(|(_, d)| !d.is_empty())
        .collect();
    Ok((net, sources))
}

/// The max channel utilisation of an admissible routing: every router pair's demand on one
/// path of the shortest-path tree of its source, the fewer-hop trees (lengths
/// `1 / bandwidth`) or the lower-latency ones (lengths `latency / bandwidth`), whichever loads
/// the network less. An upper bound on the optimum that [`super::routing_bound`] bounds from
/// below. Both are needed: on a dragonfly the fewest hops to a router of another group often
/// cross two global channels (as many hops as local-global-local), which loads the global
/// channels twice as much as minimal routing, while a torus with slow wrap-around links is
/// best routed by hops. Time: two shortest-path searches per source router, in parallel.
pub(crate) fn feasible_load(topo: &Topology, demand: &RouterDemand) -> Result<f64> {
    let (net, sources) = network_and_sources(topo, demand)?;
    let hops: Vec<f64> = net.chans.iter().map(|c| 1.0 / c.cap).collect();
    let latency: Vec<f64> = net
        .chans
        .iter()
        .map(|c| f64::from(topo.links[c.channel / 2].params.latency.max(1)) / c.cap)
        .collect();
    let by_hops = max_utilisation(&net, &tree_loads(&net, &hops, &sources));
    let by_latency = max_utilisation(&net, &tree_loads(&net, &latency, &sources));
    Ok(by_hops.min(by_latency))
}

/// Certified lower bound on the optimum max load from lengths `len` (see the module doc).
pub(super) fn dual_bound(
    net: &Network,
    len: &[f64],
    sources: &[(usize, Vec<(usize, f64)>)],
) -> f64 {
    let per_source: Vec<f64> = sources
        .par_iter()
        .map(|(s, dests)| {
            let (dist, _, _) = dijkstra(net, len, *s, dests);
            dests.iter().map(|&(d, rate)| rate * dist[d]).sum()
        })
        .collect();
    let routed: f64 = per_source.iter().sum();
    let volume: f64 = net.chans.iter().zip(len).map(|(c, l)| c.cap * l).sum();
    routed / volume
}

/// Min-congestion routing over all paths by the Garg–Könemann / Fleischer scheme with one
/// shortest-path tree per source router per step. Returns the certified lower bound as
/// `max_load` and `gap = upper / lower - 1` (see [`BoundKind::Approximate`]).
pub(crate) fn routing_bound_approx(
    topo: &Topology,
    demand: &RouterDemand,
    opts: &ApproxOptions,
) -> Result<Bound> {
    let (net, sources) = network_and_sources(topo, demand)?;
    let method = "Garg-Könemann multicommodity flow".to_string();
    if sources.is_empty() {
        return Ok(Bound::new(0.0, BoundKind::Exact, method));
    }
    let m = net.chans.len();
    let eps = opts.epsilon.clamp(1e-4, 0.5);
    let mut len: Vec<f64> = net.chans.iter().map(|c| 1.0 / c.cap).collect();
    let mut dest_rate = vec![0.0; net.n];
    let mut flow = Vec::new();

    // Minimum-hop trees give a first routing; its max load scales the demand so that the
    // optimum is at most 1, the regime where the length updates make progress per phase.
    let ub0 = max_utilisation(&net, &tree_loads(&net, &len, &sources));
    let mut upper = ub0;
    let mut lower = dual_bound(&net, &len, &sources);
    // The lengths that certify `lower`, where the final dual ascent starts.
    let mut best_len = len.clone();

    let mut total = vec![0.0; m];
    let mut phases = 0;
    while phases < opts.max_phases && upper > lower * (1.0 + opts.target_gap) {
        for (s, dests) in &sources {
            // Fraction of this source's demand still to route in this phase.
            let mut remaining = 1.0;
            while remaining > 1e-12 {
                let (_, parent, order) = dijkstra(&net, &len, *s, dests);
                dest_rate.iter_mut().for_each(|r| *r = 0.0);
                for &(d, rate) in dests {
                    dest_rate[d] = rate / ub0 * remaining;
                }
                tree_flow(&net, &parent, &order, &dest_rate, &mut flow);
                // Route at most one channel capacity per step (Garg–Könemann's step rule),
                // so that lengths reflect congestion before more flow piles on.
                let sigma = flow
                    .iter()
                    .map(|&(e, f)| net.chans[e].cap / f)
                    .fold(1.0, f64::min);
                for &(e, f) in &flow {
                    total[e] += sigma * f;
                    len[e] *= 1.0 + eps * sigma * f / net.chans[e].cap;
                }
                remaining *= 1.0 - sigma;
                if sigma >= 1.0 {
                    break;
                }
            }
        }
        phases += 1;
        // Lengths only matter up to a factor; keep them away from overflow.
        let top = len.iter().copied().fold(0.0, f64::max);
        len.iter_mut().for_each(|l| *l /= top);
        let avg: Vec<f64> = total.iter().map(|f| f / phases as f64 * ub0).collect();
        let u_max = max_utilisation(&net, &avg);
        upper = upper.min(u_max);
        let b = dual_bound(&net, &len, &sources);
        if b > lower {
            lower = b;
            best_len = len.clone();
        }
        // The Garg–Könemann lengths approach the dual optimum slowly; lengths concentrated on
        // the channels the averaged flow loads most (complementary slackness: the optimal
        // dual lives on saturated channels) certify far better bounds early on.
        for beta in [8.0, 32.0, 128.0] {
            let sharp: Vec<f64> = avg
                .iter()
                .zip(&net.chans)
                .map(|(f, c)| (beta * (f / c.cap / u_max - 1.0)).exp() / c.cap)
                .collect();
            let b = dual_bound(&net, &sharp, &sources);
            if b > lower {
                lower = b;
                best_len = sharp;
            }
        }
    }
    // Garg–Könemann's lengths approach the dual optimum slowly: when it stops above its
    // target (after `max_phases`), a dual ascent from the best of them.
    let mut ascended = false;
    if upper > lower * (1.0 + opts.target_gap) {
        let ascent = lagrangian_ascent(&net, &best_len, &sources, upper, ASCENT);
        upper = upper.min(ascent.upper);
        lower = lower.max(ascent.bound);
        ascended = true;
    }
    let gap = (upper / lower - 1.0).max(0.0);
    Ok(Bound::new(
        lower,
        BoundKind::Approximate { gap },
        format!(
            "{method} ({phases} phases, ε = {eps}{})",
            if ascended { ", then dual ascent" } else { "" }
        ),
    ))
}

fn max_utilisation(net: &Network, load: &[f64]) -> f64 {
    load.iter()
        .zip(&net.chans)
        .map(|(l, c)| l / c.cap)
        .fold(0.0, f64::max)
}

/// The dual ascent both column generation and the approximation run.
pub(super) const ASCENT: AscentOptions = AscentOptions {
    iterations: 1000,
    patience: 30,
};

/// Options of [`lagrangian_ascent`].
#[derive(Clone, Copy, Debug)]
pub(super) struct AscentOptions {
    /// Supergradient steps at most.
    pub iterations: usize,
    /// Steps without a better bound before the step size is halved; the ascent stops once it
    /// has been halved ten times.
    pub patience: usize,
}

/// Raises the Lagrangian lower bound by projected supergradient ascent on the dual, starting
/// from lengths `start`, with Polyak steps towards `target` (a max load known to be
/// achievable, so at least the optimum). Returns the best certified bound seen and its lengths.
///
/// Why: column generation's interior-point duals and the Garg–Könemann lengths can sit far
/// from the dual optimum even when the flow is nearly optimal. On a dragonfly under a group
/// shift the flow is within 1% while those weights certify 70%: the optimal dual weighs each
/// group's direct global channel twice its other global channels, which no function of the
/// (nearly uniform) loads shows but the supergradient (the loads of the shortest-path
/// routing under the current lengths) finds.
///
/// Coordinates: `v_c = bandwidth_c * len_c` on the simplex `sum v = 1`, where the bound is
/// `N(v) = sum_pairs demand * dist(pair)`, concave, with supergradient the channel
/// utilisations of routing every pair on one shortest path.
pub(super) fn lagrangian_ascent(
    net: &Network,
    len: &[f64],
    sources: &[(usize, Vec<(usize, f64)>)],
    target: f64,
    opts: AscentOptions,
) -> Ascent {
    let m = net.chans.len();
    let mut v: Vec<f64> = net.chans.iter().zip(len).map(|(c, l)| c.cap * l).collect();
    let total: f64 = v.iter().sum();
    if m == 0 || total <= 0.0 || sources.is_empty() {
        return Ascent {
            bound: dual_bound(net, len, sources),
            len: len.to_vec(),
            upper: f64::INFINITY,
        };
    }
    v.iter_mut().for_each(|x| *x /= total);
    let to_len =
        |v: &[f64]| -> Vec<f64> { v.iter().zip(&net.chans).map(|(x, c)| x / c.cap).collect() };
    let mut best = (f64::NEG_INFINITY, to_len(&v));
    // Averages of the shortest-path routings of the iterates (each a routing of all the
    // demand, so any average is one too): since the last restart, uniformly, and weighted by
    // step length. Their max loads are achievable, an upper bound on the optimum.
    let mut uniform = Average::new(m);
    let mut weighted = Average::new(m);
    let mut upper = f64::INFINITY;
    let mut step = 1.0;
    let mut since_better = 0;
    let mut halvings = 0;
    for _ in 0..opts.iterations {
        let lengths = to_len(&v);
        let (bound, util) = bound_and_subgradient(net, &lengths, sources);
        if bound > best.0 * (1.0 + 1e-9) || best.0 == f64::NEG_INFINITY {
            best = (bound, lengths);
            since_better = 0;
        } else {
            since_better += 1;
            if since_better >= opts.patience {
                step /= 2.0;
                halvings += 1;
                since_better = 0;
                if halvings >= 10 {
                    break;
                }
                // Restart from the best point with the smaller step.
                v = best
                    .1
                    .iter()
                    .zip(&net.chans)
                    .map(|(l, c)| l * c.cap)
                    .collect();
                uniform = Average::new(m);
                continue;
            }
        }
        uniform.add(&util, 1.0);
        upper = upper.min(uniform.max());
        if bound >= target {
            break;
        }
        // The supergradient projected on the simplex's tangent space.
        let mean = util.iter().sum::<f64>() / m as f64;
        let dir: Vec<f64> = util.iter().map(|u| u - mean).collect();
        let norm2: f64 = dir.iter().map(|d| d * d).sum();
        if norm2 <= 1e-30 {
            break;
        }
        let eta = step * (target - bound) / norm2;
        weighted.add(&util, eta);
        upper = upper.min(weighted.max());
        let moved: Vec<f64> = v.iter().zip(&dir).map(|(x, d)| x + eta * d).collect();
        v = project_to_simplex(&moved);
    }
    Ascent {
        bound: best.0,
        len: best.1,
        upper,
    }
}

/// What [`lagrangian_ascent`] found.
pub(super) struct Ascent {
    /// Best certified lower bound, and the lengths that certify it.
    pub bound: f64,
    pub len: Vec<f64>,
    /// Max load of the best averaged routing: achievable (infinite if none was formed).
    pub upper: f64,
}

/// A weighted running average of channel utilisations.
struct Average {
    sum: Vec<f64>,
    weight: f64,
}

impl Average {
    fn new(m: usize) -> Self {
        Average {
            sum: vec![0.0; m],
            weight: 0.0,
        }
    }

    fn add(&mut self, util: &[f64], w: f64) {
        if w > 0.0 && w.is_finite() {
            self.sum.iter_mut().zip(util).for_each(|(s, u)| *s += w * u);
            self.weight += w;
        }
    }

    fn max(&self) -> f64 {
        if self.weight > 0.0 {
            self.sum.iter().copied().fold(0.0, f64::max) / self.weight
        } else {
            f64::INFINITY
        }
    }
}

/// `N(len)` (the bound's numerator, for lengths of unit volume) and the channel utilisations
/// of routing every pair on its shortest path.
fn bound_and_subgradient(
    net: &Network,
    len: &[f64],
    sources: &[(usize, Vec<(usize, f64)>)],
) -> (f64, Vec<f64>) {
    let per_source: Vec<(f64, Vec<(usize, f64)>)> = sources
        .par_iter()
        .map(|(s, dests)| {
            let (dist, parent, order) = dijkstra(net, len, *s, dests);
            let mut rate = vec![0.0; net.n];
            let mut routed = 0.0;
            for &(d, r) in dests {
                rate[d] = r;
                routed += r * dist[d];
            }
            let mut flow = Vec::new();
            tree_flow(net, &parent, &order, &rate, &mut flow);
            (routed, flow)
        })
        .collect();
    let mut util = vec![0.0; net.chans.len()];
    let mut routed = 0.0;
    for (r, flow) in per_source {
        routed += r;
        for (e, f) in flow {
            util[e] += f;
        }
    }
    for (u, c) in util.iter_mut().zip(&net.chans) {
        *u /= c.cap;
    }
    let volume: f64 = net.chans.iter().zip(len).map(|(c, l)| c.cap * l).sum();
    (routed / volume, util)
}

/// Euclidean projection onto `{x >= 0, sum x = 1}` (sort-based, O(m log m)).
fn project_to_simplex(y: &[f64]) -> Vec<f64> {
    let mut sorted = y.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let mut cumulative = 0.0;
    let mut theta = 0.0;
    for (i, &u) in sorted.iter().enumerate() {
        cumulative += u;
        let t = (cumulative - 1.0) / (i + 1) as f64;
        if u - t > 0.0 {
            theta = t;
        }
    }
    y.iter().map(|x| (x - theta).max(0.0)).collect()
}
