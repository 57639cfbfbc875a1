//! The router-level multigraph that metrics run on: compressed adjacency (CSR) with one entry
//! per distinct neighbour and the number of parallel links as its multiplicity.
//!
//! Hand-written rather than petgraph's `Csr` because the metric kernels (BFS from thousands of
//! sources, unit-capacity max-flow per pair) need the edge id of each adjacency entry and
//! contiguous `u32` arrays; petgraph is used where its algorithms fit (components).

use petgraph::unionfind::UnionFind;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouterGraph {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    /// Parallel links behind each adjacency entry.
    mult: Vec<u32>,
    /// Undirected edge id of each adjacency entry (both directions share it).
    edge: Vec<u32>,
    /// Endpoints and multiplicity of each undirected edge (`a < b`).
    edges: Vec<(u32, u32, u32)>,
}

impl RouterGraph {
    /// Builds the graph; self-loops are dropped (they never lie on a shortest path or cut).
    pub fn from_edges(n: usize, edges: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut list: Vec<(u32, u32)> = edges
            .into_iter()
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.min(b) as u32, a.max(b) as u32))
            .collect();
        list.sort_unstable();
        let mut merged: Vec<(u32, u32, u32)> = Vec::new();
        for (a, b) in list {
            match merged.last_mut() {
                Some(last) if last.0 == a && last.1 == b => last.2 += 1,
                _ => merged.push((a, b, 1)),
            }
        }
        let mut degree = vec![0u32; n + 1];
        for &(a, b, _) in &merged {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        let mut offsets = vec![0u32; n + 1];
        for i in 0..n {
            offsets[i + 1] = offsets[i] + degree[i];
        }
        let total = offsets[n] as usize;
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; total];
        let mut mult = vec![0u32; total];
        let mut edge = vec![0u32; total];
        for (id, &(a, b, m)) in merged.iter().enumerate() {
            for (u, v) in [(a, b), (b, a)] {
                let pos = fill[u as usize] as usize;
                targets[pos] = v;
                mult[pos] = m;
                edge[pos] = id as u32;
                fill[u as usize] += 1;
            }
        }
        RouterGraph {
            offsets,
            targets,
            mult,
            edge,
            edges: merged,
        }
    }

    pub(crate) fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Distinct neighbour pairs.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Links counted with multiplicity.
    pub fn num_links(&self) -> u64 {
        self.edges.iter().map(|e| u64::from(e.2)).sum()
    }

    /// `(a, b, multiplicity)` for every distinct neighbour pair, `a < b`.
    pub fn edges(&self) -> &[(u32, u32, u32)] {
        &self.edges
    }

    #[inline]
    pub fn range(&self, u: usize) -> std::ops::Range<usize> {
        self.offsets[u] as usize..self.offsets[u + 1] as usize
    }

    /// Neighbours of `u` with the number of parallel links to each.
    #[inline]
    pub fn neighbors(&self, u: usize) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.range(u)
            .map(move |i| (self.targets[i] as usize, self.mult[i]))
    }

    #[inline]
    pub fn target(&self, pos: usize) -> usize {
        self.targets[pos] as usize
    }

    #[inline]
    pub(crate) fn multiplicity(&self, pos: usize) -> u32 {
        self.mult[pos]
    }

    #[inline]
    pub(crate) fn edge_id(&self, pos: usize) -> usize {
        self.edge[pos] as usize
    }

    /// Links at `u`, counted with multiplicity.
    pub fn degree(&self, u: usize) -> u32 {
        self.range(u).map(|i| self.mult[i]).sum()
    }

    /// Number of links between `u` and `v`.
    pub fn links_between(&self, u: usize, v: usize) -> u32 {
        self.neighbors(u)
            .find(|&(w, _)| w == v)
            .map_or(0, |(_, m)| m)
    }

    /// Connected components (each a sorted list of nodes), largest first.
    pub fn components(&self) -> Vec<Vec<usize>> {
        let n = self.num_nodes();
        let mut uf = UnionFind::<usize>::new(n);
        for &(a, b, _) in &self.edges {
            uf.union(a as usize, b as usize);
        }
        let labels = uf.into_labeling();
        let mut by_root: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (v, root) in labels.into_iter().enumerate() {
            by_root.entry(root).or_default().push(v);
        }
        let mut comps: Vec<Vec<usize>> = by_root.into_values().collect();
        comps.sort_by(|a, b| b.len().cmp(&a.len()).then(a[0].cmp(&b[0])));
        comps
    }

    pub fn is_connected(&self) -> bool {
        self.num_nodes() <= 1 || self.components().len() == 1
    }

    /// Number of links with exactly one end in `side` (true = part A).
    pub fn cut_size(&self, side: &[bool]) -> u64 {
        self.edges
            .iter()
            .filter(|&&(a, b, _)| side[a as usize] != side[b as usize])
            .map(|&(_, _, m)| u64::from(m))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_parallel_links_and_drops_loops() {
        let g = RouterGraph::from_edges(3, [(0, 1), (1, 0), (1, 2), (2, 2)]);
        assert_eq!(g.num_edges(), 2);
        assert_eq!(g.num_links(), 3);
        assert_eq!(g.links_between(0, 1), 2);
        assert_eq!(g.degree(1), 3);
        assert!(g.is_connected());
        let pos = g.range(0).start;
        assert_eq!(g.edge_id(pos), 0);
        assert_eq!(g.cut_size(&[true, false, false]), 2);
    }

    #[test]
    fn finds_components() {
        let g = RouterGraph::from_edges(5, [(0, 1), (3, 4)]);
        assert_eq!(g.components(), vec![vec![0, 1], vec![3, 4], vec![2]]);
        assert!(!g.is_connected());
    }
}
