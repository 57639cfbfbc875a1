//! The cycle-accurate engine: virtual-channel routers with credit flow control, input-queued
//! by default. The timing model is documented in docs/simulator.md.
//!
//! Data-oriented on purpose (the simulator is the fitness evaluator for every search): all
//! state lives in flat arrays indexed by global port / VC / channel numbers, in small records
//! of what is used together (an input VC's state and front flit, an output VC's credits and
//! owner, a port's timing, a packet) so that a pipeline stage touches one cache line per
//! object. Flits are 8-byte values; those behind an input VC's front flit wait in
//! preallocated per-VC ring buffers. Flits and credits in flight sit in timing wheels indexed
//! by arrival cycle, traffic sources in a calendar indexed by their next creation cycle;
//! routers are visited only while they hold flits, and inside a router only the non-empty
//! input VCs (a bit set) are looked at, in one pass. No heap allocation per flit; per packet
//! only a slot in a reusable table.
//!
//! The state is grouped into components, each defined next to the code that owns it:
//!
//! | component | file | what it holds |
//! |---|---|---|
//! | `Ports` | ports.rs | each router's place in the global numbering, the local numbering tables, each port's channel timing (fixed for the run) |
//! | `Channels` | channels.rs | flits and credits in flight (timing wheels), where each channel delivers |
//! | `Packets` | here | the packets in flight, by slot |
//! | `Terminals` | terminals.rs | traffic sources and their calendar, source queues, NICs and their credits; injection and ejection |
//! | `Routing` | here | the routing session, its hooks and the routers' random streams |
//! | `ActiveRouters`, `Progress`, `counters`, `stats` | here | which routers hold flits, whether flits still move, what a run measures |
//! | `router: R` | input_queued/ | the routers themselves, behind the `RouterModel` seam (model.rs) |
//!
//! The engine is generic over the router micro-architecture `R: RouterModel` (model.rs
//! says what a model provides and what it shares); the input-queued router
//! (`InputQueuedRouter`: input VCs and output VCs in input_queued/vcs.rs, per-port state,
//! the pipeline in input_queued/pipeline.rs, the allocators in input_queued/alloc.rs) is the
//! default and so far the only one. Deadlock analysis and invariant checks are in
//! diagnostics.rs (the model-independent part) and input_queued/deadlock.rs.
//!
//! Numbering: global port `p` has the global input (and output) VCs `p * num_vcs + vc`.
//! Inside a router, input VCs are numbered locally (`local = port * num_vcs + vc`, the same
//! numbering for output VCs); the tables `Ports::local_port` / `Ports::local_vc` turn a
//! local number into its port and VC, so the hot paths never divide by the (runtime) VC
//! count.

mod build;
mod channels;
mod diagnostics;
mod input_queued;
mod io_queued;
mod model;
mod parallel;
mod partition;
mod ports;
mod tables;
mod terminals;
mod wire;

pub(crate) use diagnostics::DeadlockReport;
use diagnostics::queue_growth;

pub(crate) use build::default_session;
use channels::{ChannelDestination, Channels, Flit, FlitEvent, empty_flit_slots};
pub(crate) use input_queued::InputQueuedRouter;
pub use io_queued::IoQueuedRouter;
pub(crate) use model::RouterModel;
pub use parallel::{PartitionedRun, run_partitioned};
pub use partition::Partitioning;
use ports::{Ports, RouterLayout};
use terminals::Terminals;

use super::config::{SimParams, Switching};
use super::network::{NONE, Network, Sink};
use super::stats::{Collector, PacketRecord};
use crate::routing::{
    CONTROL_CLASS, Candidate, ControlPacket, ForwardCounter, PacketInfo, RouteContext, RouteRng,
    RouteState, RoutingFunction, RoutingSession, SessionHooks,
};
use crate::topology::Topology;
use crate::traffic::{NewPacket, Traffic};

/// Cycles between two deadlock analyses (`Engine::find_deadlock`, linear in the number of
/// VCs; well under 1% of the simulation time).
const DEADLOCK_PROBE: u64 = 1024;

/// How far `x` lies after a round-robin pointer `pointer` among `size` positions (0 = at it).
#[inline(always)]
fn round_robin_distance(x: u32, pointer: u32, size: u32) -> u32 {
    // A select, not a branch: which side of the pointer `x` lies is data the branch
    // predictor cannot learn.
    let wrapped = 0u32.wrapping_sub(u32::from(x < pointer));
    x.wrapping_sub(pointer).wrapping_add(size & wrapped)
}

/// `if cond { a } else { b }` without a branch (for data the branch predictor cannot
/// learn; `std::hint::select_unpredictable` is newer than this crate's minimum Rust).
#[inline(always)]
fn select_u32(cond: bool, a: u32, b: u32) -> u32 {
    b ^ ((a ^ b) & 0u32.wrapping_sub(u32::from(cond)))
}

/// How many flit arrivals ahead `step` prefetches.
const PREFETCH_AHEAD: usize = 8;

/// Asks the CPU to start loading `items[i]` into the cache (nothing if out of bounds). The
/// engine's tables are far larger than the L2 cache and read at random; the arrivals of a
/// cycle are known in advance, so their cache misses can overlap instead of stalling one
/// after the other (about 15% faster on the dragonfly bench).
#[inline(always)]
fn prefetch<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = items.get(i) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is only a hint: it never faults and has no observable effect
        // on memory; the pointer comes from a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(item).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}

/// [`prefetch`] for every cache line `items` spans (large records, a router's slice of a
/// table).
#[inline(always)]
fn prefetch_all<T>(items: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start = items.as_ptr().cast::<i8>();
        let bytes = std::mem::size_of_val(items);
        // One address per 64 bytes, and the last byte: its line when `start` is unaligned.
        for offset in (0..bytes).step_by(64).chain(bytes.checked_sub(1)) {
            // SAFETY: as in `prefetch`; the address stays inside `items`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = items;
}

/// A packet in flight, in one cache line (the packet table is large and read at random).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Packet {
    info: PacketInfo,
    route: RouteState,
    created: u64,
    injected: u64,
    received: u32,
    live: bool,
}

/// The packets in flight, by slot (a packet's slot is its id); slots of delivered packets
/// are reused, so no allocation per packet once the table has grown.
#[derive(Default)]
struct Packets {
    table: tables::HotTable<Packet>,
    free_slots: Vec<u32>,
}

impl Packets {
    /// What routing functions know about the packet in `slot`.
    #[inline]
    fn info(&self, slot: u32) -> PacketInfo {
        self.table[slot as usize].info
    }

    /// Puts `packet` in a free slot and returns the slot (also its id).
    fn store(&mut self, packet: Packet) -> u32 {
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.table[s as usize] = packet;
                s
            }
            None => {
                self.table.push(packet);
                (self.table.len() - 1) as u32
            }
        };
        self.table[slot as usize].info.id = slot;
        slot
    }
}

/// The routing algorithm's per-run side and what calling it needs.
struct Routing<'a> {
    /// The session (the routing function itself when it does not learn).
    session: Box<dyn RoutingSession + 'a>,
    hooks: SessionHooks,
    /// Whether the session's `on_forward` is called: it can change something, and the
    /// engine does not do it itself (`forward_counter`).
    on_forward: bool,
    /// What the session's `on_forward` counts, when that is all it does
    /// ([`crate::routing::RoutingFunction::forward_counter`]): the engine counts it instead
    /// of calling (two dynamic calls and a branch the predictor cannot learn on every hop of
    /// a dragonfly).
    forward_counter: Option<ForwardCounter>,
    /// Control packets the session asked for, waiting to be created.
    pending_control: Vec<ControlPacket>,
    /// One random stream per router (the stream of the router that draws: a packet's source
    /// router when it is created, the routing router at each hop). What a router draws then
    /// depends on nothing but that router's own history, so neither the order in which
    /// routers are visited nor how the network is split between threads changes a result.
    rngs: tables::HotTable<RouteRng>,
    /// The candidates of the route being computed.
    candidates: Vec<Candidate>,
    /// VCs per channel: what every candidate is checked against (`candidate_out_of_range`).
    num_vcs: usize,
    /// For a routing that routes by destination and route class alone
    /// ([`crate::routing::RoutingFunction::routes_by_destination`]): the candidate at each
    /// router towards each destination router (`router * routers + destination`, times 2
    /// plus the class when there are two classes), then at the destination router towards
    /// each terminal (from [`Routing::by_terminal_base`]), filled on first use ([`UNROUTED`]
    /// until then); empty otherwise, or when the table would be large
    /// ([`BY_DESTINATION_MAX`]). Skipping the call saves a tenth of the mesh bench's
    /// instructions and 4% of its time, and 3% of the dragonfly's time (docs/benchmarks.md).
    by_destination: Vec<Candidate>,
    /// Where [`Routing::by_destination`]'s entries by destination terminal start.
    by_terminal_base: usize,
    /// Whether arriving heads prefetch their remembered candidates (`prefetch_route`): on
    /// networks of more than [`ROUTE_PREFETCH_VCS`] input VCs that remember routes.
    prefetch_routes: bool,
    /// The flag bits that set the route class (0: one class).
    by_destination_class: u8,
}

/// Input VCs above which arriving heads prefetch their remembered candidates
/// ([`Routing::prefetch_routes`]). The 1,056-node dragonfly bench case (11,880 input VCs, its
/// half-megabyte table of candidates and two megabytes of packet records beyond the L2
/// cache) runs 10% faster with it; the 8x8 mesh (1,280), whose state stays in the cache, 1%
/// slower, since the arrival then reads the packet record that routing reads again.
const ROUTE_PREFETCH_VCS: usize = 1 << 12;

/// A [`Routing::by_destination`] entry not routed yet.
const UNROUTED: Candidate = Candidate {
    port: u16::MAX,
    vcs: crate::routing::VcRange { start: 0, end: 0 },
};

/// The most entries [`Routing::by_destination`] may have (16 MB): about 2,040 routers with one
/// route class, 1,440 with two (its terminal entries included).
const BY_DESTINATION_MAX: usize = 1 << 22;

impl Routing<'_> {
    /// Calls the routing function for the head of `packet` at local input VC
    /// `local_input_vc` of router `at`, under the model's `congestion` view (built when the
    /// function is called), and returns the
    /// candidates (in `self.candidates`, or the one remembered by destination); the packet's
    /// routing state is updated. Every router model routes through here.
    #[allow(clippy::too_many_arguments)] // the engine's parts the call needs, borrowed apart
    #[inline(always)]
    fn route_head<V: crate::routing::CongestionView>(
        &mut self,
        now: u64,
        ports: &Ports,
        packets: &mut Packets,
        at: &RouterLayout,
        local_input_vc: usize,
        packet: u32,
        congestion: impl FnOnce() -> V,
    ) -> &[Candidate] {
        let remembered = self.remembered_entry(packets, at.router, packet);
        if let Some(entry) = remembered {
            if self.by_destination[entry] != UNROUTED {
                // Returned in place: no copy through `self.candidates`.
                return std::slice::from_ref(&self.by_destination[entry]);
            }
        }
        self.call_routing(
            now,
            ports,
            packets,
            at,
            local_input_vc,
            packet,
            remembered,
            congestion,
        )
    }

    /// `route_head` when the routing function is called. Out of line, so that the router
    /// pass keeps its registers for the remembered-route path (measured with the other
    /// outlined paths: docs/benchmarks.md, "Branches the data decides", step 4).
    #[allow(clippy::too_many_arguments)] // as `route_head`
    #[inline(never)]
    fn call_routing<V: crate::routing::CongestionView>(
        &mut self,
        now: u64,
        ports: &Ports,
        packets: &mut Packets,
        at: &RouterLayout,
        local_input_vc: usize,
        packet: u32,
        remembered: Option<usize>,
        congestion: impl FnOnce() -> V,
    ) -> &[Candidate] {
        self.candidates.clear();
        // Built only here: a remembered candidate needs no view.
        let congestion = congestion();
        let ctx = ports.route_context(at, local_input_vc, &congestion);
        // The packet's fields in place, not copied out and back.
        let record = &mut packets.table[packet as usize];
        self.session.route(
            now,
            &ctx,
            &record.info,
            &mut record.route,
            &mut self.rngs[at.router],
            &mut self.candidates,
        );
        // One branch for all the candidates (`|`, not `||`): this runs at every hop.
        let (num_ports, num_vcs) = (at.num_ports, self.num_vcs);
        let out_of_range = |c: &Candidate| {
            (u32::from(c.port) >= num_ports)
                | (c.vcs.start > c.vcs.end)
                | (usize::from(c.vcs.end) > num_vcs)
        };
        if self
            .candidates
            .iter()
            .fold(false, |bad, c| bad | out_of_range(c))
        {
            let c = *self
                .candidates
                .iter()
                .find(|c| out_of_range(c))
                .expect("one is");
            candidate_out_of_range(&self.session.name(), at, c, num_vcs);
        }
        if let Some(entry) = remembered {
            // Checked above, once: the entry is reused unchecked.
            assert_eq!(
                self.candidates.len(),
                1,
                "{} routes by destination with one candidate",
                self.session.name()
            );
            self.by_destination[entry] = self.candidates[0];
        }
        &self.candidates
    }

    /// Where [`Routing::by_destination`] keeps the candidate of the head of `packet` at
    /// `router`, if it keeps one.
    #[inline(always)]
    fn remembered_entry(&self, packets: &Packets, router: usize, packet: u32) -> Option<usize> {
        if self.by_destination.is_empty() {
            return None;
        }
        let info = &packets.table[packet as usize].info; // in place: the fields it needs
        let routers = self.rngs.len(); // one stream per router
        let pair = router * routers + info.dst_router as usize;
        // Without a branch: with one class (mask 0) the shift and the class are 0.
        let mask = self.by_destination_class;
        let class = usize::from(packets.table[packet as usize].route.flags & mask != 0);
        let towards_router = (pair << u32::from(mask != 0)) | class;
        let at_terminal = self.by_terminal_base + info.dst_terminal as usize;
        // A select, not a branch: whether the head has reached its destination router is
        // data the predictor cannot learn (a third of the dragonfly's hops).
        let at_destination = 0usize.wrapping_sub(usize::from(info.dst_router as usize == router));
        Some((at_terminal & at_destination) | (towards_router & !at_destination))
    }

    /// A head of `packet` reached an idle input VC of `router` (with
    /// [`Routing::prefetch_routes`]): starts loading its remembered candidate, found from its
    /// packet record, which `step` started loading a cycle earlier.
    #[inline(always)]
    fn prefetch_route(&self, packets: &Packets, router: usize, packet: u32) {
        if let Some(entry) = self.remembered_entry(packets, router, packet) {
            prefetch(&self.by_destination, entry);
        }
    }

    /// The head of `packet` at local input VC `local_input_vc` of router `at` was given VC
    /// `vc` of candidate `chosen` (global port `output_port`): the session learns the hop
    /// (`on_forward`) and, towards a router, the packet counts one more hop (the routing
    /// function saw the hops taken before this router).
    #[allow(clippy::too_many_arguments)] // as `route_head`
    #[inline(always)]
    fn forwarded<V: crate::routing::CongestionView>(
        &mut self,
        now: u64,
        ports: &Ports,
        packets: &mut Packets,
        at: &RouterLayout,
        local_input_vc: usize,
        packet: u32,
        chosen: Candidate,
        vc: usize,
        congestion: impl FnOnce() -> V,
    ) {
        if self.on_forward {
            // Inline: the call is on every hop of the dragonflies' MIN (out of line, the
            // dragonfly bench ran 3% slower).
            let info = packets.info(packet);
            let mut state = packets.table[packet as usize].route;
            let congestion = congestion();
            let ctx = ports.route_context(at, local_input_vc, &congestion);
            self.session
                .on_forward(now, &ctx, &info, chosen, vc, &mut state);
            packets.table[packet as usize].route = state;
        } else if let Some(counter) = self.forward_counter {
            let route = &mut packets.table[packet as usize].route;
            route.flags = counter.count(route.flags, chosen.port);
        }
        // Towards a router, one more hop: without a branch (whether the next hop ejects is
        // data the predictor cannot learn).
        let ejection = ports.links[at.first_port + chosen.port as usize].ejection;
        packets.table[packet as usize].route.hops += u16::from(!ejection);
    }
}

/// A routing function returned candidate `c` at router `at`, outside its ports or past the
/// channel's VCs. `Routing::route_head`, which every router model routes through, checks each
/// candidate as it is returned: the models' state tables, and their deadlock probes, are
/// indexed from the candidates without further checks (`tables::HotTable`), and before, an
/// out-of-range port or VC reached the next port's or router's VCs. A routing function that
/// does this has a bug; the run stops with what it returned.
#[cold]
#[inline(never)]
fn candidate_out_of_range(routing: &str, at: &RouterLayout, c: Candidate, num_vcs: usize) -> ! {
    panic!(
        "routing function {routing} returned port {} VCs {}..{} at router {}, which has {} ports \
         of {num_vcs} VCs",
        c.port, c.vcs.start, c.vcs.end, at.router, at.num_ports
    );
}

/// Input VCs above which a network's state is "large" (about 4 MB of input VC records, more
/// than the L2 cache of the machines we measure on, and the rest of the state with it).
const LARGE_STATE_VCS: usize = 1 << 17;

/// The routers that hold flits: the only ones visited in a cycle, in router order. A bit set,
/// so that an arrival marks its router without a branch (whether the router was already
/// marked is data the branch predictor cannot learn).
struct ActiveRouters {
    bits: tables::HotTable<u64>,
    /// A large network's active routers of the cycle (kept for its allocation).
    list: Vec<u32>,
}

impl ActiveRouters {
    #[inline]
    fn activate(&mut self, router: usize) {
        self.bits[router / 64] |= 1 << (router % 64);
    }

    /// Unmarks `router` unless it still `holds` flits.
    #[inline]
    fn keep_if(&mut self, router: usize, holds: bool) {
        self.bits[router / 64] &= !(u64::from(!holds) << (router % 64));
    }
}

/// Whether flits still move and measured packets are still out: what ends a run.
#[derive(Default)]
struct Progress {
    /// Flits injected and not yet ejected.
    flits_in_network: u64,
    /// The last cycle any flit moved.
    last_move: u64,
    /// Packets created during the measurement window and not delivered yet.
    measured_outstanding: u64,
}

/// Counters checked by the invariant tests.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub flits_injected: u64,
    pub flits_ejected: u64,
    /// Router-to-router flit transfers.
    pub flit_hops: u64,
    pub misdelivered: u64,
    pub out_of_order: u64,
    pub dropped_at_source: u64,
    /// Control packets (a learned routing's acks) created; included in `packets_created`.
    #[serde(default)]
    pub control_packets: u64,
}

impl Counters {
    /// Adds another partition's counts (the parallel engine).
    pub(crate) fn add(&mut self, other: &Counters) {
        let Counters {
            packets_created,
            packets_delivered,
            flits_injected,
            flits_ejected,
            flit_hops,
            misdelivered,
            out_of_order,
            dropped_at_source,
            control_packets,
        } = other;
        self.packets_created += packets_created;
        self.packets_delivered += packets_delivered;
        self.flits_injected += flits_injected;
        self.flits_ejected += flits_ejected;
        self.flit_hops += flit_hops;
        self.misdelivered += misdelivered;
        self.out_of_order += out_of_order;
        self.dropped_at_source += dropped_at_source;
        self.control_packets += control_packets;
    }
}

/// A simulation: the network's state and the cycle loop. `R` is the router
/// micro-architecture (the input-queued router unless built otherwise).
pub struct Engine<'a, R = InputQueuedRouter> {
    params: SimParams,
    net: Network,
    topology: &'a Topology,
    traffic: Traffic,
    now: u64,
    /// VCs per port, and flits per input VC buffer.
    num_vcs: usize,
    vc_depth: u32,
    routing: Routing<'a>,
    ports: Ports,
    channels: Channels,
    packets: Packets,
    terminals: Terminals,
    active_routers: ActiveRouters,
    /// Whether the network's state is far larger than the cache (`LARGE_STATE_VCS`). Such
    /// networks visit their active routers in router order, prefetching ahead
    /// (`RouterModel::prefetch_router`), and prefetch the traffic sources due next: in
    /// address order the state streams through the cache (the 16,512-node dragonfly: about
    /// +40% cycles/s). Small ones walk the active routers' bit set directly: their state
    /// stays in the cache, and prefetching would only add work.
    large_state: bool,
    /// Visit the active routers in decreasing order (`set_router_order`, for tests).
    descending_visits: bool,
    router: R,
    pub counters: Counters,
    pub stats: Collector,
    progress: Progress,
    /// Every delivered packet, when enabled with [`Engine::enable_log`].
    log: Option<Vec<DeliveredPacket>>,
    /// Latency per window of delivery cycles, when enabled with [`Engine::enable_timeline`].
    timeline: Option<super::stats::Timeline>,
    /// In the parallel engine, which partition this engine is (partition.rs).
    part: Option<Box<partition::PartState>>,
}

/// One delivered packet, as logged by [`Engine::enable_log`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeliveredPacket {
    pub src: u32,
    pub dst: u32,
    pub size: u32,
    pub class: u8,
    pub created: u64,
    pub injected: u64,
    pub delivered: u64,
    /// Router-to-router channels crossed.
    pub hops: u32,
}

/// Outcome of [`Engine::run`].
#[derive(Clone, Debug, PartialEq)]
pub enum RunEnd {
    /// Every measured packet arrived.
    Completed,
    /// The run was stopped as saturated, with the reason.
    Saturated(String),
    Deadlock(DeadlockReport),
}

impl<'a, R: RouterModel> Engine<'a, R> {
    pub fn now(&self) -> u64 {
        self.now
    }

    pub fn params(&self) -> &SimParams {
        &self.params
    }

    pub fn flits_in_network(&self) -> u64 {
        self.progress.flits_in_network
    }

    pub fn queued_packets(&self) -> u64 {
        self.terminals.total_queued
    }

    /// The routing session (for inspecting what a learned algorithm learned).
    pub fn session(&self) -> &dyn RoutingSession {
        self.routing.session.as_ref()
    }

    /// Ends the engine, keeping its routing session for another run.
    pub fn into_session(self) -> Box<dyn RoutingSession + 'a> {
        self.routing.session
    }

    /// How the cycle visits the active routers, whatever the network's size: listed and
    /// prefetched ahead (`prefetched`, what networks of more than `LARGE_STATE_VCS` input VCs
    /// do, which also prefetch the NICs' turns: `inject_prefetched`) or straight from the bit
    /// set, in increasing router order or (`descending`, without prefetching) decreasing. For
    /// tests and measurements: results are the same every way.
    pub fn set_router_order(&mut self, prefetched: bool, descending: bool) {
        self.large_state = prefetched;
        self.descending_visits = descending;
    }

    /// Keeps a record of every delivered packet (tests, traces, per-pair analysis).
    pub fn enable_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// Records latency per window of `window` cycles from now on (see [`Timeline`]).
    ///
    /// [`Timeline`]: super::stats::Timeline
    pub(crate) fn enable_timeline(&mut self, window: u64) {
        self.timeline = Some(super::stats::Timeline::new(window));
    }

    /// The timeline's windows (empty when not enabled); ends the recording.
    pub(crate) fn take_timeline(&mut self) -> Vec<super::stats::TimelineWindow> {
        self.timeline.take().map(|t| t.finish()).unwrap_or_default()
    }

    /// Keeps the packets delivered for a timeline of `window` cycles made later with every
    /// partition's (the parallel engine; `stats::Timeline::of_records`).
    pub(crate) fn record_timeline(&mut self, window: u64) {
        self.timeline = Some(super::stats::Timeline::recording(window));
    }

    /// The packets kept by [`Engine::record_timeline`]; ends the recording.
    pub(crate) fn take_timeline_records(&mut self) -> Vec<super::stats::PacketRecord> {
        self.timeline
            .take()
            .map(|t| t.into_records())
            .unwrap_or_default()
    }

    /// The delivered packets logged so far.
    pub fn take_log(&mut self) -> Vec<DeliveredPacket> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Creates a packet now at terminal `src` for `dst`, outside the traffic generators (for
    /// trace-driven workloads and tests). Returns false when a bounded source queue is full.
    pub fn inject_packet(&mut self, src: u32, dst: u32, size: u32, class: u8) -> bool {
        // The terminals' tables are indexed from these without further checks.
        let (terminals, classes) = (self.topology.num_terminals(), self.traffic.num_classes());
        assert!(
            (src as usize) < terminals
                && (dst as usize) < terminals
                && usize::from(class) < classes,
            "inject_packet({src}, {dst}, {size}, {class}): {terminals} terminals, {classes} traffic \
             classes"
        );
        assert!(
            size >= 1,
            "inject_packet({src}, {dst}, {size}, {class}): a packet has at least one flit"
        );
        let before = self.counters.packets_created;
        let source = src as usize * classes + class as usize;
        self.create_packet(
            NewPacket {
                src,
                dst,
                size,
                class,
            },
            source,
        );
        self.counters.packets_created > before
    }

    /// Runs warm-up, measurement and drain. Never hangs: the drain is bounded, saturation and
    /// deadlock stop the run early.
    pub fn run(&mut self) -> RunEnd {
        let end_measure = self.params.warmup_cycles + self.params.measure_cycles;
        let batch_len = (self.params.measure_cycles / self.params.batches as u64).max(1);
        let mut queue_at_batch = Vec::with_capacity(self.params.batches + 1);
        while self.now < end_measure {
            if self.now >= self.params.warmup_cycles
                && (self.now - self.params.warmup_cycles) % batch_len == 0
            {
                queue_at_batch.push(self.terminals.total_queued);
            }
            self.step();
            if let Some(d) = self.check_deadlock() {
                return RunEnd::Deadlock(d);
            }
            if self.terminals.total_queued > self.params.max_queued_packets {
                return self.saturated(format!(
                    "more than {} packets waiting in source queues at cycle {}",
                    self.params.max_queued_packets, self.now
                ));
            }
        }
        queue_at_batch.push(self.terminals.total_queued);
        if let Some(reason) = queue_growth(&queue_at_batch, self.topology.num_terminals()) {
            return self.saturated(reason);
        }
        let drain_end = end_measure + self.params.drain_cycles;
        // Traffic keeps flowing during the drain so that measured packets see the same load.
        while self.progress.measured_outstanding > 0 {
            if self.now >= drain_end {
                return self.saturated(format!(
                    "{} measured packets still undelivered {} cycles after the measurement",
                    self.progress.measured_outstanding, self.params.drain_cycles
                ));
            }
            self.step();
            if let Some(d) = self.check_deadlock() {
                return RunEnd::Deadlock(d);
            }
            if self.terminals.total_queued > self.params.max_queued_packets {
                return self.saturated(format!(
                    "more than {} packets waiting in source queues at cycle {}",
                    self.params.max_queued_packets, self.now
                ));
            }
        }
        RunEnd::Completed
    }

    /// Looks for a deadlock every [`DEADLOCK_PROBE`] cycles (partial deadlocks too, while
    /// other flits still move); `deadlock_cycles` without any movement is a deadlock even if
    /// the analysis finds no stuck VC.
    fn check_deadlock(&self) -> Option<DeadlockReport> {
        if self.progress.flits_in_network == 0 {
            return None;
        }
        if self.now - self.progress.last_move > self.params.deadlock_cycles {
            return Some(self.stall_report());
        }
        if self.now % DEADLOCK_PROBE == 0 {
            return self.find_deadlock();
        }
        None
    }

    /// A saturated run about to stop: a deadlock, if there is one, is what to report.
    fn saturated(&self, reason: String) -> RunEnd {
        match self.find_deadlock() {
            Some(d) => RunEnd::Deadlock(d),
            None => RunEnd::Saturated(reason),
        }
    }

    /// Advances one cycle.
    pub fn step(&mut self) {
        let now = self.now;
        if self.routing.hooks.advance {
            self.routing.session.advance(now);
        }
        let slot = self.channels.slot(now);
        // Credits first, so that a slot freed this cycle can be used this cycle.
        let to_routers = Channels::to_routers(slot);
        let mut credit_events = std::mem::take(&mut self.channels.credits[to_routers]);
        for &c in &credit_events {
            self.router.credit_arrived(c as usize);
        }
        credit_events.clear();
        self.channels.credits[to_routers] = credit_events;
        // Credits are listed as flits are: the terminals' list of the slot holds the
        // credits returned to NICs (their injection channels' counters).
        let to_nics = Channels::to_terminals(slot);
        let mut credit_events = std::mem::take(&mut self.channels.credits[to_nics]);
        let router_counters = self.channels.router_counters;
        for &c in &credit_events {
            self.terminals.credits[c as usize - router_counters] += 1;
        }
        credit_events.clear();
        self.channels.credits[to_nics] = credit_events;
        let mut flit_events = std::mem::take(&mut self.channels.flits[to_routers]);
        // Indexed loop: each arrival prefetches for the one `PREFETCH_AHEAD` events later.
        let large_state = self.large_state;
        for i in 0..flit_events.len() {
            if large_state {
                // Where the arrival after next delivers is itself a miss on a large network.
                if let Some(further) = flit_events.get(i + 2 * PREFETCH_AHEAD) {
                    prefetch(&self.channels.destinations, further.channel as usize);
                }
            }
            if let Some(ahead) = flit_events.get(i + PREFETCH_AHEAD) {
                let dest = self.channels.destinations[ahead.channel as usize];
                self.router
                    .prefetch_input((dest.first_vc + ahead.vc) as usize);
            }
            self.arrive(flit_events[i]);
        }
        flit_events.clear();
        self.channels.flits[to_routers] = flit_events;
        self.eject_arrivals(to_nics);
        R::arrivals_done(self);
        self.generate_traffic();
        self.inject();
        // Routers are marked active only as flits arrive (above), never while they run.
        if self.large_state {
            let mut active = std::mem::take(&mut self.active_routers.list);
            active.clear();
            for (w, &word) in self.active_routers.bits.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    active.push((w * 64) as u32 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
            for i in 0..active.len() {
                for ahead in 1..=3 {
                    if let Some(&next) = active.get(i + ahead) {
                        R::prefetch_router(self, next as usize, ahead);
                    }
                }
                self.run_active_router(active[i] as usize);
            }
            self.active_routers.list = active;
        } else if self.descending_visits {
            self.run_routers_descending();
        } else {
            for w in 0..self.active_routers.bits.len() {
                let mut bits = self.active_routers.bits[w];
                while bits != 0 {
                    let r = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    self.run_active_router(r);
                }
            }
        }
        if self.routing.prefetch_routes {
            // The next cycle's arrivals are all known now (every later send arrives later):
            // their packet records, which the arrivals read to prefetch their remembered
            // routes (`prefetch_route`) and ejection reads, start loading a whole cycle
            // ahead.
            let next = self.channels.slot(now + 1);
            for list in [Channels::to_routers(next), Channels::to_terminals(next)] {
                for event in &self.channels.flits[list] {
                    prefetch(&self.packets.table, event.flit.packet as usize);
                }
            }
        }
        self.now += 1;
    }

    /// The routers phase in decreasing router order (`set_router_order`).
    #[cold]
    fn run_routers_descending(&mut self) {
        for w in (0..self.active_routers.bits.len()).rev() {
            let mut bits = self.active_routers.bits[w];
            while bits != 0 {
                let bit = 63 - bits.leading_zeros() as usize;
                bits &= !(1 << bit);
                self.run_active_router(w * 64 + bit);
            }
        }
    }

    /// Runs active router `r`, which stays active only while it holds flits.
    #[inline(always)]
    fn run_active_router(&mut self, r: usize) {
        R::run_router(self, r);
        self.active_routers.keep_if(r, self.router.holds_flits(r));
    }

    /// The flits of wheel list `list` reach their terminals. Out of line: inlined, it made
    /// the compiler keep traffic generation out of `step` instead (3% slower on the
    /// dragonfly bench).
    #[inline(never)]
    fn eject_arrivals(&mut self, list: usize) {
        let mut flit_events = std::mem::take(&mut self.channels.flits[list]);
        for i in 0..flit_events.len() {
            if let Some(ahead) = flit_events.get(i + PREFETCH_AHEAD) {
                prefetch(&self.packets.table, ahead.flit.packet as usize);
            }
            let event = flit_events[i];
            let terminal = self.channels.destinations[event.channel as usize].terminal();
            self.eject(terminal, event.flit);
        }
        flit_events.clear();
        self.channels.flits[list] = flit_events;
    }

    /// A flit reaches a router.
    fn arrive(&mut self, event: FlitEvent) {
        let dest = self.channels.destinations[event.channel as usize];
        if self.routing.hooks.head_arrival && event.flit.index() == 0 {
            let in_port = (dest.first_local_vc as usize) / self.num_vcs;
            self.head_arrived(dest.router as usize, in_port, event.flit.packet);
        }
        R::flit_arrived(self, dest, event.vc, event.flit);
    }

    fn head_arrived(&mut self, router: usize, in_port: usize, slot: u32) {
        let packet = &mut self.packets.table[slot as usize];
        self.routing.session.on_head_arrival(
            self.now,
            router,
            in_port,
            &packet.info,
            &mut packet.route,
        );
    }
}
