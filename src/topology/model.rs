//! The topology model the simulator runs on: routers with numbered ports, terminals attached to
//! router ports, and bidirectional links made of two unidirectional channels.
//!
//! Port numbering is part of the contract with routing functions and is documented per generator
//! in `docs/formats.md`. The general rule: a router's terminal ports come first (0..c-1), then
//! its network ports in the order its generator defines. A port may exist unconnected (a mesh
//! edge, an unused ExaNeSt link slot) so that numbering stays regular.

use serde::{Deserialize, Serialize};

use super::graph::RouterGraph;
use super::symmetry::Symmetry;
use crate::error::{Error, Result};

pub(crate) type RouterId = usize;
pub(crate) type TerminalId = usize;
pub(crate) type LinkId = usize;
pub(crate) type PortId = usize;

/// What a link connects and how it is usually built (short copper, long optics, NIC cable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    Local,
    Global,
    Terminal,
}

impl LinkKind {
    pub fn name(self) -> &'static str {
        match self {
            LinkKind::Local => "local",
            LinkKind::Global => "global",
            LinkKind::Terminal => "terminal",
        }
    }
}

/// One end of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Router { router: RouterId, port: PortId },
    Terminal { terminal: TerminalId },
}

/// Per-channel parameters; both channels of a link share them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelParams {
    /// Cycles for a flit to cross the channel.
    pub latency: u32,
    /// Flits per cycle the channel accepts (1.0 = one flit every cycle).
    pub bandwidth: f64,
}

impl Default for ChannelParams {
    fn default() -> Self {
        ChannelParams {
            latency: 1,
            bandwidth: 1.0,
        }
    }
}

/// A bidirectional link: channel 0 runs `ends[0] -> ends[1]`, channel 1 the other way.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub ends: [Endpoint; 2],
    pub kind: LinkKind,
    pub params: ChannelParams,
}

/// A unidirectional channel, identified as `2 * link + direction`.
pub(crate) type ChannelId = usize;

#[derive(Clone, Debug, PartialEq)]
pub struct Router {
    /// `ports[p]` is the link on port `p`, or `None` for an unconnected port.
    pub ports: Vec<Option<LinkId>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Terminal {
    pub router: RouterId,
    pub port: PortId,
    pub link: LinkId,
}

/// What built the topology, with the parameters routing functions need (coordinates, groups).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Shape {
    /// Mesh or torus; router id = sum of coord[d] * prod(dims[..d]) (dimension 0 varies fastest).
    Cartesian {
        dims: Vec<usize>,
        wrap: bool,
    },
    Dragonfly {
        p: usize,
        a: usize,
        h: usize,
        g: usize,
        arrangement: String,
    },
    Exanest {
        r: usize,
        n: usize,
        m: usize,
        genome: Vec<usize>,
    },
    Jellyfish {
        degree: usize,
        seed: u64,
    },
    Complete,
    Imported,
}

#[derive(Clone, Debug)]
pub struct Topology {
    pub name: String,
    pub shape: Shape,
    pub routers: Vec<Router>,
    pub terminals: Vec<Terminal>,
    pub links: Vec<Link>,
    /// Automorphisms the generator guarantees; verified before metrics rely on them.
    pub symmetry: Option<Symmetry>,
}

impl Topology {
    pub fn num_routers(&self) -> usize {
        self.routers.len()
    }

    pub fn num_terminals(&self) -> usize {
        self.terminals.len()
    }

    /// Links between two routers (terminal links excluded).
    pub fn num_network_links(&self) -> usize {
        self.links
            .iter()
            .filter(|l| l.kind != LinkKind::Terminal)
            .count()
    }

    pub fn links_of_kind(&self, kind: LinkKind) -> usize {
        self.links.iter().filter(|l| l.kind == kind).count()
    }

    /// The endpoint on the other side of `router`'s `port`, if connected.
    pub fn peer(&self, router: RouterId, port: PortId) -> Option<Endpoint> {
        let link = self.routers[router].ports.get(port).copied().flatten()?;
        let l = &self.links[link];
        let me = Endpoint::Router { router, port };
        Some(if l.ends[0] == me {
            l.ends[1]
        } else {
            l.ends[0]
        })
    }

    /// The channel leaving `router` through `port`.
    pub(crate) fn out_channel(&self, router: RouterId, port: PortId) -> Option<ChannelId> {
        let link = self.routers[router].ports.get(port).copied().flatten()?;
        let dir = usize::from(self.links[link].ends[0] != Endpoint::Router { router, port });
        Some(2 * link + dir)
    }

    /// Source and destination endpoints of a channel.
    pub(crate) fn channel_ends(&self, channel: ChannelId) -> (Endpoint, Endpoint) {
        let l = &self.links[channel / 2];
        if channel % 2 == 0 {
            (l.ends[0], l.ends[1])
        } else {
            (l.ends[1], l.ends[0])
        }
    }

    /// Number of connected network (router-to-router) ports of each router.
    #[cfg(test)]
    pub(crate) fn network_degrees(&self) -> Vec<usize> {
        let mut deg = vec![0; self.routers.len()];
        for l in &self.links {
            for e in l.ends {
                if let (Endpoint::Router { router, .. }, true) = (e, l.kind != LinkKind::Terminal) {
                    deg[router] += 1;
                }
            }
        }
        deg
    }

    /// The router-level multigraph metrics run on.
    pub fn router_graph(&self) -> RouterGraph {
        let edges = self.links.iter().filter_map(|l| match l.ends {
            [
                Endpoint::Router { router: a, .. },
                Endpoint::Router { router: b, .. },
            ] => Some((a, b)),
            _ => None,
        });
        RouterGraph::from_edges(self.routers.len(), edges)
    }

    /// Checks that every port, link and terminal points back consistently.
    pub fn validate(&self) -> Result<()> {
        for (li, l) in self.links.iter().enumerate() {
            for e in l.ends {
                match e {
                    Endpoint::Router { router, port } => {
                        let ok = self
                            .routers
                            .get(router)
                            .and_then(|r| r.ports.get(port))
                            .copied()
                            .flatten()
                            == Some(li);
                        if !ok {
                            return Err(Error::field(
                                format!("links[{li}]"),
                                format!("router {router} port {port} does not refer back to it"),
                            ));
                        }
                    }
                    Endpoint::Terminal { terminal } => {
                        if self.terminals.get(terminal).map(|t| t.link) != Some(li) {
                            return Err(Error::field(
                                format!("links[{li}]"),
                                format!("terminal {terminal} does not refer back to it"),
                            ));
                        }
                    }
                }
            }
            if l.ends[0] == l.ends[1] {
                return Err(Error::field(
                    format!("links[{li}]"),
                    "connects a port to itself",
                ));
            }
            if l.params.latency > MAX_LATENCY {
                return Err(Error::field(
                    format!("links[{li}].latency"),
                    format!("at most {MAX_LATENCY} cycles (got {})", l.params.latency),
                ));
            }
            if !(l.params.bandwidth > 0.0 && l.params.bandwidth.is_finite()) {
                return Err(Error::field(
                    format!("links[{li}].bandwidth"),
                    "must be a positive number",
                ));
            }
        }
        Ok(())
    }
}

/// Most cycles a link may take: the simulator keeps an event wheel as long as the longest
/// link plus the router pipeline, so a latency is bounded like the pipeline delays
/// (`sim::config::MAX_DELAY`).
pub(crate) const MAX_LATENCY: u32 = 1 << 16;

/// Builds a topology port by port; generators and importers use it so that the invariants
/// checked by [`Topology::validate`] hold by construction.
#[derive(Debug)]
pub(crate) struct TopologyBuilder {
    name: String,
    routers: Vec<Router>,
    terminals: Vec<Terminal>,
    links: Vec<Link>,
}

impl TopologyBuilder {
    pub(crate) fn new(name: impl Into<String>, num_routers: usize) -> Self {
        TopologyBuilder {
            name: name.into(),
            routers: vec![Router { ports: Vec::new() }; num_routers],
            terminals: Vec::new(),
            links: Vec::new(),
        }
    }

    /// Makes sure `router` has at least `count` ports (new ones unconnected).
    pub(crate) fn reserve_ports(&mut self, router: RouterId, count: usize) {
        let ports = &mut self.routers[router].ports;
        if ports.len() < count {
            ports.resize(count, None);
        }
    }

    /// The number of ports router `router` has so far.
    pub(crate) fn port_count(&self, router: RouterId) -> usize {
        self.routers[router].ports.len()
    }

    fn claim(&mut self, router: RouterId, port: PortId, link: LinkId) -> Result<()> {
        if router >= self.routers.len() {
            return Err(Error::field(
                "router",
                format!("{router} is out of range (0..{})", self.routers.len()),
            ));
        }
        self.reserve_ports(router, port + 1);
        let slot = &mut self.routers[router].ports[port];
        if slot.is_some() {
            return Err(Error::field(
                format!("router {router} port {port}"),
                "is already connected",
            ));
        }
        *slot = Some(link);
        Ok(())
    }

    /// Connects two router ports with a bidirectional link.
    pub(crate) fn connect(
        &mut self,
        (a, pa): (RouterId, PortId),
        (b, pb): (RouterId, PortId),
        kind: LinkKind,
        params: ChannelParams,
    ) -> Result<LinkId> {
        if a == b && pa == pb {
            return Err(Error::field(
                format!("router {a} port {pa}"),
                "cannot be linked to itself",
            ));
        }
        let id = self.links.len();
        self.claim(a, pa, id)?;
        if let Err(e) = self.claim(b, pb, id) {
            self.routers[a].ports[pa] = None;
            return Err(e);
        }
        self.links.push(Link {
            ends: [
                Endpoint::Router {
                    router: a,
                    port: pa,
                },
                Endpoint::Router {
                    router: b,
                    port: pb,
                },
            ],
            kind,
            params,
        });
        Ok(id)
    }

    /// Connects two routers on their next free port numbers.
    pub(crate) fn connect_next(
        &mut self,
        a: RouterId,
        b: RouterId,
        kind: LinkKind,
        params: ChannelParams,
    ) -> Result<LinkId> {
        let pa = self.port_count(a);
        let pb = if a == b { pa + 1 } else { self.port_count(b) };
        self.connect((a, pa), (b, pb), kind, params)
    }

    /// Attaches a new terminal to `router`'s `port`; terminal ids are given in call order.
    pub(crate) fn attach_terminal(
        &mut self,
        router: RouterId,
        port: PortId,
        params: ChannelParams,
    ) -> Result<TerminalId> {
        let terminal = self.terminals.len();
        let link = self.links.len();
        self.claim(router, port, link)?;
        self.links.push(Link {
            ends: [
                Endpoint::Terminal { terminal },
                Endpoint::Router { router, port },
            ],
            kind: LinkKind::Terminal,
            params,
        });
        self.terminals.push(Terminal { router, port, link });
        Ok(terminal)
    }

    /// Attaches `count` terminals to every router on ports 0..count (the usual concentration).
    pub(crate) fn attach_terminals_everywhere(&mut self, count: usize, params: ChannelParams) {
        for r in 0..self.routers.len() {
            for p in 0..count {
                self.attach_terminal(r, p, params)
                    .expect("terminal ports are attached first, on free ports");
            }
        }
    }

    pub(crate) fn finish(self, shape: Shape, symmetry: Option<Symmetry>) -> Result<Topology> {
        let topo = Topology {
            name: self.name,
            shape,
            routers: self.routers,
            terminals: self.terminals,
            links: self.links,
            symmetry,
        };
        topo.validate()?;
        Ok(topo)
    }
}
