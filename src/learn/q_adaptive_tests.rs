//! Q-adaptive's decisions and learning on a small dragonfly (p=2, a=4, h=2, g=9, absolute
//! arrangement; ports: hosts 0-1, local 2-4, global 5-6; router `4 * group + r`), driven by
//! hand, cycle by cycle, without the simulator.

use std::collections::HashSet;
use std::path::Path;

use rand::SeedableRng;

use super::*;
use crate::registry::routing::build_routing;
use crate::routing::RoutingConfig;
use crate::routing::paths::FreeNetwork;
use crate::topology::TopologyConfig;

const P: usize = 2;

fn topo() -> Topology {
    TopologyConfig::parse_spec(
        "dragonfly:p=2,a=4,h=2,g=9,local_latency=30,global_latency=300,terminal_latency=10",
    )
    .unwrap()
    .build(Path::new("."), 1)
    .unwrap()
}

fn params(epsilon: f64) -> QAdaptiveParams {
    QAdaptiveParams {
        alpha: 0.2,
        beta: 0.04,
        epsilon,
        q_thld1: 0.2,
        q_thld2: 0.35,
        init_direct: 300.0,
        init_other: 330.0,
        integer_q: false,
        feedback_at: Default::default(),
    }
}

fn session(t: &Topology, epsilon: f64) -> QAdaptiveSession {
    QSession::new(QAdaptive::new(t, 5, params(epsilon)).unwrap().shared)
}

/// A packet from node `src_index` of router `src` to node 0 of router `dst`.
fn packet(t: &Topology, src: usize, src_index: usize, dst: usize) -> PacketInfo {
    let (s, d) = (src * P + src_index, dst * P);
    assert_eq!(
        (t.terminals[s].router, t.terminals[s].port),
        (src, src_index)
    );
    assert_eq!(t.terminals[d].router, dst);
    PacketInfo {
        id: 0,
        src_terminal: s as u32,
        dst_terminal: d as u32,
        src_router: src as u32,
        dst_router: dst as u32,
        size: 1,
        class: 0,
    }
}

/// Router `router`'s global port into group `group`, if it has one.
fn global_port(t: &Topology, router: usize, group: usize) -> Option<usize> {
    (5..7).find(|&port| {
        matches!(t.peer(router, port), Some(Endpoint::Router { router: o, .. }) if o / 4 == group)
    })
}

/// The port of router `to` that router `from`'s `port` lands on.
fn in_port(t: &Topology, from: usize, port: usize, to: usize) -> usize {
    match t.peer(from, port) {
        Some(Endpoint::Router { router, port }) if router == to => port,
        other => panic!("port {port} of {from} leads to {other:?}, not router {to}"),
    }
}

fn set(s: &mut QAdaptiveSession, router: usize, group: usize, idx: usize, port: usize, v: f32) {
    let i = s.q.index(router, group * P + idx, port - P);
    *s.q.at_mut(i) = v;
}

/// Routes `pkt` at `router` after `hops` hops; the chosen port and its VCs.
fn route(
    s: &mut QAdaptiveSession,
    router: usize,
    pkt: &PacketInfo,
    hops: u16,
    rng: &mut RouteRng,
) -> Candidate {
    let view = FreeNetwork {
        num_vcs: 5,
        vc_depth: 20,
    };
    let ctx = RouteContext {
        router,
        in_port: 0,
        in_vc: 0,
        congestion: &view,
    };
    let mut state = RouteState {
        hops,
        ..RouteState::default()
    };
    let mut out = Vec::new();
    RoutingSession::route(s, 0, &ctx, pkt, &mut state, rng, &mut out);
    assert_eq!(out.len(), 1);
    out[0]
}

#[test]
fn q_adaptive_initial_values_favour_the_direct_global_port() {
    let t = topo();
    let s = session(&t, 0.0);
    // Router 0 holds the links to groups 1 (port 5) and 2 (port 6).
    assert_eq!(global_port(&t, 0, 1), Some(5));
    for idx in 0..P {
        assert_eq!(s.q_value(0, 1, idx, 5), 300.0);
        assert_eq!(s.q_value(0, 1, idx, 6), 330.0);
        for local in 2..5 {
            assert_eq!(s.q_value(0, 1, idx, local), 330.0);
        }
        // Router 1 has no link to group 1: everything 330.
        for port in 2..7 {
            assert_eq!(s.q_value(1, 1, idx, port), 330.0);
        }
    }
}

#[test]
fn q_adaptive_source_router_threshold_and_ties() {
    let t = topo();
    let mut s = session(&t, 0.0);
    let mut rng = RouteRng::seed_from_u64(1);
    // Router 0 to group 3, whose link router 1 holds: the minimal port is local port 2.
    let pkt = packet(&t, 0, 1, 14);
    assert!(global_port(&t, 1, 3).is_some());
    let c = route(&mut s, 0, &pkt, 0, &mut rng);
    assert_eq!(
        c,
        Candidate {
            port: 2,
            vcs: VcRange::single(0)
        },
        "all equal: lowest = min"
    );
    // Q_best = 270 through group 1: dV = 60/330 = 0.18 < q_thld1 = 0.2, still minimal.
    set(&mut s, 0, 3, 1, 5, 270.0);
    assert_eq!(route(&mut s, 0, &pkt, 0, &mut rng).port, 2);
    // 260: dV = 0.21, the best port wins.
    set(&mut s, 0, 3, 1, 5, 260.0);
    assert_eq!(route(&mut s, 0, &pkt, 0, &mut rng).port, 5);
    // The other source node's row is separate.
    assert_eq!(route(&mut s, 0, &packet(&t, 0, 0, 14), 0, &mut rng).port, 2);
    // Ties go to the lowest port.
    set(&mut s, 0, 3, 1, 6, 260.0);
    assert_eq!(route(&mut s, 0, &pkt, 0, &mut rng).port, 5);
    set(&mut s, 0, 3, 1, 4, 260.0);
    assert_eq!(route(&mut s, 0, &pkt, 0, &mut rng).port, 4);
    // Greedy with epsilon = 0: no draws, always the same port.
    let before = rng.clone();
    for _ in 0..100 {
        assert_eq!(route(&mut s, 0, &pkt, 0, &mut rng).port, 4);
    }
    assert_eq!(rng, before);
    // Only the source router (hops == 0) decides; in the source group later it is minimal.
    assert_eq!(route(&mut s, 0, &pkt, 1, &mut rng).port, 2);
    // Inside the destination group: minimal whatever the table says.
    let local = packet(&t, 0, 1, 3);
    set(&mut s, 0, 0, 1, 2, 1.0);
    assert_eq!(route(&mut s, 0, &local, 0, &mut rng).port, 4);
}

#[test]
fn q_adaptive_first_intermediate_router_reroutes_with_q_thld2() {
    let t = topo();
    let mut s = session(&t, 0.0);
    let mut rng = RouteRng::seed_from_u64(2);
    // From router 0 over its link to group 1, landing on router 4, for group 3: router 4's
    // links go to groups 0 and 2; group 1's link to group 3 is on router 5 (local port 2).
    let pkt = packet(&t, 0, 0, 14);
    assert_eq!(in_port(&t, 0, 5, 4), 5);
    assert_eq!(global_port(&t, 4, 3), None);
    assert!(global_port(&t, 5, 3).is_some());
    let min: u16 = 2;
    set(&mut s, 4, 3, 0, 2, 1000.0);
    set(&mut s, 4, 3, 0, 3, 100.0);
    set(&mut s, 4, 3, 0, 4, 1000.0);
    // best := a random local port: port 3 (dV = 0.9 >= 0.35) or the minimal one; port 4
    // (dV = 0) never.
    let mut seen = HashSet::new();
    for _ in 0..200 {
        let c = route(&mut s, 4, &pkt, 1, &mut rng);
        assert_eq!(c.vcs, VcRange::single(1));
        seen.insert(c.port);
    }
    assert_eq!(seen, HashSet::from([2, 3]));
    // dV = 0.3 < q_thld2: always minimal.
    set(&mut s, 4, 3, 0, 3, 700.0);
    assert!((0..100).all(|_| route(&mut s, 4, &pkt, 1, &mut rng).port == min));
    // A router with its own link to the destination group forwards minimally.
    let to_group_2 = packet(&t, 0, 0, 8);
    let direct = global_port(&t, 4, 2).unwrap() as u16;
    for local in 2..5 {
        set(&mut s, 4, 2, 0, local, 1.0);
    }
    assert!((0..100).all(|_| route(&mut s, 4, &to_group_2, 1, &mut rng).port == direct));
    // A later router of the intermediate group forwards minimally.
    set(&mut s, 4, 3, 0, 3, 100.0);
    assert!((0..100).all(|_| route(&mut s, 4, &pkt, 2, &mut rng).port == min));
}

/// Follows the routing function (initial table) from `pkt`'s source to its destination; the
/// hops taken.
fn walk(rf: &QAdaptive, t: &Topology, pkt: &PacketInfo, rng: &mut RouteRng) -> Vec<Candidate> {
    let view = FreeNetwork {
        num_vcs: 10,
        vc_depth: 20,
    };
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
        RoutingFunction::route(rf, &ctx, pkt, &mut state, rng, &mut out);
        if cur == pkt.dst_router as usize {
            assert!(usize::from(out[0].port) < P);
            return hops;
        }
        hops.push(out[0]);
        assert!(hops.len() <= MAX_HOPS, "{hops:?}");
        state.hops += 1;
        match t.peer(cur, usize::from(out[0].port)) {
            Some(Endpoint::Router { router, .. }) => cur = router,
            other => panic!("left the network at {cur}: {other:?}"),
        }
    }
}

#[test]
fn q_adaptive_paths_stay_within_five_hops_on_hop_indexed_vcs() {
    let t = topo();
    // epsilon = 1: a random network port at every decision, the longest detours there are.
    let rf = QAdaptive::new(&t, 10, params(1.0)).unwrap();
    let mut rng = RouteRng::seed_from_u64(3);
    let mut first_ports = HashSet::new();
    let mut longest = 0;
    for src in (0..36).step_by(3) {
        for dst in 0..36 {
            for _ in 0..10 {
                let hops = walk(&rf, &t, &packet(&t, src, 0, dst), &mut rng);
                for (i, c) in hops.iter().enumerate() {
                    // 10 VCs over 5 hop classes.
                    assert_eq!(c.vcs, VcRange::new(2 * i, 2 * i + 2));
                }
                if src / 4 != dst / 4 {
                    first_ports.insert(hops[0].port);
                }
                longest = longest.max(hops.len());
            }
        }
    }
    assert_eq!(longest, MAX_HOPS);
    assert_eq!(first_ports, HashSet::from([2, 3, 4, 5, 6]), "exploration");
}

#[test]
fn q_adaptive_feedback_waits_for_the_link_latency() {
    let t = topo();
    let mut s = session(&t, 0.0);
    let pkt = packet(&t, 0, 0, 14);
    let mut state = RouteState::default();
    let into_4 = in_port(&t, 0, 5, 4);
    s.advance(0);
    for now in 1..=100 {
        s.advance(now);
    }
    // From the host port: nothing to learn.
    s.on_head_arrival(100, 0, 0, &pkt, &mut state);
    assert_eq!((s.pending_feedback(), state.aux), (0, 100));
    for now in 101..=420 {
        s.advance(now);
    }
    // At router 4 320 cycles later; target = 320 + min of router 4's row (330).
    s.on_head_arrival(420, 4, into_4, &pkt, &mut state);
    assert_eq!(s.pending_feedback(), 1);
    for now in 421..720 {
        s.advance(now);
        assert_eq!(
            s.q_value(0, 3, 0, 5),
            330.0,
            "cycle {now}: still on its way"
        );
    }
    // Bad news (delta = +320): beta.
    s.advance(720);
    assert!((s.q_value(0, 3, 0, 5) - (330.0 + 0.04 * 320.0)).abs() < 1e-3);
    // Good news (delta < 0): alpha. r = 50, Q_y = 100: target 150.
    set(&mut s, 4, 3, 0, 2, 100.0);
    let mut state = RouteState::default();
    s.on_head_arrival(1000, 0, 0, &pkt, &mut state);
    s.on_head_arrival(1050, 4, into_4, &pkt, &mut state);
    for now in 721..1350 {
        s.advance(now);
    }
    let q = s.q_value(0, 3, 0, 5);
    assert!((q - 342.8).abs() < 1e-3, "{q}");
    s.advance(1350);
    let expect = 342.8 + 0.2 * (150.0 - 342.8);
    assert!((s.q_value(0, 3, 0, 5) - expect).abs() < 1e-3);
    assert_eq!((s.updates(), s.pending_feedback()), (2, 0));
    // Nothing else moved.
    assert_eq!(s.q_value(0, 3, 1, 5), 330.0);
    assert_eq!(s.q_value(0, 3, 0, 6), 330.0);
}

/// `feedback_at = "input_exit"` (the authors' code): r is measured at the head's arrival
/// at y, but the feedback leaves when the packet leaves y's input buffer, with Q_y as it
/// stands then, and takes the credit's way back; with `integer_q` the update truncates.
#[test]
fn q_adaptive_feedback_at_input_exit_waits_for_the_packet_to_leave() {
    let t = topo();
    let mut p = params(0.0);
    p.feedback_at = FeedbackAt::InputExit;
    p.integer_q = true;
    let mut s = QSession::new(QAdaptive::new(&t, 5, p).unwrap().shared);
    assert!(s.hooks().input_exit);
    let pkt = packet(&t, 0, 0, 14);
    let mut state = RouteState::default();
    let into_4 = in_port(&t, 0, 5, 4);
    for now in 0..=100 {
        s.advance(now);
    }
    s.on_head_arrival(100, 0, 0, &pkt, &mut state);
    for now in 101..=420 {
        s.advance(now);
    }
    // r = 320 at the arrival at router 4, but nothing is sent yet.
    s.on_head_arrival(420, 4, into_4, &pkt, &mut state);
    assert_eq!(s.pending_feedback(), 0);
    // Router 4's estimate changes while the packet waits in its input buffer.
    set(&mut s, 4, 3, 0, 2, 100.0);
    for now in 421..=500 {
        s.advance(now);
    }
    // It leaves at 500; the feedback arrives 320 cycles later (output + link + input).
    s.on_input_exit(500, 4, into_4, &pkt, 320);
    assert_eq!(s.pending_feedback(), 1);
    for now in 501..820 {
        s.advance(now);
        assert_eq!(
            s.q_value(0, 3, 0, 5),
            330.0,
            "cycle {now}: still on its way"
        );
    }
    s.advance(820);
    // target = 320 + 100 = 420; delta +90, beta: 330 + 3.6 = 333.6, truncated to 333.
    assert_eq!(s.q_value(0, 3, 0, 5), 333.0);
}

#[test]
fn q_adaptive_no_feedback_inside_the_destination_group() {
    let t = topo();
    let mut s = session(&t, 0.0);
    // Router 0 -> router 4 (group 1, the destination group) -> router 6.
    let pkt = packet(&t, 0, 1, 6);
    let mut state = RouteState::default();
    s.advance(0);
    s.on_head_arrival(0, 0, 1, &pkt, &mut state);
    s.on_head_arrival(320, 4, in_port(&t, 0, 5, 4), &pkt, &mut state);
    assert_eq!(s.pending_feedback(), 1);
    s.on_head_arrival(370, 6, in_port(&t, 4, 3, 6), &pkt, &mut state);
    assert_eq!(
        s.pending_feedback(),
        1,
        "router 4 is in the destination group"
    );
    for now in 1..=700 {
        s.advance(now);
    }
    // Q_y = 0 at the destination group: target = r = 320.
    assert!((s.q_value(0, 1, 1, 5) - (300.0 + 0.04 * 20.0)).abs() < 1e-3);
    assert_eq!(s.updates(), 1);
}

#[test]
fn q_adaptive_build_errors_name_the_field() {
    let t = topo();
    let cfg = |alg: &str| RoutingConfig::new(alg).with("q", super::super::QConfig::default());
    let err = |c: RoutingConfig, t: &Topology, v: usize| build_routing(&c, t, v).err().unwrap();
    let torus = TopologyConfig::parse_spec("torus:4x4")
        .unwrap()
        .build(Path::new("."), 1)
        .unwrap();
    assert!(
        err(cfg("q_adaptive"), &torus, 5)
            .to_string()
            .starts_with("routing.algorithm: `q_adaptive` routes dragonflies only")
    );
    assert!(
        err(cfg("q_adaptive"), &t, 4)
            .to_string()
            .starts_with("simulation.num_vcs: routing `q_adaptive` needs at least 5")
    );
    assert_eq!(
        err(cfg("min"), &t, 5).to_string(),
        "routing.q: does not apply to routing `min`"
    );
    let ugal = cfg("q_adaptive").with("ugal_factor", 1.0);
    assert!(
        err(ugal, &t, 5)
            .to_string()
            .starts_with("routing.ugal_factor: ")
    );
    assert_eq!(
        build_routing(&cfg("q_routing"), &torus, 5).unwrap().name(),
        "q_routing"
    );
}
