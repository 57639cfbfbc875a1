//! Searched ExaNeSt arrangements beside Jellyfish random regular graphs with the same number of
//! routers and the same router degree (the seed's "Irreg-r" baseline).

use serde::Serialize;

use super::exanest::ExanestProblem;
use crate::error::Result;
use crate::search::stats::mean_sd;
use crate::topology::generators::jellyfish;
use crate::topology::metrics::{MetricsOptions, compute};
use crate::topology::spec::LinkParams;

/// Graph figures of one topology (or the mean over several random ones).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct GraphFigures {
    /// Exact bisection width when proven, else the partitioner's cut (an upper bound).
    pub bisection: f64,
    /// Proven lower bound on the bisection width (spectral, or the exact value).
    pub bisection_lower: f64,
    /// Whether every bisection value behind `bisection` is proven minimal.
    pub bisection_exact: bool,
    pub disjoint_paths: f64,
    pub shortest_paths: f64,
    pub diameter: f64,
    pub avg_distance: f64,
}

/// One searched genome against Jellyfish graphs of the same size and degree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub genome: String,
    pub active_links: usize,
    pub searched: GraphFigures,
    pub jellyfish_degree: usize,
    pub jellyfish_samples: usize,
    pub jellyfish_mean: GraphFigures,
    /// Sample standard deviation of the Jellyfish bisection widths.
    pub jellyfish_bisection_sd: f64,
}

/// Metrics of a searched genome computed by the general `topo` path (exact bisection up to
/// the metrics' size limit), so both sides are measured the same way.
fn searched_figures(problem: &ExanestProblem, genome: &[usize]) -> Result<GraphFigures> {
    let topo = crate::topology::generators::exanest(
        problem.r,
        problem.n,
        problem.m,
        genome,
        1,
        &LinkParams::default(),
    )?;
    Ok(figures_of(&topo))
}

fn figures_of(topo: &crate::topology::Topology) -> GraphFigures {
    let (m, _) = compute(topo, &MetricsOptions::default(), &|| {});
    GraphFigures {
        bisection: m.bisection.exact.unwrap_or(m.bisection.upper) as f64,
        bisection_lower: m.bisection.lower as f64,
        bisection_exact: m.bisection.exact.is_some(),
        disjoint_paths: m.path_diversity.disjoint_shortest,
        shortest_paths: m.path_diversity.shortest_paths,
        diameter: m.diameter.map_or(f64::NAN, f64::from),
        avg_distance: m.avg_distance,
    }
}

/// Compares `genome` with `samples` Jellyfish graphs (seeds `seed..seed + samples`) whose
/// degree is the genome's average router degree (= its number of active links).
pub(crate) fn compare_with_jellyfish(
    problem: &ExanestProblem,
    genome: &[usize],
    samples: usize,
    seed: u64,
) -> Result<Comparison> {
    let searched = searched_figures(problem, genome)?;
    let degree = genome.iter().filter(|&&s| s != 0).count();
    let routers = problem.routers();
    let sample_seeds: Vec<u64> = (0..samples as u64).map(|k| seed + k).collect();
    let randoms: Vec<GraphFigures> = crate::cluster::map("jellyfish sample", &sample_seeds, |&s| {
        jellyfish(routers, degree, 1, s, &LinkParams::default())
            .map(|topo| figures_of(&topo))
            .map_err(|e| e.to_string())
    })
    .into_iter()
    .collect::<std::result::Result<_, _>>()
    .map_err(|reason| crate::Error::field("jellyfish", reason))?;
    let col = |f: fn(&GraphFigures) -> f64| randoms.iter().map(f).collect::<Vec<f64>>();
    let (bisection, bisection_sd) = mean_sd(&col(|f| f.bisection));
    Ok(Comparison {
        genome: genome
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/"),
        active_links: degree,
        searched,
        jellyfish_degree: degree,
        jellyfish_samples: samples,
        jellyfish_mean: GraphFigures {
            bisection,
            bisection_lower: mean_sd(&col(|f| f.bisection_lower)).0,
            bisection_exact: randoms.iter().all(|f| f.bisection_exact),
            disjoint_paths: mean_sd(&col(|f| f.disjoint_paths)).0,
            shortest_paths: mean_sd(&col(|f| f.shortest_paths)).0,
            diameter: mean_sd(&col(|f| f.diameter)).0,
            avg_distance: mean_sd(&col(|f| f.avg_distance)).0,
        },
        jellyfish_bisection_sd: bisection_sd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::config::ExanestSearch;

    #[test]
    fn compares_a_genome_with_random_graphs_of_its_degree() {
        let p = ExanestProblem::new(2, 4, 2, &ExanestSearch::default(), 1).unwrap();
        let c = compare_with_jellyfish(&p, &[5, 17, 8, 22], 3, 1).unwrap();
        assert_eq!(c.jellyfish_degree, 4);
        assert_eq!(c.jellyfish_samples, 3);
        // The worked example's figures, as `fabricopt topo` reports them.
        let f = p.figures(&[5, 17, 8, 22]);
        assert_eq!(c.searched.bisection, f.bisection as f64);
        assert_eq!(c.searched.avg_distance, f.avg_distance);
        assert!(c.jellyfish_mean.bisection > 0.0 && c.jellyfish_mean.bisection_exact);
        assert!(c.jellyfish_mean.diameter >= 2.0);
    }
}
