//! Terminals: traffic sources (driven by a calendar of creation cycles), source queues, NICs
//! (injection) and ejection.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::traffic::SourceState;

use super::*;

/// Traffic sources by next creation cycle: for each of the next `len` cycles (a power of
/// two, the buckets are reused cyclically) a bit set of the sources due then, so that due
/// sources come out in increasing index order without sorting; a heap for later events.
struct SourceCalendar {
    len: u64,
    words: usize,
    bits: super::tables::HotTable<u64>,
    far: BinaryHeap<Reverse<(u64, u32)>>,
}

impl SourceCalendar {
    fn new(sources: usize) -> Self {
        let words = sources.div_ceil(64).max(1);
        // A power of two from 16 to 1024 cycles, at most 4 MiB of bits if that allows 16.
        let fit = ((4 << 20) / (words * 8)).clamp(16, 1024);
        let len = 1 << fit.ilog2();
        SourceCalendar {
            len,
            words,
            bits: vec![0; len as usize * words].into(),
            far: BinaryHeap::new(),
        }
    }

    fn set(&mut self, t: u64, src: u32) {
        let bucket = (t & (self.len - 1)) as usize * self.words;
        self.bits[bucket + src as usize / 64] |= 1 << (src % 64);
    }

    /// Schedules source `src` at cycle `t >= now`.
    fn push(&mut self, t: u64, src: u32, now: u64) {
        debug_assert!(t >= now, "source scheduled in the past");
        if t - now < self.len {
            self.set(t, src);
        } else {
            self.far.push(Reverse((t, src)));
        }
    }

    /// Moves the heap's events of the next `len` cycles into the buckets; returns where the
    /// bucket of `now` starts in `bits` (its `words` words, to be taken word by word).
    fn due(&mut self, now: u64) -> usize {
        while let Some(&Reverse((t, src))) = self.far.peek() {
            if t >= now + self.len {
                break;
            }
            self.far.pop();
            self.set(t, src);
        }
        (now & (self.len - 1)) as usize * self.words
    }
}

/// A terminal's NIC: the packet it is sending, and its injection channel.
#[derive(Clone, Copy, Debug)]
struct Nic {
    /// First cycle at which the channel takes another flit.
    free_at: u64,
    /// The packet being sent (`NONE`: idle), its next flit and its VC.
    packet: u32,
    next_flit: u32,
    vc: u32,
    /// Round-robin pointer over the injection VCs.
    vc_pointer: u32,
    /// The injection channel, its credit counters (in `Terminals::credits`, of VC 0) and the
    /// cycles from sending a flit to its arrival and between flits.
    channel: u32,
    first_credit: u32,
    delay: u32,
    period: u32,
}

/// The terminals: traffic sources, source queues and NICs.
pub(super) struct Terminals {
    /// The sources of the terminals this engine runs (all of them, or a partition's own),
    /// terminal-major; the calendar numbers them by their place here.
    sources: super::tables::HotTable<SourceState>,
    /// Per entry of `sources`, its number among all sources (`terminal * classes + class`).
    source_ids: super::tables::HotTable<u32>,
    calendar: SourceCalendar,
    /// Scratch for the packets a source creates in a cycle.
    new_packets: Vec<NewPacket>,
    /// Per terminal, the packets waiting (slots), and per source (terminal x class) how many.
    source_queues: Vec<VecDeque<u32>>,
    queued_per_source: super::tables::HotTable<u32>,
    /// Traffic packets waiting in all source queues.
    pub(super) total_queued: u64,
    nics: super::tables::HotTable<Nic>,
    /// The NICs' credit counters, per terminal and VC (after the routers' counters in the
    /// numbering of `Network::chan_credit_base`).
    pub(super) credits: super::tables::HotTable<u32>,
    /// The NICs that have a packet to send, and the same as a bit set by terminal: a new
    /// packet tests its NIC's bit without loading the NIC's record, which a large network's
    /// creation would otherwise miss on (the record is prefetched for its turn instead).
    active_nics: Vec<u32>,
    nic_active: super::tables::HotTable<u64>,
    /// Whether `generate_traffic` prefetches the sources due next: when their table is
    /// larger than [`PREFETCH_SOURCES_BYTES`].
    prefetch_sources: bool,
}

/// Source tables above this size are prefetched ahead of their use: at 1,056 terminals
/// (422 KB, beside the rest of the state, beyond the 1 MB L2 cache) the dragonfly bench runs
/// 2% faster with it; the mesh bench's 64 sources stay in the cache.
const PREFETCH_SOURCES_BYTES: usize = 256 << 10;

/// How many active NICs apart `inject_prefetched`'s stages are: one NIC's turn is a few
/// hundred instructions, so four turns cover a miss to memory.
const NIC_PREFETCH_STAGE: usize = 4;

impl Terminals {
    pub(super) fn new(
        net: &Network,
        params: &SimParams,
        traffic: &Traffic,
        terminals: usize,
        owns_terminal: impl Fn(usize) -> bool,
    ) -> Self {
        let num_vcs = net.num_vcs;
        // A partition builds only its own terminals' sources, in increasing order, so that
        // due sources still come out of the calendar in the order of their global numbers.
        let own: Vec<u32> = (0..terminals as u32)
            .filter(|&t| owns_terminal(t as usize))
            .collect();
        let classes = traffic.num_classes();
        let source_ids: Vec<u32> = own
            .iter()
            .flat_map(|&t| (0..classes as u32).map(move |c| t * classes as u32 + c))
            .collect();
        let sources = traffic.new_sources_of(own);
        let prefetch_sources = std::mem::size_of_val(&sources[..]) > PREFETCH_SOURCES_BYTES;
        let mut calendar = SourceCalendar::new(sources.len());
        for (i, s) in sources.iter().enumerate() {
            if let Some(t) = traffic.next_event(s) {
                calendar.push(t, i as u32, 0);
            }
        }
        Terminals {
            sources: sources.into(),
            source_ids: source_ids.into(),
            calendar,
            new_packets: Vec::new(),
            source_queues: vec![VecDeque::new(); terminals],
            queued_per_source: vec![0; terminals * traffic.num_classes()].into(),
            total_queued: 0,
            nics: (0..terminals)
                .map(|t| {
                    let channel = net.term_inj_chan[t];
                    Nic {
                        free_at: 0,
                        packet: NONE,
                        next_flit: 0,
                        vc: 0,
                        vc_pointer: 0,
                        channel,
                        first_credit: (t * num_vcs) as u32,
                        // With the input-output-queued router a flit is whole at the router
                        // once serialised (one period) and past the input latency.
                        delay: params.injection_delay
                            + net.chan_latency[channel as usize]
                            + params.ioq.as_ref().map_or(0, |ioq| {
                                net.chan_period[channel as usize] + ioq.input_latency
                            }),
                        period: net.chan_period[channel as usize],
                    }
                })
                .collect(),
            credits: vec![params.vc_depth; terminals * num_vcs].into(),
            active_nics: Vec::new(),
            nic_active: vec![0; terminals.div_ceil(64)].into(),
            prefetch_sources,
        }
    }

    fn activate_nic(&mut self, t: usize) {
        let bit = 1 << (t % 64);
        if self.nic_active[t / 64] & bit == 0 {
            self.nic_active[t / 64] |= bit;
            self.active_nics.push(t as u32);
        }
    }

    fn deactivate_nic(&mut self, t: usize) {
        self.nic_active[t / 64] &= !(1 << (t % 64));
    }

    /// The first injection VC `start + k` (k in `0..span`, round-robin from `pointer`)
    /// whose credit counter (in `credits`, from `base`) holds at least `need`.
    fn free_injection_vc(
        &self,
        base: usize,
        start: u32,
        span: u32,
        pointer: u32,
        need: u32,
    ) -> Option<u32> {
        if span == 0 {
            return None;
        }
        let mut k = pointer % span;
        for _ in 0..span {
            let vc = start + k;
            if self.credits[base + vc as usize] >= need {
                return Some(vc);
            }
            k = if k + 1 == span { 0 } else { k + 1 };
        }
        None
    }
}

impl<R: RouterModel> Engine<'_, R> {
    pub(super) fn eject(&mut self, terminal: u32, flit: Flit) {
        self.progress.flits_in_network -= 1;
        self.counters.flits_ejected += 1;
        self.progress.last_move = self.now;
        let now = self.now;
        let packet = &mut self.packets.table[flit.packet as usize];
        debug_assert!(packet.live, "flit of a retired packet");
        if packet.info.dst_terminal != terminal {
            self.counters.misdelivered += 1;
        }
        if flit.index() != packet.received {
            self.counters.out_of_order += 1;
        }
        packet.received += 1;
        let class = packet.info.class as usize;
        let control = packet.info.class == CONTROL_CLASS;
        if flit.index() == 0 && self.routing.hooks.head_delivered {
            let (info, route) = (packet.info, packet.route);
            self.routing.session.on_head_delivered(
                now,
                &info,
                &route,
                &mut self.routing.pending_control,
            );
            if !self.routing.pending_control.is_empty() {
                self.create_control_packets();
            }
        }
        let packet = &mut self.packets.table[flit.packet as usize];
        if control {
            if flit.is_tail() {
                packet.live = false;
                self.counters.packets_delivered += 1;
                self.packets.free_slots.push(flit.packet);
            }
            return;
        }
        self.stats.ejected(class, now, 1);
        if flit.is_tail() {
            if flit.index() + 1 != packet.info.size {
                self.counters.out_of_order += 1;
            }
            let record = PacketRecord {
                class,
                created: packet.created,
                injected: packet.injected,
                delivered: now,
                hops: u32::from(packet.route.hops),
                flits: packet.info.size,
            };
            if self.stats.in_window(packet.created) {
                self.progress.measured_outstanding -= 1;
            }
            packet.live = false;
            if let Some(log) = &mut self.log {
                log.push(DeliveredPacket {
                    src: packet.info.src_terminal,
                    dst: packet.info.dst_terminal,
                    size: packet.info.size,
                    class: packet.info.class,
                    created: packet.created,
                    injected: packet.injected,
                    delivered: now,
                    hops: u32::from(packet.route.hops),
                });
            }
            if let Some(t) = &mut self.timeline {
                t.delivered(&record);
            }
            self.stats.delivered(&record);
            self.counters.packets_delivered += 1;
            self.packets.free_slots.push(flit.packet);
        }
    }

    pub(super) fn generate_traffic(&mut self) {
        let now = self.now;
        let bucket = self.terminals.calendar.due(now);
        let mut out = std::mem::take(&mut self.terminals.new_packets);
        let words = self.terminals.calendar.words;
        let classes = self.traffic.num_classes();
        for w in 0..words {
            if self.terminals.prefetch_sources && w + 1 < words {
                // The sources due next (about 400 bytes each, mostly random-number state).
                let mut next = self.terminals.calendar.bits[bucket + w + 1];
                while next != 0 {
                    let src = (w + 1) * 64 + next.trailing_zeros() as usize;
                    next &= next - 1;
                    prefetch_all(&self.terminals.sources[src..=src]);
                    // The source queue its packet joins (sources are numbered
                    // terminal-major, one per terminal and class) and that queue's NIC.
                    let t = self.terminals.source_ids[src] as usize / classes;
                    prefetch(&self.terminals.source_queues, t);
                    prefetch(&self.terminals.nics, t);
                }
            }
            // Sources processed now are rescheduled at later cycles, never into this bucket.
            let mut bits = std::mem::take(&mut self.terminals.calendar.bits[bucket + w]);
            while bits != 0 {
                let src = (w * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let s = src as usize;
                self.traffic
                    .generate(&mut self.terminals.sources[s], now, &mut out);
                let id = self.terminals.source_ids[s] as usize;
                for new_packet in out.drain(..) {
                    self.create_packet(new_packet, id);
                }
                if let Some(next) = self.traffic.next_event(&self.terminals.sources[s]) {
                    self.terminals.calendar.push(next.max(now + 1), src, now);
                }
            }
        }
        self.terminals.new_packets = out;
    }

    pub(super) fn create_packet(&mut self, new_packet: NewPacket, source: usize) {
        let class = new_packet.class as usize;
        debug_assert!(
            new_packet.class != CONTROL_CLASS,
            "traffic uses the control class"
        );
        if let Some(limit) = self.traffic.source_queue_limit(class) {
            if self.terminals.queued_per_source[source] as usize >= limit {
                self.counters.dropped_at_source += 1;
                self.stats.dropped(class, self.now, new_packet.size);
                return;
            }
        }
        let info = self.new_packet_info(
            new_packet.src,
            new_packet.dst,
            new_packet.size,
            new_packet.class,
        );
        let mut route = RouteState::default();
        let rng = &mut self.routing.rngs[info.src_router as usize];
        self.routing
            .session
            .init_packet(self.now, &info, &mut route, rng);
        let packet = Packet {
            info,
            route,
            created: self.now,
            injected: 0,
            received: 0,
            live: true,
        };
        let slot = self.packets.store(packet);
        self.counters.packets_created += 1;
        self.stats.created(class, self.now, info.size);
        if self.stats.in_window(self.now) {
            self.progress.measured_outstanding += 1;
        }
        let t = new_packet.src as usize;
        self.terminals.source_queues[t].push_back(slot);
        self.terminals.queued_per_source[source] += 1;
        self.terminals.total_queued += 1;
        self.terminals.activate_nic(t);
    }

    /// `size` is at least 1: traffic's sizes are checked when it is built, and the two ways
    /// in from outside (`inject_packet`, a session's control packets) check theirs.
    fn new_packet_info(&self, src: u32, dst: u32, size: u32, class: u8) -> PacketInfo {
        debug_assert!(size >= 1, "a packet of {size} flits");
        PacketInfo {
            id: 0,
            src_terminal: src,
            dst_terminal: dst,
            src_router: self.net.term_router[src as usize],
            dst_router: self.net.term_router[dst as usize],
            size,
            class,
        }
    }

    /// Creates the control packets the session asked for: each goes to the front of its
    /// terminal's source queue (control is not held up by queued traffic) and is counted in
    /// no statistic but the packet and flit counters.
    pub(super) fn create_control_packets(&mut self) {
        let mut list = std::mem::take(&mut self.routing.pending_control);
        let terminals = self.net.term_router.len();
        for control in list.drain(..) {
            // The terminals come from a routing session; the tables below are indexed by them.
            assert!(
                (control.from as usize) < terminals && (control.to as usize) < terminals,
                "routing session {} asked for a control packet from terminal {} to terminal {}; \
                 the network has {terminals} terminals",
                self.routing.session.name(),
                control.from,
                control.to
            );
            assert!(
                control.size >= 1,
                "routing session {} asked for a control packet of 0 flits from terminal {} to \
                 terminal {}; a packet has at least one flit",
                self.routing.session.name(),
                control.from,
                control.to
            );
            let info = self.new_packet_info(control.from, control.to, control.size, CONTROL_CLASS);
            let packet = Packet {
                info,
                route: control.state,
                created: self.now,
                injected: 0,
                received: 0,
                live: true,
            };
            let slot = self.packets.store(packet);
            self.counters.packets_created += 1;
            self.counters.control_packets += 1;
            let t = control.from as usize;
            // Behind a control packet already waiting, ahead of traffic.
            let queue = &mut self.terminals.source_queues[t];
            let pos = queue
                .iter()
                .take_while(|&&s| self.packets.table[s as usize].info.class == CONTROL_CLASS)
                .count();
            // The NIC may be sending the queue's front packet already: it left the queue.
            queue.insert(pos, slot);
            self.terminals.activate_nic(t);
        }
        self.routing.pending_control = list;
    }

    /// Each NIC sends at most one flit per channel period, one packet at a time.
    pub(super) fn inject(&mut self) {
        let now = self.now;
        let mut list = std::mem::take(&mut self.terminals.active_nics);
        if self.large_state {
            self.inject_prefetched(&mut list, now);
        } else {
            list.retain(|&t| self.inject_from(t as usize, now));
        }
        list.append(&mut self.terminals.active_nics);
        self.terminals.active_nics = list;
    }

    /// `inject`'s pass over the active NICs `list` (kept in order, those that stay active) on
    /// a network whose state is far larger than the cache: each NIC's record, source queue
    /// and packet are three dependent loads that miss there, so they are prefetched in
    /// stages ahead of the NIC's turn, each stage reading what the one before prefetched.
    fn inject_prefetched(&mut self, list: &mut Vec<u32>, now: u64) {
        let mut kept = 0;
        for i in 0..list.len() {
            if let Some(&t) = list.get(i + 3 * NIC_PREFETCH_STAGE) {
                prefetch(&self.terminals.nics, t as usize);
                prefetch(&self.terminals.source_queues, t as usize);
            }
            if let Some(&t) = list.get(i + 2 * NIC_PREFETCH_STAGE) {
                if let Some(front) = self.terminals.source_queues[t as usize].front() {
                    prefetch(std::slice::from_ref(front), 0);
                }
            }
            if let Some(&t) = list.get(i + NIC_PREFETCH_STAGE) {
                let t = t as usize;
                // The packet being sent, or else the one it will take from its queue.
                let packet = match self.terminals.nics[t].packet {
                    NONE => self.terminals.source_queues[t].front().copied(),
                    sending => Some(sending),
                };
                if let Some(slot) = packet {
                    prefetch(&self.packets.table, slot as usize);
                }
            }
            let t = list[i];
            if self.inject_from(t as usize, now) {
                list[kept] = t;
                kept += 1;
            }
        }
        list.truncate(kept);
    }

    /// One NIC's turn; returns whether it stays active.
    fn inject_from(&mut self, t: usize, now: u64) -> bool {
        let mut nic = self.terminals.nics[t];
        if nic.free_at > now {
            return true;
        }
        if nic.packet == NONE {
            let Some(&slot) = self.terminals.source_queues[t].front() else {
                self.terminals.deactivate_nic(t);
                return false;
            };
            // Read in place, not copied: the packet was written field by field when it was
            // created, usually this cycle, and a copy's wide loads across those stores stall
            // until they reach the cache (a quarter of this function's time on the dragonfly
            // bench).
            let packet = &self.packets.table[slot as usize];
            let (info, route) = (&packet.info, &packet.route);
            let range = self
                .routing
                .session
                .injection_vcs(info, route, self.num_vcs);
            let need = match self.params.switching {
                Switching::Wormhole => 1,
                // The input-output-queued router takes a packet larger than the buffer once
                // the buffer is empty (io_queued/mod.rs, `credits_to_start`).
                Switching::VirtualCutThrough if self.params.ioq.is_some() => {
                    info.size.min(self.vc_depth)
                }
                Switching::VirtualCutThrough => info.size,
            };
            // The NIC's credit counters are indexed from this range without further checks.
            assert!(
                range.start < range.end && usize::from(range.end) <= self.num_vcs,
                "routing function {} gave injection VCs {}..{} of {}",
                self.routing.session.name(),
                range.start,
                range.end,
                self.num_vcs
            );
            let start = u32::from(range.start);
            let span = u32::from(range.end - range.start);
            let base = nic.first_credit as usize;
            let Some(vc) =
                self.terminals
                    .free_injection_vc(base, start, span, nic.vc_pointer, need)
            else {
                return true;
            };
            nic.vc_pointer = (vc - start + 1) % span;
            self.terminals.source_queues[t].pop_front();
            let class = self.packets.table[slot as usize].info.class;
            if class != CONTROL_CLASS {
                self.terminals.queued_per_source
                    [t * self.traffic.num_classes() + class as usize] -= 1;
                self.terminals.total_queued -= 1;
            }
            self.packets.table[slot as usize].injected = now;
            (nic.packet, nic.next_flit, nic.vc) = (slot, 0, vc);
        }
        let counter = (nic.first_credit + nic.vc) as usize;
        if self.terminals.credits[counter] == 0 {
            self.terminals.nics[t] = nic;
            return true;
        }
        self.terminals.credits[counter] -= 1;
        let size = self.packets.table[nic.packet as usize].info.size;
        let tail = nic.next_flit + 1 == size;
        self.channels.send_flit(
            now + u64::from(nic.delay),
            FlitEvent {
                channel: nic.channel,
                vc: nic.vc,
                flit: Flit::new(nic.packet, nic.next_flit, tail),
            },
            // A terminal belongs to its router's partition, and sends to a router.
            false,
            false,
        );
        self.progress.flits_in_network += 1;
        self.counters.flits_injected += 1;
        self.progress.last_move = now;
        nic.free_at = now + u64::from(nic.period);
        let stays = if tail {
            (nic.packet, nic.next_flit, nic.vc) = (NONE, 0, 0);
            let stays = !self.terminals.source_queues[t].is_empty();
            if !stays {
                self.terminals.deactivate_nic(t);
            }
            stays
        } else {
            nic.next_flit += 1;
            true
        };
        self.terminals.nics[t] = nic;
        stays
    }
}
