//! NSGA-II (Deb, Pratap, Agarwal & Meyarivan 2002): binary tournaments on (rank, crowding),
//! the problem's crossover and mutation, and (mu + lambda) survival by fronts and crowding.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::search::SearchProblem;
use crate::search::dominance::{crowding_distance, non_dominated_sort, rank_and_crowding};
use crate::search::engine::Individual;

/// `count` offspring genomes (not yet evaluated) bred from `population`. Draws from `rng`
/// only, in a fixed order, so the offspring depend on the seed alone.
pub fn offspring<P: SearchProblem>(
    problem: &P,
    population: &[Individual<P::Genome>],
    count: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<P::Genome> {
    let evals: Vec<_> = population.iter().map(|i| &i.evaluation).collect();
    let (rank, crowding) = rank_and_crowding(&evals);
    let tournament = |rng: &mut ChaCha8Rng| {
        let a = rng.random_range(0..population.len());
        let b = rng.random_range(0..population.len());
        // Lower rank wins, then larger crowding distance; a full tie keeps the first draw.
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

/// Environmental selection: whole fronts while they fit, then the most widely spaced members
/// (largest crowding distance; ties by position) of the front that does not.
pub fn survive<G>(combined: Vec<Individual<G>>, mu: usize) -> Vec<Individual<G>> {
    if combined.len() <= mu {
        return combined;
    }
    let evals: Vec<_> = combined.iter().map(|i| &i.evaluation).collect();
    let mut keep = Vec::with_capacity(mu);
    for front in non_dominated_sort(&evals) {
        if keep.len() + front.len() <= mu {
            keep.extend_from_slice(&front);
            if keep.len() == mu {
                break;
            }
            continue;
        }
        let d = crowding_distance(&evals, &front);
        let mut order: Vec<usize> = (0..front.len()).collect();
        order.sort_by(|&a, &b| d[b].total_cmp(&d[a]).then(a.cmp(&b)));
        let room = mu - keep.len();
        keep.extend(order[..room].iter().map(|&i| front[i]));
        break;
    }
    keep.sort_unstable();
    let mut slots: Vec<Option<Individual<G>>> = combined.into_iter().map(Some).collect();
    keep.iter()
        .map(|&i| slots[i].take().expect("each index once"))
        .collect()
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
        assert_eq!(ids(&survive(combined, 7)).len(), 7);
    }
}
