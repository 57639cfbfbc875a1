//! Statistics for comparing runs: mean / sample standard deviation and the Wilcoxon rank-sum
//! (Mann-Whitney U) test.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// Mean and sample standard deviation (n - 1 in the denominator; 0 for one value).
pub(crate) fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, var.sqrt())
}

pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Result of a two-sided Wilcoxon rank-sum test of sample `a` against sample `b`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankSum {
    /// Mann-Whitney U of `a`: the number of pairs (x in a, y in b) with x > y, ties counting 1/2.
    pub u: f64,
    /// Standardised statistic (tie-corrected variance, continuity correction).
    pub z: f64,
    /// Two-sided p-value from the normal approximation.
    pub p_value: f64,
    pub n_a: usize,
    pub n_b: usize,
}

/// Two-sided rank-sum test. The normal approximation (with tie correction and continuity
/// correction) is what R's `wilcox.test(exact = FALSE)` and SciPy's `mannwhitneyu(method =
/// "asymptotic")` use; it is accurate to about 0.01 in p from 8-10 values per sample.
pub(crate) fn rank_sum(a: &[f64], b: &[f64]) -> RankSum {
    let (n_a, n_b) = (a.len(), b.len());
    let mut all: Vec<(f64, usize)> = a
        .iter()
        .map(|&x| (x, 0))
        .chain(b.iter().map(|&x| (x, 1)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut rank_sum_a = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their average.
        let avg = (i + j + 2) as f64 / 2.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        rank_sum_a += avg * all[i..=j].iter().filter(|x| x.1 == 0).count() as f64;
        i = j + 1;
    }
    let (na, nb) = (n_a as f64, n_b as f64);
    let u = rank_sum_a - na * (na + 1.0) / 2.0;
    let mean = na * nb / 2.0;
    let nf = n as f64;
    let var = na * nb / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    let (z, p_value) = if var <= 0.0 || n_a == 0 || n_b == 0 {
        (0.0, 1.0)
    } else {
        let d = u - mean;
        let corrected = (d.abs() - 0.5).max(0.0) * d.signum();
        let z = corrected / var.sqrt();
        let normal = Normal::standard();
        (z, (2.0 * (1.0 - normal.cdf(z.abs()))).min(1.0))
    };
    RankSum {
        u,
        z,
        p_value,
        n_a,
        n_b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_sd_and_median() {
        let (m, s) = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(m, 5.0);
        assert!((s - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn rank_sum_matches_known_values() {
        // SciPy 1.17 mannwhitneyu(a, b, method="asymptotic") on these samples (ties in b):
        // U = 58, p = 0.13291945818531892.
        let a = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let b = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.15, 1.29];
        let r = rank_sum(&a, &b);
        assert_eq!(r.u, 58.0);
        assert!(
            (r.p_value - 0.13291945818531892).abs() < 1e-9,
            "{}",
            r.p_value
        );
        // Fully separated samples of 10: SciPy gives U = 100, p = 0.00018267179110955.
        let lo: Vec<f64> = (0..10).map(f64::from).collect();
        let hi: Vec<f64> = (10..20).map(f64::from).collect();
        let r = rank_sum(&hi, &lo);
        assert_eq!(r.u, 100.0);
        assert!(
            (r.p_value - 0.00018267179110955).abs() < 1e-12,
            "{}",
            r.p_value
        );
        // Identical samples: no evidence.
        assert_eq!(rank_sum(&lo, &lo).p_value, 1.0);
    }
}
