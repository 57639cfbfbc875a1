//! `fabricopt simulate`: latency and throughput per offered load.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::bounds::{BoundKind, routing_bound, terminal_load};
use crate::export::plot::{Series, line_plot};
use crate::problem_file::LoadedProblem;
use crate::registry::routing::build_routing;
use crate::routing::table::load::RouterDemand;
use crate::sim::{self, LoadPoint, SimParams};
use crate::topology::Topology;
use crate::traffic::Traffic;

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
    /// Do not simulate: draw `--plot` / `--timeline-plot` from the points of earlier
    /// `simulate --json` outputs (with or without `--compare`), one curve per routing.
    #[arg(long, value_delimiter = ',', value_name = "FILE.json,...")]
    pub from_json: Vec<PathBuf>,
    /// Exit 0 even when a load point deadlocks (the deadlock is still reported).
    #[arg(long)]
    pub allow_deadlock: bool,
}

/// The curves of an earlier `simulate --json` output: (routing, points).
fn curves_from_json(path: &Path) -> Result<Vec<(String, Vec<LoadPoint>)>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--from-json: cannot read {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--from-json: {} is not JSON", path.display()))?;
    let parse = |routing: &serde_json::Value, points: &serde_json::Value| -> Result<_> {
        let name = routing.as_str().unwrap_or("routing").to_string();
        let points: Vec<LoadPoint> = serde_json::from_value(points.clone()).with_context(|| {
            format!(
                "--from-json: {}: `points` are not simulate points",
                path.display()
            )
        })?;
        Ok((name, points))
    };
    match v.get("routings").and_then(|r| r.as_array()) {
        Some(list) => list
            .iter()
            .map(|r| parse(&r["routing"], &r["points"]))
            .collect(),
        None if v.get("points").is_some() => Ok(vec![parse(&v["routing"], &v["points"])?]),
        None => bail!(
            "--from-json: {}: neither `points` nor `routings` (not a simulate --json output)",
            path.display()
        ),
    }
}

/// `--from-json`: the plots of earlier runs.
fn replot(args: &SimulateArgs, paths: &[PathBuf]) -> Result<()> {
    let mut results = Vec::new();
    for path in paths {
        results.extend(curves_from_json(path)?);
    }
    let curves: Vec<(&str, &[LoadPoint])> = results
        .iter()
        .map(|(label, points)| (label.as_str(), points.as_slice()))
        .collect();
    let title = paths[0]
        .file_stem()
        .map_or(String::new(), |s| s.to_string_lossy().to_string());
    if args.plot.is_none() && args.timeline_plot.is_none() {
        bail!("--from-json: give --plot and/or --timeline-plot");
    }
    check_outputs(args)?;
    if let Some(p) = &args.plot {
        latency_plot(p, &title, &curves, None)?;
    }
    if let Some(p) = &args.timeline_plot {
        timeline_plot(p, &title, &curves)?;
    }
    Ok(())
}

/// What `--normalise` divides loads and throughputs by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalise {
    Injection,
    Bound,
}

/// Everything a simulation needs, built from a problem file.
pub struct Setup {
    pub name: String,
    pub seed: u64,
    pub topo: Topology,
    pub routing: Box<dyn crate::routing::RoutingFunction>,
    /// The `[routing]` table the routing was built from.
    pub routing_config: crate::routing::RoutingConfig,
    pub traffic: Traffic,
    pub params: SimParams,
}

impl Setup {
    pub fn load(path: &Path, seed: Option<u64>) -> Result<Setup> {
        let mut loaded = LoadedProblem::read(path)?;
        if let Some(seed) = seed {
            loaded.problem.seed = seed;
        }
        Self::from_loaded(&loaded)
    }

    pub fn from_loaded(loaded: &LoadedProblem) -> Result<Setup> {
        let path = loaded.path.as_path();
        let p = &loaded.problem;
        let topo = loaded.build_topology()?;
        let in_file = |e: crate::Error| e.in_file(path);
        let params = p.simulation.resolve().map_err(in_file)?;
        let Some(routing_cfg) = &p.routing else {
            bail!(
                "{}: routing: a [routing] table is required to simulate",
                path.display()
            );
        };
        if p.traffic.is_empty() {
            bail!(
                "{}: traffic: at least one [[traffic]] table is required to simulate",
                path.display()
            );
        }
        // Table files named in [routing] are relative to the problem file, like traffic files.
        let mut routing_cfg = routing_cfg.clone();
        routing_cfg
            .base_dir
            .get_or_insert_with(|| loaded.base_dir().to_path_buf());
        routing_cfg.apply_preset(&params.preset, &topo);
        let routing = build_routing(&routing_cfg, &topo, params.num_vcs).map_err(in_file)?;
        let traffic = loaded.build_traffic(&topo, &params)?;
        params.check_traffic(&traffic).map_err(in_file)?;
        Ok(Setup {
            name: p.name.clone().unwrap_or_else(|| topo.name.clone()),
            seed: p.seed,
            topo,
            routing,
            routing_config: routing_cfg,
            traffic,
            params,
        })
    }
}

#[derive(Serialize)]
struct Report<'a> {
    problem: &'a str,
    topology: &'a str,
    routing: String,
    seed: u64,
    simulation: &'a SimParams,
    #[serde(skip_serializing_if = "Option::is_none")]
    normalised: Option<Scale>,
    points: Vec<PointReport<'a>>,
    /// See [`sim::SweepSummary`]; repeated at the top level for scripts.
    saturation_throughput: Option<f64>,
    max_accepted: Option<f64>,
    saturation: sim::SweepSummary,
    /// Why the routing is not guaranteed deadlock-free, if it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    deadlock_caveat: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bound: Option<BoundReport>,
}

/// A load point with its share of the throughput bound (fields absent with `--no-bound`).
#[derive(Serialize)]
struct PointReport<'a> {
    #[serde(flatten)]
    point: &'a LoadPoint,
    #[serde(skip_serializing_if = "Option::is_none")]
    bound_throughput: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fraction_of_bound: Option<f64>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    normalised: Option<NormalisedPoint>,
}

/// `--normalise`: the reference loads and throughputs are divided by.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Scale {
    pub by: Normalise,
    /// Offered and accepted throughputs are divided by this (flits per terminal per cycle,
    /// averaged over all terminals).
    pub reference: f64,
    /// Loads (class 0's `load`, per sending terminal) are divided by this: the same as
    /// `reference` unless some terminals send nothing (transpose's diagonal).
    pub load_reference: f64,
}

/// A point's load, offered and accepted throughput as fractions of the [`Scale`].
#[derive(Clone, Copy, Debug, Serialize)]
struct NormalisedPoint {
    load_normalised: f64,
    offered_normalised: f64,
    accepted_normalised: f64,
}

impl Scale {
    fn point(self, p: &LoadPoint) -> NormalisedPoint {
        NormalisedPoint {
            load_normalised: p.load / self.load_reference,
            offered_normalised: p.offered / self.reference,
            accepted_normalised: p.accepted / self.reference,
        }
    }

    fn unit(scale: Option<Scale>) -> String {
        match scale {
            None => "flits/terminal/cycle".to_string(),
            Some(s) => format!(
                "fraction of {} ({:.5} flits/terminal/cycle)",
                match s.by {
                    Normalise::Injection => "the injection bandwidth",
                    Normalise::Bound => "the throughput bound",
                },
                s.reference
            ),
        }
    }
}

/// The injection bandwidth of the terminals (flits per cycle); an error when it differs
/// between terminals, as one reference would then misrepresent some of them.
fn injection_bandwidth(topo: &Topology) -> Result<f64> {
    let bw = |t: &crate::topology::Terminal| topo.links[t.link].params.bandwidth;
    let Some(first) = topo.terminals.first() else {
        bail!("--normalise injection: the topology has no terminals");
    };
    if topo.terminals.iter().any(|t| bw(t) != bw(first)) {
        bail!("--normalise injection: terminal links differ in bandwidth; use --normalise bound");
    }
    Ok(bw(first))
}

/// The routing bound for class 0 (see docs/bounds.md).
#[derive(Serialize)]
struct BoundReport {
    /// Lower bound on the max channel utilisation (network or terminal) at the class's nominal
    /// load.
    max_load: f64,
    /// Upper bound on the accepted throughput, flits per terminal per cycle averaged over all
    /// terminals like `accepted` (class 0's flits per cycle at its nominal load / terminals /
    /// `max_load`); null when class 0 sends nothing across the network.
    throughput: Option<f64>,
    /// Class 0's `load` at which some channel is fully used (`nominal_load / max_load`): the
    /// same as `throughput` unless some terminals send nothing.
    load: Option<f64>,
    kind: BoundKind,
    method: String,
    /// Seconds the bound took.
    seconds: f64,
}

/// Routing bound of traffic class 0 in the units of `accepted`. The traffic matrix is at the
/// class's nominal load, so the bound's `max_load` is the utilisation at that load and the
/// load where saturation becomes unavoidable is `nominal_load / max_load`.
fn throughput_bound(setup: &Setup) -> Result<BoundReport> {
    let start = std::time::Instant::now();
    setup.traffic.check_matrix_memory(sim::machine_memory())?;
    let matrix = setup.traffic.traffic_matrix(0);
    let demand = RouterDemand::from_terminal_matrix(&setup.topo, &matrix);
    let b = routing_bound(&setup.topo, &demand)?;
    // Injection and ejection links are channels too; they bind when terminals are slower
    // than the network (as on problems/dragonfly-1056-ur.toml).
    let terminal = terminal_load(&setup.topo, &matrix);
    let (max_load, kind, method) = if terminal > b.max_load {
        (terminal, BoundKind::Exact, "terminal channels".to_string())
    } else {
        (b.max_load, b.kind, b.method)
    };
    // Accepted throughput is averaged over all terminals, senders or not: so is the bound.
    let total: f64 = matrix.iter().flatten().sum();
    let throughput = total / (setup.topo.num_terminals() as f64 * max_load);
    let load = setup.traffic.nominal_load(0) / max_load;
    Ok(BoundReport {
        max_load,
        throughput: throughput.is_finite().then_some(throughput),
        load: load.is_finite().then_some(load),
        kind,
        method,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// `FROM:TO:STEP`, inclusive of TO (within rounding), or a comma-separated list of loads.
pub fn parse_sweep(text: &str) -> Result<Vec<f64>> {
    if text.contains(',') {
        return text
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| *v > 0.0 && v.is_finite())
                    .with_context(|| format!("--sweep: `{s}` is not a positive number"))
            })
            .collect();
    }
    let parts: Vec<&str> = text.split(':').collect();
    let [from, to, step] = parts.as_slice() else {
        bail!("--sweep: expected FROM:TO:STEP, e.g. 0.05:0.5:0.05 (got `{text}`)");
    };
    let num = |s: &str, what: &str| -> Result<f64> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .with_context(|| format!("--sweep: {what} `{s}` is not a number"))
    };
    let (from, to, step) = (num(from, "FROM")?, num(to, "TO")?, num(step, "STEP")?);
    if !(from > 0.0 && to >= from && step > 0.0) {
        bail!("--sweep: need 0 < FROM <= TO and STEP > 0 (got {from}:{to}:{step})");
    }
    let count = ((to - from) / step + 1e-9).floor() as usize + 1;
    if count > 1000 {
        bail!("--sweep: {count} points is too many (at most 1000)");
    }
    Ok((0..count).map(|i| from + i as f64 * step).collect())
}

/// `--compare`: one sweep per routing, a summary table (or JSON) and one plot.
fn run_compare(
    args: &SimulateArgs,
    setup: &Setup,
    loads: &[f64],
    scale: Option<Scale>,
) -> Result<()> {
    let factor = scale.map_or(1.0, |s| s.reference);
    let load_factor = scale.map_or(1.0, |s| s.load_reference);
    let mut routings = Vec::new();
    for entry in &args.compare {
        let mut cfg = match entry.strip_prefix("table:") {
            Some(file) => {
                crate::routing::RoutingConfig::new("table").with("table", PathBuf::from(file))
            }
            // The problem file's own algorithm keeps its [routing] settings (e.g. the
            // learning parameters); the others run with their defaults.
            None if *entry == setup.routing_config.algorithm => setup.routing_config.clone(),
            None => crate::routing::RoutingConfig::new(entry.clone()),
        };
        cfg.apply_preset(&setup.params.preset, &setup.topo);
        let routing = build_routing(&cfg, &setup.topo, setup.params.num_vcs)
            .with_context(|| format!("--compare {entry}"))?;
        routings.push((entry, routing));
    }
    let all: Vec<&dyn crate::routing::RoutingFunction> =
        routings.iter().map(|(_, r)| r.as_ref()).collect();
    check_pretrain(args, setup, &all)?;
    let mut results = Vec::new();
    for (entry, routing) in &routings {
        let points = sim::sweep(
            &setup.topo,
            routing.as_ref(),
            &setup.traffic,
            &setup.params,
            setup.seed,
            loads,
            &|| {},
        )?;
        results.push(((*entry).clone(), points));
    }
    if let Some(path) = &args.plot {
        let curves: Vec<(&str, &[LoadPoint])> = results
            .iter()
            .map(|(label, points)| (label.as_str(), points.as_slice()))
            .collect();
        latency_plot(path, &setup.name, &curves, scale)?;
    }
    if let Some(path) = &args.timeline_plot {
        let curves: Vec<(&str, &[LoadPoint])> = results
            .iter()
            .map(|(label, points)| (label.as_str(), points.as_slice()))
            .collect();
        timeline_plot(path, &setup.name, &curves)?;
    }
    let mut out = std::io::stdout().lock();
    let summaries: Vec<sim::SweepSummary> = results
        .iter()
        .map(|(_, points)| sim::SweepSummary::of(points))
        .collect();
    let deadlocked: Vec<&str> = results
        .iter()
        .zip(&summaries)
        .filter(|(_, s)| !s.deadlocked_loads.is_empty())
        .map(|((label, _), _)| label.as_str())
        .collect();
    if args.json {
        let v: Vec<serde_json::Value> = results
            .iter()
            .zip(&summaries)
            .map(|((label, points), summary)| {
                let normalised: Vec<_> = points.iter().map(|p| scale.map(|s| s.point(p))).collect();
                serde_json::json!({
                    "routing": label,
                    "saturation_throughput": summary.saturation_throughput,
                    "max_accepted": summary.max_accepted,
                    "saturation": summary,
                    "points": points,
                    "normalised_points": scale.map(|_| normalised),
                })
            })
            .collect();
        serde_json::to_writer_pretty(
            &mut out,
            &serde_json::json!({"problem": setup.name, "normalised": scale, "routings": v}),
        )?;
        writeln!(out)?;
        return deadlock_exit(args, deadlocked.len(), &deadlocked.join(", "));
    }
    writeln!(
        out,
        "{}: average latency (cycles) per offered load ({}); * = saturated or unstable, \
         D = deadlock",
        setup.name,
        Scale::unit(scale)
    )?;
    write!(out, "{:>7}", "load")?;
    for (label, _) in &results {
        write!(out, " {:>14}", truncate(label, 14))?;
    }
    writeln!(out)?;
    for (i, load) in loads.iter().enumerate() {
        write!(out, "{:>7.3}", load / load_factor)?;
        for (_, points) in &results {
            let p = &points[i];
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
        for s in &summaries {
            match pick(s) {
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
    for (label, points) in &results {
        for p in points.iter().filter(|p| p.deadlock.is_some()) {
            writeln!(
                out,
                "{label} @ load {:.3}: {}",
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

/// Every output file option, checked before the work that produces it.
fn check_outputs(args: &SimulateArgs) -> Result<()> {
    if let Some(p) = &args.plot {
        super::check_output_file("--plot", p)?;
    }
    if let Some(p) = &args.timeline_plot {
        super::check_output_file("--timeline-plot", p)?;
    }
    Ok(())
}

/// Pre-training repeats the whole run so that a learned routing can go on from what it
/// learned; for routings that do not learn it only repeats the same simulation, so asking
/// for it is a mistake (at least one of the simulated routings must learn).
fn check_pretrain(
    args: &SimulateArgs,
    setup: &Setup,
    routings: &[&dyn crate::routing::RoutingFunction],
) -> Result<()> {
    if setup.params.pretrain_runs == 0
        || routings
            .iter()
            .any(|r| r.learning_session(setup.seed).is_some())
    {
        return Ok(());
    }
    let names: Vec<String> = routings.iter().map(|r| r.name()).collect();
    let option = if args.pretrain.is_some() {
        "--pretrain".to_string()
    } else {
        format!(
            "{}: simulation.pretrain_runs",
            args.problem.as_deref().unwrap_or(Path::new("")).display()
        )
    };
    bail!(
        "{option}: routing {} does not learn, so pre-training runs would only repeat the same \
         simulation; use a learned routing (q_routing, q_adaptive, dqn) or drop it",
        names.join(", ")
    )
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

/// Latency against offered load, one curve per routing (saturated and deadlocked points left
/// out).
fn latency_plot(
    path: &Path,
    title: &str,
    curves: &[(&str, &[LoadPoint])],
    scale: Option<Scale>,
) -> Result<()> {
    let factor = scale.map_or(1.0, |s| s.reference);
    let series: Vec<Series> = curves
        .iter()
        .map(|(label, points)| Series {
            label,
            points: points
                .iter()
                .filter(|p| p.status == sim::PointStatus::Ok)
                .map(|p| (p.offered / factor, p.latency_avg))
                .collect(),
        })
        .collect();
    line_plot(
        path,
        title,
        &format!("offered load ({})", Scale::unit(scale)),
        "average packet latency (cycles)",
        &series,
    )?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Average latency per timeline window against time, one curve per routing and load point.
fn timeline_plot(path: &Path, title: &str, curves: &[(&str, &[LoadPoint])]) -> Result<()> {
    let labels: Vec<String> = curves
        .iter()
        .flat_map(|(label, points)| {
            points.iter().map(move |p| match points.len() {
                1 => label.to_string(),
                _ => format!("{label} @ {:.4}", p.load),
            })
        })
        .collect();
    let series: Vec<Series> = curves
        .iter()
        .flat_map(|(_, points)| points.iter())
        .zip(&labels)
        .map(|(p, label)| Series {
            label,
            points: p
                .timeline
                .iter()
                .map(|w| (w.start as f64, w.latency_avg))
                .collect(),
        })
        .collect();
    line_plot(
        path,
        title,
        "time (cycles; window start)",
        "average latency of the packets delivered in the window (cycles)",
        &series,
    )?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The last `width` characters (file names are most telling at the end).
fn truncate(text: &str, width: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(width)..].iter().collect()
}

pub fn run(args: &SimulateArgs) -> Result<()> {
    if !args.from_json.is_empty() {
        return replot(args, &args.from_json);
    }
    let Some(problem) = &args.problem else {
        bail!("simulate: a PROBLEM file is required");
    };
    check_outputs(args)?;
    let mut setup = Setup::load(problem, args.seed)?;
    if let Some(w) = args.timeline {
        if w == 0 {
            bail!("--timeline: must be at least 1 cycle");
        }
        setup.params.timeline_window = w;
    }
    if let Some(runs) = args.pretrain {
        setup.params.pretrain_runs = runs;
    }
    if let Some(w) = args.warmup {
        setup.params.warmup_cycles = w;
    }
    if let Some(m) = args.measure {
        if m < setup.params.batches as u64 {
            bail!(
                "--measure: at least simulation.batches = {} cycles",
                setup.params.batches
            );
        }
        setup.params.measure_cycles = m;
    }
    // The overrides are held to the file's limits (they feed the same cycle arithmetic).
    setup
        .params
        .validate()
        .map_err(|e| anyhow::anyhow!("{} (as set on the command line)", e.in_file(problem)))?;
    if args.timeline_plot.is_some() && setup.params.timeline_window == 0 {
        bail!("--timeline-plot: needs --timeline CYCLES (or simulation.timeline_window)");
    }
    // Before the bound (an LP that can take a while on a large topology) and the sweep.
    if let Some(memory) = sim::machine_memory() {
        let points = match &args.sweep {
            Some(s) => parse_sweep(s)?.len(),
            None => 1,
        };
        let at_once = points.min(rayon::current_num_threads());
        sim::check_memory(&setup.topo, &setup.params, at_once, memory)
            .map_err(|e| e.in_file(problem))?;
    }
    if args.no_bound && args.normalise == Some(Normalise::Bound) {
        bail!("--normalise bound: needs the bound, which --no-bound turns off");
    }
    // Once per command, before the sweep: it does not depend on the offered load.
    let wants_bound = !args.no_bound && (args.compare.is_empty() || args.normalise.is_some());
    let bound = if wants_bound {
        match throughput_bound(&setup) {
            Ok(b) => Some(b),
            Err(e) if args.normalise == Some(Normalise::Bound) => {
                return Err(e.context("--normalise bound"));
            }
            Err(e) => {
                // The bound is extra information: say why it is missing, keep simulating.
                eprintln!("warning: no throughput bound: {e}");
                None
            }
        }
    } else {
        None
    };
    let scale = match args.normalise {
        None => None,
        Some(Normalise::Injection) => {
            let bw = injection_bandwidth(&setup.topo)?;
            Some(Scale {
                by: Normalise::Injection,
                reference: bw,
                load_reference: bw,
            })
        }
        Some(Normalise::Bound) => match bound.as_ref().and_then(|b| b.throughput.zip(b.load)) {
            Some((t, load)) => Some(Scale {
                by: Normalise::Bound,
                reference: t,
                load_reference: load,
            }),
            None => bail!("--normalise bound: class 0 sends nothing across the network"),
        },
    };
    let factor = scale.map_or(1.0, |s| s.reference);
    let load_factor = scale.map_or(1.0, |s| s.load_reference);
    let loads = match (&args.sweep, args.load) {
        (Some(s), _) => parse_sweep(s)?
            .into_iter()
            .map(|l| l * load_factor)
            .collect(),
        (None, Some(l)) => {
            if !(l > 0.0 && l.is_finite()) {
                bail!("--load: must be a positive number (got {l})");
            }
            vec![l * load_factor]
        }
        (None, None) => vec![setup.traffic.nominal_load(0)],
    };
    if !args.compare.is_empty() {
        return run_compare(args, &setup, &loads, scale);
    }
    check_pretrain(args, &setup, &[setup.routing.as_ref()])?;
    let bound_throughput = bound.as_ref().and_then(|b| b.throughput);
    let bar = ProgressBar::new(loads.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("simulating [{bar:30}] {pos}/{len} loads, {elapsed} elapsed")
            .expect("static template")
            .progress_chars("=> "),
    );
    let points = sim::sweep(
        &setup.topo,
        setup.routing.as_ref(),
        &setup.traffic,
        &setup.params,
        setup.seed,
        &loads,
        &|| bar.inc(1),
    )?;
    bar.finish_and_clear();
    let summary = sim::SweepSummary::of(&points);
    let name = setup.routing.name();
    if let Some(path) = &args.plot {
        latency_plot(
            path,
            &format!("{} — {name}", setup.name),
            &[(name.as_str(), &points)],
            scale,
        )?;
    }
    if let Some(path) = &args.timeline_plot {
        timeline_plot(path, &setup.name, &[(name.as_str(), &points)])?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = Report {
            problem: &setup.name,
            topology: &setup.topo.name,
            routing: setup.routing.name(),
            seed: setup.seed,
            simulation: &setup.params,
            normalised: scale,
            points: points
                .iter()
                .map(|p| PointReport {
                    point: p,
                    bound_throughput,
                    fraction_of_bound: bound_throughput.map(|b| p.accepted / b),
                    normalised: scale.map(|s| s.point(p)),
                })
                .collect(),
            saturation_throughput: summary.saturation_throughput,
            max_accepted: summary.max_accepted,
            saturation: summary.clone(),
            deadlock_caveat: setup.routing.deadlock_caveat(),
            bound,
        };
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        drop(out);
        return deadlock_exit(
            args,
            summary.deadlocked_loads.len(),
            &deadlocked_loads(&summary, load_factor),
        );
    }
    writeln!(
        out,
        "{}: {} routing on {} ({} terminals), seed {}",
        setup.name,
        setup.routing.name(),
        setup.topo.name,
        setup.topo.num_terminals(),
        setup.seed
    )?;
    if scale.is_some() {
        writeln!(out, "load, offered, accepted: {}", Scale::unit(scale))?;
    }
    writeln!(
        out,
        "{:>7} {:>8} {:>8} {:>16} {:>7} {:>7} {:>7} {:>9} {:>6}  status",
        "load", "offered", "accepted", "latency avg±ci", "p50", "p99", "max", "net avg", "hops"
    )?;
    for p in &points {
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
        _ if points.iter().all(|p| p.stable) => writeln!(
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
    if let Some(c) = setup.routing.deadlock_caveat() {
        writeln!(
            out,
            "warning: routing `{name}` is not guaranteed deadlock-free: {c}"
        )?;
    }
    if let Some(b) = &bound {
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
        &deadlocked_loads(&summary, load_factor),
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
