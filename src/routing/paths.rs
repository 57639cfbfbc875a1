//! Router-level paths: the port adjacency that table-driven routing is computed on, and
//! walkers that drive any [`RoutingFunction`] through the network without a simulator (every
//! buffer free), recording the hops it takes and the channel dependencies it creates. The
//! walkers are what proves a routing function deadlock-free with [`super::deadlock`]: build the
//! dependency graph of all pairs and check it is acyclic.

use std::collections::HashSet;

use rand::SeedableRng;

use super::deadlock::{DependencyGraph, VirtualChannel};
use super::{CongestionView, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction};
use crate::topology::{Endpoint, PortId, RouterId, TerminalId, Topology};

/// Marks an unreached router in hop-distance vectors.
pub(crate) const UNREACHED: u32 = u32::MAX;

/// One router-to-router port: `port` of the router leads over `channel` to `peer_port` of
/// `peer`. The reverse channel is `channel ^ 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortHop {
    pub port: u16,
    pub peer: u32,
    pub peer_port: u16,
    pub channel: u32,
}

/// The connected router-to-router ports of every router, in ascending port order (terminal
/// ports, unconnected ports and self-loops left out).
#[derive(Clone, Debug)]
pub(crate) struct PortGraph {
    offsets: Vec<u32>,
    hops: Vec<PortHop>,
}

impl PortGraph {
    pub(crate) fn new(topo: &Topology) -> Self {
        let mut offsets = vec![0u32];
        let mut hops = Vec::new();
        for (r, router) in topo.routers.iter().enumerate() {
            for port in 0..router.ports.len() {
                if let Some(Endpoint::Router {
                    router: peer,
                    port: peer_port,
                }) = topo.peer(r, port)
                {
                    if peer != r {
                        let channel = topo.out_channel(r, port).expect("connected port");
                        hops.push(PortHop {
                            port: port as u16,
                            peer: peer as u32,
                            peer_port: peer_port as u16,
                            channel: channel as u32,
                        });
                    }
                }
            }
            offsets.push(hops.len() as u32);
        }
        PortGraph { offsets, hops }
    }

    pub(crate) fn num_routers(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The router-to-router ports of `router`.
    #[inline]
    pub(crate) fn out(&self, router: usize) -> &[PortHop] {
        &self.hops[self.offsets[router] as usize..self.offsets[router + 1] as usize]
    }

    /// Hop distances from `src` (links are bidirectional, so also the distances to it) and
    /// the routers in BFS order.
    pub(crate) fn bfs(&self, src: usize) -> (Vec<u32>, Vec<u32>) {
        let mut dist = vec![UNREACHED; self.num_routers()];
        let mut order = Vec::with_capacity(self.num_routers());
        dist[src] = 0;
        order.push(src as u32);
        let mut head = 0;
        while head < order.len() {
            let u = order[head] as usize;
            head += 1;
            for h in self.out(u) {
                if dist[h.peer as usize] == UNREACHED {
                    dist[h.peer as usize] = dist[u] + 1;
                    order.push(h.peer);
                }
            }
        }
        (dist, order)
    }
}

/// Terminals attached to each router.
pub(crate) fn terminals_per_router(topo: &Topology) -> Vec<u32> {
    let mut count = vec![0u32; topo.num_routers()];
    for t in &topo.terminals {
        count[t.router] += 1;
    }
    count
}

/// A [`CongestionView`] of an empty network: every VC free, every buffer empty.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FreeNetwork {
    pub num_vcs: usize,
    pub vc_depth: u32,
}

impl CongestionView for FreeNetwork {
    fn num_vcs(&self) -> usize {
        self.num_vcs
    }
    fn vc_depth(&self) -> u32 {
        self.vc_depth
    }
    fn credits(&self, _router: usize, _port: usize, _vc: usize) -> u32 {
        self.vc_depth
    }
    fn output_vc_busy(&self, _router: usize, _port: usize, _vc: usize) -> bool {
        false
    }
    fn output_queue(&self, _router: usize, _port: usize) -> u32 {
        0
    }
    fn input_occupancy(&self, _router: usize, _port: usize, _vc: usize) -> u32 {
        0
    }
}

/// One hop of a walked path: the router, the output port taken and the VC granted there.
pub(crate) type Hop = (RouterId, PortId, usize);

/// Why a walk failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalkError {
    /// `route` returned no candidate (or only empty VC ranges / VCs beyond `num_vcs`).
    NoCandidate { router: RouterId },
    /// A candidate port is unconnected.
    Unconnected { router: RouterId, port: PortId },
    /// The packet was ejected to the wrong terminal.
    WrongTerminal {
        router: RouterId,
        terminal: TerminalId,
    },
    /// The injection VC range is empty.
    NoInjectionVc,
    /// The packet was not delivered within the hop limit.
    TooManyHops { limit: usize },
}

/// The packet a walker sends from `src` to `dst`.
pub fn packet(topo: &Topology, src: TerminalId, dst: TerminalId) -> PacketInfo {
    PacketInfo {
        id: (src * topo.num_terminals() + dst) as u32,
        src_terminal: src as u32,
        dst_terminal: dst as u32,
        src_router: topo.terminals[src].router as u32,
        dst_router: topo.terminals[dst].router as u32,
        size: 1,
        class: 0,
    }
}

/// Sends one packet through an empty network, taking the first candidate and its lowest VC at
/// every router, as the VC allocator would. Returns the hops (the last one ejects); at most
/// `max_hops` router-to-router hops are allowed.
pub(crate) fn walk_packet(
    routing: &dyn RoutingFunction,
    topo: &Topology,
    src: TerminalId,
    dst: TerminalId,
    num_vcs: usize,
    max_hops: usize,
) -> Result<Vec<Hop>, WalkError> {
    let seed = u64::from(packet(topo, src, dst).id);
    walk_packet_seeded(routing, topo, src, dst, num_vcs, max_hops, seed)
}

/// [`walk_packet`] with the routing rng seeded by `seed` instead of the packet id, so that a
/// randomised function (Valiant, ROMM, dragonfly VAL) can be sampled several times for the
/// same pair (the candidate-path generator of `table::candidates` does).
pub(crate) fn walk_packet_seeded(
    routing: &dyn RoutingFunction,
    topo: &Topology,
    src: TerminalId,
    dst: TerminalId,
    num_vcs: usize,
    max_hops: usize,
    seed: u64,
) -> Result<Vec<Hop>, WalkError> {
    let net = FreeNetwork {
        num_vcs,
        vc_depth: 8,
    };
    let pkt = packet(topo, src, dst);
    let mut state = RouteState::default();
    let mut rng = RouteRng::seed_from_u64(seed);
    routing.init_packet(&pkt, &mut state, &mut rng);
    let inj = routing.injection_vcs(&pkt, &state, num_vcs);
    if inj.is_empty() || inj.start as usize >= num_vcs {
        return Err(WalkError::NoInjectionVc);
    }
    let (mut router, mut in_port, mut in_vc) = (
        topo.terminals[src].router,
        topo.terminals[src].port,
        inj.start as usize,
    );
    let mut hops = Vec::new();
    let mut cands = Vec::new();
    loop {
        let ctx = RouteContext {
            router,
            in_port,
            in_vc,
            congestion: &net,
        };
        cands.clear();
        routing.route(&ctx, &pkt, &mut state, &mut rng, &mut cands);
        let chosen = *cands
            .iter()
            .find(|c| !c.vcs.is_empty() && (c.vcs.start as usize) < num_vcs)
            .ok_or(WalkError::NoCandidate { router })?;
        let (port, vc) = (chosen.port as usize, chosen.vcs.start as usize);
        routing.on_forward(&ctx, &pkt, chosen, vc, &mut state);
        state.hops = state.hops.saturating_add(1);
        hops.push((router, port, vc));
        match topo.peer(router, port) {
            None => return Err(WalkError::Unconnected { router, port }),
            Some(Endpoint::Terminal { terminal }) if terminal == dst => return Ok(hops),
            Some(Endpoint::Terminal { terminal }) => {
                return Err(WalkError::WrongTerminal { router, terminal });
            }
            Some(Endpoint::Router { router: r, port: p }) => {
                if hops.len() > max_hops {
                    return Err(WalkError::TooManyHops { limit: max_hops });
                }
                (router, in_port, in_vc) = (r, p, vc);
            }
        }
    }
}

/// Explores every choice the routing function offers a packet from `src` to `dst` (every
/// candidate, every VC of its range; a randomised `init_packet` is drawn once) and adds the
/// resulting dependencies, from the injection VC on, to `graph`. This is the dependency
/// graph an adaptive allocator can create, not just the first-choice path. Returns the number
/// of distinct packet states visited.
pub(crate) fn explore_dependencies(
    routing: &dyn RoutingFunction,
    topo: &Topology,
    src: TerminalId,
    dst: TerminalId,
    num_vcs: usize,
    max_hops: usize,
    graph: &mut DependencyGraph,
) -> Result<usize, WalkError> {
    type Key = (usize, usize, usize, u16, u32, u8, u8, u32);
    let key = |r: usize, p: usize, v: usize, s: &RouteState| -> Key {
        (r, p, v, s.hops, s.intermediate, s.phase, s.flags, s.aux)
    };
    let net = FreeNetwork {
        num_vcs,
        vc_depth: 8,
    };
    let pkt = packet(topo, src, dst);
    let mut state = RouteState::default();
    let mut rng = RouteRng::seed_from_u64(u64::from(pkt.id));
    routing.init_packet(&pkt, &mut state, &mut rng);
    let inj = routing.injection_vcs(&pkt, &state, num_vcs);
    let inj_channel = 2 * topo.terminals[src].link;
    let (r0, p0) = (topo.terminals[src].router, topo.terminals[src].port);
    let mut seen: HashSet<Key> = HashSet::new();
    let mut stack = Vec::new();
    for vc in inj.iter().filter(|&v| v < num_vcs) {
        if seen.insert(key(r0, p0, vc, &state)) {
            stack.push((
                r0,
                p0,
                vc,
                state,
                VirtualChannel::new(inj_channel, vc as u8),
            ));
        }
    }
    if stack.is_empty() {
        return Err(WalkError::NoInjectionVc);
    }
    let mut cands = Vec::new();
    while let Some((router, in_port, in_vc, st, held)) = stack.pop() {
        let ctx = RouteContext {
            router,
            in_port,
            in_vc,
            congestion: &net,
        };
        let mut st = st;
        cands.clear();
        routing.route(&ctx, &pkt, &mut st, &mut rng, &mut cands);
        let mut any = false;
        for &c in &cands {
            let port = c.port as usize;
            let channel = topo
                .out_channel(router, port)
                .ok_or(WalkError::Unconnected { router, port })?;
            for vc in c.vcs.iter().filter(|&v| v < num_vcs) {
                any = true;
                let mut next = st;
                routing.on_forward(&ctx, &pkt, c, vc, &mut next);
                next.hops = next.hops.saturating_add(1);
                graph.add_dependency(held, VirtualChannel::new(channel, vc as u8));
                match topo.peer(router, port) {
                    Some(Endpoint::Terminal { terminal }) if terminal == dst => {}
                    Some(Endpoint::Terminal { terminal }) => {
                        return Err(WalkError::WrongTerminal { router, terminal });
                    }
                    Some(Endpoint::Router { router: r, port: p }) => {
                        if next.hops as usize > max_hops {
                            return Err(WalkError::TooManyHops { limit: max_hops });
                        }
                        if seen.insert(key(r, p, vc, &next)) {
                            stack.push((r, p, vc, next, VirtualChannel::new(channel, vc as u8)));
                        }
                    }
                    None => return Err(WalkError::Unconnected { router, port }),
                }
            }
        }
        if !any {
            return Err(WalkError::NoCandidate { router });
        }
    }
    Ok(seen.len())
}

/// The dependency graph of all terminal pairs (`src != dst`): first-choice paths
/// ([`walk_packet`]) or, with `exhaustive`, every choice ([`explore_dependencies`]). On a
/// failed walk returns the pair and the error.
pub fn all_pairs_dependencies(
    routing: &dyn RoutingFunction,
    topo: &Topology,
    num_vcs: usize,
    max_hops: usize,
    exhaustive: bool,
) -> Result<DependencyGraph, (TerminalId, TerminalId, WalkError)> {
    let mut graph = DependencyGraph::new();
    let mut vcs = Vec::new();
    for src in 0..topo.num_terminals() {
        for dst in (0..topo.num_terminals()).filter(|&d| d != src) {
            if exhaustive {
                explore_dependencies(routing, topo, src, dst, num_vcs, max_hops, &mut graph)
                    .map_err(|e| (src, dst, e))?;
            } else {
                let hops = walk_packet(routing, topo, src, dst, num_vcs, max_hops)
                    .map_err(|e| (src, dst, e))?;
                vcs.clear();
                vcs.extend(hops.iter().map(|&(r, p, vc)| {
                    VirtualChannel::new(topo.out_channel(r, p).expect("walked port"), vc as u8)
                }));
                graph.add_path(&vcs);
            }
        }
    }
    Ok(graph)
}

/// Topologies and checks shared by the routing tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::topology::LinkParams;
    use crate::topology::generators::{
        DragonflyArrangement, cartesian, dragonfly, exanest, jellyfish,
    };

    /// The test topologies, by name.
    pub(crate) fn topologies() -> Vec<(&'static str, Topology)> {
        let lp = LinkParams::default();
        vec![
            ("torus 4x4", cartesian(&[4, 4], true, 1, &lp).unwrap()),
            (
                "dragonfly p2 a4 h2 g9",
                dragonfly(2, 4, 2, 9, DragonflyArrangement::Absolute, &lp).unwrap(),
            ),
            (
                "jellyfish 32x4 seed 1",
                jellyfish(32, 4, 1, 1, &lp).unwrap(),
            ),
            (
                "jellyfish 32x4 seed 7",
                jellyfish(32, 4, 1, 7, &lp).unwrap(),
            ),
            (
                "exanest 2,4,2",
                exanest(2, 4, 2, &[5, 17, 8, 22], 1, &lp).unwrap(),
            ),
        ]
    }

    /// Walks every terminal pair (first choices), calls `check` on each path and returns the
    /// dependency graph of all of them. Panics on a failed walk.
    pub(crate) fn walk_all(
        routing: &dyn RoutingFunction,
        topo: &Topology,
        num_vcs: usize,
        mut check: impl FnMut(TerminalId, TerminalId, &[Hop]),
    ) -> DependencyGraph {
        let mut graph = DependencyGraph::new();
        let max_hops = topo.num_routers() + 1;
        for src in 0..topo.num_terminals() {
            for dst in (0..topo.num_terminals()).filter(|&d| d != src) {
                let hops = walk_packet(routing, topo, src, dst, num_vcs, max_hops)
                    .unwrap_or_else(|e| panic!("{src} -> {dst}: {e:?}"));
                assert!(hops.iter().all(|h| h.2 < num_vcs));
                check(src, dst, &hops);
                let vcs = crate::routing::deadlock::path_virtual_channels(topo, &hops).unwrap();
                graph.add_path(&vcs);
            }
        }
        graph
    }
}
