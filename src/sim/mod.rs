//! The cycle-accurate flit-level simulator: configuration, engine, statistics and load sweeps.
//! The timing model is documented in docs/simulator.md.

pub mod config;
pub mod engine;
pub mod network;
mod router_config;
pub mod stats;

use std::time::Instant;

use serde::Serialize;

pub use config::{
    AllocatorKind, IoqParams, RouterKind, SimConfig, SimParams, Switching, VcAllocatorKind,
    XbarArbitration,
};
pub(crate) use engine::{Counters, DeadlockReport};
pub use engine::{Engine, RunEnd};
pub(crate) use router_config::check_topology as check_router;
pub(crate) use stats::{ClassStats, TimelineWindow};

use crate::error::Result;
use crate::routing::RoutingFunction;
use crate::topology::Topology;
use crate::traffic::Traffic;

/// How a load point ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointStatus {
    /// Every measured packet arrived, no saturation criterion fired.
    #[default]
    Ok,
    /// A saturation criterion fired (`saturation_reason`); the figures describe an unstable
    /// network.
    Saturated,
    /// Packets can never move again (`deadlock`); the figures are not a throughput.
    Deadlock,
}

/// The result of simulating one offered load.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct LoadPoint {
    /// Offered load asked for (flits per terminal per cycle, class 0's `load`).
    pub load: f64,
    /// Measured offered load (flits created per terminal per cycle during the window).
    pub offered: f64,
    /// Flits per terminal per cycle the sources could not create during the window because a
    /// bounded source queue (`source_queue`) was full: the network did not take them.
    #[serde(default)]
    pub dropped: f64,
    pub accepted: f64,
    pub accepted_ci95: Option<f64>,
    pub latency_avg: f64,
    pub latency_ci95: Option<f64>,
    pub latency_p50: f64,
    pub latency_p95: f64,
    pub latency_p99: f64,
    pub latency_max: f64,
    #[serde(default)]
    pub latency_sd: f64,
    pub network_latency_avg: f64,
    pub network_latency_p99: f64,
    #[serde(default)]
    pub network_latency_max: f64,
    #[serde(default)]
    pub network_latency_sd: f64,
    /// Router-to-router channels crossed per measured packet.
    pub hops_avg: f64,
    /// Routers crossed per measured packet (`hops_avg + 1`; BookSim2's hop count).
    #[serde(default)]
    pub router_hops_avg: f64,
    /// `ok`, `saturated` or `deadlock`.
    #[serde(default)]
    pub status: PointStatus,
    /// Stable: status `ok` and accepted >= 0.97 x (offered + dropped) (see
    /// [`STABLE_ACCEPTED`]).
    #[serde(default)]
    pub stable: bool,
    /// A saturation criterion fired (status `saturated`; a deadlock is not saturation).
    pub saturated: bool,
    /// Why the point counts as saturated (null when it does not).
    pub saturation_reason: Option<String>,
    /// Status `deadlock`: the stuck VCs and a wait-for cycle among them.
    pub deadlock: Option<DeadlockReport>,
    pub classes: Vec<ClassStats>,
    pub cycles: u64,
    pub flit_hops: u64,
    /// Seconds of the whole point: engine construction, pre-training runs and the run.
    pub wall_seconds: f64,
    /// Seconds the measured run's engine took to build (part of `wall_seconds`); 0 when read
    /// from a file written before it was recorded, so that older results still load.
    #[serde(default)]
    pub setup_seconds: f64,
    pub counters: Counters,
    /// Latency per `timeline_window` cycles over the measured run (when asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineWindow>,
    /// A learned routing's own report of the measured run (decisions, rewards, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_report: Option<serde_json::Value>,
}

/// Simulates one load point (the traffic already carries its load).
pub fn simulate_point(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    traffic: Traffic,
    params: &config::SimParams,
    seed: u64,
    load: f64,
) -> LoadPoint {
    if params.partitions > 1 {
        return simulate_point_partitioned(topo, routing, &traffic, params, seed, load);
    }
    // The router model is a type parameter of the engine (no dynamic call per flit).
    match params.ioq {
        None => simulate_point_on::<engine::InputQueuedRouter>(
            topo, routing, traffic, params, seed, load,
        ),
        Some(_) => {
            simulate_point_on::<engine::IoQueuedRouter>(topo, routing, traffic, params, seed, load)
        }
    }
}

fn simulate_point_on<R: engine::RouterModel>(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    traffic: Traffic,
    params: &config::SimParams,
    seed: u64,
    load: f64,
) -> LoadPoint {
    let start = Instant::now();
    // Pre-training: the same workload (same seed) again and again, the routing session
    // carried from one run to the next; only the last run is measured.
    let mut session = None;
    for _ in 0..params.pretrain_runs {
        let mut engine = engine_for::<R>(topo, routing, session.take(), &traffic, params, seed);
        engine.run();
        session = Some(engine.into_session());
    }
    if params.freeze_after_pretrain {
        if let Some(s) = &mut session {
            s.set_learning(false);
        }
    }
    let built = Instant::now();
    let mut engine = engine_for::<R>(topo, routing, session, &traffic, params, seed);
    let setup_seconds = built.elapsed().as_secs_f64();
    if params.timeline_window > 0 {
        engine.enable_timeline(params.timeline_window);
    }
    let end = engine.run();
    let wall_seconds = start.elapsed().as_secs_f64();
    let timeline = engine.take_timeline();
    let routing_report = engine.session().report();
    let measured = Measured {
        end,
        cycles: engine.now(),
        counters: engine.counters.clone(),
        stats: &engine.stats,
        wall_seconds,
        setup_seconds,
    };
    LoadPoint {
        timeline,
        routing_report,
        ..measured.point(topo, params, load)
    }
}

/// [`simulate_point`] on the parallel engine (`params.partitions` > 1, checked by
/// [`check_partitions`]).
fn simulate_point_partitioned(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    traffic: &Traffic,
    params: &config::SimParams,
    seed: u64,
    load: f64,
) -> LoadPoint {
    let start = Instant::now();
    let mut run = engine::run_partitioned(topo, routing, traffic, params, seed, params.partitions)
        .unwrap_or_else(|e| panic!("partitions checked by sim::check_partitions: {e}"));
    let timeline = std::mem::take(&mut run.timeline);
    let point = Measured {
        end: run.end,
        cycles: run.now,
        counters: run.counters,
        stats: &run.stats,
        wall_seconds: start.elapsed().as_secs_f64(),
        setup_seconds: run.setup_seconds,
    }
    .point(topo, params, load);
    LoadPoint { timeline, ..point }
}

/// What a finished run measured, whichever engine ran it.
struct Measured<'s> {
    end: RunEnd,
    cycles: u64,
    counters: engine::Counters,
    stats: &'s stats::Collector,
    wall_seconds: f64,
    setup_seconds: f64,
}

impl Measured<'_> {
    /// The load point (no timeline or routing report: the caller adds them).
    fn point(self, topo: &Topology, params: &config::SimParams, load: f64) -> LoadPoint {
        let Measured {
            end,
            cycles,
            counters,
            stats,
            wall_seconds,
            setup_seconds,
        } = self;
        let (classes, all) = stats.summarize(topo.num_terminals());
        let (mut status, mut reason, deadlock) = match end {
            RunEnd::Completed => (PointStatus::Ok, None, None),
            RunEnd::Saturated(why) => (PointStatus::Saturated, Some(why), None),
            RunEnd::Deadlock(d) => (PointStatus::Deadlock, None, Some(d)),
        };
        if status == PointStatus::Ok && all.latency.avg > params.latency_limit {
            status = PointStatus::Saturated;
            reason = Some(format!(
                "average latency {:.1} cycles exceeds the limit {}",
                all.latency.avg, params.latency_limit
            ));
        }
        // What the sources asked for: created plus refused at full source queues.
        let asked = all.offered + all.dropped;
        let stable = status == PointStatus::Ok && all.accepted >= STABLE_ACCEPTED * asked;
        LoadPoint {
            load,
            offered: all.offered,
            dropped: all.dropped,
            accepted: all.accepted,
            accepted_ci95: all.accepted_ci95,
            latency_avg: all.latency.avg,
            latency_ci95: all.latency.ci95,
            latency_p50: all.latency.p50,
            latency_p95: all.latency.p95,
            latency_p99: all.latency.p99,
            latency_max: all.latency.max,
            latency_sd: all.latency.sd,
            network_latency_avg: all.network_latency.avg,
            network_latency_p99: all.network_latency.p99,
            network_latency_max: all.network_latency.max,
            network_latency_sd: all.network_latency.sd,
            hops_avg: all.hops_avg,
            router_hops_avg: if all.packets > 0 {
                all.hops_avg + 1.0
            } else {
                0.0
            },
            status,
            stable,
            saturated: status == PointStatus::Saturated,
            saturation_reason: reason,
            deadlock,
            classes,
            cycles,
            flit_hops: counters.flit_hops,
            wall_seconds,
            setup_seconds,
            counters,
            timeline: Vec::new(),
            routing_report: None,
        }
    }
}

/// A fresh engine, or one that goes on with an earlier run's routing session.
fn engine_for<'a, R: engine::RouterModel>(
    topo: &'a Topology,
    routing: &'a dyn RoutingFunction,
    session: Option<Box<dyn crate::routing::RoutingSession + 'a>>,
    traffic: &Traffic,
    params: &config::SimParams,
    seed: u64,
) -> Engine<'a, R> {
    let session = session.unwrap_or_else(|| engine::default_session(routing, seed));
    Engine::build(topo, session, traffic.clone(), params.clone(), seed)
}

/// Simulates every load in parallel (rayon threads and, under MPI, ranks: `cluster::map`);
/// each point has its own engine and seed stream, so results depend on neither the thread
/// nor the rank count. With `partitions > 1` under MPI, each load is instead split over the
/// ranks (the partitioned engine), one load after another. `on_point` is called for the
/// points this process simulates.
pub fn sweep(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    traffic: &Traffic,
    params: &config::SimParams,
    seed: u64,
    loads: &[f64],
    on_point: &(dyn Fn() + Sync),
) -> Result<Vec<LoadPoint>> {
    let traffics: Vec<Traffic> = loads
        .iter()
        .map(|&l| traffic.with_load(0, l))
        .collect::<Result<_>>()?;
    let points: Vec<(Traffic, f64)> = traffics.into_iter().zip(loads.iter().copied()).collect();
    let point = |(t, load): &(Traffic, f64)| {
        let p = simulate_point(topo, routing, t.clone(), params, seed, *load);
        on_point();
        p
    };
    if params.partitions > 1 {
        if let Some(size) = crate::cluster::ranks_in_step().map(|r| r.place().size) {
            // Each simulation is split over the ranks (the partitioned engine under MPI),
            // so the loads run one after another, every rank taking part in each.
            if params.partitions < size {
                return Err(crate::Error::field(
                    "simulation.partitions",
                    format!(
                        "{} partitions for a job of {size} MPI ranks: under MPI each \
                         simulation is split over the ranks, so it needs at least one \
                         partition per rank (or partitions = 1, to spread the loads over the \
                         ranks instead)",
                        params.partitions
                    ),
                ));
            }
            return Ok(points.iter().map(point).collect());
        }
    }
    Ok(crate::cluster::map("simulation sweep", &points, point))
}

/// Bytes one simulation may need for `topo` under `params`: per input VC its record, its
/// output VC, route candidate and buffer (8 bytes a flit, in blocks of 4), plus per-port and
/// per-terminal state. Packets in flight and queued come on top. The buffers are allocated up
/// front but take memory only where written (`channels::empty_flit_slots`): a saturated
/// network fills every one, so this is what a run must be able to reach, not what a light
/// load uses. In the parallel engine each partition writes only its own routers' VC state
/// (engine/tables.rs), so that counts once; the per-port and per-terminal tables are whole
/// in every partition.
pub(crate) fn engine_bytes(topo: &Topology, params: &SimParams) -> u128 {
    let router_ports: u128 = topo.routers.iter().map(|r| r.ports.len() as u128).sum();
    let terminals = topo.num_terminals() as u128;
    let ports = router_ports + terminals;
    let vcs = ports * params.num_vcs as u128;
    let depth = u128::from(params.vc_depth).div_ceil(4) * 4;
    let partitions = params.partitions.max(1) as u128;
    vcs * (64 + 8 * depth) + partitions * (ports * 64 + terminals * 256)
}

/// The machine's physical memory in bytes (Linux `/proc/meminfo`; None elsewhere).
pub(crate) fn machine_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuses a simulation whose `concurrent` engines (load points run in parallel) would need
/// more than `memory` bytes (the machine's, see [`machine_memory`]) for their buffers alone,
/// before any is built: otherwise the run dies of an allocation failure, or swaps for hours.
pub(crate) fn check_memory(
    topo: &Topology,
    params: &SimParams,
    concurrent: usize,
    memory: u128,
) -> Result<()> {
    let one = engine_bytes(topo, params);
    let all = one * concurrent.max(1) as u128;
    if all <= memory {
        return Ok(());
    }
    let gib = |b: u128| b as f64 / f64::from(1u32 << 30);
    Err(crate::Error::field(
        "simulation.vc_depth",
        format!(
            "a load point on {} needs up to {:.1} GiB for its buffers when they fill ({} VCs \
             of {} flits, {} partition(s)) and {concurrent} run at once: more than this \
             machine's {:.1} GiB; \
             lower vc_depth, num_vcs or partitions, use a smaller topology or run fewer loads \
             at once (RAYON_NUM_THREADS)",
            topo.name,
            gib(one),
            topo.routers.iter().map(|r| r.ports.len()).sum::<usize>() * params.num_vcs,
            params.vc_depth,
            params.partitions,
            gib(memory),
        ),
    ))
}

/// What `[simulation] partitions` > 1 needs of the routing and topology (the parallel engine,
/// engine/parallel.rs): a routing whose session can be split, and at most one partition per
/// router. Every caller of [`simulate_point`] checks this first.
pub(crate) fn check_partitions(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    params: &SimParams,
) -> Result<()> {
    if params.partitions <= 1 {
        return Ok(());
    }
    if let Some(why) = engine::default_session(routing, 0).partition_obstacle() {
        return Err(crate::Error::field(
            "simulation.partitions",
            format!(
                "routing `{}` cannot run in the parallel engine (partitions > 1): {why}; it \
                 runs on one thread (partitions = 1), and sweeps still run their load points \
                 in parallel",
                routing.name()
            ),
        ));
    }
    if params.partitions > topo.num_routers() {
        return Err(crate::Error::field(
            "simulation.partitions",
            format!(
                "{} partitions for {} routers: at most one partition per router",
                params.partitions,
                topo.num_routers()
            ),
        ));
    }
    Ok(())
}

/// A load point is stable when it ran to completion and accepted at least this share of what
/// was offered.
pub(crate) const STABLE_ACCEPTED: f64 = 0.97;

/// What a sweep says about saturation (docs/formats.md, "simulate --json").
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SweepSummary {
    /// Accepted throughput at the highest offered load that is still stable, when a point at
    /// a higher load is not (saturation lies between the two loads); null when every point
    /// is stable (saturation not reached) or none is.
    pub saturation_throughput: Option<f64>,
    /// The load of that point, and the lowest load above it that is not stable.
    pub saturation_load: Option<f64>,
    pub first_unstable_load: Option<f64>,
    /// Highest accepted throughput of any point that did not deadlock (overload points
    /// included: what the network delivers past saturation).
    pub max_accepted: Option<f64>,
    /// Loads whose point deadlocked.
    pub deadlocked_loads: Vec<f64>,
}

impl SweepSummary {
    pub fn of(points: &[LoadPoint]) -> Self {
        let mut order: Vec<&LoadPoint> = points.iter().collect();
        order.sort_by(|a, b| a.load.total_cmp(&b.load));
        let best_stable = order.iter().rev().find(|p| p.stable);
        let unstable_above = best_stable.and_then(|b| {
            order
                .iter()
                .find(|p| p.load > b.load && !p.stable)
                .map(|p| p.load)
        });
        let (saturation_throughput, saturation_load) = match (best_stable, unstable_above) {
            (Some(b), Some(_)) => (Some(b.accepted), Some(b.load)),
            _ => (None, None),
        };
        SweepSummary {
            saturation_throughput,
            saturation_load,
            first_unstable_load: order.iter().find(|p| !p.stable).map(|p| p.load),
            max_accepted: order
                .iter()
                .filter(|p| p.status != PointStatus::Deadlock)
                .map(|p| p.accepted)
                .max_by(f64::total_cmp),
            deadlocked_loads: order
                .iter()
                .filter(|p| p.status == PointStatus::Deadlock)
                .map(|p| p.load)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyConfig;

    #[test]
    fn runs_larger_than_the_memory_are_refused() {
        let topo = TopologyConfig::parse_spec("mesh:4x4")
            .unwrap()
            .build(std::path::Path::new("."), 1)
            .unwrap();
        let params = SimConfig::default().resolve().unwrap();
        // 16 routers x 5 ports + 16 terminals = 96 ports, 4 VCs of 8 flits each.
        let one = engine_bytes(&topo, &params);
        assert_eq!(one, 96 * 4 * (64 + 64) + 96 * 64 + 16 * 256);
        // Partitions share out the VC state; each has its own per-port and terminal tables.
        let four = SimParams {
            partitions: 4,
            ..params.clone()
        };
        assert_eq!(
            engine_bytes(&topo, &four),
            96 * 4 * (64 + 64) + 4 * (96 * 64 + 16 * 256)
        );
        assert!(check_memory(&topo, &params, 2, 2 * one).is_ok());
        let err = check_memory(&topo, &params, 3, 2 * one)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("simulation.vc_depth: a load point on mesh:4x4"),
            "{err}"
        );
        assert!(err.contains("3 run at once"), "{err}");
    }
}
