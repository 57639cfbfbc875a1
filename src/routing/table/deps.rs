//! Channel-dependency analysis of a routing table: whether its paths can deadlock on the VCs
//! they are given, and a greedy assignment of whole paths to VC layers that makes every layer
//! acyclic. See "Dependency analysis of a table" in docs/routing-tables.md.
//!
//! Only router-to-router channels are considered: the injection channel has no incoming
//! dependency and the ejection channel no outgoing one, so neither can lie on a cycle.

use super::RoutingTable;
use crate::routing::deadlock::{DependencyGraph, IncrementalDag, VirtualChannel};
use crate::topology::Topology;

/// Builds the dependency graph of every path of `table` (consecutive channels of a path, each
/// on the VC `vc_of_hop(pair, hop)` gives) and returns one cycle, or None if it is acyclic.
pub(crate) fn table_dependency_cycle(
    topo: &Topology,
    table: &RoutingTable,
    vc_of_hop: &dyn Fn(usize, usize) -> u8,
) -> Option<Vec<VirtualChannel>> {
    let mut graph = DependencyGraph::new();
    let mut vcs = Vec::new();
    for (pair, path) in table.paths().enumerate() {
        vcs.clear();
        vcs.extend(
            path.channels(topo)
                .into_iter()
                .enumerate()
                .map(|(hop, c)| VirtualChannel::new(c, vc_of_hop(pair, hop))),
        );
        graph.add_path(&vcs);
    }
    graph.find_cycle()
}

/// Whether the table is deadlock-free with every hop on VC 0; `Err` carries a cycle.
pub(crate) fn is_deadlock_free_single_vc(
    topo: &Topology,
    table: &RoutingTable,
) -> Result<(), Vec<VirtualChannel>> {
    match table_dependency_cycle(topo, table, &|_, _| 0) {
        Some(cycle) => Err(cycle),
        None => Ok(()),
    }
}

/// Assigns every pair's whole path to one VC layer (`0..max_layers`, at most 256) so that each
/// layer's channel dependency graph is acyclic: greedy first fit over the pairs, longest paths
/// first (they constrain the most), with incremental cycle checks ([`IncrementalDag`]); a
/// source-major order is tried too and the one needing fewer layers is kept. Returns the layer
/// per pair (indexed like `table.paths`) or None if `max_layers` layers are not enough, which
/// includes a path whose own dependencies form a cycle (a Valiant-style path that reuses a
/// channel): no single layer can hold it.
pub(crate) fn layer_assignment(
    topo: &Topology,
    table: &RoutingTable,
    max_layers: usize,
) -> Option<Vec<u8>> {
    let max_layers = max_layers.min(usize::from(u8::MAX) + 1);
    // Dependencies are rebuilt per pair when placed, not held for all n² pairs at once.
    let deps = |pair: usize| -> Vec<(usize, usize)> {
        let channels = table.pair_path(pair).channels(topo);
        channels.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let hops: Vec<u32> = table.paths().map(|p| p.hops() as u32).collect();
    let mut by_length: Vec<u32> = (0..hops.len() as u32).collect();
    // Stable sort: equal lengths stay in pair order, so the result is deterministic.
    by_length.sort_by_key(|&i| std::cmp::Reverse(hops[i as usize]));
    let source_major: Vec<u32> = (0..hops.len() as u32).collect();
    let num_channels = 2 * topo.links.len();
    let mut best: Option<(Vec<u8>, usize)> = None;
    for order in [by_length, source_major] {
        if let Some((layer, used)) = first_fit(&deps, &order, num_channels, max_layers) {
            if best.as_ref().is_none_or(|b| used < b.1) {
                best = Some((layer, used));
            }
        }
    }
    best.map(|b| b.0)
}

/// First fit in `order`; None as soon as a pair fits none of `max_layers` layers.
fn first_fit(
    deps: &dyn Fn(usize) -> Vec<(usize, usize)>,
    order: &[u32],
    num_channels: usize,
    max_layers: usize,
) -> Option<(Vec<u8>, usize)> {
    let mut layer = vec![0u8; order.len()];
    let mut dags: Vec<IncrementalDag> = Vec::new();
    for &pair in order {
        let pair = pair as usize;
        let pair_deps = deps(pair);
        let mut l = 0;
        loop {
            if l == max_layers {
                return None;
            }
            if l == dags.len() {
                dags.push(IncrementalDag::new(num_channels));
            }
            if dags[l].try_add_all(&pair_deps) {
                break;
            }
            l += 1;
        }
        layer[pair] = l as u8;
    }
    Some((layer, dags.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::table::candidates::{CandidateOptions, generate_candidates};
    use crate::routing::table::{RouterPath, pair_index};
    use crate::topology::LinkParams;
    use crate::topology::generators::cartesian;

    fn dor_table(topo: &Topology) -> RoutingTable {
        let cands = generate_candidates(
            topo,
            &CandidateOptions {
                bits: 1,
                ..Default::default()
            },
        )
        .unwrap();
        RoutingTable::from_choice(&cands, &vec![0; cands.num_pairs()])
    }

    #[test]
    fn dor_table_of_a_mesh_is_deadlock_free_on_one_vc() {
        let lp = LinkParams::default();
        for dims in [&[4usize, 4][..], &[3, 3, 3], &[4, 4, 4]] {
            let topo = cartesian(dims, false, 1, &lp).unwrap();
            let table = dor_table(&topo);
            assert_eq!(
                is_deadlock_free_single_vc(&topo, &table),
                Ok(()),
                "{dims:?}"
            );
            assert_eq!(
                layer_assignment(&topo, &table, 1).map(|l| l.iter().all(|&x| x == 0)),
                Some(true)
            );
        }
        // The same on a torus wraps around: a single VC is cyclic (that is why DOR needs
        // datelines there).
        let torus = cartesian(&[4, 4], true, 1, &lp).unwrap();
        assert!(is_deadlock_free_single_vc(&torus, &dor_table(&torus)).is_err());
    }

    /// The table of a 2x2 mesh whose diagonal pairs all turn clockwise around the square
    /// (0 -> 1 -> 3 -> 2 -> 0 in router ids): the four turns close a cycle on one VC.
    #[test]
    fn clockwise_turns_on_a_square_make_a_cycle() {
        let topo = cartesian(&[2, 2], false, 1, &LinkParams::default()).unwrap();
        let cands = generate_candidates(
            &topo,
            &CandidateOptions {
                bits: 2,
                ..Default::default()
            },
        )
        .unwrap();
        let clockwise = [[0u32, 1, 3], [1, 3, 2], [3, 2, 0], [2, 0, 1]];
        let n = 4;
        let choice: Vec<u8> = (0..cands.num_pairs())
            .map(|pair| {
                let cs = cands.paths(pair);
                let want = clockwise
                    .iter()
                    .find(|c| pair == pair_index(n, c[0] as usize, c[2] as usize));
                match want {
                    Some(w) => cs.iter().position(|p| p.routers == w).unwrap() as u8,
                    None => 0,
                }
            })
            .collect();
        let table = RoutingTable::from_choice(&cands, &choice);
        table.validate(&topo).unwrap();
        let cycle = is_deadlock_free_single_vc(&topo, &table).unwrap_err();
        let mut got: Vec<usize> = cycle.iter().map(|v| v.channel).collect();
        got.sort_unstable();
        let mut want: Vec<usize> = clockwise
            .iter()
            .map(|c| table.path(c[0] as usize, c[1] as usize).channels(&topo)[0])
            .collect();
        want.sort_unstable();
        assert_eq!(got, want, "the cycle is the four clockwise channels");
        // Two layers break it (and one does not).
        assert_eq!(layer_assignment(&topo, &table, 1), None);
        let layers = layer_assignment(&topo, &table, 2).unwrap();
        assert_eq!(
            table_dependency_cycle(&topo, &table, &|pair, _| layers[pair]),
            None
        );
        // Counter-check with the DOR choice: acyclic.
        let dor = RoutingTable::from_choice(&cands, &vec![0; cands.num_pairs()]);
        assert_eq!(is_deadlock_free_single_vc(&topo, &dor), Ok(()));
    }

    /// A ring of 4 (1-D torus) routed clockwise whenever that is shortest (distance 2 is a
    /// tie, taken clockwise): the 2-hop paths chain the four clockwise channels into a cycle.
    /// Two layers suffice: first fit puts three of the four 2-hop paths on layer 0 and the
    /// one that would close the cycle on layer 1.
    #[test]
    fn clockwise_ring_needs_two_layers() {
        let topo = cartesian(&[4], true, 1, &LinkParams::default()).unwrap();
        let plus = topo.routers[0].ports.len() - 1; // port c + 2*0 + 1: towards coord + 1
        let n = 4;
        let mut paths = vec![
            RouterPath {
                routers: vec![],
                ports: vec![]
            };
            n * (n - 1)
        ];
        for s in 0..n {
            for d in (0..n).filter(|&d| d != s) {
                let fwd = (d + n - s) % n;
                let (step, port, len) = if fwd <= 2 {
                    (1, plus, fwd)
                } else {
                    (n - 1, plus - 1, n - fwd)
                };
                let routers = (0..=len).map(|i| ((s + i * step) % n) as u32).collect();
                paths[pair_index(n, s, d)] = RouterPath {
                    routers,
                    ports: vec![port as u16; len],
                };
            }
        }
        let table = RoutingTable::from_paths(n, paths).unwrap();
        table.validate(&topo).unwrap();
        let cycle = is_deadlock_free_single_vc(&topo, &table).unwrap_err();
        assert_eq!(cycle.len(), 4);
        assert_eq!(layer_assignment(&topo, &table, 1), None);
        let layers = layer_assignment(&topo, &table, 2).expect("two layers suffice");
        assert_eq!(layers.iter().map(|&l| l as usize).max(), Some(1));
        assert_eq!(
            table_dependency_cycle(&topo, &table, &|pair, _| layers[pair]),
            None
        );
    }

    #[test]
    fn a_path_reusing_a_channel_fits_no_layer() {
        let topo = cartesian(&[4], true, 1, &LinkParams::default()).unwrap();
        let mut table = dor_table(&topo);
        let plus = topo.routers[0].ports.len() - 1;
        // 0 -> 1 the long way twice round the ring (0 1 2 3 0 1 2 3 0 1): channel 0->1 twice.
        let routers: Vec<u32> = (0..10).map(|i| (i % 4) as u32).collect();
        let len = routers.len() - 1;
        table.set_path(
            pair_index(4, 0, 1),
            RouterPath {
                routers,
                ports: vec![plus as u16; len],
            },
        );
        table.validate(&topo).unwrap();
        assert_eq!(layer_assignment(&topo, &table, 8), None);
    }
}
