//! Q-adaptive routing on dragonflies (Kang et al., docs/sources.md §2): every router is an
//! independent learner with a two-level Q-table and decides at most twice per packet.
//!
//! Table: per router, rows (destination group, index of the packet's source node on its
//! router), columns the a - 1 local and h global ports (column = port - p); values estimate
//! the cycles to reach the destination group. Initially `init_direct` for a global port into
//! the row's group, `init_other` for the rest.
//!
//! Decisions, by where the packet is (`hops` = router hops taken):
//! 1. in the destination group: minimal;
//! 2. at the source router (`hops == 0`): best = argmin of the row (ties: lowest port),
//!    min = minimal port; min if best == min or (Q_min - Q_best) / Q_min < `q_thld1`, else
//!    best; then with probability `epsilon` a uniformly random network port instead;
//! 3. at the first intermediate-group router, reached in one (global) hop: minimal if it holds
//!    a global link to the destination group; else best := a random local port, the same rule
//!    with `q_thld2`, and epsilon;
//! 4. everywhere else: minimal.
//!
//! At most 5 router hops: a local port at the source leads to a router that routes minimally
//! (<= 4 hops in all); a global port leads to the first intermediate router, which adds at
//! most one port of its choosing before minimal routing (local-global-local) takes over.
//! The VC is the hop index, so 5 VCs and an acyclic channel dependency graph.
//!
//! Learning: when a packet's head reaches router y from router x (not from a terminal, x not
//! in the destination group), y sends x `r + Q_y`, with r the cycles from the head's arrival
//! at x's input to its arrival at y's input (the arrival cycle travels in `RouteState::aux`)
//! and Q_y the minimum of y's row (0 if y is in the destination group). The feedback crosses
//! the reverse link with its latency ([`FeedbackQueue`]); x then applies the hysteretic
//! update ([`Rates`]).

use std::sync::Arc;

use rand::Rng;

use super::feedback::{QTable, Rates, argmin};
use super::session::{Feedback, FeedbackAt, QModel, QSession};
use crate::error::{Error, Result};
use crate::routing::dragonfly::{DragonflyAlgorithm, DragonflyRouting};
use crate::routing::{
    Candidate, NO_ROUTER, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction,
    RoutingSession, VcRange,
};
use crate::topology::{Endpoint, Shape, Topology};

#[cfg(test)]
#[path = "q_adaptive_tests.rs"]
mod tests;

/// Most router-to-router hops of a Q-adaptive path, and VCs needed.
pub(crate) const MAX_HOPS: usize = 5;

/// Validated `[routing.q]` values (see [`super::QConfig`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct QAdaptiveParams {
    pub alpha: f32,
    pub beta: f32,
    pub epsilon: f64,
    pub q_thld1: f32,
    pub q_thld2: f32,
    pub init_direct: f32,
    pub init_other: f32,
    /// Integer Q-values, truncated at every update (`routing.q.integer_q`).
    pub integer_q: bool,
    /// When a hop's feedback is sent (`routing.q.feedback_at`).
    pub feedback_at: FeedbackAt,
}

/// What feeds a router's input port: the upstream router, the table column of its port, and
/// the link latency (= the feedback's delay). `router == NO_ROUTER` for terminals.
#[derive(Clone, Copy, Debug)]
struct Upstream {
    router: u32,
    col: u16,
    latency: u32,
}

/// The read-only part, shared by the routing function and its sessions.
#[derive(Debug)]
pub struct QAdaptiveModel {
    /// MIN's tables: groups, minimal ports, global links, ejection ports.
    df: DragonflyRouting,
    params: QAdaptiveParams,
    num_vcs: usize,
    /// Ports per router (index stride of `upstream`).
    k: usize,
    upstream: Vec<Upstream>,
    /// Connected network ports of each router (`net_ports[net_off[r]..net_off[r + 1]]`).
    net_ports: Vec<u16>,
    net_off: Vec<u32>,
    /// Index of each terminal's node on its router (its port).
    src_index: Vec<u8>,
    initial: QTable,
    blocks: [VcRange; MAX_HOPS],
    max_latency: u32,
}

impl QAdaptiveModel {
    fn net_ports(&self, r: usize) -> &[u16] {
        &self.net_ports[self.net_off[r] as usize..self.net_off[r + 1] as usize]
    }

    /// The table row of packet `pkt` (destination group `gd`).
    #[inline]
    fn row(&self, gd: usize, pkt: &PacketInfo) -> usize {
        gd * self.df.p + usize::from(self.src_index[pkt.src_terminal as usize])
    }

    /// The output port at `cur` (not the destination router) under Q-values `q`.
    fn choose(
        &self,
        q: &QTable,
        cur: usize,
        pkt: &PacketInfo,
        hops: u16,
        explore: bool,
        rng: &mut RouteRng,
    ) -> usize {
        let df = &self.df;
        let dst = pkt.dst_router as usize;
        let salt = pkt.src_terminal as usize + pkt.dst_terminal as usize;
        let min_port = df.port_to_router(cur, dst, salt);
        let (gc, gd) = (df.group(cur), df.group(dst));
        if gc == gd {
            return min_port;
        }
        let p = df.p;
        let row = self.row(gd, pkt);
        let (best, thld) = match hops {
            0 => (p + argmin(q.row(cur, row)), self.params.q_thld1),
            1 if gc != df.group(pkt.src_router as usize)
                && df.a > 1
                && !df.has_link_to(cur, gd) =>
            {
                (p + rng.random_range(0..df.a - 1), self.params.q_thld2)
            }
            _ => return min_port,
        };
        let temp = if best == min_port {
            min_port
        } else {
            let q_min = q.get(cur, row, min_port - p);
            let q_best = q.get(cur, row, best - p);
            if (q_min - q_best) / q_min < thld {
                min_port
            } else {
                best
            }
        };
        if explore && self.params.epsilon > 0.0 && rng.random::<f64>() < self.params.epsilon {
            let ports = self.net_ports(cur);
            usize::from(ports[rng.random_range(0..ports.len())])
        } else {
            temp
        }
    }
}

/// The Q-adaptive routing function. Used without a session (e.g. by path walkers) it routes
/// with its initial table and never learns; simulations run a [`QAdaptiveSession`].
#[derive(Clone, Debug)]
pub(crate) struct QAdaptive {
    shared: Arc<QAdaptiveModel>,
}

impl QAdaptive {
    pub(crate) fn new(topo: &Topology, num_vcs: usize, params: QAdaptiveParams) -> Result<Self> {
        if !matches!(topo.shape, Shape::Dragonfly { .. }) {
            return Err(Error::field(
                "routing.algorithm",
                format!(
                    "`q_adaptive` routes dragonflies only; topology `{}` is not a dragonfly",
                    topo.name
                ),
            ));
        }
        if num_vcs < MAX_HOPS {
            return Err(Error::field(
                "simulation.num_vcs",
                format!(
                    "routing `q_adaptive` needs at least {MAX_HOPS} VCs per channel (got {num_vcs})"
                ),
            ));
        }
        let df = DragonflyRouting::with_name(DragonflyAlgorithm::Min, "q_adaptive", topo, num_vcs)?;
        let (p, g) = (df.p, df.g);
        if p > usize::from(u8::MAX) + 1 {
            return Err(Error::field(
                "topology.p",
                format!("`q_adaptive` supports at most 256 terminals per router (got {p})"),
            ));
        }
        let n = topo.num_routers();
        let k = topo
            .routers
            .iter()
            .map(|r| r.ports.len())
            .max()
            .unwrap_or(0);
        let cols = k - p;
        let entries = n * g * p * cols;
        if entries > 1 << 26 {
            return Err(Error::field(
                "routing.algorithm",
                format!(
                    "`q_adaptive` needs {entries} Q-values per run (more than 2^26); topology \
                     `{}` is too large",
                    topo.name
                ),
            ));
        }
        let mut upstream = vec![
            Upstream {
                router: NO_ROUTER,
                col: 0,
                latency: 0,
            };
            n * k
        ];
        let mut net_ports = Vec::new();
        let mut net_off = vec![0u32];
        // The group each (router, column) port leads to, for the initial values.
        let mut leads_to = vec![u32::MAX; n * cols];
        for (y, router) in topo.routers.iter().enumerate() {
            for (port, link) in router.ports.iter().enumerate() {
                let (
                    Some(link),
                    Some(Endpoint::Router {
                        router: x,
                        port: xp,
                    }),
                ) = (link, topo.peer(y, port))
                else {
                    continue;
                };
                let latency = topo.links[*link].params.latency.max(1);
                upstream[y * k + port] = Upstream {
                    router: x as u32,
                    col: (xp - p) as u16,
                    latency,
                };
                net_ports.push(port as u16);
                leads_to[y * cols + port - p] = df.group(x) as u32;
            }
            net_off.push(net_ports.len() as u32);
        }
        let first_global = df.first_global;
        let initial = QTable::new(n, g * p, cols, |r, row, c| {
            let to = leads_to[r * cols + c];
            if to == u32::MAX {
                f32::INFINITY
            } else if p + c >= first_global && to as usize == row / p {
                params.init_direct
            } else {
                params.init_other
            }
        });
        let max_latency = upstream.iter().map(|u| u.latency).max().unwrap_or(1);
        let shared = QAdaptiveModel {
            params,
            num_vcs,
            k,
            upstream,
            net_ports,
            net_off,
            src_index: topo.terminals.iter().map(|t| t.port as u8).collect(),
            initial,
            blocks: std::array::from_fn(|c| {
                VcRange::new(c * num_vcs / MAX_HOPS, (c + 1) * num_vcs / MAX_HOPS)
            }),
            max_latency,
            df,
        };
        Ok(QAdaptive {
            shared: Arc::new(shared),
        })
    }
}

impl RoutingFunction for QAdaptive {
    fn name(&self) -> String {
        "q_adaptive".into()
    }

    fn min_vcs(&self) -> usize {
        MAX_HOPS
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
        // No randomness of its own: exploration draws from the engine's routing RNG.
        Some(Box::new(QSession::new(self.shared.clone())))
    }
}

/// One run's learning state: the Q-tables and the feedback in flight.
pub type QAdaptiveSession = QSession<QAdaptiveModel>;

impl QSession<QAdaptiveModel> {
    /// Router `router`'s current estimate for packets from node `src_index` of their router
    /// to group `dst_group` through `port` (a network port).
    pub fn q_value(&self, router: usize, dst_group: usize, src_index: usize, port: usize) -> f32 {
        let p = self.model.df.p;
        self.q.get(router, dst_group * p + src_index, port - p)
    }
}

impl QModel for QAdaptiveModel {
    const NAME: &'static str = "q_adaptive";

    fn initial(&self) -> &QTable {
        &self.initial
    }

    fn max_latency(&self) -> u32 {
        self.max_latency
    }

    fn rates(&self) -> Rates {
        Rates {
            alpha: self.params.alpha,
            beta: self.params.beta,
            integer: self.params.integer_q,
        }
    }

    fn feedback_at(&self) -> FeedbackAt {
        self.params.feedback_at
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
            .df
            .ejection
            .at_destination(ctx.router, pkt, self.num_vcs, out)
        {
            return;
        }
        let port = self.choose(q, ctx.router, pkt, state.hops, explore, rng);
        debug_assert!(usize::from(state.hops) < MAX_HOPS, "{state:?}");
        out.push(Candidate {
            port: port as u16,
            vcs: self.blocks[usize::from(state.hops).min(MAX_HOPS - 1)],
        });
    }

    fn feedback(
        &self,
        q: &QTable,
        router: usize,
        in_port: usize,
        pkt: &PacketInfo,
    ) -> Option<Feedback> {
        let up = self.upstream[router * self.k + in_port];
        if up.router == NO_ROUTER {
            return None; // from a terminal
        }
        let x = up.router as usize;
        let gd = self.df.group(pkt.dst_router as usize);
        if self.df.group(x) == gd {
            return None; // inside the destination group nothing is learned
        }
        let row = self.row(gd, pkt);
        let q_y = if self.df.group(router) == gd {
            0.0
        } else {
            q.row_min(router, row)
        };
        Some(Feedback {
            latency: up.latency,
            index: q.index(x, row, usize::from(up.col)),
            q_y,
        })
    }
}
