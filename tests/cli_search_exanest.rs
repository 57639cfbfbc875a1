//! `fabricopt search` on the ExaNeSt link-arrangement problem: the Table II report, the
//! bisection proof check, the Jellyfish comparison, determinism and errors.

mod common;

use std::path::Path;

use common::{error_line, json};

fn write_problem(dir: &Path, topology: &str, exanest: &str) -> String {
    let path = dir.join("exa.toml");
    let text = format!(
        "name = \"exa\"\nseed = 5\n[topology]\nkind = \"exanest\"\n{topology}\n\
         [search]\nproblem = \"exanest\"\nalgorithm = \"both\"\npopulation = 12\n\
         generations = 6\nruns = 2\n[search.exanest]\n{exanest}\n"
    );
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn small_system_reports_table_check_and_jellyfish() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_problem(dir.path(), "r = 2\nn = 4\nm = 2", "p_ext = 0.5");
    let out = dir.path().join("out");
    let args = [
        "search",
        &file,
        "--json",
        "--quiet",
        "--jellyfish",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    let v = json(&args);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "2 runs x 2 algorithms");
    let table = &v["exanest"]["table"]["algorithms"];
    assert_eq!(table[0]["algorithm"], "NSGA-II");
    assert_eq!(table[1]["algorithm"], "SMS-EMOA");
    for alg in table.as_array().unwrap() {
        assert_eq!(alg["hypervolumes"].as_array().unwrap().len(), 2);
        for g in alg["groups"].as_array().unwrap() {
            let links = g["active_links"].as_u64().unwrap();
            assert!((1..=4).contains(&links), "{g}");
            // A system of 16 routers has at most 4 links per chassis x 8 chassis = 32 cables.
            assert!(g["f1_mean"].as_f64().unwrap() <= 32.0);
        }
    }
    assert!(v["exanest"]["table"]["hypervolume_rank_sum"]["p_value"].is_number());
    // Every distinct front member's heuristic bisection is proven.
    let check = &v["exanest"]["bisection_check"];
    assert_eq!(check["members"], check["proven"]);
    assert_eq!(check["members"], check["heuristic_exact"]);
    let front = v["front"].as_array().unwrap();
    assert!(!front.is_empty());
    for m in front {
        assert!(m["objectives"]["bisection"].as_f64().unwrap() > 0.0);
        assert!(m["extras"]["diameter"].as_f64().unwrap() >= 1.0);
    }
    for c in v["exanest"]["jellyfish"].as_array().unwrap() {
        assert_eq!(c["jellyfish_samples"], 3);
        assert_eq!(c["jellyfish_degree"], c["active_links"]);
    }
    // Same seed, same result (the resumed runs are finished checkpoints: no recomputation).
    let again = json(&args);
    assert_eq!(again["front"], v["front"]);
    assert_eq!(again["exanest"]["table"], v["exanest"]["table"]);
    assert!(out.join("sms-emoa-run1").join("front.csv").exists());
}

#[test]
fn bad_exanest_files_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_problem(dir.path(), "r = 8\nn = 16\nm = 1", "p_ext = 0.25");
    let err = error_line(&["search", &file, "--quiet"]);
    assert!(err.contains("search.exanest.p_ext"), "{err}");
    assert!(err.contains("exa.toml"), "{err}");
    let file = write_problem(
        dir.path(),
        "r = 2\nn = 4\nm = 2\ngenome = [5, 17, 8, 22]",
        "p_ext = 0.5",
    );
    let err = error_line(&["search", &file, "--quiet"]);
    assert!(err.contains("topology.genome"), "{err}");
    let file = write_problem(dir.path(), "r = 2\nm = 2", "");
    let err = error_line(&["search", &file, "--quiet"]);
    assert!(err.contains("topology.n: missing"), "{err}");
    let file = write_problem(dir.path(), "r = 2\nn = 4\nm = 2", "p_new = 1.5");
    let err = error_line(&["search", &file, "--quiet"]);
    assert!(err.contains("search.exanest.p_new"), "{err}");
    // R is checked before anything is sized by it (2R genes used to abort the allocation).
    let file = write_problem(
        dir.path(),
        "r = 1000000000000000000
n = 4
m = 2",
        "",
    );
    let err = error_line(&["search", &file, "--quiet"]);
    assert!(
        err.contains("exa.toml: topology.r: 1000000000000000000 links"),
        "{err}"
    );
}

/// A checkpoint whose genomes were edited (wrong length, a gene out of range) used to panic
/// in the decoder and then hang waiting for the checkpoint writer: now it is refused with the
/// member and the reason.
#[test]
fn resume_refuses_edited_exanest_genomes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_problem(dir.path(), "r = 2\nn = 4\nm = 2", "p_ext = 0.5");
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let args = [
        "search",
        &file,
        "--quiet",
        "--runs",
        "1",
        "--algorithm",
        "nsga2",
        "--jellyfish",
        "0",
        "--out",
        out,
    ];
    assert!(common::fabricopt(&args).status.success());
    let checkpoint = dir.path().join("out/nsga2-run0/checkpoint.json");
    let original = std::fs::read_to_string(&checkpoint).unwrap();
    let mut resume = args.to_vec();
    resume.push("--resume");
    for (edit, expected) in [
        (
            serde_json::json!([1, 2, 3]),
            "population[0].genome: genome: has 3 genes but T = (R=2, N=4, M=2) needs 2R = 4",
        ),
        (
            serde_json::json!([9999, 0, 0, 0]),
            "population[0].genome: genome[1]: gene 1 = 9999 is out of range",
        ),
    ] {
        let mut v: serde_json::Value = serde_json::from_str(&original).unwrap();
        // Back to an unfinished state (generation 2 of 6), so the resume runs generations.
        v["finished"] = false.into();
        v["generation"] = 2.into();
        v["evaluations"] = 36.into();
        v["history"].as_array_mut().unwrap().truncate(3);
        v["population"][0]["genome"] = edit;
        std::fs::write(&checkpoint, v.to_string()).unwrap();
        let out = common::fabricopt_within(&resume, 60);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && !stderr.contains("panicked"),
            "{stderr}"
        );
        assert!(stderr.contains(expected), "{stderr}");
    }
}
