//! Learned routing: Q-routing, Q-adaptive (another session adds these files) and DQN-routing.

pub mod dqn;
pub mod dqn_routing;
pub mod nn;
