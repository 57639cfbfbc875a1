//! Table-driven routing for any topology: `dfsssp` (deadlock-free single-source shortest
//! paths, Domke et al. 2011, with LASH-style layer assignment) and, in [`super::updown`],
//! `updown`.
//!
//! `dfsssp` builds a destination-based next-hop table: for each destination router `d`, a
//! shortest-path tree towards `d`, chosen among the minimal-hop next hops so that the sum of
//! the channel loads along the path is least, where the load of a channel is the number of
//! terminal pairs routed over it (destinations in id order, then two rip-up-and-reroute passes
//! that re-route each tree against the loads of all others). Every ordered router pair that
//! has terminals at both ends is then assigned a *layer*: first fit, pairs in a fixed order,
//! each into the first layer whose channel dependency graph stays acyclic with the pair's
//! actual (tree) path added (checked incrementally, see [`super::deadlock::IncrementalDag`]);
//! when every layer gets the same number of VCs, pairs are then moved out of the crowded low
//! layers while the target layer stays acyclic. A packet stays in its layer (`RouteState::aux`,
//! set by `init_packet`) from source to destination; layer `l` of `L` uses the contiguous VCs
//! [`layer_vcs`] `ceil(l*V/L) .. ceil((l+1)*V/L)` of every network channel (`V` VCs per
//! channel), so with `V == L` layer `l` is VC `l`. Any number of VCs inside one layer keeps it
//! acyclic: a cycle among them would project onto a cycle of the layer's channel graph.
//! Injection channels start no cycle, so packets may be injected on any VC; ejection uses all
//! VCs.

use std::collections::HashMap;

use super::config::RoutingConfig;
use super::deadlock::IncrementalDag;
use super::paths::{PortGraph, UNREACHED, terminals_per_router};
use super::updown::UpDown;
use super::{Candidate, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction, VcRange};
use crate::error::{Error, Result};
use crate::topology::Topology;

/// No next hop (the router itself, or unreachable).
const NO_PORT: u16 = u16::MAX;

/// Largest topology the `n^2` tables are built for.
pub(crate) const MAX_TABLE_ROUTERS: usize = 16_384;

/// Parameters of `dfsssp`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DfssspParams {
    /// Most VC layers to use (default: all VCs).
    pub max_layers: Option<usize>,
}

/// Parameters of `updown`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpDownParams {
    /// Root router (default: the router of least eccentricity, lowest id).
    pub root: Option<usize>,
}

/// Builds `dfsssp` or `updown` (registry: `crate::registry::routing`).
pub fn build(
    cfg: &RoutingConfig,
    topo: &Topology,
    num_vcs: usize,
) -> Result<Box<dyn RoutingFunction>> {
    match cfg.algorithm.as_str() {
        "dfsssp" => {
            let (limit, field) = match cfg.read_params::<DfssspParams>()?.max_layers {
                Some(0) => {
                    return Err(Error::field("routing.max_layers", "must be at least 1"));
                }
                Some(m) if m < num_vcs => (m, "routing.max_layers"),
                _ => (num_vcs, "simulation.num_vcs"),
            };
            let r = Dfsssp::new(topo, num_vcs)?;
            if r.num_layers() > limit {
                return Err(Error::field(
                    field,
                    format!(
                        "dfsssp needs {} deadlock-free layers (one VC each) on this topology, but \
                         only {limit} are available",
                        r.num_layers()
                    ),
                ));
            }
            Ok(Box::new(r))
        }
        "updown" => {
            let root = cfg.read_params::<UpDownParams>()?.root;
            Ok(Box::new(UpDown::new(topo, root)?))
        }
        _ => Err(cfg.not_in_family("layered shortest-path")),
    }
}

/// Checks the table size; shared with `updown`.
pub(crate) fn check_table_size(topo: &Topology, algorithm: &str) -> Result<()> {
    let n = topo.num_routers();
    if n > MAX_TABLE_ROUTERS {
        return Err(Error::field(
            "routing.algorithm",
            format!(
                "{algorithm} builds n^2 routing tables; the topology has {n} routers (at most \
                 {MAX_TABLE_ROUTERS})"
            ),
        ));
    }
    if let Some((r, _)) = topo
        .routers
        .iter()
        .enumerate()
        .find(|(_, r)| r.ports.len() >= usize::from(u16::MAX))
    {
        return Err(Error::field(
            "routing.algorithm",
            format!("{algorithm}: router {r} has more than 65534 ports"),
        ));
    }
    Ok(())
}

/// The VCs of layer `layer` out of `layers` when channels have `num_vcs` VCs: the contiguous
/// block `ceil(layer*V/L) .. ceil((layer+1)*V/L)`, so blocks differ by at most one VC and the
/// lower layers (which hold most pairs) get the spare ones. (With fewer VCs than layers the
/// configuration is invalid; the layer's own index is returned.)
pub(crate) fn layer_vcs(layer: usize, layers: usize, num_vcs: usize) -> VcRange {
    if num_vcs < layers || layers == 0 {
        return VcRange::single(layer);
    }
    let edge = |l: usize| (l * num_vcs).div_ceil(layers);
    VcRange::new(edge(layer), edge(layer + 1))
}

/// Deadlock-free, balanced shortest-path routing on layers of virtual channels.
#[derive(Clone, Debug)]
pub struct Dfsssp {
    n: usize,
    /// `next_port[router * n + dst]`: output port towards router `dst`, or `NO_PORT`.
    next_port: Vec<u16>,
    /// `layer[src * n + dst]`: the layer of the router pair (0 where no terminal pair exists).
    layer: Vec<u8>,
    layers: usize,
    ejection: super::Ejection,
}

impl Dfsssp {
    /// Computes the tables and the layers (as many as first fit needs; [`build`] checks them
    /// against the VCs available). When `num_vcs` is a multiple of that number (equal VC
    /// blocks), the pairs are then rebalanced across the layers; pass 0 to skip this. Errors
    /// if two routers with terminals are disconnected.
    pub fn new(topo: &Topology, num_vcs: usize) -> Result<Self> {
        check_table_size(topo, "dfsssp")?;
        let n = topo.num_routers();
        let graph = PortGraph::new(topo);
        let terms = terminals_per_router(topo);
        let num_channels = 2 * topo.links.len();
        let next_port = balanced_tables(&graph, &terms, num_channels, true)?;
        let (layer, layers) = assign_layers(&graph, &terms, &next_port, num_channels, num_vcs)?;
        Ok(Dfsssp {
            n,
            next_port,
            layer,
            layers,
            ejection: super::Ejection::new(topo),
        })
    }

    /// Layers (VCs) the routing needs.
    pub fn num_layers(&self) -> usize {
        self.layers
    }

    /// The layer of packets from router `src` to router `dst`.
    pub fn layer(&self, src: usize, dst: usize) -> usize {
        usize::from(self.layer[src * self.n + dst])
    }
}

/// Rip-up-and-reroute passes after the first DFSSSP pass: each re-routes every destination's
/// tree against the loads of all the others.
const REROUTE_PASSES: usize = 2;

/// Destination-based next-hop tables over minimal-hop paths, balanced by channel load (without
/// `balance`, every router takes its lowest minimal port).
fn balanced_tables(
    graph: &PortGraph,
    terms: &[u32],
    num_channels: usize,
    balance: bool,
) -> Result<Vec<u16>> {
    let n = graph.num_routers();
    let mut t = Trees {
        graph,
        terms,
        n,
        load: vec![0u64; num_channels],
        next_port: vec![NO_PORT; n * n],
        next_router: vec![u32::MAX; n],
        next_channel: vec![u32::MAX; n],
        cost: vec![0u64; n],
        acc: vec![0u64; n],
    };
    for d in 0..n {
        let (dist, order) = graph.bfs(d);
        if terms[d] > 0 {
            if let Some(s) = (0..n).find(|&s| terms[s] > 0 && dist[s] == UNREACHED) {
                return Err(Error::field(
                    "routing.algorithm",
                    format!(
                        "dfsssp: routers {s} and {d} both have terminals but are not connected"
                    ),
                ));
            }
        }
        t.route_tree(d, &dist, &order);
        if balance {
            t.add_tree_load(d, &order, true);
        }
    }
    for _ in 0..if balance { REROUTE_PASSES } else { 0 } {
        for d in 0..n {
            let (dist, order) = graph.bfs(d);
            t.add_tree_load(d, &order, false);
            t.route_tree(d, &dist, &order);
            t.add_tree_load(d, &order, true);
        }
    }
    Ok(t.next_port)
}

/// Working state of [`balanced_tables`].
struct Trees<'a> {
    graph: &'a PortGraph,
    terms: &'a [u32],
    n: usize,
    /// Terminal pairs routed over each channel.
    load: Vec<u64>,
    next_port: Vec<u16>,
    /// Scratch for the current destination.
    next_router: Vec<u32>,
    next_channel: Vec<u32>,
    cost: Vec<u64>,
    acc: Vec<u64>,
}

impl Trees<'_> {
    /// The tree towards `d`: in BFS order (so that every next hop is settled first), each
    /// router takes the minimal next hop with the least `load(channel) + cost(next hop)`.
    fn route_tree(&mut self, d: usize, dist: &[u32], order: &[u32]) {
        self.cost[d] = 0;
        for &u in &order[1..] {
            let u = u as usize;
            let mut best: Option<(u64, u16)> = None;
            for h in self.graph.out(u) {
                if dist[h.peer as usize] + 1 == dist[u] {
                    let c = self.load[h.channel as usize] + self.cost[h.peer as usize];
                    if best.is_none_or(|b| c < b.0) {
                        best = Some((c, h.port));
                    }
                }
            }
            let (c, port) = best.expect("a BFS-reached router has a parent");
            self.cost[u] = c;
            self.next_port[u * self.n + d] = port;
        }
    }

    /// Adds (or removes) the loads of the tree towards `d` stored in `next_port`: every
    /// terminal pair `(s, d)` counts once on each channel of its path.
    fn add_tree_load(&mut self, d: usize, order: &[u32], add: bool) {
        for &u in order {
            let u = u as usize;
            self.acc[u] = u64::from(self.terms[u]) * u64::from(self.terms[d]);
            if u != d {
                let port = self.next_port[u * self.n + d];
                let h = self.graph.out(u).iter().find(|h| h.port == port).unwrap();
                self.next_router[u] = h.peer;
                self.next_channel[u] = h.channel;
            }
        }
        for &u in order[1..].iter().rev() {
            let u = u as usize;
            let load = &mut self.load[self.next_channel[u] as usize];
            if add {
                *load += self.acc[u];
            } else {
                *load -= self.acc[u];
            }
            self.acc[self.next_router[u] as usize] += self.acc[u];
        }
    }
}

/// The network channels of the table path from `s` to `d`.
fn table_path(graph: &PortGraph, next_port: &[u16], s: usize, d: usize, out: &mut Vec<usize>) {
    let n = graph.num_routers();
    out.clear();
    let mut u = s;
    while u != d {
        let port = next_port[u * n + d];
        let h = graph.out(u).iter().find(|h| h.port == port).unwrap();
        out.push(h.channel as usize);
        u = h.peer as usize;
    }
}

/// Layer assignment of the router pairs with terminals at both ends: first fit, then (with
/// enough VCs) rebalancing. Returns the per-pair layer table and the number of layers.
fn assign_layers(
    graph: &PortGraph,
    terms: &[u32],
    next_port: &[u16],
    num_channels: usize,
    num_vcs: usize,
) -> Result<(Vec<u8>, usize)> {
    let n = graph.num_routers();
    let ctx = LayerCtx {
        graph,
        next_port,
        num_channels,
    };
    // (hops, d, s)
    let mut pairs: Vec<(u32, u32, u32)> = Vec::new();
    let mut path = Vec::new();
    for d in (0..n).filter(|&d| terms[d] > 0) {
        for s in (0..n).filter(|&s| s != d && terms[s] > 0) {
            table_path(graph, next_port, s, d, &mut path);
            pairs.push((path.len() as u32, d as u32, s as u32));
        }
    }
    // First fit depends on the order; a few fixed orders are tried and the first with the
    // fewest layers kept: destination-major, longest paths first, source-major.
    let mut best: Option<(Vec<u8>, usize, usize)> = None;
    for order in 0..3 {
        match order {
            0 => pairs.sort_unstable_by_key(|&(_, d, s)| (d, s)),
            1 => pairs.sort_unstable_by_key(|&(len, d, s)| (std::cmp::Reverse(len), d, s)),
            _ => pairs.sort_unstable_by_key(|&(_, d, s)| (s, d)),
        }
        let (layer, layers) = ctx.first_fit(&pairs)?;
        if best.as_ref().is_none_or(|b| layers < b.1) {
            best = Some((layer, layers, order));
        }
    }
    let (mut layer, layers, _) = best.expect("three orders tried");
    // Rebalance only when every layer has a VC block of the same size: then first fit's
    // crowded layer 0 would leave the other blocks idle. With unequal blocks the larger ones
    // go to the lowest layers, which first fit fills most (measured in the simulator: spreading
    // the pairs evenly there costs up to 40% of saturation throughput, while with equal blocks
    // it gains up to 60%).
    if layers > 1 && num_vcs >= layers && num_vcs % layers == 0 {
        pairs.sort_unstable_by_key(|&(_, d, s)| (d, s));
        let weight = |&(len, d, s): &(u32, u32, u32)| {
            u64::from(len) * u64::from(terms[s as usize]) * u64::from(terms[d as usize])
        };
        ctx.rebalance(&pairs, &mut layer, layers, weight);
    }
    Ok((layer, layers))
}

struct LayerCtx<'a> {
    graph: &'a PortGraph,
    next_port: &'a [u16],
    num_channels: usize,
}

impl LayerCtx<'_> {
    /// The channel dependencies of the pair's table path.
    fn deps(&self, s: usize, d: usize, path: &mut Vec<usize>, deps: &mut Vec<(usize, usize)>) {
        table_path(self.graph, self.next_port, s, d, path);
        deps.clear();
        deps.extend(path.windows(2).map(|w| (w[0], w[1])));
    }

    /// Places each pair, in the given order, into the first layer that stays acyclic.
    fn first_fit(&self, pairs: &[(u32, u32, u32)]) -> Result<(Vec<u8>, usize)> {
        let n = self.graph.num_routers();
        let (mut path, mut deps) = (Vec::new(), Vec::new());
        let mut layer = vec![0u8; n * n];
        let mut dags: Vec<IncrementalDag> = Vec::new();
        for &(_, d, s) in pairs {
            let (s, d) = (s as usize, d as usize);
            self.deps(s, d, &mut path, &mut deps);
            let mut l = 0;
            loop {
                if l == dags.len() {
                    if l == usize::from(u8::MAX) {
                        return Err(Error::field(
                            "routing.algorithm",
                            "dfsssp needs more than 255 layers",
                        ));
                    }
                    dags.push(IncrementalDag::new(self.num_channels));
                }
                if dags[l].try_add_all(&deps) {
                    break;
                }
                l += 1;
            }
            layer[s * n + d] = l as u8;
        }
        Ok((layer, dags.len().max(1)))
    }

    /// First fit crowds layer 0. Moves pairs (two passes in the given order) to the least
    /// loaded layer when that lowers the load of the pair's layer and the target layer stays
    /// acyclic; the source layer loses the dependencies no other pair of it uses.
    /// Load = hops x terminal pairs.
    fn rebalance(
        &self,
        pairs: &[(u32, u32, u32)],
        layer: &mut [u8],
        layers: usize,
        weight: impl Fn(&(u32, u32, u32)) -> u64,
    ) {
        let n = self.graph.num_routers();
        let (mut path, mut deps) = (Vec::new(), Vec::new());
        let mut dags: Vec<IncrementalDag> = (0..layers)
            .map(|_| IncrementalDag::new(self.num_channels))
            .collect();
        let mut uses: Vec<HashMap<(usize, usize), u32>> = vec![HashMap::new(); layers];
        let mut load = vec![0u64; layers];
        for p in pairs {
            let (s, d) = (p.2 as usize, p.1 as usize);
            let l = usize::from(layer[s * n + d]);
            self.deps(s, d, &mut path, &mut deps);
            assert!(
                dags[l].try_add_all(&deps),
                "first fit left layer {l} acyclic"
            );
            for &e in &deps {
                *uses[l].entry(e).or_default() += 1;
            }
            load[l] += weight(p);
        }
        let mut targets: Vec<usize> = Vec::new();
        for _ in 0..2 {
            for p in pairs {
                let (s, d) = (p.2 as usize, p.1 as usize);
                let from = usize::from(layer[s * n + d]);
                let w = weight(p);
                // Only to a layer that ends below the source's current load, least loaded first.
                targets.clear();
                targets.extend((0..layers).filter(|&t| t != from && load[t] + w < load[from]));
                targets.sort_by_key(|&t| (load[t], t));
                self.deps(s, d, &mut path, &mut deps);
                let Some(&to) = targets.iter().find(|&&t| dags[t].try_add_all(&deps)) else {
                    continue;
                };
                for &e in &deps {
                    *uses[to].entry(e).or_default() += 1;
                    let left = uses[from].get_mut(&e).expect("counted");
                    *left -= 1;
                    if *left == 0 {
                        uses[from].remove(&e);
                        dags[from].remove_edge(e.0, e.1);
                    }
                }
                load[from] -= w;
                load[to] += w;
                layer[s * n + d] = to as u8;
            }
        }
    }
}

impl RoutingFunction for Dfsssp {
    fn name(&self) -> String {
        "dfsssp".into()
    }

    fn min_vcs(&self) -> usize {
        self.layers
    }

    /// Stores the pair's layer in `state.aux`.
    fn init_packet(&self, pkt: &PacketInfo, state: &mut RouteState, _rng: &mut RouteRng) {
        state.aux =
            u32::from(self.layer[pkt.src_router as usize * self.n + pkt.dst_router as usize]);
    }

    fn route(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        _rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let v = ctx.congestion.num_vcs();
        let d = pkt.dst_router as usize;
        if self.ejection.at_destination(ctx.router, pkt, v, out) {
            return;
        }
        let port = self.next_port[ctx.router * self.n + d];
        if port != NO_PORT {
            out.push(Candidate {
                port,
                vcs: layer_vcs(state.aux as usize, self.layers, v),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::routing::build_routing;
    use crate::routing::paths::fixtures::{topologies, walk_all};
    use crate::routing::paths::{PortGraph, terminals_per_router};
    use crate::routing::paths::{all_pairs_dependencies, walk_packet};
    use crate::topology::LinkParams;
    use crate::topology::generators::cartesian;
    use crate::topology::metrics::distances_from;

    fn cfg(algorithm: &str) -> RoutingConfig {
        RoutingConfig::new(algorithm)
    }

    /// Walks all pairs: delivered, minimal, VCs inside the pair's layer, CDG acyclic.
    fn check_dfsssp(name: &str, topo: &Topology, extra_vcs: usize) -> usize {
        let layers = Dfsssp::new(topo, 0).unwrap().num_layers();
        let num_vcs = layers + extra_vcs;
        let r = Dfsssp::new(topo, num_vcs).unwrap();
        assert_eq!(r.num_layers(), layers);
        let g = topo.router_graph();
        let dist: Vec<Vec<Option<u32>>> = (0..topo.num_routers())
            .map(|s| distances_from(&g, s))
            .collect();
        let graph = walk_all(&r, topo, num_vcs, |src, dst, hops| {
            let (s, d) = (topo.terminals[src].router, topo.terminals[dst].router);
            assert_eq!(
                hops.len() as u32 - 1,
                dist[s][d].unwrap(),
                "{name}: {s}->{d} minimal"
            );
            let block = layer_vcs(r.layer(s, d), layers, num_vcs);
            for &(_, _, vc) in &hops[..hops.len() - 1] {
                assert!(block.contains(vc), "{name}: vc {vc} outside {block:?}");
            }
        });
        assert_eq!(graph.find_cycle(), None, "{name}: first-choice CDG");
        // Every VC of every block, as an adaptive VC allocator may use them.
        let full = all_pairs_dependencies(&r, topo, num_vcs, topo.num_routers(), true).unwrap();
        assert_eq!(
            full.find_cycle(),
            None,
            "{name}: full CDG with {num_vcs} VCs"
        );
        layers
    }

    #[test]
    fn dfsssp_is_minimal_and_deadlock_free_on_test_topologies() {
        for (name, topo) in topologies() {
            let layers = check_dfsssp(name, &topo, 0);
            println!("dfsssp layers on {name}: {layers}");
            check_dfsssp(name, &topo, 1);
            check_dfsssp(name, &topo, layers);
        }
    }

    #[test]
    fn dfsssp_torus_needs_two_layers() {
        let topo = cartesian(&[4, 4], true, 1, &LinkParams::default()).unwrap();
        assert_eq!(Dfsssp::new(&topo, 0).unwrap().num_layers(), 2);
        let err = build_routing(&cfg("dfsssp"), &topo, 1)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("simulation.num_vcs:") && err.contains("needs 2"),
            "{err}"
        );
        let limited = cfg("dfsssp").with("max_layers", 1);
        let err = build_routing(&limited, &topo, 4).err().unwrap().to_string();
        assert!(
            err.starts_with("routing.max_layers:") && err.contains("needs 2"),
            "{err}"
        );
        let r = build_routing(&cfg("dfsssp"), &topo, 2).unwrap();
        assert_eq!((r.name().as_str(), r.min_vcs()), ("dfsssp", 2));
    }

    #[test]
    fn single_layer_shortest_paths_on_torus_are_cyclic() {
        let topo = cartesian(&[4, 4], true, 1, &LinkParams::default()).unwrap();
        let mut r = Dfsssp::new(&topo, 0).unwrap();
        r.layer.fill(0);
        r.layers = 1;
        let graph = walk_all(&r, &topo, 1, |_, _, _| {});
        let cycle = graph
            .find_cycle()
            .expect("the checker must catch the cycle");
        // The cycle is a closed walk of channels: each ends at the router the next starts at.
        let router = |e| match e {
            crate::topology::Endpoint::Router { router, .. } => router,
            _ => panic!("terminal channel in a cycle"),
        };
        for (i, a) in cycle.iter().enumerate() {
            let b = cycle[(i + 1) % cycle.len()];
            let (end, start) = (
                topo.channel_ends(a.channel).1,
                topo.channel_ends(b.channel).0,
            );
            assert_eq!(router(end), router(start));
        }
    }

    #[test]
    fn registry_and_layer_mapping() {
        let topo = cartesian(&[3, 3], false, 1, &LinkParams::default()).unwrap();
        assert!(build(&cfg("dor"), &topo, 4).is_err());
        assert!(build(&cfg("updown"), &topo, 1).is_ok());
        let zero = cfg("dfsssp").with("max_layers", 0);
        assert!(build(&zero, &topo, 2).is_err());
        assert_eq!(layer_vcs(0, 2, 2), VcRange::new(0, 1));
        assert_eq!(layer_vcs(0, 2, 5), VcRange::new(0, 3));
        assert_eq!(layer_vcs(1, 2, 5), VcRange::new(3, 5));
        assert_eq!(layer_vcs(2, 3, 4), VcRange::new(3, 4));
        assert_eq!(layer_vcs(0, 1, 4), VcRange::new(0, 4));
        // A mesh needs one layer; ejection is offered on all VCs.
        let r = Dfsssp::new(&topo, 0).unwrap();
        assert_eq!(r.num_layers(), 1);
        let hops = walk_packet(&r, &topo, 0, 8, 3, 10).unwrap();
        assert_eq!(hops.len(), 5);
        assert_eq!(hops.last().unwrap().1, topo.terminals[8].port);
    }

    #[test]
    fn dfsssp_rebalances_layers_with_equal_blocks() {
        for (name, topo) in topologies() {
            let layers = Dfsssp::new(&topo, 0).unwrap().num_layers();
            let share = |num_vcs: usize| {
                let r = Dfsssp::new(&topo, num_vcs).unwrap();
                let mut count = vec![0usize; layers];
                for (s, d) in (0..topo.num_routers())
                    .flat_map(|s| (0..topo.num_routers()).map(move |d| (s, d)))
                {
                    if s != d {
                        count[r.layer(s, d)] += 1;
                    }
                }
                count
            };
            let (first_fit, rebalanced) = (share(layers + 1), share(layers));
            println!("{name}: pairs per layer: first fit {first_fit:?}, rebalanced {rebalanced:?}");
            let spread = |c: &[usize]| c.iter().max().unwrap() - c.iter().min().unwrap();
            assert!(
                spread(&rebalanced) < spread(&first_fit) || layers == 1,
                "{name}"
            );
        }
    }

    /// Router pairs routed over each channel by a next-hop table.
    fn channel_loads(topo: &Topology, next_port: &[u16]) -> Vec<u32> {
        let graph = PortGraph::new(topo);
        let n = topo.num_routers();
        let mut load = vec![0u32; 2 * topo.links.len()];
        let mut path = Vec::new();
        for s in 0..n {
            for d in (0..n).filter(|&d| d != s) {
                table_path(&graph, next_port, s, d, &mut path);
                for &c in &path {
                    load[c] += 1;
                }
            }
        }
        load
    }

    #[test]
    fn dfsssp_balances_channel_load() {
        for (name, topo) in topologies() {
            let graph = PortGraph::new(&topo);
            let terms = terminals_per_router(&topo);
            let channels = 2 * topo.links.len();
            let max = |balance| {
                let table = balanced_tables(&graph, &terms, channels, balance).unwrap();
                *channel_loads(&topo, &table).iter().max().unwrap()
            };
            let (balanced, lowest_port) = (max(true), max(false));
            println!("{name}: max channel load {balanced} (lowest-port tables: {lowest_port})");
            assert!(balanced <= lowest_port, "{name}");
        }
        // The torus has many shortest paths: all-pairs load 512 hops over 64 channels.
        let topo = cartesian(&[4, 4], true, 1, &LinkParams::default()).unwrap();
        let r = Dfsssp::new(&topo, 0).unwrap();
        let load = channel_loads(&topo, &r.next_port);
        let network: Vec<u32> = load.into_iter().filter(|&l| l > 0).collect();
        assert_eq!(network.iter().sum::<u32>(), 512);
        assert_eq!(
            *network.iter().max().unwrap(),
            8,
            "perfectly balanced: {network:?}"
        );
    }
}
