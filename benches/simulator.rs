//! Simulator speed on the standard cases of `fabricopt bench` (problems/bench/): simulated
//! cycles per second, single-threaded, and on the parallel engine (the `-2threads` cases:
//! the measurement window of whole runs, timed by the engine). Figures and the BookSim2
//! comparison are in docs/benchmarks.md.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;

use fabricopt::cli::bench::{CASES, case_setup, parallel_run, warmed_engine};

fn cases(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulator");
    group.sample_size(10);
    for (name, text) in CASES {
        let setup = case_setup(name, text).expect("bundled case builds");
        if setup.params.partitions > 1 {
            continue; // `parallel` below
        }
        // Every sample starts from a freshly warmed-up engine, so it measures steady state.
        // About a second of simulation each (the 16,512-node case runs ~100 cycles/s).
        let cycles: u64 = if name.starts_with("mesh") {
            5_000
        } else if name.contains("16512") {
            100
        } else {
            500
        };
        group.throughput(Throughput::Elements(cycles));
        group.bench_function(*name, |b| {
            b.iter_batched_ref(
                || warmed_engine(&setup),
                |e| {
                    for _ in 0..cycles {
                        e.step();
                    }
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// The 1,056-node dragonfly on 2 threads (the 16,512-node one takes minutes a run: measured
/// with `fabricopt bench` only).
fn parallel(c: &mut Criterion) {
    let mut group = c.benchmark_group("parallel");
    group.sample_size(10);
    let (name, text) = CASES
        .iter()
        .find(|(name, _)| *name == "dragonfly1056-min-uniform-0.2-2threads")
        .expect("bundled case");
    let setup = case_setup(name, text).expect("bundled case builds");
    group.throughput(Throughput::Elements(setup.params.measure_cycles));
    group.bench_function(*name, |b| {
        b.iter_custom(|runs| {
            (0..runs)
                .map(|_| {
                    let run = parallel_run(&setup).expect("the case runs in parallel");
                    Duration::from_secs_f64(run.measure_seconds)
                })
                .sum()
        })
    });
    group.finish();
}

criterion_group!(benches, cases, parallel);
criterion_main!(benches);
