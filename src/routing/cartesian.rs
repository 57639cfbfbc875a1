//! Mesh and torus routing: dimension-order routing (DOR) with datelines, Duato's minimal
//! adaptive routing over a DOR escape network, Star-channel, Valiant and two-phase ROMM.
//!
//! Port numbering follows the generator (`topology::generators::cartesian`): terminals `0..c`,
//! then port `c + 2d` towards `coord[d] - 1` and `c + 2d + 1` towards `coord[d] + 1`. The
//! constructor checks the topology against that numbering instead of trusting the shape.
//!
//! Routing state: `aux` bit `d` = "this packet crossed the wrap link of dimension `d`" (in the
//! current phase); `phase` / `intermediate` for Valiant and ROMM. The VC assignments and the
//! deadlock arguments are in `docs/routing.md`.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::config::RoutingConfig;
use super::{
    Candidate, NO_ROUTER, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction, VcRange,
};
use crate::error::{Error, Result};
use crate::topology::{Endpoint, Shape, Topology};

#[cfg(test)]
#[path = "cartesian_testkit.rs"]
pub(crate) mod testkit;

#[cfg(test)]
#[path = "cartesian_tests.rs"]
mod tests;

const MINUS: usize = 0;
const PLUS: usize = 1;

/// `duato` / `star`: the packet has taken an escape VC (`RouteState::flags`).
pub(crate) const ON_ESCAPE: u8 = 1;

/// What a `duato` / `star` packet may do after taking an escape VC (`routing.escape`). Both
/// satisfy Duato's condition (docs/routing.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EscapePolicy {
    /// It stays on the escape VCs to its destination (BookSim2's `min_adapt`; the `booksim`
    /// preset's default).
    Sticky,
    /// It may take adaptive VCs again at the next router (Duato's protocol). The default: as
    /// safe, and never slower in our measurements (docs/routing.md).
    #[default]
    Return,
}

/// Direction on a torus ring when both are equally short (offset k/2; `routing.tie`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TieBreak {
    /// Always `+` (every tie loads the `+` channels).
    #[default]
    Plus,
    /// A fair coin at the router where the packet enters the dimension (BookSim2's
    /// `dor_next_torus`); later hops in that dimension are no longer ties.
    Random,
}

/// The mesh/torus algorithms of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CartesianAlgorithm {
    /// Dimension order, shortest direction per ring (tie at k/2: +), datelines on tori.
    Dor,
    /// Minimal adaptive VCs ranked by congestion, DOR escape VCs offered last.
    Duato,
    /// Star-channel: DOR escape ("star") VCs plus adaptive ("nonstar") VCs on any minimal
    /// direction, in dimension order (congestion-oblivious selection).
    Star,
    /// Random intermediate router; DOR to it, then DOR to the destination.
    Valiant,
    /// Random intermediate inside the minimal quadrant; DOR to it, then DOR to the destination.
    Romm,
}

impl CartesianAlgorithm {
    pub(crate) const ALL: [CartesianAlgorithm; 5] = [
        CartesianAlgorithm::Dor,
        CartesianAlgorithm::Duato,
        CartesianAlgorithm::Star,
        CartesianAlgorithm::Valiant,
        CartesianAlgorithm::Romm,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            CartesianAlgorithm::Dor => "dor",
            CartesianAlgorithm::Duato => "duato",
            CartesianAlgorithm::Star => "star",
            CartesianAlgorithm::Valiant => "valiant",
            CartesianAlgorithm::Romm => "romm",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// VCs per channel needed on a mesh (`wrap = false`) or torus.
    pub(crate) fn min_vcs(self, wrap: bool) -> usize {
        let dateline = if wrap { 2 } else { 1 };
        match self {
            CartesianAlgorithm::Dor => dateline,
            CartesianAlgorithm::Duato | CartesianAlgorithm::Star => dateline + 1,
            CartesianAlgorithm::Valiant | CartesianAlgorithm::Romm => 2 * dateline,
        }
    }
}

/// Parameters of `dor`, `valiant` and `romm`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CartesianParams {
    /// On a torus: the ring direction at a tie (`plus`, default, or `random`).
    pub tie: Option<TieBreak>,
}

/// Parameters of `duato` and `star`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EscapeParams {
    /// On a torus: the ring direction at a tie (`plus`, default, or `random`).
    pub tie: Option<TieBreak>,
    /// Whether a packet that took an escape VC stays on the escape network (`sticky`, default)
    /// or may return to the adaptive VCs (`return`).
    pub escape: Option<EscapePolicy>,
}

/// Builds `dor`, `duato`, `star`, `valiant` or `romm` (registry: `crate::registry::routing`).
pub fn build(
    cfg: &RoutingConfig,
    topo: &Topology,
    num_vcs: usize,
) -> Result<Box<dyn RoutingFunction>> {
    let algorithm = CartesianAlgorithm::from_name(&cfg.algorithm)
        .ok_or_else(|| cfg.not_in_family("mesh/torus"))?;
    let (tie, escape) = match algorithm {
        CartesianAlgorithm::Duato | CartesianAlgorithm::Star => {
            let p: EscapeParams = cfg.read_params()?;
            (p.tie, p.escape)
        }
        _ => (cfg.read_params::<CartesianParams>()?.tie, None),
    };
    let mut rf = CartesianRouting::new(algorithm, topo, num_vcs)?;
    if let Some(tie) = tie {
        if !rf.wrap {
            return Err(Error::field(
                "routing.tie",
                format!(
                    "applies to tori only (`{}` is a mesh: no ring has two equally short directions)",
                    topo.name
                ),
            ));
        }
        rf.tie = tie;
    }
    rf.escape = escape.unwrap_or_default();
    Ok(Box::new(rf))
}

/// A mesh/torus routing function with its geometry tables.
#[derive(Clone, Debug)]
pub(crate) struct CartesianRouting {
    algorithm: CartesianAlgorithm,
    dims: Vec<usize>,
    /// `strides[d] = prod(dims[..d])`.
    strides: Vec<usize>,
    /// Every router's coordinates, `coords[r * dims.len() + d]`: a look-up instead of two
    /// integer divisions per coordinate on every hop (their latency showed in the profile).
    coords: Vec<u32>,
    wrap: bool,
    /// Terminal ports per router.
    concentration: usize,
    num_routers: usize,
    num_vcs: usize,
    /// Ejection port of every terminal.
    ejection: super::Ejection,
    /// Ring direction at a tie.
    tie: TieBreak,
    /// `duato` / `star`: whether escape packets may return to the adaptive VCs.
    escape: EscapePolicy,
}

impl CartesianRouting {
    /// Checks that `topo` is a mesh or torus numbered like the generator's.
    pub(crate) fn new(
        algorithm: CartesianAlgorithm,
        topo: &Topology,
        num_vcs: usize,
    ) -> Result<Self> {
        let name = algorithm.name();
        let shape_err = |reason: String| {
            Error::field(
                "routing.algorithm",
                format!(
                    "`{name}` routes meshes and tori only; topology `{}` {reason}",
                    topo.name
                ),
            )
        };
        let Shape::Cartesian { dims, wrap } = &topo.shape else {
            return Err(shape_err("is not a mesh or torus".into()));
        };
        if dims.is_empty() || dims.len() > 32 || dims.iter().any(|&k| k < 2) {
            return Err(shape_err(format!(
                "has dimensions {dims:?} (need 1..=32 dimensions of at least 2 routers)"
            )));
        }
        if num_vcs > usize::from(u8::MAX) {
            return Err(Error::field(
                "simulation.num_vcs",
                format!("routing `{name}` supports at most 255 VCs per channel (got {num_vcs})"),
            ));
        }
        let mut strides = Vec::with_capacity(dims.len());
        let mut n = 1usize;
        for &k in dims {
            strides.push(n);
            n *= k;
        }
        if n != topo.num_routers() {
            return Err(shape_err(format!(
                "has {} routers, not the {n} of dimensions {dims:?}",
                topo.num_routers()
            )));
        }
        let net_ports = 2 * dims.len();
        let c = topo.routers[0].ports.len().saturating_sub(net_ports);
        let coords = (0..n)
            .flat_map(|r| {
                dims.iter()
                    .zip(&strides)
                    .map(move |(&k, &s)| ((r / s) % k) as u32)
            })
            .collect();
        let rf = CartesianRouting {
            algorithm,
            dims: dims.clone(),
            strides,
            coords,
            wrap: *wrap,
            concentration: c,
            num_routers: n,
            num_vcs,
            ejection: super::Ejection::new(topo),
            tie: TieBreak::Plus,
            escape: EscapePolicy::Return,
        };
        // Every network port must lead where the numbering says.
        for r in 0..n {
            if topo.routers[r].ports.len() != c + net_ports {
                return Err(shape_err(format!(
                    "router {r} has {} ports, expected {}",
                    topo.routers[r].ports.len(),
                    c + net_ports
                )));
            }
            for d in 0..dims.len() {
                for dir in [MINUS, PLUS] {
                    let port = rf.port(d, dir);
                    let expect = rf.neighbour(r, d, dir).map(|nb| (nb, rf.port(d, 1 - dir)));
                    let got = match topo.peer(r, port) {
                        Some(Endpoint::Router { router, port }) => Some((router, port)),
                        None => None,
                        Some(Endpoint::Terminal { .. }) => Some((usize::MAX, 0)),
                    };
                    if got != expect {
                        return Err(shape_err(format!(
                            "does not follow the mesh/torus port numbering at router {r} port {port}"
                        )));
                    }
                }
            }
        }
        if topo.terminals.iter().any(|t| t.port >= c) {
            return Err(shape_err("has terminals on network ports".into()));
        }
        Ok(rf)
    }

    #[inline]
    fn coord(&self, r: usize, d: usize) -> usize {
        self.coords[r * self.dims.len() + d] as usize
    }

    fn port(&self, d: usize, dir: usize) -> usize {
        self.concentration + 2 * d + dir
    }

    /// The router one step from `r` along dimension `d` in direction `dir`, if connected.
    fn neighbour(&self, r: usize, d: usize, dir: usize) -> Option<usize> {
        let (k, x, s) = (self.dims[d], self.coord(r, d), self.strides[d]);
        let y = match dir {
            PLUS if x + 1 < k => x + 1,
            PLUS if self.wrap => 0,
            MINUS if x > 0 => x - 1,
            MINUS if self.wrap => k - 1,
            _ => return None,
        };
        Some(r - x * s + y * s)
    }

    /// Whether leaving `r` along `d` in direction `dir` uses the wrap link of the ring.
    fn is_wrap(&self, r: usize, d: usize, dir: usize) -> bool {
        let x = self.coord(r, d);
        self.wrap && ((dir == PLUS && x == self.dims[d] - 1) || (dir == MINUS && x == 0))
    }

    /// DOR direction and distance from coordinate `x` to `y` along dimension `d`: the
    /// shortest direction around a ring, `+` at a tie (offset k/2).
    fn dor_dir(&self, d: usize, x: usize, y: usize) -> (usize, usize) {
        let k = self.dims[d];
        if !self.wrap {
            return if y >= x {
                (PLUS, y - x)
            } else {
                (MINUS, x - y)
            };
        }
        let fwd = (y + k - x) % k;
        if fwd <= k - fwd {
            (PLUS, fwd)
        } else {
            (MINUS, k - fwd)
        }
    }

    /// The DOR hop from `cur` towards `target` (≠ `cur`): (dimension, direction). At a tie
    /// the direction follows `self.tie`.
    fn dor_hop(&self, cur: usize, target: usize, rng: &mut RouteRng) -> (usize, usize) {
        let (d, x, y) = (0..self.dims.len())
            .find_map(|d| {
                let (x, y) = (self.coord(cur, d), self.coord(target, d));
                (x != y).then_some((d, x, y))
            })
            .expect("dor_hop called at the target");
        let (dir, dist) = self.dor_dir(d, x, y);
        if self.tie == TieBreak::Random && self.wrap && 2 * dist == self.dims[d] {
            return (d, if rng.random_bool(0.5) { PLUS } else { MINUS });
        }
        (d, dir)
    }

    /// Dateline classes per phase: 2 on a torus (before / after the wrap link), 1 on a mesh.
    fn dateline_classes(&self) -> usize {
        if self.wrap { 2 } else { 1 }
    }

    /// Dateline class of a hop along dimension `d`: 1 once the wrap link of `d` was crossed.
    fn dateline(&self, state: &RouteState, d: usize) -> usize {
        if self.wrap {
            ((state.aux >> d) & 1) as usize
        } else {
            0
        }
    }

    /// VC block `class` of `classes` equal contiguous blocks of all VCs (extra VCs are spread
    /// over the classes rather than left unused).
    fn block(&self, class: usize, classes: usize) -> VcRange {
        // A mesh's DOR (one class) on every hop: no divisions.
        if classes == 1 {
            return VcRange::new(0, self.num_vcs);
        }
        VcRange::new(
            class * self.num_vcs / classes,
            (class + 1) * self.num_vcs / classes,
        )
    }

    fn draw_intermediate(&self, pkt: &PacketInfo, rng: &mut RouteRng) -> u32 {
        match self.algorithm {
            CartesianAlgorithm::Romm => {
                let (src, dst) = (pkt.src_router as usize, pkt.dst_router as usize);
                let mut r = 0;
                for d in 0..self.dims.len() {
                    let (k, x) = (self.dims[d], self.coord(src, d));
                    let (dir, dist) = self.dor_dir(d, x, self.coord(dst, d));
                    let off = rng.random_range(0..=dist);
                    let y = if dir == PLUS {
                        (x + off) % k
                    } else {
                        (x + k - off) % k
                    };
                    r += y * self.strides[d];
                }
                r as u32
            }
            _ => rng.random_range(0..self.num_routers) as u32,
        }
    }

    fn two_phase(&self) -> bool {
        matches!(
            self.algorithm,
            CartesianAlgorithm::Valiant | CartesianAlgorithm::Romm
        )
    }

    /// Duato / Star-channel: adaptive candidates on every minimal direction, then the escape
    /// (only the escape for a packet on it with the sticky policy).
    fn route_adaptive(
        &self,
        ctx: &RouteContext,
        dst: usize,
        state: &RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let cur = ctx.router;
        let escape_vcs = self.dateline_classes();
        let adaptive = VcRange::new(escape_vcs, self.num_vcs);
        let start = out.len();
        if self.escape == EscapePolicy::Sticky && state.flags & ON_ESCAPE != 0 {
            let (d, dir) = self.dor_hop(cur, dst, rng);
            out.push(Candidate {
                port: self.port(d, dir) as u16,
                vcs: VcRange::single(self.dateline(state, d)),
            });
            return;
        }
        let mut scores = [0i64; 64];
        for d in 0..self.dims.len() {
            let (x, y) = (self.coord(cur, d), self.coord(dst, d));
            if x == y {
                continue;
            }
            let (dir, dist) = self.dor_dir(d, x, y);
            let tie = self.wrap && 2 * dist == self.dims[d];
            let dirs: &[usize] = if tie { &[PLUS, MINUS] } else { &[dir] };
            for &dir in dirs {
                let port = self.port(d, dir);
                let view = ctx.congestion;
                let free: i64 = adaptive
                    .iter()
                    .map(|vc| i64::from(view.credits(cur, port, vc)))
                    .sum();
                scores[out.len() - start] = free - i64::from(view.output_queue(cur, port));
                out.push(Candidate {
                    port: port as u16,
                    vcs: adaptive,
                });
            }
        }
        if self.algorithm == CartesianAlgorithm::Duato {
            // Stable insertion sort, most free credits (minus queue) first.
            let m = out.len() - start;
            for i in 1..m {
                let mut j = i;
                while j > 0 && scores[j - 1] < scores[j] {
                    scores.swap(j - 1, j);
                    out.swap(start + j - 1, start + j);
                    j -= 1;
                }
            }
        }
        let (d, dir) = self.dor_hop(cur, dst, rng);
        out.push(Candidate {
            port: self.port(d, dir) as u16,
            vcs: VcRange::single(self.dateline(state, d)),
        });
    }

    fn is_adaptive(&self) -> bool {
        matches!(
            self.algorithm,
            CartesianAlgorithm::Duato | CartesianAlgorithm::Star
        )
    }
}

impl RoutingFunction for CartesianRouting {
    fn name(&self) -> String {
        self.algorithm.name().to_string()
    }

    fn min_vcs(&self) -> usize {
        self.algorithm.min_vcs(self.wrap)
    }

    /// `duato` / `star`: the adaptive VCs (Duato's condition for wormhole; docs/routing.md).
    fn cut_through_vcs(&self, num_vcs: usize) -> u64 {
        if !self.is_adaptive() {
            return 0;
        }
        super::vc_mask(self.dateline_classes()..num_vcs)
    }

    fn init_packet(&self, pkt: &PacketInfo, state: &mut RouteState, rng: &mut RouteRng) {
        state.aux = 0;
        state.flags = 0;
        if self.two_phase() {
            state.phase = 0;
            state.intermediate = self.draw_intermediate(pkt, rng);
        }
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
        let classes = self.dateline_classes();
        match self.algorithm {
            CartesianAlgorithm::Dor => {
                let (d, dir) = self.dor_hop(cur, dst, rng);
                out.push(Candidate {
                    port: self.port(d, dir) as u16,
                    vcs: self.block(self.dateline(state, d), classes),
                });
            }
            CartesianAlgorithm::Duato | CartesianAlgorithm::Star => {
                self.route_adaptive(ctx, dst, state, rng, out)
            }
            CartesianAlgorithm::Valiant | CartesianAlgorithm::Romm => {
                if state.phase == 0 && state.intermediate == NO_ROUTER {
                    // init_packet was not called: draw now (from the source's point of view).
                    state.intermediate = self.draw_intermediate(pkt, rng);
                }
                if state.phase == 0 && cur == state.intermediate as usize {
                    state.phase = 1;
                    state.aux = 0; // datelines restart with the new DOR phase
                }
                let target = if state.phase == 0 {
                    state.intermediate as usize
                } else {
                    dst
                };
                let (d, dir) = self.dor_hop(cur, target, rng);
                let phase = usize::from(state.phase.min(1));
                out.push(Candidate {
                    port: self.port(d, dir) as u16,
                    vcs: self.block(phase * classes + self.dateline(state, d), 2 * classes),
                });
            }
        }
    }

    /// A mesh's DOR and oblivious routings record nothing at a hop (see `on_forward`).
    fn updates_on_forward(&self) -> bool {
        self.wrap || self.is_adaptive()
    }

    /// A mesh's DOR: one port by the coordinates, all VCs, no state (one class) and no random
    /// tie (that is a torus's).
    fn routes_by_destination(&self) -> Option<u8> {
        (self.algorithm == CartesianAlgorithm::Dor && !self.wrap).then_some(0)
    }

    fn on_forward(
        &self,
        ctx: &RouteContext,
        _pkt: &PacketInfo,
        chosen: Candidate,
        vc: usize,
        state: &mut RouteState,
    ) {
        let port = chosen.port as usize;
        // Ejection, or a mesh DOR hop (the hot case of the bench): nothing to record.
        if port < self.concentration || !(self.wrap || self.is_adaptive()) {
            return;
        }
        if self.is_adaptive() && vc < self.dateline_classes() {
            state.flags |= ON_ESCAPE;
        }
        if self.wrap {
            let (d, dir) = (
                (port - self.concentration) / 2,
                (port - self.concentration) % 2,
            );
            if d < self.dims.len() && self.is_wrap(ctx.router, d, dir) {
                state.aux |= 1 << d;
            }
        }
    }
}
