//! Every destination pattern by name: `[[traffic]] pattern = "<name>"`. One entry per pattern:
//! its name, one line of documentation, whether `self_packets` applies, its parameter struct
//! (its keys are the pattern's own: another pattern's key is refused, naming the patterns that
//! take it) and its builder. Adding a pattern is one file in `traffic/patterns/` with its
//! parameter struct and builder plus one line here (docs/architecture.md).
//!
//! The registry sits in `traffic/` rather than in `crate::registry` because every pattern
//! lives here and `Traffic::build` looks them up by name; `crate::registry::traffic`
//! re-exports it.

use std::sync::OnceLock;

use rand_chacha::ChaCha8Rng;

use super::config::COMMON_KEYS;
use super::patterns::adv::{self, AdvParams};
use super::patterns::grid::{self, GridParams};
use super::patterns::hotspot::{self, HotspotParams};
use super::patterns::matrix::{self, MatrixParams};
use super::patterns::neighbours::{self, RandNeighboursParams};
use super::patterns::simple;
use super::patterns::{DestinationPattern, NoParams, PatternInput, PatternParams};
use crate::error::Result;
use crate::params::{Params, field_names};

type Build = fn(&PatternInput, &mut ChaCha8Rng) -> Result<Box<dyn DestinationPattern>>;

/// One destination pattern.
#[derive(Debug)]
pub struct PatternEntry {
    pub name: &'static str,
    pub summary: &'static str,
    /// Whether it can send to the source itself (`self_packets`).
    pub self_packets: bool,
    /// The keys of its parameter struct.
    pub keys: fn() -> &'static [&'static str],
    /// Reads its parameter struct (errors name `table.key`, or `key` for an empty table).
    pub read: fn(&Params, &str, &str) -> Result<()>,
    /// Reads its parameter struct and checks it on its own (errors name the key alone).
    pub check: fn(&Params, &str) -> Result<()>,
    /// Builds it for a topology; the random stream draws its random structures once.
    pub build: Build,
}

const fn entry<P: PatternParams>(
    name: &'static str,
    summary: &'static str,
    build: Build,
) -> PatternEntry {
    PatternEntry {
        name,
        summary,
        self_packets: false,
        keys: field_names::<P>,
        read: read::<P>,
        check: check::<P>,
        build,
    }
}

fn read<P: PatternParams>(params: &Params, table: &str, what: &str) -> Result<()> {
    params.read::<P>(table, what).map(drop)
}

fn check<P: PatternParams>(params: &Params, what: &str) -> Result<()> {
    params.read::<P>("", what)?.check()
}

impl PatternEntry {
    /// A pattern that can send to the source itself, with `self_packets` (BookSim2's
    /// behaviour).
    const fn with_self_packets(mut self) -> Self {
        self.self_packets = true;
        self
    }
}

#[rustfmt::skip]
pub(crate) const PATTERNS: &[PatternEntry] = &[
    entry::<NoParams>("uniform", "any other terminal, uniformly", simple::uniform).with_self_packets(),
    entry::<NoParams>("transpose", "swap the halves of the terminal id's bits", simple::transpose).with_self_packets(),
    entry::<NoParams>("bitcomp", "complement the terminal id's bits", simple::bitcomp).with_self_packets(),
    entry::<NoParams>("bitrev", "reverse the terminal id's bits", simple::bitrev).with_self_packets(),
    entry::<NoParams>("shuffle", "rotate the terminal id's bits left by one", simple::shuffle).with_self_packets(),
    entry::<NoParams>("tornado", "half way round every dimension (BookSim)", simple::tornado).with_self_packets(),
    entry::<NoParams>("neighbor", "one step along every dimension (BookSim)", simple::neighbor).with_self_packets(),
    entry::<NoParams>("randperm", "a random derangement, drawn once", simple::randperm),
    entry::<NoParams>("diagonal", "BookSim's diagonal: 1/3 to the next terminal, 2/3 to itself", simple::diagonal).with_self_packets(),
    entry::<HotspotParams>("hotspot", "a share of packets to a few hotspot terminals, the rest uniform", hotspot::build),
    entry::<AdvParams>("adv", "ADV+i on a dragonfly: a random terminal of group G + i", adv::build),
    entry::<GridParams>("stencil3d", "one of the 6 neighbours on an X x Y x Z grid", grid::stencil3d),
    entry::<GridParams>("manytomany", "any other terminal of the same Z line of an X x Y x Z grid", grid::manytomany),
    entry::<RandNeighboursParams>("randneighbours", "a random list of targets per terminal, drawn once", neighbours::build),
    entry::<MatrixParams>("matrix", "weights from a CSV file of N x N weights", matrix::build),
];

/// The entry of pattern `name`.
pub fn find(name: &str) -> Option<&'static PatternEntry> {
    PATTERNS.iter().find(|e| e.name == name)
}

/// Every pattern's name, in registry order.
pub fn names() -> Vec<&'static str> {
    PATTERNS.iter().map(|e| e.name).collect()
}

/// The patterns that can send to the source itself.
pub(crate) fn self_packet_names() -> Vec<&'static str> {
    PATTERNS
        .iter()
        .filter(|e| e.self_packets)
        .map(|e| e.name)
        .collect()
}

/// The patterns whose parameter struct has `key`.
pub(crate) fn owners(key: &str) -> Vec<&'static str> {
    PATTERNS
        .iter()
        .filter(|e| (e.keys)().contains(&key))
        .map(|e| e.name)
        .collect()
}

/// Every key a `[[traffic]]` table may hold: the common ones with every pattern's after
/// `injection` (where the flat table had them).
pub(crate) fn all_keys() -> &'static [&'static str] {
    static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let split = COMMON_KEYS
            .iter()
            .position(|&k| k == "injection")
            .map_or(COMMON_KEYS.len(), |i| i + 1);
        let mut keys = COMMON_KEYS[..split].to_vec();
        for e in PATTERNS {
            for &k in (e.keys)() {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        keys.extend(&COMMON_KEYS[split..]);
        keys
    })
}

/// Checks the type of every pattern key of a class with the struct of a pattern that takes
/// it, whatever the class's pattern (which keys apply is checked when the class is
/// resolved). `table` names the table in errors (`traffic[0]`). Run when the tables are read,
/// with the keys' lines, so that a mistyped value is reported there, as the flat table did.
pub(crate) fn check_types(params: &Params, table: &str) -> Result<()> {
    for key in params.keys() {
        if let Some(e) = PATTERNS.iter().find(|e| (e.keys)().contains(&key)) {
            let mut one = params.clone();
            let others: Vec<String> = params
                .keys()
                .filter(|k| *k != key)
                .map(str::to_string)
                .collect();
            for other in &others {
                one.remove(other);
            }
            (e.read)(&one, table, &format!("pattern = \"{}\"", e.name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_keys_are_not_common() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PATTERNS.len());
        for e in PATTERNS {
            for k in (e.keys)() {
                assert!(!COMMON_KEYS.contains(k), "{}: {k}", e.name);
            }
        }
    }
}
