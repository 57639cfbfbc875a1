//! Issue 12 from the command line: absurd sizes and counts are refused with one line naming
//! the field, output paths are checked before the work, a closed standard output ends the
//! command quietly, `bench` prints its table on stdout and refuses bad selections.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{error_line, fabricopt, json};

/// A small mesh problem with `extra` appended to its `[simulation]` table.
fn problem(dir: &Path, routing: &str, extra: &str) -> String {
    let path = dir.join("p.toml");
    std::fs::write(
        &path,
        format!(
            "seed = 3\n[topology]\nkind = \"mesh\"\ndims = [4, 4]\n[routing]\nalgorithm = \
             \"{routing}\"\n[[traffic]]\npattern = \"uniform\"\nload = 0.1\npacket_size = 2\n\
             [simulation]\nnum_vcs = 2\nwarmup_cycles = 200\nmeasure_cycles = 1000\n{extra}"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn huge_cycle_counts_are_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    // Each of these used to wrap `warmup + measure` (or `+ drain`) and exit 0 with all-zero
    // statistics.
    let max = "18446744073709551615";
    for (field, default) in [
        ("measure_cycles", "measure_cycles = 1000"),
        ("warmup_cycles", "warmup_cycles = 200"),
    ] {
        let p = problem(dir.path(), "dor", "");
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace(default, &format!("{field} = {max}"));
        std::fs::write(&p, text).unwrap();
        let line = error_line(&["simulate", &p, "--no-bound"]);
        assert!(
            line.contains(&format!("simulation.{field}: at most 1000000000000 cycles")),
            "{line}"
        );
    }
    let p = problem(dir.path(), "dor", &format!("drain_cycles = {max}\n"));
    let line = error_line(&["simulate", &p, "--no-bound"]);
    assert!(line.contains("simulation.drain_cycles: at most"), "{line}");
    let p = problem(dir.path(), "dor", "");
    let line = error_line(&[
        "simulate",
        &p,
        "--no-bound",
        "--warmup",
        "18446744073709551615",
    ]);
    assert!(line.contains("simulation.warmup_cycles: at most"), "{line}");
    assert!(line.contains("command line"), "{line}");
    for (extra, field) in [
        (
            "vc_depth = 4294967295\n",
            "simulation.vc_depth: at most 65536",
        ),
        (
            "routing_delay = 4294967295\n",
            "simulation.routing_delay: at most",
        ),
        (
            "credit_delay = 4000000000\n",
            "simulation.credit_delay: at most",
        ),
        ("batches = 100000\n", "simulation.batches: at most 1000"),
        (
            "max_queued_packets = 18446744073709551615\n",
            "max_queued_packets",
        ),
        (
            "timeline_window = 1\n",
            "simulation.timeline_window: a run of up to",
        ),
    ] {
        let extra = if extra.starts_with("timeline") {
            // 10^12 cycles in windows of one cycle.
            "timeline_window = 1\ndrain_cycles = 1000000000000\n"
        } else {
            extra
        };
        let p = problem(dir.path(), "dor", extra);
        let line = error_line(&["simulate", &p, "--no-bound"]);
        assert!(line.contains(field), "{extra}: {line}");
    }
}

#[test]
fn packets_longer_than_a_flit_counter_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = problem(dir.path(), "dor", "");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("packet_size = 2", "packet_size = 4294967295");
    std::fs::write(&p, text).unwrap();
    let line = error_line(&["simulate", &p, "--no-bound"]);
    assert!(
        line.contains("packet_size: at most 1048576 flits"),
        "{line}"
    );
}

/// The throughput bound never builds the terminal-pair matrix (98 GiB on the 114,582-terminal
/// dragonfly) but searches shortest paths from every router over every channel: on that
/// dragonfly it is skipped with a warning saying why; `--normalise bound`, which needs it, is
/// an error.
#[test]
fn a_bound_larger_than_the_machine_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    std::fs::write(
        &path,
        "[topology]\nkind = \"dragonfly\"\np = 13\n[routing]\nalgorithm = \"min\"\n\
         [[traffic]]\npattern = \"uniform\"\nload = 0.1\n",
    )
    .unwrap();
    let line = error_line(&["simulate", path.to_str().unwrap(), "--normalise", "bound"]);
    assert!(
        line.contains(
            "--normalise bound: topology: 8814 routers x 334932 channels is too large for the \
             routing bound (at most 500000000)"
        ),
        "{line}"
    );
}

#[test]
fn a_run_larger_than_the_machine_is_refused_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    // The 114,582-node dragonfly itself is accepted; 64 VCs of 65,536 flits on each of its
    // channels (about 17 PiB) are not.
    std::fs::write(
        &path,
        "[topology]\nkind = \"dragonfly\"\np = 13\n[routing]\nalgorithm = \"min\"\n\
         [[traffic]]\npattern = \"uniform\"\nload = 0.1\n\
         [simulation]\nnum_vcs = 64\nvc_depth = 65536\n",
    )
    .unwrap();
    let start = Instant::now();
    let line = error_line(&["simulate", path.to_str().unwrap()]);
    assert!(
        line.contains("simulation.vc_depth: a load point on dragonfly"),
        "{line}"
    );
    assert!(line.contains("GiB"), "{line}");
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn drain_zero_and_pretraining_without_learning_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = problem(dir.path(), "dor", "drain_cycles = 0\n");
    let line = error_line(&["simulate", &p, "--no-bound"]);
    assert!(
        line.contains("simulation.drain_cycles: must be at least 1"),
        "{line}"
    );
    assert!(line.contains("saturated"), "{line}");
    let p = problem(dir.path(), "dor", "");
    let line = error_line(&["simulate", &p, "--no-bound", "--pretrain", "2"]);
    assert!(
        line.contains("--pretrain: routing dor does not learn"),
        "{line}"
    );
    let p = problem(dir.path(), "dor", "pretrain_runs = 1\n");
    let line = error_line(&["simulate", &p, "--no-bound"]);
    assert!(line.contains("simulation.pretrain_runs"), "{line}");
    let line = error_line(&["simulate", &p, "--no-bound", "--compare", "dor,duato"]);
    assert!(line.contains("does not learn"), "{line}");
    // A learned routing takes it (one short pre-training run).
    let p = problem(dir.path(), "q_routing", "");
    let p = {
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, text.replace("num_vcs = 2", "num_vcs = 6")).unwrap();
        p
    };
    let out = fabricopt(&["simulate", &p, "--no-bound", "--pretrain", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn topology_sizes_that_overflow_are_refused() {
    for (spec, want) in [
        (
            "mesh:4294967296x4294967296x2",
            "dims: the topology would have too many routers",
        ),
        (
            "torus:100000x100000",
            "dims: the topology would have too many routers",
        ),
        (
            "dragonfly:p=9223372036854775807",
            "p: 9223372036854775807 is more than a router's 65536 ports",
        ),
        ("dragonfly:p=4,a=70000", "a: 70000 is more than"),
        ("dragonfly:p=40,a=6000,h=6000", "g: the topology would have"),
        (
            "jellyfish:routers=1000000,degree=999999",
            "degree: the topology would have",
        ),
        (
            "exanest:R=4611686018427387904,N=2,M=2,genome=1/2",
            "m: the topology would have too many ports per router",
        ),
        (
            "complete:8,c=100000",
            "concentration: 100000 terminals per router",
        ),
        (
            "jellyfish:routers=5,degree=3",
            "degree: routers x degree = 5 x 3 is odd",
        ),
    ] {
        let line = error_line(&["topo", spec]);
        assert!(line.contains(want), "{spec}: {line}");
    }
    // The largest bundled-size dragonfly (p = 13: 114,582 nodes) is still accepted.
    let v = json(&["topo", "dragonfly:p=13", "--json"]);
    assert_eq!(v["terminals"], 114_582);
}

#[test]
fn bad_output_paths_fail_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let missing = dir.path().join("no-such-dir").join("x.svg");
    let inside_file = file.join("x.svg");
    let (missing, inside_file) = (missing.to_str().unwrap(), inside_file.to_str().unwrap());
    // A simulation long enough that finding the error after it would take seconds.
    let p = problem(dir.path(), "dor", "");
    let slow = std::fs::read_to_string(&p)
        .unwrap()
        .replace("measure_cycles = 1000", "measure_cycles = 100000000");
    std::fs::write(&p, slow).unwrap();
    for (option, path, want) in [
        ("--plot", missing, "does not exist"),
        ("--plot", inside_file, "is not a folder"),
        ("--timeline-plot", missing, "does not exist"),
    ] {
        let start = Instant::now();
        let mut args = vec!["simulate", p.as_str(), "--no-bound", option, path];
        if option == "--timeline-plot" {
            args.extend(["--timeline", "1000"]);
        }
        let line = error_line(&args);
        assert!(line.starts_with(&format!("error: {option}: ")), "{line}");
        assert!(line.contains(want), "{line}");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{option} checked late"
        );
    }
    let dir_str = dir.path().to_str().unwrap();
    let line = error_line(&["simulate", &p, "--no-bound", "--plot", dir_str]);
    assert!(
        line.contains("--plot") && line.contains("is a folder"),
        "{line}"
    );
    let line = error_line(&["topo", "mesh:4x4", "--export", "json", "-o", missing]);
    assert!(line.starts_with("error: --output: "), "{line}");
    let line = error_line(&[
        "routes",
        "export",
        "problems/mesh8x8-uniform.toml",
        "--format",
        "csv",
        "-o",
        inside_file,
    ]);
    assert!(line.starts_with("error: --output: "), "{line}");
    // search: --plot and --out (a folder that cannot be created inside a file).
    let line = error_line(&[
        "search",
        "problems/zdt1.toml",
        "--generations",
        "2",
        "--plot",
        missing,
    ]);
    assert!(line.starts_with("error: --plot: "), "{line}");
    let line = error_line(&[
        "search",
        "problems/zdt1.toml",
        "--generations",
        "2",
        "--out",
        inside_file,
    ]);
    assert!(line.starts_with("error: --out: "), "{line}");
    assert!(line.contains("is not a folder"), "{line}");
    let line = error_line(&[
        "routes",
        "evolve",
        "problems/mesh4x4x4-transpose.toml",
        "--generations",
        "1",
        "--out",
        inside_file,
    ]);
    assert!(line.starts_with("error: --out: "), "{line}");
}

/// Runs the binary with its standard output a pipe whose reading end is closed before the
/// command writes anything (what `| head -1` does to the lines after the first).
fn with_closed_stdout(args: &[&str]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabricopt"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    std::process::Output {
        status,
        stdout: Vec::new(),
        stderr: stderr.into_bytes(),
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let p = problem(dir.path(), "dor", "");
    let csv = dir.path().join("points.csv");
    std::fs::write(&csv, "1,3\n2,1\n").unwrap();
    let csv = csv.to_str().unwrap();
    for args in [
        vec!["topo", "mesh:8x8"],
        vec!["topo", "mesh:8x8", "--json"],
        vec!["simulate", p.as_str(), "--no-bound"],
        vec!["simulate", p.as_str(), "--no-bound", "--json"],
        vec!["hypervolume", csv, "--ref", "4,4"],
        vec![
            "routes",
            "export",
            "problems/mesh8x8-uniform.toml",
            "--format",
            "csv",
        ],
        vec!["bench", "--only", "mesh8x8", "--repeat", "1"],
    ] {
        let out = with_closed_stdout(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
    }
}

#[test]
fn bench_prints_its_table_on_stdout_and_refuses_bad_selections() {
    let out = fabricopt(&["bench", "--only", "mesh8x8", "--repeat", "1"]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("mesh8x8-uniform-0.1 "), "{stdout}");
    assert!(stdout.contains("cycles/s"), "{stdout}");
    let line = error_line(&["bench", "--only", "nosuchcase"]);
    assert!(
        line.contains("--only: no case name contains `nosuchcase`"),
        "{line}"
    );
    assert!(
        line.contains("mesh8x8-uniform-0.1, dragonfly1056-min-uniform-0.2"),
        "{line}"
    );
    let line = error_line(&["bench", "--repeat", "0"]);
    assert!(line.contains("--repeat: must be at least 1"), "{line}");
}
