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

/// The README's command on a fresh checkout: the plot goes into the run's default output
/// folder, which does not exist until the run creates it. A plot folder elsewhere must exist.
#[test]
fn the_plot_may_go_into_the_output_folder_the_run_creates() {
    let dir = tempfile::tempdir().unwrap();
    small_zdt1(dir.path(), 6, 8);
    let run = |plot: &str| {
        Command::new(env!("CARGO_BIN_EXE_fabricopt"))
            .args([
                "search",
                "small.toml",
                "--runs",
                "1",
                "--quiet",
                "--plot",
                plot,
            ])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let o = run("populations/small/front.svg");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plot = std::fs::read_to_string(dir.path().join("populations/small/front.svg")).unwrap();
    assert!(plot.starts_with("<svg"));
    let o = run("elsewhere/front.svg");
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--plot: elsewhere/front.svg: folder elsewhere does not exist"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
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
    assert!(
        e.contains("checkpoint.json: the checkpoint is of a different run: seed (checkpoint"),
        "{e}"
    );
}

fn small_zdt1(dir: &Path, variables: usize, population: usize) -> String {
    write(
        dir,
        "small.toml",
        &format!(
            "name = \"small\"\nseed = 3\n[search]\nproblem = \"zdt1\"\nvariables = {variables}\n\
             population = {population}\ngenerations = 5\n"
        ),
    )
}

/// A resumed run whose problem file changed is refused, naming the fields; `--force`
/// overrides a change the stored state survives, never one it does not (genomes of another
/// length) nor a state edited to a smaller population.
#[test]
fn resume_refuses_a_changed_problem_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let file = small_zdt1(dir.path(), 12, 20);
    let args = ["search", &file, "--quiet", "--out", out];
    assert!(fabricopt(&args).status.success());
    let resume = ["search", &file, "--quiet", "--out", out, "--resume"];
    let forced = [
        "search", &file, "--quiet", "--out", out, "--resume", "--force",
    ];
    assert!(fabricopt(&resume).status.success(), "unchanged: resumes");
    std::fs::write(
        &file,
        std::fs::read_to_string(&file).unwrap() + "[search.real]\nsbx_eta = 5\n",
    )
    .unwrap();
    let e = error_line(&resume);
    assert!(
        e.contains(
            "checkpoint.json: the checkpoint was written for a different configuration: \
             search.real.sbx_eta (checkpoint 15.0, now 5.0)"
        ),
        "{e}"
    );
    let o = fabricopt(&forced);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning:") && stderr.contains("search.real.sbx_eta"),
        "{stderr}"
    );
    small_zdt1(dir.path(), 10, 20);
    let e = error_line(&resume);
    assert!(
        e.contains("search.variables (checkpoint 12, now 10)"),
        "{e}"
    );
    let e = error_line(&forced);
    assert!(
        e.contains("genome: has 12 variables but zdt1 is set up with 10"),
        "{e}"
    );
    // A usage error (clap, exit code 2): --force means nothing without --resume.
    let o = fabricopt(&["search", &file, "--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--resume"));
    // The population cut to 10 of 20 in the checkpoint itself.
    small_zdt1(dir.path(), 12, 20);
    let checkpoint = dir.path().join("out/nsga2-run0/checkpoint.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&checkpoint).unwrap()).unwrap();
    v["population"].as_array_mut().unwrap().truncate(10);
    std::fs::write(&checkpoint, v.to_string()).unwrap();
    let e = error_line(&forced);
    assert!(
        e.contains("population: holds 10 individuals but population_size is 20"),
        "{e}"
    );
}

/// Sizes and counts that overflow or exceed the limits are refused naming the field the file
/// sets (they used to wrap, name a field the file does not set, or abort the allocation).
#[test]
fn huge_search_sizes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "huge.toml",
        "[search]\nproblem = \"zdt1\"\npopulation = 100\ngenerations = 18446744073709551615\n",
    );
    let e = error_line(&["search", &file, "--quiet"]);
    assert!(
        e.contains("huge.toml: search.generations: 18446744073709551615 generations"),
        "{e}"
    );
    let file = write(
        dir.path(),
        "huge.toml",
        "[search]\nproblem = \"zdt1\"\npopulation = 100000000000\ngenerations = 2\n",
    );
    let e = error_line(&["search", &file, "--quiet"]);
    assert!(
        e.contains("huge.toml: search.population: 100000000000 is above the limit"),
        "{e}"
    );
    let file = write(
        dir.path(),
        "huge.toml",
        "[search]\nproblem = \"zdt1\"\npopulation = 100\ngenerations = 2\nvariables = 100000000000\n",
    );
    let e = error_line(&["search", &file, "--quiet"]);
    assert!(e.contains("search.variables: 100000000000 is above"), "{e}");
    let e = error_line(&[
        "search",
        "problems/zdt1.toml",
        "--generations",
        "18446744073709551615",
    ]);
    assert!(e.contains("--generations"), "{e}");
}

/// A killed run's temporary file is removed by the next run writing into its directory.
#[test]
fn stale_temporary_files_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run_dir = out.join("nsga2-run0");
    std::fs::create_dir_all(&run_dir).unwrap();
    // No process has this id (above Linux's largest pid).
    let stale = run_dir.join(".checkpoint.json.4294967295.0.tmp");
    std::fs::write(&stale, "half a checkpoint").unwrap();
    let kept = run_dir.join("notes.tmp");
    std::fs::write(&kept, "not ours").unwrap();
    let file = small_zdt1(dir.path(), 12, 20);
    assert!(
        fabricopt(&["search", &file, "--quiet", "--out", out.to_str().unwrap()])
            .status
            .success()
    );
    assert!(!stale.exists() && kept.exists());
}
