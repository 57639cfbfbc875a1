//! `fabricopt search`: multi-objective search runs (NSGA-II, SMS-EMOA) on a problem file's
//! `[search]` table, with checkpoints, resume, front files and plots. See docs/search.md. The
//! experiment is [`crate::pipeline::search`]; this file parses the arguments and prints its
//! report (the ExaNeSt part in `search_exanest.rs`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::pipeline::search::{SearchOptions, SearchReport};
use crate::problem_file::LoadedProblem;
use crate::search::config::AlgorithmChoice;

/// `--algorithm`: the choices of [`AlgorithmChoice`], from the algorithm registry (each
/// multi-objective algorithm, its aliases and description) plus `both`.
fn algorithm_parser() -> impl TypedValueParser<Value = AlgorithmChoice> {
    let mut values: Vec<PossibleValue> = AlgorithmChoice::offered()
        .map(|a| {
            PossibleValue::new(a.name())
                .aliases(a.aliases().iter().copied())
                .help(a.description())
        })
        .collect();
    values.push(PossibleValue::new(AlgorithmChoice::BOTH).help(AlgorithmChoice::BOTH_DESCRIPTION));
    PossibleValuesParser::new(values)
        .map(|name| AlgorithmChoice::from_name(&name).expect("one of the listed names"))
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
    #[arg(long, value_parser = algorithm_parser())]
    pub algorithm: Option<AlgorithmChoice>,
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

impl SearchArgs {
    fn options(&self) -> SearchOptions {
        SearchOptions {
            runs: self.runs,
            algorithm: self.algorithm,
            generations: self.generations,
            resume: self.resume,
            force: self.force,
            plot: self.plot.clone(),
            out: self.out.clone(),
            no_checkpoint: self.no_checkpoint,
            progress: !self.quiet,
            jellyfish: self.jellyfish,
        }
    }
}

pub fn run(args: &SearchArgs) -> Result<()> {
    let mut loaded = LoadedProblem::read(&args.problem)?;
    if let Some(seed) = args.seed {
        loaded.problem.seed = seed;
    }
    let report = crate::pipeline::search::run(&loaded, &args.options())?;
    if let Some(path) = &args.plot {
        if !args.quiet {
            eprintln!("wrote {}", path.display());
        }
    }
    if args.json {
        return super::print_json_sorted(&report);
    }
    print_text(&report)
}

/// The runs as a table, the medians, the first run's front of each algorithm and the
/// problem's additions.
fn print_text(report: &SearchReport) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: {} run(s) per algorithm, population {}, {} evaluations, seed {}, output {}",
        report.problem,
        report.runs_per_algorithm,
        report.population,
        report.evaluation_budget,
        report.seed,
        report.out_dir.display()
    )?;
    writeln!(
        out,
        "{:<9} {:>4} {:>20} {:>12} {:>11} {:>11} {:>6} {:>8}",
        "algorithm", "run", "seed", "hypervolume", "evaluations", "generations", "front", "seconds"
    )?;
    for r in &report.runs {
        writeln!(
            out,
            "{:<9} {:>4} {:>20} {:>12.6} {:>11} {:>11} {:>6} {:>8.2}",
            r.algorithm,
            r.run,
            r.seed,
            r.hypervolume,
            r.evaluations,
            r.generations,
            r.front_size,
            r.seconds
        )?;
    }
    for a in &report.algorithms {
        let m = report.median_hypervolume[a.name()];
        writeln!(out, "median hypervolume {}: {m:.6}", a.label())?;
    }
    for front in &report.first_fronts {
        writeln!(
            out,
            "\nfront of {} run 0 ({} members):",
            front.label,
            front.rows.len()
        )?;
        let header: Vec<String> = front.columns.iter().map(|n| format!("{n:>12}")).collect();
        writeln!(out, "{}  genome", header.join(" "))?;
        for (values, genome) in &front.rows {
            let cells: Vec<String> = values.iter().map(|v| format!("{v:>12.6}")).collect();
            let mut genome = genome.clone();
            if genome.chars().count() > 60 {
                genome = genome.chars().take(57).collect::<String>() + "...";
            }
            writeln!(out, "{}  {genome}", cells.join(" "))?;
        }
    }
    if let Some(exanest) = &report.exanest {
        let text = super::search_exanest::text(exanest);
        writeln!(out, "\n{}", text.trim_end())?;
    }
    Ok(())
}
