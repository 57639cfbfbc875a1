//! The run loop shared by every algorithm ([`Algorithm`](crate::search::Algorithm)): initial
//! population, generations until the [`Termination`] says the budget is spent, the archive,
//! per-generation hypervolume and resume. After each generation it calls its observers
//! (checkpoint and progress bar, `observer.rs`); every batch is evaluated by
//! [`evaluate_all`].
//!
//! Determinism: one `ChaCha8Rng` per run, seeded from the run's seed, makes every random
//! choice, sequentially on the calling thread. Only evaluation runs in parallel (rayon,
//! order-preserving), and evaluation draws no random numbers, so a run's result depends on its
//! seed alone, not on the thread count, and a resumed run ends exactly where an uninterrupted
//! one does (the checkpoint stores the random stream's position).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::search::checkpoint::{self, Checkpoint, Writer};
use crate::search::config::GaOptions;
use crate::search::dominance::{crowding_distance, first_front, pareto_dominates};
use crate::search::evaluate::evaluate_all;
use crate::search::hypervolume::hypervolume;
use crate::search::observer::{CheckpointSaver, Progress, RunObserver};
use crate::search::termination::Termination;
use crate::search::{AlgorithmName, Evaluation, SearchProblem};

/// How one run is carried out.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub algorithm: AlgorithmName,
    pub population: usize,
    /// When the run ends (its evaluation budget).
    pub termination: Termination,
    /// This run's seed (see [`run_seed`]).
    pub seed: u64,
    /// Hypervolume reference point in the internal (minimised) space.
    pub reference_point: Vec<f64>,
    /// Write `checkpoint.json` here after every generation.
    pub checkpoint_dir: Option<PathBuf>,
    /// Continue from `checkpoint_dir/checkpoint.json` if it exists.
    pub resume: bool,
    /// Resume even when the checkpoint's configuration fingerprint or engine version differs
    /// (the run's shape must still match; see [`Checkpoint::check_matches`]).
    pub force: bool,
    /// The effective configuration of the run (problem file after defaults and command-line
    /// overrides), stored in checkpoints as the fingerprint a resume must match.
    pub config: serde_json::Value,
    /// Show a progress bar (only when stderr is a terminal).
    pub progress: bool,
    /// Names the run on the progress bar.
    pub label: String,
    /// Bound on the archive (see [`RunOutcome::archive`]); `None` keeps every non-dominated
    /// solution, `Some(0)` keeps no archive.
    pub archive_limit: Option<usize>,
    /// Selection and elitism of the single-objective GA.
    pub ga: GaOptions,
}

/// A genome with its evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Individual<G> {
    pub genome: G,
    pub evaluation: Evaluation,
}

/// One point of a run's convergence history (after the initial population: generation 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationRecord {
    pub generation: usize,
    pub evaluations: usize,
    pub hypervolume: f64,
}

/// The result of one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunOutcome<G> {
    pub algorithm: AlgorithmName,
    pub seed: u64,
    pub population: Vec<Individual<G>>,
    /// Feasible members of the final population's first front, duplicate genomes removed
    /// (by `describe()`), sorted by objective vector.
    pub front: Vec<Individual<G>>,
    /// Feasible non-dominated solutions among everything evaluated, one per objective vector;
    /// when `archive_limit` bounds it, the most crowded members were dropped.
    pub archive: Vec<Individual<G>>,
    pub evaluations: usize,
    pub generations: usize,
    /// Hypervolume of `front` at the reference point.
    pub hypervolume: f64,
    pub history: Vec<GenerationRecord>,
    /// Wall-clock time, including the time before an interruption when resumed.
    pub elapsed: Duration,
}

/// The seed of run `run_index` of a problem: splitmix64 of the problem seed and the index, so
/// runs are independent streams and each can be repeated alone.
pub(crate) fn run_seed(problem_seed: u64, run_index: usize) -> u64 {
    let mut z = problem_seed.wrapping_add(
        (run_index as u64)
            .wrapping_add(1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Runs (or resumes, or returns the finished checkpoint of) one run.
pub fn run<P: SearchProblem>(problem: &P, settings: &RunSettings) -> Result<RunOutcome<P::Genome>> {
    run_until(problem, settings, None).map(|o| o.expect("runs to the end without a stop"))
}

/// The state that changes from generation to generation: what observers see and checkpoints
/// store.
pub(crate) struct RunState<G> {
    pub population: Vec<Individual<G>>,
    pub archive: Vec<Individual<G>>,
    pub generation: usize,
    pub evaluations: usize,
    pub history: Vec<GenerationRecord>,
    pub rng: ChaCha8Rng,
    /// Time spent before this process took over (resume).
    earlier: Duration,
    /// When this process took over.
    started: Instant,
}

impl<G> RunState<G> {
    /// The state a checkpoint holds; `earlier` is the time already spent.
    fn from_checkpoint(c: Checkpoint<G>, earlier: Duration, started: Instant) -> Self {
        RunState {
            population: c.population,
            archive: c.archive,
            generation: c.generation,
            evaluations: c.evaluations,
            history: c.history,
            rng: c.rng,
            earlier,
            started,
        }
    }

    /// Wall-clock time of the run, including the time before a resume.
    pub(crate) fn elapsed(&self) -> Duration {
        self.earlier + self.started.elapsed()
    }
}

/// [`run`], but stops as if interrupted once `stop_after` generations are done (returning
/// `None`); the checkpoint then holds that generation. For tests of resume.
pub(crate) fn run_until<P: SearchProblem>(
    problem: &P,
    settings: &RunSettings,
    stop_after: Option<usize>,
) -> Result<Option<RunOutcome<P::Genome>>> {
    validate(problem, settings)?;
    let path = settings
        .checkpoint_dir
        .as_ref()
        .map(|d| d.join(checkpoint::FILE_NAME));
    let mut resumed = None;
    if let (Some(path), true) = (&path, settings.resume) {
        if let Some(c) = Checkpoint::<P::Genome>::read(path)? {
            let overridden = c.check_matches(path, &header(problem, settings), settings.force)?;
            c.check_state(path, problem)?;
            if !overridden.is_empty() {
                eprintln!(
                    "warning: {}: resuming despite a different configuration (--force): {}",
                    path.display(),
                    overridden.join(", ")
                );
            }
            resumed = Some(c);
        }
    }
    if let Some(c) = resumed.take_if(|c| c.finished) {
        // The run finished earlier: its result is in the checkpoint.
        let elapsed = Duration::from_secs_f64(c.elapsed_seconds);
        let state = RunState::from_checkpoint(c, Duration::ZERO, Instant::now());
        return Ok(Some(outcome(problem, settings, state, elapsed)));
    }
    if let Some(dir) = &settings.checkpoint_dir {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let writer = path.map(Writer::new);
    std::thread::scope(|scope| {
        let _close = writer.as_ref().map(|w| {
            scope.spawn(|| w.serve());
            w.close_on_drop()
        });
        generations(problem, settings, resumed, writer.as_ref(), stop_after)
    })
    .and_then(|result| match writer.and_then(|w| w.take_error()) {
        Some(e) => Err(e),
        None => Ok(result),
    })
}

fn validate<P: SearchProblem>(problem: &P, settings: &RunSettings) -> Result<()> {
    let m = problem.objectives().len();
    if settings.reference_point.len() != m {
        return Err(Error::field(
            "reference_point",
            format!(
                "has {} values but {} has {m} objectives",
                settings.reference_point.len(),
                problem.name()
            ),
        ));
    }
    if settings.population < 2 {
        return Err(Error::field("population", "must be at least 2"));
    }
    settings.termination.check(settings.population)
}

/// The checkpoint fields that must match on resume (the state fields are placeholders).
fn header<P: SearchProblem>(problem: &P, s: &RunSettings) -> Checkpoint<P::Genome> {
    Checkpoint {
        format: checkpoint::FORMAT,
        engine: checkpoint::ENGINE.to_string(),
        config: s.config.clone(),
        problem: problem.name(),
        algorithm: s.algorithm,
        seed: s.seed,
        population_size: s.population,
        evaluation_budget: s.termination.evaluation_budget(s.population),
        reference_point: s.reference_point.clone(),
        archive_limit: s.archive_limit,
        finished: false,
        generation: 0,
        evaluations: 0,
        elapsed_seconds: 0.0,
        rng: ChaCha8Rng::seed_from_u64(s.seed),
        history: Vec::new(),
        population: Vec::new(),
        archive: Vec::new(),
    }
}

/// `genomes` with their evaluations (by [`evaluate_all`], the one place batches are evaluated).
fn evaluated<P: SearchProblem>(problem: &P, genomes: Vec<P::Genome>) -> Vec<Individual<P::Genome>> {
    let evaluations = evaluate_all(problem, &genomes);
    genomes
        .into_iter()
        .zip(evaluations)
        .map(|(genome, evaluation)| Individual { genome, evaluation })
        .collect()
}

fn generations<P: SearchProblem>(
    problem: &P,
    settings: &RunSettings,
    resumed: Option<Checkpoint<P::Genome>>,
    writer: Option<&Writer<P::Genome>>,
    stop_after: Option<usize>,
) -> Result<Option<RunOutcome<P::Genome>>> {
    let started = Instant::now();
    let mu = settings.population;
    let algorithm = settings.algorithm.build::<P>(settings);
    let mut observers: Vec<Box<dyn RunObserver<P::Genome> + '_>> = Vec::new();
    if let Some(writer) = writer {
        observers.push(Box::new(CheckpointSaver::new(
            writer,
            header(problem, settings),
        )));
    }
    let budget = settings.termination.evaluation_budget(mu);
    observers.push(Box::new(Progress::new(settings, budget)));
    let mut state = match resumed {
        Some(c) => {
            let earlier = Duration::from_secs_f64(c.elapsed_seconds);
            let state = RunState::from_checkpoint(c, earlier, started);
            for o in &mut observers {
                o.resumed(&state);
            }
            state
        }
        None => {
            let state = initial_state(problem, settings, started);
            notify(&mut observers, &state)?;
            state
        }
    };
    while let Some(batch) = settings.termination.next_generation(mu, state.evaluations) {
        if stop_after.is_some_and(|k| state.generation >= k) {
            return Ok(None);
        }
        let mut left = batch;
        while left > 0 {
            // At least one per step, or a step would never end the generation.
            let count = algorithm.step_size(left).clamp(1, left);
            let genomes = algorithm.offspring(problem, &state.population, count, &mut state.rng);
            let children = evaluated(problem, genomes);
            for ind in &children {
                archive_insert(&mut state.archive, ind, settings.archive_limit);
            }
            let population = std::mem::take(&mut state.population);
            state.population = algorithm.survive(population, children, mu);
            left -= count;
        }
        state.generation += 1;
        state.evaluations += batch;
        record(&mut state, settings);
        notify(&mut observers, &state)?;
    }
    let elapsed = state.elapsed();
    Ok(Some(outcome(problem, settings, state, elapsed)))
}

/// Generation 0: `population` random genomes, evaluated, archived and recorded.
fn initial_state<P: SearchProblem>(
    problem: &P,
    settings: &RunSettings,
    started: Instant,
) -> RunState<P::Genome> {
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let genomes: Vec<_> = (0..settings.population)
        .map(|_| problem.random_genome(&mut rng))
        .collect();
    let population = evaluated(problem, genomes);
    let mut archive = Vec::new();
    for ind in &population {
        archive_insert(&mut archive, ind, settings.archive_limit);
    }
    let mut state = RunState {
        population,
        archive,
        generation: 0,
        evaluations: settings.population,
        history: Vec::new(),
        rng,
        earlier: Duration::ZERO,
        started,
    };
    record(&mut state, settings);
    state
}

/// Tells every observer about the generation just done; the first error ends the run.
fn notify<G>(observers: &mut [Box<dyn RunObserver<G> + '_>], state: &RunState<G>) -> Result<()> {
    observers.iter_mut().try_for_each(|o| o.generation(state))
}

/// Appends this generation's hypervolume to the history.
fn record<G>(state: &mut RunState<G>, settings: &RunSettings) {
    let points: Vec<Vec<f64>> = feasible_first_front(&state.population)
        .map(|i| state.population[i].evaluation.objectives.clone())
        .collect();
    state.history.push(GenerationRecord {
        generation: state.generation,
        evaluations: state.evaluations,
        hypervolume: hypervolume(&points, &settings.reference_point),
    });
}

fn feasible_first_front<G>(population: &[Individual<G>]) -> impl Iterator<Item = usize> + '_ {
    let evals: Vec<_> = population.iter().map(|i| &i.evaluation).collect();
    first_front(&evals)
        .into_iter()
        .filter(move |&i| population[i].evaluation.feasible())
}

/// Adds a feasible solution to the archive unless an archived one dominates it or has the
/// same objective vector; drops what it dominates; keeps at most `limit` members by removing
/// the most crowded (smallest crowding distance, then lowest index).
fn archive_insert<G: Clone>(
    archive: &mut Vec<Individual<G>>,
    candidate: &Individual<G>,
    limit: Option<usize>,
) {
    let e = &candidate.evaluation;
    if !e.feasible() || limit == Some(0) {
        return;
    }
    if archive.iter().any(|a| {
        a.evaluation.objectives == e.objectives
            || pareto_dominates(&a.evaluation.objectives, &e.objectives)
    }) {
        return;
    }
    archive.retain(|a| !pareto_dominates(&e.objectives, &a.evaluation.objectives));
    archive.push(candidate.clone());
    if let Some(limit) = limit {
        if archive.len() > limit {
            let evals: Vec<_> = archive.iter().map(|a| &a.evaluation).collect();
            let all: Vec<usize> = (0..archive.len()).collect();
            let d = crowding_distance(&evals, &all);
            let mut most_crowded = 0;
            for (i, v) in d.iter().enumerate() {
                if *v < d[most_crowded] {
                    most_crowded = i;
                }
            }
            archive.remove(most_crowded);
        }
    }
}

fn outcome<P: SearchProblem>(
    problem: &P,
    settings: &RunSettings,
    state: RunState<P::Genome>,
    elapsed: Duration,
) -> RunOutcome<P::Genome> {
    let mut seen = std::collections::HashSet::new();
    let mut front: Vec<(String, Individual<P::Genome>)> = Vec::new();
    for i in feasible_first_front(&state.population) {
        let ind = &state.population[i];
        let text = problem.describe(&ind.genome);
        if seen.insert(text.clone()) {
            front.push((text, ind.clone()));
        }
    }
    front.sort_by(|(ta, a), (tb, b)| {
        let (x, y) = (&a.evaluation.objectives, &b.evaluation.objectives);
        x.iter()
            .zip(y)
            .map(|(p, q)| p.total_cmp(q))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| ta.cmp(tb))
    });
    let front: Vec<_> = front.into_iter().map(|(_, ind)| ind).collect();
    let points: Vec<Vec<f64>> = front
        .iter()
        .map(|i| i.evaluation.objectives.clone())
        .collect();
    RunOutcome {
        algorithm: settings.algorithm,
        seed: settings.seed,
        hypervolume: hypervolume(&points, &settings.reference_point),
        front,
        population: state.population,
        archive: state.archive,
        evaluations: state.evaluations,
        generations: state.generation,
        history: state.history,
        elapsed,
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
