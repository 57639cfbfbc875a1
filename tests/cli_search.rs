//! `fabricopt search` from the command line: JSON report, files, errors, kill and resume.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{error_line, fabricopt, json};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn zdt1_json_has_hypervolume_evaluations_and_front() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let v = json(&[
        "search",
        "problems/zdt1.toml",
        "--seed",
        "3",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let hv = v["hypervolume"].as_f64().unwrap();
    // The optimum at (1.1, 1.1) is 0.11 + 2/3 = 0.8767.
    assert!(hv > 0.865 && hv < 0.8767, "{hv}");
    assert_eq!(v["evaluations"], 25000);
    let front = v["front"].as_array().unwrap();
    assert!(front.len() > 80, "{}", front.len());
    for m in front {
        let (f1, f2) = (
            m["objectives"]["f1"].as_f64().unwrap(),
            m["objectives"]["f2"].as_f64().unwrap(),
        );
        // Close to f2 = 1 - sqrt(f1).
        assert!((f2 - (1.0 - f1.sqrt())).abs() < 0.05, "{f1} {f2}");
    }
    let run = out.join("nsga2-run0");
    for f in ["checkpoint.json", "front.csv", "front.json"] {
        assert!(run.join(f).exists(), "{f}");
    }
    let csv = std::fs::read_to_string(run.join("front.csv")).unwrap();
    assert!(csv.starts_with("f1,f2,genome\n"), "{}", &csv[..40]);
    assert_eq!(csv.lines().count(), front.len() + 1);
}

#[test]
fn both_algorithms_table_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let svg = dir.path().join("fronts.svg");
    let o = fabricopt(&[
        "search",
        "problems/dtlz2.toml",
        "--algorithm",
        "both",
        "--runs",
        "2",
        "--generations",
        "3",
        "--no-checkpoint",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("median hypervolume NSGA-II"), "{text}");
    assert!(text.contains("median hypervolume SMS-EMOA"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("sms-emoa ")).count(),
        2
    );
    assert!(text.contains("f3"), "{text}");
    for run in ["nsga2-run0", "nsga2-run1", "sms-emoa-run0", "sms-emoa-run1"] {
        assert!(out.join(run).join("front.json").exists(), "{run}");
        assert!(!out.join(run).join("checkpoint.json").exists(), "{run}");
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.contains("SMS-EMOA") && plot.contains("f3"));
}

#[test]
fn errors_name_file_field_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "none.toml", "seed = 1\n");
    let e = error_line(&["search", &p]);
    assert!(e.contains("none.toml: search:"), "{e}");
    let p = write(
        dir.path(),
        "pop.toml",
        "[search]\nproblem = \"zdt1\"\npopulation = 2\nevaluations = 100\n",
    );
    let e = error_line(&["search", &p]);
    assert!(
        e.contains("pop.toml: search.population: must be at least 4"),
        "{e}"
    );
    let p = write(
        dir.path(),
        "ref.toml",
        "[search]\nproblem = \"zdt1\"\nevaluations = 200\nreference_point = [1.1]\n",
    );
    let e = error_line(&["search", &p]);
    assert!(
        e.contains("ref.toml: search.reference_point: has 1 values"),
        "{e}"
    );
    let p = write(
        dir.path(),
        "obj.toml",
        "[search]\nproblem = \"zdt2\"\nevaluations = 200\nobjectives = 3\n",
    );
    let e = error_line(&["search", &p]);
    assert!(e.contains("obj.toml: search.objectives:"), "{e}");
    let p = write(
        dir.path(),
        "ex.toml",
        "[search]\nproblem = \"exanest\"\ngenerations = 2\n",
    );
    let e = error_line(&["search", &p]);
    assert!(
        e.contains("ex.toml: topology.kind: the exanest search needs"),
        "{e}"
    );
    let e = error_line(&["search", "problems/zdt1.toml", "--runs", "0"]);
    assert!(e.contains("--runs"), "{e}");
}

fn checkpoint_generation(path: &Path) -> Option<(u64, bool)> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).expect("complete JSON (atomic writes)");
    Some((v["generation"].as_u64()?, v["finished"].as_bool()?))
}

/// Starts a run, kills it once a checkpoint with generation >= 2 exists, resumes it, and
/// compares the final front with an uninterrupted run's, byte for byte.
#[test]
fn killed_and_resumed_run_ends_like_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    // Long genomes and many generations: a few seconds, so the kill lands mid-run.
    let p = write(
        dir.path(),
        "long.toml",
        "name = \"long\"\nseed = 11\n[search]\nproblem = \"zdt1\"\nvariables = 400\n\
         population = 40\ngenerations = 1200\n",
    );
    let killed = dir.path().join("killed");
    let args = |out: &Path| -> Vec<String> {
        [
            "search",
            p.as_str(),
            "--quiet",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabricopt"))
        .args(args(&killed))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let checkpoint = killed.join("nsga2-run0").join("checkpoint.json");
    let start = Instant::now();
    loop {
        if let Some((g, finished)) = checkpoint_generation(&checkpoint) {
            assert!(!finished, "the run finished before it could be killed");
            if g >= 2 {
                break;
            }
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        assert!(start.elapsed() < Duration::from_secs(120), "no checkpoint");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "still running when killed"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let (at_kill, finished) = checkpoint_generation(&checkpoint).unwrap();
    assert!(!finished && at_kill >= 2);
    let mut resume = args(&killed);
    resume.push("--resume".into());
    let resumed = Command::new(env!("CARGO_BIN_EXE_fabricopt"))
        .args(&resume)
        .output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let plain = dir.path().join("plain");
    let o = Command::new(env!("CARGO_BIN_EXE_fabricopt"))
        .args(args(&plain))
        .output()
        .unwrap();
    assert!(o.status.success());
    let a = std::fs::read(killed.join("nsga2-run0/front.json")).unwrap();
    let b = std::fs::read(plain.join("nsga2-run0/front.json")).unwrap();
    assert!(a == b, "resumed and uninterrupted fronts differ");
    assert_eq!(checkpoint_generation(&checkpoint), Some((1200, true)));
    // Resuming a finished run returns its result; different settings are refused.
    let v = json(&resume.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(v["generations"], 1200);
    let mut other = resume.clone();
    other.extend(["--seed".into(), "12".into()]);
    let e = error_line(&other.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(e.contains("checkpoint.json: seed:"), "{e}");
}
