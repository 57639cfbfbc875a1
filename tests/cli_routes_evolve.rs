//! `fabricopt routes evolve`: JSON report, exports that load back, and errors.

mod common;

use common::{error_line, json};

/// `routes evolve PROBLEM` with hill climbing 0.5, a small GA and `--json`, exporting to `out`.
fn evolve(
    problem: &str,
    generations: &str,
    population: &str,
    out: &std::path::Path,
) -> serde_json::Value {
    json(&[
        "routes",
        "evolve",
        problem,
        "--generations",
        generations,
        "--population",
        population,
        "--hill-climb",
        "0.5",
        "--quiet",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn evolve_transpose_reports_loads_bounds_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let v = evolve("problems/mesh4x4x4-transpose.toml", "15", "30", &out);
    let load = v["max_channel_load"].as_f64().unwrap();
    let dor = v["baseline_max_channel_load"].as_f64().unwrap();
    let bound = v["candidate_bound"].as_f64().unwrap();
    let unit = 64.0 / 56.0;
    // DOR puts 4 transpose flows on one channel: 4 x 64/56 per unit load.
    assert!((dor - 4.0 * unit).abs() < 1e-9, "{dor}");
    assert!(load < dor, "{load} vs DOR {dor}");
    assert!(bound <= load + 1e-9 && bound > 0.0, "{bound} vs {load}");
    assert_eq!(v["candidate_bound_kind"], "exact");
    assert!(v["candidate_bound_lp_relaxation"].as_f64().unwrap() <= bound + 1e-9);
    // Over all routings the LP optimum is 1 flow per channel, and a single-path table can
    // reach it (the integral optimum, docs/results.md): the negotiated-congestion paths do,
    // they seed the GA, and the table is at 100% of the all-routings bound.
    let routing = v["routing_bound"].as_f64().unwrap();
    assert!((v["routing_bound_lp_relaxation"].as_f64().unwrap() - unit).abs() < 1e-6);
    assert_eq!(v["routing_bound_kind"], "exact");
    // (Both LPs are solved to about 1e-8.)
    assert!(routing <= bound * (1.0 + 1e-6), "{routing} vs {bound}");
    assert!((load - unit).abs() < 1e-9, "{load}");
    assert!((v["negotiated_max_channel_load"].as_f64().unwrap() - unit).abs() < 1e-9);
    assert!(v["fraction_of_bound"].as_f64().unwrap() > 1.0 - 1e-6);
    assert!((v["fraction_of_bound"].as_f64().unwrap() - routing / load).abs() < 1e-12);
    assert!(v["lp_candidates_added"].as_u64().unwrap() > 0);
    assert_eq!(v["trained_pairs"], 56);
    assert_eq!(v["untrained_pairs"], 64 * 63 - 56);
    assert!(v["deadlock_free_alone"].is_boolean());
    // The evolved table is simulated and does not saturate where DOR does (load 0.2).
    assert_eq!(v["simulated"][0]["saturated"], false);
    assert_eq!(v["baseline_simulated"][0]["saturated"], true);
    // The exported table passes `routes check`: delivery, loop-free, deadlock-free on its
    // VLs (with best.sl when it needs more than one).
    let table = out.join("best.json");
    let sl = out.join("best.sl");
    let mut check = vec![
        "routes".to_string(),
        "check".into(),
        "problems/mesh4x4x4-transpose.toml".into(),
        table.display().to_string(),
        "--json".into(),
    ];
    match v["vls_needed"].as_u64() {
        Some(1) => assert!(!sl.exists()),
        Some(k) => {
            assert!(sl.exists() && k <= 15);
            check.extend(["--sl".to_string(), sl.display().to_string()]);
        }
        None => panic!("no VL assignment: {}", v["dependency_cycle"]),
    }
    let args: Vec<&str> = check.iter().map(String::as_str).collect();
    let report = json(&args);
    assert_eq!(report["delivers"], true);
    assert_eq!(report["revisiting_count"], 0);
    assert!(report["deadlock"].is_null(), "{report}");
    // The exported JSON table simulates through `routing = table`.
    assert!(out.join("best.csv").exists() && out.join("best.paths").exists());
    let cmp = json(&[
        "simulate",
        "problems/mesh4x4x4-transpose.toml",
        "--load",
        "0.2",
        "--json",
        "--compare",
        &format!(
            "dor,table:{},table-alone:{}",
            table.display(),
            table.display()
        ),
    ]);
    let routings = cmp["routings"].as_array().unwrap();
    assert_eq!(routings.len(), 3);
    assert_eq!(routings[0]["points"][0]["saturated"], true);
    assert_eq!(routings[1]["points"][0]["saturated"], false);
    // The table alone on its two VLs (best.sl): no fallback, no deadlock, not saturated.
    assert_eq!(routings[2]["points"][0]["saturated"], false);
    assert_eq!(routings[2]["points"][0]["status"], "ok", "{}", routings[2]);
    assert_eq!(v["simulated_alone"][0]["saturated"], false);
    // `--compare` carries the bound of any routing: 0.2 / (1 flow x 64/56 x 0.2) = 0.875.
    let t = cmp["bound"]["throughput"].as_f64().unwrap();
    assert!((t - 0.875).abs() < 1e-5, "{t}");
}

#[test]
fn evolve_errors_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    std::fs::write(
        &p,
        "[topology]\nkind = \"mesh\"\ndims = [3, 3]\n[[traffic]]\npattern = \"uniform\"\nload = 0.1\n\
         [evolve]\nselection = \"lottery\"\n",
    )
    .unwrap();
    let e = error_line(&["routes", "evolve", p.to_str().unwrap(), "--quiet"]);
    assert!(
        e.contains("bad.toml") && e.contains("evolve.selection"),
        "{e}"
    );
    std::fs::write(&p, "[topology]\nkind = \"mesh\"\ndims = [3, 3]\n").unwrap();
    let e = error_line(&["routes", "evolve", p.to_str().unwrap(), "--quiet"]);
    assert!(e.contains("traffic"), "{e}");
}

/// The evolved table is simulated under the table > adaptive > escape hierarchy: with too
/// few VCs for it the command says so (it used to panic with 1-3 VCs and to simulate an
/// empty table class with 4); with 2-4 VCs the classes shrink to fit and the table is used.
#[test]
fn evolve_checks_the_vc_classes_for_every_vc_count() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("vcs.toml");
    let out = dir.path().join("out");
    for vcs in 1..=4 {
        std::fs::write(
            &p,
            format!(
                "seed = 1\n[topology]\nkind = \"mesh\"\ndims = [4, 4]\n[[traffic]]\n\
                 pattern = \"transpose\"\nload = 0.1\n[simulation]\nnum_vcs = {vcs}\n\
                 warmup_cycles = 200\nmeasure_cycles = 1000\n"
            ),
        )
        .unwrap();
        let args = [
            "routes",
            "evolve",
            p.to_str().unwrap(),
            "--generations",
            "2",
            "--population",
            "8",
            "--quiet",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ];
        if vcs == 1 {
            let e = error_line(&args);
            assert!(
                e.contains("simulation.num_vcs") && e.contains("at least 2 VCs"),
                "{e}"
            );
            continue;
        }
        let v = json(&args);
        assert!(
            v["simulated"][0]["latency_avg"].as_f64().unwrap() > 0.0,
            "{vcs} VCs: {v}"
        );
        let meta = std::fs::read_to_string(out.join("best.json")).unwrap();
        assert!(
            meta.contains("table: 1..2") || meta.contains("table: 2.."),
            "{vcs}: {meta}"
        );
    }
}

fn small_evolve(dir: &std::path::Path, evolve: &str) -> String {
    let p = dir.join("small.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"small\"\n[topology]\nkind = \"mesh\"\ndims = [4, 4]\n[[traffic]]\n\
             pattern = \"transpose\"\nload = 0.1\n[evolve]\nsimulate_elite = 0\n{evolve}\n"
        ),
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

/// Overflowing or oversized GA sizes are refused naming the field or option; a resume after
/// the [evolve] table changed is refused unless forced; every flag has a help line.
#[test]
fn evolve_sizes_resume_fingerprint_and_help() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_evolve(dir.path(), "generations = 18446744073709551615");
    let e = error_line(&["routes", "evolve", &file, "--quiet"]);
    assert!(
        e.contains("small.toml: evolve.generations: 18446744073709551615 generations"),
        "{e}"
    );
    let file = small_evolve(dir.path(), "population = 100000000000");
    let e = error_line(&["routes", "evolve", &file, "--quiet"]);
    assert!(
        e.contains("evolve.population: 100000000000 is above the limit"),
        "{e}"
    );
    let e = error_line(&["routes", "evolve", &file, "--quiet", "--population", "0"]);
    assert!(e.contains("--population: must be at least 4"), "{e}");
    // Simulating the tables would need far more than any machine's memory: refused before
    // the GA starts.
    let file = dir.path().join("huge-buffers.toml");
    std::fs::write(
        &file,
        "[topology]\nkind = \"mesh\"\ndims = [32, 32]\n[[traffic]]\npattern = \"transpose\"\n\
         load = 0.1\n[simulation]\nnum_vcs = 64\nvc_depth = 65536\n",
    )
    .unwrap();
    let file = file.to_str().unwrap().to_string();
    let e = error_line(&["routes", "evolve", &file, "--quiet"]);
    assert!(
        e.contains("huge-buffers.toml: simulation.vc_depth: a load point on"),
        "{e}"
    );

    // Sized by router pairs and terminal pairs: refused before anything is built (the
    // 114,582-terminal dragonfly used to grow a dense demand matrix until memory ran out).
    let sized = |name: &str, topology: &str| {
        let file = dir.path().join(name);
        std::fs::write(
            &file,
            format!("[topology]\n{topology}\n[[traffic]]\npattern = \"uniform\"\nload = 0.1\n"),
        )
        .unwrap();
        error_line(&["routes", "evolve", file.to_str().unwrap(), "--quiet"])
    };
    let e = sized("dragonfly.toml", "kind = \"dragonfly\"\np = 13");
    assert!(
        e.contains(
            "dragonfly.toml: topology: 8814 routers are too many for a routing table (at most \
             8192: its next hops and candidate generator hold per router-pair data)"
        ),
        "{e}"
    );

    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let file = small_evolve(dir.path(), "population = 8\ngenerations = 3");
    let args = ["routes", "evolve", &file, "--quiet", "--out", out];
    let first = common::fabricopt(&args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let resume = [
        "routes", "evolve", &file, "--quiet", "--out", out, "--resume",
    ];
    assert!(common::fabricopt(&resume).status.success());
    small_evolve(dir.path(), "population = 8\ngenerations = 3\np_cross = 0.5");
    let e = error_line(&resume);
    assert!(
        e.contains("different configuration: evolve.p_cross (checkpoint 0.8, now 0.5)"),
        "{e}"
    );
    let forced = common::fabricopt(&[
        "routes", "evolve", &file, "--quiet", "--out", out, "--resume", "--force",
    ]);
    assert!(forced.status.success());

    let help = common::fabricopt(&["routes", "evolve", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("--no-checkpoint"))
        .unwrap();
    assert!(line.len() > "      --no-checkpoint".len() + 5, "{help}");
}

/// Every bundled evolve case small enough for a test: the exported table passes `routes
/// check` with its VL assignment, and the report's bound is the all-routings one.
#[test]
fn evolved_tables_of_the_bundled_cases_pass_routes_check() {
    for problem in [
        "problems/mesh8x8-transpose.toml",
        "problems/torus8x8-transpose.toml",
        "problems/torus8x8-tornado.toml",
        "problems/mesh4x4x4-transpose-bitcomp.toml",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let v = evolve(problem, "10", "20", &out);
        let load = v["max_channel_load"].as_f64().unwrap();
        let routing = v["routing_bound"].as_f64().unwrap();
        assert!(
            routing <= load * (1.0 + 1e-6),
            "{problem}: {routing} > {load}"
        );
        // Each of these reaches the all-routings bound rounded to whole flows (docs/results.md).
        assert!(
            load <= routing * (1.0 + 1e-6),
            "{problem}: {load} above {routing}"
        );
        assert!(routing <= v["candidate_bound"].as_f64().unwrap() * (1.0 + 1e-6));
        let table = out.join("best.json").display().to_string();
        let sl = out.join("best.sl").display().to_string();
        let mut args = vec!["routes", "check", problem, &table, "--json"];
        if v["vls_needed"].as_u64() != Some(1) {
            assert!(
                v["vls_needed"].as_u64().is_some(),
                "{problem}: no VL assignment"
            );
            args.extend(["--sl", &sl]);
        }
        let report = json(&args);
        assert_eq!(report["delivers"], true, "{problem}");
        assert_eq!(report["revisiting_count"], 0, "{problem}");
        assert!(report["deadlock"].is_null(), "{problem}: {report}");
    }
}

/// With `--lmc`, the best table is fitted to 2^LMC destination trees per destination and
/// exported as LMC LFTs plus LID offsets that `routes check --lft --lids` walks back to the
/// table. Transpose + bit-complement sends two flows to each router: LMC 2 (DOR's tree and
/// up to three more) carries the optimum as it is, LMC 1 reroutes what does not fit.
#[test]
fn lmc_export_carries_the_evolved_table_and_routes_check_verifies_it() {
    let problem = "problems/mesh4x4x4-transpose-bitcomp.toml";
    for lmc in ["1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let v = json(&[
            "routes",
            "evolve",
            problem,
            "--generations",
            "10",
            "--population",
            "20",
            "--hill-climb",
            "0.5",
            "--lmc",
            lmc,
            "--quiet",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]);
        let report = &v["lmc"];
        let layers = report["layers_used"].as_u64().unwrap();
        assert!(
            layers >= 2 && layers <= 1 << lmc.parse::<u32>().unwrap(),
            "{report}"
        );
        let load = v["max_channel_load"].as_f64().unwrap();
        let unconstrained = report["unconstrained_max_channel_load"].as_f64().unwrap();
        assert!(load >= unconstrained * (1.0 - 1e-9), "{v}");
        if lmc == "2" {
            assert_eq!(report["rerouted_pairs"], 0, "{report}");
            assert!((load - unconstrained).abs() < 1e-9);
        }
        let path = |f: &str| out.join(f).display().to_string();
        let (table, lft, lid, sl) = (
            path("best.json"),
            path("best.lmc.lft"),
            path("best.lid"),
            path("best.sl"),
        );
        let mut args = vec![
            "routes", "check", problem, &table, "--lft", &lft, "--lids", &lid, "--lmc", lmc,
            "--json",
        ];
        if v["vls_needed"].as_u64() != Some(1) {
            args.extend(["--sl", &sl]);
        }
        let check = json(&args);
        assert_eq!(check["lft"]["matches_table"], true, "{check}");
        assert!(check["deadlock"].is_null(), "{check}");
        // The same files read with a smaller LMC are refused, naming the file and line.
        if lmc == "2" {
            let err = error_line(&[
                "routes", "check", problem, &table, "--lft", &lft, "--lids", &lid, "--lmc", "1",
            ]);
            assert!(err.contains("best.json: the table fails"), "{err}");
            // `routes export --lmc 0` refuses a table of several trees per destination.
            let lft0 = dir.path().join("x.lft").display().to_string();
            // ... and `--lmc 8`, above InfiniBand's range.
            for (lmc, refusal) in [
                ("0", "need more than 2^0 = 1 destination trees"),
                ("8", "--lmc: 8 is above InfiniBand's largest LMC, 7"),
            ] {
                let err = error_line(&[
                    "routes", "export", problem, "--table", &table, "--format", "lft", "--lmc",
                    lmc, "-o", &lft0,
                ]);
                assert!(err.contains(refusal), "{err}");
            }
            let bad_out = dir.path().join("e").display().to_string();
            let err = error_line(&[
                "routes", "evolve", problem, "--lmc", "9", "--quiet", "--out", &bad_out,
            ]);
            assert!(err.contains("evolve.lmc: 9 is above"), "{err}");
        }
    }
}
