//! Registries: every routing algorithm, topology kind, traffic pattern and search algorithm by
//! name, one entry each (docs/architecture.md, "Adding a routing algorithm" and the sections
//! after it). Routing's registry is here because its algorithms live in two folders, `routing/`
//! (classical and table-driven) and `learn/` (learned), so it sits above both. A concept whose
//! entries live in one folder keeps its registry there, where the code that looks entries up
//! by name is: topology kinds in `topology/registry.rs`, traffic patterns in
//! `traffic/registry.rs`, search algorithms in `search/algorithms/mod.rs`. The first two are
//! re-exported here, so that every registry can be found from this module.

pub mod routing;

pub use crate::topology::registry as topology;
pub use crate::traffic::registry as traffic;
