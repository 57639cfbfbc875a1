//! Deadlock reports, the invariant checks the tests run every cycle, and the saturation
//! criteria on source queues.

use super::*;

impl Engine<'_> {
    /// Input VCs that hold flits and can never move again, with a cycle of VCs that wait on
    /// each other among them; `None` when every VC holding flits can still move.
    ///
    /// A VC is *live* when it can act now or something already under way will let it act:
    /// its stage's delay has not passed, it has no route yet, it holds an output VC with a
    /// credit (or leading to a terminal), a grantable candidate, or credits or flits on
    /// their way to what it waits for. Otherwise it *waits on* other VCs: an `Active` VC
    /// without credits on the downstream input VC; an `Active` VC whose buffered flits have
    /// all left on the upstream VC still holding the rest of its packet; a VC waiting for
    /// an output VC on the VC holding each candidate (or, when a candidate is free but lacks
    /// credits, on the downstream input VC). A VC that waits on a live VC becomes live (it
    /// needs only one of its candidates). What is left is stuck for good: nothing under way
    /// can change the state of the VCs it waits on, which wait only on each other.
    pub fn find_deadlock(&self) -> Option<DeadlockReport> {
        let v = self.v;
        let n = self.ivs.len();
        let routers = self.ovs.len();
        // What is already under way: flits on channels into router input VCs, and credits
        // on their way back to router output VCs.
        let mut flits_coming = vec![false; n];
        for w in &self.flit_wheel {
            for ev in w {
                if let Sink::Router(gp) = self.net.chan_sink[ev.chan as usize] {
                    flits_coming[gp as usize * v + ev.vc as usize] = true;
                }
            }
        }
        let mut credits_coming = vec![false; routers];
        for w in &self.credit_wheel {
            for &c in w {
                if let Some(slot) = credits_coming.get_mut(c as usize) {
                    *slot = true;
                }
            }
        }
        // The input VC an output VC feeds (None for ejection and unconnected ports).
        let downstream = |ov: usize| -> Option<usize> {
            let chan = self.net.out_chan[ov / v];
            if chan == NONE {
                return None;
            }
            match self.net.chan_sink[chan as usize] {
                Sink::Router(gp) => Some(gp as usize * v + ov % v),
                Sink::Terminal(_) => None,
            }
        };
        let mut live = vec![false; n];
        let mut waits: Vec<Vec<usize>> = vec![Vec::new(); n];
        for iv in 0..n {
            let ivc = self.ivs[iv];
            let wait = &mut waits[iv];
            live[iv] = match ivc.state {
                _ if ivc.ready > self.now => true,
                VcState::Idle => true,
                VcState::Active if ivc.len == 0 => {
                    // The packet's next flits are upstream (or on the channel).
                    let chan = self.net.in_chan[iv / v];
                    let base = self.net.chan_credit_base[chan as usize] as usize;
                    if flits_coming[iv] || base >= routers {
                        true // on their way, or a NIC is sending them
                    } else {
                        match self.ovs[base + iv % v].owner {
                            NONE => true,
                            owner => {
                                wait.push(owner as usize);
                                false
                            }
                        }
                    }
                }
                VcState::Active => {
                    let ov = ivc.out(v);
                    if self.ovs[ov].credits > 0 || credits_coming[ov] {
                        true
                    } else {
                        match downstream(ov) {
                            Some(d) => {
                                wait.push(d);
                                false
                            }
                            None => true,
                        }
                    }
                }
                VcState::VcAllocation => {
                    // Live if any candidate could be granted now.
                    let r = self.net.port_router[iv / v] as usize;
                    let pb = self.net.port_base[r] as usize;
                    let mut any = false;
                    for c in self.cands(iv) {
                        for vc in c.vcs.iter() {
                            let ov = (pb + c.port as usize) * v + vc;
                            let out = self.ovs[ov];
                            if out.owner != NONE {
                                wait.push(out.owner as usize);
                            } else if out.credits >= self.grant_need(ivc.front.pkt, vc)
                                || credits_coming[ov]
                            {
                                any = true;
                            } else if let Some(d) = downstream(ov) {
                                wait.push(d);
                            }
                        }
                    }
                    any
                }
            };
        }
        // Liveness flows backwards along the wait edges.
        let mut waiters: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (iv, wait) in waits.iter().enumerate() {
            for &w in wait {
                waiters[w].push(iv);
            }
        }
        let mut stack: Vec<usize> = (0..n).filter(|&iv| live[iv]).collect();
        while let Some(u) = stack.pop() {
            for &w in &waiters[u] {
                if !live[w] {
                    live[w] = true;
                    stack.push(w);
                }
            }
        }
        let stuck: Vec<usize> = (0..n)
            .filter(|&iv| !live[iv] && self.ivs[iv].len > 0)
            .collect();
        if stuck.is_empty() {
            return None;
        }
        // Every stuck VC waits only on stuck VCs, so a cycle exists among them unless a
        // packet has no candidate at all.
        for (wait, _) in waits.iter_mut().zip(&live).filter(|(_, l)| **l) {
            wait.clear();
        }
        let cycle = find_cycle(&waits).unwrap_or_default();
        Some(DeadlockReport {
            cycle: self.now,
            cycle_vcs: cycle.into_iter().map(|iv| self.describe_vc(iv)).collect(),
            flits_in_flight: self.flits_in_network,
            blocked_vcs: stuck.len() as u64,
            blocked_flits: stuck.iter().map(|&iv| u64::from(self.ivs[iv].len)).sum(),
            stalled_cycles: self.now - self.last_progress,
            example_vc: Some(self.describe_vc(stuck[0])),
        })
    }

    /// The report when no flit has moved for `deadlock_cycles` although the analysis of
    /// [`Engine::find_deadlock`] finds no stuck VC (it should not happen; reported all the
    /// same rather than hanging).
    pub(super) fn stall_report(&self) -> DeadlockReport {
        self.find_deadlock().unwrap_or(DeadlockReport {
            cycle: self.now,
            cycle_vcs: Vec::new(),
            flits_in_flight: self.flits_in_network,
            blocked_vcs: 0,
            blocked_flits: 0,
            stalled_cycles: self.now - self.last_progress,
            example_vc: None,
        })
    }

    /// (router, port, VC) of global input VC `iv`.
    fn describe_vc(&self, iv: usize) -> (u32, u32, u32) {
        let gp = iv / self.v;
        let r = self.net.port_router[gp];
        (
            r,
            gp as u32 - self.net.port_base[r as usize],
            (iv % self.v) as u32,
        )
    }

    /// Checks flit conservation and the credit protocol; `Err` describes the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let buffered: u64 = self.ivs.iter().map(|ivc| u64::from(ivc.len)).sum();
        let on_wires: u64 = self.flit_wheel.iter().map(|w| w.len() as u64).sum();
        if self.counters.flits_injected != self.counters.flits_ejected + buffered + on_wires {
            return Err(format!(
                "flits not conserved: injected {} != ejected {} + buffered {} + on channels {}",
                self.counters.flits_injected, self.counters.flits_ejected, buffered, on_wires
            ));
        }
        self.check_output_queues()?;
        // For every channel into a router and VC: sender credits + flits on the channel +
        // flits buffered + credits on their way back == depth.
        let v = self.v;
        let counters = self.ovs.len() + self.nic_credits.len();
        let mut in_flight_flits = vec![0u32; counters];
        let mut in_flight_credits = vec![0u32; counters];
        for w in &self.flit_wheel {
            for ev in w {
                if let Sink::Router(_) = self.net.chan_sink[ev.chan as usize] {
                    let c = self.net.chan_credit_base[ev.chan as usize] + ev.vc;
                    in_flight_flits[c as usize] += 1;
                }
            }
        }
        for w in &self.credit_wheel {
            for &c in w {
                in_flight_credits[c as usize] += 1;
            }
        }
        for (chan, sink) in self.net.chan_sink.iter().enumerate() {
            let Sink::Router(gp) = *sink else { continue };
            for vc in 0..v {
                let c = (self.net.chan_credit_base[chan] as usize) + vc;
                let iv = gp as usize * v + vc;
                let credits = match self.ovs.get(c) {
                    Some(ovc) => ovc.credits,
                    None => self.nic_credits[c - self.ovs.len()],
                };
                let total = credits + in_flight_flits[c] + self.ivs[iv].len + in_flight_credits[c];
                if total != self.depth || credits > self.depth {
                    return Err(format!(
                        "credit protocol broken on channel {chan} vc {vc}: credits {} + flits in flight {} + buffered {} + credits in flight {} != depth {}",
                        credits,
                        in_flight_flits[c],
                        self.ivs[iv].len,
                        in_flight_credits[c],
                        self.depth
                    ));
                }
            }
        }
        Ok(())
    }

    /// The flits buffered in input VC `iv`, front first.
    fn buffered(&self, iv: usize) -> impl Iterator<Item = Flit> + '_ {
        let ivc = self.ivs[iv];
        let behind = (1..ivc.len).map(move |k| {
            let pos = (ivc.head + k - 1) % self.depth;
            self.buf[self.buf_slot(iv, pos)]
        });
        (ivc.len > 0).then_some(ivc.front).into_iter().chain(behind)
    }

    /// Every port's output queue (what adaptive routing reads as congestion) equals the
    /// buffered flits of the packets holding its output VCs.
    fn check_output_queues(&self) -> Result<(), String> {
        let mut expect = vec![0u64; self.port_state.len()];
        for (iv, ivc) in self.ivs.iter().enumerate() {
            if ivc.state == VcState::Active {
                let own = self
                    .buffered(iv)
                    .take_while(|f| f.pkt == ivc.front.pkt)
                    .count();
                expect[ivc.out_port as usize] += own as u64;
            }
        }
        for (port, (ps, &e)) in self.port_state.iter().zip(&expect).enumerate() {
            if u64::from(ps.queue) != e {
                return Err(format!(
                    "output queue of global port {port} is {} but the packets holding its \
                     VCs have {e} flits buffered",
                    ps.queue
                ));
            }
        }
        Ok(())
    }
}

/// Source-queue growth criterion (see docs/simulator.md): saturated when the queues grew in
/// at least three quarters of the batches and by more than two packets per terminal overall.
pub(super) fn queue_growth(at_batch: &[u64], terminals: usize) -> Option<String> {
    if at_batch.len() < 3 {
        return None;
    }
    let grew = at_batch.windows(2).filter(|w| w[1] > w[0]).count();
    let first = at_batch[0];
    let last = *at_batch.last().expect("non-empty");
    let enough = last > first + 2 * terminals as u64;
    (enough && grew * 4 >= (at_batch.len() - 1) * 3).then(|| {
        format!(
            "source queues grew from {first} to {last} packets during the measurement ({grew} of {} batches)",
            at_batch.len() - 1
        )
    })
}

/// One cycle of a directed graph, if any (iterative DFS).
fn find_cycle(adj: &[Vec<usize>]) -> Option<Vec<usize>> {
    let n = adj.len();
    let mut color = vec![0u8; n];
    let mut parent = vec![usize::MAX; n];
    for start in 0..n {
        if color[start] != 0 || adj[start].is_empty() {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        color[start] = 1;
        while let Some(&mut (u, ref mut i)) = stack.last_mut() {
            if *i < adj[u].len() {
                let w = adj[u][*i];
                *i += 1;
                if color[w] == 0 {
                    color[w] = 1;
                    parent[w] = u;
                    stack.push((w, 0));
                } else if color[w] == 1 {
                    let mut cycle = vec![w];
                    let mut x = u;
                    while x != w {
                        cycle.push(x);
                        x = parent[x];
                    }
                    cycle.reverse();
                    return Some(cycle);
                }
            } else {
                color[u] = 2;
                stack.pop();
            }
        }
    }
    None
}
