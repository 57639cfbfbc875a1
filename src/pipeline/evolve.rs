//! The `routes evolve` experiment: evolve a routing table for a problem's training traffic
//! with the GA of `search::problems::routing_tables`, simulate the elite, compare with the
//! baseline routing (DOR) and the LP bounds, and export the best table. docs/formats.md,
//! "`routes evolve --json`", describes [`EvolveReport`].

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::json;

use super::check_output_dir;
pub use super::fabric_files::LmcReport;
use super::fabric_files::{write_lmc_files, write_sl_files};
use crate::bounds::{
    Bound, BoundKind, COLGEN_CHANNEL_LIMIT, ColumnGenOptions, ColumnGeneration, EXACT_ROUTER_LIMIT,
    candidate_bound, candidate_lp_fits, column_generation, column_generation_fits, routing_bound,
    single_path_bound,
};
use crate::export::routes::{FULL_FILE_PAIRS, RoutesFormat, write_routes};
use crate::problem_file::LoadedProblem;
use crate::registry::routing::build_routing;
use crate::routing::RoutingFunction;
use crate::routing::table::candidates::{CandidateOptions, MAX_BITS, generate_candidates_for};
use crate::routing::table::io::TableMetadata;
use crate::routing::table::lmc::{LmcFitter, MAX_LMC, constrain};
use crate::routing::table::load::RouterDemand;
use crate::routing::table::negotiate::negotiate_paths;
use crate::routing::table::route::{TableClasses, TableMode, TableRouting};
use crate::routing::table::vl::{MAX_VLS, assign_vls};
use crate::routing::table::{CandidateSet, RouterPath, RoutingTable};
use crate::search::algorithms::ga;
use crate::search::problems::routing_tables::{
    Aggregate, RoutingTableProblem, check_table_search_size, combined_demand, load_targets,
    normalised_demands, trained_pairs,
};
use crate::search::{AlgorithmName, RunSettings, SearchProblem, Termination, run, run_seed};
use crate::sim::{SimParams, simulate_point};
use crate::topology::Topology;
use crate::traffic::Traffic;

/// Rounds of negotiated congestion on the seed genome (each reroutes every trained pair once).
const NEGOTIATION_ROUNDS: usize = 400;

/// How to evolve: the command line's choices (`None` = the problem file's `[evolve]`).
#[derive(Clone, Debug, Default)]
pub(crate) struct EvolveOptions {
    /// Overrides `evolve.generations`, `evolve.population` and `evolve.hill_climb`.
    pub generations: Option<usize>,
    pub population: Option<usize>,
    pub hill_climb: Option<f64>,
    /// Overrides `evolve.lmc`.
    pub lmc: Option<u8>,
    /// Output folder (default `populations/<name>-evolve`).
    pub out: Option<PathBuf>,
    /// Continue from the checkpoint; `force` even if the configuration changed.
    pub resume: bool,
    pub force: bool,
    /// Do not write a checkpoint after each generation.
    pub no_checkpoint: bool,
    /// Show the progress bar.
    pub progress: bool,
}

/// What `routes evolve` found. Printed as JSON with its keys in alphabetical order. Channel
/// loads are per unit of offered load (flits per cycle on the busiest channel when every
/// terminal offers 1 flit per cycle of the pattern), combined over the training patterns by
/// `evolve.aggregate`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct EvolveReport {
    pub problem: String,
    pub seed: u64,
    pub generations: usize,
    pub evaluations: usize,
    /// Wall-clock seconds of the GA.
    pub seconds: f64,
    /// `destination-based` or `candidate paths`.
    pub genome: &'static str,
    pub candidates_per_pair: usize,
    /// Router pairs with training demand (one gene each for a candidate-path genome); every
    /// other pair keeps its DOR path.
    pub trained_pairs: usize,
    pub untrained_pairs: usize,
    /// Candidate paths added from the optimal fractional routing (column generation), and
    /// what the column generation did per training pattern (empty for destination-based
    /// genomes, or when a pattern has too many pairs for it).
    pub lp_candidates_added: usize,
    /// The max channel load (per unit load, worst pattern) of the negotiated-congestion paths
    /// that seed the GA, and the seconds it took (null for destination-based genomes).
    pub negotiated_max_channel_load: Option<f64>,
    pub negotiation_seconds: f64,
    pub column_generation: Vec<ColumnGenerationReport>,
    /// The best table's max channel load, combined and per pattern.
    pub max_channel_load: f64,
    pub max_channel_load_per_pattern: Vec<f64>,
    /// `1 / max_channel_load`.
    pub throughput_bound: f64,
    /// The same for the DOR table.
    pub baseline_max_channel_load: f64,
    pub baseline_max_channel_load_per_pattern: Vec<f64>,
    /// Lower bound on the max channel load of any single-path table over the candidate paths
    /// (the LP relaxation rounded up to whole flows when flows are equal), its kind, method
    /// and LP relaxation. Narrower than `routing_bound`: it says how well the GA chose among
    /// its candidates, not how good the table is.
    pub candidate_bound: f64,
    pub candidate_bound_kind: &'static str,
    pub candidate_bound_method: String,
    pub candidate_bound_lp_relaxation: f64,
    /// `candidate_bound / max_channel_load`.
    pub fraction_of_candidate_bound: f64,
    /// Lower bound on the max channel load of any single-path routing whatsoever (the
    /// min-congestion LP over all paths, rounded up to whole flows when flows are equal).
    pub routing_bound: f64,
    /// `exact`, or `approximate` with `routing_bound_gap`: the optimum of the LP lies in
    /// `[lp_relaxation, lp_relaxation * (1 + gap)]`.
    pub routing_bound_kind: &'static str,
    pub routing_bound_gap: Option<f64>,
    pub routing_bound_method: String,
    pub routing_bound_lp_relaxation: f64,
    /// `routing_bound / max_channel_load`: how close the table is to the best any routing
    /// could do (with an approximate bound, at least this close).
    pub fraction_of_bound: f64,
    /// Wall-clock seconds of the bounds and the column generation (the candidate LP's overlap
    /// the GA's, beside which it runs).
    pub bounds_seconds: f64,
    /// Whether the best table alone (one VC) has acyclic channel dependencies; if not, the
    /// channels of one dependency cycle.
    pub deadlock_free_alone: bool,
    pub dependency_cycle: Option<Vec<usize>>,
    /// With `evolve.lmc`: what fitting the table to 2^lmc destination trees per destination
    /// did (`max_channel_load` and everything else describe the constrained table).
    pub lmc: Option<LmcReport>,
    /// VLs of the deadlock-free VL (SL) assignment exported as `best.sl` (1: the table alone
    /// is deadlock-free and no file is written; null: more than 15 would be needed).
    pub vls_needed: Option<usize>,
    /// The training loads the tables were simulated at.
    pub simulated_loads: Vec<f64>,
    /// The best table simulated (empty unless `evolve.simulate_elite` > 0), and the baseline
    /// routing.
    pub simulated: Vec<Simulated>,
    pub baseline_simulated: Vec<Simulated>,
    /// The best table alone (each pair on its VL of `best.sl`, or plain when one VL is
    /// deadlock-free; no hierarchy fallback), at the same loads; empty when the elite is not
    /// simulated or the table needs more VLs than the simulation has.
    pub simulated_alone: Vec<Simulated>,
    /// Simulated cost of each elite table (mean latency plus the saturation penalty).
    pub elite_simulated_costs: Vec<f64>,
    /// Best analytical fitness after each generation.
    pub history: Vec<HistoryPoint>,
    /// The files of the best table.
    pub exports: Vec<String>,
    /// Formats not written, with the reason (per-pair files of tables above
    /// `FULL_FILE_PAIRS` pairs).
    pub exports_skipped: Vec<String>,
}

/// The column generation of one training pattern.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ColumnGenerationReport {
    pub rounds: usize,
    pub paths: usize,
    /// Certified lower bound and achievable fractional load (per unit load), and their gap.
    pub lower: f64,
    pub upper: f64,
    /// Max load of the fractional routing over its paths (the one the candidates come from);
    /// `upper` can be lower, from the dual ascent's averaged routings.
    pub paths_upper: f64,
    pub gap: f64,
    pub seconds: f64,
}

/// The best fitness (max channel load) after a generation.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct HistoryPoint {
    pub generation: usize,
    pub best: f64,
}

/// Simulated figures of one table at the training loads.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub(crate) struct Simulated {
    pub load: f64,
    /// Average packet latency, cycles.
    pub latency_avg: f64,
    /// Flits per terminal per cycle.
    pub accepted: f64,
    /// Saturated or deadlocked.
    pub saturated: bool,
}

/// Latency with a graded penalty for saturation: a saturated point costs its latency plus
/// 10,000 cycles times the share of the offered load it did not accept.
fn simulated_cost(points: &[Simulated]) -> f64 {
    points
        .iter()
        .map(|p| {
            let missing = if p.saturated && p.load > 0.0 {
                (1.0 - p.accepted / p.load).max(0.0)
            } else {
                0.0
            };
            p.latency_avg + 1e4 * missing
        })
        .sum::<f64>()
        / points.len().max(1) as f64
}

/// `routing` simulated at every load, the loads spread over threads and ranks.
fn simulate(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    traffic: &Traffic,
    params: &SimParams,
    seed: u64,
    loads: &[f64],
) -> Result<Vec<Simulated>> {
    crate::cluster::map("evolve simulation", loads, |&load| {
        simulate_at(topo, routing, traffic, params, seed, load).map_err(|e| format!("{e:#}"))
    })
    .into_iter()
    .map(|r| r.map_err(anyhow::Error::msg))
    .collect()
}

/// One load point of `routing`. Common random numbers: every table sees the same packets.
fn simulate_at(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    traffic: &Traffic,
    params: &SimParams,
    seed: u64,
    load: f64,
) -> crate::Result<Simulated> {
    let p = simulate_point(
        topo,
        routing,
        traffic.with_load(0, load)?,
        params,
        seed,
        load,
    );
    Ok(Simulated {
        load,
        latency_avg: p.latency_avg,
        accepted: p.accepted,
        // A deadlocked point is at least as bad as a saturated one.
        saturated: p.status != crate::sim::PointStatus::Ok,
    })
}

/// Per-pattern bounds combined like the fitness: the worst (or mean) of lower bounds is a
/// lower bound of the worst (or mean) max load.
fn combine(bounds: &[Bound], aggregate: Aggregate) -> (f64, bool, String) {
    let exact = bounds.iter().all(|b| matches!(b.kind, BoundKind::Exact));
    let value = aggregate.apply(&bounds.iter().map(|b| b.max_load).collect::<Vec<_>>());
    (value, exact, bounds[0].method.clone())
}

/// A spinner naming the stage of the work before and after the GA (which has its own bar),
/// with the elapsed time: the column generation alone takes minutes from 1,024 routers.
struct Stage(indicatif::ProgressBar);

impl Stage {
    fn new(visible: bool) -> Self {
        let bar = if visible {
            indicatif::ProgressBar::new_spinner()
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                .expect("a valid template"),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Stage(bar)
    }

    fn set(&self, what: &str) {
        self.0.set_message(what.to_string());
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Each pair's paths of the optimal fractional routings, largest share first over the
/// patterns.
fn lp_preferences(colgen: &[Option<ColumnGeneration>]) -> BTreeMap<usize, Vec<RouterPath>> {
    let mut shares: BTreeMap<usize, Vec<(f64, RouterPath)>> = BTreeMap::new();
    for cg in colgen.iter().flatten() {
        for (pair, paths) in &cg.paths {
            let list = shares.entry(*pair).or_default();
            list.extend(paths.iter().map(|p| (p.share, p.path.clone())));
        }
    }
    shares
        .into_iter()
        .map(|(pair, mut list)| {
            list.sort_by(|a, b| b.0.total_cmp(&a.0));
            (pair, list.into_iter().map(|(_, p)| p).collect())
        })
        .collect()
}

/// Puts each pair's `preferred` paths, in order, right after its DOR candidate, ahead of the
/// generated ones. Returns how many paths were new and, per pair, the candidate index of the
/// first of them (the seed genome's choice).
fn add_preferred(
    cands: &mut CandidateSet,
    preferred: &BTreeMap<usize, Vec<RouterPath>>,
) -> (usize, HashMap<usize, u8>) {
    let mut added = 0;
    let mut seed = HashMap::new();
    for (&pair, paths) in preferred {
        added += cands.prefer(pair, paths);
        if let Some(k) = paths
            .first()
            .and_then(|top| cands.paths(pair).iter().position(|p| p == top))
        {
            seed.insert(pair, k as u8);
        }
    }
    (added, seed)
}

/// Evolves a table for `loaded` (its seed already final) as `options` say; writes the
/// checkpoint and the best table's exports, and returns the report.
pub(crate) fn run_evolve(loaded: &LoadedProblem, options: &EvolveOptions) -> Result<EvolveReport> {
    let path = loaded.path.clone();
    let in_file = |e: crate::Error| e.in_file(&path);
    let p = &loaded.problem;
    let mut cfg = p.evolve.clone().unwrap_or_default();
    if let Some(n) = options.population {
        crate::search::config::check_population("--population", n, 4)?;
        cfg.population = n;
    }
    if let Some(g) = options.generations {
        crate::search::config::generations_budget("--generations", cfg.population, g)?;
        cfg.generations = g;
    }
    if options.lmc.is_some() {
        cfg.lmc = options.lmc;
    }
    if let Some(h) = options.hill_climb {
        cfg.hill_climb = h;
    }
    let ga_options = cfg.ga_options().map_err(in_file)?;
    if let Some(lmc) = cfg.lmc.filter(|&l| l > MAX_LMC) {
        bail!(
            "{}: evolve.lmc: {lmc} is above InfiniBand's largest LMC, {MAX_LMC}",
            path.display()
        );
    }
    let topo = loaded.build_topology()?;
    if p.traffic.is_empty() {
        bail!(
            "{}: traffic: at least one [[traffic]] table (the training pattern) is required",
            path.display()
        );
    }
    // Every pair has at least its DOR path: refused before the traffic is read if even that
    // is too many; checked again below with the training pairs' candidates.
    check_table_search_size(&topo, cfg.bits.min(MAX_BITS), 0).map_err(in_file)?;
    let params = p.simulation.resolve().map_err(in_file)?;
    let traffic = loaded.build_traffic(&topo, &params)?;
    let memory = crate::sim::machine_memory();
    params.check_traffic(&traffic).map_err(in_file)?;
    if let Some(ioq) = &params.ioq {
        crate::sim::check_router(ioq, &topo).map_err(in_file)?;
    }
    let mut baseline_cfg = p
        .routing
        .clone()
        .unwrap_or_else(|| crate::routing::RoutingConfig::new("dor"));
    baseline_cfg.apply_preset(&params.preset, &topo);
    let baseline = build_routing(&baseline_cfg, &topo, params.num_vcs).map_err(in_file)?;
    // Before the GA; the evolved tables keep no state, so what holds for the baseline holds
    // for them.
    crate::sim::check_partitions(&topo, baseline.as_ref(), &params).map_err(in_file)?;
    // The baseline, and the elite when asked, are simulated one load point at a time: refused
    // now, before the GA, if one point cannot fit in this machine's memory.
    if let Some(memory) = memory {
        crate::sim::check_memory(&topo, &params, 1, memory).map_err(in_file)?;
    }
    let demands: Vec<RouterDemand> = normalised_demands(
        &topo,
        (0..p.traffic.len())
            .map(|c| RouterDemand::from_aggregated(traffic.aggregated_demand(c, &topo)))
            .collect(),
    );
    let trained = trained_pairs(&demands);
    let trained_count = trained.iter().filter(|&&t| t).count();
    check_table_search_size(&topo, cfg.bits.min(MAX_BITS), trained_count).map_err(in_file)?;
    let stage = Stage::new(options.progress);
    stage.set("candidate paths");
    let mut cands: CandidateSet = generate_candidates_for(
        &topo,
        &CandidateOptions {
            bits: cfg.bits,
            seed: p.seed,
            // Consider as many k-shortest paths as there are candidate slots.
            yen_k: 1 << cfg.bits,
            ..CandidateOptions::default()
        },
        Some(&trained),
    )
    .map_err(in_file)?;
    let bounds_start = std::time::Instant::now();
    // The paths of an optimal fractional routing, per pattern: they become candidates (so the
    // candidates can reach the all-routings optimum) and the pattern's all-routings bound.
    stage.set("column generation (all-routings LP)");
    let colgen: Vec<Option<ColumnGeneration>> = if cfg.destination_based {
        vec![None; demands.len()]
    } else {
        demands
            .iter()
            .map(|d| {
                column_generation_fits(&topo, d)
                    .then(|| {
                        column_generation(&topo, d, Some(&cands), &ColumnGenOptions::default())
                    })
                    .transpose()
            })
            .collect::<crate::Result<_>>()
            .map_err(in_file)?
    };
    let mut colgen_seconds = bounds_start.elapsed().as_secs_f64();
    // One path per trained pair by negotiated congestion over all paths, started from each
    // pair's largest LP share (or its DOR path): it reaches integral arrangements the LP's
    // paths and the GA's moves miss (one flow per channel on the 4x4x4 transpose).
    stage.set("negotiated congestion");
    let mut preferred = lp_preferences(&colgen);
    let mut negotiated_max = None;
    if !cfg.destination_based {
        let pairs: Vec<usize> = (0..trained.len()).filter(|&p| trained[p]).collect();
        let start: Vec<RouterPath> = pairs
            .iter()
            .map(|&pair| {
                // The largest share in the first pattern with the pair, else DOR.
                colgen
                    .iter()
                    .flatten()
                    .find_map(|cg| {
                        let i = cg.paths.binary_search_by_key(&pair, |(p, _)| *p).ok()?;
                        cg.paths[i].1.first().map(|s| s.path.clone())
                    })
                    .unwrap_or_else(|| cands.candidate(pair, 0).into_owned())
            })
            .collect();
        let combined = combined_demand(&demands);
        let targets = load_targets(&demands, &combined, cfg.aggregate);
        // From the LP's paths and from DOR's: where negotiation ends depends on its start
        // (which of the LP's many optimal solutions the solver returns, among others), so
        // both are tried and the lower maximum kept (the LP's on a tie).
        let dor_start: Vec<RouterPath> = pairs
            .iter()
            .map(|&pair| cands.candidate(pair, 0).into_owned())
            .collect();
        // The two runs are independent and sequential inside: one core each.
        let runs: Vec<(Vec<RouterPath>, f64)> = vec![start, dor_start]
            .into_par_iter()
            .enumerate()
            .map(|(i, start)| {
                let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(
                    run_seed(p.seed, 1 + i),
                );
                negotiate_paths(&topo, &targets, &pairs, start, NEGOTIATION_ROUNDS, &mut rng)
            })
            .collect();
        let (paths, max) = runs
            .into_iter()
            .reduce(|a, b| if b.1 < a.1 * (1.0 - 1e-9) { b } else { a })
            .expect("two starts");
        // The negotiated path goes first among each pair's preferred candidates.
        for (pair, path) in pairs.into_iter().zip(paths) {
            preferred.entry(pair).or_default().insert(0, path);
        }
        negotiated_max = Some(max);
    }
    let negotiation_seconds = bounds_start.elapsed().as_secs_f64() - colgen_seconds;
    let (lp_candidates_added, seed_choice) = add_preferred(&mut cands, &preferred);
    let candidates_per_pair = cands.per_pair();
    // The candidate set moves into the problem (on a 32x32 mesh it is 700 MB, most of it the
    // untrained pairs' DOR paths); a destination-based search keeps it here for its bound.
    let mut kept_cands = None;
    let problem = if cfg.destination_based {
        kept_cands = Some(cands);
        RoutingTableProblem::destination_based(topo.clone(), demands, cfg.operators())
    } else {
        let problem =
            RoutingTableProblem::with_candidates(topo.clone(), cands, demands, cfg.operators())?;
        // Seed the population with the negotiated paths (or the largest LP shares).
        let genes = problem.gene_pairs().unwrap_or_default();
        let seed: Vec<u8> = genes
            .iter()
            .map(|pair| seed_choice.get(pair).copied().unwrap_or(0))
            .collect();
        problem.with_seed_genome(seed)
    }
    .map_err(in_file)?;
    // LMC export: the search evaluates every table fitted to 2^lmc trees per destination, the
    // first DOR's (the table of the all-zero genome).
    let problem = match cfg.lmc {
        Some(lmc) => {
            let base = problem.unfitted_table(&problem.dor_genome());
            let fitter = LmcFitter::new(&base, lmc).map_err(in_file)?;
            problem.with_lmc(fitter)
        }
        None => problem,
    };
    crate::search::config::check_population_memory(
        "evolve.population",
        cfg.population,
        problem.num_genes(),
    )
    .map_err(in_file)?;
    let name = p.name.clone().unwrap_or_else(|| topo.name.clone());
    let out_dir = options
        .out
        .clone()
        .unwrap_or_else(|| Path::new("populations").join(format!("{name}-evolve")));
    check_output_dir("--out", &out_dir)?;
    let settings = RunSettings {
        algorithm: AlgorithmName::Ga,
        population: cfg.population,
        termination: Termination::Generations(cfg.generations),
        seed: run_seed(p.seed, 0),
        reference_point: problem.reference_point(),
        checkpoint_dir: (!options.no_checkpoint).then(|| out_dir.join("ga-run0")),
        resume: options.resume,
        force: options.force,
        // Everything the run and its table depend on, after defaults and overrides.
        config: json!({
            "name": p.name,
            "seed": p.seed,
            "topology": p.topology,
            "routing": p.routing,
            "traffic": p.traffic,
            "simulation": p.simulation,
            "evolve": cfg,
        }),
        progress: options.progress,
        label: "GA".into(),
        archive_limit: Some(0),
        ga: ga_options,
    };
    // The candidate LP (one Clarabel thread, 45 s on a 32x32 mesh) runs beside the GA: the
    // candidates are final now.
    stage.finish();
    // The GA on this thread, which under MPI is the one that may call it (src/cluster/).
    let (outcome, cand_bounds) = std::thread::scope(|scope| {
        let lp = scope.spawn(|| -> crate::Result<(Vec<Bound>, f64)> {
            let start = std::time::Instant::now();
            // Under MPI only rank 0 reports it: the other ranks leave their cores to the GA.
            if !candidate_lp_fits(&topo) || !crate::cluster::is_root() {
                return Ok((Vec::new(), 0.0));
            }
            let cands = problem
                .candidates()
                .or(kept_cands.as_ref())
                .expect("the problem or the pipeline holds the candidates");
            let bounds = problem
                .demands()
                .iter()
                .map(|d| candidate_bound(&topo, cands, d))
                .collect::<crate::Result<_>>()?;
            Ok((bounds, start.elapsed().as_secs_f64()))
        });
        let outcome = run(&problem, &settings);
        (
            outcome,
            lp.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        )
    });
    let outcome = outcome?;
    let (cand_bounds, cand_seconds) = cand_bounds.map_err(in_file)?;
    colgen_seconds += cand_seconds;

    // The elite: distinct genomes of the final population, best analytical fitness first.
    let order = ga::ranking(&outcome.population);
    let mut elite: Vec<&Vec<u8>> = Vec::new();
    for &i in &order {
        let g = &outcome.population[i].genome;
        if !elite.contains(&g) {
            elite.push(g);
        }
        if elite.len() >= cfg.simulate_elite.max(1) {
            break;
        }
    }
    let loads: Vec<f64> = if cfg.training_loads.is_empty() {
        vec![traffic.nominal_load(0)]
    } else {
        cfg.training_loads.clone()
    };
    // Checked only when tables are simulated (the VC classes matter nowhere else).
    let classes = if cfg.simulate_elite > 0 {
        TableClasses::resolve(&topo, params.num_vcs, None, None, None).map_err(in_file)?
    } else {
        TableClasses::defaults(&topo, params.num_vcs)
    };
    let table_routing = |table: RoutingTable| -> Result<TableRouting> {
        Ok(TableRouting::new(
            &topo,
            table,
            TableMode::Hierarchy(classes.clone()),
        )?)
    };
    let mut best_index = 0;
    let mut elite_sims: Vec<Vec<Simulated>> = Vec::new();
    if cfg.simulate_elite > 0 {
        // Every (table, load) point is one task for the threads and ranks; each builds its
        // table, so that only the tables being simulated are in memory.
        let points: Vec<(usize, f64)> = (0..elite.len())
            .flat_map(|i| loads.iter().map(move |&load| (i, load)))
            .collect();
        let simulated = crate::cluster::map("elite simulation", &points, |&(i, load)| {
            let routing = table_routing(problem.table(elite[i])).map_err(|e| format!("{e:#}"))?;
            simulate_at(&topo, &routing, &traffic, &params, p.seed, load)
                .map_err(|e| format!("{e:#}"))
        });
        let mut simulated = simulated.into_iter();
        for _ in &elite {
            elite_sims.push(
                simulated
                    .by_ref()
                    .take(loads.len())
                    .collect::<std::result::Result<_, _>>()
                    .map_err(anyhow::Error::msg)?,
            );
        }
        // The simulation chooses among the elite tables with the best max channel load only:
        // that load is a guarantee (the table's throughput bound), a latency at one training
        // load is not, and a table loaded into switches must not give up throughput for it
        // (on the 8x8 torus tornado the lowest-latency elite had 3 flows on a channel where
        // the best has 2).
        let elite_loads: Vec<f64> = elite
            .iter()
            .map(|g| {
                cfg.aggregate
                    .apply(&problem.pattern_loads(&problem.table(g)))
            })
            .collect();
        let least = elite_loads.iter().copied().fold(f64::INFINITY, f64::min);
        best_index = (0..elite.len())
            .filter(|&i| elite_loads[i] <= least * (1.0 + 1e-9))
            .min_by(|&a, &b| {
                simulated_cost(&elite_sims[a]).total_cmp(&simulated_cost(&elite_sims[b]))
            })
            .unwrap_or(0);
    }
    let best_genome = elite[best_index].clone();
    let best_table = problem.table(&best_genome);
    let dor_table = problem.table(&problem.dor_genome());
    // With LMC the tables above are fitted to the trees; the report keeps the unfitted load
    // beside it, and the trees and LID offsets are rebuilt for the export.
    let lmc = match cfg.lmc {
        Some(lmc) => {
            let unfitted = problem.unfitted_table(&best_genome);
            let unconstrained = cfg.aggregate.apply(&problem.pattern_loads(&unfitted));
            let base = problem.unfitted_table(&problem.dor_genome());
            let (fitted, asg, rerouted) =
                constrain(&topo, &unfitted, &base, lmc).map_err(in_file)?;
            if fitted != best_table {
                bail!("internal error: the LMC fitting of the best table is not reproducible");
            }
            Some((asg, rerouted, unconstrained))
        }
        None => None,
    };
    let best_loads = problem.pattern_loads(&best_table);
    let dor_loads = problem.pattern_loads(&dor_table);
    let best_load = cfg.aggregate.apply(&best_loads);
    let dor_load = cfg.aggregate.apply(&dor_loads);

    let stage = Stage::new(options.progress);
    stage.set("all-routings bound");
    let bounds_start = std::time::Instant::now();
    let all_bounds: Vec<Bound> = problem
        .demands()
        .iter()
        .zip(&colgen)
        .map(|(d, cg)| match cg {
            // The exact edge LP where it is cheap; the column generation's certified bound
            // where it ran; otherwise `routing_bound` picks.
            Some(cg) if topo.num_routers() > EXACT_ROUTER_LIMIT => {
                crate::bounds::tighten(&topo, d, cg.bound.clone(), cg.upper)
            }
            _ => routing_bound(&topo, d),
        })
        .collect::<crate::Result<_>>()
        .map_err(in_file)?;
    colgen_seconds += bounds_start.elapsed().as_secs_f64();
    // Above the channel limit the candidate LP is not solved (its interior point is cubic in
    // the channels, like the column generation's master): every candidate table is a
    // routing, so the all-routings lower bound bounds it too, and the best table found is
    // achievable, which brackets the candidate LP's optimum.
    let cand_bounds = if cand_bounds.is_empty() {
        all_bounds
            .iter()
            .zip(&best_loads)
            .map(|(b, &best)| {
                Bound::new(
                    b.max_load,
                    BoundKind::Approximate {
                        gap: (best / b.max_load - 1.0).max(0.0),
                    },
                    format!(
                        "the all-routings lower bound ({}; the candidate LP is not solved above \
                         {COLGEN_CHANNEL_LIMIT} channels)",
                        b.method
                    ),
                )
            })
            .collect()
    } else {
        cand_bounds
    };
    let (lp_bound, _, _) = combine(&cand_bounds, cfg.aggregate);
    let (any_lp_bound, _, _) = combine(&all_bounds, cfg.aggregate);
    let round = |bounds: &[Bound]| -> Vec<Bound> {
        bounds
            .iter()
            .zip(problem.demands())
            .map(|(b, d)| single_path_bound(&topo, d, b))
            .collect()
    };
    let (bound, bound_exact, bound_method) = combine(&round(&cand_bounds), cfg.aggregate);
    let (any_bound, any_exact, any_method) = combine(&round(&all_bounds), cfg.aggregate);
    let any_gap = all_bounds
        .iter()
        .filter_map(|b| match b.kind {
            BoundKind::Approximate { gap } => Some(gap),
            BoundKind::Exact => None,
        })
        .reduce(f64::max);

    stage.set("simulating the baseline");
    let baseline_sim = simulate(&topo, baseline.as_ref(), &traffic, &params, p.seed, &loads)?;
    let best_sim = if cfg.simulate_elite > 0 {
        elite_sims[best_index].clone()
    } else {
        Vec::new()
    };

    // On its own (one VC, no hierarchy) the table is deadlock-free iff its channel
    // dependencies are acyclic; the hierarchy makes it safe either way.
    let cycle = crate::routing::table::deps::is_deadlock_free_single_vc(&topo, &best_table).err();

    stage.set("dependency check and exports");
    // Exports of the best table.
    std::fs::create_dir_all(&out_dir).map_err(|e| crate::Error::io(&out_dir, e))?;
    let mut meta = TableMetadata {
        topology: topo.name.clone(),
        ..Default::default()
    };
    for (k, v) in [
        ("algorithm", json!("ga")),
        ("problem", json!(name)),
        ("seed", json!(p.seed)),
        ("max_channel_load", json!(best_load)),
        ("dor_max_channel_load", json!(dor_load)),
        ("candidate_bound", json!(bound)),
        ("routing_bound", json!(any_bound)),
        ("vc_classes", json!(format!("{classes:?}"))),
    ] {
        meta.metadata.insert(k.into(), v);
    }
    let mut formats = vec![RoutesFormat::Json];
    let mut skipped = Vec::new();
    // The per-pair CSV and path list grow with pairs x hops: above FULL_FILE_PAIRS they are
    // tens of GB, so they are left to `routes export` (best.json is the compact form).
    let pairs = best_table.num_pairs();
    for f in [RoutesFormat::Csv, RoutesFormat::Paths] {
        if pairs <= FULL_FILE_PAIRS {
            formats.push(f);
        } else {
            skipped.push(format!(
                "best.{ext}: {pairs} router pairs (over {FULL_FILE_PAIRS}); `fabricopt routes \
                 export PROBLEM --table best.json --format {ext} --output best.{ext}` writes it",
                ext = f.extension()
            ));
        }
    }
    if best_table.is_destination_based() {
        formats.push(RoutesFormat::Lft);
    }
    let mut written = Vec::new();
    for f in formats {
        let file = out_dir.join(format!("best.{}", f.extension()));
        write_routes(&topo, &best_table, &meta, f, &file)?;
        written.push(file.display().to_string());
    }
    // A table with a cyclic dependency on one VL is exported with the VL (SL) assignment that
    // makes it deadlock-free, checked like `routes check` would; one that needs more VLs than
    // InfiniBand has gets none, and the report says so.
    let vl_assignment = if cycle.is_some() {
        assign_vls(&topo, &best_table, MAX_VLS)
    } else {
        None
    };
    let lmc_report = write_lmc_files(&topo, &best_table, lmc.as_ref(), &out_dir, &mut written)
        .map_err(in_file)?;
    write_sl_files(
        &topo,
        &best_table,
        vl_assignment.as_ref(),
        &out_dir,
        &mut written,
    )?;
    // The table by itself, as a fabric would run it: every pair on its VL (or all on every
    // VC when one VL is deadlock-free), no adaptive or escape fallback. It needs as many VCs
    // as VLs; with fewer, or without a VL assignment, it is not simulated.
    let alone_mode = match (&vl_assignment, cycle.is_none()) {
        (_, true) => Some(TableMode::Plain),
        (Some(v), false) if v.num_vls <= params.num_vcs => Some(TableMode::Layered(v.sl.clone())),
        _ => None,
    };
    let simulated_alone = match alone_mode {
        Some(mode) if cfg.simulate_elite > 0 => {
            let routing = TableRouting::new(&topo, best_table.clone(), mode)?;
            simulate(&topo, &routing, &traffic, &params, p.seed, &loads)?
        }
        _ => Vec::new(),
    };

    stage.finish();
    let kind = |exact: bool| if exact { "exact" } else { "approximate" };
    Ok(EvolveReport {
        problem: name,
        seed: p.seed,
        generations: outcome.generations,
        evaluations: outcome.evaluations,
        seconds: outcome.elapsed.as_secs_f64(),
        genome: if cfg.destination_based {
            "destination-based"
        } else {
            "candidate paths"
        },
        candidates_per_pair,
        trained_pairs: trained_count,
        untrained_pairs: trained.len() - trained_count,
        lp_candidates_added,
        negotiated_max_channel_load: negotiated_max,
        negotiation_seconds,
        column_generation: colgen
            .iter()
            .flatten()
            .map(|cg| ColumnGenerationReport {
                rounds: cg.rounds,
                paths: cg.columns,
                lower: cg.bound.max_load,
                upper: cg.upper,
                paths_upper: cg.paths_upper,
                gap: match cg.bound.kind {
                    BoundKind::Approximate { gap } => gap,
                    BoundKind::Exact => 0.0,
                },
                seconds: cg.seconds,
            })
            .collect(),
        max_channel_load: best_load,
        max_channel_load_per_pattern: best_loads,
        throughput_bound: 1.0 / best_load,
        baseline_max_channel_load: dor_load,
        baseline_max_channel_load_per_pattern: dor_loads,
        candidate_bound: bound,
        candidate_bound_kind: kind(bound_exact),
        candidate_bound_method: bound_method,
        candidate_bound_lp_relaxation: lp_bound,
        fraction_of_candidate_bound: bound / best_load,
        routing_bound: any_bound,
        routing_bound_kind: kind(any_exact),
        routing_bound_gap: any_gap,
        routing_bound_method: any_method,
        routing_bound_lp_relaxation: any_lp_bound,
        fraction_of_bound: any_bound / best_load,
        bounds_seconds: colgen_seconds,
        deadlock_free_alone: cycle.is_none(),
        lmc: lmc_report,
        vls_needed: if cycle.is_none() {
            Some(1)
        } else {
            vl_assignment.as_ref().map(|v| v.num_vls)
        },
        dependency_cycle: cycle.map(|c| c.iter().map(|vc| vc.channel).collect()),
        simulated_loads: loads,
        simulated: best_sim,
        baseline_simulated: baseline_sim,
        simulated_alone,
        elite_simulated_costs: elite_sims.iter().map(|s| simulated_cost(s)).collect(),
        history: outcome
            .history
            .iter()
            .map(|r| HistoryPoint {
                generation: r.generation,
                best: settings.reference_point[0] - r.hypervolume,
            })
            .collect(),
        exports: written,
        exports_skipped: skipped,
    })
}
