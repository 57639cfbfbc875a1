//! The throughput bound without the terminals x terminals matrix: the demand summed by router
//! and the terminal loads agree with the quadratic method, and the minimum-hop shortcut.

use std::path::Path;

use super::*;
use crate::routing::table::pair_index;
use crate::traffic::{Traffic, TrafficConfig};

use crate::topology::spec::test_topology as topology;

fn traffic(topo: &Topology, cfg: TrafficConfig) -> Traffic {
    Traffic::build(&[cfg], topo, 3, Path::new(".")).unwrap()
}

/// The quadratic method: the dense terminal matrix, summed by router.
fn quadratic(topo: &Topology, tr: &Traffic) -> (RouterDemand, f64) {
    let matrix = tr.traffic_matrix(0);
    let mut ejected = vec![0.0; topo.num_terminals()];
    let mut injected = vec![0.0; topo.num_terminals()];
    for (s, row) in matrix.iter().enumerate() {
        for (d, &r) in row.iter().enumerate() {
            injected[s] += r;
            ejected[d] += r;
        }
    }
    (
        RouterDemand::from_terminal_matrix(topo, &matrix),
        terminal_load(topo, &injected, &ejected),
    )
}

fn assert_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1e-300),
            "{what}[{i}]: {x} vs {y}"
        );
    }
}

#[test]
fn demand_by_router_matches_the_terminal_matrix() {
    let dragonfly = topology("dragonfly:p=2,a=4,h=2,g=9,global_latency=10");
    let mesh = topology("mesh:dims=4x4,concentration=2");
    let cases = [
        (&dragonfly, TrafficConfig::new("uniform", 0.3)),
        (
            &dragonfly,
            TrafficConfig {
                self_packets: Some(true),
                ..TrafficConfig::new("uniform", 0.3)
            },
        ),
        (&dragonfly, TrafficConfig::new("randperm", 0.7)),
        (&dragonfly, TrafficConfig::new("diagonal", 0.4)),
        (&mesh, TrafficConfig::new("bitcomp", 0.25)),
        (
            &mesh,
            TrafficConfig::new("hotspot", 0.5).with("hotspots", vec![3, 17]),
        ),
        (&mesh, TrafficConfig::new("uniform", 1.0)),
    ];
    for (topo, cfg) in cases {
        let name = format!("{cfg:?}");
        let tr = traffic(topo, cfg);
        let (demand, terminal) = quadratic(topo, &tr);
        let aggregated = tr.aggregated_demand(0, topo);
        let total: f64 = tr.traffic_matrix(0).iter().flatten().sum();
        assert!(
            (aggregated.total() - total).abs() <= 1e-12 * total,
            "{name}"
        );
        let t = terminal_load(topo, &aggregated.injected, &aggregated.ejected);
        assert!(
            (t - terminal).abs() <= 1e-12 * terminal,
            "{name}: {t} vs {terminal}"
        );
        let linear = RouterDemand::from_aggregated(aggregated);
        assert_close(&linear.demand, &demand.demand, &name);
    }
}

#[test]
fn uniform_demand_has_the_closed_form() {
    // 36 routers of 2 terminals: 72 terminals, each pair of distinct terminals 0.3 / 71.
    let topo = topology("dragonfly:p=2,a=4,h=2,g=9,global_latency=10");
    let tr = traffic(&topo, TrafficConfig::new("uniform", 0.3));
    let d = RouterDemand::from_aggregated(tr.aggregated_demand(0, &topo));
    let n = topo.num_routers();
    assert_eq!(d.demand[pair_index(n, 0, 35)], 4.0 * 0.3 / 71.0);
    assert_eq!(d.demand[pair_index(n, 7, 6)], 4.0 * 0.3 / 71.0);
}

#[test]
fn a_shortest_path_routing_bounds_the_optimum_from_above() {
    // Uniform traffic on a balanced dragonfly (p = 2, a = 4, h = 2, g = 9; 72 terminals),
    // global channels 10 cycles, local 1: the lowest-latency paths are the minimal ones
    // (local, global, local), unique; the one global channel between two groups carries 8 x 8
    // terminal pairs and each local channel 2 x 2 + 2 x 2 x 8 x 2 = 68 pairs, each 1 / 71
    // flits per cycle at load 1. By hops alone, paths over two global channels tie with them
    // and load some global channel with 120 pairs.
    let topo = topology("dragonfly:p=2,a=4,h=2,g=9,global_latency=10");
    let tr = traffic(&topo, TrafficConfig::new("uniform", 1.0));
    let demand = RouterDemand::from_aggregated(tr.aggregated_demand(0, &topo));
    let routing_load = feasible_load(&topo, &demand).unwrap();
    assert!((routing_load - 68.0 / 71.0).abs() < 1e-12, "{routing_load}");
    let optimum = routing_bound(&topo, &demand).unwrap().max_load;
    assert!(
        optimum <= routing_load * (1.0 + 1e-7),
        "{optimum} > {routing_load}"
    );
    // The terminal channels (load 1) bind: no solve needed.
    assert_eq!(
        routing_bound_above(&topo, &demand, 1.0).unwrap(),
        Above::AtMostFloor { routing_load }
    );
    // Below the routing's load the bound itself is computed.
    assert!(matches!(
        routing_bound_above(&topo, &demand, 0.5).unwrap(),
        Above::Bound(b) if b.max_load == optimum
    ));
}

#[test]
fn the_bound_on_5256_terminals_agrees_with_the_quadratic_method() {
    // The `fabricopt bench` dragonfly scaled to p = 6 (a = 12, h = 6, g = 73: 876 routers,
    // 5,256 terminals), uniform 0.2: the routing bound from the demand summed by router
    // equals the one from the 5,256 x 5,256 terminal matrix (221 MB) to 1e-9.
    let topo = topology(
        "dragonfly:p=6,a=12,h=6,g=73,arrangement=absolute,local_latency=10,global_latency=100",
    );
    let tr = traffic(&topo, TrafficConfig::new("uniform", 0.2));
    let (quadratic_demand, quadratic_terminal) = quadratic(&topo, &tr);
    let aggregated = tr.aggregated_demand(0, &topo);
    let terminal = terminal_load(&topo, &aggregated.injected, &aggregated.ejected);
    let linear_demand = RouterDemand::from_aggregated(aggregated);
    assert!((terminal - quadratic_terminal).abs() <= 1e-9 * terminal);
    let quadratic = routing_bound(&topo, &quadratic_demand).unwrap();
    let linear = routing_bound(&topo, &linear_demand).unwrap();
    eprintln!("p = 6 uniform 0.2: quadratic {quadratic:?}, linear {linear:?}");
    assert!(
        (linear.max_load - quadratic.max_load).abs() <= 1e-9 * quadratic.max_load,
        "{} vs {}",
        linear.max_load,
        quadratic.max_load
    );
    let gap = |b: &Bound| match b.kind {
        BoundKind::Approximate { gap } => gap,
        BoundKind::Exact => 0.0,
    };
    assert!((gap(&linear) - gap(&quadratic)).abs() <= 1e-9);
    // Minimal routing loads each global channel with 72 x 72 pairs and each local one with
    // 6 x 6 + 2 x 6 x 6 x 72 = 5,220 pairs of 0.2 / 5,255: below the terminals' 0.2.
    let routing_load = feasible_load(&topo, &linear_demand).unwrap();
    assert!(
        (routing_load - 5220.0 * 0.2 / 5255.0).abs() < 1e-12,
        "{routing_load}"
    );
    assert!(quadratic.max_load <= routing_load * (1.0 + 1e-9));
}
