//! The ExaNeSt additions to the search report: the seed paper's Table II layout, a proof check
//! of the heuristic bisection values (small systems) and the comparison with Jellyfish random
//! graphs of the same degree.

use std::collections::{BTreeMap, HashSet};

use anyhow::Result;

use super::report::{BisectionCheck, ExanestReport, Mismatch};
use crate::search::config::BisectionMode;
use crate::search::problems::exanest::ExanestProblem;
use crate::search::problems::exanest_compare::{Comparison, compare_with_jellyfish};
use crate::search::problems::exanest_report::{AlgorithmRuns, table};
use crate::search::{Individual, RunOutcome, SearchProblem};
use crate::topology::metrics::bisection::exact_bisection;

/// Systems up to this many routers get every front member's bisection proven.
const VERIFY_MAX_ROUTERS: usize = 40;
/// Front sizes compared with Jellyfish graphs: the seed's Fig. 4 picks (4, 8 and 12 links).
const COMPARED_LINKS: [usize; 3] = [4, 8, 12];

/// Distinct genomes of every run's front, in first-seen order.
fn pooled_members(outcomes: &[RunOutcome<Vec<usize>>]) -> Vec<&Individual<Vec<usize>>> {
    let mut seen = HashSet::new();
    outcomes
        .iter()
        .flat_map(|o| &o.front)
        .filter(|i| seen.insert(i.genome.clone()))
        .collect()
}

/// Proves the bisection of each distinct front member by branch and bound.
fn verify_bisection(
    problem: &ExanestProblem,
    members: &[&Individual<Vec<usize>>],
) -> BisectionCheck {
    let results: Vec<Option<(u64, u64)>> = crate::cluster::map("bisection proof", members, |ind| {
        let heuristic = (-ind.evaluation.objectives[0]).round() as u64;
        let graph = problem.graph(&ind.genome);
        exact_bisection(&graph, None, 50_000_000).map(|(w, _)| (heuristic, w))
    });
    let proven = results.iter().flatten().count();
    let agree = results.iter().flatten().filter(|(h, w)| h == w).count();
    let gap = results
        .iter()
        .flatten()
        .map(|(h, w)| h.saturating_sub(*w).max(w.saturating_sub(*h)))
        .max()
        .unwrap_or(0);
    let mismatches = members
        .iter()
        .zip(&results)
        .filter_map(|(ind, r)| match r {
            Some((h, w)) if h != w => Some(Mismatch {
                genome: problem.describe(&ind.genome),
                heuristic: *h,
                exact: *w,
            }),
            _ => None,
        })
        .collect();
    BisectionCheck {
        members: members.len(),
        proven,
        heuristic_exact: agree,
        largest_gap: gap,
        mismatches,
    }
}

/// The ExaNeSt report of `outcomes` (algorithm-major); `jellyfish` graphs per compared member
/// (0: no comparison).
pub(super) fn report(
    problem: &ExanestProblem,
    outcomes: &[RunOutcome<Vec<usize>>],
    seed: u64,
    jellyfish: usize,
) -> Result<ExanestReport> {
    let mut algorithms: Vec<AlgorithmRuns> = Vec::new();
    for o in outcomes {
        let label = o.algorithm.label();
        if algorithms.last().is_none_or(|a| a.label != label) {
            algorithms.push(AlgorithmRuns {
                label,
                fronts: Vec::new(),
                hypervolumes: Vec::new(),
            });
        }
        let alg = algorithms.last_mut().expect("just pushed");
        // One member per objective vector: distinct genomes with equal objectives are the same
        // point of the front and would otherwise weight the means.
        let mut front: Vec<_> = o.front.iter().map(|i| i.evaluation.clone()).collect();
        front.sort_by(|a, b| a.objectives.partial_cmp(&b.objectives).expect("finite"));
        front.dedup_by(|a, b| a.objectives == b.objectives);
        alg.fronts.push(front);
        alg.hypervolumes.push(o.hypervolume);
    }
    let table = table(&algorithms);
    let members = pooled_members(outcomes);
    let bisection_check = (problem.routers() <= VERIFY_MAX_ROUTERS
        && problem.params.bisection == BisectionMode::Heuristic)
        .then(|| verify_bisection(problem, &members));
    let mut comparisons: Vec<Comparison> = Vec::new();
    if jellyfish > 0 {
        // Best f1 (then f2) per number of links among all fronts.
        let mut best: BTreeMap<usize, &Individual<Vec<usize>>> = BTreeMap::new();
        for ind in &members {
            let links = ind.evaluation.objectives[2].round() as usize;
            let key = |i: &Individual<Vec<usize>>| {
                (i.evaluation.objectives[0], i.evaluation.objectives[1])
            };
            let entry = best.entry(links).or_insert(ind);
            if key(ind) < key(entry) {
                *entry = ind;
            }
        }
        let picks: Vec<&Individual<Vec<usize>>> = COMPARED_LINKS
            .iter()
            .filter_map(|l| best.get(l).copied())
            .collect();
        for ind in picks {
            comparisons.push(compare_with_jellyfish(
                problem,
                &ind.genome,
                jellyfish,
                seed,
            )?);
        }
    }
    Ok(ExanestReport {
        table,
        bisection_check,
        jellyfish: comparisons,
        paper: (problem.r, problem.n, problem.m) == (8, 16, 1),
        jellyfish_samples: jellyfish,
    })
}
