//! DQN-routing on a 2-D torus (docs/sources.md §1; the DQN-routing thesis).
//!
//! VCs: 0 and 1 are DOR's escape VCs (dateline rule), 2 is the adaptive VC. At every router
//! a packet that is not marked `Pdor` asks its agent (one per X-ring by default, shared by
//! the ring's routers) for an adaptive output channel (X-, X+, Y-, Y+; non-minimal allowed).
//! The router rejects the proposal when that adaptive output VC is held by another packet or
//! the downstream VC cannot take the whole packet (virtual cut-through); a rejected packet,
//! or one that reached the hop cap, is marked `Pdor` and follows DOR on the escape VCs for
//! the rest of its path. Adaptive packets therefore never wait on adaptive VCs for long (a
//! granted VC is freed once its packet, which fits downstream, has passed) and the escape
//! network is DOR's: deadlock free.
//!
//! Every router a packet crosses records a pending entry (packet serial, decision time,
//! distance to the destination, episode, input port). When the head reaches the destination
//! terminal, a control packet (the ack, `ack_flits` flits, on the escape VCs) retraces the
//! path backwards through these entries (last in, first out per packet, so loops retrace
//! too); at each router with a decision it pays the reward `minimal hops from the deciding
//! router / cycles from the decision to the head's arrival` and closes the episode (a
//! terminal transition for the agent). The ack is ejected at the source terminal.
//!
//! Routing state of data packets: `intermediate` = packet serial, `aux` = DOR dateline bits
//! (from the switch to `Pdor` on), `flags` & [`PDOR`]; of acks: `intermediate` = the acked
//! packet's serial, `aux` = low 32 bits of the cycle its head reached the destination.

use std::any::Any;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::learn::dqn::{DqnAgent, DqnConfig, Transition};
use crate::routing::cartesian::{CartesianAlgorithm, CartesianRouting};
use crate::routing::{
    CONTROL_CLASS, Candidate, ControlPacket, PacketInfo, RouteContext, RouteRng, RouteState,
    RoutingFunction, RoutingSession, SessionHooks, VcRange,
};
use crate::topology::{Shape, Topology};

/// The packet follows DOR on the escape VCs for the rest of its path.
pub(crate) const PDOR: u8 = 0x80;
/// The adaptive VC.
const ADAPTIVE_VC: usize = 2;
/// Observation length: 4 coordinates, the packet size, 4 local and 4 neighbour occupancies.
pub(crate) const OBSERVATION: usize = 13;
/// Actions: the adaptive channels X-, X+, Y-, Y+.
pub const ACTIONS: usize = 4;
const NO_EPISODE: u32 = u32::MAX;

/// Which routers share an agent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentScope {
    /// One agent per X-ring (an ExaNeSt mezzanine), the thesis's choice.
    #[default]
    XRing,
    /// One agent per router.
    Router,
    /// One agent for the whole network.
    Network,
}

/// How decisions are made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Epsilon-greedy with the DQN agent, learning from every ack.
    #[default]
    Learn,
    /// A uniformly random adaptive channel (the same rejection rule); a baseline.
    Random,
}

/// When the router rejects the agent's proposal (the packet then goes `Pdor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejection {
    /// The output port is forwarding another packet, or the downstream adaptive VC cannot
    /// take the whole packet (docs/sources.md §1).
    #[default]
    BusyOrFull,
    /// Both at once (the thesis's text, §3.2): a proposal is kept while either the port is
    /// free or the packet fits downstream.
    BusyAndFull,
}

/// How acks travel back to the deciding routers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckTransport {
    /// Control packets retracing the path on the escape VCs (the thesis): they load links
    /// and buffers, and their reverse paths are not DOR paths, so the escape network's
    /// deadlock freedom no longer covers them.
    #[default]
    Network,
    /// Every decision on the path is rewarded the moment the head reaches the destination,
    /// without traffic: deadlock-free.
    Ideal,
}

/// The `[routing.dqn]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DqnRoutingConfig {
    /// Router hops after which a packet is forced to DOR (default 2 x the network diameter).
    pub hop_cap: Option<u16>,
    /// Flits of an ack (header, payload, footer).
    pub ack_flits: u32,
    /// How acks travel (`network`, the thesis's, or `ideal`).
    pub acks: AckTransport,
    /// Extra cycles a decision takes (inference), on top of the router's routing delay.
    pub decision_delay: u32,
    pub agent_scope: AgentScope,
    pub policy: Policy,
    pub reject_when: Rejection,
    /// The largest packet, in flits, for normalising the size in the observation.
    pub max_packet_flits: u32,
    /// The DQN agent's settings (`[routing.dqn.agent]`).
    pub agent: DqnConfig,
}

impl Default for DqnRoutingConfig {
    fn default() -> Self {
        DqnRoutingConfig {
            hop_cap: None,
            ack_flits: 3,
            acks: AckTransport::Network,
            decision_delay: 0,
            agent_scope: AgentScope::XRing,
            policy: Policy::Learn,
            reject_when: Rejection::BusyOrFull,
            max_packet_flits: 258,
            agent: DqnConfig::default(),
        }
    }
}

/// What the routing function and its sessions share.
#[derive(Debug)]
struct Geometry {
    kx: usize,
    ky: usize,
    /// Terminal ports per router (network ports follow).
    c: usize,
    num_vcs: usize,
    hop_cap: u16,
    dor: CartesianRouting,
    config: DqnRoutingConfig,
}

impl Geometry {
    fn xy(&self, r: usize) -> (usize, usize) {
        (r % self.kx, r / self.kx)
    }

    /// The router one hop from `r` along action `a` (X-, X+, Y-, Y+).
    fn neighbour(&self, r: usize, a: usize) -> usize {
        let (x, y) = self.xy(r);
        let (kx, ky) = (self.kx, self.ky);
        let (x, y) = match a {
            0 => ((x + kx - 1) % kx, y),
            1 => ((x + 1) % kx, y),
            2 => (x, (y + ky - 1) % ky),
            _ => (x, (y + 1) % ky),
        };
        x + kx * y
    }

    /// Minimal hops between routers `a` and `b`.
    fn distance(&self, a: usize, b: usize) -> u32 {
        let ring = |p: usize, q: usize, k: usize| {
            let d = p.abs_diff(q);
            d.min(k - d) as u32
        };
        let ((ax, ay), (bx, by)) = (self.xy(a), self.xy(b));
        ring(ax, bx, self.kx) + ring(ay, by, self.ky)
    }

    fn agent_of(&self, r: usize) -> usize {
        match self.config.agent_scope {
            AgentScope::XRing => r / self.kx,
            AgentScope::Router => r,
            AgentScope::Network => 0,
        }
    }

    fn num_agents(&self) -> usize {
        match self.config.agent_scope {
            AgentScope::XRing => self.ky,
            AgentScope::Router => self.kx * self.ky,
            AgentScope::Network => 1,
        }
    }

    /// The 13-float observation of docs/sources.md §1, each entry in [0, 1].
    fn observe(&self, ctx: &RouteContext, pkt: &PacketInfo) -> [f32; OBSERVATION] {
        let r = ctx.router;
        let view = ctx.congestion;
        let depth = view.vc_depth().max(1) as f32;
        // Fill of the adaptive VC downstream of `router`'s output `a`.
        let fill = |router: usize, a: usize| {
            let free = view.credits(router, self.c + a, ADAPTIVE_VC) as f32;
            ((depth - free) / depth).clamp(0.0, 1.0)
        };
        let (x, y) = self.xy(r);
        let (dx, dy) = self.xy(pkt.dst_router as usize);
        let mut obs = [0f32; OBSERVATION];
        obs[0] = x as f32 / self.kx as f32;
        obs[1] = y as f32 / self.ky as f32;
        obs[2] = dx as f32 / self.kx as f32;
        obs[3] = dy as f32 / self.ky as f32;
        obs[4] = (pkt.size as f32 / self.config.max_packet_flits as f32).min(1.0);
        for a in 0..ACTIONS {
            obs[5 + a] = fill(r, a);
            // The neighbour's outlook: the mean fill of its own adaptive outputs.
            let n = self.neighbour(r, a);
            obs[9 + a] = (0..ACTIONS).map(|b| fill(n, b)).sum::<f32>() / ACTIONS as f32;
        }
        obs
    }
}

/// DQN-routing (see the module documentation); learning happens in its sessions.
#[derive(Debug)]
pub struct DqnRouting {
    geo: Arc<Geometry>,
}

impl DqnRouting {
    pub fn new(topo: &Topology, num_vcs: usize, config: DqnRoutingConfig) -> Result<Self> {
        let Shape::Cartesian { dims, wrap } = &topo.shape else {
            return Err(Error::field(
                "routing.algorithm",
                format!("`dqn` routes 2-D tori only; `{}` is not one", topo.name),
            ));
        };
        if dims.len() != 2 || !wrap {
            return Err(Error::field(
                "routing.algorithm",
                format!("`dqn` routes 2-D tori only; `{}` is not one", topo.name),
            ));
        }
        config.agent.validate("routing.dqn.agent")?;
        let max_flits = crate::traffic::MAX_PACKET_FLITS;
        if config.ack_flits == 0 || config.ack_flits > max_flits {
            return Err(Error::field(
                "routing.dqn.ack_flits",
                format!("must be 1 to {max_flits} flits (got {})", config.ack_flits),
            ));
        }
        if config.max_packet_flits == 0 {
            return Err(Error::field(
                "routing.dqn.max_packet_flits",
                "must be at least 1",
            ));
        }
        // DOR's VC classes on the two escape VCs only.
        let dor = CartesianRouting::new(CartesianAlgorithm::Dor, topo, 2)?;
        let (kx, ky) = (dims[0], dims[1]);
        let diameter = (kx / 2 + ky / 2) as u16;
        let hop_cap = config.hop_cap.unwrap_or(2 * diameter);
        let c = topo.terminals.iter().filter(|t| t.router == 0).count();
        Ok(DqnRouting {
            geo: Arc::new(Geometry {
                kx,
                ky,
                c,
                num_vcs,
                hop_cap,
                dor,
                config,
            }),
        })
    }
}

impl RoutingFunction for DqnRouting {
    fn name(&self) -> String {
        match self.geo.config.policy {
            Policy::Learn => "dqn".into(),
            Policy::Random => "dqn(random)".into(),
        }
    }

    fn min_vcs(&self) -> usize {
        3
    }

    /// The adaptive VC: a packet must not wait on it behind another one (Duato's condition
    /// under wormhole switching; docs/routing.md).
    fn cut_through_vcs(&self, num_vcs: usize) -> u64 {
        crate::routing::vc_mask(ADAPTIVE_VC..num_vcs)
    }

    fn deadlock_caveat(&self) -> Option<String> {
        (self.geo.config.acks == AckTransport::Network).then(|| {
            "acks retrace each packet's path backwards on the escape VCs; those reverse paths \
             are not DOR paths, so the escape network's deadlock freedom does not cover them \
             (routing.dqn.acks = \"ideal\" is deadlock-free)"
                .to_string()
        })
    }

    /// Without a session (static path analyses), packets take the escape DOR.
    fn route(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        self.geo.dor.route(ctx, pkt, state, rng, out);
    }

    fn on_forward(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        chosen: Candidate,
        vc: usize,
        state: &mut RouteState,
    ) {
        self.geo.dor.on_forward(ctx, pkt, chosen, vc, state);
    }

    fn learning_session(&self, seed: u64) -> Option<Box<dyn RoutingSession>> {
        Some(Box::new(DqnSession::new(self.geo.clone(), seed)))
    }
}

/// Parameters of `dqn`: the `[routing.dqn]` table.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DqnParams {
    pub dqn: Option<DqnRoutingConfig>,
}

/// Builds `dqn` (registry: `crate::registry::routing`).
pub fn build(
    cfg: &crate::routing::RoutingConfig,
    topo: &Topology,
    num_vcs: usize,
) -> Result<Box<dyn RoutingFunction>> {
    let config = cfg.read_params::<DqnParams>()?.dqn.unwrap_or_default();
    Ok(Box::new(DqnRouting::new(topo, num_vcs, config)?))
}

/// One router's record of a packet that crossed it.
#[derive(Clone, Copy, Debug)]
struct Pending {
    in_port: u16,
    /// The decision made here, or [`NO_EPISODE`].
    episode: u32,
}

/// A decision waiting for its reward.
#[derive(Clone, Debug)]
struct Episode {
    agent: u16,
    action: u8,
    distance: u16,
    time: u64,
    obs: [f32; OBSERVATION],
}

/// Counters of one run, for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DqnStats {
    pub decisions: u64,
    /// Decisions for a channel that brings the packet nearer its destination.
    pub productive: u64,
    /// Proposals rejected (busy adaptive VC or no room downstream): the packet went `Pdor`.
    pub rejected: u64,
    /// Packets forced to DOR by the hop cap.
    pub hop_capped: u64,
    /// Episodes closed by an ack.
    pub rewarded: u64,
    pub reward_sum: f64,
    /// Acks that found no pending entry (routed by DOR instead; should stay 0).
    pub acks_unmatched: u64,
}

/// The per-run state of DQN-routing: agents, pending tables, episodes.
pub struct DqnSession {
    geo: Arc<Geometry>,
    agents: Vec<DqnAgent>,
    learning: bool,
    next_serial: u32,
    /// Per router: packet serial -> entries, last in first out.
    pending: Vec<HashMap<u32, Vec<Pending>>>,
    episodes: Vec<Option<Episode>>,
    free_episodes: Vec<u32>,
    delay: u32,
    pub stats: DqnStats,
}

impl DqnSession {
    fn new(geo: Arc<Geometry>, seed: u64) -> Self {
        let routers = geo.kx * geo.ky;
        let agents = (0..geo.num_agents())
            .map(|i| {
                let s = seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                DqnAgent::new(geo.config.agent.clone(), OBSERVATION, ACTIONS, s)
                    .expect("validated when the routing was built")
            })
            .collect();
        DqnSession {
            agents,
            learning: true,
            next_serial: 0,
            pending: vec![HashMap::new(); routers],
            episodes: Vec::new(),
            free_episodes: Vec::new(),
            delay: 0,
            stats: DqnStats::default(),
            geo,
        }
    }

    /// The agents (e.g. to look at their Q-values).
    pub fn agents(&mut self) -> &mut [DqnAgent] {
        &mut self.agents
    }

    fn open_episode(&mut self, e: Episode) -> u32 {
        match self.free_episodes.pop() {
            Some(i) => {
                self.episodes[i as usize] = Some(e);
                i
            }
            None => {
                self.episodes.push(Some(e));
                (self.episodes.len() - 1) as u32
            }
        }
    }

    /// The agent's (or the random policy's) adaptive channel for the packet at
    /// `ctx.router`, and the episode opened for it ([`NO_EPISODE`] when not learning).
    fn decide(
        &mut self,
        now: u64,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        rng: &mut RouteRng,
    ) -> (usize, u32) {
        let geo = self.geo.clone();
        let obs = geo.observe(ctx, pkt);
        let agent = geo.agent_of(ctx.router);
        let action = match (geo.config.policy, self.learning) {
            (Policy::Random, _) => rng.random_range(0..ACTIONS),
            (Policy::Learn, true) => self.agents[agent].act(&obs, rng).0,
            (Policy::Learn, false) => self.agents[agent].greedy(&obs),
        };
        self.stats.decisions += 1;
        let dst = pkt.dst_router as usize;
        let distance = geo.distance(ctx.router, dst);
        if geo.distance(geo.neighbour(ctx.router, action), dst) < distance {
            self.stats.productive += 1;
        }
        let episode = if self.learning && geo.config.policy == Policy::Learn {
            self.open_episode(Episode {
                agent: agent as u16,
                action: action as u8,
                distance: distance as u16,
                time: now,
                obs,
            })
        } else {
            NO_EPISODE
        };
        (action, episode)
    }

    fn route_data(
        &mut self,
        now: u64,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let geo = self.geo.clone();
        let r = ctx.router;
        let mut episode = NO_EPISODE;
        if r != pkt.dst_router as usize && state.flags & PDOR == 0 {
            if state.hops >= geo.hop_cap {
                state.flags |= PDOR;
                self.stats.hop_capped += 1;
            } else {
                let (action, ep) = self.decide(now, ctx, pkt, rng);
                episode = ep;
                self.delay = geo.config.decision_delay;
                let port = geo.c + action;
                let view = ctx.congestion;
                let busy = (0..geo.num_vcs).any(|vc| view.output_vc_busy(r, port, vc));
                let full = view.credits(r, port, ADAPTIVE_VC) < pkt.size;
                let rejected = match geo.config.reject_when {
                    Rejection::BusyOrFull => busy || full,
                    Rejection::BusyAndFull => busy && full,
                };
                if !rejected {
                    // The escape below stays a fallback: a packet that finds the adaptive
                    // VC taken at allocation leaves on the escape VC (and goes `Pdor`)
                    // rather than wait for it, as Duato's protocol requires.
                    out.push(Candidate {
                        port: port as u16,
                        vcs: VcRange::single(ADAPTIVE_VC),
                    });
                } else {
                    state.flags |= PDOR;
                    self.stats.rejected += 1;
                }
            }
        }
        self.pending[r]
            .entry(state.intermediate)
            .or_default()
            .push(Pending {
                in_port: ctx.in_port as u16,
                episode,
            });
        // The escape (or the ejection at the destination): a fresh DOR path from here, so
        // its datelines start clear (`aux` stays 0 while the packet is adaptive).
        geo.dor.route(ctx, pkt, state, rng, out);
    }

    /// An ack at `ctx.router`: back out of the port its packet came in by (the latest entry
    /// of that packet here), paying the reward of the decision made here, if any.
    fn route_ack(
        &mut self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let entry = self.pop_pending(ctx.router, state.intermediate);
        let Some(entry) = entry else {
            self.stats.acks_unmatched += 1;
            let geo = self.geo.clone();
            geo.dor.route(ctx, pkt, state, rng, out);
            return;
        };
        if entry.episode != NO_EPISODE {
            self.close_episode(entry.episode, state.aux);
        }
        let port = usize::from(entry.in_port);
        let vcs = if port < self.geo.c {
            VcRange::new(0, self.geo.num_vcs) // the source terminal's port: ejection
        } else {
            VcRange::new(0, 2)
        };
        out.push(Candidate {
            port: entry.in_port,
            vcs,
        });
    }

    /// The latest pending entry of packet `serial` at `router` (last in, first out), removed.
    fn pop_pending(&mut self, router: usize, serial: u32) -> Option<Pending> {
        match self.pending[router].entry(serial) {
            Entry::Occupied(mut list) => {
                let e = list.get_mut().pop();
                if list.get().is_empty() {
                    list.remove();
                }
                e
            }
            Entry::Vacant(_) => None,
        }
    }

    /// Ideal acks: walks packet `serial`'s pending entries back from `router` (where its
    /// head was delivered at `arrived`) to its source, rewarding every decision on the way.
    fn reward_path(&mut self, serial: u32, mut router: usize, arrived: u32) {
        loop {
            let entry = self.pop_pending(router, serial);
            let Some(entry) = entry else {
                self.stats.acks_unmatched += 1;
                return;
            };
            if entry.episode != NO_EPISODE {
                self.close_episode(entry.episode, arrived);
            }
            let port = usize::from(entry.in_port);
            if port < self.geo.c {
                return; // the source terminal's port
            }
            // Input port `c + a` is fed by the neighbour in direction `a`.
            router = self.geo.neighbour(router, port - self.geo.c);
        }
    }

    /// Pays the reward of `episode` (the head reached the destination at `arrived`, low 32
    /// bits) and hands the transition to its agent.
    fn close_episode(&mut self, episode: u32, arrived: u32) {
        let Some(e) = self.episodes[episode as usize].take() else {
            return;
        };
        self.free_episodes.push(episode);
        let elapsed = arrived.wrapping_sub(e.time as u32).max(1);
        let reward = f32::from(e.distance) / elapsed as f32;
        self.stats.rewarded += 1;
        self.stats.reward_sum += f64::from(reward);
        if self.learning {
            let agent = &mut self.agents[e.agent as usize];
            agent.remember(Transition {
                obs: &e.obs,
                action: usize::from(e.action),
                reward,
                next_obs: None,
            });
        }
    }
}

impl RoutingSession for DqnSession {
    fn name(&self) -> String {
        "dqn".into()
    }

    fn hooks(&self) -> SessionHooks {
        SessionHooks {
            head_delivered: true,
            route_delay: self.geo.config.decision_delay > 0,
            ..SessionHooks::default()
        }
    }

    fn init_packet(
        &mut self,
        _now: u64,
        pkt: &PacketInfo,
        state: &mut RouteState,
        _rng: &mut RouteRng,
    ) {
        if pkt.class == CONTROL_CLASS {
            return; // an ack: its state was set when it was created
        }
        state.intermediate = self.next_serial;
        self.next_serial = self.next_serial.wrapping_add(1);
        state.aux = 0;
        state.flags = 0;
    }

    fn cut_through_vcs(&self, num_vcs: usize) -> u64 {
        crate::routing::vc_mask(ADAPTIVE_VC..num_vcs)
    }

    fn injection_vcs(&self, pkt: &PacketInfo, _state: &RouteState, num_vcs: usize) -> VcRange {
        if pkt.class == CONTROL_CLASS {
            VcRange::new(0, 2)
        } else {
            VcRange::new(0, num_vcs)
        }
    }

    fn route(
        &mut self,
        now: u64,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        if pkt.class != CONTROL_CLASS {
            self.route_data(now, ctx, pkt, state, rng, out);
            return;
        }
        self.route_ack(ctx, pkt, state, rng, out);
    }

    fn on_forward(
        &mut self,
        _now: u64,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        chosen: Candidate,
        vc: usize,
        state: &mut RouteState,
    ) {
        if pkt.class == CONTROL_CLASS {
            return;
        }
        if vc < ADAPTIVE_VC && state.flags & PDOR == 0 {
            state.flags |= PDOR; // lost the adaptive VC at allocation: escape from here on
        }
        if state.flags & PDOR != 0 {
            self.geo.dor.on_forward(ctx, pkt, chosen, vc, state);
        }
    }

    fn on_head_delivered(
        &mut self,
        now: u64,
        pkt: &PacketInfo,
        state: &RouteState,
        control: &mut Vec<ControlPacket>,
    ) {
        if pkt.class == CONTROL_CLASS {
            return;
        }
        if self.geo.config.acks == AckTransport::Ideal {
            self.reward_path(state.intermediate, pkt.dst_router as usize, now as u32);
            return;
        }
        control.push(ControlPacket {
            from: pkt.dst_terminal,
            to: pkt.src_terminal,
            size: self.geo.config.ack_flits,
            state: RouteState {
                intermediate: state.intermediate,
                aux: now as u32,
                ..RouteState::default()
            },
        });
    }

    fn begin_run(&mut self) {
        // Counters are per run; pending entries and open episodes of the previous run
        // would never be closed (its packets are gone).
        self.stats = DqnStats::default();
        for table in &mut self.pending {
            table.clear();
        }
        self.episodes.clear();
        self.free_episodes.clear();
    }

    /// Splitting the session between partitions would change its results, so it is refused
    /// (docs/simulator.md, "What stays on one thread").
    fn partition_obstacle(&self) -> Option<String> {
        Some(
            "its observations read the neighbouring routers' buffers in the same cycle, \
             across any cut; its agents (one per X-ring by default) change with every \
             decision and transition, in the order these happen; and ideal acks reward a \
             packet's whole path when it is delivered. None of this waits the one link's \
             delay a partition's lookahead needs, so a split run could not give the \
             sequential results"
                .into(),
        )
    }

    fn take_route_delay(&mut self) -> u32 {
        std::mem::take(&mut self.delay)
    }

    fn set_learning(&mut self, on: bool) {
        self.learning = on;
    }

    fn report(&self) -> Option<serde_json::Value> {
        let mut v = serde_json::to_value(&self.stats).ok()?;
        v["learning"] = self.learning.into();
        v["training_steps"] = self
            .agents
            .iter()
            .map(|a| a.training_steps())
            .sum::<u64>()
            .into();
        v["epsilon"] = self
            .agents
            .iter()
            .map(|a| a.epsilon())
            .collect::<Vec<_>>()
            .into();
        v["agent_decisions"] = self
            .agents
            .iter()
            .map(|a| a.decisions())
            .collect::<Vec<_>>()
            .into();
        Some(v)
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
