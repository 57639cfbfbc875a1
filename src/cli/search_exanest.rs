//! `fabricopt search` on the ExaNeSt link-arrangement problem: the generic run report plus the
//! seed paper's Table II layout, a proof check of the heuristic bisection values (small
//! systems) and the comparison with Jellyfish random graphs of the same degree.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::Result;
use rayon::prelude::*;
use serde_json::json;

use super::search::{ReportExtra, SearchArgs, context, execute, report};
use crate::problem_file::LoadedProblem;
use crate::search::config::BisectionMode;
use crate::search::problems::exanest::ExanestProblem;
use crate::search::problems::exanest_compare::{Comparison, compare_with_jellyfish};
use crate::search::problems::exanest_report::{AlgorithmRuns, render, table};
use crate::search::{Individual, RunOutcome, SearchConfig, SearchProblem};
use crate::topology::metrics::bisection::exact_bisection;

/// Systems up to this many routers get every front member's bisection proven.
const VERIFY_MAX_ROUTERS: usize = 40;
/// Front sizes compared with Jellyfish graphs: the seed's Fig. 4 picks (4, 8 and 12 links).
const COMPARED_LINKS: [usize; 3] = [4, 8, 12];

pub fn run(args: &SearchArgs, loaded: &LoadedProblem, config: &SearchConfig) -> Result<()> {
    let p = &loaded.problem;
    let problem = ExanestProblem::from_config(&p.topology, p.search.as_ref(), p.seed)
        .map_err(|e| e.in_file(&loaded.path))?;
    // A discrete front stays small, so the archive keeps every non-dominated arrangement seen.
    let ctx = context(&problem, loaded, config, args, None)?;
    let outcomes = execute(&problem, &ctx)?;
    let extra = exanest_extra(&problem, &outcomes, ctx.seed, args)?;
    report(&problem, &ctx, &outcomes, args, Some(extra))
}

/// Distinct genomes of every run's front, in first-seen order.
fn pooled_members(outcomes: &[RunOutcome<Vec<usize>>]) -> Vec<&Individual<Vec<usize>>> {
    let mut seen = std::collections::HashSet::new();
    outcomes
        .iter()
        .flat_map(|o| &o.front)
        .filter(|i| seen.insert(i.genome.clone()))
        .collect()
}

/// The branch-and-bound check of the front members' f1.
struct BisectionCheck {
    members: usize,
    proven: usize,
    /// Proven members whose heuristic f1 equals the proven minimum.
    agree: usize,
    largest_gap: u64,
    /// (genome, heuristic, proven) of the proven members that disagree.
    mismatches: Vec<(String, u64, u64)>,
}

/// Proves the bisection of each distinct front member by branch and bound.
fn verify_bisection(
    problem: &ExanestProblem,
    members: &[&Individual<Vec<usize>>],
) -> BisectionCheck {
    let results: Vec<Option<(u64, u64)>> = members
        .par_iter()
        .map(|ind| {
            let heuristic = (-ind.evaluation.objectives[0]).round() as u64;
            let graph = problem.graph(&ind.genome);
            exact_bisection(&graph, None, 50_000_000).map(|(w, _)| (heuristic, w))
        })
        .collect();
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
            Some((h, w)) if h != w => Some((problem.describe(&ind.genome), *h, *w)),
            _ => None,
        })
        .collect();
    BisectionCheck {
        members: members.len(),
        proven,
        agree,
        largest_gap: gap,
        mismatches,
    }
}

fn exanest_extra(
    problem: &ExanestProblem,
    outcomes: &[RunOutcome<Vec<usize>>],
    seed: u64,
    args: &SearchArgs,
) -> Result<ReportExtra> {
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
    let t = table(&algorithms);
    let paper = (problem.r, problem.n, problem.m) == (8, 16, 1);
    let mut text = render(&t, paper);
    if paper {
        text.push_str(
            "(seed columns: the paper's Table II, mean and standard deviation of f1 and f2)\n",
        );
    }
    let members = pooled_members(outcomes);
    let mut verification = serde_json::Value::Null;
    if problem.routers() <= VERIFY_MAX_ROUTERS
        && problem.params.bisection == BisectionMode::Heuristic
    {
        let BisectionCheck {
            members: total,
            proven,
            agree,
            largest_gap: gap,
            mismatches,
        } = verify_bisection(problem, &members);
        let _ = writeln!(
            text,
            "\nBisection check: branch and bound proved the minimum for {proven} of {total} \
             distinct front members; the partitioner's f1 equals it for {agree} (largest gap {gap})."
        );
        for (genome, h, w) in &mismatches {
            let _ = writeln!(text, "  partitioner {h}, proven {w}: {genome}");
        }
        verification = json!({
            "members": total,
            "proven": proven,
            "heuristic_exact": agree,
            "largest_gap": gap,
            "mismatches": mismatches
                .iter()
                .map(|(g, h, w)| json!({"genome": g, "heuristic": h, "exact": w}))
                .collect::<Vec<_>>(),
        });
    }
    let mut comparisons: Vec<Comparison> = Vec::new();
    if args.jellyfish > 0 {
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
                args.jellyfish,
                seed,
            )?);
        }
    }
    if !comparisons.is_empty() {
        let _ = writeln!(
            text,
            "\nBest-f1 front member per link count vs Jellyfish random regular graphs of the same \
             degree ({} samples; bisection exact where proven, else the partitioner's cut with the\n\
             proven spectral lower bound beside it):",
            args.jellyfish
        );
        let _ = writeln!(
            text,
            "{:>4} {:<10} {:>10} {:>9} {:>9} {:>9} {:>6} {:>7}  genome",
            "f3", "graph", "bisection", "(lower)", "disjoint", "sp_paths", "diam", "dist"
        );
        for c in &comparisons {
            for (label, f) in [("searched", &c.searched), ("jellyfish", &c.jellyfish_mean)] {
                let _ = writeln!(
                    text,
                    "{:>4} {:<10} {:>10.2} {:>9.2} {:>9.3} {:>9.3} {:>6.2} {:>7.3}  {}",
                    c.active_links,
                    label,
                    f.bisection,
                    f.bisection_lower,
                    f.disjoint_paths,
                    f.shortest_paths,
                    f.diameter,
                    f.avg_distance,
                    if label == "searched" {
                        c.genome.as_str()
                    } else {
                        ""
                    }
                );
            }
        }
    }
    Ok(ReportExtra {
        key: "exanest",
        text,
        json: json!({
            "table": t,
            "bisection_check": verification,
            "jellyfish": comparisons,
        }),
    })
}
