//! `fabricopt hypervolume`: values, contributions, JSON, and one-line errors naming file:line.

mod common;

use std::path::PathBuf;

use common::{error_line, fabricopt, json};

/// Writes `content` to a file in a fresh temporary directory (kept alive by the guard).
fn csv(content: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("points.csv");
    std::fs::write(&path, content).unwrap();
    (dir, path)
}

/// The staircase (1,3), (2,1) and (1.5,3.5), which only the first point dominates, with a
/// header, a comment, a blank line and surrounding spaces.
const STAIRCASE: &str = "f1, f2\n# comment\n1,3\n 2 , 1 \n\n1.5,3.5 # dominated by (1,3) only\n";

fn stdout(args: &[&str]) -> String {
    let out = fabricopt(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn hypervolume_of_a_known_set() {
    let (_dir, path) = csv(STAIRCASE);
    let p = path.to_str().unwrap();
    assert_eq!(stdout(&["hypervolume", p, "--ref", "4,4"]), "7\n");
    // 3-D: three unit-offset boxes in [0,2]^3 cover 7.
    let (_dir, path) = csv("1,0,0\n0,1,0\n0,0,1\n");
    let p = path.to_str().unwrap();
    assert_eq!(stdout(&["hypervolume", p, "--ref", "2,2,2"]), "7\n");
}

#[test]
fn contributions_one_line_per_point_in_input_order() {
    let (_dir, path) = csv(STAIRCASE);
    let p = path.to_str().unwrap();
    let out = stdout(&["hypervolume", p, "--ref", "4,4", "--contributions"]);
    // The volume, then each point's contribution; the dominated point cuts 0.25 from the first.
    assert_eq!(out, "7\n0.75\n4\n0\n");
}

#[test]
fn json_output() {
    let (_dir, path) = csv(STAIRCASE);
    let p = path.to_str().unwrap();
    let v = json(&["hypervolume", p, "--ref", "4,4", "--json"]);
    assert_eq!(v["hypervolume"], 7.0);
    assert_eq!(v["points"], 3);
    assert_eq!(v["dimensions"], 2);
    assert!(v.get("contributions").is_none());
    let v = json(&[
        "hypervolume",
        p,
        "--ref",
        "4,4",
        "--json",
        "--contributions",
    ]);
    assert_eq!(v["contributions"], serde_json::json!([0.75, 4.0, 0.0]));
}

#[test]
fn points_outside_the_reference_count_for_nothing() {
    let (_dir, path) = csv("0.5,0.5\n2,0\n1,1\n");
    let p = path.to_str().unwrap();
    assert_eq!(stdout(&["hypervolume", p, "--ref", "1,1"]), "0.25\n");
    // A negative reference value is not taken for an option.
    let (_dir, path) = csv("-2,-2\n");
    let p = path.to_str().unwrap();
    assert_eq!(stdout(&["hypervolume", p, "--ref", "-1,-1"]), "1\n");
}

#[test]
fn bad_files_name_the_file_and_line() {
    let cases = [
        ("1,3\n2,x\n", "line 2, column 2: `x` is not a number"),
        (
            "1,3\n\n2,NaN\n",
            "line 3, column 2: `NaN`: NaN is not allowed",
        ),
        (
            "1,inf\n",
            "line 1, column 2: `inf`: infinite values are not allowed",
        ),
        ("1,3\n2,1,3\n", "line 2: 3 values, but --ref has 2"),
        ("1,3\n2,\n", "line 2, column 2: empty value"),
        // A header may name more columns than --ref (the first ones are the objectives),
        // but every row must then have them all.
        (
            "f1,f2,f3\n1,2\n",
            "line 2: 2 values, but the header has 3 names",
        ),
        (
            "f1,f2\n1,\"2\n",
            "line 2: a quoted cell is not closed on its line",
        ),
        // A header is only allowed first.
        ("1,3\nf1,f2\n", "line 2, column 1: `f1` is not a number"),
        ("", "no points"),
        ("# only a comment\nf1,f2\n", "no points"),
    ];
    for (content, reason) in cases {
        let (_dir, path) = csv(content);
        let p = path.to_str().unwrap();
        let line = error_line(&["hypervolume", p, "--ref", "4,4"]);
        assert!(
            line.contains(&format!("{p}: {reason}")),
            "{content:?}: got `{line}`, want `{reason}`"
        );
    }
}

#[test]
fn bad_reference_and_missing_file() {
    let (_dir, path) = csv(STAIRCASE);
    let p = path.to_str().unwrap();
    let line = error_line(&["hypervolume", p, "--ref", "4,abc"]);
    assert!(
        line.contains("--ref `4,abc`: value 2: `abc` is not a number"),
        "{line}"
    );
    let line = error_line(&["hypervolume", p, "--ref", "4,nan"]);
    assert!(line.contains("--ref") && line.contains("NaN"), "{line}");
    let line = error_line(&["hypervolume", p, "--ref", ""]);
    assert!(line.contains("--ref"), "{line}");
    let line = error_line(&["hypervolume", p, "--ref", "4,4,4"]);
    assert!(line.contains("line 1: 2 names, but --ref has 3"), "{line}");
    let line = error_line(&["hypervolume", "no/such/file.csv", "--ref", "1,1"]);
    assert!(line.contains("no/such/file.csv"), "{line}");
}

/// A tiny search, then `hypervolume` on the `front.csv` it wrote (objectives, then the genome
/// column): the same value as the search's own `front.json`. The reference point is far enough
/// that after two generations the front dominates part of it (ZDT1's own 1.1 would give 0).
#[test]
fn reads_the_front_csv_that_search_writes() {
    let dir = tempfile::tempdir().unwrap();
    let problem = dir.path().join("zdt1.toml");
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/problems/zdt1.toml"))
        .unwrap()
        .replace(
            "reference_point = [1.1, 1.1]",
            "reference_point = [10.0, 10.0]",
        )
        .replace("population = 100", "population = 20");
    std::fs::write(&problem, text).unwrap();
    let out_dir = dir.path().join("out");
    let out = fabricopt(&[
        "search",
        problem.to_str().unwrap(),
        "--generations",
        "2",
        "--runs",
        "1",
        "--quiet",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = out_dir.join("nsga2-run0");
    let front: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("front.json")).unwrap()).unwrap();
    let reported = front["hypervolume"].as_f64().unwrap();
    assert!(
        reported > 0.0,
        "a meaningful comparison needs a positive volume"
    );
    let reference: Vec<String> = front["reference_point"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();
    let reference = reference.join(",");
    let csv = run.join("front.csv");
    let csv = csv.to_str().unwrap();
    assert!(
        std::fs::read_to_string(csv)
            .unwrap()
            .starts_with("f1,f2,genome\n"),
        "the test is about a front.csv with a genome column"
    );
    let printed: f64 = stdout(&["hypervolume", csv, "--reference", &reference])
        .trim()
        .parse()
        .unwrap();
    assert_eq!(printed, reported);
    // Columns chosen by name, in any order, give the same volume (the reference is square).
    let v = json(&[
        "hypervolume",
        csv,
        "--ref",
        &reference,
        "--columns",
        "f2,f1",
        "--json",
    ]);
    assert_eq!(v["hypervolume"].as_f64().unwrap(), reported);
    assert_eq!(v["columns"], serde_json::json!(["f2", "f1"]));
    let line = error_line(&[
        "hypervolume",
        csv,
        "--ref",
        &reference,
        "--columns",
        "f1,genome",
    ]);
    assert!(line.contains("column 3: `"), "{line}");
    let line = error_line(&[
        "hypervolume",
        csv,
        "--ref",
        &reference,
        "--columns",
        "f1,f9",
    ]);
    assert!(
        line.contains("no column `f9` for --columns (the columns are f1, f2, genome)"),
        "{line}"
    );
}

/// Natural-sign fronts with maximised objectives: `--maximise` negates the column and its
/// reference value, so maximising b above 0 is minimising -b below 0.
#[test]
fn maximised_columns_and_quoted_cells() {
    let (_dir, path) = csv("a,b,genome\n1,3,\"x, y\"\n2,1,\"say \"\"hi\"\"\"\n");
    let p = path.to_str().unwrap();
    // Minimise a below 4, maximise b above 0: boxes [1,4]x[0,3] and [2,4]x[0,1] cover 9.
    assert_eq!(
        stdout(&["hypervolume", p, "--ref", "4,0", "--maximise", "b"]),
        "9\n"
    );
    let line = error_line(&["hypervolume", p, "--ref", "4,0", "--maximise", "c"]);
    assert!(
        line.contains("--maximise: `c` is not an objective column"),
        "{line}"
    );
}

/// Found by fuzzing: finite values near a double's range overflowed the volume products and
/// the command printed `NaN`; now it says why it cannot answer.
#[test]
fn volumes_beyond_a_double_are_refused_not_printed_as_nan() {
    let (_dir, path) = csv("8,1.5,4\n-1e308,1,2\n");
    let p = path.to_str().unwrap();
    let e = error_line(&["hypervolume", p, "--ref", "9,3,5"]);
    assert!(
        e.contains("points.csv: the hypervolume is") && e.contains("rescale"),
        "{e}"
    );
    let e = error_line(&["hypervolume", p, "--ref", "9,3,5", "--contributions"]);
    assert!(e.contains("points.csv: the hypervolume is"), "{e}");
}
