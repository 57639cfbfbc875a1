//! 2-D hypervolume and contributions by sorting and one sweep, O(n log n).
//!
//! All points are strictly inside the reference box (the caller filters).

/// Sorts by x, then y: a point's weak dominators (other than duplicates sorted before it) all
/// come before it, and the staircase is the run of strict improvements in y.
fn sorted_order(points: &[[f64; 2]]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        let (p, q) = (points[a], points[b]);
        p[0].total_cmp(&q[0]).then(p[1].total_cmp(&q[1]))
    });
    order
}

pub(super) fn hypervolume(points: &[[f64; 2]], r: [f64; 2]) -> f64 {
    let mut area = 0.0;
    let mut top = r[1];
    for i in sorted_order(points) {
        let [x, y] = points[i];
        if y < top {
            // The new step: from x to the reference, between this y and the previous one.
            area += (r[0] - x) * (top - y);
            top = y;
        }
    }
    area
}

/// Exclusive contributions. The staircase point `s_k` (sorted by x) alone dominates the box
/// `[x_k, x_{k+1}) x [y_k, y_{k-1})`; any other point whose corner lies in that box is
/// dominated by `s_k` only, so its quadrant is cut out of `s_k`'s box. Points weakly dominated
/// by two staircase points (corner outside every box), and duplicates, contribute 0.
pub(super) fn contributions(points: &[[f64; 2]], r: [f64; 2]) -> Vec<f64> {
    let order = sorted_order(points);
    let mut stair: Vec<usize> = Vec::new();
    // Non-staircase points, still sorted by (x, y).
    let mut rest: Vec<usize> = Vec::new();
    let mut top = r[1];
    for i in order {
        if points[i][1] < top {
            top = points[i][1];
            stair.push(i);
        } else {
            rest.push(i);
        }
    }
    let mut result = vec![0.0; points.len()];
    let mut next_rest = 0;
    for (k, &s) in stair.iter().enumerate() {
        let [x, y] = points[s];
        let right = stair.get(k + 1).map_or(r[0], |&t| points[t][0]);
        let upper = if k == 0 {
            r[1]
        } else {
            points[stair[k - 1]][1]
        };
        // Every non-staircase point with x in [x_k, x_{k+1}) is weakly dominated by s_k (the
        // lowest staircase point at or left of it); it cuts s_k's box when below y_{k-1}.
        let mut cur_x = x;
        let mut cur_top = upper;
        let mut exclusive = 0.0;
        while next_rest < rest.len() && points[rest[next_rest]][0] < right {
            let [cx, cy] = points[rest[next_rest]];
            next_rest += 1;
            if cy < cur_top {
                exclusive += (cx - cur_x) * (cur_top - y);
                cur_x = cx;
                cur_top = cy;
            }
        }
        exclusive += (right - cur_x) * (cur_top - y);
        result[s] = exclusive;
    }
    result
}
