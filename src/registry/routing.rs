//! Every routing algorithm by name: `[routing] algorithm = "<name>"`. One entry per algorithm:
//! its name, the topologies it routes, one line of documentation, its parameter struct (read
//! when the problem file is read, so a misplaced key is an error before any work) and its
//! builder. Adding an algorithm is one file with its parameter struct and `build` function
//! plus one line here (docs/architecture.md).

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::learn::dqn_routing::{self, DqnParams};
use crate::learn::{self, QParams};
use crate::routing::cartesian::{self, CartesianParams, EscapeParams};
use crate::routing::dragonfly::{self, MinParams, UgalParams, ValiantParams};
use crate::routing::layered::{self, DfssspParams, UpDownParams};
use crate::routing::table::route::{self as table, TableParams};
use crate::routing::{RoutingConfig, RoutingFunction};
use crate::topology::Topology;

type Build = fn(&RoutingConfig, &Topology, usize) -> Result<Box<dyn RoutingFunction>>;

/// One routing algorithm.
pub struct RoutingEntry {
    pub name: &'static str,
    /// The topologies it routes (groups the names in error messages).
    pub topologies: &'static str,
    pub summary: &'static str,
    /// Reads the algorithm's parameter struct from the `[routing]` table.
    pub check: fn(&RoutingConfig) -> Result<()>,
    /// Builds it for a topology and a number of VCs per channel.
    pub build: Build,
}

const fn entry<P: DeserializeOwned>(
    name: &'static str,
    topologies: &'static str,
    summary: &'static str,
    build: Build,
) -> RoutingEntry {
    RoutingEntry {
        name,
        topologies,
        summary,
        check: check::<P>,
        build,
    }
}

fn check<P: DeserializeOwned>(cfg: &RoutingConfig) -> Result<()> {
    cfg.read_params::<P>().map(drop)
}

const MESH_TORUS: &str = "mesh/torus";
const DRAGONFLY: &str = "dragonfly";
const ANY: &str = "any topology";

#[rustfmt::skip]
pub(crate) const ROUTING: &[RoutingEntry] = &[
    entry::<CartesianParams>("dor", MESH_TORUS, "dimension-order routing, datelines on tori", cartesian::build),
    entry::<EscapeParams>("duato", MESH_TORUS, "minimal adaptive with a DOR escape network (Duato)", cartesian::build),
    entry::<EscapeParams>("star", MESH_TORUS, "Star-channel: minimal adaptive over DOR escape channels", cartesian::build),
    entry::<CartesianParams>("valiant", MESH_TORUS, "Valiant: DOR to a random router, then DOR on", cartesian::build),
    entry::<CartesianParams>("romm", MESH_TORUS, "ROMM: Valiant inside the minimal quadrant", cartesian::build),
    entry::<MinParams>("min", DRAGONFLY, "minimal: local, global, local hop", dragonfly::build),
    entry::<ValiantParams>("val_g", DRAGONFLY, "Valiant through a random intermediate group", dragonfly::build),
    entry::<ValiantParams>("val_n", DRAGONFLY, "Valiant through a random intermediate router", dragonfly::build),
    entry::<UgalParams>("ugal_g", DRAGONFLY, "UGAL at the source: minimal or the val_g route by queue costs", dragonfly::build),
    entry::<UgalParams>("ugal_n", DRAGONFLY, "UGAL at the source: minimal or the val_n route by queue costs", dragonfly::build),
    entry::<UgalParams>("par", DRAGONFLY, "progressive adaptive: ugal_n, re-decided once in the source group", dragonfly::build),
    entry::<UgalParams>("ugal_booksim", DRAGONFLY, "BookSim2's ugal_dragonflynew, for comparisons (not deadlock-free)", dragonfly::build),
    entry::<QParams>("q_adaptive", DRAGONFLY, "Q-adaptive: two-level Q-tables learned while running", learn::build),
    entry::<DfssspParams>("dfsssp", ANY, "shortest paths spread over deadlock-free VC layers (DFSSSP)", layered::build),
    entry::<UpDownParams>("updown", ANY, "up*/down* from a root router", layered::build),
    entry::<TableParams>("table", ANY, "a routing table file, with adaptive and escape VCs", table::build),
    entry::<QParams>("q_routing", ANY, "Q-routing: per-destination Q-tables learned while running", learn::build),
    entry::<DqnParams>("dqn", "2-D torus", "DQN-routing: a dueling double DQN agent per router", dqn_routing::build),
];

/// The entry of algorithm `name`.
pub fn find(name: &str) -> Option<&'static RoutingEntry> {
    ROUTING.iter().find(|e| e.name == name)
}

/// Every name, grouped by the topologies they route: `dor, duato (mesh/torus); min (dragonfly)`.
pub fn names() -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for e in ROUTING {
        match groups.iter_mut().find(|(t, _)| *t == e.topologies) {
            Some((_, names)) => names.push(e.name),
            None => groups.push((e.topologies, vec![e.name])),
        }
    }
    groups
        .iter()
        .map(|(t, names)| format!("{} ({t})", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

fn entry_of(cfg: &RoutingConfig) -> Result<&'static RoutingEntry> {
    find(&cfg.algorithm).ok_or_else(|| {
        Error::field(
            "routing.algorithm",
            format!(
                "unknown algorithm `{}` (expected one of: {})",
                cfg.algorithm,
                names()
            ),
        )
    })
}

/// Checks the algorithm's name and parameters without building it (when a problem file is
/// read; building needs the topology).
pub(crate) fn check_routing(cfg: &RoutingConfig) -> Result<()> {
    (entry_of(cfg)?.check)(cfg)
}

/// Builds the routing function named in `cfg` for `topo` with `num_vcs` VCs per channel.
pub fn build_routing(
    cfg: &RoutingConfig,
    topo: &Topology,
    num_vcs: usize,
) -> Result<Box<dyn RoutingFunction>> {
    let r = (entry_of(cfg)?.build)(cfg, topo, num_vcs)?;
    if r.min_vcs() > num_vcs {
        return Err(Error::field(
            "simulation.num_vcs",
            format!(
                "routing `{}` needs at least {} VCs per channel (got {num_vcs})",
                r.name(),
                r.min_vcs()
            ),
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_grouped() {
        let mut names: Vec<_> = ROUTING.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ROUTING.len());
        assert_eq!(
            super::names(),
            "dor, duato, star, valiant, romm (mesh/torus); min, val_g, val_n, ugal_g, ugal_n, \
             par, ugal_booksim, q_adaptive (dragonfly); dfsssp, updown, table, q_routing (any \
             topology); dqn (2-D torus)"
        );
    }

    #[test]
    fn every_builder_accepts_its_own_names() {
        // A registry line pointing at another family's builder fails here, not in a user's run.
        for e in ROUTING {
            let cfg = RoutingConfig::new(e.name);
            (e.check)(&cfg).unwrap();
            if let Err(err) = (e.build)(&cfg, &tiny(), 8) {
                assert!(
                    !err.to_string().contains(&format!("`{}` is not a", e.name)),
                    "{}: {err}",
                    e.name
                );
            }
        }
    }

    fn tiny() -> Topology {
        crate::topology::TopologyConfig::parse_spec("torus:4x4")
            .and_then(|c| c.build(std::path::Path::new("."), 1))
            .unwrap()
    }
}
