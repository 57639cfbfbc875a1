//! Classic Q-routing (Boyan & Littman 1993), the baseline Q-adaptive improves on, for any
//! topology.
//!
//! Table: per router, one row per destination router, one column per router-to-router port
//! (in ascending port order); values estimate the cycles to the destination. Initially
//! (1 + hops from the port's neighbour to the destination) x `init_hop`.
//!
//! Decision at every router but the destination: among the *allowed* ports, those from whose
//! neighbour the destination is at most `max_hops - hops - 1` hops away, the one of least
//! Q-value (ties: lowest port), or with probability `epsilon` a uniformly random allowed
//! port. The cut-off keeps every path within `max_hops` router hops, so the VC can be the hop
//! index and the channel dependency graph is acyclic (the paper's "maxQ" fix of Q-routing's
//! livelock and deadlock, §2.3.2).
//!
//! Learning: as in Q-adaptive (see `q_adaptive.rs`) with one rate: when the head reaches y
//! from x, y sends x `r + Q_y` (Q_y = min of y's row, 0 at the destination) over the reverse
//! link, and x applies `Q_x += alpha (r + Q_y - Q_x)`.

use std::sync::Arc;

use rand::Rng;

use super::feedback::{QTable, Rates};
use super::session::{Feedback, QModel, QSession};
use crate::error::{Error, Result};
use crate::routing::paths::{PortGraph, UNREACHED};
use crate::routing::{
    Candidate, Ejection, NO_ROUTER, PacketInfo, RouteContext, RouteRng, RouteState,
    RoutingFunction, RoutingSession, VcRange,
};
use crate::topology::{LinkKind, Topology};

/// Largest Q-table (entries of routers x routers x ports) Q-routing builds: 64 Mi values,
/// 256 MB per run; beyond that the per-destination table is the wrong tool.
const MAX_ENTRIES: usize = 1 << 26;

/// Validated `[routing.q]` values; `None` = the topology-dependent default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct QRoutingParams {
    pub alpha: f32,
    pub epsilon: f64,
    pub max_hops: Option<usize>,
    pub init_hop: Option<f32>,
}

/// What feeds a router's input port (see `q_adaptive.rs`).
#[derive(Clone, Copy, Debug)]
struct Upstream {
    router: u32,
    col: u16,
    latency: u32,
}

/// The read-only part, shared by the routing function and its sessions.
#[derive(Debug)]
pub struct QRoutingModel {
    graph: PortGraph,
    ejection: Ejection,
    num_vcs: usize,
    max_hops: usize,
    alpha: f32,
    epsilon: f64,
    routers: usize,
    /// Hop distances, `dist[from * routers + to]`.
    dist: Vec<u8>,
    /// Upstream of every (router, port), at `port_base[router] + port`.
    port_base: Vec<u32>,
    upstream: Vec<Upstream>,
    initial: QTable,
    blocks: Vec<VcRange>,
    max_latency: u32,
}

impl QRoutingModel {
    #[inline]
    fn dist(&self, from: usize, to: usize) -> usize {
        usize::from(self.dist[from * self.routers + to])
    }

    /// The port at `cur` (not `dst`) for a packet that has taken `hops` hops.
    fn choose(
        &self,
        q: &QTable,
        cur: usize,
        dst: usize,
        hops: usize,
        explore: bool,
        rng: &mut RouteRng,
    ) -> u16 {
        let out = self.graph.out(cur);
        let budget = self.max_hops.saturating_sub(hops + 1);
        let allowed = |i: usize| self.dist(out[i].peer as usize, dst) <= budget;
        let row = q.row(cur, dst);
        let mut best = usize::MAX;
        let mut count = 0;
        for i in (0..out.len()).filter(|&i| allowed(i)) {
            count += 1;
            if best == usize::MAX || row[i] < row[best] {
                best = i;
            }
        }
        if best == usize::MAX {
            // Only reachable with a state the simulator never produces (more hops taken than
            // the budget); the nearest port still makes progress.
            let nearest = (0..out.len())
                .min_by_key(|&i| self.dist(out[i].peer as usize, dst))
                .unwrap_or(0);
            return out[nearest].port;
        }
        if explore && self.epsilon > 0.0 && rng.random::<f64>() < self.epsilon {
            let k = rng.random_range(0..count);
            let i = (0..out.len())
                .filter(|&i| allowed(i))
                .nth(k)
                .unwrap_or(best);
            return out[i].port;
        }
        out[best].port
    }
}

/// The Q-routing function; without a session it routes with its initial table.
#[derive(Clone, Debug)]
pub(crate) struct QRouting {
    shared: Arc<QRoutingModel>,
}

impl QRouting {
    pub(crate) fn new(topo: &Topology, num_vcs: usize, params: QRoutingParams) -> Result<Self> {
        let n = topo.num_routers();
        let graph = PortGraph::new(topo);
        let cols = (0..n).map(|r| graph.out(r).len()).max().unwrap_or(0);
        let entries = n.saturating_mul(n).saturating_mul(cols);
        if entries > MAX_ENTRIES {
            return Err(Error::field(
                "routing.algorithm",
                format!(
                    "`q_routing` needs a Q-table of {n} x {n} routers x {cols} ports = \
                     {entries} values, more than {MAX_ENTRIES}; topology `{}` is too large",
                    topo.name
                ),
            ));
        }
        let mut dist = vec![0u8; n * n];
        let mut diameter = 0;
        for s in 0..n {
            let (d, _) = graph.bfs(s);
            for (t, &h) in d.iter().enumerate() {
                if h == UNREACHED {
                    return Err(Error::field(
                        "routing.algorithm",
                        format!(
                            "`q_routing` needs a connected topology; router {t} cannot be \
                             reached from router {s}"
                        ),
                    ));
                }
                // Longer distances exceed any max_hops (at most 255) and are rejected below.
                dist[s * n + t] = h.min(255) as u8;
                diameter = diameter.max(h as usize);
            }
        }
        let max_hops = match params.max_hops {
            Some(h) if h < diameter => {
                return Err(Error::field(
                    "routing.q.max_hops",
                    format!("must be at least the diameter {diameter} (got {h})"),
                ));
            }
            Some(h) => h,
            None if num_vcs.min(255) < diameter.max(1) => {
                return Err(Error::field(
                    "simulation.num_vcs",
                    format!(
                        "`q_routing` uses one VC per hop and needs at least the diameter \
                         {diameter} (got {num_vcs})"
                    ),
                ));
            }
            None => num_vcs.min(diameter + 2).min(255),
        };
        if max_hops > num_vcs {
            return Err(Error::field(
                "simulation.num_vcs",
                format!(
                    "routing `q_routing` with max_hops {max_hops} needs as many VCs (got {num_vcs})"
                ),
            ));
        }
        let network_links: Vec<u32> = topo
            .links
            .iter()
            .filter(|l| l.kind != LinkKind::Terminal)
            .map(|l| l.params.latency.max(1))
            .collect();
        let init_hop = params.init_hop.unwrap_or_else(|| {
            let sum: f64 = network_links.iter().map(|&l| f64::from(l)).sum();
            (sum / network_links.len().max(1) as f64).max(1.0) as f32
        });
        let mut port_base = vec![0u32];
        for r in &topo.routers {
            port_base.push(port_base.last().copied().unwrap_or(0) + r.ports.len() as u32);
        }
        let mut upstream = vec![
            Upstream {
                router: NO_ROUTER,
                col: 0,
                latency: 0,
            };
            port_base[n] as usize
        ];
        for x in 0..n {
            for (i, h) in graph.out(x).iter().enumerate() {
                let link = &topo.links[h.channel as usize / 2];
                upstream[(port_base[h.peer as usize] + u32::from(h.peer_port)) as usize] =
                    Upstream {
                        router: x as u32,
                        col: i as u16,
                        latency: link.params.latency.max(1),
                    };
            }
        }
        let initial = QTable::new(n, n, cols, |r, dst, c| match graph.out(r).get(c) {
            Some(h) => (1 + usize::from(dist[h.peer as usize * n + dst])) as f32 * init_hop,
            None => f32::INFINITY,
        });
        let max_latency = network_links.iter().copied().max().unwrap_or(1);
        let blocks = (0..max_hops)
            .map(|c| VcRange::new(c * num_vcs / max_hops, (c + 1) * num_vcs / max_hops))
            .collect();
        Ok(QRouting {
            shared: Arc::new(QRoutingModel {
                graph,
                ejection: Ejection::new(topo),
                num_vcs,
                max_hops,
                alpha: params.alpha,
                epsilon: params.epsilon,
                routers: n,
                dist,
                port_base,
                upstream,
                initial,
                blocks,
                max_latency,
            }),
        })
    }

    /// Most router hops of a path (= VCs needed).
    #[cfg(test)]
    pub(crate) fn max_hops(&self) -> usize {
        self.shared.max_hops
    }
}

impl RoutingFunction for QRouting {
    fn name(&self) -> String {
        "q_routing".into()
    }

    fn min_vcs(&self) -> usize {
        self.shared.max_hops
    }

    fn route(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let s = &*self.shared;
        s.route(&s.initial, ctx, pkt, state, true, rng, out);
    }

    fn learning_session(&self, _seed: u64) -> Option<Box<dyn RoutingSession>> {
        Some(Box::new(QSession::new(self.shared.clone())))
    }
}

/// One run's Q-tables and feedback in flight.
pub type QRoutingSession = QSession<QRoutingModel>;

impl QSession<QRoutingModel> {
    /// Router `router`'s current estimate to `dst` through its network `port`, if it has one.
    pub fn q_value(&self, router: usize, dst: usize, port: usize) -> Option<f32> {
        let col = self
            .model
            .graph
            .out(router)
            .iter()
            .position(|h| usize::from(h.port) == port)?;
        Some(self.q.get(router, dst, col))
    }
}

impl QModel for QRoutingModel {
    const NAME: &'static str = "q_routing";

    fn initial(&self) -> &QTable {
        &self.initial
    }

    fn max_latency(&self) -> u32 {
        self.max_latency
    }

    fn rates(&self) -> Rates {
        Rates {
            alpha: self.alpha,
            beta: self.alpha,
            integer: false,
        }
    }

    fn route(
        &self,
        q: &QTable,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &RouteState,
        explore: bool,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        if self
            .ejection
            .at_destination(ctx.router, pkt, self.num_vcs, out)
        {
            return;
        }
        let hops = usize::from(state.hops);
        let port = self.choose(q, ctx.router, pkt.dst_router as usize, hops, explore, rng);
        out.push(Candidate {
            port,
            vcs: self.blocks[hops.min(self.max_hops - 1)],
        });
    }

    fn feedback(
        &self,
        q: &QTable,
        router: usize,
        in_port: usize,
        pkt: &PacketInfo,
    ) -> Option<Feedback> {
        let up = self.upstream[self.port_base[router] as usize + in_port];
        if up.router == NO_ROUTER {
            return None; // from a terminal
        }
        let dst = pkt.dst_router as usize;
        let q_y = if router == dst {
            0.0
        } else {
            q.row_min(router, dst)
        };
        Some(Feedback {
            latency: up.latency,
            index: q.index(up.router as usize, dst, usize::from(up.col)),
            q_y,
        })
    }
}

#[cfg(test)]
mod tests {

    use rand::SeedableRng;

    use super::*;
    use crate::routing::paths::FreeNetwork;
    use crate::topology::Endpoint;

    use crate::topology::spec::test_topology as topo;

    fn params(epsilon: f64, max_hops: Option<usize>) -> QRoutingParams {
        QRoutingParams {
            alpha: 0.5,
            epsilon,
            max_hops,
            init_hop: Some(10.0),
        }
    }

    fn packet(t: &Topology, src: usize, dst: usize) -> PacketInfo {
        PacketInfo {
            id: 0,
            src_terminal: src as u32,
            dst_terminal: dst as u32,
            src_router: t.terminals[src].router as u32,
            dst_router: t.terminals[dst].router as u32,
            size: 1,
            class: 0,
        }
    }

    /// Follows the routing function from `src` to `dst`; returns (router, port, VCs) per hop.
    fn walk(
        rf: &dyn RoutingFunction,
        t: &Topology,
        src: usize,
        dst: usize,
        rng: &mut RouteRng,
    ) -> Vec<(usize, u16, VcRange)> {
        let view = FreeNetwork {
            num_vcs: 8,
            vc_depth: 4,
        };
        let pkt = packet(t, src, dst);
        let mut state = RouteState::default();
        let mut cur = pkt.src_router as usize;
        let mut hops = Vec::new();
        loop {
            let ctx = RouteContext {
                router: cur,
                in_port: 0,
                in_vc: 0,
                congestion: &view,
            };
            let mut out = Vec::new();
            rf.route(&ctx, &pkt, &mut state, rng, &mut out);
            assert_eq!(out.len(), 1);
            if cur == pkt.dst_router as usize {
                return hops;
            }
            hops.push((cur, out[0].port, out[0].vcs));
            assert!(hops.len() <= 64, "livelock: {hops:?}");
            state.hops += 1;
            match t.peer(cur, usize::from(out[0].port)) {
                Some(Endpoint::Router { router, .. }) => cur = router,
                other => panic!("left the network at {cur}: {other:?}"),
            }
        }
    }

    #[test]
    fn q_routing_random_walks_stay_within_max_hops_on_hop_indexed_vcs() {
        // epsilon = 1: every decision random among the allowed ports.
        let t = topo("torus:4x4");
        let rf = QRouting::new(&t, 8, params(1.0, Some(6))).unwrap();
        assert_eq!((rf.max_hops(), rf.min_vcs()), (6, 6));
        let mut rng = RouteRng::seed_from_u64(3);
        let mut longest = 0;
        for src in 0..16 {
            for dst in 0..16 {
                for _ in 0..20 {
                    let hops = walk(&rf, &t, src, dst, &mut rng);
                    longest = longest.max(hops.len());
                    for (i, &(_, _, vcs)) in hops.iter().enumerate() {
                        // 8 VCs over 6 classes: class i's block.
                        assert_eq!(vcs, VcRange::new(i * 8 / 6, (i + 1) * 8 / 6));
                    }
                }
            }
        }
        assert_eq!(longest, 6, "random walks use the whole budget");
    }

    #[test]
    fn q_routing_greedy_follows_the_table_and_defaults_fit_the_vcs() {
        let t = topo("torus:4x4");
        // Default max_hops = min(num_vcs, diameter + 2) = min(5, 6).
        let rf = QRouting::new(&t, 5, params(0.0, None)).unwrap();
        assert_eq!(rf.max_hops(), 5);
        let mut rng = RouteRng::seed_from_u64(1);
        // Initially the table is the hop distance: greedy = shortest path.
        let hops = walk(&rf, &t, 0, 10, &mut rng);
        assert_eq!(hops.len(), 4);
        // Too few VCs for the diameter (4 on a 4x4 torus), or too small a max_hops.
        let e = QRouting::new(&t, 3, params(0.0, None)).unwrap_err();
        assert!(e.to_string().starts_with("simulation.num_vcs: "), "{e}");
        let e = QRouting::new(&t, 8, params(0.0, Some(3))).unwrap_err();
        assert!(e.to_string().starts_with("routing.q.max_hops: "), "{e}");
        // One VC per hop: more hops than VCs cannot be.
        let e = QRouting::new(&t, 5, params(0.0, Some(6))).unwrap_err();
        assert!(e.to_string().starts_with("simulation.num_vcs: "), "{e}");
    }

    #[test]
    fn q_routing_feedback_updates_after_the_link_latency() {
        let t = topo("ring:6,local_latency=7");
        let rf = QRouting::new(&t, 5, params(0.0, None)).unwrap();
        let mut session = rf.learning_session(0).unwrap();
        // Router 0 -> router 1 -> router 2 (destination).
        let pkt = packet(&t, 0, 2);
        let port_01 = (0..t.routers[0].ports.len())
            .find(|&p| matches!(t.peer(0, p), Some(Endpoint::Router { router: 1, .. })))
            .unwrap();
        let in_1 = match t.peer(0, port_01) {
            Some(Endpoint::Router { port, .. }) => port,
            _ => unreachable!(),
        };
        let host = t.terminals[0].port;
        let mut state = RouteState::default();
        let q = |s: &dyn RoutingSession| {
            let s: &QRoutingSession = s.as_any().unwrap().downcast_ref().unwrap();
            s.q_value(0, 2, port_01).unwrap()
        };
        let before = q(session.as_ref());
        assert_eq!(before, 20.0, "2 hops x init_hop 10");
        session.advance(0);
        session.on_head_arrival(0, 0, host, &pkt, &mut state);
        for now in 1..40 {
            session.advance(now);
        }
        session.on_head_arrival(40, 1, in_1, &pkt, &mut state);
        // Target = r (40) + min of router 1's row for router 2 (1 hop x 10).
        for now in 40..47 {
            session.advance(now);
            assert_eq!(q(session.as_ref()), before, "cycle {now}: not yet");
        }
        session.advance(47);
        assert_eq!(q(session.as_ref()), before + 0.5 * (50.0 - before));
    }
}
