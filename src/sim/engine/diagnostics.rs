//! Deadlock reports and the model-independent part of the deadlock analysis, the invariant
//! checks the tests run every cycle, and the saturation criteria on source queues.

use super::*;

/// A deadlock: input VCs holding flits that can never move again (see
/// `Engine::find_deadlock` and docs/simulator.md).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeadlockReport {
    /// The cycle it was detected.
    pub cycle: u64,
    /// Input VCs (router, port, vc) that wait on each other in a cycle (empty only when a
    /// stuck packet has no route candidate at all).
    pub cycle_vcs: Vec<(u32, u32, u32)>,
    /// Flits in the network (buffers and channels) when detected.
    pub flits_in_flight: u64,
    /// Input VCs holding flits that can never move again, and the flits they hold.
    #[serde(default)]
    pub blocked_vcs: u64,
    #[serde(default)]
    pub blocked_flits: u64,
    /// Cycles since any flit moved anywhere (0 while the rest of the network still moves:
    /// a partial deadlock).
    #[serde(default)]
    pub stalled_cycles: u64,
    /// One stuck input VC (router, port, vc).
    #[serde(default)]
    pub example_vc: Option<(u32, u32, u32)>,
}

impl std::fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "deadlock at cycle {}: {} VCs holding {} flits can never move again",
            self.cycle, self.blocked_vcs, self.blocked_flits
        )?;
        if self.cycle_vcs.is_empty() {
            if let Some((r, p, vc)) = self.example_vc {
                write!(
                    f,
                    " (no wait-for cycle: a packet at router {r} port {p} VC {vc} has no route candidate)"
                )?;
            } else {
                write!(f, " (no flit moved for {} cycles)", self.stalled_cycles)?;
            }
        } else {
            let shown: Vec<String> = self
                .cycle_vcs
                .iter()
                .take(8)
                .map(|(r, p, vc)| format!("r{r}.p{p}.vc{vc}"))
                .collect();
            let more = self.cycle_vcs.len().saturating_sub(shown.len());
            write!(
                f,
                "; wait-for cycle of {} VCs: {}{}",
                self.cycle_vcs.len(),
                shown.join(" -> "),
                if more > 0 {
                    format!(" -> ... ({more} more)")
                } else {
                    String::new()
                }
            )?;
        }
        Ok(())
    }
}

impl<R: RouterModel> Engine<'_, R> {
    /// Input VCs that hold flits and can never move again, with a cycle of VCs that wait on
    /// each other among them; `None` when every VC holding flits can still move.
    ///
    /// A VC is *live* when it can act now or something already under way will let it act;
    /// otherwise it *waits on* other VCs (the rules depend on the router model: the
    /// input-queued router's are in input_queued/deadlock.rs). A VC that waits on a live VC
    /// becomes live (it needs only one of the VCs it waits on). What is left is stuck for
    /// good: nothing under way can change the state of the VCs it waits on, which wait only
    /// on each other.
    pub fn find_deadlock(&self) -> Option<DeadlockReport> {
        R::find_deadlock(self)
    }

    /// Per global input VC: whether flits are on a channel towards it.
    pub(super) fn flits_coming(&self) -> Vec<bool> {
        let num_vcs = self.num_vcs;
        let mut coming = vec![false; self.channels.router_counters];
        for w in &self.channels.flits {
            for event in w {
                if let Sink::Router(port) = self.net.chan_sink[event.channel as usize] {
                    coming[port as usize * num_vcs + event.vc as usize] = true;
                }
            }
        }
        coming
    }

    /// Per router credit counter (output VC): whether credits are on their way back to it.
    pub(super) fn credits_coming(&self) -> Vec<bool> {
        let mut coming = vec![false; self.channels.router_counters];
        for w in &self.channels.credits {
            for &c in w {
                if let Some(slot) = coming.get_mut(c as usize) {
                    *slot = true;
                }
            }
        }
        coming
    }

    /// The input VC that output VC `output_vc` feeds (None for ejection and unconnected
    /// ports).
    pub(super) fn downstream(&self, output_vc: usize) -> Option<usize> {
        let num_vcs = self.num_vcs;
        let channel = self.net.out_chan[output_vc / num_vcs];
        if channel == NONE {
            return None;
        }
        match self.net.chan_sink[channel as usize] {
            Sink::Router(port) => Some(port as usize * num_vcs + output_vc % num_vcs),
            Sink::Terminal(_) => None,
        }
    }

    /// The model-independent end of `find_deadlock`: from each input VC's liveness and the
    /// VCs it waits on, the VCs holding flits that stay dead once liveness has flowed
    /// backwards along the wait edges, and a report with a cycle among them.
    pub(super) fn stuck_input_vcs(
        &self,
        live: Vec<bool>,
        waits: Vec<Vec<usize>>,
    ) -> Option<DeadlockReport> {
        self.stuck_vcs(
            live,
            waits,
            |i| self.router.input_vc_len(i),
            |i| self.describe_vc(i),
        )
    }

    /// `stuck_input_vcs` over any graph of buffers: `held(node)` is the flits a node holds,
    /// `describe(node)` its (router, port, VC).
    pub(super) fn stuck_vcs(
        &self,
        mut live: Vec<bool>,
        mut waits: Vec<Vec<usize>>,
        held: impl Fn(usize) -> u32,
        describe: impl Fn(usize) -> (u32, u32, u32),
    ) -> Option<DeadlockReport> {
        let n = live.len();
        let mut waiters: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (input_vc, wait) in waits.iter().enumerate() {
            for &w in wait {
                waiters[w].push(input_vc);
            }
        }
        let mut stack: Vec<usize> = (0..n).filter(|&i| live[i]).collect();
        while let Some(u) = stack.pop() {
            for &w in &waiters[u] {
                if !live[w] {
                    live[w] = true;
                    stack.push(w);
                }
            }
        }
        let stuck: Vec<usize> = (0..n).filter(|&i| !live[i] && held(i) > 0).collect();
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
            cycle_vcs: cycle.into_iter().map(&describe).collect(),
            flits_in_flight: self.progress.flits_in_network,
            blocked_vcs: stuck.len() as u64,
            blocked_flits: stuck.iter().map(|&i| u64::from(held(i))).sum(),
            stalled_cycles: self.now - self.progress.last_move,
            example_vc: Some(describe(stuck[0])),
        })
    }

    /// The report when no flit has moved for `deadlock_cycles` although the analysis of
    /// [`Engine::find_deadlock`] finds no stuck VC (it should not happen; reported all the
    /// same rather than hanging).
    pub(super) fn stall_report(&self) -> DeadlockReport {
        self.find_deadlock().unwrap_or(DeadlockReport {
            cycle: self.now,
            cycle_vcs: Vec::new(),
            flits_in_flight: self.progress.flits_in_network,
            blocked_vcs: 0,
            blocked_flits: 0,
            stalled_cycles: self.now - self.progress.last_move,
            example_vc: None,
        })
    }

    /// (router, port, VC) of global input VC `input_vc`.
    pub(super) fn describe_vc(&self, input_vc: usize) -> (u32, u32, u32) {
        let port = input_vc / self.num_vcs;
        let r = self.net.port_router[port];
        (
            r,
            port as u32 - self.net.port_base[r as usize],
            (input_vc % self.num_vcs) as u32,
        )
    }

    /// Checks flit conservation, the router model's own invariants and the credit protocol;
    /// `Err` describes the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let buffered = self.router.buffered_flits();
        let on_wires = self.channels.flits_in_flight();
        if self.counters.flits_injected != self.counters.flits_ejected + buffered + on_wires {
            return Err(format!(
                "flits not conserved: injected {} != ejected {} + buffered {} + on channels {}",
                self.counters.flits_injected, self.counters.flits_ejected, buffered, on_wires
            ));
        }
        R::check_state(self)?;
        // For every channel into a router and VC: sender credits + flits on the channel +
        // flits buffered + credits on their way back == depth.
        let num_vcs = self.num_vcs;
        let router_counters = self.channels.router_counters;
        let counters = router_counters + self.terminals.credits.len();
        let mut in_flight_flits = vec![0u32; counters];
        let mut in_flight_credits = vec![0u32; counters];
        for w in &self.channels.flits {
            for event in w {
                if let Sink::Router(_) = self.net.chan_sink[event.channel as usize] {
                    let c = self.net.chan_credit_base[event.channel as usize] + event.vc;
                    in_flight_flits[c as usize] += 1;
                }
            }
        }
        for w in &self.channels.credits {
            for &c in w {
                in_flight_credits[c as usize] += 1;
            }
        }
        for (channel, sink) in self.net.chan_sink.iter().enumerate() {
            let Sink::Router(port) = *sink else { continue };
            for vc in 0..num_vcs {
                let c = (self.net.chan_credit_base[channel] as usize) + vc;
                let input_vc = port as usize * num_vcs + vc;
                let credits = if c < router_counters {
                    self.router.credits(c)
                } else {
                    self.terminals.credits[c - router_counters]
                };
                let held = self.router.input_vc_len(input_vc);
                let total = credits + in_flight_flits[c] + held + in_flight_credits[c];
                if total != self.vc_depth || credits > self.vc_depth {
                    return Err(format!(
                        "credit protocol broken on channel {channel} vc {vc}: credits {} + flits in flight {} + buffered {} + credits in flight {} != depth {}",
                        credits, in_flight_flits[c], held, in_flight_credits[c], self.vc_depth
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Marks a wait, in a partition's share, on whoever holds an output VC another partition owns
/// (the input-queued router's `vc_liveness`): resolved when the shares are joined.
pub(super) const OWNER_OF: usize = 1 << (usize::BITS - 2);

/// A partition's share of a deadlock analysis in the parallel engine
/// (`RouterModel::probe_part`): full-size tables over the model's nodes (input VCs, then any
/// other buffers, numbered as in its `find_deadlock`), of which only the entries of the
/// partition's own routers count.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ProbePart {
    pub(super) live: Vec<bool>,
    pub(super) waits: Vec<Vec<usize>>,
    pub(super) held: Vec<u32>,
    /// Per output VC, the input VC holding it, when waits may be `OWNER_OF` (else empty).
    pub(super) owners: Vec<u32>,
}

impl<R: RouterModel> Engine<'_, R> {
    /// `find_deadlock` over the whole network from every partition's share (`parts[k]` of
    /// partition k; `router_part` says who owns which router): each node's entries come from
    /// its router's partition, and a wait on another partition's output VC is resolved to
    /// that output VC's holder (live if it has none).
    pub(super) fn join_probes(
        &self,
        mut parts: Vec<ProbePart>,
        router_part: &[u32],
    ) -> Option<DeadlockReport> {
        let num_vcs = self.num_vcs;
        let vcs = self.channels.router_counters;
        let part_of = |node: usize| {
            router_part[self.net.port_router[(node % vcs) / num_vcs] as usize] as usize
        };
        let n = parts[0].live.len();
        let mut live = vec![false; n];
        let mut waits = vec![Vec::new(); n];
        let mut held = vec![0u32; n];
        for node in 0..n {
            let q = part_of(node);
            live[node] = parts[q].live[node];
            held[node] = parts[q].held[node];
            let mut wait = std::mem::take(&mut parts[q].waits[node]);
            if let [w] = wait[..] {
                if w & OWNER_OF != 0 {
                    let output_vc = w & !OWNER_OF;
                    match parts[part_of(output_vc)].owners[output_vc] {
                        NONE => {
                            live[node] = true;
                            wait.clear();
                        }
                        owner => wait[0] = owner as usize,
                    }
                }
            }
            waits[node] = wait;
        }
        self.stuck_vcs(
            live,
            waits,
            |node| held[node],
            |node| self.describe_vc(node % vcs),
        )
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
