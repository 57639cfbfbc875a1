//! NSGA-II (Deb, Pratap, Agarwal & Meyarivan 2002): binary tournaments on (rank, crowding),
//! the problem's crossover and mutation, and (mu + lambda) survival by fronts and crowding.

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::search::Evaluation;
use crate::search::SearchProblem;
use crate::search::algorithms::Algorithm;
use crate::search::dominance::{non_dominated_sort, rank_and_crowding};
use crate::search::engine::{Individual, RunSettings};

/// NSGA-II as the run loop's generation step: [`offspring`], then [`survive`] over the
/// parents and children together.
pub struct Nsga2;

impl Nsga2 {
    pub fn new(_: &RunSettings) -> Self {
        Nsga2
    }
}

impl<P: SearchProblem> Algorithm<P> for Nsga2 {
    fn offspring(
        &self,
        problem: &P,
        population: &[Individual<P::Genome>],
        count: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<P::Genome> {
        offspring(problem, population, count, rng)
    }

    fn survive(
        &self,
        population: Vec<Individual<P::Genome>>,
        offspring: Vec<Individual<P::Genome>>,
        mu: usize,
    ) -> Vec<Individual<P::Genome>> {
        let mut combined = population;
        combined.extend(offspring);
        survive(combined, mu)
    }
}

/// `count` offspring genomes (not yet evaluated) bred from `population`. Draws from `rng`
/// only, in a fixed order, so the offspring depend on the seed alone.
pub(crate) fn offspring<P: SearchProblem>(
    problem: &P,
    population: &[Individual<P::Genome>],
    count: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<P::Genome> {
    let evals: Vec<_> = population.iter().map(|i| &i.evaluation).collect();
    let (rank, crowding) = rank_and_crowding(&evals);
    // Contestants come from shuffled permutations of the population (as in Deb's NSGA-II
    // code): each member enters exactly two tournaments per generation, which selects with
    // less noise than drawing contestants independently.
    let mut pool: Vec<usize> = Vec::new();
    let mut tournament = |rng: &mut ChaCha8Rng| {
        let mut draw = |rng: &mut ChaCha8Rng| {
            if pool.is_empty() {
                pool.extend(0..population.len());
                pool.shuffle(rng);
            }
            pool.pop().expect("refilled")
        };
        let a = draw(rng);
        let b = draw(rng);
        // Lower rank wins, then larger crowding distance; a full tie keeps the first drawn.
        let b_wins = rank[b] < rank[a] || (rank[b] == rank[a] && crowding[b] > crowding[a]);
        if b_wins { b } else { a }
    };
    let mut children = Vec::with_capacity(count + 1);
    while children.len() < count {
        let p1 = tournament(rng);
        let p2 = tournament(rng);
        let (mut c1, mut c2) =
            problem.crossover(&population[p1].genome, &population[p2].genome, rng);
        problem.mutate(&mut c1, rng);
        problem.mutate(&mut c2, rng);
        children.push(c1);
        children.push(c2);
    }
    // An odd count drops the last child (it was bred, so the random stream does not depend on
    // whether it is kept).
    children.truncate(count);
    children
}

/// Environmental selection: whole fronts while they fit, then the front that does not fit is
/// thinned by crowding distance (see [`prune`]). Copies of an
/// objective vector already present (first occurrence kept) only fill places left over: they
/// add nothing to the front and would crowd out distinct solutions.
pub fn survive<G>(combined: Vec<Individual<G>>, mu: usize) -> Vec<Individual<G>> {
    if combined.len() <= mu {
        return combined;
    }
    let mut by_objectives: Vec<usize> = (0..combined.len()).collect();
    let objectives = |i: usize| &combined[i].evaluation.objectives;
    by_objectives.sort_by(|&a, &b| {
        objectives(a)
            .iter()
            .zip(objectives(b))
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let mut copy = vec![false; combined.len()];
    for w in by_objectives.windows(2) {
        if objectives(w[0]) == objectives(w[1]) {
            copy[w[1]] = true;
        }
    }
    let distinct: Vec<usize> = (0..combined.len()).filter(|&i| !copy[i]).collect();
    let evals: Vec<_> = distinct.iter().map(|&i| &combined[i].evaluation).collect();
    let mut keep = Vec::with_capacity(mu);
    for front in non_dominated_sort(&evals) {
        if keep.len() + front.len() <= mu {
            keep.extend(front.iter().map(|&i| distinct[i]));
            if keep.len() == mu {
                break;
            }
            continue;
        }
        let room = mu - keep.len();
        keep.extend(
            prune(&evals, &front, room)
                .iter()
                .map(|&i| distinct[front[i]]),
        );
        break;
    }
    // Fewer than mu distinct vectors: copies fill the rest, in order.
    let missing = mu - keep.len();
    keep.extend((0..combined.len()).filter(|&i| copy[i]).take(missing));
    keep.sort_unstable();
    let mut slots: Vec<Option<Individual<G>>> = combined.into_iter().map(Some).collect();
    keep.iter()
        .map(|&i| slots[i].take().expect("each index once"))
        .collect()
}

const NONE: usize = usize::MAX;

/// Keeps `room` members of `front` (indices into `evals`); returns positions in `front`, in
/// increasing order. Removes the most crowded member (smallest crowding distance, ties to the
/// lowest position) one at a time and updates its neighbours' distances before the next
/// removal (Kukkonen & Deb 2006): removing all at once from one crowding computation leaves
/// gaps where two close neighbours both had small distances, which spreads the front worse,
/// visibly so with three objectives. Objective ranges stay those of the whole front.
pub(crate) fn prune(evals: &[&Evaluation], front: &[usize], room: usize) -> Vec<usize> {
    let n = front.len();
    if room >= n {
        return (0..n).collect();
    }
    let m = evals[front[0]].objectives.len();
    let value = |i: usize, k: usize| evals[front[i]].objectives[k];
    let mut prev = vec![vec![NONE; n]; m];
    let mut next = vec![vec![NONE; n]; m];
    let mut range = vec![0.0; m];
    for k in 0..m {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| value(a, k).total_cmp(&value(b, k)).then(a.cmp(&b)));
        for w in order.windows(2) {
            next[k][w[0]] = w[1];
            prev[k][w[1]] = w[0];
        }
        range[k] = value(order[n - 1], k) - value(order[0], k);
    }
    let distance = |i: usize, prev: &[Vec<usize>], next: &[Vec<usize>]| {
        let mut d = 0.0;
        for k in 0..m {
            let (p, q) = (prev[k][i], next[k][i]);
            if p == NONE || q == NONE {
                return f64::INFINITY;
            }
            if range[k] > 0.0 && range[k].is_finite() {
                d += (value(q, k) - value(p, k)) / range[k];
            }
        }
        d
    };
    let mut d: Vec<f64> = (0..n).map(|i| distance(i, &prev, &next)).collect();
    let mut alive = vec![true; n];
    for _ in room..n {
        let mut worst = NONE;
        for i in (0..n).filter(|&i| alive[i]) {
            if worst == NONE || d[i] < d[worst] {
                worst = i;
            }
        }
        alive[worst] = false;
        let mut touched = Vec::with_capacity(2 * m);
        for k in 0..m {
            let (p, q) = (prev[k][worst], next[k][worst]);
            if p != NONE {
                next[k][p] = q;
                touched.push(p);
            }
            if q != NONE {
                prev[k][q] = p;
                touched.push(q);
            }
        }
        for i in touched {
            d[i] = distance(i, &prev, &next);
        }
    }
    (0..n).filter(|&i| alive[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Evaluation;

    fn ind(id: usize, objectives: &[f64], violation: f64) -> Individual<usize> {
        Individual {
            genome: id,
            evaluation: Evaluation {
                objectives: objectives.to_vec(),
                violation,
                extras: vec![],
            },
        }
    }

    #[test]
    fn survival_takes_fronts_then_crowding() {
        // Front 0: ids 0..4 on a line; 4 = (1.1, 2.9) is crowded next to 1 = (1, 3).
        // Front 1: id 5. Infeasible: id 6.
        let combined = vec![
            ind(0, &[0.0, 4.0], 0.0),
            ind(1, &[1.0, 3.0], 0.0),
            ind(2, &[3.0, 1.0], 0.0),
            ind(3, &[4.0, 0.0], 0.0),
            ind(4, &[1.1, 2.9], 0.0),
            ind(5, &[5.0, 5.0], 0.0),
            ind(6, &[0.0, 0.0], 1.0),
        ];
        let ids = |v: &[Individual<usize>]| v.iter().map(|i| i.genome).collect::<Vec<_>>();
        assert_eq!(ids(&survive(combined.clone(), 6)), vec![0, 1, 2, 3, 4, 5]);
        // Four of front 0: the boundaries (0, 3) and the two least crowded interior points.
        // Distances: 1: (1.1-0)/4 + (4-2.9)/4 = 0.55; 4: (3-1)/4 + (3-1)/4 = 1.0;
        // 2: (4-1.1)/4 + (2.9-0)/4 = 1.45. So 1 goes.
        assert_eq!(ids(&survive(combined.clone(), 4)), vec![0, 2, 3, 4]);
        // Three: after 1 goes, 4's neighbours are 0 and 2: (3-0)/4 + (4-1)/4 = 1.5 > 1.45,
        // so 2 goes next (a one-shot ranking would have dropped 4).
        assert_eq!(ids(&survive(combined.clone(), 3)), vec![0, 3, 4]);
        assert_eq!(ids(&survive(combined.clone(), 7)).len(), 7);
        // A copy of (4, 0) goes before the dominated (5, 5), but is kept when there is room.
        let mut with_copy = combined;
        with_copy.push(ind(7, &[4.0, 0.0], 0.0));
        assert_eq!(ids(&survive(with_copy.clone(), 6)), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(ids(&survive(with_copy, 8)), vec![0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
