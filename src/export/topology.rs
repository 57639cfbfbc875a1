//! Topology export: fabricopt JSON, Graphviz DOT and BookSim anynet. See docs/formats.md.

use std::path::Path;

use crate::error::{Error, Result};
use crate::topology::Topology;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyFormat {
    Json,
    Dot,
    Anynet,
}

/// Writes `topo` to `path`; returns warnings (e.g. what a format cannot express).
pub fn write_topology(
    _topo: &Topology,
    _format: TopologyFormat,
    path: &Path,
) -> Result<Vec<String>> {
    Err(Error::File {
        path: path.to_path_buf(),
        reason: "export is not written yet".into(),
    })
}
