//! The input-output-queued router (`router = "ioq"`), after SST/Merlin's `hr_router`
//! (docs/simulator.md, "The input-output-queued router"): per input port and VC an input
//! buffer, per output port and VC an output buffer, a crossbar on its own clock
//! (`xbar_period` cycles per flit) between them.
//!
//! - A packet is routed once, when its head reaches the front of its input VC (no
//!   VC-allocation stage, no output-VC ownership: packets queue in an output VC's buffer).
//! - At each crossbar tick, arbitration (least recently served first, or round robin) over
//!   the heads waiting in the router: a head crosses when its input port and the output
//!   port are free this tick and one of its candidate output VCs has room for the whole
//!   packet (the first such in the routing function's order); the room is reserved and
//!   the packet's flits cross as they arrive, before new packets (a port moves one flit
//!   per tick each way; a packet whose next flit has not arrived holds no port, so flits
//!   of packets crossing to different output VCs may interleave). Each flit leaving the
//!   input buffer sends its credit upstream.
//! - The output stage, whenever the port's link is free: the VC sending a packet goes on
//!   with it; otherwise the first VC (round robin) whose front packet has downstream
//!   credits for all its flits starts. A flit is whole at the next router one link period
//!   later, plus the output latency, the link latency and the input latency.
//!
//! - crossbar.rs: arrivals, route computation, the crossbar ticks;
//! - output.rs: the output stage;
//! - deadlock.rs: the deadlock rules and the model's invariants;
//! - view.rs: the congestion view routing functions read.

mod crossbar;
mod deadlock;
mod output;
mod view;

use super::tables;
use super::*;

use view::IoqView;

use crate::routing::CongestionView;
use crate::sim::config::XbarArbitration;

/// Where the front packet of an input VC stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Zeroable)]
#[repr(u8)]
enum Stage {
    /// Empty (a head arriving is routed at once).
    Idle,
    /// Routed; the head waits for the crossbar.
    Waiting,
    /// Connected through the crossbar: its flits cross as they arrive, until the tail.
    Crossing,
}

/// One input VC: its buffered flits (a ring of `depth` slots), its front packet's stage.
#[derive(Clone, Copy, Debug, bytemuck::Zeroable)]
struct InputVc {
    /// `Waiting`: the cycle from which the crossbar may take it (a learned routing's
    /// decision time).
    ready: u64,
    len: u32,
    ring_head: u32,
    /// `Crossing`: the packet, the global output VC it crosses to, and its flits already
    /// across.
    packet: u32,
    output_vc: u32,
    crossed: u32,
    num_candidates: u16,
    stage: Stage,
}

/// One output VC: credits for the downstream input VC, its buffer (a ring of
/// `output_depth` slots), and the room promised to packets crossing into it.
#[derive(Clone, Copy, Debug, bytemuck::Zeroable)]
struct OutputVc {
    credits: u32,
    len: u32,
    ring_head: u32,
    /// Flits in the buffer plus the flits still to cross of the packet crossing into it:
    /// the room left is `output_depth - committed`.
    committed: u32,
    /// The input VC whose packet is crossing into this VC (`NONE` if none): one at a time,
    /// so that packets never interleave in the buffer.
    filling: u32,
}

/// The changing state of a global port.
#[derive(Clone, Copy, Debug, bytemuck::Zeroable)]
struct PortState {
    /// The output channel's next free cycle.
    free_at: u64,
    /// The output VC sending a packet on the link (`NONE` between packets), and the output
    /// stage's round-robin pointer over the port's VCs.
    sending: u32,
    pointer: u32,
    /// Flits in this port's output buffers (every VC).
    queued: u32,
    /// The crossbar tick + 1 at which this port last moved a flit in and out (0 = never):
    /// a port moves one flit per tick each way.
    in_used: u64,
    out_used: u64,
}

/// The state of every router of the network. `pub` only to name an engine built with
/// [`Engine::new_ioq`]; its fields cannot be reached outside the crate.
pub struct IoQueuedRouter {
    inputs: tables::HotTable<InputVc>,
    /// `depth` slots per input VC.
    input_ring: tables::HotTable<Flit>,
    depth: u32,
    /// Route candidates of each input VC: `inputs[i].num_candidates` from `i * stride`.
    candidates: tables::HotTable<Candidate>,
    candidate_stride: usize,
    outputs: tables::HotTable<OutputVc>,
    /// `output_depth` slots per output VC.
    output_ring: tables::HotTable<Flit>,
    output_depth: u32,
    ports: tables::HotTable<PortState>,
    /// Least recently served first: per global input VC the stamp of its last crossbar win
    /// (initially its own number, so the first order is the numbering).
    last_served: tables::HotTable<u64>,
    next_stamp: u64,
    /// Round robin: per router, the local input VC after the last winner.
    rr_pointer: tables::HotTable<u32>,
    /// Per router, bit sets over local input VCs: those whose head waits for the crossbar,
    /// and those whose packet is crossing.
    waiting: tables::HotTable<u64>,
    crossing: tables::HotTable<u64>,
    words_per_router: usize,
    /// Per router: flits in its input and output buffers.
    held: tables::HotTable<u32>,
    xbar_period_milli: u64,
    arbitration: XbarArbitration,
    /// Scratch: the requests of one arbitration, (priority, local input VC).
    requests: Vec<(u64, u32)>,
    /// Per router, a bit set over local input VCs: those a head arrived into, idle, this
    /// cycle, to be routed once all the cycle's flits have arrived (`route_arrived_heads`);
    /// and the routers with such heads.
    arrived_heads: tables::HotTable<u64>,
    routers_with_heads: Vec<u32>,
}

impl IoQueuedRouter {
    fn new(
        net: &Network,
        ports: &Ports,
        params: &SimParams,
        owns_router: &dyn Fn(usize) -> bool,
    ) -> Self {
        let ioq = params
            .ioq
            .as_ref()
            .expect("the input-output-queued router needs [simulation] router = \"ioq\"");
        let num_vcs = net.num_vcs;
        let count = net.num_ports() * num_vcs;
        let depth = params.vc_depth;
        let outputs = tables::own_router_entries(net, num_vcs, owns_router, |output_vc| {
            OutputVc {
                // Terminals always accept flits.
                credits: if net.out_is_ejection[output_vc / num_vcs] {
                    u32::MAX / 2
                } else {
                    depth
                },
                len: 0,
                ring_head: 0,
                committed: 0,
                filling: NONE,
            }
        });
        IoQueuedRouter {
            inputs: tables::own_router_entries(net, num_vcs, owns_router, |_| InputVc {
                ready: 0,
                len: 0,
                ring_head: 0,
                packet: NONE,
                output_vc: NONE,
                crossed: 0,
                num_candidates: 0,
                stage: Stage::Idle,
            })
            .into(),
            input_ring: empty_flit_slots(count * depth as usize).into(),
            depth,
            candidates: tables::zeroed(count).into(),
            candidate_stride: 1,
            outputs: outputs.into(),
            output_ring: empty_flit_slots(count * ioq.output_depth as usize).into(),
            output_depth: ioq.output_depth,
            ports: tables::own_router_entries(net, 1, owns_router, |_| PortState {
                free_at: 0,
                sending: NONE,
                pointer: 0,
                queued: 0,
                in_used: 0,
                out_used: 0,
            })
            .into(),
            last_served: tables::own_router_entries(net, num_vcs, owns_router, |vc| vc as u64)
                .into(),
            next_stamp: count as u64,
            rr_pointer: vec![0; net.num_routers()].into(),
            waiting: vec![0; net.num_routers() * ports.words_per_router()].into(),
            crossing: vec![0; net.num_routers() * ports.words_per_router()].into(),
            words_per_router: ports.words_per_router(),
            held: vec![0; net.num_routers()].into(),
            xbar_period_milli: ioq.xbar_period_milli(),
            arbitration: ioq.xbar_arb,
            requests: Vec::new(),
            arrived_heads: vec![0; net.num_routers() * ports.words_per_router()].into(),
            routers_with_heads: Vec::new(),
        }
    }

    /// The crossbar ticks that fall in cycle `now`, as a range of tick numbers: tick `k`
    /// is at cycle `ceil(k * period)`.
    #[inline]
    fn ticks(&self, now: u64) -> std::ops::RangeInclusive<u64> {
        let upto = |c: u64| c * 1000 / self.xbar_period_milli;
        if now == 0 {
            0..=0
        } else {
            upto(now - 1) + 1..=upto(now)
        }
    }

    /// Whether output VC `output_vc` can take a packet of `size` flits: no packet crossing
    /// into it, and room for all of them or, for a packet larger than the buffer (a learned routing's acknowledgement,
    /// say), an empty and unreserved buffer (its flits then cross as the buffer drains).
    #[inline]
    fn has_room(&self, output_vc: usize, size: u32) -> bool {
        let output = self.outputs[output_vc];
        output.filling == NONE
            && (output.committed + size <= self.output_depth
                || (output.committed == 0 && size > self.output_depth))
    }

    /// Credits an output VC needs downstream before it starts sending a packet of `size`
    /// flits: room for the whole packet, or the whole buffer for a packet larger than it.
    #[inline]
    fn credits_to_start(&self, size: u32) -> u32 {
        size.min(self.depth)
    }

    /// The route candidates stored for input VC `input_vc`.
    #[inline]
    fn candidates(&self, input_vc: usize) -> &[Candidate] {
        let start = input_vc * self.candidate_stride;
        &self.candidates[start..start + usize::from(self.inputs[input_vc].num_candidates)]
    }

    /// Keeps `list` as the route candidates of input VC `input_vc`.
    fn store_candidates(&mut self, input_vc: usize, list: &[Candidate]) {
        let n = list.len();
        if n > self.candidate_stride {
            // Rare (more candidates than ever before): widen the table.
            let stride = n.next_power_of_two();
            let mut wider = vec![list[0]; self.inputs.len() * stride];
            for i in 0..self.inputs.len() {
                let old = self.candidates(i);
                wider[i * stride..i * stride + old.len()].copy_from_slice(old);
            }
            self.candidates = wider.into();
            self.candidate_stride = stride;
        }
        let start = input_vc * self.candidate_stride;
        self.candidates[start..start + n].copy_from_slice(list);
        self.inputs[input_vc].num_candidates =
            u16::try_from(n).expect("at most 65535 route candidates");
    }

    /// The front flit of input VC `input_vc` (which holds one).
    #[inline]
    fn input_front(&self, input_vc: usize) -> Flit {
        self.input_ring[input_vc * self.depth as usize + self.inputs[input_vc].ring_head as usize]
    }

    /// The front flit of output VC `output_vc` (which holds one).
    #[inline]
    fn output_front(&self, output_vc: usize) -> Flit {
        self.output_ring
            [output_vc * self.output_depth as usize + self.outputs[output_vc].ring_head as usize]
    }

    /// The congestion state routing functions read.
    #[inline]
    fn view<'e>(&'e self, net: &'e Network) -> IoqView<'e> {
        IoqView { router: self, net }
    }
}

/// Where each step lives: crossbar.rs, output.rs, deadlock.rs.
impl RouterModel for IoQueuedRouter {
    const OUTPUT_QUEUED: bool = true;

    fn build(
        net: &Network,
        ports: &Ports,
        params: &SimParams,
        _cut_through: u64,
        owns_router: &dyn Fn(usize) -> bool,
    ) -> Self {
        Self::new(net, ports, params, owns_router)
    }

    #[inline(always)]
    fn credit_arrived(&mut self, counter: usize) {
        self.outputs[counter].credits += 1;
    }

    #[inline(always)]
    fn prefetch_input(&self, input_vc: usize) {
        prefetch(&self.inputs, input_vc);
    }

    #[inline(always)]
    fn flit_arrived(engine: &mut Engine<'_, Self>, dest: ChannelDestination, vc: u32, flit: Flit) {
        engine.ioq_arrival(dest, vc, flit);
    }

    /// The heads that arrived into idle input VCs are routed now, in input VC order.
    #[inline]
    fn arrivals_done(engine: &mut Engine<'_, Self>) {
        engine.route_arrived_heads();
    }

    #[inline(always)]
    fn run_router(engine: &mut Engine<'_, Self>, router: usize) {
        engine.ioq_cycle(router);
    }

    #[inline(always)]
    fn compute_route(engine: &mut Engine<'_, Self>, at: &RouterLayout, local_input_vc: usize) {
        engine.ioq_route(at, local_input_vc);
    }

    /// No VC-allocation stage: a packet's output VC is chosen when it wins the crossbar.
    fn allocate_vcs(_engine: &mut Engine<'_, Self>, _at: &RouterLayout) -> bool {
        false
    }

    /// The crossbar ticks of this cycle.
    fn allocate_switch(engine: &mut Engine<'_, Self>, at: &RouterLayout) {
        for tick in engine.router.ticks(engine.now) {
            engine.xbar_tick(at, tick);
        }
    }

    /// Moves the next flit of the packet crossing from `local_input_vc`.
    fn traverse(engine: &mut Engine<'_, Self>, at: &RouterLayout, local_input_vc: usize) {
        let tick = *engine.router.ticks(engine.now).end();
        engine.cross_flit(at, at.first_vc + local_input_vc, tick);
    }

    #[inline(always)]
    fn holds_flits(&self, router: usize) -> bool {
        self.held[router] > 0
    }

    fn buffered_flits(&self) -> u64 {
        self.inputs.iter().map(|i| u64::from(i.len)).sum::<u64>()
            + self.outputs.iter().map(|o| u64::from(o.len)).sum::<u64>()
    }

    fn input_vc_len(&self, input_vc: usize) -> u32 {
        self.inputs[input_vc].len
    }

    fn credits(&self, counter: usize) -> u32 {
        self.outputs[counter].credits
    }

    fn probe_part(
        engine: &Engine<'_, Self>,
        _owns_router: &dyn Fn(usize) -> bool,
    ) -> super::diagnostics::ProbePart {
        // Every node's entries read only its own router's state: nothing to defer.
        let (live, waits, held) = engine.ioq_liveness();
        super::diagnostics::ProbePart {
            live,
            waits,
            held,
            owners: Vec::new(),
        }
    }

    fn find_deadlock(engine: &Engine<'_, Self>) -> Option<DeadlockReport> {
        engine.ioq_find_stuck_vcs()
    }

    fn check_state(engine: &Engine<'_, Self>) -> Result<(), String> {
        engine.ioq_check_state()
    }
}
