//! Table-driven routing in the simulator: [`TableRouting`] follows a [`RoutingTable`] hop by hop
//! (lookup by source router, destination router and the number of router-to-router hops taken,
//! never by searching the path for the current router, because a path may revisit a router).
//!
//! Three modes (docs/routing-tables.md, "Table-driven routing in the simulator"):
//!
//! * [`TableMode::Hierarchy`] (default): three VC classes, table > minimal adaptive > escape.
//!   A packet asks for its table port on the table VCs, else any minimal port on the adaptive
//!   VCs, else the escape port (DOR on a mesh/torus, up*/down* elsewhere) on the escape VCs,
//!   and never moves back up a class. The escape network is deadlock-free from any router and
//!   a packet in it never leaves it, so the whole hierarchy is deadlock-free whatever the
//!   table's channel dependencies (Duato's condition).
//! * [`TableMode::Layered`]: every packet follows its table path on the VCs of its pair's
//!   layer (layer `l` of `L` gets the block `layer_vcs(l, L, num_vcs)`, as DFSSSP's layers do;
//!   layers computed elsewhere, e.g. `vl::assign_vls` / `best.sl`).
//! * [`TableMode::Plain`]: every packet follows its table path on any VC (may deadlock).
//!
//! The class of a hierarchy packet lives in `RouteState::flags` (the bits [`CLASS_MASK`]),
//! not in `phase` or `aux`, because the escape functions own those: up*/down* keeps its
//! up/down phase in `phase` and DOR its dateline bits in `aux`.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{RoutingTable, pair_index};
use crate::error::{Error, Result};
use crate::routing::cartesian::{CartesianAlgorithm, CartesianRouting};
use crate::routing::config::RoutingConfig;
use crate::routing::paths::{PortGraph, UNREACHED};
use crate::routing::updown::UpDown;
use crate::routing::{
    Candidate, CongestionView, Ejection, PacketInfo, RouteContext, RouteRng, RouteState,
    RoutingFunction, VcRange,
};
use crate::topology::Topology;

/// Hierarchy class of a packet, in `RouteState::flags & CLASS_MASK`. Ordered: a packet only
/// ever moves to a larger class.
pub(crate) const CLASS_TABLE: u8 = 0;
pub(crate) const CLASS_ADAPTIVE: u8 = 1;
pub(crate) const CLASS_ESCAPE: u8 = 2;
pub(crate) const CLASS_MASK: u8 = 0b11;

/// The class a hierarchy packet is in.
pub(crate) fn class_of(state: &RouteState) -> u8 {
    state.flags & CLASS_MASK
}

/// VC classes of the hierarchy mode, each a range `start..end` of VCs per channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableClasses {
    pub table: Range<usize>,
    pub adaptive: Range<usize>,
    pub escape: Range<usize>,
}

impl TableClasses {
    /// The defaults: escape `0..e` (`e` = the VCs the escape routing needs: 2 on a torus for
    /// the DOR dateline, 1 otherwise); with 5 VCs or more the paper's layout, adaptive `e..4`
    /// and table `4..num_vcs`; with fewer, the VCs above the escape split between the table
    /// (the upper half, rounded up) and the adaptive class. With `num_vcs <= e` the table
    /// class is empty ([`TableClasses::resolve`] rejects that).
    pub fn defaults(topo: &Topology, num_vcs: usize) -> Self {
        let e = escape_min_vcs(topo);
        let table_start = if num_vcs >= 5 {
            4
        } else {
            num_vcs - num_vcs.saturating_sub(e).div_ceil(2)
        };
        TableClasses {
            table: table_start.max(e)..num_vcs.max(e),
            adaptive: e..table_start.max(e),
            escape: 0..e,
        }
    }

    /// The classes of a hierarchy with `num_vcs` VCs per channel: the defaults, each class
    /// replaced by its `[start, end)` when given, checked against `num_vcs`, with a non-empty
    /// table class. The one check every command uses (`routing = "table"`, `routes evolve`);
    /// errors name `routing.<class>_vcs` or `simulation.num_vcs`.
    pub fn resolve(
        topo: &Topology,
        num_vcs: usize,
        table: Option<[usize; 2]>,
        adaptive: Option<[usize; 2]>,
        escape: Option<[usize; 2]>,
    ) -> Result<Self> {
        let e = escape_min_vcs(topo);
        if escape.is_none() && num_vcs <= e {
            return Err(Error::field(
                "simulation.num_vcs",
                format!(
                    "the table > adaptive > escape hierarchy needs at least {} VCs on `{}` \
                     ({e} escape + 1 table), got {num_vcs}",
                    e + 1,
                    topo.name
                ),
            ));
        }
        let d = Self::defaults(topo, num_vcs);
        let classes = TableClasses {
            table: range_of(table, d.table),
            adaptive: range_of(adaptive, d.adaptive),
            escape: range_of(escape, d.escape),
        };
        classes
            .validate(Some(num_vcs))
            .map_err(|e| e.prefix_field("routing"))?;
        if classes.table.is_empty() {
            let field = if table.is_some() {
                "routing.table_vcs"
            } else {
                "simulation.num_vcs"
            };
            return Err(Error::field(
                field,
                format!(
                    "the table VC class [{}, {}) is empty: the table > adaptive > escape \
                     hierarchy needs a VC above the {} escape VC(s) (simulation.num_vcs = \
                     {num_vcs})",
                    classes.table.start,
                    classes.table.end,
                    classes.escape.len()
                ),
            ));
        }
        Ok(classes)
    }

    /// Checks the classes: ranges well formed, escape non-empty, pairwise disjoint, within
    /// `num_vcs` when given. Errors name `table_vcs`, `adaptive_vcs` or `escape_vcs`.
    pub fn validate(&self, num_vcs: Option<usize>) -> Result<()> {
        let named = [
            ("table_vcs", &self.table),
            ("adaptive_vcs", &self.adaptive),
            ("escape_vcs", &self.escape),
        ];
        for (field, r) in named {
            if r.start > r.end {
                return Err(Error::field(
                    field,
                    format!("[{}, {}) has its start after its end", r.start, r.end),
                ));
            }
            let limit = num_vcs
                .unwrap_or(usize::from(u8::MAX))
                .min(usize::from(u8::MAX));
            if r.end > limit {
                return Err(Error::field(
                    field,
                    format!(
                        "[{}, {}) goes beyond the {limit} VCs per channel (simulation.num_vcs)",
                        r.start, r.end
                    ),
                ));
            }
        }
        if self.escape.is_empty() {
            return Err(Error::field("escape_vcs", "the escape class needs a VC"));
        }
        for i in 0..named.len() {
            for j in i + 1..named.len() {
                let ((fa, a), (fb, b)) = (named[i], named[j]);
                if !a.is_empty() && !b.is_empty() && a.start < b.end && b.start < a.end {
                    return Err(Error::field(
                        fb,
                        format!(
                            "[{}, {}) overlaps {fa} [{}, {})",
                            b.start, b.end, a.start, a.end
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn vcs(r: &Range<usize>) -> VcRange {
        VcRange::new(r.start, r.end)
    }
}

/// How [`TableRouting`] uses the table.
#[derive(Clone, Debug, PartialEq)]
pub enum TableMode {
    /// Table VCs > minimal adaptive VCs > escape VCs (deadlock-free).
    Hierarchy(TableClasses),
    /// Pure table routing, pair `p` on the VC block of layer `layers[p]` (indexed by
    /// [`pair_index`]).
    Layered(Vec<u8>),
    /// Pure table routing on every VC (deadlock-free only if the table's channel dependency
    /// graph is acyclic).
    Plain,
}

/// The mode names of `routing.table_mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableModeName {
    #[default]
    Hierarchy,
    Layered,
    Plain,
}

/// VCs the escape routing needs on `topo`: DOR on a torus needs two (dateline), DOR on a
/// mesh and up*/down* one.
pub(crate) fn escape_min_vcs(topo: &Topology) -> usize {
    CartesianRouting::new(CartesianAlgorithm::Dor, topo, 2).map_or(1, |r| r.min_vcs())
}

/// Shows the escape routing function only the escape VCs, renumbered from 0, so that DOR
/// (built for `len` VCs) and up*/down* (which offers all VCs it is told of) stay inside them.
struct EscapeView<'a> {
    inner: &'a dyn CongestionView,
    offset: usize,
    len: usize,
}

impl CongestionView for EscapeView<'_> {
    fn num_vcs(&self) -> usize {
        self.len
    }
    fn vc_depth(&self) -> u32 {
        self.inner.vc_depth()
    }
    fn credits(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.inner.credits(router, port, vc + self.offset)
    }
    fn output_vc_busy(&self, router: usize, port: usize, vc: usize) -> bool {
        self.inner.output_vc_busy(router, port, vc + self.offset)
    }
    fn output_queue(&self, router: usize, port: usize) -> u32 {
        self.inner.output_queue(router, port)
    }
    fn input_occupancy(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.inner.input_occupancy(router, port, vc + self.offset)
    }
}

/// The hierarchy's adaptive and escape machinery.
struct Hierarchy {
    classes: TableClasses,
    escape: Box<dyn RoutingFunction>,
    graph: PortGraph,
    n: usize,
    /// `dist[dst * n + router]`: hops from `router` to `dst` (`u16::MAX` if unreachable).
    dist: Vec<u16>,
}

impl Hierarchy {
    fn new(topo: &Topology, classes: TableClasses) -> Result<Self> {
        classes.validate(None)?;
        let len = classes.escape.len();
        let escape: Box<dyn RoutingFunction> =
            match CartesianRouting::new(CartesianAlgorithm::Dor, topo, len) {
                Ok(dor) => {
                    if len < dor.min_vcs() {
                        return Err(Error::field(
                            "escape_vcs",
                            format!(
                                "the DOR escape on torus `{}` needs {} VCs (dateline), got {len}",
                                topo.name,
                                dor.min_vcs()
                            ),
                        ));
                    }
                    Box::new(dor)
                }
                Err(_) => Box::new(UpDown::new(topo, None)?),
            };
        let graph = PortGraph::new(topo);
        let n = topo.num_routers();
        let mut dist = vec![u16::MAX; n * n];
        for d in 0..n {
            // Links are bidirectional, so distances from `d` are distances to `d`.
            let (from_d, _) = graph.bfs(d);
            for (r, &h) in from_d.iter().enumerate() {
                if h != UNREACHED {
                    dist[d * n + r] = h as u16;
                }
            }
        }
        Ok(Hierarchy {
            classes,
            escape,
            graph,
            n,
            dist,
        })
    }

    fn escape_view<'a>(&self, inner: &'a dyn CongestionView) -> EscapeView<'a> {
        EscapeView {
            inner,
            offset: self.classes.escape.start,
            len: self.classes.escape.len(),
        }
    }

    /// Every port one hop closer to the destination, on the adaptive VCs, most free adaptive
    /// credits (minus the output queue) first, ties by port: like `duato`'s selection.
    fn adaptive(&self, ctx: &RouteContext, dst: usize, out: &mut Vec<Candidate>) {
        let vcs = TableClasses::vcs(&self.classes.adaptive);
        if vcs.is_empty() {
            return;
        }
        let (u, row) = (ctx.router, &self.dist[dst * self.n..(dst + 1) * self.n]);
        let here = row[u];
        if here == u16::MAX {
            return;
        }
        let mut ports: Vec<(i64, u16)> = self
            .graph
            .out(u)
            .iter()
            .filter(|h| row[h.peer as usize].wrapping_add(1) == here)
            .map(|h| {
                let port = h.port as usize;
                let free: i64 = vcs
                    .iter()
                    .map(|vc| i64::from(ctx.congestion.credits(u, port, vc)))
                    .sum();
                let score = free - i64::from(ctx.congestion.output_queue(u, port));
                (-score, h.port)
            })
            .collect();
        ports.sort_unstable();
        out.extend(ports.into_iter().map(|(_, port)| Candidate { port, vcs }));
    }

    /// The escape routing's candidates, moved onto the escape VCs.
    fn escape(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let view = self.escape_view(ctx.congestion);
        let inner = RouteContext {
            router: ctx.router,
            in_port: ctx.in_port,
            in_vc: ctx.in_vc.saturating_sub(self.classes.escape.start),
            congestion: &view,
        };
        let start = out.len();
        self.escape.route(&inner, pkt, state, rng, out);
        let (off, end) = (self.classes.escape.start, self.classes.escape.end);
        for c in &mut out[start..] {
            c.vcs = VcRange::new(
                (c.vcs.start as usize + off).min(end),
                (c.vcs.end as usize + off).min(end),
            );
        }
    }
}

/// Table-driven routing (see the module documentation).
pub struct TableRouting {
    table: RoutingTable,
    mode: Mode,
    ejection: Ejection,
    /// Plain and layered modes: a cycle of the table's channel dependencies on the VCs it
    /// uses, described (the hierarchy is deadlock-free whatever the table).
    dependency_cycle: Option<String>,
}

enum Mode {
    Hierarchy(Box<Hierarchy>),
    Layered { layers: Vec<u8>, used: usize },
    Plain,
}

impl TableRouting {
    /// Checks `table` against `topo` (and the mode's parameters) and builds the routing
    /// function. VC ranges are checked against the VC count by the registry
    /// ([`RoutingFunction::min_vcs`] covers every class or layer).
    pub fn new(topo: &Topology, table: RoutingTable, mode: TableMode) -> Result<Self> {
        table.validate(topo)?;
        let mode = match mode {
            TableMode::Hierarchy(classes) => {
                Mode::Hierarchy(Box::new(Hierarchy::new(topo, classes)?))
            }
            TableMode::Layered(layers) => {
                if layers.len() != table.num_pairs() {
                    return Err(Error::field(
                        "layers",
                        format!(
                            "{} layers but the table has {} pairs",
                            layers.len(),
                            table.num_pairs()
                        ),
                    ));
                }
                let used = layers
                    .iter()
                    .map(|&l| usize::from(l) + 1)
                    .max()
                    .unwrap_or(1);
                Mode::Layered { layers, used }
            }
            TableMode::Plain => Mode::Plain,
        };
        let cycle = match &mode {
            Mode::Hierarchy(_) => None,
            Mode::Layered { layers, .. } => {
                super::deps::table_dependency_cycle(topo, &table, &|pair, _| layers[pair])
            }
            Mode::Plain => super::deps::is_deadlock_free_single_vc(topo, &table).err(),
        };
        let dependency_cycle = cycle.map(|c| {
            format!(
                "the table's channel dependencies form a cycle of {} channels on the VCs it \
                 uses (channel {} VC {} first): it can deadlock; the `hierarchy` mode cannot",
                c.len(),
                c[0].channel,
                c[0].vc
            )
        });
        Ok(TableRouting {
            table,
            mode,
            ejection: Ejection::new(topo),
            dependency_cycle,
        })
    }

    pub fn table(&self) -> &RoutingTable {
        &self.table
    }

    /// The hierarchy's VC classes (None in the other modes).
    pub fn classes(&self) -> Option<&TableClasses> {
        match &self.mode {
            Mode::Hierarchy(h) => Some(&h.classes),
            _ => None,
        }
    }

    /// The table's port at the packet's current hop. The hop index is the number of
    /// router-to-router hops taken, valid only while the packet has followed the table.
    fn table_port(&self, ctx: &RouteContext, pkt: &PacketInfo, state: &RouteState) -> Option<u16> {
        let (s, d, hop) = (
            pkt.src_router as usize,
            pkt.dst_router as usize,
            usize::from(state.hops),
        );
        debug_assert_eq!(
            self.table.path(s, d).routers.get(hop).map(|&r| r as usize),
            Some(ctx.router),
            "packet {s}->{d} left its table path"
        );
        self.table.port_at(ctx.router, s, d, hop)
    }
}

impl RoutingFunction for TableRouting {
    fn name(&self) -> String {
        match self.mode {
            Mode::Hierarchy(_) => "table (hierarchy)",
            Mode::Layered { .. } => "table (layered)",
            Mode::Plain => "table (plain)",
        }
        .into()
    }

    fn min_vcs(&self) -> usize {
        match &self.mode {
            Mode::Hierarchy(h) => {
                let c = &h.classes;
                c.table.end.max(c.adaptive.end).max(c.escape.end)
            }
            Mode::Layered { used, .. } => *used,
            Mode::Plain => 1,
        }
    }

    fn deadlock_caveat(&self) -> Option<String> {
        self.dependency_cycle.clone()
    }

    /// Hierarchy mode: the table and adaptive VCs, on which packets may form cyclic
    /// dependencies and so must not wait behind one another (Duato's condition under
    /// wormhole; docs/routing.md).
    fn cut_through_vcs(&self, _num_vcs: usize) -> u64 {
        match &self.mode {
            Mode::Hierarchy(h) => {
                let c = &h.classes;
                crate::routing::vc_mask(c.table.clone())
                    | crate::routing::vc_mask(c.adaptive.clone())
            }
            _ => 0,
        }
    }

    fn init_packet(&self, pkt: &PacketInfo, state: &mut RouteState, rng: &mut RouteRng) {
        if let Mode::Hierarchy(h) = &self.mode {
            h.escape.init_packet(pkt, state, rng);
            state.flags = (state.flags & !CLASS_MASK) | CLASS_TABLE;
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
        let num_vcs = ctx.congestion.num_vcs();
        if self.ejection.at_destination(ctx.router, pkt, num_vcs, out) {
            return;
        }
        match &self.mode {
            Mode::Plain => {
                if let Some(port) = self.table_port(ctx, pkt, state) {
                    out.push(Candidate {
                        port,
                        vcs: VcRange::new(0, num_vcs),
                    });
                }
            }
            Mode::Layered { layers, used } => {
                if let Some(port) = self.table_port(ctx, pkt, state) {
                    let n = self.table.num_routers;
                    let pair = pair_index(n, pkt.src_router as usize, pkt.dst_router as usize);
                    // The layer's block of VCs (as DFSSSP does): a layer's dependencies stay
                    // within its block and are acyclic, so any VC of it is safe, and the
                    // spare VCs are not left idle.
                    out.push(Candidate {
                        port,
                        vcs: crate::routing::layered::layer_vcs(
                            usize::from(layers[pair]),
                            *used,
                            num_vcs,
                        ),
                    });
                }
            }
            Mode::Hierarchy(h) => {
                // Preference order is the candidate order: the allocator grants the first
                // candidate with a free VC in its range.
                let class = class_of(state);
                if class == CLASS_TABLE && !h.classes.table.is_empty() {
                    if let Some(port) = self.table_port(ctx, pkt, state) {
                        out.push(Candidate {
                            port,
                            vcs: TableClasses::vcs(&h.classes.table),
                        });
                    }
                }
                if class <= CLASS_ADAPTIVE {
                    h.adaptive(ctx, pkt.dst_router as usize, out);
                }
                h.escape(ctx, pkt, state, rng, out);
            }
        }
    }

    fn on_forward(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        chosen: Candidate,
        vc: usize,
        state: &mut RouteState,
    ) {
        let Mode::Hierarchy(h) = &self.mode else {
            return;
        };
        if ctx.router == pkt.dst_router as usize {
            return; // ejection: no class change
        }
        let c = &h.classes;
        let granted = if c.escape.contains(&vc) {
            CLASS_ESCAPE
        } else if c.adaptive.contains(&vc) {
            CLASS_ADAPTIVE
        } else {
            CLASS_TABLE
        };
        // Never back up a class, even if handed a VC of a higher one.
        let class = granted.max(class_of(state));
        state.flags = (state.flags & !CLASS_MASK) | class;
        if class == CLASS_ESCAPE {
            let view = h.escape_view(ctx.congestion);
            let inner = RouteContext {
                router: ctx.router,
                in_port: ctx.in_port,
                in_vc: ctx.in_vc.saturating_sub(c.escape.start),
                congestion: &view,
            };
            let shifted = Candidate {
                port: chosen.port,
                vcs: VcRange::new(
                    (chosen.vcs.start as usize).saturating_sub(c.escape.start),
                    (chosen.vcs.end as usize).saturating_sub(c.escape.start),
                ),
            };
            h.escape.on_forward(
                &inner,
                pkt,
                shifted,
                vc.saturating_sub(c.escape.start),
                state,
            );
        }
    }
}

/// The table of the paths `routing` takes through an empty network (first candidate, lowest
/// VC, as [`crate::routing::paths::walk_packet`] walks them) between the first terminals of
/// every router pair: e.g. the DOR table, the GA's seed and the reference of the faithfulness
/// test. Every router needs a terminal.
pub fn table_from_routing(
    routing: &dyn RoutingFunction,
    topo: &Topology,
    num_vcs: usize,
) -> Result<RoutingTable> {
    let n = topo.num_routers();
    let mut first = vec![usize::MAX; n];
    for (t, term) in topo.terminals.iter().enumerate().rev() {
        first[term.router] = t;
    }
    if let Some(r) = first.iter().position(|&t| t == usize::MAX) {
        return Err(Error::field(
            "topology",
            format!(
                "router {r} has no terminal to walk `{}` from",
                routing.name()
            ),
        ));
    }
    let mut paths = super::TableBuilder::new(n);
    for s in 0..n {
        for d in (0..n).filter(|&d| d != s) {
            let hops = crate::routing::paths::walk_packet(
                routing,
                topo,
                first[s],
                first[d],
                num_vcs,
                4 * n,
            )
            .map_err(|e| {
                Error::field(
                    "routing",
                    format!("{} from router {s} to {d}: {e:?}", routing.name()),
                )
            })?;
            // The last hop ejects at `d`.
            let network = &hops[..hops.len() - 1];
            let mut routers: Vec<u32> = network.iter().map(|&(r, _, _)| r as u32).collect();
            routers.push(d as u32);
            let ports = network.iter().map(|&(_, p, _)| p as u16).collect();
            paths.push(super::RouterPath { routers, ports });
        }
    }
    Ok(paths.finish().expect("one path per pair"))
}

/// Parameters of `table`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TableParams {
    /// The routing table file (routes JSON of a `RoutingTable`); relative paths from the
    /// problem file's directory. Required.
    pub table: Option<PathBuf>,
    /// `hierarchy` (default), `layered` or `plain`.
    pub table_mode: Option<TableModeName>,
    /// Layered mode: JSON array of one layer (VC) per router pair.
    pub table_layers: Option<PathBuf>,
    /// Hierarchy mode: VC classes as `[start, end)` (defaults: table `[4, num_vcs)`, adaptive
    /// `[e, 4)`, escape `[0, e)`, `e` = 2 on a torus, 1 elsewhere).
    pub table_vcs: Option<[usize; 2]>,
    pub adaptive_vcs: Option<[usize; 2]>,
    pub escape_vcs: Option<[usize; 2]>,
}

/// `[start, end)` of a `routing.*_vcs` field.
fn range_of(field: Option<[usize; 2]>, default: Range<usize>) -> Range<usize> {
    field.map_or(default, |[s, e]| s..e)
}

fn resolve(cfg: &RoutingConfig, file: &Path) -> PathBuf {
    match &cfg.base_dir {
        Some(base) if file.is_relative() => base.join(file),
        _ => file.to_path_buf(),
    }
}

fn read_json<T: serde::de::DeserializeOwned>(field: &str, path: &Path) -> Result<T> {
    let text = crate::cluster::read_input(path)
        .map_err(|e| Error::field(field, format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| Error::field(field, format!("{}: {e}", path.display())))
}

/// Builds `table` (registry: `crate::registry::routing`).
pub fn build(
    cfg: &RoutingConfig,
    topo: &Topology,
    num_vcs: usize,
) -> Result<Box<dyn RoutingFunction>> {
    let params: TableParams = cfg.read_params()?;
    let Some(file) = &params.table else {
        return Err(Error::field(
            "routing.table",
            "routing `table` needs a table file (routes JSON, e.g. from `fabricopt routes export`)",
        ));
    };
    let path = resolve(cfg, file);
    // The routes JSON of `routes export` / `routes evolve` (routing::table::io).
    let (table, _) = super::io::read_json(&path).map_err(|e| match e {
        Error::Io { path, error } => Error::field(
            "routing.table",
            format!("cannot read {}: {error}", path.display()),
        ),
        other => Error::field("routing.table", other.to_string()),
    })?;
    table
        .validate(topo)
        .map_err(|e| Error::field("routing.table", format!("{}: {e}", path.display())))?;
    let name = params.table_mode.unwrap_or_default();
    let hierarchy_fields = [
        ("routing.table_vcs", params.table_vcs.is_some()),
        ("routing.adaptive_vcs", params.adaptive_vcs.is_some()),
        ("routing.escape_vcs", params.escape_vcs.is_some()),
    ];
    if name != TableModeName::Hierarchy {
        if let Some((field, _)) = hierarchy_fields.iter().find(|(_, set)| *set) {
            return Err(Error::field(
                *field,
                "applies to `table_mode = \"hierarchy\"` only",
            ));
        }
    }
    if name != TableModeName::Layered && params.table_layers.is_some() {
        return Err(Error::field(
            "routing.table_layers",
            "applies to `table_mode = \"layered\"` only",
        ));
    }
    let mode = match name {
        TableModeName::Plain => TableMode::Plain,
        TableModeName::Layered => {
            let Some(file) = &params.table_layers else {
                return Err(Error::field(
                    "routing.table_layers",
                    "`table_mode = \"layered\"` needs a layers file (JSON array, one layer per pair)",
                ));
            };
            let path = resolve(cfg, file);
            // A per-pair SL file (`routes evolve`'s best.sl), or a JSON array.
            let layers: Vec<u8> = if path.extension().is_some_and(|e| e == "sl") {
                let text = crate::cluster::read_input(&path).map_err(|e| {
                    Error::field(
                        "routing.table_layers",
                        format!("cannot read {}: {e}", path.display()),
                    )
                })?;
                super::vl::parse_sl(&text, &path, table.num_routers)?
            } else {
                read_json("routing.table_layers", &path)?
            };
            if layers.len() != table.num_pairs() {
                return Err(Error::field(
                    "routing.table_layers",
                    format!(
                        "{}: {} layers but the table has {} pairs",
                        path.display(),
                        layers.len(),
                        table.num_pairs()
                    ),
                ));
            }
            TableMode::Layered(layers)
        }
        TableModeName::Hierarchy => {
            let classes = TableClasses::resolve(
                topo,
                num_vcs,
                params.table_vcs,
                params.adaptive_vcs,
                params.escape_vcs,
            )?;
            TableMode::Hierarchy(classes)
        }
    };
    let r = TableRouting::new(topo, table, mode).map_err(|e| e.prefix_field("routing"))?;
    Ok(Box::new(r))
}

#[cfg(test)]
#[path = "route_tests.rs"]
mod tests;
