//! `fabricopt simulate`: latency and throughput per offered load. The experiment is
//! [`crate::pipeline::simulate`]; this file parses the arguments and prints its report.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::bounds::BoundKind;
pub(crate) use crate::pipeline::simulate::Normalise;
pub use crate::pipeline::simulate::Setup;
use crate::pipeline::simulate::{
    self as pipeline, CompareReport, Scale, SimulateObserver, SimulateOptions, SimulateOutcome,
    SimulateReport,
};
use crate::problem_file::LoadedProblem;
use crate::sim::{self, LoadPoint};

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Problem file with [topology], [routing], [[traffic]] and [simulation] tables.
    #[arg(required_unless_present = "from_json")]
    pub problem: Option<PathBuf>,
    /// Simulate one offered load (flits per terminal per cycle) instead of the file's.
    #[arg(long, conflicts_with = "sweep")]
    pub load: Option<f64>,
    /// Simulate loads FROM:TO:STEP (inclusive), or a list A,B,C, in parallel.
    #[arg(long, value_name = "FROM:TO:STEP|A,B,...")]
    pub sweep: Option<String>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write a latency-vs-offered-load plot (SVG).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Reference points drawn over `--plot` (e.g. a paper's): a CSV file with the header
    /// `label,load,latency`, in the plot's units (load in % when normalised, latency in µs
    /// when the problem sets `ns_per_cycle`).
    #[arg(long, value_name = "FILE.csv", requires = "plot")]
    pub overlay: Option<PathBuf>,
    /// Override the problem file's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Skip the routing throughput bound (an LP up to 64 routers, an approximation above; see
    /// docs/bounds.md) and the `bound` / `fraction_of_bound` outputs.
    #[arg(long)]
    pub no_bound: bool,
    /// Compare routings on the same topology and traffic instead of the file's [routing]:
    /// algorithm names, or `table:FILE.json` for a routes JSON file (relative to the current
    /// directory); one curve each in `--plot`.
    #[arg(long, value_delimiter = ',', value_name = "ALG,...")]
    pub compare: Vec<String>,
    /// Give and report loads and throughputs as fractions of the terminals' injection
    /// bandwidth (`injection`) or of the routing throughput bound of class 0 (`bound`):
    /// `--load`/`--sweep` are then fractions too.
    #[arg(long, value_enum, value_name = "REFERENCE")]
    pub normalise: Option<Normalise>,
    /// Record latency per window of this many cycles over the whole run, warm-up included
    /// (`timeline` in the JSON; how learned routing converges). Overrides
    /// `simulation.timeline_window`.
    #[arg(long, value_name = "CYCLES")]
    pub timeline: Option<u64>,
    /// Plot the timeline (average latency per window against time), one curve per load
    /// point and routing.
    #[arg(long, value_name = "FILE.svg")]
    pub timeline_plot: Option<PathBuf>,
    /// Learned routing: whole unmeasured runs of the same workload first, the learned state
    /// carried over (overrides `simulation.pretrain_runs`).
    #[arg(long, value_name = "RUNS")]
    pub pretrain: Option<u32>,
    /// Override `simulation.warmup_cycles`.
    #[arg(long, value_name = "CYCLES")]
    pub warmup: Option<u64>,
    /// Override `simulation.measure_cycles`.
    #[arg(long, value_name = "CYCLES")]
    pub measure: Option<u64>,
    /// Split each simulation into N partitions, one thread each (the parallel engine: the
    /// same results; docs/simulator.md). Overrides `simulation.partitions`.
    #[arg(long, value_name = "N")]
    pub partitions: Option<usize>,
    /// Do not simulate: draw `--plot` / `--timeline-plot` from the points of earlier
    /// `simulate --json` outputs (with or without `--compare`), one curve per routing.
    #[arg(long, value_delimiter = ',', value_name = "FILE.json,...")]
    pub from_json: Vec<PathBuf>,
    /// With `--from-json`: the plot title (default: the first report's).
    #[arg(long, requires = "from_json")]
    pub title: Option<String>,
    /// With `--from-json`: nanoseconds per cycle, to draw latency in µs (default: the first
    /// report's `simulation.ns_per_cycle`, if any).
    #[arg(long, value_name = "NS", requires = "from_json")]
    pub ns_per_cycle: Option<f64>,
    /// Exit 0 even when a load point deadlocks (the deadlock is still reported).
    #[arg(long)]
    pub allow_deadlock: bool,
}

impl SimulateArgs {
    fn options(&self) -> SimulateOptions {
        SimulateOptions {
            load: self.load,
            sweep: self.sweep.clone(),
            plot: self.plot.clone(),
            overlay: self.overlay.clone(),
            no_bound: self.no_bound,
            compare: self.compare.clone(),
            normalise: self.normalise,
            timeline: self.timeline,
            timeline_plot: self.timeline_plot.clone(),
            pretrain: self.pretrain,
            warmup: self.warmup,
            measure: self.measure,
            partitions: self.partitions,
        }
    }
}

/// Warnings and "wrote" lines on stderr, the progress bar of the sweep.
#[derive(Default)]
struct Terminal {
    bar: std::sync::OnceLock<ProgressBar>,
}

impl SimulateObserver for Terminal {
    fn warning(&self, message: &str) {
        eprintln!("warning: {message}");
    }

    fn sweep_started(&self, points: usize) {
        let bar = ProgressBar::new(points as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "simulating [{bar:30}] {pos}/{len} loads, {elapsed} elapsed",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        let _ = self.bar.set(bar);
    }

    fn point_done(&self) {
        if let Some(bar) = self.bar.get() {
            bar.inc(1);
        }
    }

    fn sweep_finished(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }

    fn wrote(&self, path: &Path) {
        eprintln!("wrote {}", path.display());
    }
}

pub fn run(args: &SimulateArgs) -> Result<()> {
    let observer = Terminal::default();
    if !args.from_json.is_empty() {
        return pipeline::replot(
            &args.from_json,
            &pipeline::ReplotOptions {
                plot: args.plot.clone(),
                timeline_plot: args.timeline_plot.clone(),
                overlay: args.overlay.clone(),
                title: args.title.clone(),
                ns_per_cycle: args.ns_per_cycle,
            },
            &observer,
        );
    }
    let Some(problem) = &args.problem else {
        bail!("simulate: a PROBLEM file is required");
    };
    let options = args.options();
    options.check_outputs()?;
    let mut loaded = LoadedProblem::read(problem)?;
    if let Some(seed) = args.seed {
        loaded.problem.seed = seed;
    }
    match pipeline::run(&loaded, &options, &observer)? {
        SimulateOutcome::Sweep(report) => print_sweep(args, &report),
        SimulateOutcome::Compare(report) => print_compare(args, &report),
    }
}

/// One routing: the report as JSON or a table per load, the saturation summary and the bound.
fn print_sweep(args: &SimulateArgs, report: &SimulateReport) -> Result<()> {
    let scale = report.normalised;
    let factor = scale.map_or(1.0, |s| s.reference);
    let load_factor = scale.map_or(1.0, |s| s.load_reference);
    let summary = &report.saturation;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, report)?;
        writeln!(out)?;
        drop(out);
        return deadlock_exit(
            args,
            summary.deadlocked_loads.len(),
            &deadlocked_loads(summary, load_factor),
        );
    }
    writeln!(
        out,
        "{}: {} routing on {} ({} terminals), seed {}",
        report.problem, report.routing, report.topology, report.terminals, report.seed
    )?;
    if scale.is_some() {
        writeln!(out, "load, offered, accepted: {}", Scale::unit(scale))?;
    }
    writeln!(
        out,
        "{:>7} {:>8} {:>8} {:>16} {:>7} {:>7} {:>7} {:>9} {:>6}  status",
        "load", "offered", "accepted", "latency avg±ci", "p50", "p99", "max", "net avg", "hops"
    )?;
    for p in report.points.iter().map(|p| &p.point) {
        let ci = p.latency_ci95.map_or(String::new(), |c| format!("±{c:.1}"));
        let status = status_text(p);
        writeln!(
            out,
            "{:>7.3} {:>8.4} {:>8.4} {:>16} {:>7.1} {:>7.1} {:>7.1} {:>9.1} {:>6.2}  {status}",
            p.load / load_factor,
            p.offered / factor,
            p.accepted / factor,
            format!("{:.1}{ci}", p.latency_avg),
            p.latency_p50,
            p.latency_p99,
            p.latency_max,
            p.network_latency_avg,
            p.hops_avg,
        )?;
    }
    let unit = Scale::unit(scale);
    match (summary.saturation_throughput, summary.saturation_load) {
        (Some(t), Some(load)) => writeln!(
            out,
            "saturation throughput ≈ {:.4} {unit}: accepted at load {:.3}, the highest stable \
             load; load {:.3} is not stable",
            t / factor,
            load / load_factor,
            summary
                .first_unstable_load
                .map_or(f64::NAN, |l| l / load_factor),
        )?,
        _ if report.points.iter().all(|p| p.point.stable) => writeln!(
            out,
            "saturation not reached: every load point is stable (accepted >= {:.0}% of offered)",
            100.0 * sim::STABLE_ACCEPTED
        )?,
        _ => writeln!(
            out,
            "saturation throughput: unknown (no stable load point below an unstable one)"
        )?,
    }
    if let Some(m) = summary.max_accepted {
        writeln!(
            out,
            "max accepted = {:.4} {unit} (any point that did not deadlock, overload included)",
            m / factor
        )?;
    }
    if let Some(c) = &report.deadlock_caveat {
        writeln!(
            out,
            "warning: routing `{}` is not guaranteed deadlock-free: {c}",
            report.routing
        )?;
    }
    if let Some(b) = &report.bound {
        let kind = match b.kind {
            BoundKind::Exact => "exact".to_string(),
            BoundKind::Approximate { gap } => format!("within {:.1}%", 100.0 * gap),
        };
        match b.throughput {
            Some(t) => {
                let best = summary.max_accepted.unwrap_or(0.0);
                writeln!(
                    out,
                    "throughput bound ≤ {t:.4} flits/terminal/cycle ({}, {kind}, {:.2} s); \
                     max accepted = {:.1}% of it",
                    b.method,
                    b.seconds,
                    100.0 * best / t
                )?
            }
            None => writeln!(out, "throughput bound: no traffic crosses the network")?,
        }
    }
    drop(out);
    deadlock_exit(
        args,
        summary.deadlocked_loads.len(),
        &deadlocked_loads(summary, load_factor),
    )
}

/// "at loads 0.4, 0.5" for the deadlock error.
fn deadlocked_loads(summary: &sim::SweepSummary, factor: f64) -> String {
    let loads: Vec<String> = summary
        .deadlocked_loads
        .iter()
        .map(|l| format!("{:.3}", l / factor))
        .collect();
    format!("at load {}", loads.join(", "))
}

/// `--compare`: the report as JSON, or a table of latencies per load and routing with the
/// saturation summaries.
fn print_compare(args: &SimulateArgs, report: &CompareReport) -> Result<()> {
    let scale = report.normalised;
    let factor = scale.map_or(1.0, |s| s.reference);
    let load_factor = scale.map_or(1.0, |s| s.load_reference);
    let deadlocked: Vec<&str> = report
        .routings
        .iter()
        .filter(|r| !r.saturation.deadlocked_loads.is_empty())
        .map(|r| r.routing.as_str())
        .collect();
    if args.json {
        super::print_json_sorted(report)?;
        return deadlock_exit(args, deadlocked.len(), &deadlocked.join(", "));
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: average latency (cycles) per offered load ({}); * = saturated or unstable, \
         D = deadlock",
        report.problem,
        Scale::unit(scale)
    )?;
    write!(out, "{:>7}", "load")?;
    for r in &report.routings {
        write!(out, " {:>14}", truncate(&r.routing, 14))?;
    }
    writeln!(out)?;
    for (i, load) in report.loads.iter().enumerate() {
        write!(out, "{:>7.3}", load / load_factor)?;
        for r in &report.routings {
            let p = &r.points[i];
            match p.status {
                sim::PointStatus::Deadlock => write!(out, " {:>14}", "D")?,
                _ => {
                    let mark = if p.stable { " " } else { "*" };
                    write!(out, " {:>13.1}{mark}", p.latency_avg)?;
                }
            }
        }
        writeln!(out)?;
    }
    let row = |out: &mut std::io::StdoutLock,
               name: &str,
               pick: &dyn Fn(&sim::SweepSummary) -> Option<f64>|
     -> Result<()> {
        write!(out, "{name:>7}")?;
        for r in &report.routings {
            match pick(&r.saturation) {
                Some(t) => write!(out, " {:>14.4}", t / factor)?,
                None => write!(out, " {:>14}", "-")?,
            }
        }
        writeln!(out)?;
        Ok(())
    };
    row(&mut out, "sat.", &|s| s.saturation_throughput)?;
    row(&mut out, "max acc", &|s| s.max_accepted)?;
    writeln!(
        out,
        "sat. = accepted at the highest stable load below an unstable one ('-': not reached \
         in this sweep); max acc = highest accepted of any point that did not deadlock"
    )?;
    if let Some(b) = &report.bound {
        let kind = match b.kind {
            BoundKind::Exact => "exact".to_string(),
            BoundKind::Approximate { gap } => format!("within {:.1}%", 100.0 * gap),
        };
        match b.throughput {
            Some(t) => writeln!(
                out,
                "throughput bound of any routing ≤ {:.4} {} ({}, {kind}, {:.2} s)",
                t / factor,
                Scale::unit(scale),
                b.method,
                b.seconds
            )?,
            None => writeln!(out, "throughput bound: no traffic crosses the network")?,
        }
    }
    for r in &report.routings {
        for p in r.points.iter().filter(|p| p.deadlock.is_some()) {
            writeln!(
                out,
                "{} @ load {:.3}: {}",
                r.routing,
                p.load / load_factor,
                status_text(p)
            )?;
        }
    }
    drop(out);
    deadlock_exit(args, deadlocked.len(), &deadlocked.join(", "))
}

/// The status column: ok, unstable, saturated (with the reason) or the deadlock.
fn status_text(p: &LoadPoint) -> String {
    match (&p.deadlock, &p.saturation_reason) {
        (Some(d), _) => format!("DEADLOCK: {d}"),
        (None, Some(r)) => format!("saturated: {r}"),
        (None, None) if !p.stable => format!(
            "unstable: accepted {:.1}% of what the sources asked for{} (< {:.0}%)",
            100.0 * p.accepted / (p.offered + p.dropped).max(f64::MIN_POSITIVE),
            if p.dropped > 0.0 {
                " (full source queues refused some)"
            } else {
                ""
            },
            100.0 * sim::STABLE_ACCEPTED
        ),
        (None, None) => "ok".to_string(),
    }
}

/// A deadlock makes `simulate` fail (after its output) unless `--allow-deadlock`.
fn deadlock_exit(args: &SimulateArgs, count: usize, what: &str) -> Result<()> {
    if count > 0 && !args.allow_deadlock {
        bail!(
            "deadlock: {what} (see the status above; --allow-deadlock exits 0 with the same \
             report)"
        );
    }
    Ok(())
}

/// The last `width` characters (file names are most telling at the end).
fn truncate(text: &str, width: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(width)..].iter().collect()
}
