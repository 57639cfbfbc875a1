//! A 72-node dragonfly problem file (9 groups, 12-cycle global channels: the parallel
//! engine cuts between groups) for the command-line tests of the partitioned engine.

use std::path::Path;

/// Writes the problem as `dir/name` with `routing`, `partitions` and `extra` lines of
/// `[simulation]`; returns its path.
pub(crate) fn write(
    dir: &Path,
    name: &str,
    routing: &str,
    partitions: usize,
    extra: &str,
) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "seed = 4\n[topology]\nkind = \"dragonfly\"\np = 2\na = 4\nh = 2\ng = 9\n\
             local_latency = 2\nglobal_latency = 12\n[routing]\nalgorithm = \"{routing}\"\n\
             [[traffic]]\npattern = \"uniform\"\nload = 0.2\npacket_size = 2\n\
             [simulation]\nnum_vcs = 5\nvc_depth = 16\nwarmup_cycles = 500\n\
             measure_cycles = 2000\npartitions = {partitions}\n{extra}"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}
