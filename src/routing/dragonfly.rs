//! Dragonfly routing (Kim et al. 2008; baselines of the Q-adaptive paper, docs/sources.md §2): MIN,
//! VALg, VALn, UGALg, UGALn and PAR, plus BookSim2's UGAL (`ugal_booksim`).
//!
//! Router id = `group * a + r`; ports: terminals `0..p`, local ports `p..p+a-1` to the other
//! routers of the group in ascending order, global ports from `p + a - 1` on. The local ports
//! are checked against that rule; the global links are read from the topology (`peer`) into
//! per-group-pair tables at construction, so any arrangement (absolute, relative, circulant,
//! several links per group pair) works.
//!
//! Routing state: `phase` 0 = towards the intermediate, 1 = towards the destination;
//! `intermediate` = Valiant router (VALn, UGALn, PAR, `ugal_booksim`); `aux` = Valiant group
//! (VALg, UGALg); `flags` = [`NONMIN`], [`DECIDED`], [`REEVALUATED`], [`DRAWN`] and the number
//! of global hops taken (bits 4..7). VC classes and the deadlock argument are in `docs/routing.md`.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::config::RoutingConfig;
use super::{
    Candidate, CongestionView, ForwardCounter, NO_ROUTER, PacketInfo, RouteContext, RouteRng,
    RouteState, RoutingFunction, VcRange,
};
use crate::error::{Error, Result};
use crate::topology::{Endpoint, Shape, Topology};

#[cfg(test)]
#[path = "dragonfly_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "dragonfly_booksim_tests.rs"]
mod booksim_tests;

/// The packet follows a Valiant (non-minimal) route.
pub(crate) const NONMIN: u8 = 1;
/// UGAL/PAR: the source router has made its minimal / non-minimal decision.
pub(crate) const DECIDED: u8 = 2;
/// PAR: the decision was re-evaluated at the second source-group router.
pub(crate) const REEVALUATED: u8 = 4;
/// The intermediate was drawn (by `init_packet`, or by `route` if that was not called).
pub(crate) const DRAWN: u8 = 8;
const GH_SHIFT: u8 = 4;
/// The flags' bits that count global hops (from `GH_SHIFT` up).
const GLOBAL_HOPS: u8 = !((1 << GH_SHIFT) - 1);

/// `min`: the VC class of the global hop (`routing.global_vc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GlobalVc {
    /// The source group's class 0 (the paper's tables, docs/sources.md §2).
    #[default]
    Source,
    /// The destination group's class 1 (BookSim2's `min_dragonflynew`).
    Destination,
}

/// The dragonfly algorithms of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DragonflyAlgorithm {
    Min,
    ValG,
    ValN,
    UgalG,
    UgalN,
    Par,
    /// BookSim2's `ugal_dragonflynew`: not guaranteed deadlock-free (`deadlock_caveat`).
    UgalBooksim,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Intermediate {
    None,
    Group,
    Router,
}

impl DragonflyAlgorithm {
    pub(crate) const ALL: [DragonflyAlgorithm; 7] = [
        DragonflyAlgorithm::Min,
        DragonflyAlgorithm::ValG,
        DragonflyAlgorithm::ValN,
        DragonflyAlgorithm::UgalG,
        DragonflyAlgorithm::UgalN,
        DragonflyAlgorithm::Par,
        DragonflyAlgorithm::UgalBooksim,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            DragonflyAlgorithm::Min => "min",
            DragonflyAlgorithm::ValG => "val_g",
            DragonflyAlgorithm::ValN => "val_n",
            DragonflyAlgorithm::UgalG => "ugal_g",
            DragonflyAlgorithm::UgalN => "ugal_n",
            DragonflyAlgorithm::Par => "par",
            DragonflyAlgorithm::UgalBooksim => "ugal_booksim",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// VC classes (= VCs per channel needed), docs/sources.md §2.
    pub(crate) fn min_vcs(self) -> usize {
        match self {
            DragonflyAlgorithm::Min => 2,
            DragonflyAlgorithm::ValG
            | DragonflyAlgorithm::UgalG
            | DragonflyAlgorithm::UgalBooksim => 3,
            DragonflyAlgorithm::ValN | DragonflyAlgorithm::UgalN => 4,
            DragonflyAlgorithm::Par => 5,
        }
    }

    fn intermediate(self) -> Intermediate {
        match self {
            DragonflyAlgorithm::Min => Intermediate::None,
            DragonflyAlgorithm::ValG | DragonflyAlgorithm::UgalG => Intermediate::Group,
            _ => Intermediate::Router,
        }
    }

    fn adaptive(self) -> bool {
        matches!(
            self,
            DragonflyAlgorithm::UgalG
                | DragonflyAlgorithm::UgalN
                | DragonflyAlgorithm::Par
                | DragonflyAlgorithm::UgalBooksim
        )
    }

    /// `routing.ugal_bias` when not given: BookSim2's `adaptive_threshold` for its UGAL.
    fn default_bias(self) -> f64 {
        if self == DragonflyAlgorithm::UgalBooksim {
            30.0
        } else {
            0.0
        }
    }
}

/// Parameters of `min`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MinParams {
    /// The VC class of the global hop (`source`, default, or `destination` as BookSim2).
    pub global_vc: Option<GlobalVc>,
}

/// Parameters of `val_g` and `val_n` (none).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ValiantParams {}

/// Parameters of `ugal_g`, `ugal_n`, `par` and `ugal_booksim`: take the non-minimal path iff
/// `cost_min > factor * cost_nonmin + bias` (docs/sources.md §2: factor 2, bias 0;
/// `ugal_booksim`: bias 30).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UgalParams {
    pub ugal_factor: Option<f64>,
    pub ugal_bias: Option<f64>,
    /// When the minimal and the non-minimal path leave through the same port: compare the
    /// whole port with itself (`port`, the default: the minimal path wins) or the VCs each
    /// path would take there (`path_vcs`, the Q-adaptive authors' Merlin code; preset
    /// `merlin`).
    pub ugal_same_port: Option<SamePort>,
    /// `ugal_g`, `ugal_n`, `par`: the VC classes of the source-group hops: as every path's
    /// first leg (`first`, the default), or the Q-adaptive authors' Merlin code's (`merlin`:
    /// UGALg's minimal path on VCs 1 then 2, UGALn's on 2 then 3; PAR's minimal path on 0,
    /// then 3 for its global hop, then 4, a non-minimal one on 1 in the source group; preset
    /// `merlin`). Classes never decrease along a path either way.
    pub ugal_vcs: Option<UgalVcs>,
}

/// See `UgalParams::ugal_vcs`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum UgalVcs {
    #[default]
    First,
    Merlin,
}

/// See `UgalParams::ugal_same_port`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SamePort {
    #[default]
    Port,
    PathVcs,
}

/// Builds `min`, `val_g`, `val_n`, `ugal_g`, `ugal_n`, `par` or `ugal_booksim` (registry:
/// `crate::registry::routing`).
pub fn build(
    cfg: &RoutingConfig,
    topo: &Topology,
    num_vcs: usize,
) -> Result<Box<dyn RoutingFunction>> {
    let algorithm = DragonflyAlgorithm::from_name(&cfg.algorithm)
        .ok_or_else(|| cfg.not_in_family("dragonfly"))?;
    let (mut ugal, mut global_vc) = (UgalParams::default(), None);
    if algorithm.adaptive() {
        ugal = cfg.read_params()?;
    } else if algorithm == DragonflyAlgorithm::Min {
        global_vc = cfg.read_params::<MinParams>()?.global_vc;
    } else {
        cfg.read_params::<ValiantParams>()?;
    }
    let factor = ugal.ugal_factor.unwrap_or(2.0);
    if !(factor.is_finite() && factor >= 0.0) {
        return Err(Error::field(
            "routing.ugal_factor",
            format!("must be a finite number >= 0 (got {factor})"),
        ));
    }
    let bias = ugal.ugal_bias.unwrap_or(algorithm.default_bias());
    if !bias.is_finite() {
        return Err(Error::field(
            "routing.ugal_bias",
            format!("must be a finite number (got {bias})"),
        ));
    }
    let mut rf = DragonflyRouting::new(algorithm, topo, num_vcs)?;
    rf.factor = factor;
    rf.bias = bias;
    rf.same_port = ugal.ugal_same_port.unwrap_or_default();
    rf.ugal_vcs = ugal.ugal_vcs.unwrap_or_default();
    rf.global_vc = global_vc.unwrap_or_default();
    Ok(Box::new(rf))
}

/// One global link leaving a group: the router holding it, its port and the router it lands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GlobalLink {
    router: u32,
    port: u16,
    to: u32,
}

/// A dragonfly routing function with its lookup tables.
#[derive(Clone, Debug)]
pub(crate) struct DragonflyRouting {
    algorithm: DragonflyAlgorithm,
    pub(crate) p: usize,
    pub(crate) a: usize,
    pub(crate) g: usize,
    num_vcs: usize,
    /// UGAL/PAR: non-minimal iff `cost_min > factor * cost_nonmin + bias`.
    factor: f64,
    bias: f64,
    same_port: SamePort,
    ugal_vcs: UgalVcs,
    /// `min`: the class of the global hop.
    global_vc: GlobalVc,
    /// First global port (`p + a - 1`).
    pub(crate) first_global: usize,
    /// `links[from_group * g + to_group]`: the global links between the two groups.
    links: Vec<Vec<GlobalLink>>,
    /// Ejection port of every terminal.
    pub(crate) ejection: super::Ejection,
    // Lookup tables of the hot path (route computation runs at every router a packet meets).
    /// Group and position in the group of every router.
    group_of: Vec<u32>,
    pos_of: Vec<u32>,
    /// `sole_link[from_group * g + to_group]`: the global link between the two groups when
    /// they share exactly one (then the first port towards `to_group` depends on nothing
    /// else), else [`SoleLink::NONE`]. Per pair of groups rather than per router and group:
    /// the per-router table (532 KB at 16,512 nodes) missed the cache on most hops, this one
    /// is `a` times smaller.
    sole_link: Vec<SoleLink>,
    /// The VCs of each VC class.
    blocks: Vec<VcRange>,
}

/// A group's only global link to another group: the position in the group of the router
/// that holds it, and its port there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SoleLink {
    pos: u16,
    port: u16,
}

impl SoleLink {
    /// Marks a pair of groups that needs the general search (none or several links).
    const NONE: SoleLink = SoleLink {
        pos: u16::MAX,
        port: u16::MAX,
    };
}

impl DragonflyRouting {
    /// Reads the global-link tables from `topo` and checks the local port numbering.
    pub(crate) fn new(
        algorithm: DragonflyAlgorithm,
        topo: &Topology,
        num_vcs: usize,
    ) -> Result<Self> {
        Self::with_name(algorithm, algorithm.name(), topo, num_vcs)
    }

    /// As [`DragonflyRouting::new`], with errors naming routing `name` (for algorithms built
    /// on these tables, e.g. Q-adaptive).
    pub(crate) fn with_name(
        algorithm: DragonflyAlgorithm,
        name: &str,
        topo: &Topology,
        num_vcs: usize,
    ) -> Result<Self> {
        let shape_err = |reason: String| {
            Error::field(
                "routing.algorithm",
                format!(
                    "`{name}` routes dragonflies only; topology `{}` {reason}",
                    topo.name
                ),
            )
        };
        let &Shape::Dragonfly { p, a, g, .. } = &topo.shape else {
            return Err(shape_err("is not a dragonfly".into()));
        };
        if num_vcs > usize::from(u8::MAX) {
            return Err(Error::field(
                "simulation.num_vcs",
                format!("routing `{name}` supports at most 255 VCs per channel (got {num_vcs})"),
            ));
        }
        if a == 0 || g < 2 || topo.num_routers() != a * g {
            return Err(shape_err(format!(
                "has {} routers, not a = {a} times g = {g}",
                topo.num_routers()
            )));
        }
        let first_global = p + a - 1;
        let mut links = vec![Vec::new(); g * g];
        for router in 0..a * g {
            let (grp, r) = (router / a, router % a);
            let ports = topo.routers[router].ports.len();
            if ports < first_global {
                return Err(shape_err(format!(
                    "router {router} has {ports} ports, fewer than p + a - 1 = {first_global}"
                )));
            }
            for port in 0..ports {
                let peer = match topo.peer(router, port) {
                    Some(Endpoint::Router { router, .. }) => Some(router),
                    Some(Endpoint::Terminal { .. }) if port < p => continue,
                    Some(Endpoint::Terminal { .. }) => {
                        return Err(shape_err(format!(
                            "has a terminal on network port {port} of router {router}"
                        )));
                    }
                    None => None,
                };
                if port < p {
                    if peer.is_some() {
                        return Err(shape_err(format!(
                            "has a router link on terminal port {port} of router {router}"
                        )));
                    }
                } else if port < first_global {
                    let other = port - p;
                    let other = if other < r { other } else { other + 1 };
                    if peer != Some(grp * a + other) {
                        return Err(shape_err(format!(
                            "does not follow the dragonfly local port numbering at router \
                             {router} port {port}"
                        )));
                    }
                } else if let Some(to) = peer {
                    if to / a == grp {
                        return Err(shape_err(format!(
                            "has a link inside group {grp} on global port {port} of router {router}"
                        )));
                    }
                    links[grp * g + to / a].push(GlobalLink {
                        router: router as u32,
                        port: port as u16,
                        to: to as u32,
                    });
                }
            }
        }
        for from in 0..g {
            for to in (0..g).filter(|&t| t != from) {
                if links[from * g + to].is_empty() {
                    return Err(shape_err(format!(
                        "has no global link from group {from} to group {to}"
                    )));
                }
            }
        }
        if topo.terminals.iter().any(|t| t.port >= p) {
            return Err(shape_err("has terminals on network ports".into()));
        }
        let n = algorithm.min_vcs();
        let mut rf = DragonflyRouting {
            algorithm,
            p,
            a,
            g,
            num_vcs,
            factor: 2.0,
            same_port: SamePort::Port,
            ugal_vcs: UgalVcs::First,
            bias: algorithm.default_bias(),
            global_vc: GlobalVc::Source,
            first_global,
            links,
            ejection: super::Ejection::new(topo),
            group_of: (0..a * g).map(|r| (r / a) as u32).collect(),
            pos_of: (0..a * g).map(|r| (r % a) as u32).collect(),
            sole_link: Vec::new(),
            blocks: (0..n)
                .map(|c| VcRange::new(c * num_vcs / n, (c + 1) * num_vcs / n))
                .collect(),
        };
        rf.sole_link = (0..g * g)
            .map(|pair| match rf.links[pair].as_slice() {
                [link] if pair / g != pair % g => SoleLink {
                    pos: rf.pos_of[link.router as usize] as u16,
                    port: link.port,
                },
                _ => SoleLink::NONE,
            })
            .collect();
        Ok(rf)
    }

    pub(crate) fn group(&self, router: usize) -> usize {
        self.group_of[router] as usize
    }

    /// Whether `cur` itself holds a global link to group `t`.
    pub(crate) fn has_link_to(&self, cur: usize, t: usize) -> bool {
        self.links[self.group(cur) * self.g + t]
            .iter()
            .any(|l| l.router as usize == cur)
    }

    /// Local port of `from` leading to `to` (same group, different routers).
    fn local_port(&self, from: usize, to: usize) -> usize {
        self.local_port_at(self.pos_of[from] as usize, self.pos_of[to] as usize)
    }

    /// Local port of the router at position `from` of a group leading to position `to`.
    fn local_port_at(&self, from: usize, to: usize) -> usize {
        self.p + if to < from { to } else { to - 1 }
    }

    /// The first port from `cur` towards group `t` (not `cur`'s) when the two groups share
    /// exactly one global link.
    #[inline]
    fn sole_exit_port(&self, cur: usize, t: usize) -> Option<usize> {
        let link = self.sole_link[self.group(cur) * self.g + t];
        if link == SoleLink::NONE {
            return None;
        }
        let pos = self.pos_of[cur] as usize;
        Some(if usize::from(link.pos) == pos {
            usize::from(link.port)
        } else {
            self.local_port_at(pos, usize::from(link.pos))
        })
    }

    /// The global link from `cur`'s group to group `t` that gives the fewest hops from `cur`
    /// (to `dst` if given, else to any router of `t`); ties rotate by `salt`.
    fn exit_link(&self, cur: usize, t: usize, dst: Option<usize>, salt: usize) -> GlobalLink {
        let list = &self.links[self.group(cur) * self.g + t];
        let n = list.len();
        let mut best = (usize::MAX, list[0]);
        for i in 0..n {
            let l = list[(i + salt) % n];
            let cost = usize::from(l.router as usize != cur)
                + dst.map_or(0, |d| usize::from(l.to as usize != d));
            if cost < best.0 {
                best = (cost, l);
            }
        }
        best.1
    }

    fn port_via(&self, cur: usize, link: GlobalLink) -> usize {
        if link.router as usize == cur {
            link.port as usize
        } else {
            self.local_port(cur, link.router as usize)
        }
    }

    /// First port of the minimal (local, global, local) route from `cur` to router `target`.
    pub(crate) fn port_to_router(&self, cur: usize, target: usize, salt: usize) -> usize {
        let t = self.group(target);
        if t == self.group(cur) {
            self.local_port(cur, target)
        } else {
            match self.sole_exit_port(cur, t) {
                None => self.exit_search(cur, t, Some(target), salt),
                Some(port) => port,
            }
        }
    }

    /// First port of the best exit link (see `exit_link`) when the groups share more than one.
    #[cold]
    fn exit_search(&self, cur: usize, t: usize, dst: Option<usize>, salt: usize) -> usize {
        self.port_via(cur, self.exit_link(cur, t, dst, salt))
    }

    /// First port of the minimal route from `cur` into group `t` (not `cur`'s group).
    fn port_to_group(&self, cur: usize, t: usize, salt: usize) -> usize {
        match self.sole_exit_port(cur, t) {
            None => self.exit_search(cur, t, None, salt),
            Some(port) => port,
        }
    }

    fn global_hops(state: &RouteState) -> usize {
        usize::from(state.flags >> GH_SHIFT)
    }

    /// The intermediate group, if the packet has an intermediate.
    fn intermediate_group(&self, state: &RouteState) -> Option<usize> {
        match self.algorithm.intermediate() {
            Intermediate::None => None,
            Intermediate::Group => (state.aux != NO_ROUTER).then_some(state.aux as usize),
            Intermediate::Router => {
                (state.intermediate != NO_ROUTER).then(|| self.group(state.intermediate as usize))
            }
        }
    }

    fn reached_intermediate(&self, cur: usize, state: &RouteState) -> bool {
        match self.algorithm.intermediate() {
            Intermediate::Router => cur == state.intermediate as usize,
            _ => Some(self.group(cur)) == self.intermediate_group(state),
        }
    }

    fn port_to_intermediate(&self, cur: usize, state: &RouteState, salt: usize) -> usize {
        match self.algorithm.intermediate() {
            Intermediate::Router => self.port_to_router(cur, state.intermediate as usize, salt),
            _ => self.port_to_group(cur, state.aux as usize, salt),
        }
    }

    /// Draws the Valiant intermediate: a group (VALg, UGALg) or a router (VALn, UGALn, PAR),
    /// uniform over the groups other than the source and destination groups. With no such
    /// group the packet is routed minimally. `ugal_booksim`: a router uniform over all routers.
    fn draw(&self, pkt: &PacketInfo, state: &mut RouteState, rng: &mut RouteRng) {
        state.flags |= DRAWN;
        state.aux = NO_ROUTER;
        state.intermediate = NO_ROUTER;
        let kind = self.algorithm.intermediate();
        if kind == Intermediate::None {
            return;
        }
        if self.algorithm == DragonflyAlgorithm::UgalBooksim {
            // BookSim2 draws a node anywhere; every router has the same number of nodes.
            state.intermediate = rng.random_range(0..self.a * self.g) as u32;
            state.phase = 0;
            return;
        }
        let (gs, gd) = (
            self.group(pkt.src_router as usize),
            self.group(pkt.dst_router as usize),
        );
        let (lo, hi) = (gs.min(gd), gs.max(gd));
        let eligible = self.g - 1 - usize::from(gs != gd);
        if eligible == 0 {
            return;
        }
        let mut grp = rng.random_range(0..eligible);
        if grp >= lo {
            grp += 1;
        }
        if hi != lo && grp >= hi {
            grp += 1;
        }
        match kind {
            Intermediate::Group => state.aux = grp as u32,
            _ => state.intermediate = (grp * self.a + rng.random_range(0..self.a)) as u32,
        }
        state.phase = 0;
        if !self.algorithm.adaptive() {
            state.flags |= NONMIN;
        }
    }

    /// The used credits of all the VCs of a port (BookSim2's `GetUsedCredit`).
    fn used(view: &dyn CongestionView, router: usize, port: usize) -> u64 {
        let depth = view.vc_depth();
        (0..view.num_vcs())
            .map(|vc| u64::from(depth.saturating_sub(view.credits(router, port, vc))))
            .sum()
    }

    /// Congestion cost of a port: its output queue plus the used credits of all its VCs
    /// (`ugal_booksim`: the used credits only, as BookSim2).
    fn cost(&self, view: &dyn CongestionView, router: usize, port: usize) -> f64 {
        let queue = match self.algorithm {
            DragonflyAlgorithm::UgalBooksim => 0,
            _ => u64::from(view.output_queue(router, port)),
        };
        (queue + Self::used(view, router, port)) as f64
    }

    /// The cost of the VCs of class `class` of a port: their output buffers (an
    /// input-output-queued router's) plus their used credits.
    fn cost_of_class(
        &self,
        view: &dyn CongestionView,
        router: usize,
        port: usize,
        class: usize,
    ) -> f64 {
        let depth = view.vc_depth();
        self.block(class)
            .iter()
            .map(|vc| {
                u64::from(view.output_queue_vc(router, port, vc))
                    + u64::from(depth.saturating_sub(view.credits(router, port, vc)))
            })
            .sum::<u64>() as f64
    }

    /// UGAL: non-minimal iff `cost(min port) > factor * cost(Valiant port) + bias`.
    fn decide(&self, ctx: &RouteContext, pkt: &PacketInfo, state: &mut RouteState, salt: usize) {
        let cur = ctx.router;
        let Some(mid_group) = self.intermediate_group(state) else {
            return;
        };
        if self.reached_intermediate(cur, state) {
            return;
        }
        // BookSim2's UGAL: minimal within a group, and via an intermediate of the own group.
        if self.algorithm == DragonflyAlgorithm::UgalBooksim
            && (self.group(pkt.dst_router as usize) == self.group(cur)
                || mid_group == self.group(cur))
        {
            return;
        }
        let min_port = self.port_to_router(cur, pkt.dst_router as usize, salt);
        let val_port = self.port_to_intermediate(cur, state, salt);
        let (cost_min, cost_val) = if min_port == val_port && self.same_port == SamePort::PathVcs {
            let mut nonmin = *state;
            nonmin.flags |= NONMIN;
            nonmin.phase = 0;
            (
                self.cost_of_class(
                    ctx.congestion,
                    cur,
                    min_port,
                    self.class(pkt, state, min_port),
                ),
                self.cost_of_class(
                    ctx.congestion,
                    cur,
                    val_port,
                    self.class(pkt, &nonmin, val_port),
                ),
            )
        } else {
            (
                self.cost(ctx.congestion, cur, min_port),
                self.cost(ctx.congestion, cur, val_port),
            )
        };
        if cost_min > self.factor * cost_val + self.bias {
            state.flags |= NONMIN;
            state.phase = 0;
        }
    }

    /// The VC class of the next hop, through `port` (see `docs/routing.md`): it never
    /// decreases along a path and strictly increases at every global hop (except `min` with
    /// `global_vc = destination` and `ugal_booksim`, whose global hop may take the higher class
    /// itself).
    fn class(&self, pkt: &PacketInfo, state: &RouteState, port: usize) -> usize {
        let gh = Self::global_hops(state);
        let nonmin = state.flags & NONMIN != 0;
        let phase = usize::from(state.phase.min(1));
        // Decided here, at the router that takes the global hop, since `on_forward` counts it
        // only after the VC is granted.
        let global = port >= self.first_global;
        match self.algorithm {
            DragonflyAlgorithm::Min => self.min_class(state, port),
            // BookSim2's `ph`: 0 on the way to the intermediate router, 1 after it (or minimal)
            // until the global hop, 2 from the global hop on and within a group.
            DragonflyAlgorithm::UgalBooksim => {
                if self.group(pkt.src_router as usize) == self.group(pkt.dst_router as usize) {
                    2
                } else if nonmin && phase == 0 {
                    0
                } else if global || gh > usize::from(nonmin) {
                    // A non-minimal packet's first global hop was on its class-0 leg.
                    2
                } else {
                    1
                }
            }
            DragonflyAlgorithm::UgalG if self.ugal_vcs == UgalVcs::Merlin && !nonmin => {
                usize::from(gh > 0) + 1
            }
            DragonflyAlgorithm::UgalN if self.ugal_vcs == UgalVcs::Merlin && !nonmin => {
                usize::from(gh > 0) + 2
            }
            // The authors' PAR: the source group on 1 once non-minimal, a minimal path's hop
            // after the first (its global hop) on 3, the rest as below.
            DragonflyAlgorithm::Par if self.ugal_vcs == UgalVcs::Merlin && gh == 0 => {
                match (nonmin, state.hops) {
                    (true, _) => 1,
                    (false, 0) => 0,
                    (false, _) => 3,
                }
            }
            DragonflyAlgorithm::ValG | DragonflyAlgorithm::UgalG => match gh {
                0 => 0,
                1 if nonmin => 1,
                _ => 2,
            },
            DragonflyAlgorithm::ValN | DragonflyAlgorithm::UgalN => match gh {
                0 => 0,
                1 if nonmin => 1 + phase,
                _ => 3,
            },
            DragonflyAlgorithm::Par => match gh {
                0 => usize::from(state.hops.min(1)),
                1 if nonmin => 2 + phase,
                _ => 4,
            },
        }
    }

    /// MIN's class: 1 from the global hop on (`global_vc = destination`: on it too), else 0.
    #[inline]
    fn min_class(&self, state: &RouteState, port: usize) -> usize {
        let global = port >= self.first_global;
        usize::from(
            Self::global_hops(state) > 0 || (global && self.global_vc == GlobalVc::Destination),
        )
    }

    fn block(&self, class: usize) -> VcRange {
        self.blocks[class]
    }
}

impl RoutingFunction for DragonflyRouting {
    fn name(&self) -> String {
        self.algorithm.name().to_string()
    }

    fn min_vcs(&self) -> usize {
        self.algorithm.min_vcs()
    }

    fn init_packet(&self, pkt: &PacketInfo, state: &mut RouteState, rng: &mut RouteRng) {
        self.draw(pkt, state, rng);
    }

    /// MIN when every two groups share one global link: the port follows from the router
    /// and the destination router, the VC class from whether a global hop was taken (the
    /// flags' global-hop count), and the state was drawn by `init_packet`. Where two groups
    /// share several links, the exit depends on the terminals (`salt`), so it does not.
    fn routes_by_destination(&self) -> Option<u8> {
        let one_link_each = self
            .sole_link
            .iter()
            .enumerate()
            .all(|(pair, link)| pair / self.g == pair % self.g || *link != SoleLink::NONE);
        (self.algorithm == DragonflyAlgorithm::Min && one_link_each).then_some(GLOBAL_HOPS)
    }

    fn route(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let cur = ctx.router;
        let dst = pkt.dst_router as usize;
        if self.ejection.at_destination(cur, pkt, self.num_vcs, out) {
            return;
        }
        if state.flags & DRAWN == 0 {
            self.draw(pkt, state, rng);
        }
        let salt = pkt.src_terminal as usize + pkt.dst_terminal as usize;
        if self.algorithm == DragonflyAlgorithm::Min {
            // Apart: MIN runs at every hop where its routes are not remembered (the large
            // dragonflies), and needs none of the phases below.
            let port = self.port_to_router(cur, dst, salt);
            out.push(Candidate {
                port: port as u16,
                vcs: self.block(self.min_class(state, port)),
            });
            return;
        }
        if self.algorithm.adaptive() {
            if state.flags & DECIDED == 0 {
                state.flags |= DECIDED;
                self.decide(ctx, pkt, state, salt);
            } else if self.algorithm == DragonflyAlgorithm::Par
                && state.flags & (NONMIN | REEVALUATED) == 0
                && Self::global_hops(state) == 0
            {
                // PAR: still minimal and still in the source group at the next router.
                state.flags |= REEVALUATED;
                self.decide(ctx, pkt, state, salt);
            }
        }
        let nonmin = state.flags & NONMIN != 0;
        if nonmin && state.phase == 0 && self.reached_intermediate(cur, state) {
            state.phase = 1;
        }
        let port = if nonmin && state.phase == 0 {
            self.port_to_intermediate(cur, state, salt)
        } else {
            self.port_to_router(cur, dst, salt)
        };
        out.push(Candidate {
            port: port as u16,
            vcs: self.block(self.class(pkt, state, port)),
        });
    }

    fn deadlock_caveat(&self) -> Option<String> {
        (self.algorithm == DragonflyAlgorithm::UgalBooksim).then(|| {
            "BookSim2's UGAL VC assignment (ugal_booksim) has cyclic channel dependencies (VC 0 \
             carries both source-group hops and the non-minimal leg's hops after its global \
             hop), so it is deadlock-free in practice only with deep enough buffers; ugal_g \
             and ugal_n are deadlock-free"
                .to_string()
        })
    }

    fn on_forward(
        &self,
        _ctx: &RouteContext,
        _pkt: &PacketInfo,
        chosen: Candidate,
        _vc: usize,
        state: &mut RouteState,
    ) {
        if chosen.port as usize >= self.first_global {
            let gh = (state.flags >> GH_SHIFT).saturating_add(1).min(15);
            state.flags = (state.flags & ((1 << GH_SHIFT) - 1)) | (gh << GH_SHIFT);
        }
    }

    /// Every algorithm's `on_forward` counts the global hops, and does nothing else.
    fn forward_counter(&self) -> Option<ForwardCounter> {
        Some(ForwardCounter {
            first_port: u16::try_from(self.first_global).ok()?,
            shift: GH_SHIFT,
        })
    }
}
