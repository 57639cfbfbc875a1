//! The `[routing]` table of a problem file: the algorithm's name and its own parameters. Each
//! algorithm reads its parameters into its own struct (see `crate::registry::routing`, which
//! lists the algorithms), so a key that does not belong to the chosen algorithm is an error.

use std::fmt;
use std::path::PathBuf;

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::params::Params;
use crate::topology::Topology;

/// A `[routing]` table: `algorithm` and the algorithm's parameters as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoutingConfig {
    /// Algorithm name, e.g. `dor`, `min`, `ugal_g`, `dfsssp`, `updown`.
    pub algorithm: String,
    /// Every other key of the table; the algorithm reads them with [`RoutingConfig::read_params`].
    pub params: Params,
    /// Directory relative file names (`table`, `table_layers`) are resolved from; set by the
    /// problem loader, not read from the file.
    pub base_dir: Option<PathBuf>,
}

impl RoutingConfig {
    /// Algorithm `algorithm` with no parameters set.
    pub fn new(algorithm: impl Into<String>) -> Self {
        RoutingConfig {
            algorithm: algorithm.into(),
            ..RoutingConfig::default()
        }
    }

    /// Sets parameter `key` to a value as the problem file would write it, e.g.
    /// `RoutingConfig::new("dor").with("tie", TieBreak::Random)`; a `None` leaves it unset.
    ///
    /// # Panics
    /// If `value` has no TOML form (a map with non-string keys): a programming error.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        self.set(key, value);
        self
    }

    /// In-place [`RoutingConfig::with`].
    pub fn set(&mut self, key: &str, value: impl Serialize) {
        match toml::Value::try_from(&value) {
            Ok(value) => self.params.set(key, value),
            // TOML has no null: the one value that fails here and is null in JSON is `None`.
            Err(_) if serde_json::to_value(&value).is_ok_and(|v| v.is_null()) => {
                self.params.remove(key)
            }
            Err(e) => panic!("routing.{key} has no TOML form: {e}"),
        }
    }

    /// The algorithm's parameter struct `P` (unknown keys are errors naming `routing.<key>`).
    pub(crate) fn read_params<P: DeserializeOwned>(&self) -> Result<P> {
        self.params
            .read("routing", &format!("routing `{}`", self.algorithm))
    }

    /// The error of a family's builder given a name that is not one of its own (a registry
    /// line that points at the wrong builder).
    pub(crate) fn not_in_family(&self, family: &str) -> crate::error::Error {
        crate::error::Error::field(
            "routing.algorithm",
            format!("`{}` is not a {family} algorithm", self.algorithm),
        )
    }

    /// The routing defaults of simulation preset `preset`, for parameters not set. Only
    /// `booksim` has any (BookSim2's behaviour): mesh/torus algorithms on a torus break ring
    /// ties at random (`tie`), `duato` and `star` keep packets on the escape network (`escape`,
    /// as `min_adapt`), dragonfly `min` puts the global hop on the destination group's VC
    /// (`global_vc`).
    pub(crate) fn apply_preset(&mut self, preset: &str, topo: &Topology) {
        let mut default = |key: &str, value: &str| {
            if !self.params.contains(key) {
                self.params.set(key, value);
            }
        };
        let algorithm = self.algorithm.clone();
        if preset == "merlin" {
            // The Q-adaptive authors' UGAL/PAR cost when both paths share the first port.
            if matches!(algorithm.as_str(), "ugal_g" | "ugal_n" | "par") {
                default("ugal_same_port", "path_vcs");
            }
            // And their VCs of a minimal path (one VC per class, as they run).
            if matches!(algorithm.as_str(), "ugal_g" | "ugal_n" | "par") {
                default("ugal_vcs", "merlin");
            }
            return;
        }
        if preset != "booksim" {
            return;
        }
        if matches!(algorithm.as_str(), "duato" | "star") {
            default("escape", "sticky");
        }
        if algorithm == "min" {
            default("global_vc", "destination");
        }
        let torus = matches!(
            topo.shape,
            crate::topology::Shape::Cartesian { wrap: true, .. }
        );
        if torus && super::cartesian::CartesianAlgorithm::from_name(&algorithm).is_some() {
            default("tie", "random");
        }
    }
}

/// Written as one table: `algorithm` first, then the parameters.
impl Serialize for RoutingConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("algorithm", &self.algorithm)?;
        for key in self.params.keys() {
            map.serialize_entry(key, &self.params.get(key))?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RoutingConfig {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Table;
        impl<'de> Visitor<'de> for Table {
            type Value = RoutingConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a [routing] table with `algorithm`")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<RoutingConfig, A::Error> {
                let (algorithm, params) = Params::read_with_selector(map, "algorithm")?;
                let algorithm = algorithm.ok_or_else(|| de::Error::missing_field("algorithm"))?;
                Ok(RoutingConfig {
                    algorithm,
                    params,
                    base_dir: None,
                })
            }
        }
        d.deserialize_map(Table)
    }
}
