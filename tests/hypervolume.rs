//! Hypervolume against an independent implementation: the expected values below were printed
//! by moocore 0.3.2 (`tests/data/hypervolume_moocore.py`, which documents the point formula)
//! for the same deterministic point sets, with 17 significant digits.

// The expected values are kept exactly as moocore printed them (17 significant digits).
#![allow(clippy::excessive_precision)]

use fabricopt::search::hypervolume::{contributions, hypervolume};

fn alpha(d: usize) -> &'static [f64] {
    match d {
        3 => &[0.8191725133961644, 0.671043606703789, 0.5497004779019701],
        4 => &[
            0.8566748838545029,
            0.733891856627126,
            0.6287067210378086,
            0.53859725722361,
        ],
        5 => &[
            0.8812714616335696,
            0.7766393890897683,
            0.6844301295853427,
            0.6031687406857283,
            0.5315553977157914,
        ],
        _ => unreachable!(),
    }
}

/// Point i (from 1) is `offset + frac(i * alpha_j)` normalised to the unit sphere, exactly as
/// the script computes it.
fn sphere_with(n: usize, d: usize, offset: f64) -> Vec<Vec<f64>> {
    (1..=n)
        .map(|i| {
            let v: Vec<f64> = alpha(d)
                .iter()
                .map(|a| offset + (i as f64 * a).fract())
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            v.iter().map(|x| x / norm).collect()
        })
        .collect()
}

/// Every 7th point followed by a copy scaled by 1.01 (dominated by that point only), every
/// 11th by an exact duplicate.
fn mixed(n: usize) -> Vec<Vec<f64>> {
    let mut points = Vec::new();
    for (i, p) in sphere(n, 3).into_iter().enumerate() {
        points.push(p.clone());
        if i % 7 == 0 {
            points.push(p.iter().map(|x| x * 1.01).collect());
        }
        if i % 11 == 0 {
            points.push(p);
        }
    }
    points
}

fn sphere(n: usize, d: usize) -> Vec<Vec<f64>> {
    sphere_with(n, d, 0.25)
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs(),
        "{what}: {got:.17e} != moocore {want:.17e} (relative {:.2e})",
        ((got - want) / want).abs()
    );
}

fn check(name: &str, points: &[Vec<f64>], hv: f64, sum: f64, some: &[(usize, f64)]) {
    let d = points[0].len();
    let r = vec![1.1; d];
    let got = hypervolume(points, &r);
    let c = contributions(points, &r);
    eprintln!(
        "{name}: hv={got:.17e} sum_contributions={:.17e}",
        c.iter().sum::<f64>()
    );
    assert_close(got, hv, &format!("{name} hypervolume"));
    assert_close(c.iter().sum(), sum, &format!("{name} sum of contributions"));
    for &(i, want) in some {
        if want == 0.0 {
            assert_eq!(c[i], 0.0, "{name} contribution {i}");
        } else {
            assert_close(c[i], want, &format!("{name} contribution {i}"));
        }
    }
}

#[test]
fn sphere_3d_10000_points_matches_moocore() {
    let points = sphere(10_000, 3);
    check(
        "sphere3_10000",
        &points,
        0.59208959120102,
        0.0057942712371118693,
        &[
            (0, 3.6100242975844474e-08),
            (1, 3.9293579482593179e-08),
            (4999, 9.1608078026639134e-08),
            (9999, 2.4416835565741738e-07),
        ],
    );
}

#[test]
fn mixed_3d_with_dominated_and_duplicates_matches_moocore() {
    let points = mixed(1_800);
    assert_eq!(points.len(), 2222);
    check(
        "mixed3_1800",
        &points,
        0.57712230455920077,
        0.011338623744774456,
        &[
            (0, 0.0),
            (1, 0.0),
            (2, 0.0),
            (3, 9.7114549235666203e-07),
            (7, 3.139262115492425e-05),
            (100, 2.942497506763786e-07),
        ],
    );
}

#[test]
fn sphere_4d_300_points_matches_moocore() {
    check(
        "sphere4_300",
        &sphere(300, 4),
        0.61908405721966775,
        0.050884335105964129,
        &[
            (0, 1.0752266986990833e-05),
            (1, 3.6598259285924861e-05),
            (150, 9.9306896371720299e-06),
            (299, 7.935636404132751e-05),
        ],
    );
}

#[test]
fn sphere_5d_200_points_matches_moocore() {
    check(
        "sphere5_200",
        &sphere(200, 5),
        0.61370867943207585,
        0.063341517121191071,
        &[
            (0, 4.9112868452105829e-06),
            (1, 9.1854626731779909e-05),
            (100, 0.0012628966985024359),
            (199, 2.9961818936996565e-05),
        ],
    );
}

/// Without the offset, point 2i nearly coincides with point i (a few ulps apart). There
/// moocore's hv_contributions is off (see the script), so the expected contributions are
/// moocore's `HV(S) - HV(S \ {p})`, whose own absolute error is about 1e-16.
#[test]
fn near_duplicates_match_moocore_hypervolume_differences() {
    let points = sphere_with(10_000, 3, 0.0);
    let r = [1.1; 3];
    assert_close(hypervolume(&points, &r), 0.79604986627879826, "raw3_10000");
    let c = contributions(&points, &r);
    for (i, want) in [
        (2222, 1.1102230246251565e-16),
        (9979, 1.4740271114810355e-08),
        (6915, 1.4710410778384642e-08),
    ] {
        assert!(
            (c[i] - want).abs() <= 1e-15,
            "raw3_10000 contribution {i}: {} != {want}",
            c[i]
        );
    }
}
