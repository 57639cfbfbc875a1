//! Candidate paths per ordered router pair: the alphabet a GA chromosome picks from (one
//! candidate index per pair). See "Candidate paths" in docs/routing-tables.md.
//!
//! For every pair `(s, d)`, exactly `2^bits` paths, in this order and distinct until the
//! supply runs out:
//! 1. the DOR path (mesh/torus `dor`, dragonfly `min`, elsewhere the first BFS shortest path);
//! 2. other minimal paths, a seeded pseudo-random subset when there are more than needed (so
//!    that candidates spread over channels instead of sharing the lexicographic prefix);
//! 3. Yen's k-shortest simple paths that are non-minimal, at most `max_extra_hops` longer;
//! 4. paths of classical randomised functions (Valiant, ROMM, dragonfly VAL);
//! 5. copies of the distinct ones, cycling, to fill `2^bits`.

use std::collections::BTreeSet;

use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::{CandidateSet, PathOrigin, RouterPath};
use crate::error::{Error, Result};
use crate::routing::RoutingFunction;
use crate::routing::cartesian::{CartesianAlgorithm, CartesianRouting};
use crate::routing::dragonfly::{DragonflyAlgorithm, DragonflyRouting};
use crate::routing::paths::{PortGraph, UNREACHED, walk_packet_seeded};
use crate::topology::{Shape, Topology};

/// How candidates are generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CandidateOptions {
    /// `2^bits` candidates per pair (1..=8: a chromosome gene is a `u8`).
    pub bits: u32,
    /// Seed of the minimal-path subset and of the classical functions' draws.
    pub seed: u64,
    /// How many k-shortest simple paths Yen's algorithm enumerates (minimal ones included).
    pub yen_k: usize,
    /// Whether to add paths of classical randomised routing functions.
    pub classical: bool,
    /// Yen paths are at most this many hops longer than minimal.
    pub max_extra_hops: usize,
}

impl Default for CandidateOptions {
    fn default() -> Self {
        CandidateOptions {
            bits: 3,
            seed: 0,
            yen_k: 1 << 3,
            classical: true,
            max_extra_hops: 2,
        }
    }
}

/// Largest `bits`: `RoutingTable::from_choice` takes one `u8` per pair.
pub(crate) const MAX_BITS: u32 = 8;
/// Largest number of stored candidate paths (pairs with genes x 2^bits; the other pairs' DOR
/// paths are next hops): each path is two small vectors, so this bounds the set to a few GB
/// instead of letting a large topology exhaust memory.
pub(crate) const MAX_PATHS: usize = 1 << 24;
/// Largest router count of a table or candidate set: the shared next hops (6 bytes) and the
/// generator's distances and path counts (12 bytes) are per (router, destination), ~1.2 GB
/// at this size.
pub(crate) const MAX_TABLE_ROUTERS: usize = 8192;
/// Pairs with at most this many minimal paths have them enumerated in full before a subset is
/// drawn; above it minimal paths are sampled uniformly (enumeration would be exponential).
const ENUMERATE_LIMIT: u64 = 1024;
/// Bound on DFS expansions of one Yen spur search, so that a large `max_extra_hops` slows
/// generation down gracefully instead of exploding (a search that hits it finds no spur).
const SPUR_EXPANSIONS: usize = 200_000;

/// Refuses a candidate set of `num_routers` routers whose `full_pairs` pairs with genes (all
/// pairs when None) would store more than [`MAX_PATHS`] paths of 2^`bits` each, or more
/// than [`MAX_TABLE_ROUTERS`] routers. `field` names what the caller's user set.
pub(crate) fn check_set_size(
    num_routers: usize,
    bits: u32,
    full_pairs: Option<usize>,
    field: &str,
) -> Result<()> {
    let n = num_routers;
    let pairs = n.saturating_mul(n.saturating_sub(1));
    if n > MAX_TABLE_ROUTERS {
        return Err(Error::field(
            field,
            format!(
                "{n} routers are too many for a routing table (at most {MAX_TABLE_ROUTERS}: its \
                 next hops and candidate generator hold per router-pair data)"
            ),
        ));
    }
    let full = full_pairs.unwrap_or(pairs);
    let paths = full.saturating_mul(1usize.checked_shl(bits).unwrap_or(usize::MAX));
    if paths > MAX_PATHS {
        return Err(Error::field(
            field,
            format!(
                "{full} router pairs with 2^{bits} candidates each need {paths} candidate \
                 paths (at most {MAX_PATHS})"
            ),
        ));
    }
    Ok(())
}

/// Builds the candidate set of `topo`. Fails on invalid options, a topology too large for the
/// set, or a router pair with no path.
pub fn generate_candidates(topo: &Topology, opts: &CandidateOptions) -> Result<CandidateSet> {
    generate_candidates_for(topo, opts, None)
}

/// Like [`generate_candidates`], but only the pairs marked in `full` (indexed by
/// [`pair_index`](super::pair_index)) get all 2^bits candidates; every other pair gets its
/// DOR path alone. A routing-table search gives genes to the pairs its training traffic uses
/// and leaves the rest on DOR, so the set grows with the training pairs, not with n².
pub fn generate_candidates_for(
    topo: &Topology,
    opts: &CandidateOptions,
    full: Option<&[bool]>,
) -> Result<CandidateSet> {
    if !(1..=MAX_BITS).contains(&opts.bits) {
        return Err(Error::field(
            "candidates.bits",
            format!("must be 1..={MAX_BITS} (got {})", opts.bits),
        ));
    }
    let n = topo.num_routers();
    let pairs = n.saturating_mul(n.saturating_sub(1));
    if let Some(full) = full
        && full.len() != pairs
    {
        return Err(Error::field(
            "candidates",
            format!("{} pair marks for {n} routers ({pairs} pairs)", full.len()),
        ));
    }
    check_set_size(
        n,
        opts.bits,
        full.map(|f| f.iter().filter(|&&x| x).count()),
        "candidates.bits",
    )?;
    let generator = Generator::new(topo, opts);
    let mut dor = super::TableBuilder::new(n);
    let mut full_lists = Vec::new();
    // Sources in parallel, a chunk at a time, fed to the builder in `pair_index` order
    // (sources in order, destinations ascending without s): only the pairs with genes keep
    // their paths, so memory follows them and not n².
    let chunk = rayon::current_num_threads().max(1) * 8;
    for first in (0..n).step_by(chunk) {
        let per_source: Vec<Vec<(Vec<RouterPath>, Vec<PathOrigin>)>> = (first
            ..(first + chunk).min(n))
            .into_par_iter()
            .map(|s| {
                (0..n)
                    .filter(|&d| d != s)
                    .map(|d| {
                        let wanted = full.is_none_or(|f| f[super::pair_index(n, s, d)]);
                        generator.pair(s, d, wanted)
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?;
        for (s, row) in (first..).zip(per_source) {
            for (d, (p, o)) in (0..n).filter(|&d| d != s).zip(row) {
                dor.push(p[0].clone());
                if full.is_none_or(|f| f[super::pair_index(n, s, d)]) {
                    full_lists.push((super::pair_index(n, s, d), p, o));
                }
            }
        }
    }
    let dor = dor.finish().expect("one path per pair");
    Ok(CandidateSet::new(opts.bits, dor, full_lists))
}

/// A routing function walked to produce paths, with the VCs it needs.
struct Walker {
    routing: Box<dyn RoutingFunction>,
    num_vcs: usize,
}

impl Walker {
    fn cartesian(topo: &Topology, algorithm: CartesianAlgorithm, wrap: bool) -> Option<Self> {
        let num_vcs = algorithm.min_vcs(wrap);
        // A shape that does not follow the generator's numbering (imported with a cartesian
        // shape, say) is rejected by the constructor: then the graph fallbacks apply.
        let routing = CartesianRouting::new(algorithm, topo, num_vcs).ok()?;
        Some(Walker {
            routing: Box::new(routing),
            num_vcs,
        })
    }

    fn dragonfly(topo: &Topology, algorithm: DragonflyAlgorithm) -> Option<Self> {
        let num_vcs = algorithm.min_vcs();
        let routing = DragonflyRouting::new(algorithm, topo, num_vcs).ok()?;
        Some(Walker {
            routing: Box::new(routing),
            num_vcs,
        })
    }
}

/// Per-topology tables shared (read-only) by the per-source workers.
struct Generator<'a> {
    topo: &'a Topology,
    opts: &'a CandidateOptions,
    graph: PortGraph,
    n: usize,
    per_pair: usize,
    /// `dist[d * n + v]`: hops from `v` to `d` (links are bidirectional).
    dist: Vec<u32>,
    /// `sigma[d * n + v]`: number of shortest port-level paths from `v` to `d` (saturating).
    sigma: Vec<u64>,
    /// A terminal of every router, for the routing-function walks.
    terminal: Vec<Option<usize>>,
    base: Option<Walker>,
    classical: Vec<Walker>,
}

impl<'a> Generator<'a> {
    fn new(topo: &'a Topology, opts: &'a CandidateOptions) -> Self {
        let graph = PortGraph::new(topo);
        let n = graph.num_routers();
        let rows: Vec<(Vec<u32>, Vec<u64>)> = (0..n)
            .into_par_iter()
            .map(|d| {
                let (dist, order) = graph.bfs(d);
                let mut sigma = vec![0u64; n];
                sigma[d] = 1;
                for &v in order.iter().skip(1) {
                    let v = v as usize;
                    sigma[v] = graph
                        .out(v)
                        .iter()
                        .filter(|h| dist[h.peer as usize].wrapping_add(1) == dist[v])
                        .fold(0u64, |acc, h| acc.saturating_add(sigma[h.peer as usize]));
                }
                (dist, sigma)
            })
            .collect();
        let (mut dist, mut sigma) = (Vec::with_capacity(n * n), Vec::with_capacity(n * n));
        for (d, s) in rows {
            dist.extend(d);
            sigma.extend(s);
        }
        let mut terminal = vec![None; n];
        for (t, term) in topo.terminals.iter().enumerate() {
            terminal[term.router].get_or_insert(t);
        }
        let (base, classical) = match &topo.shape {
            Shape::Cartesian { wrap, .. } => (
                Walker::cartesian(topo, CartesianAlgorithm::Dor, *wrap),
                [CartesianAlgorithm::Valiant, CartesianAlgorithm::Romm]
                    .into_iter()
                    .filter_map(|a| Walker::cartesian(topo, a, *wrap))
                    .collect(),
            ),
            Shape::Dragonfly { .. } => (
                Walker::dragonfly(topo, DragonflyAlgorithm::Min),
                [DragonflyAlgorithm::ValG, DragonflyAlgorithm::ValN]
                    .into_iter()
                    .filter_map(|a| Walker::dragonfly(topo, a))
                    .collect(),
            ),
            _ => (None, Vec::new()),
        };
        Generator {
            topo,
            opts,
            graph,
            n,
            per_pair: 1 << opts.bits,
            dist,
            sigma,
            terminal,
            base,
            classical: if opts.classical {
                classical
            } else {
                Vec::new()
            },
        }
    }

    fn dist(&self, v: usize, d: usize) -> u32 {
        self.dist[d * self.n + v]
    }

    /// The candidates of one pair.
    fn pair(&self, s: usize, d: usize, full: bool) -> Result<(Vec<RouterPath>, Vec<PathOrigin>)> {
        if self.dist(s, d) == UNREACHED {
            return Err(Error::field(
                "topology",
                format!(
                    "router {d} is unreachable from router {s}: candidate paths need a connected topology"
                ),
            ));
        }
        let pair = super::pair_index(self.n, s, d);
        let mut rng = ChaCha8Rng::seed_from_u64(self.opts.seed);
        // One stream per pair: the draws do not depend on which thread handles which pair.
        rng.set_stream(pair as u64);
        let mut paths: Vec<RouterPath> = Vec::with_capacity(self.per_pair);
        let mut origins = Vec::with_capacity(self.per_pair);
        let mut push = |paths: &mut Vec<RouterPath>, p: RouterPath, o: PathOrigin| {
            // A walk that revisits a router (a Valiant detour through its own start, say)
            // gives its loop-free core: a table path never revisits a router.
            let p = p.without_loops();
            if paths.len() < self.per_pair && !paths.contains(&p) {
                paths.push(p);
                origins.push(o);
            }
        };

        let dor = self
            .base
            .as_ref()
            .and_then(|w| self.walk(w, s, d, u64::from(self.walk_id(s, d))))
            .unwrap_or_else(|| self.first_shortest(s, d));
        push(&mut paths, dor, PathOrigin::Dor);
        if !full {
            return Ok((paths, origins));
        }

        let need = self.per_pair - paths.len();
        for p in self.minimal_paths(s, d, need, &paths, &mut rng) {
            push(&mut paths, p, PathOrigin::Minimal);
        }

        let minimal_count = self.sigma[d * self.n + s];
        if paths.len() < self.per_pair && minimal_count < self.opts.yen_k as u64 {
            let want = self.per_pair - paths.len();
            for p in self.yen(s, d, want, &paths) {
                push(&mut paths, p, PathOrigin::Yen);
            }
        }

        if paths.len() < self.per_pair && !self.classical.is_empty() {
            // A few draws per missing candidate: Valiant's intermediates repeat (and ROMM's
            // paths are minimal), so most draws add nothing on small pairs.
            let attempts = 4 * self.per_pair;
            'draws: for j in 0..attempts {
                for (f, w) in self.classical.iter().enumerate() {
                    if paths.len() >= self.per_pair {
                        break 'draws;
                    }
                    let seed = mix(
                        self.opts.seed,
                        pair as u64,
                        (j * self.classical.len() + f) as u64,
                    );
                    if let Some(p) = self.walk(w, s, d, seed) {
                        push(&mut paths, p, PathOrigin::Classical);
                    }
                }
            }
        }

        let distinct = paths.len();
        for i in 0..self.per_pair - distinct {
            paths.push(paths[i % distinct].clone());
            origins.push(PathOrigin::Duplicate);
        }
        Ok((paths, origins))
    }

    /// The packet id `walk_packet` would use, so candidate 0 is exactly the walk it does.
    fn walk_id(&self, s: usize, d: usize) -> u32 {
        match (self.terminal[s], self.terminal[d]) {
            (Some(ts), Some(td)) => crate::routing::paths::packet(self.topo, ts, td).id,
            _ => 0,
        }
    }

    /// The router path the walker's first choices take from a terminal of `s` to one of `d`
    /// (None if a router has no terminal or the walk fails).
    fn walk(&self, w: &Walker, s: usize, d: usize, seed: u64) -> Option<RouterPath> {
        let (ts, td) = (self.terminal[s]?, self.terminal[d]?);
        let max_hops = 4 * self.n + 4;
        let hops =
            walk_packet_seeded(&*w.routing, self.topo, ts, td, w.num_vcs, max_hops, seed).ok()?;
        hops_to_path(&hops, d)
    }

    /// The first shortest path, lowest port first at every router.
    fn first_shortest(&self, s: usize, d: usize) -> RouterPath {
        let mut path = RouterPath {
            routers: vec![s as u32],
            ports: Vec::new(),
        };
        let mut u = s;
        while u != d {
            let h = self
                .graph
                .out(u)
                .iter()
                .find(|h| self.dist(h.peer as usize, d).wrapping_add(1) == self.dist(u, d))
                .expect("a reachable router has a neighbour one hop closer");
            path.ports.push(h.port);
            path.routers.push(h.peer);
            u = h.peer as usize;
        }
        path
    }

    /// Up to `need` minimal paths not in `taken`: all of them if that many exist, else a
    /// seeded random subset.
    fn minimal_paths(
        &self,
        s: usize,
        d: usize,
        need: usize,
        taken: &[RouterPath],
        rng: &mut ChaCha8Rng,
    ) -> Vec<RouterPath> {
        if need == 0 {
            return Vec::new();
        }
        let count = self.sigma[d * self.n + s];
        if count <= ENUMERATE_LIMIT {
            let mut all = Vec::new();
            self.enumerate_minimal(
                s,
                d,
                &mut RouterPath {
                    routers: vec![s as u32],
                    ports: vec![],
                },
                &mut all,
                usize::MAX,
            );
            all.retain(|p| !taken.contains(p));
            if all.len() <= need {
                return all;
            }
            let mut idx = sample(rng, all.len(), need).into_vec();
            idx.sort_unstable();
            return idx.into_iter().map(|i| all[i].clone()).collect();
        }
        // More minimal paths than could be listed: uniform samples (each next hop weighted
        // by the number of shortest paths through it). `count > ENUMERATE_LIMIT >= need +
        // taken` distinct ones exist, so this ends quickly; the bound is a safety net.
        let mut out: Vec<RouterPath> = Vec::with_capacity(need);
        for _ in 0..64 * need {
            if out.len() == need {
                break;
            }
            let p = self.sample_minimal(s, d, rng);
            if !taken.contains(&p) && !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// All minimal paths extending `cur` to `d`, lowest port first, at most `limit`.
    fn enumerate_minimal(
        &self,
        u: usize,
        d: usize,
        cur: &mut RouterPath,
        out: &mut Vec<RouterPath>,
        limit: usize,
    ) {
        if out.len() >= limit {
            return;
        }
        if u == d {
            out.push(cur.clone());
            return;
        }
        for h in self.graph.out(u) {
            if self.dist(h.peer as usize, d).wrapping_add(1) == self.dist(u, d) {
                cur.routers.push(h.peer);
                cur.ports.push(h.port);
                self.enumerate_minimal(h.peer as usize, d, cur, out, limit);
                cur.routers.pop();
                cur.ports.pop();
            }
        }
    }

    fn sample_minimal(&self, s: usize, d: usize, rng: &mut ChaCha8Rng) -> RouterPath {
        let sigma = &self.sigma[d * self.n..(d + 1) * self.n];
        let mut path = RouterPath {
            routers: vec![s as u32],
            ports: Vec::new(),
        };
        let mut u = s;
        while u != d {
            let next: Vec<_> = self
                .graph
                .out(u)
                .iter()
                .filter(|h| self.dist(h.peer as usize, d).wrapping_add(1) == self.dist(u, d))
                .collect();
            let total = next
                .iter()
                .fold(0u64, |a, h| a.saturating_add(sigma[h.peer as usize]));
            let mut r = rng.random_range(0..total.max(1));
            // Saturated counts make the last hop absorb the rest: still a minimal path.
            let mut chosen = next[next.len() - 1];
            for h in &next {
                let w = sigma[h.peer as usize];
                if r < w {
                    chosen = h;
                    break;
                }
                r -= w;
            }
            path.ports.push(chosen.port);
            path.routers.push(chosen.peer);
            u = chosen.peer as usize;
        }
        path
    }

    /// Yen's k-shortest simple paths (k = `yen_k`, at most `max_extra_hops` longer than
    /// minimal); returns the non-minimal ones not in `taken`, at most `want`, shortest first.
    fn yen(&self, s: usize, d: usize, want: usize, taken: &[RouterPath]) -> Vec<RouterPath> {
        let min_len = self.dist(s, d) as usize;
        let max_len = min_len.saturating_add(self.opts.max_extra_hops);
        let mut out = Vec::new();
        let mut found = vec![self.first_shortest(s, d)];
        // Ordered by (hops, path): the smallest is the next path, deterministically.
        let mut pool: BTreeSet<(usize, RouterPath)> = BTreeSet::new();
        let mut blocked = vec![false; self.n];
        let mut banned: Vec<u16> = Vec::new();
        while found.len() < self.opts.yen_k && out.len() < want {
            let last = found.last().expect("found starts non-empty").clone();
            for i in 0..last.hops() {
                let spur = last.routers[i] as usize;
                let (root_r, root_p) = (&last.routers[..=i], &last.ports[..i]);
                banned.clear();
                banned.extend(
                    found
                        .iter()
                        .filter(|p| {
                            p.routers.len() > i + 1
                                && &p.routers[..=i] == root_r
                                && &p.ports[..i] == root_p
                        })
                        .map(|p| p.ports[i]),
                );
                for &r in &root_r[..i] {
                    blocked[r as usize] = true;
                }
                let spur_path = self.spur_search(spur, d, &mut blocked, &banned, max_len - i);
                for &r in &root_r[..i] {
                    blocked[r as usize] = false;
                }
                if let Some((routers, ports)) = spur_path {
                    let mut p = RouterPath {
                        routers: root_r.to_vec(),
                        ports: root_p.to_vec(),
                    };
                    p.routers.extend_from_slice(&routers[1..]);
                    p.ports.extend(ports);
                    if !found.contains(&p) {
                        pool.insert((p.hops(), p));
                    }
                }
            }
            let Some((_, next)) = pool.pop_first() else {
                break;
            };
            if next.hops() > min_len && !taken.contains(&next) {
                out.push(next.clone());
            }
            found.push(next);
        }
        out
    }

    /// Shortest simple path from `from` to `d` avoiding `blocked` routers and the `banned`
    /// ports of `from`, at most `budget` hops: iterative deepening DFS pruned by the
    /// unrestricted distance to `d` (a lower bound), so only near-minimal detours are explored.
    fn spur_search(
        &self,
        from: usize,
        d: usize,
        blocked: &mut [bool],
        banned: &[u16],
        budget: usize,
    ) -> Option<(Vec<u32>, Vec<u16>)> {
        let lower = self.dist(from, d) as usize;
        let mut routers = vec![from as u32];
        let mut ports = Vec::new();
        let mut expansions = 0usize;
        blocked[from] = true;
        let mut result = None;
        for limit in lower..=budget {
            let mut search = Spur {
                generator: self,
                d,
                limit,
                from,
                banned,
                expansions: &mut expansions,
            };
            if search.dfs(from, blocked, &mut routers, &mut ports) {
                result = Some((routers.clone(), ports.clone()));
                break;
            }
            if expansions > SPUR_EXPANSIONS {
                break;
            }
        }
        for &r in &routers {
            blocked[r as usize] = false;
        }
        result
    }
}

/// One depth-bounded DFS of [`Generator::spur_search`].
struct Spur<'g, 'a> {
    generator: &'g Generator<'a>,
    d: usize,
    limit: usize,
    from: usize,
    banned: &'g [u16],
    expansions: &'g mut usize,
}

impl Spur<'_, '_> {
    fn dfs(
        &mut self,
        u: usize,
        blocked: &mut [bool],
        routers: &mut Vec<u32>,
        ports: &mut Vec<u16>,
    ) -> bool {
        if u == self.d {
            return true;
        }
        *self.expansions += 1;
        if *self.expansions > SPUR_EXPANSIONS {
            return false;
        }
        let depth = ports.len();
        for h in self.generator.graph.out(u) {
            let v = h.peer as usize;
            if blocked[v] || (u == self.from && self.banned.contains(&h.port)) {
                continue;
            }
            if depth + 1 + self.generator.dist(v, self.d) as usize > self.limit {
                continue;
            }
            blocked[v] = true;
            routers.push(h.peer);
            ports.push(h.port);
            if self.dfs(v, blocked, routers, ports) {
                return true;
            }
            routers.pop();
            ports.pop();
            blocked[v] = false;
        }
        false
    }
}

/// The router path of walked hops (the last hop ejects at `d`); None if it does not end there.
fn hops_to_path(hops: &[crate::routing::paths::Hop], d: usize) -> Option<RouterPath> {
    let (last, rest) = hops.split_last()?;
    if last.0 != d || rest.is_empty() {
        return None;
    }
    Some(RouterPath {
        routers: hops.iter().map(|h| h.0 as u32).collect(),
        ports: rest.iter().map(|h| h.1 as u16).collect(),
    })
}

/// A well-mixed 64-bit seed from three words (SplitMix64 finaliser on each step), so that
/// nearby (pair, draw) numbers give unrelated rng streams.
fn mix(a: u64, b: u64, c: u64) -> u64 {
    let f = |mut z: u64| {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    f(f(f(a) ^ b) ^ c)
}

#[cfg(test)]
#[path = "candidates_tests.rs"]
mod tests;
