//! Channel-dependency-graph (CDG) checks: the tool that proves routing tables deadlock-free.
//!
//! Nodes are virtual channels `(channel, vc)`; an edge `a -> b` means a packet that holds `a`
//! may request `b` (Dally & Seitz: a deterministic or table routing whose CDG is acyclic cannot
//! deadlock with wormhole or virtual cut-through flow control). [`DependencyGraph`] collects
//! dependencies (usually from routed paths) and finds a cycle with an iterative DFS;
//! [`IncrementalDag`] keeps a graph acyclic while edges are added one at a time (the layer
//! assignment of `dfsssp` uses it).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[cfg(test)]
use crate::topology::{PortId, RouterId, Topology};

/// A virtual channel: VC `vc` of the unidirectional channel `channel` (`2 * link + direction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VirtualChannel {
    pub channel: usize,
    pub vc: u8,
}

impl VirtualChannel {
    pub const fn new(channel: usize, vc: u8) -> Self {
        VirtualChannel { channel, vc }
    }
}

/// A small multiplicative hasher (FxHash): the keys are integers we produce ourselves, so
/// SipHash's DoS protection buys nothing and costs a third of the checker's time.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxBuild = BuildHasherDefault<FxHasher>;

/// A channel dependency graph over virtual channels. Duplicate dependencies are merged
/// (lazily: the edge list is sorted and deduplicated whenever it has doubled).
#[derive(Clone, Debug, Default)]
pub struct DependencyGraph {
    index: HashMap<VirtualChannel, u32, FxBuild>,
    nodes: Vec<VirtualChannel>,
    /// `(from << 32) | to`, in node ids; `edges[..distinct]` is sorted and duplicate-free.
    edges: Vec<u64>,
    distinct: usize,
}

impl DependencyGraph {
    pub fn new() -> Self {
        Self::default()
    }

    fn intern(&mut self, v: VirtualChannel) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.index.entry(v).or_insert(next);
        if id == next {
            self.nodes.push(v);
        }
        id
    }

    /// Adds the dependency `a -> b` (a packet holding `a` may request `b`).
    pub(crate) fn add_dependency(&mut self, a: VirtualChannel, b: VirtualChannel) {
        let (x, y) = (self.intern(a), self.intern(b));
        self.edges.push((u64::from(x) << 32) | u64::from(y));
        if self.edges.len() >= 2 * self.distinct.max(1 << 16) {
            self.compact();
        }
    }

    fn compact(&mut self) {
        self.edges.sort_unstable();
        self.edges.dedup();
        self.distinct = self.edges.len();
    }

    /// Adds the dependencies between consecutive virtual channels of a path.
    pub(crate) fn add_path(&mut self, path: &[VirtualChannel]) {
        if let [only] = path {
            self.intern(*only);
        }
        for w in path.windows(2) {
            self.add_dependency(w[0], w[1]);
        }
    }

    /// Virtual channels seen so far.
    #[cfg(test)]
    pub(crate) fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Distinct dependencies.
    #[cfg(test)]
    pub(crate) fn num_dependencies(&self) -> usize {
        let mut e = self.edges.clone();
        e.sort_unstable();
        e.dedup();
        e.len()
    }

    /// One cycle `[v0, v1, ..., vk]` (with `vk -> v0` closing it), or `None` if the graph is
    /// acyclic. Iterative DFS, linear in the size of the graph; deterministic for a given
    /// insertion order.
    pub(crate) fn find_cycle(&self) -> Option<Vec<VirtualChannel>> {
        let n = self.nodes.len();
        // Compressed adjacency.
        let mut offsets = vec![0u32; n + 1];
        for &e in &self.edges {
            offsets[(e >> 32) as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; self.edges.len()];
        for &e in &self.edges {
            let a = (e >> 32) as usize;
            targets[fill[a] as usize] = e as u32;
            fill[a] += 1;
        }
        // 0 = unvisited, 1 = on the DFS stack, 2 = finished.
        let mut color = vec![0u8; n];
        let mut stack: Vec<(u32, u32)> = Vec::new();
        for root in 0..n {
            if color[root] != 0 {
                continue;
            }
            color[root] = 1;
            stack.push((root as u32, offsets[root]));
            while let Some(top) = stack.last_mut() {
                let u = top.0 as usize;
                if top.1 == offsets[u + 1] {
                    color[u] = 2;
                    stack.pop();
                    continue;
                }
                let v = targets[top.1 as usize] as usize;
                top.1 += 1;
                match color[v] {
                    0 => {
                        color[v] = 1;
                        stack.push((v as u32, offsets[v]));
                    }
                    1 => {
                        let start = stack.iter().position(|&(w, _)| w as usize == v).unwrap();
                        return Some(
                            stack[start..]
                                .iter()
                                .map(|&(w, _)| self.nodes[w as usize])
                                .collect(),
                        );
                    }
                    _ => {}
                }
            }
        }
        None
    }

    pub fn is_acyclic(&self) -> bool {
        self.find_cycle().is_none()
    }
}

/// Builds the dependency graph of `paths` (each a sequence of virtual channels a packet holds
/// in turn) and returns one cycle if there is one.
pub fn check_paths(
    paths: impl IntoIterator<Item = Vec<VirtualChannel>>,
) -> Result<(), Vec<VirtualChannel>> {
    let mut g = DependencyGraph::new();
    for p in paths {
        g.add_path(&p);
    }
    match g.find_cycle() {
        Some(cycle) => Err(cycle),
        None => Ok(()),
    }
}

/// The virtual channels of a router-level path given as `(router, out_port, vc)` hops
/// (the last hop is usually the ejection port). `None` if a port is unconnected.
#[cfg(test)]
pub(crate) fn path_virtual_channels(
    topo: &Topology,
    path: &[(RouterId, PortId, usize)],
) -> Option<Vec<VirtualChannel>> {
    path.iter()
        .map(|&(router, port, vc)| {
            let channel = topo.out_channel(router, port)?;
            Some(VirtualChannel::new(channel, u8::try_from(vc).ok()?))
        })
        .collect()
}

/// A directed graph on dense node ids `0..n` that stays acyclic: [`IncrementalDag::try_add_edge`]
/// refuses an edge that would close a cycle. Keeps a topological order up to date with the
/// Pearce–Kelly algorithm, so an edge that agrees with the order costs O(1) and one that does
/// not costs a search bounded by the affected region of the order.
#[derive(Clone, Debug)]
pub(crate) struct IncrementalDag {
    out: Vec<Vec<u32>>,
    inc: Vec<Vec<u32>>,
    /// `ord[node]` = position of `node` in the topological order.
    ord: Vec<u32>,
    mark: Vec<bool>,
    delta_f: Vec<u32>,
    delta_b: Vec<u32>,
    stack: Vec<u32>,
}

impl IncrementalDag {
    pub(crate) fn new(n: usize) -> Self {
        IncrementalDag {
            out: vec![Vec::new(); n],
            inc: vec![Vec::new(); n],
            ord: (0..n as u32).collect(),
            mark: vec![false; n],
            delta_f: Vec::new(),
            delta_b: Vec::new(),
            stack: Vec::new(),
        }
    }

    pub(crate) fn has_edge(&self, a: usize, b: usize) -> bool {
        self.out[a].contains(&(b as u32))
    }

    /// Adds `a -> b` unless it would close a cycle. Returns `Ok(true)` if the edge is new,
    /// `Ok(false)` if it was already there, `Err(())` if it would close a cycle (the graph
    /// is then unchanged).
    #[allow(clippy::result_unit_err)]
    pub(crate) fn try_add_edge(&mut self, a: usize, b: usize) -> Result<bool, ()> {
        if a == b {
            return Err(());
        }
        if self.has_edge(a, b) {
            return Ok(false);
        }
        let (lb, ub) = (self.ord[b], self.ord[a]);
        if lb < ub {
            // Forward search from b among nodes ordered before a: reaching a closes a cycle.
            self.delta_f.clear();
            self.stack.clear();
            self.stack.push(b as u32);
            self.mark[b] = true;
            let mut cycle = false;
            while let Some(w) = self.stack.pop() {
                self.delta_f.push(w);
                for &x in &self.out[w as usize] {
                    let ox = self.ord[x as usize];
                    if ox == ub {
                        cycle = true;
                        break;
                    }
                    if !self.mark[x as usize] && ox < ub {
                        self.mark[x as usize] = true;
                        self.stack.push(x);
                    }
                }
                if cycle {
                    break;
                }
            }
            if cycle {
                for &w in self.delta_f.iter().chain(&self.stack) {
                    self.mark[w as usize] = false;
                }
                return Err(());
            }
            // Backward search from a among nodes ordered after b.
            self.delta_b.clear();
            self.stack.push(a as u32);
            self.mark[a] = true;
            while let Some(w) = self.stack.pop() {
                self.delta_b.push(w);
                for &x in &self.inc[w as usize] {
                    if !self.mark[x as usize] && self.ord[x as usize] > lb {
                        self.mark[x as usize] = true;
                        self.stack.push(x);
                    }
                }
            }
            self.reorder();
        }
        self.out[a].push(b as u32);
        self.inc[b].push(a as u32);
        Ok(true)
    }

    /// Pearce–Kelly reorder: the backward set goes before the forward set, reusing their slots.
    fn reorder(&mut self) {
        let ord = &self.ord;
        self.delta_f.sort_unstable_by_key(|&w| ord[w as usize]);
        self.delta_b.sort_unstable_by_key(|&w| ord[w as usize]);
        let mut slots: Vec<u32> = self
            .delta_b
            .iter()
            .chain(&self.delta_f)
            .map(|&w| ord[w as usize])
            .collect();
        slots.sort_unstable();
        for (&w, &slot) in self.delta_b.iter().chain(&self.delta_f).zip(&slots) {
            self.ord[w as usize] = slot;
            self.mark[w as usize] = false;
        }
    }

    /// Removes `a -> b` (the order stays topological).
    pub(crate) fn remove_edge(&mut self, a: usize, b: usize) {
        if let Some(i) = self.out[a].iter().position(|&x| x as usize == b) {
            self.out[a].swap_remove(i);
        }
        if let Some(i) = self.inc[b].iter().position(|&x| x as usize == a) {
            self.inc[b].swap_remove(i);
        }
    }

    /// Adds all `edges` or none of them: `false` (graph unchanged) if together with the
    /// graph they would close a cycle.
    pub(crate) fn try_add_all(&mut self, edges: &[(usize, usize)]) -> bool {
        let mut added: Vec<(usize, usize)> = Vec::new();
        for &(a, b) in edges {
            match self.try_add_edge(a, b) {
                Ok(true) => added.push((a, b)),
                Ok(false) => {}
                Err(()) => {
                    for &(x, y) in &added {
                        self.remove_edge(x, y);
                    }
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn vc(channel: usize, vc: u8) -> VirtualChannel {
        VirtualChannel::new(channel, vc)
    }

    /// Unidirectional ring of `n` channels (channel i: router i -> i+1); every packet travels
    /// two hops clockwise. With one VC the dependencies i -> i+1 close a cycle.
    fn ring_paths(n: usize, dateline: bool) -> Vec<Vec<VirtualChannel>> {
        (0..n)
            .map(|i| {
                let j = (i + 1) % n;
                // Dateline between channel n-1 and channel 0: crossing it moves to VC 1.
                let second = u8::from(dateline && j == 0);
                vec![vc(i, 0), vc(j, second)]
            })
            .collect()
    }

    #[test]
    fn finds_ring_cycle() {
        let cycle = check_paths(ring_paths(6, false)).unwrap_err();
        assert_eq!(cycle.len(), 6);
        let mut chans: Vec<usize> = cycle.iter().map(|v| v.channel).collect();
        for w in 0..cycle.len() {
            assert_eq!((chans[w] + 1) % 6, chans[(w + 1) % 6], "cycle is in order");
        }
        chans.sort_unstable();
        assert_eq!(chans, (0..6).collect::<Vec<_>>());
    }

    #[test]
    fn accepts_ring_with_dateline() {
        assert_eq!(check_paths(ring_paths(6, true)), Ok(()));
        // A packet already on VC 1 stays there: still acyclic.
        let mut paths = ring_paths(6, true);
        paths.push(vec![vc(0, 1), vc(1, 1), vc(2, 1)]);
        assert_eq!(check_paths(paths), Ok(()));
    }

    #[test]
    fn graph_counts_and_self_loop() {
        let mut g = DependencyGraph::new();
        g.add_path(&[vc(0, 0), vc(1, 0), vc(2, 0)]);
        g.add_path(&[vc(0, 0), vc(1, 0)]);
        assert_eq!((g.num_nodes(), g.num_dependencies()), (3, 2));
        assert!(g.is_acyclic());
        g.add_dependency(vc(2, 0), vc(2, 0));
        assert_eq!(g.find_cycle(), Some(vec![vc(2, 0)]));
    }

    #[test]
    fn incremental_dag_refuses_cycles_atomically() {
        let mut d = IncrementalDag::new(5);
        assert!(d.try_add_all(&[(3, 2), (2, 1), (1, 0)]));
        assert_eq!(d.try_add_edge(0, 3), Err(()));
        assert!(!d.try_add_all(&[(0, 4), (4, 3)]));
        assert!(!d.has_edge(0, 4), "rolled back");
        assert!(!d.try_add_all(&[(4, 3), (0, 4)]));
        assert!(d.try_add_all(&[(4, 3)]));
        assert_eq!(d.try_add_edge(4, 3), Ok(false));
    }

    #[test]
    fn incremental_dag_agrees_with_dfs() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20 {
            let n = 30;
            let mut d = IncrementalDag::new(n);
            let mut g = DependencyGraph::new();
            for _ in 0..200 {
                let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
                let mut probe = g.clone();
                probe.add_dependency(vc(a, 0), vc(b, 0));
                let acyclic = probe.is_acyclic();
                assert_eq!(d.try_add_edge(a, b).is_ok(), acyclic, "edge {a} -> {b}");
                if acyclic {
                    g = probe;
                }
            }
        }
    }

    fn random_acyclic(edges: usize, seed: u64) -> Vec<Vec<VirtualChannel>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let nodes = edges / 8;
        (0..edges)
            .map(|_| {
                let a = rng.random_range(0..nodes - 1);
                let b = rng.random_range(a + 1..nodes);
                vec![vc(a / 4, (a % 4) as u8), vc(b / 4, (b % 4) as u8)]
            })
            .collect()
    }

    #[test]
    fn check_paths_random_acyclic_and_back_edge() {
        let mut paths = random_acyclic(20_000, 3);
        assert_eq!(check_paths(paths.clone()), Ok(()));
        // Close a cycle with one back edge along an existing dependency.
        let p = paths[0].clone();
        paths.push(vec![p[1], p[0]]);
        let cycle = check_paths(paths).unwrap_err();
        assert!(cycle.len() >= 2);
    }
}
