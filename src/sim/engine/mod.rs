//! The cycle-accurate engine: input-queued virtual-channel routers with credit flow control.
//! The timing model is documented in docs/simulator.md.
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
//! Inside a router, input VCs are numbered locally (`li = port * V + vc`, the same numbering
//! for output VCs); the tables `lport` / `lvc` turn a local number into its port and VC, so
//! the hot paths never divide by the (runtime) VC count.

mod alloc;
mod build;
mod diagnostics;
mod router;
mod terminals;
mod view;

use std::collections::VecDeque;

use rand::SeedableRng;

use diagnostics::queue_growth;
use terminals::SourceCalendar;
use view::EngineView;

use super::config::{AllocatorKind, SimParams, Switching, VcAllocatorKind};
use super::network::{NONE, Network, Sink};
use super::stats::{Collector, PacketRecord};
use crate::routing::{
    CONTROL_CLASS, Candidate, CongestionView, ControlPacket, PacketInfo, RouteContext, RouteRng,
    RouteState, RoutingFunction, RoutingSession, SessionHooks,
};
use crate::topology::Topology;
use crate::traffic::{NewPacket, SourceState, Traffic};

/// A flit: its packet's slot and its position in the packet (0 = head), with the tail marked
/// so that moving a flit never has to look its packet up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Flit {
    pkt: u32,
    seq_tail: u32,
}

const TAIL: u32 = 1 << 31;

impl Flit {
    fn new(pkt: u32, seq: u32, tail: bool) -> Self {
        Flit {
            pkt,
            seq_tail: seq | if tail { TAIL } else { 0 },
        }
    }

    fn seq(self) -> u32 {
        self.seq_tail & !TAIL
    }

    fn is_tail(self) -> bool {
        self.seq_tail & TAIL != 0
    }
}

#[derive(Clone, Copy, Debug)]
struct FlitEvent {
    chan: u32,
    vc: u32,
    flit: Flit,
}

/// Flit buffer slots are stored in blocks of `BUF_BLOCK` consecutive slots of one input VC,
/// block-major: block `k` of every input VC lies in one array region. An emptied buffer
/// restarts at slot 0, so at moderate load nearly all waiting flits sit in the first block,
/// and those of all VCs share a compact region instead of one cache line per VC `depth * 8`
/// bytes apart (a power-of-two stride, which also maps them onto few cache sets).
const BUF_BLOCK: usize = 4;

/// The hot state of one input VC, in one 32-byte record so that the pipeline stages touch
/// one cache line per VC rather than one per array. The front flit lives in the record; the
/// flits behind it in a ring of `buf` (so a VC holding one flit never touches `buf`).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct InputVc {
    /// Cycle from which the current stage (route computation, VC or switch allocation) may
    /// act.
    ready: u64,
    /// The front flit, when `len > 0`.
    front: Flit,
    /// Flits held (the front one included), and the ring slot of the one behind the front.
    len: u32,
    head: u32,
    /// When `Active`: the output VC, as its global port and VC.
    out_port: u32,
    /// Route candidates stored for this VC (see `Engine::cands`).
    cands: u16,
    state: VcState,
    out_vc: u8,
}

// Two records per 64-byte cache line: a field added here must replace one.
const _: () = assert!(std::mem::size_of::<InputVc>() == 32);

impl InputVc {
    /// The output VC's global index (`out_port * V + out_vc`), when `Active`.
    fn out(&self, v: usize) -> usize {
        self.out_port as usize * v + usize::from(self.out_vc)
    }
}

/// An output VC: its credits (free slots downstream), the input VC holding it (`NONE` if
/// free) and its round-robin pointer.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct OutputVc {
    credits: u32,
    owner: u32,
    rr: u32,
}

/// The changing state of a global port: its output channel's next free cycle, its output
/// queue (the buffered flits of the packets that hold one of its output VCs; flits of later
/// packets queued behind them count once their packet is granted) and the allocators'
/// round-robin pointers.
#[derive(Clone, Copy, Debug, Default)]
struct PortState {
    free_at: u64,
    queue: u32,
    in_rr: u32,
    out_rr: u32,
    islip_accept: u32,
}

/// What switch traversal needs to know about a global port, in one record.
#[derive(Clone, Copy, Debug, Default)]
struct PortInfo {
    /// The output channel (`NONE` if unconnected), whether it leads to a terminal, the
    /// cycles from switch allocation to arrival and between flits.
    out_chan: u32,
    ejection: bool,
    out_delay: u32,
    out_period: u32,
    /// Where a credit returned by this port's input goes (the sender's counter of VC 0; add
    /// the VC) and how many cycles it takes.
    in_credit: u32,
    in_credit_delay: u32,
}

/// Where a channel delivers: a router's input port (`router`, the global index of the
/// port's VC 0 and its local number) or, with `router == NONE`, terminal `first`.
#[derive(Clone, Copy, Debug)]
struct ChanDest {
    router: u32,
    first: u32,
    local: u32,
}

/// A terminal's NIC: the packet it is sending, and its injection channel.
#[derive(Clone, Copy, Debug)]
struct Nic {
    /// First cycle at which the channel takes another flit.
    free_at: u64,
    /// The packet being sent (`NONE`: idle), its next flit and its VC.
    pkt: u32,
    seq: u32,
    vc: u32,
    /// Round-robin pointer over the injection VCs.
    rr: u32,
    /// The injection channel, its credit counters (in `nic_credits`, of VC 0) and the
    /// cycles from sending a flit to its arrival and between flits.
    chan: u32,
    credit_base: u32,
    delay: u32,
    period: u32,
    /// Listed in `nic_active`.
    active: bool,
}

/// Cycles between two deadlock analyses (`Engine::find_deadlock`, linear in the number of
/// VCs; well under 1% of the simulation time).
const DEADLOCK_PROBE: u64 = 1024;

/// How far `x` lies after a round-robin pointer `ptr` among `size` positions (0 = at it).
#[inline(always)]
fn rr_distance(x: u32, ptr: u32, size: u32) -> u32 {
    if x >= ptr { x - ptr } else { x + size - ptr }
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

/// Where a router's ports and VCs sit in the global numbering.
#[derive(Clone, Copy, Debug)]
struct RouterAt {
    r: usize,
    /// First global input (and output) VC.
    iv0: usize,
    /// First global port, and number of ports.
    port0: usize,
    nports: u32,
    /// Local VC numbers (`nports * V`).
    span: u32,
}

/// A VC-allocation request: the input VC (local number) nearest the output VC's round-robin
/// pointer so far, its distance from the pointer and the candidate it requested through.
#[derive(Clone, Copy, Debug, Default)]
struct VaRequest {
    dist: u32,
    li: u32,
    cand: u32,
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

/// Where an input VC stands in the pipeline. One byte, so that `InputVc` stays 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum VcState {
    /// Empty, or a head flit at the front waiting for route computation.
    Idle,
    /// Routed, waiting for an output VC.
    VcAllocation,
    /// Holds an output VC; flits go through switch allocation.
    Active,
}

/// A deadlock: input VCs holding flits that can never move again (see
/// `Engine::find_deadlock` and docs/simulator.md).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeadlockReport {
    /// The cycle it was detected.
    pub cycle: u64,
    /// Input VCs (router, port, vc) that wait on each other in a cycle (empty only when a
    /// stuck packet has no route candidate at all).
    pub cycle_vcs: Vec<(u32, u32, u32)>,
    /// Flits in the network (buffers and channels) when detected.
    pub flits_in_flight: u64,
    /// Input VCs holding flits that can never move again, and the flits they hold.
    #[serde(default)]
    pub blocked_vcs: u64,
    #[serde(default)]
    pub blocked_flits: u64,
    /// Cycles since any flit moved anywhere (0 while the rest of the network still moves:
    /// a partial deadlock).
    #[serde(default)]
    pub stalled_cycles: u64,
    /// One stuck input VC (router, port, vc).
    #[serde(default)]
    pub example_vc: Option<(u32, u32, u32)>,
}

impl std::fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "deadlock at cycle {}: {} VCs holding {} flits can never move again",
            self.cycle, self.blocked_vcs, self.blocked_flits
        )?;
        if self.cycle_vcs.is_empty() {
            if let Some((r, p, vc)) = self.example_vc {
                write!(
                    f,
                    " (no wait-for cycle: a packet at router {r} port {p} VC {vc} has no route candidate)"
                )?;
            } else {
                write!(f, " (no flit moved for {} cycles)", self.stalled_cycles)?;
            }
        } else {
            let shown: Vec<String> = self
                .cycle_vcs
                .iter()
                .take(8)
                .map(|(r, p, vc)| format!("r{r}.p{p}.vc{vc}"))
                .collect();
            let more = self.cycle_vcs.len().saturating_sub(shown.len());
            write!(
                f,
                "; wait-for cycle of {} VCs: {}{}",
                self.cycle_vcs.len(),
                shown.join(" -> "),
                if more > 0 {
                    format!(" -> ... ({more} more)")
                } else {
                    String::new()
                }
            )?;
        }
        Ok(())
    }
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

pub struct Engine<'a> {
    p: SimParams,
    net: Network,
    topo: &'a Topology,
    /// The routing algorithm's per-run side (the function itself when it does not learn).
    session: Box<dyn RoutingSession + 'a>,
    hooks: SessionHooks,
    /// Control packets the session asked for, waiting to be created.
    control_out: Vec<ControlPacket>,
    traffic: Traffic,
    now: u64,
    v: usize,
    depth: u32,
    // Local VC numbering inside a router (index = port * V + vc).
    lport: Vec<u32>,
    lvc: Vec<u32>,
    routers: Vec<RouterAt>,
    ports: Vec<PortInfo>,
    chan_dest: Vec<ChanDest>,
    // Input VCs (index = global port * V + vc).
    ivs: Vec<InputVc>,
    buf: Vec<Flit>,
    /// Distance between consecutive blocks of one VC in `buf` (input VCs x `BUF_BLOCK`).
    buf_block_stride: usize,
    // Route candidates of each input VC: `ivs[iv].cands` of them from `iv * cand_stride`.
    cand_stride: usize,
    cand_buf: Vec<Candidate>,
    route_out: Vec<Candidate>,
    // Output VCs and ports.
    ovs: Vec<OutputVc>,
    /// Per VC number: allocated as in virtual cut-through (see `Engine::grant_need`).
    cut_through_vc: Vec<bool>,
    /// Whether every VC has the same grant rule (then `grant_need` of VC 0 serves all).
    uniform_need: bool,
    port_state: Vec<PortState>,
    // Router activity.
    words: usize,
    nonempty: Vec<u64>,
    active: Vec<u32>,
    is_active: Vec<bool>,
    // Timing wheels.
    wheel_mask: u64,
    flit_wheel: Vec<Vec<FlitEvent>>,
    credit_wheel: Vec<Vec<u32>>,
    // Packets (indexed by their slot).
    packets: Vec<Packet>,
    free_slots: Vec<u32>,
    // Terminals.
    sources: Vec<SourceState>,
    calendar: SourceCalendar,
    queue: Vec<VecDeque<u32>>,
    queued_per_source: Vec<u32>,
    nics: Vec<Nic>,
    nic_credits: Vec<u32>,
    nic_active: Vec<u32>,
    total_queued: u64,
    /// Separable input-first VC allocation: each input VC's round-robin pointer over its
    /// router's local output VC numbers.
    va_ptr: Vec<u32>,
    // Per-router scratch of the allocators (bit sets over local VC / port numbers).
    va_mask: Vec<u64>,
    va_best: Vec<VaRequest>,
    sa_mask: Vec<u64>,
    out_mask: Vec<u64>,
    sa_best: Vec<(u32, u32)>, // per local output port: (distance from its pointer, input VC)
    // Bookkeeping.
    rng: RouteRng,
    new_packets: Vec<NewPacket>,
    sa_requests: Vec<(u32, u32, u32)>,
    sa_picked: Vec<(u32, u32, u32)>,
    sa_winners: Vec<u32>,
    pub counters: Counters,
    pub stats: Collector,
    flits_in_network: u64,
    last_progress: u64,
    measured_outstanding: u64,
    /// Every delivered packet, when enabled with [`Engine::enable_log`].
    log: Option<Vec<DeliveredPacket>>,
    /// Latency per window of delivery cycles, when enabled with [`Engine::enable_timeline`].
    timeline: Option<super::stats::Timeline>,
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

impl<'a> Engine<'a> {
    pub fn now(&self) -> u64 {
        self.now
    }

    pub fn params(&self) -> &SimParams {
        &self.p
    }

    pub fn flits_in_network(&self) -> u64 {
        self.flits_in_network
    }

    pub fn queued_packets(&self) -> u64 {
        self.total_queued
    }

    /// The routing session (for inspecting what a learned algorithm learned).
    pub fn session(&self) -> &dyn RoutingSession {
        self.session.as_ref()
    }

    /// Ends the engine, keeping its routing session for another run.
    pub fn into_session(self) -> Box<dyn RoutingSession + 'a> {
        self.session
    }

    /// Keeps a record of every delivered packet (tests, traces, per-pair analysis).
    pub fn enable_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// Records latency per window of `window` cycles from now on (see [`Timeline`]).
    ///
    /// [`Timeline`]: super::stats::Timeline
    pub fn enable_timeline(&mut self, window: u64) {
        self.timeline = Some(super::stats::Timeline::new(window));
    }

    /// The timeline's windows (empty when not enabled); ends the recording.
    pub fn take_timeline(&mut self) -> Vec<super::stats::TimelineWindow> {
        self.timeline.take().map(|t| t.finish()).unwrap_or_default()
    }

    /// The delivered packets logged so far.
    pub fn take_log(&mut self) -> Vec<DeliveredPacket> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Creates a packet now at terminal `src` for `dst`, outside the traffic generators (for
    /// trace-driven workloads and tests). Returns false when a bounded source queue is full.
    pub fn inject_packet(&mut self, src: u32, dst: u32, size: u32, class: u8) -> bool {
        let before = self.counters.packets_created;
        let source = src as usize * self.traffic.num_classes() + class as usize;
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
        let end_measure = self.p.warmup_cycles + self.p.measure_cycles;
        let batch_len = (self.p.measure_cycles / self.p.batches as u64).max(1);
        let mut queue_at_batch = Vec::with_capacity(self.p.batches + 1);
        while self.now < end_measure {
            if self.now >= self.p.warmup_cycles
                && (self.now - self.p.warmup_cycles) % batch_len == 0
            {
                queue_at_batch.push(self.total_queued);
            }
            self.step();
            if let Some(d) = self.check_deadlock() {
                return RunEnd::Deadlock(d);
            }
            if self.total_queued > self.p.max_queued_packets {
                return self.saturated(format!(
                    "more than {} packets waiting in source queues at cycle {}",
                    self.p.max_queued_packets, self.now
                ));
            }
        }
        queue_at_batch.push(self.total_queued);
        if let Some(reason) = queue_growth(&queue_at_batch, self.topo.num_terminals()) {
            return self.saturated(reason);
        }
        let drain_end = end_measure + self.p.drain_cycles;
        // Traffic keeps flowing during the drain so that measured packets see the same load.
        while self.measured_outstanding > 0 {
            if self.now >= drain_end {
                return self.saturated(format!(
                    "{} measured packets still undelivered {} cycles after the measurement",
                    self.measured_outstanding, self.p.drain_cycles
                ));
            }
            self.step();
            if let Some(d) = self.check_deadlock() {
                return RunEnd::Deadlock(d);
            }
            if self.total_queued > self.p.max_queued_packets {
                return self.saturated(format!(
                    "more than {} packets waiting in source queues at cycle {}",
                    self.p.max_queued_packets, self.now
                ));
            }
        }
        RunEnd::Completed
    }

    /// Looks for a deadlock every [`DEADLOCK_PROBE`] cycles (partial deadlocks too, while
    /// other flits still move); `deadlock_cycles` without any movement is a deadlock even if
    /// the analysis finds no stuck VC.
    fn check_deadlock(&self) -> Option<DeadlockReport> {
        if self.flits_in_network == 0 {
            return None;
        }
        if self.now - self.last_progress > self.p.deadlock_cycles {
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

    /// Credits an output VC numbered `vc` needs downstream before it may be granted to
    /// packet `pkt` (besides being free): in wormhole none (each flit waits for its credit at
    /// switch allocation); on a cut-through VC room for the whole packet, or the whole buffer
    /// for a packet larger than it; with `wait_for_tail_credit` the whole buffer (the
    /// previous packet's tail credit is back).
    pub(super) fn grant_need(&self, pkt: u32, vc: usize) -> u32 {
        if self.p.wait_for_tail_credit {
            self.depth
        } else if self.cut_through_vc[vc] {
            self.packets[pkt as usize].info.size.min(self.depth)
        } else {
            0
        }
    }

    /// Advances one cycle.
    pub fn step(&mut self) {
        let now = self.now;
        if self.hooks.advance {
            self.session.advance(now);
        }
        let slot = (now & self.wheel_mask) as usize;
        // Credits first, so that a slot freed this cycle can be used this cycle.
        let mut credit_events = std::mem::take(&mut self.credit_wheel[slot]);
        for &c in &credit_events {
            *self.credit_mut(c as usize) += 1;
        }
        credit_events.clear();
        self.credit_wheel[slot] = credit_events;
        let mut flit_events = std::mem::take(&mut self.flit_wheel[slot]);
        // Indexed loop: each arrival prefetches for the one `PREFETCH_AHEAD` events later.
        for i in 0..flit_events.len() {
            if let Some(ahead) = flit_events.get(i + PREFETCH_AHEAD) {
                self.prefetch_arrival(ahead);
            }
            self.arrive(flit_events[i]);
        }
        flit_events.clear();
        self.flit_wheel[slot] = flit_events;
        self.generate_traffic();
        self.inject();
        let mut active = std::mem::take(&mut self.active);
        for &r in &active {
            self.process_router(r as usize);
        }
        active.retain(|&r| {
            let words = &self.nonempty[r as usize * self.words..(r as usize + 1) * self.words];
            let keep = words.iter().any(|&w| w != 0);
            if !keep {
                self.is_active[r as usize] = false;
            }
            keep
        });
        // Routers activated during this cycle were appended to `self.active`.
        active.append(&mut self.active);
        self.active = active;
        self.now += 1;
    }

    fn activate_router(&mut self, r: usize) {
        if !self.is_active[r] {
            self.is_active[r] = true;
            self.active.push(r as u32);
        }
    }

    /// Starts loading what `arrive` will touch for `ev`: its input VC, or its packet when
    /// it reaches a terminal.
    fn prefetch_arrival(&self, ev: &FlitEvent) {
        let dest = self.chan_dest[ev.chan as usize];
        if dest.router == NONE {
            prefetch(&self.packets, ev.flit.pkt as usize);
        } else {
            prefetch(&self.ivs, (dest.first + ev.vc) as usize);
        }
    }

    fn arrive(&mut self, ev: FlitEvent) {
        let dest = self.chan_dest[ev.chan as usize];
        if dest.router == NONE {
            self.eject(dest.first, ev.flit);
            return;
        }
        let iv = (dest.first + ev.vc) as usize;
        if self.hooks.head_arrival && ev.flit.seq() == 0 {
            let in_port = (dest.local as usize) / self.v;
            self.head_arrived(dest.router as usize, in_port, ev.flit.pkt);
        }
        let ivc = self.ivs[iv];
        debug_assert!(ivc.len < self.depth, "credit protocol violated");
        if ivc.len == 0 {
            self.ivs[iv].front = ev.flit;
            // Its route is computed later this cycle.
            prefetch(&self.packets, ev.flit.pkt as usize);
        } else {
            let mut pos = ivc.head + ivc.len - 1;
            if pos >= self.depth {
                pos -= self.depth;
            }
            let slot = self.buf_slot(iv, pos);
            self.buf[slot] = ev.flit;
        }
        self.ivs[iv].len = ivc.len + 1;
        // The output queue counts the flits of the packet that holds the output VC: an
        // arrival counts when it belongs to that packet (flits arrive in order, so the
        // packet's flits are the buffered ones from the front, and with none buffered the
        // arrival is the packet's next flit).
        if ivc.state == VcState::Active && (ivc.len == 0 || ivc.front.pkt == ev.flit.pkt) {
            self.port_state[ivc.out_port as usize].queue += 1;
        }
        if ivc.len == 0 {
            let r = dest.router as usize;
            let li = (dest.local + ev.vc) as usize;
            self.nonempty[r * self.words + li / 64] |= 1 << (li % 64);
            if ivc.state == VcState::Idle {
                self.ivs[iv].ready = self.now;
            }
            self.activate_router(r);
        }
    }

    /// Index in `buf` of slot `pos` of input VC `iv` (see [`BUF_BLOCK`]).
    fn buf_slot(&self, iv: usize, pos: u32) -> usize {
        let pos = pos as usize;
        (pos / BUF_BLOCK) * self.buf_block_stride + iv * BUF_BLOCK + pos % BUF_BLOCK
    }

    /// Credit counter `c` in the numbering of `Network::chan_credit_base`: router output
    /// VCs, then terminal injection VCs.
    fn credit_mut(&mut self, c: usize) -> &mut u32 {
        let routers = self.ovs.len();
        match self.ovs.get_mut(c) {
            Some(ovc) => &mut ovc.credits,
            None => &mut self.nic_credits[c - routers],
        }
    }

    /// What routing functions know about the packet in `slot`.
    fn packet_info(&self, slot: u32) -> PacketInfo {
        self.packets[slot as usize].info
    }

    fn front(&self, iv: usize) -> Flit {
        self.ivs[iv].front
    }

    fn head_arrived(&mut self, router: usize, in_port: usize, slot: u32) {
        let pkt = &mut self.packets[slot as usize];
        self.session
            .on_head_arrival(self.now, router, in_port, &pkt.info, &mut pkt.route);
    }

    /// The route candidates computed for input VC `iv`.
    fn cands(&self, iv: usize) -> &[Candidate] {
        let start = iv * self.cand_stride;
        &self.cand_buf[start..start + usize::from(self.ivs[iv].cands)]
    }
}
