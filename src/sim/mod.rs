//! The cycle-accurate flit-level simulator: configuration, engine, statistics and load sweeps.
//! The timing model is documented in docs/simulator.md.

pub mod config;
pub mod engine;
pub mod network;
pub mod stats;

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

pub use config::{AllocatorKind, SimConfig, SimParams, Switching};
pub use engine::{Counters, DeadlockReport, DeliveredPacket, Engine, RunEnd};
pub use stats::{ClassStats, LatencyStats, TimelineWindow};

use crate::error::Result;
use crate::routing::RoutingFunction;
use crate::topology::Topology;
use crate::traffic::Traffic;

/// The result of simulating one offered load.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct LoadPoint {
    /// Offered load asked for (flits per terminal per cycle, class 0's `load`).
    pub load: f64,
    /// Measured offered load (flits created per terminal per cycle during the window).
    pub offered: f64,
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
    pub hops_avg: f64,
    pub saturated: bool,
    /// Why the point counts as saturated (null when it does not).
    pub saturation_reason: Option<String>,
    pub deadlock: Option<DeadlockReport>,
    pub classes: Vec<ClassStats>,
    pub cycles: u64,
    pub flit_hops: u64,
    pub wall_seconds: f64,
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
    let start = Instant::now();
    // Pre-training: the same workload (same seed) again and again, the routing session
    // carried from one run to the next; only the last run is measured.
    let mut session = None;
    for _ in 0..params.pretrain_runs {
        let mut engine = engine_for(topo, routing, session.take(), &traffic, params, seed);
        engine.run();
        session = Some(engine.into_session());
    }
    if params.freeze_after_pretrain {
        if let Some(s) = &mut session {
            s.set_learning(false);
        }
    }
    let mut engine = engine_for(topo, routing, session, &traffic, params, seed);
    if params.timeline_window > 0 {
        engine.enable_timeline(params.timeline_window);
    }
    let end = engine.run();
    let wall_seconds = start.elapsed().as_secs_f64();
    let (classes, all) = engine.stats.summarize(topo.num_terminals());
    let (mut saturated, mut reason, deadlock) = match end {
        RunEnd::Completed => (false, None, None),
        RunEnd::Saturated(why) => (true, Some(why), None),
        RunEnd::Deadlock(d) => (true, Some("deadlock".to_string()), Some(d)),
    };
    if !saturated && all.latency.avg > params.latency_limit {
        saturated = true;
        reason = Some(format!(
            "average latency {:.1} cycles exceeds the limit {}",
            all.latency.avg, params.latency_limit
        ));
    }
    LoadPoint {
        load,
        offered: all.offered,
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
        saturated,
        saturation_reason: reason,
        deadlock,
        classes,
        cycles: engine.now(),
        flit_hops: engine.counters.flit_hops,
        wall_seconds,
        counters: engine.counters.clone(),
        timeline: engine.take_timeline(),
        routing_report: engine.session().report(),
    }
}

/// A fresh engine, or one that goes on with an earlier run's routing session.
fn engine_for<'a>(
    topo: &'a Topology,
    routing: &'a dyn RoutingFunction,
    session: Option<Box<dyn crate::routing::RoutingSession + 'a>>,
    traffic: &Traffic,
    params: &config::SimParams,
    seed: u64,
) -> Engine<'a> {
    match session {
        Some(s) => Engine::with_session(topo, s, traffic.clone(), params.clone(), seed),
        None => Engine::new(topo, routing, traffic.clone(), params.clone(), seed),
    }
}

/// Simulates every load in parallel (rayon); each point has its own engine and seed stream,
/// so results do not depend on the thread count.
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
    Ok(traffics
        .into_par_iter()
        .zip(loads.par_iter())
        .map(|(t, &load)| {
            let p = simulate_point(topo, routing, t, params, seed, load);
            on_point();
            p
        })
        .collect())
}

/// Saturation throughput estimate: the highest accepted throughput of any point that ran its
/// whole measurement window (past saturation the accepted rate is what the network can deliver,
/// while the offered rate keeps growing). `None` when no point saturated: the network then
/// carried everything offered and the estimate would only be a lower bound.
pub fn saturation_throughput(points: &[LoadPoint]) -> Option<f64> {
    if !points.iter().any(|p| p.saturated) {
        return None;
    }
    points
        .iter()
        .filter(|p| p.deadlock.is_none())
        .map(|p| p.accepted)
        .max_by(f64::total_cmp)
}
