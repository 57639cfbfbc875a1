//! The input-output-queued router (`[simulation] router = "ioq"`, docs/simulator.md): it
//! conserves flits and keeps its invariants every cycle under every kind of routing
//! (classical, adaptive, table with the VC hierarchy, Q-routing, Q-adaptive, DQN), delivers
//! every packet; a cyclic table deadlocks and the detector names the cycle; the zero-load
//! latency of a local-global-local path on the 1,056-node dragonfly is the hand derivation's.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fabricopt::registry::routing::build_routing;
use fabricopt::routing::RoutingConfig;
use fabricopt::routing::table::route::{TableClasses, TableMode, TableRouting};
use fabricopt::routing::table::{RouterPath, RoutingTable};
use fabricopt::sim::{Engine, RouterKind, RunEnd, SimConfig, SimParams, XbarArbitration};
use fabricopt::topology::{Topology, TopologyConfig};
use fabricopt::traffic::{Traffic, TrafficConfig};

fn topo(spec: &str) -> Topology {
    TopologyConfig::parse_spec(spec)
        .and_then(|c| c.build(Path::new("."), 1))
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn traffic(t: &Topology, load: f64, size: u32) -> Traffic {
    let mut cfg = TrafficConfig::new("uniform", load);
    cfg.packet_size = Some(size);
    Traffic::build(&[cfg], t, 7, Path::new(".")).unwrap()
}

fn ioq(vcs: usize, depth: u32, output_depth: u32, xbar: f64, arb: XbarArbitration) -> SimParams {
    SimConfig {
        router: Some(RouterKind::Ioq),
        num_vcs: Some(vcs),
        vc_depth: Some(depth),
        output_depth: Some(output_depth),
        xbar_period: Some(xbar),
        xbar_arb: Some(arb),
        input_latency: Some(1),
        output_latency: Some(1),
        deadlock_cycles: Some(2_000),
        ..SimConfig::default()
    }
    .resolve()
    .unwrap()
}

/// Networks and routings, one of each kind (the learned ones learn while the test runs).
const NETWORKS: &[(&str, &str)] = &[
    ("mesh:3x3", "dor"),
    ("torus:3x3", "dor"),
    ("torus:4x4", "duato"),
    ("torus:4x4", "star"),
    ("torus:4x4", "dqn"),
    ("mesh:4x4", "q_routing"),
    ("dragonfly:p=2", "min"),
    ("dragonfly:p=2", "val_n"),
    ("dragonfly:p=2", "ugal_g"),
    ("dragonfly:p=2", "ugal_n"),
    ("dragonfly:p=2", "par"),
    ("dragonfly:p=2", "ugal_g+merlin"),
    ("dragonfly:p=2", "ugal_n+merlin"),
    ("dragonfly:p=2", "par+merlin"),
    ("dragonfly:p=2", "q_adaptive"),
    ("jellyfish:routers=8,degree=3", "updown"),
    ("jellyfish:routers=10,degree=4", "dfsssp"),
];

proptest! {
    #![proptest_config(Config {
        cases: 96,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(14),
        failure_persistence: None,
        ..Config::default()
    })]

    /// A burst of random packets, then a drain: every flit is accounted for at every cycle
    /// (conservation, the credit protocol, the output buffers' reservations and counts),
    /// every accepted packet arrives in order at its destination, the network empties.
    #[test]
    fn every_packet_is_delivered_and_the_invariants_hold(
        network in 0..NETWORKS.len(),
        packets in 1usize..2000,
        size in 1u32..=4,
        extra_vcs in 0usize..=2,
        depth in 0u32..=4,
        output_depth in 0u32..=4,
        xbar in prop::sample::select(vec![0.25, 0.5, 1.0]),
        lru in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let (spec, algorithm) = NETWORKS[network];
        let t = topo(spec);
        // `+merlin`: the UGAL options preset "merlin" sets (the authors' VCs and cost).
        let routing_config = match algorithm.strip_suffix("+merlin") {
            Some(name) => RoutingConfig::new(name)
                .with("ugal_vcs", "merlin")
                .with("ugal_same_port", "path_vcs"),
            None => RoutingConfig::new(algorithm),
        };
        let probe = build_routing(&routing_config, &t, 8).unwrap();
        let vcs = probe.min_vcs() + extra_vcs;
        let routing = build_routing(&routing_config, &t, vcs).unwrap();
        let arb = if lru { XbarArbitration::Lru } else { XbarArbitration::RoundRobin };
        // Buffers hold a whole packet, DQN's 3-flit acknowledgements included (virtual
        // cut-through, as the router is meant to run).
        let whole = size.max(3);
        let params = ioq(vcs, whole + depth, whole + output_depth, xbar, arb);
        let mut engine = Engine::new_ioq(&t, routing.as_ref(), traffic(&t, 1e-12, 1), params, seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let terminals = t.num_terminals() as u32;
        let mut accepted = 0u64;
        for k in 0..packets {
            let src = rng.random_range(0..terminals);
            let mut dst = rng.random_range(0..terminals - 1);
            if dst >= src {
                dst += 1;
            }
            if engine.inject_packet(src, dst, size, 0) {
                accepted += 1;
            }
            if k % 2 == 0 {
                engine.step();
                engine.check_invariants().map_err(TestCaseError::fail)?;
            }
        }
        let mut cycles = 0u64;
        while engine.flits_in_network() > 0 || engine.queued_packets() > 0 {
            engine.step();
            engine.check_invariants().map_err(TestCaseError::fail)?;
            cycles += 1;
            if cycles > 200_000 {
                let why = engine
                    .find_deadlock()
                    .map_or("no deadlock found".to_string(), |d| d.to_string());
                return Err(TestCaseError::fail(format!("{spec} {algorithm}: not drained: {why}")));
            }
        }
        let c = &engine.counters;
        prop_assert!(c.packets_delivered >= accepted, "{} {}", spec, algorithm);
        prop_assert_eq!(c.flits_ejected, c.flits_injected);
        prop_assert_eq!(c.misdelivered, 0);
        prop_assert_eq!(c.out_of_order, 0);
    }
}

/// Every pair of the ring goes clockwise (port 2 of `ring:n`): one cycle of channel
/// dependencies round the ring.
fn clockwise_table(t: &Topology) -> RoutingTable {
    let n = t.num_routers();
    let mut paths = Vec::new();
    for s in 0..n {
        for d in (0..n).filter(|&d| d != s) {
            let mut routers = vec![s as u32];
            let mut r = s;
            while r != d {
                r = (r + 1) % n;
                routers.push(r as u32);
            }
            let ports = vec![2; routers.len() - 1];
            paths.push(RouterPath { routers, ports });
        }
    }
    RoutingTable::from_paths(n, paths).unwrap()
}

#[test]
fn a_cyclic_table_deadlocks_and_the_hierarchy_does_not() {
    let t = topo("ring:4");
    let table = clockwise_table(&t);
    let plain = TableRouting::new(&t, table.clone(), TableMode::Plain).unwrap();
    let params = |vcs| {
        let mut p = ioq(vcs, 8, 8, 1.0, XbarArbitration::Lru);
        p.measure_cycles = 5_000;
        p.warmup_cycles = 100;
        p.deadlock_cycles = 500;
        p
    };
    let mut e = Engine::new_ioq(&t, &plain, traffic(&t, 0.5, 8), params(1), 1);
    match e.run() {
        RunEnd::Deadlock(d) => {
            let mut routers: Vec<u32> = d.cycle_vcs.iter().map(|&(r, _, _)| r).collect();
            routers.sort();
            routers.dedup();
            assert_eq!(routers, vec![0, 1, 2, 3], "{d:?}");
            // Found by the analysis while flits could still move, or after a full stall.
            assert!(d.blocked_vcs >= 4, "{d:?}");
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
    let classes = TableClasses {
        table: 3..4,
        adaptive: 2..3,
        escape: 0..2,
    };
    let hier = TableRouting::new(&t, table, TableMode::Hierarchy(classes)).unwrap();
    for load in [0.3, 0.9] {
        let mut e = Engine::new_ioq(&t, &hier, traffic(&t, load, 8), params(4), 1);
        let end = e.run();
        assert!(
            matches!(end, RunEnd::Completed | RunEnd::Saturated(_)),
            "{load}: {end:?}"
        );
        e.check_invariants().unwrap();
        assert!(e.counters.packets_delivered > 100, "{:?}", e.counters);
    }
}

/// docs/simulator.md, "Zero-load latency (input-output-queued)": one packet at a time from
/// terminal 0 of the 1,056-node dragonfly under preset "merlin" (32-cycle flits, 3.2-cycle
/// crossbar ticks at cycles ceil(3.2 k), 10/10 input/output latency, links 10/30/300). Each
/// hop costs: wait for the next crossbar tick, then 32 (serialisation) + 10 (output) + link +
/// 10 (input; none into a terminal). Injected at cycle 0 (ticks repeat every 16 cycles, and
/// each packet goes 2,000 cycles after the previous one, so every packet sees the same
/// alignment):
///
/// - injection: 32 + 10 + 10 = 52; tick at 52 (k = 16);
/// - local-global-local: local hop 52 + 82 = 134, next tick 135 (k = 42); global hop 135 +
///   352 = 487, tick at 487 (k = 152); local hop 487 + 82 = 569, next tick 570 (k = 178);
///   ejection 570 + 52 = 622;
/// - local-global or global-local: 52 -> 134 -> 135 -> 487 (or 52 -> 404, tick at 404,
///   -> 486, next tick 487) -> ejection 539;
/// - global only: 52 -> 404 -> ejection 456.
#[test]
fn zero_load_latency_of_the_1056_node_dragonfly_is_the_derivation() {
    let text = std::fs::read_to_string("problems/dragonfly-1056-ioq-ur.toml").unwrap();
    let problem = fabricopt::problem_file::parse_problem(&text).unwrap();
    let loaded = fabricopt::problem_file::LoadedProblem {
        path: "problems/dragonfly-1056-ioq-ur.toml".into(),
        problem,
    };
    let s = fabricopt::cli::simulate::Setup::from_loaded(&loaded).unwrap();
    let quiet = traffic(&s.topo, 1e-12, 1);
    let mut e = Engine::new_ioq(&s.topo, s.routing.as_ref(), quiet, s.params.clone(), 1);
    e.enable_log();
    let far = 5 * 32..6 * 32; // the terminals of group 5
    for dst in far.clone() {
        assert!(e.inject_packet(0, dst, 1, 0));
        for _ in 0..2000 {
            e.step();
        }
    }
    let log = e.take_log();
    assert_eq!(log.len(), far.len());
    let mut seen = [0; 4];
    for p in &log {
        let expected = match p.hops {
            1 => 456,
            2 => 539,
            3 => 622,
            h => panic!("a minimal path of {h} hops: {p:?}"),
        };
        assert_eq!(p.delivered - p.created, expected, "{p:?}");
        seen[p.hops as usize] += 1;
    }
    // Group 5 is reached through one global link: l-g-l for most, l-g or g-l for some.
    assert!(seen[3] > 0 && seen[2] > 0, "{seen:?}");
}

/// Options of the Q-adaptive authors' code: `feedback_at = "input_exit"` needs the router that
/// reports packets leaving their input buffers, and is refused by name on the other; the
/// IOQ parameters are refused on the input-queued router, and a packet larger than the
/// output buffer is refused when the problem is read.
#[test]
fn router_options_that_cannot_work_are_refused_by_name() {
    let problem = |q: &str, sim: &str, size: u32| {
        format!(
            "[topology]\nkind = \"dragonfly\"\np = 2\n[routing]\nalgorithm = \"q_adaptive\"\n\
             [routing.q]\n{q}\n[[traffic]]\npattern = \"uniform\"\nload = 0.1\n\
             packet_size = {size}\n[simulation]\n{sim}\n"
        )
    };
    let setup = |text: String| {
        let loaded = fabricopt::problem_file::LoadedProblem {
            path: "p.toml".into(),
            problem: fabricopt::problem_file::parse_problem(&text).unwrap(),
        };
        fabricopt::cli::simulate::Setup::from_loaded(&loaded).map(|_| ())
    };
    let err = setup(problem("feedback_at = \"input_exit\"", "num_vcs = 5", 1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("routing.q.feedback_at") && err.contains("router = \"ioq\""),
        "{err}"
    );
    // (Preset merlin's 3.2-cycle crossbar would be slower than these 1-cycle links.)
    assert!(
        setup(problem(
            "feedback_at = \"input_exit\"",
            "router = \"ioq\"\nnum_vcs = 5",
            1
        ))
        .is_ok()
    );
    let err = setup(problem("", "num_vcs = 5\noutput_depth = 4", 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("simulation.output_depth"), "{err}");
    let err = setup(problem(
        "",
        "router = \"ioq\"\nnum_vcs = 5\nvc_depth = 30\noutput_depth = 4",
        8,
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("simulation.output_depth") && err.contains("up to 8 flits"),
        "{err}"
    );
}
