//! The text of the ExaNeSt additions to the `search` report: the seed paper's Table II
//! layout, the bisection check and the Jellyfish comparison.

use std::fmt::Write as _;

use crate::pipeline::search::ExanestReport;
use crate::search::problems::exanest_report::render;

/// The text printed after the run tables.
pub(super) fn text(report: &ExanestReport) -> String {
    let mut text = render(&report.table, report.paper);
    if report.paper {
        text.push_str(
            "(seed columns: the paper's Table II, mean and standard deviation of f1 and f2)\n",
        );
    }
    if let Some(check) = &report.bisection_check {
        let _ = writeln!(
            text,
            "\nBisection check: branch and bound proved the minimum for {} of {} \
             distinct front members; the partitioner's f1 equals it for {} (largest gap {}).",
            check.proven, check.members, check.heuristic_exact, check.largest_gap
        );
        for m in &check.mismatches {
            let _ = writeln!(
                text,
                "  partitioner {}, proven {}: {}",
                m.heuristic, m.exact, m.genome
            );
        }
    }
    if !report.jellyfish.is_empty() {
        let _ = writeln!(
            text,
            "\nBest-f1 front member per link count vs Jellyfish random regular graphs of the same \
             degree ({} samples; bisection exact where proven, else the partitioner's cut with the\n\
             proven spectral lower bound beside it):",
            report.jellyfish_samples
        );
        let _ = writeln!(
            text,
            "{:>4} {:<10} {:>10} {:>9} {:>9} {:>9} {:>6} {:>7}  genome",
            "f3", "graph", "bisection", "(lower)", "disjoint", "sp_paths", "diam", "dist"
        );
        for c in &report.jellyfish {
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
    text
}
