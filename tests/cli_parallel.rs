//! `[simulation] partitions`: `simulate` on the parallel engine prints the same load points
//! as on the sequential one, and refuses what the parallel engine does not run, naming the
//! field.

mod common;

use std::path::Path;

use common::{error_line, json};

fn problem(dir: &Path, name: &str, routing: &str, partitions: usize) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "seed = 4\n[topology]\nkind = \"dragonfly\"\np = 2\na = 4\nh = 2\ng = 9\n\
             local_latency = 2\nglobal_latency = 12\n[routing]\nalgorithm = \"{routing}\"\n\
             [[traffic]]\npattern = \"uniform\"\nload = 0.2\npacket_size = 2\n\
             [simulation]\nnum_vcs = 5\nvc_depth = 16\nwarmup_cycles = 500\n\
             measure_cycles = 2000\npartitions = {partitions}\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn simulate_on_two_partitions_prints_the_sequential_points() {
    let dir = tempfile::tempdir().unwrap();
    let run = |partitions: usize| {
        let p = problem(
            dir.path(),
            &format!("p{partitions}.toml"),
            "ugal_n",
            partitions,
        );
        json(&["simulate", &p, "--sweep", "0.1,0.3", "--json"])
    };
    let (one, two) = (run(1), run(2));
    let points = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|point| {
                let mut point = point.clone();
                let fields = point.as_object_mut().unwrap();
                // Timings differ; everything measured must not.
                fields.remove("wall_seconds");
                fields.remove("setup_seconds");
                point
            })
            .collect()
    };
    assert_eq!(points(&one).len(), 2);
    assert_eq!(points(&one), points(&two));
}

#[test]
fn a_learned_routing_on_partitions_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = problem(dir.path(), "q.toml", "q_adaptive", 2);
    let line = error_line(&["simulate", &p, "--load", "0.1"]);
    assert!(line.contains("simulation.partitions"), "{line}");
    assert!(line.contains("q_adaptive"), "{line}");
    let p = problem(dir.path(), "many.toml", "min", 37);
    let line = error_line(&["simulate", &p, "--load", "0.1"]);
    assert!(line.contains("at most one partition per router"), "{line}");
}
