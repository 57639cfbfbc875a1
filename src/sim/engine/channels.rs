//! Channels: flits and credits in flight, in timing wheels indexed by arrival cycle, and
//! where each channel delivers. Every router model sends through them the same way.

use super::*;

/// A flit: its packet's slot and its position in the packet (0 = head), with the tail marked
/// so that moving a flit never has to look its packet up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Zeroable)]
pub struct Flit {
    pub(super) packet: u32,
    pub(super) index_and_tail: u32,
}

/// `n` empty flit slots (`Flit::new(0, 0, false)`) in zero-filled memory
/// (`tables::zeroed`): pages are mapped only when first written, so buffer slots never
/// used cost no memory: the deep end of every VC at moderate load, and every other
/// partition's VCs in a partition's engine (docs/benchmarks.md: at 16,512 nodes, 618 -> 237
/// MB on one partition and 1.10 GB -> 352 MB on two). `vec![x; n]` would write every slot.
pub(super) fn empty_flit_slots(n: usize) -> Vec<Flit> {
    super::tables::zeroed(n)
}

const TAIL: u32 = 1 << 31;

impl Flit {
    pub(super) fn new(packet: u32, index: u32, tail: bool) -> Self {
        Flit {
            packet,
            index_and_tail: index | if tail { TAIL } else { 0 },
        }
    }

    /// Position in the packet (0 = head).
    pub(super) fn index(self) -> u32 {
        self.index_and_tail & !TAIL
    }

    pub(super) fn is_tail(self) -> bool {
        self.index_and_tail & TAIL != 0
    }
}

/// A flit on a channel, arriving on VC `vc`.
#[derive(Clone, Copy, Debug)]
pub(super) struct FlitEvent {
    pub(super) channel: u32,
    pub(super) vc: u32,
    pub(super) flit: Flit,
}

/// Where a channel delivers: a router's input port (`router`, the global index of the
/// port's VC 0 and its local number) or, with `router == NONE`, a terminal.
#[derive(Clone, Copy, Debug)]
pub struct ChannelDestination {
    pub(super) router: u32,
    /// The port's first global input VC; for a terminal, the terminal (see `terminal`).
    pub(super) first_vc: u32,
    pub(super) first_local_vc: u32,
}

impl ChannelDestination {
    /// The terminal a channel with `router == NONE` delivers to.
    pub(super) fn terminal(self) -> u32 {
        self.first_vc
    }
}

/// The timing wheels: for each of the next `wheel_mask + 1` cycles (a power of two longer
/// than any delay, the slots are reused cyclically) the flits and the credits that arrive
/// then. A credit is its counter's number (see `Network::chan_credit_base`): below
/// `router_counters` a router's (the router model's), then the NICs'.
///
/// Each cycle has two lists of each: flits towards routers ([`Channels::to_routers`]) and
/// towards terminals ([`Channels::to_terminals`]), credits for routers' counters and for
/// the NICs'. Which list an item joins is computed, not branched on, when it is sent, and
/// the cycle then runs each list in its own loop: whether the next arrival is an ejection,
/// or the next credit a NIC's, is data the branch predictor cannot learn (two mispredicted
/// branches per hop on the mesh bench otherwise). Within a list the order is the order of
/// sending; results do not depend on the order between lists (nor, within one, on more
/// than the parallel engine keeps: docs/simulator.md).
pub(super) struct Channels {
    pub(super) wheel_mask: u64,
    pub(super) router_counters: usize,
    /// Per cycle slot `s`, at `2 * s + k`: `k = 0` towards routers, `k = 1` towards terminals.
    pub(super) flits: super::tables::HotTable<Vec<FlitEvent>>,
    /// Per cycle slot `s`, at `2 * s + k`: `k = 0` routers' counters, `k = 1` the NICs'.
    pub(super) credits: super::tables::HotTable<Vec<u32>>,
    /// Per channel. Bounds-checked, unlike the hot tables (`tables::HotTable`): a flit sent
    /// out of an unconnected port (channel `NONE`) stops the run here.
    pub(super) destinations: Vec<ChannelDestination>,
    /// In a partition of the parallel engine, who owns what and the outboxes (partition.rs).
    pub(super) cut: Option<Box<super::partition::CutChannels>>,
}

impl Channels {
    pub(super) fn new(net: &Network, params: &SimParams) -> Self {
        let horizon = u64::from(
            params.sw_alloc_delay + params.st_delay + params.credit_delay + params.injection_delay,
        ) + u64::from(net.max_latency)
            + params.ioq.as_ref().map_or(0, |ioq| {
                u64::from(ioq.input_latency)
                    + u64::from(ioq.output_latency)
                    + u64::from(net.chan_period.iter().copied().max().unwrap_or(1))
            })
            + 2;
        let wheel_len = horizon.next_power_of_two();
        let num_vcs = net.num_vcs as u32;
        let destinations = net
            .chan_sink
            .iter()
            .map(|&sink| match sink {
                Sink::Router(port) => {
                    let r = net.port_router[port as usize];
                    ChannelDestination {
                        router: r,
                        first_vc: port * num_vcs,
                        first_local_vc: (port - net.port_base[r as usize]) * num_vcs,
                    }
                }
                Sink::Terminal(t) => ChannelDestination {
                    router: NONE,
                    first_vc: t,
                    first_local_vc: 0,
                },
            })
            .collect();
        Channels {
            wheel_mask: wheel_len - 1,
            router_counters: net.num_ports() * net.num_vcs,
            flits: vec![Vec::new(); 2 * wheel_len as usize].into(),
            credits: vec![Vec::new(); 2 * wheel_len as usize].into(),
            destinations,
            cut: None,
        }
    }

    /// The wheel slot of `cycle`.
    #[inline(always)]
    pub(super) fn slot(&self, cycle: u64) -> usize {
        (cycle & self.wheel_mask) as usize
    }

    /// Where the flits arriving at routers in wheel slot `slot` are listed.
    #[inline(always)]
    pub(super) fn to_routers(slot: usize) -> usize {
        2 * slot
    }

    /// Where the flits arriving at terminals in wheel slot `slot` are listed.
    #[inline(always)]
    pub(super) fn to_terminals(slot: usize) -> usize {
        2 * slot + 1
    }

    /// The partition side of a partition's engine (flags that cross a cut exist only there).
    fn cut_mut(&mut self) -> &mut super::partition::CutChannels {
        self.cut
            .as_mut()
            .expect("only a partition's ports cross a cut")
    }

    /// Puts a flit on its channel, arriving at cycle `arrival`; `crosses_cut` says whether
    /// the channel's sink belongs to another partition (`PortLinks::out_crosses_cut`),
    /// `to_terminal` whether it is a terminal (`PortLinks::ejection`; a terminal belongs to
    /// its router's partition, so never both).
    #[inline(always)]
    pub(super) fn send_flit(
        &mut self,
        arrival: u64,
        event: FlitEvent,
        crosses_cut: bool,
        to_terminal: bool,
    ) {
        if crosses_cut {
            let cut = self.cut_mut();
            let to = cut.flit_part[event.channel as usize];
            cut.flits_out[to as usize].push((arrival, event));
            return;
        }
        debug_assert!(
            self.cut
                .as_ref()
                .is_none_or(|cut| cut.flit_part[event.channel as usize] == cut.own),
            "a flit crossing the cut was not marked"
        );
        debug_assert_eq!(
            to_terminal,
            self.destinations[event.channel as usize].router == NONE,
            "a flit's list is where its channel delivers"
        );
        let list = 2 * self.slot(arrival) + usize::from(to_terminal);
        self.flits[list].push(event);
    }

    /// Sends a credit for counter `counter`, arriving at cycle `arrival`; `crosses_cut` says
    /// whether the counter belongs to another partition (`PortLinks::credit_crosses_cut`).
    #[inline(always)]
    pub(super) fn send_credit(&mut self, arrival: u64, counter: u32, crosses_cut: bool) {
        if crosses_cut {
            let cut = self.cut_mut();
            let to = cut.credit_part[counter as usize];
            cut.credits_out[to as usize].push((arrival, counter));
            return;
        }
        debug_assert!(
            self.cut
                .as_ref()
                .is_none_or(|cut| cut.credit_part[counter as usize] == cut.own),
            "a credit crossing the cut was not marked"
        );
        self.push_credit(arrival, counter);
    }

    /// Lists a credit for counter `counter` (of this engine) arriving at cycle `arrival`.
    #[inline(always)]
    pub(super) fn push_credit(&mut self, arrival: u64, counter: u32) {
        let to_nic = counter as usize >= self.router_counters;
        let list = 2 * self.slot(arrival) + usize::from(to_nic);
        self.credits[list].push(counter);
    }

    /// Flits on channels (for flit conservation).
    pub(super) fn flits_in_flight(&self) -> u64 {
        self.flits.iter().map(|w| w.len() as u64).sum()
    }
}
