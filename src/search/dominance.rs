//! Constrained domination, fast non-dominated sorting (Deb et al. 2002) and crowding distance.
//! All objectives are minimised (see [`Evaluation::objectives`]).

use std::borrow::Borrow;

use crate::search::Evaluation;

/// Pareto dominance on minimised objectives: `a` is no worse everywhere and better somewhere.
pub(crate) fn pareto_dominates(a: &[f64], b: &[f64]) -> bool {
    let mut better = false;
    for (x, y) in a.iter().zip(b) {
        if x > y {
            return false;
        }
        if x < y {
            better = true;
        }
    }
    better
}

/// Constrained domination (Deb 2000): a feasible solution beats an infeasible one; of two
/// infeasible solutions the one with the smaller violation wins; two feasible solutions compare
/// by Pareto dominance.
pub(crate) fn constrained_dominates(a: &Evaluation, b: &Evaluation) -> bool {
    match (a.feasible(), b.feasible()) {
        (true, true) => pareto_dominates(&a.objectives, &b.objectives),
        (true, false) => true,
        (false, true) => false,
        (false, false) => a.violation < b.violation,
    }
}

/// Fast non-dominated sorting under constrained domination: the fronts, best first, each a
/// list of indices into `evals` in increasing order.
pub(crate) fn non_dominated_sort<E: Borrow<Evaluation>>(evals: &[E]) -> Vec<Vec<usize>> {
    let n = evals.len();
    // dominated[p]: the solutions p dominates; count[p]: how many solutions dominate p.
    let mut dominated: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut count = vec![0usize; n];
    for p in 0..n {
        for q in p + 1..n {
            let (a, b) = (evals[p].borrow(), evals[q].borrow());
            if constrained_dominates(a, b) {
                dominated[p].push(q);
                count[q] += 1;
            } else if constrained_dominates(b, a) {
                dominated[q].push(p);
                count[p] += 1;
            }
        }
    }
    let mut fronts = Vec::new();
    let mut current: Vec<usize> = (0..n).filter(|&p| count[p] == 0).collect();
    while !current.is_empty() {
        let mut next = Vec::new();
        for &p in &current {
            for &q in &dominated[p] {
                count[q] -= 1;
                if count[q] == 0 {
                    next.push(q);
                }
            }
        }
        next.sort_unstable();
        fronts.push(current);
        current = next;
    }
    fronts
}

/// The first front only (O(n²) checks, no bookkeeping): indices in increasing order.
pub(crate) fn first_front<E: Borrow<Evaluation>>(evals: &[E]) -> Vec<usize> {
    (0..evals.len())
        .filter(|&p| {
            !evals
                .iter()
                .any(|q| constrained_dominates(q.borrow(), evals[p].borrow()))
        })
        .collect()
}

/// Crowding distance of each member of `front` (indices into `evals`), aligned with `front`.
/// Per objective the two boundary members get infinity and interior members add the
/// normalised gap between their neighbours; an objective with no spread adds nothing.
/// Ties in an objective are ordered by position in `front`, so the result is deterministic.
pub(crate) fn crowding_distance<E: Borrow<Evaluation>>(evals: &[E], front: &[usize]) -> Vec<f64> {
    let n = front.len();
    let mut distance = vec![0.0; n];
    if n <= 2 {
        return vec![f64::INFINITY; n];
    }
    let m = evals[front[0]].borrow().objectives.len();
    let mut order: Vec<usize> = (0..n).collect();
    for k in 0..m {
        let value = |i: usize| evals[front[i]].borrow().objectives[k];
        order.sort_by(|&a, &b| value(a).total_cmp(&value(b)).then(a.cmp(&b)));
        let (lo, hi) = (value(order[0]), value(order[n - 1]));
        distance[order[0]] = f64::INFINITY;
        distance[order[n - 1]] = f64::INFINITY;
        let range = hi - lo;
        if range <= 0.0 || !range.is_finite() {
            continue;
        }
        for w in order.windows(3) {
            distance[w[1]] += (value(w[2]) - value(w[0])) / range;
        }
    }
    distance
}

/// Rank (front number, 0 = best) and crowding distance (within its front) of every solution.
pub(crate) fn rank_and_crowding<E: Borrow<Evaluation>>(evals: &[E]) -> (Vec<usize>, Vec<f64>) {
    let mut rank = vec![0; evals.len()];
    let mut crowding = vec![0.0; evals.len()];
    for (r, front) in non_dominated_sort(evals).iter().enumerate() {
        for (&i, d) in front.iter().zip(crowding_distance(evals, front)) {
            rank[i] = r;
            crowding[i] = d;
        }
    }
    (rank, crowding)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(objectives: &[f64], violation: f64) -> Evaluation {
        Evaluation {
            objectives: objectives.to_vec(),
            violation,
            extras: vec![],
        }
    }

    #[test]
    fn constrained_domination_rules() {
        let feasible_bad = ev(&[9.0, 9.0], 0.0);
        let infeasible_good = ev(&[0.0, 0.0], 0.5);
        let infeasible_worse = ev(&[0.0, 0.0], 2.0);
        assert!(constrained_dominates(&feasible_bad, &infeasible_good));
        assert!(!constrained_dominates(&infeasible_good, &feasible_bad));
        assert!(constrained_dominates(&infeasible_good, &infeasible_worse));
        assert!(!constrained_dominates(&infeasible_worse, &infeasible_good));
        // Equal violation: neither dominates, whatever the objectives.
        assert!(!constrained_dominates(
            &ev(&[0.0, 0.0], 1.0),
            &ev(&[5.0, 5.0], 1.0)
        ));
        assert!(constrained_dominates(
            &ev(&[1.0, 2.0], 0.0),
            &ev(&[1.0, 3.0], 0.0)
        ));
        assert!(!constrained_dominates(
            &ev(&[1.0, 2.0], 0.0),
            &ev(&[1.0, 2.0], 0.0)
        ));
        assert!(!constrained_dominates(
            &ev(&[1.0, 2.0], 0.0),
            &ev(&[2.0, 1.0], 0.0)
        ));
    }

    #[test]
    fn sorts_hand_checked_fronts() {
        // 0 (1,5) 1 (2,3) 2 (4,1): front 0. 3 (3,4) is dominated by 1; 4 (5,2) by 2.
        // 5 (4,5) is dominated by 3 (and 1, 0). 6 infeasible v=1, 7 infeasible v=3.
        let evals = [
            ev(&[1.0, 5.0], 0.0),
            ev(&[2.0, 3.0], 0.0),
            ev(&[4.0, 1.0], 0.0),
            ev(&[3.0, 4.0], 0.0),
            ev(&[5.0, 2.0], 0.0),
            ev(&[4.0, 5.0], 0.0),
            ev(&[0.0, 0.0], 1.0),
            ev(&[0.0, 0.0], 3.0),
        ];
        let fronts = non_dominated_sort(&evals);
        assert_eq!(
            fronts,
            vec![vec![0, 1, 2], vec![3, 4], vec![5], vec![6], vec![7]]
        );
        assert_eq!(first_front(&evals), vec![0, 1, 2]);
        let (rank, _) = rank_and_crowding(&evals);
        assert_eq!(rank, vec![0, 0, 0, 1, 1, 2, 3, 4]);
    }

    #[test]
    fn duplicates_share_a_front() {
        let evals = [ev(&[1.0, 1.0], 0.0), ev(&[1.0, 1.0], 0.0)];
        assert_eq!(non_dominated_sort(&evals), vec![vec![0, 1]]);
    }

    #[test]
    fn crowding_hand_checked() {
        // Points on a line: (0,4) (1,3) (3,1) (4,0). Ranges are 4 in both objectives.
        // Interior (1,3): (3-0)/4 + (4-1)/4 = 1.5; (3,1): (4-1)/4 + (3-0)/4 = 1.5.
        let evals = [
            ev(&[3.0, 1.0], 0.0),
            ev(&[0.0, 4.0], 0.0),
            ev(&[4.0, 0.0], 0.0),
            ev(&[1.0, 3.0], 0.0),
        ];
        let d = crowding_distance(&evals, &[0, 1, 2, 3]);
        assert_eq!(d[1], f64::INFINITY);
        assert_eq!(d[2], f64::INFINITY);
        assert!((d[0] - 1.5).abs() < 1e-12, "{d:?}");
        assert!((d[3] - 1.5).abs() < 1e-12, "{d:?}");
        // Uneven spacing: (0,10) (1,9) (2,5) (10,0); ranges 10 and 10.
        // (1,9): (2-0)/10 + (10-5)/10 = 0.7; (2,5): (10-1)/10 + (9-0)/10 = 1.8.
        let evals = [
            ev(&[0.0, 10.0], 0.0),
            ev(&[1.0, 9.0], 0.0),
            ev(&[2.0, 5.0], 0.0),
            ev(&[10.0, 0.0], 0.0),
        ];
        let d = crowding_distance(&evals, &[0, 1, 2, 3]);
        assert!((d[1] - 0.7).abs() < 1e-12, "{d:?}");
        assert!((d[2] - 1.8).abs() < 1e-12, "{d:?}");
        assert_eq!(crowding_distance(&evals, &[0, 3]), vec![f64::INFINITY; 2]);
    }
}
