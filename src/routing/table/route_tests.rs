//! Unit tests of `TableRouting`: the class hierarchy against a fake congestion view in which
//! the preferred classes are busy, the layered mode's VCs, class validation.

use std::collections::HashSet;

use rand::SeedableRng;

use super::*;
use crate::routing::cartesian::{CartesianAlgorithm, CartesianRouting};
use crate::routing::paths::packet;
use crate::topology::Endpoint;

use crate::topology::spec::test_topology as topo;

fn dor_table(t: &Topology, vcs: usize) -> RoutingTable {
    let dor = CartesianRouting::new(CartesianAlgorithm::Dor, t, vcs).unwrap();
    table_from_routing(&dor, t, vcs).unwrap()
}

/// Every buffer empty; output VCs in `busy` are held by other packets.
struct Busy {
    num_vcs: usize,
    busy: HashSet<usize>,
}

impl CongestionView for Busy {
    fn num_vcs(&self) -> usize {
        self.num_vcs
    }
    fn vc_depth(&self) -> u32 {
        4
    }
    fn credits(&self, _: usize, _: usize, vc: usize) -> u32 {
        if self.busy.contains(&vc) { 0 } else { 4 }
    }
    fn output_vc_busy(&self, _: usize, _: usize, vc: usize) -> bool {
        self.busy.contains(&vc)
    }
    fn output_queue(&self, _: usize, _: usize) -> u32 {
        0
    }
    fn input_occupancy(&self, _: usize, _: usize, _: usize) -> u32 {
        0
    }
}

/// What the VC allocator does: the first candidate with a free VC, its lowest free VC.
fn allocate(cands: &[Candidate], view: &Busy) -> Option<(Candidate, usize)> {
    cands.iter().find_map(|c| {
        c.vcs
            .iter()
            .find(|vc| !view.busy.contains(vc))
            .map(|vc| (*c, vc))
    })
}

#[test]
fn the_hierarchy_never_moves_back_up_a_class() {
    let t = topo("torus:4x4");
    let classes = TableClasses::defaults(&t, 8);
    assert_eq!(
        classes,
        TableClasses {
            table: 4..8,
            adaptive: 2..4,
            escape: 0..2
        }
    );
    let r = TableRouting::new(&t, dor_table(&t, 2), TableMode::Hierarchy(classes)).unwrap();
    assert_eq!(r.min_vcs(), 8);
    let in_class = |c: &Candidate, range: Range<usize>| c.vcs.iter().all(|vc| range.contains(&vc));
    // Router 0 to router 10 (2 hops in x, 2 in y).
    let pkt = packet(&t, 0, 10);
    let mut rng = RouteRng::seed_from_u64(1);
    let mut state = RouteState::default();
    r.init_packet(&pkt, &mut state, &mut rng);
    assert_eq!(class_of(&state), CLASS_TABLE);
    // Table VCs busy everywhere: the packet drops to an adaptive VC.
    let view = Busy {
        num_vcs: 8,
        busy: (4..8).collect(),
    };
    let (mut router, mut in_port) = (0usize, 0usize);
    let mut step = |view: &Busy,
                    state: &mut RouteState,
                    router: &mut usize,
                    in_port: &mut usize| {
        let ctx = RouteContext {
            router: *router,
            in_port: *in_port,
            in_vc: 0,
            congestion: view,
        };
        let mut cands = Vec::new();
        r.route(&ctx, &pkt, state, &mut rng, &mut cands);
        let (chosen, vc) = allocate(&cands, view).expect("a free VC");
        r.on_forward(&ctx, &pkt, chosen, vc, state);
        state.hops += 1;
        if let Some(Endpoint::Router { router: nr, port }) = t.peer(*router, chosen.port as usize) {
            (*router, *in_port) = (nr, port);
        }
        (cands, vc)
    };
    let (cands, vc) = step(&view, &mut state, &mut router, &mut in_port);
    // Preference order: table port on table VCs, minimal ports on adaptive VCs, escape last.
    assert!(in_class(&cands[0], 4..8), "{cands:?}");
    assert_eq!(Some(cands[0].port), r.table().port_at(0, 0, 10, 0));
    assert!(
        in_class(&cands[1], 2..4) && in_class(&cands[2], 2..4),
        "{cands:?}"
    );
    assert!(in_class(cands.last().unwrap(), 0..2), "{cands:?}");
    assert!((2..4).contains(&vc));
    assert_eq!(class_of(&state), CLASS_ADAPTIVE);
    // Now everything is free, yet the adaptive packet is offered no table VC.
    let free = Busy {
        num_vcs: 8,
        busy: HashSet::new(),
    };
    let (cands, vc) = step(&free, &mut state, &mut router, &mut in_port);
    assert!(
        cands.iter().all(|c| c.vcs.iter().all(|vc| vc < 4)),
        "{cands:?}"
    );
    assert!((2..4).contains(&vc));
    assert_eq!(class_of(&state), CLASS_ADAPTIVE);
    // Adaptive VCs busy too: the escape VC; from then on only escape VCs are offered.
    let adaptive_busy = Busy {
        num_vcs: 8,
        busy: (2..8).collect(),
    };
    let (_, vc) = step(&adaptive_busy, &mut state, &mut router, &mut in_port);
    assert!(vc < 2);
    assert_eq!(class_of(&state), CLASS_ESCAPE);
    let (cands, _) = step(&free, &mut state, &mut router, &mut in_port);
    assert!(cands.iter().all(|c| in_class(c, 0..2)), "{cands:?}");
    assert_eq!(class_of(&state), CLASS_ESCAPE);
    assert_eq!(router, 10, "four minimal hops");
    // Handed a table VC by mistake, the class still does not go back up.
    let ctx = RouteContext {
        router: 5,
        in_port: 0,
        in_vc: 0,
        congestion: &free,
    };
    let c = Candidate {
        port: 1,
        vcs: VcRange::new(4, 8),
    };
    r.on_forward(&ctx, &pkt, c, 5, &mut state);
    assert_eq!(class_of(&state), CLASS_ESCAPE);
}

#[test]
fn layered_mode_uses_the_pair_layer_and_needs_the_layers_used() {
    let t = topo("mesh:3x3");
    let table = dor_table(&t, 1);
    let n = t.num_routers();
    let layers: Vec<u8> = (0..n * (n - 1)).map(|p| (p % 3) as u8).collect();
    let r = TableRouting::new(&t, table.clone(), TableMode::Layered(layers.clone())).unwrap();
    assert_eq!(r.min_vcs(), 3);
    let view = Busy {
        num_vcs: 3,
        busy: HashSet::new(),
    };
    let mut rng = RouteRng::seed_from_u64(1);
    for (s, d) in [(0, 8), (4, 1), (8, 0)] {
        let pkt = packet(&t, s, d);
        let ctx = RouteContext {
            router: s,
            in_port: 0,
            in_vc: 0,
            congestion: &view,
        };
        let mut cands = Vec::new();
        r.route(&ctx, &pkt, &mut RouteState::default(), &mut rng, &mut cands);
        let layer = usize::from(layers[pair_index(n, s, d)]);
        assert_eq!(
            cands,
            vec![Candidate {
                port: table.port_at(s, s, d, 0).unwrap(),
                vcs: VcRange::single(layer)
            }]
        );
    }
    let err = TableRouting::new(&t, table, TableMode::Layered(vec![0; 3]))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.starts_with("layers: 3 layers but the table has 72 pairs"),
        "{err}"
    );
}

#[test]
fn classes_are_validated() {
    let c = |table: Range<usize>, adaptive: Range<usize>, escape: Range<usize>| TableClasses {
        table,
        adaptive,
        escape,
    };
    assert!(c(4..8, 1..4, 0..1).validate(Some(8)).is_ok());
    let err = |cl: TableClasses, vcs| cl.validate(Some(vcs)).err().unwrap().to_string();
    assert_eq!(
        err(c(3..8, 1..4, 0..1), 8),
        "adaptive_vcs: [1, 4) overlaps table_vcs [3, 8)"
    );
    assert_eq!(
        err(c(4..9, 1..4, 0..1), 8),
        "table_vcs: [4, 9) goes beyond the 8 VCs per channel (simulation.num_vcs)"
    );
    assert_eq!(
        err(c(4..8, 1..4, 0..0), 8),
        "escape_vcs: the escape class needs a VC"
    );
    assert_eq!(
        // Spelled as a struct: a reversed range literal is what a bad file gives, not code.
        err(c(4..8, Range { start: 2, end: 1 }, 0..1), 8),
        "adaptive_vcs: [2, 1) has its start after its end"
    );
    // The DOR escape on a torus needs its dateline VC pair.
    let t = topo("torus:4x4");
    let err = TableRouting::new(
        &t,
        dor_table(&t, 2),
        TableMode::Hierarchy(c(4..8, 1..4, 0..1)),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.starts_with("escape_vcs: the DOR escape on torus"),
        "{err}"
    );
}

#[test]
fn escape_is_updown_off_cartesian_topologies() {
    let t = topo("jellyfish:routers=12,degree=3");
    let updown = UpDown::new(&t, None).unwrap();
    let table = table_from_routing(&updown, &t, 1).unwrap();
    let classes = TableClasses {
        table: 2..3,
        adaptive: 1..2,
        escape: 0..1,
    };
    let r = TableRouting::new(&t, table, TableMode::Hierarchy(classes)).unwrap();
    // Only the escape VC free: every pair is still delivered, on escape VCs only.
    let view = Busy {
        num_vcs: 3,
        busy: [1, 2].into_iter().collect(),
    };
    let mut rng = RouteRng::seed_from_u64(3);
    for src in 0..t.num_terminals() {
        for dst in (0..t.num_terminals()).filter(|&d| d != src) {
            let pkt = packet(&t, src, dst);
            let mut state = RouteState::default();
            r.init_packet(&pkt, &mut state, &mut rng);
            let (mut router, mut in_port) = (t.terminals[src].router, t.terminals[src].port);
            for _ in 0..100 {
                let ctx = RouteContext {
                    router,
                    in_port,
                    in_vc: 0,
                    congestion: &view,
                };
                let mut cands = Vec::new();
                r.route(&ctx, &pkt, &mut state, &mut rng, &mut cands);
                let (chosen, vc) = allocate(&cands, &view).unwrap();
                r.on_forward(&ctx, &pkt, chosen, vc, &mut state);
                match t.peer(router, chosen.port as usize) {
                    Some(Endpoint::Router { router: nr, port }) => {
                        assert_eq!(vc, 0);
                        state.hops += 1;
                        (router, in_port) = (nr, port);
                    }
                    Some(Endpoint::Terminal { terminal }) => {
                        assert_eq!(terminal, dst);
                        break;
                    }
                    None => panic!("unconnected port"),
                }
            }
            assert_eq!(router, pkt.dst_router as usize);
        }
    }
}
