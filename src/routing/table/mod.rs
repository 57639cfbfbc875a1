//! Routing tables: one router-level path per ordered (source router, destination router) pair,
//! looked up per hop by (source, destination, hop index) — never by searching the path for the
//! current router, because a path may revisit a router. See docs/routing-tables.md.
//!
//! * [`RouterPath`]: the routers visited and the output port taken at each.
//! * [`CandidateSet`]: up to 2^b candidate paths per pair (`candidates.rs` builds them).
//! * [`RoutingTable`]: the chosen path per pair (a GA chromosome picks one candidate per pair).

pub mod candidates;
pub(crate) mod deps;
pub mod io;
pub mod lmc;
pub mod load;
pub mod negotiate;
mod next_hops;
pub mod route;
pub mod vl;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use next_hops::NextHops;
pub(crate) use next_hops::TableBuilder;

use crate::error::{Error, Result};
use crate::topology::Topology;
use crate::topology::model::Endpoint;

/// Index of the ordered router pair (s, d), s != d, among the n (n - 1) pairs:
/// `s * (n - 1) + (d - 1 if d > s else d)` (the seed's numbering).
pub fn pair_index(n: usize, s: usize, d: usize) -> usize {
    debug_assert!(s != d && s < n && d < n);
    s * (n - 1) + if d > s { d - 1 } else { d }
}

/// Inverse of [`pair_index`].
pub(crate) fn pair_of(n: usize, index: usize) -> (usize, usize) {
    let s = index / (n - 1);
    let r = index % (n - 1);
    (s, if r >= s { r + 1 } else { r })
}

/// A path through routers: `routers[0]` is the source router, `routers[last]` the destination
/// router, and `ports[i]` the output port taken at `routers[i]` (so `ports.len() + 1 ==
/// routers.len()`). Ejection at the destination is not part of the path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RouterPath {
    pub routers: Vec<u32>,
    pub ports: Vec<u16>,
}

impl RouterPath {
    pub fn hops(&self) -> usize {
        self.ports.len()
    }

    pub fn source(&self) -> usize {
        self.routers[0] as usize
    }

    pub fn destination(&self) -> usize {
        *self.routers.last().expect("a path has a router") as usize
    }

    /// Checks the path against the topology: every port leads to the next router.
    pub fn validate(&self, topo: &Topology) -> Result<()> {
        if self.routers.len() != self.ports.len() + 1 {
            return Err(Error::field(
                "path",
                format!(
                    "{} routers but {} ports (need one port fewer than routers)",
                    self.routers.len(),
                    self.ports.len()
                ),
            ));
        }
        for (i, (&r, &p)) in self.routers.iter().zip(&self.ports).enumerate() {
            let next = self.routers[i + 1] as usize;
            match topo.peer(r as usize, p as usize) {
                Some(Endpoint::Router { router, .. }) if router == next => {}
                _ => {
                    return Err(Error::field(
                        format!("path[{i}]"),
                        format!("port {p} of router {r} does not lead to router {next}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The path with every loop cut out (the first visit of a router jumps to the last),
    /// so that no router appears twice. Never longer, and never on a channel the original
    /// does not use.
    pub fn without_loops(mut self) -> RouterPath {
        let mut i = 0;
        while i < self.routers.len() {
            if let Some(j) = self.routers.iter().rposition(|&r| r == self.routers[i])
                && j > i
            {
                self.routers.drain(i + 1..=j);
                self.ports.drain(i..j);
            }
            i += 1;
        }
        self
    }

    /// Whether some router appears twice.
    pub fn revisits(&self) -> bool {
        let mut seen: Vec<u32> = self.routers.clone();
        seen.sort_unstable();
        seen.windows(2).any(|w| w[0] == w[1])
    }

    /// The channels the path uses, in order.
    pub fn channels(&self, topo: &Topology) -> Vec<usize> {
        self.routers
            .iter()
            .zip(&self.ports)
            .map(|(&r, &p)| {
                topo.out_channel(r as usize, p as usize)
                    .expect("validated path port")
            })
            .collect()
    }
}

/// Where a candidate path came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathOrigin {
    /// Dimension-order (mesh/torus) or the deterministic first shortest path elsewhere.
    Dor,
    /// Another minimal path.
    Minimal,
    /// A k-shortest loop-free path (Yen) that is not minimal.
    Yen,
    /// The path a classical routing function took (Valiant, ROMM, dragonfly VAL, ...).
    Classical,
    /// A copy of an earlier candidate, filling the set up to 2^b.
    Duplicate,
    /// A path of an optimal fractional routing (column generation over all paths).
    Lp,
}

/// `2^bits` candidate paths per ordered router pair (duplicates only when fewer distinct
/// paths exist), or the DOR path alone for a pair a search gives no gene
/// ([`generate_candidates_for`](candidates::generate_candidates_for)); candidate 0 is always
/// the DOR path. The DOR paths are held as a [`RoutingTable`] (shared next hops), so the
/// pairs without genes cost no path vectors.
#[derive(Clone, Debug, PartialEq)]
pub struct CandidateSet {
    pub num_routers: usize,
    pub bits: u32,
    /// Candidate 0 of every pair.
    dor: RoutingTable,
    /// Every candidate of the pairs that have more than DOR, by pair index.
    full: BTreeMap<usize, PairCandidates>,
}

/// The candidates of one pair and where each came from.
#[derive(Clone, Debug, PartialEq)]
struct PairCandidates {
    paths: Vec<RouterPath>,
    origins: Vec<PathOrigin>,
}

impl CandidateSet {
    /// The set of `dor` (candidate 0 of every pair) and `full`: pair, candidates, origins
    /// (candidate 0 of each must be the pair's DOR path).
    pub(crate) fn new(
        bits: u32,
        dor: RoutingTable,
        full: impl IntoIterator<Item = (usize, Vec<RouterPath>, Vec<PathOrigin>)>,
    ) -> Self {
        let full = full
            .into_iter()
            .map(|(pair, paths, origins)| {
                debug_assert_eq!(paths.first(), Some(&*dor.pair_path(pair)));
                (pair, PairCandidates { paths, origins })
            })
            .collect();
        CandidateSet {
            num_routers: dor.num_routers,
            bits,
            dor,
            full,
        }
    }

    /// The set of explicit per-pair candidate lists (in [`pair_index`] order, candidate 0 the
    /// DOR path); None if the count is not n (n - 1).
    pub fn from_lists(
        num_routers: usize,
        bits: u32,
        paths: Vec<Vec<RouterPath>>,
        origins: Vec<Vec<PathOrigin>>,
    ) -> Option<Self> {
        let dor =
            RoutingTable::from_paths(num_routers, paths.iter().map(|p| p[0].clone()).collect())?;
        let full = paths
            .into_iter()
            .zip(origins)
            .enumerate()
            .filter(|(_, (p, _))| p.len() > 1)
            .map(|(pair, (p, o))| (pair, p, o));
        Some(CandidateSet::new(bits, dor, full))
    }

    pub fn per_pair(&self) -> usize {
        1 << self.bits
    }

    pub(crate) fn num_pairs(&self) -> usize {
        self.dor.num_pairs()
    }

    /// The candidates of pair `pair` (its DOR path alone for a pair without genes).
    pub fn paths(&self, pair: usize) -> Cow<'_, [RouterPath]> {
        match self.full.get(&pair) {
            Some(c) => Cow::Borrowed(&c.paths),
            None => Cow::Owned(vec![self.dor.pair_path(pair).into_owned()]),
        }
    }

    /// Where each of [`paths`](Self::paths) came from.
    pub fn origins(&self, pair: usize) -> Cow<'_, [PathOrigin]> {
        match self.full.get(&pair) {
            Some(c) => Cow::Borrowed(&c.origins),
            None => Cow::Owned(vec![PathOrigin::Dor]),
        }
    }

    /// Number of candidates of `pair` (1 for a pair without genes).
    pub fn count(&self, pair: usize) -> usize {
        self.full.get(&pair).map_or(1, |c| c.paths.len())
    }

    pub fn candidate(&self, pair: usize, k: usize) -> Cow<'_, RouterPath> {
        match self.full.get(&pair) {
            Some(c) => Cow::Borrowed(&c.paths[k]),
            None => {
                assert_eq!(k, 0, "pair {pair} has its DOR path only");
                self.dor.pair_path(pair)
            }
        }
    }

    /// Candidate 0 of every pair, as a table.
    pub fn dor_table(&self) -> &RoutingTable {
        &self.dor
    }

    /// The pairs with more than their DOR path, ascending.
    pub fn full_pairs(&self) -> impl Iterator<Item = usize> + '_ {
        self.full.keys().copied()
    }

    /// Puts `preferred` right after the pair's candidate 0 (DOR), in order, then the other
    /// distinct candidates, cut to 2^bits and padded with duplicates as generated sets are.
    /// Returns how many of `preferred` were not candidates before.
    pub fn prefer(&mut self, pair: usize, preferred: &[RouterPath]) -> usize {
        let old_paths = self.paths(pair).into_owned();
        let old_origins = self.origins(pair).into_owned();
        let mut paths: Vec<RouterPath> = Vec::with_capacity(self.per_pair());
        let mut origins = Vec::with_capacity(self.per_pair());
        let mut added = 0;
        let dor = old_paths.first().cloned();
        let wanted = dor
            .iter()
            .map(|p| (p.clone(), old_origins[0]))
            .chain(preferred.iter().map(|p| {
                let fresh = !old_paths.contains(p);
                (
                    p.clone(),
                    if fresh {
                        PathOrigin::Lp
                    } else {
                        old_origin(&old_paths, &old_origins, p)
                    },
                )
            }))
            .chain(
                old_paths
                    .iter()
                    .cloned()
                    .zip(old_origins.iter().copied())
                    .filter(|(_, o)| *o != PathOrigin::Duplicate),
            );
        for (p, o) in wanted {
            if paths.len() < self.per_pair() && !paths.contains(&p) {
                if o == PathOrigin::Lp {
                    added += 1;
                }
                paths.push(p);
                origins.push(o);
            }
        }
        // A pair that had only its DOR path (no training demand) stays that way.
        if old_paths.len() <= 1 && preferred.is_empty() {
            return added;
        }
        let distinct = paths.len();
        for i in 0..self.per_pair().saturating_sub(distinct) {
            paths.push(paths[i % distinct].clone());
            origins.push(PathOrigin::Duplicate);
        }
        self.full.insert(pair, PairCandidates { paths, origins });
        added
    }
}

fn old_origin(paths: &[RouterPath], origins: &[PathOrigin], p: &RouterPath) -> PathOrigin {
    paths
        .iter()
        .position(|q| q == p)
        .map_or(PathOrigin::Lp, |i| origins[i])
}

/// One path per ordered router pair. Lookup per hop is O(1). Paths are stored as shared
/// destination-based next hops plus the pairs that do not follow them (`next_hops.rs`).
#[derive(Clone, Debug)]
pub struct RoutingTable {
    pub num_routers: usize,
    hops: Arc<NextHops>,
    /// The paths that do not follow `hops`, by pair index.
    listed: BTreeMap<usize, RouterPath>,
}

impl RoutingTable {
    /// The table that picks candidate `choice[pair]` for every pair.
    pub fn from_choice(cands: &CandidateSet, choice: &[u8]) -> Self {
        debug_assert_eq!(choice.len(), cands.num_pairs());
        Self::from_pair_choices(cands, choice.iter().copied().enumerate())
    }

    /// DOR (candidate 0, the set's shared next hops) except for the given `(pair, candidate)`
    /// choices.
    pub(crate) fn from_pair_choices(
        cands: &CandidateSet,
        choices: impl Iterator<Item = (usize, u8)>,
    ) -> Self {
        cands.dor.with_listed(
            choices
                .filter(|&(_, k)| k != 0)
                .map(|(pair, k)| (pair, cands.candidate(pair, k as usize).into_owned()))
                .collect(),
        )
    }

    /// Checks every path against the topology and the pair it is stored under.
    pub fn validate(&self, topo: &Topology) -> Result<()> {
        let n = self.num_routers;
        if n != topo.num_routers() {
            return Err(Error::field(
                "num_routers",
                format!("{n} but the topology has {}", topo.num_routers()),
            ));
        }
        // The walked paths start and end right by construction, and are valid when every
        // next hop is: only a bad entry needs the per-path scan that names the first path.
        let check = |i: usize, p: &RouterPath| -> Result<()> {
            let (s, d) = pair_of(n, i);
            if p.routers.first() != Some(&(s as u32)) || p.routers.last() != Some(&(d as u32)) {
                return Err(Error::field(
                    format!("paths[{i}]"),
                    format!("stored for pair {s} -> {d} but runs {:?}", p.routers),
                ));
            }
            p.validate(topo)
                .map_err(|e| e.prefix_field(&format!("paths[{i}]")))
        };
        if self.hops.entries_valid(topo) {
            for (&i, p) in &self.listed {
                check(i, p)?;
            }
        } else {
            for (i, p) in self.paths().enumerate() {
                check(i, &p)?;
            }
        }
        Ok(())
    }

    /// Whether one next hop per (router, destination) serves every path (what a
    /// destination-based forwarding table such as InfiniBand's LFT can express).
    pub(crate) fn is_destination_based(&self) -> bool {
        self.listed.is_empty() || self.destination_ports().is_ok()
    }

    /// The port each path leaves router `r` by towards destination `d`, at `r * n + d`
    /// (`u16::MAX` where no path passes), when one port per (router, destination) serves
    /// every path; else the first two paths that disagree.
    pub(crate) fn destination_ports(&self) -> std::result::Result<Vec<u16>, PortConflict> {
        let n = self.num_routers;
        let mut next = vec![u16::MAX; n * n];
        // The pair that set each slot, to name both paths in a conflict.
        let mut set_by = vec![usize::MAX; n * n];
        for (pair, p) in self.paths().enumerate() {
            let d = p.destination();
            for (&r, &port) in p.routers.iter().zip(&p.ports) {
                let slot = r as usize * n + d;
                if next[slot] == u16::MAX {
                    next[slot] = port;
                    set_by[slot] = pair;
                } else if next[slot] != port {
                    return Err(PortConflict {
                        router: r as usize,
                        destination: d,
                        first: (set_by[slot], next[slot]),
                        second: (pair, port),
                    });
                }
            }
        }
        Ok(next)
    }
}

/// Two paths that leave `router` towards `destination` by different ports: `(pair, port)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortConflict {
    pub router: usize,
    pub destination: usize,
    pub first: (usize, u16),
    pub second: (usize, u16),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_index_round_trips_in_the_seed_numbering() {
        let n = 5;
        let mut seen = vec![false; n * (n - 1)];
        for s in 0..n {
            for d in (0..n).filter(|&d| d != s) {
                let i = pair_index(n, s, d);
                assert_eq!(pair_of(n, i), (s, d));
                seen[i] = true;
            }
        }
        assert!(seen.iter().all(|&x| x));
        assert_eq!(pair_index(n, 0, 1), 0);
        assert_eq!(pair_index(n, 1, 0), 4);
        assert_eq!(pair_index(n, 1, 2), 5);
    }

    #[test]
    fn loops_are_cut_out_of_paths() {
        // 0 -1-> 1 -2-> 2 -3-> 1 -4-> 3: the visit to 2 and back is cut.
        let p = RouterPath {
            routers: vec![0, 1, 2, 1, 3],
            ports: vec![1, 2, 3, 4],
        };
        assert!(p.revisits());
        let q = p.without_loops();
        assert_eq!(q.routers, vec![0, 1, 3]);
        assert_eq!(q.ports, vec![1, 4]);
        assert!(!q.revisits());
        // Back to the start: 0 -> 1 -> 0 -> 2.
        let p = RouterPath {
            routers: vec![0, 1, 0, 2],
            ports: vec![1, 2, 3],
        };
        let q = p.without_loops();
        assert_eq!((q.routers, q.ports), (vec![0, 2], vec![3]));
    }
}
