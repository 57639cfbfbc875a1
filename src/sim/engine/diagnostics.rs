//! Deadlock reports, the invariant checks the tests run every cycle, and the saturation
//! criteria on source queues.

use super::*;

impl Engine<'_> {
    /// The input VCs that wait on each other in a cycle (for the deadlock report).
    pub(super) fn deadlock_report(&self) -> DeadlockReport {
        let v = self.v;
        let n = self.ivs.len();
        // Wait-for edges between input VCs: an ACTIVE VC without credits waits for the
        // downstream input VC; a VC waiting for an output VC waits for the VCs holding its
        // candidates.
        let mut waits: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (iv, wait) in waits.iter_mut().enumerate() {
            if self.ivs[iv].len == 0 {
                continue;
            }
            match self.ivs[iv].state {
                ACTIVE => {
                    let ov = self.ivs[iv].out(v);
                    let out_port = ov / v;
                    if let Sink::Router(gp) =
                        self.net.chan_sink[self.net.out_chan[out_port] as usize]
                    {
                        wait.push(gp as usize * v + ov % v);
                    }
                }
                VC_ALLOC => {
                    let r = self.net.port_router[iv / v] as usize;
                    let pb = self.net.port_base[r] as usize;
                    for c in self.cands(iv) {
                        for vc in c.vcs.iter() {
                            let owner = self.ovs[(pb + c.port as usize) * v + vc].owner;
                            if owner != NONE {
                                wait.push(owner as usize);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let cycle = find_cycle(&waits).unwrap_or_default();
        let describe = |iv: usize| {
            let gp = iv / v;
            let r = self.net.port_router[gp];
            (
                r,
                gp as u32 - self.net.port_base[r as usize],
                (iv % v) as u32,
            )
        };
        DeadlockReport {
            cycle: self.now,
            cycle_vcs: cycle.into_iter().map(describe).collect(),
            flits_in_flight: self.flits_in_network,
        }
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
}

impl Engine<'_> {
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
            if ivc.state == ACTIVE {
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
