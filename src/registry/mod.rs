//! Registries whose entries come from more than one concept folder. Routing is the one: its
//! algorithms live in `routing/` (classical and table-driven) and in `learn/` (learned), so its
//! registry sits above both. A concept whose entries live in one folder keeps its registry
//! there (docs/architecture.md, "Adding an algorithm, a topology or a traffic pattern").

pub mod routing;
