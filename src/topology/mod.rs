//! Topologies: the model the simulator runs on, generators, file import and metrics.

pub mod format_json;
pub mod generators;
pub mod graph;
pub mod import;
mod import_anynet;
mod import_edges;
mod import_json;
pub mod metrics;
pub mod model;
pub mod registry;
pub mod spec;
pub mod symmetry;

pub use graph::RouterGraph;
pub use model::{
    ChannelId, ChannelParams, Endpoint, Link, LinkId, LinkKind, PortId, Router, RouterId, Shape,
    Terminal, TerminalId, Topology, TopologyBuilder,
};
pub use spec::{Generator, LinkParams, TopologyConfig, TopologySpec};
pub use symmetry::{Digit, Symmetry};
