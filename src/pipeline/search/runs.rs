//! What every search problem shares: the options, the run context, the runs and the report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::report::{ExanestReport, FrontTable, RunReport, SearchReport};
use crate::pipeline::{check_output_dir, check_output_file};
use crate::problem_file::LoadedProblem;
use crate::search::config::AlgorithmChoice;
use crate::search::front::{
    FrontSeries, front_json, natural_objectives, plot_fronts, write_front_files,
};
use crate::search::stats::median;
use crate::search::{
    AlgorithmName, RunOutcome, RunSettings, SearchConfig, SearchProblem, Termination, run_seed,
};

/// How to search: the command line's choices (`None` = the problem file's).
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    /// Runs per algorithm (overrides `search.runs`).
    pub runs: Option<usize>,
    /// Overrides `search.algorithm`.
    pub algorithm: Option<AlgorithmChoice>,
    /// Stop after this many generations (overrides `search.generations` and `evaluations`).
    pub generations: Option<usize>,
    /// Continue each run from its checkpoint; `force` even if the configuration changed.
    pub resume: bool,
    pub force: bool,
    /// Write a scatter plot of the first run's front of each algorithm (SVG) here.
    pub plot: Option<PathBuf>,
    /// Output folder (default `populations/<name>`).
    pub out: Option<PathBuf>,
    /// Do not write checkpoints.
    pub no_checkpoint: bool,
    /// Show the progress bar.
    pub progress: bool,
    /// ExaNeSt: Jellyfish graphs per compared front member (0 = no comparison).
    pub jellyfish: usize,
}

/// What the runs of one `search` command share.
#[derive(Clone, Debug)]
pub(crate) struct Context {
    pub name: String,
    pub seed: u64,
    pub runs: usize,
    pub algorithms: Vec<AlgorithmName>,
    pub population: usize,
    pub evaluations: usize,
    /// Internal (minimised) space.
    pub reference_point: Vec<f64>,
    pub out_dir: PathBuf,
    pub checkpoint: bool,
    pub resume: bool,
    pub force: bool,
    /// The effective configuration (see [`fingerprint`]), stored in every checkpoint.
    pub config: Value,
    pub progress: bool,
    pub archive_limit: Option<usize>,
}

impl Context {
    /// The directory of run `k` of `algorithm`.
    pub(crate) fn run_dir(&self, algorithm: AlgorithmName, k: usize) -> PathBuf {
        self.out_dir.join(format!("{}-run{k}", algorithm.name()))
    }
}

/// The `[search]` table with the options' overrides, validated.
pub(crate) fn configure(loaded: &LoadedProblem, options: &SearchOptions) -> Result<SearchConfig> {
    let path = &loaded.path;
    let Some(mut config) = loaded.problem.search.clone() else {
        bail!(
            "{}: search: a [search] table is required to search",
            path.display()
        );
    };
    if let Some(runs) = options.runs {
        if runs == 0 {
            bail!("--runs: must be at least 1");
        }
        config.runs = runs;
    }
    if let Some(a) = options.algorithm {
        config.algorithm = a;
    }
    if let Some(g) = options.generations {
        crate::search::config::generations_budget("--generations", config.population, g)?;
        config.generations = Some(g);
        config.evaluations = None;
    }
    config.validate().map_err(|e| e.in_file(path))?;
    Ok(config)
}

/// The run context for `problem`; the reference point comes from the file (natural sign) or
/// the problem's default.
pub(crate) fn context<P: SearchProblem>(
    problem: &P,
    loaded: &LoadedProblem,
    config: &SearchConfig,
    options: &SearchOptions,
    archive_limit: Option<usize>,
) -> Result<Context> {
    let path = &loaded.path;
    let objectives = problem.objectives();
    let reference_point = match &config.reference_point {
        None => problem.reference_point(),
        Some(r) => {
            if r.len() != objectives.len() {
                bail!(
                    "{}: search.reference_point: has {} values but {} has {} objectives",
                    path.display(),
                    r.len(),
                    problem.name(),
                    objectives.len()
                );
            }
            if let Some(v) = r.iter().find(|v| !v.is_finite()) {
                bail!(
                    "{}: search.reference_point: {v} is not a finite number",
                    path.display()
                );
            }
            objectives
                .iter()
                .zip(r)
                .map(|(o, &v)| o.internal(v))
                .collect()
        }
    };
    let name = loaded.problem.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map_or("search".into(), |s| s.to_string_lossy().into_owned())
    });
    let out_dir = options
        .out
        .clone()
        .unwrap_or_else(|| Path::new("populations").join(&name));
    check_output_dir("--out", &out_dir)?;
    if let Some(plot) = &options.plot {
        check_plot(plot, &out_dir)?;
    }
    Ok(Context {
        out_dir,
        name,
        seed: loaded.problem.seed,
        runs: config.runs,
        algorithms: config.algorithm.algorithms(),
        population: config.population,
        evaluations: config.evaluation_budget(),
        reference_point,
        checkpoint: config.checkpoint && !options.no_checkpoint,
        resume: options.resume,
        force: options.force,
        config: fingerprint(loaded, config)?,
        progress: options.progress,
        archive_limit,
    })
}

/// `--plot` may name a file in the run's output folder, which the run creates (as the
/// README's command does); anywhere else the file's folder must exist.
fn check_plot(plot: &Path, out_dir: &Path) -> Result<()> {
    match plot.parent() {
        Some(dir) if !dir.exists() && dir.starts_with(out_dir) => check_output_dir("--plot", dir),
        _ => check_output_file("--plot", plot),
    }
}

/// The configuration one search run depends on, as stored in its checkpoint: the problem file
/// after defaults and command-line overrides, without the settings that only say how many runs
/// of which algorithms to make or whether to checkpoint them (a run's own algorithm and seed
/// are checked separately). A checkpoint's fingerprint, compared as JSON, not a report.
pub(crate) fn fingerprint(loaded: &LoadedProblem, config: &SearchConfig) -> Result<Value> {
    let mut search = serde_json::to_value(config)?;
    if let Some(table) = search.as_object_mut() {
        for per_command in ["runs", "algorithm", "checkpoint"] {
            table.remove(per_command);
        }
    }
    let p = &loaded.problem;
    Ok(json!({
        "name": p.name,
        "seed": p.seed,
        "topology": p.topology,
        "metrics": p.metrics,
        "search": search,
    }))
}

/// Runs `runs` runs of every algorithm (run k uses `run_seed(seed, k)`), one after another
/// (under MPI, spread over groups of ranks: `cluster::spread`), and writes each run's front
/// files. Outcomes are in algorithm-major, run order.
pub(crate) fn execute<P: SearchProblem>(
    problem: &P,
    ctx: &Context,
) -> Result<Vec<RunOutcome<P::Genome>>> {
    let jobs: Vec<(AlgorithmName, usize)> = ctx
        .algorithms
        .iter()
        .flat_map(|&algorithm| (0..ctx.runs).map(move |k| (algorithm, k)))
        .collect();
    crate::cluster::spread("search runs", &jobs, |&(algorithm, k)| {
        let dir = ctx.run_dir(algorithm, k);
        let settings = RunSettings {
            algorithm,
            population: ctx.population,
            termination: Termination::Evaluations(ctx.evaluations),
            seed: run_seed(ctx.seed, k),
            reference_point: ctx.reference_point.clone(),
            checkpoint_dir: ctx.checkpoint.then(|| dir.clone()),
            resume: ctx.resume,
            force: ctx.force,
            config: ctx.config.clone(),
            progress: ctx.progress,
            label: format!("{} run {k}", algorithm.label()),
            archive_limit: ctx.archive_limit,
            ga: Default::default(),
        };
        let outcome = crate::search::run(problem, &settings)?;
        write_front_files(problem, &outcome, &ctx.reference_point, &dir)?;
        Ok(outcome)
    })
}

/// The report of the runs; writes the plot.
pub(super) fn report<P: SearchProblem>(
    problem: &P,
    ctx: &Context,
    outcomes: &[RunOutcome<P::Genome>],
    options: &SearchOptions,
    exanest: Option<ExanestReport>,
) -> Result<SearchReport> {
    let firsts: Vec<&RunOutcome<P::Genome>> = outcomes.iter().step_by(ctx.runs).collect();
    if let Some(path) = &options.plot {
        let names: Vec<String> = problem
            .objectives()
            .iter()
            .map(|o| o.name.clone())
            .collect();
        let series: Vec<FrontSeries> = firsts
            .iter()
            .map(|o| FrontSeries {
                label: o.algorithm.label().to_string(),
                points: o
                    .front
                    .iter()
                    .map(|i| natural_objectives(problem, i))
                    .collect(),
            })
            .collect();
        // Its folder may be one inside the output folder (`check_plot`).
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| crate::Error::io(dir, e))?;
        }
        plot_fronts(
            path,
            &format!("{}: final fronts", ctx.name),
            &names,
            &series,
        )?;
    }
    let median_hypervolume: BTreeMap<&'static str, f64> = ctx
        .algorithms
        .iter()
        .map(|&a| {
            let hvs = outcomes.iter().filter(|o| o.algorithm == a);
            (
                a.name(),
                median(&hvs.map(|o| o.hypervolume).collect::<Vec<_>>()),
            )
        })
        .collect();
    let first = firsts[0];
    let runs = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| RunReport {
            algorithm: o.algorithm.name(),
            run: i % ctx.runs,
            seed: o.seed,
            hypervolume: o.hypervolume,
            evaluations: o.evaluations,
            generations: o.generations,
            front_size: o.front.len(),
            seconds: o.elapsed.as_secs_f64(),
        })
        .collect();
    let reference_point: Vec<f64> = problem
        .objectives()
        .iter()
        .zip(&ctx.reference_point)
        .map(|(o, &r)| o.natural(r))
        .collect();
    let mut columns: Vec<String> = problem
        .objectives()
        .iter()
        .map(|o| o.name.clone())
        .collect();
    columns.extend(problem.extra_names().iter().cloned());
    let first_fronts = firsts
        .iter()
        .map(|o| FrontTable {
            label: o.algorithm.label(),
            columns: columns.clone(),
            rows: o
                .front
                .iter()
                .map(|ind| {
                    let mut values = natural_objectives(problem, ind);
                    values.extend(&ind.evaluation.extras);
                    (values, problem.describe(&ind.genome))
                })
                .collect(),
        })
        .collect();
    Ok(SearchReport {
        problem: ctx.name.clone(),
        seed: ctx.seed,
        population: ctx.population,
        evaluation_budget: ctx.evaluations,
        reference_point,
        algorithm: first.algorithm.name(),
        hypervolume: first.hypervolume,
        evaluations: first.evaluations,
        generations: first.generations,
        front: front_json(problem, &first.front)?,
        median_hypervolume,
        runs,
        exanest,
        runs_per_algorithm: ctx.runs,
        algorithms: ctx.algorithms.clone(),
        out_dir: ctx.out_dir.clone(),
        first_fronts,
    })
}
