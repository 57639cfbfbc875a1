//! Ports: where each router's ports and VCs sit in the global numbering, the local numbering
//! inside a router, and what each port's channels take (fixed for the run, whatever the
//! router model).

use super::*;

/// Where a router's ports and VCs sit in the global numbering.
#[derive(Clone, Copy, Debug)]
pub struct RouterLayout {
    pub(super) router: usize,
    /// First global input (and output) VC.
    pub(super) first_vc: usize,
    /// First global port, and number of ports.
    pub(super) first_port: usize,
    pub(super) num_ports: u32,
    /// Local VC numbers (`num_ports * num_vcs`).
    pub(super) num_local_vcs: u32,
}

/// What switch traversal needs to know about a global port's channels, in one record.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PortLinks {
    /// The output channel (`NONE` if unconnected), whether it leads to a terminal, the
    /// cycles from switch allocation to arrival and between flits.
    pub(super) out_channel: u32,
    pub(super) ejection: bool,
    pub(super) out_delay: u32,
    pub(super) out_period: u32,
    /// Where a credit returned by this port's input goes (the sender's counter of VC 0; add
    /// the VC) and how many cycles it takes.
    pub(super) credit_counter: u32,
    pub(super) credit_delay: u32,
    /// In a partition's engine, whether the output channel's sink and the returned credit's
    /// counter belong to another partition (set by `mark_cut`). Kept here, beside what
    /// traversal already reads, because looking the partition up by channel or counter
    /// missed the cache on every hop of large networks (15% of the router pass at 16,512
    /// nodes); the partition tables are read only for flits and credits that do cross.
    pub(super) out_crosses_cut: bool,
    pub(super) credit_crosses_cut: bool,
}

/// The fixed description of the routers' ports (see the module documentation).
pub struct Ports {
    /// Per router.
    pub(super) routers: super::tables::HotTable<RouterLayout>,
    /// Per local VC number (`port * num_vcs + vc`, up to the largest router's): its port
    /// and VC, so that the hot paths never divide by the runtime VC count.
    pub(super) local_port: super::tables::HotTable<u32>,
    pub(super) local_vc: super::tables::HotTable<u32>,
    /// Per global port.
    pub(super) links: super::tables::HotTable<PortLinks>,
    /// The most ports of any router.
    pub(super) max_ports: usize,
}

impl Ports {
    /// Where the head at local input VC `local_input_vc` of router `at` stands, as routing
    /// functions see it.
    #[inline(always)]
    pub(super) fn route_context<'c>(
        &self,
        at: &RouterLayout,
        local_input_vc: usize,
        congestion: &'c dyn crate::routing::CongestionView,
    ) -> RouteContext<'c> {
        RouteContext {
            router: at.router,
            in_port: self.local_port[local_input_vc] as usize,
            in_vc: self.local_vc[local_input_vc] as usize,
            congestion,
        }
    }

    pub(super) fn new(net: &Network, params: &SimParams) -> Self {
        let num_vcs = net.num_vcs;
        let max_ports = (0..net.num_routers())
            .map(|r| net.ports_of(r))
            .max()
            .unwrap_or(0);
        let locals = max_ports * num_vcs;
        let mut links = vec![PortLinks::default(); net.num_ports()];
        let router_counters = net.num_ports() * num_vcs;
        for (port, link) in links.iter_mut().enumerate() {
            let (in_channel, out_channel) = (net.in_chan[port], net.out_chan[port]);
            if in_channel != NONE {
                link.credit_counter = net.chan_credit_base[in_channel as usize];
                let latency = net.chan_latency[in_channel as usize];
                link.credit_delay = match &params.ioq {
                    None => params.credit_delay + latency,
                    // Out of this router, over the link, into the sender (a NIC has no input
                    // latency): docs/simulator.md, "The input-output-queued router".
                    Some(ioq) => {
                        let from_router = (link.credit_counter as usize) < router_counters;
                        ioq.output_latency
                            + latency
                            + if from_router { ioq.input_latency } else { 0 }
                    }
                };
            }
            link.out_channel = out_channel;
            link.ejection = net.out_is_ejection[port];
            if out_channel != NONE {
                let (latency, period) = (
                    net.chan_latency[out_channel as usize],
                    net.chan_period[out_channel as usize],
                );
                link.out_delay = match &params.ioq {
                    None => params.sw_alloc_delay + params.st_delay + latency,
                    // Serialised whole (one period), then the output latency, the link and
                    // the next router's input latency (none at a terminal).
                    Some(ioq) => {
                        period
                            + ioq.output_latency
                            + latency
                            + if link.ejection { 0 } else { ioq.input_latency }
                    }
                };
                link.out_period = period;
            }
        }
        Ports {
            routers: (0..net.num_routers())
                .map(|r| RouterLayout {
                    router: r,
                    first_vc: net.port_base[r] as usize * num_vcs,
                    first_port: net.port_base[r] as usize,
                    num_ports: net.ports_of(r) as u32,
                    num_local_vcs: (net.ports_of(r) * num_vcs) as u32,
                })
                .collect(),
            local_port: Vec::from_iter((0..locals).map(|l| (l / num_vcs) as u32)).into(),
            local_vc: Vec::from_iter((0..locals).map(|l| (l % num_vcs) as u32)).into(),
            links: links.into(),
            max_ports,
        }
    }

    /// Marks the ports whose output channel or returned credits cross to another partition.
    pub(super) fn mark_cut(&mut self, net: &Network, cut: &super::partition::CutChannels) {
        for (port, link) in self.links.iter_mut().enumerate() {
            link.out_crosses_cut =
                link.out_channel != NONE && cut.flit_part[link.out_channel as usize] != cut.own;
            link.credit_crosses_cut = net.in_chan[port] != NONE
                && cut.credit_part[link.credit_counter as usize] != cut.own;
        }
    }

    /// Bit-set words per router over local VC numbers.
    pub(super) fn words_per_router(&self) -> usize {
        self.local_port.len().div_ceil(64).max(1)
    }
}
