//! What happens after each generation besides the search: the progress bar and the
//! checkpoint. The run loop calls every [`RunObserver`] with the run's state after each
//! generation; the algorithms know nothing of them.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::error::Result;
use crate::search::checkpoint::{Checkpoint, Writer};
use crate::search::engine::{RunSettings, RunState};

/// Called by the run loop between generations.
pub(crate) trait RunObserver<G> {
    /// After every generation, generation 0 (the evaluated initial population) included. An
    /// error ends the run.
    fn generation(&mut self, state: &RunState<G>) -> Result<()>;

    /// The state a resumed run starts from. The run that wrote the checkpoint observed it
    /// already, so by default nothing happens.
    fn resumed(&mut self, _state: &RunState<G>) {}
}

/// The progress bar on stderr: evaluations of the budget, the generation and its
/// hypervolume. Hidden unless asked for and stderr is a terminal; dropping it clears it.
pub(crate) struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub(crate) fn new(settings: &RunSettings, budget: usize) -> Self {
        if !settings.progress || !std::io::stderr().is_terminal() {
            return Progress {
                bar: ProgressBar::hidden(),
            };
        }
        let bar = ProgressBar::new(budget as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} evaluations ({per_sec}), {msg}, {elapsed}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        bar.set_prefix(settings.label.clone());
        Progress { bar }
    }

    fn show<G>(&self, state: &RunState<G>) {
        let hv = state.history.last().map_or(0.0, |r| r.hypervolume);
        self.bar.set_position(state.evaluations as u64);
        self.bar
            .set_message(format!("gen {}, hv {hv:.4}", state.generation));
    }
}

impl<G> RunObserver<G> for Progress {
    fn generation(&mut self, state: &RunState<G>) -> Result<()> {
        self.show(state);
        Ok(())
    }

    fn resumed(&mut self, state: &RunState<G>) {
        self.show(state);
    }
}

/// Hands each generation's state to the checkpoint writer thread ([`Writer`]).
pub(crate) struct CheckpointSaver<'a, G> {
    writer: &'a Writer<G>,
    /// The run's fixed fields; each generation fills in the state.
    header: Checkpoint<G>,
}

impl<'a, G> CheckpointSaver<'a, G> {
    pub(crate) fn new(writer: &'a Writer<G>, header: Checkpoint<G>) -> Self {
        CheckpointSaver { writer, header }
    }
}

impl<G: Clone + Serialize> RunObserver<G> for CheckpointSaver<'_, G> {
    fn generation(&mut self, state: &RunState<G>) -> Result<()> {
        let checkpoint = Checkpoint {
            finished: state.evaluations >= self.header.evaluation_budget,
            generation: state.generation,
            evaluations: state.evaluations,
            elapsed_seconds: state.elapsed().as_secs_f64(),
            rng: state.rng.clone(),
            history: state.history.clone(),
            population: state.population.clone(),
            archive: state.archive.clone(),
            ..self.header.clone()
        };
        self.writer.submit(checkpoint)
    }
}
