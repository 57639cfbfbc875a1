//! Exact channel loads of a routing table under a traffic matrix, and the throughput bound
//! they give (the analytical fitness of evolved tables, and the input of src/bounds/).

use super::{RoutingTable, pair_index};
use crate::topology::Topology;
use crate::traffic::AggregatedDemand;

/// Demand between ordered router pairs in flits per cycle, indexed by [`pair_index`].
/// Traffic between terminals of the same router never enters the network and is dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterDemand {
    pub num_routers: usize,
    pub demand: Vec<f64>,
}

impl RouterDemand {
    /// Aggregates a terminal-to-terminal matrix (flits per cycle, `matrix[src][dst]`).
    pub fn from_terminal_matrix(topo: &Topology, matrix: &[Vec<f64>]) -> Self {
        let n = topo.num_routers();
        let mut demand = vec![0.0; n * (n - 1)];
        for (s, row) in matrix.iter().enumerate() {
            let rs = topo.terminals[s].router;
            for (d, &rate) in row.iter().enumerate() {
                let rd = topo.terminals[d].router;
                if rate > 0.0 && rs != rd {
                    demand[pair_index(n, rs, rd)] += rate;
                }
            }
        }
        RouterDemand {
            num_routers: n,
            demand,
        }
    }

    /// The inter-router part of a class's demand summed by router (its diagonal, traffic
    /// that stays inside a router, dropped), reusing its storage: no terminal-pair matrix.
    pub fn from_aggregated(demand: AggregatedDemand) -> Self {
        let n = demand.num_routers;
        let mut cells = demand.routers;
        // In place: cell (a, b) moves to pair_index(n, a, b) <= a * n + b.
        let mut next = 0;
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    cells[next] = cells[a * n + b];
                    next += 1;
                }
            }
        }
        cells.truncate(next);
        RouterDemand {
            num_routers: n,
            demand: cells,
        }
    }

    /// The same pattern scaled by `factor` (e.g. to one flit per terminal per cycle).
    pub fn scaled(&self, factor: f64) -> Self {
        RouterDemand {
            num_routers: self.num_routers,
            demand: self.demand.iter().map(|d| d * factor).collect(),
        }
    }
}

/// Utilisation of every channel (index = channel id): the flits per cycle the table puts on
/// it divided by its bandwidth. Terminal channels are 0.
pub(crate) fn channel_loads(
    topo: &Topology,
    table: &RoutingTable,
    demand: &RouterDemand,
) -> Vec<f64> {
    let mut load = vec![0.0; 2 * topo.links.len()];
    // Only pairs with demand are walked: most of a large table carries none.
    for (pair, &rate) in demand.demand.iter().enumerate() {
        if rate == 0.0 {
            continue;
        }
        let path = table.pair_path(pair);
        for (&r, &p) in path.routers.iter().zip(&path.ports) {
            let c = topo
                .out_channel(r as usize, p as usize)
                .expect("validated path port");
            load[c] += rate;
        }
    }
    for (c, l) in load.iter_mut().enumerate() {
        *l /= topo.links[c / 2].params.bandwidth;
    }
    load
}

/// Largest channel utilisation; the table saturates when the offered load is scaled by
/// `1 / max_channel_load` (the throughput bound).
pub fn max_channel_load(topo: &Topology, table: &RoutingTable, demand: &RouterDemand) -> f64 {
    channel_loads(topo, table, demand)
        .into_iter()
        .fold(0.0, f64::max)
}

/// Demand-weighted average path length in router hops.
pub(crate) fn average_hops(table: &RoutingTable, demand: &RouterDemand) -> f64 {
    let total: f64 = demand.demand.iter().sum();
    if total == 0.0 {
        return 0.0;
    }
    demand
        .demand
        .iter()
        .enumerate()
        .filter(|&(_, &d)| d != 0.0)
        .map(|(pair, &d)| d * table.pair_path(pair).hops() as f64)
        .sum::<f64>()
        / total
}
