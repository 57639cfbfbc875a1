//! `fabricopt topo`: build a topology, print its metrics or export it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::export::topology::{TopologyFormat, write_topology};
use crate::problem_file::LoadedProblem;
use crate::topology::metrics::{self, MetricsOptions, TopologyMetrics};
use crate::topology::{Topology, TopologyConfig, import};

#[derive(Args, Debug)]
pub struct TopoArgs {
    /// A spec (`mesh:8x8`, `torus:4x4x4,c=2`, `dragonfly:p=4`, `exanest:R=2,N=4,M=2,genome=5/17/8/22`,
    /// `jellyfish:routers=64,degree=6`, `hypercube:6`, `ring:8`, `complete:8`), a problem file
    /// (.toml) or a topology file (.json, .txt edge list, .anynet).
    pub topology: String,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write the topology in this format instead of printing metrics.
    #[arg(long, value_enum, requires = "output")]
    pub export: Option<ExportFormat>,
    /// Output file for --export.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Seed for random generators and the partitioner (overrides the problem file's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Ignore generator symmetry (slower; for cross-checking).
    #[arg(long)]
    pub no_symmetry: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ExportFormat {
    Json,
    Dot,
    Anynet,
}

pub(super) fn run(args: &TopoArgs) -> Result<()> {
    if let (Some(output), Some(_)) = (&args.output, args.export) {
        super::check_output_file("--output", output)?;
    }
    let (topo, mut opts) = load(&args.topology, args.seed)?;
    if let Some(format) = args.export {
        let output = args.output.as_deref().expect("clap requires --output");
        let format = match format {
            ExportFormat::Json => TopologyFormat::Json,
            ExportFormat::Dot => TopologyFormat::Dot,
            ExportFormat::Anynet => TopologyFormat::Anynet,
        };
        for warning in write_topology(&topo, format, output)? {
            eprintln!("warning: {warning}");
        }
        eprintln!("wrote {}", output.display());
        return Ok(());
    }
    if args.output.is_some() {
        bail!("--output: only used with --export");
    }
    opts.use_symmetry &= !args.no_symmetry;
    let graph_components = topo.router_graph().components();
    if graph_components.len() > 1 {
        bail!(
            "{}: the router graph is disconnected ({} components; router {} cannot reach router {})",
            topo.name,
            graph_components.len(),
            graph_components[1][0],
            graph_components[0][0]
        );
    }
    let bar = progress_bar(&topo, &opts);
    let (m, timings) = metrics::compute(&topo, &opts, &|| bar.inc(1));
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &m)?;
        writeln!(out)?;
    } else {
        print_table(&mut out, &m, &timings)?;
    }
    Ok(())
}

/// Builds the topology from a spec, problem file or topology file.
pub(super) fn load(arg: &str, seed: Option<u64>) -> Result<(Topology, MetricsOptions)> {
    let path = Path::new(arg);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let looks_like_file =
        path.exists() || ["toml", "json", "txt", "edges", "anynet"].contains(&ext);
    if looks_like_file && ext == "toml" {
        let mut loaded = LoadedProblem::read(path)?;
        if let Some(seed) = seed {
            loaded.problem.seed = seed;
        }
        let topo = loaded.build_topology()?;
        let opts = loaded.metrics_options()?;
        return Ok((topo, opts));
    }
    let mut opts = MetricsOptions::default();
    opts.bisection.seed = seed.unwrap_or(opts.bisection.seed);
    if looks_like_file {
        return Ok((import::read_topology_file(path)?, opts));
    }
    let config = TopologyConfig::parse_spec(arg).with_context(|| format!("spec `{arg}`"))?;
    let topo = config
        .build(Path::new("."), seed.unwrap_or(1))
        .with_context(|| format!("spec `{arg}`"))?;
    Ok((topo, opts))
}

fn progress_bar(topo: &Topology, opts: &MetricsOptions) -> ProgressBar {
    let sources = match (&topo.symmetry, opts.use_symmetry) {
        (Some(s), true) => s.representatives().len(),
        _ => topo.num_routers(),
    };
    let bar = ProgressBar::new(sources as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} sources, {eta} left")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_message("distances and path diversity");
    bar
}

fn print_table(
    out: &mut impl Write,
    m: &TopologyMetrics,
    t: &metrics::MetricTimings,
) -> std::io::Result<()> {
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    writeln!(out, "{}", m.name)?;
    let rows: Vec<(&str, String)> = vec![
        ("routers", m.routers.to_string()),
        ("terminals", m.terminals.to_string()),
        (
            "links (router-router)",
            format!(
                "{}  (local {}, global {}; terminal links {})",
                m.links, m.links_by_kind.local, m.links_by_kind.global, m.links_by_kind.terminal
            ),
        ),
        (
            "network degree",
            format!(
                "min {}, max {}, mean {:.3}",
                m.degree.min, m.degree.max, m.degree.mean
            ),
        ),
        (
            "connected",
            format!("{} ({} component(s))", m.connected, m.components),
        ),
        ("edge connectivity", opt(m.edge_connectivity.map(u64::from))),
        ("diameter", opt(m.diameter.map(u64::from))),
        ("average distance", format!("{:.4}", m.avg_distance)),
        (
            "bisection width",
            format!(
                "lower {}, upper {}, exact {}",
                m.bisection.lower,
                m.bisection.upper,
                opt(m.bisection.exact)
            ),
        ),
        (
            "path diversity",
            format!(
                "{:.4} edge-disjoint shortest paths, {:.4} shortest paths per pair",
                m.path_diversity.disjoint_shortest, m.path_diversity.shortest_paths
            ),
        ),
        (
            "symmetry",
            if m.symmetry.used {
                format!(
                    "used ({} BFS sources instead of {})",
                    m.symmetry.sources, m.routers
                )
            } else {
                "none used".to_string()
            },
        ),
        (
            "time",
            format!(
                "distances+diversity {:.3} s, bisection {:.3} s, connectivity {:.3} s",
                t.distances.as_secs_f64(),
                t.bisection.as_secs_f64(),
                t.connectivity.as_secs_f64()
            ),
        ),
    ];
    for (k, v) in rows {
        writeln!(out, "  {k:<22} {v}")?;
    }
    Ok(())
}
