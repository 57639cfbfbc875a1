//! Dueling double DQN with uniform replay, independent of the simulator.
//!
//! In routing a decision is taken at one time and its reward arrives later (with the ack), so
//! acting and learning are separate calls: [`DqnAgent::act`] counts decisions and advances
//! the schedule; [`DqnAgent::remember`] stores a transition and runs the training steps the
//! decision count has made due. Every count is in decisions, the unit ("timesteps") of the
//! RLlib configuration the paper used: one training step per `train_every` decisions once
//! `learning_starts` decisions have been taken, and a target-network copy every
//! `target_update_every` decisions. Steps owed while no transition has arrived yet run when
//! the next one does, so the ratio of training steps to decisions stays exact.

mod config;
mod replay;
#[cfg(test)]
mod tests;

pub use config::DqnConfig;
pub use replay::Batch;
pub(crate) use replay::{ReplayBuffer, Transition};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::Result;
use crate::learn::nn::{Adam, DuelingNet, NetShape, Workspace, clip_grad_norm};

/// Index of the largest value (the first on ties).
pub(crate) fn argmax(q: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in q.iter().enumerate() {
        if v > q[best] {
            best = i;
        }
    }
    best
}

/// Double-DQN target of a non-terminal transition: the target network's value of the action
/// the online network prefers in the next state.
pub(crate) fn double_q_target(
    reward: f32,
    discount: f32,
    q_online_next: &[f32],
    q_target_next: &[f32],
) -> f32 {
    reward + discount * q_target_next[argmax(q_online_next)]
}

/// A dueling double DQN agent.
#[derive(Clone, Debug)]
pub struct DqnAgent {
    config: DqnConfig,
    online: DuelingNet,
    target: DuelingNet,
    adam: Adam,
    replay: ReplayBuffer,
    /// Replay sampling; seeded from the agent's seed.
    rng: ChaCha8Rng,
    decisions: u64,
    training_steps: u64,
    /// Training steps made due by decisions and not yet run.
    owed_steps: u64,
    last_loss: Option<f32>,
    act_ws: Workspace,
    train_ws: Workspace,
    next_ws: Workspace,
    batch: Batch,
    grads: Vec<f32>,
    dq: Vec<f32>,
    targets: Vec<f32>,
    next_q: Vec<f32>,
}

impl DqnAgent {
    /// An agent for observations of `inputs` floats and `actions` actions; the network
    /// weights and the replay sampling are drawn from `seed`.
    pub fn new(config: DqnConfig, inputs: usize, actions: usize, seed: u64) -> Result<Self> {
        config.validate("dqn")?;
        if inputs == 0 || actions == 0 {
            return Err(crate::Error::field(
                "dqn",
                "needs at least one input and one action",
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let shape = NetShape {
            inputs,
            hidden: config.hidden.clone(),
            head_hidden: config.head_hidden,
            actions,
        };
        let online = DuelingNet::new(shape, config.init, &mut rng);
        let n = online.num_params();
        Ok(DqnAgent {
            target: online.clone(),
            online,
            adam: Adam::with_betas(
                n,
                config.lr,
                config.adam_beta1,
                config.adam_beta2,
                config.adam_eps,
            ),
            replay: ReplayBuffer::new(config.replay_capacity, inputs),
            rng,
            decisions: 0,
            training_steps: 0,
            owed_steps: 0,
            last_loss: None,
            act_ws: Workspace::new(),
            train_ws: Workspace::new(),
            next_ws: Workspace::new(),
            batch: Batch::default(),
            grads: vec![0.0; n],
            dq: Vec::new(),
            targets: Vec::new(),
            next_q: Vec::new(),
            config,
        })
    }

    pub fn config(&self) -> &DqnConfig {
        &self.config
    }

    /// Decisions taken by `act`.
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// Gradient steps run.
    pub(crate) fn training_steps(&self) -> u64 {
        self.training_steps
    }

    /// Exploration rate of the next decision.
    pub(crate) fn epsilon(&self) -> f64 {
        self.config.epsilon(self.decisions)
    }

    pub fn online(&self) -> &DuelingNet {
        &self.online
    }

    pub fn target(&self) -> &DuelingNet {
        &self.target
    }

    /// Epsilon-greedy decision: `(action, greedy)`, `greedy` false when the action was
    /// drawn at random. Counts the decision, which may make a training step or a target sync
    /// due.
    pub(crate) fn act(&mut self, obs: &[f32], rng: &mut ChaCha8Rng) -> (usize, bool) {
        let eps = self.epsilon();
        let choice = if rng.random::<f64>() < eps {
            (rng.random_range(0..self.online.shape().actions), false)
        } else {
            (self.greedy(obs), true)
        };
        self.decisions += 1;
        let d = self.decisions;
        if d >= self.config.learning_starts && d % self.config.train_every == 0 {
            self.owed_steps += 1;
        }
        if d % self.config.target_update_every == 0 {
            self.target.copy_params_from(&self.online);
        }
        choice
    }

    /// The action of largest Q (no exploration, not counted as a decision).
    pub fn greedy(&mut self, obs: &[f32]) -> usize {
        argmax(self.q_values(obs))
    }

    /// Q-values of one observation under the online network.
    pub(crate) fn q_values(&mut self, obs: &[f32]) -> &[f32] {
        assert_eq!(obs.len(), self.online.shape().inputs, "observation length");
        self.online.forward(&mut self.act_ws, obs)
    }

    /// Stores a transition, then runs the training steps that are due. Returns the loss of
    /// the last step run, if any.
    pub(crate) fn remember(&mut self, t: Transition<'_>) -> Option<f32> {
        assert!(
            t.action < self.online.shape().actions,
            "action {} out of range",
            t.action
        );
        self.replay.push(t);
        let mut loss = None;
        while self.owed_steps > 0 {
            self.owed_steps -= 1;
            let mut batch = std::mem::take(&mut self.batch);
            self.replay
                .sample(self.config.batch_size, &mut self.rng, &mut batch);
            loss = Some(self.train_on(&batch));
            self.batch = batch;
        }
        loss
    }

    /// One gradient step on `batch`: double-DQN targets, loss, backward pass, clipping and
    /// Adam. Returns the loss before the step.
    pub fn train_on(&mut self, batch: &Batch) -> f32 {
        let rows = batch.rows();
        let n_act = self.online.shape().actions;
        self.targets.clear();
        self.targets.extend_from_slice(&batch.rewards);
        // With discount 0 the bootstrapped term vanishes: skip both next-state passes.
        let gamma = self.config.discount;
        if gamma != 0.0 && batch.terminal.iter().any(|&t| !t) {
            let q_online = self.online.forward(&mut self.next_ws, &batch.next_obs);
            self.next_q.clear();
            self.next_q.extend_from_slice(q_online);
            let q_target = self.target.forward(&mut self.next_ws, &batch.next_obs);
            for (b, target) in self.targets.iter_mut().enumerate() {
                if !batch.terminal[b] {
                    let row = b * n_act..(b + 1) * n_act;
                    *target =
                        double_q_target(*target, gamma, &self.next_q[row.clone()], &q_target[row]);
                }
            }
        }
        let q = self.online.forward(&mut self.train_ws, &batch.obs);
        self.dq.resize(rows * n_act, 0.0);
        let loss = self
            .config
            .loss
            .evaluate(q, &batch.actions, &self.targets, &mut self.dq);
        self.grads.fill(0.0);
        self.online
            .backward(&mut self.train_ws, &self.dq, &mut self.grads);
        clip_grad_norm(&mut self.grads, self.config.grad_clip);
        self.adam.step(self.online.params_mut(), &self.grads);
        self.training_steps += 1;
        self.last_loss = Some(loss);
        loss
    }
}
