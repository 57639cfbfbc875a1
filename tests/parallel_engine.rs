//! The parallel engine (one network split between threads) against the sequential engine:
//! the same run end, cycle, counters and statistics, bit for bit, on every routing family it
//! runs, and a clear refusal of what it does not run.

use std::path::Path;

use fabricopt::registry::routing::build_routing;
use fabricopt::routing::table::route::{TableClasses, TableMode, TableRouting, table_from_routing};
#[path = "support/deadlocking.rs"]
mod deadlocking;

use deadlocking::{Clockwise, ClockwiseSquare};
use fabricopt::routing::{RoutingConfig, RoutingFunction};
use fabricopt::sim::engine::run_partitioned;
use fabricopt::sim::{Engine, RouterKind, RunEnd, SimConfig, SimParams};
use fabricopt::topology::{Topology, TopologyConfig};
use fabricopt::traffic::{Traffic, TrafficConfig};

fn topo(spec: &str) -> Topology {
    TopologyConfig::parse_spec(spec)
        .unwrap()
        .build(Path::new("."), 1)
        .unwrap()
}

fn traffic(t: &Topology, pattern: &str, load: f64) -> Traffic {
    let mut cfg = TrafficConfig::new(pattern, load);
    cfg.packet_size = Some(4);
    Traffic::build(&[cfg], t, 7, Path::new(".")).unwrap()
}

fn params(vcs: usize, depth: u32) -> SimParams {
    config(vcs, depth).resolve().unwrap()
}

fn config(vcs: usize, depth: u32) -> SimConfig {
    SimConfig {
        num_vcs: Some(vcs),
        vc_depth: Some(depth),
        warmup_cycles: Some(600),
        measure_cycles: Some(2500),
        ..SimConfig::default()
    }
}

/// The input-output-queued router with its defaults.
fn ioq_params(vcs: usize, depth: u32) -> SimParams {
    SimConfig {
        router: Some(RouterKind::Ioq),
        ..config(vcs, depth)
    }
    .resolve()
    .unwrap()
}

/// Runs `routing` sequentially and in 2 and 3 partitions; everything measured must agree.
fn agrees(t: &Topology, routing: &dyn RoutingFunction, tr: &Traffic, p: &SimParams) -> RunEnd {
    let seed = 11;
    macro_rules! sequential {
        ($engine:expr) => {{
            let mut sequential = $engine;
            let end = sequential.run();
            (
                end,
                sequential.now(),
                sequential.counters.clone(),
                format!("{:?}", sequential.stats.summarize(t.num_terminals())),
            )
        }};
    }
    let expected = if p.ioq.is_some() {
        sequential!(Engine::new_ioq(t, routing, tr.clone(), p.clone(), seed))
    } else {
        sequential!(Engine::new(t, routing, tr.clone(), p.clone(), seed))
    };
    let end = expected.0.clone();
    for parts in [2, 3] {
        let run = run_partitioned(t, routing, tr, p, seed, parts).unwrap();
        assert!(run.partitioning.cut_channels > 0);
        let got = (
            run.end,
            run.now,
            run.counters,
            format!("{:?}", run.stats.summarize(t.num_terminals())),
        );
        assert_eq!(got, expected, "{} in {parts} partitions", routing.name());
    }
    end
}

/// Global channels five times as long as local ones, as in the bench case.
const DRAGONFLY: &str = "dragonfly:p=2,a=4,h=2,g=9,local_latency=2,global_latency=10";

fn named(name: &str, t: &Topology, vcs: usize) -> Box<dyn RoutingFunction> {
    build_routing(&RoutingConfig::new(name), t, vcs).unwrap()
}

#[test]
fn mesh_and_torus_agree_bit_for_bit() {
    for (spec, algorithm, load) in [
        ("mesh:6x6,c=2", "dor", 0.15),
        ("torus:6x6", "dor", 0.35),
        ("mesh:6x6", "duato", 0.4),
        ("mesh:6x6", "valiant", 0.2),
    ] {
        let t = topo(spec);
        let p = params(4, 4);
        let r = named(algorithm, &t, p.num_vcs);
        let end = agrees(&t, r.as_ref(), &traffic(&t, "uniform", load), &p);
        assert_eq!(end, RunEnd::Completed, "{spec} {algorithm}");
    }
}

#[test]
fn dragonfly_min_ugal_par_valiant_agree_bit_for_bit() {
    let t = topo(DRAGONFLY);
    let p = params(5, 16);
    for (algorithm, pattern, load) in [
        ("min", "uniform", 0.3),
        ("ugal_g", "uniform", 0.3),
        ("ugal_n", "randperm", 0.3),
        ("par", "uniform", 0.35),
        ("val_g", "uniform", 0.25),
    ] {
        let r = named(algorithm, &t, p.num_vcs);
        let end = agrees(&t, r.as_ref(), &traffic(&t, pattern, load), &p);
        assert_eq!(end, RunEnd::Completed, "{algorithm} {pattern}");
    }
}

#[test]
fn table_routed_exanest_agrees_bit_for_bit() {
    let t = topo("exanest:R=2,N=4,M=2,genome=5/17/8/22");
    let vcs = 4;
    let updown = named("updown", &t, vcs);
    let table = table_from_routing(updown.as_ref(), &t, vcs).unwrap();
    let classes = TableClasses::defaults(&t, vcs);
    let routing = TableRouting::new(&t, table, TableMode::Hierarchy(classes)).unwrap();
    let p = params(vcs, 4);
    let end = agrees(&t, &routing, &traffic(&t, "uniform", 0.1), &p);
    assert_eq!(end, RunEnd::Completed);
}

/// A saturated run ends the same way, at the same cycle, with the same reason.
#[test]
fn saturation_is_found_at_the_same_cycle() {
    let t = topo("mesh:6x6");
    let p = params(2, 4);
    let r = named("dor", &t, p.num_vcs);
    let tr = traffic(&t, "uniform", 0.9);
    let mut sequential = Engine::new(&t, r.as_ref(), tr.clone(), p.clone(), 5);
    let end = sequential.run();
    assert!(matches!(end, RunEnd::Saturated(_)), "{end:?}");
    let run = run_partitioned(&t, r.as_ref(), &tr, &p, 5, 2).unwrap();
    assert_eq!(run.end, end);
    // The source-queue limit passed inside a window (11-cycle lookahead; 160 is first passed
    // at cycle 86, inside the window 77-88, so the run is made again): the same cycle,
    // counters and statistics as the sequential run, which stops right there.
    let t = topo(DRAGONFLY);
    let mut p = params(3, 16);
    p.max_queued_packets = 160;
    let r = named("min", &t, p.num_vcs);
    let end = agrees(&t, r.as_ref(), &traffic(&t, "uniform", 0.95), &p);
    let RunEnd::Saturated(reason) = end else {
        panic!("expected the queue limit, got {end:?}")
    };
    assert!(reason.contains("more than 160 packets"), "{reason}");
}

#[test]
fn partitions_follow_the_long_channels() {
    use fabricopt::sim::engine::Partitioning;
    let _ = std::any::type_name::<Partitioning>();
    let t = topo(DRAGONFLY);
    let p = params(4, 4);
    let r = named("min", &t, p.num_vcs);
    let run = run_partitioned(&t, r.as_ref(), &traffic(&t, "uniform", 0.1), &p, 1, 3).unwrap();
    let parts = &run.partitioning;
    // Whole groups (4 routers each), 3 per partition: only global channels are cut.
    for g in 0..9 {
        let part = parts.router_part[4 * g];
        assert!((0..4).all(|i| parts.router_part[4 * g + i] == part));
    }
    let per_part: Vec<usize> = (0..3)
        .map(|k| parts.router_part.iter().filter(|&&x| x == k).count())
        .collect();
    assert_eq!(per_part, [12, 12, 12]);
    assert!(parts.method.contains("9 groups"), "{}", parts.method);
}

/// Q-adaptive and Q-routing learn per router, and their feedback crosses the cut as remote
/// updates one link's latency late: the same Q-tables, so the same routes, bit for bit, on
/// both router models (the input-output-queued one sending feedback when the packet leaves
/// the input buffer as well as at the head's arrival).
#[test]
fn learned_routings_agree_bit_for_bit() {
    let t = topo(DRAGONFLY);
    for (algorithm, ioq, pattern) in [
        ("q_adaptive", false, "uniform"),
        ("q_adaptive", false, "randperm"),
        ("q_routing", false, "uniform"),
        ("q_adaptive", true, "uniform"),
    ] {
        let p = if ioq {
            ioq_params(5, 16)
        } else {
            params(5, 16)
        };
        let r = named(algorithm, &t, p.num_vcs);
        let end = agrees(&t, r.as_ref(), &traffic(&t, pattern, 0.15), &p);
        assert_eq!(end, RunEnd::Completed, "{algorithm} ioq {ioq}");
    }
    let cfg = RoutingConfig::new("q_adaptive").with(
        "q",
        std::collections::BTreeMap::from([("feedback_at", "input_exit")]),
    );
    let p = ioq_params(5, 16);
    let r = build_routing(&cfg, &t, p.num_vcs).unwrap();
    let end = agrees(&t, r.as_ref(), &traffic(&t, "uniform", 0.15), &p);
    assert_eq!(end, RunEnd::Completed, "q_adaptive, feedback at input exit");
}

/// A load point without its timings (everything measured must agree).
fn measured(point: fabricopt::sim::LoadPoint) -> fabricopt::sim::LoadPoint {
    fabricopt::sim::LoadPoint {
        wall_seconds: 0.0,
        setup_seconds: 0.0,
        ..point
    }
}

/// Pre-training (each partition's Q-table session carried from run to run, frozen or not)
/// and the timeline (every partition's packets joined into the same windows) give the
/// sequential engine's load point; so does a pre-training run stopped by the source-queue
/// limit inside a window, which makes the whole chain of runs start over.
#[test]
fn pretraining_and_timelines_agree_bit_for_bit() {
    let t = topo(DRAGONFLY);
    let r = named("q_adaptive", &t, 5);
    for (load, freeze, max_queued) in [
        (0.15, false, None),
        (0.2, true, None),
        (0.95, false, Some(160)),
    ] {
        let mut p = SimConfig {
            pretrain_runs: Some(2),
            freeze_after_pretrain: Some(freeze),
            timeline_window: Some(250),
            ..config(5, 16)
        }
        .resolve()
        .unwrap();
        if let Some(limit) = max_queued {
            p.max_queued_packets = limit;
        }
        let tr = traffic(&t, "uniform", load);
        let sequential = measured(fabricopt::sim::simulate_point(
            &t,
            r.as_ref(),
            tr.clone(),
            &p,
            3,
            load,
        ));
        if max_queued.is_some() {
            // Every run stops at the limit, inside a window of the partitioned runs.
            assert_eq!(sequential.status, fabricopt::sim::PointStatus::Saturated);
        } else {
            assert!(
                sequential.timeline.len() >= 10,
                "{load}: {:?}",
                sequential.timeline
            );
        }
        for parts in [2, 3] {
            let split = SimParams {
                partitions: parts,
                ..p.clone()
            };
            let got = measured(fabricopt::sim::simulate_point(
                &t,
                r.as_ref(),
                tr.clone(),
                &split,
                3,
                load,
            ));
            assert_eq!(
                got, sequential,
                "load {load}, freeze {freeze}, {parts} partitions"
            );
        }
    }
}

#[test]
fn dqn_and_too_many_partitions_are_refused_clearly() {
    let t = topo("torus:4x4");
    let p = params(4, 16);
    let dqn = named("dqn", &t, p.num_vcs);
    let err = run_partitioned(&t, dqn.as_ref(), &traffic(&t, "uniform", 0.1), &p, 1, 2)
        .err()
        .unwrap();
    assert!(err.contains("parallel engine"), "{err}");
    // The reason, not just the refusal: what DQN-routing shares across a cut.
    assert!(err.contains("neighbouring routers' buffers"), "{err}");
    assert!(err.contains("partitions = 1"), "{err}");
    let dor = named("dor", &t, p.num_vcs);
    let err = run_partitioned(&t, dor.as_ref(), &traffic(&t, "uniform", 0.1), &p, 1, 17)
        .err()
        .unwrap();
    assert!(err.contains("17 partitions"), "{err}");
}

/// A square across the cut between routers 0-7 and 8-15 of a 4x4 mesh.
const SQUARE: [u32; 4] = [5, 6, 10, 9];

/// Deadlocks are found at the same cycle with the same report: one that stops the whole ring
/// (found by the joined analysis of both partitions), one confined to a square across the
/// cut while the rest of the mesh keeps delivering.
#[test]
fn deadlocks_across_the_cut_are_reported_identically() {
    let ring = topo("ring:4");
    let mut p = params(1, 2);
    p.deadlock_cycles = 300;
    p.measure_cycles = 5000;
    let end = agrees(&ring, &Clockwise, &traffic(&ring, "uniform", 0.9), &p);
    let RunEnd::Deadlock(report) = end else {
        panic!("expected a deadlock, got {end:?}")
    };
    assert!(report.blocked_vcs > 0);
    let mesh = topo("mesh:4x4");
    let mut p = params(2, 2);
    p.measure_cycles = 100_000;
    let end = agrees(
        &mesh,
        &ClockwiseSquare(SQUARE),
        &traffic(&mesh, "uniform", 0.3),
        &p,
    );
    let RunEnd::Deadlock(report) = end else {
        panic!("expected a deadlock, got {end:?}")
    };
    assert!(report.stalled_cycles < 64, "others still move: {report:?}");
    assert!(
        report.cycle_vcs.iter().all(|v| SQUARE.contains(&v.0)),
        "{report:?}"
    );
}

/// The input-output-queued router: its own timing (serialisation, input and output latency in
/// the lookahead) and its own deadlock analysis (input and output buffers), joined across the
/// cut.
#[test]
fn the_input_output_queued_router_agrees_bit_for_bit() {
    for (spec, algorithm, vcs, load) in [
        ("mesh:6x6", "dor", 2, 0.3),
        (DRAGONFLY, "min", 3, 0.3),
        (DRAGONFLY, "ugal_n", 4, 0.3),
    ] {
        let t = topo(spec);
        let p = ioq_params(vcs, 16);
        let r = named(algorithm, &t, vcs);
        let end = agrees(&t, r.as_ref(), &traffic(&t, "uniform", load), &p);
        assert_eq!(end, RunEnd::Completed, "{spec} {algorithm}");
    }
    // This router routes a head in its arrival cycle, so a routing that draws there (DOR's
    // coin at a torus tie) would see two heads reaching a router together in the order they
    // were sent, which is not the same in the two engines. Routing them after all the
    // cycle's arrivals, in input VC order, makes it so; before, this case differed.
    let torus = topo("torus:8x8");
    let dor = RoutingConfig::new("dor").with("tie", "random");
    let r = build_routing(&dor, &torus, 2).unwrap();
    let mut p = ioq_params(2, 8);
    p.measure_cycles = 3000;
    let mut single_flit = TrafficConfig::new("uniform", 0.3);
    single_flit.packet_size = Some(1);
    let tr = Traffic::build(&[single_flit], &torus, 7, Path::new(".")).unwrap();
    let end = agrees(&torus, r.as_ref(), &tr, &p);
    assert_eq!(end, RunEnd::Completed, "torus DOR, random ties");
    let ring = topo("ring:4");
    let mut p = ioq_params(1, 2);
    p.deadlock_cycles = 300;
    p.measure_cycles = 5000;
    let end = agrees(&ring, &Clockwise, &traffic(&ring, "uniform", 0.9), &p);
    assert!(matches!(end, RunEnd::Deadlock(_)), "{end:?}");
}
