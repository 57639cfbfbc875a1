//! `updown`: up*/down* routing (Autonet, Schroeder et al. 1991) for any connected topology,
//! deadlock-free with a single VC.
//!
//! A BFS from a root router gives every router a level; the direction of a link is "up" towards
//! the end with the smaller `(level, router id)`, so every link has exactly one up direction and
//! the up channels form an acyclic relation. A legal path takes zero or more up channels, then
//! zero or more down channels, never up after down. The channel dependency graph of legal paths
//! is acyclic (an up→up chain strictly decreases `(level, id)`, a down→down chain strictly
//! increases it, and no down→up dependency exists), so the routing is deadlock-free on any
//! number of VCs, all of which every packet may use.
//!
//! Routing follows shortest *legal* paths: per destination, a BFS over the states
//! `(router, phase)` (phase 0 = may still go up, 1 = has gone down) gives the legal distance;
//! at each router every port that keeps the packet on a shortest legal path is a candidate,
//! best first by the port's output queue (then by port number). The phase travels in
//! [`RouteState::phase`] and is set in `on_forward` when a down channel is granted.

use rayon::prelude::*;

use super::layered::check_table_size;
use super::paths::{PortGraph, UNREACHED, terminals_per_router};
use super::{Candidate, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction, VcRange};
use crate::error::{Error, Result};
use crate::topology::Topology;

const FAR: u16 = u16::MAX;

/// Direction of a router port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortDirection {
    /// Towards the root (smaller `(level, id)`).
    Up,
    Down,
    /// A terminal port, an unconnected port or a self-loop.
    None,
}

#[derive(Clone, Debug)]
pub(crate) struct UpDown {
    n: usize,
    // Only the tests read the root and the levels; routing needs the port directions.
    #[cfg(test)]
    root: usize,
    #[cfg(test)]
    level: Vec<u32>,
    graph: PortGraph,
    /// `port_dir[router][port]`.
    port_dir: Vec<Vec<PortDirection>>,
    /// `dist[(dst * n + router) * 2 + phase]`: legal hops to `dst`, or `FAR`.
    dist: Vec<u16>,
    ejection: super::Ejection,
}

/// The default root: least eccentricity, lowest id (unreachable routers count as infinitely
/// far).
pub(crate) fn default_root(graph: &PortGraph) -> usize {
    (0..graph.num_routers())
        .into_par_iter()
        .map(|r| {
            let (dist, _) = graph.bfs(r);
            (dist.into_iter().max().unwrap_or(0), r)
        })
        .min()
        .map_or(0, |(_, r)| r)
}

impl UpDown {
    /// Builds the tables around `root` (default: [`default_root`]). Errors if the root is out
    /// of range or routers with terminals are not all connected to it.
    pub(crate) fn new(topo: &Topology, root: Option<usize>) -> Result<Self> {
        check_table_size(topo, "updown")?;
        let n = topo.num_routers();
        let graph = PortGraph::new(topo);
        let root = match root {
            Some(r) if r >= n => {
                return Err(Error::field(
                    "routing.root",
                    format!("router {r} does not exist (the topology has {n} routers)"),
                ));
            }
            Some(r) => r,
            None => default_root(&graph),
        };
        let (level, _) = graph.bfs(root);
        let terms = terminals_per_router(topo);
        if let Some(r) = (0..n).find(|&r| terms[r] > 0 && level[r] == UNREACHED) {
            return Err(Error::field(
                "routing.algorithm",
                format!("updown: router {r} has terminals but is not connected to root {root}"),
            ));
        }
        let key = |r: usize| (level[r], r);
        let mut port_dir = Vec::with_capacity(n);
        for (r, router) in topo.routers.iter().enumerate() {
            let mut dirs = vec![PortDirection::None; router.ports.len()];
            for h in graph.out(r) {
                dirs[h.port as usize] = if key(h.peer as usize) < key(r) {
                    PortDirection::Up
                } else {
                    PortDirection::Down
                };
            }
            port_dir.push(dirs);
        }
        let mut dist = vec![FAR; 2 * n * n];
        dist.par_chunks_mut(2 * n)
            .enumerate()
            .for_each(|(d, row)| legal_distances(&graph, &port_dir, d, row));
        Ok(UpDown {
            n,
            #[cfg(test)]
            root,
            #[cfg(test)]
            level,
            graph,
            port_dir,
            dist,
            ejection: super::Ejection::new(topo),
        })
    }

    #[cfg(test)]
    pub(crate) fn root(&self) -> usize {
        self.root
    }

    /// BFS level of every router from the root (`u32::MAX` if unreachable).
    #[cfg(test)]
    pub(crate) fn levels(&self) -> &[u32] {
        &self.level
    }

    pub(crate) fn port_direction(&self, router: usize, port: usize) -> PortDirection {
        self.port_dir[router]
            .get(port)
            .copied()
            .unwrap_or(PortDirection::None)
    }

    /// Hops of the shortest legal path from `router` in `phase` (0 = up allowed) to `dst`.
    #[cfg(test)]
    pub(crate) fn legal_distance(&self, router: usize, phase: u8, dst: usize) -> Option<u32> {
        let d = self.dist[(dst * self.n + router) * 2 + usize::from(phase.min(1))];
        (d != FAR).then_some(u32::from(d))
    }
}

/// Backward BFS over `(router, phase)` states from `dst`, filling `row[router * 2 + phase]`.
fn legal_distances(graph: &PortGraph, dirs: &[Vec<PortDirection>], dst: usize, row: &mut [u16]) {
    let mut queue: Vec<(u32, u8)> = vec![(dst as u32, 0), (dst as u32, 1)];
    row[dst * 2] = 0;
    row[dst * 2 + 1] = 0;
    let mut head = 0;
    while head < queue.len() {
        let (v, q) = queue[head];
        head += 1;
        let dv = row[v as usize * 2 + usize::from(q)];
        for h in graph.out(v as usize) {
            let u = h.peer as usize;
            // The channel u -> v arrives on v's port h.port from u's port h.peer_port.
            let preds: &[u8] = match (dirs[u][h.peer_port as usize], q) {
                // Up u -> v keeps phase 0.
                (PortDirection::Up, 0) => &[0],
                // Down u -> v enters phase 1 from either phase.
                (PortDirection::Down, 1) => &[0, 1],
                _ => &[],
            };
            for &p in preds {
                let slot = &mut row[u * 2 + usize::from(p)];
                if *slot == FAR {
                    *slot = dv + 1;
                    queue.push((u as u32, p));
                }
            }
        }
    }
}

impl RoutingFunction for UpDown {
    fn name(&self) -> String {
        "updown".into()
    }

    fn min_vcs(&self) -> usize {
        1
    }

    fn init_packet(&self, _pkt: &PacketInfo, state: &mut RouteState, _rng: &mut RouteRng) {
        state.phase = 0;
    }

    fn route(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        _rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let vcs = VcRange::new(0, ctx.congestion.num_vcs());
        let (u, d) = (ctx.router, pkt.dst_router as usize);
        if self
            .ejection
            .at_destination(u, pkt, ctx.congestion.num_vcs(), out)
        {
            return;
        }
        let phase = usize::from(state.phase.min(1));
        let base = d * self.n * 2;
        let here = self.dist[base + u * 2 + phase];
        if here == FAR {
            return;
        }
        let start = out.len();
        for h in self.graph.out(u) {
            let next_phase = match (self.port_dir[u][h.port as usize], phase) {
                (PortDirection::Up, 0) => 0,
                (PortDirection::Down, _) => 1,
                _ => continue,
            };
            let there = self.dist[base + h.peer as usize * 2 + next_phase];
            if there != FAR && there + 1 == here {
                out.push(Candidate { port: h.port, vcs });
            }
        }
        out[start..].sort_by_key(|c| (ctx.congestion.output_queue(u, c.port as usize), c.port));
    }

    fn on_forward(
        &self,
        ctx: &RouteContext,
        _pkt: &PacketInfo,
        chosen: Candidate,
        _vc: usize,
        state: &mut RouteState,
    ) {
        if self.port_direction(ctx.router, chosen.port as usize) == PortDirection::Down {
            state.phase = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::routing::build_routing;
    use crate::routing::config::RoutingConfig;
    use crate::routing::paths::all_pairs_dependencies;
    use crate::routing::paths::fixtures::{topologies, walk_all};
    use crate::topology::LinkParams;
    use crate::topology::generators::cartesian;
    use crate::topology::metrics::distances_from;

    /// Walks all pairs: delivered on a shortest legal path, never up after down; the CDG of
    /// first choices and the CDG of every candidate and VC are acyclic.
    fn check_updown(name: &str, topo: &Topology, num_vcs: usize) -> (usize, f64, f64) {
        let r = UpDown::new(topo, None).unwrap();
        let g = topo.router_graph();
        let dist: Vec<Vec<Option<u32>>> = (0..topo.num_routers())
            .map(|s| distances_from(&g, s))
            .collect();
        let (mut total, mut minimal, mut pairs) = (0u64, 0u64, 0u64);
        let graph = walk_all(&r, topo, num_vcs, |src, dst, hops| {
            let (s, d) = (topo.terminals[src].router, topo.terminals[dst].router);
            let network = &hops[..hops.len() - 1];
            let mut gone_down = false;
            for &(router, port, _) in network {
                match r.port_direction(router, port) {
                    PortDirection::Up => assert!(!gone_down, "{name}: {s}->{d} up after down"),
                    PortDirection::Down => gone_down = true,
                    PortDirection::None => panic!("{name}: non-network port {port}"),
                }
            }
            let len = network.len() as u32;
            assert_eq!(Some(len), r.legal_distance(s, 0, d), "{name}: {s}->{d}");
            assert!(len >= dist[s][d].unwrap());
            total += u64::from(len);
            minimal += u64::from(dist[s][d].unwrap());
            pairs += 1;
        });
        assert_eq!(graph.find_cycle(), None, "{name}: first-choice CDG");
        let full = all_pairs_dependencies(&r, topo, num_vcs, topo.num_routers(), true).unwrap();
        assert_eq!(full.find_cycle(), None, "{name}: full CDG, {num_vcs} VCs");
        (
            r.root(),
            total as f64 / pairs as f64,
            minimal as f64 / pairs as f64,
        )
    }

    #[test]
    fn updown_is_legal_and_deadlock_free_on_test_topologies() {
        for (name, topo) in topologies() {
            let (root, avg, min) = check_updown(name, &topo, 1);
            println!("updown on {name}: root {root}, average hops {avg:.3} (minimal {min:.3})");
            check_updown(name, &topo, 2);
        }
    }

    #[test]
    fn root_choice_and_errors() {
        let lp = LinkParams::default();
        let mesh = cartesian(&[3, 3], false, 1, &lp).unwrap();
        assert_eq!(UpDown::new(&mesh, None).unwrap().root(), 4, "mesh centre");
        let torus = cartesian(&[4, 4], true, 1, &lp).unwrap();
        assert_eq!(
            UpDown::new(&torus, None).unwrap().root(),
            0,
            "all equal: lowest id"
        );
        let r = UpDown::new(&torus, Some(5)).unwrap();
        assert_eq!((r.root(), r.levels()[5], r.levels()[0]), (5, 0, 2));
        let cfg = RoutingConfig::new("updown").with("root", 16);
        let err = build_routing(&cfg, &torus, 1).err().unwrap().to_string();
        assert!(err.starts_with("routing.root:"), "{err}");
        let ok = build_routing(&RoutingConfig::new("updown"), &torus, 1).unwrap();
        assert_eq!((ok.name().as_str(), ok.min_vcs()), ("updown", 1));
    }

    #[test]
    fn up_links_point_to_the_root_and_candidates_are_adaptive() {
        let torus = cartesian(&[4, 4], true, 1, &LinkParams::default()).unwrap();
        let r = UpDown::new(&torus, None).unwrap();
        let key = |x: usize| (r.levels()[x], x);
        for u in 0..torus.num_routers() {
            for h in r.graph.out(u) {
                let up = key(h.peer as usize) < key(u);
                assert_eq!(
                    r.port_direction(u, h.port as usize) == PortDirection::Up,
                    up
                );
            }
        }
        // From router 5 (level 2) to router 0 (the root) there are two shortest up paths.
        let net = crate::routing::paths::FreeNetwork {
            num_vcs: 2,
            vc_depth: 4,
        };
        let ctx = RouteContext {
            router: 5,
            in_port: 0,
            in_vc: 0,
            congestion: &net,
        };
        let pkt = crate::routing::paths::packet(&torus, 5, 0);
        let mut out = Vec::new();
        let mut rng = <RouteRng as rand::SeedableRng>::seed_from_u64(0);
        r.route(&ctx, &pkt, &mut RouteState::default(), &mut rng, &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|c| c.vcs == VcRange::new(0, 2)));
    }
}
