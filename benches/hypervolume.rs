//! Exact hypervolume: the 3-D sweep and contributions on 10,000 points, WFG in 4-D, and the
//! SMS-EMOA case (contributions of 100 points). Figures are in docs/hypervolume.md.

use criterion::{Criterion, criterion_group, criterion_main};
use fabricopt::search::hypervolume::{contributions, hypervolume};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random points on the positive part of the unit sphere: mutually non-dominated, the worst
/// case for the staircase sizes.
fn sphere(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let v: Vec<f64> = (0..d).map(|_| rng.random::<f64>() + 1e-3).collect();
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            v.iter().map(|x| x / norm).collect()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("hypervolume");
    group.sample_size(20);
    let big = sphere(10_000, 3, 1);
    let r3 = [1.1; 3];
    group.bench_function("hv_3d_10000", |b| b.iter(|| hypervolume(&big, &r3)));
    group.bench_function("contributions_3d_10000", |b| {
        b.iter(|| contributions(&big, &r3))
    });
    let four = sphere(1_000, 4, 2);
    let r4 = [1.1; 4];
    group.bench_function("hv_4d_1000", |b| b.iter(|| hypervolume(&four, &r4)));
    let small = sphere(100, 3, 3);
    group.bench_function("contributions_3d_100", |b| {
        b.iter(|| contributions(&small, &r3))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
