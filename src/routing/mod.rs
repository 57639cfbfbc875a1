//! Routing: the [`RoutingFunction`] trait the simulator's routers call, and the classical
//! algorithms. Learned and table-driven routing (later issues) implement the same trait without
//! touching the router core.
//!
//! A routing function is asked once per packet and router, when the packet's head flit reaches
//! the front of an input virtual channel. It returns candidate outputs (a port and the VCs the
//! packet may take there) in order of preference; the VC allocator grants the first candidate
//! with a free VC. Each algorithm states how many VCs per channel it needs
//! ([`RoutingFunction::min_vcs`]); the simulator rejects a configuration with fewer.

use rand_chacha::ChaCha8Rng;

pub type RouteRng = ChaCha8Rng;

/// The ejection port of every terminal: what every routing function offers once a packet has
/// reached its destination router.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ejection {
    ports: Vec<u16>,
}

impl Ejection {
    pub(crate) fn new(topo: &crate::topology::Topology) -> Self {
        Ejection {
            ports: topo.terminals.iter().map(|t| t.port as u16).collect(),
        }
    }

    /// At the destination router, appends the destination terminal's port on every VC and
    /// returns true; elsewhere does nothing and returns false.
    pub(crate) fn at_destination(
        &self,
        router: usize,
        pkt: &PacketInfo,
        num_vcs: usize,
        out: &mut Vec<Candidate>,
    ) -> bool {
        if router != pkt.dst_router as usize {
            return false;
        }
        out.push(Candidate {
            port: self.ports[pkt.dst_terminal as usize],
            vcs: VcRange::new(0, num_vcs),
        });
        true
    }
}

/// Sentinel for "no router" in [`RouteState::intermediate`].
pub(crate) const NO_ROUTER: u32 = u32::MAX;

/// A contiguous set of virtual channels `start..end` on one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Zeroable)]
pub struct VcRange {
    pub start: u8,
    pub end: u8,
}

impl VcRange {
    pub const fn new(start: usize, end: usize) -> Self {
        VcRange {
            start: start as u8,
            end: end as u8,
        }
    }

    pub const fn single(vc: usize) -> Self {
        VcRange::new(vc, vc + 1)
    }

    pub fn contains(self, vc: usize) -> bool {
        (self.start as usize..self.end as usize).contains(&vc)
    }

    pub fn iter(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn is_empty(self) -> bool {
        self.start >= self.end
    }
}

/// The bit set of VCs `range` (below 64).
pub(crate) fn vc_mask(range: std::ops::Range<usize>) -> u64 {
    range.filter(|&vc| vc < 64).fold(0, |m, vc| m | 1 << vc)
}

/// One output the packet may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Zeroable)]
pub struct Candidate {
    pub port: u16,
    pub vcs: VcRange,
}

/// What `on_forward` does when all it does is count the grants through some ports in the
/// packet's `flags` ([`RoutingFunction::forward_counter`]; a dragonfly's global hops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardCounter {
    /// A grant through this port or a higher-numbered one counts.
    pub first_port: u16,
    /// The count is `flags >> shift`, saturating at `u8::MAX >> shift`; the bits below
    /// `shift` are left as they are. At most 7.
    pub shift: u8,
}

impl ForwardCounter {
    /// `flags` after a grant through `port`, without a branch.
    #[inline(always)]
    pub fn count(self, flags: u8, port: u16) -> u8 {
        let below = flags & ((1u8 << self.shift) - 1);
        let count = (flags >> self.shift)
            .saturating_add(u8::from(port >= self.first_port))
            .min(u8::MAX >> self.shift);
        below | (count << self.shift)
    }
}

/// What a routing function knows about a packet (read-only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketInfo {
    pub id: u32,
    pub src_terminal: u32,
    pub dst_terminal: u32,
    pub src_router: u32,
    pub dst_router: u32,
    /// Flits in the packet.
    pub size: u32,
    /// Traffic class.
    pub class: u8,
}

/// Per-packet routing state that travels with the packet; the routing function owns its
/// meaning (Valiant's intermediate router and phase, dateline flags, hop counts...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteState {
    /// Router hops taken so far (incremented by the simulator after each router).
    pub hops: u16,
    /// Intermediate router for non-minimal algorithms, or [`NO_ROUTER`].
    pub intermediate: u32,
    /// Algorithm-defined phase (e.g. 0 = towards the intermediate, 1 = towards the destination).
    pub phase: u8,
    /// Algorithm-defined bit flags (e.g. dateline crossed, escape network taken).
    pub flags: u8,
    /// Algorithm-defined extra word.
    pub aux: u32,
}

impl Default for RouteState {
    fn default() -> Self {
        RouteState {
            hops: 0,
            intermediate: NO_ROUTER,
            phase: 0,
            flags: 0,
            aux: 0,
        }
    }
}

/// Read-only congestion state around a router, for adaptive decisions.
pub trait CongestionView {
    /// Virtual channels per port.
    fn num_vcs(&self) -> usize;
    /// Buffer depth of every input VC, in flits.
    fn vc_depth(&self) -> u32;
    /// Free slots (credits) the output VC `vc` of `port` of `router` has downstream.
    fn credits(&self, router: usize, port: usize, vc: usize) -> u32;
    /// Whether that output VC is held by a packet.
    fn output_vc_busy(&self, router: usize, port: usize, vc: usize) -> bool;
    /// Flits waiting in this router's input buffers that are routed to `port` (the output
    /// queue of an input-queued router).
    fn output_queue(&self, router: usize, port: usize) -> u32;
    /// Flits in the output buffer of VC `vc` of `port` of `router` (an input-output-queued
    /// router's; 0 for a router without output buffers, whose `output_queue` counts flits
    /// still in its input buffers).
    fn output_queue_vc(&self, _router: usize, _port: usize, _vc: usize) -> u32 {
        0
    }
    /// Flits in the input buffer `vc` of `port` of `router` (any router: neighbours too).
    fn input_occupancy(&self, router: usize, port: usize, vc: usize) -> u32;
}

/// Where the packet is when it is routed.
pub struct RouteContext<'a> {
    pub router: usize,
    pub in_port: usize,
    pub in_vc: usize,
    pub congestion: &'a dyn CongestionView,
}

/// The interface every routing algorithm implements.
pub trait RoutingFunction: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> String;

    /// Virtual channels per channel this algorithm needs.
    fn min_vcs(&self) -> usize;

    /// Called once when the packet is created (e.g. to draw a Valiant intermediate).
    fn init_packet(&self, _pkt: &PacketInfo, _state: &mut RouteState, _rng: &mut RouteRng) {}

    /// The VCs the packet may use on the terminal's injection channel.
    fn injection_vcs(&self, _pkt: &PacketInfo, _state: &RouteState, num_vcs: usize) -> VcRange {
        VcRange::new(0, num_vcs)
    }

    /// VCs (bit `vc`) on which a packet must never wait behind another packet while it holds
    /// VCs upstream: the simulator grants an output VC of this set only when the downstream
    /// buffer can take the whole packet, or is empty (a packet larger than the buffer), even
    /// under wormhole switching. Duato's condition for wormhole needs this on the VCs whose
    /// own channel dependencies may be cyclic (adaptive, table), because a packet committed
    /// to a full buffer behind another packet can no longer reach the escape VCs
    /// (docs/routing.md).
    fn cut_through_vcs(&self, _num_vcs: usize) -> u64 {
        0
    }

    /// Why this configuration is not guaranteed deadlock-free, if it is not (the simulator
    /// warns before it runs and reports a deadlock when one happens).
    fn deadlock_caveat(&self) -> Option<String> {
        None
    }

    /// Appends the candidate outputs for the packet at `ctx.router`, best first. At the
    /// destination router the candidate is the port of the destination terminal.
    fn route(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    );

    /// Called when the VC allocator grants `vc` on `chosen`, so that state that depends on
    /// the choice (phase changes, dateline flags) can be updated.
    fn on_forward(
        &self,
        _ctx: &RouteContext,
        _pkt: &PacketInfo,
        _chosen: Candidate,
        _vc: usize,
        _state: &mut RouteState,
    ) {
    }

    /// Whether `on_forward` can change anything: `false` lets the simulator skip the call on
    /// every VC grant (a mesh's DOR records nothing).
    fn updates_on_forward(&self) -> bool {
        true
    }

    /// `Some(counter)` when `on_forward` does nothing but [`ForwardCounter::count`] the grant
    /// in `state.flags`: the simulator then counts it itself instead of calling `on_forward`
    /// on every VC grant (the dragonflies' algorithms, which count global hops).
    fn forward_counter(&self) -> Option<ForwardCounter> {
        None
    }

    /// `Some(mask)` when `route`, at a router other than the packet's destination router and
    /// once `init_packet` has run, gives one candidate that depends on nothing but the router,
    /// the destination router and whether any `mask` bit of the state's `flags` is set (its
    /// route class), and at the destination router one that depends on the destination
    /// terminal alone: it writes no routing state, draws no random number and reads neither
    /// the congestion view nor the input it came from. The simulator may then route each
    /// (router, destination router, class) and each destination terminal once and reuse the
    /// candidate: a mesh's DOR (mask 0, one class), a dragonfly's MIN (whether a global hop
    /// was taken, its VC class).
    fn routes_by_destination(&self) -> Option<u8> {
        None
    }

    /// Algorithms that learn while the network runs return a fresh per-run session here
    /// (see [`session`]); its randomness (initial weights, exploration) flows from `seed`.
    fn learning_session(&self, _seed: u64) -> Option<Box<dyn RoutingSession>> {
        None
    }
}

pub mod cartesian;
pub mod config;
pub mod deadlock;
pub mod dragonfly;
pub mod layered;
pub mod paths;
pub mod session;
pub mod table;
pub mod updown;

pub use config::RoutingConfig;
pub use session::{CONTROL_CLASS, ControlPacket, RoutingSession, SessionHooks};
