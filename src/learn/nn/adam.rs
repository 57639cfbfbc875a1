//! Global gradient-norm clipping and Adam over a flat parameter vector.

use super::dense::{dispatch, sum_squares};

/// Euclidean norm of the whole gradient.
pub(crate) fn grad_norm(grads: &[f32]) -> f32 {
    sum_squares(grads).sqrt()
}

/// Scales `grads` down to norm `max_norm` when its norm exceeds it (TensorFlow's
/// `clip_by_global_norm`, which RLlib's DQN uses); returns the norm before clipping.
pub(crate) fn clip_grad_norm(grads: &mut [f32], max_norm: f32) -> f32 {
    let norm = grad_norm(grads);
    if norm > max_norm {
        let scale = max_norm / norm;
        for g in grads.iter_mut() {
            *g *= scale;
        }
    }
    norm
}

/// Adam (Kingma & Ba) with bias correction, as `torch.optim.Adam` computes it:
/// `p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)`.
#[derive(Clone, Debug)]
pub struct Adam {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    m: Vec<f32>,
    v: Vec<f32>,
    t: u64,
}

impl Adam {
    /// Adam for `n` parameters with the paper's settings: betas 0.9/0.999, eps 1e-8.
    pub fn new(n: usize, lr: f32) -> Self {
        Self::with_betas(n, lr, 0.9, 0.999, 1e-8)
    }

    pub(crate) fn with_betas(n: usize, lr: f32, beta1: f32, beta2: f32, eps: f32) -> Self {
        Adam {
            lr,
            beta1,
            beta2,
            eps,
            m: vec![0.0; n],
            v: vec![0.0; n],
            t: 0,
        }
    }

    /// Steps taken so far.
    #[cfg(test)]
    pub(crate) fn steps(&self) -> u64 {
        self.t
    }

    /// One update of `params` with `grads`.
    pub fn step(&mut self, params: &mut [f32], grads: &[f32]) {
        assert!(params.len() == self.m.len() && grads.len() == self.m.len());
        self.t += 1;
        // Bias corrections in f64: beta^t for large t is below f32 resolution of 1.
        let t = self.t as f64;
        let bc1 = 1.0 - (self.beta1 as f64).powf(t);
        let bc2 = 1.0 - (self.beta2 as f64).powf(t);
        let step = (self.lr as f64 / bc1) as f32;
        let inv_sqrt_bc2 = (1.0 / bc2.sqrt()) as f32;
        let (b1, b2, eps) = (self.beta1, self.beta2, self.eps);
        let (m, v) = (&mut self.m[..], &mut self.v[..]);
        dispatch!(update(
            params,
            grads,
            m,
            v,
            [b1, b2, eps, step, inv_sqrt_bc2]
        ))
    }
}

/// The element-wise Adam update; `k` = beta1, beta2, eps, lr / (1 - beta1^t),
/// 1 / sqrt(1 - beta2^t).
#[inline(always)]
fn update(params: &mut [f32], grads: &[f32], m: &mut [f32], v: &mut [f32], k: [f32; 5]) {
    let [b1, b2, eps, step, inv_sqrt_bc2] = k;
    for (((p, &g), m), v) in params.iter_mut().zip(grads).zip(m).zip(v) {
        *m = b1 * *m + (1.0 - b1) * g;
        *v = b2 * *v + (1.0 - b2) * g * g;
        *p -= step * *m / (v.sqrt() * inv_sqrt_bc2 + eps);
    }
}
