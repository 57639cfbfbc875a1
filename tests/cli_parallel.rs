//! `[simulation] partitions`: `simulate` on the parallel engine prints the same load points
//! as on the sequential one, and refuses what the parallel engine does not run, naming the
//! field.

mod common;
#[path = "support/small_dragonfly.rs"]
mod small_dragonfly;

use std::path::Path;

use common::{error_line, json};

fn problem(dir: &Path, name: &str, routing: &str, partitions: usize) -> String {
    small_dragonfly::write(dir, name, routing, partitions, "")
}

#[test]
fn simulate_on_two_partitions_prints_the_sequential_points() {
    let dir = tempfile::tempdir().unwrap();
    let run = |routing: &str, partitions: usize| {
        let name = format!("{routing}{partitions}.toml");
        let p = problem(dir.path(), &name, routing, partitions);
        json(&["simulate", &p, "--sweep", "0.1,0.3", "--json"])
    };
    for routing in ["ugal_n", "q_adaptive"] {
        let (one, two) = (points(&run(routing, 1)), points(&run(routing, 2)));
        assert_eq!(one.len(), 2);
        assert_eq!(one, two, "{routing}");
    }
}

/// A report's load points without their timings (which differ; everything measured must not).
fn points(v: &serde_json::Value) -> Vec<serde_json::Value> {
    v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|point| {
            let mut point = point.clone();
            let fields = point.as_object_mut().unwrap();
            fields.remove("wall_seconds");
            fields.remove("setup_seconds");
            point
        })
        .collect()
}

#[test]
fn dqn_and_too_many_partitions_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let torus = dir.path().join("dqn.toml");
    std::fs::write(
        &torus,
        "seed = 4\n[topology]\nkind = \"torus\"\ndims = [4, 4]\n[routing]\nalgorithm = \"dqn\"\n\
         [[traffic]]\npattern = \"uniform\"\nload = 0.1\n[simulation]\nnum_vcs = 4\n\
         partitions = 2\n",
    )
    .unwrap();
    let line = error_line(&["simulate", torus.to_str().unwrap(), "--load", "0.1"]);
    assert!(line.contains("simulation.partitions"), "{line}");
    assert!(line.contains("dqn"), "{line}");
    let p = problem(dir.path(), "many.toml", "min", 37);
    let line = error_line(&["simulate", &p, "--load", "0.1"]);
    assert!(line.contains("at most one partition per router"), "{line}");
    // The command-line override is held to the same checks.
    let p = problem(dir.path(), "one.toml", "min", 1);
    let line = error_line(&["simulate", &p, "--load", "0.1", "--partitions", "37"]);
    assert!(line.contains("at most one partition per router"), "{line}");
}

/// `routes evolve` simulates its baseline and elite tables too: the same checks, before the
/// genetic algorithm runs.
#[test]
fn evolve_refuses_more_partitions_than_routers_before_the_search() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("problems/mesh4x4x4-transpose.toml")
        .unwrap()
        .replace(
            "measure_cycles = 10000",
            "measure_cycles = 10000\npartitions = 65",
        );
    let p = dir.path().join("evolve.toml");
    std::fs::write(&p, text).unwrap();
    let line = error_line(&["routes", "evolve", p.to_str().unwrap(), "--quiet"]);
    assert!(line.contains("simulation.partitions"), "{line}");
    assert!(line.contains("65 partitions for 64 routers"), "{line}");
}
