//! `fabricopt routes`: routing tables. `routes export` writes a problem's table (read from a
//! routes JSON file or walked from a deterministic routing function) in one of the formats of
//! `export::routes`. New subcommands (e.g. `routes evolve`) go into [`RoutesCommand`].

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};

use crate::export::lmc::to_lmc_lft_string;
use crate::export::routes::{
    DETERMINISTIC_ALGORITHMS, RoutesFormat, table_from_routing, to_format_string, walked_metadata,
    write_routes,
};
use crate::files::write_atomically;
use crate::problem_file::LoadedProblem;
use crate::registry::routing::build_routing;
use crate::routing::table::io::{parse_lft, read_json};
use crate::routing::table::lmc::{
    MAX_LMC, check_lmc_files, pack, parse_lid_offsets, to_lid_string,
};
use crate::routing::table::vl::{check_table, parse_sl};
use crate::routing::table::{PathOrigin, RoutingTable};
use crate::topology::Topology;

#[derive(Args, Debug)]
pub struct RoutesArgs {
    #[command(subcommand)]
    pub command: RoutesCommand,
}

#[derive(Subcommand, Debug)]
pub enum RoutesCommand {
    /// Write a routing table as JSON, a per-router CSV, a path list or InfiniBand LFTs.
    Export(ExportArgs),
    /// Evolve a routing table for the problem's traffic (GA), simulate it, compare it with
    /// DOR and the LP bounds, and export it.
    Evolve(super::routes_evolve::EvolveArgs),
    /// Check a table before loading it into a fabric: every pair delivered, no path revisiting
    /// a router, and no cyclic channel dependency on any VL (with `--sl`, per-pair SLs = VLs;
    /// otherwise everything on one VL). Exits non-zero if any check fails.
    Check(CheckArgs),
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The problem file (.toml) whose topology the table routes.
    pub problem: PathBuf,
    /// The routes JSON file (e.g. `best.json` of `routes evolve`).
    pub table: PathBuf,
    /// The per-pair service-level file (`best.sl` of `routes evolve`).
    #[arg(long)]
    pub sl: Option<PathBuf>,
    /// InfiniBand LFTs to check against the table: walking them from every source router
    /// must give the table's path (with `--lids`, the LMC LFTs, walked at each pair's LID).
    #[arg(long)]
    pub lft: Option<PathBuf>,
    /// The source-to-LID offset file (`best.lid`) of LMC LFTs given with `--lft`.
    #[arg(long, requires_all = ["lft", "lmc"])]
    pub lids: Option<PathBuf>,
    /// The LMC of `--lft` and `--lids`.
    #[arg(long, requires = "lids")]
    pub lmc: Option<u8>,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The problem file (.toml) whose topology the table routes.
    pub problem: PathBuf,
    /// A deterministic routing algorithm to walk (dor, min, dfsssp, updown); default: the
    /// problem's [routing] algorithm.
    #[arg(long, conflicts_with = "table")]
    pub routing: Option<String>,
    /// A routes JSON file to convert instead of walking a routing function.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Output file (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// With `--format lft`: LMC LFTs (2^LMC LIDs per channel adapter, one destination tree
    /// each) for a per-pair table, plus the source-to-LID offsets in the output file with the
    /// extension `.lid`. Refused if the table's paths towards some destination need more
    /// than 2^LMC trees (evolve it with `lmc` in `[evolve]` so that they fit).
    #[arg(long, requires = "output")]
    pub lmc: Option<u8>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Json,
    Csv,
    Paths,
    Lft,
}

pub fn run(args: &RoutesArgs) -> Result<()> {
    match &args.command {
        RoutesCommand::Export(a) => export(a),
        RoutesCommand::Evolve(a) => super::routes_evolve::run_evolve(a),
        RoutesCommand::Check(a) => check(a),
    }
}

fn check(args: &CheckArgs) -> Result<()> {
    let loaded = LoadedProblem::read(&args.problem)?;
    let topo = loaded.build_topology()?;
    let (table, _) = read_json(&args.table)?;
    if table.num_routers != topo.num_routers() {
        bail!(
            "{}: num_routers: {} but the topology of {} has {}",
            args.table.display(),
            table.num_routers,
            args.problem.display(),
            topo.num_routers()
        );
    }
    let sl = match &args.sl {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Some(parse_sl(&text, path, topo.num_routers())?)
        }
        None => None,
    };
    let report = check_table(&topo, &table, sl.as_deref());
    let lft = match &args.lft {
        Some(path) if report.delivers => Some(check_lft(&topo, &table, path, args)),
        _ => None,
    };
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        if let Some(lft) = &lft {
            value["lft"] = serde_json::json!({
                "file": args.lft.as_ref().map(|p| p.display().to_string()),
                "lmc": args.lmc,
                "matches_table": lft.is_ok(),
                "error": lft.as_ref().err().map(|e| format!("{e:#}")),
            });
        }
        super::print_json_sorted(&value)?;
    } else {
        let mut out = std::io::stdout().lock();
        match &report.delivery_error {
            None => writeln!(
                out,
                "delivery: every pair's path leads from its source to its destination"
            )?,
            Some(e) => writeln!(out, "delivery: FAILED: {e}")?,
        }
        if report.delivers {
            if report.revisiting_count == 0 {
                writeln!(out, "loop-free: no path revisits a router")?;
            } else {
                writeln!(
                    out,
                    "loop-free: FAILED: {} paths revisit a router (e.g. {:?})",
                    report.revisiting_count, report.revisiting_pairs
                )?;
            }
            match &report.deadlock {
                None => writeln!(
                    out,
                    "deadlock-free: no cyclic channel dependency on any of {} VL(s)",
                    report.num_vls
                )?,
                Some(c) => writeln!(
                    out,
                    "deadlock-free: FAILED: VL {} has a cyclic dependency through {} channels ({:?}...){}",
                    c.vl,
                    c.channels.len(),
                    c.channels.iter().take(8).collect::<Vec<_>>(),
                    if args.sl.is_none() {
                        "; `routes evolve` writes best.sl, a VL assignment that removes such cycles"
                    } else {
                        ""
                    }
                )?,
            }
        }
    }
    if !args.json {
        let mut out = std::io::stdout().lock();
        match (&lft, &args.lft) {
            (Some(Ok(())), Some(path)) => writeln!(
                out,
                "LFTs: walking {}{} from every source gives the table's paths",
                path.display(),
                if args.lids.is_some() {
                    " at each pair's LID"
                } else {
                    ""
                }
            )?,
            (Some(Err(e)), Some(_)) => writeln!(out, "LFTs: FAILED: {e:#}")?,
            _ => {}
        }
    }
    if !report.passed() || matches!(lft, Some(Err(_))) {
        bail!("{}: the table fails the checks above", args.table.display());
    }
    Ok(())
}

/// Walks the LFT file (LMC with `--lids`) and compares every pair with the table.
fn check_lft(topo: &Topology, table: &RoutingTable, path: &Path, args: &CheckArgs) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let lfts = parse_lft(&text, path)?;
    match (&args.lids, args.lmc) {
        (Some(lids), Some(lmc)) => {
            let text = std::fs::read_to_string(lids)
                .with_context(|| format!("reading {}", lids.display()))?;
            let offsets = parse_lid_offsets(&text, lids, topo.num_routers(), lmc)?;
            check_lmc_files(topo, table, &lfts, path, &offsets, lmc)?;
        }
        _ => {
            let walked = lfts.to_table(topo, path)?;
            if let Some(pair) =
                (0..table.num_pairs()).find(|&i| walked.pair_path(i) != table.pair_path(i))
            {
                let (s, d) = crate::routing::table::pair_of(topo.num_routers(), pair);
                bail!(
                    "{}: pair {s} -> {d}: the LFTs route it {:?}, the table {:?}",
                    path.display(),
                    walked.pair_path(pair).routers,
                    table.pair_path(pair).routers
                );
            }
        }
    }
    Ok(())
}

fn export(args: &ExportArgs) -> Result<()> {
    if let Some(output) = &args.output {
        super::check_output_file("--output", output)?;
    }
    let loaded = LoadedProblem::read(&args.problem)?;
    let topo = loaded.build_topology()?;
    let (table, meta) = match &args.table {
        Some(path) => {
            let (table, meta) = read_json(path)?;
            table
                .validate(&topo)
                .map_err(|e| e.in_file(path))
                .with_context(|| {
                    format!(
                        "the table does not fit the topology `{}` of {}",
                        topo.name,
                        args.problem.display()
                    )
                })?;
            if !meta.topology.is_empty() && meta.topology != topo.name {
                eprintln!(
                    "warning: {} was computed on topology `{}`, exporting it for `{}`",
                    path.display(),
                    meta.topology,
                    topo.name
                );
            }
            (table, meta)
        }
        None => walk(&loaded, &topo, args.routing.as_deref())?,
    };
    let format = match args.format {
        Format::Json => RoutesFormat::Json,
        Format::Csv => RoutesFormat::Csv,
        Format::Paths => RoutesFormat::Paths,
        Format::Lft => RoutesFormat::Lft,
    };
    // Refused before any warning: a table LMC cannot carry is not exported at all.
    let lmc = match args.lmc {
        Some(lmc) => {
            if !matches!(format, RoutesFormat::Lft) {
                bail!("--lmc: only with --format lft");
            }
            if lmc > MAX_LMC {
                bail!("--lmc: {lmc} is above InfiniBand's largest LMC, {MAX_LMC}");
            }
            let asg = pack(&topo, &table, lmc).with_context(|| {
                format!(
                    "--lmc {lmc}: the table cannot be carried by {} LIDs per port",
                    1 << lmc
                )
            })?;
            Some(asg)
        }
        None => None,
    };
    // Not silently: a table that deadlocks on one VL needs the VL assignment of `routes
    // evolve` (best.sl) or another deadlock-avoidance scheme in the fabric.
    if let Err(cycle) = crate::routing::table::deps::is_deadlock_free_single_vc(&topo, &table) {
        eprintln!(
            "warning: this table has a cyclic channel dependency on one VL (through {} \
             channels): load it only with a deadlock-free VL assignment (`routes check \
             --sl`)",
            cycle.len()
        );
    }
    if let Some(asg) = &lmc {
        let output = args.output.as_ref().expect("clap: --lmc requires --output");
        let lid_file = output.with_extension("lid");
        write_atomically(output, to_lmc_lft_string(&topo, asg)?.as_bytes())?;
        write_atomically(&lid_file, to_lid_string(asg).as_bytes())?;
        eprintln!(
            "wrote {} and {} (LMC {}: at most {} destination trees used per destination)",
            output.display(),
            lid_file.display(),
            asg.lmc,
            asg.layers_used
        );
        return Ok(());
    }
    match &args.output {
        Some(path) => {
            // Streamed: a large table's CSV or JSON is never held in memory whole.
            for w in write_routes(&topo, &table, &meta, format, path)? {
                eprintln!("warning: {w}");
            }
            eprintln!("wrote {}", path.display());
        }
        None => {
            let (text, warnings) = to_format_string(&topo, &table, &meta, format)?;
            for w in warnings {
                eprintln!("warning: {w}");
            }
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("writing to standard output")?;
        }
    }
    Ok(())
}

/// The table of the named (or the problem's) routing algorithm. Adaptive and randomised
/// algorithms are refused: the path of their first choice in an empty network is not what
/// packets take under load, so a table of it would misrepresent them.
fn walk(
    loaded: &LoadedProblem,
    topo: &Topology,
    algorithm: Option<&str>,
) -> Result<(RoutingTable, crate::routing::table::io::TableMetadata)> {
    let mut cfg = loaded.problem.routing.clone().unwrap_or_default();
    match algorithm {
        Some(a) => cfg.algorithm = a.to_string(),
        None if cfg.algorithm.is_empty() => bail!(
            "{}: no [routing] algorithm; pass --routing ALG or --table FILE.json",
            loaded.path.display()
        ),
        None => {}
    }
    if !DETERMINISTIC_ALGORITHMS.contains(&cfg.algorithm.as_str()) {
        bail!(
            "routing `{}` is adaptive or randomised, so no single table describes it; export one of {} or pass --table FILE.json",
            cfg.algorithm,
            DETERMINISTIC_ALGORITHMS.join(", ")
        );
    }
    // The walk runs with the VCs the simulator would give the routing function.
    let num_vcs = loaded
        .problem
        .simulation
        .resolve()
        .map_err(|e| e.in_file(&loaded.path))?
        .num_vcs;
    let routing = build_routing(&cfg, topo, num_vcs).map_err(|e| e.in_file(&loaded.path))?;
    let origin = if cfg.algorithm == "dor" {
        PathOrigin::Dor
    } else {
        PathOrigin::Classical
    };
    let (table, origins) = table_from_routing(routing.as_ref(), topo, num_vcs, origin)?;
    let mut meta = walked_metadata(topo, &cfg.algorithm, num_vcs);
    meta.metadata
        .insert("seed".into(), serde_json::Value::from(loaded.problem.seed));
    meta.origins = origins;
    Ok((table, meta))
}
