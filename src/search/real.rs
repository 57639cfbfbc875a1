//! Real-coded variation on genomes in [0, 1]^n: simulated binary crossover (SBX, Deb & Agrawal
//! 1995) and polynomial mutation, both in the bounded form of Deb's NSGA-II C code (as pymoo).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

const LOWER: f64 = 0.0;
const UPPER: f64 = 1.0;
/// Parents closer than this in a variable are not crossed in it (the C code's EPS).
const EPS: f64 = 1.0e-14;

/// SBX: with probability `probability` the pair is crossed; then each variable is crossed with
/// probability 0.5 and the two children's values are swapped with probability 0.5.
pub(crate) fn sbx(
    a: &[f64],
    b: &[f64],
    eta: f64,
    probability: f64,
    rng: &mut ChaCha8Rng,
) -> (Vec<f64>, Vec<f64>) {
    let mut c1 = a.to_vec();
    let mut c2 = b.to_vec();
    if rng.random::<f64>() > probability {
        return (c1, c2);
    }
    for i in 0..a.len() {
        if rng.random::<f64>() > 0.5 || (a[i] - b[i]).abs() <= EPS {
            continue;
        }
        let (y1, y2) = if a[i] < b[i] {
            (a[i], b[i])
        } else {
            (b[i], a[i])
        };
        let u: f64 = rng.random();
        let spread = |beta: f64| {
            let alpha = 2.0 - beta.powf(-(eta + 1.0));
            if u <= 1.0 / alpha {
                (u * alpha).powf(1.0 / (eta + 1.0))
            } else {
                (1.0 / (2.0 - u * alpha)).powf(1.0 / (eta + 1.0))
            }
        };
        let betaq = spread(1.0 + 2.0 * (y1 - LOWER) / (y2 - y1));
        let low = (0.5 * ((y1 + y2) - betaq * (y2 - y1))).clamp(LOWER, UPPER);
        let betaq = spread(1.0 + 2.0 * (UPPER - y2) / (y2 - y1));
        let high = (0.5 * ((y1 + y2) + betaq * (y2 - y1))).clamp(LOWER, UPPER);
        if rng.random::<f64>() <= 0.5 {
            c1[i] = high;
            c2[i] = low;
        } else {
            c1[i] = low;
            c2[i] = high;
        }
    }
    (c1, c2)
}

/// Bounded polynomial mutation: each variable mutates with probability `probability`.
pub(crate) fn polynomial_mutation(x: &mut [f64], eta: f64, probability: f64, rng: &mut ChaCha8Rng) {
    let power = 1.0 / (eta + 1.0);
    for y in x.iter_mut() {
        if rng.random::<f64>() > probability {
            continue;
        }
        let delta1 = (*y - LOWER) / (UPPER - LOWER);
        let delta2 = (UPPER - *y) / (UPPER - LOWER);
        let u: f64 = rng.random();
        let deltaq = if u <= 0.5 {
            let val = 2.0 * u + (1.0 - 2.0 * u) * (1.0 - delta1).powf(eta + 1.0);
            val.powf(power) - 1.0
        } else {
            let val = 2.0 * (1.0 - u) + 2.0 * (u - 0.5) * (1.0 - delta2).powf(eta + 1.0);
            1.0 - val.powf(power)
        };
        *y = (*y + deltaq * (UPPER - LOWER)).clamp(LOWER, UPPER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn random_vec(n: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
        (0..n).map(|_| rng.random()).collect()
    }

    #[test]
    fn operators_stay_in_bounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..2000 {
            let mut a = random_vec(10, &mut rng);
            // Parents on the bounds exercise the clamps.
            a[0] = 0.0;
            a[1] = 1.0;
            let b = random_vec(10, &mut rng);
            let (mut c1, mut c2) = sbx(&a, &b, 2.0, 1.0, &mut rng);
            polynomial_mutation(&mut c1, 5.0, 1.0, &mut rng);
            polynomial_mutation(&mut c2, 5.0, 1.0, &mut rng);
            for v in c1.iter().chain(&c2) {
                assert!((0.0..=1.0).contains(v), "{v}");
            }
        }
    }

    #[test]
    fn sbx_with_huge_eta_keeps_children_near_parents() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let a = random_vec(20, &mut rng);
        let b = random_vec(20, &mut rng);
        let (c1, c2) = sbx(&a, &b, 1.0e6, 1.0, &mut rng);
        for i in 0..20 {
            // Each child variable is one of the parents' values (possibly swapped).
            let near = |c: f64| (c - a[i]).abs() < 1e-4 || (c - b[i]).abs() < 1e-4;
            assert!(near(c1[i]) && near(c2[i]), "{i}: {} {}", c1[i], c2[i]);
            // The pair keeps its values.
            assert!((c1[i] + c2[i] - a[i] - b[i]).abs() < 1e-4);
        }
        let changed = (0..20).filter(|&i| (c1[i] - a[i]).abs() > 1e-4).count();
        assert!(changed > 0, "some variables swap");
    }

    #[test]
    fn sbx_small_eta_spreads_and_probability_zero_copies() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let a = vec![0.4; 50];
        let b = vec![0.6; 50];
        let (c1, _) = sbx(&a, &b, 1.0, 1.0, &mut rng);
        let outside = c1.iter().filter(|&&v| !(0.4..=0.6).contains(&v)).count();
        assert!(outside > 3, "{c1:?}");
        let (c1, c2) = sbx(&a, &b, 1.0, 0.0, &mut rng);
        assert_eq!((c1, c2), (a, b));
    }

    #[test]
    fn sbx_children_average_to_parents_mean() {
        // Unclamped SBX is symmetric about the parents' mean; at the centre of the box the
        // clamps never bite with a large eta.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let a = vec![0.45; 30];
        let b = vec![0.55; 30];
        let (c1, c2) = sbx(&a, &b, 30.0, 1.0, &mut rng);
        for i in 0..30 {
            assert!(
                (c1[i] + c2[i] - 1.0).abs() < 1e-9,
                "{i}: {} {}",
                c1[i],
                c2[i]
            );
        }
        assert!(c1.iter().any(|&v| v != 0.45 && v != 0.55), "{c1:?}");
    }

    #[test]
    fn mutation_rate_and_size() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut x = vec![0.5; 1000];
        polynomial_mutation(&mut x, 20.0, 0.1, &mut rng);
        let changed = x.iter().filter(|&&v| v != 0.5).count();
        assert!((60..=140).contains(&changed), "{changed}");
        // eta 20: perturbations are small (mean |delta| is about 1 / (eta + 2)).
        let mean = x.iter().map(|v| (v - 0.5).abs()).sum::<f64>() / changed as f64;
        assert!(mean > 0.01 && mean < 0.08, "{mean}");
        let mut y = vec![0.5; 100];
        polynomial_mutation(&mut y, 20.0, 0.0, &mut rng);
        assert!(y.iter().all(|&v| v == 0.5));
    }
}
