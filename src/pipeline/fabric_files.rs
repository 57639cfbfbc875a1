//! The files that load an evolved table into an InfiniBand fabric, written beside `best.json`
//! by `routes evolve` (docs/routing-tables.md, "Loading a table into a fabric"): the LMC
//! forwarding tables and LID offsets, the per-pair SLs and OpenSM's QoS policy. Each is
//! checked the way `routes check` would before it is written, and a file an earlier run left
//! that this run does not write is removed.

use std::path::Path;

use anyhow::{Result, bail};
use serde::Serialize;

use crate::export::lmc::to_lmc_lft_string;
use crate::export::qos::to_qos_policy_string;
use crate::files::write_atomically;
use crate::routing::table::RoutingTable;
use crate::routing::table::io::parse_lft;
use crate::routing::table::lmc::{LmcAssignment, check_lmc_files, to_lid_string};
use crate::routing::table::vl::{VlAssignment, check_table, to_sl_string};
use crate::topology::Topology;

/// The LMC part of [`EvolveReport`].
#[derive(Clone, Debug, Serialize)]
pub struct LmcReport {
    pub lmc: u8,
    /// Most destination trees (LIDs per port) any destination uses.
    pub layers_used: usize,
    /// Pairs whose evolved path did not fit and was rerouted along a tree.
    pub rerouted_pairs: usize,
    /// The aggregated max channel load before the constraint.
    pub unconstrained_max_channel_load: f64,
}

/// `best.lmc.lft` and `best.lid` for `lmc` = (assignment, rerouted pairs, unconstrained
/// load), checked by walking the written text back; without LMC, stale ones are removed.
pub(crate) fn write_lmc_files(
    topo: &Topology,
    table: &RoutingTable,
    lmc: Option<&(LmcAssignment, usize, f64)>,
    out_dir: &Path,
    written: &mut Vec<String>,
) -> crate::Result<Option<LmcReport>> {
    let lft_file = out_dir.join("best.lmc.lft");
    let lid_file = out_dir.join("best.lid");
    let Some((asg, rerouted, unconstrained)) = lmc else {
        remove_stale(&[&lft_file, &lid_file])?;
        return Ok(None);
    };
    let lft = to_lmc_lft_string(topo, asg)?;
    let parsed = parse_lft(&lft, &lft_file)?;
    check_lmc_files(topo, table, &parsed, &lft_file, &asg.offset, asg.lmc).map_err(|e| {
        crate::Error::field(
            "lmc",
            format!("internal error: the LMC files fail their check: {e}"),
        )
    })?;
    write_atomically(&lft_file, lft.as_bytes())?;
    write_atomically(&lid_file, to_lid_string(asg).as_bytes())?;
    written.push(lft_file.display().to_string());
    written.push(lid_file.display().to_string());
    Ok(Some(LmcReport {
        lmc: asg.lmc,
        layers_used: asg.layers_used,
        rerouted_pairs: *rerouted,
        unconstrained_max_channel_load: *unconstrained,
    }))
}

/// `best.sl` and `best.qos-policy.conf` for a table that needs a VL assignment (checked
/// first); without one, stale ones are removed.
pub(crate) fn write_sl_files(
    topo: &Topology,
    table: &RoutingTable,
    vls: Option<&VlAssignment>,
    out_dir: &Path,
    written: &mut Vec<String>,
) -> Result<()> {
    let sl_file = out_dir.join("best.sl");
    let qos_file = out_dir.join("best.qos-policy.conf");
    let Some(vls) = vls else {
        remove_stale(&[&sl_file, &qos_file])?;
        return Ok(());
    };
    let check = check_table(topo, table, Some(&vls.sl));
    if !check.passed() {
        bail!("internal error: the VL assignment of the evolved table fails its check: {check:?}");
    }
    write_atomically(&sl_file, to_sl_string(table, vls).as_bytes())?;
    written.push(sl_file.display().to_string());
    write_atomically(&qos_file, to_qos_policy_string(topo, table, vls).as_bytes())?;
    written.push(qos_file.display().to_string());
    Ok(())
}

/// Removes files of an earlier run in the output folder that this run does not write: they
/// must not be loaded with this table.
fn remove_stale(files: &[&Path]) -> crate::Result<()> {
    for f in files.iter().filter(|f| f.exists()) {
        std::fs::remove_file(f).map_err(|e| crate::Error::io(f, e))?;
    }
    Ok(())
}
