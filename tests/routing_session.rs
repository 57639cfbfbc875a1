//! The simulator's support for learned routing (src/routing/session.rs): every head arrival
//! and delivery reaches the session, `advance` runs every cycle, control packets travel as
//! real traffic but count in no statistic, and a session carries over to another engine.

use std::any::Any;
use std::path::Path;

use fabricopt::registry::routing::build_routing;
use fabricopt::routing::{
    CONTROL_CLASS, Candidate, ControlPacket, PacketInfo, RouteContext, RouteRng, RouteState,
    RoutingConfig, RoutingFunction, RoutingSession, SessionHooks, VcRange,
};
use fabricopt::sim::{Engine, SimConfig};
use fabricopt::topology::{Topology, TopologyConfig};
use fabricopt::traffic::{Traffic, TrafficConfig};

/// DOR, plus: counts events, and answers every delivered traffic packet with a control
/// packet of `ack_size` flits (3) back to its source (or to terminal `ack_to`, when set).
struct Acking {
    inner: Box<dyn RoutingFunction>,
    ack_to: Option<u32>,
    ack_size: u32,
    arrivals: u64,
    delivered_heads: u64,
    acks_delivered: u64,
    advance_calls: u64,
}

impl Acking {
    fn new(inner: Box<dyn RoutingFunction>) -> Self {
        Acking {
            inner,
            ack_to: None,
            ack_size: 3,
            arrivals: 0,
            delivered_heads: 0,
            acks_delivered: 0,
            advance_calls: 0,
        }
    }
}

impl RoutingSession for Acking {
    fn name(&self) -> String {
        "acking".into()
    }
    fn hooks(&self) -> SessionHooks {
        SessionHooks {
            head_arrival: true,
            head_delivered: true,
            advance: true,
            route_delay: false,
            input_exit: false,
        }
    }
    fn init_packet(&mut self, _: u64, p: &PacketInfo, s: &mut RouteState, r: &mut RouteRng) {
        self.inner.init_packet(p, s, r);
    }
    fn injection_vcs(&self, p: &PacketInfo, s: &RouteState, v: usize) -> VcRange {
        self.inner.injection_vcs(p, s, v)
    }
    fn route(
        &mut self,
        _: u64,
        ctx: &RouteContext,
        p: &PacketInfo,
        s: &mut RouteState,
        r: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        self.inner.route(ctx, p, s, r, out);
    }
    fn on_forward(
        &mut self,
        _: u64,
        ctx: &RouteContext,
        p: &PacketInfo,
        c: Candidate,
        vc: usize,
        s: &mut RouteState,
    ) {
        self.inner.on_forward(ctx, p, c, vc, s);
    }
    fn on_head_arrival(&mut self, _: u64, _: usize, _: usize, _: &PacketInfo, _: &mut RouteState) {
        self.arrivals += 1;
    }
    fn on_head_delivered(
        &mut self,
        _now: u64,
        pkt: &PacketInfo,
        _state: &RouteState,
        control: &mut Vec<ControlPacket>,
    ) {
        if pkt.class == CONTROL_CLASS {
            self.acks_delivered += 1;
            return;
        }
        self.delivered_heads += 1;
        control.push(ControlPacket {
            from: pkt.dst_terminal,
            to: self.ack_to.unwrap_or(pkt.src_terminal),
            size: self.ack_size,
            state: RouteState::default(),
        });
    }
    fn advance(&mut self, _now: u64) {
        self.advance_calls += 1;
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}

fn setup() -> Topology {
    TopologyConfig::parse_spec("torus:4x4")
        .unwrap()
        .build(Path::new("."), 1)
        .unwrap()
}

fn dor(t: &Topology) -> Box<dyn RoutingFunction> {
    let cfg = RoutingConfig::new("dor");
    build_routing(&cfg, t, 2).unwrap()
}

fn acking<'e>(e: &'e Engine) -> &'e Acking {
    e.session().as_any().unwrap().downcast_ref().unwrap()
}

/// Traffic that creates nothing by itself (packets come from `inject_packet`).
fn quiet_traffic(t: &Topology) -> Traffic {
    Traffic::build(
        &[TrafficConfig::new("uniform", 1e-12)],
        t,
        7,
        Path::new("."),
    )
    .unwrap()
}

/// Two VCs, default settings otherwise, on the given router model.
fn two_vcs(router: Option<fabricopt::sim::RouterKind>) -> fabricopt::sim::SimParams {
    SimConfig {
        num_vcs: Some(2),
        router,
        ..SimConfig::default()
    }
    .resolve()
    .unwrap()
}

#[test]
fn control_packets_load_the_network_but_not_the_statistics() {
    let t = setup();
    let mut cfg = TrafficConfig::new("uniform", 0.2);
    cfg.packet_size = Some(4);
    let traffic = Traffic::build(&[cfg], &t, 7, Path::new(".")).unwrap();
    let params = SimConfig {
        num_vcs: Some(2),
        warmup_cycles: Some(500),
        measure_cycles: Some(3000),
        ..SimConfig::default()
    }
    .resolve()
    .unwrap();
    // The same run without acks, for comparison.
    let r = dor(&t);
    let mut plain = Engine::new(&t, r.as_ref(), traffic.clone(), params.clone(), 5);
    plain.run();
    let mut e = Engine::with_session(&t, Box::new(Acking::new(dor(&t))), traffic, params, 5);
    e.enable_log();
    e.run();
    let c = e.counters.clone();
    let log = e.take_log();
    assert!(log.iter().all(|p| p.size == 4), "acks are not logged");
    let s = acking(&e);
    assert!(c.control_packets > 1000, "{}", c.control_packets);
    assert_eq!(
        c.control_packets, s.delivered_heads,
        "one ack per delivered head"
    );
    assert!(s.acks_delivered <= c.control_packets && s.acks_delivered + 100 > c.control_packets);
    assert_eq!(s.advance_calls, e.now());
    assert_eq!(c.flits_injected, c.flits_ejected + e.flits_in_network());
    assert_eq!(c.misdelivered, 0);
    assert_eq!(c.out_of_order, 0);
    // The same traffic (same seed) was offered and measured; acks only add load.
    let (_, with_acks) = e.stats.summarize(t.num_terminals());
    let (_, without) = plain.stats.summarize(t.num_terminals());
    assert_eq!(with_acks.offered, without.offered);
    assert_eq!(with_acks.packets, without.packets);
    assert!(
        with_acks.latency.avg > without.latency.avg,
        "acks share the links: {} vs {}",
        with_acks.latency.avg,
        without.latency.avg
    );
}

// A session's control packets name terminals that index the engine's tables: one past the
// network's (the 4x4 torus has 16 terminals) stops the run naming the session.
#[test]
#[should_panic(
    expected = "routing session acking asked for a control packet from terminal 15 to terminal 16; \
                the network has 16 terminals"
)]
fn a_control_packet_to_a_terminal_past_the_network_stops_the_run() {
    let t = setup();
    let session = Acking {
        ack_to: Some(16),
        ..Acking::new(dor(&t))
    };
    let mut e = Engine::with_session(&t, Box::new(session), quiet_traffic(&t), two_vcs(None), 1);
    assert!(e.inject_packet(0, 15, 1, 0));
    (0..100).for_each(|_| e.step());
}

#[test]
#[should_panic(
    expected = "routing session acking asked for a control packet of 0 flits from terminal 15 \
                to terminal 0; a packet has at least one flit"
)]
fn a_control_packet_of_no_flits_stops_the_run() {
    // Before, it silently became a packet of one flit.
    let t = setup();
    let session = Acking {
        ack_size: 0,
        ..Acking::new(dor(&t))
    };
    let mut e = Engine::with_session(&t, Box::new(session), quiet_traffic(&t), two_vcs(None), 1);
    assert!(e.inject_packet(0, 15, 1, 0));
    (0..100).for_each(|_| e.step());
}

#[test]
#[should_panic(expected = "inject_packet(0, 15, 0, 0): a packet has at least one flit")]
fn injecting_a_packet_of_no_flits_is_refused() {
    let t = setup();
    let session = Acking::new(dor(&t));
    let mut e = Engine::with_session(&t, Box::new(session), quiet_traffic(&t), two_vcs(None), 1);
    e.inject_packet(0, 15, 0, 0);
}

#[test]
fn every_head_arrival_reaches_the_session_and_it_carries_over() {
    let t = setup();
    let traffic = quiet_traffic(&t);
    let params = two_vcs(None);
    let mut e = Engine::with_session(
        &t,
        Box::new(Acking::new(dor(&t))),
        traffic.clone(),
        params.clone(),
        1,
    );
    e.enable_log();
    // 0 -> 15 on a 4x4 torus: 2 router hops over wrap links, so 3 routers; the ack too.
    assert!(e.inject_packet(0, 15, 5, 0));
    for _ in 0..200 {
        e.step();
    }
    let log = e.take_log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].hops, 2);
    assert_eq!(e.counters.control_packets, 1);
    assert_eq!(e.counters.packets_delivered, 2, "the packet and its ack");
    assert_eq!(e.flits_in_network(), 0);
    let s = acking(&e);
    assert_eq!((s.arrivals, s.delivered_heads, s.acks_delivered), (6, 1, 1));
    assert_eq!(s.advance_calls, 200);
    // Moved to a second engine, the session goes on from where it was.
    let mut e2 = Engine::with_session(&t, e.into_session(), traffic, params, 1);
    for _ in 0..10 {
        e2.step();
    }
    let s = acking(&e2);
    assert_eq!((s.arrivals, s.advance_calls), (6, 210));
}

/// DOR with every candidate's port moved `shift` ports up, its VCs replaced by `vcs`, with
/// injection VCs `inj`, or asking the congestion view about (port, VC) `ask` of its router
/// (a broken routing function, for the engine's checks of what routing returns and asks).
struct Broken {
    inner: Box<dyn RoutingFunction>,
    shift: u16,
    vcs: Option<VcRange>,
    inj: Option<VcRange>,
    ask: Option<(usize, usize)>,
}

impl Broken {
    fn new(t: &Topology) -> Self {
        Broken {
            inner: dor(t),
            shift: 0,
            vcs: None,
            inj: None,
            ask: None,
        }
    }
}

impl RoutingFunction for Broken {
    fn name(&self) -> String {
        "broken".into()
    }
    fn min_vcs(&self) -> usize {
        self.inner.min_vcs()
    }
    fn injection_vcs(&self, p: &PacketInfo, s: &RouteState, v: usize) -> VcRange {
        self.inj
            .unwrap_or_else(|| self.inner.injection_vcs(p, s, v))
    }
    fn route(
        &self,
        ctx: &RouteContext,
        p: &PacketInfo,
        s: &mut RouteState,
        r: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        if let Some((port, vc)) = self.ask {
            let view = ctx.congestion;
            let answers = view.credits(ctx.router, port, vc)
                + view.input_occupancy(ctx.router, port, vc)
                + view.output_queue(ctx.router, port)
                + view.output_queue_vc(ctx.router, port, vc)
                + u32::from(view.output_vc_busy(ctx.router, port, vc));
            assert!(answers < u32::MAX);
        }
        self.inner.route(ctx, p, s, r, out);
        for c in out.iter_mut() {
            c.port += self.shift;
            c.vcs = self.vcs.unwrap_or(c.vcs);
        }
    }
}

fn one_packet_run(routing: &dyn RoutingFunction, ioq: bool) {
    let t = setup();
    let traffic = quiet_traffic(&t);
    let params = two_vcs(ioq.then_some(fabricopt::sim::RouterKind::Ioq));
    // The two router models are different engine types.
    let delivered = if ioq {
        let mut e = Engine::new_ioq(&t, routing, traffic, params, 1);
        assert!(e.inject_packet(0, 15, 1, 0));
        (0..100).for_each(|_| e.step());
        e.counters.packets_delivered
    } else {
        let mut e = Engine::new(&t, routing, traffic, params, 1);
        assert!(e.inject_packet(0, 15, 1, 0));
        (0..100).for_each(|_| e.step());
        e.counters.packets_delivered
    };
    assert_eq!(delivered, 1);
}

/// The panic message of `run`, which must panic.
fn panic_message(run: impl FnOnce()) -> String {
    let err =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).expect_err("the run must stop");
    err.downcast_ref::<String>().cloned().unwrap_or_default()
}

// The engine indexes its state tables from what routing returns without bounds checks in
// an optimised build: a candidate port past the router's (here the 4x4 torus's 5), candidate
// VCs past the channel's (2), or injection VCs past them must stop the run on both router
// models, naming the routing function (before, candidates like these reached the next port's
// or router's VCs). The unbroken run shows the set-up works.
#[test]
fn what_routing_returns_past_the_routers_ports_or_vcs_stops_the_run_on_both_router_models() {
    let t = setup();
    let vcs = |start, end| Some(VcRange { start, end });
    let cases = [
        (
            Broken {
                shift: 5,
                ..Broken::new(&t)
            },
            "routing function broken returned port 6 VCs 0..1 at router 0, which has 5 ports of 2 VCs",
        ),
        (
            Broken {
                vcs: vcs(2, 3),
                ..Broken::new(&t)
            },
            "VCs 2..3 at router 0, which has 5 ports of 2 VCs",
        ),
        (
            Broken {
                inj: vcs(1, 3),
                ..Broken::new(&t)
            },
            "routing function broken gave injection VCs 1..3 of 2",
        ),
    ];
    for ioq in [false, true] {
        one_packet_run(&Broken::new(&t), ioq);
        for (broken, expected) in &cases {
            let message = panic_message(|| one_packet_run(broken, ioq));
            assert!(message.contains(expected), "ioq {ioq}: {message}");
        }
    }
}

// Routing functions may ask the congestion view about any router's ports and VCs; one past
// the router's (the 4x4 torus's routers have 5 ports of 2 VCs) used to read the next port's
// or router's state silently, and now stops the run on both router models. The last port's
// last VC answers.
#[test]
fn asking_the_congestion_view_past_a_routers_ports_or_vcs_stops_the_run_on_both_router_models() {
    let t = setup();
    let asking = |port, vc| Broken {
        ask: Some((port, vc)),
        ..Broken::new(&t)
    };
    for ioq in [false, true] {
        one_packet_run(&asking(4, 1), ioq);
        let message = panic_message(|| one_packet_run(&asking(5, 0), ioq));
        assert!(
            message.contains(
                "asked the congestion view for credits of router 0 port 5 VC 0, past the \
                 network (router 0 has 5 ports of 2 VCs)"
            ),
            "ioq {ioq}: {message}"
        );
        let message = panic_message(|| one_packet_run(&asking(0, 2), ioq));
        assert!(
            message.contains("credits of router 0 port 0 VC 2, past the network"),
            "ioq {ioq}: {message}"
        );
    }
}

#[test]
#[should_panic(expected = "inject_packet(16, 0, 1, 0): 16 terminals, 1 traffic classes")]
fn inject_packet_refuses_a_terminal_past_the_network() {
    let t = setup();
    let traffic = quiet_traffic(&t);
    let params = two_vcs(None);
    let r = dor(&t);
    let mut e = Engine::new(&t, r.as_ref(), traffic, params, 1);
    e.inject_packet(16, 0, 1, 0);
}
