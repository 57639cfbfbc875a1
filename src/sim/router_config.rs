//! Which router micro-architecture a simulation runs (`[simulation] router`), and the
//! parameters of the input-output-queued router (docs/simulator.md, "The input-output-queued
//! router"). The input-queued router's own parameters stay in config.rs.

use serde::{Deserialize, Serialize};

use super::config::{SimConfig, Switching};
use crate::error::{Error, Result};
use crate::topology::Topology;

/// The router micro-architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouterKind {
    /// Input-queued: one buffer per input VC, VC and switch allocation per flit.
    Iq,
    /// Input-output-queued (SST/Merlin's `hr_router`): per-VC input and output buffers, a
    /// crossbar that moves whole packets, routing once per packet.
    Ioq,
}

/// Crossbar arbitration of the input-output-queued router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XbarArbitration {
    /// Least recently served (input port, VC) first (Merlin's `xbar_arb_lru`).
    Lru,
    /// Round robin over the router's input VCs, from after the last winner.
    RoundRobin,
}

/// The resolved parameters of the input-output-queued router.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoqParams {
    /// Flits per output VC buffer.
    pub output_depth: u32,
    /// Cycles per flit through the crossbar (per crossbar port); fractions allowed, to 1/1000.
    pub xbar_period: f64,
    pub xbar_arb: XbarArbitration,
    /// Cycles from a flit reaching a router input to its being in the input buffer.
    pub input_latency: u32,
    /// Cycles from a flit leaving an output buffer to its entering the channel.
    pub output_latency: u32,
}

impl IoqParams {
    /// The crossbar period in thousandths of a cycle (what the engine counts ticks in).
    pub(crate) fn xbar_period_milli(&self) -> u64 {
        (self.xbar_period * 1000.0).round() as u64
    }
}

/// The IQ-only keys of `[simulation]`: refused with `router = "ioq"`, which has no separate
/// route, VC-allocation and switch-allocation stages.
const IQ_ONLY: [&str; 10] = [
    "routing_delay",
    "vc_alloc_delay",
    "sw_alloc_delay",
    "st_delay",
    "credit_delay",
    "input_speedup",
    "allocator",
    "vc_allocator",
    "alloc_iters",
    "wait_for_tail_credit",
];

/// Most flits per output VC (as `vc_depth`).
const MAX_OUTPUT_DEPTH: u32 = super::config::MAX_VC_DEPTH;
/// Most cycles of the input and output latencies (as the pipeline delays).
const MAX_LATENCY: u32 = super::config::MAX_DELAY;

fn is_set(c: &SimConfig, key: &str) -> bool {
    match key {
        "routing_delay" => c.routing_delay.is_some(),
        "vc_alloc_delay" => c.vc_alloc_delay.is_some(),
        "sw_alloc_delay" => c.sw_alloc_delay.is_some(),
        "st_delay" => c.st_delay.is_some(),
        "credit_delay" => c.credit_delay.is_some(),
        "input_speedup" => c.input_speedup.is_some(),
        "allocator" => c.allocator.is_some(),
        "vc_allocator" => c.vc_allocator.is_some(),
        "alloc_iters" => c.alloc_iters.is_some(),
        "wait_for_tail_credit" => c.wait_for_tail_credit.is_some(),
        _ => false,
    }
}

/// The router model `c` asks for (`preset = "merlin"` implies `ioq`), with its IOQ
/// parameters (`None` for `iq`); refuses keys of the other model and values that cannot work.
pub(crate) fn resolve_router(c: &SimConfig, preset: &str) -> Result<Option<IoqParams>> {
    let merlin = preset == "merlin";
    let kind = match (c.router, merlin) {
        (Some(RouterKind::Iq), true) => {
            return Err(Error::field(
                "simulation.router",
                "preset \"merlin\" is the input-output-queued router; router = \"iq\" \
                 contradicts it",
            ));
        }
        (Some(kind), _) => kind,
        (None, true) => RouterKind::Ioq,
        (None, false) => RouterKind::Iq,
    };
    let ioq_keys = [
        ("output_depth", c.output_depth.is_some()),
        ("xbar_period", c.xbar_period.is_some()),
        ("xbar_arb", c.xbar_arb.is_some()),
        ("input_latency", c.input_latency.is_some()),
        ("output_latency", c.output_latency.is_some()),
    ];
    if kind == RouterKind::Iq {
        if let Some((key, _)) = ioq_keys.iter().find(|(_, set)| *set) {
            return Err(Error::field(
                format!("simulation.{key}"),
                "applies only to router = \"ioq\" (the input-queued router has no output \
                 buffers and no separate crossbar)",
            ));
        }
        return Ok(None);
    }
    if let Some(key) = IQ_ONLY.iter().find(|k| is_set(c, k)) {
        return Err(Error::field(
            format!("simulation.{key}"),
            "applies only to router = \"iq\": the input-output-queued router routes a packet \
             once at the head of its input VC and moves it whole through the crossbar (set \
             input_latency, output_latency, xbar_period, xbar_arb instead)",
        ));
    }
    if c.switching == Some(Switching::Wormhole) {
        return Err(Error::field(
            "simulation.switching",
            "wormhole is not available with router = \"ioq\": the crossbar moves whole \
             packets into an output buffer with room for all of them (virtual cut-through, \
             as Merlin's hr_router)",
        ));
    }
    // Merlin as the Q-adaptive authors ran it, in 1 ns cycles with 128-byte flits on
    // 4 GB/s links (32 cycles per flit): docs/simulator.md.
    let (depth, period, latency) = if merlin { (20, 3.2, 10) } else { (20, 1.0, 0) };
    let p = IoqParams {
        output_depth: c.output_depth.unwrap_or(depth),
        xbar_period: c.xbar_period.unwrap_or(period),
        xbar_arb: c.xbar_arb.unwrap_or(XbarArbitration::Lru),
        input_latency: c.input_latency.unwrap_or(latency),
        output_latency: c.output_latency.unwrap_or(latency),
    };
    if p.output_depth == 0 || p.output_depth > MAX_OUTPUT_DEPTH {
        return Err(Error::field(
            "simulation.output_depth",
            format!(
                "must be 1..={MAX_OUTPUT_DEPTH} flits (got {})",
                p.output_depth
            ),
        ));
    }
    if !(p.xbar_period.is_finite() && p.xbar_period >= 0.001 && p.xbar_period <= 65_536.0) {
        return Err(Error::field(
            "simulation.xbar_period",
            format!(
                "must be a number of cycles per flit from 0.001 to 65536 (got {})",
                p.xbar_period
            ),
        ));
    }
    for (key, v) in [
        ("input_latency", p.input_latency),
        ("output_latency", p.output_latency),
    ] {
        if v > MAX_LATENCY {
            return Err(Error::field(
                format!("simulation.{key}"),
                format!("at most {MAX_LATENCY} cycles (got {v})"),
            ));
        }
    }
    Ok(Some(p))
}

/// Checks the input-output-queued router against the network: a crossbar slower than a link
/// would make the crossbar, not the links, the bottleneck (Merlin refuses it too).
pub(crate) fn check_topology(ioq: &IoqParams, topo: &Topology) -> Result<()> {
    let fastest = topo
        .links
        .iter()
        .map(|l| (1.0 / l.params.bandwidth).ceil().max(1.0))
        .fold(f64::INFINITY, f64::min);
    if ioq.xbar_period > fastest + 1e-9 {
        return Err(Error::field(
            "simulation.xbar_period",
            format!(
                "the crossbar ({} cycles per flit) is slower than the fastest link ({} cycles \
                 per flit); it must be at least as fast as every link",
                ioq.xbar_period, fastest
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(config: SimConfig) -> String {
        config.resolve().unwrap_err().to_string()
    }

    #[test]
    fn merlin_preset_is_the_authors_configuration() {
        let p = SimConfig {
            preset: Some("merlin".into()),
            ..SimConfig::default()
        }
        .resolve()
        .unwrap();
        let ioq = p.ioq.expect("merlin is ioq");
        assert_eq!(ioq.output_depth, 20);
        assert_eq!(ioq.xbar_period_milli(), 3200);
        assert_eq!((ioq.input_latency, ioq.output_latency), (10, 10));
        assert_eq!(ioq.xbar_arb, XbarArbitration::Lru);
        assert_eq!(p.vc_depth, 20);
        assert_eq!(p.switching, Switching::VirtualCutThrough);
    }

    #[test]
    fn parameters_of_the_other_model_are_refused_by_name() {
        let cases = [
            (
                SimConfig {
                    output_depth: Some(4),
                    ..SimConfig::default()
                },
                "simulation.output_depth: applies only to router = \"ioq\"",
            ),
            (
                SimConfig {
                    router: Some(RouterKind::Ioq),
                    st_delay: Some(1),
                    ..SimConfig::default()
                },
                "simulation.st_delay: applies only to router = \"iq\"",
            ),
            (
                SimConfig {
                    router: Some(RouterKind::Ioq),
                    switching: Some(Switching::Wormhole),
                    ..SimConfig::default()
                },
                "simulation.switching: wormhole is not available",
            ),
            (
                SimConfig {
                    router: Some(RouterKind::Ioq),
                    output_depth: Some(0),
                    ..SimConfig::default()
                },
                "simulation.output_depth: must be 1..=",
            ),
            (
                SimConfig {
                    router: Some(RouterKind::Ioq),
                    xbar_period: Some(0.0),
                    ..SimConfig::default()
                },
                "simulation.xbar_period: must be a number",
            ),
            (
                SimConfig {
                    preset: Some("merlin".into()),
                    router: Some(RouterKind::Iq),
                    ..SimConfig::default()
                },
                "simulation.router: preset \"merlin\"",
            ),
        ];
        for (config, want) in cases {
            let err = error(config);
            assert!(err.starts_with(want), "{err}");
        }
    }

    #[test]
    fn a_crossbar_slower_than_a_link_is_refused() {
        let topo = crate::topology::TopologyConfig::parse_spec("mesh:2x2")
            .unwrap()
            .build(std::path::Path::new("."), 1)
            .unwrap();
        let ioq = IoqParams {
            output_depth: 4,
            xbar_period: 2.0,
            xbar_arb: XbarArbitration::Lru,
            input_latency: 0,
            output_latency: 0,
        };
        let err = check_topology(&ioq, &topo).unwrap_err().to_string();
        assert!(
            err.starts_with("simulation.xbar_period: the crossbar"),
            "{err}"
        );
        let ok = IoqParams {
            xbar_period: 1.0,
            ..ioq
        };
        assert!(check_topology(&ok, &topo).is_ok());
    }
}
