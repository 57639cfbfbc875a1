//! Routing-table construction at the sizes the routing-tables issue names: candidate paths for
//! the 4x4x4 mesh and the 264-router dragonfly, DFSSSP on that dragonfly with the check that
//! its channel-dependency graph is acyclic, and the dependency checker on a million
//! dependencies. Figures are in docs/benchmarks.md ("Routing tables and bounds").

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use fabricopt::routing::deadlock::{VirtualChannel, check_paths};
use fabricopt::routing::layered::Dfsssp;
use fabricopt::routing::paths::all_pairs_dependencies;
use fabricopt::routing::table::candidates::{CandidateOptions, generate_candidates};
use fabricopt::topology::{Topology, TopologyConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DRAGONFLY_264: &str = "dragonfly:p=4,a=8,h=4,g=33,arrangement=absolute";

fn topology(spec: &str) -> Topology {
    TopologyConfig::parse_spec(spec)
        .expect("valid spec")
        .build(Path::new("."), 1)
        .expect("builds")
}

fn candidates(c: &mut Criterion) {
    let mut group = c.benchmark_group("candidates");
    group.sample_size(10);
    for (label, spec) in [
        ("mesh-4x4x4", "mesh:4x4x4"),
        ("dragonfly-264", DRAGONFLY_264),
    ] {
        let topo = topology(spec);
        group.bench_function(label, |b| {
            b.iter(|| generate_candidates(&topo, &CandidateOptions::default()).unwrap())
        });
    }
    group.finish();
}

fn dfsssp(c: &mut Criterion) {
    let topo = topology(DRAGONFLY_264);
    let mut group = c.benchmark_group("dfsssp-dragonfly-264");
    group.sample_size(10);
    // 2 VCs: the layers are rebalanced when DFSSSP needs two.
    group.bench_function("build", |b| b.iter(|| Dfsssp::new(&topo, 2).unwrap()));
    let routing = Dfsssp::new(&topo, 2).unwrap();
    group.bench_function("walk_all_pairs+check_acyclic", |b| {
        b.iter(|| {
            let graph =
                all_pairs_dependencies(&routing, &topo, routing.num_layers(), 20, false).unwrap();
            assert!(graph.is_acyclic());
        })
    });
    group.finish();
}

/// `edges` two-VC paths that only ever go from a lower to a higher VC number: acyclic.
fn random_acyclic(edges: usize, seed: u64) -> Vec<Vec<VirtualChannel>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nodes = edges / 8;
    let vc = |n: usize| VirtualChannel::new(n / 4, (n % 4) as u8);
    (0..edges)
        .map(|_| {
            let a = rng.random_range(0..nodes - 1);
            let b = rng.random_range(a + 1..nodes);
            vec![vc(a), vc(b)]
        })
        .collect()
}

fn dependency_check(c: &mut Criterion) {
    let paths = random_acyclic(1_000_000, 11);
    let mut group = c.benchmark_group("check_paths");
    group.sample_size(10);
    group.bench_function("1e6-dependencies", |b| {
        b.iter(|| assert_eq!(check_paths(paths.iter().cloned()), Ok(())))
    });
    group.finish();
}

criterion_group!(benches, candidates, dfsssp, dependency_check);
criterion_main!(benches);
