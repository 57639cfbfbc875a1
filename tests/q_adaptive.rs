//! Q-adaptive and Q-routing in the simulator, on a small dragonfly with the paper's timing
//! (p=2, a=4, h=2, g=9: 72 nodes; 1 cycle = 1 ns, 32 ns per flit, local 30, global 300, host
//! 10 ns links, router in/out 10 ns each, 20-packet buffers): learned values approach the
//! measured hop times, Q-adaptive beats MIN on ADV+1, runs are deterministic, Q-routing is
//! deadlock-free.

use std::path::PathBuf;

use fabricopt::cli::simulate::Setup;
use fabricopt::learn::q_adaptive::QAdaptiveSession;
use fabricopt::learn::q_routing::QRoutingSession;
use fabricopt::problem_file::{LoadedProblem, parse_problem};
use fabricopt::sim::{self, Engine, LoadPoint, RunEnd};
use fabricopt::topology::Endpoint;

const A: usize = 4;
const G: usize = 9;
/// Router hop times of this timing model at zero wait: routing_delay + st_delay + link.
const GLOBAL_HOP: f32 = 10.0 + 10.0 + 300.0;
const LOCAL_HOP: f32 = 10.0 + 10.0 + 30.0;

fn problem(routing: &str, traffic: &str, load: f64, warmup: u64, measure: u64) -> String {
    format!(
        r#"
seed = 1
[topology]
kind = "dragonfly"
p = 2
a = 4
h = 2
g = 9
local_latency = 30
global_latency = 300
terminal_latency = 10
bandwidth = 0.03125
[routing]
{routing}
[[traffic]]
{traffic}
injection = "periodic"
load = {load}
packet_size = 1
source_queue = 1
[simulation]
num_vcs = 5
vc_depth = 20
routing_delay = 10
vc_alloc_delay = 0
sw_alloc_delay = 0
st_delay = 10
credit_delay = 0
warmup_cycles = {warmup}
measure_cycles = {measure}
"#
    )
}

fn setup(text: &str) -> Setup {
    let loaded = LoadedProblem {
        path: PathBuf::from("test.toml"),
        problem: parse_problem(text).unwrap(),
    };
    Setup::from_loaded(&loaded).unwrap()
}

fn point(s: &Setup, load: f64) -> LoadPoint {
    sim::simulate_point(
        &s.topo,
        s.routing.as_ref(),
        s.traffic.clone(),
        &s.params,
        s.seed,
        load,
    )
}

#[test]
fn q_adaptive_values_approach_the_measured_hop_times_at_low_load() {
    // 16% load: waits are rare, so a hop takes its zero-wait time nearly always.
    let s = setup(&problem(
        r#"algorithm = "q_adaptive""#,
        r#"pattern = "uniform""#,
        0.005,
        0,
        200_000,
    ));
    let mut e = Engine::new(
        &s.topo,
        s.routing.as_ref(),
        s.traffic.clone(),
        s.params.clone(),
        1,
    );
    assert_eq!(e.run(), RunEnd::Completed);
    let q: &QAdaptiveSession = e.session().as_any().unwrap().downcast_ref().unwrap();
    assert!(q.updates() > 100_000, "{}", q.updates());
    let t = &s.topo;
    let peer = |r: usize, port: usize| match t.peer(r, port) {
        Some(Endpoint::Router { router, .. }) => router,
        other => panic!("{other:?}"),
    };
    let (mut direct, mut via_gateway) = (Vec::new(), Vec::new());
    for x in 0..A * G {
        for gd in (0..G).filter(|&gd| gd != x / A) {
            let gateway = (0..A * G)
                .find(|&r| r / A == x / A && (5..7).any(|port| peer(r, port) / A == gd))
                .unwrap();
            for idx in 0..2 {
                if gateway == x {
                    let port = (5..7).find(|&port| peer(x, port) / A == gd).unwrap();
                    direct.push(q.q_value(x, gd, idx, port));
                } else {
                    let port = (2..5).find(|&port| peer(x, port) == gateway).unwrap();
                    via_gateway.push(q.q_value(x, gd, idx, port));
                }
            }
        }
    }
    // The gateway's global port into the destination group: the target is r + 0 with r >=
    // GLOBAL_HOP, so from 300 the value only rises towards it (by beta = 0.04 per update,
    // ~900 updates per entry here); a wait (< one 32-cycle flit time, at 14% link load)
    // pushes it up by beta * wait <= 1.3 and each zero-wait hop takes a fifth of the excess
    // back (alpha = 0.2), so it stays within a quarter of a flit time above GLOBAL_HOP.
    assert_eq!(direct.len(), A * G * 2 * 2);
    for &v in &direct {
        assert!((GLOBAL_HOP - 0.5..=GLOBAL_HOP + 8.0).contains(&v), "{v}");
    }
    // A local port to the gateway: LOCAL_HOP + the gateway's row minimum (its direct port),
    // learnt from fewer packets (those of this router alone), from 330.
    let mean = via_gateway.iter().sum::<f32>() / via_gateway.len() as f32;
    assert!(
        (mean - (LOCAL_HOP + GLOBAL_HOP)).abs() < 4.0,
        "mean {mean}: {via_gateway:?}"
    );
    for &v in &via_gateway {
        assert!((360.0..=GLOBAL_HOP + LOCAL_HOP + 8.0).contains(&v), "{v}");
    }
}

#[test]
fn q_adaptive_beats_min_on_adv1_where_min_saturates() {
    // ADV+1: all 8 nodes of a group send to the next group. MIN has one global link for it:
    // at most 1/32 / 8 = 0.0039 flits per node and cycle; this asks for 2.4 times that.
    let load = 0.0094;
    let run = |alg: &str| {
        let s = setup(&problem(
            &format!("algorithm = \"{alg}\""),
            "pattern = \"adv\"\nshift = 1",
            load,
            30_000,
            30_000,
        ));
        point(&s, load)
    };
    let min = run("min");
    let q = run("q_adaptive");
    assert!(min.saturated, "{min:?}");
    assert!(min.accepted < 0.0042, "{}", min.accepted);
    assert!(!q.saturated, "{q:?}");
    assert!(q.accepted > 0.95 * load, "{} of {load}", q.accepted);
    assert!(q.accepted > 2.0 * min.accepted);
}

#[test]
fn q_adaptive_runs_are_deterministic() {
    let run = |seed: u64| {
        let text = problem(
            r#"algorithm = "q_adaptive""#,
            r#"pattern = "uniform""#,
            0.02,
            5_000,
            10_000,
        );
        let mut s = setup(&text);
        s.seed = seed;
        let mut p = point(&s, 0.02);
        p.wall_seconds = 0.0;
        p.setup_seconds = 0.0;
        p
    };
    let a = run(5);
    assert_eq!(a, run(5));
    assert_ne!(a, run(6), "the seed matters");
    assert!(a.counters.packets_delivered > 10_000);
}

#[test]
fn q_routing_learns_and_stays_deadlock_free() {
    // Q-routing on the same dragonfly (diameter 3; max_hops = 5 from the 5 VCs), near MIN's
    // UR saturation.
    let s = setup(&problem(
        "algorithm = \"q_routing\"\n[routing.q]\nepsilon = 0.01",
        r#"pattern = "uniform""#,
        0.015,
        0,
        30_000,
    ));
    assert_eq!(s.routing.min_vcs(), 5);
    let mut e = Engine::new(
        &s.topo,
        s.routing.as_ref(),
        s.traffic.clone(),
        s.params.clone(),
        3,
    );
    e.enable_log();
    let end = e.run();
    assert!(!matches!(end, RunEnd::Deadlock(_)), "{end:?}");
    let log = e.take_log();
    assert!(log.len() > 10_000);
    assert!(log.iter().all(|p| p.hops <= 5));
    assert!(
        log.iter().any(|p| p.hops > 3),
        "exploration leaves minimal paths"
    );
    assert_eq!(e.counters.misdelivered, 0);
    let q: &QRoutingSession = e.session().as_any().unwrap().downcast_ref().unwrap();
    assert!(q.updates() > 30_000);
    // Router 0's global port 5 leads to group 1: the estimate to router 4 (landing there) has
    // moved from its initial 1 hop x mean link latency to about one global hop.
    let v = q.q_value(0, 4, 5).unwrap();
    assert!((GLOBAL_HOP - 1.0..GLOBAL_HOP + 40.0).contains(&v), "{v}");
}

#[test]
fn q_config_errors_in_problem_files_name_the_field() {
    let text = |q: &str| {
        problem(
            &format!("algorithm = \"q_adaptive\"\n[routing.q]\n{q}"),
            r#"pattern = "uniform""#,
            0.01,
            10,
            10,
        )
    };
    let err = parse_problem(&text("gamma = 0.9")).unwrap_err().to_string();
    assert!(err.contains("routing.q") && err.contains("gamma"), "{err}");
    let loaded = LoadedProblem {
        path: PathBuf::from("x.toml"),
        problem: parse_problem(&text("alpha = 0")).unwrap(),
    };
    let err = Setup::from_loaded(&loaded).err().unwrap().to_string();
    assert!(
        err.contains("routing.q.alpha: must satisfy 0 < x <= 1"),
        "{err}"
    );
}

#[test]
fn frozen_sessions_neither_learn_nor_explore() {
    for algorithm in ["q_adaptive", "q_routing"] {
        let s = setup(&problem(
            &format!("algorithm = \"{algorithm}\"\n[routing.q]\nepsilon = 0.5"),
            r#"pattern = "uniform""#,
            0.005,
            0,
            20_000,
        ));
        let run = |learning: bool| {
            let mut session = s.routing.learning_session(7).unwrap();
            session.set_learning(learning);
            let mut e =
                Engine::with_session(&s.topo, session, s.traffic.clone(), s.params.clone(), 1);
            e.enable_log();
            assert_eq!(e.run(), RunEnd::Completed);
            let hops: u32 = e.take_log().iter().map(|p| p.hops).sum();
            let any = e.session().as_any().unwrap();
            let updates = match any.downcast_ref::<QAdaptiveSession>() {
                Some(q) => q.updates(),
                None => any.downcast_ref::<QRoutingSession>().unwrap().updates(),
            };
            (updates, hops)
        };
        let (learned, hops_learning) = run(true);
        let (frozen, hops_frozen) = run(false);
        assert!(learned > 1_000, "{algorithm}: {learned}");
        assert_eq!(frozen, 0, "{algorithm}: a frozen session learns nothing");
        // Epsilon 0.5 sends half the decisions to random ports: many more hops than the
        // greedy choice on the initial (hop-count) values.
        assert!(
            hops_learning as f64 > 1.2 * hops_frozen as f64,
            "{algorithm}: {hops_learning} vs {hops_frozen}"
        );
    }
}
