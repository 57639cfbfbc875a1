//! Scale-out over the ranks of an MPI job (cargo feature `mpi`; docs/scale-out.md).
//!
//! The model is SPMD with replicated control: under `mpiexec -n K` every rank runs the same
//! command on the same problem and seed, so every rank takes the same decisions and reaches the
//! same points of the program in the same order. At those points ([`map`]: the batch
//! evaluation of a search, a simulation sweep, the GA's elite simulations) the ranks share out
//! the items instead of each computing all of them: rank 0 hands out chunks of indices by
//! guided self-scheduling, every rank (rank 0 too) evaluates what it is given on its own rayon
//! threads, rank 0 gathers the results by index and sends the whole vector to every rank. Each
//! rank then holds exactly the values a single process would have computed, so results are
//! bit-identical to a run without MPI whatever the number of ranks.
//!
//! Only rank 0 writes files and prints ([`is_root`]; `files.rs` skips writes elsewhere, and the
//! workers' standard output and error go to `/dev/null`, panics excepted). Independent jobs
//! that are long themselves (the runs of `search --runs N`) are [`spread`] over groups of
//! ranks, each group running its jobs as above with its own rank 0 writing their files.
//! Checkpoints are read by the writing rank and broadcast ([`read_on_root`]), so the ranks
//! resume from the same state, with any number of ranks.
//!
//! Without the feature, or outside `mpiexec`, or on a thread other than the one that started
//! MPI (MPI runs at the "funneled" level), [`map`] is rayon's order-preserving parallel map:
//! nothing changes. That decision is the same on every rank, since every rank runs the same
//! code on the same thread.

#[cfg(feature = "mpi")]
mod ranks;

use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// This process's place in the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub rank: usize,
    pub size: usize,
}

static PLACE: OnceLock<Place> = OnceLock::new();

/// Rank and size of the job (rank 0 of 1 without MPI).
pub fn place() -> Place {
    PLACE.get().copied().unwrap_or(Place { rank: 0, size: 1 })
}

/// Whether this process writes files: the only process, rank 0 of the job, or, inside a job
/// of [`spread`], rank 0 of the group of ranks that runs it.
pub fn is_root() -> bool {
    WRITER.load(Ordering::SeqCst)
}

static WRITER: AtomicBool = AtomicBool::new(true);

#[cfg(feature = "mpi")]
fn set_writer(writes: bool) {
    WRITER.store(writes, Ordering::SeqCst);
}

/// The running MPI job, when there is one; dropping it finalises MPI.
pub struct Session {
    #[cfg(feature = "mpi")]
    _universe: Option<ranks::Job>,
}

/// Environment variables an MPI launcher sets for the ranks it starts, with the job's size:
/// MPICH's and Intel MPI's hydra (`PMI_SIZE`), Open MPI (`OMPI_COMM_WORLD_SIZE`), PMIx
/// launchers such as Slurm's `srun --mpi=pmix` (`PMIX_SIZE` is not always set: `PMIX_RANK`
/// marks the rank).
const LAUNCHER_SIZE_VARIABLES: [&str; 2] = ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE"];
const LAUNCHER_RANK_VARIABLES: [&str; 3] = ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"];

/// The size of the job the launcher says this process belongs to; `Some(0)` when a rank
/// variable is set but no size variable.
fn launcher_job_size() -> Option<usize> {
    for var in LAUNCHER_SIZE_VARIABLES {
        if let Some(n) = std::env::var(var).ok().and_then(|v| v.parse().ok()) {
            return Some(n);
        }
    }
    LAUNCHER_RANK_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some())
        .then_some(0)
}

/// Starts MPI when the command line asks for it (`--mpi`) or an MPI launcher started this
/// process. Without the feature, `--mpi` and a launcher that started more than one rank are
/// errors: each rank would run the whole job alone and they would overwrite each other's files.
pub fn start(requested: bool) -> anyhow::Result<Session> {
    let launched = launcher_job_size();
    #[cfg(feature = "mpi")]
    {
        if requested || launched.is_some() {
            let (job, place) = ranks::Job::start()?;
            // A launcher of another MPI than the one this binary was built with starts every
            // rank as a job of one: each would run the whole command.
            if let Some(n) = launched.filter(|&n| n > 1 && n != place.size) {
                anyhow::bail!(
                    "the launcher started {n} ranks but MPI sees a job of {}: this fabricopt \
                     was built against another MPI library than the launcher's (build it \
                     with the MPI whose mpiexec or srun you use; docs/scale-out.md)",
                    place.size
                );
            }
            let _ = PLACE.set(place);
            set_writer(place.rank == 0);
            return Ok(Session {
                _universe: Some(job),
            });
        }
        Ok(Session { _universe: None })
    }
    #[cfg(not(feature = "mpi"))]
    {
        if requested {
            anyhow::bail!(
                "--mpi: this fabricopt was built without feature mpi (rebuild with \
                 `cargo build --release --features mpi`; docs/scale-out.md)"
            );
        }
        match launched {
            Some(n) if n != 1 => anyhow::bail!(
                "started by an MPI launcher{} but built without feature mpi: every rank would \
                 run the whole job and overwrite the others' files (rebuild with \
                 `cargo build --release --features mpi`, or run without mpiexec; \
                 docs/scale-out.md)",
                if n > 1 {
                    format!(" as one of {n} ranks")
                } else {
                    String::new()
                }
            ),
            _ => Ok(Session {}),
        }
    }
}

/// Ends the job after an error: with one process this is the caller's ordinary non-zero exit;
/// with several, a rank that fails alone would leave the others waiting for it, so the
/// message is printed (workers prefix their rank) and the whole job aborted.
pub fn fail(message: &str) {
    #[cfg(feature = "mpi")]
    ranks::fail(message);
    #[cfg(not(feature = "mpi"))]
    let _ = message;
}

/// `items.iter().map(f)`, in order, spread over the job's ranks (and each rank's rayon
/// threads). Every rank must call it at the same point with the same items; every rank gets
/// the whole result. `site` names the call in the check that the ranks are in step.
///
/// `f` must be deterministic (it may not draw from a shared random stream): which rank
/// evaluates an item depends on timing.
pub fn map<T, R, F>(site: &'static str, items: &[T], f: F) -> Vec<R>
where
    T: Sync,
    R: Send + Serialize + DeserializeOwned,
    F: Fn(&T) -> R + Sync,
{
    #[cfg(feature = "mpi")]
    if let Some(results) = ranks::map(site, items, &f) {
        return results;
    }
    let _ = site;
    items.par_iter().map(&f).collect()
}

/// `items.iter().map(f)` for independent jobs long enough to use many ranks each (the runs
/// of a multi-run search), stopping at the first error. Under MPI the ranks split into as many
/// groups as there are items (at most one group per rank); group `g` runs items `g`, `g + G`,
/// ... one after another, every [`map`] inside `f` shared among the group's ranks, and rank 0
/// of the group writes the files `f` writes (each job must write its own files). Every rank
/// gets every result. Without MPI, or with one item, the items run one after another.
pub fn spread<T, R, F>(site: &'static str, items: &[T], f: F) -> anyhow::Result<Vec<R>>
where
    T: Sync,
    R: Serialize + DeserializeOwned,
    F: Fn(&T) -> anyhow::Result<R>,
{
    #[cfg(feature = "mpi")]
    if let Some(results) = ranks::spread(site, items, &f) {
        return results;
    }
    let _ = site;
    items.iter().map(f).collect()
}

/// The ranks of the job, for one computation they all run together from here (the
/// partitioned simulation engine splits one network over them: docs/scale-out.md). Only the
/// thread that started MPI holds one, in a job of more than one rank, outside any shared call
/// ([`map`] items run elsewhere and see `None`), so every rank reaches the same collectives
/// in the same order, as replicated control guarantees.
pub struct Ranks {
    place: Place,
    /// Bytes this rank has sent through it, for the exchange-cost figures.
    bytes_sent: std::cell::Cell<u64>,
    /// MPI is called only from the thread that started it.
    _funneled: std::marker::PhantomData<*const ()>,
}

/// The job's ranks when this thread may start a collective of all of them now (see
/// [`Ranks`]); `None` without MPI, with one rank, off the MPI thread or inside a shared call.
pub fn ranks_in_step() -> Option<Ranks> {
    #[cfg(feature = "mpi")]
    {
        ranks::in_step().map(|place| Ranks {
            place,
            bytes_sent: std::cell::Cell::new(0),
            _funneled: std::marker::PhantomData,
        })
    }
    #[cfg(not(feature = "mpi"))]
    None
}

impl Ranks {
    pub fn place(&self) -> Place {
        self.place
    }

    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent.get()
    }

    /// Every rank sends `outgoing[r]` to rank r (ours, `outgoing[rank]`, is not sent but
    /// handed back); returns what every rank sent this one, by rank. A collective: every rank
    /// calls it at the same point. Bytes: the caller encodes (the partitioned engine's window
    /// messages have their own codec, engine/partition.rs).
    pub fn all_to_all_bytes(&self, mut outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        #[cfg(feature = "mpi")]
        {
            let me = self.place.rank;
            let own = std::mem::take(&mut outgoing[me]);
            self.count(outgoing.iter().map(Vec::len).sum());
            let mut received = ranks::all_to_all_bytes(&outgoing);
            received[me] = own;
            received
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = &mut outgoing;
            unreachable!("Ranks exist only under MPI")
        }
    }

    /// Element-wise sums of every rank's `sums` and maxima of every rank's `maxima`. A
    /// collective, as [`Ranks::all_to_all_bytes`].
    pub fn all_reduce_sum_max(&self, sums: &[u64], maxima: &[u64]) -> (Vec<u64>, Vec<u64>) {
        #[cfg(feature = "mpi")]
        {
            self.count((sums.len() + maxima.len()) * 8);
            ranks::all_reduce_sum_max(sums, maxima)
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = (sums, maxima);
            unreachable!("Ranks exist only under MPI")
        }
    }

    /// Every rank's `mine`, by rank. A collective, as [`Ranks::all_to_all_bytes`].
    pub fn all_gather<T: Serialize + DeserializeOwned>(&self, mine: T) -> Vec<T> {
        #[cfg(feature = "mpi")]
        {
            let bytes = ranks::encode_compact(&mine);
            self.count(bytes.len() * (self.place.size - 1));
            let received = ranks::all_gather_bytes(&bytes);
            let mut own = Some(mine);
            received
                .iter()
                .enumerate()
                .map(|(r, b)| {
                    if r == self.place.rank {
                        own.take().expect("our own message, once")
                    } else {
                        ranks::decode_compact(b)
                    }
                })
                .collect()
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = mine;
            unreachable!("Ranks exist only under MPI")
        }
    }

    #[cfg(feature = "mpi")]
    fn count(&self, bytes: usize) {
        self.bytes_sent.set(self.bytes_sent.get() + bytes as u64);
    }
}

/// The bytes of the file at `path` as rank 0 reads them (`None` when it does not exist), on
/// every rank: the ranks resume from the checkpoint rank 0 sees, wherever they run.
pub fn read_on_root(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    #[cfg(feature = "mpi")]
    if let Some(result) = ranks::read_on_root(path) {
        return result;
    }
    read_local(path)
}

/// The text of the input file at `path` (a problem file, traffic matrix, imported topology or
/// routing table). Under MPI, read by rank 0 and sent to every rank, so that the ranks
/// simulate the same inputs even where a node sees another copy at that path; elsewhere read
/// here. Errors are those of `std::fs::read_to_string`.
pub fn read_input(path: &Path) -> std::io::Result<String> {
    #[cfg(feature = "mpi")]
    if let Some(result) = ranks::read_on_root(path) {
        // `read_on_root` tells a missing file apart; it gets std's message for one back.
        let bytes = result?.ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENOENT))?;
        return String::from_utf8(bytes).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        });
    }
    std::fs::read_to_string(path)
}

fn read_local(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_without_mpi_is_an_ordered_map() {
        let items: Vec<u64> = (0..1000).collect();
        let out = map("test", &items, |&x| x * x);
        assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert!(is_root());
    }
}
