//! `fabricopt simulate` with `routing.algorithm = "table"`: the table file resolves relative to
//! the problem file, the DOR table in plain mode gives `dor`'s numbers, errors are one line.

mod common;

use std::path::Path;

use common::{error_line, json};
use fabricopt::registry::routing::build_routing;
use fabricopt::routing::RoutingConfig;
use fabricopt::routing::table::route::table_from_routing;
use fabricopt::topology::TopologyConfig;

fn problem(dir: &Path, name: &str, routing: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "seed = 3\n[topology]\nkind = \"mesh\"\ndims = [4, 4]\n[routing]\n{routing}\n\
             [[traffic]]\npattern = \"uniform\"\nload = 0.2\npacket_size = 2\n\
             [simulation]\nnum_vcs = 8\nwarmup_cycles = 500\nmeasure_cycles = 3000\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn simulate_a_table_file_relative_to_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let topo = TopologyConfig::parse_spec("mesh:4x4")
        .unwrap()
        .build(Path::new("."), 1)
        .unwrap();
    let dor_cfg = RoutingConfig::new("dor");
    let dor = build_routing(&dor_cfg, &topo, 8).unwrap();
    let table = table_from_routing(dor.as_ref(), &topo, 8).unwrap();
    std::fs::create_dir(dir.path().join("tables")).unwrap();
    std::fs::write(
        dir.path().join("tables/dor.json"),
        fabricopt::export::routes::to_json_string(&table, &Default::default()),
    )
    .unwrap();
    let run = |p: &str| json(&["simulate", p, "--load", "0.2", "--json"]);
    let reference = run(&problem(dir.path(), "dor.toml", "algorithm = \"dor\""));
    let plain = run(&problem(
        dir.path(),
        "plain.toml",
        "algorithm = \"table\"\ntable = \"tables/dor.json\"\ntable_mode = \"plain\"",
    ));
    let point = |v: &serde_json::Value, key: &str| v["points"][0][key].clone();
    for key in [
        "accepted",
        "latency_avg",
        "latency_p99",
        "hops_avg",
        "counters",
    ] {
        assert_eq!(point(&reference, key), point(&plain, key), "{key}");
    }
    // The hierarchy with its defaults (table 4..8, adaptive 1..4, escape 0).
    let hier = run(&problem(
        dir.path(),
        "hier.toml",
        "algorithm = \"table\"\ntable = \"tables/dor.json\"",
    ));
    assert_eq!(hier["points"][0]["saturated"], false, "{hier}");
    let e = error_line(&[
        "simulate",
        &problem(
            dir.path(),
            "missing.toml",
            "algorithm = \"table\"\ntable = \"tables/nope.json\"",
        ),
        "--load",
        "0.2",
    ]);
    assert!(e.contains("routing.table: cannot read"), "{e}");
    let e = error_line(&[
        "simulate",
        &problem(
            dir.path(),
            "overlap.toml",
            "algorithm = \"table\"\ntable = \"tables/dor.json\"\nescape_vcs = [0, 2]",
        ),
        "--load",
        "0.2",
    ]);
    assert!(
        e.contains("routing.escape_vcs: [0, 2) overlaps adaptive_vcs [1, 4)"),
        "{e}"
    );
}
