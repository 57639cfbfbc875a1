//! The output side of the input-output-queued router: one router's cycle (the crossbar
//! ticks that fall in it, then the output stage of every port).

use super::*;

impl Engine<'_, IoQueuedRouter> {
    /// One cycle of router `r`.
    pub(super) fn ioq_cycle(&mut self, r: usize) {
        let at = self.ports.routers[r];
        for tick in self.router.ticks(self.now) {
            self.xbar_tick(&at, tick);
        }
        for port in at.first_port..at.first_port + at.num_ports as usize {
            let state = self.router.ports[port];
            if state.queued > 0 && state.free_at <= self.now {
                self.send_from(r, port);
            }
        }
    }

    /// The output stage of global port `port` (its link is free, its buffers hold flits):
    /// the VC sending a packet sends its next flit; otherwise the first VC from the
    /// round-robin pointer whose front packet has downstream credits for all its flits
    /// starts sending it.
    fn send_from(&mut self, r: usize, port: usize) {
        let now = self.now;
        let num_vcs = self.num_vcs;
        let links = self.ports.links[port];
        let state = self.router.ports[port];
        let vc = if state.sending != NONE {
            state.sending as usize
        } else {
            let start = state.pointer as usize;
            let found = (0..num_vcs).map(|k| (start + k) % num_vcs).find(|&vc| {
                let output = self.router.outputs[port * num_vcs + vc];
                output.len > 0
                    && (links.ejection || {
                        let packet = self.router.output_front(port * num_vcs + vc).packet;
                        output.credits
                            >= self
                                .router
                                .credits_to_start(self.packets.table[packet as usize].info.size)
                    })
            });
            match found {
                Some(vc) => vc,
                None => return,
            }
        };
        let output_vc = port * num_vcs + vc;
        let router = &mut self.router;
        let output = router.outputs[output_vc];
        if output.len == 0 || (!links.ejection && output.credits == 0) {
            // The packet's next flit has not crossed yet, or (a packet larger than the
            // downstream buffer) waits for a credit.
            return;
        }
        let flit = router.output_ring
            [output_vc * router.output_depth as usize + output.ring_head as usize];
        let ring_head = if output.ring_head + 1 == router.output_depth || output.len == 1 {
            0
        } else {
            output.ring_head + 1
        };
        let record = &mut router.outputs[output_vc];
        record.len -= 1;
        record.committed -= 1;
        record.ring_head = ring_head;
        if !links.ejection {
            record.credits -= 1;
            self.counters.flit_hops += 1;
        }
        let state = &mut router.ports[port];
        state.queued -= 1;
        state.free_at = now + u64::from(links.out_period);
        if flit.is_tail() {
            state.sending = NONE;
            state.pointer = if vc + 1 == num_vcs { 0 } else { vc as u32 + 1 };
        } else {
            state.sending = vc as u32;
        }
        router.held[r] -= 1;
        self.channels.send_flit(
            now + u64::from(links.out_delay),
            FlitEvent {
                channel: links.out_channel,
                vc: vc as u32,
                flit,
            },
            links.out_crosses_cut,
            links.ejection,
        );
        self.progress.last_move = now;
    }
}
