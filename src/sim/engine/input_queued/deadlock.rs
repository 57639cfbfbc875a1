//! The input-queued router's side of the deadlock analysis (which input VCs are live and what
//! the others wait on) and of the invariant checks (output queues).

use super::*;

use super::super::diagnostics::{OWNER_OF, ProbePart};

impl Engine<'_, InputQueuedRouter> {
    /// `Engine::find_deadlock` for input-queued routers. A VC is *live* when its stage's
    /// delay has not passed, it has no route yet, it holds an output VC with a credit (or
    /// leading to a terminal), a grantable candidate, or credits or flits are on their way to
    /// what it waits for. Otherwise it *waits on* other VCs: an `Active` VC without credits
    /// on the downstream input VC; an `Active` VC whose buffered flits have all left on the
    /// upstream VC still holding the rest of its packet; a VC waiting for an output VC on
    /// the VC holding each candidate (or, when a candidate is free but lacks credits, on the
    /// downstream input VC).
    pub(super) fn find_stuck_vcs(&self) -> Option<DeadlockReport> {
        let (live, waits) = self.vc_liveness(|_| true);
        self.stuck_input_vcs(live, waits)
    }

    /// Each input VC's liveness and the VCs it waits on (see `find_stuck_vcs`). In a
    /// partition of the parallel engine only the output VCs for which `local_output_vc` holds
    /// are known here: an input VC whose packet's next flits wait behind another partition's
    /// output VC is left not live, waiting on `OWNER_OF | that output VC`, for the
    /// partitions' results to be joined (parallel.rs): live if the output VC has no owner,
    /// else waiting on its owner.
    fn vc_liveness(&self, local_output_vc: impl Fn(usize) -> bool) -> (Vec<bool>, Vec<Vec<usize>>) {
        let num_vcs = self.num_vcs;
        let input_vcs = &self.router.input_vcs;
        let output_vcs = &self.router.output_vcs;
        let n = input_vcs.records.len();
        let routers = output_vcs.records.len();
        // What is already under way: flits on channels into router input VCs, and credits
        // on their way back to router output VCs.
        let flits_coming = self.flits_coming();
        let credits_coming = self.credits_coming();
        let mut live = vec![false; n];
        let mut waits: Vec<Vec<usize>> = vec![Vec::new(); n];
        for input_vc in 0..n {
            let record = input_vcs.records[input_vc];
            let wait = &mut waits[input_vc];
            live[input_vc] = match record.state {
                _ if record.ready > self.now => true,
                VcState::Idle => true,
                VcState::Active if record.len == 0 => {
                    // The packet's next flits are upstream (or on the channel).
                    let channel = self.net.in_chan[input_vc / num_vcs];
                    let base = self.net.chan_credit_base[channel as usize] as usize;
                    if flits_coming[input_vc] || base >= routers {
                        true // on their way, or a NIC is sending them
                    } else if !local_output_vc(base + input_vc % num_vcs) {
                        wait.push(OWNER_OF | (base + input_vc % num_vcs));
                        false
                    } else {
                        match output_vcs.records[base + input_vc % num_vcs].owner {
                            NONE => true,
                            owner => {
                                wait.push(owner as usize);
                                false
                            }
                        }
                    }
                }
                VcState::Active => {
                    let output_vc = record.output_vc_index(num_vcs);
                    if output_vcs.records[output_vc].credits > 0 || credits_coming[output_vc] {
                        true
                    } else {
                        match self.downstream(output_vc) {
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
                    let r = self.net.port_router[input_vc / num_vcs] as usize;
                    let first_port = self.net.port_base[r] as usize;
                    let mut any = false;
                    for c in input_vcs.candidates(input_vc) {
                        for vc in c.vcs.iter() {
                            let output_vc = (first_port + c.port as usize) * num_vcs + vc;
                            let out = output_vcs.records[output_vc];
                            if out.owner != NONE {
                                wait.push(out.owner as usize);
                            } else if out.credits
                                >= output_vcs.grant_need(&self.packets, record.front.packet, vc)
                                || credits_coming[output_vc]
                            {
                                any = true;
                            } else if let Some(d) = self.downstream(output_vc) {
                                wait.push(d);
                            }
                        }
                    }
                    any
                }
            };
        }
        (live, waits)
    }

    /// Every port's output queue (what adaptive routing reads as congestion) equals the
    /// buffered flits of the packets holding its output VCs.
    pub(super) fn check_output_queues(&self) -> Result<(), String> {
        let input_vcs = &self.router.input_vcs;
        let port_state = &self.router.port_state;
        let mut expect = vec![0u64; port_state.len()];
        for (input_vc, record) in input_vcs.records.iter().enumerate() {
            if record.state == VcState::Active {
                let own = input_vcs
                    .buffered(input_vc)
                    .take_while(|f| f.packet == record.front.packet)
                    .count();
                expect[record.output_port as usize] += own as u64;
            }
        }
        for (port, (state, &e)) in port_state.iter().zip(&expect).enumerate() {
            if u64::from(state.output_queue) != e {
                return Err(format!(
                    "output queue of global port {port} is {} but the packets holding its \
                     VCs have {e} flits buffered",
                    state.output_queue
                ));
            }
        }
        Ok(())
    }
}

impl Engine<'_, InputQueuedRouter> {
    /// This partition's share of `find_stuck_vcs` (its own routers are those for which
    /// `owns_router` holds).
    pub(super) fn iq_probe_part(&self, owns_router: &dyn Fn(usize) -> bool) -> ProbePart {
        let num_vcs = self.num_vcs;
        let (live, waits) = self.vc_liveness(|output_vc| {
            owns_router(self.net.port_router[output_vc / num_vcs] as usize)
        });
        ProbePart {
            held: (0..live.len())
                .map(|i| self.router.input_vc_len(i))
                .collect(),
            owners: self
                .router
                .output_vcs
                .records
                .iter()
                .map(|r| r.owner)
                .collect(),
            live,
            waits,
        }
    }
}
