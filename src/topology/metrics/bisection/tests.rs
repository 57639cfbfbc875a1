//! Tests of the bisection module against known widths, brute force and the dense spectrum,
//! plus ignored timing runs (`cargo test --release --lib bisection -- --ignored --nocapture`).

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::spectral::{lanczos_lambda2, laplacian_spectrum_symmetric};
use super::*;
use crate::topology::symmetry::Digit;

fn ring(n: usize) -> RouterGraph {
    RouterGraph::from_edges(n, (0..n).map(|i| (i, (i + 1) % n)))
}

fn path(n: usize) -> RouterGraph {
    RouterGraph::from_edges(n, (0..n - 1).map(|i| (i, i + 1)))
}

fn complete(n: usize) -> RouterGraph {
    RouterGraph::from_edges(n, (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))))
}

fn hypercube(d: usize) -> RouterGraph {
    let n = 1 << d;
    RouterGraph::from_edges(
        n,
        (0..n).flat_map(|v| {
            (0..d)
                .map(move |b| (v, v ^ (1 << b)))
                .filter(|&(a, b)| a < b)
        }),
    )
}

/// Mesh or torus with `dims[0]` varying fastest in the router id (as the generator does).
fn cartesian(dims: &[usize], wrap: bool) -> RouterGraph {
    let n: usize = dims.iter().product();
    let mut e = Vec::new();
    let mut stride = 1;
    for &k in dims {
        for r in 0..n {
            let c = (r / stride) % k;
            if c + 1 < k || wrap {
                e.push((r, r - c * stride + ((c + 1) % k) * stride));
            }
        }
        stride *= k;
    }
    RouterGraph::from_edges(n, e)
}

/// The generator's symmetry of a torus: digits most significant first = dims reversed.
fn torus_symmetry(dims: &[usize]) -> Symmetry {
    Symmetry::new(
        dims.iter()
            .rev()
            .map(|&k| Digit {
                radix: k,
                translatable: true,
            })
            .collect(),
    )
}

fn two_k5_bridged() -> RouterGraph {
    let mut e = Vec::new();
    for off in [0, 5] {
        for a in 0..5 {
            for b in a + 1..5 {
                e.push((off + a, off + b));
            }
        }
    }
    e.push((4, 5));
    RouterGraph::from_edges(10, e)
}

/// Random graph: each pair linked with probability `p`, with 1..=`max_mult` parallel links.
fn random_graph(n: usize, p: f64, max_mult: u32, rng: &mut ChaCha8Rng) -> RouterGraph {
    let mut e = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            if rng.random_bool(p) {
                for _ in 0..rng.random_range(1..=max_mult) {
                    e.push((a, b));
                }
            }
        }
    }
    RouterGraph::from_edges(n, e)
}

/// Random d-regular multigraph by the pairing model (self-loops dropped by `from_edges`).
fn random_regular(n: usize, d: usize, seed: u64) -> RouterGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut stubs: Vec<usize> = (0..n).flat_map(|v| std::iter::repeat_n(v, d)).collect();
    stubs.shuffle(&mut rng);
    RouterGraph::from_edges(n, stubs.chunks(2).map(|c| (c[0], c[1])))
}

/// Four copies of a small asymmetric graph in a cycle; Z_4 shifts the copies.
fn partial_symmetric() -> (RouterGraph, Symmetry) {
    let copies = 4;
    let inner = [(0, 1), (1, 2), (2, 3), (1, 3), (3, 4), (3, 4)];
    let mut e = Vec::new();
    for c in 0..copies {
        let id = |c: usize, i: usize| (c % copies) * 5 + i;
        for &(a, b) in &inner {
            e.push((id(c, a), id(c, b)));
        }
        e.push((id(c, 0), id(c + 1, 4)));
        e.push((id(c, 2), id(c + 1, 2)));
        e.push((id(c, 2), id(c + 1, 2)));
        e.push((id(c, 1), id(c + 2, 4)));
    }
    let sym = Symmetry::new(vec![
        Digit {
            radix: copies,
            translatable: true,
        },
        Digit {
            radix: 5,
            translatable: false,
        },
    ]);
    (RouterGraph::from_edges(copies * 5, e), sym)
}

/// A graph invariant under Z_a x Z_b with `orbits` orbits: every orbit pair gets a few links
/// at random translations.
fn random_symmetric(
    a: usize,
    b: usize,
    orbits: usize,
    links: usize,
    seed: u64,
) -> (RouterGraph, Symmetry) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let sym = Symmetry::new(vec![
        Digit {
            radix: a,
            translatable: true,
        },
        Digit {
            radix: orbits,
            translatable: false,
        },
        Digit {
            radix: b,
            translatable: true,
        },
    ]);
    let n = a * b * orbits;
    let id = |x: usize, o: usize, y: usize| (x % a) * orbits * b + o * b + (y % b);
    let mut e = Vec::new();
    for _ in 0..links {
        let (i, j) = (rng.random_range(0..orbits), rng.random_range(0..orbits));
        let (tx, ty) = (rng.random_range(0..a), rng.random_range(0..b));
        for x in 0..a {
            for y in 0..b {
                e.push((id(x, i, y), id(x + tx, j, y + ty)));
            }
        }
    }
    // A ring through the orbits keeps it connected.
    for o in 0..orbits {
        for x in 0..a {
            for y in 0..b {
                e.push((id(x, o, y), id(x + 1, (o + 1) % orbits, y + 1)));
            }
        }
    }
    (RouterGraph::from_edges(n, e), sym)
}

fn brute_force(g: &RouterGraph) -> u64 {
    let n = g.num_nodes();
    let k = n / 2;
    (0u32..1 << n)
        .filter(|m| m.count_ones() as usize == k)
        .map(|m| {
            let side: Vec<bool> = (0..n).map(|v| m >> v & 1 == 1).collect();
            g.cut_size(&side)
        })
        .min()
        .unwrap()
}

fn check(g: &RouterGraph, sym: Option<&Symmetry>, width: u64, what: &str) -> Bisection {
    if let Some(s) = sym {
        assert!(s.is_automorphism_of(g), "{what}: bad test symmetry");
    }
    let b = bisection(g, sym, &BisectionOptions::default());
    assert_eq!(b.upper, width, "{what}: {b:?}");
    assert!(b.lower <= width, "{what}: {b:?}");
    if let Some(x) = b.exact {
        assert_eq!(x, width, "{what}: {b:?}");
        assert_eq!((b.lower, b.upper), (x, x));
    }
    b
}

#[test]
fn known_widths() {
    for n in [4, 8, 20, 64, 101] {
        check(&ring(n), None, 2, "ring");
    }
    for n in [2, 9, 30, 200] {
        check(&path(n), None, 1, "path");
    }
    for n in [4, 6, 10, 16] {
        let b = check(&complete(n), None, (n * n / 4) as u64, "complete");
        assert!(b.exact.is_some(), "K_n: spectral bound is tight");
    }
    for d in 1..=7 {
        let b = check(&hypercube(d), None, 1 << (d - 1), "hypercube");
        assert!(b.exact.is_some(), "Q_d: spectral bound is tight");
    }
    check(&two_k5_bridged(), None, 1, "two K5");
    check(&cartesian(&[8, 8], false), None, 8, "8x8 mesh");
    check(&cartesian(&[6, 6], false), None, 6, "6x6 mesh");
    check(&cartesian(&[10, 10], false), None, 10, "10x10 mesh");
}

#[test]
fn known_widths_of_tori_with_and_without_symmetry() {
    for (dims, width) in [
        (vec![4, 4], 8),
        (vec![8, 8], 16),
        (vec![4, 4, 4], 32),
        (vec![6, 6], 12),
        (vec![8, 4], 8),
        (vec![4, 8], 8),
        (vec![6, 4, 4], 32),
        (vec![5, 6], 10),
        (vec![7, 3], 8), // 9 | 12 columns would cut 6; balancing 10 | 11 costs 2 more
    ] {
        let g = cartesian(&dims, true);
        let sym = torus_symmetry(&dims);
        let b = check(&g, None, width, &format!("torus {dims:?}"));
        let bs = check(&g, Some(&sym), width, &format!("torus {dims:?} + symmetry"));
        assert!((b.spectral_lambda2 - bs.spectral_lambda2).abs() < 1e-9);
        assert_eq!(b.lower, bs.lower);
    }
}

#[test]
fn multigraph_counts_multiplicity() {
    // Two triangles with tripled internal links joined by a double link and a single link.
    let mut e = Vec::new();
    for off in [0, 3] {
        for (a, b) in [(0, 1), (1, 2), (0, 2)] {
            for _ in 0..3 {
                e.push((off + a, off + b));
            }
        }
    }
    e.extend([(0, 3), (0, 3), (2, 5)]);
    let g = RouterGraph::from_edges(6, e);
    let b = check(&g, None, 3, "multigraph");
    assert_eq!(b.exact, Some(3));
    // A 2-ring (two routers, two parallel links) has width 2.
    check(
        &RouterGraph::from_edges(2, [(0, 1), (0, 1)]),
        None,
        2,
        "double link",
    );
}

#[test]
fn degenerate_graphs() {
    let b = bisection(
        &RouterGraph::from_edges(0, []),
        None,
        &BisectionOptions::default(),
    );
    assert_eq!((b.lower, b.upper, b.exact), (0, 0, Some(0)));
    let b = bisection(
        &RouterGraph::from_edges(1, []),
        None,
        &BisectionOptions::default(),
    );
    assert_eq!((b.lower, b.upper, b.exact), (0, 0, Some(0)));
    // Two disjoint K4: width 0, proven by the bounds (lambda_2 = 0 and a zero cut).
    let mut e = Vec::new();
    for off in [0, 4] {
        for a in 0..4 {
            for b in a + 1..4 {
                e.push((off + a, off + b));
            }
        }
    }
    let b = check(&RouterGraph::from_edges(8, e), None, 0, "two K4");
    assert_eq!(b.spectral_lambda2, 0.0);
    // Isolated routers only.
    check(&RouterGraph::from_edges(7, []), None, 0, "empty");
}

#[test]
fn exact_matches_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    for trial in 0..60 {
        let n = 8 + trial % 7;
        let p = [0.2, 0.35, 0.5, 0.8][trial % 4];
        let g = random_graph(n, p, 1 + (trial % 3) as u32, &mut rng);
        let want = brute_force(&g);
        let (w, side) = exact_bisection(&g, None, 10_000_000).expect("small search finishes");
        assert_eq!(w, want, "trial {trial}");
        assert_eq!(g.cut_size(&side), w);
        let a = side.iter().filter(|&&x| x).count();
        assert!(a == n / 2 || a == n - n / 2);
        // With the partitioner's incumbent too.
        let (pside, pcut) = partition(&g, None, 2, trial as u64);
        assert!(pcut >= want);
        let (w2, _) = exact_bisection(&g, Some((pcut, pside)), 10_000_000).unwrap();
        assert_eq!(w2, want);
    }
}

#[test]
fn bounds_sandwich_exact_on_random_graphs() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for trial in 0..30 {
        let n = 10 + trial % 5;
        let g = random_graph(n, 0.3 + 0.1 * (trial % 4) as f64, 2, &mut rng);
        let want = brute_force(&g);
        let opts = BisectionOptions {
            restarts: 3,
            seed: trial as u64,
            exact_max_routers: 40,
            ..BisectionOptions::default()
        };
        let b = bisection(&g, None, &opts);
        assert_eq!(b.exact, Some(want), "trial {trial}: {b:?}");
        // Without the exact search: still a valid interval.
        let no_exact = BisectionOptions {
            exact_max_routers: 0,
            ..opts
        };
        let b = bisection(&g, None, &no_exact);
        assert!(b.lower <= want && want <= b.upper, "trial {trial}: {b:?}");
        assert!(spectral_lower_bound(n, algebraic_connectivity_dense(&g)) <= want);
    }
}

#[test]
fn exact_search_proves_medium_graphs() {
    // 24-router graphs where the spectral bound is not tight: the search must finish.
    let g = cartesian(&[6, 4], false);
    let b = check(&g, None, 4, "6x4 mesh");
    assert_eq!(b.exact, Some(4));
    assert_eq!(b.exact_method.as_deref(), Some("branch and bound"));
    let g = two_k5_bridged();
    assert_eq!(
        bisection(&g, None, &BisectionOptions::default()).exact,
        Some(1)
    );
}

#[test]
fn spectral_known_values() {
    for n in [5, 8, 13, 30] {
        let want = 2.0 - 2.0 * (2.0 * std::f64::consts::PI / n as f64).cos();
        assert!((algebraic_connectivity_dense(&ring(n)) - want).abs() < 1e-9);
    }
    for n in [3, 6, 11] {
        assert!((algebraic_connectivity_dense(&complete(n)) - n as f64).abs() < 1e-9);
    }
    for d in 1..=6 {
        assert!((algebraic_connectivity_dense(&hypercube(d)) - 2.0).abs() < 1e-9);
    }
    let est = algebraic_connectivity(&path(4), None);
    assert_eq!(est.method, SpectralMethod::Dense);
    assert!((est.lambda2 - (2.0 - 2f64.sqrt())).abs() < 1e-9);
}

#[test]
fn symmetric_blocks_match_dense_spectrum() {
    let dims = [8, 8];
    let g = cartesian(&dims, true);
    let sym = torus_symmetry(&dims);
    assert!(sym.is_automorphism_of(&g));
    let dense = algebraic_connectivity_dense(&g);
    let blocks = algebraic_connectivity_symmetric(&g, &sym).unwrap();
    assert!((dense - blocks).abs() < 1e-9, "{dense} vs {blocks}");
    assert_eq!(
        algebraic_connectivity(&g, Some(&sym)).method,
        SpectralMethod::Symmetric
    );

    let cases = [
        partial_symmetric(),
        random_symmetric(3, 4, 5, 6, 11),
        random_symmetric(5, 2, 3, 4, 12),
    ];
    for (g, sym) in cases {
        assert!(sym.is_automorphism_of(&g));
        let mut want: Vec<f64> = nalgebra_spectrum(&g);
        want.sort_by(f64::total_cmp);
        let got = laplacian_spectrum_symmetric(&g, &sym).unwrap();
        assert_eq!(got.len(), want.len());
        for (x, y) in got.iter().zip(&want) {
            assert!((x - y).abs() < 1e-9, "{x} vs {y}");
        }
        let l2 = algebraic_connectivity_symmetric(&g, &sym).unwrap();
        assert!((l2 - algebraic_connectivity_dense(&g)).abs() < 1e-9);
    }
}

fn nalgebra_spectrum(g: &RouterGraph) -> Vec<f64> {
    let n = g.num_nodes();
    let mut l = nalgebra::DMatrix::<f64>::zeros(n, n);
    for u in 0..n {
        for (v, m) in g.neighbors(u) {
            l[(u, v)] -= f64::from(m);
            l[(u, u)] += f64::from(m);
        }
    }
    l.symmetric_eigenvalues().iter().copied().collect()
}

#[test]
fn lanczos_matches_dense() {
    let g = random_regular(300, 3, 5);
    assert!(g.is_connected());
    let dense = algebraic_connectivity_dense(&g);
    let est = lanczos_lambda2(&g, 300, 1);
    assert!((est.theta - dense).abs() < 1e-6, "{est:?} vs {dense}");
    assert!(est.certified() <= dense + 1e-9);
    assert!(est.theta >= dense - 1e-9);
    // A torus (repeated eigenvalues, slow convergence) within the step budget.
    let g = cartesian(&[10, 12], true);
    let dense = algebraic_connectivity_dense(&g);
    let est = lanczos_lambda2(&g, 119, 2);
    assert!((est.theta - dense).abs() < 1e-6, "{est:?} vs {dense}");
    assert!(est.certified() <= dense + 1e-9);
}

#[test]
fn partitioner_alone_finds_optima() {
    // Multilevel restarts only (no structured starting cuts).
    let cases: Vec<(RouterGraph, u64, &str)> = vec![
        (cartesian(&[8, 8], true), 16, "8x8 torus"),
        (cartesian(&[8, 8], false), 8, "8x8 mesh"),
        (cartesian(&[4, 4, 4], true), 32, "4x4x4 torus"),
        (hypercube(6), 32, "Q6"),
        (ring(50), 2, "ring"),
        (complete(12), 36, "K12"),
        (two_k5_bridged(), 1, "two K5"),
    ];
    for (g, width, what) in cases {
        let best = (0..8)
            .map(|i| multilevel_bisection(&g, 1, i).1)
            .min()
            .unwrap();
        assert_eq!(best, width, "{what}");
    }
}

#[test]
fn fm_refine_balances_and_improves() {
    let g = cartesian(&[8, 8], true);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    // Unbalanced random start (about a third in part A).
    let side: Vec<bool> = (0..64).map(|_| rng.random_bool(0.33)).collect();
    let (refined, cut) = fm_refine(&g, side, 1);
    assert_eq!(refined.iter().filter(|&&x| x).count(), 32);
    assert_eq!(cut, g.cut_size(&refined));
    assert!(cut < 64, "FM should improve a random bisection: {cut}");
}

#[test]
fn structured_cuts_follow_symmetry_digits() {
    let dims = [8, 4];
    let g = cartesian(&dims, true);
    let sym = torus_symmetry(&dims);
    let cuts = structured_cuts(&g, Some(&sym));
    let sizes: Vec<u64> = cuts.iter().map(|c| g.cut_size(c)).collect();
    // Id split (= split along y), split along y again (deduplicated), split along x.
    assert_eq!(sizes, vec![16, 8]);
}

#[test]
fn report_serialises() {
    let b = bisection(&ring(6), None, &BisectionOptions::default());
    let json = serde_json::to_value(&b).unwrap();
    assert_eq!(json["upper"], 2);
    assert_eq!(json["exact"], 2);
    assert!(json["lower_method"].is_string());
    assert!(json["spectral_lambda2"].is_number());
}
