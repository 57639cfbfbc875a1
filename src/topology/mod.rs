//! Topologies: the model the simulator runs on, generators, file import and metrics.

pub(crate) mod format_json;
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
pub use model::{ChannelParams, Endpoint, LinkKind, Router, Shape, Terminal, Topology};
pub(crate) use model::{PortId, RouterId, TerminalId};
pub use spec::{LinkParams, TopologyConfig};
