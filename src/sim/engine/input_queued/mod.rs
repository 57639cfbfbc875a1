//! The input-queued router (the engine's default `RouterModel`): one buffer per input port
//! and VC, no output buffers; a head goes through route computation, VC allocation and
//! switch allocation, every flit through switch allocation and traversal (docs/simulator.md,
//! "One cycle").
//!
//! - vcs.rs: input VCs (32-byte records, ring buffers, route candidates, the non-empty bit
//!   sets) and output VCs (credits, owner, the grant rule);
//! - pipeline.rs: a flit's arrival and one router's cycle (route computation, VC-allocation
//!   requests, switch-allocation requests in one pass over the non-empty input VCs), switch
//!   traversal;
//! - alloc.rs: the VC allocator's output stage, the switch allocators (separable, iSLIP);
//! - deadlock.rs: which input VCs are live or wait on which (deadlock analysis), the output
//!   queue invariant;
//! - view.rs: the congestion view routing functions read.
//!
//! The stages are methods of `Engine<'_, InputQueuedRouter>`: they reach the shared
//! components (`self.channels`, `self.packets`, `self.routing`, ...) and this model's state
//! (`self.router`) directly; the `RouterModel` implementation below only names them. The
//! hot ones called from another file are `#[inline]`: each has one hot caller, and without
//! the hint whether it is inlined there depends on which codegen units the files land in
//! (2% more instructions on the dragonfly bench when they were not).

mod alloc;
mod deadlock;
mod pipeline;
mod vcs;
mod view;

use super::tables::{self, AlignedZeroed};
use super::*;

use alloc::{SwitchAllocator, VcAllocator, VcPick};
use vcs::{InputVc, InputVcs, OutputVc, OutputVcs, SameNeed, VcState};
use view::EngineView;

use crate::routing::CongestionView;
use crate::sim::config::{AllocatorKind, VcAllocatorKind};

/// The changing state of a global port: its output channel's next free cycle, its output
/// queue (the buffered flits of the packets that hold one of its output VCs; flits of later
/// packets queued behind them count once their packet is granted) and the switch
/// allocators' round-robin pointers (as an input port, as an output port, iSLIP's accept).
#[derive(Clone, Copy, Debug, Default, bytemuck::Zeroable)]
struct PortState {
    free_at: u64,
    output_queue: u32,
    input_pointer: u32,
    output_pointer: u32,
    accept_pointer: u32,
}

/// The state of every router of the network. `pub` only as the default of `Engine`'s
/// router parameter; it cannot be named outside the crate.
pub struct InputQueuedRouter {
    input_vcs: InputVcs,
    output_vcs: OutputVcs,
    /// Per global port.
    port_state: tables::HotTable<PortState>,
    vc_allocator: VcAllocator,
    switch_allocator: SwitchAllocator,
}

impl InputQueuedRouter {
    /// The congestion state routing functions read.
    #[inline]
    fn view<'e>(&'e self, net: &'e Network) -> EngineView<'e> {
        EngineView::of_parts(
            &self.output_vcs.records,
            &self.port_state,
            &self.input_vcs.records,
            net,
            self.input_vcs.depth,
        )
    }
}

/// Where each step lives: pipeline.rs, alloc.rs, deadlock.rs. The calls are static and the
/// forwarding functions inline, so the seam costs nothing per flit.
impl RouterModel for InputQueuedRouter {
    const OUTPUT_QUEUED: bool = false;

    fn build(
        net: &Network,
        ports: &Ports,
        params: &SimParams,
        cut_through: u64,
        owns_router: &dyn Fn(usize) -> bool,
    ) -> Self {
        let num_vcs = net.num_vcs;
        let count = net.num_ports() * num_vcs;
        let depth = params.vc_depth;
        let output_vcs = tables::own_router_entries(net, num_vcs, owns_router, |output_vc| {
            OutputVc {
                // Terminals always accept flits: ejection VCs never run out of credits.
                credits: if net.out_is_ejection[output_vc / num_vcs] {
                    u32::MAX / 2
                } else {
                    depth
                },
                owner: NONE,
            }
        });
        let cut_through: Vec<bool> = (0..num_vcs).map(|vc| cut_through >> vc & 1 == 1).collect();
        InputQueuedRouter {
            input_vcs: InputVcs::new(count, depth, net.num_routers(), ports.words_per_router()),
            output_vcs: OutputVcs {
                records: output_vcs.into(),
                same_need: SameNeed::new(&cut_through, params.wait_for_tail_credit, depth),
                cut_through,
                wait_for_tail_credit: params.wait_for_tail_credit,
                depth,
            },
            port_state: tables::zeroed(net.num_ports()).into(),
            vc_allocator: VcAllocator::new(params.vc_allocator, count, ports),
            switch_allocator: SwitchAllocator::new(ports),
        }
    }

    #[inline(always)]
    fn credit_arrived(&mut self, counter: usize) {
        self.output_vcs.records[counter].credits += 1;
    }

    #[inline(always)]
    fn prefetch_input(&self, input_vc: usize) {
        prefetch(&self.input_vcs.records, input_vc);
    }

    /// Three routers ahead its bit set of non-empty input VCs, its output VCs and its ports,
    /// two ahead the records of those VCs, one ahead what their stage reads next: the front
    /// flit's packet (route computation of an idle VC) or the output VC's credits (an active
    /// one). These were the stalls of the 16,512-node dragonfly, whose state is larger than
    /// the L3 cache.
    #[inline(always)]
    fn prefetch_router(engine: &Engine<'_, Self>, router: usize, ahead: usize) {
        let vcs = &engine.router.input_vcs;
        let words = vcs.words_per_router;
        let at = &engine.ports.routers[router];
        let base = at.first_vc;
        if ahead >= 3 {
            prefetch(&vcs.nonempty, router * words);
            // All its output VCs (a few cache lines): VC allocation reads those of the
            // candidates of heads routed only while the router runs.
            prefetch_all(&engine.router.output_vcs.records[base..base + at.num_local_vcs as usize]);
            // And its ports: their channel state (switch requests, traversal) and timing.
            let ports = at.first_port..at.first_port + at.num_ports as usize;
            prefetch_all(&engine.router.port_state[ports.clone()]);
            prefetch_all(&engine.ports.links[ports]);
            return;
        }
        for w in 0..words {
            let mut bits = vcs.nonempty[router * words + w];
            while bits != 0 {
                let input_vc = base + w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if ahead == 2 {
                    prefetch(&vcs.records, input_vc);
                    continue;
                }
                let record = &vcs.records[input_vc];
                match record.state {
                    VcState::Idle => prefetch(&engine.packets.table, record.front.packet as usize),
                    VcState::Active => prefetch(
                        &engine.router.output_vcs.records,
                        record.output_vc_index(engine.num_vcs),
                    ),
                    VcState::VcAllocation => {}
                }
            }
        }
    }

    #[inline(always)]
    fn flit_arrived(engine: &mut Engine<'_, Self>, dest: ChannelDestination, vc: u32, flit: Flit) {
        engine.buffer_arrival(dest, vc, flit);
    }

    #[inline(always)]
    fn run_router(engine: &mut Engine<'_, Self>, router: usize) {
        engine.process_router(router);
    }

    #[inline(always)]
    fn compute_route(engine: &mut Engine<'_, Self>, at: &RouterLayout, local_input_vc: usize) {
        engine.compute_route(at, local_input_vc);
    }

    #[inline(always)]
    fn allocate_vcs(engine: &mut Engine<'_, Self>, at: &RouterLayout) -> bool {
        engine.allocate_vcs(at)
    }

    #[inline(always)]
    fn allocate_switch(engine: &mut Engine<'_, Self>, at: &RouterLayout) {
        engine.allocate_switch(at);
    }

    #[inline(always)]
    fn traverse(engine: &mut Engine<'_, Self>, at: &RouterLayout, local_input_vc: usize) {
        engine.traverse(at, local_input_vc);
    }

    #[inline(always)]
    fn holds_flits(&self, router: usize) -> bool {
        self.input_vcs.router_holds_flits(router)
    }

    fn buffered_flits(&self) -> u64 {
        self.input_vcs
            .records
            .iter()
            .map(|record| u64::from(record.len))
            .sum()
    }

    fn input_vc_len(&self, input_vc: usize) -> u32 {
        self.input_vcs.records[input_vc].len
    }

    fn credits(&self, counter: usize) -> u32 {
        self.output_vcs.records[counter].credits
    }

    fn probe_part(
        engine: &Engine<'_, Self>,
        owns_router: &dyn Fn(usize) -> bool,
    ) -> super::diagnostics::ProbePart {
        engine.iq_probe_part(owns_router)
    }

    fn find_deadlock(engine: &Engine<'_, Self>) -> Option<DeadlockReport> {
        engine.find_stuck_vcs()
    }

    fn check_state(engine: &Engine<'_, Self>) -> Result<(), String> {
        engine.check_output_queues()
    }
}
