//! The `search` experiment: runs of the problem file's `[search]` table with each chosen
//! algorithm (checkpoints, resume, front files), then the report: every run's figures, the
//! first run's front, hypervolume medians, the front plot and, for ExaNeSt, the Table II
//! report, the bisection check and the Jellyfish comparison. docs/formats.md, "`search
//! --json`", describes [`SearchReport`].
//!
//! `runs.rs` holds what every problem shares (the run context, the runs, the report), `exanest.rs`
//! the ExaNeSt additions and `report.rs` the report types; this file picks by problem.

mod exanest;
mod report;
mod runs;

use anyhow::Result;

pub(crate) use report::{ExanestReport, SearchReport};
pub(crate) use runs::{SearchOptions, configure};

use crate::problem_file::LoadedProblem;
use crate::search::config::ProblemKind;
use crate::search::problems::benchmarks::RealProblem;
use crate::search::problems::exanest::ExanestProblem;

/// Runs the search of `loaded` (its seed already final) as `options` say and returns the
/// report; the front files, checkpoints and the plot are written on the way.
pub fn run(loaded: &LoadedProblem, options: &SearchOptions) -> Result<SearchReport> {
    let config = configure(loaded, options)?;
    let path = loaded.path.clone();
    match config.problem {
        ProblemKind::Zdt1 | ProblemKind::Zdt2 | ProblemKind::Zdt3 | ProblemKind::Dtlz2 => {
            let problem = RealProblem::from_config(&config).map_err(|e| e.in_file(&path))?;
            crate::search::config::check_population_memory(
                "search.population",
                config.population,
                problem.variables * std::mem::size_of::<f64>(),
            )
            .map_err(|e| e.in_file(&path))?;
            // Real-coded fronts are continuous: an unbounded archive would grow to thousands
            // of members and dominate the run time and checkpoint size; keep one population's
            // worth, thinned by crowding distance.
            let archive = Some(config.population);
            let ctx = runs::context(&problem, loaded, &config, options, archive)?;
            let outcomes = runs::execute(&problem, &ctx)?;
            runs::report(&problem, &ctx, &outcomes, options, None)
        }
        ProblemKind::Exanest => {
            let p = &loaded.problem;
            let problem = ExanestProblem::from_config(&p.topology, p.search.as_ref(), p.seed)
                .map_err(|e| e.in_file(&loaded.path))?;
            // A discrete front stays small, so the archive keeps every non-dominated
            // arrangement seen.
            let ctx = runs::context(&problem, loaded, &config, options, None)?;
            let outcomes = runs::execute(&problem, &ctx)?;
            let extra = exanest::report(&problem, &outcomes, ctx.seed, options.jellyfish)?;
            runs::report(&problem, &ctx, &outcomes, options, Some(extra))
        }
    }
}
