//! Flat, index-based description of the network the engine runs on, derived once from the
//! topology: global port numbers, what feeds each input port and where each output port leads,
//! channel latencies and periods. Everything the hot loop needs is a `u32` array lookup.

use crate::topology::{Endpoint, Topology};

pub(crate) const NONE: u32 = u32::MAX;

/// Where a channel delivers its flits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// Global port index of a router input port.
    Router(u32),
    /// A terminal (ejection).
    Terminal(u32),
}

#[derive(Clone, Debug)]
pub struct Network {
    pub num_vcs: usize,
    /// First global port of each router; `port_base[r + 1] - port_base[r]` ports.
    pub port_base: Vec<u32>,
    /// Router of each global port.
    pub port_router: Vec<u32>,
    /// Channel leaving each global port (`NONE` if unconnected).
    pub out_chan: Vec<u32>,
    /// Whether the global port's output leads to a terminal.
    pub out_is_ejection: Vec<bool>,
    /// Channel feeding each global port's input (`NONE` if unconnected).
    pub in_chan: Vec<u32>,
    /// Per channel: where flits go.
    pub chan_sink: Vec<Sink>,
    /// Per channel: the credit counter (index into the credit array) the channel's sender
    /// owns, for VC 0 (add the VC). Router senders: `gp * V`; terminal senders: after all
    /// router counters.
    pub chan_credit_base: Vec<u32>,
    pub chan_latency: Vec<u32>,
    /// Cycles between consecutive flits (1 / bandwidth, rounded up).
    pub chan_period: Vec<u32>,
    /// Per terminal: router, port, injection channel, and its credit counter base.
    pub term_router: Vec<u32>,
    pub term_inj_chan: Vec<u32>,
    pub term_credit_base: Vec<u32>,
    pub max_latency: u32,
}

impl Network {
    pub fn new(topo: &Topology, num_vcs: usize) -> Self {
        let v = num_vcs as u32;
        let mut port_base = Vec::with_capacity(topo.num_routers() + 1);
        let mut port_router = Vec::new();
        let mut total = 0u32;
        for (r, router) in topo.routers.iter().enumerate() {
            port_base.push(total);
            total += router.ports.len() as u32;
            port_router.extend(std::iter::repeat_n(r as u32, router.ports.len()));
        }
        port_base.push(total);
        let gp = |router: usize, port: usize| port_base[router] + port as u32;
        let num_chan = 2 * topo.links.len();
        let mut out_chan = vec![NONE; total as usize];
        let mut out_is_ejection = vec![false; total as usize];
        let mut in_chan = vec![NONE; total as usize];
        let mut chan_sink = Vec::with_capacity(num_chan);
        let mut chan_credit_base = Vec::with_capacity(num_chan);
        let mut chan_latency = Vec::with_capacity(num_chan);
        let mut chan_period = Vec::with_capacity(num_chan);
        let router_counters = total * v;
        for c in 0..num_chan {
            let (src, dst) = topo.channel_ends(c);
            let link = &topo.links[c / 2];
            chan_latency.push(link.params.latency.max(1));
            chan_period.push((1.0 / link.params.bandwidth).ceil().max(1.0) as u32);
            match src {
                Endpoint::Router { router, port } => {
                    let g = gp(router, port);
                    out_chan[g as usize] = c as u32;
                    out_is_ejection[g as usize] = matches!(dst, Endpoint::Terminal { .. });
                    chan_credit_base.push(g * v);
                }
                Endpoint::Terminal { terminal } => {
                    chan_credit_base.push(router_counters + terminal as u32 * v);
                }
            }
            match dst {
                Endpoint::Router { router, port } => {
                    let g = gp(router, port);
                    in_chan[g as usize] = c as u32;
                    chan_sink.push(Sink::Router(g));
                }
                Endpoint::Terminal { terminal } => chan_sink.push(Sink::Terminal(terminal as u32)),
            }
        }
        let mut term_inj_chan = Vec::with_capacity(topo.num_terminals());
        let mut term_router = Vec::with_capacity(topo.num_terminals());
        let mut term_credit_base = Vec::with_capacity(topo.num_terminals());
        for (t, term) in topo.terminals.iter().enumerate() {
            let link = &topo.links[term.link];
            let dir = usize::from(link.ends[0] != Endpoint::Terminal { terminal: t });
            term_inj_chan.push((2 * term.link + dir) as u32);
            term_router.push(term.router as u32);
            term_credit_base.push(router_counters + t as u32 * v);
        }
        let max_latency = chan_latency.iter().copied().max().unwrap_or(1);
        Network {
            num_vcs,
            port_base,
            port_router,
            out_chan,
            out_is_ejection,
            in_chan,
            chan_sink,
            chan_credit_base,
            chan_latency,
            chan_period,
            term_router,
            term_inj_chan,
            term_credit_base,
            max_latency,
        }
    }

    pub fn num_routers(&self) -> usize {
        self.port_base.len() - 1
    }

    pub(crate) fn num_ports(&self) -> usize {
        *self.port_base.last().expect("non-empty") as usize
    }

    pub(crate) fn ports_of(&self, router: usize) -> usize {
        (self.port_base[router + 1] - self.port_base[router]) as usize
    }

    /// The global port number of `port` of `router`, for a congestion view's question
    /// `what` (routing functions may name any router): a port past the router's would
    /// silently read the next router's state, so it stops the run instead.
    #[inline]
    pub(crate) fn view_port(&self, what: &str, router: usize, port: usize) -> usize {
        match self.global_port(router, port) {
            Some(global_port) => global_port,
            None => view_out_of_range(what, router, port, None, self),
        }
    }

    /// The global VC number of VC `vc` of `port` of `router`, checked as [`view_port`].
    ///
    /// [`view_port`]: Network::view_port
    #[inline]
    pub(crate) fn view_vc(&self, what: &str, router: usize, port: usize, vc: usize) -> usize {
        match self.global_port(router, port) {
            Some(global_port) if vc < self.num_vcs => global_port * self.num_vcs + vc,
            _ => view_out_of_range(what, router, port, Some(vc), self),
        }
    }

    #[inline]
    fn global_port(&self, router: usize, port: usize) -> Option<usize> {
        let first = *self.port_base.get(router)? as usize;
        let end = *self.port_base.get(router + 1)? as usize;
        (port < end - first).then_some(first + port)
    }
}

#[cold]
#[inline(never)]
fn view_out_of_range(
    what: &str,
    router: usize,
    port: usize,
    vc: Option<usize>,
    net: &Network,
) -> ! {
    let ports = if router < net.num_routers() {
        format!("router {router} has {} ports", net.ports_of(router))
    } else {
        format!("the network has {} routers", net.num_routers())
    };
    let vc = vc.map_or(String::new(), |vc| format!(" VC {vc}"));
    panic!(
        "a routing function asked the congestion view for {what} of router {router} port \
         {port}{vc}, past the network ({ports} of {} VCs)",
        net.num_vcs
    )
}
