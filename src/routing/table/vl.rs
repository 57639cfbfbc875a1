//! Virtual lanes for a routing table loaded into a real fabric: a per-pair service level (SL,
//! mapped one-to-one to a VL) under which every VL's channel dependencies are acyclic, the
//! file that carries it, and the check a table must pass before it is loaded (delivery,
//! loop-freedom, deadlock freedom per VL). See docs/routing-tables.md, "Loading a table".

use std::path::Path;

use serde::Serialize;

use super::deps::{layer_assignment, table_dependency_cycle};
use super::io::{pair_values_string, parse_pair_values};
use super::{RoutingTable, pair_of};
use crate::error::Result;
use crate::topology::Topology;

/// InfiniBand has at most 15 data VLs (VL15 is for management), and SLs are 0..=15.
pub const MAX_VLS: usize = 15;

/// The service level of every pair (`pair_index` order) and how many VLs they use.
#[derive(Clone, Debug, PartialEq)]
pub struct VlAssignment {
    pub sl: Vec<u8>,
    pub num_vls: usize,
}

/// A deadlock-free VL assignment of whole paths with as few VLs as the greedy layering finds
/// (LASH-style: each VL's dependency graph acyclic), or None if `max_vls` are not enough
/// (including a path whose own dependencies form a cycle).
pub fn assign_vls(topo: &Topology, table: &RoutingTable, max_vls: usize) -> Option<VlAssignment> {
    let sl = layer_assignment(topo, table, max_vls)?;
    let num_vls = vls_used(&sl);
    Some(VlAssignment { sl, num_vls })
}

/// VLs a per-pair SL list uses (SLs are VLs, from 0).
fn vls_used(sl: &[u8]) -> usize {
    sl.iter().map(|&l| usize::from(l) + 1).max().unwrap_or(1)
}

/// What `routes check` found.
#[derive(Clone, Debug, Serialize)]
pub struct TableCheck {
    /// Every pair's path is a path of the topology from its source to its destination
    /// (otherwise the first error).
    pub delivers: bool,
    pub delivery_error: Option<String>,
    /// Pairs whose path visits a router twice (at most 10 listed), and how many there are.
    pub revisiting_pairs: Vec<(usize, usize)>,
    pub revisiting_count: usize,
    /// VLs used (1 without an SL assignment), and the first VL whose dependencies have a
    /// cycle with the channels of that cycle (None: deadlock-free on every VL).
    pub num_vls: usize,
    pub deadlock: Option<VlCycle>,
}

#[derive(Clone, Debug, Serialize)]
pub struct VlCycle {
    pub vl: usize,
    pub channels: Vec<usize>,
}

impl TableCheck {
    pub fn passed(&self) -> bool {
        self.delivers && self.revisiting_count == 0 && self.deadlock.is_none()
    }
}

/// Checks `table` on `topo` with the per-pair SLs `sl` (all on one VL when None).
pub fn check_table(topo: &Topology, table: &RoutingTable, sl: Option<&[u8]>) -> TableCheck {
    let delivery_error = table.validate(topo).err().map(|e| e.to_string());
    let n = table.num_routers;
    let mut revisiting_pairs = Vec::new();
    let mut revisiting_count = 0;
    let mut cycle = None;
    let mut num_vls = 1;
    if delivery_error.is_none() {
        for (pair, p) in table.paths().enumerate() {
            if p.revisits() {
                revisiting_count += 1;
                if revisiting_pairs.len() < 10 {
                    revisiting_pairs.push(pair_of(n, pair));
                }
            }
        }
        num_vls = sl.map_or(1, vls_used);
        // One dependency graph over (channel, VL): a cycle lies within one VL, since a path
        // keeps its VL.
        cycle =
            table_dependency_cycle(topo, table, &|pair, _| sl.map_or(0, |s| s[pair])).map(|c| {
                VlCycle {
                    vl: usize::from(c[0].vc),
                    channels: c.iter().map(|v| v.channel).collect(),
                }
            });
    }
    TableCheck {
        delivers: delivery_error.is_none(),
        delivery_error,
        revisiting_pairs,
        revisiting_count,
        num_vls,
        deadlock: cycle,
    }
}

/// The SL file: one line `source_router destination_router sl` per pair, after `#` comments.
pub fn to_sl_string(table: &RoutingTable, vls: &VlAssignment) -> String {
    pair_values_string(
        &format!(
            "# fabricopt per-pair service levels: {} VLs, SL = VL, deadlock-free on each VL\n\
             # source_router destination_router sl\n",
            vls.num_vls
        ),
        table.num_routers,
        &vls.sl,
    )
}

/// Reads an SL file for `num_routers` routers; every pair must appear exactly once.
pub fn parse_sl(text: &str, path: &Path, num_routers: usize) -> Result<Vec<u8>> {
    parse_pair_values(text, path, num_routers, "sl", 16)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::routing::table::{RouterPath, pair_index};
    use crate::topology::LinkParams;
    use crate::topology::generators::cartesian;

    /// Every pair of a 4-router ring clockwise: one VL deadlocks, two do not.
    pub(crate) fn clockwise_ring() -> (Topology, RoutingTable) {
        let topo = cartesian(&[4], true, 1, &LinkParams::default()).unwrap();
        let n = 4;
        let mut paths = vec![None; n * (n - 1)];
        for s in 0..n {
            for d in (0..n).filter(|&d| d != s) {
                let mut p = RouterPath {
                    routers: vec![s as u32],
                    ports: Vec::new(),
                };
                let mut r = s;
                while r != d {
                    // Port 2 goes +1 in dimension 0 (generator numbering, one terminal).
                    p.ports.push(2);
                    r = (r + 1) % n;
                    p.routers.push(r as u32);
                }
                paths[pair_index(n, s, d)] = Some(p);
            }
        }
        let table =
            RoutingTable::from_paths(n, paths.into_iter().map(Option::unwrap).collect()).unwrap();
        table.validate(&topo).unwrap();
        (topo, table)
    }

    #[test]
    fn a_cyclic_table_gets_two_vls_that_check_clean_and_round_trip() {
        let (topo, table) = clockwise_ring();
        let alone = check_table(&topo, &table, None);
        assert!(alone.delivers && alone.revisiting_count == 0);
        assert_eq!(alone.deadlock.as_ref().map(|c| c.vl), Some(0));
        assert!(!alone.passed());
        let vls = assign_vls(&topo, &table, MAX_VLS).unwrap();
        assert_eq!(vls.num_vls, 2);
        let checked = check_table(&topo, &table, Some(&vls.sl));
        assert!(checked.passed(), "{checked:?}");
        let text = to_sl_string(&table, &vls);
        let back = parse_sl(&text, Path::new("t.sl"), 4).unwrap();
        assert_eq!(back, vls.sl);
        // Everything on VL 1 deadlocks there.
        let all_one = vec![1u8; 12];
        assert_eq!(
            check_table(&topo, &table, Some(&all_one))
                .deadlock
                .map(|c| c.vl),
            Some(1)
        );
    }

    #[test]
    fn bad_sl_files_name_the_line() {
        let p = Path::new("x.sl");
        let e = parse_sl("0 1 0\n0 1 1\n", p, 2).unwrap_err().to_string();
        assert!(
            e.contains("x.sl") && e.contains("line 2") && e.contains("twice"),
            "{e}"
        );
        let e = parse_sl("0 1 16\n", p, 2).unwrap_err().to_string();
        assert!(e.contains("sl `16`"), "{e}");
        let e = parse_sl("0 1 0\n", p, 2).unwrap_err().to_string();
        assert!(e.contains("1 -> 0 has no line"), "{e}");
        let e = parse_sl("0 1\n", p, 2).unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn revisits_are_reported() {
        let (topo, mut table) = clockwise_ring();
        // 0 -> 1 going round: 0 1 2 3 0 1.
        let i = pair_index(4, 0, 1);
        table.set_path(
            i,
            RouterPath {
                routers: vec![0, 1, 2, 3, 0, 1],
                ports: vec![2; 5],
            },
        );
        let c = check_table(&topo, &table, None);
        assert!(c.delivers);
        assert_eq!(c.revisiting_count, 1);
        assert_eq!(c.revisiting_pairs, vec![(0, 1)]);
        assert!(!c.passed());
    }
}
