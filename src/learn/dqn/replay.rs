//! Uniform experience replay in flat arrays (one allocation at creation, none per
//! transition).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// One experience: the action taken on `obs` and its reward; `next_obs` is `None` for a
/// terminal transition (every DQN-routing decision is one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Transition<'a> {
    pub obs: &'a [f32],
    pub action: usize,
    pub reward: f32,
    pub next_obs: Option<&'a [f32]>,
}

/// A ring buffer of transitions: once full, each push overwrites the oldest.
#[derive(Clone, Debug)]
pub(crate) struct ReplayBuffer {
    obs_len: usize,
    capacity: usize,
    len: usize,
    /// Slot of the next push.
    head: usize,
    obs: Vec<f32>,
    next_obs: Vec<f32>,
    terminal: Vec<bool>,
    actions: Vec<usize>,
    rewards: Vec<f32>,
}

/// A sampled batch, laid out for the network (`rows x obs_len`, row-major). Rows of terminal
/// transitions have zeros in `next_obs`.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub obs: Vec<f32>,
    pub actions: Vec<usize>,
    pub rewards: Vec<f32>,
    pub next_obs: Vec<f32>,
    pub terminal: Vec<bool>,
}

impl Batch {
    pub fn rows(&self) -> usize {
        self.rewards.len()
    }
}

impl ReplayBuffer {
    pub(crate) fn new(capacity: usize, obs_len: usize) -> Self {
        assert!(capacity > 0 && obs_len > 0);
        ReplayBuffer {
            obs_len,
            capacity,
            len: 0,
            head: 0,
            obs: vec![0.0; capacity * obs_len],
            next_obs: vec![0.0; capacity * obs_len],
            terminal: vec![true; capacity],
            actions: vec![0; capacity],
            rewards: vec![0.0; capacity],
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn push(&mut self, t: Transition<'_>) {
        let n = self.obs_len;
        assert_eq!(t.obs.len(), n, "observation length");
        let slot = self.head;
        self.obs[slot * n..(slot + 1) * n].copy_from_slice(t.obs);
        let next = &mut self.next_obs[slot * n..(slot + 1) * n];
        match t.next_obs {
            Some(o) => {
                assert_eq!(o.len(), n, "next observation length");
                next.copy_from_slice(o);
            }
            None => next.fill(0.0),
        }
        self.terminal[slot] = t.next_obs.is_none();
        self.actions[slot] = t.action;
        self.rewards[slot] = t.reward;
        self.head = (slot + 1) % self.capacity;
        self.len = (self.len + 1).min(self.capacity);
    }

    /// The `i`-th stored transition, oldest first.
    #[cfg(test)]
    pub(crate) fn get(&self, i: usize) -> Transition<'_> {
        assert!(i < self.len);
        let slot = (self.head + self.capacity - self.len + i) % self.capacity;
        let n = self.obs_len;
        Transition {
            obs: &self.obs[slot * n..(slot + 1) * n],
            action: self.actions[slot],
            reward: self.rewards[slot],
            next_obs: (!self.terminal[slot]).then(|| &self.next_obs[slot * n..(slot + 1) * n]),
        }
    }

    /// Fills `batch` with `rows` transitions drawn uniformly with replacement (as RLlib's
    /// replay buffer does).
    pub(crate) fn sample(&self, rows: usize, rng: &mut ChaCha8Rng, batch: &mut Batch) {
        assert!(!self.is_empty(), "sampling an empty replay buffer");
        let n = self.obs_len;
        batch.obs.clear();
        batch.next_obs.clear();
        batch.actions.clear();
        batch.rewards.clear();
        batch.terminal.clear();
        for _ in 0..rows {
            let slot = rng.random_range(0..self.len);
            batch
                .obs
                .extend_from_slice(&self.obs[slot * n..(slot + 1) * n]);
            batch
                .next_obs
                .extend_from_slice(&self.next_obs[slot * n..(slot + 1) * n]);
            batch.actions.push(self.actions[slot]);
            batch.rewards.push(self.rewards[slot]);
            batch.terminal.push(self.terminal[slot]);
        }
    }
}
