//! Tests of the run loop: determinism, thread-count independence, resume, constraints.

use super::*;
use crate::search::benchmarks::{Benchmark, RealProblem};
use crate::search::dominance::constrained_dominates;
use crate::search::{Objective, SearchProblem};

fn settings(algorithm: Algorithm, population: usize, evaluations: usize) -> RunSettings {
    RunSettings {
        algorithm,
        population,
        evaluations,
        seed: 7,
        reference_point: vec![1.1, 1.1],
        checkpoint_dir: None,
        resume: false,
        progress: false,
        label: "test".into(),
        archive_limit: Some(population),
        ga: Default::default(),
    }
}

fn zdt1() -> RealProblem {
    RealProblem::new(Benchmark::Zdt1, 12, 2).unwrap()
}

fn same<G: PartialEq + std::fmt::Debug>(a: &RunOutcome<G>, b: &RunOutcome<G>) {
    assert_eq!(a.population, b.population);
    assert_eq!(a.front, b.front);
    assert_eq!(a.archive, b.archive);
    assert_eq!(a.history, b.history);
    assert_eq!(
        (a.evaluations, a.generations),
        (b.evaluations, b.generations)
    );
    assert_eq!(a.hypervolume.to_bits(), b.hypervolume.to_bits());
}

#[test]
fn seeds_are_distinct_and_stable() {
    assert_ne!(run_seed(1, 0), run_seed(1, 1));
    assert_ne!(run_seed(1, 0), run_seed(2, 0));
    assert_eq!(run_seed(1, 0), run_seed(1, 0));
}

#[test]
fn nsga2_converges_and_counts_the_budget() {
    let p = zdt1();
    let out = run(&p, &settings(Algorithm::Nsga2, 40, 4030)).unwrap();
    // 40 initial + 100 generations of 40 - the last generation gets only the 30 left.
    assert_eq!(out.evaluations, 4030);
    assert_eq!(out.generations, 100);
    assert_eq!(out.history.len(), 101);
    assert_eq!(out.history.last().unwrap().evaluations, 4030);
    assert!(out.hypervolume > 0.8, "{}", out.hypervolume);
    assert_eq!(
        out.history.last().unwrap().hypervolume.to_bits(),
        out.hypervolume.to_bits()
    );
    // The history improves overall.
    assert!(out.history[0].hypervolume < out.hypervolume);
    // The archive is mutually non-dominated, bounded, at least as good as the front.
    assert!(out.archive.len() <= 40 && !out.archive.is_empty());
    for a in &out.archive {
        for b in &out.archive {
            assert!(!constrained_dominates(&a.evaluation, &b.evaluation));
        }
    }
    for f in &out.front {
        assert!(f.evaluation.feasible());
    }
}

#[test]
fn sms_emoa_converges() {
    let p = zdt1();
    let out = run(&p, &settings(Algorithm::SmsEmoa, 20, 2000)).unwrap();
    assert_eq!((out.evaluations, out.generations), (2000, 99));
    assert_eq!(out.population.len(), 20);
    assert!(out.hypervolume > 0.75, "{}", out.hypervolume);
}

#[test]
fn same_seed_same_result_whatever_the_thread_count() {
    let p = zdt1();
    for algorithm in [Algorithm::Nsga2, Algorithm::SmsEmoa] {
        let s = settings(algorithm, 20, 600);
        let on = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| run(&p, &s).unwrap())
        };
        let (one, two) = (on(1), on(2));
        same(&one, &two);
        let mut other = s.clone();
        other.seed = 8;
        assert_ne!(run(&p, &other).unwrap().population, one.population);
    }
}

#[test]
fn resumed_run_equals_uninterrupted_run() {
    let p = zdt1();
    for algorithm in [Algorithm::Nsga2, Algorithm::SmsEmoa] {
        let dir = tempfile::tempdir().unwrap();
        let mut s = settings(algorithm, 20, 1010);
        let plain = run(&p, &s).unwrap();
        s.checkpoint_dir = Some(dir.path().to_path_buf());
        assert!(run_until(&p, &s, Some(7)).unwrap().is_none());
        let path = dir.path().join("checkpoint.json");
        let c = Checkpoint::<Vec<f64>>::read(&path).unwrap().unwrap();
        assert_eq!((c.generation, c.evaluations, c.finished), (7, 160, false));
        s.resume = true;
        let resumed = run(&p, &s).unwrap();
        same(&plain, &resumed);
        let c = Checkpoint::<Vec<f64>>::read(&path).unwrap().unwrap();
        assert!(c.finished);
        assert_eq!(c.generation, plain.generations);
    }
}

#[test]
fn finished_checkpoint_is_returned_without_recomputing() {
    let p = zdt1();
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(Algorithm::Nsga2, 20, 400);
    s.checkpoint_dir = Some(dir.path().to_path_buf());
    let first = run(&p, &s).unwrap();
    // Mark the stored history: a recomputation would overwrite the mark.
    let path = dir.path().join("checkpoint.json");
    let mut c = Checkpoint::<Vec<f64>>::read(&path).unwrap().unwrap();
    c.history[0].hypervolume = 123.0;
    std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
    s.resume = true;
    let again = run(&p, &s).unwrap();
    assert_eq!(again.history[0].hypervolume, 123.0);
    assert_eq!(again.front, first.front);
    // Without --resume the run starts afresh.
    s.resume = false;
    assert_eq!(run(&p, &s).unwrap().history, first.history);
}

#[test]
fn resume_refuses_different_settings() {
    let p = zdt1();
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(Algorithm::Nsga2, 20, 400);
    s.checkpoint_dir = Some(dir.path().to_path_buf());
    run_until(&p, &s, Some(2)).unwrap();
    s.resume = true;
    s.seed = 99;
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(
        e.contains("checkpoint.json: seed:") && e.contains("written with 7"),
        "{e}"
    );
    s.seed = 7;
    s.algorithm = Algorithm::SmsEmoa;
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(e.contains("checkpoint.json: algorithm:"), "{e}");
    s.algorithm = Algorithm::Nsga2;
    s.evaluations = 500;
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(e.contains("evaluation_budget"), "{e}");
    std::fs::write(dir.path().join("checkpoint.json"), "{ not json").unwrap();
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(e.contains("not a readable checkpoint"), "{e}");
}

#[test]
fn bad_settings_are_errors() {
    let p = zdt1();
    let mut s = settings(Algorithm::Nsga2, 20, 400);
    s.reference_point = vec![1.1];
    assert!(
        run(&p, &s)
            .unwrap_err()
            .to_string()
            .contains("reference_point")
    );
    let s = settings(Algorithm::Nsga2, 20, 10);
    assert!(run(&p, &s).unwrap_err().to_string().contains("evaluations"));
}

/// ZDT1 with the constraint x0 >= 0.4 (violation 0.4 - x0) and a maximised second objective
/// reported as "score" = -(f2): exercises constrained domination through the engines.
struct Constrained(RealProblem, Vec<Objective>);

impl SearchProblem for Constrained {
    type Genome = Vec<f64>;
    fn name(&self) -> String {
        "constrained".into()
    }
    fn objectives(&self) -> &[Objective] {
        &self.1
    }
    fn reference_point(&self) -> Vec<f64> {
        vec![1.1, 1.1]
    }
    fn random_genome(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        self.0.random_genome(rng)
    }
    fn crossover(&self, a: &Vec<f64>, b: &Vec<f64>, rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>) {
        self.0.crossover(a, b, rng)
    }
    fn mutate(&self, g: &mut Vec<f64>, rng: &mut ChaCha8Rng) {
        self.0.mutate(g, rng)
    }
    fn evaluate(&self, g: &Vec<f64>) -> Evaluation {
        let mut e = self.0.evaluate(g);
        e.violation = (0.4 - g[0]).max(0.0);
        e
    }
    fn describe(&self, g: &Vec<f64>) -> String {
        self.0.describe(g)
    }
}

#[test]
fn constraints_are_respected() {
    let p = Constrained(
        zdt1(),
        vec![Objective::minimise("f1"), Objective::maximise("score")],
    );
    for algorithm in [Algorithm::Nsga2, Algorithm::SmsEmoa] {
        let out = run(&p, &settings(algorithm, 20, 1500)).unwrap();
        assert!(!out.front.is_empty());
        for ind in out.front.iter().chain(&out.archive) {
            assert!(ind.evaluation.feasible());
            assert!(ind.evaluation.objectives[0] >= 0.4);
        }
        // Converged: the whole population is feasible by now.
        assert!(out.population.iter().all(|i| i.evaluation.feasible()));
    }
}
