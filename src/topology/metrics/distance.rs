//! Distances and path diversity, all from one breadth-first search per source.
//!
//! For a source `s`, the BFS levels orient every link away from `s`; the shortest paths from
//! `s` to `t` are exactly the `s -> t` paths of that DAG (nodes that cannot reach `t` never lie
//! on one). So per source we get:
//! * distances (diameter, average distance);
//! * the number of shortest paths to every `t` (dynamic programming over the levels, parallel
//!   links counted separately);
//! * the number of edge-disjoint shortest paths to every `t`: a unit-capacity max-flow on the
//!   DAG (each link is one unit; parallel links give several), found by augmenting paths that
//!   search backwards from `t`, with the early exit `flow == min(out-capacity of s,
//!   in-capacity of t)` that settles most pairs without a failing search.
//!
//! Sources run in parallel (rayon); per-source results are combined in source order so the
//! result does not depend on the thread count. With a verified [`Symmetry`] only one source
//! per orbit is needed: the group acts freely, so every orbit contributes equally.

use rayon::prelude::*;
use serde::Serialize;

use crate::topology::graph::RouterGraph;
use crate::topology::symmetry::Symmetry;

const UNREACHED: u32 = u32::MAX;

/// Totals over all targets of one source.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SourceStats {
    /// Targets reached (excluding the source itself).
    pub reached: u64,
    pub distance_sum: u64,
    pub eccentricity: u32,
    pub shortest_paths_sum: f64,
    pub disjoint_sum: u64,
}

/// Averages over ordered router pairs (connected pairs only when the graph is disconnected).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DistanceSummary {
    pub connected: bool,
    pub diameter: Option<u32>,
    pub avg_distance: f64,
    /// Average number of shortest paths per pair.
    pub shortest_paths: f64,
    /// Average number of edge-disjoint shortest paths per pair (`None` if not computed).
    pub disjoint_shortest: Option<f64>,
    /// BFS sources actually run (fewer than the routers when symmetry was used).
    pub sources: usize,
}

/// Reusable per-thread buffers.
pub(crate) struct Scratch {
    dist: Vec<u32>,
    order: Vec<u32>,
    sigma: Vec<f64>,
    flow: Vec<u32>,
    touched: Vec<u32>,
    mark: Vec<u32>,
    stamp: u32,
    parent: Vec<u32>,
    parent_pos: Vec<u32>,
    stack: Vec<u32>,
}

impl Scratch {
    pub(crate) fn new(graph: &RouterGraph) -> Self {
        let n = graph.num_nodes();
        Scratch {
            dist: vec![UNREACHED; n],
            order: Vec::with_capacity(n),
            sigma: vec![0.0; n],
            flow: vec![0; graph.num_edges()],
            touched: Vec::new(),
            mark: vec![0; n],
            stamp: 0,
            parent: vec![0; n],
            parent_pos: vec![0; n],
            stack: Vec::new(),
        }
    }

    /// BFS from `s` filling distances, BFS order and shortest-path counts.
    fn bfs(&mut self, g: &RouterGraph, s: usize) {
        self.dist.fill(UNREACHED);
        self.sigma.fill(0.0);
        self.order.clear();
        self.dist[s] = 0;
        self.sigma[s] = 1.0;
        self.order.push(s as u32);
        let mut head = 0;
        while head < self.order.len() {
            let u = self.order[head] as usize;
            head += 1;
            let du = self.dist[u];
            for pos in g.range(u) {
                let v = g.target(pos);
                if self.dist[v] == UNREACHED {
                    self.dist[v] = du + 1;
                    self.order.push(v as u32);
                }
                if self.dist[v] == du + 1 {
                    self.sigma[v] += self.sigma[u] * f64::from(g.multiplicity(pos));
                }
            }
        }
    }

    /// Max number of edge-disjoint shortest `s -> t` paths, after [`Self::bfs`] from `s`.
    fn disjoint_to(&mut self, g: &RouterGraph, s: usize, t: usize) -> u32 {
        let dt = self.dist[t];
        let cap_in: u32 = g
            .range(t)
            .filter(|&pos| self.dist[g.target(pos)] + 1 == dt)
            .map(|pos| g.multiplicity(pos))
            .sum();
        let limit = cap_in.min(g.degree(s));
        let mut flow = 0;
        while flow < limit && self.augment(g, s, t) {
            flow += 1;
        }
        for &e in &self.touched {
            self.flow[e as usize] = 0;
        }
        self.touched.clear();
        flow
    }

    /// Finds one augmenting path in the residual DAG by searching backwards from `t`.
    fn augment(&mut self, g: &RouterGraph, s: usize, t: usize) -> bool {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.fill(0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        self.mark[t] = stamp;
        self.stack.clear();
        self.stack.push(t as u32);
        let mut found = false;
        'search: while let Some(y) = self.stack.pop() {
            let y = y as usize;
            let dy = self.dist[y];
            for pos in g.range(y) {
                let x = g.target(pos);
                if self.mark[x] == stamp {
                    continue;
                }
                let e = g.edge_id(pos);
                let dx = self.dist[x];
                // Residual arc x -> y: forward DAG arc with spare capacity, or a DAG arc
                // y -> x carrying flow that can be cancelled.
                let usable = if dx.wrapping_add(1) == dy {
                    self.flow[e] < g.multiplicity(pos)
                } else if dy.wrapping_add(1) == dx {
                    self.flow[e] > 0
                } else {
                    false
                };
                if !usable {
                    continue;
                }
                self.mark[x] = stamp;
                self.parent[x] = y as u32;
                self.parent_pos[x] = pos as u32;
                if x == s {
                    found = true;
                    break 'search;
                }
                self.stack.push(x as u32);
            }
        }
        if !found {
            return false;
        }
        let mut x = s;
        while x != t {
            let y = self.parent[x] as usize;
            let e = g.edge_id(self.parent_pos[x] as usize);
            if self.flow[e] == 0 {
                self.touched.push(e as u32);
            }
            if self.dist[x] < self.dist[y] {
                self.flow[e] += 1;
            } else {
                self.flow[e] -= 1;
            }
            x = y;
        }
        true
    }
}

/// Totals for one source; `diversity` also runs the disjoint-path flows.
pub(crate) fn source_stats(
    g: &RouterGraph,
    s: usize,
    diversity: bool,
    scratch: &mut Scratch,
) -> SourceStats {
    scratch.bfs(g, s);
    let mut stats = SourceStats::default();
    for i in 1..scratch.order.len() {
        let t = scratch.order[i] as usize;
        let d = scratch.dist[t];
        stats.reached += 1;
        stats.distance_sum += u64::from(d);
        stats.eccentricity = stats.eccentricity.max(d);
        stats.shortest_paths_sum += scratch.sigma[t];
        if diversity {
            stats.disjoint_sum += u64::from(scratch.disjoint_to(g, s, t));
        }
    }
    stats
}

/// Number of edge-disjoint shortest paths between two routers.
pub fn disjoint_shortest_paths(g: &RouterGraph, s: usize, t: usize) -> u32 {
    let mut scratch = Scratch::new(g);
    scratch.bfs(g, s);
    if s == t || scratch.dist[t] == UNREACHED {
        return 0;
    }
    scratch.disjoint_to(g, s, t)
}

/// Number of shortest paths between two routers (parallel links count separately).
pub fn shortest_path_count(g: &RouterGraph, s: usize, t: usize) -> f64 {
    let mut scratch = Scratch::new(g);
    scratch.bfs(g, s);
    scratch.sigma[t]
}

/// Hop distances from `s` (`None` = unreachable).
pub fn distances_from(g: &RouterGraph, s: usize) -> Vec<Option<u32>> {
    let mut scratch = Scratch::new(g);
    scratch.bfs(g, s);
    scratch
        .dist
        .iter()
        .map(|&d| (d != UNREACHED).then_some(d))
        .collect()
}

/// Diameter, average distance and path diversity of the whole graph. `symmetry` must already
/// be verified ([`Symmetry::is_automorphism_of`]). `on_source` is called once per finished
/// source (progress reporting).
pub fn summarize(
    g: &RouterGraph,
    symmetry: Option<&Symmetry>,
    diversity: bool,
    on_source: &(dyn Fn() + Sync),
) -> DistanceSummary {
    let n = g.num_nodes();
    let sources: Vec<usize> = match symmetry {
        Some(sym) => sym.representatives(),
        None => (0..n).collect(),
    };
    let per_source: Vec<SourceStats> = sources
        .par_iter()
        .map_init(
            || Scratch::new(g),
            |scratch, &s| {
                let stats = source_stats(g, s, diversity, scratch);
                on_source();
                stats
            },
        )
        .collect();
    let mut total = SourceStats::default();
    for st in &per_source {
        total.reached += st.reached;
        total.distance_sum += st.distance_sum;
        total.eccentricity = total.eccentricity.max(st.eccentricity);
        total.shortest_paths_sum += st.shortest_paths_sum;
        total.disjoint_sum += st.disjoint_sum;
    }
    let connected = per_source.iter().all(|st| st.reached + 1 == n as u64);
    let pairs = total.reached.max(1) as f64;
    DistanceSummary {
        connected,
        diameter: connected.then_some(total.eccentricity),
        avg_distance: total.distance_sum as f64 / pairs,
        shortest_paths: total.shortest_paths_sum / pairs,
        disjoint_shortest: diversity.then(|| total.disjoint_sum as f64 / pairs),
        sources: sources.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(usize, usize)]) -> RouterGraph {
        RouterGraph::from_edges(n, edges.iter().copied())
    }

    #[test]
    fn square_with_a_diagonal() {
        // 0-1-2-3-0 plus chord 0-2: 0..2 has one path, 1..3 has two (via 0 and via 2).
        let g = graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]);
        assert_eq!(disjoint_shortest_paths(&g, 0, 2), 1);
        assert_eq!(disjoint_shortest_paths(&g, 1, 3), 2);
        assert_eq!(shortest_path_count(&g, 1, 3), 2.0);
        let s = summarize(&g, None, true, &|| {});
        assert_eq!(s.diameter, Some(2));
        // Ordered pairs: 10 at distance 1, 2 at distance 2.
        assert!((s.avg_distance - 14.0 / 12.0).abs() < 1e-12);
        assert_eq!(s.disjoint_shortest, Some(14.0 / 12.0));
    }

    #[test]
    fn parallel_links_add_capacity_and_paths() {
        let g = graph(3, &[(0, 1), (0, 1), (1, 2)]);
        assert_eq!(disjoint_shortest_paths(&g, 0, 1), 2);
        assert_eq!(disjoint_shortest_paths(&g, 0, 2), 1);
        assert_eq!(shortest_path_count(&g, 0, 2), 2.0);
    }

    #[test]
    fn flow_needs_cancellation() {
        // Two shortest paths that a greedy first path blocks unless flow is cancelled:
        // s=0 -> {1,2} -> {3,4} -> 5 with 1-3, 1-4, 2-3 (a greedy 0-1-3-5 path must be undone
        // to route 0-1-4-5 and 0-2-3-5).
        let g = graph(6, &[(0, 1), (0, 2), (1, 3), (1, 4), (2, 3), (3, 5), (4, 5)]);
        assert_eq!(disjoint_shortest_paths(&g, 0, 5), 2);
    }

    #[test]
    fn disconnected_graph_has_no_diameter() {
        let g = graph(4, &[(0, 1), (2, 3)]);
        let s = summarize(&g, None, true, &|| {});
        assert!(!s.connected);
        assert_eq!(s.diameter, None);
        assert_eq!(s.avg_distance, 1.0);
    }
}
