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

/// Edge connectivity of the router graph (0 if disconnected), exact.
///
/// Every edge cut separates a fixed router `s` from some `t`, so the answer is the minimum
/// max-flow from `s`. On simple graphs Matula's observation cuts the candidates: if the
/// connectivity is below the minimum degree, both sides of a minimum cut contain a vertex of
/// any dominating set, so only `t` in a (greedy) dominating set need a flow. Each flow stops
/// early at `min(deg s, deg t)`.
pub fn edge_connectivity(g: &RouterGraph) -> u32 {
    let n = g.num_nodes();
    if n < 2 || !g.is_connected() {
        return 0;
    }
    let min_degree = (0..n).map(|v| g.degree(v)).min().unwrap_or(0);
    let simple = g.edges().iter().all(|&(_, _, m)| m == 1);
    let candidates: Vec<usize> = if simple {
        dominating_set(g)
    } else {
        (0..n).collect()
    };
    let s = candidates[0];
    candidates[1..]
        .par_iter()
        .map(|&t| max_flow(g, s, t))
        .min()
        .unwrap_or(min_degree)
        .min(min_degree)
}

/// A dominating set, greedily: scan routers in id order and take every one not yet dominated.
fn dominating_set(g: &RouterGraph) -> Vec<usize> {
    let n = g.num_nodes();
    let mut dominated = vec![false; n];
    let mut set = Vec::new();
    for v in 0..n {
        if !dominated[v] {
            set.push(v);
            dominated[v] = true;
            for (w, _) in g.neighbors(v) {
                dominated[w] = true;
            }
        }
    }
    set
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
        // Two heavy pairs joined by single links: parallel links defeat the dominating-set
        // shortcut, so every router is tried.
        let heavy = RouterGraph::from_edges(
            4,
            [
                (0, 1),
                (0, 1),
                (0, 1),
                (2, 3),
                (2, 3),
                (2, 3),
                (1, 2),
                (0, 3),
            ],
        );
        assert_eq!(edge_connectivity(&heavy), 2);
    }
}
