//! The input side of the input-output-queued router: a flit's arrival into its input VC,
//! route computation (once per packet, at the head of the input VC), and the crossbar ticks
//! (connections in progress, then arbitration among the waiting heads).

use super::*;

impl Engine<'_, IoQueuedRouter> {
    /// Flit `flit` arrives on VC `vc` of the router input `dest`: into the input VC's ring;
    /// a head reaching the front of an idle VC is routed this cycle, after every arrival
    /// (`route_arrived_heads`).
    #[inline]
    pub(super) fn ioq_arrival(&mut self, dest: ChannelDestination, vc: u32, flit: Flit) {
        let input_vc = (dest.first_vc + vc) as usize;
        let router = &mut self.router;
        let record = router.inputs[input_vc];
        debug_assert!(record.len < router.depth, "credit protocol violated");
        let mut pos = record.ring_head + record.len;
        if pos >= router.depth {
            pos -= router.depth;
        }
        router.input_ring[input_vc * router.depth as usize + pos as usize] = flit;
        router.inputs[input_vc].len = record.len + 1;
        let r = dest.router as usize;
        router.held[r] += 1;
        self.active_routers.activate(r);
        if record.stage == Stage::Idle {
            let local = (dest.first_local_vc + vc) as usize;
            let words = &mut router.arrived_heads
                [r * router.words_per_router..(r + 1) * router.words_per_router];
            if words.iter().all(|&w| w == 0) {
                router.routers_with_heads.push(r as u32);
            }
            words[local / 64] |= 1 << (local % 64);
        }
    }

    /// Routes the heads that arrived into idle input VCs this cycle, each router's in
    /// increasing input VC order: routing draws from the router's random stream and reads
    /// its buffers, so the order must not be that of the arrivals (see
    /// `RouterModel::arrivals_done`). Routers do not share what routing reads or draws
    /// (except DQN-routing's agents, which never run partitioned), so their order is free.
    pub(super) fn route_arrived_heads(&mut self) {
        let routers = std::mem::take(&mut self.router.routers_with_heads);
        let words = self.router.words_per_router;
        for &r in &routers {
            let at = self.ports.routers[r as usize];
            for w in 0..words {
                let mut bits =
                    std::mem::take(&mut self.router.arrived_heads[r as usize * words + w]);
                while bits != 0 {
                    let local = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    self.ioq_route(&at, local);
                }
            }
        }
        self.router.routers_with_heads = routers;
        self.router.routers_with_heads.clear();
    }

    /// Routes the head at the front of local input VC `local_input_vc`: its candidates are
    /// kept and it waits for the crossbar.
    pub(super) fn ioq_route(&mut self, at: &RouterLayout, local_input_vc: usize) {
        let input_vc = at.first_vc + local_input_vc;
        let flit = self.router.input_front(input_vc);
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
        self.router.store_candidates(input_vc, candidates);
        let extra = if self.routing.hooks.route_delay {
            self.routing.session.take_route_delay()
        } else {
            0
        };
        let router = &mut self.router;
        let record = &mut router.inputs[input_vc];
        record.stage = Stage::Waiting;
        record.ready = self.now + u64::from(extra);
        router.waiting[at.router * router.words_per_router + local_input_vc / 64] |=
            1 << (local_input_vc % 64);
    }

    /// One crossbar tick of router `at`: every crossing packet whose next flit is here
    /// moves it (if its ports are free this tick and, for a packet larger than the output
    /// buffer, the buffer has room), then the waiting heads are arbitrated.
    pub(super) fn xbar_tick(&mut self, at: &RouterLayout, tick: u64) {
        let words = self.router.words_per_router;
        for w in 0..words {
            let mut bits = self.router.crossing[at.router * words + w];
            while bits != 0 {
                let local = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let input_vc = at.first_vc + local;
                let router = &self.router;
                let record = router.inputs[input_vc];
                if record.len == 0 {
                    continue;
                }
                let in_port = at.first_port + self.ports.local_port[local] as usize;
                let out_port = record.output_vc as usize / self.num_vcs;
                if router.ports[in_port].in_used <= tick
                    && router.ports[out_port].out_used <= tick
                    && router.outputs[record.output_vc as usize].len < router.output_depth
                {
                    self.cross_flit(at, input_vc, tick);
                }
            }
        }
        self.arbitrate(at, tick);
    }

    /// Crossbar arbitration among the heads of router `at` waiting for it, least recently
    /// served (or round robin) first: a head wins when its input port is free this tick,
    /// its first candidate output VC with room for the whole packet exists and that output
    /// port is free this tick.
    fn arbitrate(&mut self, at: &RouterLayout, tick: u64) {
        let now = self.now;
        let words = self.router.words_per_router;
        let mut requests = std::mem::take(&mut self.router.requests);
        requests.clear();
        for w in 0..words {
            let mut bits = self.router.waiting[at.router * words + w];
            while bits != 0 {
                let local = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let input_vc = at.first_vc + local;
                if self.router.inputs[input_vc].ready > now {
                    continue;
                }
                let in_port = at.first_port + self.ports.local_port[local] as usize;
                if self.router.ports[in_port].in_used > tick {
                    continue;
                }
                let priority = match self.router.arbitration {
                    XbarArbitration::Lru => self.router.last_served[input_vc],
                    XbarArbitration::RoundRobin => u64::from(round_robin_distance(
                        local as u32,
                        self.router.rr_pointer[at.router],
                        at.num_local_vcs,
                    )),
                };
                requests.push((priority, local as u32));
            }
        }
        if requests.len() > 1 {
            requests.sort_unstable();
        }
        for &(_, local) in &requests {
            let local = local as usize;
            let input_vc = at.first_vc + local;
            let in_port = at.first_port + self.ports.local_port[local] as usize;
            // An earlier winner this tick may have taken the input port.
            if self.router.ports[in_port].in_used > tick {
                continue;
            }
            let packet = self.router.input_front(input_vc).packet;
            let size = self.packets.table[packet as usize].info.size;
            let Some((candidate, vc)) = self.room_for(at, input_vc, size) else {
                continue;
            };
            let chosen = self.router.candidates(input_vc)[candidate];
            let out_port = at.first_port + chosen.port as usize;
            if self.router.ports[out_port].out_used > tick {
                continue;
            }
            self.grant_crossing(at, local, chosen, vc, size, tick);
        }
        self.router.requests = requests;
    }

    /// The first candidate output VC of input VC `input_vc` (in the routing function's
    /// order) with room for `size` flits (`IoQueuedRouter::has_room`), as (candidate
    /// index, VC).
    #[inline]
    fn room_for(&self, at: &RouterLayout, input_vc: usize, size: u32) -> Option<(usize, usize)> {
        let router = &self.router;
        router
            .candidates(input_vc)
            .iter()
            .enumerate()
            .find_map(|(k, c)| {
                let first = (at.first_port + c.port as usize) * self.num_vcs;
                c.vcs
                    .iter()
                    .find(|&vc| router.has_room(first + vc, size))
                    .map(|vc| (k, vc))
            })
    }

    /// Connects local input VC `local` to output VC `vc` of candidate `chosen` through the
    /// crossbar: the room is reserved, the routing session told, the first flit crosses.
    fn grant_crossing(
        &mut self,
        at: &RouterLayout,
        local: usize,
        chosen: Candidate,
        vc: usize,
        size: u32,
        tick: u64,
    ) {
        let input_vc = at.first_vc + local;
        let out_port = at.first_port + chosen.port as usize;
        let output_vc = out_port * self.num_vcs + vc;
        let router = &mut self.router;
        router.outputs[output_vc].committed += size;
        router.outputs[output_vc].filling = input_vc as u32;
        let record = &mut router.inputs[input_vc];
        record.stage = Stage::Crossing;
        record.packet =
            router.input_ring[input_vc * router.depth as usize + record.ring_head as usize].packet;
        record.output_vc = output_vc as u32;
        record.crossed = 0;
        let word = at.router * router.words_per_router + local / 64;
        router.waiting[word] &= !(1 << (local % 64));
        router.crossing[word] |= 1 << (local % 64);
        router.last_served[input_vc] = router.next_stamp;
        router.next_stamp += 1;
        router.rr_pointer[at.router] = if local as u32 + 1 == at.num_local_vcs {
            0
        } else {
            local as u32 + 1
        };
        // The routing session learns the hop now, as when the input-queued router grants a
        // VC: the packet has left for this port and VC.
        let packet = self.router.input_front(input_vc).packet as usize;
        let info = self.packets.table[packet].info;
        if self.routing.hooks.input_exit {
            let in_port = at.first_port + self.ports.local_port[local] as usize;
            self.routing.session.on_input_exit(
                self.now,
                at.router,
                self.ports.local_port[local] as usize,
                &info,
                self.ports.links[in_port].credit_delay,
            );
        }
        self.routing.forwarded(
            self.now,
            &self.ports,
            &mut self.packets,
            at,
            local,
            packet as u32,
            chosen,
            vc,
            || self.router.view(&self.net),
        );
        self.cross_flit(at, input_vc, tick);
    }

    /// Moves the front flit of input VC `input_vc` (connected through the crossbar) into its
    /// output VC, returns its credit upstream; after the tail the connection ends and the
    /// next head, if any, is routed.
    pub(super) fn cross_flit(&mut self, at: &RouterLayout, input_vc: usize, tick: u64) {
        let now = self.now;
        let flit = self.router.input_front(input_vc);
        let router = &mut self.router;
        let record = router.inputs[input_vc];
        let output_vc = record.output_vc as usize;
        let out_port = output_vc / self.num_vcs;
        let local = input_vc - at.first_vc;
        let in_port = at.first_port + self.ports.local_port[local] as usize;
        // Out of the input ring.
        let ring_head = if record.ring_head + 1 == router.depth {
            0
        } else {
            record.ring_head + 1
        };
        let len = record.len - 1;
        // Into the output ring.
        let output = router.outputs[output_vc];
        let mut pos = output.ring_head + output.len;
        if pos >= router.output_depth {
            pos -= router.output_depth;
        }
        router.output_ring[output_vc * router.output_depth as usize + pos as usize] = flit;
        router.outputs[output_vc].len = output.len + 1;
        router.ports[out_port].queued += 1;
        router.ports[out_port].out_used = tick + 1;
        router.ports[in_port].in_used = tick + 1;
        let record = &mut router.inputs[input_vc];
        record.len = len;
        record.ring_head = if len == 0 { 0 } else { ring_head };
        record.crossed += 1;
        // Credit back to whoever feeds this input VC.
        let input = self.ports.links[in_port];
        self.channels.send_credit(
            now + u64::from(input.credit_delay),
            input.credit_counter + self.ports.local_vc[local],
            input.credit_crosses_cut,
        );
        self.progress.last_move = now;
        if flit.is_tail() {
            let router = &mut self.router;
            router.crossing[at.router * router.words_per_router + local / 64] &=
                !(1 << (local % 64));
            router.outputs[output_vc].filling = NONE;
            let record = &mut router.inputs[input_vc];
            record.output_vc = NONE;
            record.crossed = 0;
            record.stage = Stage::Idle;
            if len > 0 {
                self.ioq_route(at, local);
            }
        }
    }
}
