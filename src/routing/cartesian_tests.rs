use std::collections::HashSet;

use super::testkit::{
    FakeView, Hop, PickFn, Picker, VcNode, Walk, add_deps, find_cycle, first_highest, first_lowest,
    last_lowest, random_pick, walk,
};
use super::*;
use crate::registry::routing::build_routing;
use crate::routing::RoutingConfig;
use crate::topology::LinkParams;
use crate::topology::generators::{DragonflyArrangement, cartesian, dragonfly};
use crate::topology::metrics::distances_from;

fn grid(dims: &[usize], wrap: bool, c: usize) -> Topology {
    cartesian(dims, wrap, c, &LinkParams::default()).unwrap()
}

/// The small topologies every test runs on: 4x4 mesh, 4x4 and 5x5 tori with concentration 1
/// and 2, plus a ring, a radix-2 torus dimension and a 3-D torus for the odd cases.
fn topologies() -> Vec<Topology> {
    vec![
        grid(&[4, 4], false, 1),
        grid(&[4, 4], true, 1),
        grid(&[4, 4], true, 2),
        grid(&[5, 5], true, 1),
        grid(&[5, 5], true, 2),
        grid(&[6], true, 1),
        grid(&[2, 3], true, 1),
        grid(&[3, 2, 3], true, 1),
    ]
}

fn build(alg: CartesianAlgorithm, topo: &Topology, vcs: usize) -> Box<dyn RoutingFunction> {
    let cfg = RoutingConfig::new(alg.name());
    build_routing(&cfg, topo, vcs).unwrap()
}

fn wrap_of(topo: &Topology) -> (Vec<usize>, bool) {
    match &topo.shape {
        Shape::Cartesian { dims, wrap } => (dims.clone(), *wrap),
        _ => unreachable!(),
    }
}

fn coord(dims: &[usize], r: usize, d: usize) -> usize {
    (r / dims[..d].iter().product::<usize>()) % dims[d]
}

/// (dimension, direction, crosses the wrap link) of a network hop, recomputed independently.
fn hop_geometry(topo: &Topology, c: usize, h: &Hop) -> (usize, usize, bool) {
    let (dims, wrap) = wrap_of(topo);
    let (d, dir) = ((h.port - c) / 2, (h.port - c) % 2);
    let x = coord(&dims, h.router, d);
    let crosses = wrap && ((dir == 1 && x == dims[d] - 1) || (dir == 0 && x == 0));
    (d, dir, crosses)
}

fn conc(topo: &Topology) -> usize {
    topo.num_terminals() / topo.num_routers()
}

/// Walks every terminal pair with `pick`; panics on any contract violation.
fn all_walks(
    topo: &Topology,
    rf: &dyn RoutingFunction,
    vcs: usize,
    max_hops: usize,
    pick: &mut Picker,
    seed: u64,
) -> Vec<Walk> {
    let view = FakeView::new(vcs, 8);
    let n = topo.num_terminals();
    let mut walks = Vec::with_capacity(n * n);
    for s in 0..n {
        for t in 0..n {
            let w = walk(
                topo,
                rf,
                &view,
                s,
                t,
                seed ^ (s * n + t) as u64,
                max_hops,
                pick,
                &|_| {},
            )
            .unwrap_or_else(|e| panic!("{} on {}: {e}", rf.name(), topo.name));
            walks.push(w);
        }
    }
    walks
}

fn bfs(topo: &Topology) -> Vec<Vec<u32>> {
    let g = topo.router_graph();
    (0..topo.num_routers())
        .map(|r| {
            distances_from(&g, r)
                .into_iter()
                .map(Option::unwrap)
                .collect()
        })
        .collect()
}

#[test]
fn every_algorithm_delivers_every_pair_within_its_hop_bound() {
    for topo in topologies() {
        let dist = bfs(&topo);
        let diameter = dist.iter().flatten().copied().max().unwrap() as usize;
        for alg in CartesianAlgorithm::ALL {
            let (_, wrap) = wrap_of(&topo);
            let min = alg.min_vcs(wrap);
            for vcs in [min, min + 3] {
                let rf = build(alg, &topo, vcs);
                assert_eq!(rf.min_vcs(), min);
                let pickers: [&mut Picker; 4] = [
                    &mut first_lowest,
                    &mut first_highest,
                    &mut last_lowest,
                    &mut random_pick,
                ];
                for (pi, pick) in pickers.into_iter().enumerate() {
                    let walks = all_walks(&topo, &*rf, vcs, 2 * diameter, pick, pi as u64);
                    for w in &walks {
                        let d = dist[w.pkt.src_router as usize][w.pkt.dst_router as usize];
                        let hops = w.hops.len();
                        if alg == CartesianAlgorithm::Valiant {
                            assert!(hops <= 2 * diameter);
                        } else {
                            // DOR, Duato, Star and ROMM are minimal.
                            assert_eq!(hops, d as usize, "{} {}: {w:?}", alg.name(), topo.name);
                        }
                        assert!(w.hops.iter().all(|h| h.vc < vcs));
                    }
                }
            }
        }
    }
}

#[test]
fn dor_follows_dimension_order_and_uses_vc1_exactly_after_the_wrap_link() {
    for topo in topologies() {
        let (dims, wrap) = wrap_of(&topo);
        let c = conc(&topo);
        for vcs in [2, 4, 5] {
            let rf = build(CartesianAlgorithm::Dor, &topo, vcs);
            for pick in [first_lowest as PickFn, first_highest] {
                let mut pick = pick;
                for w in all_walks(&topo, &*rf, vcs, 64, &mut pick, 0) {
                    let mut crossed = vec![false; dims.len()];
                    let mut last_dim = 0;
                    for h in &w.hops {
                        let (d, dir, crosses) = hop_geometry(&topo, c, h);
                        assert!(d >= last_dim, "dimension order broken: {w:?}");
                        last_dim = d;
                        // Shortest direction, + at a tie.
                        let (x, y) = (
                            coord(&dims, h.router, d),
                            coord(&dims, w.pkt.dst_router as usize, d),
                        );
                        let k = dims[d];
                        let fwd = if wrap {
                            (y + k - x) % k
                        } else {
                            y.wrapping_sub(x)
                        };
                        let plus = if wrap { 2 * fwd <= k } else { y > x };
                        assert_eq!(dir == 1, plus, "{w:?}");
                        if wrap {
                            // Class 0 = VCs 0..v/2 before the wrap link, class 1 = v/2..v after.
                            let class = usize::from(h.vc >= vcs / 2);
                            assert_eq!(class, usize::from(crossed[d]), "{} {w:?}", topo.name);
                        }
                        crossed[d] |= crosses;
                    }
                }
            }
        }
    }
}

#[test]
fn dor_spreads_extra_vcs_over_its_classes() {
    let topo = grid(&[4, 4], true, 1);
    let rf = build(CartesianAlgorithm::Dor, &topo, 4);
    let mut used = HashSet::new();
    for pick in [first_lowest as PickFn, first_highest] {
        let mut pick = pick;
        for w in all_walks(&topo, &*rf, 4, 64, &mut pick, 0) {
            used.extend(w.hops.iter().map(|h| h.vc));
        }
    }
    assert_eq!(used, (0..4).collect());
    let mesh = grid(&[4, 4], false, 1);
    let rf = build(CartesianAlgorithm::Dor, &mesh, 3);
    let w = all_walks(&mesh, &*rf, 3, 64, &mut first_highest, 0);
    assert!(w.iter().flat_map(|w| &w.hops).all(|h| h.vc == 2));
}

fn dependencies(
    topo: &Topology,
    rf: &dyn RoutingFunction,
    vcs: usize,
    intermediates: bool,
) -> HashSet<(VcNode, VcNode)> {
    let view = FakeView::new(vcs, 8);
    let mut deps = HashSet::new();
    let n = topo.num_routers();
    let mids: Vec<Option<usize>> = if intermediates {
        (0..n).map(Some).collect()
    } else {
        vec![None]
    };
    // One terminal per router is enough: dependencies are between router channels.
    let term = |r: usize| topo.terminals.iter().position(|t| t.router == r).unwrap();
    for s in 0..n {
        for t in 0..n {
            for &mid in &mids {
                let setup = |st: &mut RouteState| {
                    if let Some(m) = mid {
                        st.intermediate = m as u32;
                        st.phase = 0;
                    }
                };
                let w = walk(
                    topo,
                    rf,
                    &view,
                    term(s),
                    term(t),
                    1,
                    64,
                    &mut first_lowest,
                    &setup,
                )
                .unwrap();
                add_deps(topo, &w, &mut deps);
            }
        }
    }
    deps
}

#[test]
fn deterministic_channel_dependencies_are_acyclic() {
    for topo in topologies() {
        let (_, wrap) = wrap_of(&topo);
        for (alg, mids) in [
            (CartesianAlgorithm::Dor, false),
            (CartesianAlgorithm::Valiant, true),
            (CartesianAlgorithm::Romm, true),
        ] {
            let vcs = alg.min_vcs(wrap);
            let rf = build(alg, &topo, vcs);
            let deps = dependencies(&topo, &*rf, vcs, mids);
            assert!(!deps.is_empty());
            if let Some(cycle) = find_cycle(&deps) {
                panic!("{} on {}: cycle {cycle:?}", alg.name(), topo.name);
            }
        }
    }
}

#[test]
fn dependency_check_sees_the_torus_cycle_without_datelines() {
    // Sanity check of the checker: DOR on a ring of 5 with every hop on one VC is cyclic.
    let topo = grid(&[5], true, 1);
    let rf = build(CartesianAlgorithm::Dor, &topo, 2);
    let deps = dependencies(&topo, &*rf, 2, false);
    let merged: HashSet<(VcNode, VcNode)> = deps
        .into_iter()
        .map(|((a, _), (b, _))| ((a, 0), (b, 0)))
        .collect();
    assert!(find_cycle(&merged).is_some());
}

/// Escape-network dependencies of Duato/Star packets, including the indirect ones (escape hop,
/// adaptive hops, escape hop): the extended channel-dependency graph must be acyclic.
#[test]
fn escape_network_extended_dependencies_are_acyclic() {
    for topo in topologies() {
        let (_, wrap) = wrap_of(&topo);
        let escape = if wrap { 2 } else { 1 };
        for alg in [CartesianAlgorithm::Duato, CartesianAlgorithm::Star] {
            let vcs = alg.min_vcs(wrap);
            let rf = build(alg, &topo, vcs);
            let mut deps = HashSet::new();
            for seed in 0..4 {
                for w in all_walks(&topo, &*rf, vcs, 64, &mut random_pick, seed) {
                    let esc: Vec<VcNode> = w
                        .hops
                        .iter()
                        .filter(|h| h.vc < escape)
                        .map(|h| (topo.out_channel(h.router, h.port).unwrap(), h.vc))
                        .collect();
                    deps.extend(esc.windows(2).map(|p| (p[0], p[1])));
                }
            }
            assert!(!deps.is_empty());
            assert_eq!(find_cycle(&deps), None, "{} on {}", alg.name(), topo.name);
        }
    }
}

#[test]
fn adaptive_candidates_are_minimal_with_the_escape_last() {
    for topo in topologies() {
        let (dims, wrap) = wrap_of(&topo);
        let c = conc(&topo);
        let escape = if wrap { 2 } else { 1 };
        let rf = build(CartesianAlgorithm::Duato, &topo, escape + 2);
        let view = FakeView::new(escape + 2, 8);
        let mut rng = RouteRng::seed_from_u64(0);
        use rand::SeedableRng;
        for s in 0..topo.num_routers() {
            for t in (0..topo.num_routers()).filter(|&t| t != s) {
                let pkt = super::testkit::packet(&topo, s * c, t * c);
                let mut st = RouteState::default();
                let mut out = Vec::new();
                let ctx = RouteContext {
                    router: s,
                    in_port: 0,
                    in_vc: 0,
                    congestion: &view,
                };
                rf.route(&ctx, &pkt, &mut st, &mut rng, &mut out);
                let (esc, adaptive) = out.split_last().unwrap();
                assert_eq!(esc.vcs, VcRange::single(0));
                let productive = (0..dims.len())
                    .map(|d| {
                        let (x, y) = (coord(&dims, s, d), coord(&dims, t, d));
                        let k = dims[d];
                        match () {
                            _ if x == y => 0,
                            _ if wrap && 2 * ((y + k - x) % k) == k => 2,
                            _ => 1,
                        }
                    })
                    .sum::<usize>();
                assert_eq!(adaptive.len(), productive);
                for a in adaptive {
                    assert_eq!(a.vcs, VcRange::new(escape, escape + 2));
                    assert!(a.port as usize >= c);
                }
            }
        }
    }
}

#[test]
fn duato_ranks_adaptive_ports_by_congestion_and_star_keeps_dimension_order() {
    use rand::SeedableRng;
    let topo = grid(&[4, 4], false, 1);
    let (px, py) = (2u16, 4u16); // +x and +y ports with concentration 1
    let pkt = super::testkit::packet(&topo, 0, 10); // (0,0) -> (2,2)
    let route = |alg: CartesianAlgorithm, view: &FakeView| {
        let rf = build(alg, &topo, 3);
        let ctx = RouteContext {
            router: 0,
            in_port: 0,
            in_vc: 0,
            congestion: view,
        };
        let mut out = Vec::new();
        let mut st = RouteState::default();
        rf.route(
            &ctx,
            &pkt,
            &mut st,
            &mut RouteRng::seed_from_u64(0),
            &mut out,
        );
        out.iter().map(|c| (c.port, c.vcs)).collect::<Vec<_>>()
    };
    let idle = FakeView::new(3, 8);
    let mut busy_x = FakeView::new(3, 8);
    busy_x.congest(0, px as usize, 6, 10);
    let a = VcRange::new(1, 3);
    let e = VcRange::single(0);
    let dor_order = vec![(px, a), (py, a), (px, e)];
    assert_eq!(route(CartesianAlgorithm::Duato, &idle), dor_order);
    assert_eq!(
        route(CartesianAlgorithm::Duato, &busy_x),
        vec![(py, a), (px, a), (px, e)]
    );
    assert_eq!(route(CartesianAlgorithm::Star, &idle), dor_order);
    assert_eq!(route(CartesianAlgorithm::Star, &busy_x), dor_order);
    // A queue alone also counts.
    let mut queued_x = FakeView::new(3, 8);
    queued_x.queues.insert((0, px as usize), 3);
    assert_eq!(route(CartesianAlgorithm::Duato, &queued_x)[0], (py, a));
}

#[test]
fn two_phase_algorithms_use_separate_vc_sets_per_phase() {
    for topo in [
        grid(&[4, 4], true, 1),
        grid(&[5, 5], true, 2),
        grid(&[4, 4], false, 1),
    ] {
        let (dims, wrap) = wrap_of(&topo);
        let c = conc(&topo);
        for alg in [CartesianAlgorithm::Valiant, CartesianAlgorithm::Romm] {
            let vcs = alg.min_vcs(wrap);
            let per_phase = vcs / 2;
            let rf = build(alg, &topo, vcs);
            let mut saw_phase1 = false;
            for w in all_walks(&topo, &*rf, vcs, 64, &mut first_lowest, 3) {
                let mut crossed = vec![false; dims.len()];
                let mut phase = 0;
                for (h, st) in w.hops.iter().zip(&w.states) {
                    if st.phase != phase {
                        assert_eq!((phase, st.phase), (0, 1));
                        assert_eq!(h.router, st.intermediate as usize);
                        phase = 1;
                        crossed.fill(false);
                        saw_phase1 = true;
                    }
                    assert_eq!(h.vc / per_phase, phase as usize, "{w:?}");
                    let (d, _, crosses) = hop_geometry(&topo, c, h);
                    assert_eq!(h.vc % per_phase, usize::from(crossed[d]), "{w:?}");
                    crossed[d] |= crosses;
                }
            }
            assert!(saw_phase1);
        }
    }
}

#[test]
fn romm_and_valiant_draw_varied_intermediates() {
    use rand::SeedableRng;
    let topo = grid(&[5, 5], true, 1);
    let (dims, _) = wrap_of(&topo);
    let (src, dst) = (0usize, 2 + 5 * 3); // (0,0) -> (2,3): quadrant x in 0..=2, y in {0,4,3}
    let pkt = super::testkit::packet(&topo, src, dst);
    for alg in [CartesianAlgorithm::Romm, CartesianAlgorithm::Valiant] {
        let rf = build(alg, &topo, 4);
        let mut rng = RouteRng::seed_from_u64(7);
        let mut seen = HashSet::new();
        for _ in 0..400 {
            let mut st = RouteState::default();
            rf.init_packet(&pkt, &mut st, &mut rng);
            let m = st.intermediate as usize;
            if alg == CartesianAlgorithm::Romm {
                assert!(coord(&dims, m, 0) <= 2);
                assert!([0, 4, 3].contains(&coord(&dims, m, 1)));
            }
            seen.insert(m);
        }
        let want = if alg == CartesianAlgorithm::Romm {
            9
        } else {
            25
        };
        assert_eq!(seen.len(), want, "{}", alg.name());
    }
}

#[test]
fn registry_builds_by_name_and_reports_shape_and_vc_errors() {
    let torus = grid(&[4, 4], true, 1);
    let mesh = grid(&[4, 4], false, 1);
    let cfg = |name: &str| RoutingConfig::new(name);
    let rf = build_routing(&cfg("dor"), &torus, 2).unwrap();
    assert_eq!((rf.name().as_str(), rf.min_vcs()), ("dor", 2));
    for (alg, mesh_vcs, torus_vcs) in [
        ("dor", 1, 2),
        ("duato", 2, 3),
        ("star", 2, 3),
        ("valiant", 2, 4),
        ("romm", 2, 4),
    ] {
        assert_eq!(
            build_routing(&cfg(alg), &mesh, mesh_vcs).unwrap().min_vcs(),
            mesh_vcs
        );
        assert_eq!(
            build_routing(&cfg(alg), &torus, torus_vcs)
                .unwrap()
                .min_vcs(),
            torus_vcs
        );
        let err = build_routing(&cfg(alg), &torus, torus_vcs - 1)
            .err()
            .unwrap()
            .to_string();
        assert!(err.starts_with("simulation.num_vcs:"), "{err}");
        assert!(
            err.contains(&format!("needs at least {torus_vcs} VCs")),
            "{err}"
        );
    }
    let df = dragonfly(
        1,
        2,
        1,
        3,
        DragonflyArrangement::Absolute,
        &LinkParams::default(),
    )
    .unwrap();
    let err = build_routing(&cfg("dor"), &df, 2)
        .err()
        .unwrap()
        .to_string();
    assert!(err.starts_with("routing.algorithm:"), "{err}");
    assert!(err.contains("meshes and tori only"), "{err}");
    let bad = cfg("duato").with("ugal_factor", 2.0);
    let err = build_routing(&bad, &torus, 3).err().unwrap().to_string();
    assert!(err.starts_with("routing.ugal_factor:"), "{err}");
    // Another family's name is refused (a registry line pointing at the wrong builder).
    let err = super::build(&cfg("min"), &torus, 2)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("is not a mesh/torus algorithm"), "{err}");
}

fn build_with(
    alg: CartesianAlgorithm,
    topo: &Topology,
    vcs: usize,
    set: &dyn Fn(&mut RoutingConfig),
) -> Box<dyn RoutingFunction> {
    let mut cfg = RoutingConfig::new(alg.name());
    set(&mut cfg);
    build_routing(&cfg, topo, vcs).unwrap()
}

/// `tie = "random"`: at offset k/2 both directions are taken (about half each), paths stay
/// minimal and the dateline VCs keep the channel dependencies acyclic.
#[test]
fn random_tie_takes_both_directions_and_stays_minimal_and_acyclic() {
    let topo = grid(&[4, 4], true, 1);
    let rf = build_with(CartesianAlgorithm::Dor, &topo, 2, &|c| {
        c.set("tie", TieBreak::Random)
    });
    let mut deps = HashSet::new();
    let (mut plus, mut minus) = (0, 0);
    for seed in 0..16 {
        for w in all_walks(&topo, &*rf, 2, 8, &mut first_lowest, seed) {
            let (s, t) = (w.pkt.src_router as usize, w.pkt.dst_router as usize);
            let bfs = distances_from(&topo.router_graph(), s)[t].unwrap() as usize;
            assert_eq!(w.hops.len(), bfs, "{s}->{t}");
            // First hop of a dimension-0 tie (x offset 2).
            if (t % 4 + 4 - s % 4) % 4 == 2 {
                match hop_geometry(&topo, 1, &w.hops[0]) {
                    (0, 1, _) => plus += 1,
                    (0, 0, _) => minus += 1,
                    other => panic!("{s}->{t} starts with {other:?}"),
                }
            }
            add_deps(&topo, &w, &mut deps);
        }
    }
    let total = plus + minus;
    assert!(
        total > 0 && plus * 10 > total * 4 && minus * 10 > total * 4,
        "{plus} + / {minus} -"
    );
    assert_eq!(find_cycle(&deps), None);
}

/// Sticky escape (the default): after its first escape hop a `duato`/`star` packet only takes
/// escape VCs; with `escape = "return"` some packets go back to the adaptive VCs. Under
/// wormhole the adaptive VCs are allocated cut-through either way.
#[test]
fn sticky_escape_packets_stay_on_the_escape_network() {
    for topo in [grid(&[4, 4], false, 1), grid(&[5, 5], true, 1)] {
        let (_, wrap) = wrap_of(&topo);
        let escape = if wrap { 2 } else { 1 };
        for alg in [CartesianAlgorithm::Duato, CartesianAlgorithm::Star] {
            let vcs = escape + 2;
            let mut returned = [0, 0];
            for (i, policy) in [EscapePolicy::Sticky, EscapePolicy::Return]
                .into_iter()
                .enumerate()
            {
                let rf = build_with(alg, &topo, vcs, &|c| c.set("escape", policy));
                assert_eq!(
                    rf.cut_through_vcs(vcs),
                    crate::routing::vc_mask(escape..vcs)
                );
                for seed in 0..4 {
                    for w in all_walks(&topo, &*rf, vcs, 64, &mut random_pick, seed) {
                        let first = w.hops.iter().position(|h| h.vc < escape);
                        if let Some(f) = first {
                            returned[i] += w.hops[f..].iter().filter(|h| h.vc >= escape).count();
                        }
                    }
                }
            }
            assert_eq!(returned[0], 0, "{} on {}: sticky", alg.name(), topo.name);
            assert!(returned[1] > 0, "{} on {}: return", alg.name(), topo.name);
        }
    }
}

#[test]
fn escape_and_tie_are_checked_where_they_do_not_apply() {
    let mesh = grid(&[4, 4], false, 1);
    let torus = grid(&[4, 4], true, 1);
    let err = |topo: &Topology, alg: &str, set: &dyn Fn(&mut RoutingConfig)| {
        let mut cfg = RoutingConfig::new(alg);
        set(&mut cfg);
        build_routing(&cfg, topo, 4).err().unwrap().to_string()
    };
    let e = err(&torus, "dor", &|c| c.set("escape", EscapePolicy::Return));
    assert_eq!(e, "routing.escape: does not apply to routing `dor`");
    let e = err(&mesh, "dor", &|c| c.set("tie", TieBreak::Random));
    assert!(e.starts_with("routing.tie: applies to tori only"), "{e}");
    let e = err(&torus, "updown", &|c| c.set("tie", TieBreak::Random));
    assert_eq!(e, "routing.tie: does not apply to routing `updown`");
}

/// `routes_by_destination` (the simulator then routes each (router, destination router) pair
/// and each destination terminal once) is claimed by a mesh's DOR only, and there it holds:
/// at every router, for packets of every source and destination terminal, from any input and
/// with any routing state or random stream, `route` gives the same one candidate (the same at
/// the destination router for each destination terminal) and changes neither the state nor
/// the stream.
#[test]
fn routes_by_destination_is_claimed_only_where_it_holds() {
    use rand::{RngCore, SeedableRng};
    let mut claims = Vec::new();
    let mut topos = topologies();
    topos.push(grid(&[3, 4], false, 2));
    for topo in &topos {
        let (_, wrap) = wrap_of(topo);
        for alg in CartesianAlgorithm::ALL {
            let rf = build(alg, topo, 4);
            let Some(mask) = rf.routes_by_destination() else {
                continue;
            };
            claims.push((alg.name(), wrap, mask));
            let view = FakeView::new(4, 8);
            // By (router, destination router), then by destination terminal at its router.
            let pairs = topo.num_routers() * topo.num_routers();
            let mut seen: Vec<Option<Candidate>> = vec![None; pairs + topo.num_terminals()];
            for src in 0..topo.num_terminals() {
                for dst in 0..topo.num_terminals() {
                    let pkt = crate::routing::paths::packet(topo, src, dst);
                    let odd_state = RouteState {
                        hops: 3,
                        intermediate: (src % topo.num_routers()) as u32,
                        phase: 1,
                        flags: 0xa5,
                        aux: 0x5a5a,
                    };
                    for router in 0..topo.num_routers() {
                        for (k, before) in
                            [RouteState::default(), odd_state].into_iter().enumerate()
                        {
                            let ctx = RouteContext {
                                router,
                                in_port: k,
                                in_vc: k,
                                congestion: &view,
                            };
                            let mut rng = RouteRng::seed_from_u64((src * 31 + dst + k) as u64);
                            let mut untouched = rng.clone();
                            let mut state = before;
                            let mut out = Vec::new();
                            rf.route(&ctx, &pkt, &mut state, &mut rng, &mut out);
                            assert_eq!(out.len(), 1, "{}: {src}->{dst} at {router}", alg.name());
                            assert_eq!(state, before, "{}: the state changed", alg.name());
                            assert_eq!(rng.next_u64(), untouched.next_u64(), "a number was drawn");
                            let key = if router == pkt.dst_router as usize {
                                pairs + dst
                            } else {
                                router * topo.num_routers() + pkt.dst_router as usize
                            };
                            let entry = &mut seen[key];
                            assert_eq!(
                                *entry.get_or_insert(out[0]),
                                out[0],
                                "{src}->{dst} at {router}"
                            );
                        }
                    }
                }
            }
        }
    }
    // Mask 0: one class, so every state below must give the same candidate.
    assert_eq!(claims, [("dor", false, 0), ("dor", false, 0)]);
}
