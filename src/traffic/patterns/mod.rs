//! Destination patterns: which terminal a packet from a given source goes to. One file per
//! pattern family, each with its parameter struct (the keys of its `[[traffic]]` table besides
//! the common ones), an optional check of them on their own, and builders that make the
//! pattern for a topology; `traffic::registry` lists them by name.
//!
//! A pattern returns the source itself only with `self_packets` (BookSim2's behaviour, for
//! `uniform`, `diagonal` and the permutations): otherwise, where its definition would (a fixed
//! point of a permutation, the self share of `diagonal`, a stencil dimension of size 1) no
//! packet is created. `send_fraction` says which share of a source's creations produce a
//! packet.

pub(crate) mod adv;
pub(crate) mod grid;
pub(crate) mod hotspot;
pub(crate) mod matrix;
pub(crate) mod neighbours;
pub(crate) mod simple;

use std::fmt;
use std::path::Path;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::params::Params;
use crate::topology::Topology;

/// "No destination" in a permutation table.
pub(crate) const NONE: u32 = u32::MAX;

/// A destination pattern built for a topology.
pub trait DestinationPattern: fmt::Debug + Send + Sync {
    /// Draws the destination of one packet from `src`, or `None` when this creation sends
    /// nothing (the pattern's destination is the source itself).
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32>;

    /// The share of `src`'s creations that produce a packet (1 for most patterns).
    fn send_fraction(&self, src: u32) -> f64;

    /// The probability of each destination of one creation at `src`, in any order and
    /// possibly repeated ([`distribution`] sorts and merges them); they sum to
    /// `send_fraction(src)`.
    fn destinations(&self, src: u32) -> Vec<(u32, f64)>;

    /// Exchange group size of an all-to-all pattern (else 0).
    fn group_size(&self) -> u32 {
        0
    }

    /// `Some(itself)` when every destination is equally likely (the source too when
    /// `itself`): the demand then has a closed form by router, with no pass over the
    /// terminal pairs (`Traffic::aggregated_demand`).
    fn uniform_over_all(&self) -> Option<bool> {
        None
    }
}

/// The exact probability of each destination of one creation at `src`, sorted by
/// destination, repeated destinations merged, zero entries left out.
pub(crate) fn distribution(pattern: &dyn DestinationPattern, src: u32) -> Vec<(u32, f64)> {
    let mut out = pattern.destinations(src);
    out.sort_unstable_by_key(|&(d, _)| d);
    let mut merged: Vec<(u32, f64)> = Vec::with_capacity(out.len());
    for (d, p) in out {
        match merged.last_mut() {
            Some(last) if last.0 == d => last.1 += p,
            _ => merged.push((d, p)),
        }
    }
    merged.retain(|&(_, p)| p > 0.0);
    merged
}

/// A pattern's parameter struct (serde, `deny_unknown_fields`, every field optional).
pub(crate) trait PatternParams: DeserializeOwned {
    /// Checks the parameters on their own, when the class is resolved (before the topology is
    /// known); errors name the key (`hotspots`), the caller prefixes the table.
    fn check(&self) -> Result<()> {
        Ok(())
    }
}

/// The parameters of a pattern that takes none.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoParams {}

impl PatternParams for NoParams {}

/// What a pattern's builder gets (the random stream for its structures comes separately).
#[derive(Clone, Copy, Debug)]
pub struct PatternInput<'a> {
    /// The pattern's name, as the class gives it.
    pub name: &'a str,
    params: &'a Params,
    pub topo: &'a Topology,
    /// Where relative file names resolve from (the problem file's folder).
    pub base_dir: &'a Path,
    /// Packets to the source itself (`self_packets`).
    pub itself: bool,
}

impl<'a> PatternInput<'a> {
    pub fn new(
        name: &'a str,
        params: &'a Params,
        topo: &'a Topology,
        base_dir: &'a Path,
        itself: bool,
    ) -> Self {
        PatternInput {
            name,
            params,
            topo,
            base_dir,
            itself,
        }
    }

    /// The pattern's parameter struct `P` (checked when the class was resolved).
    pub(crate) fn read_params<P: DeserializeOwned>(&self) -> Result<P> {
        self.params
            .read("", &format!("pattern = \"{}\"", self.name))
    }

    pub fn terminals(&self) -> usize {
        self.topo.num_terminals()
    }
}

/// A terminal other than `src` among `0..n`, uniformly.
pub(crate) fn uniform_other(src: u32, n: u32, rng: &mut ChaCha8Rng) -> u32 {
    let r = rng.random_range(0..n - 1);
    if r >= src { r + 1 } else { r }
}

/// The destinations of an all-to-all exchange (`injection = "alltoall"`, which names no
/// pattern): groups of `size` consecutive terminals, any other member.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    size: u32,
}

impl Group {
    /// Groups of `size` terminals (`group`; default all `n`).
    pub(crate) fn new(size: Option<usize>, n: usize) -> Result<Group> {
        let size = size.unwrap_or(n);
        if size < 2 || size > n || n % size != 0 {
            return Err(Error::field(
                "group",
                format!("must be at least 2 and divide the terminal count {n} (got {size})"),
            ));
        }
        Ok(Group { size: size as u32 })
    }
}

impl DestinationPattern for Group {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        let size = self.size;
        let base = src / size * size;
        Some(base + uniform_other(src - base, size, rng))
    }

    fn send_fraction(&self, _: u32) -> f64 {
        1.0
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        let size = self.size;
        let base = src / size * size;
        let p = 1.0 / f64::from(size - 1);
        (base..base + size)
            .filter(|&d| d != src)
            .map(|d| (d, p))
            .collect()
    }

    fn group_size(&self) -> u32 {
        self.size
    }
}
