//! The seed paper's Table II layout for ExaNeSt searches: per value of f3 (active links), the
//! mean and standard deviation of f1 (bisection) and f2 (path diversity) over the Pareto sets
//! of all runs pooled, for each algorithm; plus the hypervolume of every run and a rank-sum
//! test between the algorithms.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::exanest::EXTRA_NAMES;
use crate::search::problem::Evaluation;
use crate::search::stats::{RankSum, mean_sd, median, rank_sum};

/// One algorithm's runs: each run's final Pareto set and its hypervolume.
pub(crate) struct AlgorithmRuns<'a> {
    pub label: &'a str,
    pub fronts: Vec<Vec<Evaluation>>,
    pub hypervolumes: Vec<f64>,
}

/// Statistics of the pooled Pareto-set members with one value of f3.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkGroup {
    pub active_links: usize,
    pub members: usize,
    pub f1_mean: f64,
    pub f1_sd: f64,
    pub f2_mean: f64,
    pub f2_sd: f64,
    /// f2 in the paper's normalisation (sum over unordered pairs / ((n + 1) n / 2)).
    pub f2_paper_scale_mean: f64,
    /// Mean of the other path-diversity definition (shortest-path count or disjoint paths).
    pub disjoint_paths_mean: f64,
    pub shortest_paths_mean: f64,
    pub diameter_mean: f64,
    pub avg_distance_mean: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlgorithmTable {
    pub algorithm: String,
    pub groups: Vec<LinkGroup>,
    pub hypervolumes: Vec<f64>,
    pub hypervolume_median: f64,
    pub hypervolume_mean: f64,
    pub hypervolume_sd: f64,
    /// Over every pooled member: the paper's "Avg. Diam" and "Avg. Dist" rows.
    pub diameter_mean: f64,
    pub avg_distance_mean: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableReport {
    pub algorithms: Vec<AlgorithmTable>,
    /// Rank-sum test of the first algorithm's run hypervolumes against the second's.
    pub hypervolume_rank_sum: Option<RankSum>,
}

fn extra(e: &Evaluation, name: &str) -> f64 {
    let i = EXTRA_NAMES
        .iter()
        .position(|&n| n == name)
        .expect("known extra");
    e.extras[i]
}

fn group(active_links: usize, members: &[&Evaluation]) -> LinkGroup {
    let col = |f: &dyn Fn(&Evaluation) -> f64| members.iter().map(|e| f(e)).collect::<Vec<_>>();
    let (f1_mean, f1_sd) = mean_sd(&col(&|e| -e.objectives[0]));
    let (f2_mean, f2_sd) = mean_sd(&col(&|e| -e.objectives[1]));
    let avg = |name: &str| mean_sd(&col(&|e| extra(e, name))).0;
    LinkGroup {
        active_links,
        members: members.len(),
        f1_mean,
        f1_sd,
        f2_mean,
        f2_sd,
        f2_paper_scale_mean: avg("f2_paper_scale"),
        disjoint_paths_mean: avg("disjoint_paths"),
        shortest_paths_mean: avg("shortest_paths"),
        diameter_mean: avg("diameter"),
        avg_distance_mean: avg("avg_distance"),
    }
}

/// Pools every run's Pareto set (feasible members only) and groups it by f3.
pub(crate) fn table(runs: &[AlgorithmRuns]) -> TableReport {
    let algorithms: Vec<AlgorithmTable> = runs
        .iter()
        .map(|alg| {
            let pooled: Vec<&Evaluation> = alg
                .fronts
                .iter()
                .flatten()
                .filter(|e| e.feasible())
                .collect();
            let mut by_links: BTreeMap<usize, Vec<&Evaluation>> = BTreeMap::new();
            for e in &pooled {
                by_links
                    .entry(e.objectives[2].round() as usize)
                    .or_default()
                    .push(e);
            }
            let (hv_mean, hv_sd) = mean_sd(&alg.hypervolumes);
            let all = group(0, &pooled);
            AlgorithmTable {
                algorithm: alg.label.to_string(),
                groups: by_links
                    .iter()
                    .map(|(&links, members)| group(links, members))
                    .collect(),
                hypervolumes: alg.hypervolumes.clone(),
                hypervolume_median: median(&alg.hypervolumes),
                hypervolume_mean: hv_mean,
                hypervolume_sd: hv_sd,
                diameter_mean: all.diameter_mean,
                avg_distance_mean: all.avg_distance_mean,
            }
        })
        .collect();
    let hypervolume_rank_sum =
        (runs.len() >= 2 && runs[0].hypervolumes.len() >= 2 && runs[1].hypervolumes.len() >= 2)
            .then(|| rank_sum(&runs[0].hypervolumes, &runs[1].hypervolumes));
    TableReport {
        algorithms,
        hypervolume_rank_sum,
    }
}

/// The seed's Table II for T = (8, 16, 1): (f3, mu f1, mu f2, sd f1, sd f2) for NSGA-II and
/// SMS-EMOA.
pub(crate) const PAPER_TABLE_II: [(usize, [f64; 4], [f64; 4]); 8] = [
    (2, [6.04, 1.06, 0.29, 0.00], [6.00, 1.06, 0.00, 0.00]),
    (4, [15.96, 10.16, 4.48, 11.46], [14.40, 6.56, 5.46, 6.91]),
    (6, [27.17, 8.57, 5.67, 1.69], [30.38, 6.01, 4.46, 2.65]),
    (8, [43.71, 11.99, 7.05, 1.62], [44.50, 6.89, 8.37, 3.80]),
    (10, [59.54, 10.91, 6.39, 5.93], [56.70, 5.57, 9.04, 3.40]),
    (12, [73.88, 7.00, 5.24, 4.09], [70.50, 5.11, 9.51, 1.60]),
    (14, [87.88, 7.53, 7.95, 4.87], [83.71, 4.46, 6.84, 0.69]),
    (16, [101.07, 6.89, 10.02, 4.54], [94.22, 4.60, 10.62, 0.22]),
];

/// Text rendering: one block per algorithm, and the paper's values beside ours when
/// `paper` is given (T = (8, 16, 1)).
pub(crate) fn render(report: &TableReport, paper: bool) -> String {
    let mut out = String::new();
    for (k, alg) in report.algorithms.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}: Pareto sets of {} runs pooled, grouped by f3 (f2 = our average over ordered \
             pairs; paper-scale f2 = f2 x (n-1)/(n+1))",
            alg.algorithm,
            alg.hypervolumes.len()
        );
        let _ = write!(
            out,
            "{:>4} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>6} {:>6}",
            "f3",
            "members",
            "mu_f1",
            "sd_f1",
            "mu_f2",
            "sd_f2",
            "f2_paper",
            "sp_paths",
            "diam",
            "dist"
        );
        if paper {
            let _ = write!(
                out,
                " | {:>8} {:>7} {:>7} {:>7}",
                "seed_f1", "sd", "seed_f2", "sd"
            );
        }
        out.push('\n');
        for g in &alg.groups {
            let _ = write!(
                out,
                "{:>4} {:>7} {:>8.2} {:>7.2} {:>7.2} {:>7.2} {:>8.2} {:>8.2} {:>6.2} {:>6.3}",
                g.active_links,
                g.members,
                g.f1_mean,
                g.f1_sd,
                g.f2_mean,
                g.f2_sd,
                g.f2_paper_scale_mean,
                g.shortest_paths_mean,
                g.diameter_mean,
                g.avg_distance_mean
            );
            if paper
                && let Some((_, nsga, sms)) =
                    PAPER_TABLE_II.iter().find(|row| row.0 == g.active_links)
            {
                let v = if k == 0 { nsga } else { sms };
                let _ = write!(
                    out,
                    " | {:>8.2} {:>7.2} {:>7.2} {:>7.2}",
                    v[0], v[2], v[1], v[3]
                );
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "  all members: mean diameter {:.2}, mean average distance {:.3}",
            alg.diameter_mean, alg.avg_distance_mean
        );
        let hv: Vec<String> = alg.hypervolumes.iter().map(|h| format!("{h:.1}")).collect();
        let _ = writeln!(
            out,
            "  hypervolume per run: {} (median {:.1}, mean {:.1} +- {:.1})\n",
            hv.join(" "),
            alg.hypervolume_median,
            alg.hypervolume_mean,
            alg.hypervolume_sd
        );
    }
    if let Some(rs) = &report.hypervolume_rank_sum {
        let (a, b) = (
            &report.algorithms[0].algorithm,
            &report.algorithms[1].algorithm,
        );
        let verdict = if rs.p_value < 0.05 {
            "significant at the 5% level"
        } else {
            "not significant at the 5% level"
        };
        let _ = writeln!(
            out,
            "Rank-sum test of run hypervolumes, {a} vs {b}: U = {}, z = {:.2}, two-sided p = {:.4} ({verdict})",
            rs.u, rs.z, rs.p_value
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(f1: f64, f2: f64, f3: f64) -> Evaluation {
        Evaluation {
            objectives: vec![-f1, -f2, f3],
            violation: 0.0,
            extras: vec![3.0, 2.0, f2, 2.0 * f2, f2 * 0.9, f3 * 16.0],
        }
    }

    #[test]
    fn pools_runs_and_groups_by_links() {
        let runs = [
            AlgorithmRuns {
                label: "NSGA-II",
                fronts: vec![
                    vec![member(6.0, 1.0, 2.0), member(16.0, 2.0, 4.0)],
                    vec![member(6.0, 1.5, 2.0), member(20.0, 3.0, 4.0)],
                ],
                hypervolumes: vec![10.0, 12.0, 14.0],
            },
            AlgorithmRuns {
                label: "SMS-EMOA",
                fronts: vec![vec![member(6.0, 1.0, 2.0)]],
                hypervolumes: vec![1.0, 2.0, 3.0],
            },
        ];
        let t = table(&runs);
        let g = &t.algorithms[0].groups;
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].active_links, g[0].members), (2, 2));
        assert_eq!((g[0].f1_mean, g[0].f1_sd), (6.0, 0.0));
        assert_eq!(g[0].f2_mean, 1.25);
        assert_eq!(g[1].f1_mean, 18.0);
        assert!((g[1].f1_sd - 8f64.sqrt()).abs() < 1e-12);
        assert_eq!(g[1].shortest_paths_mean, 5.0);
        assert_eq!(t.algorithms[0].hypervolume_median, 12.0);
        let rs = t.hypervolume_rank_sum.as_ref().unwrap();
        assert_eq!(rs.u, 9.0);
        let text = render(&t, true);
        assert!(text.contains("|     6.04"), "{text}");
        assert!(text.contains("Rank-sum test"), "{text}");
    }
}
