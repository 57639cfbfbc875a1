//! The fast algorithms against the slicing oracle ([`reference`]) and known values.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{contributions, hypervolume, reference};

/// Relative agreement for volumes. The oracle's contributions are `HV(S) - HV(S \ {p})`, which
/// cancels: its absolute error is a few ulps of `HV(S)`, hence the extra `1e-12 * total` slack
/// for contributions (a wrong region would be off by far more).
fn assert_agrees(points: &[Vec<f64>], r: &[f64], label: &str) {
    let want = reference::hypervolume(points, r);
    let got = hypervolume(points, r);
    assert!(
        (got - want).abs() <= 1e-9 * want.abs(),
        "{label}: hypervolume {got} != oracle {want}\npoints {points:?}\nref {r:?}"
    );
    let want_c = reference::contributions(points, r);
    let got_c = contributions(points, r);
    assert_eq!(got_c.len(), points.len());
    for (i, (g, w)) in got_c.iter().zip(&want_c).enumerate() {
        assert!(
            (g - w).abs() <= 1e-9 * w.abs() + 1e-12 * want,
            "{label}: contribution of point {i} {:?}: {g} != oracle {w}\npoints {points:?}\nref {r:?}",
            points[i]
        );
    }
}

fn uniform(rng: &mut ChaCha8Rng, n: usize, d: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|_| (0..d).map(|_| rng.random::<f64>()).collect())
        .collect()
}

/// Integer coordinates in 0..=k: many ties in every objective, duplicates, and (with the
/// reference at k) points on the reference boundary, which count for nothing.
fn grid(rng: &mut ChaCha8Rng, n: usize, d: usize, k: u32) -> Vec<Vec<f64>> {
    (0..n)
        .map(|_| (0..d).map(|_| f64::from(rng.random_range(0..=k))).collect())
        .collect()
}

/// Points on the positive part of the unit sphere: mutually non-dominated.
fn sphere(rng: &mut ChaCha8Rng, n: usize, d: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|_| {
            let v: Vec<f64> = (0..d).map(|_| rng.random::<f64>() + 1e-3).collect();
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            v.iter().map(|x| x / norm).collect()
        })
        .collect()
}

/// Adds exact duplicates and slightly worse copies of random members.
fn with_duplicates(rng: &mut ChaCha8Rng, mut points: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    for _ in 0..points.len() / 4 + 1 {
        let p = points[rng.random_range(0..points.len())].clone();
        let worse: Vec<f64> = p.iter().map(|x| x + rng.random::<f64>() * 0.05).collect();
        points.push(p);
        points.push(worse);
    }
    points
}

fn max_points(d: usize) -> usize {
    match d {
        2 | 3 => 60,
        4 => 35,
        _ => 22,
    }
}

#[test]
fn random_sets_agree_with_the_oracle() {
    let mut rng = ChaCha8Rng::seed_from_u64(20240611);
    for d in 2..=5 {
        let trials = if d <= 3 { 120 } else { 25 };
        for trial in 0..trials {
            let n = rng.random_range(1..=max_points(d));
            let label = format!("d={d} trial={trial}");
            let pts = uniform(&mut rng, n, d);
            assert_agrees(&pts, &vec![1.0; d], &format!("{label} uniform"));
            // Some points outside the box.
            assert_agrees(&pts, &vec![0.8; d], &format!("{label} clipped"));
            let pts = sphere(&mut rng, n, d);
            assert_agrees(&pts, &vec![1.1; d], &format!("{label} sphere"));
            let base = sphere(&mut rng, n / 2 + 1, d);
            let pts = with_duplicates(&mut rng, base);
            assert_agrees(&pts, &vec![1.05; d], &format!("{label} duplicates"));
        }
    }
}

#[test]
fn integer_grids_with_ties_agree_with_the_oracle() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for d in 2..=5 {
        let trials = if d <= 3 { 300 } else { 40 };
        for trial in 0..trials {
            let k = rng.random_range(1..=5);
            let n = rng.random_range(1..=max_points(d));
            let pts = grid(&mut rng, n, d, k);
            let r = vec![f64::from(k); d];
            assert_agrees(&pts, &r, &format!("grid d={d} trial={trial}"));
            let r: Vec<f64> = (0..d)
                .map(|_| f64::from(rng.random_range(1..=k + 1)))
                .collect();
            assert_agrees(&pts, &r, &format!("grid d={d} trial={trial} uneven ref"));
        }
    }
}

#[test]
fn two_d_point_dominated_by_exactly_one_cuts_its_contribution() {
    // c is weakly dominated by a only: removing a leaves c's quadrant covered.
    let a = vec![1.0, 3.0];
    let b = vec![2.0, 1.0];
    let c = vec![1.5, 3.5];
    let pts = vec![a, b, c];
    let r = [4.0, 4.0];
    assert_eq!(hypervolume(&pts, &r), 1.0 * 1.0 + 2.0 * 3.0);
    // a's box [1,2) x [3,4) minus [1.5,2) x [3.5,4).
    assert_eq!(contributions(&pts, &r), vec![0.75, 4.0, 0.0]);
    // Weakly dominated on the boundary (same x): cuts the full width.
    let pts = vec![vec![1.0, 3.0], vec![2.0, 1.0], vec![1.0, 3.5]];
    assert_eq!(contributions(&pts, &r), vec![0.5, 4.0, 0.0]);
    // Dominated by both staircase points: no cut.
    let pts = vec![vec![1.0, 3.0], vec![2.0, 1.0], vec![2.5, 3.5]];
    assert_eq!(contributions(&pts, &r), vec![1.0, 4.0, 0.0]);
    // Duplicates: both 0.
    let pts = vec![vec![1.0, 3.0], vec![2.0, 1.0], vec![1.0, 3.0]];
    assert_eq!(contributions(&pts, &r), vec![0.0, 4.0, 0.0]);
}

#[test]
fn three_d_cuts_and_ties() {
    let r = [4.0, 4.0, 4.0];
    // q is dominated only by p (same xy later in z would be a cut of p's region from z=2).
    let p = vec![1.0, 1.0, 1.0];
    let q = vec![1.0, 1.0, 2.0];
    assert_eq!(contributions(&[p.clone(), q.clone()], &r), vec![9.0, 0.0]);
    let q = vec![2.0, 2.0, 0.5];
    // p: 27 minus the part of [2,4)^2 x [1,4) shared with q.
    assert_eq!(
        contributions(&[p.clone(), q.clone()], &r),
        vec![27.0 - 12.0, 4.0 * 0.5]
    );
    // All three at equal z, one dominated in xy.
    let pts = vec![
        vec![1.0, 2.0, 1.0],
        vec![2.0, 1.0, 1.0],
        vec![2.0, 2.0, 1.0],
    ];
    assert_agrees(&pts, &r, "equal z");
    assert_eq!(contributions(&pts, &r), vec![3.0 * 2.0, 3.0 * 2.0, 0.0]);
}

#[test]
fn known_values() {
    let unit = [1.0, 1.0, 1.0];
    assert_eq!(hypervolume(&[vec![0.0, 0.0, 0.0]], &unit), 1.0);
    assert_eq!(contributions(&[vec![0.0, 0.0, 0.0]], &unit), vec![1.0]);
    // Three unit-offset boxes in [0,2]^3: 3*4 - 3*2 + 1 = 7, each contributes 1.
    let pts = vec![
        vec![1.0, 0.0, 0.0],
        vec![0.0, 1.0, 0.0],
        vec![0.0, 0.0, 1.0],
    ];
    assert_eq!(hypervolume(&pts, &[2.0, 2.0, 2.0]), 7.0);
    assert_eq!(contributions(&pts, &[2.0, 2.0, 2.0]), vec![1.0, 1.0, 1.0]);
    // The 3-D staircase (1,2,3) and its permutations with reference (4,4,4).
    let perms = [
        [1.0, 2.0, 3.0],
        [1.0, 3.0, 2.0],
        [2.0, 1.0, 3.0],
        [2.0, 3.0, 1.0],
        [3.0, 1.0, 2.0],
        [3.0, 2.0, 1.0],
    ];
    let pts: Vec<Vec<f64>> = perms.iter().map(|p| p.to_vec()).collect();
    // Cells [a,a+1)x[b,b+1)x[c,c+1) of [0,4)^3 dominated: a,b,c >= some permutation.
    let cells = (0..4)
        .flat_map(|a| (0..4).flat_map(move |b| (0..4).map(move |c| [a, b, c])))
        .filter(|cell| {
            perms
                .iter()
                .any(|p| p.iter().zip(cell).all(|(&x, &c)| x <= f64::from(c)))
        })
        .count();
    assert_eq!(hypervolume(&pts, &[4.0; 3]), cells as f64);
    assert_eq!(contributions(&pts, &[4.0; 3]), vec![1.0; 6]);
}

/// Points of the simplex grid `{a / k : a in N^d, sum a = k}` with reference 1: the dominated
/// cells of side 1/k are those with lower corner sum >= k, and every interior point owns
/// exactly its own cell.
#[test]
fn simplex_grid() {
    for d in 2..=5 {
        let k: u32 = if d <= 3 { 12 } else { 6 };
        let mut pts: Vec<Vec<f64>> = Vec::new();
        let mut dominated_cells = 0u64;
        let total_cells = k.pow(d as u32);
        for code in 0..(k + 1).pow(d as u32) {
            let a: Vec<u32> = (0..d)
                .map(|j| (code / (k + 1).pow(j as u32)) % (k + 1))
                .collect();
            let sum: u32 = a.iter().sum();
            if sum == k {
                pts.push(a.iter().map(|&v| f64::from(v) / f64::from(k)).collect());
            }
            if a.iter().all(|&v| v < k) && sum >= k {
                dominated_cells += 1;
            }
        }
        let cell = f64::from(k).powi(-(d as i32));
        let want = dominated_cells as f64 / f64::from(total_cells);
        let r = vec![1.0; d];
        let got = hypervolume(&pts, &r);
        assert!((got - want).abs() <= 1e-12 * want, "d={d}: {got} != {want}");
        for (p, c) in pts.iter().zip(contributions(&pts, &r)) {
            let interior = p.iter().all(|&v| v < 1.0);
            let want = if interior { cell } else { 0.0 };
            assert!((c - want).abs() <= 1e-12, "d={d} {p:?}: {c} != {want}");
        }
    }
}

#[test]
fn degenerate_inputs() {
    assert_eq!(hypervolume(&[], &[1.0, 1.0]), 0.0);
    assert!(contributions(&[], &[1.0, 1.0, 1.0]).is_empty());
    // 1-D: the best point, and only a unique best contributes.
    let pts = vec![vec![0.5], vec![0.25], vec![0.75], vec![2.0]];
    assert_eq!(hypervolume(&pts, &[1.0]), 0.75);
    assert_eq!(contributions(&pts, &[1.0]), vec![0.0, 0.25, 0.0, 0.0]);
    assert_eq!(
        contributions(&[vec![0.25], vec![0.25]], &[1.0]),
        vec![0.0, 0.0]
    );
    for d in 1..=5 {
        let r = vec![1.0; d];
        // On the reference (or beyond it in one objective): nothing.
        let mut beyond = vec![0.0; d];
        beyond[d - 1] = 3.0;
        let pts = vec![r.clone(), beyond];
        assert_eq!(hypervolume(&pts, &r), 0.0, "d={d}");
        assert_eq!(contributions(&pts, &r), vec![0.0, 0.0], "d={d}");
        // A single point, and its duplicate.
        let p = vec![0.5; d];
        assert_eq!(
            hypervolume(std::slice::from_ref(&p), &r),
            0.5f64.powi(d as i32)
        );
        assert_eq!(contributions(&[p.clone(), p], &r), vec![0.0, 0.0]);
    }
    // Negative zero behaves as zero.
    let pts = vec![vec![-0.0, 0.5, 0.5], vec![0.0, 0.5, 0.25]];
    assert_eq!(contributions(&pts, &[1.0; 3]), vec![0.0, 0.125]);
}
