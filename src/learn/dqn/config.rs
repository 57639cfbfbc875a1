//! Settings of a DQN agent; the defaults are the paper's (docs/sources.md §1, the thesis's RLlib
//! configuration).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::learn::nn::{Init, Loss};

/// Every setting of a [`super::DqnAgent`]. All counts are in decisions (calls of `act`),
/// the RLlib unit ("timesteps") in which the paper gives them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DqnConfig {
    /// Encoder hidden layers (the paper leaves them open; `[64]` is the fast variant).
    pub hidden: Vec<usize>,
    /// Hidden width of the value and advantage streams (0: linear streams).
    pub head_hidden: usize,
    pub loss: Loss,
    pub init: Init,
    /// Discount of the bootstrapped term; 0 because each routing decision is a terminal
    /// episode (the target is then the reward and the target network is not evaluated).
    pub discount: f32,
    pub replay_capacity: usize,
    /// Decisions before the first training step.
    pub learning_starts: u64,
    /// One training step per this many decisions.
    pub train_every: u64,
    pub batch_size: usize,
    /// Copy the online network into the target network every this many decisions.
    pub target_update_every: u64,
    pub lr: f32,
    pub adam_beta1: f32,
    pub adam_beta2: f32,
    pub adam_eps: f32,
    /// Global gradient-norm clipping.
    pub grad_clip: f32,
    /// Epsilon falls linearly from `epsilon_start` to `epsilon_mid` over the first
    /// `epsilon_anneal` decisions, stays at `epsilon_mid` until `epsilon_mid_until`
    /// decisions, then is `epsilon_final`.
    pub epsilon_start: f64,
    pub epsilon_mid: f64,
    pub epsilon_anneal: u64,
    pub epsilon_mid_until: u64,
    pub epsilon_final: f64,
}

impl Default for DqnConfig {
    fn default() -> Self {
        DqnConfig {
            hidden: vec![256, 256],
            head_hidden: 256,
            loss: Loss::Huber,
            init: Init::TorchDefault,
            discount: 0.0,
            replay_capacity: 50_000,
            learning_starts: 1_000,
            train_every: 4,
            batch_size: 32,
            target_update_every: 500,
            lr: 5e-4,
            adam_beta1: 0.9,
            adam_beta2: 0.999,
            adam_eps: 1e-8,
            grad_clip: 40.0,
            epsilon_start: 1.0,
            epsilon_mid: 0.1,
            epsilon_anneal: 10_000,
            epsilon_mid_until: 100_000,
            epsilon_final: 0.02,
        }
    }
}

impl DqnConfig {
    /// The exploration rate after `decisions` decisions.
    pub(crate) fn epsilon(&self, decisions: u64) -> f64 {
        if decisions < self.epsilon_anneal {
            let f = decisions as f64 / self.epsilon_anneal as f64;
            self.epsilon_start + f * (self.epsilon_mid - self.epsilon_start)
        } else if decisions < self.epsilon_mid_until {
            self.epsilon_mid
        } else {
            self.epsilon_final
        }
    }

    /// Rejects settings the agent cannot run with; `prefix` names the table in messages
    /// (e.g. `routing.dqn`).
    pub fn validate(&self, prefix: &str) -> Result<()> {
        let bad =
            |field: &str, reason: &str| Err(Error::field(format!("{prefix}.{field}"), reason));
        if self.hidden.contains(&0) {
            return bad("hidden", "layer widths must be positive");
        }
        for (name, n) in [
            ("replay_capacity", self.replay_capacity as u64),
            ("batch_size", self.batch_size as u64),
            ("train_every", self.train_every),
            ("target_update_every", self.target_update_every),
        ] {
            if n == 0 {
                return bad(name, "must be positive");
            }
        }
        if !(0.0..=1.0).contains(&self.discount) {
            return bad("discount", "must be in [0, 1]");
        }
        for (name, x) in [
            ("lr", self.lr),
            ("adam_eps", self.adam_eps),
            ("grad_clip", self.grad_clip),
        ] {
            if !(x > 0.0 && x.is_finite()) {
                return bad(name, "must be positive");
            }
        }
        for (name, b) in [
            ("adam_beta1", self.adam_beta1),
            ("adam_beta2", self.adam_beta2),
        ] {
            if !(0.0..1.0).contains(&b) {
                return bad(name, "must be in [0, 1)");
            }
        }
        for (name, e) in [
            ("epsilon_start", self.epsilon_start),
            ("epsilon_mid", self.epsilon_mid),
            ("epsilon_final", self.epsilon_final),
        ] {
            if !(0.0..=1.0).contains(&e) {
                return bad(name, "must be in [0, 1]");
            }
        }
        if self.epsilon_mid_until < self.epsilon_anneal {
            return bad("epsilon_mid_until", "must be at least epsilon_anneal");
        }
        Ok(())
    }
}
