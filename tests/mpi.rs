//! Scale-out over MPI (docs/scale-out.md). With feature `mpi` (`.ci/run` installs MPICH and runs
//! `cargo test --release --features mpi --test mpi`): the same command under `mpiexec -n 1`,
//! `-n 2`, `-n 4` and without MPI writes byte-identical fronts and tables; a sweep gives
//! identical points; a panicking worker or a failing rank ends the job with a non-zero exit; a
//! job killed with SIGKILL resumes under another rank count and ends identical. Without the
//! feature: `--mpi`, and a launcher that started several ranks, are refused.

#[allow(dead_code)]
mod common;
#[cfg(feature = "mpi")]
#[path = "support/small_dragonfly.rs"]
mod small_dragonfly;

use std::process::Command;

fn binary() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fabricopt"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

#[cfg(not(feature = "mpi"))]
mod without_the_feature {
    use super::*;

    #[test]
    fn mpi_flag_is_refused() {
        let line = common::error_line(&["--mpi", "topo", "mesh:4x4"]);
        assert!(line.contains("built without feature mpi"), "{line}");
    }

    #[test]
    fn a_launcher_with_several_ranks_is_refused() {
        // As hydra (MPICH) and Open MPI's launchers tell each rank.
        for (var, value) in [("PMI_SIZE", "2"), ("OMPI_COMM_WORLD_SIZE", "4")] {
            let out = binary()
                .args(["topo", "mesh:4x4"])
                .env(var, value)
                .output()
                .unwrap();
            assert!(!out.status.success());
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("built without feature mpi"), "{err}");
            assert!(err.contains("every rank would run the whole job"), "{err}");
        }
        // One rank alone is a plain run.
        let out = binary()
            .args(["topo", "mesh:4x4"])
            .env("PMI_SIZE", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::process::Output;
    use std::time::{Duration, Instant};

    /// `mpiexec` with what the MPI library needs (Open MPI: running as root, more ranks than
    /// cores) and one rayon thread per rank (the machine has 2 cores).
    fn launcher() -> Command {
        let open_mpi = Command::new("mpiexec")
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("Open MPI"))
            .unwrap_or(false);
        let mut c = Command::new("mpiexec");
        c.current_dir(env!("CARGO_MANIFEST_DIR"));
        if open_mpi {
            c.arg("--oversubscribe")
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        c.env("RAYON_NUM_THREADS", "1");
        c
    }

    /// `mpiexec -n ranks fabricopt ...`.
    fn mpiexec(ranks: usize) -> Command {
        let mut c = launcher();
        c.args(["-n", &ranks.to_string()])
            .arg(env!("CARGO_BIN_EXE_fabricopt"));
        c
    }

    fn succeed(mut command: Command, args: &[&str]) -> Output {
        let out = command.args(args).output().expect("mpiexec runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Every file under `dir` but checkpoints (they hold the wall-clock time), by path.
    fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().unwrap() != "checkpoint.json" {
                    let key = path.strip_prefix(dir).unwrap().display().to_string();
                    files.insert(key, std::fs::read(&path).unwrap());
                }
            }
        }
        files
    }

    /// Runs `args` (which write into the folder after `--out`) without MPI and under 1, 2
    /// and 4 ranks; every run's files must be byte-identical to the plain run's.
    fn identical_under_every_rank_count(args: &[&str], expect: &[&str]) {
        let tmp = tempfile::tempdir().unwrap();
        let plain_dir = tmp.path().join("plain");
        let with_out = |dir: &Path| {
            let mut a: Vec<String> = args.iter().map(ToString::to_string).collect();
            a.extend(["--out".into(), dir.display().to_string()]);
            a
        };
        let plain_args = with_out(&plain_dir);
        let plain_refs: Vec<&str> = plain_args.iter().map(String::as_str).collect();
        let plain_out = succeed(binary(), &plain_refs);
        let reference = outputs(&plain_dir);
        for name in expect {
            assert!(
                reference.contains_key(*name),
                "{name} not written: {:?}",
                reference.keys()
            );
        }
        for ranks in [1, 2, 4] {
            let dir = tmp.path().join(format!("n{ranks}"));
            let a = with_out(&dir);
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            let mut command = mpiexec(ranks);
            command.env("FABRICOPT_MPI_STATS", "1");
            let out = succeed(command, &refs);
            // Every rank took part: the identical files do not come from each rank computing
            // everything alone.
            let stderr = String::from_utf8_lossy(&out.stderr);
            for rank in 0..ranks {
                let items = stderr
                    .lines()
                    .find_map(|l| {
                        let rest = l.strip_prefix(&format!("fabricopt rank {rank}: "))?;
                        let (_, after) = rest.split_once(" shared calls, ")?;
                        after.split_whitespace().next()?.parse::<u64>().ok()
                    })
                    .unwrap_or_else(|| panic!("-n {ranks}: no figures of rank {rank}: {stderr}"));
                if ranks > 1 {
                    assert!(
                        items > 0,
                        "-n {ranks}: rank {rank} evaluated nothing: {stderr}"
                    );
                }
            }
            let got = outputs(&dir);
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                reference.keys().collect::<Vec<_>>(),
                "-n {ranks}"
            );
            for (name, bytes) in &reference {
                assert!(got[name] == *bytes, "-n {ranks}: {name} differs");
            }
            // One report, from rank 0, as without MPI (the times in it differ).
            let lines = |o: &Output| String::from_utf8_lossy(&o.stdout).lines().count();
            assert_eq!(lines(&out), lines(&plain_out), "-n {ranks}: stdout");
        }
    }

    #[test]
    fn zdt1_search_is_identical_under_1_2_4_ranks() {
        identical_under_every_rank_count(
            &["search", "problems/zdt1.toml", "--quiet"],
            &["nsga2-run0/front.csv", "nsga2-run0/front.json"],
        );
    }

    #[test]
    fn exanest_search_is_identical_under_1_2_4_ranks() {
        // Both algorithms, the bisection proof and the Jellyfish comparison.
        identical_under_every_rank_count(
            &[
                "search",
                "problems/exanest-8-16-1.toml",
                "--runs",
                "1",
                "--generations",
                "8",
                "--jellyfish",
                "3",
                "--quiet",
            ],
            &["nsga2-run0/front.csv", "sms-emoa-run0/front.json"],
        );
    }

    #[test]
    fn routes_evolve_is_identical_under_1_2_4_ranks() {
        // GA fitness, the elite's simulations, the baseline's and the table's alone.
        identical_under_every_rank_count(
            &[
                "routes",
                "evolve",
                "problems/mesh4x4x4-transpose.toml",
                "--generations",
                "10",
                "--population",
                "24",
                "--quiet",
            ],
            &["best.json", "best.csv", "best.sl"],
        );
    }

    /// A `simulate --json` report without the only field that may differ from run to run:
    /// how long each point took.
    fn report_without_times(out: Output) -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for p in v["points"].as_array_mut().unwrap() {
            p.as_object_mut().unwrap().remove("wall_seconds");
            p.as_object_mut().unwrap().remove("setup_seconds");
        }
        v
    }

    #[test]
    fn a_sweep_gives_identical_points() {
        let args = [
            "simulate",
            "problems/mesh8x8-uniform.toml",
            "--sweep",
            "0.1:0.5:0.1",
            "--warmup",
            "1000",
            "--measure",
            "3000",
            "--no-bound",
            "--json",
        ];
        let reference = report_without_times(succeed(binary(), &args));
        assert_eq!(reference["points"].as_array().unwrap().len(), 5);
        for ranks in [2, 4] {
            assert_eq!(
                report_without_times(succeed(mpiexec(ranks), &args)),
                reference,
                "-n {ranks}"
            );
        }
    }

    /// A 72-node dragonfly (9 groups, 12-cycle global channels) for the partitioned engine;
    /// a learned routing pre-trains once and keeps a timeline (sessions and delivered packets
    /// kept per partition, across ranks).
    fn split_dragonfly(dir: &Path, routing: &str) -> String {
        let learned = if routing.starts_with("q_") {
            "pretrain_runs = 1\ntimeline_window = 250\n"
        } else {
            ""
        };
        small_dragonfly::write(dir, &format!("{routing}.toml"), routing, 4, learned)
    }

    /// The collectives of split simulations rank `rank` reported (FABRICOPT_MPI_STATS).
    fn split_collectives(stderr: &str, rank: usize) -> u64 {
        stderr
            .lines()
            .find_map(|l| {
                let rest = l.strip_prefix(&format!("fabricopt rank {rank}: "))?;
                let (_, after) = rest.split_once(" items evaluated here, ")?;
                after.split_whitespace().next()?.parse().ok()
            })
            .unwrap_or_else(|| panic!("no figures of rank {rank}: {stderr}"))
    }

    #[test]
    fn one_network_split_over_ranks_is_identical_under_1_2_4_ranks() {
        // Each load's network split into 4 partitions spread over the ranks, against the
        // sequential engine: a classical and a learned routing (pre-trained, with a
        // timeline); 0.9 saturates (the queue limit and the deadlock analysis across ranks).
        let tmp = tempfile::tempdir().unwrap();
        for routing in ["ugal_n", "q_adaptive"] {
            let problem = split_dragonfly(tmp.path(), routing);
            let args = |partitions: &'static str| {
                vec![
                    "simulate".to_string(),
                    problem.clone(),
                    "--sweep".into(),
                    "0.1,0.3,0.9".into(),
                    "--partitions".into(),
                    partitions.into(),
                    "--no-bound".into(),
                    "--json".into(),
                ]
            };
            let sequential = args("1");
            let sequential: Vec<&str> = sequential.iter().map(String::as_str).collect();
            let reference = report_without_times(succeed(binary(), &sequential));
            let statuses: Vec<&str> = reference["points"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["status"].as_str().unwrap())
                .collect();
            assert_eq!(statuses, ["ok", "ok", "saturated"], "{routing}");
            if routing == "q_adaptive" {
                let windows = reference["points"][0]["timeline"].as_array().map(Vec::len);
                assert!(windows >= Some(5), "{windows:?}");
            }
            let split = args("4");
            let split: Vec<&str> = split.iter().map(String::as_str).collect();
            for ranks in [1, 2, 4] {
                let mut command = mpiexec(ranks);
                command.env("FABRICOPT_MPI_STATS", "1");
                let out = succeed(command, &split);
                let stderr = String::from_utf8_lossy(&out.stderr).to_string();
                let mut report = report_without_times(out);
                // The report repeats the problem's settings: partitions differ by design.
                report["simulation"]
                    .as_object_mut()
                    .unwrap()
                    .remove("partitions");
                assert_eq!(report, reference, "{routing}, -n {ranks}");
                for rank in 0..ranks {
                    let collectives = split_collectives(&stderr, rank);
                    // One exchange per window at least: the ranks did split the network.
                    assert_eq!(collectives > 100, ranks > 1, "-n {ranks}, rank {rank}");
                }
            }
        }
    }

    #[test]
    fn fewer_partitions_than_ranks_are_refused_naming_the_field() {
        let tmp = tempfile::tempdir().unwrap();
        let problem = split_dragonfly(tmp.path(), "min");
        let out = mpiexec(4)
            .args(["simulate", &problem, "--partitions", "2", "--no-bound"])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("simulation.partitions: 2 partitions for a job of 4 MPI ranks"),
            "{stderr}"
        );
    }

    #[test]
    fn a_panicking_worker_ends_the_job_within_seconds() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let mut command = mpiexec(2);
        command
            .args(["search", "problems/exanest-8-16-4.toml", "--runs", "1"])
            .args(["--algorithm", "nsga2", "--quiet", "--out"])
            .arg(&out)
            .env("FABRICOPT_MPI_INJECT_PANIC", "1");
        let done = common::run_within(command, 10);
        assert!(!done.status.success(), "{:?}", done.status);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(
            stderr.contains("fabricopt rank 1: ") && stderr.contains("injected by"),
            "{stderr}"
        );
    }

    #[test]
    fn a_write_failing_on_one_group_writer_ends_the_job() {
        // Two runs under 4 ranks: two groups of two. The second group's writer cannot write
        // its checkpoint (a folder stands in its place); its partner could not know, and
        // would wait in the run's next generation forever unless the job ends.
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        std::fs::create_dir_all(out.join("nsga2-run1/checkpoint.json")).unwrap();
        let mut command = mpiexec(4);
        command
            .args(["search", "problems/exanest-8-16-1.toml", "--runs", "2"])
            .args([
                "--algorithm",
                "nsga2",
                "--generations",
                "3",
                "--quiet",
                "--out",
            ])
            .arg(&out);
        let done = common::run_within(command, 60);
        assert!(!done.status.success(), "{:?}", done.status);
        // The failing rank's message must reach the user before the job is aborted (CI once
        // saw an empty standard error here).
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(
            stderr.contains("nsga2-run1/checkpoint.json"),
            "{:?}, standard error {stderr:?}",
            done.status
        );
    }

    #[test]
    fn a_learned_routing_sweep_keeps_its_report() {
        // DQN-routing points carry a `routing_report` after an empty (left out) `timeline`:
        // the messages must keep the fields apart.
        let args = [
            "simulate",
            "problems/torus4x4-dqn.toml",
            "--sweep",
            "0.1,0.2",
            "--warmup",
            "2000",
            "--measure",
            "2000",
            "--pretrain",
            "0",
            "--no-bound",
            "--json",
        ];
        let reference = report_without_times(succeed(binary(), &args));
        assert!(reference["points"][0]["routing_report"].is_object());
        assert_eq!(report_without_times(succeed(mpiexec(2), &args)), reference);
    }

    #[test]
    fn ranks_with_different_problem_files_are_refused() {
        // Two ranks, each in its own folder with its own copy of the problem (as node-local
        // copies would be): the same file name, one line more in the second.
        let tmp = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/zdt1.toml"),
        )
        .unwrap();
        let run = |second: &str| {
            for (dir, body) in [("a", text.clone()), ("b", format!("{text}{second}"))] {
                std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
                std::fs::write(tmp.path().join(dir).join("p.toml"), body).unwrap();
            }
            // mpiexec -n 1 -wdir a fabricopt ARGS : -n 1 -wdir b fabricopt ARGS
            let mut command = launcher();
            let args = ["search", "p.toml", "--quiet", "--no-checkpoint", "--out"];
            let out_dir = tmp.path().join("out");
            for (i, dir) in ["a", "b"].into_iter().enumerate() {
                if i > 0 {
                    command.arg(":");
                }
                command
                    .args(["-n", "1", "-wdir"])
                    .arg(tmp.path().join(dir))
                    .arg(env!("CARGO_BIN_EXE_fabricopt"))
                    .args(args)
                    .arg(&out_dir);
            }
            command.output().unwrap()
        };
        let out = run("# another version\n");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("do not run the same command"), "{err}");
        // The same contents: a plain two-rank job.
        let out = run("");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `mpiexec -n 1 -wdir DIR BIN ARGS : -n 1 -wdir DIR BIN ARGS ...`, one rank per
    /// (folder, executable), as ranks on nodes with their own copies would run.
    fn ranks_in(places: &[(&Path, &Path)], args: &[&str]) -> Output {
        let mut command = launcher();
        for (i, (dir, exe)) in places.iter().enumerate() {
            if i > 0 {
                command.arg(":");
            }
            command
                .args(["-n", "1", "-wdir"])
                .arg(dir)
                .arg(exe)
                .args(args);
        }
        command.output().expect("mpiexec runs")
    }

    #[test]
    fn a_rank_whose_input_files_differ_simulates_rank_0s() {
        // The same problem in two folders, each with its own traffic matrix file (node-local
        // copies that differ): rank 0 reads the inputs for both ranks, so the two-rank sweep
        // is the one-process sweep of rank 0's folder, though rank 1 simulates points of it.
        let tmp = tempfile::tempdir().unwrap();
        let n = 16;
        let matrix = |weight: &dyn Fn(usize, usize) -> u32| {
            (0..n)
                .map(|i| {
                    let row: Vec<String> = (0..n).map(|j| weight(i, j).to_string()).collect();
                    row.join(",") + "\n"
                })
                .collect::<String>()
        };
        let problem = "name = \"matrix\"\nseed = 3\n[topology]\nkind = \"mesh\"\n\
            dims = [4, 4]\n[routing]\nalgorithm = \"dor\"\n[[traffic]]\n\
            pattern = \"matrix\"\nmatrix = \"m.csv\"\nload = 0.2\n[simulation]\n\
            warmup_cycles = 300\nmeasure_cycles = 1500\n";
        let antipodal = matrix(&|i, j| u32::from(j == n - 1 - i));
        let neighbour = matrix(&|i, j| u32::from(j == (i + 1) % n));
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for (dir, m) in [(&a, &antipodal), (&b, &neighbour)] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("p.toml"), problem).unwrap();
            std::fs::write(dir.join("m.csv"), m).unwrap();
        }
        let args = [
            "simulate",
            "p.toml",
            "--sweep",
            "0.1:0.4:0.1",
            "--no-bound",
            "--json",
        ];
        let alone = |dir: &Path| {
            let mut c = binary();
            c.current_dir(dir);
            report_without_times(succeed(c, &args))
        };
        let (in_a, in_b) = (alone(&a), alone(&b));
        assert_ne!(in_a, in_b, "the two matrices must give other points");
        let exe = Path::new(env!("CARGO_BIN_EXE_fabricopt"));
        let mut out = ranks_in(&[(&a, exe), (&b, exe)], &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stderr.clear();
        assert_eq!(report_without_times(out), in_a);
    }

    #[test]
    fn ranks_running_different_executables_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let exe = Path::new(env!("CARGO_BIN_EXE_fabricopt"));
        let copy = tmp.path().join("fabricopt");
        let mut bytes = std::fs::read(exe).unwrap();
        std::fs::write(&copy, &bytes).unwrap();
        std::fs::set_permissions(&copy, std::fs::metadata(exe).unwrap().permissions()).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let args = ["topo", "mesh:4x4"];
        // A byte-identical copy elsewhere is the same executable.
        let out = ranks_in(&[(root, exe), (root, &copy)], &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // One byte more (an ELF file runs with trailing bytes) is another build.
        bytes.push(0);
        std::fs::write(&copy, &bytes).unwrap();
        let out = ranks_in(&[(root, exe), (root, &copy)], &args);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("do not run the same fabricopt executable"),
            "{err}"
        );
    }

    #[test]
    fn a_failing_rank_ends_the_job_with_its_error() {
        let out = mpiexec(2)
            .args(["search", "problems/no-such-problem.toml"])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no-such-problem.toml"), "{err}");
    }

    /// Whether a process other than a zombie has `needle` in its command line.
    fn running(needle: &str) -> bool {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
    }

    #[test]
    fn a_killed_job_resumes_under_another_rank_count_identical() {
        let tmp = tempfile::tempdir().unwrap();
        let args = [
            "search",
            "problems/exanest-8-16-4.toml",
            "--runs",
            "2",
            "--algorithm",
            "nsga2",
            "--generations",
            "12",
            "--quiet",
            "--out",
        ];
        let whole = tmp.path().join("whole");
        let mut a: Vec<&str> = args.to_vec();
        a.push(whole.to_str().unwrap());
        succeed(binary(), &a);

        let killed = tmp.path().join("killed");
        let mut child = mpiexec(2)
            .args(args)
            .arg(&killed)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Under 2 ranks the two runs go to two groups of one rank, each writing its own
        // run's checkpoint; the resume under 4 gives each run a group of two.
        let checkpoints = [0, 1].map(|k| killed.join(format!("nsga2-run{k}/checkpoint.json")));
        let generation = |path: &Path| {
            std::fs::read_to_string(path)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| v["generation"].as_u64())
        };
        let start = Instant::now();
        let reached = loop {
            let g = checkpoints.iter().map(|c| generation(c)).min().flatten();
            if g.is_some_and(|g| g >= 3) {
                break g.unwrap();
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the job ended before it could be killed"
            );
            assert!(start.elapsed() < Duration::from_secs(120), "no checkpoint");
            std::thread::sleep(Duration::from_millis(10));
        };
        child.kill().unwrap(); // SIGKILL to mpiexec: its ranks die with it.
        child.wait().unwrap();
        let marker = killed.to_str().unwrap();
        let start = Instant::now();
        while running(marker) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "ranks outlived mpiexec"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        for c in &checkpoints {
            let kept = generation(c).unwrap();
            assert!(kept >= reached && kept < 12, "killed at generation {kept}");
        }

        let mut a: Vec<&str> = args.to_vec();
        a.push(killed.to_str().unwrap());
        a.push("--resume");
        succeed(mpiexec(4), &a);
        let (w, k) = (outputs(&whole), outputs(&killed));
        assert_eq!(w.keys().collect::<Vec<_>>(), k.keys().collect::<Vec<_>>());
        for (name, bytes) in &w {
            assert!(k[name] == *bytes, "{name} differs after the resume");
        }
    }
}
