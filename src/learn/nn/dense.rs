//! Kernels of one dense layer over a batch of rows.
//!
//! Weights are stored input-major (`w[i * fan_out + o]`): the forward pass and the weight
//! gradient are then axpys over the outputs, which the compiler vectorises as they are (a sum
//! it would have to reassociate is never needed). The one real reduction, the input gradient,
//! uses `LANES` independent partial sums for the same reason.

/// Partial sums of a dot product: 16 lanes fill two AVX or four SSE registers, enough
/// independent chains to hide the add latency.
const LANES: usize = 16;

/// `y += a * x`.
#[inline(always)]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// Dot product with `LANES` partial sums (summation order is fixed, so results are
/// deterministic).
#[inline(always)]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0f32; LANES];
    let ca = a.chunks_exact(LANES);
    let cb = b.chunks_exact(LANES);
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (ca, cb) in ca.zip(cb) {
        for k in 0..LANES {
            acc[k] += ca[k] * cb[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Sum of squares with `LANES` partial sums.
pub(crate) fn sum_squares(a: &[f32]) -> f32 {
    dot(a, a)
}

/// Forward pass of the rows of `x` (`rows x fan_in`) into `y` (`rows x fan_out`), ReLU if
/// `relu`. Zero inputs are skipped: after a ReLU about half of them are zero.
pub(crate) fn forward(w: &[f32], bias: &[f32], x: &[f32], y: &mut [f32], relu: bool) {
    let fan_out = bias.len();
    let fan_in = w.len() / fan_out;
    debug_assert_eq!(x.len() / fan_in, y.len() / fan_out);
    for (xr, yr) in x.chunks_exact(fan_in).zip(y.chunks_exact_mut(fan_out)) {
        yr.copy_from_slice(bias);
        for (&xi, wr) in xr.iter().zip(w.chunks_exact(fan_out)) {
            if xi != 0.0 {
                axpy(xi, wr, yr);
            }
        }
        if relu {
            for v in yr.iter_mut() {
                *v = v.max(0.0);
            }
        }
    }
}

/// Backward pass: `dy` is dLoss/d(pre-activation output) of this layer (`rows x fan_out`).
/// Accumulates the weight and bias gradients into `gw` and `gb`, and, when `dx` is given,
/// adds dLoss/d(pre-activation) of the layer below into it: the input `x` is then a ReLU
/// output, so only its positive entries pass a gradient (the others are skipped, not
/// computed and masked).
pub(crate) fn backward(
    w: &[f32],
    x: &[f32],
    dy: &[f32],
    gw: &mut [f32],
    gb: &mut [f32],
    dx: Option<&mut [f32]>,
) {
    let fan_out = gb.len();
    let fan_in = w.len() / fan_out;
    for (xr, dyr) in x.chunks_exact(fan_in).zip(dy.chunks_exact(fan_out)) {
        axpy(1.0, dyr, gb);
        for (&xi, gwr) in xr.iter().zip(gw.chunks_exact_mut(fan_out)) {
            if xi != 0.0 {
                axpy(xi, dyr, gwr);
            }
        }
    }
    if let Some(dx) = dx {
        for ((xr, dyr), dxr) in x
            .chunks_exact(fan_in)
            .zip(dy.chunks_exact(fan_out))
            .zip(dx.chunks_exact_mut(fan_in))
        {
            for ((&xi, wr), d) in xr.iter().zip(w.chunks_exact(fan_out)).zip(dxr) {
                if xi > 0.0 {
                    *d += dot(wr, dyr);
                }
            }
        }
    }
}
