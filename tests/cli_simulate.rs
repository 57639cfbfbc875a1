//! `fabricopt simulate` and `fabricopt bench` from the command line.

mod common;

use common::{error_line, fabricopt, json};

fn small_problem(dir: &std::path::Path, extra: &str) -> String {
    let path = dir.join("p.toml");
    std::fs::write(
        &path,
        format!(
            "seed = 3\n[topology]\nkind = \"mesh\"\ndims = [4, 4]\n[routing]\nalgorithm = \"dor\"\n\
             [[traffic]]\npattern = \"uniform\"\nload = 0.1\npacket_size = 2\n\
             [simulation]\nnum_vcs = 2\nwarmup_cycles = 500\nmeasure_cycles = 3000\n{extra}"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn simulate_sweep_json_has_points_and_saturation() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_problem(dir.path(), "");
    let v = json(&["simulate", &p, "--sweep", "0.1:0.9:0.4", "--json"]);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    for key in [
        "offered",
        "accepted",
        "latency_avg",
        "latency_p99",
        "hops_avg",
        "saturated",
    ] {
        assert!(!points[0][key].is_null(), "{key}");
    }
    assert_eq!(points[0]["saturated"], false);
    assert_eq!(points[2]["saturated"], true);
    let sat = v["saturation_throughput"].as_f64().unwrap();
    assert!(sat > 0.3 && sat < 0.9, "{sat}");
    // Uniform 4x4 mesh, DOR: 2 * (k^2 - 1) / (3k) = 2.5 hops over all ordered pairs including
    // a terminal and itself, so 2.5 * 256 / 240 between distinct terminals.
    let hops = points[0]["hops_avg"].as_f64().unwrap();
    assert!((hops - 2.5 * 256.0 / 240.0).abs() < 0.05, "{hops}");
}

#[test]
fn simulate_table_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_problem(dir.path(), "");
    let svg = dir.path().join("curve.svg");
    let out = fabricopt(&[
        "simulate",
        &p,
        "--sweep",
        "0.05:0.15:0.05",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("latency avg"), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_end().ends_with("ok"))
            .count(),
        3,
        "{text}"
    );
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(
        plot.starts_with("<svg") && plot.contains("dor"),
        "{}",
        &plot[..200.min(plot.len())]
    );
}

#[test]
fn simulate_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_problem(dir.path(), "");
    let e = error_line(&["simulate", &p, "--sweep", "0.1:x:0.1"]);
    assert!(e.contains("--sweep") && e.contains("TO"), "{e}");
    let e = error_line(&["simulate", &p, "--load=0"]);
    assert!(e.contains("--load"), "{e}");
    let p2 = small_problem(dir.path(), "num_vcs_typo = 3\n");
    let e = error_line(&["simulate", &p2]);
    assert!(e.contains("unknown field `num_vcs_typo`"), "{e}");
    // Too few VCs for the routing algorithm.
    let path = dir.path().join("t.toml");
    std::fs::write(
        &path,
        "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[routing]\nalgorithm = \"dor\"\n\
         [[traffic]]\npattern = \"uniform\"\nload = 0.1\n[simulation]\nnum_vcs = 1\n",
    )
    .unwrap();
    let e = error_line(&["simulate", path.to_str().unwrap()]);
    assert!(
        e.contains("simulation.num_vcs") && e.contains("needs at least 2"),
        "{e}"
    );
    // Virtual cut-through with packets longer than a buffer: nothing could ever be granted.
    let p3 = small_problem(
        dir.path(),
        "switching = \"virtual_cut_through\"\nvc_depth = 1\n",
    );
    let e = error_line(&["simulate", &p3]);
    assert!(
        e.contains("simulation.vc_depth") && e.contains("up to 2 flits"),
        "{e}"
    );
    std::fs::write(&path, "[topology]\nkind = \"torus\"\ndims = [4, 4]\n").unwrap();
    let e = error_line(&["simulate", path.to_str().unwrap()]);
    assert!(e.contains("[routing]"), "{e}");
    std::fs::write(
        &path,
        "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[routing]\nalgorithm = \"warp\"\n\
         [[traffic]]\npattern = \"uniform\"\nload = 0.1\n",
    )
    .unwrap();
    let e = error_line(&["simulate", path.to_str().unwrap()]);
    assert!(
        e.contains("routing.algorithm: unknown algorithm `warp`"),
        "{e}"
    );
}

#[test]
fn every_bundled_simulation_problem_runs() {
    // Short runs of the shipped problems (their own phases are long; the seed is fixed).
    for name in [
        "mesh8x8-uniform",
        "mesh4x4x4-transpose",
        "torus4x4-dqn-baseline",
        "torus4x4-dqn",
        "torus4x4-dqn-busy-and-full",
        "torus4x4-dpsnn-556hz",
        "dragonfly-1056-ur",
        "dragonfly-1056-adv1",
        "dragonfly-1056-adv4",
        "dragonfly-1056-qadaptive-ur",
        "dragonfly-1056-qadaptive-adv1",
        "dragonfly-1056-qadaptive-adv4",
        "dragonfly-1056-qadaptive-dynamic",
        "dragonfly-2550-adv1",
        "dragonfly-2550-qadaptive-ur",
        "dragonfly-2550-qadaptive-adv1",
    ] {
        let file = format!("problems/{name}.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let short = dir.path().join(format!("{name}.toml"));
        let text = text
            .lines()
            .map(|l| {
                if l.starts_with("warmup_cycles") {
                    "warmup_cycles = 200".to_string()
                } else if l.starts_with("measure_cycles") {
                    "measure_cycles = 2000".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&short, text).unwrap();
        let v = json(&["simulate", short.to_str().unwrap(), "--json", "--no-bound"]);
        let point = &v["points"][0];
        assert!(point["deadlock"].is_null(), "{name}: {point}");
        assert_eq!(point["counters"]["misdelivered"], 0, "{name}");
        assert_eq!(point["counters"]["out_of_order"], 0, "{name}");
    }
}

#[test]
fn simulate_normalises_loads_and_records_timelines() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_problem(dir.path(), "");
    // Loads as fractions of the injection bandwidth (1 flit/cycle here), as a list.
    let v = json(&[
        "simulate",
        &p,
        "--sweep",
        "0.05,0.15",
        "--normalise",
        "injection",
        "--timeline",
        "500",
        "--warmup",
        "1000",
        "--measure",
        "2000",
        "--json",
    ]);
    assert_eq!(v["normalised"]["by"], "injection");
    assert_eq!(v["normalised"]["reference"], 1.0);
    assert_eq!(v["simulation"]["warmup_cycles"], 1000);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, want) in points.iter().zip([0.05, 0.15]) {
        assert!((p["load"].as_f64().unwrap() - want).abs() < 1e-12);
        assert!((p["load_normalised"].as_f64().unwrap() - want).abs() < 1e-12);
        let windows = p["timeline"].as_array().unwrap();
        // From cycle 0 through the drain: every window of 500 cycles holds deliveries.
        assert!(windows.len() >= 6, "{}", windows.len());
        for (k, w) in windows.iter().enumerate() {
            assert_eq!(w["start"].as_u64().unwrap(), 500 * k as u64);
            assert!(w["packets"].as_u64().unwrap() > 0 && w["latency_avg"].as_f64().unwrap() > 0.0);
        }
    }
    // The same points plotted again from the saved JSON, without simulating.
    let saved = dir.path().join("run.json");
    std::fs::write(&saved, serde_json::to_string(&v).unwrap()).unwrap();
    let svg = dir.path().join("timeline.svg");
    let out = fabricopt(&[
        "simulate",
        "--from-json",
        saved.to_str().unwrap(),
        "--timeline-plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("<svg") && text.contains("@ 15%"),
        "one curve per load, named by its load in % of the injection bandwidth"
    );
    let err = error_line(&["simulate", "--from-json", saved.to_str().unwrap()]);
    assert!(err.contains("--plot"), "{err}");
    // The latency-load plot redrawn with a paper's points over it: the nominal load in % of
    // the normalisation, the title naming system, pattern and router.
    let overlay = dir.path().join("paper.csv");
    std::fs::write(&overlay, "label,load,latency\npaper dor,10,30\n").unwrap();
    let plot = dir.path().join("latency.svg");
    let out = fabricopt(&[
        "simulate",
        "--from-json",
        saved.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
        "--overlay",
        overlay.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&plot).unwrap();
    for want in [
        "paper dor",
        "offered load (% of the injection bandwidth)",
        "uniform",
        "input-queued router",
        "(cycles)",
    ] {
        assert!(text.contains(want), "{want}");
    }
    // The same routing in two reports is one curve (its points joined), one legend entry.
    let both = format!("{},{}", saved.display(), saved.display());
    let out = fabricopt(&[
        "simulate",
        "--from-json",
        &both,
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&plot).unwrap();
    assert_eq!(
        text.matches(">\ndor\n</text>").count(),
        1,
        "one legend entry"
    );
    // A malformed overlay is refused, naming the file and line, before anything is drawn.
    std::fs::write(&overlay, "label,load,latency\npaper dor,ten,30\n").unwrap();
    let err = error_line(&[
        "simulate",
        &p,
        "--load",
        "0.05",
        "--plot",
        plot.to_str().unwrap(),
        "--overlay",
        overlay.to_str().unwrap(),
    ]);
    assert!(
        err.contains("--overlay") && err.contains("line 2") && err.contains("`ten`"),
        "{err}"
    );
    // Against the routing throughput bound: the given load is that fraction of it.
    let v = json(&[
        "simulate",
        &p,
        "--load",
        "0.5",
        "--normalise",
        "bound",
        "--json",
    ]);
    let reference = v["normalised"]["reference"].as_f64().unwrap();
    let load = v["points"][0]["load"].as_f64().unwrap();
    assert!((load - 0.5 * reference).abs() < 1e-12);
    let err = error_line(&["simulate", &p, "--normalise", "bound", "--no-bound"]);
    assert!(err.contains("--normalise bound"), "{err}");
}

#[test]
fn bench_reports_cycles_per_second() {
    let v = json(&["bench", "--only", "mesh8x8", "--repeat", "1", "--json"]);
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0]["name"], "mesh8x8-uniform-0.1");
    let cycles_per_s = cases[0]["cycles_per_s"].as_f64().unwrap();
    assert!(cycles_per_s > 0.0);
    assert!(cases[0]["flit_hops_per_s"].as_f64().unwrap() > 0.0);
    // The measured 20,000 cycles move the same flits in every run (regression value).
    assert_eq!(cases[0]["flit_hops"], 670_010);
    // Against BookSim2's reference figure for this case, as the issue measured it.
    assert_eq!(cases[0]["booksim2_cycles_per_s"], 10_970.0);
    let times = cases[0]["times_booksim2"].as_f64().unwrap();
    assert!((times - cycles_per_s / 10_970.0).abs() < 1e-9, "{times}");
    // A case BookSim2 was not run on has no ratio.
    let v = json(&["bench", "--only", "ioq", "--repeat", "1", "--json"]);
    assert!(v["cases"][0].get("times_booksim2").is_none(), "{v}");
}

#[test]
fn bench_scale_ratios_come_from_rounds_of_the_three_cases() {
    let v = json(&["bench", "--scale-ratios", "--repeat", "1", "--json"]);
    let rounds = v["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 1);
    let r = &rounds[0];
    assert_eq!(
        r["order"],
        serde_json::json!([
            "dragonfly1056-min-uniform-0.2",
            "dragonfly16512-min-uniform-0.2",
            "dragonfly16512-min-uniform-0.2-2threads"
        ])
    );
    let f = |key: &str| r[key].as_f64().unwrap();
    let ratio = f("small_flit_hops_per_s") / f("large_flit_hops_per_s");
    assert!((f("flit_hop_ratio") - ratio).abs() < 1e-9 * ratio);
    let speedup = f("large_2threads_cycles_per_s") / f("large_cycles_per_s");
    assert!((f("speedup_2threads") - speedup).abs() < 1e-9 * speedup);
    // One round: its ratios are the median and the range.
    for key in ["flit_hop_ratio", "speedup_2threads"] {
        for end in ["median", "min", "max"] {
            assert_eq!(v[key][end], r[key], "{key} {end}");
        }
    }
    // The measured cycles' flit-hops (3,000 and 1,000 cycles; the 16,512-node case's the same
    // on 1 and 2 threads, or the command fails).
    assert_eq!(v["small_flit_hops"], 1_707_554);
    assert_eq!(v["large_flit_hops"], 9_452_763);
    // The ratios' cases are fixed: a selection is refused (clap's usage error).
    let out = fabricopt(&["bench", "--scale-ratios", "--only", "mesh8x8"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

#[test]
fn simulate_reports_the_fraction_of_the_routing_bound() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_problem(dir.path(), "");
    let v = json(&["simulate", &p, "--sweep", "0.1:0.9:0.8", "--json"]);
    // Uniform on a 4x4 mesh: the bisection carries 16/15 flits per cycle per flit/terminal,
    // so the throughput bound is 15/16 flits/terminal/cycle, computed exactly by the LP.
    let bound = &v["bound"];
    assert_eq!(bound["kind"]["type"], "exact", "{bound}");
    let t = bound["throughput"].as_f64().unwrap();
    assert!((t - 15.0 / 16.0).abs() < 1e-5, "{t}");
    assert!((bound["max_load"].as_f64().unwrap() - 0.1 * 16.0 / 15.0).abs() < 1e-6);
    for point in v["points"].as_array().unwrap() {
        let accepted = point["accepted"].as_f64().unwrap();
        assert_eq!(point["bound_throughput"].as_f64().unwrap(), t);
        let fraction = point["fraction_of_bound"].as_f64().unwrap();
        assert!((fraction - accepted / t).abs() < 1e-12);
        assert!(fraction < 1.0, "{fraction}");
    }
    let v = json(&["simulate", &p, "--json", "--no-bound"]);
    assert!(v.get("bound").is_none());
    assert!(v["points"][0].get("fraction_of_bound").is_none());
    let out = fabricopt(&["simulate", &p]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("throughput bound ≤ 0.9375"), "{text}");
}

/// DQN-routing whose acks retrace paths on the escape VCs deadlocks on this torus under
/// wormhole: `simulate` says so the same way in text and JSON, warns that the routing is not
/// guaranteed deadlock-free, and fails unless `--allow-deadlock`.
#[test]
fn a_deadlock_fails_simulate_and_reads_the_same_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dqn.toml");
    std::fs::write(
        &path,
        "seed = 3\n[topology]\nkind = \"torus\"\ndims = [8, 8]\n[routing]\nalgorithm = \"dqn\"\n\
         [routing.dqn]\npolicy = \"random\"\n[[traffic]]\npattern = \"uniform\"\nload = 0.6\n\
         packet_size = 6\n[simulation]\nnum_vcs = 3\nvc_depth = 4\nwarmup_cycles = 1000\n\
         measure_cycles = 20000\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let text = fabricopt(&["simulate", p, "--no-bound"]);
    assert!(!text.status.success());
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("DEADLOCK: deadlock at cycle"), "{stdout}");
    assert!(stdout.contains("wait-for cycle of"), "{stdout}");
    assert!(stdout.contains("not guaranteed deadlock-free"), "{stdout}");
    assert!(!stdout.contains("saturation throughput ≈"), "{stdout}");
    let err = error_line(&["simulate", p, "--no-bound"]);
    assert!(err.contains("deadlock: at load 0.600"), "{err}");
    // JSON: the same verdict, and the same exit status.
    let out = fabricopt(&["simulate", p, "--no-bound", "--json"]);
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let point = &v["points"][0];
    assert_eq!(point["status"], "deadlock");
    assert_eq!(point["saturated"], false);
    assert!(point["saturation_reason"].is_null());
    assert!(point["deadlock"]["blocked_vcs"].as_u64().unwrap() > 0);
    assert!(
        !point["deadlock"]["cycle_vcs"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(v["saturation"]["deadlocked_loads"][0], 0.6);
    assert!(v["saturation_throughput"].is_null() && v["max_accepted"].is_null());
    assert!(v["deadlock_caveat"].as_str().unwrap().contains("acks"));
    let allowed = json(&["simulate", p, "--no-bound", "--json", "--allow-deadlock"]);
    assert_eq!(allowed["points"][0]["status"], "deadlock");
}

/// Past saturation the accepted rate is not the saturation throughput: on transpose, DOR's
/// overload point at 1.0 accepts more than any stable point.
#[test]
fn saturation_throughput_is_the_highest_stable_point_and_max_accepted_is_separate() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_problem(dir.path(), "");
    let p = p.replace("p.toml", "t.toml");
    std::fs::write(
        &p,
        std::fs::read_to_string(dir.path().join("p.toml"))
            .unwrap()
            .replace("\"uniform\"", "\"transpose\""),
    )
    .unwrap();
    let v = json(&[
        "simulate",
        &p,
        "--sweep",
        "0.1,0.2,0.3,0.4,1.0",
        "--json",
        "--no-bound",
    ]);
    let points = v["points"].as_array().unwrap();
    let sat = v["saturation_throughput"].as_f64().unwrap();
    let max = v["max_accepted"].as_f64().unwrap();
    let stable: Vec<&serde_json::Value> = points.iter().filter(|p| p["stable"] == true).collect();
    let highest = stable.last().unwrap();
    assert_eq!(sat, highest["accepted"].as_f64().unwrap());
    assert_eq!(v["saturation"]["saturation_load"], highest["load"]);
    let overload = points.last().unwrap();
    assert_eq!(overload["status"], "saturated");
    assert_eq!(max, overload["accepted"].as_f64().unwrap());
    assert!(max > sat, "overload {max} vs saturation {sat}");
    for p in points {
        let (acc, off) = (
            p["accepted"].as_f64().unwrap(),
            p["offered"].as_f64().unwrap(),
        );
        assert_eq!(
            p["stable"] == true,
            p["status"] == "ok" && acc >= 0.97 * (off + p["dropped"].as_f64().unwrap())
        );
        // Hops counted as channels, and as routers the way BookSim2 counts them.
        let hops = p["hops_avg"].as_f64().unwrap();
        assert!((p["router_hops_avg"].as_f64().unwrap() - (hops + 1.0)).abs() < 1e-9);
    }
}

/// Transpose's four diagonal terminals of a 4x4 mesh send nothing: the bound on `accepted`
/// (averaged over all 16 terminals, like `accepted`) is 12/16 of the bound on the class load,
/// so a point's `fraction_of_bound` and its normalised load agree.
#[test]
fn the_bound_counts_terminals_that_send_nothing_like_accepted_does() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_problem(dir.path(), "");
    std::fs::write(
        &p,
        std::fs::read_to_string(&p)
            .unwrap()
            .replace("\"uniform\"", "\"transpose\""),
    )
    .unwrap();
    let v = json(&["simulate", &p, "--load", "0.1", "--json"]);
    let bound = &v["bound"];
    let (t, load) = (
        bound["throughput"].as_f64().unwrap(),
        bound["load"].as_f64().unwrap(),
    );
    assert!((t / load - 12.0 / 16.0).abs() < 1e-9, "{bound}");
    let point = &v["points"][0];
    let fraction = point["fraction_of_bound"].as_f64().unwrap();
    assert!(
        (fraction - 0.1 / load).abs() < 0.01 * fraction,
        "{fraction} vs {}",
        0.1 / load
    );
}

/// Every committed reference result still loads and plots: files written by earlier versions
/// lack fields added since (e.g. `setup_seconds`), which must read as absent, not fail.
#[test]
fn every_reference_result_replots() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("replot.svg");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("populations/reference");
    let mut checked = 0;
    for sub in ["learned-routing", "learned-routing-ioq"] {
        for entry in std::fs::read_dir(root.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let out = fabricopt(&[
                "simulate",
                "--from-json",
                path.to_str().unwrap(),
                "--plot",
                svg.to_str().unwrap(),
            ]);
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} reference results found");
}
