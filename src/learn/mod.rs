//! Routing that learns while the network runs (docs/sources.md §1-2): Q-routing, Q-adaptive and
//! DQN-routing. Each algorithm is a [`crate::routing::RoutingFunction`] whose per-run state is
//! a [`crate::routing::RoutingSession`]; `nn` and `dqn` are the neural network and the DQN
//! agent behind DQN-routing. `docs/learning.md` describes them.

pub mod config;
pub mod dqn;
pub mod dqn_routing;
pub(crate) mod feedback;
pub mod nn;
pub mod q_adaptive;
pub mod q_routing;
pub mod session;

#[cfg(test)]
use config::QConfig;
pub(crate) use config::QParams;
pub use config::build;
