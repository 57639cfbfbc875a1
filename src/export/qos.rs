//! OpenSM's QoS policy file for a per-pair SL (= VL) assignment (`routing::table::vl`): what
//! makes the subnet manager answer each path query with the pair's SL. docs/routing-tables.md,
//! "Loading a table into a fabric", says how to load it.
//!
//! * one port group per router with terminals (`router-R`: its channel adapters' port GUIDs,
//!   fabricopt's synthetic ones, `CA_GUID_BASE + terminal`);
//! * one QoS level per SL (`DEFAULT` is SL 0, which OpenSM requires);
//! * one match rule per router pair with SL above 0: `source`, `destination`,
//!   `qos-level-name`. Pairs on SL 0 match no rule and get `DEFAULT`.
//!
//! SLs reach the VLs through the SL-to-VL tables, which the policy file does not set in
//! OpenSM: the header says to set the identity map (`qos_sl2vl`) in opensm.conf.

use std::fmt::Write as _;

use crate::routing::table::io::CA_GUID_BASE;
use crate::routing::table::vl::VlAssignment;
use crate::routing::table::{RoutingTable, pair_of};
use crate::topology::Topology;

/// The advanced QoS policy (port groups, levels, match rules) for `vls` on `table`'s pairs.
pub(crate) fn to_qos_policy_string(
    topo: &Topology,
    table: &RoutingTable,
    vls: &VlAssignment,
) -> String {
    let n = table.num_routers;
    let mut ports: Vec<Vec<u64>> = vec![Vec::new(); n];
    for (t, term) in topo.terminals.iter().enumerate() {
        ports[term.router].push(CA_GUID_BASE + t as u64);
    }
    let identity: Vec<String> = (0..16).map(|v| v.to_string()).collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "# fabricopt QoS policy for OpenSM: topology {}, per-pair SLs of {} VLs (SL = VL)\n\
         # opensm.conf: qos TRUE, qos_policy_file <this file>, and the identity SL-to-VL map\n\
         # on every port: qos_sl2vl {}\n\
         # Port GUIDs are fabricopt's synthetic ones (terminal t = 0x{CA_GUID_BASE:016x} + t):\n\
         # replace them with the fabric's. Applications get the SL from path record queries.\n\n",
        topo.name.replace(['\n', '\r'], " "),
        vls.num_vls,
        identity.join(",")
    );
    out.push_str("port-groups\n");
    for (r, guids) in ports.iter().enumerate().filter(|(_, g)| !g.is_empty()) {
        let list: Vec<String> = guids.iter().map(|g| format!("0x{g:016x}")).collect();
        let _ = write!(
            out,
            "    port-group\n        name: router-{r}\n        port-guid: {}\n    end-port-group\n",
            list.join(", ")
        );
    }
    out.push_str("end-port-groups\n\nqos-levels\n");
    for sl in 0..vls.num_vls {
        let name = if sl == 0 {
            "DEFAULT".to_string()
        } else {
            format!("SL{sl}")
        };
        let _ = write!(
            out,
            "    qos-level\n        name: {name}\n        sl: {sl}\n    end-qos-level\n"
        );
    }
    out.push_str("end-qos-levels\n\nqos-match-rules\n");
    for (pair, &sl) in vls.sl.iter().enumerate() {
        let (s, d) = pair_of(n, pair);
        if sl == 0 || ports[s].is_empty() || ports[d].is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "    qos-match-rule\n        source: router-{s}\n        destination: router-{d}\n        qos-level-name: SL{sl}\n    end-qos-match-rule\n"
        );
    }
    out.push_str("end-qos-match-rules\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::table::vl::assign_vls;
    use crate::routing::table::vl::tests::clockwise_ring;

    #[test]
    fn the_policy_gives_every_pair_its_sl_and_defaults_to_sl_0() {
        // Every pair of a 4-router ring clockwise: cyclic on one VL, so two SLs.
        let (topo, table) = clockwise_ring();
        let n = 4;
        let vls = assign_vls(&topo, &table, 15).unwrap();
        assert_eq!(vls.num_vls, 2);
        let text = to_qos_policy_string(&topo, &table, &vls);
        assert_eq!(text.matches("    port-group\n").count(), 4);
        assert!(text.contains("name: DEFAULT\n        sl: 0\n"));
        assert!(text.contains("name: SL1\n        sl: 1\n"));
        let rules = text.matches("    qos-match-rule\n").count();
        assert_eq!(rules, vls.sl.iter().filter(|&&sl| sl > 0).count());
        for (pair, &sl) in vls.sl.iter().enumerate() {
            let (s, d) = pair_of(n, pair);
            let rule = format!(
                "source: router-{s}\n        destination: router-{d}\n        qos-level-name: SL{sl}\n"
            );
            assert_eq!(text.contains(&rule), sl > 0, "{s} -> {d} on SL {sl}");
        }
        assert!(text.contains(&format!("port-guid: 0x{:016x}\n", CA_GUID_BASE + 2)));
        assert!(text.contains("qos_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"));
    }
}
