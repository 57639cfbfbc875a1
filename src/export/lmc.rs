//! InfiniBand LFTs with LMC: a per-pair table carried by `2^lmc` LIDs per channel adapter,
//! each LID forwarded along its own destination tree (`routing::table::lmc` builds the trees
//! and the source-to-LID offsets). docs/routing-tables.md, "LMC", says how to load them.

use std::fmt::Write as _;

use super::routes::{LidOwner, ib_port, one_line, write_switch_lft};
use crate::error::{Error, Result};
use crate::routing::table::io::{MAX_UNICAST_LID, switch_lid};
use crate::routing::table::lmc::{self, LmcAssignment};
use crate::topology::Topology;

/// InfiniBand LFTs for an LMC assignment, in the format of [`super::routes::to_lft_string`]: switch `r` has
/// LID `r + 1` (forwarded along layer 0 of its router); terminal `t` has the `2^lmc` LIDs from
/// [`lmc::ca_base_lid`], LID `base + l` forwarded along layer `l` of its router. LIDs between
/// the switches' and the first aligned base LID are unassigned and not listed.
pub(crate) fn to_lmc_lft_string(topo: &Topology, asg: &LmcAssignment) -> Result<String> {
    let n = topo.num_routers();
    let layers = asg.num_layers();
    let max_lid = lmc::ca_base_lid(n, asg.lmc, topo.num_terminals()) - 1;
    if max_lid > MAX_UNICAST_LID {
        return Err(Error::field(
            "lmc",
            format!(
                "{n} switches and {} channel adapters with {layers} LIDs each need LIDs up to \
                 {max_lid}; InfiniBand has {MAX_UNICAST_LID} unicast LIDs",
                topo.num_terminals()
            ),
        ));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# fabricopt linear forwarding tables with LMC {}: topology {}, {n} switches (LID = \
         router + 1), {} channel adapters (base LID = {} + {layers} * terminal, {layers} LIDs \
         each: LID base + l follows layer l), IB port = port + 1",
        asg.lmc,
        one_line(&topo.name),
        topo.num_terminals(),
        lmc::first_ca_lid(n, asg.lmc),
    );
    for r in 0..n {
        let mut lids = Vec::with_capacity(n + topo.num_terminals() * layers);
        for d in 0..n {
            let port = match asg.next_port(0, d, r) {
                None => 0,
                Some(p) => ib_port(r, p)?,
            };
            lids.push((switch_lid(d), port, LidOwner::Router(d)));
        }
        for (t, term) in topo.terminals.iter().enumerate() {
            let base = lmc::ca_base_lid(n, asg.lmc, t);
            for l in 0..layers {
                let port = if term.router == r {
                    ib_port(r, term.port)?
                } else {
                    let p = asg
                        .next_port(l, term.router, r)
                        .expect("complete layers have an entry off the destination");
                    ib_port(r, p)?
                };
                lids.push((base + l, port, LidOwner::Terminal(t)));
            }
        }
        write_switch_lft(&mut out, r, max_lid, &lids);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::export::routes::table_from_routing;
    use crate::registry::routing::build_routing;
    use crate::routing::RoutingConfig;
    use crate::routing::table::io::parse_lft;
    use crate::routing::table::lmc::{check_lmc_files, constrain, pack};
    use crate::routing::table::{PathOrigin, RouterPath, RoutingTable, pair_index, pair_of};
    use crate::topology::LinkParams;
    use crate::topology::generators::cartesian;
    use crate::topology::model::Endpoint;

    fn mesh() -> Topology {
        cartesian(&[4, 4], false, 1, &LinkParams::default()).unwrap()
    }

    fn dor(topo: &Topology) -> RoutingTable {
        let r = build_routing(&RoutingConfig::new("dor"), topo, 2).unwrap();
        table_from_routing(r.as_ref(), topo, 2, PathOrigin::Dor)
            .unwrap()
            .0
    }

    /// The path through `routers` (neighbours), with the ports that join them.
    fn through(topo: &Topology, routers: Vec<u32>) -> RouterPath {
        let ports = routers
            .windows(2)
            .map(|w| {
                (0..topo.routers[w[0] as usize].ports.len())
                    .find(|&p| {
                        matches!(topo.peer(w[0] as usize, p),
                            Some(Endpoint::Router { router, .. }) if router == w[1] as usize)
                    })
                    .unwrap() as u16
            })
            .collect();
        RouterPath { routers, ports }
    }

    /// DOR (x first) for pairs with `s + d` odd, y first (DOR's reverse path) for the others:
    /// two destination trees per destination.
    fn mixed(topo: &Topology) -> RoutingTable {
        let xy = dor(topo);
        let n = topo.num_routers();
        let paths = (0..xy.num_pairs())
            .map(|pair| {
                let (s, d) = pair_of(n, pair);
                if (s + d) % 2 == 1 {
                    xy.pair_path(pair).into_owned()
                } else {
                    let mut back = xy.path(d, s).routers.clone();
                    back.reverse();
                    through(topo, back)
                }
            })
            .collect();
        RoutingTable::from_paths(n, paths).unwrap()
    }

    fn round_trip(topo: &Topology, table: &RoutingTable, asg: &LmcAssignment) -> Result<()> {
        let text = to_lmc_lft_string(topo, asg)?;
        let lfts = parse_lft(&text, Path::new("t.lft"))?;
        check_lmc_files(topo, table, &lfts, Path::new("t.lft"), &asg.offset, asg.lmc)
    }

    #[test]
    fn a_pair_table_of_two_trees_per_destination_needs_lmc_1_and_the_lfts_carry_it() {
        let m = mesh();
        let table = mixed(&m);
        table.validate(&m).unwrap();
        let err = pack(&m, &table, 0).unwrap_err().to_string();
        assert!(err.contains("need more than 2^0 = 1"), "{err}");
        let asg = pack(&m, &table, 1).unwrap();
        assert_eq!(asg.layers_used, 2);
        round_trip(&m, &table, &asg).unwrap();
        // Base LIDs after the 16 switch LIDs, aligned to 2: 18, 20, ...
        assert_eq!(lmc::first_ca_lid(16, 1), 18);
        assert_eq!(lmc::ca_base_lid(16, 2, 3), 20 + 12);
        // The LFTs of DOR alone route none of the y-first pairs.
        let plain = pack(&m, &dor(&m), 1).unwrap();
        assert_eq!(plain.layers_used, 1);
        let err = round_trip(&m, &table, &plain).unwrap_err().to_string();
        assert!(err.contains("the LFTs at LID"), "{err}");
    }

    #[test]
    fn a_tampered_entry_is_caught_naming_the_pair_or_switch() {
        let m = mesh();
        let table = mixed(&m);
        let asg = pack(&m, &table, 1).unwrap();
        let text = to_lmc_lft_string(&m, &asg).unwrap();
        // Router 0's entry for the LID that pair 0 -> 15 uses (terminal 15's, plus its
        // offset): send it another way than along its tree.
        let dlid = lmc::ca_base_lid(16, 1, 15) + usize::from(asg.offset[pair_index(16, 0, 15)]);
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("0x{dlid:04x} ")))
            .unwrap()
            .to_string();
        let port: u8 = line[7..10].parse().unwrap();
        let other = if port == 2 { 1 } else { 2 };
        let changed = format!("{}{other:03}{}", &line[..7], &line[10..]);
        let tampered = text.replacen(&line, &changed, 1);
        let lfts = parse_lft(&tampered, Path::new("t.lft")).unwrap();
        let err = check_lmc_files(&m, &table, &lfts, Path::new("t.lft"), &asg.offset, 1)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("t.lft") || err.contains("pair 0 -> 15"),
            "{err}"
        );
    }

    #[test]
    fn constraining_to_fewer_trees_reroutes_along_them_and_stays_loop_free() {
        let m = mesh();
        let table = mixed(&m);
        let base = dor(&m);
        // LMC 0: only DOR's tree, so every y-first pair that differs becomes DOR.
        let (t0, asg0, rerouted0) = constrain(&m, &table, &base, 0).unwrap();
        assert_eq!(t0, base);
        let differs = (0..table.num_pairs())
            .filter(|&i| table.pair_path(i) != base.pair_path(i))
            .count();
        assert!(differs > 0);
        assert_eq!(rerouted0, differs);
        round_trip(&m, &t0, &asg0).unwrap();
        // LMC 1: both trees fit, nothing changes.
        let (t1, asg1, rerouted1) = constrain(&m, &table, &base, 1).unwrap();
        assert_eq!((t1 == table, rerouted1, asg1.layers_used), (true, 0, 2));
        round_trip(&m, &t1, &asg1).unwrap();
    }
}
