//! DQN-routing on the 4x4 torus (src/learn/dqn_routing.rs): acks retrace every path and pay
//! every decision, the escape rules hold, inference delay costs what it says, and learning
//! is real: the trained greedy policy routes better than a random one and than the untrained
//! network.

use std::path::Path;

use fabricopt::learn::dqn::DqnConfig;
use fabricopt::learn::dqn_routing::{AgentScope, DqnRoutingConfig, DqnSession, Policy};
use fabricopt::registry::routing::build_routing;
use fabricopt::routing::{RoutingConfig, RoutingFunction};
use fabricopt::sim::{self, Engine, LoadPoint, RunEnd, SimConfig, SimParams};
use fabricopt::topology::{Topology, TopologyConfig};
use fabricopt::traffic::{Traffic, TrafficConfig};

fn torus() -> Topology {
    TopologyConfig::parse_spec("torus:4x4")
        .unwrap()
        .build(Path::new("."), 1)
        .unwrap()
}

/// The thesis's traffic: uniform destinations, Bernoulli injection, 1 + (1..256) + 1 flits.
fn traffic(t: &Topology, load: f64) -> Traffic {
    let mut cfg = TrafficConfig::new("uniform", load);
    cfg.injection = Some("bernoulli".into());
    cfg.header = Some(1);
    cfg.payload_min = Some(1);
    cfg.payload_max = Some(256);
    cfg.footer = Some(1);
    Traffic::build(&[cfg], t, 3, Path::new(".")).unwrap()
}

fn params(warmup: u64, measure: u64) -> SimParams {
    SimConfig {
        num_vcs: Some(3),
        vc_depth: Some(258),
        switching: Some(fabricopt::sim::Switching::VirtualCutThrough),
        warmup_cycles: Some(warmup),
        measure_cycles: Some(measure),
        ..SimConfig::default()
    }
    .resolve()
    .unwrap()
}

/// A small, fast agent with a short exploration schedule (the paper's sizes are the
/// defaults; they learn the same way, only slower).
fn small_agent() -> DqnConfig {
    DqnConfig {
        hidden: vec![64],
        head_hidden: 64,
        learning_starts: 200,
        epsilon_anneal: 2_000,
        epsilon_mid_until: 6_000,
        ..DqnConfig::default()
    }
}

fn dqn(t: &Topology, cfg: DqnRoutingConfig) -> Box<dyn RoutingFunction> {
    let rc = RoutingConfig::new("dqn").with("dqn", cfg);
    build_routing(&rc, t, 3).unwrap()
}

fn session_stats(e: &Engine) -> fabricopt::learn::dqn_routing::DqnStats {
    let s: &DqnSession = e.session().as_any().unwrap().downcast_ref().unwrap();
    s.stats.clone()
}

#[test]
fn acks_retrace_every_path_and_pay_every_decision() {
    let t = torus();
    let r = dqn(
        &t,
        DqnRoutingConfig {
            agent: small_agent(),
            ..DqnRoutingConfig::default()
        },
    );
    let mut e = Engine::new(&t, r.as_ref(), traffic(&t, 0.4), params(2_000, 30_000), 9);
    e.enable_log();
    assert_eq!(e.run(), RunEnd::Completed);
    let s = session_stats(&e);
    assert_eq!(s.acks_unmatched, 0, "every ack found its pending entry");
    assert!(s.decisions > 2_000, "{s:?}");
    // Episodes still open are those of packets (or acks) in flight: a handful.
    assert!(
        s.rewarded <= s.decisions && s.decisions - s.rewarded < 200,
        "{s:?}"
    );
    assert!(
        s.rejected > 0,
        "at 40% load some proposals meet a busy adaptive VC"
    );
    let c = &e.counters;
    assert_eq!(c.misdelivered, 0);
    assert_eq!(c.out_of_order, 0);
    assert_eq!(c.flits_injected, c.flits_ejected + e.flits_in_network());
    // One ack per data packet whose head arrived: never more than the data packets.
    assert!(c.control_packets > 1_000 && 2 * c.control_packets <= c.packets_created);
    // The hop cap (2 x diameter = 8) then at most a DOR path (diameter 4).
    let worst = e.take_log().iter().map(|p| p.hops).max().unwrap();
    assert!(worst <= 12, "a packet took {worst} hops");
}

#[test]
fn inference_delay_adds_to_every_decision() {
    let t = torus();
    let run = |delay: u32| {
        let r = dqn(
            &t,
            DqnRoutingConfig {
                agent: small_agent(),
                decision_delay: delay,
                ..DqnRoutingConfig::default()
            },
        );
        let mut e = Engine::new(&t, r.as_ref(), traffic(&t, 1e-12), params(0, 100), 4);
        e.enable_log();
        // One packet at a time through an empty network: the same observations, so the
        // same decisions (same seed) whatever the delay.
        let mut out = Vec::new();
        for (src, dst, size) in [(0u32, 10u32, 20u32), (5, 15, 3), (12, 1, 100)] {
            assert!(e.inject_packet(src, dst, size, 0));
            for _ in 0..3_000 {
                e.step();
            }
            let log = e.take_log();
            assert_eq!(log.len(), 1);
            out.push(log[0].delivered - log[0].created);
        }
        (out, session_stats(&e).decisions)
    };
    let (fast, decisions) = run(0);
    let (slow, decisions_slow) = run(25);
    assert_eq!(decisions, decisions_slow);
    let extra: u64 = slow.iter().zip(&fast).map(|(s, f)| s - f).sum();
    assert_eq!(extra, 25 * decisions, "{fast:?} vs {slow:?}");
}

fn measure(t: &Topology, r: &dyn RoutingFunction, p: &SimParams, load: f64) -> LoadPoint {
    sim::simulate_point(t, r, traffic(t, load), p, 21, load)
}

fn productive(p: &LoadPoint) -> f64 {
    let r = p.routing_report.as_ref().unwrap();
    r["productive"].as_f64().unwrap() / r["decisions"].as_f64().unwrap()
}

#[test]
fn the_trained_greedy_policy_beats_a_random_and_an_untrained_one() {
    let t = torus();
    let load = 0.2;
    // One agent for all routers gathers experience four times as fast as one per X-ring.
    let learn = dqn(
        &t,
        DqnRoutingConfig {
            agent: small_agent(),
            agent_scope: AgentScope::Network,
            ..DqnRoutingConfig::default()
        },
    );
    let random = dqn(
        &t,
        DqnRoutingConfig {
            agent: small_agent(),
            policy: Policy::Random,
            ..DqnRoutingConfig::default()
        },
    );
    // Trained for five runs of 60,000 cycles, then measured greedily without learning.
    let mut p = params(10_000, 50_000);
    p.pretrain_runs = 5;
    p.freeze_after_pretrain = true;
    let trained = measure(&t, learn.as_ref(), &p, load);
    // The same network frozen untrained, and the random policy.
    let mut p0 = params(10_000, 50_000);
    p0.pretrain_runs = 1;
    p0.freeze_after_pretrain = true;
    let untrained_cfg = DqnRoutingConfig {
        agent: DqnConfig {
            learning_starts: u64::MAX / 2,
            ..small_agent()
        },
        ..DqnRoutingConfig::default()
    };
    let untrained = measure(&t, dqn(&t, untrained_cfg).as_ref(), &p0, load);
    let random = measure(&t, random.as_ref(), &params(10_000, 50_000), load);
    for (name, pt) in [
        ("trained", &trained),
        ("untrained", &untrained),
        ("random", &random),
    ] {
        assert!(!pt.saturated, "{name}: {:?}", pt.saturation_reason);
    }
    let (pt, pu, pr) = (
        productive(&trained),
        productive(&untrained),
        productive(&random),
    );
    // A random channel brings the packet nearer about half the time; the trained agents
    // learned that the reward (distance / time) pays for minimal hops.
    assert!(pt > 0.8, "trained: {pt:.3} of decisions productive");
    assert!(pr < 0.65 && pu < 0.7, "random {pr:.3}, untrained {pu:.3}");
    assert!(
        trained.latency_avg < 0.8 * random.latency_avg
            && trained.latency_avg < 0.9 * untrained.latency_avg,
        "latency: trained {:.1}, untrained {:.1}, random {:.1}",
        trained.latency_avg,
        untrained.latency_avg,
        random.latency_avg
    );
    assert!(trained.hops_avg < random.hops_avg);
}
