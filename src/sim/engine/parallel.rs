//! The parallel engine: one simulation split between threads, each advancing its own
//! partition of the routers (partition.rs) with conservative synchronisation, with results
//! identical to the sequential engine's for the same seed (docs/simulator.md, "The parallel
//! engine").
//!
//! The partitions run in windows of at most the lookahead (the shortest cut channel's delay,
//! partition.rs). After each window they swap what crossed the cut and the log of the
//! window's cycles (source-queue totals, flits in the network, measured packets outstanding,
//! last movement): from these logs every partition replays `Engine::run`'s checks cycle by
//! cycle on the global figures and takes the same decision. Windows also end wherever
//! `run` looks at the whole network's state: every `DEADLOCK_PROBE` cycles (the deadlock
//! analysis runs on all partitions' shares, joined), at batch boundaries (source-queue
//! samples), at the end of the measurement, and at the earliest cycle a stall could be
//! declared; the drain runs one cycle per window, so the run ends at the very cycle the
//! last measured packet arrives. The source-queue limit alone can be passed at any cycle: when
//! the replay finds it passed inside a window, the state of that cycle is gone, so the run is
//! made again (deterministically the same up to there) with a window ending at that cycle.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::diagnostics::ProbePart;
use super::diagnostics::queue_growth;
use super::partition::{Mail, PartState, Partitioning};
use super::wire::WindowMessage;
use super::*;
use crate::cluster::Ranks;
use crate::routing::session::RoutingSession;
use crate::sim::stats::Collector as Stats;
use crate::sim::stats::{PacketRecord, Timeline, TimelineWindow};

/// Swaps, between the ranks, what their partitions sent each other in the window just run
/// (see [`WindowMessage`]) and joins the window's log over them; afterwards `shared` holds all
/// the mail for this rank's partitions and, in `joined`, the whole network's log.
fn exchange_across_ranks(shared: &Shared, ranks: &Ranks) {
    let crate::cluster::Place { rank: me, size } = ranks.place();
    let outgoing = (0..size)
        .map(|r| {
            if r == me {
                return Vec::new();
            }
            let mut mail = Vec::new();
            for from in shared.local.clone() {
                for to in parts_of_rank(r, size, shared.parts) {
                    let m = std::mem::take(&mut *lock(&shared.mail[from * shared.parts + to]));
                    if !m.is_empty() {
                        mail.push((from as u32, to as u32, m));
                    }
                }
            }
            WindowMessage { mail }.encode()
        })
        .collect();
    let received = ranks.all_to_all_bytes(outgoing);
    for message in (0..size)
        .filter(|&r| r != me)
        .map(|r| WindowMessage::decode(&received[r]))
    {
        for (from, to, m) in message.mail {
            *lock(&shared.mail[from as usize * shared.parts + to as usize]) = m;
        }
    }
    *lock(&shared.joined) = join_logs_across_ranks(shared, ranks);
}

/// The whole network's log of the window: this rank's partitions' logs joined, then summed
/// (and the last movement maximised) over the ranks in one all-reduce, so its cost does not
/// grow with the number of ranks. Also the source-queue sample, when the window has one.
fn join_logs_across_ranks(shared: &Shared, ranks: &Ranks) -> (Option<u64>, Vec<CycleLog>) {
    let cycles = lock(&shared.logs[shared.local.start]).1.len();
    // Per cycle: queued, flits, outstanding; then the samples' sum and how many there were.
    let mut sums = vec![0u64; 3 * cycles + 2];
    let mut last_moves = vec![0u64; cycles];
    for k in shared.local.clone() {
        let log = lock(&shared.logs[k]);
        debug_assert_eq!(log.1.len(), cycles, "every partition logs the same window");
        for (i, c) in log.1.iter().enumerate() {
            sums[3 * i] += c.queued;
            sums[3 * i + 1] += c.flits;
            sums[3 * i + 2] += c.outstanding;
            last_moves[i] = last_moves[i].max(c.last_move);
        }
        if let Some(queued) = log.0 {
            sums[3 * cycles] += queued;
            sums[3 * cycles + 1] += 1;
        }
    }
    let (sums, last_moves) = ranks.all_reduce_sum_max(&sums, &last_moves);
    let log = (0..cycles)
        .map(|i| CycleLog {
            queued: sums[3 * i],
            flits: sums[3 * i + 1],
            outstanding: sums[3 * i + 2],
            last_move: last_moves[i],
        })
        .collect();
    let sample = (sums[3 * cycles + 1] > 0).then_some(sums[3 * cycles]);
    (sample, log)
}

/// What [`run_partitioned`] returns: the run's end and everything measured, joined over the
/// partitions.
pub struct PartitionedRun {
    pub end: RunEnd,
    /// The cycle the run ended at.
    pub now: u64,
    pub counters: Counters,
    pub stats: Stats,
    pub partitioning: Partitioning,
    /// Wall-clock seconds to build the partitions' engines (in parallel).
    pub setup_seconds: f64,
    /// Wall-clock seconds of the measurement window (warm-up done to measurement over; for
    /// `fabricopt bench`), and the flit-hops made in it.
    pub measure_seconds: f64,
    pub measure_flit_hops: u64,
    /// Latency per `timeline_window` cycles (when asked for), from every partition's packets.
    pub timeline: Vec<TimelineWindow>,
    /// How the run was synchronised (windows, and the exchange between MPI ranks).
    pub sync: SyncFigures,
}

/// The synchronisation's figures: windows run, and, when the partitions were spread over
/// the ranks of an MPI job, the ranks, this rank's wall-clock seconds in the window exchanges
/// (encoding, the collectives and decoding; waiting there for slower ranks included), the
/// least of that over the ranks, and the bytes this rank sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct SyncFigures {
    pub windows: u64,
    pub ranks: usize,
    pub exchange_seconds: f64,
    /// The least `exchange_seconds` of any rank: an upper bound of the exchange's own cost
    /// (a rank that arrives last at every window waits for no one).
    pub least_exchange_seconds: f64,
    pub exchange_bytes: u64,
}

/// When a partition's measurement window started and ended, and its flit-hops then.
#[derive(Default)]
struct MeasureClock {
    start: Option<(Instant, u64)>,
    end: Option<(Instant, u64)>,
}

impl MeasureClock {
    fn seconds(&self) -> f64 {
        match (self.start, self.end) {
            (Some(a), Some(b)) => b.0.duration_since(a.0).as_secs_f64(),
            _ => 0.0,
        }
    }

    fn flit_hops(&self) -> u64 {
        match (self.start, self.end) {
            (Some(a), Some(b)) => b.1 - a.1,
            _ => 0,
        }
    }
}

/// One cycle of one partition, as logged for the others.
#[derive(Clone, Copy, Debug, Default)]
struct CycleLog {
    queued: u64,
    flits: u64,
    outstanding: u64,
    last_move: u64,
}

impl CycleLog {
    /// The network's figures from every partition's.
    fn join(parts: impl Iterator<Item = CycleLog>) -> CycleLog {
        parts.fold(CycleLog::default(), |a, b| CycleLog {
            queued: a.queued + b.queued,
            flits: a.flits + b.flits,
            outstanding: a.outstanding + b.outstanding,
            last_move: a.last_move.max(b.last_move),
        })
    }
}

/// A thread stopped by a panic elsewhere (the panic itself is re-raised when joining).
struct Abandoned;

/// How a partition's run ended.
enum Ending {
    Ended(RunEnd),
    /// The source-queue limit was passed at this cycle, inside a window: the state there is
    /// gone, so the run is made again with a window ending at that cycle.
    RunAgainStoppingAt(u64),
}

/// A barrier that a panicking partition breaks instead of leaving the others waiting.
struct Gate {
    parts: usize,
    state: Mutex<(usize, u64, bool)>,
    turned: Condvar,
}

impl Gate {
    fn wait(&self) -> Result<(), Abandoned> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.2 {
            return Err(Abandoned);
        }
        let generation = state.1;
        state.0 += 1;
        if state.0 == self.parts {
            *state = (0, generation + 1, false);
            self.turned.notify_all();
            return Ok(());
        }
        while state.1 == generation && !state.2 {
            state = self.turned.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.2 { Err(Abandoned) } else { Ok(()) }
    }

    fn break_open(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).2 = true;
        self.turned.notify_all();
    }
}

/// Breaks the gate if its thread unwinds.
struct BreakOnPanic<'g>(&'g Gate);

impl Drop for BreakOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.break_open();
        }
    }
}

/// What the partitions share: the gate, the mail between them (`from * parts + to`), each
/// one's window log (with its source-queue sample when the window starts at a batch
/// boundary) and the deadlock analysis' shares and result. Under MPI, this process runs the
/// partitions `local` (the gate is theirs) and its first partition's thread, the one that
/// started MPI, swaps the other ranks' entries in between the gate's turns.
struct Shared {
    parts: usize,
    local: std::ops::Range<usize>,
    across_ranks: bool,
    gate: Gate,
    mail: Vec<Mutex<Mail>>,
    logs: Vec<Mutex<(Option<u64>, Vec<CycleLog>)>>,
    probes: Vec<Mutex<Option<ProbePart>>>,
    probe_result: Mutex<Option<DeadlockReport>>,
    /// Under MPI, the whole network's log of the window (see `join_logs_across_ranks`).
    joined: Mutex<(Option<u64>, Vec<CycleLog>)>,
}

/// The partitions rank `rank` of `ranks` runs: contiguous blocks, sizes differing by at most
/// one (neighbouring partitions, such as a dragonfly's neighbouring groups, stay together).
fn parts_of_rank(rank: usize, ranks: usize, parts: usize) -> std::ops::Range<usize> {
    (rank * parts).div_ceil(ranks)..((rank + 1) * parts).div_ceil(ranks)
}

/// A partition's figures for the others at the end of a run under MPI.
#[derive(serde::Serialize, serde::Deserialize)]
struct PartResult {
    part: usize,
    counters: Counters,
    stats: Stats,
    /// The packets it delivered, when the run keeps a timeline.
    timeline: Vec<PacketRecord>,
    measure_flit_hops: u64,
}

/// How one partition's thread ends.
struct PartOutcome<'a> {
    ending: Ending,
    now: u64,
    counters: Counters,
    stats: Stats,
    timeline: Vec<PacketRecord>,
    clock: MeasureClock,
    sync: SyncFigures,
    session: Box<dyn RoutingSession + 'a>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs one simulation (warm-up, measurement, drain, as `Engine::run`) split into `parts`
/// partitions, one thread each, on the router model `params` selects. A routing whose session
/// cannot be split (`RoutingSession::partition_obstacle`: DQN-routing) is refused, as are more
/// partitions than routers.
pub fn run_partitioned(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    traffic: &Traffic,
    params: &SimParams,
    seed: u64,
    parts: usize,
) -> Result<PartitionedRun, String> {
    match params.ioq {
        None => run_on::<InputQueuedRouter>(topo, routing, traffic, params, seed, parts),
        Some(_) => run_on::<IoQueuedRouter>(topo, routing, traffic, params, seed, parts),
    }
}

fn run_on<R: RouterModel>(
    topo: &Topology,
    routing: &dyn RoutingFunction,
    traffic: &Traffic,
    params: &SimParams,
    seed: u64,
    parts: usize,
) -> Result<PartitionedRun, String> {
    let with_parts = SimParams {
        partitions: parts,
        ..params.clone()
    };
    crate::sim::check_partitions(topo, routing, &with_parts).map_err(|e| e.to_string())?;
    let feedback = default_session(routing, seed).hooks() != SessionHooks::default();
    let partitioning = {
        let net = Network::new(topo, params.num_vcs);
        let ports = Ports::new(&net, params);
        Arc::new(Partitioning::new(&net, &ports, parts, feedback)?)
    };
    // Pre-training as `sim::simulate_point` does it: the same run again and again, each
    // partition's routing session carried from one to the next, the last one measured.
    let runs = params.pretrain_runs as usize + 1;
    let mut stops: Vec<Option<u64>> = vec![None; runs];
    'attempt: loop {
        let mut sessions: Option<Vec<Box<dyn RoutingSession + '_>>> = None;
        for (i, &stop_at) in stops.iter().enumerate() {
            let measured = i + 1 == runs;
            if measured && params.freeze_after_pretrain {
                for s in sessions.iter_mut().flatten() {
                    s.set_learning(false);
                }
            }
            let attempt = Attempt {
                sessions: sessions.take(),
                stop_at,
                timeline: measured && params.timeline_window > 0,
            };
            match run_once::<R>(topo, routing, traffic, params, seed, &partitioning, attempt) {
                Ok((run, _)) if measured => return Ok(run),
                Ok((_, carried)) => sessions = Some(carried),
                // Deterministic: the same runs again reach the same state at that cycle (the
                // sessions this run started from are gone, so the chain starts over).
                Err(cycle) => {
                    stops[i] = Some(cycle);
                    continue 'attempt;
                }
            }
        }
        unreachable!("the measured run returns");
    }
}

/// How [`run_once`] starts: this process's partitions' sessions (carried from a pre-training
/// run; fresh ones when `None`), the cycle a window must end at (see [`run_once`]) and whether
/// to keep the packets for a timeline.
struct Attempt<'a> {
    sessions: Option<Vec<Box<dyn RoutingSession + 'a>>>,
    stop_at: Option<u64>,
    timeline: bool,
}

/// One attempt of [`run_partitioned`]: the run, or (`Err`) the cycle a source-queue limit was
/// passed at inside a window, where the next attempt must end a window.
///
/// Under MPI, when this thread may start collectives of the whole job
/// (`cluster::ranks_in_step`) and there are at least as many partitions as ranks, each rank
/// runs its block of partitions ([`parts_of_rank`]), its first one on this thread, and the
/// ranks swap windows' mail and logs (and deadlock-analysis shares) with MPI; every rank
/// returns the whole run, joined in partition order as a single process joins it.
fn run_once<'a, R: RouterModel>(
    topo: &'a Topology,
    routing: &'a dyn RoutingFunction,
    traffic: &Traffic,
    params: &SimParams,
    seed: u64,
    partitioning: &Arc<Partitioning>,
    attempt: Attempt<'a>,
) -> Result<(PartitionedRun, Vec<Box<dyn RoutingSession + 'a>>), u64> {
    let Attempt {
        sessions,
        stop_at,
        timeline,
    } = attempt;
    let parts = partitioning.parts;
    let ranks = crate::cluster::ranks_in_step().filter(|r| r.place().size <= parts);
    let place = ranks
        .as_ref()
        .map_or(crate::cluster::Place { rank: 0, size: 1 }, |r| r.place());
    let local = parts_of_rank(place.rank, place.size, parts);
    let shared = Shared {
        parts,
        local: local.clone(),
        across_ranks: ranks.is_some(),
        gate: Gate {
            parts: local.len(),
            state: Mutex::new((0, 0, false)),
            turned: Condvar::new(),
        },
        mail: (0..parts * parts).map(|_| Mutex::default()).collect(),
        logs: (0..parts).map(|_| Mutex::default()).collect(),
        probes: (0..parts).map(|_| Mutex::new(None)).collect(),
        probe_result: Mutex::new(None),
        joined: Mutex::default(),
    };
    let started = Instant::now();
    let setup = Mutex::new(0.0f64);
    let run_part = |k: usize,
                    ranks: Option<&crate::cluster::Ranks>,
                    session: Option<Box<dyn RoutingSession + 'a>>| {
        let _guard = BreakOnPanic(&shared.gate);
        let mut session = session.unwrap_or_else(|| default_session(routing, seed));
        session.set_partition(Arc::clone(&partitioning.router_part), k as u32);
        let mut engine = Engine::<R>::build_part(
            topo,
            session,
            traffic.clone(),
            params.clone(),
            seed,
            Some(PartState::new(Arc::clone(partitioning), k)),
        );
        if timeline {
            engine.record_timeline(params.timeline_window);
        }
        shared.gate.wait()?;
        if k == shared.local.start {
            *lock(&setup) = started.elapsed().as_secs_f64();
        }
        let lookahead = partitioning.lookahead;
        let mut clock = MeasureClock::default();
        let mut sync = SyncFigures {
            ranks: place.size,
            ..SyncFigures::default()
        };
        let ending = drive(
            &mut engine,
            k,
            &shared,
            ranks,
            lookahead,
            stop_at,
            &mut clock,
            &mut sync,
        )?;
        if let Some(ranks) = ranks {
            sync.exchange_bytes = ranks.bytes_sent();
        }
        Ok::<_, Abandoned>(PartOutcome {
            ending,
            now: engine.now,
            counters: std::mem::take(&mut engine.counters),
            stats: engine.stats.clone(),
            timeline: engine.take_timeline_records(),
            clock,
            sync,
            session: engine.into_session(),
        })
    };
    let mut given: Vec<Option<Box<dyn RoutingSession + 'a>>> = match sessions {
        Some(carried) => carried.into_iter().map(Some).collect(),
        None => (0..local.len()).map(|_| None).collect(),
    };
    assert_eq!(
        given.len(),
        local.len(),
        "one session per partition of this process"
    );
    let outcomes: Vec<Result<PartOutcome<'a>, Abandoned>> = std::thread::scope(|scope| {
        let run_part = &run_part;
        let handles: Vec<_> = (local.start + 1..local.end)
            .map(|k| {
                let session = given[k - local.start].take();
                scope.spawn(move || run_part(k, None, session))
            })
            .collect();
        // The block's first partition runs here: under MPI, this is the thread that may
        // call it.
        let first = run_part(local.start, ranks.as_ref(), given[0].take());
        std::iter::once(first)
            .chain(handles.into_iter().map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }))
            .collect()
    });
    let mut results = Vec::with_capacity(local.len());
    let mut sessions = Vec::with_capacity(local.len());
    let mut first: Option<(RunEnd, u64, MeasureClock, SyncFigures)> = None;
    for (k, outcome) in local.clone().zip(outcomes) {
        let Ok(PartOutcome {
            ending,
            now,
            counters,
            stats,
            timeline,
            clock,
            sync,
            session,
        }) = outcome
        else {
            unreachable!("a partition stops early only when another panicked, re-raised above")
        };
        let end = match ending {
            Ending::Ended(end) => end,
            // Every partition decides alike, on every rank.
            Ending::RunAgainStoppingAt(cycle) => return Err(cycle),
        };
        sessions.push(session);
        results.push(PartResult {
            part: k,
            counters,
            stats,
            timeline,
            measure_flit_hops: clock.flit_hops(),
        });
        match &first {
            None => first = Some((end, now, clock, sync)),
            Some((e, n, ..)) => debug_assert_eq!((e, *n), (&end, now), "partitions disagree"),
        }
    }
    let (end, now, clock, mut sync) = first.expect("at least one partition");
    sync.least_exchange_seconds = sync.exchange_seconds;
    if let Some(ranks) = &ranks {
        results = ranks.all_gather(results).into_iter().flatten().collect();
        sync.least_exchange_seconds = ranks
            .all_gather(sync.exchange_seconds)
            .into_iter()
            .fold(f64::INFINITY, f64::min);
    }
    let mut results = results.into_iter();
    let head = results.next().expect("at least one partition");
    debug_assert_eq!(head.part, 0, "results in partition order");
    let mut run = PartitionedRun {
        end,
        now,
        counters: head.counters,
        stats: head.stats,
        partitioning: Partitioning::clone(partitioning),
        setup_seconds: *lock(&setup),
        measure_seconds: clock.seconds(),
        measure_flit_hops: head.measure_flit_hops,
        sync,
        timeline: Vec::new(),
    };
    let mut delivered = head.timeline;
    for (k, part) in results.enumerate() {
        debug_assert_eq!(part.part, k + 1, "results in partition order");
        run.counters.add(&part.counters);
        run.stats.merge(&part.stats);
        run.measure_flit_hops += part.measure_flit_hops;
        delivered.extend(part.timeline);
    }
    if timeline {
        run.timeline = Timeline::of_records(params.timeline_window, delivered);
    }
    Ok((run, sessions))
}

/// Partition `k`'s side of the run (every partition takes the same decisions, from the same
/// joined logs).
#[allow(clippy::too_many_arguments)]
fn drive<R: RouterModel>(
    engine: &mut Engine<'_, R>,
    k: usize,
    shared: &Shared,
    ranks: Option<&Ranks>,
    lookahead: u64,
    stop_at: Option<u64>,
    clock: &mut MeasureClock,
    sync: &mut SyncFigures,
) -> Result<Ending, Abandoned> {
    let p = engine.params.clone();
    let end_measure = p.warmup_cycles + p.measure_cycles;
    let batch_len = (p.measure_cycles / p.batches as u64).max(1);
    let drain_end = end_measure + p.drain_cycles;
    let terminals = engine.topology.num_terminals();
    let mut queue_at_batch = Vec::with_capacity(p.batches + 1);
    // The whole network's figures after the last window.
    let mut global = CycleLog::default();
    loop {
        let start = engine.now;
        let measuring = start < end_measure;
        if !measuring {
            if global.outstanding == 0 {
                return Ok(Ending::Ended(RunEnd::Completed));
            }
            if start >= drain_end {
                let reason = format!(
                    "{} measured packets still undelivered {} cycles after the measurement",
                    global.outstanding, p.drain_cycles
                );
                return saturated(engine, k, shared, ranks, reason, &global).map(Ending::Ended);
            }
        }
        let at_batch =
            measuring && start >= p.warmup_cycles && (start - p.warmup_cycles) % batch_len == 0;
        let end = if measuring {
            let next_batch = if start < p.warmup_cycles {
                p.warmup_cycles
            } else {
                start + batch_len - (start - p.warmup_cycles) % batch_len
            };
            let next_probe = (start / DEADLOCK_PROBE + 1) * DEADLOCK_PROBE;
            let mut end = (start + lookahead.min(p.deadlock_cycles.max(1)))
                .min(end_measure)
                .min(next_batch)
                .min(next_probe);
            if global.flits > 0 {
                // The first cycle a stall could be declared, if nothing moves from now on.
                end = end.min(global.last_move + p.deadlock_cycles + 1);
            }
            if let Some(cycle) = stop_at.filter(|&c| c > start) {
                end = end.min(cycle);
            }
            end.max(start + 1)
        } else {
            start + 1
        };
        if start == p.warmup_cycles && clock.start.is_none() {
            clock.start = Some((Instant::now(), engine.counters.flit_hops));
        }
        // The source queues at a batch boundary, before its cycle (as `Engine::run`).
        let sample = at_batch.then_some(engine.terminals.total_queued);
        let mut log = Vec::with_capacity((end - start) as usize);
        while engine.now < end {
            engine.step();
            log.push(CycleLog {
                queued: engine.terminals.total_queued,
                flits: engine.progress.flits_in_network,
                outstanding: engine.progress.measured_outstanding,
                last_move: engine.progress.last_move,
            });
        }
        for (to, mail) in engine.take_outgoing().into_iter().enumerate() {
            if to != k {
                *lock(&shared.mail[k * shared.parts + to]) = mail;
            }
        }
        // Flits that left count in the receiver from now on: the window's own log is as
        // the sequential engine would have counted, since the move is made between windows.
        *lock(&shared.logs[k]) = (sample, log);
        shared.gate.wait()?;
        sync.windows += 1;
        if shared.across_ranks {
            if let Some(ranks) = ranks {
                let started = Instant::now();
                exchange_across_ranks(shared, ranks);
                sync.exchange_seconds += started.elapsed().as_secs_f64();
            }
            shared.gate.wait()?;
        }
        for from in (0..shared.parts).filter(|&from| from != k) {
            let mail = std::mem::take(&mut *lock(&shared.mail[from * shared.parts + k]));
            engine.take_incoming(from, mail);
        }
        // Each partition's log, or under MPI the network's, already joined.
        let logs: Vec<(Option<u64>, Vec<CycleLog>)> = if shared.across_ranks {
            vec![lock(&shared.joined).clone()]
        } else {
            shared.logs.iter().map(|l| lock(l).clone()).collect()
        };
        shared.gate.wait()?;
        if at_batch {
            queue_at_batch.push(logs.iter().map(|l| l.0.unwrap_or(0)).sum());
        }
        for i in 0..(end - start) as usize {
            let now = start + i as u64 + 1;
            let cycle = CycleLog::join(logs.iter().map(|l| l.1[i]));
            global = cycle;
            if cycle.flits > 0 {
                if now - cycle.last_move > p.deadlock_cycles {
                    let report =
                        probe(engine, k, shared, ranks, &cycle)?.unwrap_or(DeadlockReport {
                            cycle: now,
                            cycle_vcs: Vec::new(),
                            flits_in_flight: cycle.flits,
                            blocked_vcs: 0,
                            blocked_flits: 0,
                            stalled_cycles: now - cycle.last_move,
                            example_vc: None,
                        });
                    return Ok(Ending::Ended(RunEnd::Deadlock(report)));
                }
                if now % DEADLOCK_PROBE == 0 {
                    if let Some(report) = probe(engine, k, shared, ranks, &cycle)? {
                        return Ok(Ending::Ended(RunEnd::Deadlock(report)));
                    }
                }
            }
            if cycle.queued > p.max_queued_packets {
                if now != end {
                    return Ok(Ending::RunAgainStoppingAt(now));
                }
                let reason = format!(
                    "more than {} packets waiting in source queues at cycle {now}",
                    p.max_queued_packets
                );
                return saturated(engine, k, shared, ranks, reason, &cycle).map(Ending::Ended);
            }
        }
        if measuring && engine.now == end_measure {
            clock.end = Some((Instant::now(), engine.counters.flit_hops));
            queue_at_batch.push(global.queued);
            if let Some(reason) = queue_growth(&queue_at_batch, terminals) {
                return saturated(engine, k, shared, ranks, reason, &global).map(Ending::Ended);
            }
        }
    }
}

/// `Engine::saturated` for the whole network: a deadlock, if there is one, is what to report.
fn saturated<R: RouterModel>(
    engine: &Engine<'_, R>,
    k: usize,
    shared: &Shared,
    ranks: Option<&Ranks>,
    reason: String,
    global: &CycleLog,
) -> Result<RunEnd, Abandoned> {
    Ok(match probe(engine, k, shared, ranks, global)? {
        Some(report) => RunEnd::Deadlock(report),
        None => RunEnd::Saturated(reason),
    })
}

/// `Engine::find_deadlock` over the whole network: every partition hands in its share, the
/// first of each process joins them (under MPI, after every rank has sent every other its
/// shares), all read the result.
fn probe<R: RouterModel>(
    engine: &Engine<'_, R>,
    k: usize,
    shared: &Shared,
    ranks: Option<&Ranks>,
    global: &CycleLog,
) -> Result<Option<DeadlockReport>, Abandoned> {
    let part = engine.part.as_ref().expect("a partition's engine");
    *lock(&shared.probes[k]) = Some(R::probe_part(engine, &|r| part.owns_router(r)));
    shared.gate.wait()?;
    if shared.across_ranks {
        if let Some(ranks) = ranks {
            let mine: Vec<(usize, ProbePart)> = shared
                .local
                .clone()
                .map(|k| (k, lock(&shared.probes[k]).take().expect("a local share")))
                .collect();
            for (k, share) in ranks.all_gather(mine).into_iter().flatten() {
                *lock(&shared.probes[k]) = Some(share);
            }
        }
        shared.gate.wait()?;
    }
    if k == shared.local.start {
        let shares = shared
            .probes
            .iter()
            .map(|s| lock(s).take().expect("every partition handed in its share"))
            .collect();
        let report = engine
            .join_probes(shares, &part.partitioning.router_part)
            .map(|mut report| {
                report.flits_in_flight = global.flits;
                report.stalled_cycles = engine.now - global.last_move;
                report
            });
        *lock(&shared.probe_result) = report;
    }
    shared.gate.wait()?;
    let report = lock(&shared.probe_result).clone();
    // Nobody overwrites the result before everyone has read it.
    shared.gate.wait()?;
    Ok(report)
}
