//! Topology metrics: sizes, distances, path diversity, bisection width and connectivity.

pub mod bisection;
pub mod connectivity;
pub mod distance;

use std::time::{Duration, Instant};

use serde::Serialize;

use super::model::{LinkKind, Topology};
pub use bisection::{Bisection, BisectionOptions, bisection};
pub use connectivity::{edge_connectivity, max_flow};
pub use distance::{disjoint_shortest_paths, distances_from, shortest_path_count, summarize};

#[derive(Clone, Debug, PartialEq)]
pub struct MetricsOptions {
    pub bisection: BisectionOptions,
    /// Compute the edge connectivity only up to this many routers (it costs one max-flow per
    /// router); above it the field is null.
    pub connectivity_max_routers: usize,
    /// Use the generator's symmetry (after verifying it) to run fewer BFS sources.
    pub use_symmetry: bool,
}

impl Default for MetricsOptions {
    fn default() -> Self {
        MetricsOptions {
            bisection: BisectionOptions::default(),
            connectivity_max_routers: 4096,
            use_symmetry: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkCounts {
    pub local: usize,
    pub global: usize,
    pub terminal: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DegreeStats {
    pub min: u32,
    pub max: u32,
    pub mean: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathDiversity {
    /// Average over ordered router pairs of the number of edge-disjoint shortest paths.
    pub disjoint_shortest: f64,
    /// Average over ordered router pairs of the number of shortest paths.
    pub shortest_paths: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SymmetryUse {
    /// Whether a generator-provided symmetry was verified and used.
    pub used: bool,
    /// BFS sources run for distances and path diversity.
    pub sources: usize,
}

/// Everything `fabricopt topo` reports; field names are the JSON keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopologyMetrics {
    pub name: String,
    pub routers: usize,
    pub terminals: usize,
    /// Router-to-router links (parallel links counted separately; terminal links excluded).
    pub links: usize,
    pub links_by_kind: LinkCounts,
    /// Network (router-to-router) links per router.
    pub degree: DegreeStats,
    pub connected: bool,
    pub components: usize,
    pub edge_connectivity: Option<u32>,
    pub diameter: Option<u32>,
    pub avg_distance: f64,
    pub bisection: Bisection,
    pub path_diversity: PathDiversity,
    pub symmetry: SymmetryUse,
}

/// Wall-clock time of each metric group, for the readable table and the benchmarks.
#[derive(Clone, Debug, Default)]
pub struct MetricTimings {
    pub distances: Duration,
    pub bisection: Duration,
    pub connectivity: Duration,
}

/// Computes every metric. `on_source` is called once per finished BFS source (progress).
pub fn compute(
    topo: &Topology,
    opts: &MetricsOptions,
    on_source: &(dyn Fn() + Sync),
) -> (TopologyMetrics, MetricTimings) {
    let graph = topo.router_graph();
    let symmetry = topo
        .symmetry
        .as_ref()
        .filter(|s| opts.use_symmetry && s.is_automorphism_of(&graph));
    let mut timings = MetricTimings::default();

    let start = Instant::now();
    let dist = summarize(&graph, symmetry, true, on_source);
    timings.distances = start.elapsed();

    let start = Instant::now();
    let bis = bisection(&graph, symmetry, &opts.bisection);
    timings.bisection = start.elapsed();

    let start = Instant::now();
    let components = graph.components().len();
    let edge_conn =
        (graph.num_nodes() <= opts.connectivity_max_routers).then(|| edge_connectivity(&graph));
    timings.connectivity = start.elapsed();

    let degrees: Vec<u32> = (0..graph.num_nodes()).map(|v| graph.degree(v)).collect();
    let metrics = TopologyMetrics {
        name: topo.name.clone(),
        routers: topo.num_routers(),
        terminals: topo.num_terminals(),
        links: topo.num_network_links(),
        links_by_kind: LinkCounts {
            local: topo.links_of_kind(LinkKind::Local),
            global: topo.links_of_kind(LinkKind::Global),
            terminal: topo.links_of_kind(LinkKind::Terminal),
        },
        degree: DegreeStats {
            min: degrees.iter().copied().min().unwrap_or(0),
            max: degrees.iter().copied().max().unwrap_or(0),
            mean: degrees.iter().map(|&d| f64::from(d)).sum::<f64>() / degrees.len().max(1) as f64,
        },
        connected: dist.connected,
        components,
        edge_connectivity: edge_conn,
        diameter: dist.diameter,
        avg_distance: dist.avg_distance,
        bisection: bis,
        path_diversity: PathDiversity {
            disjoint_shortest: dist.disjoint_shortest.unwrap_or(0.0),
            shortest_paths: dist.shortest_paths,
        },
        symmetry: SymmetryUse {
            used: symmetry.is_some(),
            sources: dist.sources,
        },
    };
    (metrics, timings)
}
