//! The flit-level simulator: zero-load latency against the analytical formula for every timing
//! preset, invariants under load (flit conservation, credits, ordering, destinations),
//! deadlock and saturation detection, determinism.

use std::path::Path;

#[path = "support/deadlocking.rs"]
mod deadlocking;

use deadlocking::{Clockwise, ClockwiseSquare};

use fabricopt::registry::routing::build_routing;
use fabricopt::routing::{RoutingConfig, RoutingFunction};
use fabricopt::sim::{self, Engine, RouterKind, RunEnd, SimConfig, SimParams, Switching};
use fabricopt::topology::metrics::distances_from;
use fabricopt::topology::{Topology, TopologyConfig};
use fabricopt::traffic::{Traffic, TrafficConfig};

fn topo(spec: &str) -> Topology {
    TopologyConfig::parse_spec(spec)
        .unwrap()
        .build(Path::new("."), 1)
        .unwrap()
}

fn routing(name: &str, t: &Topology, vcs: usize) -> Box<dyn RoutingFunction> {
    let cfg = RoutingConfig::new(name);
    build_routing(&cfg, t, vcs).unwrap()
}

fn traffic(t: &Topology, pattern: &str, load: f64, size: u32) -> Traffic {
    let mut cfg = TrafficConfig::new(pattern, load);
    cfg.packet_size = Some(size);
    Traffic::build(&[cfg], t, 7, Path::new(".")).unwrap()
}

fn params(cfg: SimConfig) -> SimParams {
    cfg.resolve().unwrap()
}

/// Sends single packets through an otherwise empty network and compares each latency with
/// L_inj + H(R+V+S+T) + sum of router-channel latencies + L_ej + (P-1) + injection delay.
fn check_zero_load(
    spec: &str,
    algorithm: &str,
    sim: SimConfig,
    sizes: &[u32],
    expect_min_hops: bool,
) {
    let t = topo(spec);
    let p = params(sim);
    let r = routing(algorithm, &t, p.num_vcs);
    let graph = t.router_graph();
    let term_lat = t.links[t.terminals[0].link].params.latency as u64;
    let per_router = u64::from(p.routing_delay + p.vc_alloc_delay + p.sw_alloc_delay + p.st_delay);
    let n = t.num_terminals() as u32;
    let mut engine = Engine::new(
        &t,
        r.as_ref(),
        traffic(&t, "uniform", 1e-12, 1),
        p.clone(),
        3,
    );
    engine.enable_log();
    let mut checked = 0;
    for &size in sizes {
        for src in (0..n).step_by(3) {
            let dist = distances_from(&graph, t.terminals[src as usize].router);
            for dst in 0..n {
                if dst == src {
                    continue;
                }
                assert!(engine.inject_packet(src, dst, size, 0));
                let mut guard = 0;
                let rec = loop {
                    engine.step();
                    let log = engine.take_log();
                    if let Some(&rec) = log.first() {
                        break rec;
                    }
                    guard += 1;
                    assert!(guard < 100_000, "packet {src}->{dst} never arrived");
                };
                // Let credits return before the next packet.
                for _ in 0..64 {
                    engine.step();
                }
                assert_eq!((rec.src, rec.dst), (src, dst));
                assert_eq!(rec.created, rec.injected, "the NIC was idle");
                let hops = u64::from(rec.hops);
                if expect_min_hops {
                    let d = dist[t.terminals[dst as usize].router].unwrap();
                    assert_eq!(rec.hops, d, "{spec}: {src}->{dst} not minimal");
                }
                let channel_sum = channel_latency_sum(&t, src, dst, hops);
                let expected = u64::from(p.injection_delay)
                    + 2 * term_lat
                    + (hops + 1) * per_router
                    + channel_sum
                    + u64::from(size - 1);
                assert_eq!(
                    rec.delivered - rec.injected,
                    expected,
                    "{spec} {algorithm} preset {}: packet {src}->{dst} size {size}, {hops} hops",
                    p.preset
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 10);
    engine.check_invariants().unwrap();
}

/// Router-to-router channel latency along a minimal path: uniform latency, except in a
/// dragonfly, where an inter-group minimal path has one global link and hops-1 local ones.
fn channel_latency_sum(t: &Topology, src: u32, dst: u32, hops: u64) -> u64 {
    use fabricopt::topology::{LinkKind, Shape};
    let lat = |kind: LinkKind| {
        t.links
            .iter()
            .find(|l| l.kind == kind)
            .map_or(0, |l| u64::from(l.params.latency))
    };
    match &t.shape {
        Shape::Dragonfly { a, .. } => {
            let g = |term: u32| t.terminals[term as usize].router / a;
            if g(src) == g(dst) {
                hops * lat(LinkKind::Local)
            } else {
                (hops - 1) * lat(LinkKind::Local) + lat(LinkKind::Global)
            }
        }
        _ => hops * lat(LinkKind::Local),
    }
}

fn preset(name: &str) -> SimConfig {
    SimConfig {
        preset: Some(name.into()),
        num_vcs: Some(2),
        vc_depth: Some(16),
        ..SimConfig::default()
    }
}

#[test]
fn zero_load_latency_matches_the_formula_for_every_preset() {
    for name in ["default", "booksim", "ideal"] {
        check_zero_load("mesh:4x4", "dor", preset(name), &[1, 5], true);
        check_zero_load(
            "torus:5x4,c=2,local_latency=3,terminal_latency=2",
            "dor",
            preset(name),
            &[1, 4],
            true,
        );
    }
    let custom = SimConfig {
        routing_delay: Some(0),
        vc_alloc_delay: Some(2),
        sw_alloc_delay: Some(1),
        st_delay: Some(3),
        injection_delay: Some(2),
        ..preset("default")
    };
    check_zero_load("mesh:3x3x2,local_latency=2", "dor", custom, &[1, 3], true);
}

#[test]
fn zero_load_latency_on_a_dragonfly_with_local_and_global_latencies() {
    for name in ["default", "booksim"] {
        check_zero_load(
            "dragonfly:p=2,local_latency=10,global_latency=100,terminal_latency=1",
            "min",
            preset(name),
            &[1, 3],
            // Dragonfly MIN takes local-global-local paths, which can be longer than the
            // graph's shortest path through a third group.
            false,
        );
    }
}

#[test]
fn virtual_cut_through_has_the_same_zero_load_latency() {
    let vct = SimConfig {
        switching: Some(Switching::VirtualCutThrough),
        ..preset("default")
    };
    check_zero_load("torus:4x4", "dor", vct, &[1, 8], true);
}

/// Runs `cycles` cycles checking the invariants after every one.
fn run_checked(spec: &str, algorithm: &str, sim: SimConfig, load: f64, size: u32, cycles: u64) {
    let t = topo(spec);
    let p = params(sim);
    let r = routing(algorithm, &t, p.num_vcs);
    let mut e = Engine::new(&t, r.as_ref(), traffic(&t, "uniform", load, size), p, 11);
    for _ in 0..cycles {
        e.step();
        if let Err(msg) = e.check_invariants() {
            panic!("{spec} cycle {}: {msg}", e.now());
        }
    }
    let c = &e.counters;
    assert_eq!(c.misdelivered, 0);
    assert_eq!(c.out_of_order, 0);
    assert!(c.packets_delivered > 100, "{c:?}");
    assert!(c.flits_ejected <= c.flits_injected);
}

#[test]
fn invariants_hold_under_load() {
    let base = SimConfig {
        num_vcs: Some(2),
        vc_depth: Some(4),
        ..SimConfig::default()
    };
    run_checked("mesh:4x4,c=2", "dor", base.clone(), 0.35, 4, 3000);
    run_checked("torus:4x4", "dor", base.clone(), 0.5, 3, 3000);
    let vct = SimConfig {
        switching: Some(Switching::VirtualCutThrough),
        vc_depth: Some(6),
        ..base.clone()
    };
    run_checked("torus:4x4", "dor", vct, 0.5, 6, 3000);
    let islip = SimConfig {
        allocator: Some(fabricopt::sim::AllocatorKind::Islip),
        alloc_iters: Some(2),
        input_speedup: Some(2),
        ..base
    };
    run_checked("mesh:4x4", "dor", islip, 0.4, 2, 3000);
    // Adaptive and non-minimal algorithms, near and past saturation.
    let five = SimConfig {
        num_vcs: Some(5),
        vc_depth: Some(4),
        ..SimConfig::default()
    };
    for algorithm in ["min", "val_n", "ugal_g", "par"] {
        run_checked("dragonfly:p=2", algorithm, five.clone(), 0.7, 2, 2000);
    }
    for algorithm in ["duato", "star", "romm", "valiant"] {
        run_checked("torus:4x4", algorithm, five.clone(), 0.6, 3, 2000);
    }
    run_checked(
        "jellyfish:routers=24,degree=4",
        "dfsssp",
        five.clone(),
        0.5,
        2,
        2000,
    );
    run_checked(
        "exanest:R=2,N=4,M=2,genome=5/17/8/22",
        "updown",
        five,
        0.5,
        2,
        2000,
    );
}

#[test]
fn a_cyclic_channel_dependency_is_reported_as_a_deadlock() {
    let t = topo("ring:4");
    let p = params(SimConfig {
        num_vcs: Some(1),
        vc_depth: Some(2),
        deadlock_cycles: Some(300),
        warmup_cycles: Some(100),
        measure_cycles: Some(5000),
        ..SimConfig::default()
    });
    let mut e = Engine::new(&t, &Clockwise, traffic(&t, "uniform", 0.9, 8), p, 1);
    match e.run() {
        RunEnd::Deadlock(d) => {
            // The wait-for cycle goes round the ring: every router appears, through its input
            // from the counter-clockwise neighbour (port 1) or its injection port (port 0)
            // when an injected packet holds the clockwise output VC.
            let mut routers: Vec<u32> = d.cycle_vcs.iter().map(|&(r, _, _)| r).collect();
            routers.sort();
            routers.dedup();
            assert_eq!(routers, vec![0, 1, 2, 3], "{d:?}");
            assert!(
                d.cycle_vcs
                    .iter()
                    .all(|&(_, port, vc)| port <= 1 && vc == 0)
            );
            assert!(d.flits_in_flight > 0);
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn saturation_is_detected_and_the_run_ends() {
    let t = topo("mesh:4x4");
    let p = params(SimConfig {
        num_vcs: Some(2),
        warmup_cycles: Some(500),
        measure_cycles: Some(3000),
        drain_cycles: Some(3000),
        ..SimConfig::default()
    });
    let r = routing("dor", &t, 2);
    let point = sim::simulate_point(&t, r.as_ref(), traffic(&t, "uniform", 0.9, 1), &p, 1, 0.9);
    assert!(point.saturated, "{point:?}");
    assert!(point.saturation_reason.is_some());
    assert!(point.accepted < 0.7);
    let calm = sim::simulate_point(&t, r.as_ref(), traffic(&t, "uniform", 0.1, 1), &p, 1, 0.1);
    assert!(!calm.saturated, "{calm:?}");
    assert!((calm.accepted - 0.1).abs() < 0.02);
    assert!((calm.offered - 0.1).abs() < 0.02);
}

#[test]
fn results_are_deterministic_whatever_the_thread_count() {
    let t = topo("torus:4x4,c=2");
    let p = params(SimConfig {
        num_vcs: Some(2),
        warmup_cycles: Some(300),
        measure_cycles: Some(2000),
        ..SimConfig::default()
    });
    let r = routing("dor", &t, 2);
    let tr = traffic(&t, "uniform", 0.2, 2);
    let loads = [0.1, 0.2, 0.3];
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| sim::sweep(&t, r.as_ref(), &tr, &p, 5, &loads, &|| {}).unwrap())
    };
    let strip = |mut v: Vec<sim::LoadPoint>| {
        for p in &mut v {
            p.wall_seconds = 0.0;
            p.setup_seconds = 0.0;
        }
        v
    };
    let a = strip(run(1));
    let b = strip(run(2));
    assert_eq!(a, b);
    assert!(a[0].latency_avg < a[2].latency_avg);
}

/// The `booksim` preset reproduces BookSim2's zero-load packet latency on an 8x8 mesh with
/// all channels of latency 1: 5H + 2 + (P-1) for a packet crossing H routers, and 4H + 2 +
/// (P-1) with lookahead routing (see docs/simulator.md for the derivation).
#[test]
fn booksim_preset_matches_booksim_zero_load_numbers() {
    let t = topo("mesh:8x8");
    for (lookahead, per_hop) in [(false, 5u64), (true, 4)] {
        let p = params(SimConfig {
            preset: Some("booksim".into()),
            routing_delay: lookahead.then_some(0),
            num_vcs: Some(2),
            vc_depth: Some(16),
            ..SimConfig::default()
        });
        let r = routing("dor", &t, 2);
        let mut e = Engine::new(&t, r.as_ref(), traffic(&t, "uniform", 1e-12, 1), p, 1);
        e.enable_log();
        // (9, 9): a packet to itself crosses one router, as BookSim2 sends it.
        for (src, dst, routers, size) in [
            (0u32, 1u32, 2u64, 1u32),
            (0, 63, 15, 1),
            (9, 54, 11, 4),
            (9, 9, 1, 1),
        ] {
            assert!(e.inject_packet(src, dst, size, 0));
            let rec = loop {
                e.step();
                if let Some(&rec) = e.take_log().first() {
                    break rec;
                }
            };
            for _ in 0..50 {
                e.step();
            }
            assert_eq!(rec.hops as u64 + 1, routers);
            assert_eq!(
                rec.delivered - rec.created,
                per_hop * routers + 2 + u64::from(size - 1),
                "lookahead {lookahead}: {src}->{dst}"
            );
        }
    }
}

/// The default watchdog (`deadlock_cycles` = 20,000) is longer than this whole run: the
/// deadlock must still be found and reported as one, not as saturation (the source queues
/// grow behind a deadlock too).
#[test]
fn a_deadlock_is_reported_even_when_the_watchdog_outlasts_the_run() {
    let t = topo("ring:4");
    let p = params(SimConfig {
        num_vcs: Some(1),
        vc_depth: Some(2),
        warmup_cycles: Some(100),
        measure_cycles: Some(5000),
        ..SimConfig::default()
    });
    assert!(p.deadlock_cycles > p.warmup_cycles + p.measure_cycles);
    let point = sim::simulate_point(&t, &Clockwise, traffic(&t, "uniform", 0.9, 8), &p, 1, 0.9);
    let d = point.deadlock.as_ref().expect("a deadlock");
    assert!(d.cycle < 2048, "found at the first or second probe: {d:?}");
    assert_eq!(point.status, sim::PointStatus::Deadlock);
    assert!(
        !point.saturated && point.saturation_reason.is_none(),
        "{point:?}"
    );
}

const SQUARE: [u32; 4] = [0, 1, 5, 4];

/// A deadlock confined to one square of VC-0 buffers while the rest of the network keeps
/// delivering (so no watchdog on global progress could see it) is found by the next probe,
/// and names only that square's VCs.
#[test]
fn a_partial_deadlock_is_found_while_other_traffic_moves() {
    let t = topo("mesh:4x4");
    let p = params(SimConfig {
        num_vcs: Some(2),
        vc_depth: Some(2),
        ..SimConfig::default()
    });
    let mut e = Engine::new(
        &t,
        &ClockwiseSquare(SQUARE),
        traffic(&t, "uniform", 0.3, 8),
        p,
        1,
    );
    let report = loop {
        for _ in 0..1024 {
            e.step();
        }
        if let Some(d) = e.find_deadlock() {
            break d;
        }
        assert!(e.now() < 200_000, "the square never deadlocked");
    };
    assert!(report.stalled_cycles < 64, "others still move: {report:?}");
    assert!(!report.cycle_vcs.is_empty());
    // Square routers only, on VC 0 between routers (a square packet may hold any VC of its
    // injection port, port 0).
    for &(r, port, vc) in &report.cycle_vcs {
        assert!(SQUARE.contains(&r), "{report:?}");
        assert!(port == 0 || vc == 0, "{report:?}");
    }
    let before = e.counters.packets_delivered;
    for _ in 0..2000 {
        e.step();
    }
    assert!(e.counters.packets_delivered > before + 50);
    assert!(e.find_deadlock().is_some(), "a deadlock never resolves");
}

/// BookSim2's separable input-first VC allocator (the `booksim` preset) spreads the requests
/// of a port's input VCs over its output VCs; asking each for the first free VC funnels them
/// onto VC 0, and latency rises well before saturation (8x8 mesh, DOR, 4 VCs, uniform 1-flit
/// packets at 0.4 of the 0.5 bisection bound).
#[test]
fn separable_vc_allocation_does_not_funnel_requests_onto_one_vc() {
    let t = topo("mesh:8x8");
    let latency = |kind| {
        let p = params(SimConfig {
            preset: Some("booksim".into()),
            routing_delay: Some(0),
            credit_delay: Some(2),
            num_vcs: Some(4),
            vc_depth: Some(8),
            vc_allocator: Some(kind),
            warmup_cycles: Some(3000),
            measure_cycles: Some(10_000),
            ..SimConfig::default()
        });
        let r = routing("dor", &t, 4);
        let point = sim::simulate_point(&t, r.as_ref(), traffic(&t, "uniform", 0.4, 1), &p, 1, 0.4);
        assert!(point.stable, "{point:?}");
        point.latency_avg
    };
    assert_eq!(
        params(SimConfig {
            preset: Some("booksim".into()),
            ..SimConfig::default()
        })
        .vc_allocator,
        sim::VcAllocatorKind::SeparableInputFirst
    );
    let separable = latency(sim::VcAllocatorKind::SeparableInputFirst);
    let first_free = latency(sim::VcAllocatorKind::FirstFree);
    assert!(separable < 0.8 * first_free, "{separable} vs {first_free}");
}

/// DOR on a torus that always takes `+` at a k/2 tie loads the `+` channels more under
/// uniform traffic (BookSim2 flips a coin): on the 8x8 torus it saturates at 0.41 flits per
/// terminal per cycle where the random tie is still stable.
#[test]
fn a_random_torus_tie_raises_dor_saturation() {
    let t = topo("torus:8x8");
    let p = params(SimConfig {
        num_vcs: Some(4),
        warmup_cycles: Some(3000),
        measure_cycles: Some(10_000),
        ..SimConfig::default()
    });
    let stable = |tie: &str| {
        let cfg = RoutingConfig::new("dor").with("tie", tie);
        let r = build_routing(&cfg, &t, 4).unwrap();
        sim::simulate_point(&t, r.as_ref(), traffic(&t, "uniform", 0.41, 1), &p, 1, 0.41).stable
    };
    assert!(!stable("plus"));
    assert!(stable("random"));
}

/// With bounded source queues an overloaded network throttles its sources instead of letting
/// queues grow: the packets refused at full queues are counted (`dropped`), and the point is
/// not stable although it accepts nearly everything that was created.
#[test]
fn packets_refused_at_full_source_queues_make_a_point_unstable() {
    let t = topo("mesh:4x4");
    let p = params(SimConfig {
        num_vcs: Some(2),
        warmup_cycles: Some(500),
        measure_cycles: Some(3000),
        ..SimConfig::default()
    });
    let r = routing("dor", &t, 2);
    let mut cfg = TrafficConfig::new("uniform", 0.9);
    cfg.source_queue = Some(1);
    let tr = Traffic::build(&[cfg], &t, 7, Path::new(".")).unwrap();
    let point = sim::simulate_point(&t, r.as_ref(), tr, &p, 1, 0.9);
    assert!(point.dropped > 0.2, "{point:?}");
    assert!(point.accepted > 0.9 * point.offered, "{point:?}");
    assert!(!point.stable, "{point:?}");
}

/// Routers are visited in increasing order, on networks above 131,072 input VCs from a list
/// with prefetching: both paths, and visits in decreasing order, deliver the same packets at
/// the same cycles, on both router models, random routings (UGAL, Valiant on a dragonfly and
/// a mesh) included, since each router draws from its own random stream. (The prefetching
/// path is otherwise only taken by the 16,512-node benchmark.)
#[test]
fn router_visiting_order_does_not_change_results() {
    type Outcome = (Vec<fabricopt::sim::engine::DeliveredPacket>, String);
    let run = |spec: &str, algorithm: &str, ioq: bool, order: (bool, bool)| -> Outcome {
        let t = topo(spec);
        let p = params(SimConfig {
            num_vcs: Some(4),
            vc_depth: Some(4),
            router: ioq.then_some(RouterKind::Ioq),
            ..SimConfig::default()
        });
        let r = routing(algorithm, &t, p.num_vcs);
        let tr = traffic(&t, "uniform", 0.4, 3);
        macro_rules! drive {
            ($e:expr) => {{
                let mut e = $e;
                e.set_router_order(order.0, order.1);
                e.enable_log();
                for _ in 0..700 {
                    e.step();
                }
                // Packets delivered in one cycle are logged in the order their flits were
                // sent, which is the visiting order: compare them sorted.
                let mut log = e.take_log();
                log.sort_by_key(|p| (p.delivered, p.dst, p.src, p.created));
                (log, format!("{:?}", e.counters))
            }};
        }
        if ioq {
            drive!(Engine::new_ioq(&t, r.as_ref(), tr, p, 21))
        } else {
            drive!(Engine::new(&t, r.as_ref(), tr, p, 21))
        }
    };
    for (spec, algorithm) in [
        ("mesh:4x4,c=2", "dor"),
        ("torus:4x4", "dor"),
        ("dragonfly:p=2,a=4,h=2,g=9", "min"),
        ("dragonfly:p=2,a=4,h=2,g=9", "ugal_n"),
        ("dragonfly:p=2,a=4,h=2,g=9", "val_g"),
        ("mesh:4x4", "valiant"),
    ] {
        for ioq in [false, true] {
            let ascending = run(spec, algorithm, ioq, (false, false));
            let prefetched = run(spec, algorithm, ioq, (true, false));
            let descending = run(spec, algorithm, ioq, (false, true));
            assert!(ascending.0.len() > 500, "{spec}: {}", ascending.0.len());
            assert_eq!(ascending, prefetched, "{spec} {algorithm} ioq {ioq}");
            assert_eq!(ascending, descending, "{spec} {algorithm} ioq {ioq}");
        }
    }
}
