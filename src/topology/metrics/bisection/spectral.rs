//! Lower bound on the bisection width from the algebraic connectivity (Fiedler value).
//!
//! For the Laplacian L (link multiplicities as weights) and any partition with |A| = k,
//! cut(A) >= lambda_2 * k * (n - k) / n, so every bisection crosses at least
//! lambda_2 * floor(n/2) * ceil(n/2) / n links. lambda_2 is computed in one of three ways:
//!
//! * **symmetric**: when a (verified) translation group acts on the routers, L commutes with
//!   it and splits into one small Hermitian block per character of the group (size = number of
//!   orbits); each block is solved as a real symmetric matrix of twice its size. Exact up to
//!   floating-point rounding, and fast even for thousands of routers.
//! * **dense**: eigenvalues of the full n x n Laplacian for small graphs (exact up to rounding).
//! * **Lanczos**: for large graphs without a usable symmetry, Lanczos with full
//!   reorthogonalisation on the complement of the all-ones vector. The smallest Ritz value theta
//!   is always >= lambda_2; we report max(0, theta - r) with r the Ritz residual. That is a
//!   lower bound on lambda_2 *assuming* the eigenvalue within r of theta is lambda_2 itself
//!   (the Lanczos process started from a random vector has not missed the bottom of the
//!   spectrum), which is why this path is labelled "certified-ish" in the report.
//!
//! Disconnected graphs have lambda_2 = 0 and are answered without any eigen-solve.

use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::topology::graph::RouterGraph;
use crate::topology::symmetry::Symmetry;

/// Largest matrix (rows) solved with a dense eigenvalue decomposition.
pub(crate) const DENSE_MAX: usize = 1000;
/// Maximum Lanczos steps.
pub(crate) const LANCZOS_MAX_STEPS: usize = 300;
/// Memory cap of the Lanczos basis (f64 entries, 200 MB): fewer steps on huge graphs.
const LANCZOS_MAX_ENTRIES: usize = 25_000_000;
/// Below this many affordable steps Lanczos is skipped (lambda_2 reported as 0).
const LANCZOS_MIN_STEPS: usize = 10;

/// How lambda_2 was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpectralMethod {
    /// Fewer than two routers, or a disconnected graph: lambda_2 = 0 without computation.
    Trivial,
    Dense,
    Symmetric,
    Lanczos,
    /// Too large for the Lanczos basis and no usable symmetry: no bound (lambda_2 := 0).
    Skipped,
}

impl SpectralMethod {
    pub(crate) fn name(self) -> &'static str {
        match self {
            SpectralMethod::Trivial => "spectral (disconnected or trivial: lambda2 = 0)",
            SpectralMethod::Dense => "spectral (dense eigenvalues)",
            SpectralMethod::Symmetric => "spectral (symmetry-block eigenvalues)",
            SpectralMethod::Lanczos => "spectral (Lanczos, theta - residual)",
            SpectralMethod::Skipped => "none (graph too large for the eigen-solvers)",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SpectralEstimate {
    /// A value <= lambda_2 (equal up to rounding for the dense and symmetric methods).
    pub lambda2: f64,
    pub method: SpectralMethod,
}

/// The bisection lower bound implied by `lambda2`: ceil(lambda2 * floor(n/2) * ceil(n/2) / n),
/// with a small tolerance against rounding so that an exact integer bound is not lost.
pub(crate) fn spectral_lower_bound(n: usize, lambda2: f64) -> u64 {
    if n < 2 || lambda2 <= 0.0 || !lambda2.is_finite() {
        return 0;
    }
    let k = (n / 2) as f64;
    let bound = lambda2 * k * (n as f64 - k) / n as f64;
    (bound - 1e-9 * bound.max(1.0)).ceil().max(0.0) as u64
}

/// Algebraic connectivity with the best available method (see the module documentation).
pub(crate) fn algebraic_connectivity(
    g: &RouterGraph,
    symmetry: Option<&Symmetry>,
) -> SpectralEstimate {
    let n = g.num_nodes();
    if n < 2 || !g.is_connected() {
        return SpectralEstimate {
            lambda2: 0.0,
            method: SpectralMethod::Trivial,
        };
    }
    if let Some(sym) = symmetry.filter(|s| s.num_nodes() == n && !s.is_trivial()) {
        let block = 2 * sym.representatives().len();
        if block <= DENSE_MAX {
            if let Some(l2) = algebraic_connectivity_symmetric(g, sym) {
                return SpectralEstimate {
                    lambda2: l2.max(0.0),
                    method: SpectralMethod::Symmetric,
                };
            }
        }
    }
    if n <= DENSE_MAX {
        return SpectralEstimate {
            lambda2: algebraic_connectivity_dense(g).max(0.0),
            method: SpectralMethod::Dense,
        };
    }
    let steps = LANCZOS_MAX_STEPS.min(LANCZOS_MAX_ENTRIES / n);
    if steps < LANCZOS_MIN_STEPS {
        return SpectralEstimate {
            lambda2: 0.0,
            method: SpectralMethod::Skipped,
        };
    }
    let est = lanczos_lambda2(g, steps, 0x5eed);
    SpectralEstimate {
        lambda2: est.certified(),
        method: SpectralMethod::Lanczos,
    }
}

fn laplacian_dense(g: &RouterGraph) -> DMatrix<f64> {
    let n = g.num_nodes();
    let mut l = DMatrix::<f64>::zeros(n, n);
    for u in 0..n {
        for (v, m) in g.neighbors(u) {
            l[(u, v)] -= f64::from(m);
            l[(u, u)] += f64::from(m);
        }
    }
    l
}

fn sorted_eigenvalues(m: DMatrix<f64>) -> Vec<f64> {
    let mut ev: Vec<f64> = m.symmetric_eigenvalues().iter().copied().collect();
    ev.sort_by(f64::total_cmp);
    ev
}

/// Second smallest Laplacian eigenvalue from the dense n x n matrix (0 if disconnected, up to
/// rounding). Cost O(n^3): meant for a few hundred routers.
pub(crate) fn algebraic_connectivity_dense(g: &RouterGraph) -> f64 {
    if g.num_nodes() < 2 {
        return 0.0;
    }
    sorted_eigenvalues(laplacian_dense(g))[1]
}

/// All Laplacian eigenvalues via the symmetry's character blocks, ascending (multiset of size
/// n). `None` when the symmetry does not fit the graph's size.
#[cfg(test)]
pub(crate) fn laplacian_spectrum_symmetric(g: &RouterGraph, sym: &Symmetry) -> Option<Vec<f64>> {
    spectrum_symmetric(g, sym, usize::MAX)
}

/// lambda_2 via the symmetry's character blocks; `None` when the symmetry does not fit.
pub(crate) fn algebraic_connectivity_symmetric(g: &RouterGraph, sym: &Symmetry) -> Option<f64> {
    let ev = spectrum_symmetric(g, sym, 2)?;
    Some(if ev.len() >= 2 { ev[1] } else { 0.0 })
}

/// The `keep` smallest eigenvalues of every block (with multiplicity), merged and sorted.
fn spectrum_symmetric(g: &RouterGraph, sym: &Symmetry, keep: usize) -> Option<Vec<f64>> {
    let n = g.num_nodes();
    if sym.num_nodes() != n || n == 0 {
        return None;
    }
    let reps = sym.representatives();
    let m = reps.len();
    let radices = sym.translatable_radices();
    let order = sym.group_order();
    if m * order != n {
        return None;
    }
    // Block entries (i, j, translation vector, weight): L[rep_i][t(rep_j)] for all nonzero ones.
    let mut entries: Vec<(usize, usize, Vec<usize>, f64)> = Vec::new();
    for (i, &r) in reps.iter().enumerate() {
        entries.push((i, i, vec![0; radices.len()], f64::from(g.degree(r))));
        for (w, mult) in g.neighbors(r) {
            let j = sym.orbit_index(w);
            let t = sym.translation_vector(sym.translation_index(w));
            entries.push((i, j, t, -f64::from(mult)));
        }
    }
    let negate = |c: usize| -> usize {
        let f = sym.translation_vector(c);
        radices
            .iter()
            .zip(&f)
            .fold(0, |acc, (&r, &x)| acc * r + (r - x) % r)
    };
    let blocks: Vec<Vec<f64>> = (0..order)
        .into_par_iter()
        .filter_map(|c| {
            // L_{-chi} is the complex conjugate of L_chi: same spectrum, solve one of the two.
            let neg = negate(c);
            if neg < c {
                return None;
            }
            let copies = if neg == c { 1 } else { 2 };
            let f = sym.translation_vector(c);
            let real = radices.iter().zip(&f).all(|(&r, &x)| (2 * x) % r == 0);
            let mut re = DMatrix::<f64>::zeros(m, m);
            let mut im = DMatrix::<f64>::zeros(m, m);
            for (i, j, t, w) in &entries {
                let phase: f64 = radices
                    .iter()
                    .zip(f.iter().zip(t))
                    .map(|(&r, (&fx, &tx))| ((fx * tx) % r) as f64 / r as f64)
                    .sum();
                let angle = 2.0 * std::f64::consts::PI * phase;
                re[(*i, *j)] += w * angle.cos();
                im[(*i, *j)] += w * angle.sin();
            }
            let mut ev = if real {
                sorted_eigenvalues(re)
            } else {
                // [[Re, -Im], [Im, Re]] has every eigenvalue of Re + i Im twice.
                let mut big = DMatrix::<f64>::zeros(2 * m, 2 * m);
                big.view_mut((0, 0), (m, m)).copy_from(&re);
                big.view_mut((m, m), (m, m)).copy_from(&re);
                big.view_mut((m, 0), (m, m)).copy_from(&im);
                big.view_mut((0, m), (m, m)).copy_from(&(-&im));
                sorted_eigenvalues(big).into_iter().step_by(2).collect()
            };
            ev.truncate(keep);
            let mut out = Vec::with_capacity(ev.len() * copies);
            for _ in 0..copies {
                out.extend_from_slice(&ev);
            }
            Some(out)
        })
        .collect();
    let mut all: Vec<f64> = blocks.into_iter().flatten().collect();
    all.sort_by(f64::total_cmp);
    Some(all)
}

/// Result of [`lanczos_lambda2`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LanczosEstimate {
    /// Smallest Ritz value on the complement of the all-ones vector (>= lambda_2).
    pub theta: f64,
    /// Residual norm ||L x - theta x|| of its Ritz vector: some eigenvalue lies within it.
    pub residual: f64,
    pub steps: usize,
}

impl LanczosEstimate {
    /// max(0, theta - residual): a lower bound on lambda_2 provided the eigenvalue that theta
    /// approximates is lambda_2 (see the module documentation).
    pub(crate) fn certified(&self) -> f64 {
        (self.theta - self.residual).max(0.0)
    }
}

fn laplacian_apply(g: &RouterGraph, deg: &[f64], x: &[f64], y: &mut [f64]) {
    y.par_iter_mut()
        .enumerate()
        .with_min_len(512)
        .for_each(|(u, yu)| {
            let mut s = deg[u] * x[u];
            for (v, m) in g.neighbors(u) {
                s -= f64::from(m) * x[v];
            }
            *yu = s;
        });
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn remove_mean(x: &mut [f64]) {
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    x.iter_mut().for_each(|v| *v -= mean);
}

/// Lanczos with full reorthogonalisation on 1^perp, at most `max_steps` steps, stopping once
/// the smallest Ritz value has converged (residual below 1e-8 relative).
pub(crate) fn lanczos_lambda2(g: &RouterGraph, max_steps: usize, seed: u64) -> LanczosEstimate {
    let n = g.num_nodes();
    if n < 2 {
        return LanczosEstimate {
            theta: 0.0,
            residual: 0.0,
            steps: 0,
        };
    }
    let deg: Vec<f64> = (0..n).map(|u| f64::from(g.degree(u))).collect();
    let steps_cap = max_steps.min(n - 1).max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut q: Vec<f64> = (0..n).map(|_| rng.random::<f64>() - 0.5).collect();
    remove_mean(&mut q);
    let norm = dot(&q, &q).sqrt();
    q.iter_mut().for_each(|v| *v /= norm);
    let mut basis: Vec<Vec<f64>> = vec![q];
    let mut alpha: Vec<f64> = Vec::new();
    let mut beta: Vec<f64> = Vec::new();
    let mut w = vec![0.0; n];
    let mut last = LanczosEstimate {
        theta: f64::INFINITY,
        residual: f64::INFINITY,
        steps: 0,
    };
    for k in 0..steps_cap {
        laplacian_apply(g, &deg, &basis[k], &mut w);
        let a = dot(&basis[k], &w);
        alpha.push(a);
        // Full reorthogonalisation (classical Gram-Schmidt, twice), and against 1.
        for _ in 0..2 {
            let coef: Vec<f64> = basis.par_iter().map(|b| dot(b, &w)).collect();
            w.par_iter_mut()
                .enumerate()
                .with_min_len(1024)
                .for_each(|(i, wi)| {
                    for (b, c) in basis.iter().zip(&coef) {
                        *wi -= c * b[i];
                    }
                });
            remove_mean(&mut w);
        }
        let b = dot(&w, &w).sqrt();
        let done = k + 1 == steps_cap || b <= 1e-12 * (a.abs() + 1.0);
        if done || (k + 1) % 5 == 0 {
            let (theta, y_last) = smallest_ritz(&alpha, &beta);
            let residual = if b <= 1e-12 * (a.abs() + 1.0) {
                0.0
            } else {
                (b * y_last).abs()
            };
            last = LanczosEstimate {
                theta,
                residual,
                steps: k + 1,
            };
            if done || residual <= 1e-8 * theta.abs().max(1.0) {
                break;
            }
        }
        beta.push(b);
        basis.push(w.iter().map(|v| v / b).collect());
    }
    last
}

/// Smallest eigenvalue of the symmetric tridiagonal matrix (diagonal `a`, off-diagonal `b`,
/// `b.len() + 1 == a.len()`) and the last component of its unit eigenvector.
///
/// The eigenvalue comes from Sturm-sequence bisection (it is approached from below, so the
/// shift used next is below the spectrum); the eigenvector from inverse iteration with the
/// positive definite T - sigma I, factored as L D L^T without pivoting.
fn smallest_ritz(a: &[f64], b: &[f64]) -> (f64, f64) {
    let k = a.len();
    if k == 1 {
        return (a[0], 1.0);
    }
    let count_below = |x: f64| -> usize {
        let mut c = 0;
        let mut d = a[0] - x;
        if d < 0.0 {
            c += 1;
        }
        for i in 1..k {
            let dd = if d == 0.0 { f64::MIN_POSITIVE } else { d };
            d = a[i] - x - b[i - 1] * b[i - 1] / dd;
            if d < 0.0 {
                c += 1;
            }
        }
        c
    };
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for i in 0..k {
        let r = if i > 0 { b[i - 1].abs() } else { 0.0 } + if i + 1 < k { b[i].abs() } else { 0.0 };
        lo = lo.min(a[i] - r);
        hi = hi.max(a[i] + r);
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if count_below(mid) >= 1 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let theta = lo;
    let scale = hi.abs().max(lo.abs()).max(1.0);
    let sigma = theta - 1e-10 * scale;
    // L D L^T of T - sigma I.
    let mut d = vec![0.0; k];
    let mut l = vec![0.0; k];
    d[0] = a[0] - sigma;
    for i in 1..k {
        l[i] = b[i - 1] / d[i - 1];
        d[i] = a[i] - sigma - l[i] * b[i - 1];
    }
    let mut y = vec![1.0; k];
    for _ in 0..3 {
        for i in 1..k {
            y[i] -= l[i] * y[i - 1];
        }
        for i in 0..k {
            y[i] /= d[i];
        }
        for i in (0..k - 1).rev() {
            y[i] -= l[i + 1] * y[i + 1];
        }
        let norm = dot(&y, &y).sqrt();
        if !norm.is_finite() || norm == 0.0 {
            break;
        }
        y.iter_mut().for_each(|v| *v /= norm);
    }
    (theta, y[k - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tridiagonal_ritz_matches_dense() {
        let a = [2.0, 3.0, 1.5, 4.0, 2.5];
        let b = [0.7, -1.1, 0.4, 0.9];
        let mut t = DMatrix::<f64>::zeros(5, 5);
        for i in 0..5 {
            t[(i, i)] = a[i];
            if i < 4 {
                t[(i, i + 1)] = b[i];
                t[(i + 1, i)] = b[i];
            }
        }
        let eig = t.clone().symmetric_eigen();
        let (imin, &vmin) = eig
            .eigenvalues
            .iter()
            .enumerate()
            .min_by(|x, y| x.1.total_cmp(y.1))
            .unwrap();
        let (theta, last) = smallest_ritz(&a, &b);
        assert!((theta - vmin).abs() < 1e-12);
        assert!((last.abs() - eig.eigenvectors[(4, imin)].abs()).abs() < 1e-8);
    }

    #[test]
    fn lower_bound_rounding() {
        // Hypercube Q_3: lambda_2 = 2, n = 8 -> 2 * 4 * 4 / 8 = 4 exactly.
        assert_eq!(spectral_lower_bound(8, 2.0 - 1e-13), 4);
        assert_eq!(spectral_lower_bound(8, 2.0), 4);
        assert_eq!(spectral_lower_bound(8, 2.01), 5);
        assert_eq!(spectral_lower_bound(7, 0.0), 0);
        assert_eq!(spectral_lower_bound(1, 5.0), 0);
    }
}
