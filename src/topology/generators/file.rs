//! `kind = "file"`: a topology read whole from a file (fabricopt JSON, edge list or BookSim
//! anynet; `topology::import`). Only `path` besides `kind` and `name`: the file holds the
//! links too.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::topology::import::read_topology_file;
use crate::topology::model::Topology;
use crate::topology::spec::{Generator, LinkParams, ResolveContext, Size, TopologyConfig, require};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileParams {
    /// The file, relative to the problem file's folder (required).
    pub path: Option<PathBuf>,
}

/// A topology file, its path resolved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct File {
    pub path: PathBuf,
}

pub fn resolve(cfg: &TopologyConfig, ctx: &ResolveContext) -> Result<Box<dyn Generator>> {
    let p: FileParams = cfg.read_params()?;
    let path = require(&p.path, "path")?;
    Ok(Box::new(File {
        path: if path.is_absolute() {
            path.clone()
        } else {
            ctx.base_dir.join(path)
        },
    }))
}

impl Generator for File {
    /// Imports check their own sizes while reading.
    fn size(&self) -> Option<Size> {
        None
    }

    fn build(&self, _: &LinkParams) -> Result<Topology> {
        read_topology_file(&self.path)
    }
}
