//! Evaluation of ExaNeSt link-arrangement genomes (the search's fitness function), split into
//! its parts: decoding + graph, distances/path diversity from one chassis' routers, and the
//! FM bisection. Genomes are the first 20 of a seeded random initial population, so a run's
//! per-evaluation cost is comparable. Figures are in docs/benchmarks.md.

use criterion::{Criterion, criterion_group, criterion_main};
use fabricopt::search::SearchProblem;
use fabricopt::search::config::ExanestSearch;
use fabricopt::search::problems::exanest::ExanestProblem;
use fabricopt::topology::generators::exanest_symmetry;
use fabricopt::topology::metrics::bisection::partition;
use fabricopt::topology::metrics::summarize;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn bench_system(c: &mut Criterion, m: usize, p_ext: f64) {
    let params = ExanestSearch {
        p_ext,
        ..ExanestSearch::default()
    };
    let problem = ExanestProblem::new(8, 16, m, &params, 1).expect("valid");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let genomes: Vec<Vec<usize>> = (0..20).map(|_| problem.random_genome(&mut rng)).collect();
    let graphs: Vec<_> = genomes.iter().map(|g| problem.graph(g)).collect();
    // Mixed genomes on M > 1 keep only the cabinet shift; this is the symmetry evaluation uses.
    let sym = exanest_symmetry(16, m, true, m > 1 && p_ext > 0.0);
    let mut group = c.benchmark_group(format!("exanest-8-16-{m} (20 genomes)"));
    group.sample_size(10);
    group.bench_function("evaluate", |b| {
        b.iter(|| {
            genomes
                .iter()
                .map(|g| problem.evaluate(g))
                .collect::<Vec<_>>()
        })
    });
    group.bench_function("decode+graph", |b| {
        b.iter(|| genomes.iter().map(|g| problem.graph(g)).collect::<Vec<_>>())
    });
    group.bench_function("distances+path_diversity", |b| {
        b.iter(|| {
            graphs
                .iter()
                .map(|g| summarize(g, Some(&sym), true, &|| {}))
                .collect::<Vec<_>>()
        })
    });
    group.bench_function("bisection (FM, 4 restarts)", |b| {
        b.iter(|| {
            graphs
                .iter()
                .map(|g| partition(g, Some(&sym), 4, 1))
                .collect::<Vec<_>>()
        })
    });
    group.finish();
}

fn exanest_evaluation(c: &mut Criterion) {
    bench_system(c, 1, 0.0);
    bench_system(c, 4, 0.5);
}

criterion_group!(benches, exanest_evaluation);
criterion_main!(benches);
