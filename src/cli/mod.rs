//! The `fabricopt` command line.

pub mod bench;
mod hypervolume;
pub mod routes;
mod routes_evolve;
pub mod search;
mod search_exanest;
pub mod simulate;
mod topo;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "fabricopt",
    version,
    about = "Designs HPC interconnects: topologies, routing and a flit-level simulator"
)]
pub(crate) struct Cli {
    /// Run as one rank of an MPI job (also detected when started by mpiexec or srun); needs a
    /// build with `--features mpi` (docs/scale-out.md).
    #[arg(long, global = true)]
    pub mpi: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build a topology and print its metrics, or export it.
    Topo(topo::TopoArgs),
    /// Simulate a problem file: latency and throughput per offered load.
    Simulate(simulate::SimulateArgs),
    /// Run the standard simulator speed cases and print simulated cycles/s.
    Bench(bench::BenchArgs),
    /// Exact hypervolume (minimisation) of a CSV point set, and each point's contribution.
    Hypervolume(hypervolume::HypervolumeArgs),
    /// Multi-objective search (NSGA-II, SMS-EMOA) on a problem file's [search] table.
    Search(search::SearchArgs),
    /// Routing tables: export them for other tools.
    Routes(routes::RoutesArgs),
}

/// Runs the CLI; errors are printed as one line and give a non-zero exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Kept to the end of main: dropping it finalises MPI.
    let _job = match crate::cluster::start(cli.mpi) {
        Ok(job) => job,
        Err(e) => {
            eprintln!("error: {}", one_line(&format!("{e:#}")));
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        Command::Topo(args) => topo::run(&args),
        Command::Simulate(args) => simulate::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Hypervolume(args) => hypervolume::run(&args),
        Command::Search(args) => search::run(&args),
        Command::Routes(args) => routes::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our standard output went away (`fabricopt topo ... | head -1`): stop
        // quietly and successfully, as ripgrep does, so that `set -o pipefail` scripts do not
        // fail because a reader had enough (docs/reliability.md, "Exit codes").
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let message = one_line(&format!("{e:#}"));
            eprintln!("error: {message}");
            // Under MPI with several ranks: ends the whole job (the others would wait).
            crate::cluster::fail(&message);
            ExitCode::FAILURE
        }
    }
}

/// Whether the error comes from writing to a closed pipe (directly, or inside serde_json).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        let kind = cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| {
                cause
                    .downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
            });
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}

pub(crate) use crate::pipeline::check_output_file;

/// Prints a report as pretty JSON with its keys in alphabetical order (through
/// `serde_json::Value`), as the commands whose reports were built as JSON maps always did.
pub(crate) fn print_json_sorted<T: serde::Serialize>(report: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &serde_json::to_value(report)?)?;
    writeln!(out)?;
    Ok(())
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
