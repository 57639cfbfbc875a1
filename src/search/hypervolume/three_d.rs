//! 3-D hypervolume and contributions by a dimension sweep along z, O(n log n).
//!
//! The sweep keeps the xy-staircase of the points seen so far (the non-dominated ones) in a
//! `BTreeMap` keyed by x, with two sentinels, `(-inf, r_y)` and `(r_x, -inf)`, so that every
//! point inside the box has a left and a right neighbour. All points are strictly inside the
//! reference box (the caller filters).

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Included, Unbounded};

use super::Key;

fn z_order(points: &[[f64; 3]]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_unstable_by(|&a, &b| points[a][2].total_cmp(&points[b][2]));
    order
}

pub(super) fn hypervolume(points: &[[f64; 3]], r: [f64; 3]) -> f64 {
    let order = z_order(points);
    let mut front: BTreeMap<Key, f64> = BTreeMap::new();
    front.insert(Key(f64::NEG_INFINITY), r[1]);
    front.insert(Key(r[0]), f64::NEG_INFINITY);
    let mut area = 0.0;
    let mut volume = 0.0;
    for (k, &i) in order.iter().enumerate() {
        let [x, y, z] = points[i];
        area += insert(&mut front, x, y);
        let next_z = order.get(k + 1).map_or(r[2], |&j| points[j][2]);
        volume += area * (next_z - z);
    }
    volume
}

/// Inserts `(x, y)` into the staircase and returns the area it adds (0 if weakly dominated).
fn insert(front: &mut BTreeMap<Key, f64>, x: f64, y: f64) -> f64 {
    let (_, &below) = front.range(..=Key(x)).next_back().expect("left sentinel");
    if below <= y {
        return 0.0;
    }
    // The added region is [x, right) x [y, top) minus the boxes of the points it removes.
    let mut top = *front.range(..Key(x)).next_back().expect("left sentinel").1;
    let mut left = x;
    let mut added = 0.0;
    loop {
        let (&Key(qx), &qy) = front.range(Key(x)..).next().expect("right sentinel");
        if qy < y {
            added += (qx - left) * (top - y);
            break;
        }
        added += (qx - left) * (top - y);
        left = qx;
        top = qy;
        front.remove(&Key(qx));
    }
    front.insert(Key(x), y);
    added
}

/// One vertical strip `[x_a, x_b) x [bottom, top)` of a point's exclusive xy-region, open since
/// height `z_open`; the bottom is always the owner's y and `x_a` is the map key.
#[derive(Clone, Copy, Debug)]
struct Strip {
    x_b: f64,
    top: f64,
    z_open: f64,
}

/// A staircase entry: the point's y and its index (`NONE` for the sentinels).
#[derive(Clone, Copy, Debug)]
struct Step {
    y: f64,
    owner: usize,
}

const NONE: usize = usize::MAX;

/// The sweep state for the contributions: every staircase point owns its current exclusive
/// xy-region as strips with non-increasing tops; closing a strip at height z adds its area
/// times the height it stayed open to the owner's contribution.
struct Sweep<'a> {
    points: &'a [[f64; 3]],
    front: BTreeMap<Key, Step>,
    strips: Vec<BTreeMap<Key, Strip>>,
    contribution: Vec<f64>,
}

impl Sweep<'_> {
    fn close(&mut self, owner: usize, x_a: f64, strip: Strip, z: f64) {
        let bottom = self.points[owner][1];
        self.contribution[owner] += (strip.x_b - x_a) * (strip.top - bottom) * (z - strip.z_open);
    }

    fn open(&mut self, owner: usize, x_a: f64, x_b: f64, top: f64, z: f64) {
        // Zero-width or zero-height strips carry no volume.
        if x_b > x_a && top > self.points[owner][1] {
            let strip = Strip {
                x_b,
                top,
                z_open: z,
            };
            self.strips[owner].insert(Key(x_a), strip);
        }
    }

    fn close_all(&mut self, owner: usize, z: f64) {
        for (Key(x_a), strip) in std::mem::take(&mut self.strips[owner]) {
            self.close(owner, x_a, strip, z);
        }
    }

    /// Removes `[x, inf)` from the owner's region (its new right neighbour starts at x).
    fn clip_right(&mut self, owner: usize, x: f64, z: f64) {
        for (Key(x_a), strip) in self.strips[owner].split_off(&Key(x)) {
            self.close(owner, x_a, strip, z);
        }
        let straddling = self.strips[owner]
            .values_mut()
            .next_back()
            .filter(|s| s.x_b > x)
            .map(|s| {
                let cut = *s;
                s.x_b = x;
                cut
            });
        if let Some(cut) = straddling {
            self.close(owner, x, cut, z);
        }
    }

    /// Caps the owner's region at height `y` for `x >= from`: the strips there with a top above
    /// y close, and one merged strip with top y opens in their place. Because tops do not
    /// increase with x and the non-empty strips are contiguous, the affected strips are one run.
    fn cap(&mut self, owner: usize, from: f64, y: f64, z: f64) {
        let mut merged: Option<(f64, f64)> = None;
        // A strip straddling `from` keeps its part left of it.
        let straddling = self.strips[owner]
            .range_mut(..Key(from))
            .next_back()
            .filter(|(_, s)| s.x_b > from && s.top > y)
            .map(|(_, s)| {
                let cut = *s;
                s.x_b = from;
                cut
            });
        if let Some(cut) = straddling {
            self.close(owner, from, cut, z);
            merged = Some((from, cut.x_b));
        }
        loop {
            let next = self.strips[owner]
                .range((Included(Key(from)), Unbounded))
                .next()
                .map(|(&k, &s)| (k, s));
            match next {
                Some((Key(x_a), strip)) if strip.top > y => {
                    self.strips[owner].remove(&Key(x_a));
                    self.close(owner, x_a, strip, z);
                    merged = Some((merged.map_or(x_a, |m| m.0), strip.x_b));
                }
                _ => break,
            }
        }
        if let Some((x_a, x_b)) = merged {
            self.open(owner, x_a, x_b, y, z);
        }
    }

    fn insert(&mut self, i: usize) {
        let [x, y, z] = self.points[i];
        let (&Key(bx), &below) = self.front.range(..=Key(x)).next_back().expect("sentinel");
        if below.y <= y {
            // Weakly dominated in xy (and, by the sweep order, in z). With a single dominator
            // s the quadrant of this point leaves s's exclusive region from now on.
            let (_, before) = self
                .front
                .range((Unbounded, Excluded(Key(bx))))
                .next_back()
                .expect("left sentinel is never a dominator");
            if before.y > y {
                self.cap(below.owner, x, y, z);
            }
            return;
        }
        let (_, &left) = self.front.range(..Key(x)).next_back().expect("sentinel");
        if left.owner != NONE {
            self.clip_right(left.owner, x, z);
        }
        // Remove the staircase points this one weakly dominates; its own region is
        // [x, right) x [y, left.y) minus their boxes: strips between consecutive breakpoints.
        let mut strip_from = x;
        let mut strip_top = left.y;
        let right_owner = loop {
            let (&Key(qx), &q) = self.front.range(Key(x)..).next().expect("right sentinel");
            self.open(i, strip_from, qx, strip_top, z);
            if q.y < y {
                break q.owner;
            }
            self.front.remove(&Key(qx));
            self.close_all(q.owner, z);
            strip_from = qx;
            strip_top = q.y;
        };
        if right_owner != NONE {
            self.cap(right_owner, f64::NEG_INFINITY, y, z);
        }
        self.front.insert(Key(x), Step { y, owner: i });
    }
}

pub(super) fn contributions(points: &[[f64; 3]], r: [f64; 3]) -> Vec<f64> {
    let mut sweep = Sweep {
        points,
        front: BTreeMap::new(),
        strips: vec![BTreeMap::new(); points.len()],
        contribution: vec![0.0; points.len()],
    };
    sweep.front.insert(
        Key(f64::NEG_INFINITY),
        Step {
            y: r[1],
            owner: NONE,
        },
    );
    sweep.front.insert(
        Key(r[0]),
        Step {
            y: f64::NEG_INFINITY,
            owner: NONE,
        },
    );
    for i in z_order(points) {
        sweep.insert(i);
    }
    for owner in 0..points.len() {
        sweep.close_all(owner, r[2]);
    }
    sweep.contribution
}
