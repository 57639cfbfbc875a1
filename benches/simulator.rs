//! Simulator speed on the standard cases of `fabricopt bench` (problems/bench/): simulated
//! cycles per second, single-threaded. Figures and the BookSim2 comparison are in
//! docs/benchmarks.md.

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fabricopt::cli::bench::CASES;
use fabricopt::cli::simulate::Setup;
use fabricopt::problem::{LoadedProblem, parse_problem};
use fabricopt::sim::Engine;

fn cases(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulator");
    group.sample_size(10);
    for (name, text) in CASES {
        let path = PathBuf::from(format!("problems/bench/{name}.toml"));
        let problem = parse_problem(text).expect("bundled case parses");
        let setup = Setup::from_loaded(&LoadedProblem { path, problem }).expect("builds");
        // A warmed-up engine is cloned for every sample, so each sample measures steady state.
        let cycles: u64 = if name.starts_with("mesh") { 5_000 } else { 500 };
        group.throughput(Throughput::Elements(cycles));
        group.bench_function(*name, |b| {
            b.iter_batched_ref(
                || {
                    let mut e = Engine::new(
                        &setup.topo,
                        setup.routing.as_ref(),
                        setup.traffic.clone(),
                        setup.params.clone(),
                        setup.seed,
                    );
                    for _ in 0..setup.params.warmup_cycles {
                        e.step();
                    }
                    e
                },
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
