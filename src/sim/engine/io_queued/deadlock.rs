//! The input-output-queued router's side of the deadlock analysis and its invariants.

use super::*;

impl Engine<'_, IoQueuedRouter> {
    /// `Engine::find_deadlock` for input-output-queued routers, over input VCs (nodes
    /// `0..n`) and output VCs (nodes `n..2n`). A node is *live* when it holds nothing and
    /// waits for nothing, or can act now or once something under way arrives; otherwise it
    /// *waits on* other nodes:
    ///
    /// - a waiting head: live if a candidate output VC has room for its packet, else waits
    ///   on every candidate output VC (a head waits on a full output VC) and on the packet
    ///   crossing into it, if any;
    /// - a crossing packet: with a flit here, live if its output VC has room for a flit,
    ///   else waits on that output VC; with none, live if flits are on the channel or a NIC
    ///   sends them, else waits on the upstream output VC sending the packet;
    /// - an output VC holding flits: live if it leads to a terminal or has (or will get
    ///   back) the credits its front packet needs, and its port is not sending another VC's
    ///   packet (else it waits on that VC); without credits it waits on the downstream input
    ///   VC (an output VC waits for credits); empty but reserved, it waits on the input VC
    ///   crossing into it.
    pub(super) fn ioq_find_stuck_vcs(&self) -> Option<DeadlockReport> {
        let (live, waits, held) = self.ioq_liveness();
        let n = self.router.inputs.len();
        self.stuck_vcs(
            live,
            waits,
            |node| held[node],
            |node| self.describe_vc(node % n),
        )
    }

    /// Each node's liveness, the nodes it waits on and the flits it holds (see
    /// `ioq_find_stuck_vcs`). Only a node's own router's state is read, so a partition of
    /// the parallel engine computes its own nodes' entries exactly.
    pub(super) fn ioq_liveness(&self) -> (Vec<bool>, Vec<Vec<usize>>, Vec<u32>) {
        let num_vcs = self.num_vcs;
        let router = &self.router;
        let n = router.inputs.len();
        let credits_coming = self.credits_coming();
        let flits_coming = self.flits_coming();
        let mut live = vec![false; 2 * n];
        let mut waits: Vec<Vec<usize>> = vec![Vec::new(); 2 * n];
        for input_vc in 0..n {
            let record = router.inputs[input_vc];
            let wait = &mut waits[input_vc];
            live[input_vc] = match record.stage {
                Stage::Idle => true,
                Stage::Waiting if record.ready > self.now => true,
                Stage::Waiting => {
                    let packet = router.input_front(input_vc).packet;
                    let size = self.packets.table[packet as usize].info.size;
                    let r = self.net.port_router[input_vc / num_vcs] as usize;
                    let first_port = self.net.port_base[r] as usize;
                    let mut any = false;
                    for c in router.candidates(input_vc) {
                        for vc in c.vcs.iter() {
                            let output_vc = (first_port + c.port as usize) * num_vcs + vc;
                            if router.has_room(output_vc, size) {
                                any = true;
                            } else {
                                let filling = router.outputs[output_vc].filling;
                                if filling != NONE {
                                    wait.push(filling as usize);
                                }
                                wait.push(n + output_vc);
                            }
                        }
                    }
                    any
                }
                Stage::Crossing if record.len > 0 => {
                    let output_vc = record.output_vc as usize;
                    if router.outputs[output_vc].len < router.output_depth {
                        true
                    } else {
                        wait.push(n + output_vc);
                        false
                    }
                }
                Stage::Crossing => {
                    let channel = self.net.in_chan[input_vc / num_vcs] as usize;
                    let sender = self.net.chan_credit_base[channel] as usize + input_vc % num_vcs;
                    if flits_coming[input_vc] || sender >= self.channels.router_counters {
                        true
                    } else {
                        wait.push(n + sender);
                        false
                    }
                }
            };
        }
        for output_vc in 0..n {
            let output = router.outputs[output_vc];
            let port = output_vc / num_vcs;
            let vc = output_vc % num_vcs;
            let wait = &mut waits[n + output_vc];
            live[n + output_vc] = if output.len == 0 {
                match output.filling {
                    NONE => true,
                    from => {
                        wait.push(from as usize);
                        false
                    }
                }
            } else {
                let sending = router.ports[port].sending;
                if sending != NONE && sending as usize != vc {
                    wait.push(n + port * num_vcs + sending as usize);
                    false
                } else if self.ports.links[port].ejection
                    || credits_coming[output_vc]
                    || output.credits >= self.ioq_credits_needed(port, vc)
                {
                    true
                } else if let Some(d) = self.downstream(output_vc) {
                    wait.push(d);
                    false
                } else {
                    true
                }
            };
        }
        let held = (0..2 * n)
            .map(|node| {
                if node < n {
                    router.inputs[node].len
                } else {
                    router.outputs[node - n].len
                }
            })
            .collect();
        (live, waits, held)
    }

    /// The credits the front packet of output VC `vc` of global port `port` needs to move
    /// (its next flit when it is being sent, else all its flits or the whole downstream
    /// buffer); 0 when the VC is empty.
    fn ioq_credits_needed(&self, port: usize, vc: usize) -> u32 {
        let output_vc = port * self.num_vcs + vc;
        if self.router.outputs[output_vc].len == 0 {
            return 0;
        }
        if self.router.ports[port].sending == vc as u32 {
            return 1;
        }
        let packet = self.router.output_front(output_vc).packet;
        self.router
            .credits_to_start(self.packets.table[packet as usize].info.size)
    }

    /// The model's invariants: output buffers within their depth and holding no more than
    /// was reserved; the room reserved beyond the buffered flits is exactly what the
    /// crossing packets have still to move; each port's queue is the sum of its VCs'; each
    /// router's flit count is what its buffers hold; a head waits for the crossbar exactly
    /// when its VC is marked waiting.
    pub(super) fn ioq_check_state(&self) -> Result<(), String> {
        let num_vcs = self.num_vcs;
        let router = &self.router;
        let mut still_to_cross = vec![0u64; router.outputs.len()];
        for (input_vc, record) in router.inputs.iter().enumerate() {
            let r = self.net.port_router[input_vc / num_vcs] as usize;
            let local = input_vc - self.ports.routers[r].first_vc;
            let marked =
                router.waiting[r * router.words_per_router + local / 64] >> (local % 64) & 1 == 1;
            let word = r * router.words_per_router + local / 64;
            let crossing = router.crossing[word] >> (local % 64) & 1 == 1;
            if marked != (record.stage == Stage::Waiting)
                || crossing != (record.stage == Stage::Crossing)
            {
                return Err(format!(
                    "input VC {input_vc} is {:?} but marked waiting = {marked}, crossing = \
                     {crossing}",
                    record.stage
                ));
            }
            if record.stage == Stage::Crossing {
                if router.outputs[record.output_vc as usize].filling != input_vc as u32 {
                    return Err(format!(
                        "input VC {input_vc} crosses into output VC {} which is filled by {}",
                        record.output_vc, router.outputs[record.output_vc as usize].filling
                    ));
                }
                let packet = record.packet;
                let size = self.packets.table[packet as usize].info.size;
                still_to_cross[record.output_vc as usize] += u64::from(size - record.crossed);
            }
        }
        let mut per_port = vec![0u64; router.ports.len()];
        for (output_vc, output) in router.outputs.iter().enumerate() {
            // (Only a packet larger than the buffer reserves more than the buffer.)
            let reserved_max = router
                .output_depth
                .max(output.len + still_to_cross[output_vc] as u32);
            if output.len > output.committed
                || output.len > router.output_depth
                || output.committed > reserved_max
            {
                return Err(format!(
                    "output VC {output_vc} holds {} flits with {} reserved (depth {})",
                    output.len, output.committed, router.output_depth
                ));
            }
            if u64::from(output.committed - output.len) != still_to_cross[output_vc] {
                return Err(format!(
                    "output VC {output_vc} reserves {} flits beyond those it holds, but the \
                     packet crossing into it has {} to come",
                    output.committed - output.len,
                    still_to_cross[output_vc]
                ));
            }
            per_port[output_vc / num_vcs] += u64::from(output.len);
        }
        for (port, (state, &sum)) in router.ports.iter().zip(&per_port).enumerate() {
            if u64::from(state.queued) != sum {
                return Err(format!(
                    "output queue of global port {port} is {} but its VCs hold {sum} flits",
                    state.queued
                ));
            }
        }
        for (r, at) in self.ports.routers.iter().enumerate() {
            let vcs = at.first_vc..at.first_vc + at.num_local_vcs as usize;
            let held: u64 = vcs
                .map(|v| u64::from(router.inputs[v].len) + u64::from(router.outputs[v].len))
                .sum();
            if held != u64::from(router.held[r]) {
                return Err(format!(
                    "router {r} counts {} flits but its buffers hold {held}",
                    router.held[r]
                ));
            }
        }
        Ok(())
    }
}
