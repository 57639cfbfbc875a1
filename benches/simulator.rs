//! Simulator speed on the standard cases of `fabricopt bench` (problems/bench/): simulated
//! cycles per second, single-threaded. Figures and the BookSim2 comparison are in
//! docs/benchmarks.md.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fabricopt::cli::bench::{CASES, case_setup, warmed_engine};

fn cases(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulator");
    group.sample_size(10);
    for (name, text) in CASES {
        let setup = case_setup(name, text).expect("bundled case builds");
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

criterion_group!(benches, cases);
criterion_main!(benches);
