//! Topology generators, one file per family: each holds the parameter struct of its kinds (the
//! keys of their `[topology]` tables besides the common ones), their resolvers (which check the
//! parameters and fill in defaults) and the generator itself; `topology::registry` lists them.
//! Each documents its router numbering and port numbering; the simulator's routing functions
//! rely on both. The general rule: terminal ports first, then network ports.

pub mod cartesian;
pub mod dragonfly;
pub mod exanest;
pub mod file;
pub mod jellyfish;

pub use cartesian::{cartesian, complete};
pub use dragonfly::{DragonflyArrangement, dragonfly};
pub(crate) use exanest::{check_dims as check_exanest_dims, exanest_router_of};
pub use exanest::{exanest, exanest_links, exanest_symmetry};
pub use jellyfish::jellyfish;
