//! The BookSim2-compatible options: `min` with `global_vc = destination` and `ugal_booksim`.

use std::collections::HashSet;

use rand::SeedableRng;

use super::tests::{a_of, build, check_classes, class_of, df, is_global, max_hops, min_path, term};
use super::*;
use crate::registry::routing::build_routing;
use crate::routing::RoutingConfig;
use crate::routing::cartesian::testkit::{
    FakeView, PickFn, VcNode, Walk, add_deps, find_cycle, first_highest, first_lowest, packet, walk,
};
use crate::topology::LinkParams;
use crate::topology::generators::{DragonflyArrangement, cartesian};

use DragonflyAlgorithm as A;

fn cfg(name: &str) -> RoutingConfig {
    RoutingConfig::new(name)
}

fn min_cfg(global_vc: GlobalVc) -> RoutingConfig {
    cfg("min").with("global_vc", global_vc)
}

#[test]
fn min_global_vc_destination_puts_the_global_hop_in_class_1() {
    for topo in [
        df(2, 4, 2, 9, DragonflyArrangement::Absolute),
        df(1, 4, 2, 5, DragonflyArrangement::Absolute),
    ] {
        let a = a_of(&topo);
        for vcs in [2, 4] {
            let src = build_routing(&min_cfg(GlobalVc::Source), &topo, vcs).unwrap();
            let dst = build_routing(&min_cfg(GlobalVc::Destination), &topo, vcs).unwrap();
            let view = FakeView::new(vcs, 8);
            let n = topo.num_terminals();
            for s in 0..n {
                for t in 0..n {
                    let go = |rf: &dyn RoutingFunction, pick: PickFn| {
                        walk(&topo, rf, &view, s, t, 0, 3, &mut { pick }, &|_| {}).unwrap()
                    };
                    for pick in [first_lowest as PickFn, first_highest] {
                        let (ws, wd) = (go(&*src, pick), go(&*dst, pick));
                        let route = |w: &Walk| -> Vec<_> {
                            w.hops.iter().map(|h| (h.router, h.port)).collect()
                        };
                        assert_eq!(route(&ws), route(&wd));
                        // Class 1 from the global hop on; same-group packets stay in class 0.
                        let mut after = false;
                        for h in &wd.hops {
                            after |= is_global(&topo, h.router, h.port);
                            assert_eq!(class_of(h.vc, vcs, 2), usize::from(after), "{wd:?}");
                        }
                        if wd.pkt.src_router as usize / a == wd.pkt.dst_router as usize / a {
                            assert!(wd.hops.iter().all(|h| class_of(h.vc, vcs, 2) == 0));
                        }
                    }
                }
            }
        }
    }
    // 1 -(local)-> 3 -(global)-> 28 -(local)-> 30.
    let topo = df(2, 4, 2, 9, DragonflyArrangement::Absolute);
    let vcs_of = |global_vc| {
        let rf = build_routing(&min_cfg(global_vc), &topo, 2).unwrap();
        let view = FakeView::new(2, 8);
        let (s, t) = (term(&topo, 1), term(&topo, 30));
        let w = walk(&topo, &*rf, &view, s, t, 0, 3, &mut first_lowest, &|_| {}).unwrap();
        w.hops.iter().map(|h| h.vc).collect::<Vec<_>>()
    };
    assert_eq!(vcs_of(GlobalVc::Source), [0, 0, 1]);
    assert_eq!(vcs_of(GlobalVc::Destination), [0, 1, 1]);
}

#[test]
fn global_vc_parses_and_applies_to_min_only() {
    let parse = |v: &str| {
        toml::from_str::<RoutingConfig>(&format!("algorithm = \"min\"\nglobal_vc = \"{v}\""))
            .map_err(|e| e.to_string())
            .and_then(|c| {
                c.read_params::<super::MinParams>()
                    .map_err(|e| e.to_string())
            })
    };
    assert_eq!(parse("source").unwrap().global_vc, Some(GlobalVc::Source));
    assert_eq!(
        parse("destination").unwrap().global_vc,
        Some(GlobalVc::Destination)
    );
    assert!(parse("global").is_err());
    let topo = df(2, 4, 2, 9, DragonflyArrangement::Absolute);
    let torus = cartesian(&[4, 4], true, 1, &LinkParams::default()).unwrap();
    let with = |name: &str| cfg(name).with("global_vc", GlobalVc::Source);
    assert!(build_routing(&with("min"), &topo, 2).is_ok());
    let others = A::ALL
        .into_iter()
        .filter(|&a| a != A::Min)
        .map(|a| a.name());
    for (name, t) in others.map(|n| (n, &topo)).chain([
        ("q_adaptive", &topo),
        ("dfsssp", &topo),
        ("dor", &torus),
    ]) {
        let err = build_routing(&with(name), t, 8).err().unwrap().to_string();
        assert_eq!(
            err,
            format!("routing.global_vc: does not apply to routing `{name}`")
        );
    }
}

/// Routes one `ugal_booksim` packet from router `s` to router `t` under `view` with the
/// intermediate router fixed to `mid`.
fn booksim_walk(
    topo: &Topology,
    rf: &dyn RoutingFunction,
    view: &FakeView,
    s: usize,
    t: usize,
    mid: usize,
) -> Walk {
    let setup = |st: &mut RouteState| st.intermediate = mid as u32;
    let (ts, tt) = (term(topo, s), term(topo, t));
    walk(topo, rf, view, ts, tt, 0, 6, &mut first_lowest, &setup).unwrap()
}

/// BookSim2's `ph` of every hop of a `ugal_booksim` walk, derived from the path: 0 until the
/// intermediate router (non-minimal), then 1 until the global hop, 2 from it on; 2 within a
/// group.
fn booksim_classes(topo: &Topology, w: &Walk, mid: usize) -> Vec<usize> {
    let a = a_of(topo);
    let same_group = w.pkt.src_router as usize / a == w.pkt.dst_router as usize / a;
    let mut reached = w.state.flags & NONMIN == 0;
    let mut global = false;
    let mut out = Vec::new();
    for h in &w.hops {
        reached |= h.router == mid;
        out.push(if same_group {
            2
        } else if !reached {
            0
        } else {
            global |= is_global(topo, h.router, h.port);
            1 + usize::from(global)
        });
    }
    out
}

/// Sets the used credits of `router`'s `port`, VC by VC.
fn set_used(view: &mut FakeView, router: usize, port: usize, used: &[u32]) {
    for (vc, &u) in used.iter().enumerate() {
        view.credits.insert((router, port, vc), view.depth - u);
    }
}

#[test]
fn ugal_booksim_decides_on_used_credits_only_with_bias_30() {
    let topo = df(2, 4, 2, 9, DragonflyArrangement::Absolute);
    let rf = DragonflyRouting::new(A::UgalBooksim, &topo, 3).unwrap();
    assert_eq!((rf.factor, rf.bias), (2.0, 30.0));
    // Router 1 (group 0) to router 30 (group 7) via router 17 (group 4).
    let (s, t, mid) = (1, 30, 17);
    let salt = term(&topo, s) + term(&topo, t);
    let (min_port, val_port) = (
        rf.port_to_router(s, t, salt),
        rf.port_to_router(s, mid, salt),
    );
    assert_ne!(min_port, val_port);
    let rf = build(A::UgalBooksim, &topo, 3);
    let nonmin = |rf: &dyn RoutingFunction, view: &FakeView| {
        booksim_walk(&topo, rf, view, s, t, mid).state.flags & NONMIN != 0
    };
    // used_nonmin = 5: minimal up to used_min = 2 * 5 + 30 = 40 inclusive.
    let mut view = FakeView::new(3, 64);
    set_used(&mut view, s, val_port, &[2, 0, 3]);
    set_used(&mut view, s, min_port, &[20, 10, 10]);
    assert!(!nonmin(&*rf, &view));
    // The output queue is not counted (`ugal_n` would go non-minimal here).
    view.queues.insert((s, min_port), 1000);
    assert!(!nonmin(&*rf, &view));
    set_used(&mut view, s, min_port, &[20, 10, 11]);
    assert!(nonmin(&*rf, &view));
    view.queues.clear();
    view.queues.insert((s, val_port), 1000);
    assert!(nonmin(&*rf, &view));
    // The non-minimal path: 1 -(global)-> 16 -(local)-> 17 -(local)-> 19 -(global)-> 30;
    // `ph` 0 up to the intermediate router 17, 1 after it, 2 from the global hop on.
    let w = booksim_walk(&topo, &*rf, &view, s, t, mid);
    let hops: Vec<_> = w.hops.iter().map(|h| (h.router, h.vc)).collect();
    assert_eq!(hops, [(1, 0), (16, 0), (17, 1), (19, 2)]);
    // The minimal path of an idle network: 1 -(local)-> 3 -(global)-> 28 -(local)-> 30.
    let w = booksim_walk(&topo, &*rf, &FakeView::new(3, 64), s, t, mid);
    let hops: Vec<_> = w.hops.iter().map(|h| (h.router, h.vc)).collect();
    assert_eq!(hops, [(1, 1), (3, 2), (28, 2)]);
    // factor and bias come from the configuration: 11 > 2 * 5 + 0.
    let mut view = FakeView::new(3, 64);
    set_used(&mut view, s, val_port, &[5]);
    set_used(&mut view, s, min_port, &[11]);
    let with = |factor: Option<f64>, bias: Option<f64>| {
        let c = cfg("ugal_booksim")
            .with("ugal_factor", factor)
            .with("ugal_bias", bias);
        build_routing(&c, &topo, 3).unwrap()
    };
    assert!(!nonmin(&*with(None, None), &view));
    assert!(nonmin(&*with(None, Some(0.0)), &view));
    assert!(!nonmin(&*with(None, Some(1.0)), &view));
    assert!(nonmin(&*with(Some(1.0), Some(5.0)), &view));
    assert!(!nonmin(&*with(Some(1.0), Some(6.0)), &view));
    let bad = cfg("ugal_booksim").with("ugal_bias", f64::NAN);
    let err = build_routing(&bad, &topo, 3).err().unwrap().to_string();
    assert!(err.starts_with("routing.ugal_bias:"), "{err}");
}

#[test]
fn ugal_booksim_intermediates_are_any_router_and_the_source_group_means_minimal() {
    let topo = df(2, 4, 2, 9, DragonflyArrangement::Absolute);
    let n = topo.num_routers();
    let rf = build(A::UgalBooksim, &topo, 3);
    let mut rng = RouteRng::seed_from_u64(5);
    // Inter- and intra-group pairs: every router is drawn, the source and destination groups'
    // too.
    for (s, t) in [(1, 30), (1, 2)] {
        let pkt = packet(&topo, term(&topo, s), term(&topo, t));
        let mut seen = HashSet::new();
        for _ in 0..3000 {
            let mut st = RouteState::default();
            rf.init_packet(&pkt, &mut st, &mut rng);
            assert_eq!(st.flags & (NONMIN | DRAWN), DRAWN);
            seen.insert(st.intermediate as usize);
        }
        assert_eq!(seen, (0..n).collect());
    }
    // `route` draws when `init_packet` was not called.
    let pkt = packet(&topo, term(&topo, 1), term(&topo, 30));
    let mut st = RouteState::default();
    let view = FakeView::new(3, 64);
    let ctx = RouteContext {
        router: 1,
        in_port: 0,
        in_vc: 0,
        congestion: &view,
    };
    let mut out = Vec::new();
    rf.route(&ctx, &pkt, &mut st, &mut rng, &mut out);
    assert!(st.flags & DRAWN != 0 && (st.intermediate as usize) < n);
    // Minimal port saturated: non-minimal iff the intermediate is outside the source group
    // and its port differs (equal ports cost the same).
    let dr = DragonflyRouting::new(A::UgalBooksim, &topo, 3).unwrap();
    let (s, t) = (1, 30);
    let salt = term(&topo, s) + term(&topo, t);
    let min_port = dr.port_to_router(s, t, salt);
    let mut busy = FakeView::new(3, 64);
    busy.congest(s, min_port, 64, 0);
    let mut groups = HashSet::new();
    for mid in 0..n {
        let w = booksim_walk(&topo, &*rf, &busy, s, t, mid);
        let want = mid / 4 != 0 && dr.port_to_router(s, mid, salt) != min_port;
        assert_eq!(
            w.state.flags & NONMIN != 0,
            want,
            "intermediate {mid}: {w:?}"
        );
        if want {
            assert!(w.hops.iter().any(|h| h.router == mid) || mid / 4 == t / 4);
            groups.insert(mid / 4);
        }
        assert_eq!(w.hops.iter().map(|h| h.vc).collect::<Vec<_>>(), {
            booksim_classes(&topo, &w, mid)
        });
    }
    // Groups 7 (the destination's) and 8 are reached through router 3 like the minimal path.
    assert_eq!(groups, (1..7).collect());
    // Same group: minimal whatever the congestion, class 2.
    let local = dr.port_to_router(1, 2, 0);
    let mut busy = FakeView::new(3, 64);
    busy.congest(1, local, 64, 0);
    for mid in 0..n {
        let w = booksim_walk(&topo, &*rf, &busy, 1, 2, mid);
        assert_eq!(
            (w.state.flags & NONMIN, w.hops.len(), w.hops[0].vc),
            (0, 1, 2)
        );
    }
}

#[test]
fn ugal_booksim_channel_dependencies_are_cyclic() {
    // Every router pair and every intermediate router, minimal (idle) and forced non-minimal
    // (minimal port saturated at the source). A cycle the search found, all on VC 0, over
    // groups 4, 5 and 0 (routers):
    //   18 -(global)-> 22 -(local)-> 20 -(global)-> 2 -(local)-> 1 -(global)-> 16 -(local)-> 18.
    // Each local hop is, for one packet, the last hop of its non-minimal leg (e.g. landed at 22
    // heading for intermediate 20) and, for another, its first hop from the source router on
    // its non-minimal leg (e.g. from 22 to 20, which holds the global link to group 0).
    let topo = df(2, 4, 2, 9, DragonflyArrangement::Absolute);
    let n = topo.num_routers();
    let vcs = 3;
    let rf = build(A::UgalBooksim, &topo, vcs);
    let mut deps: HashSet<(VcNode, VcNode)> = HashSet::new();
    let mut nonmin = 0;
    for s in 0..n {
        for t in (0..n).filter(|&t| t != s) {
            let mut busy = FakeView::new(vcs, 64);
            busy.congest(s, min_path(&topo, s, t)[0].1, 64, 0);
            for (view, mids) in [(&FakeView::new(vcs, 64), 0..1), (&busy, 0..n)] {
                for mid in mids {
                    let w = booksim_walk(&topo, &*rf, view, s, t, mid);
                    nonmin += usize::from(w.state.flags & NONMIN != 0);
                    assert!(w.hops.len() <= max_hops(A::UgalBooksim));
                    check_classes(&topo, A::UgalBooksim, vcs, &w);
                    let classes = booksim_classes(&topo, &w, mid);
                    assert_eq!(w.hops.iter().map(|h| h.vc).collect::<Vec<_>>(), classes);
                    add_deps(&topo, &w, &mut deps);
                }
            }
        }
    }
    assert!(nonmin > 0);
    let ring = [(18, 22), (22, 20), (20, 2), (2, 1), (1, 16), (16, 18)];
    let node = |(x, y): (usize, usize)| -> VcNode {
        let port = (0..topo.routers[x].ports.len())
            .find(|&p| matches!(topo.peer(x, p), Some(Endpoint::Router { router, .. }) if router == y))
            .unwrap();
        (topo.out_channel(x, port).unwrap(), 0)
    };
    for i in 0..ring.len() {
        let edge = (node(ring[i]), node(ring[(i + 1) % ring.len()]));
        assert!(
            deps.contains(&edge),
            "{:?} -> {:?}",
            ring[i],
            ring[(i + 1) % 6]
        );
    }
    let cycle = find_cycle(&deps).expect("ugal_booksim's dependency graph has a cycle");
    let hops: Vec<_> = cycle
        .iter()
        .map(|&(c, vc)| (topo.channel_ends(c), vc))
        .collect();
    // Classes never decrease along a path, so a cycle stays in one class: the class-0 VC.
    assert!(cycle.iter().all(|&(_, vc)| vc == 0), "{hops:?}");
    // VC 1 and 2 alone (minimal packets and the legs after the intermediate) are acyclic.
    let upper: HashSet<_> = deps.iter().filter(|(x, _)| x.1 > 0).copied().collect();
    assert_eq!(find_cycle(&upper), None);
}

#[test]
fn only_ugal_booksim_has_a_deadlock_caveat() {
    let topo = df(2, 4, 2, 9, DragonflyArrangement::Absolute);
    for alg in A::ALL {
        let caveat = build(alg, &topo, alg.min_vcs()).deadlock_caveat();
        assert_eq!(caveat.is_some(), alg == A::UgalBooksim, "{}", alg.name());
    }
    let min = build_routing(&min_cfg(GlobalVc::Destination), &topo, 2).unwrap();
    assert_eq!(min.deadlock_caveat(), None);
    let caveat = build(A::UgalBooksim, &topo, 3).deadlock_caveat().unwrap();
    assert!(caveat.contains("cyclic channel dependencies"), "{caveat}");
}
