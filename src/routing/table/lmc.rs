//! LMC: carrying a per-pair table on InfiniBand, whose forwarding is by destination LID only.
//!
//! With LID Mask Control `lmc`, every channel adapter port answers to `2^lmc` consecutive LIDs
//! (its base LID aligned to `2^lmc`), and every LID has its own destination-based forwarding.
//! So each destination router gets `2^lmc` *layers*, each a tree of next hops towards it, and
//! a source picks the layer of every destination by the destination LID it sends to (base
//! LID + offset). A per-pair table is carried exactly when, for every destination, its paths
//! split into at most `2^lmc` groups that each leave every shared router by the same port.
//!
//! * [`pack`] finds such a split without changing any path (greedy first fit), or says which
//!   destination needs more layers.
//! * [`constrain`] makes any table fit: layer 0 is the base table's tree (DOR), pairs on their
//!   base path use it, the others are packed into layers `1..2^lmc`, and a path that fits no
//!   layer is rerouted: its own prefix up to the first router on some layer's tree, then that
//!   tree (the shortest such path).
//!
//! Routers a layer's paths never visit still need an entry for each of its LIDs (a switch
//! forwards whatever it receives): they point towards the nearest router of the tree, which
//! keeps every layer loop-free. See docs/routing-tables.md, "LMC".

use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::Path;

use super::io::{
    LinearForwardingTables, SwitchLft, pair_values_string, parse_pair_values, walk_lid,
};
use super::{RouterPath, RoutingTable, pair_index, pair_of};
use crate::error::{Error, Result};
use crate::topology::Topology;
use crate::topology::model::Endpoint;

/// InfiniBand's largest LMC (128 LIDs per port).
pub const MAX_LMC: u8 = 7;

const NONE: u16 = u16::MAX;

/// The layers of every destination and the layer (LID offset) of every pair.
#[derive(Clone, Debug, PartialEq)]
pub struct LmcAssignment {
    pub lmc: u8,
    pub num_routers: usize,
    /// LID offset of every pair (`pair_index` order).
    pub offset: Vec<u8>,
    /// Most layers any destination uses.
    pub layers_used: usize,
    /// `next[(layer * n + d) * n + r]`: the port router `r` forwards layer `layer` of
    /// destination router `d` to (complete; `u16::MAX` at `r == d`).
    next: Vec<u16>,
}

impl LmcAssignment {
    pub fn num_layers(&self) -> usize {
        1 << self.lmc
    }

    /// The port router `r` forwards `layer` of destination router `d` to (None at `d`).
    pub fn next_port(&self, layer: usize, d: usize, r: usize) -> Option<usize> {
        let n = self.num_routers;
        let p = self.next[(layer * n + d) * n + r];
        (p != NONE).then_some(usize::from(p))
    }
}

/// Layers of one destination while they are being filled.
struct Trees {
    d: usize,
    n: usize,
    /// `next[layer * n + r]`, `NONE` where the layer has no entry yet.
    next: Vec<u16>,
    used: usize,
}

impl Trees {
    fn new(d: usize, n: usize, layers: usize) -> Self {
        Trees {
            d,
            n,
            next: vec![NONE; layers * n],
            used: 0,
        }
    }

    fn fits(&self, layer: usize, p: &RouterPath) -> bool {
        p.routers.iter().zip(&p.ports).all(|(&r, &port)| {
            let e = self.next[layer * self.n + r as usize];
            e == NONE || e == port
        })
    }

    fn add(&mut self, layer: usize, p: &RouterPath) {
        for (&r, &port) in p.routers.iter().zip(&p.ports) {
            self.next[layer * self.n + r as usize] = port;
        }
        self.used = self.used.max(layer + 1);
    }

    /// Whether router `r` is on `layer`'s tree (the destination always is).
    fn on_tree(&self, layer: usize, r: usize) -> bool {
        r == self.d || self.next[layer * self.n + r] != NONE
    }

    /// `p` up to its first router on `layer`'s tree, then the tree to the destination; None
    /// if the layer is empty.
    fn joined(&self, layer: usize, topo: &Topology, p: &RouterPath) -> Option<RouterPath> {
        if self.used <= layer {
            return None;
        }
        let join = p
            .routers
            .iter()
            .position(|&r| self.on_tree(layer, r as usize))?;
        let mut q = RouterPath {
            routers: p.routers[..=join].to_vec(),
            ports: p.ports[..join].to_vec(),
        };
        let mut cur = p.routers[join] as usize;
        while cur != self.d {
            let port = self.next[layer * self.n + cur];
            let Some(Endpoint::Router { router, .. }) = topo.peer(cur, usize::from(port)) else {
                unreachable!("tree entries come from validated paths");
            };
            q.ports.push(port);
            q.routers.push(router as u32);
            cur = router;
        }
        Some(q)
    }
}

/// Splits the table's paths into at most `2^lmc` destination trees per destination without
/// changing any path (greedy first fit, longest paths first). Errors name the first
/// destination that needs more layers.
pub fn pack(topo: &Topology, table: &RoutingTable, lmc: u8) -> Result<LmcAssignment> {
    check_lmc(lmc)?;
    let n = table.num_routers;
    let layers = 1usize << lmc;
    let mut offset = vec![0u8; table.num_pairs()];
    let mut all = Vec::with_capacity(n);
    for d in 0..n {
        let mut trees = Trees::new(d, n, layers);
        let mut sources: Vec<usize> = (0..n).filter(|&s| s != d).collect();
        sources.sort_by_key(|&s| std::cmp::Reverse(table.path(s, d).hops()));
        for s in sources {
            let p = table.path(s, d);
            let p = &*p;
            let Some(layer) = (0..layers).find(|&l| trees.fits(l, p)) else {
                return Err(Error::field(
                    "table",
                    format!(
                        "the paths towards router {d} need more than 2^{lmc} = {layers} \
                         destination trees (first fit); use a larger LMC, or evolve the table \
                         with `lmc = {lmc}` so that it fits"
                    ),
                ));
            };
            trees.add(layer, p);
            offset[pair_index(n, s, d)] = layer as u8;
        }
        all.push(trees);
    }
    Ok(finish(topo, lmc, offset, all))
}

/// Makes `table` fit `2^lmc` layers per destination (module doc): layer 0 holds the `base`
/// table's paths (all of them when it is destination-based). Returns the table it became, its
/// assignment and how many pairs were rerouted.
pub fn constrain(
    topo: &Topology,
    table: &RoutingTable,
    base: &RoutingTable,
    lmc: u8,
) -> Result<(RoutingTable, LmcAssignment, usize)> {
    let fitter = LmcFitter::new(base, lmc)?;
    let own: Vec<usize> = (0..table.num_pairs())
        .filter(|&i| table.pair_path(i) != base.pair_path(i))
        .collect();
    let (fitted, trees) = fitter.fit_trees(topo, &own, |i| table.pair_path(i), true);
    let mut table = table.clone();
    let mut offset = vec![0u8; table.num_pairs()];
    for (pair, layer, path) in fitted.pairs {
        offset[pair] = layer;
        if let Some(q) = path {
            table.set_path(pair, q);
        }
    }
    Ok((table, finish(topo, lmc, offset, trees), fitted.rerouted))
}

/// Fits tables to `2^lmc` destination trees per destination, tree 0 being a fixed base
/// table's (module doc). Built once, it fits each genome of a search cheaply: only the pairs
/// that may leave their base path are placed.
#[derive(Clone, Debug)]
pub struct LmcFitter {
    lmc: u8,
    n: usize,
    /// Tree 0: `base_next[d * n + r]`, the base table's port at `r` towards `d`.
    base_next: Vec<u16>,
    /// Per destination, the sources whose base path disagrees with tree 0 (none when the base
    /// is destination-based): they are placed like the pairs that left their base path.
    misfits: Vec<Vec<usize>>,
}

/// What [`LmcFitter::fit`] did to the pairs it placed (all others stay on tree 0).
#[derive(Clone, Debug, Default)]
pub struct Fitted {
    /// `(pair, tree, the new path if it was rerouted)`.
    pub pairs: Vec<(usize, u8, Option<RouterPath>)>,
    pub rerouted: usize,
}

impl LmcFitter {
    pub fn new(base: &RoutingTable, lmc: u8) -> Result<Self> {
        check_lmc(lmc)?;
        let n = base.num_routers;
        let mut base_next = vec![NONE; n * n];
        let mut misfits = vec![Vec::new(); n];
        for d in 0..n {
            let mut trees = Trees::new(d, n, 1);
            for s in (0..n).filter(|&s| s != d) {
                let p = base.path(s, d);
                if trees.fits(0, &p) {
                    trees.add(0, &p);
                } else {
                    misfits[d].push(s);
                }
            }
            base_next[d * n..(d + 1) * n].copy_from_slice(&trees.next);
        }
        Ok(LmcFitter {
            lmc,
            n,
            base_next,
            misfits,
        })
    }

    pub fn lmc(&self) -> u8 {
        self.lmc
    }

    /// Places the pairs `own` (whose paths `path_of` gives; every other pair is on its base
    /// path) into the trees.
    pub fn fit<'a>(
        &self,
        topo: &Topology,
        own: &[usize],
        path_of: impl Fn(usize) -> Cow<'a, RouterPath>,
    ) -> Fitted {
        self.fit_trees(topo, own, path_of, false).0
    }

    /// [`Self::fit`], and with `all` the trees of every destination (for the LFTs).
    fn fit_trees<'a>(
        &self,
        topo: &Topology,
        own: &[usize],
        path_of: impl Fn(usize) -> Cow<'a, RouterPath>,
        all: bool,
    ) -> (Fitted, Vec<Trees>) {
        let n = self.n;
        let layers = 1usize << self.lmc;
        let mut by_destination: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &pair in own {
            let (s, d) = pair_of(n, pair);
            by_destination[d].push(s);
        }
        let mut fitted = Fitted::default();
        let mut kept = Vec::new();
        for (d, own_sources) in by_destination.into_iter().enumerate() {
            let mut sources = own_sources;
            sources.extend(&self.misfits[d]);
            if sources.is_empty() && !all {
                continue;
            }
            sources.sort_unstable();
            sources.dedup();
            let mut trees = Trees::new(d, n, layers);
            trees.next[..n].copy_from_slice(&self.base_next[d * n..(d + 1) * n]);
            trees.used = 1;
            let hops = |s: usize| path_of(pair_index(n, s, d)).hops();
            sources.sort_by_key(|&s| (std::cmp::Reverse(hops(s)), s));
            for s in sources {
                let pair = pair_index(n, s, d);
                let p = path_of(pair);
                let p = &*p;
                // Tree 0 only takes a path that agrees with the base tree; then first fit.
                let (layer, path) = match (0..layers).find(|&l| trees.fits(l, p)) {
                    Some(l) => (l, None),
                    None => {
                        // Rerouted along the tree it joins soonest, a non-base tree if any.
                        let joined = |range: std::ops::Range<usize>| {
                            range
                                .filter_map(|l| trees.joined(l, topo, p).map(|q| (l, q)))
                                .min_by_key(|(l, q)| (q.hops(), *l))
                        };
                        let (l, q) = joined(1..layers)
                            .or_else(|| joined(0..1))
                            .expect("tree 0 reaches the destination from every router");
                        fitted.rerouted += 1;
                        (l, Some(q))
                    }
                };
                trees.add(layer, path.as_ref().unwrap_or(p));
                fitted.pairs.push((pair, layer as u8, path));
            }
            if all {
                kept.push(trees);
            }
        }
        (fitted, kept)
    }
}

fn check_lmc(lmc: u8) -> Result<()> {
    if lmc > MAX_LMC {
        return Err(Error::field(
            "lmc",
            format!("{lmc} is above InfiniBand's largest LMC, {MAX_LMC}"),
        ));
    }
    Ok(())
}

/// Completes every layer (routers off a tree point towards the nearest router on it, by a
/// breadth-first search backwards from the tree) and gathers the assignment.
fn finish(topo: &Topology, lmc: u8, offset: Vec<u8>, all: Vec<Trees>) -> LmcAssignment {
    let n = topo.num_routers();
    let layers = 1usize << lmc;
    // (neighbour, the neighbour's port back to this router) of every router.
    let into: Vec<Vec<(usize, u16)>> = (0..n)
        .map(|r| {
            (0..topo.routers[r].ports.len())
                .filter_map(|port| match topo.peer(r, port) {
                    Some(Endpoint::Router { router, port: back }) if router != r => {
                        Some((router, back as u16))
                    }
                    _ => None,
                })
                .collect()
        })
        .collect();
    let mut next = vec![NONE; layers * n * n];
    let mut layers_used = 1;
    for trees in all {
        let d = trees.d;
        layers_used = layers_used.max(trees.used);
        for layer in 0..layers {
            let row = &mut next[(layer * n + d) * n..(layer * n + d + 1) * n];
            // An unused layer copies layer 0 (its LIDs still need entries).
            let source = if layer < trees.used { layer } else { 0 };
            row.copy_from_slice(&trees.next[source * n..(source + 1) * n]);
            let mut queue: VecDeque<usize> = (0..n).filter(|&r| r == d || row[r] != NONE).collect();
            let mut seen: Vec<bool> = (0..n).map(|r| r == d || row[r] != NONE).collect();
            while let Some(x) = queue.pop_front() {
                for &(y, port) in &into[x] {
                    if !seen[y] {
                        seen[y] = true;
                        row[y] = port;
                        queue.push_back(y);
                    }
                }
            }
        }
    }
    LmcAssignment {
        lmc,
        num_routers: n,
        offset,
        layers_used,
        next,
    }
}

/// First channel-adapter LID with LMC `lmc`: after the switches' LIDs (`1..=n`), aligned to
/// `2^lmc` as InfiniBand requires of a base LID.
pub fn first_ca_lid(num_routers: usize, lmc: u8) -> usize {
    (num_routers + 1).next_multiple_of(1 << lmc)
}

/// Base LID of terminal `t`.
pub fn ca_base_lid(num_routers: usize, lmc: u8, t: usize) -> usize {
    first_ca_lid(num_routers, lmc) + (t << lmc)
}

/// The source-to-LID choice file: `source_router destination_router lid_offset` per line
/// after `#` comments (DLID = the destination port's base LID + offset).
pub fn to_lid_string(asg: &LmcAssignment) -> String {
    pair_values_string(
        &format!(
            "# fabricopt LID offsets: LMC {}, {} LIDs per port; a terminal on router s sends to \
             a terminal on router d at DLID = base LID of the destination port + offset(s, d)\n\
             # source_router destination_router lid_offset\n",
            asg.lmc,
            asg.num_layers()
        ),
        asg.num_routers,
        &asg.offset,
    )
}

/// Reads a LID-offset file for `n` routers and LMC `lmc`: every pair exactly once.
pub fn parse_lid_offsets(text: &str, path: &Path, n: usize, lmc: u8) -> Result<Vec<u8>> {
    check_lmc(lmc)?;
    parse_pair_values(text, path, n, "lid_offset", 1 << lmc)
}

/// What the fabric would do with LMC LFTs and LID offsets: every pair whose destination router
/// has a terminal is walked from its source to the destination's first terminal's LID plus
/// the pair's offset, and must arrive by that terminal's port. Pairs towards routers without
/// terminals (which no host addresses) keep the table's path. Errors name the switch where a
/// walk fails and the first pair whose walked path differs from `table`'s.
pub fn check_lmc_files(
    topo: &Topology,
    table: &RoutingTable,
    lfts: &LinearForwardingTables,
    lfts_path: &Path,
    offsets: &[u8],
    lmc: u8,
) -> Result<()> {
    let n = topo.num_routers();
    let by_router: Vec<&SwitchLft> = lfts.by_router(topo, lfts_path)?;
    let first_terminal: Vec<Option<usize>> = (0..n)
        .map(|r| topo.terminals.iter().position(|t| t.router == r))
        .collect();
    if offsets.len() != table.num_pairs() {
        return Err(Error::field(
            "lid_offset",
            format!("{} offsets for {} pairs", offsets.len(), table.num_pairs()),
        ));
    }
    for (pair, &offset) in offsets.iter().enumerate() {
        let (s, d) = pair_of(n, pair);
        let Some(t) = first_terminal[d] else {
            continue;
        };
        let dlid = ca_base_lid(n, lmc, t) + usize::from(offset);
        let dlid = u16::try_from(dlid)
            .map_err(|_| Error::parse(lfts_path, "file", format!("LID {dlid} is too large")))?;
        let walked = walk_lid(&by_router, topo, lfts_path, s, d, dlid)?;
        let arrive = by_router[d].ports.get(&dlid).copied();
        if arrive != Some(topo.terminals[t].port as u8 + 1) {
            return Err(Error::parse(
                lfts_path,
                format!("switch LID {}", d + 1),
                format!(
                    "LID {dlid} (terminal {t}) leaves by {arrive:?}, not its terminal's IB port {}",
                    topo.terminals[t].port + 1
                ),
            ));
        }
        if walked != *table.path(s, d) {
            return Err(Error::field(
                format!("pair {s} -> {d}"),
                format!(
                    "the LFTs at LID {dlid} (offset {}) route it {:?}, the table {:?}",
                    offsets[pair],
                    walked.routers,
                    table.path(s, d).routers
                ),
            ));
        }
    }
    Ok(())
}
