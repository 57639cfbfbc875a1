//! Exact bisection width of small graphs by branch and bound.
//!
//! Vertices are assigned one at a time in a max-connectivity order (each next vertex has the
//! most links to those already placed), with the first vertex fixed in part A (a bisection and
//! its mirror image have the same cut). A node is pruned when its lower bound is not below the
//! best cut known so far (initially the partitioner's): the cut among placed vertices plus, for
//! the unplaced ones, the cheapest way to place them given the links to placed vertices, with
//! the right number going to each part (the k unplaced vertices that are cheapest to put in A
//! go there). Links among unplaced vertices are ignored, so the bound is valid.
//!
//! The search counts visited nodes and gives up at a budget, so it never hangs; only a search
//! that completed proves its answer (`Some`).

use crate::topology::graph::RouterGraph;

/// Default node budget: about 3 s in a release build at ~150 ns per node (40 routers).
pub(crate) const DEFAULT_NODE_BUDGET: u64 = 20_000_000;

/// Result of [`exact_bisection_with_stats`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExactSearch {
    /// `(width, side)` when the search finished within its budget.
    pub result: Option<(u64, Vec<bool>)>,
    pub nodes: u64,
}

/// Exact bisection width and an optimal side vector (true = part A), or `None` when the node
/// budget ran out. `incumbent` is a known bisection `(cut, side)` used for pruning; with it the
/// search only has to find something strictly better or prove there is nothing.
pub(crate) fn exact_bisection(
    g: &RouterGraph,
    incumbent: Option<(u64, Vec<bool>)>,
    node_budget: u64,
) -> Option<(u64, Vec<bool>)> {
    exact_bisection_with_stats(g, incumbent, node_budget).result
}

/// [`exact_bisection`] that also reports the number of search nodes visited.
pub(crate) fn exact_bisection_with_stats(
    g: &RouterGraph,
    incumbent: Option<(u64, Vec<bool>)>,
    node_budget: u64,
) -> ExactSearch {
    let n = g.num_nodes();
    if n < 2 {
        return ExactSearch {
            result: Some((0, vec![true; n])),
            nodes: 0,
        };
    }
    let order = connectivity_order(g);
    let mut pos = vec![0usize; n];
    for (i, &v) in order.iter().enumerate() {
        pos[v] = i;
    }
    // Adjacency in search positions.
    let adj: Vec<Vec<(usize, i64)>> = order
        .iter()
        .map(|&v| {
            g.neighbors(v)
                .map(|(w, m)| (pos[w], i64::from(m)))
                .collect()
        })
        .collect();
    let (best, best_side) = match incumbent {
        Some((c, side)) => {
            assert_eq!(side.len(), n);
            (c as i64, Some(side))
        }
        None => (i64::MAX, None),
    };
    let mut s = Search {
        n,
        adj,
        a_lo: n / 2,
        a_hi: n - n / 2,
        assign: vec![false; n],
        links_a: vec![0; n],
        links_b: vec![0; n],
        size_a: 0,
        best,
        best_assign: None,
        nodes: 0,
        budget: node_budget,
        aborted: false,
        scratch: Vec::with_capacity(n),
    };
    // Position 0 is fixed in part A.
    s.place(0, true);
    s.dfs(1, 0);
    if s.aborted {
        return ExactSearch {
            result: None,
            nodes: s.nodes,
        };
    }
    let side = match s.best_assign {
        Some(assign) => (0..n).map(|v| assign[pos[v]]).collect(),
        None => best_side.expect("a complete search finds a bisection"),
    };
    ExactSearch {
        result: Some((s.best as u64, side)),
        nodes: s.nodes,
    }
}

/// Max-connectivity order: start at the vertex of largest degree (lowest id among ties), then
/// repeatedly take the unplaced vertex with the most links to placed ones (ties: larger
/// degree, then lower id). Disconnected graphs continue from a fresh start vertex.
fn connectivity_order(g: &RouterGraph) -> Vec<usize> {
    let n = g.num_nodes();
    let deg: Vec<u32> = (0..n).map(|v| g.degree(v)).collect();
    let mut placed = vec![false; n];
    let mut conn = vec![0u64; n];
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let v = (0..n)
            .filter(|&v| !placed[v])
            .max_by(|&x, &y| (conn[x], deg[x]).cmp(&(conn[y], deg[y])).then(y.cmp(&x)))
            .unwrap();
        placed[v] = true;
        order.push(v);
        for (w, m) in g.neighbors(v) {
            conn[w] += u64::from(m);
        }
    }
    order
}

struct Search {
    n: usize,
    adj: Vec<Vec<(usize, i64)>>,
    /// Allowed sizes of part A (the first vertex's part).
    a_lo: usize,
    a_hi: usize,
    assign: Vec<bool>,
    /// Links from each vertex to placed vertices in A / in B.
    links_a: Vec<i64>,
    links_b: Vec<i64>,
    size_a: usize,
    best: i64,
    best_assign: Option<Vec<bool>>,
    nodes: u64,
    budget: u64,
    aborted: bool,
    scratch: Vec<i64>,
}

impl Search {
    fn place(&mut self, i: usize, in_a: bool) {
        self.assign[i] = in_a;
        if in_a {
            self.size_a += 1;
        }
        for &(w, m) in &self.adj[i] {
            if in_a {
                self.links_a[w] += m;
            } else {
                self.links_b[w] += m;
            }
        }
    }

    fn unplace(&mut self, i: usize) {
        let in_a = self.assign[i];
        if in_a {
            self.size_a -= 1;
        }
        for &(w, m) in &self.adj[i] {
            if in_a {
                self.links_a[w] -= m;
            } else {
                self.links_b[w] -= m;
            }
        }
    }

    /// Lower bound on the final cut given positions `0..i` placed with cut `cut`: each unplaced
    /// vertex v costs links_b[v] in A and links_a[v] in B, and between `need_lo` and `need_hi`
    /// of them must go to A.
    fn bound(&mut self, i: usize, cut: i64) -> i64 {
        let remaining = self.n - i;
        let need_lo = self.a_lo.saturating_sub(self.size_a);
        let need_hi = (self.a_hi - self.size_a).min(remaining);
        let mut base = cut;
        self.scratch.clear();
        for v in i..self.n {
            base += self.links_a[v];
            // Extra cost of putting v in A instead of B.
            self.scratch.push(self.links_b[v] - self.links_a[v]);
        }
        self.scratch.sort_unstable();
        let mut best = i64::MAX;
        let mut sum = 0;
        for k in 0..=need_hi {
            if k >= need_lo {
                best = best.min(base + sum);
            }
            if k < remaining {
                sum += self.scratch[k];
            }
        }
        best
    }

    fn dfs(&mut self, i: usize, cut: i64) {
        if self.aborted {
            return;
        }
        self.nodes += 1;
        if self.nodes > self.budget {
            self.aborted = true;
            return;
        }
        if i == self.n {
            if cut < self.best && self.size_a >= self.a_lo && self.size_a <= self.a_hi {
                self.best = cut;
                self.best_assign = Some(self.assign.clone());
            }
            return;
        }
        if self.bound(i, cut) >= self.best {
            return;
        }
        let size_b = i - self.size_a;
        let can_a = self.size_a < self.a_hi;
        let can_b = size_b < self.n - self.a_lo;
        let cost_a = self.links_b[i];
        let cost_b = self.links_a[i];
        // Cheaper side first.
        let first_a = cost_a <= cost_b;
        for in_a in [first_a, !first_a] {
            if (in_a && !can_a) || (!in_a && !can_b) {
                continue;
            }
            let c = cut + if in_a { cost_a } else { cost_b };
            if c >= self.best {
                continue;
            }
            self.place(i, in_a);
            self.dfs(i + 1, c);
            self.unplace(i);
            if self.aborted {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: usize) -> RouterGraph {
        RouterGraph::from_edges(n, (0..n).map(|i| (i, (i + 1) % n)))
    }

    #[test]
    fn ring_without_incumbent() {
        for n in [4, 7, 10, 13] {
            let (w, side) = exact_bisection(&ring(n), None, 1_000_000).unwrap();
            assert_eq!(w, 2);
            let a = side.iter().filter(|&&x| x).count();
            assert!(a == n / 2 || a == n - n / 2);
            assert_eq!(ring(n).cut_size(&side), 2);
        }
    }

    #[test]
    fn keeps_incumbent_when_optimal() {
        let g = ring(8);
        let side: Vec<bool> = (0..8).map(|v| v < 4).collect();
        let (w, s) = exact_bisection(&g, Some((2, side.clone())), 1_000_000).unwrap();
        assert_eq!((w, s), (2, side));
    }

    #[test]
    fn budget_exhaustion_gives_none() {
        let n = 20;
        let mut e = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                e.push((a, b));
            }
        }
        let g = RouterGraph::from_edges(n, e);
        let r = exact_bisection_with_stats(&g, None, 10);
        assert!(r.result.is_none());
        assert!(r.nodes > 10);
    }
}
