//! A small hand-written f32 MLP for DQN-routing: a dueling Q-network with sizes chosen at
//! run time, its backward pass, TD losses, gradient clipping and Adam.
//!
//! Built for the simulator's hot path: parameters and gradients are flat `Vec<f32>`s,
//! passes reuse a [`Workspace`] (no allocation once it has seen the largest batch), and the
//! inner loops are slice axpys the compiler vectorises. docs/benchmarks.md compares it with
//! candle; docs/learning.md describes the network.

mod adam;
mod dense;
mod loss;
mod net;
#[cfg(test)]
mod tests;

pub use adam::Adam;
pub(crate) use adam::clip_grad_norm;
#[cfg(test)]
use adam::grad_norm;
pub(crate) use loss::Loss;
pub use net::{DuelingNet, Init, NetShape, Workspace};
