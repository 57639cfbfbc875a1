//! Throughput bounds: how much load any routing (or any choice among given candidate paths)
//! can carry before some channel saturates. See docs/bounds.md.
//!
//! * [`candidate_bound`]: LP relaxation of "pick one candidate path per router pair" — the
//!   best any (fractional) mix of the candidates can do; a lower bound on the max channel load
//!   of every routing table built from the candidates.
//! * [`routing_bound`]: min-congestion multicommodity flow over all paths — a lower bound on
//!   the max channel load of every routing whatsoever. Exact LP up to [`EXACT_ROUTER_LIMIT`]
//!   routers, above it the Garg–Könemann / Fleischer approximation with a certified gap.
//!
//! Units: a [`RouterDemand`] is in flits per cycle; channel load is flits per cycle divided by
//! the channel's bandwidth (utilisation), exactly as in [`crate::routing::table::load`].

mod colgen;
mod dense;
mod lp;
mod mcf;
mod path_ipm;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_scale;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::routing::table::load::RouterDemand;
use crate::routing::table::{CandidateSet, pair_of};
use crate::topology::Topology;
use crate::topology::model::Endpoint;

pub(crate) use colgen::{ColumnGenOptions, ColumnGeneration, column_generation};
pub(crate) use lp::{LpSolver, candidate_bound_with, routing_bound_exact};
pub(crate) use mcf::{ApproxOptions, feasible_load, routing_bound_approx};

/// Largest router count [`routing_bound`] solves exactly. The edge LP has (sources × channels)
/// variables; with the default solver (Clarabel) it took 0.3 s on an 8x8 mesh and 2–4 s on a
/// 4x4x4 mesh (docs/bounds.md), and interior-point cost grows faster than linearly in the size,
/// so larger networks use the approximation, whose certified gap is reported instead.
pub(crate) const EXACT_ROUTER_LIMIT: usize = 64;

/// How good a bound is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum BoundKind {
    /// The LP optimum (to the solver's tolerance, about 1e-7 relative).
    Exact,
    /// `max_load` is a certified lower bound on the optimum (a dual solution), and a routing
    /// with max load `max_load * (1 + gap)` was found, so the optimum lies in
    /// `[max_load, max_load * (1 + gap)]`.
    Approximate { gap: f64 },
}

/// A lower bound on the max channel load for a demand, and the throughput it implies.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bound {
    /// Lower bound on the max channel utilisation any admissible routing must reach for the
    /// given demand (0 when there is no inter-router demand).
    pub max_load: f64,
    /// `1 / max_load`: the factor by which the demand can be scaled before saturation is
    /// unavoidable (an upper bound on the achievable throughput per unit of demand; infinite
    /// without demand).
    pub throughput: f64,
    pub kind: BoundKind,
    /// Which LP or algorithm and solver produced it, e.g. `routing LP (microlp)`.
    pub method: String,
}

impl Bound {
    pub(crate) fn new(max_load: f64, kind: BoundKind, method: impl Into<String>) -> Self {
        Bound {
            max_load,
            throughput: if max_load > 0.0 {
                1.0 / max_load
            } else {
                f64::INFINITY
            },
            kind,
            method: method.into(),
        }
    }
}

/// LP relaxation of choosing one candidate path per pair: see [`candidate_bound_with`];
/// solved by the dense interior point, else (if it does not converge) the default solver.
pub(crate) fn candidate_bound(
    topo: &Topology,
    cands: &CandidateSet,
    demand: &RouterDemand,
) -> Result<Bound> {
    match lp::candidate_bound_dense(topo, cands, demand)? {
        Some(b) => Ok(b),
        None => candidate_bound_with(topo, cands, demand, LpSolver::default()),
    }
}

/// Largest number of router pairs with demand for which [`routing_bound`] uses column
/// generation above [`EXACT_ROUTER_LIMIT`] routers: its master LP has a few columns per pair,
/// so beyond this (dense patterns on large networks) the Garg–Könemann approximation is used.
pub(crate) const COLGEN_PAIR_LIMIT: usize = 50_000;

/// Largest number of channels for which column generation is used: its master couples every
/// channel a path crosses, so each interior-point iteration factors a dense matrix over the
/// channels (`path_ipm.rs`), cubic in their number in time and square in memory. A 32x32 mesh
/// (3,968 channels) takes about 0.5 s per factor and 126 MB; a 64x64 mesh (16,128) would take
/// about 66x and 2 GB per factor, dozens of factors per master, so from here the
/// Garg–Könemann approximation is used, with its gap.
pub(crate) const COLGEN_CHANNEL_LIMIT: usize = 8_192;

/// Whether `routes evolve` solves the candidate LP on `topo`: it has the column generation's
/// master's structure and is solved by the same dense interior point, cubic in the channels.
pub(crate) fn candidate_lp_fits(topo: &Topology) -> bool {
    2 * topo.links.len() <= COLGEN_CHANNEL_LIMIT
}

/// Whether [`routing_bound`] (above [`EXACT_ROUTER_LIMIT`] routers) and `routes evolve` use
/// column generation for `demand` on `topo`: few enough demand pairs and channels.
pub(crate) fn column_generation_fits(topo: &Topology, demand: &RouterDemand) -> bool {
    demand_pairs(demand) <= COLGEN_PAIR_LIMIT && candidate_lp_fits(topo)
}

/// Min-congestion routing over all paths: the exact LP up to [`EXACT_ROUTER_LIMIT`] routers;
/// above it column generation (certified within 0.1%, [`ColumnGenOptions`]) when at most
/// [`COLGEN_PAIR_LIMIT`] pairs have demand and the network has at most
/// [`COLGEN_CHANNEL_LIMIT`] channels, else the Garg–Könemann approximation.
pub fn routing_bound(topo: &Topology, demand: &RouterDemand) -> Result<Bound> {
    if topo.num_routers() <= EXACT_ROUTER_LIMIT {
        routing_bound_exact(topo, demand, LpSolver::default())
    } else if column_generation_fits(topo, demand) {
        let cg = column_generation(topo, demand, None, &ColumnGenOptions::default())?;
        tighten(topo, demand, cg.bound, cg.upper)
    } else {
        routing_bound_approx(topo, demand, &ApproxOptions::default())
    }
}

/// Above this certified gap a column-generation bound is combined with the Garg–Könemann
/// approximation (the larger lower bound, the smaller achievable load).
const COMBINE_GAP: f64 = 0.05;

/// `bound` (lower) with the achievable `upper`, tightened by the Garg–Könemann approximation
/// when their gap exceeds [`COMBINE_GAP`]: both ends of both methods are certified.
pub(crate) fn tighten(
    topo: &Topology,
    demand: &RouterDemand,
    bound: Bound,
    upper: f64,
) -> Result<Bound> {
    if upper <= bound.max_load * (1.0 + COMBINE_GAP) {
        return Ok(bound);
    }
    let gk = routing_bound_approx(topo, demand, &ApproxOptions::default())?;
    let gk_upper = match gk.kind {
        BoundKind::Approximate { gap } => gk.max_load * (1.0 + gap),
        BoundKind::Exact => gk.max_load,
    };
    let lower = bound.max_load.max(gk.max_load);
    let upper = upper.min(gk_upper);
    Ok(Bound::new(
        lower,
        BoundKind::Approximate {
            gap: (upper / lower - 1.0).max(0.0),
        },
        format!("best of {} and {}", bound.method, gk.method),
    ))
}

/// Router pairs with positive demand.
pub(crate) fn demand_pairs(demand: &RouterDemand) -> usize {
    demand.demand.iter().filter(|&&d| d > 0.0).count()
}

/// Largest utilisation of a terminal channel (injection: what a terminal sends, ejection:
/// what it receives, over the link's bandwidth), from each terminal's flits per cycle. No
/// routing can avoid these loads, so `max(this, routing bound)` is still a lower bound on the
/// max channel load; it binds when terminal links are slower than the network can deliver.
pub(crate) fn terminal_load(topo: &Topology, injected: &[f64], ejected: &[f64]) -> f64 {
    topo.terminals
        .iter()
        .zip(injected.iter().zip(ejected))
        .map(|(t, (i, e))| i.max(*e) / topo.links[t.link].params.bandwidth)
        .fold(0.0, f64::max)
}

/// [`routing_bound`] where it matters above `floor`, a max load no routing avoids (the
/// terminal channels'): when a shortest-path routing ([`feasible_load`]) already keeps every
/// network channel at or below `floor`, so does the optimum, and `max(floor, optimum) = floor`
/// exactly without solving anything (two shortest-path searches per source instead of an LP
/// or hundreds of approximation phases).
pub fn routing_bound_above(topo: &Topology, demand: &RouterDemand, floor: f64) -> Result<Above> {
    let routing_load = feasible_load(topo, demand)?;
    if routing_load <= floor {
        return Ok(Above::AtMostFloor { routing_load });
    }
    routing_bound(topo, demand).map(Above::Bound)
}

/// Largest (routers x directed router channels) for which the simulator computes the routing
/// bound: every method runs at least one shortest-path search from each router over all the
/// channels (the approximation hundreds of times). The 16,512-terminal dragonfly (2,064
/// routers, 47,472 channels: 9.8e7) takes 0.45 s for the shortest-path routings and 28 s for
/// the approximation on 2 cores; the 114,582-terminal one (8,814 routers, 334,932 channels:
/// 2.95e9) would take 30x that per search round.
pub const BOUND_WORK_LIMIT: u64 = 500_000_000;

/// Refuses the routing bound on a network above [`BOUND_WORK_LIMIT`], saying why.
pub fn check_bound_size(topo: &Topology) -> Result<()> {
    let routers = topo.num_routers() as u64;
    let channels = 2 * topo
        .links
        .iter()
        .filter(|l| l.kind != crate::topology::model::LinkKind::Terminal)
        .count() as u64;
    if routers * channels > BOUND_WORK_LIMIT {
        return Err(Error::field(
            "topology",
            format!(
                "{routers} routers x {channels} channels is too large for the routing bound (at \
                 most {BOUND_WORK_LIMIT}): it searches shortest paths from every router over \
                 every channel, hundreds of times"
            ),
        ));
    }
    Ok(())
}

/// What [`routing_bound_above`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum Above {
    /// The max network load of a shortest-path routing, at most the floor.
    AtMostFloor { routing_load: f64 },
    /// The routing bound (it may still be below the floor).
    Bound(Bound),
}

/// A router-to-router channel.
#[derive(Clone, Copy, Debug)]
struct Chan {
    from: usize,
    to: usize,
    /// Flits per cycle.
    cap: f64,
    /// The topology's channel index (`2 * link + direction`).
    channel: usize,
}

/// The directed router graph the flow problems run on: network channels only (terminal
/// channels carry no router-to-router traffic; self-loops never help a flow).
struct Network {
    n: usize,
    chans: Vec<Chan>,
    /// Indices into `chans` leaving each router.
    out: Vec<Vec<usize>>,
}

impl Network {
    fn new(topo: &Topology) -> Self {
        let n = topo.num_routers();
        let mut chans = Vec::new();
        let mut out = vec![Vec::new(); n];
        for c in 0..2 * topo.links.len() {
            if let (Endpoint::Router { router: a, .. }, Endpoint::Router { router: b, .. }) =
                topo.channel_ends(c)
                && a != b
            {
                out[a].push(chans.len());
                chans.push(Chan {
                    from: a,
                    to: b,
                    cap: topo.links[c / 2].params.bandwidth,
                    channel: c,
                });
            }
        }
        Network { n, chans, out }
    }

    /// Whether every router reaches every other (one search forwards and one backwards from
    /// router 0, instead of one per source).
    fn strongly_connected(&self) -> bool {
        let all = |seen: Vec<bool>| seen.into_iter().all(|r| r);
        self.n == 0 || (all(self.reachable(0)) && all(self.reversed().reachable(0)))
    }

    /// The same routers with every channel turned around.
    fn reversed(&self) -> Network {
        let mut out = vec![Vec::new(); self.n];
        let chans = self
            .chans
            .iter()
            .enumerate()
            .map(|(i, c)| {
                out[c.to].push(i);
                Chan {
                    from: c.to,
                    to: c.from,
                    ..*c
                }
            })
            .collect();
        Network {
            n: self.n,
            chans,
            out,
        }
    }

    /// Routers reachable from `s` (BFS).
    fn reachable(&self, s: usize) -> Vec<bool> {
        let mut seen = vec![false; self.n];
        seen[s] = true;
        let mut stack = vec![s];
        while let Some(v) = stack.pop() {
            for &e in &self.out[v] {
                let w = self.chans[e].to;
                if !seen[w] {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        seen
    }
}

/// Demand per source router: `(destination, flits per cycle)` with positive rate.
fn demand_by_source(demand: &RouterDemand) -> Vec<Vec<(usize, f64)>> {
    let n = demand.num_routers;
    let mut by = vec![Vec::new(); n];
    for (pair, &d) in demand.demand.iter().enumerate() {
        if d > 0.0 {
            let (s, t) = pair_of(n, pair);
            by[s].push((t, d));
        }
    }
    by
}

/// Checks that the demand fits the topology, is finite and non-negative, and that every pair
/// with demand is connected (otherwise no routing exists and the bound is infinite).
fn check_demand(topo: &Topology, net: &Network, demand: &RouterDemand) -> Result<()> {
    let n = topo.num_routers();
    if demand.num_routers != n || demand.demand.len() != n * n.saturating_sub(1) {
        return Err(Error::field(
            "demand",
            format!(
                "{} entries for {} routers but the topology has {n} routers ({} pairs)",
                demand.demand.len(),
                demand.num_routers,
                n * n.saturating_sub(1)
            ),
        ));
    }
    if let Some(i) = demand
        .demand
        .iter()
        .position(|d| !(d.is_finite() && *d >= 0.0))
    {
        let (s, t) = pair_of(n, i);
        return Err(Error::field(
            format!("demand[{s} -> {t}]"),
            format!(
                "must be a finite non-negative rate (got {})",
                demand.demand[i]
            ),
        ));
    }
    if net.strongly_connected() {
        return Ok(());
    }
    for (s, dests) in demand_by_source(demand).iter().enumerate() {
        if dests.is_empty() {
            continue;
        }
        let seen = net.reachable(s);
        if let Some(&(t, _)) = dests.iter().find(|&&(t, _)| !seen[t]) {
            return Err(Error::field(
                format!("demand[{s} -> {t}]"),
                "router is unreachable, so no routing can carry this demand",
            ));
        }
    }
    Ok(())
}

/// When every flow has the same rate and every router link the same bandwidth, a single-path
/// table loads each channel with a whole number of flows, so a lower bound `b` rounds up to
/// the next multiple of one flow's utilisation (integrality).
pub(crate) fn single_path_bound(topo: &Topology, demand: &RouterDemand, b: &Bound) -> Bound {
    let rates: Vec<f64> = demand.demand.iter().copied().filter(|&d| d > 0.0).collect();
    let bandwidths: Vec<f64> = topo
        .links
        .iter()
        .filter(|l| l.kind != crate::topology::model::LinkKind::Terminal)
        .map(|l| l.params.bandwidth)
        .collect();
    let same = |v: &[f64]| v.iter().all(|x| (x - v[0]).abs() <= 1e-12 * v[0].abs());
    if rates.is_empty() || bandwidths.is_empty() || !same(&rates) || !same(&bandwidths) {
        return b.clone();
    }
    let unit = rates[0] / bandwidths[0];
    // The LP solver is accurate to about 1e-7 relative: do not round up a value that is a
    // whole number of flows within that.
    let flows = b.max_load / unit;
    let rounded = unit * (flows - 1e-6 * flows.max(1.0)).ceil();
    Bound {
        max_load: rounded.max(b.max_load),
        throughput: 1.0 / rounded.max(b.max_load),
        kind: b.kind,
        method: format!("{} rounded up to whole flows", b.method),
    }
}
