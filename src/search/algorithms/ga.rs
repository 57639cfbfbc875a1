//! A single-objective generational GA with elitism, on the engine shared with NSGA-II and
//! SMS-EMOA (same evaluation, archive, checkpoints, resume and progress). Minimises
//! `objectives[0]`; constrained domination ranks infeasible members last.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::search::SearchProblem;
use crate::search::algorithms::Algorithm;
use crate::search::config::{GaOptions, Selection};
use crate::search::dominance::constrained_dominates;
use crate::search::engine::{Individual, RunSettings};

/// The GA as the run loop's generation step, with the run's selection and elitism
/// ([`RunSettings::ga`]).
pub(crate) struct Ga {
    options: GaOptions,
}

impl Ga {
    pub(crate) fn new(settings: &RunSettings) -> Self {
        Ga {
            options: settings.ga,
        }
    }
}

impl<P: SearchProblem> Algorithm<P> for Ga {
    fn offspring(
        &self,
        problem: &P,
        population: &[Individual<P::Genome>],
        count: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<P::Genome> {
        offspring(problem, population, count, &self.options, rng)
    }

    fn survive(
        &self,
        population: Vec<Individual<P::Genome>>,
        offspring: Vec<Individual<P::Genome>>,
        mu: usize,
    ) -> Vec<Individual<P::Genome>> {
        survive(population, offspring, mu, self.options.elite)
    }
}

/// Order of two members: feasible before infeasible, then smaller violation, then smaller
/// cost (`objectives[0]`).
fn better<G>(a: &Individual<G>, b: &Individual<G>) -> bool {
    constrained_dominates(&a.evaluation, &b.evaluation)
}

/// Indices of `population` from best to worst (stable: ties keep their order).
pub(crate) fn ranking<G>(population: &[Individual<G>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..population.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&population[a], &population[b]);
        if better(x, y) {
            std::cmp::Ordering::Less
        } else if better(y, x) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    order
}

fn select<G>(population: &[Individual<G>], opts: &GaOptions, rng: &mut ChaCha8Rng) -> usize {
    let n = population.len();
    match opts.selection {
        Selection::Tournament { size } => {
            let mut best = rng.random_range(0..n);
            for _ in 1..size.max(1) {
                let c = rng.random_range(0..n);
                if better(&population[c], &population[best]) {
                    best = c;
                }
            }
            best
        }
        Selection::Roulette { power } => {
            // Infeasible members get no weight unless nobody is feasible.
            let weight = |i: &Individual<G>| {
                let cost = i.evaluation.objectives[0].max(1e-12);
                if i.evaluation.feasible() {
                    cost.recip().powf(power)
                } else {
                    0.0
                }
            };
            let weights: Vec<f64> = population.iter().map(weight).collect();
            let total: f64 = weights.iter().sum();
            if !(total > 0.0 && total.is_finite()) {
                return rng.random_range(0..n);
            }
            let mut x = rng.random_range(0.0..total);
            for (i, w) in weights.iter().enumerate() {
                if x < *w {
                    return i;
                }
                x -= w;
            }
            n - 1
        }
    }
}

/// `count` children: two selected parents, the problem's crossover and mutation.
pub(crate) fn offspring<P: SearchProblem>(
    problem: &P,
    population: &[Individual<P::Genome>],
    count: usize,
    opts: &GaOptions,
    rng: &mut ChaCha8Rng,
) -> Vec<P::Genome> {
    let mut children = Vec::with_capacity(count + 1);
    while children.len() < count {
        let a = select(population, opts, rng);
        let b = select(population, opts, rng);
        let (mut c1, mut c2) = problem.crossover(&population[a].genome, &population[b].genome, rng);
        problem.mutate(&mut c1, rng);
        problem.mutate(&mut c2, rng);
        children.push(c1);
        children.push(c2);
    }
    children.truncate(count);
    children
}

/// Generational replacement with elitism: the `elite` best of the old population, then the
/// best children, `mu` in all; if fewer children than places remain, the best remaining old
/// members fill up.
pub fn survive<G: Clone>(
    old: Vec<Individual<G>>,
    children: Vec<Individual<G>>,
    mu: usize,
    elite: usize,
) -> Vec<Individual<G>> {
    let old_rank = ranking(&old);
    let child_rank = ranking(&children);
    let keep_old = elite.min(mu).min(old.len());
    let mut next: Vec<Individual<G>> = old_rank[..keep_old]
        .iter()
        .map(|&i| old[i].clone())
        .collect();
    next.extend(
        child_rank
            .iter()
            .take(mu - keep_old)
            .map(|&i| children[i].clone()),
    );
    for &i in &old_rank[keep_old..] {
        if next.len() >= mu {
            break;
        }
        next.push(old[i].clone());
    }
    next
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::search::Evaluation;

    fn ind(cost: f64, violation: f64) -> Individual<u32> {
        Individual {
            genome: cost as u32,
            evaluation: Evaluation {
                objectives: vec![cost],
                violation,
                extras: vec![],
            },
        }
    }

    #[test]
    fn elitism_keeps_the_best_parents_and_the_best_children() {
        let old = vec![ind(5.0, 0.0), ind(1.0, 0.0), ind(3.0, 0.0), ind(0.5, 2.0)];
        let children = vec![ind(4.0, 0.0), ind(2.0, 0.0), ind(9.0, 0.0)];
        let next = survive(old, children, 4, 1);
        let costs: Vec<f64> = next.iter().map(|i| i.evaluation.objectives[0]).collect();
        // Best parent 1.0 (the infeasible 0.5 ranks last), then children 2, 4, 9.
        assert_eq!(costs, vec![1.0, 2.0, 4.0, 9.0]);
    }

    #[test]
    fn selection_prefers_better_members() {
        let pop: Vec<_> = (1..=10).map(|c| ind(f64::from(c), 0.0)).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for (selection, min_share) in [
            (Selection::Tournament { size: 2 }, 0.15),
            (Selection::Roulette { power: 7.0 }, 0.5),
        ] {
            let opts = GaOptions {
                selection,
                elite: 1,
            };
            let best = (0..2000)
                .filter(|_| select(&pop, &opts, &mut rng) == 0)
                .count();
            // Uniform choice would pick the best 10% of the time; tournament of 2: 19%;
            // roulette with (1/c)^7: 1 / sum(1/k^7) = 99%.
            assert!(best as f64 / 2000.0 > min_share, "{selection:?}: {best}");
        }
    }
}
