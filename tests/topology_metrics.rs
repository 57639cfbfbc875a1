//! Topology generators and metrics against known values: rings, k-ary n-cubes, meshes,
//! hypercubes, complete graphs, dragonflies and the ExaNeSt worked example; Menger's theorem
//! on small random graphs; symmetric and brute-force metrics agree.

use fabricopt::topology::generators::{
    DragonflyArrangement, cartesian, complete, dragonfly, exanest, jellyfish,
};
use fabricopt::topology::metrics::{
    self, BisectionOptions, MetricsOptions, TopologyMetrics, bisection, disjoint_shortest_paths,
    distances_from, edge_connectivity, max_flow, shortest_path_count, summarize,
};
use fabricopt::topology::{Endpoint, LinkKind, LinkParams, RouterGraph, Topology};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn params() -> LinkParams {
    LinkParams::default()
}

fn all_metrics(t: &Topology) -> TopologyMetrics {
    metrics::compute(t, &MetricsOptions::default(), &|| {}).0
}

fn binomial(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

#[test]
fn ring_metrics() {
    for n in [5usize, 6, 9, 12] {
        let t = cartesian(&[n], true, 1, &params()).unwrap();
        let m = all_metrics(&t);
        assert_eq!(m.routers, n);
        assert_eq!(m.links, n);
        assert_eq!(m.diameter, Some((n / 2) as u32));
        // Sum of distances from one node: 2 * (1 + .. + floor((n-1)/2)) (+ n/2 if n even).
        let h = ((n - 1) / 2) as f64;
        let sum = h * (h + 1.0) + if n % 2 == 0 { (n / 2) as f64 } else { 0.0 };
        assert!((m.avg_distance - sum / (n - 1) as f64).abs() < 1e-12);
        assert_eq!(m.bisection.upper, 2);
        assert_eq!(m.bisection.exact, Some(2));
        assert_eq!(m.edge_connectivity, Some(2));
        assert!(m.symmetry.used);
        assert_eq!(m.symmetry.sources, 1);
    }
}

#[test]
fn torus_k_ary_n_cube() {
    for (dims, k, dim) in [
        (vec![4, 4], 4u64, 2u32),
        (vec![8, 8], 8, 2),
        (vec![4, 4, 4], 4, 3),
        (vec![6, 6, 6], 6, 3),
    ] {
        let t = cartesian(&dims, true, 2, &params()).unwrap();
        let m = all_metrics(&t);
        let n = k.pow(dim);
        assert_eq!(m.routers as u64, n);
        assert_eq!(m.terminals as u64, 2 * n);
        assert_eq!(m.links as u64, u64::from(dim) * n);
        assert_eq!(m.diameter, Some(dim * (k as u32 / 2)));
        // Bisection of a k-ary n-cube with k even: 2 k^(n-1).
        let width = 2 * k.pow(dim - 1);
        assert_eq!(m.bisection.upper, width, "{dims:?}");
        assert!(m.bisection.lower <= width);
        // Average distance: n * (k/4) over all pairs including self, for even k.
        let avg_with_self = f64::from(dim) * k as f64 / 4.0;
        assert!((m.avg_distance - avg_with_self * n as f64 / (n - 1) as f64).abs() < 1e-12);
        assert_eq!(m.edge_connectivity, Some(2 * dim));
    }
}

#[test]
fn mesh_diameter_and_bisection() {
    for (dims, k, dim) in [
        (vec![4, 4], 4u64, 2u32),
        (vec![8, 8], 8, 2),
        (vec![4, 4, 4], 4, 3),
    ] {
        let t = cartesian(&dims, false, 1, &params()).unwrap();
        let m = all_metrics(&t);
        assert_eq!(m.diameter, Some(dim * (k as u32 - 1)));
        assert_eq!(m.bisection.upper, k.pow(dim - 1), "{dims:?}");
        assert_eq!(m.links as u64, u64::from(dim) * (k - 1) * k.pow(dim - 1));
        assert_eq!(m.edge_connectivity, Some(dim));
        assert!(!m.symmetry.used);
    }
}

#[test]
fn mesh_ports_follow_the_documented_numbering() {
    // 3x2 mesh, concentration 2: router 4 = (1, 1); ports 2/3 = x-/x+, 4/5 = y-/y+.
    let t = cartesian(&[3, 2], false, 2, &params()).unwrap();
    let peer_router = |r: usize, p: usize| match t.peer(r, p) {
        Some(Endpoint::Router { router, .. }) => Some(router),
        _ => None,
    };
    assert_eq!(peer_router(4, 2), Some(3));
    assert_eq!(peer_router(4, 3), Some(5));
    assert_eq!(peer_router(4, 4), Some(1));
    assert_eq!(peer_router(4, 5), None); // edge of the mesh
    assert_eq!(t.peer(4, 0), Some(Endpoint::Terminal { terminal: 8 }));
}

#[test]
fn hypercube_metrics() {
    for d in [3u32, 4, 5, 6] {
        let t = cartesian(&vec![2; d as usize], false, 1, &params()).unwrap();
        let m = all_metrics(&t);
        let n = 1u64 << d;
        assert_eq!(m.diameter, Some(d));
        assert_eq!(m.bisection.upper, n / 2);
        assert_eq!(m.edge_connectivity, Some(d));
        // Hypercube is vertex-transitive: the flips along every dimension are used.
        assert_eq!(m.symmetry.sources, 1);
        // Between nodes at Hamming distance j there are j! shortest paths and j edge-disjoint
        // ones (one per first dimension flipped).
        let pairs = (n - 1) as f64;
        let paths: f64 = (1..=u64::from(d))
            .map(|j| binomial(u64::from(d), j) as f64 * (1..=j).product::<u64>() as f64)
            .sum();
        let disjoint: f64 = (1..=u64::from(d))
            .map(|j| (binomial(u64::from(d), j) * j) as f64)
            .sum();
        assert!((m.path_diversity.shortest_paths - paths / pairs).abs() < 1e-9);
        assert!((m.path_diversity.disjoint_shortest - disjoint / pairs).abs() < 1e-12);
    }
}

#[test]
fn complete_graph_metrics() {
    for n in [4usize, 7, 10] {
        let t = complete(n, 1, &params()).unwrap();
        let m = all_metrics(&t);
        assert_eq!(m.diameter, Some(1));
        assert_eq!(m.avg_distance, 1.0);
        assert_eq!(m.path_diversity.disjoint_shortest, 1.0);
        assert_eq!(m.path_diversity.shortest_paths, 1.0);
        let half = (n / 2) as u64;
        assert_eq!(m.bisection.upper, half * (n as u64 - half));
        assert_eq!(m.edge_connectivity, Some(n as u32 - 1));
    }
}

#[test]
fn dragonfly_structure() {
    for arrangement in [
        DragonflyArrangement::Absolute,
        DragonflyArrangement::Relative,
        DragonflyArrangement::Circulant,
    ] {
        for (p, a, h) in [(2usize, 4usize, 2usize), (4, 8, 4)] {
            let g = a * h + 1;
            let t = dragonfly(p, a, h, g, arrangement, &params()).unwrap();
            assert_eq!(t.num_routers(), a * g);
            assert_eq!(t.num_terminals(), p * a * g);
            assert_eq!(t.links_of_kind(LinkKind::Global), g * (g - 1) / 2);
            assert_eq!(t.links_of_kind(LinkKind::Local), g * a * (a - 1) / 2);
            // Exactly one global link per group pair.
            let mut per_pair = vec![0usize; g * g];
            for l in &t.links {
                if let [
                    Endpoint::Router { router: x, .. },
                    Endpoint::Router { router: y, .. },
                ] = l.ends
                {
                    let (gx, gy) = (x / a, y / a);
                    assert_eq!(l.kind == LinkKind::Global, gx != gy);
                    if gx != gy {
                        per_pair[gx.min(gy) * g + gx.max(gy)] += 1;
                    }
                }
            }
            for x in 0..g {
                for y in x + 1..g {
                    assert_eq!(per_pair[x * g + y], 1, "{arrangement:?} groups {x},{y}");
                }
            }
            // Every router: p terminal ports, a-1 local, h global, all connected.
            for r in 0..t.num_routers() {
                assert_eq!(t.routers[r].ports.len(), p + a - 1 + h);
                assert!(t.routers[r].ports.iter().all(Option::is_some));
            }
            let m = all_metrics(&t);
            assert_eq!(m.diameter, Some(3), "{arrangement:?}");
            assert_eq!(
                m.symmetry.used,
                arrangement != DragonflyArrangement::Absolute
            );
        }
    }
}

#[test]
fn dragonfly_absolute_port_numbering() {
    // p=4, a=8, h=4, g=33: router 1 of group 0, global port j=2 -> k = 1*4 + 2 = 6 -> 7th other
    // group in ascending order = group 7.
    let t = dragonfly(4, 8, 4, 33, DragonflyArrangement::Absolute, &params()).unwrap();
    let port = 4 + 7 + 2;
    match t.peer(1, port) {
        Some(Endpoint::Router { router, .. }) => assert_eq!(router / 8, 7),
        other => panic!("unexpected {other:?}"),
    }
    // Local port p + j of router 3 leads to the j-th other router: j = 3 -> router 4.
    match t.peer(3, 4 + 3) {
        Some(Endpoint::Router { router, .. }) => assert_eq!(router, 4),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn dragonfly_rejects_inconsistent_parameters() {
    let err = |g| {
        dragonfly(2, 4, 2, g, DragonflyArrangement::Absolute, &params())
            .unwrap_err()
            .to_string()
    };
    assert!(
        err(10).starts_with("g: 10 groups need 9 global links"),
        "{}",
        err(10)
    );
    assert!(
        err(6).starts_with("g: g - 1 = 5 must divide a*h = 8"),
        "{}",
        err(6)
    );
    assert!(err(1).starts_with("g: must be at least 2"));
    // g = 5 divides: two global links per group pair.
    let t = dragonfly(2, 4, 2, 5, DragonflyArrangement::Relative, &params()).unwrap();
    assert_eq!(t.links_of_kind(LinkKind::Global), 2 * 10);
}

#[test]
fn exanest_worked_example_metrics() {
    let t = exanest(2, 4, 2, &[5, 17, 8, 22], 3, &params()).unwrap();
    let m = all_metrics(&t);
    assert_eq!(m.routers, 16);
    assert_eq!(m.links, 32);
    assert_eq!(m.links_by_kind.global, 16);
    assert!(m.symmetry.used);
    let brute = metrics::compute(
        &t,
        &MetricsOptions {
            use_symmetry: false,
            ..MetricsOptions::default()
        },
        &|| {},
    )
    .0;
    assert_eq!(m.diameter, brute.diameter);
    assert_eq!(m.avg_distance, brute.avg_distance);
    assert!((m.path_diversity.shortest_paths - brute.path_diversity.shortest_paths).abs() < 1e-12);
    assert_eq!(
        m.path_diversity.disjoint_shortest,
        brute.path_diversity.disjoint_shortest
    );
    // 16 routers: the exact bisection is proven.
    assert!(m.bisection.exact.is_some());
    assert_eq!(m.bisection.exact, brute.bisection.exact);
}

/// Symmetric metrics equal brute-force metrics on random ExaNeSt genomes and tori.
#[test]
fn symmetry_matches_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (r, n, m) = (3usize, 4usize, 3usize);
    let mut checked = 0;
    while checked < 12 {
        let genome: Vec<usize> = (1..=2 * r)
            .map(|i| match rng.random_range(0..3) {
                0 => 0,
                1 => rng.random_range(2 * r - i + 1..=2 * n * r - i),
                _ => rng.random_range(2 * n * r - i + 1..=2 * m * n * r - i),
            })
            .collect();
        let t = exanest(r, n, m, &genome, 1, &params()).unwrap();
        let g = t.router_graph();
        if !g.is_connected() {
            continue;
        }
        let sym = t.symmetry.as_ref().unwrap();
        assert!(sym.is_automorphism_of(&g), "{genome:?}");
        let fast = summarize(&g, Some(sym), true, &|| {});
        let slow = summarize(&g, None, true, &|| {});
        assert_eq!(fast.diameter, slow.diameter);
        assert!(
            (fast.avg_distance - slow.avg_distance).abs() < 1e-12,
            "{genome:?}"
        );
        assert!((fast.shortest_paths - slow.shortest_paths).abs() < 1e-9 * slow.shortest_paths);
        assert!((fast.disjoint_shortest.unwrap() - slow.disjoint_shortest.unwrap()).abs() < 1e-12);
        assert!(fast.sources < slow.sources);
        checked += 1;
    }
}

fn random_graph(rng: &mut ChaCha8Rng, n: usize, p: f64, parallel: bool) -> RouterGraph {
    let mut edges = Vec::new();
    for u in 0..n {
        for v in u + 1..n {
            if rng.random_bool(p) {
                edges.push((u, v));
                if parallel && rng.random_bool(0.15) {
                    edges.push((u, v)); // parallel link
                }
            }
        }
    }
    RouterGraph::from_edges(n, edges)
}

/// Menger: the max number of edge-disjoint paths equals the minimum edge cut, for all paths
/// (brute force over all cuts) and for shortest paths (cuts of the shortest-path DAG).
#[test]
fn menger_equalities_on_small_graphs() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for round in 0..80 {
        let n = rng.random_range(4..=9);
        let g = random_graph(&mut rng, n, 0.45, round % 2 == 0);
        let s = 0;
        let t = n - 1;
        // All paths: min over vertex sets S with s in S, t not in S.
        let mut min_cut = u64::MAX;
        for mask in 0u32..(1 << n) {
            if mask & 1 == 0 || mask & (1 << t) != 0 {
                continue;
            }
            let side: Vec<bool> = (0..n).map(|v| mask & (1 << v) != 0).collect();
            min_cut = min_cut.min(g.cut_size(&side));
        }
        assert_eq!(u64::from(max_flow(&g, s, t)), min_cut);
        // Global edge connectivity: the smallest cut over all splits.
        let global = (1u32..(1 << n) - 1)
            .map(|mask| {
                let side: Vec<bool> = (0..n).map(|v| mask & (1 << v) != 0).collect();
                g.cut_size(&side)
            })
            .min()
            .unwrap();
        assert_eq!(u64::from(edge_connectivity(&g)), global);
        // Shortest paths: arcs x->y with d(s,x)+1 = d(s,y) and y on a shortest path to t.
        let ds = distances_from(&g, s);
        let dt = distances_from(&g, t);
        let Some(dst) = ds[t] else {
            assert_eq!(disjoint_shortest_paths(&g, s, t), 0);
            continue;
        };
        let on_path = |x: usize| matches!((ds[x], dt[x]), (Some(a), Some(b)) if a + b == dst);
        let mut dag_cut = u64::MAX;
        for mask in 0u32..(1 << n) {
            if mask & 1 == 0 || mask & (1 << t) != 0 {
                continue;
            }
            let cut: u64 = g
                .edges()
                .iter()
                .map(|&(a, b, m)| {
                    let (a, b) = (a as usize, b as usize);
                    let (x, y) = if ds[a] < ds[b] { (a, b) } else { (b, a) };
                    let arc = on_path(x) && on_path(y) && ds[x].unwrap() + 1 == ds[y].unwrap();
                    let crosses = mask & (1 << x) != 0 && mask & (1 << y) == 0;
                    if arc && crosses { u64::from(m) } else { 0 }
                })
                .sum();
            dag_cut = dag_cut.min(cut);
        }
        assert_eq!(u64::from(disjoint_shortest_paths(&g, s, t)), dag_cut);
        // Number of shortest paths by brute force over the DAG.
        let mut count = vec![0.0f64; n];
        count[s] = 1.0;
        let mut order: Vec<usize> = (0..n).filter(|&x| ds[x].is_some()).collect();
        order.sort_by_key(|&x| ds[x]);
        for &x in &order {
            for (y, m) in g.neighbors(x) {
                if ds[y] == ds[x].map(|d| d + 1) {
                    count[y] += count[x] * f64::from(m);
                }
            }
        }
        assert_eq!(shortest_path_count(&g, s, t), count[t]);
    }
}

#[test]
fn bisection_bounds_bracket_the_exact_value() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..10 {
        let n = rng.random_range(8..=14);
        let g = random_graph(&mut rng, n, 0.4, true);
        let b = bisection(&g, None, &BisectionOptions::default());
        let exact = b.exact.expect("small graphs are solved exactly");
        assert!(b.lower <= exact && exact <= b.upper);
        // Brute force.
        let mut best = u64::MAX;
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize == n / 2 {
                let side: Vec<bool> = (0..n).map(|v| mask & (1 << v) != 0).collect();
                best = best.min(g.cut_size(&side));
            }
        }
        assert_eq!(exact, best);
    }
}

#[test]
fn jellyfish_is_deterministic_per_seed() {
    let a = jellyfish(64, 6, 2, 3, &params()).unwrap();
    let b = jellyfish(64, 6, 2, 3, &params()).unwrap();
    assert_eq!(a.links, b.links);
    let m = all_metrics(&a);
    assert_eq!(m.degree.min, 6);
    assert_eq!(m.degree.max, 6);
    assert!(m.connected);
    // Moore bound: 64 routers of degree 6 need diameter >= 3.
    assert!(m.diameter.unwrap() >= 3);
}

/// Results do not depend on the number of threads.
#[test]
fn metrics_are_thread_count_independent() {
    let t = jellyfish(96, 5, 1, 4, &params()).unwrap();
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| all_metrics(&t))
    };
    assert_eq!(run(1), run(2));
}
