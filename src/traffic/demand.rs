//! A class's demand summed by router, for the throughput bound: what the bound needs
//! (router-to-router flits per cycle, each terminal's injected and ejected flits per cycle)
//! without the terminals x terminals matrix, which on a 16,512-terminal dragonfly takes
//! 2.2 GB and on 114,582 terminals 98 GiB. Uniform traffic has a closed form by router
//! (time and memory in routers squared, independent of the terminals per router); other
//! patterns are summed one source's distribution at a time (time in terminals x the
//! destinations each can reach, memory in routers squared).

use super::Traffic;
use super::patterns::distribution;
use crate::topology::Topology;

/// The demand of one traffic class at its nominal load, in flits per cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregatedDemand {
    pub num_routers: usize,
    /// From router `a` to router `b` at `a * num_routers + b`; the diagonal holds the traffic
    /// between terminals of one router (it never enters the network).
    pub routers: Vec<f64>,
    /// Flits per cycle each terminal sends (over its injection channel).
    pub injected: Vec<f64>,
    /// Flits per cycle each terminal receives (over its ejection channel).
    pub ejected: Vec<f64>,
}

impl AggregatedDemand {
    /// Total flits per cycle of the class, same-router traffic included.
    pub fn total(&self) -> f64 {
        self.injected.iter().sum()
    }
}

impl Traffic {
    /// Class `class`'s demand by router at its nominal load on `topo`: the same numbers as
    /// summing [`Traffic::traffic_matrix`] by router (to rounding), in memory linear in the
    /// terminals plus the routers squared.
    pub fn aggregated_demand(&self, class: usize, topo: &Topology) -> AggregatedDemand {
        let n = topo.num_routers();
        let terminals = self.terminals as usize;
        let c = &self.classes[class];
        let load = c.nominal_load;
        let mut out = AggregatedDemand {
            num_routers: n,
            routers: vec![0.0; n * n],
            injected: vec![0.0; terminals],
            ejected: vec![0.0; terminals],
        };
        if let Some(itself) = c.pattern.uniform_over_all() {
            uniform(&mut out, topo, load, itself);
            return out;
        }
        for s in 0..terminals {
            let a = topo.terminals[s].router;
            for (d, p) in distribution(&*c.pattern, s as u32) {
                let rate = load * p;
                let b = topo.terminals[d as usize].router;
                out.routers[a * n + b] += rate;
                out.injected[s] += rate;
                out.ejected[d as usize] += rate;
            }
        }
        out
    }
}

/// Uniform traffic in closed form: every terminal sends `load` and (by symmetry) receives
/// `load`; routers `a` and `b` with `c_a` and `c_b` terminals exchange `c_a * c_b` shares of
/// `load / n` (or `load / (n - 1)` between distinct terminals only).
fn uniform(out: &mut AggregatedDemand, topo: &Topology, load: f64, itself: bool) {
    let t = topo.num_terminals();
    let n = out.num_routers;
    let mut count = vec![0usize; n];
    for term in &topo.terminals {
        count[term.router] += 1;
    }
    let share = if itself {
        load / t as f64
    } else if t > 1 {
        load / (t - 1) as f64
    } else {
        0.0
    };
    for a in 0..n {
        for b in 0..n {
            let pairs = if a == b && !itself {
                count[a] * count[a].saturating_sub(1)
            } else {
                count[a] * count[b]
            };
            out.routers[a * n + b] = pairs as f64 * share;
        }
    }
    // A lone terminal sends nothing unless it may send to itself.
    let sends = if t > 1 || itself { load } else { 0.0 };
    out.injected.iter_mut().for_each(|r| *r = sends);
    out.ejected.iter_mut().for_each(|r| *r = sends);
}
