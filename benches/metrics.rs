//! Topology metrics on the systems the foundation issue names: the 1,056-node dragonfly
//! (264 routers), a 128-router ExaNeSt system and the 8,192-router ExaNeSt system. Figures and
//! the machine they were measured on are in docs/benchmarks.md.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use fabricopt::problem_file::LoadedProblem;
use fabricopt::topology::metrics::{self, MetricsOptions, bisection, edge_connectivity, summarize};
use fabricopt::topology::{Topology, TopologyConfig};

fn load(name: &str) -> (Topology, MetricsOptions) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(name);
    let p = LoadedProblem::read(&path).expect("bundled problem");
    (
        p.build_topology().expect("builds"),
        p.metrics_options().expect("valid"),
    )
}

fn per_metric(c: &mut Criterion, label: &str, file: &str) {
    let (topo, opts) = load(file);
    let graph = topo.router_graph();
    let sym = topo
        .symmetry
        .as_ref()
        .filter(|s| s.is_automorphism_of(&graph));
    let mut group = c.benchmark_group(label);
    group.sample_size(10);
    group.bench_function("distances+path_diversity", |b| {
        b.iter(|| summarize(&graph, sym, true, &|| {}))
    });
    group.bench_function("bisection", |b| {
        b.iter(|| bisection(&graph, sym, &opts.bisection))
    });
    group.bench_function("edge_connectivity", |b| {
        b.iter(|| edge_connectivity(&graph))
    });
    group.bench_function("all_metrics", |b| {
        b.iter(|| metrics::compute(&topo, &opts, &|| {}))
    });
    group.finish();
}

fn dragonfly_1056(c: &mut Criterion) {
    per_metric(c, "dragonfly-1056", "dragonfly-1056.toml");
}

fn exanest_128(c: &mut Criterion) {
    per_metric(c, "exanest-128", "exanest-128.toml");
}

fn exanest_8192(c: &mut Criterion) {
    let (topo, _) = load("exanest-8192.toml");
    let graph = topo.router_graph();
    let sym = topo
        .symmetry
        .as_ref()
        .filter(|s| s.is_automorphism_of(&graph));
    assert!(sym.is_some(), "the cabinet-shift symmetry must verify");
    let mut group = c.benchmark_group("exanest-8192");
    group.sample_size(10);
    group.bench_function("build+verify_symmetry", |b| {
        b.iter(|| {
            let t = load("exanest-8192.toml").0;
            let g = t.router_graph();
            t.symmetry.as_ref().unwrap().is_automorphism_of(&g)
        })
    });
    group.bench_function("distances+path_diversity", |b| {
        b.iter(|| summarize(&graph, sym, true, &|| {}))
    });
    group.finish();
}

/// Bisection alone on the graphs that show how it scales: random regular graphs (no symmetry
/// to use) from 264 to 8,192 routers, and a 32x16x16 torus whose symmetry it uses.
fn bisection_scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("bisection");
    group.sample_size(10);
    for (label, spec) in [
        ("jellyfish-264-15", "jellyfish:routers=264,degree=15,seed=3"),
        ("torus-32x16x16", "torus:32x16x16"),
        ("jellyfish-8192-8", "jellyfish:routers=8192,degree=8,seed=4"),
        (
            "jellyfish-8192-16",
            "jellyfish:routers=8192,degree=16,seed=5",
        ),
    ] {
        let topo = TopologyConfig::parse_spec(spec)
            .expect("valid spec")
            .build(Path::new("."), 1)
            .expect("builds");
        let graph = topo.router_graph();
        let sym = topo
            .symmetry
            .as_ref()
            .filter(|s| s.is_automorphism_of(&graph));
        let opts = MetricsOptions::default();
        group.bench_function(label, |b| {
            b.iter(|| bisection(&graph, sym, &opts.bisection))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    dragonfly_1056,
    exanest_128,
    exanest_8192,
    bisection_scaling
);
criterion_main!(benches);
