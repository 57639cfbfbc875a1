//! The `[routing]` table of a problem file and the registry that builds a routing function
//! by name.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::RoutingFunction;
use crate::error::{Error, Result};
use crate::topology::Topology;

/// Every field the `[routing]` table may hold; which ones apply depends on `algorithm`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    /// Algorithm name, e.g. `dor`, `min`, `ugal_g`, `dfsssp`, `updown`.
    pub algorithm: String,
    /// UGAL/PAR: take the non-minimal path iff `cost_min > factor * cost_nonmin + bias`
    /// (docs/sources.md §2: factor 2, bias 0; `ugal_booksim`: bias 30).
    pub ugal_factor: Option<f64>,
    pub ugal_bias: Option<f64>,
    /// `duato`, `star`: whether a packet that took an escape VC stays on the escape network
    /// (`sticky`, default) or may return to the adaptive VCs (`return`).
    pub escape: Option<super::cartesian::EscapePolicy>,
    /// Mesh/torus algorithms on a torus: the ring direction at a tie (`plus`, default, or
    /// `random`).
    pub tie: Option<super::cartesian::TieBreak>,
    /// Dragonfly `min`: the VC class of the global hop (`source`, default, or `destination`
    /// as BookSim2).
    pub global_vc: Option<super::dragonfly::GlobalVc>,
    /// Layered shortest-path routing: most VC layers to use (default: all VCs).
    pub max_layers: Option<usize>,
    /// up*/down*: root router (default: the router of least eccentricity, lowest id).
    pub root: Option<usize>,
    /// `table`: the routing table file (JSON of a `RoutingTable`), relative paths from the
    /// problem file's directory.
    pub table: Option<PathBuf>,
    /// `table`: `hierarchy` (default), `layered` or `plain`.
    pub table_mode: Option<super::table::route::TableModeName>,
    /// `table`, layered mode: JSON array of one layer (VC) per router pair.
    pub table_layers: Option<PathBuf>,
    /// `table`, hierarchy mode: VC classes as `[start, end)` (defaults: table `[4, num_vcs)`,
    /// adaptive `[e, 4)`, escape `[0, e)`, `e` = 2 on a torus, 1 elsewhere).
    pub table_vcs: Option<[usize; 2]>,
    pub adaptive_vcs: Option<[usize; 2]>,
    pub escape_vcs: Option<[usize; 2]>,
    /// `q_adaptive`, `q_routing`: the `[routing.q]` table of learning parameters.
    pub q: Option<crate::learn::QConfig>,
    /// `dqn`: the `[routing.dqn]` table (DQN-routing; see docs/learning.md).
    pub dqn: Option<crate::learn::dqn_routing::DqnRoutingConfig>,
    /// Directory relative file names (`table`, `table_layers`) are resolved from; set by the
    /// problem loader, not read from the file.
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

impl RoutingConfig {
    /// Whether the optional field `routing.<field>` is given.
    fn is_set(&self, field: &str) -> bool {
        match field {
            "ugal_factor" => self.ugal_factor.is_some(),
            "ugal_bias" => self.ugal_bias.is_some(),
            "escape" => self.escape.is_some(),
            "tie" => self.tie.is_some(),
            "global_vc" => self.global_vc.is_some(),
            "max_layers" => self.max_layers.is_some(),
            "root" => self.root.is_some(),
            "table" => self.table.is_some(),
            "table_mode" => self.table_mode.is_some(),
            "table_layers" => self.table_layers.is_some(),
            "table_vcs" => self.table_vcs.is_some(),
            "adaptive_vcs" => self.adaptive_vcs.is_some(),
            "escape_vcs" => self.escape_vcs.is_some(),
            "q" => self.q.is_some(),
            "dqn" => self.dqn.is_some(),
            _ => unreachable!("not a [routing] field: {field}"),
        }
    }
}

/// Fields of the classical algorithms (UGAL/PAR, layered shortest paths, up*/down*), which
/// every other family rejects.
pub(crate) const CLASSICAL_FIELDS: [&str; 4] = ["ugal_factor", "ugal_bias", "max_layers", "root"];

/// Fields of the mesh/torus algorithms only.
pub(crate) const CARTESIAN_FIELDS: [&str; 2] = ["escape", "tie"];

/// Fields of the dragonfly algorithms (`routing::dragonfly`) only.
pub(crate) const DRAGONFLY_FIELDS: [&str; 1] = ["global_vc"];

/// Fields of the `table` algorithm only.
pub(crate) const TABLE_FIELDS: [&str; 6] = [
    "table",
    "table_mode",
    "table_layers",
    "table_vcs",
    "adaptive_vcs",
    "escape_vcs",
];

impl RoutingConfig {
    /// The routing defaults of simulation preset `preset`, for fields not set. Only `booksim`
    /// has any (BookSim2's behaviour): mesh/torus algorithms on a torus break ring ties at random (`tie`), `duato` and
    /// `star` keep packets on the escape network (`escape`, as `min_adapt`), dragonfly `min`
    /// puts the global hop on the destination group's VC (`global_vc`).
    pub fn apply_preset(&mut self, preset: &str, topo: &Topology) {
        if preset != "booksim" {
            return;
        }
        if matches!(self.algorithm.as_str(), "duato" | "star") && self.escape.is_none() {
            self.escape = Some(super::cartesian::EscapePolicy::Sticky);
        }
        if self.algorithm == "min" && self.global_vc.is_none() {
            self.global_vc = Some(super::dragonfly::GlobalVc::Destination);
        }
        let torus = matches!(
            topo.shape,
            crate::topology::Shape::Cartesian { wrap: true, .. }
        );
        if torus
            && super::cartesian::CartesianAlgorithm::from_name(&self.algorithm).is_some()
            && self.tie.is_none()
        {
            self.tie = Some(super::cartesian::TieBreak::Random);
        }
    }
}

/// Errors on the first of `fields` that is given although routing `algorithm` ignores it, so
/// that a typo in a problem file is not silently dropped.
pub(crate) fn reject_fields(cfg: &RoutingConfig, algorithm: &str, fields: &[&str]) -> Result<()> {
    match fields.iter().find(|f| cfg.is_set(f)) {
        Some(f) => Err(Error::field(
            format!("routing.{f}"),
            format!("does not apply to routing `{algorithm}`"),
        )),
        None => Ok(()),
    }
}

/// A family of algorithms: returns `Ok(None)` when the name is not one of its own.
type Family = fn(&RoutingConfig, &Topology, usize) -> Result<Option<Box<dyn RoutingFunction>>>;

const FAMILIES: &[Family] = &[
    super::cartesian::build,
    super::dragonfly::build,
    super::layered::build,
    super::table::route::build,
    crate::learn::build,
    crate::learn::dqn_routing::build,
];

/// Algorithm names known to the registry, for error messages.
pub const ALGORITHMS: &str = "dor, duato, star, valiant, romm (mesh/torus); min, val_g, val_n, \
ugal_g, ugal_n, par, ugal_booksim, q_adaptive (dragonfly); dfsssp, updown, table, q_routing (any \
topology); dqn (2-D torus)";

/// Builds the routing function named in `cfg` for `topo` with `num_vcs` VCs per channel.
pub fn build_routing(
    cfg: &RoutingConfig,
    topo: &Topology,
    num_vcs: usize,
) -> Result<Box<dyn RoutingFunction>> {
    // The table fields are checked here rather than in every family, which predate them.
    if cfg.algorithm != "table" {
        reject_fields(cfg, &cfg.algorithm, &TABLE_FIELDS)?;
    }
    if super::cartesian::CartesianAlgorithm::from_name(&cfg.algorithm).is_none() {
        reject_fields(cfg, &cfg.algorithm, &CARTESIAN_FIELDS)?;
    }
    if super::dragonfly::DragonflyAlgorithm::from_name(&cfg.algorithm).is_none() {
        reject_fields(cfg, &cfg.algorithm, &DRAGONFLY_FIELDS)?;
    }
    if !crate::learn::LEARNED.contains(&cfg.algorithm.as_str()) {
        reject_fields(cfg, &cfg.algorithm, &["q"])?;
    }
    if cfg.algorithm != "dqn" {
        reject_fields(cfg, &cfg.algorithm, &["dqn"])?;
    }
    for family in FAMILIES {
        if let Some(r) = family(cfg, topo, num_vcs)? {
            if r.min_vcs() > num_vcs {
                return Err(Error::field(
                    "simulation.num_vcs",
                    format!(
                        "routing `{}` needs at least {} VCs per channel (got {num_vcs})",
                        r.name(),
                        r.min_vcs()
                    ),
                ));
            }
            return Ok(r);
        }
    }
    Err(Error::field(
        "routing.algorithm",
        format!(
            "unknown algorithm `{}` (expected one of: {ALGORITHMS})",
            cfg.algorithm
        ),
    ))
}
