//! `fabricopt bench --scale-ratios`: the 1,056- over the 16,512-node dragonfly's flit-hop rate,
//! and the 16,512-node case's speed-up on 2 threads, each from runs taken back to back.
//!
//! This machine kind's speed drifts by up to threefold from one minute to the next
//! (docs/benchmarks.md, "Speed and scale"), so a ratio of two figures taken minutes apart
//! says as much about the drift as about the engine. Each round runs the three cases once,
//! one after the other, and takes both ratios within the round; the rounds rotate the cases'
//! order, so that no case always runs first.

use std::io::Write;

use anyhow::{Result, bail};
use serde::Serialize;

use super::{CASES, CaseResult, by_name, run_case};
use crate::search::stats::median;

/// The cases a round runs: the ratios' numerators and denominators.
const SMALL: &str = "dragonfly1056-min-uniform-0.2";
const LARGE: &str = "dragonfly16512-min-uniform-0.2";
const LARGE_2THREADS: &str = "dragonfly16512-min-uniform-0.2-2threads";

#[derive(Serialize)]
struct Round {
    /// The cases in the order this round ran them.
    order: Vec<&'static str>,
    small_flit_hops_per_s: f64,
    large_flit_hops_per_s: f64,
    large_cycles_per_s: f64,
    large_2threads_cycles_per_s: f64,
    /// 1,056-node flit-hops/s over 16,512-node flit-hops/s (one thread each).
    flit_hop_ratio: f64,
    /// 16,512 nodes: cycles/s on 2 threads over cycles/s on 1.
    speedup_2threads: f64,
}

/// The median and range of one ratio over the rounds.
#[derive(Serialize, Debug, PartialEq)]
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

#[derive(Serialize)]
struct Report {
    rounds: Vec<Round>,
    flit_hop_ratio: Spread,
    speedup_2threads: Spread,
    /// Flit-hops in the measured cycles, the same in every round and on 1 and 2 threads.
    small_flit_hops: u64,
    large_flit_hops: u64,
}

/// The median (the mean of the middle two for an even count), least and greatest of
/// `values`, which are finite and at least one.
fn spread(values: &[f64]) -> Spread {
    Spread {
        median: median(values),
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// The three cases of round `round` (from 0), rotated left by the round's number.
fn order(round: usize) -> Vec<&'static str> {
    let mut cases = vec![SMALL, LARGE, LARGE_2THREADS];
    let first = round % cases.len();
    cases.rotate_left(first);
    cases
}

fn case_text(name: &str) -> &'static str {
    by_name(CASES, name).expect("the scale ratios' cases are bench cases")
}

pub(super) fn run(rounds: usize, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let mut report_rounds = Vec::with_capacity(rounds);
    let mut hops: Option<(u64, u64)> = None;
    for round in 0..rounds {
        let order = order(round);
        let mut results: Vec<CaseResult> = Vec::with_capacity(order.len());
        for name in &order {
            results.push(run_case(name, case_text(name), 1)?);
        }
        let of = |name: &str| {
            results
                .iter()
                .find(|r| r.name == name)
                .expect("each case ran")
        };
        let (small, large, large2) = (of(SMALL), of(LARGE), of(LARGE_2THREADS));
        // Deterministic runs move the same flits in the same cycles whatever the thread
        // count or the round: anything else is a fault of the engine, not noise.
        if large2.flit_hops != large.flit_hops {
            bail!(
                "{LARGE}: the 2-thread run moved {} flit-hops in its measured cycles, the \
                 sequential run {}: the parallel engine disagrees with the sequential one",
                large2.flit_hops,
                large.flit_hops
            );
        }
        let these = (small.flit_hops, large.flit_hops);
        if let Some(first) = hops.filter(|&first| first != these) {
            bail!(
                "round {}: {these:?} flit-hops in the measured cycles of {SMALL} and {LARGE}, \
                 round 1: {first:?}: the runs are not deterministic",
                round + 1
            );
        }
        hops = Some(these);
        let r = Round {
            order: order.clone(),
            small_flit_hops_per_s: small.flit_hops_per_s,
            large_flit_hops_per_s: large.flit_hops_per_s,
            large_cycles_per_s: large.cycles_per_s,
            large_2threads_cycles_per_s: large2.cycles_per_s,
            flit_hop_ratio: small.flit_hops_per_s / large.flit_hops_per_s,
            speedup_2threads: large2.cycles_per_s / large.cycles_per_s,
        };
        if !json {
            writeln!(
                out,
                "round {}: 1,056 nodes {:.2} M flit-hops/s, 16,512 nodes {:.2} M: ratio {:.2}; \
                 16,512 nodes {:.0} cycles/s on 1 thread, {:.0} on 2: {:.2}x",
                round + 1,
                r.small_flit_hops_per_s / 1e6,
                r.large_flit_hops_per_s / 1e6,
                r.flit_hop_ratio,
                r.large_cycles_per_s,
                r.large_2threads_cycles_per_s,
                r.speedup_2threads
            )?;
            out.flush()?;
        }
        report_rounds.push(r);
    }
    let (small_flit_hops, large_flit_hops) = hops.expect("at least one round");
    let report = Report {
        flit_hop_ratio: spread(
            &report_rounds
                .iter()
                .map(|r| r.flit_hop_ratio)
                .collect::<Vec<_>>(),
        ),
        speedup_2threads: spread(
            &report_rounds
                .iter()
                .map(|r| r.speedup_2threads)
                .collect::<Vec<_>>(),
        ),
        rounds: report_rounds,
        small_flit_hops,
        large_flit_hops,
    };
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        let n = report.rounds.len();
        for (what, s) in [
            (
                "flit-hop rate, 1,056 nodes over 16,512 nodes (one thread each)",
                &report.flit_hop_ratio,
            ),
            (
                "16,512 nodes, cycles/s on 2 threads over 1",
                &report.speedup_2threads,
            ),
        ] {
            writeln!(
                out,
                "{what}: median {:.2} (range {:.2}-{:.2}) of {n} round(s)",
                s.median, s.min, s.max
            )?;
        }
        writeln!(
            out,
            "(every round moved {small_flit_hops} and {large_flit_hops} flit-hops in the two \
             cases' measured cycles, the 16,512-node case the same on 1 and 2 threads)"
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_of_odd_and_even_counts() {
        assert_eq!(
            spread(&[3.0, 1.0, 2.0]),
            Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0
            }
        );
        assert_eq!(
            spread(&[4.0, 1.0, 2.0, 10.0]),
            Spread {
                median: 3.0,
                min: 1.0,
                max: 10.0
            }
        );
        assert_eq!(spread(&[1.5]).median, 1.5);
    }

    #[test]
    fn every_case_leads_a_round_in_turn() {
        assert_eq!(order(0), [SMALL, LARGE, LARGE_2THREADS]);
        assert_eq!(order(1), [LARGE, LARGE_2THREADS, SMALL]);
        assert_eq!(order(2), [LARGE_2THREADS, SMALL, LARGE]);
        assert_eq!(order(3), order(0));
        for name in [SMALL, LARGE, LARGE_2THREADS] {
            assert!(!case_text(name).is_empty());
        }
    }
}
