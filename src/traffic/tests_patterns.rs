//! Tests of destination patterns, the destination distribution and config errors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::topology::LinkParams;
use crate::topology::generators::{DragonflyArrangement, cartesian, dragonfly};

pub(super) fn ring(n: usize) -> Topology {
    cartesian(&[n], true, 1, &LinkParams::default()).unwrap()
}

fn torus(dims: &[usize], c: usize) -> Topology {
    cartesian(dims, true, c, &LinkParams::default()).unwrap()
}

fn dfly(p: usize, a: usize, h: usize, g: usize) -> Topology {
    dragonfly(
        p,
        a,
        h,
        g,
        DragonflyArrangement::Absolute,
        &LinkParams::default(),
    )
    .unwrap()
}

pub(super) fn build(cfg: TrafficConfig, topo: &Topology) -> Traffic {
    Traffic::build(&[cfg], topo, 7, Path::new(".")).unwrap()
}

fn build_err(cfg: TrafficConfig, topo: &Topology) -> (String, String) {
    match Traffic::build(&[cfg], topo, 7, Path::new(".")) {
        Err(Error::Field { field, reason }) => (field, reason),
        Err(other) => panic!("expected a field error, got {other}"),
        Ok(_) => panic!("expected an error"),
    }
}

fn pattern(name: &str) -> TrafficConfig {
    TrafficConfig::new(name, 0.5)
}

/// The destination of a deterministic pattern (None: the source does not send).
fn dest(tr: &Traffic, src: usize) -> Option<u32> {
    let d = tr.destination_distribution(0, src);
    assert!(d.len() <= 1, "not a permutation at {src}: {d:?}");
    d.first().map(|&(dst, p)| {
        assert_eq!(p, 1.0);
        dst
    })
}

fn samples(tr: &Traffic, src: u32, count: usize, seed: u64) -> Vec<Option<u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| tr.classes[0].pattern.sample(src, &mut rng))
        .collect()
}

/// Chi-square goodness of fit of samples against `destination_distribution`, with a bound
/// about five standard deviations above the mean of the statistic.
fn assert_fits(tr: &Traffic, src: u32, count: usize) {
    let dist = tr.destination_distribution(0, src as usize);
    let total: f64 = dist.iter().map(|d| d.1).sum();
    assert!((total - tr.send_fraction(0, src as usize)).abs() < 1e-12);
    let mut observed: BTreeMap<Option<u32>, usize> = BTreeMap::new();
    for d in samples(tr, src, count, 99) {
        *observed.entry(d).or_default() += 1;
    }
    let mut cells: Vec<(f64, f64)> = dist
        .iter()
        .map(|&(d, p)| {
            (
                observed.remove(&Some(d)).unwrap_or(0) as f64,
                p * count as f64,
            )
        })
        .collect();
    if total < 1.0 - 1e-12 {
        cells.push((
            observed.remove(&None).unwrap_or(0) as f64,
            (1.0 - total) * count as f64,
        ));
    }
    assert!(
        observed.is_empty(),
        "samples outside the distribution: {observed:?}"
    );
    let stat: f64 = cells.iter().map(|(o, e)| (o - e).powi(2) / e).sum();
    let df = (cells.len() - 1).max(1) as f64;
    assert!(
        stat < df + 5.0 * (2.0 * df).sqrt(),
        "chi-square {stat} with {df} degrees of freedom"
    );
}

#[test]
fn traffic_bit_permutations_on_16_and_64_terminals() {
    let t16 = ring(16);
    let tr = build(pattern("transpose"), &t16);
    assert_eq!(dest(&tr, 1), Some(4));
    assert_eq!(dest(&tr, 6), Some(9));
    assert_eq!(dest(&tr, 4), Some(1));
    assert_eq!(dest(&tr, 0), None); // fixed point: does not send
    assert_eq!(dest(&tr, 5), None);
    let tr = build(pattern("transpose"), &ring(64));
    assert_eq!(dest(&tr, 1), Some(8));
    assert_eq!(dest(&tr, 10), Some(17));
    assert_eq!(dest(&tr, 9), None);

    let tr = build(pattern("bitrev"), &t16);
    assert_eq!(dest(&tr, 1), Some(8));
    assert_eq!(dest(&tr, 2), Some(4));
    assert_eq!(dest(&tr, 11), Some(13));
    assert_eq!(dest(&tr, 6), None);

    let tr = build(pattern("bitcomp"), &t16);
    assert_eq!(dest(&tr, 5), Some(10));
    assert_eq!(dest(&tr, 0), Some(15));
    assert!((tr.offered_load(0) - 0.5).abs() < 1e-12);

    let tr = build(pattern("shuffle"), &t16);
    assert_eq!(dest(&tr, 9), Some(3));
    assert_eq!(dest(&tr, 6), Some(12));
    assert_eq!(dest(&tr, 8), Some(1));
    assert_eq!(dest(&tr, 0), None);
    assert_eq!(dest(&tr, 15), None);
    // 0 and 15 do not send: the offered load is 14/16 of the nominal load.
    assert!((tr.offered_load(0) - 0.5 * 14.0 / 16.0).abs() < 1e-12);
    let sources = tr.new_sources();
    assert_eq!(tr.next_event(&sources[tr.source_index(0, 0)]), None);
    assert!(tr.next_event(&sources[tr.source_index(9, 0)]).is_some());
}

#[test]
fn traffic_bit_permutations_need_power_of_two() {
    let (field, reason) = build_err(pattern("bitrev"), &ring(12));
    assert_eq!(field, "pattern");
    assert!(
        reason.contains("power of two") && reason.contains("12"),
        "{reason}"
    );
    // Transpose needs an even exponent.
    let (field, reason) = build_err(pattern("transpose"), &ring(32));
    assert_eq!(field, "pattern");
    assert!(reason.contains("even power of two"), "{reason}");
    assert!(Traffic::build(&[pattern("shuffle")], &ring(32), 1, Path::new(".")).is_ok());
}

#[test]
fn traffic_tornado_and_neighbor_on_8x8_torus() {
    let topo = torus(&[8, 8], 1);
    let tr = build(pattern("tornado"), &topo);
    // (1, 2) -> (1 + 3, 2 + 3): shift (k + 1) / 2 - 1 = 3 per dimension.
    assert_eq!(dest(&tr, 1 + 2 * 8), Some(4 + 5 * 8));
    assert_eq!(dest(&tr, 7 + 6 * 8), Some(2 + 8));
    let all: BTreeSet<u32> = (0..64).map(|s| dest(&tr, s).unwrap()).collect();
    assert_eq!(all.len(), 64);
    let tr = build(pattern("neighbor"), &topo);
    assert_eq!(dest(&tr, 1 + 2 * 8), Some(2 + 3 * 8));
    assert_eq!(dest(&tr, 63), Some(0));
    assert_eq!(dest(&tr, 7), Some(8));
}

#[test]
fn traffic_digit_patterns_fall_back_to_a_ring() {
    // Two terminals per router: terminals form a 1-D ring of 32.
    let topo = torus(&[4, 4], 2);
    let tr = build(pattern("tornado"), &topo);
    assert_eq!(dest(&tr, 0), Some(15));
    assert_eq!(dest(&tr, 20), Some(3));
    let tr = build(pattern("neighbor"), &topo);
    assert_eq!(dest(&tr, 31), Some(0));
    let tr = build(pattern("neighbor"), &dfly(2, 4, 2, 9));
    assert_eq!(dest(&tr, 5), Some(6));
}

#[test]
fn traffic_adv_lands_in_the_shifted_group() {
    // p = 2, a = 4: 8 terminals per group, g = 9 groups.
    let topo = dfly(2, 4, 2, 9);
    for shift in [1usize, 4] {
        let cfg = pattern("adv").with("shift", shift);
        let tr = build(cfg, &topo);
        for src in (0..72u32).step_by(5) {
            let group = src / 8;
            let want = (group + shift as u32) % 9;
            let mut seen = BTreeSet::new();
            for d in samples(&tr, src, 400, u64::from(src)) {
                let d = d.expect("adv always sends");
                assert_eq!(topo.terminals[d as usize].router / 4, want as usize);
                seen.insert(d);
            }
            assert_eq!(seen.len(), 8, "every terminal of the group is reached");
            let dist = tr.destination_distribution(0, src as usize);
            assert_eq!(dist.len(), 8);
            assert!(dist.iter().all(|&(d, p)| d / 8 == want && p == 0.125));
        }
    }
    let (field, reason) = build_err(pattern("adv"), &torus(&[4, 4], 1));
    assert_eq!(field, "pattern");
    assert!(reason.contains("dragonfly"), "{reason}");
    let cfg = pattern("adv").with("shift", 9);
    assert_eq!(build_err(cfg, &topo).0, "shift");
}

#[test]
fn traffic_randperm_is_a_derangement_drawn_from_the_seed() {
    let topo = ring(64);
    let perm = |seed: u64| -> Vec<u32> {
        let tr = Traffic::build(&[pattern("randperm")], &topo, seed, Path::new(".")).unwrap();
        (0..64)
            .map(|s| dest(&tr, s).expect("no fixed points"))
            .collect()
    };
    let p = perm(3);
    let set: BTreeSet<u32> = p.iter().copied().collect();
    assert_eq!(set.len(), 64);
    assert!(p.iter().enumerate().all(|(i, &d)| i as u32 != d));
    assert_eq!(p, perm(3));
    assert_ne!(p, perm(4));
    assert_ne!(p, (0..64).map(|i| (i + 1) % 64).collect::<Vec<u32>>());
}

#[test]
fn traffic_hotspot_fraction() {
    let topo = ring(64);
    let cfg = pattern("hotspot")
        .with("hotspots", vec![40, 3])
        .with("hotspot_fraction", 0.3);
    let tr = build(cfg, &topo);
    let n = 200_000;
    let hits = samples(&tr, 0, n, 5)
        .iter()
        .filter(|d| matches!(d, Some(3) | Some(40)))
        .count();
    let want = 0.3 + 0.7 * 2.0 / 63.0;
    assert!((hits as f64 / n as f64 - want).abs() < 0.005, "{hits}");
    // A hotspot sends its hotspot share to the other hotspot.
    let dist: BTreeMap<u32, f64> = tr.destination_distribution(0, 3).into_iter().collect();
    assert!((dist[&40] - (0.3 + 0.7 / 63.0)).abs() < 1e-12);
    assert!(!dist.contains_key(&3));
    assert!((dist.values().sum::<f64>() - 1.0).abs() < 1e-12);
    let bad = pattern("hotspot").with("hotspots", vec![64]);
    assert_eq!(build_err(bad, &topo).0, "hotspots[0]");
    assert_eq!(build_err(pattern("hotspot"), &topo).0, "hotspots");
}

#[test]
fn traffic_stencil_and_manytomany_on_a_grid() {
    let topo = ring(64);
    let grid = |name: &str| pattern(name).with("dims", vec![4, 4, 4]);
    // (1, 2, 3) = 57: x +-1, y +-1, z +-1 (z wraps to 0).
    let tr = build(grid("stencil3d"), &topo);
    let dist = tr.destination_distribution(0, 57);
    let want: Vec<u32> = vec![9, 41, 53, 56, 58, 61];
    assert_eq!(dist.iter().map(|d| d.0).collect::<Vec<_>>(), want);
    assert!(dist.iter().all(|d| (d.1 - 1.0 / 6.0).abs() < 1e-12));
    let tr = build(grid("manytomany"), &topo);
    let dist = tr.destination_distribution(0, 57);
    assert_eq!(
        dist.iter().map(|d| d.0).collect::<Vec<_>>(),
        vec![9, 25, 41]
    );
    assert_fits(&tr, 57, 30_000);
    // The default grid is the paper's 5 x 10 x 51.
    let (field, reason) = build_err(pattern("stencil3d"), &topo);
    assert_eq!(field, "dims");
    assert!(reason.contains("2550") && reason.contains("64"), "{reason}");
    let tr = build(pattern("stencil3d"), &ring(2550));
    assert_eq!(tr.destination_distribution(0, 0).len(), 6);
    // A dimension of 2 merges the two neighbours; a dimension of 1 sends to itself (nothing).
    let cfg = pattern("stencil3d").with("dims", vec![2, 1, 8]);
    let tr = build(cfg, &ring(16));
    let dist = tr.destination_distribution(0, 0);
    assert_eq!(dist, vec![(1, 2.0 / 6.0), (2, 1.0 / 6.0), (14, 1.0 / 6.0)]);
    assert!((tr.send_fraction(0, 0) - 4.0 / 6.0).abs() < 1e-12);
    assert_fits(&tr, 0, 30_000);
}

#[test]
fn traffic_randneighbours_draws_6_to_20_targets() {
    let topo = ring(64);
    let tr = build(pattern("randneighbours"), &topo);
    let again = build(pattern("randneighbours"), &topo);
    let mut sizes = BTreeSet::new();
    for s in 0..64 {
        let dist = tr.destination_distribution(0, s);
        assert!((6..=20).contains(&dist.len()), "{}", dist.len());
        assert!(dist.iter().all(|&(d, _)| d as usize != s));
        assert_eq!(dist, again.destination_distribution(0, s));
        sizes.insert(dist.len());
    }
    assert!(sizes.len() > 3, "sizes vary: {sizes:?}");
    assert_fits(&tr, 17, 30_000);
    let cfg = pattern("randneighbours")
        .with("neighbours_min", 3)
        .with("neighbours_max", 3);
    let tr = build(cfg, &topo);
    assert!((0..64).all(|s| tr.destination_distribution(0, s).len() == 3));
    let cfg = pattern("randneighbours")
        .with("neighbours_min", 5)
        .with("neighbours_max", 4);
    assert_eq!(build_err(cfg, &topo).0, "neighbours_max");
}

#[test]
fn traffic_matrix_from_csv() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.csv"),
        "# weights\n0, 1, 3, 0\n0,0,0,0\n5 5 5 5\n\n1,0,0,0\n",
    )
    .unwrap();
    let topo = ring(4);
    let cfg = pattern("matrix").with("matrix", "m.csv");
    let tr = Traffic::build(std::slice::from_ref(&cfg), &topo, 1, dir.path()).unwrap();
    assert_eq!(
        tr.destination_distribution(0, 0),
        vec![(1, 0.25), (2, 0.75)]
    );
    assert!(tr.destination_distribution(0, 1).is_empty());
    // The diagonal is ignored: row 2 is uniform over the three others.
    let d2 = tr.destination_distribution(0, 2);
    assert_eq!(d2.len(), 3);
    assert!(d2.iter().all(|d| (d.1 - 1.0 / 3.0).abs() < 1e-12));
    assert_eq!(tr.destination_distribution(0, 3), vec![(0, 1.0)]);
    assert_fits(&tr, 0, 20_000);
    assert!((tr.offered_load(0) - 0.5 * 0.75).abs() < 1e-12);
    let sources = tr.new_sources();
    assert_eq!(tr.next_event(&sources[tr.source_index(1, 0)]), None);
    let m = tr.traffic_matrix(0);
    assert!((m[0][2] - 0.375).abs() < 1e-12);

    // A missing file: the error names the field and the file.
    let missing = pattern("matrix").with("matrix", "nope.csv");
    let err = Traffic::build(&[missing], &topo, 1, dir.path()).unwrap_err();
    let Error::Field { field, reason } = &err else {
        panic!("{err}")
    };
    assert_eq!(field, "matrix");
    assert!(reason.contains("nope.csv"), "{reason}");
    // The wrong size names the file and the line.
    let err = Traffic::build(&[cfg], &ring(5), 1, dir.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("m.csv") && err.contains("line 2"), "{err}");
    std::fs::write(dir.path().join("m.csv"), "0,1,x,0\n").unwrap();
    let cfg = pattern("matrix").with("matrix", dir.path().join("m.csv"));
    let err = Traffic::build(&[cfg], &topo, 1, Path::new("/"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 1") && err.contains("\"x\""), "{err}");
}

#[test]
fn traffic_distributions_sum_to_one_and_match_samples() {
    let topo = torus(&[8, 8], 1);
    let hot = pattern("hotspot")
        .with("hotspots", vec![0, 9, 33])
        .with("hotspot_fraction", 0.5);
    for cfg in [
        pattern("uniform"),
        pattern("randperm"),
        pattern("tornado"),
        pattern("bitcomp"),
        pattern("randneighbours"),
        hot,
    ] {
        let name = cfg.pattern.clone().unwrap();
        let tr = build(cfg, &topo);
        for s in 0..64 {
            let d = tr.destination_distribution(0, s);
            let sum: f64 = d.iter().map(|x| x.1).sum();
            assert!((sum - 1.0).abs() < 1e-9, "{name} at {s}: {sum}");
            assert!(d.iter().all(|x| x.0 as usize != s && x.1 > 0.0));
            assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
        }
        assert_fits(&tr, 9, 40_000);
        assert_fits(&tr, 50, 40_000);
    }
    let tr = build(pattern("uniform"), &topo);
    assert_eq!(tr.destination_distribution(0, 5).len(), 63);
    assert!(
        tr.destination_distribution(0, 5)
            .iter()
            .all(|x| x.1 == 1.0 / 63.0)
    );
}

#[test]
fn traffic_diagonal_sends_a_third_of_the_time() {
    let topo = ring(16);
    let tr = build(pattern("diagonal"), &topo);
    assert_eq!(tr.destination_distribution(0, 15), vec![(0, 1.0 / 3.0)]);
    assert!((tr.offered_load(0) - 0.5 / 3.0).abs() < 1e-12);
    assert_fits(&tr, 4, 30_000);
}

#[test]
fn traffic_config_errors_name_the_field() {
    let topo = ring(16);
    let (field, reason) = build_err(pattern("zigzag"), &topo);
    assert_eq!(field, "pattern");
    assert!(
        reason.contains("zigzag") && reason.contains("tornado"),
        "{reason}"
    );
    let cfg = TrafficConfig {
        load: Some(0.5),
        ..TrafficConfig::default()
    };
    assert_eq!(build_err(cfg, &topo).0, "pattern");
    let cfg = pattern("uniform").with("shift", 2);
    let (field, reason) = build_err(cfg, &topo);
    assert_eq!(field, "shift");
    assert!(reason.contains("\"adv\""), "{reason}");
    let cfg = TrafficConfig {
        injection: Some("poisson".into()),
        ..pattern("uniform")
    };
    assert_eq!(build_err(cfg, &topo).0, "injection");
    let cfg = TrafficConfig {
        packet_size: Some(4),
        payload_max: Some(8),
        ..pattern("uniform")
    };
    assert_eq!(build_err(cfg, &topo).0, "packet_size");
    let cfg = TrafficConfig {
        payload_min: Some(8),
        ..pattern("uniform")
    };
    assert_eq!(build_err(cfg, &topo).0, "payload_max");
    // With several classes the reason names the table.
    let err = Traffic::build(
        &[pattern("uniform"), pattern("nope")],
        &topo,
        1,
        Path::new("."),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("pattern: ") && err.contains("table 1"),
        "{err}"
    );
}

#[test]
fn traffic_tables_parse_from_toml() {
    let text = r#"
seed = 3
[topology]
kind = "torus"

[[traffic]]
pattern = "uniform"
load = 0.4
payload_min = 1
payload_max = 256
header = 1
footer = 1
source_queue = 64

[[traffic]]
pattern = "uniform"
phases = [{ until_cycle = 1000, load = 0.4 }, { until_cycle = 2000, load = 0.8 }]
"#;
    let cfgs = parse_traffic_tables(text).unwrap();
    assert_eq!(cfgs.len(), 2);
    assert_eq!(cfgs[0].payload_max, Some(256));
    assert_eq!(cfgs[1].phases.as_ref().unwrap()[1].load, 0.8);
    let tr = Traffic::build(&cfgs, &ring(16), 3, Path::new(".")).unwrap();
    assert_eq!(tr.num_classes(), 2);
    assert_eq!(tr.mean_packet_flits(0), 130.5);
    assert_eq!(tr.packet_flits_range(0), (3, 258));
    assert_eq!(tr.source_queue_limit(0), Some(64));
    assert_eq!(tr.source_queue_limit(1), None);
    let err = parse_traffic_tables("[[traffic]]\npattern = \"uniform\"\ncolour = 1\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 3") && err.contains("traffic[0]") && err.contains("unknown field"),
        "{err}"
    );
    // Round trip through TOML.
    let back: TrafficConfig = toml::from_str(&toml::to_string(&cfgs[0]).unwrap()).unwrap();
    assert_eq!(back, cfgs[0]);
}

#[test]
fn traffic_doc_example_builds() {
    let doc = include_str!("../../docs/traffic.md");
    let start = doc.find("```toml\n").expect("an example") + 8;
    let text = &doc[start..start + doc[start..].find("```").unwrap()];
    let cfgs = parse_traffic_tables(text).unwrap();
    assert_eq!(cfgs.len(), 4);
    let topo = dfly(4, 8, 4, 33);
    let tr = Traffic::build(&cfgs, &topo, 1, Path::new(".")).unwrap();
    assert_eq!(tr.class_name(0), "ur");
    assert_eq!(tr.injection_name(3), "alltoall");
    assert!((tr.offered_load(3) - 15.0 * 2.0 / 100_000.0).abs() < 1e-15);
    assert!((tr.nominal_load(2) - 1.6 / 3.0).abs() < 1e-12);
}

/// `self_packets` (BookSim2's behaviour): uniform draws the source too, transpose's diagonal
/// sends to itself, diagonal keeps its 2/3 self share; the sampled destinations follow the
/// exact distribution; the `booksim` defaults switch it on where it applies.
#[test]
fn self_packets_send_to_the_source_like_booksim() {
    let t = torus(&[4, 4], 1);
    let with_self = |name: &str| {
        let mut c = pattern(name);
        c.self_packets = Some(true);
        build(c, &t)
    };
    let uniform = with_self("uniform");
    let d = uniform.destination_distribution(0, 5);
    assert_eq!(d.len(), 16);
    assert!(d.iter().all(|&(_, p)| (p - 1.0 / 16.0).abs() < 1e-12));
    let hits = samples(&uniform, 5, 16_000, 3)
        .into_iter()
        .filter(|&s| s == Some(5))
        .count();
    assert!((800..1200).contains(&hits), "{hits} of 16,000 to itself");
    // Transpose of 16 terminals: 0, 5, 10, 15 are the diagonal.
    let transpose = with_self("transpose");
    assert_eq!(dest(&transpose, 5), Some(5));
    assert_eq!(dest(&transpose, 1), Some(4));
    assert_eq!(dest(&build(pattern("transpose"), &t), 5), None);
    let diagonal = with_self("diagonal");
    assert_eq!(
        diagonal.destination_distribution(0, 3),
        vec![(3, 2.0 / 3.0), (4, 1.0 / 3.0)]
    );
    let mut hot = pattern("hotspot").with("hotspots", vec![0]);
    hot.self_packets = Some(true);
    let (field, reason) = build_err(hot, &t);
    assert_eq!(field, "self_packets");
    assert!(reason.contains("\"uniform\""), "{reason}");
    let mut configs = vec![pattern("uniform"), pattern("randperm")];
    apply_booksim_defaults(&mut configs);
    assert_eq!(configs[0].self_packets, Some(true));
    assert_eq!(configs[1].self_packets, None);
}
