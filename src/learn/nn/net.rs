//! The dueling Q-network: a ReLU encoder, then a value and an advantage stream,
//! `Q = V + A - mean(A)`. All parameters live in one flat vector (so that clipping, Adam and
//! the target-network copy are single loops); each layer owns a contiguous slice of it.

use std::ops::Range;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::dense;

/// Sizes of a dueling network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetShape {
    /// Observation length (13 for DQN-routing).
    pub inputs: usize,
    /// Encoder hidden layers, each followed by a ReLU; may be empty.
    pub hidden: Vec<usize>,
    /// Hidden width of each stream (one ReLU layer); 0 makes the streams linear.
    pub head_hidden: usize,
    /// Number of actions (4 for DQN-routing).
    pub actions: usize,
}

impl NetShape {
    /// The paper's sizes: 13 inputs, encoder 256-256, heads 256, 4 actions.
    pub fn paper() -> Self {
        NetShape {
            inputs: 13,
            hidden: vec![256, 256],
            head_hidden: 256,
            actions: 4,
        }
    }
}

/// Weight initialisation. Biases are drawn like the weights under `TorchDefault` and are zero
/// under `HeUniform`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Init {
    /// PyTorch's `nn.Linear` default: weights and biases uniform in ±1/sqrt(fan_in).
    #[default]
    TorchDefault,
    /// Kaiming/He uniform for ReLU: weights uniform in ±sqrt(6/fan_in).
    HeUniform,
}

/// One dense layer: offsets of its weights (`fan_in x fan_out`, input-major) and biases in
/// the flat parameter vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layer {
    fan_in: usize,
    fan_out: usize,
    w: usize,
    b: usize,
    /// The layer whose output is this layer's input; `None`: the observation.
    src: Option<usize>,
    relu: bool,
}

impl Layer {
    fn weights(&self) -> Range<usize> {
        self.w..self.w + self.fan_in * self.fan_out
    }
    fn biases(&self) -> Range<usize> {
        self.b..self.b + self.fan_out
    }
}

/// A named contiguous range of the flat parameter vector (one layer's weights or biases).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg(test)]
pub(crate) struct ParamGroup {
    /// E.g. `encoder.0.weight`, `value.1.bias`, `advantage.0.weight`.
    pub name: String,
    pub range: Range<usize>,
}

/// Dueling Q-network with run-time sizes.
#[derive(Clone, Debug)]
pub struct DuelingNet {
    shape: NetShape,
    /// Encoder layers, then the value stream, then the advantage stream; a layer's input
    /// always comes earlier, which lets the passes split the buffers with `split_at_mut`.
    layers: Vec<Layer>,
    /// Index of the value stream's output layer; the advantage output is the last layer.
    value_out: usize,
    params: Vec<f32>,
}

/// Buffers of one forward/backward pass; reused across calls so that the passes allocate
/// only when the batch grows. A workspace serves any network, but a backward pass needs the
/// workspace of the forward pass it differentiates.
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    rows: usize,
    input: Vec<f32>,
    /// Output activations of each layer (`rows x fan_out`).
    out: Vec<Vec<f32>>,
    /// dLoss/d(pre-activation output) of each layer.
    delta: Vec<Vec<f32>>,
    q: Vec<f32>,
    /// Transposed weights of the layer being differentiated.
    wt: Vec<f32>,
}

impl Workspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows of the last forward pass.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Q-values of the last forward pass (`rows x actions`, row-major).
    pub fn q(&self) -> &[f32] {
        &self.q
    }

    fn prepare(&mut self, net: &DuelingNet, rows: usize) {
        self.rows = rows;
        self.input.resize(rows * net.shape.inputs, 0.0);
        self.out.resize_with(net.layers.len(), Vec::new);
        self.delta.resize_with(net.layers.len(), Vec::new);
        for (l, layer) in net.layers.iter().enumerate() {
            self.out[l].resize(rows * layer.fan_out, 0.0);
            self.delta[l].resize(rows * layer.fan_out, 0.0);
        }
        self.q.resize(rows * net.shape.actions, 0.0);
    }
}

impl DuelingNet {
    /// A network of `shape` with weights drawn from `rng`.
    ///
    /// # Panics
    /// If `inputs`, `actions` or a hidden size is zero.
    pub fn new(shape: NetShape, init: Init, rng: &mut ChaCha8Rng) -> Self {
        assert!(
            shape.inputs > 0 && shape.actions > 0,
            "empty network: {shape:?}"
        );
        assert!(
            shape.hidden.iter().all(|&h| h > 0),
            "zero-width encoder layer: {shape:?}"
        );
        let mut layers = Vec::new();
        let mut next = 0;
        let mut push = |fan_in: usize, fan_out: usize, src: Option<usize>, relu: bool| {
            let layer = Layer {
                fan_in,
                fan_out,
                w: next,
                b: next + fan_in * fan_out,
                src,
                relu,
            };
            next = layer.b + fan_out;
            layers.push(layer);
            layers.len() - 1
        };
        let mut src = None;
        let mut width = shape.inputs;
        for &h in &shape.hidden {
            src = Some(push(width, h, src, true));
            width = h;
        }
        let encoded = (src, width);
        let mut stream = |outputs: usize| {
            let (mut src, mut width) = encoded;
            if shape.head_hidden > 0 {
                src = Some(push(width, shape.head_hidden, src, true));
                width = shape.head_hidden;
            }
            push(width, outputs, src, false)
        };
        let value_out = stream(1);
        stream(shape.actions);
        let mut params = vec![0.0; next];
        for layer in &layers {
            let bound = match init {
                Init::TorchDefault => 1.0 / (layer.fan_in as f32).sqrt(),
                Init::HeUniform => (6.0 / layer.fan_in as f32).sqrt(),
            };
            for p in &mut params[layer.weights()] {
                *p = rng.random_range(-bound..bound);
            }
            if init == Init::TorchDefault {
                for p in &mut params[layer.biases()] {
                    *p = rng.random_range(-bound..bound);
                }
            }
        }
        DuelingNet {
            shape,
            layers,
            value_out,
            params,
        }
    }

    pub fn shape(&self) -> &NetShape {
        &self.shape
    }

    pub(crate) fn num_params(&self) -> usize {
        self.params.len()
    }

    pub fn params(&self) -> &[f32] {
        &self.params
    }

    pub(crate) fn params_mut(&mut self) -> &mut [f32] {
        &mut self.params
    }

    /// Copies the parameters of a network of the same shape (target-network sync; no
    /// allocation).
    pub(crate) fn copy_params_from(&mut self, other: &DuelingNet) {
        assert_eq!(self.shape, other.shape, "copying between different shapes");
        self.params.copy_from_slice(&other.params);
    }

    /// The weights and biases of every layer, in storage order.
    #[cfg(test)]
    pub(crate) fn param_groups(&self) -> Vec<ParamGroup> {
        let mut groups = Vec::new();
        for (l, layer) in self.layers.iter().enumerate() {
            let name = if l < self.shape.hidden.len() {
                format!("encoder.{l}")
            } else if l <= self.value_out {
                format!("value.{}", l - self.shape.hidden.len())
            } else {
                format!("advantage.{}", l - self.value_out - 1)
            };
            groups.push(ParamGroup {
                name: format!("{name}.weight"),
                range: layer.weights(),
            });
            groups.push(ParamGroup {
                name: format!("{name}.bias"),
                range: layer.biases(),
            });
        }
        groups
    }

    /// Q-values of the rows of `x` (`rows x inputs`, row-major), returned as `rows x actions`
    /// (also kept in `ws` for a backward pass).
    pub fn forward<'w>(&self, ws: &'w mut Workspace, x: &[f32]) -> &'w [f32] {
        let n_in = self.shape.inputs;
        assert_eq!(
            x.len() % n_in,
            0,
            "input length is not a multiple of {n_in}"
        );
        ws.prepare(self, x.len() / n_in);
        ws.input.copy_from_slice(x);
        for (l, layer) in self.layers.iter().enumerate() {
            let (below, rest) = ws.out.split_at_mut(l);
            let input = match layer.src {
                Some(s) => &below[s][..],
                None => &ws.input[..],
            };
            dense::forward(
                &self.params[layer.weights()],
                &self.params[layer.biases()],
                input,
                &mut rest[0],
                layer.relu,
            );
        }
        let a = self.shape.actions;
        let inv = 1.0 / a as f32;
        let (v, adv) = (&ws.out[self.value_out], &ws.out[self.layers.len() - 1]);
        for ((qr, &vr), ar) in ws.q.chunks_exact_mut(a).zip(v).zip(adv.chunks_exact(a)) {
            let mean = ar.iter().sum::<f32>() * inv;
            for (q, &adv) in qr.iter_mut().zip(ar) {
                *q = vr + adv - mean;
            }
        }
        &ws.q
    }

    /// Backward pass of the last `forward` through `ws`: `dq` is dLoss/dQ (`rows x
    /// actions`); the gradient of every parameter is added into `grads` (same layout as
    /// `params`).
    pub fn backward(&self, ws: &mut Workspace, dq: &[f32], grads: &mut [f32]) {
        let a = self.shape.actions;
        assert_eq!(dq.len(), ws.rows * a, "dq does not match the forward pass");
        assert_eq!(grads.len(), self.params.len());
        let last = self.layers.len() - 1;
        for d in &mut ws.delta[..last] {
            d.fill(0.0);
        }
        // Q_j = V + A_j - mean(A): dV = sum_j dQ_j, dA_j = dQ_j - mean(dQ).
        let inv = 1.0 / a as f32;
        let (lo, hi) = ws.delta.split_at_mut(last);
        for ((dqr, dv), dar) in dq
            .chunks_exact(a)
            .zip(lo[self.value_out].iter_mut())
            .zip(hi[0].chunks_exact_mut(a))
        {
            let sum: f32 = dqr.iter().sum();
            *dv = sum;
            for (da, &d) in dar.iter_mut().zip(dqr) {
                *da = d - sum * inv;
            }
        }
        // Reverse storage order visits every layer after all layers that read its output.
        for (l, layer) in self.layers.iter().enumerate().rev() {
            let (below, rest) = ws.delta.split_at_mut(l);
            let (input, dx) = match layer.src {
                Some(s) => (&ws.out[s][..], Some(&mut below[s][..])),
                None => (&ws.input[..], None),
            };
            let (gw, gb) = grads[layer.w..layer.b + layer.fan_out].split_at_mut(layer.b - layer.w);
            dense::backward(
                &self.params[layer.weights()],
                input,
                &rest[0],
                gw,
                gb,
                dx,
                &mut ws.wt,
            );
        }
    }
}
