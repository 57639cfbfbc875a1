//! Reading topologies from files (JSON, edge list, BookSim anynet). See docs/formats.md.

use std::path::Path;

use super::model::Topology;
use crate::error::{Error, Result};

/// Reads a topology file, choosing the format by extension.
pub fn read_topology_file(path: &Path) -> Result<Topology> {
    Err(Error::File {
        path: path.to_path_buf(),
        reason: "topology import is not written yet".into(),
    })
}
