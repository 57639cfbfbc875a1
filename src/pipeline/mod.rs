//! The experiments behind the commands, as library functions: each takes the loaded problem
//! file and an options struct (what the command line sets), runs the experiment and returns a
//! typed report (`Serialize`; the `--json` output of its command, described in
//! docs/formats.md, "Command outputs"). The command line only parses arguments, calls them and
//! prints; progress is reported through an observer trait or the search's own progress bar.
//!
//! - [`simulate`]: a sweep of offered loads, or the comparison of routings, with the routing
//!   bound, the saturation summary and the plots.
//! - [`search`]: search runs and their post-processing (fronts, hypervolume medians, plots,
//!   and for ExaNeSt the Table II report, the bisection check and the Jellyfish comparison).
//! - [`evolve`]: routing-table evolution, the elite's simulation, bounds and exports
//!   (`fabric_files`: the LMC, SL and QoS files that load a table into a fabric).

pub mod evolve;
mod fabric_files;
pub mod search;
pub mod simulate;

use std::path::Path;

/// Checks an output file option before the work that produces it (`--plot FILE`, ...).
pub(crate) fn check_output_file(option: &str, path: &Path) -> anyhow::Result<()> {
    crate::files::check_writable(path).map_err(|e| anyhow::anyhow!("{option}: {e}"))
}

/// Checks an output folder option (`--out DIR`, created when missing) before the work.
pub(crate) fn check_output_dir(option: &str, dir: &Path) -> anyhow::Result<()> {
    crate::files::check_dir_writable(dir).map_err(|e| anyhow::anyhow!("{option}: {e}"))
}
