//! Routing that changes while the network runs: the per-run state of learned algorithms
//! (Q-routing, Q-adaptive, DQN-routing in `src/learn/`).
//!
//! A [`RoutingFunction`] is shared, read-only, by every simulation that uses it (a sweep runs
//! its load points in parallel). An algorithm that learns asks for a [`RoutingSession`]
//! instead ([`RoutingFunction::learning_session`]): one per simulation, owned and mutated by
//! that simulation's engine alone, so runs stay independent and deterministic. A session
//! also sees events a stateless function does not need: a packet's head arriving at a
//! router's input, its head reaching the destination terminal, the passing of time (for
//! feedback that travels without using bandwidth), and it may send control packets (acks
//! that load the links but are not traffic). A session can be moved from one engine to the
//! next, so that a second run starts from what the first learned ("pre-training").

use std::any::Any;

use super::{
    Candidate, ForwardCounter, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction,
    VcRange,
};

/// The traffic class of control packets: not counted in any latency or throughput statistic.
pub const CONTROL_CLASS: u8 = u8::MAX;

/// A control packet a session asks the simulator to send: created at terminal `from` (ahead
/// of its queued traffic) for terminal `to`, with `state` as its initial routing state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlPacket {
    pub from: u32,
    pub to: u32,
    pub size: u32,
    pub state: RouteState,
}

/// Which optional events a session wants (asked once, when the engine is built, so that
/// stateless routing pays nothing for them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionHooks {
    /// [`RoutingSession::on_head_arrival`].
    pub head_arrival: bool,
    /// [`RoutingSession::on_head_delivered`].
    pub head_delivered: bool,
    /// [`RoutingSession::advance`] at the start of every cycle.
    pub advance: bool,
    /// [`RoutingSession::take_route_delay`] after every route computation.
    pub route_delay: bool,
    /// [`RoutingSession::on_input_exit`].
    pub input_exit: bool,
}

/// The per-run, mutable side of a routing algorithm (see the module documentation). The
/// methods mirror [`RoutingFunction`]'s, with the current cycle added.
pub trait RoutingSession: Send {
    fn name(&self) -> String;

    fn hooks(&self) -> SessionHooks {
        SessionHooks::default()
    }

    /// A run (an engine) starts with this session: the clock restarts at 0 and per-run
    /// counters should too. What was learned stays.
    fn begin_run(&mut self) {}

    fn init_packet(
        &mut self,
        _now: u64,
        _pkt: &PacketInfo,
        _state: &mut RouteState,
        _rng: &mut RouteRng,
    ) {
    }

    fn injection_vcs(&self, _pkt: &PacketInfo, _state: &RouteState, num_vcs: usize) -> VcRange {
        VcRange::new(0, num_vcs)
    }

    /// See [`RoutingFunction::cut_through_vcs`].
    fn cut_through_vcs(&self, _num_vcs: usize) -> u64 {
        0
    }

    fn route(
        &mut self,
        now: u64,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    );

    fn on_forward(
        &mut self,
        _now: u64,
        _ctx: &RouteContext,
        _pkt: &PacketInfo,
        _chosen: Candidate,
        _vc: usize,
        _state: &mut RouteState,
    ) {
    }

    /// Whether `on_forward` can change anything (see [`RoutingFunction::updates_on_forward`]).
    fn updates_on_forward(&self) -> bool {
        true
    }

    /// See [`RoutingFunction::forward_counter`]; a session that learns never does.
    fn forward_counter(&self) -> Option<ForwardCounter> {
        None
    }

    /// See [`RoutingFunction::routes_by_destination`]; a session that learns never does.
    fn routes_by_destination(&self) -> Option<u8> {
        None
    }

    /// The head flit of a packet (control packets included) arrived at input `in_port` of
    /// `router` (from a terminal or another router), before it is routed there.
    fn on_head_arrival(
        &mut self,
        _now: u64,
        _router: usize,
        _in_port: usize,
        _pkt: &PacketInfo,
        _state: &mut RouteState,
    ) {
    }

    /// The head of a packet (control packets included) left the input buffer of `in_port`
    /// of `router` (into the crossbar); a message sent back to the upstream router now
    /// arrives `back_delay` cycles later (as a credit does). Reported by the
    /// input-output-queued router only.
    fn on_input_exit(
        &mut self,
        _now: u64,
        _router: usize,
        _in_port: usize,
        _pkt: &PacketInfo,
        _back_delay: u32,
    ) {
    }

    /// The head flit of a packet (control packets included) reached its destination
    /// terminal; control packets to send in response go into `control`.
    fn on_head_delivered(
        &mut self,
        _now: u64,
        _pkt: &PacketInfo,
        _state: &RouteState,
        _control: &mut Vec<ControlPacket>,
    ) {
    }

    /// Called at the start of cycle `now`, before any flit moves.
    fn advance(&mut self, _now: u64) {}

    /// Extra cycles before the route just computed may be used (e.g. a neural network's
    /// inference time), on top of the router's `routing_delay`.
    fn take_route_delay(&mut self) -> u32 {
        0
    }

    /// Turns learning (and exploration) off or on: off, the session routes greedily by what
    /// it has learned and learns nothing more (evaluating a trained policy).
    fn set_learning(&mut self, _on: bool) {}

    /// What the session did and learned, for reports (`routing_report` of a load point).
    fn report(&self) -> Option<serde_json::Value> {
        None
    }

    /// The concrete session, for inspection (tests, reports); `None` for stateless routing.
    fn as_any(&self) -> Option<&dyn Any> {
        None
    }

    /// Why the session cannot run as one partition of the parallel engine (one session per
    /// partition, each running its own routers), or `None` when it can: when it keeps no
    /// state, or when everything it tells another router travels as [`RemoteUpdate`]s at
    /// least one link's latency late.
    fn partition_obstacle(&self) -> Option<String> {
        (self.hooks() != SessionHooks::default()).then(|| {
            "it learns with state the parallel engine cannot split between partitions".into()
        })
    }

    /// Parallel engine: this session runs the routers `router_part[r] == own`; what it would
    /// tell others goes aside for [`RoutingSession::take_remote_updates`].
    fn set_partition(&mut self, _router_part: std::sync::Arc<Vec<u32>>, _own: u32) {}

    /// Parallel engine: what this session has for routers of other partitions since the last
    /// call, in the order sent.
    fn take_remote_updates(&mut self) -> Vec<RemoteUpdate> {
        Vec::new()
    }

    /// Parallel engine: what other partitions' sessions sent for our routers, each due at a
    /// cycle not yet run.
    fn put_remote_updates(&mut self, _updates: Vec<RemoteUpdate>) {}
}

/// What a learning session tells a router of another partition (the parallel engine): an
/// update of entry `index` of its state, due at cycle `due`, for `router`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemoteUpdate {
    pub router: u32,
    pub due: u64,
    pub index: u32,
    pub target: f32,
}

/// A stateless routing function seen as a session (what every classical algorithm runs as).
pub(crate) struct Stateless<'a>(pub &'a dyn RoutingFunction);

impl RoutingSession for Stateless<'_> {
    fn name(&self) -> String {
        self.0.name()
    }

    fn init_packet(
        &mut self,
        _now: u64,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
    ) {
        self.0.init_packet(pkt, state, rng);
    }

    fn injection_vcs(&self, pkt: &PacketInfo, state: &RouteState, num_vcs: usize) -> VcRange {
        self.0.injection_vcs(pkt, state, num_vcs)
    }

    fn cut_through_vcs(&self, num_vcs: usize) -> u64 {
        self.0.cut_through_vcs(num_vcs)
    }

    fn route(
        &mut self,
        _now: u64,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        self.0.route(ctx, pkt, state, rng, out);
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
        self.0.on_forward(ctx, pkt, chosen, vc, state);
    }

    fn updates_on_forward(&self) -> bool {
        self.0.updates_on_forward()
    }

    fn forward_counter(&self) -> Option<ForwardCounter> {
        self.0.forward_counter()
    }

    fn routes_by_destination(&self) -> Option<u8> {
        self.0.routes_by_destination()
    }
}

/// The session a simulation of `routing` runs with: its learning session if it has one,
/// else the function itself.
pub(crate) fn session_of<'a>(
    routing: &'a dyn RoutingFunction,
    seed: u64,
) -> Box<dyn RoutingSession + 'a> {
    match routing.learning_session(seed) {
        Some(s) => s,
        None => Box::new(Stateless(routing)),
    }
}
