//! Tests of the run loop: determinism, thread-count independence, resume, constraints.

use super::*;
use crate::search::dominance::constrained_dominates;
use crate::search::problems::benchmarks::{Benchmark, RealProblem};
use crate::search::{Objective, SearchProblem};

fn settings(algorithm: AlgorithmName, population: usize, evaluations: usize) -> RunSettings {
    RunSettings {
        algorithm,
        population,
        termination: Termination::Evaluations(evaluations),
        seed: 7,
        reference_point: vec![1.1, 1.1],
        checkpoint_dir: None,
        resume: false,
        force: false,
        config: serde_json::Value::Null,
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
    let out = run(&p, &settings(AlgorithmName::Nsga2, 40, 4030)).unwrap();
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
    let out = run(&p, &settings(AlgorithmName::SmsEmoa, 20, 2000)).unwrap();
    assert_eq!((out.evaluations, out.generations), (2000, 99));
    assert_eq!(out.population.len(), 20);
    assert!(out.hypervolume > 0.75, "{}", out.hypervolume);
}

#[test]
fn same_seed_same_result_whatever_the_thread_count() {
    let p = zdt1();
    for algorithm in [AlgorithmName::Nsga2, AlgorithmName::SmsEmoa] {
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
    for algorithm in [AlgorithmName::Nsga2, AlgorithmName::SmsEmoa] {
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
    let mut s = settings(AlgorithmName::Nsga2, 20, 400);
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
    let mut s = settings(AlgorithmName::Nsga2, 20, 400);
    s.checkpoint_dir = Some(dir.path().to_path_buf());
    run_until(&p, &s, Some(2)).unwrap();
    s.resume = true;
    s.seed = 99;
    // --force does not override the run's shape: the state could not be continued.
    s.force = true;
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(
        e.contains(
            "checkpoint.json: the checkpoint is of a different run: seed (checkpoint 7, now 99)"
        ),
        "{e}"
    );
    s.seed = 7;
    s.algorithm = AlgorithmName::SmsEmoa;
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(
        e.contains("algorithm (checkpoint nsga2, now sms-emoa)"),
        "{e}"
    );
    s.algorithm = AlgorithmName::Nsga2;
    s.termination = Termination::Evaluations(500);
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(
        e.contains("evaluation_budget (checkpoint 400, now 500)"),
        "{e}"
    );
    std::fs::write(dir.path().join("checkpoint.json"), "{ not json").unwrap();
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(e.contains("not a readable checkpoint"), "{e}");
}

fn fingerprint(variables: usize, eta: f64) -> serde_json::Value {
    serde_json::json!({"search": {"variables": variables, "real": {"sbx_eta": eta}}})
}

#[test]
fn resume_refuses_a_different_configuration_unless_forced() {
    let p = zdt1();
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(AlgorithmName::Nsga2, 20, 400);
    s.checkpoint_dir = Some(dir.path().to_path_buf());
    s.config = fingerprint(12, 15.0);
    run_until(&p, &s, Some(2)).unwrap();
    s.resume = true;
    s.config = fingerprint(10, 20.0);
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(
        e.contains("different configuration: search.real.sbx_eta (checkpoint 15.0, now 20.0), search.variables (checkpoint 12, now 10)")
            && e.contains("--force"),
        "{e}"
    );
    // Another fabricopt version wrote it: refused too, named.
    let path = dir.path().join("checkpoint.json");
    let mut c = Checkpoint::<Vec<f64>>::read(&path).unwrap().unwrap();
    c.engine = "0.0.1".into();
    std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
    s.config = fingerprint(12, 15.0);
    let e = run(&p, &s).unwrap_err().to_string();
    assert!(
        e.contains("engine (checkpoint fabricopt 0.0.1, now "),
        "{e}"
    );
    // --force resumes anyway, from the stored state.
    s.force = true;
    s.config = fingerprint(10, 20.0);
    let forced = run(&p, &s).unwrap();
    assert_eq!(forced.evaluations, 400);
    assert_eq!(forced.history[..3], c.history[..3]);
    // The same configuration resumes without --force.
    s.force = false;
    assert!(run(&p, &s).is_ok());
}

/// Rewrites the checkpoint after `edit` and returns the error a resume gives.
fn resume_error(edit: impl Fn(&mut Checkpoint<Vec<f64>>)) -> String {
    let p = zdt1();
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(AlgorithmName::Nsga2, 20, 400);
    s.checkpoint_dir = Some(dir.path().to_path_buf());
    run_until(&p, &s, Some(2)).unwrap();
    let path = dir.path().join("checkpoint.json");
    let mut c = Checkpoint::<Vec<f64>>::read(&path).unwrap().unwrap();
    edit(&mut c);
    std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
    s.resume = true;
    run(&p, &s).unwrap_err().to_string()
}

#[test]
fn resume_refuses_an_edited_state() {
    let e = resume_error(|c| c.population.truncate(10));
    assert!(
        e.contains("checkpoint.json: population: holds 10 individuals but population_size is 20"),
        "{e}"
    );
    let e = resume_error(|c| c.population[3].genome.truncate(3));
    assert!(
        e.contains("population[3].genome: has 3 variables but zdt1 is set up with 12"),
        "{e}"
    );
    let e = resume_error(|c| c.population[0].genome[5] = 9999.0);
    assert!(
        e.contains("population[0].genome: variable 6 = 9999 is outside [0, 1]"),
        "{e}"
    );
    let e = resume_error(|c| {
        c.archive[0].evaluation.objectives.pop();
    });
    assert!(
        e.contains("archive[0].evaluation.objectives: has 1 values"),
        "{e}"
    );
    let e = resume_error(|c| c.evaluations = 5);
    assert!(
        e.contains("evaluations: 5 does not match generation 2"),
        "{e}"
    );
    let e = resume_error(|c| c.finished = true);
    assert!(e.contains("finished: is true but 60 of 400"), "{e}");
    let e = resume_error(|c| c.history.clear());
    assert!(
        e.contains("history: has 0 records but generation 2 needs 3"),
        "{e}"
    );
}

/// ZDT1 with its objectives and evaluation replaced: engine edge cases (a failing evaluation,
/// constraints, a maximised objective) without a hand-delegating problem type for each.
struct Zdt1Variant<E> {
    zdt1: RealProblem,
    objectives: Vec<Objective>,
    evaluate: E,
}

impl<E: Fn(&RealProblem, &Vec<f64>) -> Evaluation + Sync> Zdt1Variant<E> {
    fn new(objectives: Vec<Objective>, evaluate: E) -> Self {
        Zdt1Variant {
            zdt1: zdt1(),
            objectives,
            evaluate,
        }
    }
}

impl<E: Fn(&RealProblem, &Vec<f64>) -> Evaluation + Sync> SearchProblem for Zdt1Variant<E> {
    type Genome = Vec<f64>;
    fn name(&self) -> String {
        self.zdt1.name()
    }
    fn objectives(&self) -> &[Objective] {
        &self.objectives
    }
    fn reference_point(&self) -> Vec<f64> {
        self.zdt1.reference_point()
    }
    fn random_genome(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        self.zdt1.random_genome(rng)
    }
    fn crossover(&self, a: &Vec<f64>, b: &Vec<f64>, rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>) {
        self.zdt1.crossover(a, b, rng)
    }
    fn mutate(&self, g: &mut Vec<f64>, rng: &mut ChaCha8Rng) {
        self.zdt1.mutate(g, rng)
    }
    fn evaluate(&self, g: &Vec<f64>) -> Evaluation {
        (self.evaluate)(&self.zdt1, g)
    }
    fn check_genome(&self, g: &Vec<f64>) -> Result<(), String> {
        self.zdt1.check_genome(g)
    }
    fn describe(&self, g: &Vec<f64>) -> String {
        self.zdt1.describe(g)
    }
}

/// A panic during a run with checkpoints must end the run (the panic propagates), not wait
/// forever for the checkpoint writer thread.
#[test]
fn a_panic_in_a_checkpointed_run_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // ZDT1 whose evaluation panics from the 70th call on.
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let p = Zdt1Variant::new(zdt1().objectives().to_vec(), move |zdt1, g| {
            let call = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            assert!(call < 70, "evaluation {call} fails");
            zdt1.evaluate(g)
        });
        let mut s = settings(AlgorithmName::Nsga2, 20, 400);
        s.checkpoint_dir = Some(path);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&p, &s)));
        done.send(result.is_err()).unwrap();
    });
    let panicked = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the run hung after a panic");
    assert!(panicked);
    // The generations before the panic were checkpointed.
    let c = Checkpoint::<Vec<f64>>::read(&dir.path().join("checkpoint.json"))
        .unwrap()
        .unwrap();
    assert_eq!(c.generation, 2);
}

#[test]
fn bad_settings_are_errors() {
    let p = zdt1();
    let mut s = settings(AlgorithmName::Nsga2, 20, 400);
    s.reference_point = vec![1.1];
    assert!(
        run(&p, &s)
            .unwrap_err()
            .to_string()
            .contains("reference_point")
    );
    let s = settings(AlgorithmName::Nsga2, 20, 10);
    assert!(run(&p, &s).unwrap_err().to_string().contains("evaluations"));
}

#[test]
fn constraints_are_respected() {
    // ZDT1 with the constraint x0 >= 0.4 (violation 0.4 - x0) and a maximised second
    // objective reported as "score" = -(f2): constrained domination through the engines.
    let p = Zdt1Variant::new(
        vec![Objective::minimise("f1"), Objective::maximise("score")],
        |zdt1, g| {
            let mut e = zdt1.evaluate(g);
            e.violation = (0.4 - g[0]).max(0.0);
            e
        },
    );
    for algorithm in [AlgorithmName::Nsga2, AlgorithmName::SmsEmoa] {
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
