//! The seam between the engine and a router micro-architecture.
//!
//! The engine (`Engine<'a, R: RouterModel>`) owns what every router model shares and drives
//! the cycle (docs/simulator.md, "One cycle"):
//!
//! - the static layout (`Ports`, ports.rs): each router's first port and VC, the local
//!   numbering, each port's channel timing and where its input's credits go;
//! - the channels (`Channels`, channels.rs): flits and credits in flight in timing wheels,
//!   the credit counter numbering (router counters first, then the NICs'), where each channel
//!   delivers;
//! - the terminals (`Terminals`, terminals.rs): sources, source queues, NICs with their
//!   credits, injection and ejection (a flit reaching a terminal never involves the model);
//! - the packets, the routing session (with its hooks: a head's arrival at a router input is
//!   reported before the model sees the flit), the statistics and counters, and which routers
//!   are active.
//!
//! A model owns the routers' state (buffers, VCs, allocators, the routers' credit counters)
//! and provides, through this trait:
//!
//! - `build`: its empty state;
//! - arrivals: `credit_arrived` for a credit returning to a router's counter,
//!   `flit_arrived` for a flit reaching a router input (the model buffers it, and puts the
//!   router on `engine.active_routers` when it has work), `prefetch_input` and
//!   `prefetch_router` as cache hints;
//! - the pipeline: `run_router`, called every cycle for every active router, runs the
//!   model's stages in its own order and timing: `compute_route` (calls
//!   `engine.routing.session.route` with a `CongestionView` of the model's state),
//!   `allocate_vcs`, `allocate_switch`, `traverse` (moves a flit out of its buffer: returns
//!   the credit upstream with `engine.channels.send_credit` at the input port's
//!   `PortLinks::credit_delay`, sends the flit with `engine.channels.send_flit`, each with
//!   the port's flag saying whether it crosses to another partition, counts
//!   `counters.flit_hops` and `progress.last_move`); `holds_flits` keeps a router active;
//! - diagnostics: `buffered_flits` (flit conservation), `input_vc_len` and `credits` (the
//!   credit protocol on every channel into a router, checked by the engine),
//!   `find_deadlock` (which VCs can never move again; `Engine::stuck_input_vcs` does the
//!   model-independent part) and `check_state` (the model's own invariants).
//!
//! Models are selected statically (the engine is generic over the model, monomorphized):
//! no dynamic call per flit. The input-queued router (`InputQueuedRouter`, input_queued/)
//! is the default. A second model goes in its own module beside it: a state type that
//! implements this trait, its stages written as methods of `Engine<'_, ThatModel>` (which
//! reach the shared components as `self.channels`, `self.packets`, ... and the model's state
//! as `self.router`), and a constructor picking it (`Engine::<ThatModel>::build`); nothing
//! in input_queued/ changes.

use super::channels::{ChannelDestination, Flit};
use super::ports::{Ports, RouterLayout};
use super::{DeadlockReport, Engine};
use crate::sim::config::SimParams;
use crate::sim::network::Network;

/// A router micro-architecture the engine can run (see the module documentation). `pub` only
/// because it bounds the public `Engine`'s methods; it cannot be named outside the crate.
pub trait RouterModel: Sized {
    /// Whether the model is the one `[simulation] router = "ioq"` selects (the engine
    /// refuses to build a model with the other model's parameters).
    const OUTPUT_QUEUED: bool;

    /// The empty routers of `net`. `cut_through` has bit `vc` set for the VCs allocated as in
    /// virtual cut-through (docs/simulator.md, "VC allocation"). Only the routers
    /// `owns_router` says the engine runs need their state set up (a partition's, in the
    /// parallel engine): the others' entries may stay all-zero (tables.rs).
    fn build(
        net: &Network,
        ports: &Ports,
        params: &SimParams,
        cut_through: u64,
        owns_router: &dyn Fn(usize) -> bool,
    ) -> Self;

    /// A credit returns to router credit counter `counter` (an output VC, numbered
    /// `global port * num_vcs + vc` as in `Network::chan_credit_base`).
    fn credit_arrived(&mut self, counter: usize);

    /// Starts loading what `flit_arrived` will touch for global input VC `input_vc` (a hint:
    /// the arrivals of a cycle are known in advance).
    fn prefetch_input(&self, input_vc: usize);

    /// Starts loading what `run_router` will touch for `router`, `ahead` routers before it
    /// runs (3, 2, then 1: each step reads what the one before loaded). A hint: the default
    /// does nothing.
    #[inline(always)]
    fn prefetch_router(engine: &Engine<'_, Self>, router: usize, ahead: usize) {
        let _ = (engine, router, ahead);
    }

    /// Flit `flit` arrives on VC `vc` at the router input `dest`.
    fn flit_arrived(engine: &mut Engine<'_, Self>, dest: ChannelDestination, vc: u32, flit: Flit);

    /// Every flit due this cycle has arrived. What a model does here must not depend on the
    /// order of the arrivals: they come in the order they were sent, which follows the order
    /// routers were visited in earlier cycles, and the parallel engine visits them in another
    /// order (and a partition receives a cut channel's flits in a batch after each window).
    /// The default does nothing.
    fn arrivals_done(engine: &mut Engine<'_, Self>) {
        let _ = engine;
    }

    /// One cycle of router `router` (visited while `holds_flits`): the model's stages.
    fn run_router(engine: &mut Engine<'_, Self>, router: usize);

    /// Route computation for the head at the front of local input VC `local_input_vc`.
    fn compute_route(engine: &mut Engine<'_, Self>, at: &RouterLayout, local_input_vc: usize);

    /// VC allocation among the router's requests; returns whether a granted input VC may
    /// already request the switch this cycle.
    fn allocate_vcs(engine: &mut Engine<'_, Self>, at: &RouterLayout) -> bool;

    /// Switch allocation among the router's requests, and traversal of the winners.
    fn allocate_switch(engine: &mut Engine<'_, Self>, at: &RouterLayout);

    /// Switch traversal of the front flit of local input VC `local_input_vc`.
    fn traverse(engine: &mut Engine<'_, Self>, at: &RouterLayout, local_input_vc: usize);

    /// Whether router `router` still has work (stays on the active list).
    fn holds_flits(&self, router: usize) -> bool;

    /// Flits held in the routers.
    fn buffered_flits(&self) -> u64;

    /// Flits held by global input VC `input_vc` (its share of the credit protocol).
    fn input_vc_len(&self, input_vc: usize) -> u32;

    /// The value of router credit counter `counter`.
    fn credits(&self, counter: usize) -> u32;

    /// The VCs holding flits that can never move again, if any (see
    /// `Engine::find_deadlock`).
    fn find_deadlock(engine: &Engine<'_, Self>) -> Option<DeadlockReport>;

    /// A partition's share of `find_deadlock` in the parallel engine: every node's liveness,
    /// wait edges and flits, exact for the nodes of the routers `owns_router` accepts
    /// (`Engine::join_probes` puts the shares together).
    fn probe_part(
        engine: &Engine<'_, Self>,
        owns_router: &dyn Fn(usize) -> bool,
    ) -> super::diagnostics::ProbePart;

    /// The model's own invariants (the engine checks flit conservation and the credit
    /// protocol); `Err` describes the first violation.
    fn check_state(engine: &Engine<'_, Self>) -> Result<(), String>;
}
