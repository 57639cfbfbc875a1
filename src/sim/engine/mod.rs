//! The cycle-accurate engine: input-queued virtual-channel routers with credit flow control.
//! The timing model is documented in docs/simulator.md.
//!
//! Data-oriented on purpose (the simulator is the fitness evaluator for every search): all
//! state lives in flat arrays indexed by global port / VC / channel numbers; flits are 8-byte
//! values in preallocated per-VC ring buffers; flits and credits in flight sit in timing
//! wheels indexed by arrival cycle; routers are visited only while they hold flits, and inside
//! a router only the non-empty input VCs (a bit set) are looked at. No heap allocation per
//! flit; per packet only a slot in a reusable table.

mod alloc;
mod diagnostics;
mod view;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rand::SeedableRng;

use diagnostics::queue_growth;
use view::EngineView;

use super::config::{AllocatorKind, SimParams, Switching};
use super::network::{NONE, Network, Sink};
use super::stats::{Collector, PacketRecord};
use crate::routing::{
    Candidate, CongestionView, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction,
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

#[derive(Clone, Debug)]
struct Packet {
    info: PacketInfo,
    route: RouteState,
    created: u64,
    injected: u64,
    received: u32,
    live: bool,
}

// Input VC states.
const IDLE: u8 = 0; // empty, or a head flit at the front waiting for route computation
const VC_ALLOC: u8 = 1; // routed, waiting for an output VC
const ACTIVE: u8 = 2; // holds an output VC; flits go through switch allocation

/// Why a run stopped early, or what it found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DeadlockReport {
    pub cycle: u64,
    /// The input VCs (router, port, vc) that wait on each other in a cycle.
    pub cycle_vcs: Vec<(u32, u32, u32)>,
    pub flits_in_flight: u64,
}

/// Counters checked by the invariant tests.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
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
}

pub struct Engine<'a> {
    p: SimParams,
    net: Network,
    topo: &'a Topology,
    routing: &'a dyn RoutingFunction,
    traffic: Traffic,
    now: u64,
    v: usize,
    depth: u32,
    // Input VCs (index = global port * V + vc).
    buf: Vec<Flit>,
    buf_head: Vec<u32>,
    buf_len: Vec<u32>,
    iv_state: Vec<u8>,
    iv_ready: Vec<u64>,
    iv_out: Vec<u32>, // output VC index (global port * V + vc) when ACTIVE
    iv_cands: Vec<Vec<Candidate>>,
    // Output VCs and ports.
    credits: Vec<u32>, // router output VCs, then terminal injection VCs
    ov_owner: Vec<u32>,
    ov_rr: Vec<u32>,
    out_queue: Vec<u32>, // per global port: flits in ACTIVE input VCs routed to it
    out_free_at: Vec<u64>,
    in_rr: Vec<u32>,
    out_rr: Vec<u32>,
    // Router activity.
    words: usize,
    nonempty: Vec<u64>,
    active: Vec<u32>,
    is_active: Vec<bool>,
    // Timing wheels.
    wheel_mask: u64,
    flit_wheel: Vec<Vec<FlitEvent>>,
    credit_wheel: Vec<Vec<u32>>,
    // Packets.
    packets: Vec<Packet>,
    free_slots: Vec<u32>,
    // Terminals.
    sources: Vec<SourceState>,
    source_heap: BinaryHeap<Reverse<(u64, u32)>>,
    queue: Vec<VecDeque<u32>>,
    queued_per_source: Vec<u32>,
    nic_cur: Vec<(u32, u32, u32)>, // (packet, next seq, vc); packet NONE = idle
    nic_free_at: Vec<u64>,
    nic_rr: Vec<u32>,
    nic_active: Vec<u32>,
    nic_is_active: Vec<bool>,
    total_queued: u64,
    // Bookkeeping.
    rng: RouteRng,
    new_packets: Vec<NewPacket>,
    va_requests: Vec<(u32, u32)>,
    sa_requests: Vec<(u32, u32, u32)>,
    sa_picked: Vec<(u32, u32, u32)>,
    sa_winners: Vec<u32>,
    islip_accept: Vec<u32>,
    pub counters: Counters,
    pub stats: Collector,
    flits_in_network: u64,
    last_progress: u64,
    measured_outstanding: u64,
    /// Every delivered packet, when enabled with [`Engine::enable_log`].
    log: Option<Vec<DeliveredPacket>>,
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
    pub fn new(
        topo: &'a Topology,
        routing: &'a dyn RoutingFunction,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
    ) -> Self {
        let v = params.num_vcs;
        let net = Network::new(topo, v);
        let ports = net.num_ports();
        let ivs = ports * v;
        let depth = params.vc_depth;
        let max_ports = (0..net.num_routers())
            .map(|r| net.ports_of(r))
            .max()
            .unwrap_or(0);
        let words = (max_ports * v).div_ceil(64).max(1);
        let horizon = u64::from(
            params.sw_alloc_delay + params.st_delay + params.credit_delay + params.injection_delay,
        ) + u64::from(net.max_latency)
            + 2;
        let wheel_len = horizon.next_power_of_two();
        let mut credits = vec![depth; net.num_credit_counters()];
        for (gp, &ej) in net.out_is_ejection.iter().enumerate() {
            if ej {
                // Terminals always accept flits: ejection VCs never run out of credits.
                credits[gp * v..(gp + 1) * v].fill(u32::MAX / 2);
            }
        }
        let sources = traffic.new_sources();
        let mut source_heap = BinaryHeap::new();
        for (i, s) in sources.iter().enumerate() {
            if let Some(t) = traffic.next_event(s) {
                source_heap.push(Reverse((t, i as u32)));
            }
        }
        let terminals = topo.num_terminals();
        let window = params.warmup_cycles;
        let stats = Collector::new(
            traffic.num_classes(),
            window,
            params.measure_cycles,
            params.batches,
        );
        Engine {
            net,
            topo,
            routing,
            now: 0,
            v,
            depth,
            buf: vec![Flit::new(0, 0, false); ivs * depth as usize],
            buf_head: vec![0; ivs],
            buf_len: vec![0; ivs],
            iv_state: vec![IDLE; ivs],
            iv_ready: vec![0; ivs],
            iv_out: vec![NONE; ivs],
            iv_cands: vec![Vec::new(); ivs],
            credits,
            ov_owner: vec![NONE; ivs],
            ov_rr: vec![0; ivs],
            out_queue: vec![0; ports],
            out_free_at: vec![0; ports],
            in_rr: vec![0; ports],
            out_rr: vec![0; ports],
            words,
            nonempty: vec![0; topo.num_routers() * words],
            active: Vec::new(),
            is_active: vec![false; topo.num_routers()],
            wheel_mask: wheel_len - 1,
            flit_wheel: vec![Vec::new(); wheel_len as usize],
            credit_wheel: vec![Vec::new(); wheel_len as usize],
            packets: Vec::new(),
            free_slots: Vec::new(),
            sources,
            source_heap,
            queue: vec![VecDeque::new(); terminals],
            queued_per_source: vec![0; terminals * traffic.num_classes()],
            nic_cur: vec![(NONE, 0, 0); terminals],
            nic_free_at: vec![0; terminals],
            nic_rr: vec![0; terminals],
            nic_active: Vec::new(),
            nic_is_active: vec![false; terminals],
            total_queued: 0,
            rng: RouteRng::seed_from_u64(seed ^ 0x005E_ED0F_0E7E),
            new_packets: Vec::new(),
            va_requests: Vec::new(),
            sa_requests: Vec::new(),
            sa_picked: Vec::new(),
            sa_winners: Vec::new(),
            islip_accept: vec![0; ports],
            counters: Counters::default(),
            stats,
            flits_in_network: 0,
            last_progress: 0,
            measured_outstanding: 0,
            log: None,
            traffic,
            p: params,
        }
    }

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

    /// Keeps a record of every delivered packet (tests, traces, per-pair analysis).
    pub fn enable_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
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
                return RunEnd::Saturated(format!(
                    "more than {} packets waiting in source queues at cycle {}",
                    self.p.max_queued_packets, self.now
                ));
            }
        }
        queue_at_batch.push(self.total_queued);
        if let Some(reason) = queue_growth(&queue_at_batch, self.topo.num_terminals()) {
            return RunEnd::Saturated(reason);
        }
        let drain_end = end_measure + self.p.drain_cycles;
        // Traffic keeps flowing during the drain so that measured packets see the same load.
        while self.measured_outstanding > 0 {
            if self.now >= drain_end {
                return RunEnd::Saturated(format!(
                    "{} measured packets still undelivered {} cycles after the measurement",
                    self.measured_outstanding, self.p.drain_cycles
                ));
            }
            self.step();
            if let Some(d) = self.check_deadlock() {
                return RunEnd::Deadlock(d);
            }
            if self.total_queued > self.p.max_queued_packets {
                return RunEnd::Saturated(format!(
                    "more than {} packets waiting in source queues at cycle {}",
                    self.p.max_queued_packets, self.now
                ));
            }
        }
        RunEnd::Completed
    }

    fn check_deadlock(&self) -> Option<DeadlockReport> {
        if self.flits_in_network > 0 && self.now - self.last_progress > self.p.deadlock_cycles {
            Some(self.deadlock_report())
        } else {
            None
        }
    }

    /// Advances one cycle.
    pub fn step(&mut self) {
        let now = self.now;
        let slot = (now & self.wheel_mask) as usize;
        // Credits first, so that a slot freed this cycle can be used this cycle.
        let mut credit_events = std::mem::take(&mut self.credit_wheel[slot]);
        for &c in &credit_events {
            self.credits[c as usize] += 1;
        }
        credit_events.clear();
        self.credit_wheel[slot] = credit_events;
        let mut flit_events = std::mem::take(&mut self.flit_wheel[slot]);
        for ev in flit_events.drain(..) {
            self.arrive(ev);
        }
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

    fn arrive(&mut self, ev: FlitEvent) {
        match self.net.chan_sink[ev.chan as usize] {
            Sink::Router(gp) => {
                let iv = gp as usize * self.v + ev.vc as usize;
                let len = self.buf_len[iv];
                debug_assert!(len < self.depth, "credit protocol violated");
                let mut pos = self.buf_head[iv] + len;
                if pos >= self.depth {
                    pos -= self.depth;
                }
                self.buf[iv * self.depth as usize + pos as usize] = ev.flit;
                self.buf_len[iv] = len + 1;
                if self.iv_state[iv] == ACTIVE {
                    let out_port = self.iv_out[iv] as usize / self.v;
                    self.out_queue[out_port] += 1;
                }
                if len == 0 {
                    let r = self.net.port_router[gp as usize] as usize;
                    let li = iv - self.net.port_base[r] as usize * self.v;
                    self.nonempty[r * self.words + li / 64] |= 1 << (li % 64);
                    if self.iv_state[iv] == IDLE {
                        self.iv_ready[iv] = self.now;
                    }
                    self.activate_router(r);
                }
            }
            Sink::Terminal(t) => self.eject(t, ev.flit),
        }
    }

    fn eject(&mut self, terminal: u32, flit: Flit) {
        self.flits_in_network -= 1;
        self.counters.flits_ejected += 1;
        self.last_progress = self.now;
        let now = self.now;
        let pkt = &mut self.packets[flit.pkt as usize];
        debug_assert!(pkt.live, "flit of a retired packet");
        if pkt.info.dst_terminal != terminal {
            self.counters.misdelivered += 1;
        }
        if flit.seq() != pkt.received {
            self.counters.out_of_order += 1;
        }
        pkt.received += 1;
        let class = pkt.info.class as usize;
        self.stats.ejected(class, now, 1);
        if flit.is_tail() {
            if flit.seq() + 1 != pkt.info.size {
                self.counters.out_of_order += 1;
            }
            let rec = PacketRecord {
                class,
                created: pkt.created,
                injected: pkt.injected,
                delivered: now,
                hops: u32::from(pkt.route.hops),
                flits: pkt.info.size,
            };
            if self.stats.in_window(pkt.created) {
                self.measured_outstanding -= 1;
            }
            pkt.live = false;
            if let Some(log) = &mut self.log {
                log.push(DeliveredPacket {
                    src: pkt.info.src_terminal,
                    dst: pkt.info.dst_terminal,
                    size: pkt.info.size,
                    class: pkt.info.class,
                    created: pkt.created,
                    injected: pkt.injected,
                    delivered: now,
                    hops: u32::from(pkt.route.hops),
                });
            }
            self.stats.delivered(&rec);
            self.counters.packets_delivered += 1;
            self.free_slots.push(flit.pkt);
        }
    }

    fn generate_traffic(&mut self) {
        let now = self.now;
        while let Some(&Reverse((t, src))) = self.source_heap.peek() {
            if t > now {
                break;
            }
            self.source_heap.pop();
            let mut out = std::mem::take(&mut self.new_packets);
            self.traffic
                .generate(&mut self.sources[src as usize], now, &mut out);
            for np in out.drain(..) {
                self.create_packet(np, src as usize);
            }
            self.new_packets = out;
            if let Some(next) = self.traffic.next_event(&self.sources[src as usize]) {
                self.source_heap.push(Reverse((next.max(now + 1), src)));
            }
        }
    }

    fn create_packet(&mut self, np: NewPacket, source: usize) {
        let class = np.class as usize;
        if let Some(limit) = self.traffic.source_queue_limit(class) {
            if self.queued_per_source[source] as usize >= limit {
                self.counters.dropped_at_source += 1;
                return;
            }
        }
        let info = PacketInfo {
            id: 0,
            src_terminal: np.src,
            dst_terminal: np.dst,
            src_router: self.net.term_router[np.src as usize],
            dst_router: self.net.term_router[np.dst as usize],
            size: np.size.max(1),
            class: np.class,
        };
        let mut route = RouteState::default();
        self.routing.init_packet(&info, &mut route, &mut self.rng);
        let packet = Packet {
            info,
            route,
            created: self.now,
            injected: 0,
            received: 0,
            live: true,
        };
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.packets[s as usize] = packet;
                s
            }
            None => {
                self.packets.push(packet);
                (self.packets.len() - 1) as u32
            }
        };
        self.packets[slot as usize].info.id = slot;
        self.counters.packets_created += 1;
        self.stats.created(class, self.now, info.size);
        if self.stats.in_window(self.now) {
            self.measured_outstanding += 1;
        }
        let t = np.src as usize;
        self.queue[t].push_back(slot);
        self.queued_per_source[source] += 1;
        self.total_queued += 1;
        if !self.nic_is_active[t] {
            self.nic_is_active[t] = true;
            self.nic_active.push(t as u32);
        }
    }

    /// Each NIC sends at most one flit per channel period, one packet at a time.
    fn inject(&mut self) {
        let now = self.now;
        let mut list = std::mem::take(&mut self.nic_active);
        list.retain(|&t| {
            let t = t as usize;
            if self.nic_free_at[t] > now {
                return true;
            }
            if self.nic_cur[t].0 == NONE {
                let Some(&slot) = self.queue[t].front() else {
                    self.nic_is_active[t] = false;
                    return false;
                };
                let pkt = &self.packets[slot as usize];
                let range = self.routing.injection_vcs(&pkt.info, &pkt.route, self.v);
                let need = match self.p.switching {
                    Switching::Wormhole => 1,
                    Switching::VirtualCutThrough => pkt.info.size,
                };
                let base = self.net.term_credit_base[t] as usize;
                let span = range.end.saturating_sub(range.start) as u32;
                let Some(vc) = (0..span)
                    .map(|k| range.start as u32 + (self.nic_rr[t] + k) % span.max(1))
                    .find(|&vc| self.credits[base + vc as usize] >= need)
                else {
                    return true;
                };
                self.nic_rr[t] = (vc - range.start as u32 + 1) % span.max(1);
                self.queue[t].pop_front();
                let class = pkt.info.class as usize;
                self.queued_per_source[t * self.traffic.num_classes() + class] -= 1;
                self.total_queued -= 1;
                self.packets[slot as usize].injected = now;
                self.nic_cur[t] = (slot, 0, vc);
            }
            let (slot, seq, vc) = self.nic_cur[t];
            let counter = self.net.term_credit_base[t] as usize + vc as usize;
            if self.credits[counter] == 0 {
                return true;
            }
            self.credits[counter] -= 1;
            let chan = self.net.term_inj_chan[t];
            let arrival = now
                + u64::from(self.p.injection_delay)
                + u64::from(self.net.chan_latency[chan as usize]);
            self.flit_wheel[(arrival & self.wheel_mask) as usize].push(FlitEvent {
                chan,
                vc,
                flit: Flit::new(slot, seq, seq + 1 == self.packets[slot as usize].info.size),
            });
            self.flits_in_network += 1;
            self.counters.flits_injected += 1;
            self.last_progress = now;
            self.nic_free_at[t] = now + u64::from(self.net.chan_period[chan as usize]);
            let size = self.packets[slot as usize].info.size;
            if seq + 1 == size {
                self.nic_cur[t] = (NONE, 0, 0);
                if self.queue[t].is_empty() {
                    self.nic_is_active[t] = false;
                    return false;
                }
            } else {
                self.nic_cur[t] = (slot, seq + 1, vc);
            }
            true
        });
        list.append(&mut self.nic_active);
        self.nic_active = list;
    }

    fn front(&self, iv: usize) -> Flit {
        self.buf[iv * self.depth as usize + self.buf_head[iv] as usize]
    }

    fn process_router(&mut self, r: usize) {
        let now = self.now;
        let v = self.v;
        let base_iv = self.net.port_base[r] as usize * v;
        self.va_requests.clear();
        self.sa_requests.clear();
        for w in 0..self.words {
            let mut bits = self.nonempty[r * self.words + w];
            while bits != 0 {
                let li = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let iv = base_iv + li;
                if self.iv_state[iv] == IDLE && self.iv_ready[iv] <= now {
                    self.compute_route(r, iv);
                }
                if self.iv_state[iv] == VC_ALLOC && self.iv_ready[iv] <= now {
                    self.request_vc(iv);
                }
            }
        }
        if !self.va_requests.is_empty() {
            self.allocate_vcs(r, base_iv);
        }
        // Switch allocation over the input VCs that hold an output VC.
        for w in 0..self.words {
            let mut bits = self.nonempty[r * self.words + w];
            while bits != 0 {
                let li = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let iv = base_iv + li;
                if self.iv_state[iv] != ACTIVE || self.iv_ready[iv] > now {
                    continue;
                }
                let ov = self.iv_out[iv] as usize;
                let out_port = ov / v;
                if self.credits[ov] == 0 || self.out_free_at[out_port] > now {
                    continue;
                }
                self.sa_requests
                    .push((iv as u32 / v as u32, iv as u32, out_port as u32));
            }
        }
        if !self.sa_requests.is_empty() {
            self.allocate_switch(r);
        }
    }

    fn compute_route(&mut self, r: usize, iv: usize) {
        let flit = self.front(iv);
        debug_assert_eq!(
            flit.seq(),
            0,
            "a packet's first flit reached an idle VC mid-packet"
        );
        let gp = iv / self.v;
        let pkt = &mut self.packets[flit.pkt as usize];
        let ctx_router = r;
        let in_port = gp - self.net.port_base[r] as usize;
        let in_vc = iv % self.v;
        let mut cands = std::mem::take(&mut self.iv_cands[iv]);
        cands.clear();
        {
            let congestion = EngineView::of_parts(
                &self.credits,
                &self.ov_owner,
                &self.out_queue,
                &self.buf_len,
                &self.net,
                self.depth,
            );
            let ctx = RouteContext {
                router: ctx_router,
                in_port,
                in_vc,
                congestion: &congestion,
            };
            let mut state = pkt.route;
            self.routing
                .route(&ctx, &pkt.info, &mut state, &mut self.rng, &mut cands);
            pkt.route = state;
        }
        self.iv_cands[iv] = cands;
        self.iv_state[iv] = VC_ALLOC;
        self.iv_ready[iv] = self.now + u64::from(self.p.routing_delay);
    }

    /// Input stage of VC allocation: the first candidate with a free output VC.
    fn request_vc(&mut self, iv: usize) {
        let flit = self.front(iv);
        let size = self.packets[flit.pkt as usize].info.size;
        let r = self.net.port_router[iv / self.v] as usize;
        let pb = self.net.port_base[r] as usize;
        for c in &self.iv_cands[iv] {
            let gp = pb + c.port as usize;
            for vc in c.vcs.iter() {
                let ov = gp * self.v + vc;
                if self.ov_owner[ov] != NONE {
                    continue;
                }
                let room = match self.p.switching {
                    Switching::Wormhole => true,
                    Switching::VirtualCutThrough => self.credits[ov] >= size,
                };
                if room {
                    self.va_requests.push((ov as u32, iv as u32));
                    return;
                }
            }
        }
    }

    /// Moves the front flit of input VC `iv` through the crossbar onto its output channel.
    fn traverse(&mut self, r: usize, iv: usize, now: u64) {
        let v = self.v;
        let flit = self.front(iv);
        self.buf_len[iv] -= 1;
        // An emptied buffer restarts at slot 0, so that lightly used VCs touch only the first
        // cache lines of their slots (the slot array of a 256-flit-deep network is large).
        self.buf_head[iv] = if self.buf_len[iv] == 0 || self.buf_head[iv] + 1 == self.depth {
            0
        } else {
            self.buf_head[iv] + 1
        };
        let ov = self.iv_out[iv] as usize;
        let out_port = ov / v;
        self.out_queue[out_port] -= 1;
        // Credit back to whoever feeds this input VC.
        let gp_in = iv / v;
        let in_chan = self.net.in_chan[gp_in] as usize;
        let credit_at =
            now + u64::from(self.p.credit_delay) + u64::from(self.net.chan_latency[in_chan]);
        let counter = self.net.chan_credit_base[in_chan] + (iv % v) as u32;
        self.credit_wheel[(credit_at & self.wheel_mask) as usize].push(counter);
        // Onto the output channel.
        let out_chan = self.net.out_chan[out_port];
        if !self.net.out_is_ejection[out_port] {
            self.credits[ov] -= 1;
            self.counters.flit_hops += 1;
        }
        let arrival = now
            + u64::from(self.p.sw_alloc_delay + self.p.st_delay)
            + u64::from(self.net.chan_latency[out_chan as usize]);
        self.flit_wheel[(arrival & self.wheel_mask) as usize].push(FlitEvent {
            chan: out_chan,
            vc: (ov % v) as u32,
            flit,
        });
        self.out_free_at[out_port] = now + u64::from(self.net.chan_period[out_chan as usize]);
        self.last_progress = now;
        if flit.is_tail() {
            self.ov_owner[ov] = NONE;
            self.iv_state[iv] = IDLE;
            self.iv_out[iv] = NONE;
            self.iv_ready[iv] = now + 1;
        }
        if self.buf_len[iv] == 0 {
            let li = iv - self.net.port_base[r] as usize * v;
            self.nonempty[r * self.words + li / 64] &= !(1 << (li % 64));
        }
    }
}
