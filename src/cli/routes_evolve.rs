//! `fabricopt routes evolve`: evolve a routing table for a problem's training traffic. The
//! experiment is [`crate::pipeline::evolve`]; this file parses the arguments and prints its
//! report.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::pipeline::evolve::{EvolveOptions, EvolveReport};
use crate::problem_file::LoadedProblem;

#[derive(Args, Debug)]
pub struct EvolveArgs {
    /// Problem file: [topology], [[traffic]] (the training patterns), [simulation], [evolve].
    pub problem: PathBuf,
    /// Override evolve.generations.
    #[arg(long)]
    pub generations: Option<usize>,
    /// Override evolve.population.
    #[arg(long)]
    pub population: Option<usize>,
    /// Override the problem file's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override evolve.hill_climb (probability per child of the hill-climbing step).
    #[arg(long, value_name = "P")]
    pub hill_climb: Option<f64>,
    /// Override evolve.lmc: export for InfiniBand with this LMC (best.lmc.lft, best.lid).
    #[arg(long, value_name = "LMC")]
    pub lmc: Option<u8>,
    /// Output directory (default populations/<name>-evolve): checkpoint and best-table exports.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continue from the checkpoint in the output directory (refused if the configuration
    /// differs).
    #[arg(long, conflicts_with = "no_checkpoint")]
    pub resume: bool,
    /// With --resume: continue even if the problem file or fabricopt version changed since the
    /// checkpoint was written (the population, budget and seed must still match).
    #[arg(long, requires = "resume")]
    pub force: bool,
    /// Do not write a checkpoint after each generation (the best table is still exported).
    #[arg(long)]
    pub no_checkpoint: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

pub(crate) fn run_evolve(args: &EvolveArgs) -> Result<()> {
    let mut loaded = LoadedProblem::read(&args.problem)?;
    if let Some(seed) = args.seed {
        loaded.problem.seed = seed;
    }
    let options = EvolveOptions {
        generations: args.generations,
        population: args.population,
        hill_climb: args.hill_climb,
        lmc: args.lmc,
        out: args.out.clone(),
        resume: args.resume,
        force: args.force,
        no_checkpoint: args.no_checkpoint,
        progress: !args.quiet,
    };
    let report = crate::pipeline::evolve::run_evolve(&loaded, &options)?;
    if args.json {
        return super::print_json_sorted(&report);
    }
    print_text(&report)
}

fn print_text(r: &EvolveReport) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: GA over {} generations ({} evaluations, {:.1} s), {} candidates per pair",
        r.problem, r.generations, r.evaluations, r.seconds, r.candidates_per_pair
    )?;
    writeln!(
        out,
        "max channel load per unit load: evolved {:.4} (throughput bound {:.4}), DOR {:.4} ({:.4})",
        r.max_channel_load,
        1.0 / r.max_channel_load,
        r.baseline_max_channel_load,
        1.0 / r.baseline_max_channel_load
    )?;
    writeln!(
        out,
        "{} of {} router pairs carry training traffic; the others keep their DOR path; {} \
         candidate paths came from the optimal fractional routing",
        r.trained_pairs,
        r.trained_pairs + r.untrained_pairs,
        r.lp_candidates_added
    )?;
    let gap = match r.routing_bound_gap {
        Some(g) => format!(", optimum within {:.2}% above it", 100.0 * g),
        None => String::new(),
    };
    writeln!(
        out,
        "lower bound over all routings: {:.4} ({}, {}{gap}; LP {:.4}); evolved table at {:.1}% of it",
        r.routing_bound,
        r.routing_bound_kind,
        r.routing_bound_method,
        r.routing_bound_lp_relaxation,
        100.0 * r.fraction_of_bound
    )?;
    writeln!(
        out,
        "lower bound over the candidate paths only: {:.4} ({}, {}; LP {:.4}); evolved table at {:.1}% of it",
        r.candidate_bound,
        r.candidate_bound_kind,
        r.candidate_bound_method,
        r.candidate_bound_lp_relaxation,
        100.0 * r.fraction_of_candidate_bound
    )?;
    match &r.dependency_cycle {
        None => writeln!(
            out,
            "the evolved table alone (one VC) has no cyclic channel dependency"
        )?,
        Some(c) => writeln!(
            out,
            "the evolved table alone has a cyclic channel dependency through {} channels ({:?}...); \
             the VC hierarchy keeps it deadlock-free in simulation; {}",
            c.len(),
            c.iter().take(6).collect::<Vec<_>>(),
            match r.vls_needed {
                Some(v) => format!("loaded into a fabric it needs {v} VLs: best.sl assigns them"),
                None => "no assignment to 15 VLs makes it deadlock-free: do not load it into a \
                         fabric as it is"
                    .to_string(),
            }
        )?,
    }
    if let Some(l) = &r.lmc {
        writeln!(
            out,
            "LMC {}: the table fits {} destination tree(s) per destination ({} LIDs per port); \
             {} pair(s) rerouted to fit, max channel load {:.4} (unconstrained {:.4}); \
             best.lmc.lft and best.lid carry it",
            l.lmc,
            l.layers_used,
            1 << l.lmc,
            l.rerouted_pairs,
            r.max_channel_load,
            l.unconstrained_max_channel_load
        )?;
    }
    for (label, sims) in [
        ("evolved (hierarchy)", &r.simulated),
        ("evolved alone (its VLs)", &r.simulated_alone),
        ("baseline", &r.baseline_simulated),
    ] {
        for s in sims.iter() {
            writeln!(
                out,
                "simulated {label} at load {:.3}: latency {:.1}, accepted {:.4}{}",
                s.load,
                s.latency_avg,
                s.accepted,
                if s.saturated { " (saturated)" } else { "" }
            )?;
        }
    }
    writeln!(out, "wrote {}", r.exports.join(", "))?;
    for skipped in &r.exports_skipped {
        writeln!(out, "not written: {skipped}")?;
    }
    Ok(())
}
