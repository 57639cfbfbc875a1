//! Table-driven routing in the simulator (`routing.algorithm = "table"`): a table with a
//! cyclic channel dependency deadlocks in plain mode and completes under the VC hierarchy;
//! paths that revisit a router are followed hop by hop; the DOR table reproduces `dor`
//! bit for bit; registry errors name their field.

use std::path::Path;

use fabricopt::registry::routing::build_routing;
use fabricopt::routing::table::route::{TableClasses, TableMode, TableRouting, table_from_routing};
use fabricopt::routing::table::{RouterPath, RoutingTable, pair_index};
use fabricopt::routing::{RoutingConfig, RoutingFunction};
use fabricopt::sim::{self, Engine, RunEnd, SimConfig, SimParams};
use fabricopt::topology::{Topology, TopologyConfig};
use fabricopt::traffic::{Traffic, TrafficConfig};

fn topo(spec: &str) -> Topology {
    TopologyConfig::parse_spec(spec)
        .unwrap()
        .build(Path::new("."), 1)
        .unwrap()
}

fn traffic(t: &Topology, pattern: &str, load: f64, size: u32) -> Traffic {
    let mut cfg = TrafficConfig::new(pattern, load);
    cfg.packet_size = Some(size);
    Traffic::build(&[cfg], t, 7, Path::new(".")).unwrap()
}

fn routing(name: &str, t: &Topology, vcs: usize) -> Box<dyn RoutingFunction> {
    let cfg = RoutingConfig::new(name);
    build_routing(&cfg, t, vcs).unwrap()
}

/// Every pair of the ring goes clockwise (port 2 of the `ring:n` generator, as in
/// tests/simulator.rs): the channel dependencies form one cycle round the ring.
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
    let table = RoutingTable::from_paths(n, paths).unwrap();
    table.validate(t).unwrap();
    table
}

fn ring_params(num_vcs: usize) -> SimParams {
    SimConfig {
        num_vcs: Some(num_vcs),
        vc_depth: Some(2),
        deadlock_cycles: Some(300),
        warmup_cycles: Some(100),
        measure_cycles: Some(5000),
        ..SimConfig::default()
    }
    .resolve()
    .unwrap()
}

#[test]
fn a_cyclic_table_deadlocks_in_plain_mode_and_completes_under_the_hierarchy() {
    let t = topo("ring:4");
    let table = clockwise_table(&t);
    let load = 0.3;
    // Plain: one VC, the table's cyclic dependency deadlocks.
    let plain = TableRouting::new(&t, table.clone(), TableMode::Plain).unwrap();
    let mut e = Engine::new(
        &t,
        &plain,
        traffic(&t, "uniform", load, 8),
        ring_params(1),
        1,
    );
    match e.run() {
        RunEnd::Deadlock(d) => {
            let mut routers: Vec<u32> = d.cycle_vcs.iter().map(|&(r, _, _)| r).collect();
            routers.sort();
            routers.dedup();
            assert_eq!(routers, vec![0, 1, 2, 3], "{d:?}");
            eprintln!(
                "plain: deadlock at cycle {} through {:?}",
                d.cycle, d.cycle_vcs
            );
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
    // Hierarchy: same table and traffic, escape = DOR with its two dateline VCs.
    let classes = TableClasses {
        table: 3..4,
        adaptive: 2..3,
        escape: 0..2,
    };
    let hier = TableRouting::new(&t, table.clone(), TableMode::Hierarchy(classes)).unwrap();
    let mut e = Engine::new(
        &t,
        &hier,
        traffic(&t, "uniform", load, 8),
        ring_params(4),
        1,
    );
    for _ in 0..3000 {
        e.step();
        if let Err(msg) = e.check_invariants() {
            panic!("cycle {}: {msg}", e.now());
        }
    }
    assert!(e.counters.packets_delivered > 100, "{:?}", e.counters);
    let mut e = Engine::new(
        &t,
        &hier,
        traffic(&t, "uniform", load, 8),
        ring_params(4),
        1,
    );
    assert_eq!(e.run(), RunEnd::Completed);
    let c = &e.counters;
    assert_eq!((c.misdelivered, c.out_of_order), (0, 0));
    eprintln!("hierarchy: {c:?}");
    // Past saturation the hierarchy saturates but never deadlocks (the detector runs all along).
    for heavy in [0.6, 0.9] {
        let mut e = Engine::new(
            &t,
            &hier,
            traffic(&t, "uniform", heavy, 8),
            ring_params(4),
            1,
        );
        let end = e.run();
        assert!(matches!(end, RunEnd::Saturated(_)), "{heavy}: {end:?}");
        e.check_invariants().unwrap();
    }
    // Layered: the pairs whose path turns from channel 3->0 onto 0->1 get layer 1, which
    // breaks the cycle in each layer. Every pair keeps one VC (clockwise, 2-flit buffers), so
    // it saturates below 0.3: run it at half the load.
    let n = t.num_routers();
    let mut layers = vec![0u8; n * (n - 1)];
    for (i, p) in table.paths().enumerate() {
        if p.routers.windows(3).any(|w| w[0] == 3 && w[1] == 0) {
            layers[i] = 1;
        }
    }
    let layered = TableRouting::new(&t, table, TableMode::Layered(layers)).unwrap();
    assert_eq!(layered.min_vcs(), 2);
    let mut e = Engine::new(
        &t,
        &layered,
        traffic(&t, "uniform", load / 2.0, 8),
        ring_params(2),
        1,
    );
    assert_eq!(e.run(), RunEnd::Completed);
}

#[test]
fn the_hierarchy_sustains_load_where_the_plain_table_deadlocks() {
    // 4x4 torus, every pair dimension-ordered but always in the + direction: cyclic
    // dependencies round every ring.
    let t = topo("torus:4x4");
    let n = t.num_routers();
    let mut paths = Vec::new();
    for s in 0..n {
        for d in (0..n).filter(|&d| d != s) {
            let (mut routers, mut ports) = (vec![s as u32], Vec::new());
            let mut r = s;
            while r % 4 != d % 4 {
                r = r - r % 4 + (r % 4 + 1) % 4;
                routers.push(r as u32);
                ports.push(2);
            }
            while r != d {
                r = (r + 4) % 16;
                routers.push(r as u32);
                ports.push(4);
            }
            paths.push(RouterPath { routers, ports });
        }
    }
    let table = RoutingTable::from_paths(n, paths).unwrap();
    let params = |vcs| {
        SimConfig {
            num_vcs: Some(vcs),
            vc_depth: Some(4),
            deadlock_cycles: Some(500),
            warmup_cycles: Some(500),
            measure_cycles: Some(3000),
            ..SimConfig::default()
        }
        .resolve()
        .unwrap()
    };
    let plain = TableRouting::new(&t, table.clone(), TableMode::Plain).unwrap();
    let p = sim::simulate_point(
        &t,
        &plain,
        traffic(&t, "uniform", 0.5, 4),
        &params(1),
        3,
        0.5,
    );
    assert!(p.deadlock.is_some(), "{p:?}");
    let classes = TableClasses::defaults(&t, 8);
    let hier = TableRouting::new(&t, table, TableMode::Hierarchy(classes)).unwrap();
    let p = sim::simulate_point(
        &t,
        &hier,
        traffic(&t, "uniform", 0.5, 4),
        &params(8),
        3,
        0.5,
    );
    assert!(p.deadlock.is_none() && !p.saturated, "{p:?}");
    assert!((p.accepted - 0.5).abs() < 0.05, "{}", p.accepted);
    eprintln!(
        "torus 4x4 +-only table, hierarchy, load 0.5: accepted {:.3}, latency {:.1}, hops {:.2}",
        p.accepted, p.latency_avg, p.hops_avg
    );
}

#[test]
fn a_path_that_revisits_a_router_is_followed_hop_by_hop() {
    let t = topo("mesh:4x4");
    let dor = routing("dor", &t, 2);
    let mut table = table_from_routing(dor.as_ref(), &t, 2).unwrap();
    // 0 -> 2 out through 1, up to 5, back down to 1, on to 2: router 1 twice, with a
    // different port each time (searching the path for router 1 would loop 1 -> 5 -> 1).
    let detour = RouterPath {
        routers: vec![0, 1, 5, 1, 2],
        ports: vec![2, 4, 3, 2],
    };
    detour.validate(&t).unwrap();
    table.set_path(pair_index(16, 0, 2), detour);
    let classes = TableClasses::defaults(&t, 6);
    for mode in [TableMode::Plain, TableMode::Hierarchy(classes)] {
        let r = TableRouting::new(&t, table.clone(), mode).unwrap();
        let p = SimConfig {
            num_vcs: Some(6),
            ..SimConfig::default()
        }
        .resolve()
        .unwrap();
        let mut e = Engine::new(&t, &r, traffic(&t, "uniform", 1e-12, 1), p, 1);
        e.enable_log();
        assert!(e.inject_packet(0, 2, 4, 0));
        assert!(e.inject_packet(0, 3, 4, 0));
        for _ in 0..200 {
            e.step();
        }
        let mut log = e.take_log();
        log.sort_by_key(|p| p.dst);
        let got: Vec<(u32, u32)> = log.iter().map(|p| (p.dst, p.hops)).collect();
        assert_eq!(got, vec![(2, 4), (3, 3)], "{}", r.name());
        assert_eq!(e.counters.misdelivered, 0);
        e.check_invariants().unwrap();
    }
}

#[test]
fn the_dor_table_in_plain_mode_reproduces_dor_exactly() {
    let t = topo("mesh:4x4");
    let params = SimConfig {
        num_vcs: Some(2),
        warmup_cycles: Some(1000),
        measure_cycles: Some(4000),
        drain_cycles: Some(10000),
        ..SimConfig::default()
    }
    .resolve()
    .unwrap();
    let dor = routing("dor", &t, 2);
    let table = table_from_routing(dor.as_ref(), &t, 2).unwrap();
    let plain = TableRouting::new(&t, table, TableMode::Plain).unwrap();
    for load in [0.1, 0.3, 0.45, 0.7] {
        for pattern in ["uniform", "transpose"] {
            let run = |r: &dyn RoutingFunction| {
                let mut p =
                    sim::simulate_point(&t, r, traffic(&t, pattern, load, 4), &params, 5, load);
                p.wall_seconds = 0.0;
                p.setup_seconds = 0.0;
                p
            };
            let (a, b) = (run(dor.as_ref()), run(&plain));
            assert_eq!(a, b, "{pattern} at {load}");
            assert!(a.counters.packets_delivered > 0);
        }
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn registry_errors_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = topo("mesh:4x4");
    let mesh3 = topo("mesh:3x3");
    let dor = routing("dor", &mesh, 1);
    let table = table_from_routing(dor.as_ref(), &mesh, 1).unwrap();
    write(
        dir.path(),
        "mesh.json",
        &fabricopt::export::routes::to_json_string(&table, &Default::default()),
    );
    let cfg = |f: &dyn Fn(&mut RoutingConfig)| {
        let mut c = RoutingConfig {
            base_dir: Some(dir.path().to_path_buf()),
            ..RoutingConfig::new("table").with("table", "mesh.json")
        };
        f(&mut c);
        c
    };
    let err = |c: RoutingConfig, t: &Topology, vcs| {
        let e = build_routing(&c, t, vcs).err().unwrap().to_string();
        assert!(!e.contains('\n'), "{e}");
        e
    };
    // Relative to the base directory; defaults table [4, 8), adaptive [1, 4), escape [0, 1).
    let r = build_routing(&cfg(&|_| {}), &mesh, 8).unwrap();
    assert_eq!((r.name().as_str(), r.min_vcs()), ("table (hierarchy)", 8));
    let e = err(cfg(&|c| c.set("table", "missing.json")), &mesh, 8);
    assert!(e.starts_with("routing.table: cannot read "), "{e}");
    assert!(e.contains("missing.json"), "{e}");
    let e = err(cfg(&|c| c.params.remove("table")), &mesh, 8);
    assert!(
        e.starts_with("routing.table: routing `table` needs a table file"),
        "{e}"
    );
    let e = err(cfg(&|_| {}), &mesh3, 8);
    assert!(e.starts_with("routing.table: "), "{e}");
    assert!(e.ends_with("num_routers: 16 but the topology has 9"), "{e}");
    let e = err(cfg(&|c| c.set("adaptive_vcs", [1, 5])), &mesh, 8);
    assert_eq!(e, "routing.adaptive_vcs: [1, 5) overlaps table_vcs [4, 8)");
    let e = err(cfg(&|c| c.set("table_vcs", [4, 10])), &mesh, 8);
    assert_eq!(
        e,
        "routing.table_vcs: [4, 10) goes beyond the 8 VCs per channel (simulation.num_vcs)"
    );
    // Fewer than 5 VCs: the classes above the escape split between table and adaptive.
    let r = build_routing(&cfg(&|_| {}), &mesh, 4).unwrap();
    assert_eq!(r.min_vcs(), 4);
    let e = err(cfg(&|c| c.set("table_vcs", [4, 4])), &mesh, 8);
    assert!(
        e.starts_with("routing.table_vcs: the table VC class [4, 4) is empty"),
        "{e}"
    );
    let e = err(cfg(&|_| {}), &mesh, 1);
    assert!(
        e.starts_with("simulation.num_vcs: the table > adaptive > escape"),
        "{e}"
    );
    let e = err(cfg(&|c| c.set("escape_vcs", [0, 0])), &mesh, 8);
    assert_eq!(e, "routing.escape_vcs: the escape class needs a VC");
    let e = err(
        cfg(&|c| {
            c.set(
                "table_mode",
                fabricopt::routing::table::route::TableModeName::Plain,
            );
            c.set("escape_vcs", [0, 1]);
        }),
        &mesh,
        8,
    );
    assert_eq!(
        e,
        "routing.escape_vcs: applies to `table_mode = \"hierarchy\"` only"
    );
    let e = err(
        cfg(&|c| {
            c.set(
                "table_mode",
                fabricopt::routing::table::route::TableModeName::Layered,
            )
        }),
        &mesh,
        8,
    );
    assert!(e.starts_with("routing.table_layers: "), "{e}");
    let e = err(
        RoutingConfig::new("dor").with("table", "mesh.json"),
        &mesh,
        2,
    );
    assert_eq!(e, "routing.table: does not apply to routing `dor`");
    // Plain mode with a small VC count; layered mode with its layers file.
    let mut c = cfg(&|c| {
        c.set(
            "table_mode",
            fabricopt::routing::table::route::TableModeName::Plain,
        )
    });
    assert_eq!(build_routing(&c, &mesh, 1).unwrap().name(), "table (plain)");
    write(dir.path(), "layers.json", &format!("{:?}", vec![1u8; 240]));
    c.set(
        "table_mode",
        fabricopt::routing::table::route::TableModeName::Layered,
    );
    c.set("table_layers", "layers.json");
    let e = err(c.clone(), &mesh, 1);
    assert!(e.starts_with("simulation.num_vcs: "), "{e}");
    assert_eq!(build_routing(&c, &mesh, 2).unwrap().min_vcs(), 2);
}
