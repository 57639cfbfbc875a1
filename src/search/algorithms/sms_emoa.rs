//! SMS-EMOA (Beume, Naujoks & Emmerich 2007): steady-state (mu + 1) selection that removes
//! the member of the worst front contributing least hypervolume.
//!
//! Normalisation rule (docs/search.md): when the worst front is feasible, every member of the
//! mu + 1 population is feasible (feasible fronts come first). Each objective is scaled by the
//! population's ideal (minimum) and nadir (maximum) over all mu + 1 members,
//! `(f - ideal) / (nadir - ideal)`, with a range of 1 when nadir = ideal, and the
//! contributions are computed on the scaled worst front with the reference point 1.1 in every
//! objective. Ties go to the lowest index.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::search::SearchProblem;
use crate::search::algorithms::Algorithm;
use crate::search::dominance::non_dominated_sort;
use crate::search::engine::{Individual, RunSettings};
use crate::search::hypervolume::contributions;

/// Reference point in the scaled space.
pub(crate) const SCALED_REFERENCE: f64 = 1.1;

/// SMS-EMOA as the run loop's generation step: steps of one [`child`], each followed by the
/// removal of one member ([`removal_index`]).
pub(crate) struct SmsEmoa;

impl SmsEmoa {
    pub(crate) fn new(_: &RunSettings) -> Self {
        SmsEmoa
    }
}

impl<P: SearchProblem> Algorithm<P> for SmsEmoa {
    fn offspring(
        &self,
        problem: &P,
        population: &[Individual<P::Genome>],
        count: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<P::Genome> {
        (0..count)
            .map(|_| child(problem, population, rng))
            .collect()
    }

    fn survive(
        &self,
        mut population: Vec<Individual<P::Genome>>,
        offspring: Vec<Individual<P::Genome>>,
        mu: usize,
    ) -> Vec<Individual<P::Genome>> {
        population.extend(offspring);
        while population.len() > mu {
            let worst = removal_index(&population);
            population.remove(worst);
        }
        population
    }

    /// Steady state: each child competes with the population before the next is bred.
    fn step_size(&self, _batch: usize) -> usize {
        1
    }
}

/// One child: the first child of crossing two distinct parents drawn uniformly, mutated.
pub fn child<P: SearchProblem>(
    problem: &P,
    population: &[Individual<P::Genome>],
    rng: &mut ChaCha8Rng,
) -> P::Genome {
    let n = population.len();
    let a = rng.random_range(0..n);
    // Second parent uniform over the others.
    let b = (a + rng.random_range(1..n)) % n;
    let (mut c, _) = problem.crossover(&population[a].genome, &population[b].genome, rng);
    problem.mutate(&mut c, rng);
    c
}

/// Index (into `population`) of the member to remove from a mu + 1 population.
pub(crate) fn removal_index<G>(population: &[Individual<G>]) -> usize {
    let evals: Vec<_> = population.iter().map(|i| &i.evaluation).collect();
    let fronts = non_dominated_sort(&evals);
    let worst = fronts.last().expect("population is not empty");
    if worst.len() == 1 {
        return worst[0];
    }
    let mut most_violating: Option<usize> = None;
    for &i in worst {
        if !evals[i].feasible()
            && most_violating.is_none_or(|j| evals[i].violation > evals[j].violation)
        {
            most_violating = Some(i);
        }
    }
    if let Some(i) = most_violating {
        return i;
    }
    let m = evals[0].objectives.len();
    let mut ideal = vec![f64::INFINITY; m];
    let mut nadir = vec![f64::NEG_INFINITY; m];
    for e in &evals {
        for k in 0..m {
            ideal[k] = ideal[k].min(e.objectives[k]);
            nadir[k] = nadir[k].max(e.objectives[k]);
        }
    }
    let scaled: Vec<Vec<f64>> = worst
        .iter()
        .map(|&i| {
            (0..m)
                .map(|k| {
                    let range = nadir[k] - ideal[k];
                    let range = if range > 0.0 { range } else { 1.0 };
                    (evals[i].objectives[k] - ideal[k]) / range
                })
                .collect()
        })
        .collect();
    let c = contributions(&scaled, &vec![SCALED_REFERENCE; m]);
    let mut least = 0;
    for (j, v) in c.iter().enumerate() {
        if *v < c[least] {
            least = j;
        }
    }
    worst[least]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Evaluation;

    fn ind(objectives: &[f64], violation: f64) -> Individual<()> {
        Individual {
            genome: (),
            evaluation: Evaluation {
                objectives: objectives.to_vec(),
                violation,
                extras: vec![],
            },
        }
    }

    #[test]
    fn removes_the_single_worst() {
        let pop = [
            ind(&[0.0, 1.0], 0.0),
            ind(&[1.0, 0.0], 0.0),
            ind(&[2.0, 2.0], 0.0),
        ];
        assert_eq!(removal_index(&pop), 2);
    }

    #[test]
    fn removes_the_most_violating_infeasible() {
        let pop = [
            ind(&[0.0, 1.0], 0.0),
            ind(&[0.0, 0.0], 2.0),
            ind(&[0.0, 0.0], 5.0),
            ind(&[0.0, 0.0], 5.0),
        ];
        // Worst front: {2, 3} (equal violation); the first of the largest goes.
        assert_eq!(removal_index(&pop), 2);
    }

    #[test]
    fn removes_the_least_contributor() {
        // One front, already scaled to [0, 1]^2 (ideal 0, nadir 1); reference 1.1. Exclusive
        // contributions: (0,1) 0.5*0.1 = 0.05; (0.5,0.5) 0.05*0.5 = 0.025;
        // (0.55,0.45) 0.45*0.05 = 0.0225; (1,0) 0.1*0.45 = 0.045.
        let pop = [
            ind(&[0.0, 1.0], 0.0),
            ind(&[0.5, 0.5], 0.0),
            ind(&[0.55, 0.45], 0.0),
            ind(&[1.0, 0.0], 0.0),
        ];
        assert_eq!(removal_index(&pop), 2);
        // Scaling matters: stretch f1 by 100. Scaled values are unchanged, so is the choice.
        let stretched: Vec<_> = pop
            .iter()
            .map(|i| {
                ind(
                    &[
                        i.evaluation.objectives[0] * 100.0,
                        i.evaluation.objectives[1],
                    ],
                    0.0,
                )
            })
            .collect();
        assert_eq!(removal_index(&stretched), 2);
        // Duplicates contribute nothing: the first of the pair goes.
        let dup = [
            ind(&[0.0, 1.0], 0.0),
            ind(&[0.5, 0.5], 0.0),
            ind(&[0.5, 0.5], 0.0),
            ind(&[1.0, 0.0], 0.0),
        ];
        assert_eq!(removal_index(&dup), 1);
    }
}
