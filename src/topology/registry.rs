//! Every topology kind by name: `[topology] kind = "<name>"` or the spec string `<name>:...`.
//! One entry per kind: its name, the key a spec string's first item sets (`mesh:8x8` sets
//! `dims`), one line of documentation, its parameter struct (read when the problem file is
//! read, so a misplaced key is an error with its line before any work) and its resolver, which
//! checks the parameters and fills in their defaults. Adding a topology is one file with its
//! parameter struct, resolver and generator plus one line here (docs/architecture.md).
//!
//! The registry sits in `topology/` rather than in `crate::registry` because every generator
//! lives here and because `TopologyConfig` itself (its spec strings, `resolve`, `build`) looks
//! kinds up by name; `crate::registry::topology` re-exports it.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::generators::cartesian::{
    self, CartesianParams, CompleteParams, HypercubeParams, RingParams,
};
use super::generators::dragonfly::{self, DragonflyParams};
use super::generators::exanest::{self, ExanestParams};
use super::generators::file::{self, FileParams};
use super::generators::jellyfish::{self, JellyfishParams};
use super::spec::{COMMON_KEYS, Generator, ResolveContext, TopologyConfig};
use crate::error::{Error, Result};
use crate::params::{Params, field_names, own_field_names};

type Resolve = fn(&TopologyConfig, &ResolveContext) -> Result<Box<dyn Generator>>;

/// One topology kind.
pub struct TopologyEntry {
    pub name: &'static str,
    /// The key a spec string's positional first item sets; `None`: no spec string (`file`).
    pub positional: Option<&'static str>,
    pub summary: &'static str,
    /// Why the common link keys do not apply (`file`: the file holds the whole topology);
    /// `None` when they do.
    pub no_links: Option<&'static str>,
    /// Every key the parameter struct reads, serde aliases included.
    pub keys: fn() -> &'static [&'static str],
    /// The keys as the struct writes them (no aliases), in declaration order.
    pub own_keys: fn() -> Vec<&'static str>,
    /// Reads the parameter struct (errors name `table.key`, or `key` for an empty table) and
    /// gives the parameters back as the struct writes them.
    pub read: fn(&Params, &str, &str) -> Result<Params>,
    /// Checks the parameters and fills in the defaults: the generator, ready to build.
    pub resolve: Resolve,
}

const fn entry<P: DeserializeOwned + Serialize + Default>(
    name: &'static str,
    positional: Option<&'static str>,
    summary: &'static str,
    resolve: Resolve,
) -> TopologyEntry {
    TopologyEntry {
        name,
        positional,
        summary,
        no_links: None,
        keys: field_names::<P>,
        own_keys: own_field_names::<P>,
        read: read::<P>,
        resolve,
    }
}

fn read<P: DeserializeOwned + Serialize>(
    params: &Params,
    table: &str,
    what: &str,
) -> Result<Params> {
    let p: P = params.read(table, what)?;
    Params::from_struct(&p)
}

impl TopologyEntry {
    /// A kind whose topology comes whole from elsewhere: the link keys are refused, `reason`
    /// says why.
    const fn without_links(mut self, reason: &'static str) -> Self {
        self.no_links = Some(reason);
        self
    }

    /// What a misplaced key "does not apply to": `kind `mesh` (it takes dims, concentration)`.
    pub(crate) fn misplaced(&self) -> String {
        match self.no_links {
            Some(reason) => format!("kind `{}` ({reason})", self.name),
            None => format!(
                "kind `{}` (it takes {})",
                self.name,
                (self.own_keys)().join(", ")
            ),
        }
    }
}

#[rustfmt::skip]
pub(crate) const TOPOLOGIES: &[TopologyEntry] = &[
    entry::<CartesianParams>("mesh", Some("dims"), "k-ary n-mesh: dims = [k0, k1, ...] routers per dimension", cartesian::resolve),
    entry::<CartesianParams>("torus", Some("dims"), "k-ary n-cube: a mesh with wrap-around links", cartesian::resolve),
    entry::<RingParams>("ring", Some("routers"), "a 1-D torus of `routers` routers", cartesian::resolve_ring),
    entry::<HypercubeParams>("hypercube", Some("dimension"), "2-ary n-mesh of 2^dimension routers", cartesian::resolve_hypercube),
    entry::<DragonflyParams>("dragonfly", Some("p"), "Kim et al.'s dragonfly: p, a, h, g and the global-link arrangement", dragonfly::resolve),
    entry::<ExanestParams>("exanest", Some("routers"), "ExaNeSt chassis (R, N, M) with a genome of link offsets", exanest::resolve),
    entry::<JellyfishParams>("jellyfish", Some("routers"), "random regular router graph (Jellyfish) from a seed", jellyfish::resolve),
    entry::<CompleteParams>("complete", Some("routers"), "every router linked to every other", cartesian::resolve_complete),
    entry::<FileParams>("file", None, "a topology file: fabricopt JSON, edge list or BookSim anynet", file::resolve)
        .without_links("the file holds the whole topology"),
];

/// The entry of kind `name`.
pub fn find(name: &str) -> Option<&'static TopologyEntry> {
    TOPOLOGIES.iter().find(|e| e.name == name)
}

/// Every kind's name, in registry order.
pub fn names() -> Vec<&'static str> {
    TOPOLOGIES.iter().map(|e| e.name).collect()
}

/// The kinds a spec string may name.
pub(crate) fn spec_names() -> Vec<&'static str> {
    TOPOLOGIES
        .iter()
        .filter(|e| e.positional.is_some())
        .map(|e| e.name)
        .collect()
}

/// The entry of `cfg`'s kind; errors name `kind`.
pub(crate) fn entry_of(cfg: &TopologyConfig) -> Result<&'static TopologyEntry> {
    let kind = cfg.kind.as_deref().ok_or_else(|| {
        Error::field(
            "kind",
            format!("is required (one of {})", names().join(", ")),
        )
    })?;
    find(kind).ok_or_else(|| {
        Error::field(
            "kind",
            format!(
                "unknown topology kind `{kind}` (expected one of {})",
                names().join(", ")
            ),
        )
    })
}

/// Every key some kind takes, as the kinds write them, in registry order (no common keys).
pub(crate) fn own_keys() -> Vec<&'static str> {
    let mut keys = Vec::new();
    for e in TOPOLOGIES {
        for k in (e.own_keys)() {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys
}

/// Every key a `[topology]` table may hold: the common keys and every kind's (aliases
/// included), for the message about a key no kind takes.
fn all_keys() -> Vec<&'static str> {
    let mut keys: Vec<&str> = COMMON_KEYS[..2].to_vec();
    for e in TOPOLOGIES {
        for &k in (e.keys)() {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.extend(&COMMON_KEYS[2..]);
    keys
}

/// Checks `cfg`'s parameters without resolving them: a key that no kind takes is an unknown
/// field (always); when the kind is known, a key it does not take and a value of the wrong
/// type are errors too. `table` names the table in errors (empty: the caller prefixes it).
/// Run when a problem file is read (with `table` = `topology` and the keys' lines) and by
/// [`TopologyConfig::parse_spec`].
pub(crate) fn check_params(cfg: &TopologyConfig, table: &str) -> Result<()> {
    let all = all_keys();
    if let Some(key) = cfg.params.keys().find(|k| !all.contains(k)) {
        let expected = all
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(cfg.params.error(
            table,
            key,
            format!("unknown field `{key}`, expected one of {expected}"),
        ));
    }
    match cfg.kind.as_deref().and_then(find) {
        Some(entry) => (entry.read)(&cfg.params, table, &entry.misplaced()).map(drop),
        None => Ok(()),
    }
}

/// The parameters as the kind's struct writes them (`r` for `R`); as written when the kind is
/// unknown or they do not read.
pub(crate) fn canonical_params(cfg: &TopologyConfig) -> Params {
    cfg.kind
        .as_deref()
        .and_then(find)
        .and_then(|e| (e.read)(&cfg.params, "", "").ok())
        .unwrap_or_else(|| cfg.params.clone())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOPOLOGIES.len());
    }

    #[test]
    fn every_resolver_accepts_its_own_kind() {
        // A registry line pointing at another family's resolver fails here, not in a user's run.
        for e in TOPOLOGIES {
            let cfg = TopologyConfig {
                kind: Some(e.name.to_string()),
                ..TopologyConfig::default()
            };
            let ctx = ResolveContext {
                base_dir: Path::new("."),
                default_seed: 1,
            };
            if let Err(err) = (e.resolve)(&cfg, &ctx) {
                assert!(!err.to_string().contains("is not a"), "{}: {err}", e.name);
            }
        }
    }
}
