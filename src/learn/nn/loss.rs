//! TD losses on the Q-value of the taken action.

use serde::{Deserialize, Serialize};

/// Loss between the Q-value of the taken action and its target, averaged over the batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// Huber with delta 1 (`0.5 e^2` for `|e| <= 1`, else `|e| - 0.5`), as RLlib's DQN: large
    /// TD errors pass a bounded gradient.
    #[default]
    Huber,
    /// Squared error `e^2`.
    Mse,
}

impl Loss {
    /// Loss of one error `e = q - target` and its derivative.
    #[inline]
    pub(crate) fn value_and_slope(self, e: f32) -> (f32, f32) {
        match self {
            Loss::Huber if e.abs() <= 1.0 => (0.5 * e * e, e),
            Loss::Huber => (e.abs() - 0.5, e.signum()),
            Loss::Mse => (e * e, 2.0 * e),
        }
    }

    /// Mean loss of a batch: `q` is `rows x actions`, row `b` took `actions[b]` and its
    /// target is `targets[b]`. Writes dLoss/dQ into `dq` (zero but for the taken actions).
    pub fn evaluate(self, q: &[f32], actions: &[usize], targets: &[f32], dq: &mut [f32]) -> f32 {
        let rows = targets.len();
        assert!(rows > 0 && actions.len() == rows && q.len() == dq.len());
        assert_eq!(q.len() % rows, 0);
        let n_act = q.len() / rows;
        let inv = 1.0 / rows as f32;
        dq.fill(0.0);
        let mut total = 0.0;
        for (b, (&act, &target)) in actions.iter().zip(targets).enumerate() {
            assert!(act < n_act, "action {act} out of range");
            let (loss, slope) = self.value_and_slope(q[b * n_act + act] - target);
            total += loss;
            dq[b * n_act + act] = slope * inv;
        }
        total * inv
    }
}
