//! Real-coded benchmark problems: ZDT1, ZDT2, ZDT3 (Zitzler, Deb & Thiele 2000) and DTLZ2
//! (Deb, Thiele, Laumanns & Zitzler 2002), on genomes in [0, 1]^n with SBX and polynomial
//! mutation. All objectives are minimised.

use std::f64::consts::PI;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};
use crate::search::config::{ProblemKind, SearchConfig};
use crate::search::real::{polynomial_mutation, sbx};
use crate::search::{Evaluation, Objective, SearchProblem};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Benchmark {
    Zdt1,
    Zdt2,
    Zdt3,
    Dtlz2,
}

impl Benchmark {
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Zdt1 => "zdt1",
            Benchmark::Zdt2 => "zdt2",
            Benchmark::Zdt3 => "zdt3",
            Benchmark::Dtlz2 => "dtlz2",
        }
    }
}

/// A benchmark with its size and variation parameters.
#[derive(Clone, Debug)]
pub struct RealProblem {
    pub benchmark: Benchmark,
    pub variables: usize,
    objectives: Vec<Objective>,
    pub sbx_eta: f64,
    pub sbx_probability: f64,
    pub mutation_eta: f64,
    pub mutation_probability: f64,
}

impl RealProblem {
    /// Builds a benchmark with default operators (SBX eta 15 p 0.9, mutation eta 20 p 1/n).
    pub fn new(benchmark: Benchmark, variables: usize, objectives: usize) -> Result<Self> {
        let config = SearchConfig {
            problem: match benchmark {
                Benchmark::Zdt1 => ProblemKind::Zdt1,
                Benchmark::Zdt2 => ProblemKind::Zdt2,
                Benchmark::Zdt3 => ProblemKind::Zdt3,
                Benchmark::Dtlz2 => ProblemKind::Dtlz2,
            },
            variables: Some(variables),
            objectives: Some(objectives),
            ..minimal_config()
        };
        Self::from_config(&config)
    }

    /// Builds the problem a `[search]` table describes; errors name the field (`search.variables`).
    pub fn from_config(config: &SearchConfig) -> Result<Self> {
        let benchmark = match config.problem {
            ProblemKind::Zdt1 => Benchmark::Zdt1,
            ProblemKind::Zdt2 => Benchmark::Zdt2,
            ProblemKind::Zdt3 => Benchmark::Zdt3,
            ProblemKind::Dtlz2 => Benchmark::Dtlz2,
            ProblemKind::Exanest => {
                return Err(Error::field(
                    "search.problem",
                    "exanest is not a real-coded benchmark",
                ));
            }
        };
        let m = match (benchmark, config.objectives) {
            (Benchmark::Dtlz2, Some(m)) if m < 2 => {
                return Err(Error::field(
                    "search.objectives",
                    format!("DTLZ2 needs at least 2 objectives (got {m})"),
                ));
            }
            (Benchmark::Dtlz2, m) => m.unwrap_or(3),
            (_, Some(m)) if m != 2 => {
                return Err(Error::field(
                    "search.objectives",
                    format!("{} has exactly 2 objectives (got {m})", benchmark.name()),
                ));
            }
            _ => 2,
        };
        let n = match benchmark {
            Benchmark::Dtlz2 => config.variables.unwrap_or(m + 9),
            _ => config.variables.unwrap_or(30),
        };
        let min_n = if benchmark == Benchmark::Dtlz2 { m } else { 2 };
        if n < min_n {
            return Err(Error::field(
                "search.variables",
                format!(
                    "{} needs at least {min_n} variables (got {n})",
                    benchmark.name()
                ),
            ));
        }
        let r = &config.real;
        Ok(RealProblem {
            benchmark,
            variables: n,
            objectives: (1..=m)
                .map(|i| Objective::minimise(&format!("f{i}")))
                .collect(),
            sbx_eta: r.sbx_eta,
            sbx_probability: r.sbx_probability,
            mutation_eta: r.mutation_eta,
            mutation_probability: r.mutation_probability.unwrap_or(1.0 / n as f64),
        })
    }

    /// Objective values of a genome.
    pub(crate) fn objective_values(&self, x: &[f64]) -> Vec<f64> {
        match self.benchmark {
            Benchmark::Zdt1 | Benchmark::Zdt2 | Benchmark::Zdt3 => {
                let f1 = x[0];
                let g = 1.0 + 9.0 * x[1..].iter().sum::<f64>() / (x.len() - 1) as f64;
                let r = f1 / g;
                let h = match self.benchmark {
                    Benchmark::Zdt1 => 1.0 - r.sqrt(),
                    Benchmark::Zdt2 => 1.0 - r * r,
                    _ => 1.0 - r.sqrt() - r * (10.0 * PI * f1).sin(),
                };
                vec![f1, g * h]
            }
            Benchmark::Dtlz2 => {
                let m = self.objectives.len();
                let g: f64 = x[m - 1..].iter().map(|v| (v - 0.5) * (v - 0.5)).sum();
                (0..m)
                    .map(|i| {
                        // f_i = (1 + g) * prod_{j < m-1-i} cos(x_j pi/2) * sin(x_{m-1-i} pi/2)
                        let k = m - 1 - i;
                        let mut f = 1.0 + g;
                        for v in &x[..k] {
                            f *= (v * PI / 2.0).cos();
                        }
                        if i > 0 {
                            f *= (x[k] * PI / 2.0).sin();
                        }
                        f
                    })
                    .collect()
            }
        }
    }
}

/// A `[search]` table with nothing set (for building problems in code).
fn minimal_config() -> SearchConfig {
    SearchConfig {
        problem: ProblemKind::Zdt1,
        algorithm: Default::default(),
        population: 100,
        generations: None,
        evaluations: Some(100),
        runs: 1,
        variables: None,
        objectives: None,
        reference_point: None,
        checkpoint: false,
        real: Default::default(),
        exanest: Default::default(),
    }
}

impl SearchProblem for RealProblem {
    type Genome = Vec<f64>;

    fn name(&self) -> String {
        self.benchmark.name().to_string()
    }

    fn objectives(&self) -> &[Objective] {
        &self.objectives
    }

    fn reference_point(&self) -> Vec<f64> {
        vec![1.1; self.objectives.len()]
    }

    fn random_genome(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        (0..self.variables).map(|_| rng.random()).collect()
    }

    fn crossover(&self, a: &Vec<f64>, b: &Vec<f64>, rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>) {
        sbx(a, b, self.sbx_eta, self.sbx_probability, rng)
    }

    fn mutate(&self, genome: &mut Vec<f64>, rng: &mut ChaCha8Rng) {
        polynomial_mutation(genome, self.mutation_eta, self.mutation_probability, rng);
    }

    fn evaluate(&self, genome: &Vec<f64>) -> Evaluation {
        Evaluation {
            objectives: self.objective_values(genome),
            violation: 0.0,
            extras: vec![],
        }
    }

    /// Every benchmark's decision space is the unit hypercube.
    fn check_genome(&self, genome: &Vec<f64>) -> std::result::Result<(), String> {
        if genome.len() != self.variables {
            return Err(format!(
                "has {} variables but {} is set up with {}",
                genome.len(),
                self.benchmark.name(),
                self.variables
            ));
        }
        match genome.iter().position(|x| !(0.0..=1.0).contains(x)) {
            Some(i) => Err(format!(
                "variable {} = {} is outside [0, 1]",
                i + 1,
                genome[i]
            )),
            None => Ok(()),
        }
    }

    fn describe(&self, genome: &Vec<f64>) -> String {
        // Shortest round-trip representation: distinct genomes give distinct text.
        let parts: Vec<String> = genome.iter().map(|v| format!("{v}")).collect();
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn on_front(n: usize, f1: f64) -> Vec<f64> {
        let mut x = vec![0.0; n];
        x[0] = f1;
        x
    }

    #[test]
    fn zdt_fronts_at_g_equal_one() {
        let zdt1 = RealProblem::new(Benchmark::Zdt1, 30, 2).unwrap();
        let zdt2 = RealProblem::new(Benchmark::Zdt2, 30, 2).unwrap();
        let zdt3 = RealProblem::new(Benchmark::Zdt3, 30, 2).unwrap();
        for f1 in [0.0, 0.1, 0.25, 0.5, 0.81, 1.0] {
            let x = on_front(30, f1);
            let f = zdt1.objective_values(&x);
            assert_eq!(f[0], f1);
            assert!((f[1] - (1.0 - f1.sqrt())).abs() < 1e-12);
            let f = zdt2.objective_values(&x);
            assert!((f[1] - (1.0 - f1 * f1)).abs() < 1e-12);
            let f = zdt3.objective_values(&x);
            let want = 1.0 - f1.sqrt() - f1 * (10.0 * PI * f1).sin();
            assert!((f[1] - want).abs() < 1e-12);
        }
        // All tail variables at 1: g = 10, f2 = 10 (1 - sqrt(0.5 / 10)) for ZDT1.
        let mut x = vec![1.0; 30];
        x[0] = 0.5;
        let f = zdt1.objective_values(&x);
        assert!(
            (f[1] - 10.0 * (1.0 - (0.05f64).sqrt())).abs() < 1e-12,
            "{f:?}"
        );
    }

    #[test]
    fn dtlz2_front_is_the_unit_sphere() {
        let p = RealProblem::new(Benchmark::Dtlz2, 12, 3).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..100 {
            let mut x = p.random_genome(&mut rng);
            for v in &mut x[2..] {
                *v = 0.5; // g = 0
            }
            let f = p.objective_values(&x);
            let norm: f64 = f.iter().map(|v| v * v).sum();
            assert!((norm - 1.0).abs() < 1e-12, "{f:?}");
            assert!(f.iter().all(|&v| v >= 0.0));
        }
        // Hand-checked: x1 = 0 gives f = (cos 0 * cos(x2 pi/2), cos 0 * sin(x2 pi/2), sin 0).
        let mut x = vec![0.5; 12];
        x[0] = 0.0;
        x[1] = 1.0 / 3.0;
        let f = p.objective_values(&x);
        assert!((f[0] - (PI / 6.0).cos()).abs() < 1e-12);
        assert!((f[1] - 0.5).abs() < 1e-12);
        assert!(f[2].abs() < 1e-12);
        // The 10 tail variables at 1: g = 10 * 0.25 = 2.5, so f1 = 3.5 * cos 0 * cos 0.
        let mut x = vec![1.0; 12];
        x[0] = 0.0;
        x[1] = 0.0;
        let f = p.objective_values(&x);
        assert!((f[0] - 3.5).abs() < 1e-12, "{f:?}");
    }

    #[test]
    fn config_defaults_and_errors() {
        let mut c = minimal_config();
        c.problem = ProblemKind::Dtlz2;
        let p = RealProblem::from_config(&c).unwrap();
        assert_eq!((p.variables, p.objectives().len()), (12, 3));
        assert!((p.mutation_probability - 1.0 / 12.0).abs() < 1e-15);
        c.problem = ProblemKind::Zdt3;
        let p = RealProblem::from_config(&c).unwrap();
        assert_eq!((p.variables, p.objectives().len()), (30, 2));
        c.objectives = Some(3);
        let e = RealProblem::from_config(&c).unwrap_err().to_string();
        assert!(e.starts_with("search.objectives:"), "{e}");
        c.objectives = None;
        c.variables = Some(1);
        let e = RealProblem::from_config(&c).unwrap_err().to_string();
        assert!(e.starts_with("search.variables:"), "{e}");
        c.problem = ProblemKind::Exanest;
        assert!(RealProblem::from_config(&c).is_err());
    }

    #[test]
    fn random_genomes_and_describe() {
        let p = RealProblem::new(Benchmark::Zdt1, 5, 2).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let g = p.random_genome(&mut rng);
        assert_eq!(g.len(), 5);
        let text = p.describe(&g);
        let back: Vec<f64> = text.split(' ').map(|s| s.parse().unwrap()).collect();
        assert_eq!(back, g);
    }
}
