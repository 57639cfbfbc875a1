//! The MPI side of [`super`] (feature `mpi`): starting the job, the shared map, the broadcast
//! of rank 0's files, and ending the job on a panic or an error.
//!
//! Protocol of one [`map`] call: rank 0 sends `TASK` frames (a chunk `start..start+count` of
//! the item indices) to the workers and keeps at most [`CHUNKS_IN_FLIGHT`] chunks at every
//! rank, itself included; a worker answers each with a `RESULT` frame (the chunk's results,
//! MessagePack). When every result is in, rank 0 sends each worker an `END` frame with the
//! length of the whole result vector and broadcasts it. Every frame carries the call's number,
//! its site and its item count, which each worker compares with its own: ranks that are not
//! at the same call (a bug: they must run the same code on the same data) stop the job with a
//! message instead of exchanging wrong results.
//!
//! Waiting is by non-blocking probes with a sleep that doubles up to [`BACKOFF_MAX`], so a rank
//! waiting for work or results leaves its cores to the rayon threads of the ranks beside it
//! (a blocking receive spins in most MPI libraries). Collectives (the final broadcast) start
//! only once a frame says the other side is there, so they do not wait long either.

use std::cell::RefCell;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use ::mpi::Threading;
use ::mpi::collective::SystemOperation;
use ::mpi::datatype::{Partition, PartitionMut};
use ::mpi::environment::Universe;
use ::mpi::point_to_point::MatchedReceiveVec;
use ::mpi::topology::Color;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use rayon::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Place;

const TAG_TASK: i32 = 11;
const TAG_RESULT: i32 = 12;
const TAG_END: i32 = 13;
const TAG_FILE: i32 = 14;
const TAG_GATHER: i32 = 15;

/// Chunks a rank holds at once: the one its threads work on and the next, so that it never
/// waits for rank 0 between chunks.
const CHUNKS_IN_FLIGHT: usize = 2;
const BACKOFF_MIN: Duration = Duration::from_micros(20);
const BACKOFF_MAX: Duration = Duration::from_millis(1);

/// The MPI environment; dropping it finalises MPI.
pub(super) struct Job {
    _universe: Universe,
}

/// What the thread that started MPI (the only one that calls it: "funneled") knows of the job.
struct Comm {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    /// Rayon threads of every rank (rank 0's copy; the workers hold only their own).
    threads: Vec<usize>,
    /// Calls of [`map`] and [`read_on_root`] so far: the same on every rank in step.
    calls: u64,
}

thread_local! {
    static COMM: RefCell<Option<Comm>> = const { RefCell::new(None) };
}

/// The workers' original standard error (theirs goes to /dev/null), for panics and errors.
static WORKER_STDERR: AtomicI32 = AtomicI32::new(-1);

/// The thread that started MPI: the only one that may call it.
static MAIN_THREAD: OnceLock<std::thread::ThreadId> = OnceLock::new();

/// With this variable set, every rank prints at the end how many shared calls it took part in
/// and how many of their items it evaluated: how the work was split (tests/mpi.rs uses it).
const STATS: &str = "FABRICOPT_MPI_STATS";
static CALLS: AtomicU64 = AtomicU64::new(0);
static ITEMS: AtomicU64 = AtomicU64::new(0);
/// Collectives of simulations split over the ranks ([`all_to_all_bytes`], [`all_gather_bytes`]).
static SPLIT_COLLECTIVES: AtomicU64 = AtomicU64::new(0);

impl Drop for Job {
    fn drop(&mut self) {
        if std::env::var_os(STATS).is_some() {
            write_error(&format!(
                "fabricopt rank {}: {} shared calls, {} items evaluated here, {} collectives \
                 of split simulations\n",
                super::place().rank,
                CALLS.load(Ordering::SeqCst),
                ITEMS.load(Ordering::SeqCst),
                SPLIT_COLLECTIVES.load(Ordering::SeqCst)
            ));
        }
    }
}

impl Job {
    pub(super) fn start() -> anyhow::Result<(Job, Place)> {
        let Some((universe, threading)) = ::mpi::initialize_with_threading(Threading::Funneled)
        else {
            anyhow::bail!("--mpi: MPI was already initialised");
        };
        if threading == Threading::Single {
            anyhow::bail!(
                "--mpi: the MPI library offers only MPI_THREAD_SINGLE; fabricopt needs \
                 MPI_THREAD_FUNNELED (rayon threads beside the thread that calls MPI)"
            );
        }
        let _ = MAIN_THREAD.set(std::thread::current().id());
        let comm = Comm::new(universe.world());
        let (rank, size) = (comm.rank, comm.size);
        if size > 1 {
            check_same_inputs(&comm.world, rank)?;
            if rank > 0 {
                silence_standard_streams();
            }
            std::panic::set_hook(Box::new(move |info| {
                let trace = std::backtrace::Backtrace::capture();
                let trace = match trace.status() {
                    std::backtrace::BacktraceStatus::Captured => format!("\n{trace}"),
                    _ => String::new(),
                };
                write_error(&format!("fabricopt rank {rank}: {info}{trace}\n"));
                // A panicking rank must take the job down, or the others wait for it forever.
                // MPI is funneled: only the main thread may call MPI_Abort; elsewhere the
                // process aborts, and the launcher ends the job when one of its ranks dies.
                if MAIN_THREAD.get() == Some(&std::thread::current().id()) {
                    abort_job(101);
                }
                wait_until_read(error_fd(), STDERR_READ_MAX);
                std::process::abort();
            }));
        }
        COMM.with_borrow_mut(|c| *c = Some(comm));
        Ok((
            Job {
                _universe: universe,
            },
            Place { rank, size },
        ))
    }
}

/// Every rank must run the same binary and command on the same problem: compares a hash of
/// each rank's executable file and one of its arguments and the problem files among them
/// (`.toml`) with rank 0's, and refuses the job on every rank if one differs (a node-local copy
/// of another version, say), since the ranks would then take different decisions. The other
/// inputs (traffic matrices, imported topologies, tables) need no check: rank 0 reads them for
/// every rank (`read_input`).
fn check_same_inputs(world: &SimpleCommunicator, rank: usize) -> anyhow::Result<()> {
    use ::mpi::collective::SystemOperation;
    let mut text = Vec::new();
    for arg in std::env::args_os().skip(1) {
        let path = std::path::PathBuf::from(&arg);
        text.extend_from_slice(arg.as_encoded_bytes());
        text.push(0);
        if path.extension().is_some_and(|e| e == "toml") {
            // An unreadable file hashes as its absence; the command reports it later.
            text.extend(std::fs::read(&path).unwrap_or_default());
            text.push(0);
        }
    }
    // The whole executable, not a version string: two builds of one version may still decide
    // differently (another compiler, another feature set). An unreadable one hashes as empty.
    let binary = std::env::current_exe()
        .and_then(std::fs::read)
        .unwrap_or_default();
    let mine = [fnv1a(&text), hash_words(&binary)];
    let mut roots = mine;
    world.process_at_rank(0).broadcast_into(&mut roots[..]);
    // Bit 0: the command or problem differs from rank 0's; bit 1: the binary does.
    let differs = u8::from(mine[0] != roots[0]) | (u8::from(mine[1] != roots[1]) << 1);
    let mut any = 0u8;
    world.all_reduce_into(&differs, &mut any, SystemOperation::bitwise_or());
    if differs & 1 != 0 {
        eprintln!(
            "fabricopt rank {rank}: its arguments or problem file differ from rank 0's: {:?}",
            std::env::args().skip(1).collect::<Vec<_>>()
        );
    }
    if differs & 2 != 0 {
        eprintln!(
            "fabricopt rank {rank}: its executable {:?} differs from rank 0's",
            std::env::current_exe().unwrap_or_default()
        );
    }
    if any & 1 != 0 {
        anyhow::bail!(
            "the ranks do not run the same command on the same problem file (a rank's copy \
             differs from rank 0's; put the problem on a file system every node shares)"
        );
    }
    if any & 2 != 0 {
        anyhow::bail!(
            "the ranks do not run the same fabricopt executable (a rank's binary differs from \
             rank 0's; run one build, from a file system every node shares)"
        );
    }
    Ok(())
}

/// Sends the worker's standard output and error to /dev/null (rank 0 prints for the job),
/// keeping a copy of standard error for panics and errors.
fn silence_standard_streams() {
    // SAFETY: dup, open, dup2 and close on descriptors this process owns, before any other
    // thread of ours writes to them; failures leave the descriptors as they were.
    unsafe {
        let saved = libc::dup(2);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            libc::close(null);
        }
        WORKER_STDERR.store(saved, Ordering::SeqCst);
    }
}

/// Writes to the original standard error (a worker's saved copy, or rank 0's own).
fn write_error(text: &str) {
    let fd = WORKER_STDERR.load(Ordering::SeqCst);
    if fd < 0 {
        eprint!("{text}");
        return;
    }
    // SAFETY: `fd` is the descriptor `silence_standard_streams` duplicated and never closes;
    // the pointer and length describe `text`'s bytes. A short or failed write loses part of
    // a message that could not be shown anyway.
    unsafe {
        libc::write(fd, text.as_ptr().cast(), text.len());
    }
}

/// The descriptor [`write_error`] writes to.
fn error_fd() -> i32 {
    match WORKER_STDERR.load(Ordering::SeqCst) {
        fd if fd < 0 => 2,
        fd => fd,
    }
}

/// How long a failing rank waits for the launcher to read its last message.
const STDERR_READ_MAX: Duration = Duration::from_secs(5);

/// Ends the whole job (MPI_Abort) once the launcher has read what this rank wrote to its
/// standard error. MPI_Abort lets the launcher kill the job at once, and MPICH's launcher can
/// then drop what the rank wrote just before: a CI run once saw a job end on a write error
/// with an empty standard error, so the user would not have learnt which file failed.
fn abort_job(code: i32) -> ! {
    wait_until_read(error_fd(), STDERR_READ_MAX);
    SimpleCommunicator::world().abort(code)
}

/// Waits until the reader of the pipe `fd` writes to has taken every byte in it, or for `at_most`.
/// Returns at once when `fd` is not a pipe (a file or a terminal has no reader to wait for).
/// Linux counts a pipe's unread bytes on its write end too (FIONREAD).
fn wait_until_read(fd: i32, at_most: Duration) {
    // SAFETY: fstat writes one `stat` to the pointer, which points to a zeroed one of ours.
    let is_pipe = unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut stat) == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFIFO
    };
    if !is_pipe {
        return;
    }
    let deadline = std::time::Instant::now() + at_most;
    loop {
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int to the pointer, which points to ours.
        let asked = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut unread) };
        if asked != 0 || unread <= 0 || std::time::Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// See [`super::fail`]. Rank 0 has printed the error already.
pub(super) fn fail(message: &str) {
    let place = super::place();
    if place.size <= 1 {
        return;
    }
    if place.rank > 0 {
        write_error(&format!(
            "fabricopt rank {}: error: {message}\n",
            place.rank
        ));
    }
    abort_job(1);
}

/// A call's identity, which every frame carries and every worker checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Call {
    number: u64,
    site: u64,
    items: u64,
}

fn site_hash(site: &str) -> u64 {
    fnv1a(site.as_bytes())
}

/// FNV-1a: the same on every rank (std's hashers are not promised to be).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// FNV-1a over 8-byte words (the tail zero-padded): 8 times fewer dependent multiplications
/// than [`fnv1a`], for the tens of megabytes of an executable.
fn hash_words(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut h = (&mut chunks).fold(0xcbf2_9ce4_8422_2325u64, |h, w| {
        (h ^ u64::from_le_bytes(w.try_into().expect("8 bytes"))).wrapping_mul(0x0100_0000_01b3)
    });
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(0x0100_0000_01b3);
    h ^ bytes.len() as u64
}

const FRAME_HEADER: usize = 5 * 8;

fn frame(call: Call, start: usize, count: usize, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(FRAME_HEADER + payload.len());
    for v in [
        call.number,
        call.site,
        call.items,
        start as u64,
        count as u64,
    ] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.extend_from_slice(payload);
    bytes
}

fn unframe(bytes: &[u8]) -> (Call, usize, usize, &[u8]) {
    let word = |i: usize| {
        u64::from_le_bytes(
            bytes[8 * i..8 * i + 8]
                .try_into()
                .expect("frames have a 40-byte header"),
        )
    };
    assert!(
        bytes.len() >= FRAME_HEADER,
        "a frame shorter than its header"
    );
    let call = Call {
        number: word(0),
        site: word(1),
        items: word(2),
    };
    (
        call,
        word(3) as usize,
        word(4) as usize,
        &bytes[FRAME_HEADER..],
    )
}

/// MessagePack with field names (`to_vec_named`): a struct as a map, so that fields left out
/// when empty (`skip_serializing_if`) do not shift the others, as they would in the positional
/// form `rmp_serde::to_vec` writes.
fn encode<R: Serialize>(values: &R) -> Vec<u8> {
    rmp_serde::to_vec_named(values).expect("results serialise to MessagePack")
}

fn decode<R: DeserializeOwned>(bytes: &[u8]) -> R {
    rmp_serde::from_slice(bytes).expect("a rank sent results this build reads")
}

/// Sleeps after a round with nothing to do, longer each time up to [`BACKOFF_MAX`].
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Backoff(BACKOFF_MIN)
    }

    fn after(&mut self, progressed: bool) {
        if progressed {
            self.0 = BACKOFF_MIN;
        } else {
            std::thread::sleep(self.0);
            self.0 = (self.0 * 2).min(BACKOFF_MAX);
        }
    }
}

/// How many items the next chunk for a rank with `threads` threads takes, `remaining` items
/// being left and `all_threads` threads in the job: guided self-scheduling (half of an equal
/// share of what is left, so chunks shrink as the batch ends and late ranks balance the
/// load), at least one item per thread of the rank so that all its threads have work.
fn chunk_len(remaining: usize, all_threads: usize, threads: usize) -> usize {
    remaining
        .div_ceil(2 * all_threads.max(1))
        .max(threads.max(1))
        .min(remaining)
}

/// Evaluates items `start..start + count` on this rank's rayon threads, then sends
/// `(start, results)` to the thread that called MPI (whose receiver lives until every chunk
/// is in). `inject`: panic instead ([`INJECT_PANIC`]).
fn evaluate_chunk<'s, T, R>(
    scope: &rayon::Scope<'s>,
    items: &'s [T],
    f: &'s (dyn Fn(&T) -> R + Sync),
    start: usize,
    count: usize,
    tx: &mpsc::Sender<(usize, Vec<R>)>,
    inject: bool,
) where
    T: Sync,
    R: Send + 's,
{
    let tx = tx.clone();
    scope.spawn(move |_| {
        if inject {
            panic!("injected by {INJECT_PANIC} (a test of the job's end)");
        }
        let out = items[start..start + count].par_iter().map(f).collect();
        let _ = tx.send((start, out));
    });
}

/// The chunks `(rank, start, count)` to hand out now, items `next..n` being unassigned and
/// `in_flight[rank]` chunks held by each rank (both updated). Every rank gets a chunk before
/// any gets its next one, so a batch of no more items than ranks takes one round, not two.
fn hand_out(
    in_flight: &mut [usize],
    next: &mut usize,
    n: usize,
    threads: &[usize],
) -> Vec<(usize, usize, usize)> {
    let all_threads: usize = threads.iter().sum();
    let mut chunks = Vec::new();
    for depth in 1..=CHUNKS_IN_FLIGHT {
        for (rank, held) in in_flight.iter_mut().enumerate() {
            if *next >= n || *held >= depth {
                continue;
            }
            let count = chunk_len(n - *next, all_threads, threads[rank]);
            chunks.push((rank, *next, count));
            *next += count;
            *held += 1;
        }
    }
    chunks
}

/// Fault injection for tests of a failing job (tests/mpi.rs, docs/scale-out.md): the worker
/// of this rank panics in its first task.
const INJECT_PANIC: &str = "FABRICOPT_MPI_INJECT_PANIC";

fn injected_panic(rank: usize) -> bool {
    std::env::var(INJECT_PANIC).is_ok_and(|v| v.trim() == rank.to_string())
}

/// The job's communicator when this is the thread that started MPI, the job has more than
/// one rank and no call is under way on it.
fn with_comm<X>(body: impl FnOnce(&mut Comm) -> X) -> Option<X> {
    COMM.with(|cell| {
        let mut guard = cell.try_borrow_mut().ok()?;
        let comm = guard.as_mut().filter(|c| c.size > 1)?;
        comm.calls += 1;
        Some(body(comm))
    })
}

/// See [`super::map`]; `None` when MPI does not take part (see [`with_comm`]).
pub(super) fn map<T, R>(
    site: &'static str,
    items: &[T],
    f: &(dyn Fn(&T) -> R + Sync),
) -> Option<Vec<R>>
where
    T: Sync,
    R: Send + Serialize + DeserializeOwned,
{
    with_comm(|comm| {
        CALLS.fetch_add(1, Ordering::SeqCst);
        let call = Call {
            number: comm.calls,
            site: site_hash(site),
            items: items.len() as u64,
        };
        if comm.rank == 0 {
            comm.lead(call, items, f)
        } else {
            comm.follow(call, site, items, f)
        }
    })
}

/// See [`super::read_on_root`].
pub(super) fn read_on_root(path: &Path) -> Option<std::io::Result<Option<Vec<u8>>>> {
    with_comm(|comm| {
        let call = Call {
            number: comm.calls,
            site: site_hash("read_on_root"),
            items: 1,
        };
        // Status 0: the file's bytes; 1: no such file; 2: the error's message.
        let (status, payload) = if comm.rank == 0 {
            let read = super::read_local(path);
            let (status, payload) = match &read {
                Ok(Some(bytes)) => (0, bytes.clone()),
                Ok(None) => (1, Vec::new()),
                Err(e) => (2, e.to_string().into_bytes()),
            };
            comm.share(call, TAG_FILE, status, payload);
            return read;
        } else {
            comm.receive_shared(call, "read_on_root", TAG_FILE)
        };
        match status {
            0 => Ok(Some(payload)),
            1 => Ok(None),
            _ => Err(std::io::Error::other(String::from_utf8_lossy(&payload))),
        }
    })
}

/// See [`super::spread`]; `None` when MPI does not take part (see [`with_comm`]) or there is
/// one item (every rank then runs it, sharing its maps, as without groups).
pub(super) fn spread<T, R>(
    site: &'static str,
    items: &[T],
    f: &dyn Fn(&T) -> anyhow::Result<R>,
) -> Option<anyhow::Result<Vec<R>>>
where
    R: Serialize + DeserializeOwned,
{
    let (world, call, group, groups) = COMM.with(|cell| {
        let mut guard = cell.try_borrow_mut().ok()?;
        let comm = guard.as_mut().filter(|c| c.size > 1 && items.len() > 1)?;
        comm.calls += 1;
        let call = Call {
            number: comm.calls,
            site: site_hash(site),
            items: items.len() as u64,
        };
        let groups = items.len().min(comm.size);
        // Contiguous blocks of ranks (sizes differ by at most one); rank 0 leads group 0.
        let group = comm.rank * groups / comm.size;
        guard.take().map(|world| (world, call, group, groups))
    })?;
    let sub = world
        .world
        .split_by_color(Color::with_value(group as i32))
        .expect("every rank has a colour");
    let sub = Comm::new(sub);
    let (sub_rank, sub_size) = (sub.rank, sub.size);
    COMM.with_borrow_mut(|c| *c = Some(sub));
    super::set_writer(sub_rank == 0);
    // This group's items, up to its first error (as one process stops at the first).
    let mut done: Vec<(u64, Result<R, String>)> = Vec::new();
    for i in (group..items.len()).step_by(groups) {
        let result = f(&items[i]).map_err(|e| format!("{e:#}"));
        if let (Err(message), true) = (&result, sub_size > 1) {
            // An error only some ranks of the group see (a write fails on its writer alone)
            // would leave the others waiting in the group's next map: end the job.
            if super::place().rank == 0 {
                eprintln!("error: {message}");
            }
            super::fail(message);
        }
        let failed = result.is_err();
        done.push((i as u64, result));
        if failed {
            break;
        }
    }
    COMM.with_borrow_mut(|c| *c = Some(world));
    super::set_writer(super::place().rank == 0);
    Some(with_comm_in_place(|comm| {
        comm.gather_spread(call, site, items.len(), groups, sub_rank == 0, done)
    }))
}

/// The job's communicator (as [`with_comm`], without counting a call).
fn with_comm_in_place<X>(body: impl FnOnce(&mut Comm) -> X) -> X {
    COMM.with_borrow_mut(|c| body(c.as_mut().expect("the job's communicator is back")))
}

impl Comm {
    /// The communicator of `world` (the job's, or a group's), with every rank's rayon
    /// threads gathered on its rank 0: a collective of its ranks.
    fn new(world: SimpleCommunicator) -> Comm {
        let rank = world.rank() as usize;
        let size = world.size() as usize;
        let mine = rayon::current_num_threads() as u64;
        let mut threads = vec![0u64; size];
        let root = world.process_at_rank(0);
        if rank == 0 {
            root.gather_into_root(&mine, &mut threads[..]);
        } else {
            root.gather_into(&mine);
        }
        Comm {
            rank,
            size,
            threads: threads.iter().map(|&t| t as usize).collect(),
            calls: 0,
            world,
        }
    }

    /// After a spread: group leaders send their results to rank 0, which puts them in order
    /// and shares the whole (or the first error by item) with every rank.
    fn gather_spread<R: Serialize + DeserializeOwned>(
        &self,
        call: Call,
        site: &str,
        len: usize,
        groups: usize,
        leader: bool,
        done: Vec<(u64, Result<R, String>)>,
    ) -> anyhow::Result<Vec<R>> {
        type Shared<R> = Result<Vec<R>, String>;
        if self.rank == 0 {
            let mut slots: Vec<Option<Result<R, String>>> =
                std::iter::repeat_with(|| None).take(len).collect();
            let mut place = |part: Vec<(u64, Result<R, String>)>| {
                for (i, r) in part {
                    slots[i as usize] = Some(r);
                }
            };
            place(done);
            let mut backoff = Backoff::new();
            let mut received = 1;
            while received < groups {
                let probed = self
                    .world
                    .any_process()
                    .immediate_matched_probe_with_tag(TAG_GATHER);
                let progressed = probed.is_some();
                if let Some(probed) = probed {
                    let (bytes, status) = probed.matched_receive_vec::<u8>();
                    let (got, _, _, payload) = unframe(&bytes);
                    if got != call {
                        out_of_step(status.source_rank() as usize, site, call, got);
                    }
                    place(decode(payload));
                    received += 1;
                }
                backoff.after(progressed);
            }
            // In item order: the results, or the first error (later items may not have run).
            let mut results = Vec::with_capacity(len);
            let mut shared: Shared<R> = Ok(Vec::new());
            for slot in slots {
                match slot {
                    Some(Ok(r)) => results.push(r),
                    Some(Err(e)) => {
                        shared = Err(e);
                        break;
                    }
                    None => {
                        shared = Err(format!("{site}: an item was not run"));
                        break;
                    }
                }
            }
            let shared = shared.map(|_| results);
            self.share(call, TAG_END, 0, encode(&shared));
            shared.map_err(anyhow::Error::msg)
        } else {
            if leader {
                let payload = encode(&done);
                self.send_patiently(0, &frame(call, 0, done.len(), &payload), TAG_GATHER);
            }
            let (_, bytes) = self.receive_shared(call, site, TAG_END);
            let shared: Shared<R> = decode(&bytes);
            shared.map_err(anyhow::Error::msg)
        }
    }

    /// A send that waits by probing its request with back-off rather than in the library's
    /// blocking send, which spins while rank 0 is busy with its own group's jobs.
    fn send_patiently(&self, rank: usize, bytes: &[u8], tag: i32) {
        let destination = self.world.process_at_rank(rank as i32);
        ::mpi::request::scope(|scope| {
            let mut request = destination.immediate_send_with_tag(scope, bytes, tag);
            let mut backoff = Backoff::new();
            loop {
                match request.test() {
                    Ok(_) => break,
                    Err(pending) => request = pending,
                }
                backoff.after(false);
            }
        });
    }

    /// Rank 0's side of a map: hands out chunks, evaluates its own, gathers the rest.
    fn lead<T, R>(&self, call: Call, items: &[T], f: &(dyn Fn(&T) -> R + Sync)) -> Vec<R>
    where
        T: Sync,
        R: Send + Serialize + DeserializeOwned,
    {
        let n = items.len();
        let mut results: Vec<Option<R>> = std::iter::repeat_with(|| None).take(n).collect();
        let mut in_flight = vec![0usize; self.size];
        let (mut next, mut done) = (0, 0);
        let (tx, rx) = mpsc::channel::<(usize, Vec<R>)>();
        rayon::in_place_scope(|scope| {
            let mut backoff = Backoff::new();
            while done < n {
                let mut progressed = false;
                for (rank, start, count) in hand_out(&mut in_flight, &mut next, n, &self.threads) {
                    progressed = true;
                    if rank == 0 {
                        evaluate_chunk(scope, items, f, start, count, &tx, false);
                    } else {
                        self.world
                            .process_at_rank(rank as i32)
                            .send_with_tag(&frame(call, start, count, &[])[..], TAG_TASK);
                    }
                }
                let mut store = |rank: usize, start: usize, out: Vec<R>| {
                    done += out.len();
                    in_flight[rank] -= 1;
                    for (slot, r) in results[start..start + out.len()].iter_mut().zip(out) {
                        *slot = Some(r);
                    }
                };
                while let Ok((start, out)) = rx.try_recv() {
                    ITEMS.fetch_add(out.len() as u64, Ordering::SeqCst);
                    store(0, start, out);
                    progressed = true;
                }
                while let Some(probed) = self
                    .world
                    .any_process()
                    .immediate_matched_probe_with_tag(TAG_RESULT)
                {
                    let (bytes, status) = probed.matched_receive_vec::<u8>();
                    let (got, start, count, payload) = unframe(&bytes);
                    let rank = status.source_rank() as usize;
                    if got != call {
                        out_of_step(rank, "a result", call, got);
                    }
                    let out: Vec<R> = decode(payload);
                    assert_eq!(out.len(), count, "rank {rank} sent a short chunk");
                    store(rank, start, out);
                    progressed = true;
                }
                backoff.after(progressed);
            }
        });
        let results: Vec<R> = results
            .into_iter()
            .map(|r| r.expect("every item is evaluated once"))
            .collect();
        self.share(call, TAG_END, 0, encode(&results));
        results
    }

    /// A worker's side of a map: evaluates the chunks rank 0 sends until it says the batch
    /// is done, then takes the whole result.
    fn follow<T, R>(
        &self,
        call: Call,
        site: &str,
        items: &[T],
        f: &(dyn Fn(&T) -> R + Sync),
    ) -> Vec<R>
    where
        T: Sync,
        R: Send + Serialize + DeserializeOwned,
    {
        let root = self.world.process_at_rank(0);
        let (tx, rx) = mpsc::channel::<(usize, Vec<R>)>();
        let end = rayon::in_place_scope(|scope| {
            let mut backoff = Backoff::new();
            loop {
                let mut progressed = false;
                while let Ok((start, out)) = rx.try_recv() {
                    ITEMS.fetch_add(out.len() as u64, Ordering::SeqCst);
                    let payload = encode(&out);
                    let bytes = frame(call, start, out.len(), &payload);
                    self.send_patiently(0, &bytes, TAG_RESULT);
                    progressed = true;
                }
                if let Some(probed) = root.immediate_matched_probe() {
                    let (bytes, status) = probed.matched_receive_vec::<u8>();
                    let (got, start, count, _) = unframe(&bytes);
                    if got != call {
                        out_of_step(0, site, call, got);
                    }
                    match status.tag() {
                        TAG_TASK => {
                            let inject = injected_panic(self.rank);
                            evaluate_chunk(scope, items, f, start, count, &tx, inject);
                        }
                        TAG_END => break count,
                        tag => panic!("rank 0 sent an unexpected message (tag {tag}) in {site}"),
                    }
                    progressed = true;
                }
                backoff.after(progressed);
            }
        });
        let mut bytes = vec![0u8; end];
        root.broadcast_into(&mut bytes[..]);
        decode(&bytes)
    }

    /// Rank 0: tells every worker that `payload` (with `status`) follows, then broadcasts it.
    fn share(&self, call: Call, tag: i32, status: usize, mut payload: Vec<u8>) {
        for rank in 1..self.size {
            self.world
                .process_at_rank(rank as i32)
                .send_with_tag(&frame(call, status, payload.len(), &[])[..], tag);
        }
        self.world
            .process_at_rank(0)
            .broadcast_into(&mut payload[..]);
    }

    /// A worker: waits (probing, not spinning) for rank 0's notice, then takes the broadcast.
    fn receive_shared(&self, call: Call, site: &str, tag: i32) -> (usize, Vec<u8>) {
        let root = self.world.process_at_rank(0);
        let mut backoff = Backoff::new();
        let (status, len) = loop {
            if let Some(probed) = root.immediate_matched_probe() {
                let (bytes, probed) = probed.matched_receive_vec::<u8>();
                let (got, status, len, _) = unframe(&bytes);
                if got != call || probed.tag() != tag {
                    out_of_step(0, site, call, got);
                }
                break (status, len);
            }
            backoff.after(false);
        };
        let mut payload = vec![0u8; len];
        root.broadcast_into(&mut payload[..]);
        (status, payload)
    }
}

/// Ranks that are not at the same call: a bug (they run the same code on the same data), so
/// the job stops with what each side expected.
fn out_of_step(other: usize, site: &str, mine: Call, theirs: Call) -> ! {
    let rank = super::place().rank;
    write_error(&format!(
        "fabricopt rank {rank}: the ranks are out of step at {site}: this rank is at call {} \
         ({} items), rank {other} at call {} ({} items, {})\n",
        mine.number,
        mine.items,
        theirs.number,
        theirs.items,
        if mine.site == theirs.site {
            "same site"
        } else {
            "another site"
        },
    ));
    abort_job(2);
}

#[cfg(test)]
#[path = "ranks_tests.rs"]
mod tests;

/// The job's place when this thread may start a collective of every rank now (see
/// [`super::ranks_in_step`]).
pub(super) fn in_step() -> Option<Place> {
    COMM.with(|cell| {
        let guard = cell.try_borrow().ok()?;
        let comm = guard.as_ref().filter(|c| c.size > 1)?;
        Some(Place {
            rank: comm.rank,
            size: comm.size,
        })
    })
}

/// Prefix sums of `counts`: where each rank's bytes start.
fn displacements(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0i32, |at, &c| {
            let start = *at;
            *at += c;
            Some(start)
        })
        .collect()
}

fn split_by(bytes: &[u8], counts: &[i32]) -> Vec<Vec<u8>> {
    let mut at = 0;
    counts
        .iter()
        .map(|&c| {
            let part = bytes[at..at + c as usize].to_vec();
            at += c as usize;
            part
        })
        .collect()
}

/// `outgoing[r]` to rank r, from every rank: what each rank sent this one, by rank
/// (`MPI_Alltoallv`, after the counts). A collective of the communicator in use.
pub(super) fn all_to_all_bytes(outgoing: &[Vec<u8>]) -> Vec<Vec<u8>> {
    with_comm(|comm| {
        assert_eq!(outgoing.len(), comm.size, "one message per rank");
        SPLIT_COLLECTIVES.fetch_add(1, Ordering::SeqCst);
        let send_counts: Vec<i32> = outgoing.iter().map(|b| message_len(b.len())).collect();
        let mut recv_counts = vec![0i32; comm.size];
        ::mpi::request::scope(|scope| {
            finish(comm.world.immediate_all_to_all_into(
                scope,
                &send_counts[..],
                &mut recv_counts[..],
            ))
        });
        let send = outgoing.concat();
        let (send_displs, recv_displs) = (displacements(&send_counts), displacements(&recv_counts));
        let mut received = vec![0u8; recv_counts.iter().map(|&c| c as usize).sum()];
        {
            let send = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
            let mut recv = PartitionMut::new(&mut received[..], &recv_counts[..], &recv_displs[..]);
            ::mpi::request::scope(|scope| {
                finish(
                    comm.world
                        .immediate_all_to_all_varcount_into(scope, &send, &mut recv),
                )
            });
        }
        split_by(&received, &recv_counts)
    })
    .expect("a collective of every rank, started only when in step (ranks_in_step)")
}

/// Every rank's `mine`, by rank (`MPI_Allgatherv`, after the lengths).
pub(super) fn all_gather_bytes(mine: &[u8]) -> Vec<Vec<u8>> {
    with_comm(|comm| {
        SPLIT_COLLECTIVES.fetch_add(1, Ordering::SeqCst);
        let len = message_len(mine.len());
        let mut counts = vec![0i32; comm.size];
        ::mpi::request::scope(|scope| {
            finish(
                comm.world
                    .immediate_all_gather_into(scope, &len, &mut counts[..]),
            )
        });
        let displs = displacements(&counts);
        let mut received = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut recv = PartitionMut::new(&mut received[..], &counts[..], &displs[..]);
            ::mpi::request::scope(|scope| {
                finish(
                    comm.world
                        .immediate_all_gather_varcount_into(scope, mine, &mut recv),
                )
            });
        }
        split_by(&received, &counts)
    })
    .expect("a collective of every rank, started only when in step (ranks_in_step)")
}

/// Waits for a non-blocking collective, yielding the core between tests: a blocking one
/// spins in most MPI libraries, which starves ranks that share cores (more ranks than cores);
/// with a core each, the yield returns at once and costs nothing.
fn finish<'a, D: ?Sized, S: ::mpi::request::Scope<'a>>(
    mut request: ::mpi::request::Request<'a, D, S>,
) {
    loop {
        match request.test() {
            Ok(_) => return,
            Err(pending) => {
                request = pending;
                std::thread::yield_now();
            }
        }
    }
}

/// Element-wise sums of every rank's `sums` and maxima of every rank's `maxima`
/// (`MPI_Iallreduce`, twice).
pub(super) fn all_reduce_sum_max(sums: &[u64], maxima: &[u64]) -> (Vec<u64>, Vec<u64>) {
    with_comm(|comm| {
        SPLIT_COLLECTIVES.fetch_add(1, Ordering::SeqCst);
        let reduce = |values: &[u64], op: SystemOperation| {
            let mut reduced = vec![0u64; values.len()];
            ::mpi::request::scope(|scope| {
                finish(
                    comm.world
                        .immediate_all_reduce_into(scope, values, &mut reduced[..], op),
                )
            });
            reduced
        };
        (
            reduce(sums, SystemOperation::sum()),
            reduce(maxima, SystemOperation::max()),
        )
    })
    .expect("a collective of every rank, started only when in step (ranks_in_step)")
}

/// MPI counts are `int`s: a message of 2 GiB or more cannot be sent in one piece.
fn message_len(len: usize) -> i32 {
    i32::try_from(len).unwrap_or_else(|_| {
        panic!("a message of {len} bytes between ranks: MPI counts stop at 2 GiB")
    })
}

/// Positional MessagePack (`rmp_serde::to_vec`), for the partitioned engine's window messages:
/// smaller and faster than the named form, for types without skipped fields.
pub(super) fn encode_compact<T: Serialize>(value: &T) -> Vec<u8> {
    rmp_serde::to_vec(value).expect("window messages serialise to MessagePack")
}

pub(super) fn decode_compact<T: DeserializeOwned>(bytes: &[u8]) -> T {
    rmp_serde::from_slice(bytes).expect("a rank sent a window message this build reads")
}
