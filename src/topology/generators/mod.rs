//! Topology generators. Each documents its router numbering and port numbering; the simulator's
//! routing functions rely on both. The general rule: terminal ports first, then network ports.

mod cartesian;
mod dragonfly;
mod exanest;
mod jellyfish;

pub use cartesian::{cartesian, complete};
pub use dragonfly::{DragonflyArrangement, dragonfly};
pub use exanest::{
    ExanestLink, check_dims as check_exanest_dims, exanest, exanest_links, exanest_router_of,
    exanest_symmetry,
};
pub use jellyfish::jellyfish;
