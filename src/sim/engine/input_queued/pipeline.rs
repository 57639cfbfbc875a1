//! One input-queued router's cycle: a flit's arrival into an input VC; route computation,
//! VC-allocation requests and switch-allocation requests over the router's non-empty input
//! VCs (one pass over the bit set, or a direct path when only one VC holds flits), then the
//! allocators (alloc.rs) and switch traversal.

use super::*;

impl Engine<'_, InputQueuedRouter> {
    /// Flit `flit` arrives on VC `vc` of the router input `dest`: into its input VC's
    /// buffer (a head at the front of an empty, idle VC starts route computation now).
    #[inline]
    pub(super) fn buffer_arrival(&mut self, dest: ChannelDestination, vc: u32, flit: Flit) {
        let input_vc = (dest.first_vc + vc) as usize;
        let vcs = &mut self.router.input_vcs;
        let record = vcs.records[input_vc];
        debug_assert!(record.len < vcs.depth, "credit protocol violated");
        if record.len == 0 {
            vcs.records[input_vc].front = flit;
            if record.state == VcState::Idle && self.routing.prefetch_routes {
                // A head: its route is computed later this cycle.
                self.routing
                    .prefetch_route(&self.packets, dest.router as usize, flit.packet);
            } else {
                prefetch(&self.packets.table, flit.packet as usize);
            }
        } else {
            let mut pos = record.ring_head + record.len - 1;
            if pos >= vcs.depth {
                pos -= vcs.depth;
            }
            let slot = vcs.ring_slot(input_vc, pos);
            vcs.ring[slot] = flit;
        }
        vcs.records[input_vc].len = record.len + 1;
        // The output queue counts the flits of the packet that holds the output VC: an
        // arrival counts when it belongs to that packet (flits arrive in order, so the
        // packet's flits are the buffered ones from the front, and with none buffered the
        // arrival is the packet's next flit).
        if record.state == VcState::Active
            && (record.len == 0 || record.front.packet == flit.packet)
        {
            self.router.port_state[record.output_port as usize].output_queue += 1;
        }
        if record.len == 0 {
            let r = dest.router as usize;
            let local = (dest.first_local_vc + vc) as usize;
            let vcs = &mut self.router.input_vcs;
            vcs.nonempty[r * vcs.words_per_router + local / 64] |= 1 << (local % 64);
            if record.state == VcState::Idle {
                vcs.records[input_vc].ready = self.now;
            }
            self.active_routers.activate(r);
        }
    }

    pub(super) fn process_router(&mut self, r: usize) {
        let now = self.now;
        let words = self.router.input_vcs.words_per_router;
        let at = self.ports.routers[r];
        if words == 1 {
            let bits = self.router.input_vcs.nonempty[r];
            if bits & bits.wrapping_sub(1) == 0 {
                // At most one VC holds flits (half the mesh bench's visits): its stage
                // directly, without the pass's bit sets and the allocators' scratch.
                if bits != 0 {
                    self.process_lone_vc(&at, bits.trailing_zeros() as usize);
                }
                return;
            }
        }
        let base = at.first_vc;
        let mut num_picks = 0;
        // The output VCs the visit's requests ask for (bit `local output VC % 64`: on routers
        // of more than 64 local VCs two VCs may share a bit, which only sends the visit to the
        // output stage).
        let mut targets = 0u64;
        let mut any_switch_request = false;
        for w in 0..words {
            // First, without a branch per VC, which ready VCs request the switch (`Active`
            // ones that can send) and which hold a head to route or to allocate a VC to: a
            // VC's state is data the branch predictor cannot learn (a sixth of the mesh
            // bench's mispredicted branches were the dispatch on it).
            let mut bits = self.router.input_vcs.nonempty[r * words + w];
            let mut switch_bits = 0u64;
            let mut head_bits = 0u64;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let record = self.router.input_vcs.records[base + w * 64 + bit as usize];
                let ready = record.ready <= now;
                let active = record.state == VcState::Active;
                // `can_send` of every VC: the output fields of one not `Active` are an
                // earlier grant's or zero, a port of this router either way.
                let sends = ready & active & self.can_send(&record);
                switch_bits |= u64::from(sends) << bit;
                head_bits |= u64::from(ready & !active) << bit;
            }
            // The VC allocation below does not change what `can_send` read, and neither
            // routing nor VC requests read what it did: the heads are taken second, in VC
            // order as before.
            self.router.switch_allocator.requesting[w] = switch_bits;
            any_switch_request |= switch_bits != 0;
            while head_bits != 0 {
                let local_input_vc = w * 64 + head_bits.trailing_zeros() as usize;
                head_bits &= head_bits - 1;
                if self.router.input_vcs.records[base + local_input_vc].state == VcState::Idle {
                    self.compute_route(&at, local_input_vc);
                    if self.params.routing_delay != 0 {
                        continue;
                    }
                }
                self.request_vc(&at, local_input_vc, &mut num_picks, &mut targets);
            }
        }
        match num_picks {
            0 => {}
            // The lone request (most visits at low load): the next arm's case, without its
            // count and loop.
            1 => {
                let pick = self.router.vc_allocator.picks[0];
                any_switch_request |= self.grant_vc(&at, pick);
            }
            // Requests for as many different output VCs as there are requests each win the
            // output stage: granted in input VC order, without its scratch. The grants touch
            // different VCs and commute, as long as the session's `on_forward` (which could
            // keep state across packets) is not called; else the output stage's order.
            _ if targets.count_ones() as usize == num_picks && !self.routing.on_forward => {
                for i in 0..num_picks {
                    let pick = self.router.vc_allocator.picks[i];
                    any_switch_request |= self.grant_vc(&at, pick);
                }
            }
            _ => {
                for i in 0..num_picks {
                    let pick = self.router.vc_allocator.picks[i];
                    self.submit_vc_request(&at, pick);
                }
                any_switch_request |= self.allocate_vcs(&at);
            }
        }
        if any_switch_request {
            self.allocate_switch(&at);
        }
    }

    /// `process_router` when local input VC `local_input_vc` is the only one holding flits:
    /// what the pass does with one VC, step for step, with the same results. A lone VC
    /// request is granted as the pass grants it (`grant_vc`: no other request competes),
    /// and a lone switch request wins both stages of the separable allocator
    /// (`switch_granted`, as `separable_switch_single`). The switch request bits are empty
    /// between visits (every allocator takes them), so they need no writing here unless
    /// another allocator runs. On the mesh bench, 6.9% fewer instructions (docs/benchmarks.md,
    /// "One VC holding flits").
    #[inline(always)]
    fn process_lone_vc(&mut self, at: &RouterLayout, local_input_vc: usize) {
        debug_assert_eq!(self.router.switch_allocator.requesting[0], 0);
        let record = self.router.input_vcs.records[at.first_vc + local_input_vc];
        if record.ready > self.now {
            return;
        }
        if record.state == VcState::Active {
            if !self.can_send(&record) {
                return;
            }
        } else {
            if record.state == VcState::Idle {
                self.compute_route(at, local_input_vc);
                if self.params.routing_delay != 0 {
                    return;
                }
            }
            let mut num_picks = 0;
            let mut targets = 0u64;
            self.request_vc(at, local_input_vc, &mut num_picks, &mut targets);
            // With no VC allocation delay the grant may request the switch (its bit set).
            if num_picks == 0 || !self.grant_vc(at, self.router.vc_allocator.picks[0]) {
                return;
            }
        }
        // This VC's request is the router's only one for the switch.
        if self.single_separable_allocator() {
            // It wins both stages, as in `separable_switch_single` (a grant above may have
            // set its bit).
            self.router.switch_allocator.requesting[0] = 0;
            let out = self.router.input_vcs.records[at.first_vc + local_input_vc].output_port;
            self.switch_granted(at, out as usize, local_input_vc);
        } else {
            self.router.switch_allocator.requesting[0] = 1 << local_input_vc;
            self.general_switch_allocation(at);
        }
    }

    /// An `Active` input VC may request the switch: a credit downstream and a free channel.
    #[inline]
    pub(super) fn can_send(&self, record: &InputVc) -> bool {
        // Both loads and `&`, not `&&`: one branch fewer where the caller wants none.
        (self.router.output_vcs.records[record.output_vc_index(self.num_vcs)].credits > 0)
            & (self.router.port_state[record.output_port as usize].free_at <= self.now)
    }

    #[inline(always)]
    pub(super) fn compute_route(&mut self, at: &RouterLayout, local_input_vc: usize) {
        let input_vc = at.first_vc + local_input_vc;
        let flit = self.router.input_vcs.records[input_vc].front;
        debug_assert_eq!(
            flit.index(),
            0,
            "a packet's first flit reached an idle VC mid-packet"
        );
        let candidates = self.routing.route_head(
            self.now,
            &self.ports,
            &mut self.packets,
            at,
            local_input_vc,
            flit.packet,
            || self.router.view(&self.net),
        );
        self.router.input_vcs.store_candidates(input_vc, candidates);
        let extra = if self.routing.hooks.route_delay {
            self.routing.session.take_route_delay()
        } else {
            0
        };
        let record = &mut self.router.input_vcs.records[input_vc];
        record.state = VcState::VcAllocation;
        record.ready = self.now + u64::from(self.params.routing_delay + extra);
    }

    /// Input stage of VC allocation: the first candidate with a free output VC requests it,
    /// listed in the visit's picks (`VcAllocator::picks`, `num_picks` of them so far).
    #[inline(always)]
    fn request_vc(
        &mut self,
        at: &RouterLayout,
        local_input_vc: usize,
        num_picks: &mut usize,
        targets: &mut u64,
    ) {
        let input_vc = at.first_vc + local_input_vc;
        let input_pointer = match self.params.vc_allocator {
            VcAllocatorKind::FirstFree => 0,
            VcAllocatorKind::SeparableInputFirst => {
                self.router.vc_allocator.input_pointers[input_vc] as usize
            }
        };
        let choice = self.nearest_grantable_vc(at, input_vc, input_pointer);
        let Some((candidate, local_output_vc)) = choice else {
            return;
        };
        let pick = VcPick {
            local_input_vc: local_input_vc as u32,
            local_output_vc: local_output_vc as u32,
            candidate: candidate as u32,
        };
        self.router.vc_allocator.picks[*num_picks] = pick;
        *num_picks += 1;
        *targets |= 1 << (local_output_vc % 64);
    }

    /// Enters `pick` into the VC allocator's output stage.
    #[inline(always)]
    fn submit_vc_request(&mut self, at: &RouterLayout, pick: VcPick) {
        let local_output_vc = pick.local_output_vc as usize;
        let pointer = self.router.vc_allocator.output_pointers[at.first_vc + local_output_vc];
        let distance = round_robin_distance(pick.local_input_vc, pointer, at.num_local_vcs);
        self.router.vc_allocator.request(
            local_output_vc,
            pick.local_input_vc,
            pick.candidate,
            distance,
        );
    }

    /// Whether local output VC `local_output_vc` of the router whose first VC is `base` can
    /// be granted to packet `packet`; `need` is the credits every VC needs, or `None` when
    /// they differ by VC.
    #[inline(always)]
    pub(super) fn grantable(
        &self,
        base: usize,
        local_output_vc: usize,
        packet: u32,
        need: Option<u32>,
    ) -> bool {
        let output_vcs = &self.router.output_vcs;
        let output_vc = &output_vcs.records[base + local_output_vc];
        let need = match need {
            Some(n) => n,
            None => output_vcs.grant_need(
                &self.packets,
                packet,
                self.ports.local_vc[local_output_vc] as usize,
            ),
        };
        // `&`, not `&&`: both are loaded anyway, and a branch here is one the predictor
        // cannot learn.
        (output_vc.owner == NONE) & (output_vc.credits >= need)
    }

    /// The first candidate (in the routing function's order: its priority, as BookSim's
    /// per-range priority) with a grantable VC, and within it the grantable VC nearest
    /// `pointer`, as (candidate index, local output VC). The distance wraps over the router's
    /// local VCs, so a candidate's VCs in increasing distance are those at or after the
    /// pointer, then those before it, and the first grantable one in that order is the
    /// nearest: the scan stops there. `first_free` is pointer 0 (each candidate's VCs in
    /// order); `separable_input_first` (BookSim2's) is the input VC's round-robin pointer.
    #[inline(always)]
    fn nearest_grantable_vc(
        &self,
        at: &RouterLayout,
        input_vc: usize,
        pointer: usize,
    ) -> Option<(usize, usize)> {
        let base = at.first_vc;
        let packet = self.router.input_vcs.records[input_vc].front.packet;
        let need = self.router.output_vcs.uniform_need(&self.packets, packet);
        let num_vcs = self.num_vcs;
        // Plain loops over the candidates and their VCs: an iterator chain (`filter`,
        // `min_by_key`) compiled to an out-of-line `fold` call per request.
        for (k, c) in self
            .router
            .input_vcs
            .candidates(input_vc)
            .iter()
            .enumerate()
        {
            let first = c.port as usize * num_vcs;
            let (start, end) = (
                first + usize::from(c.vcs.start),
                first + usize::from(c.vcs.end),
            );
            // Where the pointer falls in the range (checked when the candidate was returned:
            // `start <= end`). The VCs are tried from there to the end, then from the start:
            // in increasing distance from the pointer. Where to begin is a select, not a
            // branch: which side of the pointer the range lies is data the predictor cannot
            // learn (half the dragonfly bench's VC requests mispredicted it).
            let split = pointer.max(start).min(end);
            let mut v = if split < end { split } else { start };
            for _ in start..end {
                if self.grantable(base, v, packet, need) {
                    return Some((k, v));
                }
                v = if v + 1 == end { start } else { v + 1 };
            }
        }
        None
    }

    /// Moves the front flit of input VC `local_input_vc` of router `at` through the crossbar
    /// onto its output channel.
    #[inline(always)]
    pub(super) fn traverse(&mut self, at: &RouterLayout, local_input_vc: usize) {
        let now = self.now;
        let input_vc = at.first_vc + local_input_vc;
        let vcs = &self.router.input_vcs;
        let record = vcs.records[input_vc];
        let flit = record.front;
        let len = record.len - 1;
        // The next flit moves from the ring to the front. An emptied ring restarts at slot 0,
        // so that lightly used VCs touch only the first block of their slots.
        let (front, ring_head) = if len == 0 {
            (flit, 0)
        } else {
            let next = vcs.ring[vcs.ring_slot(input_vc, record.ring_head)];
            let head = if len == 1 || record.ring_head + 1 == vcs.depth {
                0
            } else {
                record.ring_head + 1
            };
            (next, head)
        };
        let output_vc = record.output_vc_index(self.num_vcs);
        let output_port = record.output_port as usize;
        // Credit back to whoever feeds this input VC.
        let in_port = at.first_port + self.ports.local_port[local_input_vc] as usize;
        let input = self.ports.links[in_port];
        self.channels.send_credit(
            now + u64::from(input.credit_delay),
            input.credit_counter + self.ports.local_vc[local_input_vc],
            input.credit_crosses_cut,
        );
        // Onto the output channel.
        let port = self.ports.links[output_port];
        // Without a branch: whether the flit leaves for a terminal is data the predictor
        // cannot learn. An ejection VC's credits are not counted (it never runs out).
        let towards_router = !port.ejection;
        self.router.output_vcs.records[output_vc].credits -= u32::from(towards_router);
        self.counters.flit_hops += u64::from(towards_router);
        self.channels.send_flit(
            now + u64::from(port.out_delay),
            FlitEvent {
                channel: port.out_channel,
                vc: u32::from(record.output_vc),
                flit,
            },
            port.out_crosses_cut,
            port.ejection,
        );
        let port_state = &mut self.router.port_state[output_port];
        port_state.output_queue -= 1;
        port_state.free_at = now + u64::from(port.out_period);
        self.progress.last_move = now;
        let record = &mut self.router.input_vcs.records[input_vc];
        record.len = len;
        record.ring_head = ring_head;
        record.front = front;
        if flit.is_tail() {
            self.router.output_vcs.records[output_vc].owner = NONE;
            record.state = VcState::Idle;
            record.ready = now + 1;
        }
        if len == 0 {
            let vcs = &mut self.router.input_vcs;
            vcs.nonempty[at.router * vcs.words_per_router + local_input_vc / 64] &=
                !(1 << (local_input_vc % 64));
        }
    }
}
