//! Checkpoints: the complete state of a run after a generation, as JSON (`checkpoint.json`),
//! and the background writer that keeps writing them cheap.
//!
//! Every checkpoint is written with [`write_atomically`] (temporary file, fsync, rename), so a
//! reader never sees a half-written file. An fsync costs milliseconds — more than a whole
//! NSGA-II generation on ZDT1 — so the run loop hands each generation's state to a writer
//! thread and carries on. If the writer is still busy when the next generation ends, the newer
//! state replaces the one not yet written ("latest wins"): the file on disk is at most one
//! write behind the run, and the final state is always written before the run returns.
//!
//! A checkpoint is trusted only as far as it is checked: [`Checkpoint::check_matches`]
//! refuses one written for a different configuration (the fingerprint is the whole effective
//! configuration, so the message can name each differing field), and
//! [`Checkpoint::check_state`] refuses a state this run could not have produced (a cut
//! population, genomes the problem cannot decode), so an edited or foreign file is an error,
//! never a panic or a silently different result. docs/reliability.md says what resume
//! guarantees.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, PoisonError};

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::files::write_atomically;
use crate::search::engine::{GenerationRecord, Individual};
use crate::search::{AlgorithmName, SearchProblem};

/// Version of the checkpoint layout (2: engine version and configuration fingerprint).
pub(crate) const FORMAT: u32 = 2;

/// The version of fabricopt that writes checkpoints: a run resumed by another version could
/// evaluate differently, so it is part of the fingerprint.
pub(crate) const ENGINE: &str = env!("CARGO_PKG_VERSION");

pub(crate) const FILE_NAME: &str = "checkpoint.json";

/// Everything needed to continue a run exactly, plus the settings that must match.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint<G> {
    pub format: u32,
    /// The fabricopt version that wrote it ([`ENGINE`]).
    pub engine: String,
    /// The effective configuration the run was started with (the problem file after defaults
    /// and command-line overrides, as the caller defines it): its fingerprint.
    pub config: serde_json::Value,
    pub problem: String,
    pub algorithm: AlgorithmName,
    pub seed: u64,
    pub population_size: usize,
    pub evaluation_budget: usize,
    pub reference_point: Vec<f64>,
    pub archive_limit: Option<usize>,
    /// True once the budget is spent: the state is the run's result.
    pub finished: bool,
    pub generation: usize,
    pub evaluations: usize,
    pub elapsed_seconds: f64,
    /// The run's one random stream, positioned after this generation's draws.
    pub rng: ChaCha8Rng,
    pub history: Vec<GenerationRecord>,
    pub population: Vec<Individual<G>>,
    pub archive: Vec<Individual<G>>,
}

impl<G: Serialize + serde::de::DeserializeOwned> Checkpoint<G> {
    /// Reads `path`; `Ok(None)` when it does not exist.
    pub fn read(path: &Path) -> Result<Option<Self>> {
        // Rank 0's copy under MPI, on every rank (src/cluster/).
        let bytes = match crate::cluster::read_on_root(path) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        let text = String::from_utf8(bytes).map_err(|_| Error::File {
            path: path.to_path_buf(),
            reason: "not a readable checkpoint: not UTF-8 text".into(),
        })?;
        Self::parse(path, &text).map(Some)
    }

    /// Parses the text of a checkpoint file (`path` names it in errors).
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let checkpoint: Self = serde_json::from_str(text).map_err(|e| Error::File {
            path: path.to_path_buf(),
            reason: format!("not a readable checkpoint: {e}"),
        })?;
        if checkpoint.format != FORMAT {
            return Err(Error::parse(
                path,
                "format",
                format!(
                    "checkpoint format {} is not the supported {FORMAT}",
                    checkpoint.format
                ),
            ));
        }
        Ok(checkpoint)
    }

    /// Refuses to resume when a setting that shapes the run differs. With `force`, a
    /// different configuration or engine version is accepted (the differences are returned so
    /// the caller can say what it overrode); the run's shape (problem, algorithm, seed,
    /// population, budget, reference point, archive) must still match, since the state could
    /// not be continued otherwise.
    pub fn check_matches(
        &self,
        path: &Path,
        expected: &Checkpoint<G>,
        force: bool,
    ) -> Result<Vec<String>> {
        let mut shape = Vec::new();
        let mut differs = |field: &str, theirs: String, ours: String| {
            if theirs != ours {
                shape.push(format!("{field} (checkpoint {theirs}, now {ours})"));
            }
        };
        differs("problem", self.problem.clone(), expected.problem.clone());
        differs(
            "algorithm",
            self.algorithm.name().into(),
            expected.algorithm.name().into(),
        );
        differs("seed", self.seed.to_string(), expected.seed.to_string());
        differs(
            "population_size",
            self.population_size.to_string(),
            expected.population_size.to_string(),
        );
        differs(
            "evaluation_budget",
            self.evaluation_budget.to_string(),
            expected.evaluation_budget.to_string(),
        );
        differs(
            "reference_point",
            format!("{:?}", self.reference_point),
            format!("{:?}", expected.reference_point),
        );
        differs(
            "archive_limit",
            format!("{:?}", self.archive_limit),
            format!("{:?}", expected.archive_limit),
        );
        if !shape.is_empty() {
            return Err(Error::File {
                path: path.to_path_buf(),
                reason: format!(
                    "the checkpoint is of a different run: {} (delete the checkpoint or run \
                     without --resume)",
                    shape.join(", ")
                ),
            });
        }
        let mut fingerprint = Vec::new();
        if self.engine != expected.engine {
            fingerprint.push(format!(
                "engine (checkpoint fabricopt {}, now {})",
                self.engine, expected.engine
            ));
        }
        config_differences("", &self.config, &expected.config, &mut fingerprint);
        if fingerprint.is_empty() || force {
            return Ok(fingerprint);
        }
        const SHOWN: usize = 8;
        let more = fingerprint.len().saturating_sub(SHOWN);
        fingerprint.truncate(SHOWN);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        Err(Error::File {
            path: path.to_path_buf(),
            reason: format!(
                "the checkpoint was written for a different configuration: {}{more} (delete \
                 the checkpoint, run without --resume, or add --force to resume anyway)",
                fingerprint.join(", ")
            ),
        })
    }

    /// Refuses a state that this run could not have produced: a population of the wrong size,
    /// counters that disagree, evaluations of the wrong shape, or genomes the problem cannot
    /// decode. Resuming such a state would panic or silently give a different result.
    pub fn check_state<P>(&self, path: &Path, problem: &P) -> Result<()>
    where
        P: SearchProblem<Genome = G>,
    {
        let bad = |field: String, reason: String| Err(Error::parse(path, field, reason));
        if self.population.len() != self.population_size {
            return bad(
                "population".into(),
                format!(
                    "holds {} individuals but population_size is {}",
                    self.population.len(),
                    self.population_size
                ),
            );
        }
        if let Some(limit) = self.archive_limit {
            if self.archive.len() > limit {
                return bad(
                    "archive".into(),
                    format!(
                        "holds {} individuals, more than archive_limit {limit}",
                        self.archive.len()
                    ),
                );
            }
        }
        // The engine spends `population_size` evaluations per generation until the budget.
        let expected = self
            .population_size
            .saturating_mul(self.generation.saturating_add(1))
            .min(self.evaluation_budget);
        if self.evaluations != expected {
            return bad(
                "evaluations".into(),
                format!(
                    "{} does not match generation {} of a run with population {} and budget \
                     {} (expected {expected})",
                    self.evaluations, self.generation, self.population_size, self.evaluation_budget
                ),
            );
        }
        if self.finished != (self.evaluations >= self.evaluation_budget) {
            return bad(
                "finished".into(),
                format!(
                    "is {} but {} of {} evaluations are done",
                    self.finished, self.evaluations, self.evaluation_budget
                ),
            );
        }
        if self.history.len() != self.generation.saturating_add(1) {
            return bad(
                "history".into(),
                format!(
                    "has {} records but generation {} needs {}",
                    self.history.len(),
                    self.generation,
                    self.generation.saturating_add(1)
                ),
            );
        }
        if !(self.elapsed_seconds.is_finite() && self.elapsed_seconds >= 0.0) {
            return bad(
                "elapsed_seconds".into(),
                format!("{} is not a duration", self.elapsed_seconds),
            );
        }
        let objectives = problem.objectives().len();
        let extras = problem.extra_names().len();
        for (list, members) in [("population", &self.population), ("archive", &self.archive)] {
            for (i, member) in members.iter().enumerate() {
                let field = |inner: &str| format!("{list}[{i}].{inner}");
                if let Err(reason) = problem.check_genome(&member.genome) {
                    return bad(field("genome"), reason);
                }
                let e = &member.evaluation;
                if e.objectives.len() != objectives {
                    return bad(
                        field("evaluation.objectives"),
                        format!(
                            "has {} values but {} has {objectives} objectives",
                            e.objectives.len(),
                            problem.name()
                        ),
                    );
                }
                if e.extras.len() != extras {
                    return bad(
                        field("evaluation.extras"),
                        format!("has {} values, expected {extras}", e.extras.len()),
                    );
                }
                if e.objectives.iter().any(|v| v.is_nan()) || e.violation.is_nan() {
                    return bad(field("evaluation"), "holds NaN".into());
                }
                if e.violation < 0.0 {
                    return bad(
                        field("evaluation.violation"),
                        format!("{} is negative", e.violation),
                    );
                }
            }
        }
        Ok(())
    }
}

/// Appends the dotted paths where two configurations differ (`search.population (checkpoint
/// 100, now 10)`), depth first, keys in order.
fn config_differences(
    prefix: &str,
    theirs: &serde_json::Value,
    ours: &serde_json::Value,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    let join = |key: &str| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    match (theirs, ours) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            let null = Value::Null;
            for key in keys {
                let (x, y) = (a.get(key).unwrap_or(&null), b.get(key).unwrap_or(&null));
                config_differences(&join(key), x, y, out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => {
            let name = if prefix.is_empty() { "config" } else { prefix };
            out.push(format!(
                "{name} (checkpoint {}, now {})",
                short(a),
                short(b)
            ));
        }
    }
}

/// A value for a one-line message: long arrays and tables are abbreviated.
fn short(value: &serde_json::Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 40 {
        return text;
    }
    let cut: String = text.chars().take(37).collect();
    format!("{cut}...")
}

#[derive(Default)]
struct Slot<G> {
    pending: Option<Checkpoint<G>>,
    closed: bool,
    error: Option<Error>,
}

/// Shared state between the run loop and the writer thread (see the module comment).
pub(crate) struct Writer<G> {
    path: PathBuf,
    slot: Mutex<Slot<G>>,
    wake: Condvar,
}

impl<G: Serialize> Writer<G> {
    pub(crate) fn new(path: PathBuf) -> Self {
        Writer {
            path,
            slot: Mutex::new(Slot {
                pending: None,
                closed: false,
                error: None,
            }),
            wake: Condvar::new(),
        }
    }

    /// Queues a state for writing (replacing one not yet written). Reports an earlier write
    /// failure, so a run does not go on for hours without checkpoints.
    pub(crate) fn submit(&self, checkpoint: Checkpoint<G>) -> Result<()> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = slot.error.take() {
            return Err(e);
        }
        slot.pending = Some(checkpoint);
        self.wake.notify_all();
        Ok(())
    }

    /// Asks the writer thread to finish once the pending state is written.
    pub(crate) fn close(&self) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        slot.closed = true;
        self.wake.notify_all();
    }

    /// A guard that closes the writer when dropped, including while unwinding from a panic:
    /// the writer thread lives in a thread scope that waits for it, so a panic that skipped
    /// [`Writer::close`] would hang the process instead of ending it.
    pub(crate) fn close_on_drop(&self) -> CloseOnDrop<'_, G> {
        CloseOnDrop(self)
    }

    /// The first write error, if any (call after the writer thread has ended).
    pub(crate) fn take_error(&self) -> Option<Error> {
        self.slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .error
            .take()
    }

    /// The writer thread's body: write pending states until closed.
    pub(crate) fn serve(&self) {
        loop {
            let next = {
                let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
                while slot.pending.is_none() && !slot.closed {
                    slot = self.wake.wait(slot).unwrap_or_else(PoisonError::into_inner);
                }
                match slot.pending.take() {
                    Some(c) => c,
                    None => return,
                }
            };
            let result = serde_json::to_vec(&next)
                .map_err(|e| Error::File {
                    path: self.path.clone(),
                    reason: format!("cannot encode the checkpoint: {e}"),
                })
                .and_then(|bytes| write_atomically(&self.path, &bytes));
            if let Err(e) = result {
                let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
                slot.error.get_or_insert(e);
                slot.pending = None;
            }
        }
    }
}

/// See [`Writer::close_on_drop`].
pub(crate) struct CloseOnDrop<'a, G: Serialize>(&'a Writer<G>);

impl<G: Serialize> Drop for CloseOnDrop<'_, G> {
    fn drop(&mut self) {
        self.0.close();
    }
}
