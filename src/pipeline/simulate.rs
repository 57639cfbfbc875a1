//! The `simulate` experiment: a sweep of offered loads on the problem file's routing, or the
//! same sweep for several routings (`compare`), with the routing throughput bound, the
//! saturation summary, loads normalised to a reference and the plots. [`run`] returns a
//! [`SimulateReport`] (one routing) or a [`CompareReport`]; [`replot`] draws the plots of
//! earlier reports. docs/formats.md, "`simulate --json`", describes both reports.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::check_output_file;
use crate::bounds::{Above, BoundKind, check_bound_size, routing_bound_above, terminal_load};
use crate::export::plot::{Series, line_plot};
use crate::problem_file::LoadedProblem;
use crate::registry::routing::build_routing;
use crate::routing::table::load::RouterDemand;
use crate::routing::{RoutingConfig, RoutingFunction};
use crate::sim::{self, LoadPoint, SimParams};
use crate::topology::Topology;
use crate::traffic::Traffic;

/// Everything a simulation needs, built from a problem file.
pub struct Setup {
    pub name: String,
    pub seed: u64,
    pub topo: Topology,
    pub routing: Box<dyn RoutingFunction>,
    /// The `[routing]` table the routing was built from.
    pub routing_config: RoutingConfig,
    pub traffic: Traffic,
    pub params: SimParams,
    /// The traffic classes as plot titles name them.
    pub traffic_label: String,
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
        let (routing, params) =
            routing_and_params(&routing_cfg, &topo, &params).map_err(in_file)?;
        let traffic = loaded.build_traffic(&topo, &params)?;
        params.check_traffic(&traffic).map_err(in_file)?;
        if let Some(ioq) = &params.ioq {
            crate::sim::check_router(ioq, &topo).map_err(in_file)?;
        }
        let traffic_label = p
            .traffic
            .iter()
            .map(|t| t.label())
            .collect::<Vec<_>>()
            .join(" + ");
        Ok(Setup {
            traffic_label,
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

/// The routing `cfg` built for `params`, and the parameters it runs with: with
/// `vc_per_class` (preset `merlin` without `num_vcs`), one VC per VC class of the routing.
pub(crate) fn routing_and_params(
    cfg: &RoutingConfig,
    topo: &crate::topology::Topology,
    params: &SimParams,
) -> crate::Result<(Box<dyn RoutingFunction>, SimParams)> {
    let mut params = params.clone();
    if params.vc_per_class {
        // Built once with every VC a channel may have, to learn how many classes it uses.
        let probe = build_routing(cfg, topo, 64)?;
        params.num_vcs = probe.min_vcs();
        params.validate()?;
    }
    let routing = build_routing(cfg, topo, params.num_vcs)?;
    // Only the input-output-queued router reports a packet leaving its input buffer (the
    // input-queued one would never send such feedback, and its hot path stays as it was).
    if params.ioq.is_none()
        && crate::sim::engine::default_session(routing.as_ref(), 0)
            .hooks()
            .input_exit
    {
        return Err(crate::Error::field(
            "routing.q.feedback_at",
            "\"input_exit\" needs [simulation] router = \"ioq\" (the input-queued router \
             does not report packets leaving its input buffers)",
        ));
    }
    crate::sim::check_partitions(topo, routing.as_ref(), &params)?;
    Ok((routing, params))
}

/// What a latency-load plot needs besides the points: its title (system, traffic pattern,
/// router model) and the time a cycle stands for. Kept in the `--json` reports so that
/// `--from-json` redraws the same plot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct PlotContext {
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_per_cycle: Option<f64>,
}

impl Setup {
    /// The plot title and time unit of this setup's simulations.
    pub fn plot_context(&self) -> PlotContext {
        let router = match &self.params.ioq {
            None => "input-queued router".to_string(),
            Some(_) if self.params.preset == "merlin" => {
                "input-output-queued router (merlin)".to_string()
            }
            Some(_) => "input-output-queued router".to_string(),
        };
        PlotContext {
            title: format!(
                "{} ({} terminals) · {} · {router}",
                self.topo.name,
                self.topo.num_terminals(),
                self.traffic_label
            ),
            ns_per_cycle: self.params.ns_per_cycle,
        }
    }
}

/// What `--normalise` divides loads and throughputs by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalise {
    Injection,
    Bound,
}

/// How to run the experiment: the command line's choices (`None` = the problem file's).
#[derive(Clone, Debug, Default)]
pub struct SimulateOptions {
    /// One offered load (flits per terminal per cycle, or a fraction with `normalise`).
    pub load: Option<f64>,
    /// Loads `FROM:TO:STEP` or `A,B,...` ([`parse_sweep`]); overrides `load`.
    pub sweep: Option<String>,
    /// Write a latency-vs-offered-load plot (SVG) here.
    pub plot: Option<PathBuf>,
    /// Reference points (CSV `label,load,latency`, in the plot's units) drawn over `plot`.
    pub overlay: Option<PathBuf>,
    /// Skip the routing throughput bound.
    pub no_bound: bool,
    /// Routings to compare (names, or `table:FILE.json`) instead of the file's.
    pub compare: Vec<String>,
    pub normalise: Option<Normalise>,
    /// Timeline window in cycles (overrides `simulation.timeline_window`).
    pub timeline: Option<u64>,
    /// Write the timeline plot (SVG) here.
    pub timeline_plot: Option<PathBuf>,
    /// Overrides of `simulation.pretrain_runs`, `warmup_cycles` and `measure_cycles`.
    pub pretrain: Option<u32>,
    pub warmup: Option<u64>,
    pub measure: Option<u64>,
    /// Override of `simulation.partitions`.
    pub partitions: Option<usize>,
}

impl SimulateOptions {
    /// Every output file, checked before the work that produces it.
    pub(crate) fn check_outputs(&self) -> Result<()> {
        if let Some(p) = &self.plot {
            check_output_file("--plot", p)?;
        }
        if let Some(p) = &self.timeline_plot {
            check_output_file("--timeline-plot", p)?;
        }
        // Read now, so that a bad file is reported before the work rather than after it.
        read_overlay(self)?;
        Ok(())
    }
}

/// What a run tells its caller while it works.
pub trait SimulateObserver: Sync {
    /// Something is missing from the report, and why (the run goes on).
    fn warning(&self, _message: &str) {}
    /// The sweep of the file's routing starts: `points` load points.
    fn sweep_started(&self, _points: usize) {}
    /// A load point of that sweep is done (called from the simulating threads).
    fn point_done(&self) {}
    /// That sweep is over.
    fn sweep_finished(&self) {}
    /// A plot was written.
    fn wrote(&self, _path: &Path) {}
}

/// The report of one routing's sweep (`simulate --json`).
#[derive(Clone, Debug, Serialize)]
pub struct SimulateReport {
    pub problem: String,
    pub plot: PlotContext,
    pub topology: String,
    pub routing: String,
    pub seed: u64,
    pub simulation: SimParams,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalised: Option<Scale>,
    pub points: Vec<PointReport>,
    /// See [`sim::SweepSummary`]; repeated at the top level for scripts.
    pub saturation_throughput: Option<f64>,
    pub max_accepted: Option<f64>,
    pub saturation: sim::SweepSummary,
    /// Why the routing is not guaranteed deadlock-free, if it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlock_caveat: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<BoundReport>,
    /// Terminals of the topology (the text header).
    #[serde(skip)]
    pub terminals: usize,
}

/// A load point with its share of the throughput bound (fields absent with `--no-bound`).
#[derive(Clone, Debug, Serialize)]
pub struct PointReport {
    #[serde(flatten)]
    pub point: LoadPoint,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_throughput: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction_of_bound: Option<f64>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub normalised: Option<NormalisedPoint>,
}

/// The report of `compare` (`simulate --compare ... --json`): one curve per routing.
#[derive(Clone, Debug, Serialize)]
pub struct CompareReport {
    pub problem: String,
    pub plot: PlotContext,
    pub normalised: Option<Scale>,
    pub routings: Vec<RoutingCurve>,
    /// The routing throughput bound of class 0 (absent with `--no-bound`): no routing in the
    /// comparison can accept more.
    pub bound: Option<BoundReport>,
    /// The simulated loads (flits per terminal per cycle), the same for every routing.
    #[serde(skip)]
    pub loads: Vec<f64>,
}

/// One routing of a [`CompareReport`].
#[derive(Clone, Debug, Serialize)]
pub struct RoutingCurve {
    /// The routing as given (`dor`, `table:FILE.json`).
    pub routing: String,
    pub saturation_throughput: Option<f64>,
    pub max_accepted: Option<f64>,
    pub saturation: sim::SweepSummary,
    pub points: Vec<LoadPoint>,
    /// With `normalise`: each point's figures as fractions of the reference.
    pub normalised_points: Option<Vec<NormalisedPoint>>,
}

/// What [`run`] returns: one routing's report, or the comparison of several.
#[derive(Clone, Debug)]
pub enum SimulateOutcome {
    Sweep(Box<SimulateReport>),
    Compare(Box<CompareReport>),
}

/// `--normalise`: the reference loads and throughputs are divided by.
#[derive(Clone, Copy, Debug, Serialize, serde::Deserialize)]
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
pub struct NormalisedPoint {
    pub load_normalised: f64,
    pub offered_normalised: f64,
    pub accepted_normalised: f64,
}

impl Scale {
    pub fn point(self, p: &LoadPoint) -> NormalisedPoint {
        NormalisedPoint {
            load_normalised: p.load / self.load_reference,
            offered_normalised: p.offered / self.reference,
            accepted_normalised: p.accepted / self.reference,
        }
    }

    /// The unit of loads and throughputs in text and plots.
    pub fn unit(scale: Option<Scale>) -> String {
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
#[derive(Clone, Debug, Serialize)]
pub struct BoundReport {
    /// Lower bound on the max channel utilisation (network or terminal) at the class's nominal
    /// load.
    pub max_load: f64,
    /// Upper bound on the accepted throughput, flits per terminal per cycle averaged over all
    /// terminals like `accepted` (class 0's flits per cycle at its nominal load / terminals /
    /// `max_load`); null when class 0 sends nothing across the network.
    pub throughput: Option<f64>,
    /// Class 0's `load` at which some channel is fully used (`nominal_load / max_load`): the
    /// same as `throughput` unless some terminals send nothing.
    pub load: Option<f64>,
    pub kind: BoundKind,
    pub method: String,
    /// Seconds the bound took.
    pub seconds: f64,
}

/// Routing bound of traffic class 0 in the units of `accepted`. The traffic matrix is at the
/// class's nominal load, so the bound's `max_load` is the utilisation at that load and the
/// load where saturation becomes unavoidable is `nominal_load / max_load`.
fn throughput_bound(setup: &Setup) -> Result<BoundReport> {
    let start = std::time::Instant::now();
    check_bound_size(&setup.topo)?;
    let aggregated = setup.traffic.aggregated_demand(0, &setup.topo);
    // Injection and ejection links are channels too; they bind when terminals are slower
    // than the network (as on problems/dragonfly-1056-ur.toml), or as fast under uniform
    // traffic on a network with the bandwidth to spare.
    let terminal = terminal_load(&setup.topo, &aggregated.injected, &aggregated.ejected);
    let total = aggregated.total();
    let demand = RouterDemand::from_aggregated(aggregated);
    let (max_load, kind, method) = match routing_bound_above(&setup.topo, &demand, terminal)? {
        Above::Bound(b) if b.max_load > terminal => (b.max_load, b.kind, b.method),
        _ => (terminal, BoundKind::Exact, "terminal channels".to_string()),
    };
    // Accepted throughput is averaged over all terminals, senders or not: so is the bound.
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
pub(crate) fn parse_sweep(text: &str) -> Result<Vec<f64>> {
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

/// Simulates the problem as `options` say. Output files are checked first
/// ([`SimulateOptions::check_outputs`]), then the overrides, the memory a sweep needs and the
/// bound, before any simulation.
pub fn run(
    loaded: &LoadedProblem,
    options: &SimulateOptions,
    observer: &dyn SimulateObserver,
) -> Result<SimulateOutcome> {
    let problem = loaded.path.as_path();
    let mut setup = Setup::from_loaded(loaded)?;
    if let Some(w) = options.timeline {
        if w == 0 {
            bail!("--timeline: must be at least 1 cycle");
        }
        setup.params.timeline_window = w;
    }
    if let Some(runs) = options.pretrain {
        setup.params.pretrain_runs = runs;
    }
    if let Some(w) = options.warmup {
        setup.params.warmup_cycles = w;
    }
    if let Some(m) = options.measure {
        if m < setup.params.batches as u64 {
            bail!(
                "--measure: at least simulation.batches = {} cycles",
                setup.params.batches
            );
        }
        setup.params.measure_cycles = m;
    }
    if let Some(n) = options.partitions {
        setup.params.partitions = n;
    }
    // The overrides are held to the file's limits (they feed the same cycle arithmetic).
    setup
        .params
        .validate()
        .map_err(|e| anyhow::anyhow!("{} (as set on the command line)", e.in_file(problem)))?;
    if options.partitions.is_some() {
        // What the routing allows (learned routings are refused), as for the file's value.
        sim::check_partitions(&setup.topo, setup.routing.as_ref(), &setup.params)
            .map_err(|e| anyhow::anyhow!("{} (as set on the command line)", e.in_file(problem)))?;
    }
    if options.timeline_plot.is_some() && setup.params.timeline_window == 0 {
        bail!("--timeline-plot: needs --timeline CYCLES (or simulation.timeline_window)");
    }
    // Before the bound (an LP that can take a while on a large topology) and the sweep.
    if let Some(memory) = sim::machine_memory() {
        let points = match &options.sweep {
            Some(s) => parse_sweep(s)?.len(),
            None => 1,
        };
        let at_once = points.min(rayon::current_num_threads());
        sim::check_memory(&setup.topo, &setup.params, at_once, memory)
            .map_err(|e| e.in_file(problem))?;
    }
    if options.no_bound && options.normalise == Some(Normalise::Bound) {
        bail!("--normalise bound: needs the bound, which --no-bound turns off");
    }
    // Once per command, before the sweep: it does not depend on the offered load.
    let wants_bound = !options.no_bound;
    let bound = if wants_bound {
        match throughput_bound(&setup) {
            Ok(b) => Some(b),
            Err(e) if options.normalise == Some(Normalise::Bound) => {
                return Err(e.context("--normalise bound"));
            }
            Err(e) => {
                // The bound is extra information: say why it is missing, keep simulating.
                observer.warning(&format!("no throughput bound: {e}"));
                None
            }
        }
    } else {
        None
    };
    let scale = match options.normalise {
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
    let load_factor = scale.map_or(1.0, |s| s.load_reference);
    let loads = match (&options.sweep, options.load) {
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
    if !options.compare.is_empty() {
        return compare(options, &setup, problem, loads, scale, observer).map(|mut report| {
            report.bound = bound;
            SimulateOutcome::Compare(Box::new(report))
        });
    }
    check_pretrain(options, &setup, problem, &[setup.routing.as_ref()])?;
    let bound_throughput = bound.as_ref().and_then(|b| b.throughput);
    observer.sweep_started(loads.len());
    let points = sim::sweep(
        &setup.topo,
        setup.routing.as_ref(),
        &setup.traffic,
        &setup.params,
        setup.seed,
        &loads,
        &|| observer.point_done(),
    )?;
    observer.sweep_finished();
    let summary = sim::SweepSummary::of(&points);
    let name = setup.routing.name();
    if let Some(path) = &options.plot {
        let overlay = read_overlay(options)?;
        let context = setup.plot_context();
        latency_plot(path, &context, &[(name.as_str(), &points)], scale, &overlay)?;
        observer.wrote(path);
    }
    if let Some(path) = &options.timeline_plot {
        timeline_plot(
            path,
            &setup.plot_context(),
            scale,
            &[(name.as_str(), &points)],
        )?;
        observer.wrote(path);
    }
    Ok(SimulateOutcome::Sweep(Box::new(SimulateReport {
        problem: setup.name.clone(),
        plot: setup.plot_context(),
        topology: setup.topo.name.clone(),
        routing: name,
        seed: setup.seed,
        simulation: setup.params.clone(),
        normalised: scale,
        points: points
            .into_iter()
            .map(|p| PointReport {
                bound_throughput,
                fraction_of_bound: bound_throughput.map(|b| p.accepted / b),
                normalised: scale.map(|s| s.point(&p)),
                point: p,
            })
            .collect(),
        saturation_throughput: summary.saturation_throughput,
        max_accepted: summary.max_accepted,
        saturation: summary,
        deadlock_caveat: setup.routing.deadlock_caveat(),
        bound,
        terminals: setup.topo.num_terminals(),
    })))
}

/// `compare`: one sweep per routing.
fn compare(
    options: &SimulateOptions,
    setup: &Setup,
    problem: &Path,
    loads: Vec<f64>,
    scale: Option<Scale>,
    observer: &dyn SimulateObserver,
) -> Result<CompareReport> {
    let mut routings = Vec::new();
    for entry in &options.compare {
        let alone = entry.strip_prefix("table-alone:");
        let mut cfg = match entry.strip_prefix("table:") {
            Some(file) => RoutingConfig::new("table").with("table", PathBuf::from(file)),
            // The table by itself: every pair on the VL of the SL file beside it (`routes
            // evolve` writes best.sl when one VL would deadlock), else all on every VC.
            None if alone.is_some() => {
                let file = PathBuf::from(alone.unwrap_or_default());
                let sl = file.with_extension("sl");
                let cfg = RoutingConfig::new("table").with("table", file);
                if sl.exists() {
                    cfg.with("table_mode", "layered").with("table_layers", sl)
                } else {
                    cfg.with("table_mode", "plain")
                }
            }
            // The problem file's own algorithm keeps its [routing] settings (e.g. the
            // learning parameters); the others run with their defaults.
            None if *entry == setup.routing_config.algorithm => setup.routing_config.clone(),
            None => RoutingConfig::new(entry.clone()),
        };
        cfg.apply_preset(&setup.params.preset, &setup.topo);
        let (routing, params) = routing_and_params(&cfg, &setup.topo, &setup.params)
            .with_context(|| format!("--compare {entry}"))?;
        routings.push((entry, routing, params));
    }
    let all: Vec<&dyn RoutingFunction> = routings.iter().map(|(_, r, _)| r.as_ref()).collect();
    check_pretrain(options, setup, problem, &all)?;
    let mut results = Vec::new();
    for (entry, routing, params) in &routings {
        let points = sim::sweep(
            &setup.topo,
            routing.as_ref(),
            &setup.traffic,
            params,
            setup.seed,
            &loads,
            &|| {},
        )?;
        results.push(((*entry).clone(), points));
    }
    let curves: Vec<(&str, &[LoadPoint])> = results
        .iter()
        .map(|(label, points)| (label.as_str(), points.as_slice()))
        .collect();
    if let Some(path) = &options.plot {
        let overlay = read_overlay(options)?;
        latency_plot(path, &setup.plot_context(), &curves, scale, &overlay)?;
        observer.wrote(path);
    }
    if let Some(path) = &options.timeline_plot {
        timeline_plot(path, &setup.plot_context(), scale, &curves)?;
        observer.wrote(path);
    }
    let routings = results
        .into_iter()
        .map(|(routing, points)| {
            let summary = sim::SweepSummary::of(&points);
            RoutingCurve {
                routing,
                saturation_throughput: summary.saturation_throughput,
                max_accepted: summary.max_accepted,
                saturation: summary,
                normalised_points: scale.map(|s| points.iter().map(|p| s.point(p)).collect()),
                points,
            }
        })
        .collect();
    Ok(CompareReport {
        problem: setup.name.clone(),
        plot: setup.plot_context(),
        normalised: scale,
        routings,
        bound: None,
        loads,
    })
}

/// Pre-training repeats the whole run so that a learned routing can go on from what it
/// learned; for routings that do not learn it only repeats the same simulation, so asking
/// for it is a mistake (at least one of the simulated routings must learn).
fn check_pretrain(
    options: &SimulateOptions,
    setup: &Setup,
    problem: &Path,
    routings: &[&dyn RoutingFunction],
) -> Result<()> {
    if setup.params.pretrain_runs == 0
        || routings
            .iter()
            .any(|r| r.learning_session(setup.seed).is_some())
    {
        return Ok(());
    }
    let names: Vec<String> = routings.iter().map(|r| r.name()).collect();
    let option = if options.pretrain.is_some() {
        "--pretrain".to_string()
    } else {
        format!("{}: simulation.pretrain_runs", problem.display())
    };
    bail!(
        "{option}: routing {} does not learn, so pre-training runs would only repeat the same \
         simulation; use a learned routing (q_routing, q_adaptive, dqn) or drop it",
        names.join(", ")
    )
}

/// One earlier report (`SimulateReport` or `CompareReport` as JSON): its curves
/// (routing, points), its load scale and its plot context (the problem's name as title
/// for reports written before they carried one).
struct EarlierReport {
    curves: Vec<(String, Vec<LoadPoint>)>,
    scale: Option<Scale>,
    context: PlotContext,
}

fn report_from_json(path: &Path) -> Result<EarlierReport> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--from-json: cannot read {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--from-json: {} is not JSON", path.display()))?;
    let parse = |routing: &serde_json::Value, points: &serde_json::Value| -> Result<_> {
        let name = routing.as_str().unwrap_or("routing").to_string();
        let mut points = points.clone();
        for point in points.as_array_mut().into_iter().flatten() {
            complete_old_point(point);
        }
        let points: Vec<LoadPoint> = serde_json::from_value(points).with_context(|| {
            format!(
                "--from-json: {}: `points` are not simulate points",
                path.display()
            )
        })?;
        Ok((name, points))
    };
    let curves = match v.get("routings").and_then(|r| r.as_array()) {
        Some(list) => list
            .iter()
            .map(|r| parse(&r["routing"], &r["points"]))
            .collect::<Result<Vec<_>>>()?,
        None if v.get("points").is_some() => vec![parse(&v["routing"], &v["points"])?],
        None => bail!(
            "--from-json: {}: neither `points` nor `routings` (not a simulate --json output)",
            path.display()
        ),
    };
    let scale = match v.get("normalised") {
        None | Some(serde_json::Value::Null) => None,
        Some(s) => {
            // Reports written before `load_reference` existed used `reference` for loads too.
            let mut s = s.clone();
            if let Some(reference) = s.get("reference").cloned()
                && let Some(map) = s.as_object_mut()
            {
                map.entry("load_reference").or_insert(reference);
            }
            Some(serde_json::from_value(s).with_context(|| {
                format!(
                    "--from-json: {}: `normalised` is not a load scale",
                    path.display()
                )
            })?)
        }
    };
    let context = match v.get("plot") {
        Some(c) => serde_json::from_value(c.clone()).with_context(|| {
            format!(
                "--from-json: {}: `plot` is not a plot context",
                path.display()
            )
        })?,
        None => PlotContext {
            title: v["problem"].as_str().unwrap_or_default().to_string(),
            ns_per_cycle: None,
        },
    };
    Ok(EarlierReport {
        curves,
        scale,
        context,
    })
}

/// What `simulate --from-json` draws, and what it overrides of the reports' plot context.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReplotOptions {
    pub(crate) plot: Option<PathBuf>,
    pub(crate) timeline_plot: Option<PathBuf>,
    pub(crate) overlay: Option<PathBuf>,
    pub(crate) title: Option<String>,
    pub(crate) ns_per_cycle: Option<f64>,
}

/// A point of a report written before points carried `status` and `stable`: both derived
/// from what it does carry, as the simulator derives them (`sim::simulate_point`).
fn complete_old_point(point: &mut serde_json::Value) {
    let Some(map) = point.as_object_mut() else {
        return;
    };
    if !map.contains_key("status") {
        let status = if map.get("deadlock").is_some_and(|d| !d.is_null()) {
            "deadlock"
        } else if map.get("saturated").and_then(|s| s.as_bool()) == Some(true) {
            "saturated"
        } else {
            "ok"
        };
        map.insert("status".into(), status.into());
    }
    if !map.contains_key("stable") {
        let number = |key: &str| map.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0);
        // Without `dropped` (bounded source queues refused packets unseen), what the sources
        // were asked for is at least the nominal load.
        let asked = match map.get("dropped") {
            Some(_) => number("offered") + number("dropped"),
            None => number("offered").max(number("load")),
        };
        let stable = map["status"] == "ok" && number("accepted") >= sim::STABLE_ACCEPTED * asked;
        map.insert("stable".into(), stable.into());
    }
}

/// Draws `plot` and/or `timeline_plot` from the points of earlier reports (`paths`, at least
/// one), one curve per routing (joined across reports), without simulating; the first
/// report's title, time unit and load scale serve for all, unless the options give them.
pub(crate) fn replot(
    paths: &[PathBuf],
    replot: &ReplotOptions,
    observer: &dyn SimulateObserver,
) -> Result<()> {
    let (plot, timeline, overlay) = (
        replot.plot.as_deref(),
        replot.timeline_plot.as_deref(),
        replot.overlay.as_deref(),
    );
    if let Some(ns) = replot.ns_per_cycle
        && !(ns.is_finite() && ns > 0.0)
    {
        bail!("--ns-per-cycle: must be a positive number of nanoseconds (got {ns})");
    }
    let reports = paths
        .iter()
        .map(|p| report_from_json(p))
        .collect::<Result<Vec<_>>>()?;
    // One curve per routing: the points of a routing found in several reports (a sweep
    // extended by a later run) are joined, in load order.
    let mut merged: Vec<(String, Vec<LoadPoint>)> = Vec::new();
    for (label, points) in reports.iter().flat_map(|r| &r.curves) {
        match merged.iter_mut().find(|(l, _)| l == label) {
            Some((_, all)) => all.extend(points.iter().cloned()),
            None => merged.push((label.clone(), points.clone())),
        }
    }
    for (_, points) in &mut merged {
        points.sort_by(|a, b| a.load.total_cmp(&b.load));
    }
    let curves: Vec<(&str, &[LoadPoint])> = merged
        .iter()
        .map(|(label, points)| (label.as_str(), points.as_slice()))
        .collect();
    if plot.is_none() && timeline.is_none() {
        bail!("--from-json: give --plot and/or --timeline-plot");
    }
    let options = SimulateOptions {
        plot: plot.map(Path::to_path_buf),
        timeline_plot: timeline.map(Path::to_path_buf),
        overlay: overlay.map(Path::to_path_buf),
        ..SimulateOptions::default()
    };
    options.check_outputs()?;
    let first = &reports[0];
    let context = PlotContext {
        title: replot
            .title
            .clone()
            .unwrap_or_else(|| first.context.title.clone()),
        ns_per_cycle: replot.ns_per_cycle.or(first.context.ns_per_cycle),
    };
    if let Some(p) = plot {
        let overlay = read_overlay(&options)?;
        latency_plot(p, &context, &curves, first.scale, &overlay)?;
        observer.wrote(p);
    }
    if let Some(p) = timeline {
        timeline_plot(p, &context, first.scale, &curves)?;
        observer.wrote(p);
    }
    Ok(())
}

/// The `--overlay` points, if any.
fn read_overlay(options: &SimulateOptions) -> Result<Vec<crate::export::plot::Overlay>> {
    match &options.overlay {
        Some(path) => Ok(crate::export::plot::read_overlay(path)
            .with_context(|| format!("--overlay {}", path.display()))?),
        None => Ok(Vec::new()),
    }
}

/// Latency against the nominal offered load, one curve per routing: x is each point's
/// load (what the sources were asked for, in % of the normalisation when there is one),
/// so that saturated curves do not run backwards; latency in µs when the problem says how
/// long a cycle is; saturated, unstable and deadlocked points marked and not joined; the
/// `--overlay` points (a paper's) drawn over them.
fn latency_plot(
    path: &Path,
    context: &PlotContext,
    curves: &[(&str, &[LoadPoint])],
    scale: Option<Scale>,
    overlay: &[crate::export::plot::Overlay],
) -> Result<()> {
    use crate::export::plot::{LoadCurve, latency_load_plot};
    let x = |p: &LoadPoint| match scale {
        Some(s) => 100.0 * p.load / s.load_reference,
        None => p.load,
    };
    let y = |p: &LoadPoint| match context.ns_per_cycle {
        Some(ns) => p.latency_avg * ns / 1000.0,
        None => p.latency_avg,
    };
    let series: Vec<LoadCurve> = curves
        .iter()
        .map(|(label, points)| {
            let (stable, flagged): (Vec<&LoadPoint>, Vec<&LoadPoint>) = points
                .iter()
                .partition(|p| p.status == sim::PointStatus::Ok && p.stable);
            LoadCurve {
                label,
                stable: stable.iter().map(|p| (x(p), y(p))).collect(),
                flagged: flagged.iter().map(|p| (x(p), y(p))).collect(),
            }
        })
        .collect();
    let x_label = match scale {
        Some(s) => format!(
            "offered load (% of {})",
            match s.by {
                Normalise::Injection => "the injection bandwidth",
                Normalise::Bound => "the throughput bound",
            }
        ),
        None => "offered load (flits/terminal/cycle)".to_string(),
    };
    let y_label = match context.ns_per_cycle {
        Some(_) => "average packet latency (µs)",
        None => "average packet latency (cycles)",
    };
    latency_load_plot(path, &context.title, &x_label, y_label, &series, overlay)?;
    Ok(())
}

/// Average latency per timeline window against time, one curve per routing and load point.
fn timeline_plot(
    path: &Path,
    context: &PlotContext,
    scale: Option<Scale>,
    curves: &[(&str, &[LoadPoint])],
) -> Result<()> {
    let labels: Vec<String> = curves
        .iter()
        .flat_map(|(label, points)| {
            points.iter().map(move |p| match (points.len(), scale) {
                (1, _) => label.to_string(),
                (_, Some(s)) => format!("{label} @ {:.0}%", 100.0 * p.load / s.load_reference),
                (_, None) => format!("{label} @ {:.4}", p.load),
            })
        })
        .collect();
    // Microseconds when the problem says how long a cycle is.
    let (unit, time) = match context.ns_per_cycle {
        Some(ns) => ("µs", ns / 1000.0),
        None => ("cycles", 1.0),
    };
    let series: Vec<Series> = curves
        .iter()
        .flat_map(|(_, points)| points.iter())
        .zip(&labels)
        .map(|(p, label)| Series {
            label,
            points: p
                .timeline
                .iter()
                .map(|w| (w.start as f64 * time, w.latency_avg * time))
                .collect(),
        })
        .collect();
    line_plot(
        path,
        &context.title,
        &format!("time ({unit}; window start)"),
        &format!("average latency of the packets delivered in the window ({unit})"),
        &series,
    )?;
    Ok(())
}
