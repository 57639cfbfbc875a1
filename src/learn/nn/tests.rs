//! Gradient checks against an independent f64 reference, Adam and clipping by hand, and a
//! regression that training must solve.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;

/// Independent f64 forward pass of one row, reading the layers through `param_groups`
/// (input-major weights) rather than through the network's own code: (V, A).
fn reference_streams(net: &DuelingNet, params: &[f64], x: &[f64]) -> (f64, Vec<f64>) {
    let groups = net.param_groups();
    let group = |name: &str| {
        groups
            .iter()
            .find(|g| g.name == name)
            .map(|g| &params[g.range.clone()])
    };
    let dense = |prefix: &str, x: &[f64], relu: bool| -> Vec<f64> {
        let w = group(&format!("{prefix}.weight")).unwrap();
        let b = group(&format!("{prefix}.bias")).unwrap();
        let out = b.len();
        (0..out)
            .map(|o| {
                let z = b[o] + (0..x.len()).map(|i| x[i] * w[i * out + o]).sum::<f64>();
                if relu { z.max(0.0) } else { z }
            })
            .collect()
    };
    let mut h = x.to_vec();
    for k in 0..net.shape().hidden.len() {
        h = dense(&format!("encoder.{k}"), &h, true);
    }
    let stream = |name: &str| {
        let depth = (0..)
            .take_while(|k| group(&format!("{name}.{k}.weight")).is_some())
            .count();
        let mut s = h.clone();
        for k in 0..depth {
            s = dense(&format!("{name}.{k}"), &s, k + 1 < depth);
        }
        s
    };
    (stream("value")[0], stream("advantage"))
}

fn reference_q(net: &DuelingNet, params: &[f64], x: &[f64]) -> Vec<f64> {
    let (v, a) = reference_streams(net, params, x);
    let mean = a.iter().sum::<f64>() / a.len() as f64;
    a.iter().map(|&a| v + a - mean).collect()
}

fn reference_loss(loss: Loss, q_taken: f64, target: f64) -> f64 {
    let e = q_taken - target;
    match loss {
        Loss::Huber if e.abs() <= 1.0 => 0.5 * e * e,
        Loss::Huber => e.abs() - 0.5,
        Loss::Mse => e * e,
    }
}

fn random_vec(rng: &mut ChaCha8Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

fn shapes() -> Vec<NetShape> {
    let shape = |inputs, hidden: &[usize], head_hidden, actions| NetShape {
        inputs,
        hidden: hidden.to_vec(),
        head_hidden,
        actions,
    };
    vec![
        shape(5, &[6, 5], 4, 3),
        shape(4, &[7], 5, 4),
        shape(3, &[], 4, 2),
        shape(4, &[5], 0, 3),
    ]
}

/// Compares the analytic gradient of `objective` (a function of the batch's Q-values given
/// as f64 and as dLoss/dQ in f32) with central differences of the f64 reference, parameter
/// by parameter, and requires every parameter group to carry some gradient.
fn check_gradient(
    net: &DuelingNet,
    x: &[f32],
    objective: &dyn Fn(&[f64]) -> f64,
    dq: &[f32],
) -> usize {
    check_gradient_every(net, x, objective, dq, 1)
}

/// `check_gradient` on every `stride`-th parameter of each group (wide networks).
fn check_gradient_every(
    net: &DuelingNet,
    x: &[f32],
    objective: &dyn Fn(&[f64]) -> f64,
    dq: &[f32],
    stride: usize,
) -> usize {
    let n_in = net.shape().inputs;
    let mut ws = Workspace::new();
    net.forward(&mut ws, x);
    let mut grads = vec![0.0; net.num_params()];
    net.backward(&mut ws, dq, &mut grads);

    let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let eval = |params: &[f64]| {
        let q: Vec<f64> = x64
            .chunks_exact(n_in)
            .flat_map(|row| reference_q(net, params, row))
            .collect();
        objective(&q)
    };
    let mut params: Vec<f64> = net.params().iter().map(|&p| p as f64).collect();
    let h = 1e-6;
    let mut checked = 0;
    for group in net.param_groups() {
        let mut largest = 0.0f64;
        for p in group.range.clone().step_by(stride) {
            let saved = params[p];
            params[p] = saved + h;
            let up = eval(&params);
            params[p] = saved - h;
            let down = eval(&params);
            params[p] = saved;
            let numeric = (up - down) / (2.0 * h);
            let analytic = grads[p] as f64;
            let tol = 1e-4 + 2e-3 * numeric.abs().max(analytic.abs());
            assert!(
                (numeric - analytic).abs() <= tol,
                "{} [{}]: analytic {analytic} vs numeric {numeric}",
                group.name,
                p - group.range.start
            );
            largest = largest.max(numeric.abs());
            checked += 1;
        }
        assert!(
            largest > 1e-3,
            "{}: no gradient reaches this group",
            group.name
        );
    }
    checked
}

#[test]
fn forward_matches_reference_and_rows_are_independent() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for (s, shape) in shapes().into_iter().enumerate() {
        let init = if s % 2 == 0 {
            Init::TorchDefault
        } else {
            Init::HeUniform
        };
        let net = DuelingNet::new(shape.clone(), init, &mut rng);
        let x = random_vec(&mut rng, 6 * shape.inputs, -1.0, 1.0);
        let mut ws = Workspace::new();
        let batch = net.forward(&mut ws, &x).to_vec();
        let params: Vec<f64> = net.params().iter().map(|&p| p as f64).collect();
        let mut single = Workspace::new();
        for (row, qb) in x
            .chunks_exact(shape.inputs)
            .zip(batch.chunks_exact(shape.actions))
        {
            assert_eq!(net.forward(&mut single, row), qb);
            let row64: Vec<f64> = row.iter().map(|&v| v as f64).collect();
            for (r, &q) in reference_q(&net, &params, &row64).iter().zip(qb) {
                assert!((r - q as f64).abs() < 1e-5, "{shape:?}: {r} vs {q}");
            }
        }
    }
}

#[test]
fn dueling_head_subtracts_the_mean_advantage() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let net = DuelingNet::new(NetShape::paper(), Init::TorchDefault, &mut rng);
    let x = random_vec(&mut rng, 13, 0.0, 1.0);
    let params: Vec<f64> = net.params().iter().map(|&p| p as f64).collect();
    let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let (v, a) = reference_streams(&net, &params, &x64);
    let mean_a = a.iter().sum::<f64>() / 4.0;
    let mut ws = Workspace::new();
    let q = net.forward(&mut ws, &x);
    // mean(Q) = V, and Q minus its mean is the centred advantage.
    let mean_q = q.iter().sum::<f32>() as f64 / 4.0;
    assert!((mean_q - v).abs() < 1e-5, "mean Q {mean_q} vs V {v}");
    for (&q, a) in q.iter().zip(&a) {
        assert!(((q as f64 - mean_q) - (a - mean_a)).abs() < 1e-5);
    }
    assert!(
        a.iter().any(|&a| (a - mean_a).abs() > 1e-3),
        "advantages differ"
    );
}

#[test]
fn gradient_of_every_q_output_matches_central_differences() {
    // A linear functional of all Q-values reaches the advantage of every action, so this
    // checks the mean subtraction's gradient, not only the taken action's path.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for shape in shapes() {
        let net = DuelingNet::new(shape.clone(), Init::TorchDefault, &mut rng);
        let rows = 4;
        let x = random_vec(&mut rng, rows * shape.inputs, -1.0, 1.0);
        let c = random_vec(&mut rng, rows * shape.actions, -1.0, 1.0);
        let objective = |q: &[f64]| q.iter().zip(&c).map(|(q, &c)| q * c as f64).sum();
        let checked = check_gradient(&net, &x, &objective, &c);
        assert_eq!(checked, net.num_params());
    }
}

#[test]
fn gradient_of_huber_and_mse_losses_matches_central_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for loss in [Loss::Huber, Loss::Mse] {
        for shape in shapes() {
            // He init has zero biases: a row whose ReLUs are all off puts the next layer
            // exactly on its kink, where central differences are meaningless.
            let net = DuelingNet::new(shape.clone(), Init::TorchDefault, &mut rng);
            let rows = 8;
            let x = random_vec(&mut rng, rows * shape.inputs, -1.0, 1.0);
            let actions: Vec<usize> = (0..rows).map(|b| b % shape.actions).collect();
            let mut ws = Workspace::new();
            let q = net.forward(&mut ws, &x).to_vec();
            // Errors on both sides of Huber's switch at |e| = 1, and of both signs.
            let errors = [2.5, -0.3, -1.7, 0.6, -0.9, 1.3, 0.2, -2.2];
            let targets: Vec<f32> = (0..rows)
                .map(|b| q[b * shape.actions + actions[b]] - errors[b])
                .collect();
            let mut dq = vec![0.0; q.len()];
            let value = loss.evaluate(&q, &actions, &targets, &mut dq);
            let n_act = shape.actions;
            let objective = |q: &[f64]| {
                let total: f64 = (0..rows)
                    .map(|b| reference_loss(loss, q[b * n_act + actions[b]], targets[b] as f64))
                    .sum();
                total / rows as f64
            };
            let q64: Vec<f64> = q.iter().map(|&v| v as f64).collect();
            assert!((objective(&q64) - value as f64).abs() < 1e-5);
            check_gradient(&net, &x, &objective, &dq);
        }
    }
}

/// Wider than a register tile (64) and not a multiple of it, so that both the tiled loops
/// and their remainders run.
fn wide_shape() -> NetShape {
    NetShape {
        inputs: 13,
        hidden: vec![70, 130],
        head_hidden: 66,
        actions: 4,
    }
}

#[test]
fn wide_network_matches_reference_and_central_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let net = DuelingNet::new(wide_shape(), Init::TorchDefault, &mut rng);
    let rows = 3;
    let x = random_vec(&mut rng, rows * 13, -1.0, 1.0);
    let mut ws = Workspace::new();
    let q = net.forward(&mut ws, &x).to_vec();
    let params: Vec<f64> = net.params().iter().map(|&p| p as f64).collect();
    for (row, qr) in x.chunks_exact(13).zip(q.chunks_exact(4)) {
        let row64: Vec<f64> = row.iter().map(|&v| v as f64).collect();
        for (r, &q) in reference_q(&net, &params, &row64).iter().zip(qr) {
            assert!((r - q as f64).abs() < 1e-5, "{r} vs {q}");
        }
    }
    let c = random_vec(&mut rng, rows * 4, -1.0, 1.0);
    let objective = |q: &[f64]| q.iter().zip(&c).map(|(q, &c)| q * c as f64).sum();
    let checked = check_gradient_every(&net, &x, &objective, &c, 7);
    assert!(checked > net.num_params() / 8);
}

#[test]
fn avx2_and_baseline_kernels_agree_bit_for_bit() {
    use super::dense::{backward, backward_kernel, forward, forward_kernel};
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let (fan_in, fan_out, rows) = (70, 133, 5);
    let w = random_vec(&mut rng, fan_in * fan_out, -0.3, 0.3);
    let bias = random_vec(&mut rng, fan_out, -0.3, 0.3);
    // ReLU-like inputs: about half exactly zero.
    let x: Vec<f32> = random_vec(&mut rng, rows * fan_in, -1.0, 1.0)
        .into_iter()
        .map(|v| v.max(0.0))
        .collect();
    let (mut y1, mut y2) = (vec![0.0; rows * fan_out], vec![0.0; rows * fan_out]);
    forward(&w, &bias, &x, &mut y1, true);
    forward_kernel(&w, &bias, &x, &mut y2, true);
    assert_eq!(y1, y2);
    let dy = random_vec(&mut rng, rows * fan_out, -1.0, 1.0);
    let run = |kernel: bool| {
        let mut gw = vec![0.0; w.len()];
        let mut gb = vec![0.0; fan_out];
        let mut dx = vec![0.0; x.len()];
        let mut wt = Vec::new();
        if kernel {
            backward_kernel(&w, &x, &dy, &mut gw, &mut gb, Some(&mut dx), &mut wt);
        } else {
            backward(&w, &x, &dy, &mut gw, &mut gb, Some(&mut dx), &mut wt);
        }
        (gw, gb, dx)
    };
    let (a, b) = (run(false), run(true));
    assert_eq!(a, b);
    // And both are right: dx is zero exactly where the input is.
    for (d, &xi) in a.2.iter().zip(&x) {
        assert_eq!(*d == 0.0, xi == 0.0);
    }
}

#[test]
fn initialisation_draws_within_the_bounds() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for init in [Init::TorchDefault, Init::HeUniform] {
        let net = DuelingNet::new(NetShape::paper(), init, &mut rng);
        assert_eq!(
            net.num_params(),
            13 * 256 + 256 + 256 * 256 + 256 + 2 * (256 * 256 + 256) + 257 + 256 * 4 + 4
        );
        for group in net.param_groups() {
            let fan_in = match group.name.as_str() {
                n if n.starts_with("encoder.0") => 13.0f32,
                _ => 256.0,
            };
            let bound = match init {
                Init::TorchDefault => 1.0 / fan_in.sqrt(),
                Init::HeUniform => (6.0 / fan_in).sqrt(),
            };
            let p = &net.params()[group.range.clone()];
            let largest = p.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            assert!(largest <= bound, "{}: {largest} > {bound}", group.name);
            if init == Init::HeUniform && group.name.ends_with("bias") {
                assert_eq!(largest, 0.0, "{}", group.name);
            } else if p.len() >= 200 {
                // Uniform: the largest of many draws comes close to the bound.
                assert!(
                    largest > 0.95 * bound,
                    "{}: {largest} vs {bound}",
                    group.name
                );
                let mean = p.iter().sum::<f32>() / p.len() as f32;
                assert!(mean.abs() < 0.2 * bound, "{}: mean {mean}", group.name);
            }
        }
    }
}

#[test]
fn adam_matches_hand_computed_steps() {
    let mut params = [1.0f32, -2.0];
    let mut adam = Adam::new(2, 0.1);
    adam.step(&mut params, &[0.5, -0.1]);
    assert!((params[0] - 0.9).abs() < 1e-6 && (params[1] + 1.9).abs() < 1e-6);
    adam.step(&mut params, &[0.2, 0.3]);
    // m = 0.9 m + 0.1 g, v = 0.999 v + 0.001 g^2, p -= lr m/(1-0.9^2) / sqrt(v/(1-0.999^2)),
    // worked out by hand for these gradients.
    assert!((params[0] - 0.810_142_5).abs() < 1e-6, "{}", params[0]);
    assert!((params[1] + 1.949_419).abs() < 1e-6, "{}", params[1]);
    assert_eq!(adam.steps(), 2);
}

#[test]
fn clipping_scales_to_the_max_norm_and_leaves_small_gradients() {
    let mut g = [3.0f32, 4.0];
    assert_eq!(clip_grad_norm(&mut g, 1.0), 5.0);
    assert!((g[0] - 0.6).abs() < 1e-7 && (g[1] - 0.8).abs() < 1e-7);
    let mut small = [0.3f32, 0.4];
    assert_eq!(clip_grad_norm(&mut small, 1.0), 0.5);
    assert_eq!(small, [0.3, 0.4]);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut big = random_vec(&mut rng, 100_003, -1.0, 1.0);
    let direction = big.clone();
    let before = clip_grad_norm(&mut big, 40.0);
    assert!(before > 100.0);
    assert!((grad_norm(&big) - 40.0).abs() < 1e-3);
    // Same direction: every component scaled by one factor.
    let scale = 40.0 / before;
    for (g, d) in big.iter().zip(&direction) {
        assert!((g - d * scale).abs() < 1e-6);
    }
}

#[test]
fn training_fits_a_fixed_regression() {
    // Q-targets that a linear model cannot fit: a product, an absolute value, a maximum.
    let target = |x: &[f32]| {
        [
            x[0] * x[1],
            (x[2] - x[3]).abs(),
            x[4].max(x[5]) - 0.5,
            x[6] + x[7] * x[7],
        ]
    };
    let shape = NetShape {
        inputs: 13,
        hidden: vec![64],
        head_hidden: 64,
        actions: 4,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut net = DuelingNet::new(shape, Init::TorchDefault, &mut rng);
    let mut adam = Adam::new(net.num_params(), 5e-3);
    let mut ws = Workspace::new();
    let mut grads = vec![0.0; net.num_params()];
    let test_x = random_vec(&mut rng, 256 * 13, -1.0, 1.0);
    let test_loss = |net: &DuelingNet, ws: &mut Workspace| {
        let q = net.forward(ws, &test_x);
        let mut total = 0.0;
        for (row, qr) in test_x.chunks_exact(13).zip(q.chunks_exact(4)) {
            for (t, q) in target(row).iter().zip(qr) {
                total += (t - q) * (t - q);
            }
        }
        total / q.len() as f32
    };
    let before = test_loss(&net, &mut ws);
    let rows = 32;
    for step in 0..1500 {
        let x = random_vec(&mut rng, rows * 13, -1.0, 1.0);
        let actions: Vec<usize> = (0..rows).map(|b| (b + step) % 4).collect();
        let targets: Vec<f32> = x
            .chunks_exact(13)
            .zip(&actions)
            .map(|(row, &a)| target(row)[a])
            .collect();
        let q = net.forward(&mut ws, &x).to_vec();
        let mut dq = vec![0.0; q.len()];
        Loss::Mse.evaluate(&q, &actions, &targets, &mut dq);
        grads.fill(0.0);
        net.backward(&mut ws, &dq, &mut grads);
        clip_grad_norm(&mut grads, 40.0);
        adam.step(net.params_mut(), &grads);
    }
    let after = test_loss(&net, &mut ws);
    assert!(
        after < 0.1 * before && after < 0.01,
        "held-out MSE {before} -> {after}"
    );
}
