//! Terminals: traffic sources (driven by a calendar of creation cycles), source queues, NICs
//! (injection) and ejection.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::*;

/// Traffic sources by next creation cycle: for each of the next `len` cycles (a power of
/// two, the buckets are reused cyclically) a bit set of the sources due then, so that due
/// sources come out in increasing index order without sorting; a heap for later events.
pub(super) struct SourceCalendar {
    len: u64,
    words: usize,
    bits: Vec<u64>,
    far: BinaryHeap<Reverse<(u64, u32)>>,
}

impl SourceCalendar {
    pub(super) fn new(sources: usize) -> Self {
        let words = sources.div_ceil(64).max(1);
        // A power of two from 16 to 1024 cycles, at most 4 MiB of bits if that allows 16.
        let fit = ((4 << 20) / (words * 8)).clamp(16, 1024);
        let len = 1 << fit.ilog2();
        SourceCalendar {
            len,
            words,
            bits: vec![0; len as usize * words],
            far: BinaryHeap::new(),
        }
    }

    fn set(&mut self, t: u64, src: u32) {
        let bucket = (t & (self.len - 1)) as usize * self.words;
        self.bits[bucket + src as usize / 64] |= 1 << (src % 64);
    }

    /// Schedules source `src` at cycle `t >= now`.
    pub(super) fn push(&mut self, t: u64, src: u32, now: u64) {
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

impl Engine<'_> {
    pub(super) fn eject(&mut self, terminal: u32, flit: Flit) {
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
        let control = pkt.info.class == CONTROL_CLASS;
        if flit.seq() == 0 && self.hooks.head_delivered {
            let (info, route) = (pkt.info, pkt.route);
            self.session
                .on_head_delivered(now, &info, &route, &mut self.control_out);
            if !self.control_out.is_empty() {
                self.create_control_packets();
            }
        }
        let pkt = &mut self.packets[flit.pkt as usize];
        if control {
            if flit.is_tail() {
                pkt.live = false;
                self.counters.packets_delivered += 1;
                self.free_slots.push(flit.pkt);
            }
            return;
        }
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
            if let Some(t) = &mut self.timeline {
                t.delivered(&rec);
            }
            self.stats.delivered(&rec);
            self.counters.packets_delivered += 1;
            self.free_slots.push(flit.pkt);
        }
    }

    pub(super) fn generate_traffic(&mut self) {
        let now = self.now;
        let bucket = self.calendar.due(now);
        let mut out = std::mem::take(&mut self.new_packets);
        for w in 0..self.calendar.words {
            // Sources processed now are rescheduled at later cycles, never into this bucket.
            let mut bits = std::mem::take(&mut self.calendar.bits[bucket + w]);
            while bits != 0 {
                let src = (w * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let s = src as usize;
                self.traffic.generate(&mut self.sources[s], now, &mut out);
                for np in out.drain(..) {
                    self.create_packet(np, s);
                }
                if let Some(next) = self.traffic.next_event(&self.sources[s]) {
                    self.calendar.push(next.max(now + 1), src, now);
                }
            }
        }
        self.new_packets = out;
    }

    pub(super) fn create_packet(&mut self, np: NewPacket, source: usize) {
        let class = np.class as usize;
        debug_assert!(np.class != CONTROL_CLASS, "traffic uses the control class");
        if let Some(limit) = self.traffic.source_queue_limit(class) {
            if self.queued_per_source[source] as usize >= limit {
                self.counters.dropped_at_source += 1;
                self.stats.dropped(class, self.now, np.size.max(1));
                return;
            }
        }
        let info = self.new_packet_info(np.src, np.dst, np.size, np.class);
        let mut route = RouteState::default();
        self.session
            .init_packet(self.now, &info, &mut route, &mut self.rng);
        let packet = Packet {
            info,
            route,
            created: self.now,
            injected: 0,
            received: 0,
            live: true,
        };
        let slot = self.store_packet(packet);
        self.counters.packets_created += 1;
        self.stats.created(class, self.now, info.size);
        if self.stats.in_window(self.now) {
            self.measured_outstanding += 1;
        }
        let t = np.src as usize;
        self.queue[t].push_back(slot);
        self.queued_per_source[source] += 1;
        self.total_queued += 1;
        self.activate_nic(t);
    }

    fn new_packet_info(&self, src: u32, dst: u32, size: u32, class: u8) -> PacketInfo {
        PacketInfo {
            id: 0,
            src_terminal: src,
            dst_terminal: dst,
            src_router: self.net.term_router[src as usize],
            dst_router: self.net.term_router[dst as usize],
            size: size.max(1),
            class,
        }
    }

    fn activate_nic(&mut self, t: usize) {
        if !self.nics[t].active {
            self.nics[t].active = true;
            self.nic_active.push(t as u32);
        }
    }

    /// Creates the control packets the session asked for: each goes to the front of its
    /// terminal's source queue (control is not held up by queued traffic) and is counted in
    /// no statistic but the packet and flit counters.
    pub(super) fn create_control_packets(&mut self) {
        let mut list = std::mem::take(&mut self.control_out);
        for cp in list.drain(..) {
            let info = self.new_packet_info(cp.from, cp.to, cp.size, CONTROL_CLASS);
            let packet = Packet {
                info,
                route: cp.state,
                created: self.now,
                injected: 0,
                received: 0,
                live: true,
            };
            let slot = self.store_packet(packet);
            self.counters.packets_created += 1;
            self.counters.control_packets += 1;
            let t = cp.from as usize;
            // Behind a control packet already waiting, ahead of traffic.
            let pos = self.queue[t]
                .iter()
                .take_while(|&&s| self.packets[s as usize].info.class == CONTROL_CLASS)
                .count();
            // The NIC may be sending the queue's front packet already: it left the queue.
            self.queue[t].insert(pos, slot);
            self.activate_nic(t);
        }
        self.control_out = list;
    }

    /// Puts `packet` in a free slot of the packet table and returns the slot (also its id).
    fn store_packet(&mut self, packet: Packet) -> u32 {
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
        slot
    }

    /// Each NIC sends at most one flit per channel period, one packet at a time.
    pub(super) fn inject(&mut self) {
        let now = self.now;
        let mut list = std::mem::take(&mut self.nic_active);
        list.retain(|&t| self.inject_from(t as usize, now));
        list.append(&mut self.nic_active);
        self.nic_active = list;
    }

    /// One NIC's turn; returns whether it stays active.
    fn inject_from(&mut self, t: usize, now: u64) -> bool {
        let mut nic = self.nics[t];
        if nic.free_at > now {
            return true;
        }
        if nic.pkt == NONE {
            let Some(&slot) = self.queue[t].front() else {
                self.nics[t].active = false;
                return false;
            };
            let info = self.packet_info(slot);
            let range =
                self.session
                    .injection_vcs(&info, &self.packets[slot as usize].route, self.v);
            let need = match self.p.switching {
                Switching::Wormhole => 1,
                Switching::VirtualCutThrough => info.size,
            };
            let start = u32::from(range.start);
            let span = u32::from(range.end.saturating_sub(range.start));
            let base = nic.credit_base as usize;
            let Some(vc) = self.free_injection_vc(base, start, span, nic.rr, need) else {
                return true;
            };
            nic.rr = (vc - start + 1) % span;
            self.queue[t].pop_front();
            if info.class != CONTROL_CLASS {
                self.queued_per_source[t * self.traffic.num_classes() + info.class as usize] -= 1;
                self.total_queued -= 1;
            }
            self.packets[slot as usize].injected = now;
            (nic.pkt, nic.seq, nic.vc) = (slot, 0, vc);
        }
        let counter = (nic.credit_base + nic.vc) as usize;
        if self.nic_credits[counter] == 0 {
            self.nics[t] = nic;
            return true;
        }
        self.nic_credits[counter] -= 1;
        let arrival = now + u64::from(nic.delay);
        let size = self.packets[nic.pkt as usize].info.size;
        let tail = nic.seq + 1 == size;
        self.flit_wheel[(arrival & self.wheel_mask) as usize].push(FlitEvent {
            chan: nic.chan,
            vc: nic.vc,
            flit: Flit::new(nic.pkt, nic.seq, tail),
        });
        self.flits_in_network += 1;
        self.counters.flits_injected += 1;
        self.last_progress = now;
        nic.free_at = now + u64::from(nic.period);
        let stays = if tail {
            (nic.pkt, nic.seq, nic.vc) = (NONE, 0, 0);
            nic.active = !self.queue[t].is_empty();
            nic.active
        } else {
            nic.seq += 1;
            true
        };
        self.nics[t] = nic;
        stays
    }

    /// The first injection VC `start + k` (k in `0..span`, round-robin from `rr`) whose
    /// credit counter (in `nic_credits`, from `base`) holds at least `need`.
    fn free_injection_vc(
        &self,
        base: usize,
        start: u32,
        span: u32,
        rr: u32,
        need: u32,
    ) -> Option<u32> {
        if span == 0 {
            return None;
        }
        let mut k = rr % span;
        for _ in 0..span {
            let vc = start + k;
            if self.nic_credits[base + vc as usize] >= need {
                return Some(vc);
            }
            k = if k + 1 == span { 0 } else { k + 1 };
        }
        None
    }
}
