//! Connectivity: components and the edge connectivity (fewest links whose removal disconnects
//! the routers), by unit-capacity max-flow from one router to every other.

use rayon::prelude::*;

use crate::topology::graph::RouterGraph;

/// Max number of edge-disjoint paths between `s` and `t` (any length), i.e. the local edge
/// connectivity; parallel links count separately.
pub fn max_flow(g: &RouterGraph, s: usize, t: usize) -> u32 {
    if s == t {
        return 0;
    }
    let n = g.num_nodes();
    // flow[e] is the net flow along edge e from its smaller to its larger endpoint.
    let mut flow = vec![0i32; g.num_edges()];
    let mut parent_pos = vec![u32::MAX; n];
    let mut queue = Vec::with_capacity(n);
    let limit = g.degree(s).min(g.degree(t));
    let mut total = 0;
    while total < limit {
        parent_pos.fill(u32::MAX);
        queue.clear();
        queue.push(s as u32);
        let mut head = 0;
        let mut reached = false;
        while head < queue.len() && !reached {
            let u = queue[head] as usize;
            head += 1;
            for pos in g.range(u) {
                let v = g.target(pos);
                if v == s || parent_pos[v] != u32::MAX {
                    continue;
                }
                let e = g.edge_id(pos);
                let along = if u < v { flow[e] } else { -flow[e] };
                if along < g.multiplicity(pos) as i32 {
                    parent_pos[v] = pos as u32;
                    if v == t {
                        reached = true;
                        break;
                    }
                    queue.push(v as u32);
                }
            }
        }
        if !reached {
            break;
        }
        // Walk back from t; the predecessor of v is the target of the reverse entry, found as
        // the endpoint of edge e other than v.
        let mut v = t;
        while v != s {
            let pos = parent_pos[v] as usize;
            let e = g.edge_id(pos);
            let (a, b, _) = g.edges()[e];
            let u = if a as usize == v {
                b as usize
            } else {
                a as usize
            };
            if u < v {
                flow[e] += 1;
            } else {
                flow[e] -= 1;
            }
            v = u;
        }
        total += 1;
    }
    total
}

/// Edge connectivity of the router graph (0 if disconnected). Exact: the minimum over all
/// `t` of the max-flow from a fixed minimum-degree router `s` (every cut separates `s` from
/// some `t`). Each flow stops early at `min(deg s, deg t)`.
pub fn edge_connectivity(g: &RouterGraph) -> u32 {
    let n = g.num_nodes();
    if n < 2 {
        return 0;
    }
    if !g.is_connected() {
        return 0;
    }
    let s = (0..n).min_by_key(|&v| g.degree(v)).expect("non-empty");
    (0..n)
        .into_par_iter()
        .filter(|&t| t != s)
        .map(|t| max_flow(g, s, t))
        .min()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_and_bridge() {
        let ring = RouterGraph::from_edges(6, (0..6).map(|i| (i, (i + 1) % 6)));
        assert_eq!(edge_connectivity(&ring), 2);
        let bridged =
            RouterGraph::from_edges(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)]);
        assert_eq!(edge_connectivity(&bridged), 1);
        assert_eq!(max_flow(&bridged, 0, 1), 2);
        let double = RouterGraph::from_edges(2, [(0, 1), (0, 1), (0, 1)]);
        assert_eq!(edge_connectivity(&double), 3);
    }
}
