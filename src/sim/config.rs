//! The `[simulation]` table: router microarchitecture, switching, phases and the safety nets
//! (saturation and deadlock detection). Timing presets fill the pipeline delays.

use serde::{Deserialize, Serialize};

use super::router_config::resolve_router;
pub use super::router_config::{IoqParams, RouterKind, XbarArbitration};
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Switching {
    /// A packet may advance flit by flit as soon as the next VC has a free slot.
    Wormhole,
    /// A packet is granted the next VC only when that VC can hold the whole packet.
    VirtualCutThrough,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocatorKind {
    /// Separable input-first allocation with round-robin arbiters; pointers advance on
    /// every grant.
    Separable,
    /// iSLIP: round-robin pointers advance only past accepted grants, over `alloc_iters`
    /// iterations.
    Islip,
}

/// How an input VC waiting for an output VC picks the one it requests (the output VCs then
/// grant one requester each, round-robin).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VcAllocatorKind {
    /// The first grantable VC in the routing function's candidate order (lowest VC first
    /// within a candidate): near saturation every requester of a port asks for the same VC.
    FirstFree,
    /// BookSim2's separable input-first allocator: among the grantable VCs of its most
    /// preferred candidate that has one, each input VC requests the one nearest its own
    /// round-robin pointer; both pointers move only on a grant.
    SeparableInputFirst,
}

/// The `[simulation]` table as written (every field optional).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// `default` (1-cycle stages) or `booksim` (BookSim2's default input-queued router).
    pub preset: Option<String>,
    pub num_vcs: Option<usize>,
    pub vc_depth: Option<u32>,
    pub switching: Option<Switching>,
    pub routing_delay: Option<u32>,
    pub vc_alloc_delay: Option<u32>,
    pub sw_alloc_delay: Option<u32>,
    pub st_delay: Option<u32>,
    pub credit_delay: Option<u32>,
    pub injection_delay: Option<u32>,
    pub input_speedup: Option<u32>,
    pub allocator: Option<AllocatorKind>,
    pub vc_allocator: Option<VcAllocatorKind>,
    pub alloc_iters: Option<u32>,
    pub wait_for_tail_credit: Option<bool>,
    pub warmup_cycles: Option<u64>,
    pub measure_cycles: Option<u64>,
    pub drain_cycles: Option<u64>,
    pub batches: Option<usize>,
    pub deadlock_cycles: Option<u64>,
    pub max_queued_packets: Option<u64>,
    pub latency_limit: Option<f64>,
    pub pretrain_runs: Option<u32>,
    pub freeze_after_pretrain: Option<bool>,
    pub timeline_window: Option<u64>,
    /// Partitions (threads) one simulation is split into (the parallel engine); 1 = the
    /// sequential engine. The results are the same whatever the number.
    pub partitions: Option<usize>,
    /// `iq` (default) or `ioq` (router_config.rs).
    pub router: Option<RouterKind>,
    pub output_depth: Option<u32>,
    pub xbar_period: Option<f64>,
    pub xbar_arb: Option<XbarArbitration>,
    pub input_latency: Option<u32>,
    pub output_latency: Option<u32>,
    /// Nanoseconds one cycle stands for (plots then show latency in µs); preset `merlin`: 1.
    pub ns_per_cycle: Option<f64>,
}

/// Resolved simulation parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimParams {
    pub preset: String,
    pub num_vcs: usize,
    pub vc_depth: u32,
    pub switching: Switching,
    /// Cycles from a head flit reaching the front of its VC to the route being usable.
    pub routing_delay: u32,
    /// Cycles from the VC grant to the first switch request.
    pub vc_alloc_delay: u32,
    /// Cycles from the switch grant to switch traversal.
    pub sw_alloc_delay: u32,
    /// Cycles of switch traversal before the flit enters the output channel.
    pub st_delay: u32,
    /// Cycles a credit spends in the router before it travels back over the channel.
    pub credit_delay: u32,
    /// Extra cycles between a NIC sending a flit and the flit entering the injection channel
    /// (BookSim2 spends one).
    pub injection_delay: u32,
    /// Flits an input port may send through the crossbar per cycle (from different VCs).
    pub input_speedup: u32,
    /// Switch allocator.
    pub allocator: AllocatorKind,
    /// VC allocator (input stage).
    pub vc_allocator: VcAllocatorKind,
    pub alloc_iters: u32,
    /// Allocate every output VC atomically: only once the previous packet's tail credit has
    /// come back (BookSim2's `wait_for_tail_credit`).
    pub wait_for_tail_credit: bool,
    pub warmup_cycles: u64,
    pub measure_cycles: u64,
    /// Most cycles to wait after the measurement for measured packets to arrive.
    pub drain_cycles: u64,
    /// Batches of the measurement window for confidence intervals.
    pub batches: usize,
    /// Stop and report a deadlock when flits are in flight and none moves for this long.
    pub deadlock_cycles: u64,
    /// Stop as saturated when more packets than this wait in source queues.
    pub max_queued_packets: u64,
    /// Call a point saturated when its average latency exceeds this many cycles.
    pub latency_limit: f64,
    /// Learned routing: whole runs of the same workload before the measured one, each going on
    /// from what the previous one learned (the DQN thesis's "pre-training"). 0 = learn from
    /// scratch during the measured run.
    pub pretrain_runs: u32,
    /// Learned routing: the measured run after pre-training uses the learned policy without
    /// exploring or learning (how good the trained policy is).
    pub freeze_after_pretrain: bool,
    /// Report latency per window of this many cycles over the whole measured run, warm-up
    /// included (how learned routing converges); 0 = no timeline.
    pub timeline_window: u64,
    /// Partitions one simulation is split into, one thread each (engine/parallel.rs); the
    /// results do not depend on it. Left out of the serialised form at 1.
    #[serde(skip_serializing_if = "is_one")]
    pub partitions: usize,
    /// `num_vcs` is the routing's number of VC classes, one VC per class (preset `merlin`
    /// without `num_vcs`: the Q-adaptive authors' configuration); `num_vcs` holds a
    /// placeholder until the routing is built (`pipeline::simulate::routing_and_params`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub vc_per_class: bool,
    /// Nanoseconds one cycle stands for, when the problem says (plots show µs then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_per_cycle: Option<f64>,
    /// The input-output-queued router's parameters; `None` = the input-queued router
    /// (left out of the serialised form then, so that IQ configurations read as before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ioq: Option<IoqParams>,
}

impl SimConfig {
    pub fn resolve(&self) -> Result<SimParams> {
        let preset = self.preset.clone().unwrap_or_else(|| "default".to_string());
        // (routing, vc alloc, switch alloc, switch traversal, credit, injection) delays.
        let delays = match preset.as_str() {
            "default" => (1, 1, 1, 1, 1, 0),
            // BookSim2's input-queued router with its defaults: routing_delay 1,
            // vc_alloc_delay 1, sw_alloc_delay 1, st_prepare_delay 0 + st_final_delay 1,
            // credit_delay 0, and one cycle at injection (see docs/simulator.md).
            "booksim" => (1, 1, 1, 1, 0, 1),
            "ideal" | "merlin" => (0, 0, 0, 0, 0, 0),
            other => {
                return Err(Error::field(
                    "simulation.preset",
                    format!(
                        "unknown preset `{other}` (expected default, booksim, ideal or merlin)"
                    ),
                ));
            }
        };
        let ioq = resolve_router(self, &preset)?;
        let merlin = preset == "merlin";
        let vc_allocator = match preset.as_str() {
            "booksim" => VcAllocatorKind::SeparableInputFirst,
            _ => VcAllocatorKind::FirstFree,
        };
        let p = SimParams {
            preset,
            num_vcs: self.num_vcs.unwrap_or(4),
            vc_depth: self.vc_depth.unwrap_or(if merlin { 20 } else { 8 }),
            switching: self.switching.unwrap_or(if ioq.is_some() {
                Switching::VirtualCutThrough
            } else {
                Switching::Wormhole
            }),
            routing_delay: self.routing_delay.unwrap_or(delays.0),
            vc_alloc_delay: self.vc_alloc_delay.unwrap_or(delays.1),
            sw_alloc_delay: self.sw_alloc_delay.unwrap_or(delays.2),
            st_delay: self.st_delay.unwrap_or(delays.3),
            credit_delay: self.credit_delay.unwrap_or(delays.4),
            injection_delay: self.injection_delay.unwrap_or(delays.5),
            input_speedup: self.input_speedup.unwrap_or(1),
            allocator: self.allocator.unwrap_or(AllocatorKind::Separable),
            vc_allocator: self.vc_allocator.unwrap_or(vc_allocator),
            alloc_iters: self.alloc_iters.unwrap_or(1),
            wait_for_tail_credit: self.wait_for_tail_credit.unwrap_or(false),
            warmup_cycles: self.warmup_cycles.unwrap_or(2_000),
            measure_cycles: self.measure_cycles.unwrap_or(10_000),
            drain_cycles: self.drain_cycles.unwrap_or(50_000),
            batches: self.batches.unwrap_or(10),
            deadlock_cycles: self.deadlock_cycles.unwrap_or(20_000),
            max_queued_packets: self.max_queued_packets.unwrap_or(2_000_000),
            latency_limit: self.latency_limit.unwrap_or(f64::INFINITY),
            pretrain_runs: self.pretrain_runs.unwrap_or(0),
            freeze_after_pretrain: self.freeze_after_pretrain.unwrap_or(false),
            timeline_window: self.timeline_window.unwrap_or(0),
            partitions: self.partitions.unwrap_or(1),
            vc_per_class: merlin && self.num_vcs.is_none(),
            ns_per_cycle: self.ns_per_cycle.or(merlin.then_some(1.0)),
            ioq,
        };
        p.validate()?;
        Ok(p)
    }
}

/// Most cycles of any phase (`warmup_cycles`, `measure_cycles`, `drain_cycles`) and of
/// `deadlock_cycles` and `timeline_window`: 10^12 cycles (days of simulation even for a tiny
/// network), so that every sum of them and of the cycle clock fits in 64 bits with room to
/// spare.
pub(crate) const MAX_CYCLES: u64 = 1_000_000_000_000;
/// Most cycles of any pipeline delay. The engine's event wheel spans the longest delay plus
/// the longest link (`topology::model::MAX_LATENCY`, the same bound), so both are bounded to
/// keep it small and its 32-bit sums exact.
pub(crate) const MAX_DELAY: u32 = 1 << 16;
/// Most flits per VC buffer.
pub(crate) const MAX_VC_DEPTH: u32 = 1 << 16;
/// Most confidence-interval batches.
pub(crate) const MAX_BATCHES: usize = 1_000;
/// Serde's test for fields left out at 1.
fn is_one(n: &usize) -> bool {
    *n == 1
}

/// Most partitions one simulation may be split into (threads; far more than useful).
const MAX_PARTITIONS: usize = 1024;

/// Most timeline windows a run may produce (`timeline_window` against the run's length).
pub(crate) const MAX_TIMELINE_WINDOWS: u64 = 1_000_000;
/// Most packets in source queues: packet slots are numbered in 32 bits.
pub(crate) const MAX_QUEUED_PACKETS: u64 = 100_000_000;
/// Most pre-training runs: each is a whole run of the workload, so more would only be a run
/// that looks hung (a learned routing has long converged by then).
pub(crate) const MAX_PRETRAIN_RUNS: u32 = 10_000;
/// Most switch allocator iterations and input speedup (beyond the 64 VCs of a port they
/// change nothing).
pub(crate) const MAX_ITERS: u32 = 64;

impl SimParams {
    /// Checks every field against its range (docs/formats.md, `[simulation]`); `resolve` calls
    /// it, and so must anything that overrides a field afterwards (the command line's
    /// `--warmup`, `--measure`, ...).
    pub fn validate(&self) -> Result<()> {
        let p = self;
        let positive = [
            ("num_vcs", p.num_vcs as u64),
            ("vc_depth", u64::from(p.vc_depth)),
            ("input_speedup", u64::from(p.input_speedup)),
            ("alloc_iters", u64::from(p.alloc_iters)),
            ("measure_cycles", p.measure_cycles),
            ("batches", p.batches as u64),
            ("deadlock_cycles", p.deadlock_cycles),
            ("max_queued_packets", p.max_queued_packets),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(Error::field(
                    format!("simulation.{name}"),
                    "must be at least 1",
                ));
            }
        }
        if p.drain_cycles == 0 {
            return Err(Error::field(
                "simulation.drain_cycles",
                "must be at least 1: packets created in the last cycles of the measurement are \
                 still in flight when it ends, and without a drain every such load point would \
                 stop as saturated with their latencies left out (docs/simulator.md)",
            ));
        }
        let delay = |name, v: u32| (name, u64::from(v), u64::from(MAX_DELAY), "cycles");
        let cycles = |name, v: u64| (name, v, MAX_CYCLES, "cycles");
        let iterations = |name, v: u32| (name, u64::from(v), u64::from(MAX_ITERS), "");
        let at_most = [
            (
                "num_vcs",
                p.num_vcs as u64,
                64,
                "VCs per channel (a 64-bit mask)",
            ),
            (
                "vc_depth",
                u64::from(p.vc_depth),
                u64::from(MAX_VC_DEPTH),
                "flits",
            ),
            delay("routing_delay", p.routing_delay),
            delay("vc_alloc_delay", p.vc_alloc_delay),
            delay("sw_alloc_delay", p.sw_alloc_delay),
            delay("st_delay", p.st_delay),
            delay("credit_delay", p.credit_delay),
            delay("injection_delay", p.injection_delay),
            iterations("input_speedup", p.input_speedup),
            iterations("alloc_iters", p.alloc_iters),
            cycles("warmup_cycles", p.warmup_cycles),
            cycles("measure_cycles", p.measure_cycles),
            cycles("drain_cycles", p.drain_cycles),
            cycles("deadlock_cycles", p.deadlock_cycles),
            cycles("timeline_window", p.timeline_window),
            ("batches", p.batches as u64, MAX_BATCHES as u64, ""),
            (
                "pretrain_runs",
                u64::from(p.pretrain_runs),
                u64::from(MAX_PRETRAIN_RUNS),
                "runs",
            ),
            (
                "max_queued_packets",
                p.max_queued_packets,
                MAX_QUEUED_PACKETS,
                "packets",
            ),
        ];
        for (name, v, max, unit) in at_most {
            if v > max {
                return Err(Error::field(
                    format!("simulation.{name}"),
                    format!("at most {max} {unit} (got {v})").replace("  (", " ("),
                ));
            }
        }
        if p.batches as u64 > p.measure_cycles || p.batches < 2 {
            return Err(Error::field(
                "simulation.batches",
                "must be at least 2 and at most measure_cycles",
            ));
        }
        // Cannot overflow: each term is at most MAX_CYCLES.
        let run = p.warmup_cycles + p.measure_cycles + p.drain_cycles;
        // (A zero window is the timeline turned off.)
        if run
            .checked_div(p.timeline_window)
            .is_some_and(|windows| windows > MAX_TIMELINE_WINDOWS)
        {
            return Err(Error::field(
                "simulation.timeline_window",
                format!(
                    "a run of up to {run} cycles in windows of {} cycles gives more than \
                     {MAX_TIMELINE_WINDOWS} windows; use a longer window",
                    p.timeline_window
                ),
            ));
        }
        if p.partitions == 0 || p.partitions > MAX_PARTITIONS {
            return Err(Error::field(
                "simulation.partitions",
                format!("must be 1 to {MAX_PARTITIONS} (got {})", p.partitions),
            ));
        }
        if p.freeze_after_pretrain && p.pretrain_runs == 0 {
            return Err(Error::field(
                "simulation.freeze_after_pretrain",
                "needs pretrain_runs >= 1 (there is nothing learned to freeze)",
            ));
        }
        if p.ns_per_cycle
            .is_some_and(|ns| !(ns.is_finite() && ns > 0.0))
        {
            return Err(Error::field(
                "simulation.ns_per_cycle",
                "must be a positive number of nanoseconds",
            ));
        }
        if p.latency_limit.is_nan() || p.latency_limit <= 0.0 {
            return Err(Error::field("simulation.latency_limit", "must be positive"));
        }
        Ok(())
    }

    /// Checks the parameters against the traffic they will carry: under virtual cut-through a
    /// packet longer than a VC buffer could never be granted a VC (it would wait forever).
    pub fn check_traffic(&self, traffic: &crate::traffic::Traffic) -> Result<()> {
        if self.switching != Switching::VirtualCutThrough {
            return Ok(());
        }
        let longest = (0..traffic.num_classes())
            .map(|c| (traffic.packet_flits_range(c).1, c))
            .max();
        match longest {
            Some((flits, class)) if flits > self.vc_depth => Err(Error::field(
                "simulation.vc_depth",
                format!(
                    "virtual cut-through needs a VC buffer that holds a whole packet: traffic \
                     class {class} has packets of up to {flits} flits, vc_depth is {}",
                    self.vc_depth
                ),
            )),
            Some((flits, class))
                if self
                    .ioq
                    .as_ref()
                    .is_some_and(|ioq| flits > ioq.output_depth) =>
            {
                Err(Error::field(
                    "simulation.output_depth",
                    format!(
                        "the input-output-queued router moves whole packets into an output \
                         buffer: traffic class {class} has packets of up to {flits} flits, \
                         output_depth is {}",
                        self.ioq.as_ref().map_or(0, |ioq| ioq.output_depth)
                    ),
                ))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(config: SimConfig) -> String {
        config.resolve().unwrap_err().to_string()
    }

    #[test]
    fn cycle_counts_are_bounded_so_their_sums_fit() {
        // u64::MAX used to wrap `warmup + measure` and end the run with no measurement.
        let err = error(SimConfig {
            measure_cycles: Some(u64::MAX),
            ..SimConfig::default()
        });
        assert!(
            err.starts_with("simulation.measure_cycles: at most"),
            "{err}"
        );
        let err = error(SimConfig {
            warmup_cycles: Some(u64::MAX - 1_000),
            ..SimConfig::default()
        });
        assert!(
            err.starts_with("simulation.warmup_cycles: at most"),
            "{err}"
        );
        let p = SimConfig {
            warmup_cycles: Some(MAX_CYCLES),
            measure_cycles: Some(MAX_CYCLES),
            drain_cycles: Some(MAX_CYCLES),
            deadlock_cycles: Some(MAX_CYCLES),
            ..SimConfig::default()
        }
        .resolve()
        .unwrap();
        // The largest accepted values still add up exactly.
        let total = p.warmup_cycles.checked_add(p.measure_cycles);
        assert!(total.and_then(|t| t.checked_add(p.drain_cycles)).is_some());
    }

    #[test]
    fn sizes_and_delays_are_bounded() {
        let cases = [
            (
                SimConfig {
                    vc_depth: Some(u32::MAX),
                    ..SimConfig::default()
                },
                "simulation.vc_depth: at most 65536 flits",
            ),
            (
                SimConfig {
                    st_delay: Some(u32::MAX),
                    credit_delay: Some(u32::MAX),
                    ..SimConfig::default()
                },
                "simulation.st_delay: at most 65536 cycles",
            ),
            (
                SimConfig {
                    batches: Some(usize::MAX),
                    measure_cycles: Some(MAX_CYCLES),
                    ..SimConfig::default()
                },
                "simulation.batches: at most 1000 (got",
            ),
            (
                SimConfig {
                    max_queued_packets: Some(u64::MAX),
                    ..SimConfig::default()
                },
                "simulation.max_queued_packets: at most",
            ),
            (
                SimConfig {
                    alloc_iters: Some(1_000),
                    ..SimConfig::default()
                },
                "simulation.alloc_iters: at most 64 (got 1000)",
            ),
            (
                SimConfig {
                    pretrain_runs: Some(u32::MAX),
                    ..SimConfig::default()
                },
                "simulation.pretrain_runs: at most 10000 runs (got 4294967295)",
            ),
            (
                SimConfig {
                    timeline_window: Some(1),
                    measure_cycles: Some(MAX_CYCLES),
                    ..SimConfig::default()
                },
                "simulation.timeline_window: a run of up to",
            ),
        ];
        for (config, want) in cases {
            let err = error(config);
            assert!(err.starts_with(want), "{err}");
        }
    }

    #[test]
    fn a_zero_drain_is_refused_with_the_reason() {
        let err = error(SimConfig {
            drain_cycles: Some(0),
            ..SimConfig::default()
        });
        assert!(
            err.starts_with("simulation.drain_cycles: must be at least 1"),
            "{err}"
        );
        assert!(err.contains("saturated"), "{err}");
    }
}
