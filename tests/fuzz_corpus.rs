//! The fuzz targets (fuzz/targets.rs) on stable Rust: each target runs over its committed
//! corpus (fuzz/corpus/<target>/) and twenty thousand inputs mutated from it with a fixed
//! seed, the way a fuzzer starts. A panic, or an input that takes more than 5 s (a hang: the
//! slowest legitimate inputs, topologies near the size limits, take under a second), fails
//! the test with the input saved under target/fuzz-failures/. `cargo +nightly fuzz run
//! <target>` explores much further (docs/reliability.md); this keeps every target honest on
//! every `cargo test`.

#[path = "../fuzz/targets.rs"]
#[allow(dead_code)]
mod targets;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Mutated inputs per target.
const MUTATIONS: usize = 20_000;

/// Values that break arithmetic and allocation, swapped in for numbers.
const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "255",
    "65536",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "-1e308",
    "1e-320",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "\"\"",
    "[]",
    "{}",
    "null",
    "true",
];

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut entries: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "{}: empty corpus", dir.display());
    entries
}

/// Byte ranges of the numbers in `data` (digits with an optional sign, dot and exponent).
fn numbers(data: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < data.len() {
        if data[i].is_ascii_digit() {
            let start = if i > 0 && data[i - 1] == b'-' {
                i - 1
            } else {
                i
            };
            while i < data.len() && (data[i].is_ascii_digit() || b".eE+-".contains(&data[i])) {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// One mutation of a corpus entry, chosen like a fuzzer's: flip, insert, delete, duplicate,
/// truncate, splice with another entry, or a number replaced by a hostile value.
fn mutate(entries: &[(String, Vec<u8>)], rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut data = entries[rng.random_range(0..entries.len())].1.clone();
    for _ in 0..rng.random_range(1..=3) {
        let len = data.len();
        match rng.random_range(0..7) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                data[i] ^= 1 << rng.random_range(0..8);
            }
            1 => {
                let i = rng.random_range(0..=len);
                let byte = *b" ,=:[]{}\"\n0-9.#x"
                    .get(rng.random_range(0..17))
                    .unwrap_or(&b'0');
                data.insert(i, byte);
            }
            2 if len > 0 => {
                let i = rng.random_range(0..len);
                let j = (i + rng.random_range(1..=16)).min(len);
                data.drain(i..j);
            }
            3 if len > 0 => {
                let i = rng.random_range(0..len);
                let j = (i + rng.random_range(1..=64)).min(len);
                let copy = data[i..j].to_vec();
                let at = rng.random_range(0..=data.len());
                data.splice(at..at, copy);
            }
            4 if len > 0 => data.truncate(rng.random_range(0..len)),
            5 => {
                let other = &entries[rng.random_range(0..entries.len())].1;
                let cut = rng.random_range(0..=data.len());
                let from = rng.random_range(0..=other.len());
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            _ => {
                let spans = numbers(&data);
                if spans.is_empty() {
                    continue;
                }
                let (s, e) = spans[rng.random_range(0..spans.len())];
                let value = HOSTILE[rng.random_range(0..HOSTILE.len())].as_bytes();
                data.splice(s..e, value.iter().copied());
            }
        }
    }
    data
}

fn save_failure(target: &str, input: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{target}-{:016x}", fxhash(input)));
    std::fs::write(&path, input).unwrap();
    path
}

fn fxhash(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn run_target(name: &str) {
    let target = targets::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .expect("a target of that name");
    let entries = corpus(name);
    let mut rng = ChaCha8Rng::seed_from_u64(fxhash(name.as_bytes()));
    let start = Instant::now();
    let mut slowest = Duration::ZERO;
    let inputs = entries
        .iter()
        .map(|(_, d)| d.clone())
        .chain((0..MUTATIONS).map(|_| mutate(&entries, &mut rng)));
    let mut count = 0;
    for input in inputs {
        let began = Instant::now();
        let outcome = std::panic::catch_unwind(|| target(&input));
        let took = began.elapsed();
        if outcome.is_err() {
            panic!(
                "{name} panicked on the input saved as {}",
                save_failure(name, &input).display()
            );
        }
        assert!(
            took < Duration::from_secs(5),
            "{name} took {took:?} on the input saved as {}",
            save_failure(name, &input).display()
        );
        slowest = slowest.max(took);
        count += 1;
    }
    println!(
        "{name}: {count} inputs ({} corpus entries + {MUTATIONS} mutations) in {:.2} s, slowest {:.1} ms",
        entries.len(),
        start.elapsed().as_secs_f64(),
        slowest.as_secs_f64() * 1e3
    );
}

macro_rules! fuzz_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_target(stringify!($name));
            }
        )*

        #[test]
        fn every_target_has_a_test() {
            let tested = [$(stringify!($name)),*];
            for (name, _) in targets::TARGETS {
                assert!(tested.contains(name), "no test runs target {name}");
            }
        }
    };
}

fuzz_tests!(
    problem_file,
    topology_json,
    topology_edge_list,
    topology_anynet,
    topology_spec,
    routing_table_json,
    routing_table_csv,
    routing_table_paths,
    routing_table_lft,
    checkpoint,
    hypervolume_csv,
);
