//! Exact hypervolume (minimisation): the volume dominated by a point set and bounded by a
//! reference point, and each point's exclusive contribution.
//!
//! Algorithms (see docs/hypervolume.md):
//! - 1-D: the best value.
//! - 2-D ([`two_d`]): sort + sweep, O(n log n), for both the volume and the contributions.
//! - 3-D ([`three_d`]): dimension sweep along z over a balanced xy-staircase, O(n log n); the
//!   contributions by a box decomposition of each point's exclusive region (Emmerich & Fonseca
//!   2011 style), O(n log n) amortised.
//! - d >= 4 ([`wfg`]): WFG (While, Bradstreet & Barone 2012), bottoming out in the 3-D sweep.
//!
//! Only points strictly better than the reference in every objective count. [`reference`] is
//! the slow, independent slicing oracle the tests compare against.

use std::cmp::Ordering;

pub mod csv;
pub mod reference;
mod three_d;
mod two_d;
mod wfg;

#[cfg(test)]
mod tests;

/// Hypervolume of `points` (each of the reference point's dimension) with respect to
/// `reference`, minimising every objective. Points that do not strictly dominate the reference
/// point contribute nothing.
pub fn hypervolume(points: &[Vec<f64>], reference: &[f64]) -> f64 {
    let d = reference.len();
    debug_assert!(points.iter().all(|p| p.len() == d), "dimension mismatch");
    let inside: Vec<usize> = inside(points, reference);
    if inside.is_empty() || d == 0 {
        return 0.0;
    }
    match d {
        1 => {
            let best = inside
                .iter()
                .map(|&i| points[i][0])
                .fold(f64::INFINITY, f64::min);
            reference[0] - best
        }
        2 => two_d::hypervolume(&fixed::<2>(points, &inside), fixed_ref(reference)),
        3 => three_d::hypervolume(&fixed::<3>(points, &inside), fixed_ref(reference)),
        _ => wfg::hypervolume(&flat(points, &inside), d, reference),
    }
}

/// Each point's exclusive contribution `HV(S) - HV(S \ {p})` (0 for dominated points and
/// for duplicates).
pub fn contributions(points: &[Vec<f64>], reference: &[f64]) -> Vec<f64> {
    let d = reference.len();
    debug_assert!(points.iter().all(|p| p.len() == d), "dimension mismatch");
    let mut result = vec![0.0; points.len()];
    let inside: Vec<usize> = inside(points, reference);
    if inside.is_empty() || d == 0 {
        return result;
    }
    let local = match d {
        1 => one_d_contributions(points, &inside, reference[0]),
        2 => two_d::contributions(&fixed::<2>(points, &inside), fixed_ref(reference)),
        3 => three_d::contributions(&fixed::<3>(points, &inside), fixed_ref(reference)),
        _ => wfg::contributions(&flat(points, &inside), d, reference),
    };
    for (&i, c) in inside.iter().zip(local) {
        result[i] = c;
    }
    result
}

/// Indices of the points strictly better than the reference in every objective.
fn inside(points: &[Vec<f64>], reference: &[f64]) -> Vec<usize> {
    (0..points.len())
        .filter(|&i| points[i].iter().zip(reference).all(|(a, r)| a < r))
        .collect()
}

/// Copies the selected points into fixed-size arrays; `+ 0.0` turns -0.0 into 0.0 so that the
/// total order used for keys agrees with `==` on coordinates.
fn fixed<const D: usize>(points: &[Vec<f64>], selected: &[usize]) -> Vec<[f64; D]> {
    selected
        .iter()
        .map(|&i| std::array::from_fn(|j| points[i][j] + 0.0))
        .collect()
}

fn fixed_ref<const D: usize>(reference: &[f64]) -> [f64; D] {
    std::array::from_fn(|j| reference[j] + 0.0)
}

/// The selected points as one flat row-major buffer (stride = dimension).
fn flat(points: &[Vec<f64>], selected: &[usize]) -> Vec<f64> {
    selected
        .iter()
        .flat_map(|&i| points[i].iter().map(|v| v + 0.0))
        .collect()
}

/// In 1-D only the unique best point contributes: the gap to the second best (or reference).
fn one_d_contributions(points: &[Vec<f64>], inside: &[usize], reference: f64) -> Vec<f64> {
    let values: Vec<f64> = inside.iter().map(|&i| points[i][0]).collect();
    let best = values.iter().copied().fold(f64::INFINITY, f64::min);
    let best_count = values.iter().filter(|&&v| v == best).count();
    let second = values
        .iter()
        .copied()
        .filter(|&v| v > best)
        .fold(reference, f64::min);
    values
        .iter()
        .map(|&v| {
            if v == best && best_count == 1 {
                second - best
            } else {
                0.0
            }
        })
        .collect()
}

/// An `f64` with the IEEE total order, for ordered-map keys. Inputs never hold NaN, and -0.0 is
/// normalised away before keys are built, so this order agrees with the numeric one.
#[derive(Clone, Copy, Debug)]
struct Key(f64);

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
