//! `fabricopt search`: multi-objective search runs (NSGA-II, SMS-EMOA) on a problem file's
//! `[search]` table, with checkpoints, resume, front files and plots. See docs/search.md.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::problem_file::LoadedProblem;
use crate::search::config::{AlgorithmChoice, ProblemKind};
use crate::search::front::{
    FrontSeries, front_json, natural_objectives, plot_fronts, write_front_files,
};
use crate::search::problems::benchmarks::RealProblem;
use crate::search::stats::median;
use crate::search::{
    AlgorithmName, RunOutcome, RunSettings, SearchConfig, SearchProblem, Termination, run_seed,
};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum AlgorithmArg {
    Nsga2,
    SmsEmoa,
    Both,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Problem file with a [search] table.
    pub problem: PathBuf,
    /// Override the problem file's seed (run k uses a seed derived from it and k).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Independent runs per algorithm (overrides search.runs).
    #[arg(long)]
    pub runs: Option<usize>,
    /// Which algorithm(s) to run (overrides search.algorithm).
    #[arg(long, value_enum)]
    pub algorithm: Option<AlgorithmArg>,
    /// Stop after N generations (budget = population × (N + 1) evaluations; overrides
    /// search.generations and search.evaluations).
    #[arg(long, value_name = "N")]
    pub generations: Option<usize>,
    /// Continue each run from its checkpoint.json (refused if the configuration differs).
    #[arg(long, conflicts_with = "no_checkpoint")]
    pub resume: bool,
    /// With --resume: continue even if the problem file or fabricopt version changed since the
    /// checkpoint was written (the population, budget, seed and algorithm must still match).
    #[arg(long, requires = "resume")]
    pub force: bool,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Write a scatter plot of the first run's front of each algorithm (SVG).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Output directory (default populations/<name>); runs go to <algorithm>-run<k>/.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not write checkpoints (front files are still written).
    #[arg(long)]
    pub no_checkpoint: bool,
    /// No progress bar and no "wrote" messages.
    #[arg(long)]
    pub quiet: bool,
    /// ExaNeSt only: Jellyfish graphs generated per compared front member (0 = no comparison).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub jellyfish: usize,
}

/// Problem-specific additions to the report: text after the run tables, and a JSON value
/// stored under `key` in the `--json` object.
pub struct ReportExtra {
    pub key: &'static str,
    pub text: String,
    pub json: Value,
}

/// What the runs of one `search` command share.
#[derive(Clone, Debug)]
pub struct Context {
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
    pub fn run_dir(&self, algorithm: AlgorithmName, k: usize) -> PathBuf {
        self.out_dir.join(format!("{}-run{k}", algorithm.name()))
    }
}

/// Loads the file, applies the command-line overrides and validates the `[search]` table.
pub fn load(args: &SearchArgs) -> Result<(LoadedProblem, SearchConfig)> {
    let mut loaded = LoadedProblem::read(&args.problem)?;
    let path = loaded.path.clone();
    if let Some(seed) = args.seed {
        loaded.problem.seed = seed;
    }
    let Some(mut config) = loaded.problem.search.clone() else {
        bail!(
            "{}: search: a [search] table is required to search",
            path.display()
        );
    };
    if let Some(runs) = args.runs {
        if runs == 0 {
            bail!("--runs: must be at least 1");
        }
        config.runs = runs;
    }
    if let Some(a) = args.algorithm {
        config.algorithm = match a {
            AlgorithmArg::Nsga2 => AlgorithmChoice::Nsga2,
            AlgorithmArg::SmsEmoa => AlgorithmChoice::SmsEmoa,
            AlgorithmArg::Both => AlgorithmChoice::Both,
        };
    }
    if let Some(g) = args.generations {
        crate::search::config::generations_budget("--generations", config.population, g)?;
        config.generations = Some(g);
        config.evaluations = None;
    }
    config.validate().map_err(|e| e.in_file(&path))?;
    Ok((loaded, config))
}

/// The run context for `problem`; the reference point comes from the file (natural sign) or
/// the problem's default.
pub fn context<P: SearchProblem>(
    problem: &P,
    loaded: &LoadedProblem,
    config: &SearchConfig,
    args: &SearchArgs,
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
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("populations").join(&name));
    super::check_output_dir("--out", &out_dir)?;
    if let Some(plot) = &args.plot {
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
        checkpoint: config.checkpoint && !args.no_checkpoint,
        resume: args.resume,
        force: args.force,
        config: fingerprint(loaded, config)?,
        progress: !args.quiet,
        archive_limit,
    })
}

/// The configuration one search run depends on, as stored in its checkpoint: the problem file
/// after defaults and command-line overrides, without the settings that only say how many runs
/// of which algorithms to make or whether to checkpoint them (a run's own algorithm and seed
/// are checked separately).
pub fn fingerprint(loaded: &LoadedProblem, config: &SearchConfig) -> Result<Value> {
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

/// Runs `runs` runs of every algorithm (run k uses `run_seed(seed, k)`), one after another,
/// and writes each run's front files. Outcomes are in algorithm-major, run order.
pub fn execute<P: SearchProblem>(problem: &P, ctx: &Context) -> Result<Vec<RunOutcome<P::Genome>>> {
    let mut outcomes = Vec::new();
    for &algorithm in &ctx.algorithms {
        for k in 0..ctx.runs {
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
            outcomes.push(outcome);
        }
    }
    Ok(outcomes)
}

/// Prints the runs (table or one JSON object) and writes the plot.
pub fn report<P: SearchProblem>(
    problem: &P,
    ctx: &Context,
    outcomes: &[RunOutcome<P::Genome>],
    args: &SearchArgs,
    extra: Option<ReportExtra>,
) -> Result<()> {
    let run_index = |i: usize| i % ctx.runs;
    let firsts: Vec<&RunOutcome<P::Genome>> = outcomes.iter().step_by(ctx.runs).collect();
    if let Some(path) = &args.plot {
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
        if !args.quiet {
            eprintln!("wrote {}", path.display());
        }
    }
    let medians: Vec<(AlgorithmName, f64)> = ctx
        .algorithms
        .iter()
        .map(|&a| {
            let hvs = outcomes.iter().filter(|o| o.algorithm == a);
            (a, median(&hvs.map(|o| o.hypervolume).collect::<Vec<_>>()))
        })
        .collect();
    let mut out = std::io::stdout().lock();
    if args.json {
        let first = firsts[0];
        let runs: Vec<Value> = outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| {
                json!({
                    "algorithm": o.algorithm.name(),
                    "run": run_index(i),
                    "seed": o.seed,
                    "hypervolume": o.hypervolume,
                    "evaluations": o.evaluations,
                    "generations": o.generations,
                    "front_size": o.front.len(),
                    "seconds": o.elapsed.as_secs_f64(),
                })
            })
            .collect();
        let mut median_map = serde_json::Map::new();
        for (a, m) in &medians {
            median_map.insert(a.name().into(), json!(m));
        }
        let reference: Vec<f64> = problem
            .objectives()
            .iter()
            .zip(&ctx.reference_point)
            .map(|(o, &r)| o.natural(r))
            .collect();
        let mut report = json!({
            "problem": ctx.name,
            "seed": ctx.seed,
            "population": ctx.population,
            "evaluation_budget": ctx.evaluations,
            "reference_point": reference,
            "algorithm": first.algorithm.name(),
            "hypervolume": first.hypervolume,
            "evaluations": first.evaluations,
            "generations": first.generations,
            "front": front_json(problem, &first.front)?,
            "median_hypervolume": median_map,
            "runs": runs,
        });
        if let Some(extra) = extra {
            report[extra.key] = extra.json;
        }
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}: {} run(s) per algorithm, population {}, {} evaluations, seed {}, output {}",
        ctx.name,
        ctx.runs,
        ctx.population,
        ctx.evaluations,
        ctx.seed,
        ctx.out_dir.display()
    )?;
    writeln!(
        out,
        "{:<9} {:>4} {:>20} {:>12} {:>11} {:>11} {:>6} {:>8}",
        "algorithm", "run", "seed", "hypervolume", "evaluations", "generations", "front", "seconds"
    )?;
    for (i, o) in outcomes.iter().enumerate() {
        writeln!(
            out,
            "{:<9} {:>4} {:>20} {:>12.6} {:>11} {:>11} {:>6} {:>8.2}",
            o.algorithm.name(),
            run_index(i),
            o.seed,
            o.hypervolume,
            o.evaluations,
            o.generations,
            o.front.len(),
            o.elapsed.as_secs_f64()
        )?;
    }
    for (a, m) in &medians {
        writeln!(out, "median hypervolume {}: {m:.6}", a.label())?;
    }
    for first in &firsts {
        writeln!(
            out,
            "\nfront of {} run 0 ({} members):",
            first.algorithm.label(),
            first.front.len()
        )?;
        let mut header: Vec<String> = problem
            .objectives()
            .iter()
            .map(|o| format!("{:>12}", o.name))
            .collect();
        header.extend(problem.extra_names().iter().map(|n| format!("{n:>12}")));
        writeln!(out, "{}  genome", header.join(" "))?;
        for ind in &first.front {
            let cells: Vec<String> = natural_objectives(problem, ind)
                .iter()
                .chain(&ind.evaluation.extras)
                .map(|v| format!("{v:>12.6}"))
                .collect();
            let mut genome = problem.describe(&ind.genome);
            if genome.chars().count() > 60 {
                genome = genome.chars().take(57).collect::<String>() + "...";
            }
            writeln!(out, "{}  {genome}", cells.join(" "))?;
        }
    }
    if let Some(extra) = extra {
        writeln!(out, "\n{}", extra.text.trim_end())?;
    }
    Ok(())
}

/// `--plot` may name a file in the run's output folder, which the run creates (as the
/// README's command does); anywhere else the file's folder must exist.
fn check_plot(plot: &Path, out_dir: &Path) -> Result<()> {
    match plot.parent() {
        Some(dir) if !dir.exists() && dir.starts_with(out_dir) => {
            super::check_output_dir("--plot", dir)
        }
        _ => super::check_output_file("--plot", plot),
    }
}

pub fn run(args: &SearchArgs) -> Result<()> {
    let (loaded, config) = load(args)?;
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
            let ctx = context(&problem, &loaded, &config, args, archive)?;
            let outcomes = execute(&problem, &ctx)?;
            report(&problem, &ctx, &outcomes, args, None)
        }
        ProblemKind::Exanest => super::search_exanest::run(args, &loaded, &config),
    }
}
