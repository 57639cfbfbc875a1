//! `fabricopt routes evolve`: JSON report, exports that load back, and errors.

mod common;

use common::{error_line, json};

#[test]
fn evolve_transpose_reports_loads_bounds_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let v = json(&[
        "routes",
        "evolve",
        "problems/mesh4x4x4-transpose.toml",
        "--generations",
        "15",
        "--population",
        "30",
        "--hill-climb",
        "0.5",
        "--quiet",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let load = v["max_channel_load"].as_f64().unwrap();
    let dor = v["baseline_max_channel_load"].as_f64().unwrap();
    let bound = v["bound"].as_f64().unwrap();
    // DOR puts 4 transpose flows on one channel: 4 x 64/56 per unit load.
    assert!((dor - 4.0 * 64.0 / 56.0).abs() < 1e-9, "{dor}");
    assert!(load < dor, "{load} vs DOR {dor}");
    assert!(bound <= load + 1e-9 && bound > 0.0, "{bound} vs {load}");
    assert_eq!(v["bound_kind"], "exact");
    assert!(v["bound_lp_relaxation"].as_f64().unwrap() <= bound + 1e-9);
    assert!(v["routing_bound"].as_f64().unwrap() <= bound + 1e-9);
    assert!(v["deadlock_free_alone"].is_boolean());
    // The evolved table is simulated and does not saturate where DOR does (load 0.2).
    assert_eq!(v["simulated"][0]["saturated"], false);
    assert_eq!(v["baseline_simulated"][0]["saturated"], true);
    // The exported JSON table simulates through `routing = table`.
    let table = out.join("best.json");
    assert!(out.join("best.csv").exists() && out.join("best.paths").exists());
    let cmp = json(&[
        "simulate",
        "problems/mesh4x4x4-transpose.toml",
        "--load",
        "0.2",
        "--json",
        "--compare",
        &format!("dor,table:{}", table.display()),
    ]);
    let routings = cmp["routings"].as_array().unwrap();
    assert_eq!(routings.len(), 2);
    assert_eq!(routings[1]["points"][0]["saturated"], false);
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
