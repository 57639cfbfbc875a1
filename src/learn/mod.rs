//! Routing that learns while the network runs (seed-notes §1-2): each algorithm is a
//! [`crate::routing::RoutingFunction`] whose per-run state is a
//! [`crate::routing::RoutingSession`]. `docs/learning.md` describes them.

pub mod config;
pub mod feedback;
pub mod q_adaptive;
pub mod q_routing;

pub use config::{LEARNED, QConfig, build};
