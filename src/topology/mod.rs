//! Topologies: the model the simulator runs on, generators, file import and metrics.

pub mod generators;
pub mod graph;
pub mod import;
pub mod metrics;
pub mod model;
pub mod spec;
pub mod symmetry;

pub use graph::RouterGraph;
pub use model::{
    ChannelId, ChannelParams, Endpoint, Link, LinkId, LinkKind, PortId, Router, RouterId, Shape,
    Terminal, TerminalId, Topology, TopologyBuilder,
};
pub use spec::{LinkParams, TopologyConfig, TopologySpec};
pub use symmetry::{Digit, Symmetry};
