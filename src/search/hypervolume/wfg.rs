//! d >= 4: WFG (While, Bradstreet & Barone, "A fast way of calculating exact hypervolumes",
//! IEEE TEVC 2012). The volume is the sum of each point's exclusive volume against the points
//! after it, computed as its box minus the volume of its limit set (the others clipped to its
//! box), after removing dominated limit points. Sorting by the last objective, worst first,
//! makes every limit point share the current point's last coordinate, so each limit set is
//! measured in one dimension fewer, down to the O(n log n) 3-D sweep.
//!
//! Points are in flat row-major buffers (stride `d`), all strictly inside the reference box.

use super::{three_d, two_d};

fn point(points: &[f64], d: usize, i: usize) -> &[f64] {
    &points[i * d..(i + 1) * d]
}

fn weakly_dominates(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y)
}

fn fixed<const D: usize>(points: &[f64]) -> Vec<[f64; D]> {
    points
        .chunks_exact(D)
        .map(|c| std::array::from_fn(|j| c[j]))
        .collect()
}

pub(super) fn hypervolume(points: &[f64], d: usize, r: &[f64]) -> f64 {
    volume(points, d, r)
}

/// Hypervolume in any dimension >= 2 (the sweeps handle dominated points themselves).
fn volume(points: &[f64], d: usize, r: &[f64]) -> f64 {
    match d {
        2 => two_d::hypervolume(&fixed::<2>(points), [r[0], r[1]]),
        3 => three_d::hypervolume(&fixed::<3>(points), [r[0], r[1], r[2]]),
        _ => wfg(&nondominated(points, d), d, r),
    }
}

/// The points no other point weakly dominates, one copy of each duplicate. After a
/// lexicographic sort every weak dominator precedes the points it dominates.
fn nondominated(points: &[f64], d: usize) -> Vec<f64> {
    let n = points.len() / d;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| {
        let (p, q) = (point(points, d, a), point(points, d, b));
        p.iter()
            .zip(q)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut kept: Vec<usize> = Vec::new();
    for i in order {
        let p = point(points, d, i);
        if !kept
            .iter()
            .any(|&j| weakly_dominates(point(points, d, j), p))
        {
            kept.push(i);
        }
    }
    kept.iter()
        .flat_map(|&i| point(points, d, i).iter().copied())
        .collect()
}

/// WFG on a mutually non-dominated set, d >= 4.
fn wfg(points: &[f64], d: usize, r: &[f64]) -> f64 {
    let n = points.len() / d;
    let last = d - 1;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| points[b * d + last].total_cmp(&points[a * d + last]));
    let mut total = 0.0;
    let mut limit: Vec<f64> = Vec::with_capacity(n * last);
    for (k, &i) in order.iter().enumerate() {
        let p = point(points, d, i);
        let depth = r[last] - p[last];
        let face: f64 = (0..last).map(|j| r[j] - p[j]).product();
        limit.clear();
        for &j in &order[k + 1..] {
            let q = point(points, d, j);
            limit.extend((0..last).map(|c| p[c].max(q[c])));
        }
        let covered = if limit.is_empty() {
            0.0
        } else {
            volume(&limit, last, &r[..last])
        };
        total += depth * (face - covered);
    }
    total
}

/// Each point's exclusive volume: its box minus the volume of its limit set against all the
/// other points; 0 when another point (or a duplicate) weakly dominates it.
pub(super) fn contributions(points: &[f64], d: usize, r: &[f64]) -> Vec<f64> {
    let n = points.len() / d;
    let mut limit: Vec<f64> = Vec::with_capacity(n * d);
    (0..n)
        .map(|i| {
            let p = point(points, d, i);
            let others = (0..n).filter(|&j| j != i);
            if others
                .clone()
                .any(|j| weakly_dominates(point(points, d, j), p))
            {
                return 0.0;
            }
            limit.clear();
            for j in others {
                let q = point(points, d, j);
                limit.extend(p.iter().zip(q).map(|(a, b)| a.max(*b)));
            }
            let own: f64 = p.iter().zip(r).map(|(a, b)| b - a).product();
            let covered = if limit.is_empty() {
                0.0
            } else {
                volume(&limit, d, r)
            };
            (own - covered).max(0.0)
        })
        .collect()
}
