//! Tests of injection processes, packet sizes and determinism.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::path::Path;

use super::tests_patterns::{build, ring};
use super::*;

type Trace = Vec<Vec<(u64, NewPacket)>>;

/// Runs every source to `cycles`, one source after the other; packets per source.
fn run(tr: &Traffic, cycles: u64) -> Trace {
    let mut sources = tr.new_sources();
    let mut out = vec![Vec::new(); sources.len()];
    let mut buf = Vec::new();
    for (i, s) in sources.iter_mut().enumerate().rev() {
        while let Some(t) = tr.next_event(s) {
            if t >= cycles {
                break;
            }
            tr.generate(s, t, &mut buf);
            out[i].extend(buf.drain(..).map(|p| (t, p)));
        }
    }
    out
}

/// Runs like the engine: cycle by cycle through a heap of next events.
fn run_interleaved(tr: &Traffic, cycles: u64) -> Trace {
    let mut sources = tr.new_sources();
    let mut out = vec![Vec::new(); sources.len()];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = sources
        .iter()
        .enumerate()
        .filter_map(|(i, s)| tr.next_event(s).map(|t| Reverse((t, i))))
        .collect();
    let mut buf = Vec::new();
    while let Some(Reverse((t, i))) = heap.pop() {
        if t >= cycles {
            break;
        }
        tr.generate(&mut sources[i], t, &mut buf);
        out[i].extend(buf.drain(..).map(|p| (t, p)));
        if let Some(next) = tr.next_event(&sources[i]) {
            assert!(next > t, "next event {next} not after {t}");
            heap.push(Reverse((next, i)));
        }
    }
    out
}

fn with(cfg: TrafficConfig, f: impl FnOnce(&mut TrafficConfig)) -> TrafficConfig {
    let mut cfg = cfg;
    f(&mut cfg);
    cfg
}

fn count(trace: &Trace) -> usize {
    trace.iter().map(Vec::len).sum()
}

fn field_of(r: Result<Traffic>) -> String {
    match r {
        Err(Error::Field { field, .. }) => field,
        Err(e) => panic!("not a field error: {e}"),
        Ok(_) => panic!("expected an error"),
    }
}

#[test]
fn traffic_bernoulli_rate_within_two_percent() {
    let tr = build(TrafficConfig::new("uniform", 0.25), &ring(8));
    let trace = run(&tr, 200_000);
    for src in &trace {
        let rate = src.len() as f64 / 200_000.0;
        assert!((rate / 0.25 - 1.0).abs() < 0.02, "rate {rate}");
        // At most one packet per cycle.
        assert!(src.windows(2).all(|w| w[0].0 < w[1].0));
    }
    // Sizes of 4 flits: a quarter of the packets.
    let tr = build(
        with(TrafficConfig::new("uniform", 0.4), |c| {
            c.packet_size = Some(4)
        }),
        &ring(8),
    );
    let rate = count(&run(&tr, 200_000)) as f64 / 8.0 / 200_000.0;
    assert!((rate / 0.1 - 1.0).abs() < 0.02, "rate {rate}");
    assert!((tr.offered_load(0) - 0.4).abs() < 1e-12);
    // Load 1 with single-flit packets: a packet every cycle.
    let tr = build(TrafficConfig::new("uniform", 1.0), &ring(4));
    assert!(run(&tr, 1000).iter().all(|s| s.len() == 1000));
    let tr = build(TrafficConfig::new("uniform", 0.0), &ring(4));
    assert!(tr.new_sources().iter().all(|s| tr.next_event(s).is_none()));
    let too_much = TrafficConfig::new("uniform", 1.5);
    assert_eq!(
        field_of(Traffic::build(&[too_much], &ring(4), 1, Path::new("."))),
        "load"
    );
}

#[test]
fn traffic_periodic_exact_counts() {
    let cfg = with(TrafficConfig::new("uniform", 0.3), |c| {
        c.injection = Some("periodic".into())
    });
    let tr = build(cfg, &ring(8));
    let trace = run(&tr, 10_000);
    let mut firsts = BTreeSet::new();
    for src in &trace {
        // Interval 10/3 cycles: exactly 3000 packets in 10,000 cycles, gaps of 3 or 4.
        assert_eq!(src.len(), 3000);
        assert!(src.windows(2).all(|w| (3..=4).contains(&(w[1].0 - w[0].0))));
        firsts.insert(src[0].0);
    }
    assert!(firsts.len() > 1, "terminals are phase-shifted");
    let cfg = with(TrafficConfig::new("uniform", 0.25), |c| {
        c.injection = Some("periodic".into());
        c.packet_size = Some(4);
    });
    let trace = run(&build(cfg, &ring(8)), 1600);
    for src in &trace {
        assert_eq!(src.len(), 100);
        assert!(src.windows(2).all(|w| w[1].0 - w[0].0 == 16));
    }
}

#[test]
fn traffic_onoff_keeps_the_average_load_and_is_bursty() {
    let cfg = with(TrafficConfig::new("uniform", 0.1), |c| {
        c.injection = Some("onoff".into());
        c.burst_on = Some(50.0);
        c.burst_off = Some(150.0);
    });
    let tr = build(cfg.clone(), &ring(8));
    let cycles = 400_000u64;
    let trace = run(&tr, cycles);
    let rate = count(&trace) as f64 / 8.0 / cycles as f64;
    assert!((rate / 0.1 - 1.0).abs() < 0.04, "rate {rate}");
    // Counts per 1,000-cycle window vary far more than Bernoulli's (index of dispersion ~1).
    let windows = (cycles / 1000) as usize;
    let mut counts = vec![0f64; windows];
    for &(t, _) in &trace[0] {
        counts[(t / 1000) as usize] += 1.0;
    }
    let mean = counts.iter().sum::<f64>() / windows as f64;
    let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / windows as f64;
    assert!(var / mean > 3.0, "dispersion {}", var / mean);
    // ON rate = 0.1 * 200 / 50 = 0.4 packets per cycle; 0.3 would need 1.2.
    let too_much = with(cfg, |c| c.load = Some(0.3));
    assert_eq!(
        field_of(Traffic::build(&[too_much], &ring(4), 1, Path::new("."))),
        "load"
    );
    let missing = with(TrafficConfig::new("uniform", 0.1), |c| {
        c.injection = Some("onoff".into());
        c.burst_on = Some(5.0);
    });
    assert_eq!(
        field_of(Traffic::build(&[missing], &ring(4), 1, Path::new("."))),
        "burst_off"
    );
}

fn phases(steps: &[(u64, f64)]) -> Option<Vec<PhaseConfig>> {
    Some(
        steps
            .iter()
            .map(|&(until_cycle, load)| PhaseConfig { until_cycle, load })
            .collect(),
    )
}

#[test]
fn traffic_phases_switch_at_the_right_cycles() {
    let cfg = TrafficConfig {
        pattern: Some("uniform".into()),
        phases: phases(&[(1000, 0.0), (2000, 1.0), (3000, 0.0)]),
        ..TrafficConfig::default()
    };
    let tr = build(cfg, &ring(4));
    let trace = run(&tr, u64::MAX);
    for src in &trace {
        let cycles: Vec<u64> = src.iter().map(|p| p.0).collect();
        assert_eq!(cycles, (1000..2000).collect::<Vec<_>>());
    }
    assert!((tr.nominal_load(0) - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(tr.load_at(0, 999), 0.0);
    assert_eq!(tr.load_at(0, 1000), 1.0);
    assert_eq!(tr.load_at(0, 3000), 0.0);

    // UR 0.4 -> 0.8 -> 0.4 (Bernoulli): the rate follows the phases.
    let cfg = TrafficConfig {
        pattern: Some("uniform".into()),
        phases: phases(&[(50_000, 0.4), (100_000, 0.8), (150_000, 0.4)]),
        ..TrafficConfig::default()
    };
    let tr = build(cfg, &ring(8));
    let trace = run(&tr, u64::MAX);
    let mut per_phase = [0f64; 3];
    for &(t, _) in trace.iter().flatten() {
        assert!(t < 150_000);
        per_phase[(t / 50_000) as usize] += 1.0;
    }
    for (i, want) in [0.4, 0.8, 0.4].iter().enumerate() {
        let rate = per_phase[i] / 8.0 / 50_000.0;
        assert!((rate / want - 1.0).abs() < 0.03, "phase {i}: {rate}");
    }
    // Periodic phases: exact counts per phase.
    let cfg = TrafficConfig {
        pattern: Some("uniform".into()),
        injection: Some("periodic".into()),
        phases: phases(&[(1000, 0.5), (2000, 0.25)]),
        ..TrafficConfig::default()
    };
    let tr = build(cfg, &ring(4));
    for src in run(&tr, u64::MAX) {
        assert_eq!(src.iter().filter(|p| p.0 < 1000).count(), 500);
        assert_eq!(src.iter().filter(|p| p.0 >= 1000).count(), 250);
        assert!(src.iter().all(|p| p.0 < 2000));
    }
    // Scaling phases keeps their shape.
    let scaled = tr.with_load(0, 0.75).unwrap();
    assert_eq!(scaled.load_at(0, 10), 1.0);
    assert_eq!(scaled.load_at(0, 1500), 0.5);
    let bad = TrafficConfig {
        pattern: Some("uniform".into()),
        phases: phases(&[(1000, 0.5), (1000, 0.25)]),
        ..TrafficConfig::default()
    };
    assert_eq!(
        field_of(Traffic::build(&[bad], &ring(4), 1, Path::new("."))),
        "phases[1].until_cycle"
    );
}

fn alltoall(period: u64) -> TrafficConfig {
    TrafficConfig {
        injection: Some("alltoall".into()),
        period: Some(period),
        ..TrafficConfig::default()
    }
}

#[test]
fn traffic_alltoall_sends_n_minus_1_packets_per_period() {
    let tr = build(alltoall(100), &ring(8));
    assert!((tr.offered_load(0) - 7.0 / 100.0).abs() < 1e-12);
    assert_eq!(tr.pattern_name(0), "alltoall");
    let trace = run_interleaved(&tr, 1000);
    for (i, src) in trace.iter().enumerate() {
        assert_eq!(src.len(), 70);
        for k in 0..10u64 {
            let burst: Vec<&(u64, NewPacket)> = src.iter().filter(|p| p.0 / 100 == k).collect();
            assert!(
                burst.iter().all(|p| p.0 == k * 100),
                "a burst at the period start"
            );
            let dsts: BTreeSet<u32> = burst.iter().map(|p| p.1.dst).collect();
            let want: BTreeSet<u32> = (0..8).filter(|&d| d != i as u32).collect();
            assert_eq!(dsts, want);
        }
        // Rotated order: i + 1, i + 2, ...
        assert_eq!(src[0].1.dst, (i as u32 + 1) % 8);
    }
    // Spread over the period, in groups of 4, shuffled.
    let cfg = with(alltoall(90), |c| {
        c.spread = Some(true);
        c.group = Some(4);
        c.order = Some("shuffle".into());
    });
    let tr = build(cfg, &ring(8));
    let trace = run(&tr, 900);
    for (i, src) in trace.iter().enumerate() {
        assert_eq!(src.len(), 30);
        let cycles: Vec<u64> = src.iter().take(3).map(|p| p.0).collect();
        assert_eq!(cycles, vec![0, 30, 60]);
        let base = i as u32 / 4 * 4;
        let mut orders = BTreeSet::new();
        for chunk in src.chunks(3) {
            let dsts: BTreeSet<u32> = chunk.iter().map(|p| p.1.dst).collect();
            let want: BTreeSet<u32> = (base..base + 4).filter(|&d| d != i as u32).collect();
            assert_eq!(dsts, want);
            orders.insert(chunk.iter().map(|p| p.1.dst).collect::<Vec<_>>());
        }
        assert!(orders.len() > 1, "the order is reshuffled");
    }
    // Messages of 3 packets: 3 back-to-back packets per member and exchange, 3x the load.
    let tr = build(
        with(alltoall(100), |c| c.packets_per_message = Some(3)),
        &ring(8),
    );
    assert!((tr.nominal_load(0) - 3.0 * 7.0 / 100.0).abs() < 1e-12);
    let trace = run(&tr, 1000);
    for (i, src) in trace.iter().enumerate() {
        assert_eq!(src.len(), 7 * 3 * 10);
        let first: Vec<u32> = src.iter().take(6).map(|p| p.1.dst).collect();
        let (a, b) = ((i as u32 + 1) % 8, (i as u32 + 2) % 8);
        assert_eq!(first, vec![a, a, a, b, b, b]);
    }
    let tr = tr.with_load(0, 0.42).unwrap();
    assert_eq!(count(&run(&tr, 1000)), 8 * 7 * 3 * 20, "the period halves");
    let wrong = with(alltoall(100), |c| c.packets_per_message = Some(0));
    assert_eq!(
        field_of(Traffic::build(&[wrong], &ring(8), 1, Path::new("."))),
        "packets_per_message"
    );
    // with_load sets the period.
    let tr = build(alltoall(100), &ring(8)).with_load(0, 0.14).unwrap();
    assert_eq!(count(&run(&tr, 1000)), 8 * 7 * 20);
    let wrong = with(alltoall(100), |c| c.pattern = Some("uniform".into()));
    assert_eq!(
        field_of(Traffic::build(&[wrong], &ring(8), 1, Path::new("."))),
        "pattern"
    );
    let wrong = with(alltoall(100), |c| c.group = Some(3));
    assert_eq!(
        field_of(Traffic::build(&[wrong], &ring(8), 1, Path::new("."))),
        "group"
    );
}

#[test]
fn traffic_packet_sizes_within_bounds_with_the_right_mean() {
    let cfg = with(TrafficConfig::new("uniform", 0.9), |c| {
        c.payload_min = Some(1);
        c.payload_max = Some(256);
        c.header = Some(1);
        c.footer = Some(1);
    });
    let tr = build(cfg, &ring(8));
    assert_eq!(tr.mean_packet_flits(0), 130.5);
    let trace = run(&tr, 400_000);
    let sizes: Vec<u32> = trace.iter().flatten().map(|p| p.1.size).collect();
    assert!(sizes.iter().all(|s| (3..=258).contains(s)));
    assert!(sizes.contains(&3) && sizes.contains(&258));
    let mean = sizes.iter().map(|&s| f64::from(s)).sum::<f64>() / sizes.len() as f64;
    assert!((mean / 130.5 - 1.0).abs() < 0.01, "mean {mean}");
    // Packet rate = load / mean size.
    let rate = sizes.len() as f64 / 8.0 / 400_000.0;
    assert!((rate * 130.5 / 0.9 - 1.0).abs() < 0.05, "rate {rate}");
    assert_eq!(tr.packet_flits_range(0), (3, 258));
}

#[test]
fn traffic_is_deterministic_and_independent_of_processing_order() {
    let cfgs = [
        with(TrafficConfig::new("uniform", 0.3), |c| {
            c.payload_min = Some(1);
            c.payload_max = Some(8);
        }),
        with(TrafficConfig::new("randneighbours", 0.2), |c| {
            c.injection = Some("onoff".into());
            c.burst_on = Some(20.0);
            c.burst_off = Some(20.0);
        }),
    ];
    let topo = ring(16);
    let tr = Traffic::build(&cfgs, &topo, 11, Path::new(".")).unwrap();
    let a = run(&tr, 5000);
    let b = run_interleaved(&tr, 5000);
    assert_eq!(a, b);
    let again = Traffic::build(&cfgs, &topo, 11, Path::new(".")).unwrap();
    assert_eq!(run(&again, 5000), a);
    let other = Traffic::build(&cfgs, &topo, 12, Path::new(".")).unwrap();
    assert_ne!(run(&other, 5000), a);
    // Adding a class does not change the first one's packets.
    let one = Traffic::build(&cfgs[..1], &topo, 11, Path::new(".")).unwrap();
    let first: Vec<_> = (0..16).map(|t| a[tr.source_index(t, 0)].clone()).collect();
    let alone: Vec<_> = (0..16).map(|t| run(&one, 5000)[t].clone()).collect();
    assert_eq!(first, alone);
    // Classes are tagged; seed_offset changes the streams.
    assert!(
        a[tr.source_index(3, 1)]
            .iter()
            .all(|p| p.1.class == 1 && p.1.src == 3)
    );
    let shifted = with(cfgs[0].clone(), |c| c.seed_offset = Some(1));
    let shifted = Traffic::build(&[shifted], &topo, 11, Path::new(".")).unwrap();
    assert_ne!(run(&shifted, 5000)[0], alone[0]);
}

#[test]
fn traffic_with_load_scales_the_injection() {
    let tr = build(TrafficConfig::new("uniform", 0.1), &ring(8));
    let up = tr.with_load(0, 0.5).unwrap();
    assert_eq!(up.nominal_load(0), 0.5);
    assert_eq!(tr.nominal_load(0), 0.1);
    let rate = count(&run(&up, 100_000)) as f64 / 8.0 / 100_000.0;
    assert!((rate / 0.5 - 1.0).abs() < 0.02, "rate {rate}");
    assert_eq!(field_of(tr.with_load(0, -1.0)), "load");
    assert_eq!(field_of(tr.with_load(0, 2.0)), "load");
    assert!(tr.with_load(1, 0.5).is_err());
    assert_eq!(tr.class_name(0), "class0");
    assert_eq!(tr.injection_name(0), "bernoulli");
}

#[test]
fn traffic_missing_load_and_conflicts_are_errors() {
    let topo = ring(4);
    let cfg = TrafficConfig {
        pattern: Some("uniform".into()),
        ..TrafficConfig::default()
    };
    assert_eq!(
        field_of(Traffic::build(&[cfg], &topo, 1, Path::new("."))),
        "load"
    );
    let cfg = with(TrafficConfig::new("uniform", 0.1), |c| {
        c.phases = phases(&[(10, 0.1)])
    });
    assert_eq!(
        field_of(Traffic::build(&[cfg], &topo, 1, Path::new("."))),
        "phases"
    );
    let cfg = with(alltoall(10), |c| c.load = Some(0.1));
    assert_eq!(
        field_of(Traffic::build(&[cfg], &topo, 1, Path::new("."))),
        "load"
    );
    let cfg = with(TrafficConfig::new("uniform", 0.1), |c| c.period = Some(10));
    assert_eq!(
        field_of(Traffic::build(&[cfg], &topo, 1, Path::new("."))),
        "period"
    );
    assert_eq!(
        field_of(Traffic::build(&[], &topo, 1, Path::new("."))),
        "traffic"
    );
}
