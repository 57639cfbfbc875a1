//! Checkpoints: the complete state of a run after a generation, as JSON (`checkpoint.json`),
//! and the background writer that keeps writing them cheap.
//!
//! Every checkpoint is written with [`write_atomically`] (temporary file, fsync, rename), so a
//! reader never sees a half-written file. An fsync costs milliseconds — more than a whole
//! NSGA-II generation on ZDT1 — so the run loop hands each generation's state to a writer
//! thread and carries on. If the writer is still busy when the next generation ends, the newer
//! state replaces the one not yet written ("latest wins"): the file on disk is at most one
//! write behind the run, and the final state is always written before the run returns.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::export::write_atomically;
use crate::search::Algorithm;
use crate::search::engine::{GenerationRecord, Individual};

/// Version of the checkpoint layout.
pub const FORMAT: u32 = 1;

pub const FILE_NAME: &str = "checkpoint.json";

/// Everything needed to continue a run exactly, plus the settings that must match.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint<G> {
    pub format: u32,
    pub problem: String,
    pub algorithm: Algorithm,
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
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        let checkpoint: Self = serde_json::from_str(&text).map_err(|e| Error::File {
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
        Ok(Some(checkpoint))
    }

    /// Refuses to resume when a setting that shapes the run differs.
    pub fn check_matches(&self, path: &Path, expected: &Checkpoint<G>) -> Result<()> {
        let differs = |field: &str, theirs: String, ours: String| -> Result<()> {
            if theirs == ours {
                return Ok(());
            }
            Err(Error::parse(
                path,
                field,
                format!(
                    "the checkpoint was written with {theirs} but this run uses {ours} \
                     (delete the checkpoint or run without --resume)"
                ),
            ))
        };
        differs("problem", self.problem.clone(), expected.problem.clone())?;
        differs(
            "algorithm",
            self.algorithm.name().into(),
            expected.algorithm.name().into(),
        )?;
        differs("seed", self.seed.to_string(), expected.seed.to_string())?;
        differs(
            "population_size",
            self.population_size.to_string(),
            expected.population_size.to_string(),
        )?;
        differs(
            "evaluation_budget",
            self.evaluation_budget.to_string(),
            expected.evaluation_budget.to_string(),
        )?;
        differs(
            "reference_point",
            format!("{:?}", self.reference_point),
            format!("{:?}", expected.reference_point),
        )?;
        differs(
            "archive_limit",
            format!("{:?}", self.archive_limit),
            format!("{:?}", expected.archive_limit),
        )
    }
}

#[derive(Default)]
struct Slot<G> {
    pending: Option<Checkpoint<G>>,
    closed: bool,
    error: Option<Error>,
}

/// Shared state between the run loop and the writer thread (see the module comment).
pub struct Writer<G> {
    path: PathBuf,
    slot: Mutex<Slot<G>>,
    wake: Condvar,
}

impl<G: Serialize> Writer<G> {
    pub fn new(path: PathBuf) -> Self {
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
    pub fn submit(&self, checkpoint: Checkpoint<G>) -> Result<()> {
        let mut slot = self.slot.lock().expect("writer lock");
        if let Some(e) = slot.error.take() {
            return Err(e);
        }
        slot.pending = Some(checkpoint);
        self.wake.notify_all();
        Ok(())
    }

    /// Asks the writer thread to finish once the pending state is written.
    pub fn close(&self) {
        let mut slot = self.slot.lock().expect("writer lock");
        slot.closed = true;
        self.wake.notify_all();
    }

    /// The first write error, if any (call after the writer thread has ended).
    pub fn take_error(&self) -> Option<Error> {
        self.slot.lock().expect("writer lock").error.take()
    }

    /// The writer thread's body: write pending states until closed.
    pub fn serve(&self) {
        loop {
            let next = {
                let mut slot = self.slot.lock().expect("writer lock");
                while slot.pending.is_none() && !slot.closed {
                    slot = self.wake.wait(slot).expect("writer lock");
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
                let mut slot = self.slot.lock().expect("writer lock");
                slot.error.get_or_insert(e);
                slot.pending = None;
            }
        }
    }
}
