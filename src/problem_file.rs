//! Problem files (TOML): the head of the data flow. Every field is documented in
//! docs/formats.md; unknown fields are errors so that typos do not pass silently.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::routing::RoutingConfig;
use crate::search::SearchConfig;
use crate::sim::SimConfig;
use crate::topology::metrics::{BisectionOptions, MetricsOptions};
use crate::topology::spec::clean_serde_message;
use crate::topology::{Topology, TopologyConfig};
use crate::traffic::{Traffic, TrafficConfig};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Problem {
    /// Names the run; output folders under populations/ use it.
    pub name: Option<String>,
    /// The one seed every random choice derives from.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Absent only in files that need no topology (the real-coded search benchmarks).
    #[serde(default)]
    pub topology: TopologyConfig,
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// The routing algorithm (needed by `simulate`).
    pub routing: Option<RoutingConfig>,
    /// Traffic classes, one `[[traffic]]` table each (needed by `simulate`).
    #[serde(default)]
    pub traffic: Vec<TrafficConfig>,
    /// Router model, switching and measurement phases.
    #[serde(default)]
    pub simulation: SimConfig,
    /// Multi-objective search (needed by `search`).
    pub search: Option<SearchConfig>,
    /// Routing-table evolution (used by `routes evolve`; all defaults when absent).
    pub evolve: Option<crate::search::problems::routing_tables::EvolveConfig>,
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Multilevel partitioner restarts for the bisection upper bound.
    pub bisection_restarts: usize,
    /// Try to prove the exact bisection width up to this many routers.
    pub exact_bisection_max_routers: usize,
    /// Node budget of the exact bisection search (it gives up, leaving `exact` null, past it).
    pub exact_bisection_node_budget: u64,
    /// Compute the edge connectivity up to this many routers.
    pub connectivity_max_routers: usize,
    /// Exploit the generator's (verified) symmetry.
    pub use_symmetry: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        let d = MetricsOptions::default();
        MetricsConfig {
            bisection_restarts: d.bisection.restarts,
            exact_bisection_max_routers: d.bisection.exact_max_routers,
            exact_bisection_node_budget: d.bisection.exact_node_budget,
            connectivity_max_routers: d.connectivity_max_routers,
            use_symmetry: d.use_symmetry,
        }
    }
}

/// Most partitioner restarts (`metrics.bisection_restarts`).
pub(crate) const MAX_BISECTION_RESTARTS: usize = 10_000;

impl MetricsConfig {
    pub(crate) fn options(&self, seed: u64) -> Result<MetricsOptions> {
        if self.bisection_restarts == 0 {
            return Err(Error::field(
                "metrics.bisection_restarts",
                "must be at least 1",
            ));
        }
        // Each restart is a whole partitioner run: past this the command would seem to hang.
        if self.bisection_restarts > MAX_BISECTION_RESTARTS {
            return Err(Error::field(
                "metrics.bisection_restarts",
                format!(
                    "at most {MAX_BISECTION_RESTARTS} (got {})",
                    self.bisection_restarts
                ),
            ));
        }
        Ok(MetricsOptions {
            bisection: BisectionOptions {
                restarts: self.bisection_restarts,
                seed,
                exact_max_routers: self.exact_bisection_max_routers,
                exact_node_budget: self.exact_bisection_node_budget,
            },
            connectivity_max_routers: self.connectivity_max_routers,
            use_symmetry: self.use_symmetry,
        })
    }
}

/// A loaded problem file together with where it came from (relative paths resolve there).
#[derive(Clone, Debug)]
pub struct LoadedProblem {
    pub path: PathBuf,
    pub problem: Problem,
}

impl LoadedProblem {
    pub fn read(path: &Path) -> Result<Self> {
        let text = crate::cluster::read_input(path).map_err(|e| Error::io(path, e))?;
        let problem = parse_problem(&text).map_err(|e| e.in_file(path))?;
        Ok(LoadedProblem {
            path: path.to_path_buf(),
            problem,
        })
    }

    pub fn base_dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    pub fn build_topology(&self) -> Result<Topology> {
        self.problem
            .topology
            .build(self.base_dir(), self.problem.seed)
            .map_err(|e| e.prefix_field("topology").in_file(&self.path))
    }

    /// The `[[traffic]]` classes for a simulation with `sim` (the `booksim` preset changes
    /// their defaults: packets to oneself, as BookSim2 sends them).
    pub fn build_traffic(&self, topo: &Topology, sim: &crate::sim::SimParams) -> Result<Traffic> {
        let mut configs = self.problem.traffic.clone();
        if sim.preset == "booksim" {
            crate::traffic::apply_booksim_defaults(&mut configs);
        }
        Traffic::build(&configs, topo, self.problem.seed, self.base_dir())
            .map_err(|e| e.prefix_field("traffic").in_file(&self.path))
    }

    pub fn metrics_options(&self) -> Result<MetricsOptions> {
        self.problem
            .metrics
            .options(self.problem.seed)
            .map_err(|e| e.in_file(&self.path))
    }
}

/// Parses problem-file text; errors name the field path (`topology.g`) and the line.
pub fn parse_problem(text: &str) -> Result<Problem> {
    let de = toml::Deserializer::parse(text).map_err(|e| toml_error(&e, text, ""))?;
    let mut track = serde_path_to_error::Track::new();
    let mut problem = Problem::deserialize(serde_path_to_error::Deserializer::new(de, &mut track))
        .map_err(|e| toml_error(&e, text, &track.path().to_string()))?;
    // The topology kind's own parameters too (a key no kind takes is refused whatever the
    // kind, as the flat table refused it).
    problem.topology.params.locate(text);
    crate::topology::registry::check_params(&problem.topology, "topology")?;
    // The traffic patterns' parameters are typed now, as the flat tables typed them.
    crate::traffic::check_types(&mut problem.traffic, text)?;
    // The routing algorithm's own parameters are read now, so that a misplaced or mistyped
    // key is reported with its line before any work, by every command.
    if let Some(routing) = &mut problem.routing {
        routing.params.locate(text);
        crate::registry::routing::check_routing(routing)?;
    }
    Ok(problem)
}

/// The path segment serde_path_to_error records inside a `toml::Spanned` value.
const SPANNED_FIELD: &str = ".$__serde_spanned_private_value";

fn toml_error(e: &toml::de::Error, text: &str, path: &str) -> Error {
    let line = e
        .span()
        .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    // A parameter kept with its position (`toml::Spanned`) adds serde's private field name.
    let path = path.replace(SPANNED_FIELD, "");
    let path = path.as_str();
    let location = match (path.is_empty() || path == ".", line) {
        (false, Some(l)) => format!("line {l}: {path}"),
        (false, None) => path.to_string(),
        (true, Some(l)) => format!("line {l}"),
        (true, None) => "file".to_string(),
    };
    Error::field(location, clean_serde_message(e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_field_and_line() {
        let err = parse_problem("seed = 1\n[topology]\nkind = \"mesh\"\ndims = [8, \"x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("line 4: topology.dims"), "{err}");
        let err = parse_problem("[topology]\nkind = \"mesh\"\ncolour = 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `colour`"), "{err}");
        let err = parse_problem("[topolog]\n").unwrap_err().to_string();
        assert!(err.contains("unknown field `topolog`"), "{err}");
    }

    /// A kind's parameter above i64::MAX (TOML's integers) is refused where it is read, naming
    /// the key and its line.
    #[test]
    fn values_above_the_toml_integer_range_name_the_key() {
        let err =
            parse_problem("[topology]\nkind = \"dragonfly\"\np = 2\ng = 18446744073709551615\n")
                .unwrap_err()
                .to_string();
        assert_eq!(err, "line 4: topology.g: u64 value was too large");
    }

    #[test]
    fn defaults_apply() {
        let p = parse_problem("[topology]\nkind = \"torus\"\ndims = [4, 4]\n").unwrap();
        assert_eq!(p.seed, 1);
        assert_eq!(p.metrics, MetricsConfig::default());
    }

    #[test]
    fn bisection_restarts_are_bounded() {
        let p = parse_problem("[metrics]\nbisection_restarts = 18446744073709551615\n").unwrap();
        let err = p.metrics.options(1).unwrap_err().to_string();
        assert!(
            err.starts_with("metrics.bisection_restarts: at most 10000"),
            "{err}"
        );
    }
}
