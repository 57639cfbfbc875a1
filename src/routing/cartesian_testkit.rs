//! Test helpers shared by the mesh/torus and dragonfly routing tests: a fake congestion view, a
//! walker that follows `route()` / `on_forward()` hop by hop like the simulator does, and a
//! cycle check for channel-dependency graphs. (Test-only; the public deadlock checker lives
//! elsewhere and is deliberately not used here.)

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use rand::{Rng, SeedableRng};

use crate::routing::{
    Candidate, CongestionView, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction,
};
use crate::topology::model::{ChannelId, Endpoint, Topology};

/// A congestion view with configurable credits and output queues; everything else is idle
/// (all credits free, empty queues).
pub(crate) struct FakeView {
    pub num_vcs: usize,
    pub depth: u32,
    pub credits: HashMap<(usize, usize, usize), u32>,
    pub queues: HashMap<(usize, usize), u32>,
}

impl FakeView {
    pub(crate) fn new(num_vcs: usize, depth: u32) -> Self {
        FakeView {
            num_vcs,
            depth,
            credits: HashMap::new(),
            queues: HashMap::new(),
        }
    }

    /// Makes `router`'s `port` look congested: `used` credits taken on every VC and `queue`
    /// flits waiting for it.
    pub(crate) fn congest(&mut self, router: usize, port: usize, used: u32, queue: u32) {
        for vc in 0..self.num_vcs {
            self.credits
                .insert((router, port, vc), self.depth.saturating_sub(used));
        }
        self.queues.insert((router, port), queue);
    }
}

impl CongestionView for FakeView {
    fn num_vcs(&self) -> usize {
        self.num_vcs
    }
    fn vc_depth(&self) -> u32 {
        self.depth
    }
    fn credits(&self, router: usize, port: usize, vc: usize) -> u32 {
        *self.credits.get(&(router, port, vc)).unwrap_or(&self.depth)
    }
    fn output_vc_busy(&self, _router: usize, _port: usize, _vc: usize) -> bool {
        false
    }
    fn output_queue(&self, router: usize, port: usize) -> u32 {
        *self.queues.get(&(router, port)).unwrap_or(&0)
    }
    fn input_occupancy(&self, _router: usize, _port: usize, _vc: usize) -> u32 {
        0
    }
}

/// One network hop: the router, the output port taken and the VC granted on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Hop {
    pub router: usize,
    pub port: usize,
    pub vc: usize,
}

/// How the walker picks among the candidates: returns (candidate index, VC).
pub(crate) type Picker<'a> = dyn FnMut(&[Candidate], &mut RouteRng) -> (usize, usize) + 'a;

/// A picker that is a plain function.
pub(crate) type PickFn = fn(&[Candidate], &mut RouteRng) -> (usize, usize);

/// The VC allocator of an idle network: the first candidate, its lowest VC.
pub(crate) fn first_lowest(c: &[Candidate], _: &mut RouteRng) -> (usize, usize) {
    (0, c[0].vcs.start as usize)
}

/// The first candidate, its highest VC.
pub(crate) fn first_highest(c: &[Candidate], _: &mut RouteRng) -> (usize, usize) {
    (0, c[0].vcs.end as usize - 1)
}

/// The last candidate (e.g. the escape channel), its lowest VC.
pub(crate) fn last_lowest(c: &[Candidate], _: &mut RouteRng) -> (usize, usize) {
    (c.len() - 1, c[c.len() - 1].vcs.start as usize)
}

/// A random candidate and a random VC in its range.
pub(crate) fn random_pick(c: &[Candidate], rng: &mut RouteRng) -> (usize, usize) {
    let i = rng.random_range(0..c.len());
    (i, rng.random_range(c[i].vcs.iter()))
}

/// A delivered packet's path.
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    pub pkt: PacketInfo,
    /// Network hops in order (the ejection hop excluded).
    pub hops: Vec<Hop>,
    /// Routing state when the packet was ejected.
    pub state: RouteState,
    /// Routing state before each network hop was routed (after `route()` ran at that router).
    pub states: Vec<RouteState>,
}

pub(crate) use crate::routing::paths::packet;

/// Follows a packet from terminal `src` to terminal `dst` the way the simulator does: one
/// `route()` per router, the picked candidate granted, `on_forward()`, `hops` incremented per
/// network hop. `setup` may overwrite the state after `init_packet` (e.g. to fix a Valiant
/// intermediate). Checks the candidate contract on the way.
#[allow(clippy::too_many_arguments)]
pub(crate) fn walk(
    topo: &Topology,
    rf: &dyn RoutingFunction,
    view: &dyn CongestionView,
    src: usize,
    dst: usize,
    seed: u64,
    max_hops: usize,
    pick: &mut Picker,
    setup: &dyn Fn(&mut RouteState),
) -> Result<Walk, String> {
    let v = view.num_vcs();
    let pkt = packet(topo, src, dst);
    let mut rng = RouteRng::seed_from_u64(seed);
    let mut state = RouteState::default();
    rf.init_packet(&pkt, &mut state, &mut rng);
    setup(&mut state);
    let inj = rf.injection_vcs(&pkt, &state, v);
    if inj.is_empty() || inj.end as usize > v {
        return Err(format!("bad injection VCs {inj:?}"));
    }
    let t = &topo.terminals[src];
    let (mut router, mut in_port, mut in_vc) = (t.router, t.port, inj.start as usize);
    let mut hops = Vec::new();
    let mut states = Vec::new();
    let mut out = Vec::new();
    loop {
        let ctx = RouteContext {
            router,
            in_port,
            in_vc,
            congestion: view,
        };
        out.clear();
        rf.route(&ctx, &pkt, &mut state, &mut rng, &mut out);
        let n_hops = hops.len();
        let at = || format!("{src}->{dst} at router {router} after {n_hops} hops");
        if out.is_empty() {
            return Err(format!("{}: no candidate", at()));
        }
        for c in &out {
            if c.vcs.is_empty() || c.vcs.end as usize > v {
                return Err(format!("{}: bad VC range {c:?} with {v} VCs", at()));
            }
        }
        if router == pkt.dst_router as usize {
            let want = topo.terminals[dst].port;
            if out[0].port as usize != want || out[0].vcs.iter() != (0..v) {
                return Err(format!(
                    "{}: expected ejection on port {want}, got {out:?}",
                    at()
                ));
            }
            rf.on_forward(&ctx, &pkt, out[0], 0, &mut state);
            return Ok(Walk {
                pkt,
                hops,
                state,
                states,
            });
        }
        let (i, vc) = pick(&out, &mut rng);
        let chosen = out[i];
        assert!(chosen.vcs.contains(vc));
        let next = match topo.peer(router, chosen.port as usize) {
            Some(Endpoint::Router { router, port }) => (router, port),
            other => return Err(format!("{}: candidate {chosen:?} leads to {other:?}", at())),
        };
        states.push(state);
        rf.on_forward(&ctx, &pkt, chosen, vc, &mut state);
        hops.push(Hop {
            router,
            port: chosen.port as usize,
            vc,
        });
        if hops.len() > max_hops {
            return Err(format!("{}: more than {max_hops} hops: {hops:?}", at()));
        }
        state.hops += 1;
        (router, in_port, in_vc) = (next.0, next.1, vc);
    }
}

/// A (channel, VC) pair: a node of the channel-dependency graph.
pub(crate) type VcNode = (ChannelId, usize);

/// The dependencies between consecutive network hops of a walk.
pub(crate) fn add_deps(topo: &Topology, w: &Walk, deps: &mut HashSet<(VcNode, VcNode)>) {
    for pair in w.hops.windows(2) {
        let a = topo.out_channel(pair[0].router, pair[0].port).unwrap();
        let b = topo.out_channel(pair[1].router, pair[1].port).unwrap();
        deps.insert(((a, pair[0].vc), (b, pair[1].vc)));
    }
}

/// A cycle of the directed graph given by its edges, if there is one (iterative DFS).
pub(crate) fn find_cycle<N: Copy + Eq + Hash + Ord>(edges: &HashSet<(N, N)>) -> Option<Vec<N>> {
    let mut adj: HashMap<N, Vec<N>> = HashMap::new();
    for &(a, b) in edges {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    let mut nodes: Vec<N> = adj.keys().copied().collect();
    nodes.sort();
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut color: HashMap<N, u8> = nodes.iter().map(|&n| (n, 0)).collect();
    for &root in &nodes {
        if color[&root] != 0 {
            continue;
        }
        let mut stack: Vec<(N, usize)> = vec![(root, 0)];
        color.insert(root, 1);
        while let Some(&mut (n, ref mut i)) = stack.last_mut() {
            if let Some(&m) = adj[&n].get(*i) {
                *i += 1;
                match color[&m] {
                    0 => {
                        color.insert(m, 1);
                        stack.push((m, 0));
                    }
                    1 => {
                        let start = stack.iter().position(|&(x, _)| x == m).unwrap();
                        return Some(stack[start..].iter().map(|&(x, _)| x).collect());
                    }
                    _ => {}
                }
            } else {
                color.insert(n, 2);
                stack.pop();
            }
        }
    }
    None
}

#[test]
fn find_cycle_finds_cycles_only_when_present() {
    let acyclic: HashSet<(u32, u32)> = [(1, 2), (2, 3), (1, 3), (3, 4)].into_iter().collect();
    assert_eq!(find_cycle(&acyclic), None);
    let mut cyclic = acyclic.clone();
    cyclic.insert((4, 2));
    let c = find_cycle(&cyclic).unwrap();
    assert_eq!(c.len(), 3);
}
