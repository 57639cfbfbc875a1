//! The bodies of the fuzz targets, shared by the cargo-fuzz binaries (`fuzz/fuzz_targets/`,
//! nightly) and the stable fallback that runs in `cargo test` (`tests/fuzz_corpus.rs`).
//!
//! Each target feeds arbitrary bytes through the same reading and checking path a command
//! takes. Returning an error is the expected answer to bad input; a panic, an abort (a huge
//! allocation) or a hang is a bug. Inputs that are valid but describe something too large to
//! build quickly (a 1,056-router dragonfly) are read and checked, but not built.

use std::path::Path;
use std::sync::OnceLock;

use fabricopt::problem_file::{LoadedProblem, parse_problem};
use fabricopt::registry::routing::build_routing;
use fabricopt::routing::table::io;
use fabricopt::search::checkpoint::Checkpoint;
use fabricopt::search::config::ExanestSearch;
use fabricopt::search::hypervolume::csv::{
    checked_contributions, checked_hypervolume, parse_points,
};
use fabricopt::search::problems::benchmarks::{Benchmark, RealProblem};
use fabricopt::search::problems::exanest::ExanestProblem;
use fabricopt::search::{RunSettings, SearchProblem, Termination};
use fabricopt::topology::import::{TopologyFileFormat, parse_topology};
use fabricopt::topology::{Topology, TopologyConfig};

/// Largest topology (routers × ports per router) a target builds.
const MAX_BUILT_PORTS: usize = 4096;

/// A target's body: any bytes in, a panic only for a bug.
pub(crate) type Target = fn(&[u8]);

/// Every target, by the name of its corpus folder (`fuzz/corpus/<name>/`) and binary.
pub(crate) const TARGETS: &[(&str, Target)] = &[
    ("problem_file", problem_file),
    ("topology_json", topology_json),
    ("topology_edge_list", topology_edge_list),
    ("topology_anynet", topology_anynet),
    ("topology_spec", topology_spec),
    ("routing_table_json", routing_table_json),
    ("routing_table_csv", routing_table_csv),
    ("routing_table_paths", routing_table_paths),
    ("routing_table_lft", routing_table_lft),
    ("checkpoint", checkpoint),
    ("hypervolume_csv", hypervolume_csv),
];

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A problem file as `simulate`, `search` and `routes evolve` read it: parsed, every table
/// checked, the topology, traffic and routing built when the topology is small.
pub(crate) fn problem_file(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(problem) = parse_problem(text) else {
        return;
    };
    let loaded = LoadedProblem {
        path: "fuzz.toml".into(),
        problem,
    };
    let p = &loaded.problem;
    let _ = loaded.metrics_options();
    if let Some(search) = &p.search {
        if search.validate().is_ok() {
            let _ = RealProblem::from_config(search);
            let _ = ExanestProblem::from_config(&p.topology, Some(search), p.seed);
        }
    }
    if let Some(evolve) = &p.evolve {
        let _ = evolve.ga_options();
    }
    let params = p.simulation.resolve();
    if !small_topology(&p.topology) {
        return;
    }
    let Ok(topo) = loaded.build_topology() else {
        return;
    };
    let Ok(params) = params else { return };
    if let Ok(traffic) = loaded.build_traffic(&topo, &params) {
        let _ = params.check_traffic(&traffic);
    }
    if let Some(routing) = &p.routing {
        let _ = build_routing(routing, &topo, params.num_vcs);
    }
}

/// Whether `config` is a generated topology small enough to build here (never a file: the
/// fuzzer should not read the disk).
fn small_topology(config: &TopologyConfig) -> bool {
    match config.resolve(Path::new("."), 1) {
        Ok((spec, _)) => spec
            .ports_upper_bound()
            .is_some_and(|ports| ports <= MAX_BUILT_PORTS),
        Err(_) => false,
    }
}

fn topology_file(data: &[u8], format: TopologyFileFormat, name: &str) {
    let Some(text) = text(data) else { return };
    if let Ok(topo) = parse_topology(text, format, Path::new(name)) {
        // What every later stage assumes of a topology.
        topo.validate().expect("an imported topology is valid");
    }
}

pub(crate) fn topology_json(data: &[u8]) {
    topology_file(data, TopologyFileFormat::Json, "fuzz.json");
}

pub(crate) fn topology_edge_list(data: &[u8]) {
    topology_file(data, TopologyFileFormat::EdgeList, "fuzz.txt");
}

pub(crate) fn topology_anynet(data: &[u8]) {
    topology_file(data, TopologyFileFormat::Anynet, "fuzz.anynet");
}

/// A `topo` command-line spec (`mesh:4x4,c=2`): parsed, checked, built when small.
pub(crate) fn topology_spec(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(config) = TopologyConfig::parse_spec(text) else {
        return;
    };
    if small_topology(&config) {
        if let Ok(topo) = config.build(Path::new("."), 1) {
            topo.validate().expect("a generated topology is valid");
        }
    }
}

/// The 4x4 mesh the routing-table targets read tables for (the corpus tables route it).
fn mesh() -> &'static Topology {
    static MESH: OnceLock<Topology> = OnceLock::new();
    MESH.get_or_init(|| {
        TopologyConfig::parse_spec("mesh:4x4")
            .and_then(|c| c.build(Path::new("."), 1))
            .expect("mesh:4x4 builds")
    })
}

pub(crate) fn routing_table_json(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok((table, _)) = io::parse_json(text, Path::new("fuzz.json")) {
        let _ = table.validate(mesh());
    }
}

pub(crate) fn routing_table_csv(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok((table, _)) = io::parse_csv(text, Path::new("fuzz.csv"), mesh().num_routers()) {
        let _ = table.validate(mesh());
    }
}

pub(crate) fn routing_table_paths(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(table) = io::parse_path_list(text, Path::new("fuzz.paths"), mesh()) {
        let _ = table.validate(mesh());
    }
}

pub(crate) fn routing_table_lft(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let path = Path::new("fuzz.lft");
    if let Ok(lft) = io::parse_lft(text, path) {
        if let Ok(table) = lft.to_table(mesh(), path) {
            let _ = table.validate(mesh());
        }
    }
}

/// The problems the checkpoint corpus was written for (`search` on the ExaNeSt T = (2, 4, 2)
/// system with p_ext = 0.5, and on ZDT1 with 12 variables).
fn exanest_problem() -> &'static ExanestProblem {
    static PROBLEM: OnceLock<ExanestProblem> = OnceLock::new();
    PROBLEM.get_or_init(|| {
        let params = ExanestSearch {
            p_ext: 0.5,
            ..ExanestSearch::default()
        };
        ExanestProblem::new(2, 4, 2, &params, 5).expect("T = (2, 4, 2)")
    })
}

fn zdt1_problem() -> &'static RealProblem {
    static PROBLEM: OnceLock<RealProblem> = OnceLock::new();
    PROBLEM.get_or_init(|| RealProblem::new(Benchmark::Zdt1, 12, 2).expect("ZDT1"))
}

/// A `checkpoint.json`: parsed, checked as `--resume` checks it, and, when it passes and the
/// rest of the run is short, resumed to the end: a state that passes the checks must run.
pub(crate) fn checkpoint(data: &[u8]) {
    let Some(text) = text(data) else { return };
    resume(exanest_problem(), text);
    resume(zdt1_problem(), text);
}

fn resume<P: SearchProblem>(problem: &P, text: &str) {
    let path = Path::new("checkpoint.json");
    let Ok(c) = Checkpoint::<P::Genome>::parse(path, text) else {
        return;
    };
    if c.problem != problem.name() || c.check_state(path, problem).is_err() {
        return;
    }
    let mut other = c.clone();
    other.config = serde_json::json!({"search": {"population": 3}});
    let _ = c.check_matches(path, &other, false);
    let remaining = c.evaluation_budget.saturating_sub(c.evaluations);
    if c.population_size > 64 || remaining > 8 * c.population_size {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("checkpoint.json"), text).expect("written");
    let settings = RunSettings {
        algorithm: c.algorithm,
        population: c.population_size,
        termination: Termination::Evaluations(c.evaluation_budget),
        seed: c.seed,
        reference_point: c.reference_point.clone(),
        checkpoint_dir: Some(dir.path().to_path_buf()),
        resume: true,
        force: true,
        config: c.config.clone(),
        progress: false,
        label: "fuzz".into(),
        archive_limit: c.archive_limit,
        ga: Default::default(),
    };
    // Errors are fine (a reference point of the wrong length, say); panics are not.
    let _ = fabricopt::search::run(problem, &settings);
}

/// The `hypervolume` command's reader, then the hypervolume and the contributions of what it
/// read (small sets only: the exact hypervolume is exponential in the dimension).
pub(crate) fn hypervolume_csv(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let path = Path::new("fuzz.csv");
    let by_name = ["f1".to_string(), "f2".to_string()];
    for (dims, columns) in [(2, &by_name[..0]), (3, &by_name[..0]), (2, &by_name[..])] {
        let Ok(table) = parse_points(path, text, dims, columns) else {
            continue;
        };
        if table.points.len() > 64 {
            continue;
        }
        let reference: Vec<f64> = (0..dims)
            .map(|j| {
                table
                    .points
                    .iter()
                    .map(|p| p[j])
                    .fold(f64::NEG_INFINITY, f64::max)
                    + 1.0
            })
            .collect();
        // What the command prints: a finite, non-negative number, or an error.
        if let Ok(volume) = checked_hypervolume(path, &table.points, &reference) {
            assert!(volume >= 0.0, "hypervolume {volume} of {:?}", table.points);
        }
        if let Ok(each) = checked_contributions(path, &table.points, &reference) {
            assert!(each.iter().all(|&c| c >= 0.0), "contributions {each:?}");
        }
    }
}
