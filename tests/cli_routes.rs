//! `fabricopt routes export` from the command line.

mod common;

use common::{error_line, fabricopt, json};

fn mesh_problem(dir: &std::path::Path, routing: &str) -> String {
    let path = dir.join("p.toml");
    std::fs::write(
        &path,
        format!("seed = 3\n[topology]\nkind = \"mesh\"\ndims = [4, 4]\n{routing}"),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn stdout_of(args: &[&str]) -> String {
    let out = fabricopt(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn exports_every_format_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let p = mesh_problem(dir.path(), "[routing]\nalgorithm = \"dor\"\n");
    let json = json(&["routes", "export", &p, "--format", "json"]);
    assert_eq!(json["format"], "fabricopt-routes");
    assert_eq!(json["version"], 1);
    assert_eq!(json["num_routers"], 16);
    assert_eq!(json["metadata"]["algorithm"], "dor");
    let paths = json["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 240);
    // Router id = x + 4 y, so 0 -> 5 goes along x first.
    assert_eq!(paths[4]["src"], 0);
    assert_eq!(paths[4]["dst"], 5);
    assert_eq!(paths[4]["routers"], serde_json::json!([0, 1, 5]));
    assert_eq!(paths[4]["hops"], 2);
    assert_eq!(paths[4]["origin"], "dor");

    let csv = stdout_of(&["routes", "export", &p, "--format", "csv"]);
    assert_eq!(
        csv.lines().next().unwrap(),
        "router,source,destination,hop,output_port,vc_class"
    );
    // Mesh 4x4: the 240 DOR paths have 640 hops in all (average distance 8/3).
    assert_eq!(csv.lines().count(), 641);

    let list = stdout_of(&["routes", "export", &p, "--format", "paths"]);
    assert!(
        list.starts_with("# fabricopt routes: topology mesh:4x4"),
        "{list}"
    );
    assert!(list.lines().any(|l| l == "0 5 0 1 5"), "{list}");

    let lft = stdout_of(&["routes", "export", &p, "--format", "lft"]);
    assert_eq!(
        lft.matches("Unicast lids [0x0-0x20] of switch Lid").count(),
        16
    );
    assert_eq!(lft.matches("32 valid lids dumped").count(), 16);
}

#[test]
fn writes_a_file_and_converts_a_table_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = mesh_problem(dir.path(), "");
    let json = dir.path().join("dor.json");
    let out = fabricopt(&[
        "routes",
        "export",
        &p,
        "--routing",
        "dor",
        "--format",
        "json",
        "-o",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    // Converting the table file gives the same paths as walking DOR again.
    let from_table = stdout_of(&[
        "routes",
        "export",
        &p,
        "--table",
        json.to_str().unwrap(),
        "--format",
        "paths",
    ]);
    let walked = stdout_of(&[
        "routes",
        "export",
        &p,
        "--routing",
        "dor",
        "--format",
        "paths",
    ]);
    assert_eq!(from_table, walked);
    // Only the output file is left in the directory (atomic write, no temporary file).
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["dor.json", "p.toml"]);
}

#[test]
fn dfsssp_on_exanest_exports_lfts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.toml");
    std::fs::write(
        &path,
        "[topology]\nkind = \"exanest\"\nr = 2\nn = 4\nm = 2\ngenome = [5, 17, 8, 22]\n\
         [routing]\nalgorithm = \"dfsssp\"\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let lft = stdout_of(&["routes", "export", p, "--format", "lft"]);
    assert!(lft.contains("valid lids dumped"), "{lft}");
}

#[test]
fn errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = mesh_problem(dir.path(), "[routing]\nalgorithm = \"valiant\"\n");
    let e = error_line(&["routes", "export", &p, "--format", "json"]);
    assert!(
        e.contains("routing `valiant` is adaptive or randomised"),
        "{e}"
    );

    let p = mesh_problem(dir.path(), "");
    let e = error_line(&["routes", "export", &p, "--format", "json"]);
    assert!(e.contains("no [routing] algorithm"), "{e}");

    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"format\": \"fabricopt-routes\", \"version\": 1,\n  \"paths\": 3}",
    )
    .unwrap();
    let e = error_line(&[
        "routes",
        "export",
        &p,
        "--table",
        bad.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert!(e.contains("bad.json: line 2"), "{e}");

    // A valid table for another topology (a 2x2 mesh) does not fit the 4x4 mesh.
    let small = mesh_problem(dir.path(), "");
    std::fs::write(
        &small,
        "[topology]\nkind = \"mesh\"\ndims = [2, 2]\n[routing]\nalgorithm = \"dor\"\n",
    )
    .unwrap();
    let t = dir.path().join("small.json");
    stdout_of(&[
        "routes",
        "export",
        &small,
        "--format",
        "json",
        "-o",
        t.to_str().unwrap(),
    ]);
    let p = dir.path().join("big.toml");
    std::fs::write(&p, "[topology]\nkind = \"mesh\"\ndims = [4, 4]\n").unwrap();
    let e = error_line(&[
        "routes",
        "export",
        p.to_str().unwrap(),
        "--table",
        t.to_str().unwrap(),
        "--format",
        "lft",
    ]);
    assert!(
        e.contains("small.json: num_routers: 4 but the topology has 16"),
        "{e}"
    );

    let e = error_line(&["routes", "export", "missing.toml", "--format", "json"]);
    assert!(e.contains("missing.toml"), "{e}");
}
