//! Dense Cholesky factor and solves for the path-LP interior point (`path_ipm.rs`).
//!
//! Hand-written because a profile showed it is the whole cost of column generation: the
//! master's normal matrix is dense in the channels (each path couples every channel it
//! crosses). On this machine a 4,000 x 4,000 factor takes 0.45 s blocked over
//! `matrixmultiply`'s GEMM (two threads), 5.4 s with nalgebra's unblocked `Cholesky`, and
//! Clarabel's sparse LDL of the same system 2-9 s per iteration.

use rayon::prelude::*;

/// Block width of the factor: the panel is factored column by column, the trailing matrix
/// updated by GEMM in column panels of this width (in parallel).
const BLOCK: usize = 128;

/// A symmetric matrix stored column-major in full (`n * n`), of which only the lower triangle
/// is read and written.
pub(super) struct Dense {
    pub n: usize,
    pub a: Vec<f64>,
}

impl Dense {
    pub(super) fn zeros(n: usize) -> Dense {
        Dense {
            n,
            a: vec![0.0; n * n],
        }
    }

    /// Sets every entry to zero, keeping the allocation.
    pub(super) fn clear(&mut self) {
        self.a.iter_mut().for_each(|x| *x = 0.0);
    }

    /// Adds `v` at (row `i`, column `j`), `i >= j`.
    #[inline]
    pub(super) fn add_lower(&mut self, i: usize, j: usize, v: f64) {
        debug_assert!(i >= j);
        self.a[j * self.n + i] += v;
    }

    /// Factors in place into `L` (lower, `L L^T` = the matrix). A pivot that is not clearly
    /// positive (rounding in a nearly singular normal matrix near an LP's optimum) is replaced
    /// by a huge one, which sets that component of every solution to about zero (the standard
    /// treatment in interior-point codes). Returns how many pivots were replaced.
    pub(super) fn cholesky(&mut self) -> usize {
        let n = self.n;
        let max_diag = (0..n).map(|i| self.a[i * n + i]).fold(0.0, f64::max);
        let tiny = max_diag * 1e-30;
        let mut replaced = 0;
        let mut k = 0;
        while k < n {
            let b = BLOCK.min(n - k);
            // The panel's columns k..k+b: rows below the diagonal too.
            for j in k..k + b {
                let col = j * n;
                let mut d = self.a[col + j];
                for p in k..j {
                    d -= self.a[p * n + j] * self.a[p * n + j];
                }
                if d.is_nan() || d <= tiny {
                    replaced += 1;
                    d = 1e128;
                }
                let d = d.sqrt();
                self.a[col + j] = d;
                for i in j + 1..n {
                    let mut s = self.a[col + i];
                    for p in k..j {
                        s -= self.a[p * n + i] * self.a[p * n + j];
                    }
                    self.a[col + i] = s / d;
                }
            }
            let rest = k + b;
            if rest < n {
                // Trailing update A[c0.., c0..c0+w] -= L[c0.., k..k+b] L[c0..c0+w, k..k+b]^T
                // per column panel: the panels write disjoint columns and read only the
                // factored panel.
                let base = self.a.as_mut_ptr() as usize;
                (rest..n)
                    .step_by(BLOCK)
                    .collect::<Vec<_>>()
                    .par_iter()
                    .for_each(|&c0| {
                        let w = BLOCK.min(n - c0);
                        let a = base as *mut f64;
                        // SAFETY: the destination (columns c0..c0+w, rows c0..n) is written by
                        // this task only; the sources (columns k..k+b) are not written by any
                        // task; every index is within the n * n allocation.
                        unsafe {
                            matrixmultiply::dgemm(
                                n - c0,
                                b,
                                w,
                                -1.0,
                                a.add(k * n + c0),
                                1,
                                n as isize,
                                a.add(k * n + c0),
                                n as isize,
                                1,
                                1.0,
                                a.add(c0 * n + c0),
                                1,
                                n as isize,
                            );
                        }
                    });
            }
            k += b;
        }
        replaced
    }

    /// Solves `L L^T x = rhs` in place with the factor from [`Dense::cholesky`].
    pub(super) fn solve(&self, x: &mut [f64]) {
        let n = self.n;
        for j in 0..n {
            let col = &self.a[j * n..(j + 1) * n];
            x[j] /= col[j];
            let xj = x[j];
            for i in j + 1..n {
                x[i] -= col[i] * xj;
            }
        }
        for j in (0..n).rev() {
            let col = &self.a[j * n..(j + 1) * n];
            let mut s = x[j];
            for i in j + 1..n {
                s -= col[i] * x[i];
            }
            x[j] = s / col[j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_and_solves_a_matrix_larger_than_a_block() {
        // A = B B^T + n I, with B fixed pseudo-random: SPD, n spanning several blocks.
        let n = 3 * BLOCK + 17;
        let k = 20;
        let b: Vec<f64> = (0..n * k)
            .map(|i| ((i * 7919 % 1000) as f64) / 1000.0 - 0.5)
            .collect();
        let mut m = Dense::zeros(n);
        for j in 0..n {
            for i in j..n {
                let v: f64 = (0..k).map(|p| b[i * k + p] * b[j * k + p]).sum();
                m.add_lower(i, j, v + if i == j { n as f64 } else { 0.0 });
            }
        }
        let full = |i: usize, j: usize, m: &Dense| {
            let (i, j) = if i >= j { (i, j) } else { (j, i) };
            m.a[j * n + i]
        };
        let x: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let rhs: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| full(i, j, &m) * x[j]).sum())
            .collect();
        let mut sol = rhs.clone();
        assert_eq!(m.cholesky(), 0);
        m.solve(&mut sol);
        let err = sol
            .iter()
            .zip(&x)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-10, "max error {err}");
    }
}
