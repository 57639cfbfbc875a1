//! Kernels of one dense layer over a batch of rows.
//!
//! Weights are stored input-major (`w[i * fan_out + o]`): the forward pass and the weight
//! gradient are then axpys over the outputs, which the compiler vectorises as they are (a sum
//! it would have to reassociate is never needed). The input gradient is an axpy over the
//! rows of the transposed weights, transposed once per backward pass. Each keeps a `TILE` of
//! its outputs in registers while it runs over the inputs (or rows) rather than loading and
//! storing them for every one, and skips zero multipliers (half of them after a ReLU).
//! Every output is summed in input (or row) order, so tiling and skipping do not change
//! results. The one reduction, the gradient norm, uses `LANES` fixed partial sums.
//!
//! On x86-64 the kernels are compiled twice, for the baseline (SSE2) and for AVX2, and the
//! AVX2 copy is chosen at run time (docs/benchmarks.md has the gain). No FMA: every
//! element's operations and their order are the same in both copies, so results are
//! bit-identical on every x86-64 machine.

/// Partial sums of a dot product: 32 lanes are four AVX registers, enough independent
/// chains to hide the add latency (a fixed count, so the order of the sum is fixed).
const LANES: usize = 32;

/// Output columns kept in registers across a whole pass over the inputs: 64 floats are
/// eight AVX registers, which leaves room for the operands.
const TILE: usize = 64;

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
    dispatch!(dot(a, a))
}

/// Whether the AVX2 copies can run (the detection is cached by std).
#[inline]
pub(crate) fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Runs `$body` (a call of an `#[inline(always)]` kernel) in a function compiled for AVX2
/// when the CPU has it, else as compiled for the baseline.
macro_rules! dispatch {
    ($body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2")]
            unsafe fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            if $crate::learn::nn::dense::avx2() {
                // SAFETY: the CPU supports AVX2, checked just above.
                return unsafe { with_avx2(|| $body) };
            }
        }
        $body
    }};
}
pub(crate) use dispatch;

/// Forward pass of the rows of `x` (`rows x fan_in`) into `y` (`rows x fan_out`), ReLU if
/// `relu`. Zero inputs are skipped: after a ReLU about half of them are zero.
pub(crate) fn forward(w: &[f32], bias: &[f32], x: &[f32], y: &mut [f32], relu: bool) {
    dispatch!(forward_kernel(w, bias, x, y, relu))
}

#[inline(always)]
pub(super) fn forward_kernel(w: &[f32], bias: &[f32], x: &[f32], y: &mut [f32], relu: bool) {
    let fan_out = bias.len();
    let fan_in = w.len() / fan_out;
    debug_assert_eq!(x.len() / fan_in, y.len() / fan_out);
    let tiled = fan_out / TILE * TILE;
    for (xr, yr) in x.chunks_exact(fan_in).zip(y.chunks_exact_mut(fan_out)) {
        for t in (0..tiled).step_by(TILE) {
            let mut acc: [f32; TILE] = bias[t..t + TILE].try_into().unwrap();
            for (&xi, wr) in xr.iter().zip(w.chunks_exact(fan_out)) {
                if xi != 0.0 {
                    let wt: &[f32; TILE] = wr[t..t + TILE].try_into().unwrap();
                    for k in 0..TILE {
                        acc[k] += xi * wt[k];
                    }
                }
            }
            yr[t..t + TILE].copy_from_slice(&acc);
        }
        if tiled < fan_out {
            let yt = &mut yr[tiled..];
            yt.copy_from_slice(&bias[tiled..]);
            for (&xi, wr) in xr.iter().zip(w.chunks_exact(fan_out)) {
                if xi != 0.0 {
                    axpy(xi, &wr[tiled..], yt);
                }
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
/// output, so only its positive entries pass a gradient. `wt` is scratch for the
/// transposed weights.
pub(crate) fn backward(
    w: &[f32],
    x: &[f32],
    dy: &[f32],
    gw: &mut [f32],
    gb: &mut [f32],
    dx: Option<&mut [f32]>,
    wt: &mut Vec<f32>,
) {
    dispatch!(backward_kernel(w, x, dy, gw, gb, dx, wt))
}

#[inline(always)]
pub(super) fn backward_kernel(
    w: &[f32],
    x: &[f32],
    dy: &[f32],
    gw: &mut [f32],
    gb: &mut [f32],
    dx: Option<&mut [f32]>,
    wt: &mut Vec<f32>,
) {
    let fan_out = gb.len();
    let fan_in = w.len() / fan_out;
    let tiled = fan_out / TILE * TILE;
    for dyr in dy.chunks_exact(fan_out) {
        axpy(1.0, dyr, gb);
    }
    // gw[i] += sum over rows of x[b][i] * dy[b]: a tile of gw[i] stays in registers over
    // the rows.
    for (i, gwr) in gw.chunks_exact_mut(fan_out).enumerate() {
        for t in (0..tiled).step_by(TILE) {
            let mut acc: [f32; TILE] = gwr[t..t + TILE].try_into().unwrap();
            for (b, dyr) in dy.chunks_exact(fan_out).enumerate() {
                let xi = x[b * fan_in + i];
                if xi != 0.0 {
                    let dt: &[f32; TILE] = dyr[t..t + TILE].try_into().unwrap();
                    for k in 0..TILE {
                        acc[k] += xi * dt[k];
                    }
                }
            }
            gwr[t..t + TILE].copy_from_slice(&acc);
        }
        if tiled < fan_out {
            for (b, dyr) in dy.chunks_exact(fan_out).enumerate() {
                let xi = x[b * fan_in + i];
                if xi != 0.0 {
                    axpy(xi, &dyr[tiled..], &mut gwr[tiled..]);
                }
            }
        }
    }
    // dx[b] += dy[b] W^T as axpys over the rows of W^T (skipping zero dy, a tile of dx in
    // registers): dot products over the rows of W would need two loads per product.
    if let Some(dx) = dx {
        transpose(w, fan_in, fan_out, wt);
        for ((dyr, xr), dxr) in dy
            .chunks_exact(fan_out)
            .zip(x.chunks_exact(fan_in))
            .zip(dx.chunks_exact_mut(fan_in))
        {
            let tiled_in = fan_in / TILE * TILE;
            for t in (0..tiled_in).step_by(TILE) {
                let mut acc = [0.0f32; TILE];
                for (&d, wtr) in dyr.iter().zip(wt.chunks_exact(fan_in)) {
                    if d != 0.0 {
                        let wt: &[f32; TILE] = wtr[t..t + TILE].try_into().unwrap();
                        for k in 0..TILE {
                            acc[k] += d * wt[k];
                        }
                    }
                }
                let xt: &[f32; TILE] = xr[t..t + TILE].try_into().unwrap();
                let dt: &mut [f32; TILE] = (&mut dxr[t..t + TILE]).try_into().unwrap();
                for k in 0..TILE {
                    if xt[k] > 0.0 {
                        dt[k] += acc[k];
                    }
                }
            }
            for i in tiled_in..fan_in {
                if xr[i] > 0.0 {
                    let mut acc = 0.0;
                    for (&d, wtr) in dyr.iter().zip(wt.chunks_exact(fan_in)) {
                        acc += d * wtr[i];
                    }
                    dxr[i] += acc;
                }
            }
        }
    }
}

/// `wt = w^T` for `w` of `rows x cols`, by 8 x 8 blocks so that the lines read and written
/// stay in cache (measured: 10% faster than element-wise blocks).
fn transpose(w: &[f32], rows: usize, cols: usize, wt: &mut Vec<f32>) {
    const B: usize = 8;
    wt.resize(rows * cols, 0.0);
    let (full_r, full_c) = (rows / B * B, cols / B * B);
    for r0 in (0..full_r).step_by(B) {
        for c0 in (0..full_c).step_by(B) {
            let block: [[f32; B]; B] =
                std::array::from_fn(|r| w[(r0 + r) * cols + c0..][..B].try_into().unwrap());
            for c in 0..B {
                let column: [f32; B] = std::array::from_fn(|r| block[r][c]);
                wt[(c0 + c) * rows + r0..][..B].copy_from_slice(&column);
            }
        }
    }
    for r in 0..rows {
        let from = if r < full_r { full_c } else { 0 };
        for c in from..cols {
            wt[c * rows + r] = w[r * cols + c];
        }
    }
}
