//! A primal-dual interior point (Mehrotra's predictor-corrector) for column generation's
//! master LP, built on its structure:
//!
//! * variables: the share `x_j >= 0` of each path, the max load `t >= 0`, a slack `s_c >= 0`
//!   per channel some path uses;
//! * rows: `sum_{j in pair} x_j = 1` per pair, `sum_j a_cj x_j - t + s_c = 0` per channel,
//!   with `a_cj = demand / bandwidth_c` on the channels of path `j`; minimise `t`.
//!
//! Its normal matrix `A D A^T` is diagonal in the pair rows, so they are eliminated exactly:
//! what remains is a dense matrix over the channels (a path couples every channel it crosses),
//! factored by a blocked dense Cholesky (`dense.rs`). The pair elimination is written as a
//! weighted covariance per pair, `sum_j D_j (a_j - mean)(a_j - mean)^T`, which stays accurate
//! when one path of a pair carries nearly all of it (the usual `sum D a a^T - v v^T / g`
//! cancels catastrophically there).
//!
//! Why not Clarabel: its sparse LDL of the same system fills in to nearly dense without
//! dense kernels, and was 99% of the 32x32 mesh transpose's run (docs/bounds.md).

use super::dense::Dense;

/// One pair of the master: its demand (scaled to O(1)) and its paths as channel indices.
pub(super) struct MasterPair<'a> {
    pub demand: f64,
    pub columns: &'a [Vec<usize>],
}

/// The solution of [`solve`].
pub(super) struct PathLpSolution {
    /// Share of each path, per pair (as solved: may be slightly negative or not sum to 1).
    pub shares: Vec<Vec<f64>>,
    /// Dual weight (>= 0) of every channel row, 0 for channels no path uses.
    pub weights: Vec<f64>,
    /// The dual objective: with the dual residual at rounding level, a lower bound on the
    /// optimum (weak duality), within the gap tolerance of it.
    pub dual_objective: f64,
}

/// Relative duality gap, and primal and dual infeasibility, at which the solve stops. The
/// caller renormalises the shares and certifies its bounds itself, so residuals of 1e-6 cost
/// nothing; tighter ones the normal equations do not always reach (near the optimum `D_t`
/// and the slacks' `D` span many orders of magnitude: on the 32x32 mesh transpose's first
/// master the primal residual wandered between 5e-8 and 7e-7 once the objective had
/// converged).
const GAP_TOLERANCE: f64 = 1e-8;
const FEASIBILITY_TOLERANCE: f64 = 1e-6;
/// Iterations before giving up (Mehrotra's method takes 15-40 on these LPs).
const MAX_ITERATIONS: usize = 100;
/// Fraction of the step to the boundary taken.
const STEP: f64 = 0.995;

/// The LP's data in the interior point's own indexing.
struct Lp<'a> {
    pairs: &'a [MasterPair<'a>],
    /// Channel index (into `bandwidth`) of each compact channel row.
    rows: Vec<usize>,
    /// `1 / bandwidth` per compact channel row.
    inv_cap: Vec<f64>,
    /// Per pair: the compact channel rows its paths use (sorted), and per path the positions
    /// of its channels in that list.
    union: Vec<Vec<usize>>,
    local: Vec<Vec<Vec<usize>>>,
    /// Index of the pair's first path among the `x` variables.
    first: Vec<usize>,
    /// Path variables.
    nx: usize,
}

impl Lp<'_> {
    fn m(&self) -> usize {
        self.rows.len()
    }

    fn p(&self) -> usize {
        self.pairs.len()
    }

    /// Variables: `x` (paths), then `t`, then one slack per channel row.
    fn nvars(&self) -> usize {
        self.nx + 1 + self.m()
    }

    /// `a_cj` of path `j` of pair `p` on its `i`-th channel (a compact row).
    #[inline]
    fn coef(&self, p: usize, row: usize) -> f64 {
        self.pairs[p].demand * self.inv_cap[row]
    }

    /// `A z` as (pair rows, channel rows).
    fn times(&self, z: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let m = self.m();
        let mut rp = vec![0.0; self.p()];
        let mut rc = vec![0.0; m];
        for p in 0..self.p() {
            for (k, path) in self.local[p].iter().enumerate() {
                let x = z[self.first[p] + k];
                rp[p] += x;
                for &i in path {
                    let row = self.union[p][i];
                    rc[row] += self.coef(p, row) * x;
                }
            }
        }
        let t = z[self.nx];
        for (c, r) in rc.iter_mut().enumerate() {
            *r += z[self.nx + 1 + c] - t;
        }
        (rp, rc)
    }

    /// `A^T (yp, yc)`.
    fn times_transposed(&self, yp: &[f64], yc: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.nvars()];
        for p in 0..self.p() {
            for (k, path) in self.local[p].iter().enumerate() {
                let mut v = yp[p];
                for &i in path {
                    let row = self.union[p][i];
                    v += self.coef(p, row) * yc[row];
                }
                out[self.first[p] + k] = v;
            }
        }
        out[self.nx] = -yc.iter().sum::<f64>();
        out[self.nx + 1..].copy_from_slice(yc);
        out
    }
}

/// The normal matrix `A D A^T`, factored, with the pair rows eliminated.
struct Normal {
    schur: Dense,
    /// Per pair: `g_p = sum_j D_j` and the weighted mean `mean_p` of its paths' columns
    /// (over the pair's channel union).
    g: Vec<f64>,
    mean: Vec<Vec<f64>>,
}

impl Normal {
    fn new(lp: &Lp, d: &[f64], schur: Dense) -> Normal {
        let mut schur = schur;
        schur.clear();
        let m = lp.m();
        let mut g = vec![0.0; lp.p()];
        let mut mean = Vec::with_capacity(lp.p());
        let mut centred = Vec::new();
        for p in 0..lp.p() {
            let union = &lp.union[p];
            let dp = &d[lp.first[p]..lp.first[p] + lp.local[p].len()];
            let gp: f64 = dp.iter().sum();
            g[p] = gp;
            let mut mu = vec![0.0; union.len()];
            for (path, &dj) in lp.local[p].iter().zip(dp) {
                for &i in path {
                    mu[i] += dj / gp * lp.coef(p, union[i]);
                }
            }
            // sum_j D_j (a_j - mu)(a_j - mu)^T, lower triangle (union is sorted, so local
            // order is global order).
            for (path, &dj) in lp.local[p].iter().zip(dp) {
                centred.clear();
                centred.extend(mu.iter().map(|v| -v));
                for &i in path {
                    centred[i] += lp.coef(p, union[i]);
                }
                for (b, &row_b) in union.iter().enumerate() {
                    let eb = dj * centred[b];
                    if eb == 0.0 {
                        continue;
                    }
                    for a in b..union.len() {
                        schur.add_lower(union[a], row_b, eb * centred[a]);
                    }
                }
            }
            mean.push(mu);
        }
        // t: its column is -1 in every channel row; the slacks: +1 in their own. (Applying
        // t's dense `D_t 1 1^T` by Sherman-Morrison instead, outside the factor, diverged on
        // the 32x32 mesh transpose: without it the matrix is nearly singular.)
        let dt = d[lp.nx];
        for b in 0..m {
            for a in b..m {
                schur.add_lower(a, b, dt);
            }
            schur.add_lower(b, b, d[lp.nx + 1 + b]);
        }
        schur.cholesky();
        Normal { schur, g, mean }
    }

    /// Solves `A D A^T (yp, yc) = (rp, rc)` with the factor.
    fn solve(&self, lp: &Lp, rp: &[f64], rc: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut yc = rc.to_vec();
        for ((union, mean), r) in lp.union.iter().zip(&self.mean).zip(rp) {
            for (&row, mu) in union.iter().zip(mean) {
                yc[row] -= mu * r;
            }
        }
        self.schur.solve(&mut yc);
        let yp = (0..lp.p())
            .map(|p| {
                let dot: f64 = lp.union[p]
                    .iter()
                    .zip(&self.mean[p])
                    .map(|(&row, mu)| mu * yc[row])
                    .sum();
                rp[p] / self.g[p] - dot
            })
            .collect();
        (yp, yc)
    }
}

/// Solves the master over `pairs` on a network of `bandwidth.len()` channels. None if the
/// interior point did not converge (the caller falls back to a general solver).
pub(super) fn solve(bandwidth: &[f64], pairs: &[MasterPair]) -> Option<PathLpSolution> {
    // Compact channel rows: the channels some path uses.
    let mut row_of = vec![usize::MAX; bandwidth.len()];
    let mut rows = Vec::new();
    for pair in pairs {
        for col in pair.columns {
            for &e in col {
                if row_of[e] == usize::MAX {
                    row_of[e] = rows.len();
                    rows.push(e);
                }
            }
        }
    }
    let mut first = Vec::with_capacity(pairs.len());
    let mut union = Vec::with_capacity(pairs.len());
    let mut local = Vec::with_capacity(pairs.len());
    let mut nx = 0;
    for pair in pairs {
        first.push(nx);
        nx += pair.columns.len();
        let mut u: Vec<usize> = pair
            .columns
            .iter()
            .flat_map(|c| c.iter().map(|&e| row_of[e]))
            .collect();
        u.sort_unstable();
        u.dedup();
        let loc = pair
            .columns
            .iter()
            .map(|c| {
                c.iter()
                    .map(|&e| u.binary_search(&row_of[e]).expect("in union"))
                    .collect()
            })
            .collect();
        union.push(u);
        local.push(loc);
    }
    let lp = Lp {
        pairs,
        inv_cap: rows.iter().map(|&e| 1.0 / bandwidth[e]).collect(),
        rows,
        union,
        local,
        first,
        nx,
    };
    let (n, m, np) = (lp.nvars(), lp.m(), lp.p());
    if np == 0 || nx == 0 {
        return None;
    }
    // b: 1 per pair row, 0 per channel row; c: 1 on t.
    let mut schur = Dense::zeros(m);

    // Mehrotra's starting point: the least-norm solutions of A z = b and A^T y + w = c,
    // shifted into the interior.
    let ones = vec![1.0; n];
    let normal = Normal::new(&lp, &ones, schur);
    let (yp0, yc0) = normal.solve(&lp, &vec![1.0; np], &vec![0.0; m]);
    let mut z = lp.times_transposed(&yp0, &yc0);
    let mut c = vec![0.0; n];
    c[nx] = 1.0;
    let (ac_p, ac_c) = lp.times(&c);
    let (mut yp, mut yc) = normal.solve(&lp, &ac_p, &ac_c);
    schur = normal.schur;
    let aty = lp.times_transposed(&yp, &yc);
    let mut w: Vec<f64> = c.iter().zip(&aty).map(|(c, a)| c - a).collect();
    let shift_z = (-1.5 * z.iter().copied().fold(f64::INFINITY, f64::min)).max(0.0);
    let shift_w = (-1.5 * w.iter().copied().fold(f64::INFINITY, f64::min)).max(0.0);
    z.iter_mut().for_each(|v| *v += shift_z);
    w.iter_mut().for_each(|v| *v += shift_w);
    let zw: f64 = z.iter().zip(&w).map(|(a, b)| a * b).sum();
    let (sz, sw): (f64, f64) = (z.iter().sum(), w.iter().sum());
    let (dz, dw) = (0.5 * zw / sw.max(1e-300), 0.5 * zw / sz.max(1e-300));
    z.iter_mut().for_each(|v| *v += dz.max(1e-8));
    w.iter_mut().for_each(|v| *v += dw.max(1e-8));

    for _ in 0..MAX_ITERATIONS {
        // Residuals: rp = b - A z, rd = c - A^T y - w.
        let (az_p, az_c) = lp.times(&z);
        let rp_p: Vec<f64> = az_p.iter().map(|v| 1.0 - v).collect();
        let rp_c: Vec<f64> = az_c.iter().map(|v| -v).collect();
        let aty = lp.times_transposed(&yp, &yc);
        let rd: Vec<f64> = (0..n).map(|i| c[i] - aty[i] - w[i]).collect();
        let primal = z[nx];
        let dual: f64 = yp.iter().sum();
        let inf = |v: &[f64]| v.iter().fold(0.0_f64, |a, b| a.max(b.abs()));
        let converged = inf(&rp_p).max(inf(&rp_c)) <= FEASIBILITY_TOLERANCE
            && inf(&rd) <= FEASIBILITY_TOLERANCE
            && (primal - dual).abs() <= GAP_TOLERANCE * (1.0 + primal.abs());
        if converged {
            return Some(solution(&lp, bandwidth.len(), &z, &yc, dual));
        }
        if !z.iter().chain(&w).all(|v| v.is_finite()) {
            return None;
        }
        let mu = z.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() / n as f64;
        let d: Vec<f64> = z.iter().zip(&w).map(|(a, b)| a / b).collect();
        let normal = Normal::new(&lp, &d, schur);
        // The Newton direction for complementarity right-hand side `rxs`:
        // A D A^T dy = rp + A (D rd - rxs / w), dw = rd - A^T dy, dz = (rxs - z dw) / w.
        let direction = |rxs: &[f64]| {
            let t: Vec<f64> = (0..n).map(|i| d[i] * rd[i] - rxs[i] / w[i]).collect();
            let (at_p, at_c) = lp.times(&t);
            let r_p: Vec<f64> = rp_p.iter().zip(&at_p).map(|(a, b)| a + b).collect();
            let r_c: Vec<f64> = rp_c.iter().zip(&at_c).map(|(a, b)| a + b).collect();
            let (dyp, dyc) = normal.solve(&lp, &r_p, &r_c);
            let atdy = lp.times_transposed(&dyp, &dyc);
            let dw: Vec<f64> = (0..n).map(|i| rd[i] - atdy[i]).collect();
            let dz: Vec<f64> = (0..n).map(|i| (rxs[i] - z[i] * dw[i]) / w[i]).collect();
            (dz, dyp, dyc, dw)
        };
        let to_boundary = |v: &[f64], dv: &[f64]| {
            v.iter()
                .zip(dv)
                .filter(|&(_, &d)| d < 0.0)
                .map(|(x, d)| -x / d)
                .fold(f64::INFINITY, f64::min)
        };
        // Predictor (affine scaling), then the centring and second-order corrector.
        let rxs: Vec<f64> = z.iter().zip(&w).map(|(a, b)| -a * b).collect();
        let (dz_a, _, _, dw_a) = direction(&rxs);
        let ap = to_boundary(&z, &dz_a).min(1.0);
        let ad = to_boundary(&w, &dw_a).min(1.0);
        let mu_aff = (0..n)
            .map(|i| (z[i] + ap * dz_a[i]) * (w[i] + ad * dw_a[i]))
            .sum::<f64>()
            / n as f64;
        let sigma = (mu_aff / mu).powi(3).min(1.0);
        let rxs: Vec<f64> = (0..n)
            .map(|i| -z[i] * w[i] - dz_a[i] * dw_a[i] + sigma * mu)
            .collect();
        let (dz, dyp, dyc, dw) = direction(&rxs);
        schur = normal.schur;
        let ap = (STEP * to_boundary(&z, &dz)).min(1.0);
        let ad = (STEP * to_boundary(&w, &dw)).min(1.0);
        z.iter_mut().zip(&dz).for_each(|(v, d)| *v += ap * d);
        yp.iter_mut().zip(&dyp).for_each(|(v, d)| *v += ad * d);
        yc.iter_mut().zip(&dyc).for_each(|(v, d)| *v += ad * d);
        w.iter_mut().zip(&dw).for_each(|(v, d)| *v += ad * d);
    }
    None
}

fn solution(
    lp: &Lp,
    channels: usize,
    z: &[f64],
    yc: &[f64],
    dual_objective: f64,
) -> PathLpSolution {
    let shares = (0..lp.p())
        .map(|p| z[lp.first[p]..lp.first[p] + lp.local[p].len()].to_vec())
        .collect();
    let mut weights = vec![0.0; channels];
    for (row, &e) in lp.rows.iter().enumerate() {
        // The channel rows' duals are <= 0 at the optimum (their slacks' dual constraint).
        weights[e] = (-yc[row]).max(0.0);
    }
    PathLpSolution {
        shares,
        weights,
        dual_objective,
    }
}
