//! The `fabricopt` binary: JSON output, exports, and one-line errors for bad input.

mod common;

use std::path::Path;

use common::{error_line, fabricopt, json};

#[test]
fn topo_json_has_the_documented_fields() {
    let v = json(&["topo", "torus:4x4,c=2", "--json"]);
    assert_eq!(v["routers"], 16);
    assert_eq!(v["terminals"], 32);
    assert_eq!(v["links"], 32);
    assert_eq!(v["diameter"], 4);
    assert_eq!(v["bisection"]["upper"], 8);
    assert_eq!(v["bisection"]["lower"], 8);
    assert_eq!(v["bisection"]["exact"], 8);
    assert!(v["avg_distance"].as_f64().unwrap() > 2.0);
    assert!(v["path_diversity"]["disjoint_shortest"].as_f64().is_some());
    assert!(v["path_diversity"]["shortest_paths"].as_f64().is_some());
}

#[test]
fn topo_reads_every_bundled_problem() {
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("problems")).unwrap()
    {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_name().unwrap().to_str().unwrap();
            // The 8,192-router system is exercised by the benchmarks, not the test suite.
            if name.contains("8192") {
                continue;
            }
            // The real-coded search benchmarks (zdt*, dtlz2) have no topology.
            let text = std::fs::read_to_string(&path).unwrap();
            if !text.contains("[topology]") {
                continue;
            }
            // ExaNeSt search files describe T = (R, N, M) without a genome: `topo` says so.
            if text.contains("problem = \"exanest\"") {
                let err = error_line(&["topo", path.to_str().unwrap()]);
                assert!(err.contains("topology.genome: is required"), "{err}");
                continue;
            }
            let v = json(&["topo", path.to_str().unwrap(), "--json"]);
            assert!(v["connected"].as_bool().unwrap(), "{name}");
        }
    }
}

#[test]
fn topo_dragonfly_problem_matches_the_paper_sizes() {
    let v = json(&["topo", "problems/dragonfly-1056.toml", "--json"]);
    assert_eq!(v["routers"], 264);
    assert_eq!(v["terminals"], 1056);
    assert_eq!(v["diameter"], 3);
    assert_eq!(v["links_by_kind"]["global"], 528);
}

#[test]
fn topo_table_is_readable() {
    let out = fabricopt(&["topo", "exanest:R=2,N=4,M=2,genome=5/17/8/22"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for row in [
        "routers",
        "diameter",
        "average distance",
        "bisection width",
        "path diversity",
    ] {
        assert!(text.contains(row), "{text}");
    }
}

#[test]
fn bad_input_gives_one_clear_line() {
    let e = error_line(&["topo", "blob:3"]);
    assert!(e.contains("unknown topology `blob`"), "{e}");
    let e = error_line(&["topo", "mesh:8xq"]);
    assert!(e.contains("dims"), "{e}");
    let e = error_line(&["topo", "dragonfly:p=4,a=8,h=4,g=40"]);
    assert!(e.contains("g: 40 groups need 39 global links"), "{e}");
    let e = error_line(&["topo", "missing-file.toml"]);
    assert!(
        e.contains("missing-file.toml") && e.contains("No such file"),
        "{e}"
    );
    let e = error_line(&["topo", "exanest:R=2,N=4,M=2,genome=5/17/8/99"]);
    assert!(e.contains("genome[4]: gene 4 = 99 is out of range"), "{e}");
    let e = error_line(&["topo", "jellyfish:routers=10,degree=12"]);
    assert!(e.contains("degree"), "{e}");
}

#[test]
fn bad_problem_file_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "seed = 1\n[topology]\nkind = \"dragonfly\"\np = \"four\"\n",
    )
    .unwrap();
    let e = error_line(&["topo", path.to_str().unwrap()]);
    assert!(e.contains("bad.toml: line 4: topology.p"), "{e}");
    std::fs::write(&path, "[topology]\nkind = \"dragonfly\"\np = 4\ng = 7\n").unwrap();
    let e = error_line(&["topo", path.to_str().unwrap()]);
    assert!(
        e.contains("bad.toml: topology.g: g - 1 = 6 must divide a*h = 32"),
        "{e}"
    );
}

#[test]
fn disconnected_topologies_are_rejected() {
    // Only internal genes with two cabinets: the cabinets never meet.
    let e = error_line(&["topo", "exanest:R=2,N=4,M=2,genome=5/0/8/0"]);
    assert!(e.contains("disconnected"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("split.txt");
    std::fs::write(&path, "routers 4\n0 1\n2 3\n").unwrap();
    let e = error_line(&["topo", path.to_str().unwrap()]);
    assert!(e.contains("split.txt") && e.contains("disconnected"), "{e}");
}

#[test]
fn export_round_trips_through_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("df.json");
    let out = fabricopt(&[
        "topo",
        "dragonfly:p=2,arrangement=circulant",
        "--export",
        "json",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let direct = json(&["topo", "dragonfly:p=2,arrangement=circulant", "--json"]);
    let imported = json(&["topo", file.to_str().unwrap(), "--json"]);
    for key in [
        "routers",
        "terminals",
        "links",
        "diameter",
        "avg_distance",
        "path_diversity",
    ] {
        assert_eq!(direct[key], imported[key], "{key}");
    }
    for format in ["dot", "anynet"] {
        let file = dir.path().join(format!("df.{format}"));
        let out = fabricopt(&[
            "topo",
            "dragonfly:p=2",
            "--export",
            format,
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(out.status.success());
        assert!(std::fs::metadata(&file).unwrap().len() > 100);
    }
}
