//! The DQN network: forward pass of one observation and one training step (batch 32:
//! online and target passes on the next states, online pass, backward, clipping, Adam), the
//! hand-written network against candle at the paper's sizes (13 -> 256 -> 256 -> dueling 256
//! heads -> 4), plus the hand-written small variant (encoder [64], heads 64). Figures are in
//! docs/benchmarks.md; `--features candle` adds the candle groups.

use criterion::{Criterion, criterion_group, criterion_main};
use fabricopt::learn::dqn::{Batch, DqnAgent, DqnConfig};
use fabricopt::learn::nn::{DuelingNet, Init, NetShape, Workspace};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

const INPUTS: usize = 13;
const ACTIONS: usize = 4;
const BATCH: usize = 32;

fn observations(rows: usize, rng: &mut ChaCha8Rng) -> Vec<f32> {
    (0..rows * INPUTS).map(|_| rng.random::<f32>()).collect()
}

/// A batch of non-terminal transitions, so that the double-DQN passes on the next states run.
fn batch(rng: &mut ChaCha8Rng) -> Batch {
    Batch {
        obs: observations(BATCH, rng),
        actions: (0..BATCH).map(|_| rng.random_range(0..ACTIONS)).collect(),
        rewards: (0..BATCH).map(|_| rng.random::<f32>()).collect(),
        next_obs: observations(BATCH, rng),
        terminal: vec![false; BATCH],
    }
}

fn hand_written(c: &mut Criterion) {
    let mut group = c.benchmark_group("nn_hand");
    group.sample_size(20);
    for (name, hidden, head) in [("paper", vec![256, 256], 256), ("small", vec![64], 64)] {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let shape = NetShape {
            inputs: INPUTS,
            hidden: hidden.clone(),
            head_hidden: head,
            actions: ACTIONS,
        };
        let net = DuelingNet::new(shape, Init::TorchDefault, &mut rng);
        let obs = observations(1, &mut rng);
        let mut ws = Workspace::new();
        group.bench_function(format!("forward1_{name}"), |b| {
            b.iter(|| black_box(net.forward(&mut ws, black_box(&obs))[0]))
        });
        let obs32 = observations(BATCH, &mut rng);
        group.bench_function(format!("forward32_{name}"), |b| {
            b.iter(|| black_box(net.forward(&mut ws, black_box(&obs32))[0]))
        });
        // Discount 0.99: the step includes the online and target passes on the next states
        // (with the routing default 0 they are skipped).
        let config = DqnConfig {
            hidden,
            head_hidden: head,
            discount: 0.99,
            ..DqnConfig::default()
        };
        let mut agent = DqnAgent::new(config, INPUTS, ACTIONS, 2).unwrap();
        let batch = batch(&mut rng);
        group.bench_function(format!("train32_{name}"), |b| {
            b.iter(|| black_box(agent.train_on(black_box(&batch))))
        });
        // The routing case: terminal transitions, discount 0, no next-state passes.
        let mut routing = DqnAgent::new(
            DqnConfig {
                hidden: agent.config().hidden.clone(),
                head_hidden: head,
                ..DqnConfig::default()
            },
            INPUTS,
            ACTIONS,
            3,
        )
        .unwrap();
        let terminal = Batch {
            terminal: vec![true; BATCH],
            ..batch.clone()
        };
        group.bench_function(format!("train32_terminal_{name}"), |b| {
            b.iter(|| black_box(routing.train_on(black_box(&terminal))))
        });
    }
    group.finish();
}

#[cfg(feature = "candle")]
mod candle_net {
    //! The same network, loss and update with candle (CPU, f32): autograd for the backward
    //! pass, candle-nn's AdamW with weight decay 0 (= Adam), clipping by hand on the
    //! gradient store.

    use candle_core::{D, DType, Device, Result, Tensor, backprop::GradStore};
    use candle_nn::{AdamW, Linear, Module, Optimizer, ParamsAdamW, VarBuilder, VarMap, linear};

    pub struct Net {
        encoder: Vec<Linear>,
        value: [Linear; 2],
        advantage: [Linear; 2],
    }

    impl Net {
        pub fn new(vb: VarBuilder, inputs: usize, hidden: &[usize], head: usize) -> Result<Self> {
            let mut encoder = Vec::new();
            let mut width = inputs;
            for (k, &h) in hidden.iter().enumerate() {
                encoder.push(linear(width, h, vb.pp(format!("enc{k}")))?);
                width = h;
            }
            Ok(Net {
                encoder,
                value: [
                    linear(width, head, vb.pp("v0"))?,
                    linear(head, 1, vb.pp("v1"))?,
                ],
                advantage: [
                    linear(width, head, vb.pp("a0"))?,
                    linear(head, super::ACTIONS, vb.pp("a1"))?,
                ],
            })
        }

        pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
            let mut h = x.clone();
            for l in &self.encoder {
                h = l.forward(&h)?.relu()?;
            }
            let v = self.value[1].forward(&self.value[0].forward(&h)?.relu()?)?;
            let a = self.advantage[1].forward(&self.advantage[0].forward(&h)?.relu()?)?;
            v.broadcast_add(&a.broadcast_sub(&a.mean_keepdim(1)?)?)
        }
    }

    pub struct Trainer {
        pub online: Net,
        online_vars: VarMap,
        target: Net,
        opt: AdamW,
        pub obs: Tensor,
        next_obs: Tensor,
        actions: Tensor,
        rewards: Tensor,
    }

    impl Trainer {
        pub fn new(hidden: &[usize], head: usize, batch: &super::Batch) -> Result<Self> {
            let dev = Device::Cpu;
            let online_vars = VarMap::new();
            let online = Net::new(
                VarBuilder::from_varmap(&online_vars, DType::F32, &dev),
                super::INPUTS,
                hidden,
                head,
            )?;
            let target_vars = VarMap::new();
            let target = Net::new(
                VarBuilder::from_varmap(&target_vars, DType::F32, &dev),
                super::INPUTS,
                hidden,
                head,
            )?;
            let opt = AdamW::new(
                online_vars.all_vars(),
                ParamsAdamW {
                    lr: 5e-4,
                    beta1: 0.9,
                    beta2: 0.999,
                    eps: 1e-8,
                    weight_decay: 0.0,
                },
            )?;
            let rows = batch.rows();
            let actions: Vec<u32> = batch.actions.iter().map(|&a| a as u32).collect();
            Ok(Trainer {
                online,
                online_vars,
                target,
                opt,
                obs: Tensor::from_slice(&batch.obs, (rows, super::INPUTS), &dev)?,
                next_obs: Tensor::from_slice(&batch.next_obs, (rows, super::INPUTS), &dev)?,
                actions: Tensor::from_slice(&actions, (rows, 1), &dev)?,
                rewards: Tensor::from_slice(&batch.rewards, rows, &dev)?,
            })
        }

        /// Double-DQN targets, Huber loss, backward, clipping to norm 40, Adam.
        pub fn step(&mut self) -> Result<f32> {
            let next_online = self.online.forward(&self.next_obs)?.detach();
            let best = next_online.argmax_keepdim(D::Minus1)?;
            let next_q = self
                .target
                .forward(&self.next_obs)?
                .gather(&best, 1)?
                .squeeze(1)?;
            let targets = (&self.rewards + (next_q * 0.99)?)?.detach();
            let q = self.online.forward(&self.obs)?;
            let taken = q.gather(&self.actions, 1)?.squeeze(1)?;
            let err = (taken - targets)?.abs()?;
            let quad = err.clamp(0f32, 1f32)?;
            let loss = ((quad.sqr()? * 0.5)? + (err - quad)?)?.mean_all()?;
            let mut grads = loss.backward()?;
            clip(&mut grads, &self.online_vars, 40.0)?;
            self.opt.step(&grads)?;
            loss.to_scalar::<f32>()
        }
    }

    fn clip(grads: &mut GradStore, vars: &VarMap, max_norm: f32) -> Result<()> {
        let vars = vars.all_vars();
        let mut total = 0.0f32;
        for v in &vars {
            if let Some(g) = grads.get(v.as_tensor()) {
                total += g.sqr()?.sum_all()?.to_scalar::<f32>()?;
            }
        }
        let norm = total.sqrt();
        if norm > max_norm {
            let scale = (max_norm / norm) as f64;
            for v in &vars {
                if let Some(g) = grads.remove(v.as_tensor()) {
                    grads.insert(v.as_tensor(), (g * scale)?);
                }
            }
        }
        Ok(())
    }
}

#[cfg(feature = "candle")]
fn candle(c: &mut Criterion) {
    use candle_core::{Device, Tensor};
    let mut group = c.benchmark_group("nn_candle");
    group.sample_size(20);
    for (name, hidden, head) in [("paper", vec![256, 256], 256), ("small", vec![64], 64)] {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let batch = batch(&mut rng);
        let mut trainer = candle_net::Trainer::new(&hidden, head, &batch).unwrap();
        let obs =
            Tensor::from_slice(&observations(1, &mut rng), (1, INPUTS), &Device::Cpu).unwrap();
        group.bench_function(format!("forward1_{name}"), |b| {
            b.iter(|| {
                let q = trainer.online.forward(black_box(&obs)).unwrap();
                black_box(q.to_vec2::<f32>().unwrap()[0][0])
            })
        });
        group.bench_function(format!("train32_{name}"), |b| {
            b.iter(|| black_box(trainer.step().unwrap()))
        });
    }
    group.finish();
}

#[cfg(feature = "candle")]
criterion_group!(benches, hand_written, candle);
#[cfg(not(feature = "candle"))]
criterion_group!(benches, hand_written);
criterion_main!(benches);
