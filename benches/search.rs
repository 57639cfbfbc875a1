//! One whole NSGA-II run on ZDT1 (population 100, 25,000 evaluations, 30 variables, no
//! checkpoints): the engine's overhead per generation. Figures in the search report.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use fabricopt::problem_file::LoadedProblem;
use fabricopt::search::problems::benchmarks::RealProblem;
use fabricopt::search::{AlgorithmName, RunSettings, Termination, run};

fn nsga2_zdt1(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/zdt1.toml");
    let loaded = LoadedProblem::read(&path).expect("bundled problem");
    let config = loaded.problem.search.clone().expect("[search]");
    let problem = RealProblem::from_config(&config).expect("valid");
    let settings = RunSettings {
        algorithm: AlgorithmName::Nsga2,
        population: config.population,
        termination: Termination::Evaluations(config.evaluation_budget()),
        seed: 1,
        reference_point: vec![1.1, 1.1],
        checkpoint_dir: None,
        resume: false,
        force: false,
        config: serde_json::Value::Null,
        progress: false,
        label: "bench".into(),
        archive_limit: Some(config.population),
        ga: Default::default(),
    };
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    group.bench_function("nsga2_zdt1_25000", |b| {
        b.iter(|| run(&problem, &settings).expect("runs").hypervolume)
    });
    group.finish();
}

criterion_group!(benches, nsga2_zdt1);
criterion_main!(benches);
