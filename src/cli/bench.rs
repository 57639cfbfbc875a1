//! `fabricopt bench`: the standard simulator speed cases, and the scale ratios measured from
//! runs taken back to back (`--scale-ratios`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;

use super::simulate::Setup;
use crate::problem_file::{LoadedProblem, parse_problem};
use crate::sim::Engine;
use crate::sim::engine::IoQueuedRouter;

mod scale_ratios;

/// The speed cases: (name, problem file text). The files live in problems/bench/.
pub const CASES: &[(&str, &str)] = &[
    (
        "mesh8x8-uniform-0.1",
        include_str!("../../problems/bench/mesh8x8-uniform-0.1.toml"),
    ),
    (
        "dragonfly1056-min-uniform-0.2",
        include_str!("../../problems/bench/dragonfly1056-min-uniform-0.2.toml"),
    ),
    (
        "dragonfly1056-min-uniform-0.2-ioq",
        include_str!("../../problems/bench/dragonfly1056-min-uniform-0.2-ioq.toml"),
    ),
    (
        "dragonfly16512-min-uniform-0.2",
        include_str!("../../problems/bench/dragonfly16512-min-uniform-0.2.toml"),
    ),
    (
        "dragonfly1056-min-uniform-0.2-2threads",
        include_str!("../../problems/bench/dragonfly1056-min-uniform-0.2-2threads.toml"),
    ),
    (
        "dragonfly16512-min-uniform-0.2-2threads",
        include_str!("../../problems/bench/dragonfly16512-min-uniform-0.2-2threads.toml"),
    ),
];

/// BookSim2's speed on the cases it was run on, cycles/s: BookSim2 commit 28f43299 built
/// with -O3, unmodified, run alternately with fabricopt on a 2-core AMD EPYC machine of the
/// kind this project is developed on (whole-process CPU time, the same configuration and
/// number of cycles; docs/benchmarks.md, "Speed and scale"). This command does not run
/// BookSim2, so a ratio to these figures also carries the present speed of the machine it
/// runs on.
const BOOKSIM2_CYCLES_PER_S: &[(&str, f64)] = &[
    ("mesh8x8-uniform-0.1", 10_970.0),
    ("dragonfly1056-min-uniform-0.2", 188.0),
    ("dragonfly1056-min-uniform-0.2-2threads", 188.0),
];

/// The entry for case `name` in a table keyed by case name ([`CASES`],
/// [`BOOKSIM2_CYCLES_PER_S`]).
fn by_name<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    table
        .iter()
        .find(|(case, _)| *case == name)
        .map(|&(_, value)| value)
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Timed repetitions per case, at least 1 (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Run only the cases whose name contains this text (only the case of that exact name, if
    /// there is one).
    #[arg(long)]
    pub only: Option<String>,
    /// Instead of the cases' table: the two scale ratios, each from runs taken back to back
    /// in every round (`--repeat` rounds, the cases' order rotated each round), so that a
    /// machine whose speed drifts between runs moves both sides of a ratio alike. The
    /// flit-hop rate of the 1,056-node dragonfly over the 16,512-node one (one thread), and
    /// the 16,512-node case's cycles/s on 2 threads over 1.
    #[arg(long, conflicts_with = "only")]
    pub scale_ratios: bool,
}

#[derive(Serialize)]
pub(crate) struct CaseResult {
    pub name: String,
    pub cycles: u64,
    pub cycles_per_s: f64,
    pub flit_hops_per_s: f64,
    /// Router-to-router flit transfers in the median run's measured cycles: the same in every
    /// run of a case, whatever the thread count (the runs are deterministic).
    pub flit_hops: u64,
    pub repeats: usize,
    /// BookSim2's reference speed on this case ([`BOOKSIM2_CYCLES_PER_S`]), where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub booksim2_cycles_per_s: Option<f64>,
    /// `cycles_per_s` over that reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times_booksim2: Option<f64>,
    /// For a case split over MPI ranks: the window exchange of the median run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<Exchange>,
}

/// The cost of the window exchange between MPI ranks in one whole run (warm-up,
/// measurement and drain), on rank 0: what docs/scale-out.md projects from.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct Exchange {
    pub ranks: usize,
    pub windows: u64,
    /// Mean wall-clock microseconds per window inside the exchange's collectives, waiting for
    /// the slowest rank included.
    pub micros_per_window: f64,
    /// The same for the rank that spent least time in the exchange: an upper bound of the
    /// exchange's own cost, without waiting for slower ranks.
    pub least_micros_per_window: f64,
    /// Mean bytes rank 0 sent per window.
    pub bytes_per_window: f64,
}

#[derive(Serialize)]
struct Report {
    cases: Vec<CaseResult>,
}

/// The bundled case `name` (one of [`CASES`]), ready to simulate.
pub fn case_setup(name: &str, text: &str) -> Result<Setup> {
    let path = PathBuf::from(format!("problems/bench/{name}.toml"));
    let problem = parse_problem(text).map_err(|e| e.in_file(&path))?;
    Setup::from_loaded(&LoadedProblem { path, problem })
}

/// An engine of either router model (the case's `[simulation] router`).
pub enum BenchEngine<'a> {
    Iq(Engine<'a>),
    Ioq(Engine<'a, IoQueuedRouter>),
}

impl BenchEngine<'_> {
    /// Advances one cycle.
    pub fn step(&mut self) {
        match self {
            BenchEngine::Iq(e) => e.step(),
            BenchEngine::Ioq(e) => e.step(),
        }
    }

    /// Router-to-router flit transfers so far.
    pub fn flit_hops(&self) -> u64 {
        match self {
            BenchEngine::Iq(e) => e.counters.flit_hops,
            BenchEngine::Ioq(e) => e.counters.flit_hops,
        }
    }
}

/// A fresh engine for `setup`, stepped through its warm-up cycles (untimed).
pub fn warmed_engine(setup: &Setup) -> BenchEngine<'_> {
    let (topo, routing, traffic, params) = (
        &setup.topo,
        setup.routing.as_ref(),
        setup.traffic.clone(),
        setup.params.clone(),
    );
    let mut engine = match setup.params.ioq {
        None => BenchEngine::Iq(Engine::new(topo, routing, traffic, params, setup.seed)),
        Some(_) => BenchEngine::Ioq(Engine::new_ioq(topo, routing, traffic, params, setup.seed)),
    };
    for _ in 0..setup.params.warmup_cycles {
        engine.step();
    }
    engine
}

/// A whole run of `setup` on the parallel engine (the `-2threads` cases).
pub fn parallel_run(setup: &Setup) -> Result<crate::sim::engine::PartitionedRun> {
    crate::sim::engine::run_partitioned(
        &setup.topo,
        setup.routing.as_ref(),
        &setup.traffic,
        &setup.params,
        setup.seed,
        setup.params.partitions,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))
}

/// Runs one case: warm-up untimed, then `measure_cycles` timed; the median of `repeat` runs.
pub(crate) fn run_case(name: &str, text: &str, repeat: usize) -> Result<CaseResult> {
    if repeat == 0 {
        bail!("repeat: must be at least 1 (the median of no run is undefined)");
    }
    let setup = case_setup(name, text)?;
    let cycles = setup.params.measure_cycles;
    let mut samples = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        if setup.params.partitions > 1 {
            // The parallel engine runs whole runs; its own clock times the measurement.
            let run = parallel_run(&setup)?;
            if run.measure_seconds <= 0.0 {
                bail!(
                    "case {name}: the run ended before its measurement did ({:?})",
                    run.end
                );
            }
            let sync = run.sync;
            let exchange = (sync.ranks > 1 && sync.windows > 0).then(|| Exchange {
                ranks: sync.ranks,
                windows: sync.windows,
                micros_per_window: sync.exchange_seconds * 1e6 / sync.windows as f64,
                least_micros_per_window: sync.least_exchange_seconds * 1e6 / sync.windows as f64,
                bytes_per_window: sync.exchange_bytes as f64 / sync.windows as f64,
            });
            samples.push((
                cycles as f64 / run.measure_seconds,
                run.measure_flit_hops as f64 / run.measure_seconds,
                run.measure_flit_hops,
                exchange,
            ));
            continue;
        }
        let mut engine = warmed_engine(&setup);
        let hops_before = engine.flit_hops();
        let start = Instant::now();
        for _ in 0..cycles {
            engine.step();
        }
        let secs = start.elapsed().as_secs_f64();
        let hops = engine.flit_hops() - hops_before;
        samples.push((cycles as f64 / secs, hops as f64 / secs, hops, None));
    }
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (cps, fhps, flit_hops, exchange) = samples[samples.len() / 2];
    let booksim2 = by_name(BOOKSIM2_CYCLES_PER_S, name);
    Ok(CaseResult {
        name: name.to_string(),
        cycles,
        cycles_per_s: cps,
        flit_hops_per_s: fhps,
        flit_hops,
        repeats: samples.len(),
        booksim2_cycles_per_s: booksim2,
        times_booksim2: booksim2.map(|b| cps / b),
        exchange,
    })
}

/// The cases `--only` selects: all without it; the case of exactly that name if there is one
/// (a name is part of others', e.g. the 2-thread case's); else every case containing it.
fn selected_cases(only: Option<&str>) -> Vec<&'static (&'static str, &'static str)> {
    let exact = only.is_some_and(|o| CASES.iter().any(|(name, _)| *name == o));
    CASES
        .iter()
        .filter(|(name, _)| match only {
            None => true,
            Some(o) if exact => *name == o,
            Some(o) => name.contains(o),
        })
        .collect()
}

pub fn run(args: &BenchArgs) -> Result<()> {
    if args.repeat == 0 {
        bail!("--repeat: must be at least 1 (got 0)");
    }
    if args.scale_ratios {
        return scale_ratios::run(args.repeat, args.json);
    }
    let selected = selected_cases(args.only.as_deref());
    if selected.is_empty() {
        let names: Vec<&str> = CASES.iter().map(|(name, _)| *name).collect();
        bail!(
            "--only: no case name contains `{}` (the cases are {})",
            args.only.as_deref().unwrap_or_default(),
            names.join(", ")
        );
    }
    let mut out = std::io::stdout().lock();
    let mut cases = Vec::new();
    for (name, text) in selected {
        let r = run_case(name, text, args.repeat)?;
        if !args.json {
            // One row per case as soon as it is measured (the cases take seconds each).
            writeln!(
                out,
                "{:<32} {:>12.0} cycles/s {:>14.0} flit-hops/s  (median of {}, {} cycles each)",
                r.name, r.cycles_per_s, r.flit_hops_per_s, r.repeats, r.cycles
            )?;
            if let (Some(reference), Some(times)) = (r.booksim2_cycles_per_s, r.times_booksim2) {
                writeln!(
                    out,
                    "{:<32} {times:.1}x BookSim2's {reference:.0} cycles/s (a reference figure, \
                     not run by this command: docs/benchmarks.md)",
                    ""
                )?;
            }
            if let Some(x) = r.exchange {
                writeln!(
                    out,
                    "{:<32} split over {} MPI ranks: {} windows; per window, rank 0 sent {:.0} \
                     bytes and spent {:.1} us in the exchange (the least of any rank: {:.1} us)",
                    "",
                    x.ranks,
                    x.windows,
                    x.bytes_per_window,
                    x.micros_per_window,
                    x.least_micros_per_window
                )?;
            }
            out.flush()?;
        }
        cases.push(r);
    }
    if args.json {
        serde_json::to_writer_pretty(&mut out, &Report { cases })?;
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::selected_cases;

    fn names(only: Option<&str>) -> Vec<&'static str> {
        selected_cases(only).iter().map(|(n, _)| *n).collect()
    }

    #[test]
    fn an_exact_name_selects_that_case_alone_and_other_text_every_case_containing_it() {
        assert_eq!(
            names(Some("dragonfly1056-min-uniform-0.2")),
            ["dragonfly1056-min-uniform-0.2"]
        );
        assert_eq!(
            names(Some("dragonfly1056")),
            [
                "dragonfly1056-min-uniform-0.2",
                "dragonfly1056-min-uniform-0.2-ioq",
                "dragonfly1056-min-uniform-0.2-2threads"
            ]
        );
        assert_eq!(names(None).len(), super::CASES.len());
        assert!(names(Some("nosuchcase")).is_empty());
    }
}
