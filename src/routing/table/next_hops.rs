//! How a [`RoutingTable`] stores its n (n - 1) paths without holding each one: a
//! destination-based next hop per (router, destination) that most pairs follow (DOR's paths
//! all do), and the paths that do not follow it listed by pair. A table of DOR plus a few
//! thousand evolved pairs on a 64x64 mesh is ~100 MB instead of ~5 GB of path vectors.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::topology::Topology;

use super::{RouterPath, RoutingTable, pair_index, pair_of};

/// "No next hop stored" in [`NextHops::port`].
const NONE: u16 = u16::MAX;

/// Output port and next router per (router, destination), `r * n + d`: every path that
/// follows it reaches its destination, because each entry was taken from a loop-free path
/// whose every hop agreed with the entries before it.
#[derive(Clone, Debug, Default)]
pub struct NextHops {
    n: usize,
    port: Vec<u16>,
    router: Vec<u32>,
}

impl NextHops {
    fn new(n: usize) -> Self {
        NextHops {
            n,
            port: vec![NONE; n * n],
            router: vec![0; n * n],
        }
    }

    /// The path from `s` to `d` these next hops give, if every router on it has one.
    pub(crate) fn walk(&self, s: usize, d: usize) -> Option<RouterPath> {
        let mut routers = vec![s as u32];
        let mut ports = Vec::new();
        let mut r = s;
        while r != d {
            let port = self.port[r * self.n + d];
            // Entries come from loop-free paths, so n steps is already one too many.
            if port == NONE || ports.len() >= self.n {
                return None;
            }
            ports.push(port);
            r = self.router[r * self.n + d] as usize;
            routers.push(r as u32);
        }
        Some(RouterPath { routers, ports })
    }

    /// Whether `path` (which revisits no router) follows these next hops, or can where they
    /// have none yet.
    fn agrees(&self, path: &RouterPath) -> bool {
        let d = path.destination();
        path.routers
            .iter()
            .zip(&path.ports)
            .zip(&path.routers[1..])
            .all(|((&r, &p), &next)| {
                let at = r as usize * self.n + d;
                self.port[at] == NONE || (self.port[at] == p && self.router[at] == next)
            })
    }

    /// Whether every stored next hop's port leads to its next router in `topo`.
    pub(crate) fn entries_valid(&self, topo: &Topology) -> bool {
        use crate::topology::model::Endpoint;
        self.port
            .iter()
            .zip(&self.router)
            .enumerate()
            .all(|(at, (&p, &next))| {
                p == NONE
                    || matches!(topo.peer(at / self.n, p as usize),
                    Some(Endpoint::Router { router, .. }) if router == next as usize)
            })
    }

    fn record(&mut self, path: &RouterPath) {
        let d = path.destination();
        for ((&r, &p), &next) in path.routers.iter().zip(&path.ports).zip(&path.routers[1..]) {
            let at = r as usize * self.n + d;
            self.port[at] = p;
            self.router[at] = next;
        }
    }
}

/// Builds a table pair by pair (in [`pair_index`] order), without ever holding the paths
/// that follow the shared next hops.
pub(crate) struct TableBuilder {
    hops: NextHops,
    listed: BTreeMap<usize, RouterPath>,
    next_pair: usize,
    /// `seen[r] == epoch`: router `r` is on the path being pushed (a revisit check without
    /// sorting a copy of every path).
    seen: Vec<u32>,
    epoch: u32,
}

impl TableBuilder {
    pub(crate) fn new(num_routers: usize) -> Self {
        TableBuilder {
            hops: NextHops::new(num_routers),
            listed: BTreeMap::new(),
            next_pair: 0,
            seen: vec![0; num_routers],
            epoch: 0,
        }
    }

    /// Adds the next pair's path (pairs in order). A path that does not start and end at its
    /// pair's routers is listed as it is: validation reports it.
    pub(crate) fn push(&mut self, path: RouterPath) {
        let pair = self.next_pair;
        self.next_pair += 1;
        let (s, d) = pair_of(self.hops.n, pair);
        let ends_right = path.routers.first() == Some(&(s as u32))
            && path.routers.last() == Some(&(d as u32))
            && path.routers.len() == path.ports.len() + 1;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.seen.fill(0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        let seen = &mut self.seen;
        let revisits = ends_right
            && path.routers.iter().any(|&r| {
                seen.get_mut(r as usize)
                    .is_none_or(|m| std::mem::replace(m, epoch) == epoch)
            });
        if ends_right && !revisits && self.hops.agrees(&path) {
            self.hops.record(&path);
        } else {
            self.listed.insert(pair, path);
        }
    }

    /// The table; `None` unless exactly n (n - 1) paths were pushed.
    pub(crate) fn finish(self) -> Option<RoutingTable> {
        let n = self.hops.n;
        (self.next_pair == n * (n - 1)).then(|| RoutingTable {
            num_routers: n,
            hops: Arc::new(self.hops),
            listed: self.listed,
        })
    }
}

impl RoutingTable {
    /// The table of `paths`, one per pair in [`pair_index`] order. None if the count is not
    /// n (n - 1).
    pub fn from_paths(num_routers: usize, paths: Vec<RouterPath>) -> Option<RoutingTable> {
        if num_routers < 2 {
            return None;
        }
        let mut b = TableBuilder::new(num_routers);
        for p in paths {
            b.push(p);
        }
        b.finish()
    }

    /// Number of ordered router pairs, n (n - 1).
    pub fn num_pairs(&self) -> usize {
        self.num_routers * (self.num_routers - 1)
    }

    /// The path of pair `pair` ([`pair_index`] numbering).
    pub fn pair_path(&self, pair: usize) -> Cow<'_, RouterPath> {
        match self.listed.get(&pair) {
            Some(p) => Cow::Borrowed(p),
            None => {
                let (s, d) = pair_of(self.num_routers, pair);
                Cow::Owned(
                    self.hops
                        .walk(s, d)
                        .expect("an unlisted pair follows the next hops"),
                )
            }
        }
    }

    /// The path from router `s` to router `d`.
    pub fn path(&self, s: usize, d: usize) -> Cow<'_, RouterPath> {
        self.pair_path(pair_index(self.num_routers, s, d))
    }

    /// Every pair's path, in [`pair_index`] order.
    pub fn paths(&self) -> impl Iterator<Item = Cow<'_, RouterPath>> + '_ {
        (0..self.num_pairs()).map(|pair| self.pair_path(pair))
    }

    /// Every pair's path as an owned list (n (n - 1) vectors: for small tables and tests).
    pub fn to_paths(&self) -> Vec<RouterPath> {
        self.paths().map(Cow::into_owned).collect()
    }

    /// Replaces one pair's path.
    pub fn set_path(&mut self, pair: usize, path: RouterPath) {
        let (s, d) = pair_of(self.num_routers, pair);
        if self.hops.walk(s, d).as_ref() == Some(&path) {
            self.listed.remove(&pair);
        } else {
            self.listed.insert(pair, path);
        }
    }

    /// How many pairs do not follow the shared next hops (each holds its own path).
    pub fn listed_pairs(&self) -> usize {
        self.listed.len()
    }

    /// Output port at `router`, the packet's `hop`-th router on the (s, d) path; None at the
    /// destination. O(1) for pairs on the shared next hops, which depend on the router only.
    pub(crate) fn port_at(&self, router: usize, s: usize, d: usize, hop: usize) -> Option<u16> {
        match self.listed.get(&pair_index(self.num_routers, s, d)) {
            Some(p) => p.ports.get(hop).copied(),
            None if router == d => None,
            None => Some(self.hops.port[router * self.num_routers + d]),
        }
    }

    /// The same table with the same next hops: tables built from one candidate set share them.
    pub(crate) fn with_listed(&self, listed: BTreeMap<usize, RouterPath>) -> RoutingTable {
        let mut t = RoutingTable {
            num_routers: self.num_routers,
            hops: Arc::clone(&self.hops),
            listed: BTreeMap::new(),
        };
        for (pair, p) in listed {
            t.set_path(pair, p);
        }
        t
    }
}

/// The pieces of a table as the compact routes JSON carries them: next hops per
/// (destination, router) and the pairs that do not follow them.
pub(crate) struct CompactTable<'a> {
    /// `(port, next router)` at `r * n + d`, None where there is none.
    pub next: Vec<Option<(u16, u32)>>,
    pub listed: &'a BTreeMap<usize, RouterPath>,
}

impl RoutingTable {
    /// The shared next hops and the listed pairs (for the compact routes JSON).
    pub(crate) fn compact(&self) -> CompactTable<'_> {
        CompactTable {
            next: self
                .hops
                .port
                .iter()
                .zip(&self.hops.router)
                .map(|(&p, &r)| (p != NONE).then_some((p, r)))
                .collect(),
            listed: &self.listed,
        }
    }

    /// The table of next hops `next` (`r * n + d`) and `listed` paths. Every pair not listed
    /// must reach its destination by the next hops without revisiting a router; the error
    /// names the first that does not.
    pub(crate) fn from_compact(
        n: usize,
        next: &[Option<(u16, u32)>],
        listed: BTreeMap<usize, RouterPath>,
    ) -> std::result::Result<RoutingTable, String> {
        debug_assert_eq!(next.len(), n * n);
        let mut hops = NextHops::new(n);
        for (at, e) in next.iter().enumerate() {
            if let Some((p, r)) = *e {
                if p == NONE || r as usize >= n || at / n == at % n {
                    return Err(format!(
                        "next hop of router {} towards {}: port {p} to router {r} is not a hop",
                        at / n,
                        at % n
                    ));
                }
                hops.port[at] = p;
                hops.router[at] = r;
            }
        }
        for pair in (0..n * (n - 1)).filter(|p| !listed.contains_key(p)) {
            let (s, d) = pair_of(n, pair);
            // A walk that reaches `d` never revisits a router: the next hop depends on the
            // router only, so a revisit would loop, and `walk` gives up after n steps.
            if hops.walk(s, d).is_none() {
                return Err(format!(
                    "pair {s} -> {d} is not listed and the next hops do not lead from {s} to {d}"
                ));
            }
        }
        let mut t = RoutingTable {
            num_routers: n,
            hops: Arc::new(hops),
            listed: BTreeMap::new(),
        };
        for (pair, p) in listed {
            t.set_path(pair, p);
        }
        Ok(t)
    }
}

impl PartialEq for RoutingTable {
    fn eq(&self, other: &Self) -> bool {
        if self.num_routers != other.num_routers {
            return false;
        }
        // `set_path` never lists a path its next hops give, so tables sharing them are equal
        // exactly when their lists are.
        if Arc::ptr_eq(&self.hops, &other.hops) {
            return self.listed == other.listed;
        }
        self.paths().zip(other.paths()).all(|(a, b)| a == b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(routers: &[u32], ports: &[u16]) -> RouterPath {
        RouterPath {
            routers: routers.to_vec(),
            ports: ports.to_vec(),
        }
    }

    /// A line 0 - 1 - 2: port 0 goes left, port 1 right.
    fn line_paths() -> Vec<RouterPath> {
        vec![
            p(&[0, 1], &[1]),
            p(&[0, 1, 2], &[1, 1]),
            p(&[1, 0], &[0]),
            p(&[1, 2], &[1]),
            p(&[2, 1, 0], &[0, 0]),
            p(&[2, 1], &[0]),
        ]
    }

    #[test]
    fn destination_based_paths_are_not_listed_and_come_back_whole() {
        let paths = line_paths();
        let t = RoutingTable::from_paths(3, paths.clone()).unwrap();
        assert_eq!(t.listed_pairs(), 0);
        assert_eq!(t.paths().map(Cow::into_owned).collect::<Vec<_>>(), paths);
        assert_eq!(t.port_at(1, 0, 2, 1), Some(1));
        assert_eq!(t.port_at(2, 0, 2, 2), None);
    }

    #[test]
    fn a_path_against_the_next_hops_is_listed_and_set_path_keeps_the_list_minimal() {
        let mut paths = line_paths();
        // 1 -> 2 by a detour through 0 revisits 1: listed, never recorded.
        paths[3] = p(&[1, 0, 1, 2], &[0, 1, 1]);
        let mut t = RoutingTable::from_paths(3, paths.clone()).unwrap();
        assert_eq!(t.listed_pairs(), 1);
        assert_eq!(t.path(1, 2).into_owned(), paths[3]);
        assert_eq!(t.port_at(0, 1, 2, 1), Some(1));
        // Back to the path the next hops give (0 -> 2 recorded 1 -> 2): no longer listed.
        t.set_path(3, p(&[1, 2], &[1]));
        assert_eq!(t.listed_pairs(), 0);
        assert_eq!(t, RoutingTable::from_paths(3, line_paths()).unwrap());
        // A path whose first next hop nobody recorded stays listed, equal all the same.
        let mut paths = line_paths();
        paths[1] = p(&[0, 1, 0, 1, 2], &[1, 0, 1, 1]);
        let mut t = RoutingTable::from_paths(3, paths).unwrap();
        t.set_path(1, p(&[0, 1, 2], &[1, 1]));
        assert_eq!(t.listed_pairs(), 1);
        assert_eq!(t, RoutingTable::from_paths(3, line_paths()).unwrap());
        assert_eq!(
            RoutingTable::from_paths(3, line_paths()[..5].to_vec()),
            None
        );
    }
}
