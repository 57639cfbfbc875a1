//! Topology descriptions: the `[topology]` table of a problem file and the short spec strings of
//! the command line (`mesh:8x8`, `dragonfly:p=4`, ...). Both are read into the same
//! [`TopologyConfig`] — the kind, the keys every kind takes and the kind's own parameters as
//! written — so both get the same validation and the same error messages. Each kind reads its
//! parameters into its own struct (serde, `deny_unknown_fields`) next to its generator;
//! `super::registry` lists the kinds.

use std::fmt;
use std::path::Path;

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use super::import::{MAX_PORTS, MAX_ROUTERS, MAX_TOTAL_PORTS};
use super::model::{ChannelParams, MAX_LATENCY, Topology};
use super::registry::{self, TopologyEntry};
use crate::error::{Error, Result};
use crate::params::Params;

/// A `[topology]` table: `kind`, the keys every kind takes, and the kind's own parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopologyConfig {
    /// The generator, e.g. `mesh`, `dragonfly`, `file` (`super::registry::TOPOLOGIES`).
    pub kind: Option<String>,
    /// Replaces the generated name in reports.
    pub name: Option<String>,
    /// Latency in cycles of router-to-router links other than global ones (default 1).
    pub local_latency: Option<u32>,
    /// Latency in cycles of terminal links (default 1).
    pub terminal_latency: Option<u32>,
    /// Flits per cycle of every link (default 1).
    pub bandwidth: Option<f64>,
    /// Every other key of the table; the kind reads them with [`TopologyConfig::read_params`].
    pub params: Params,
}

/// The keys every kind takes besides its own (`global_latency` belongs to the kinds with global
/// links).
pub(crate) const COMMON_KEYS: [&str; 5] = [
    "kind",
    "name",
    "local_latency",
    "terminal_latency",
    "bandwidth",
];

/// The common keys that describe links (refused by a kind whose file holds its links).
const LINK_KEYS: [&str; 3] = ["local_latency", "terminal_latency", "bandwidth"];

/// Link parameters by kind, shared by all generators.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkParams {
    pub local: ChannelParams,
    pub global: ChannelParams,
    pub terminal: ChannelParams,
}

impl LinkParams {
    /// The same links with global links of `latency` cycles.
    pub(crate) fn with_global_latency(mut self, latency: u32) -> Self {
        self.global.latency = latency;
        self
    }
}

/// What a kind's resolver gets besides the table.
#[derive(Clone, Copy, Debug)]
pub struct ResolveContext<'a> {
    /// Where a relative `path` is resolved from (the problem file's folder).
    pub base_dir: &'a Path,
    /// The problem's seed, for a generator whose own `seed` is not given.
    pub default_seed: u64,
}

/// What a generated topology's size depends on, known before anything is built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size {
    /// The field a size error names.
    pub field: &'static str,
    /// Routers (`None` when the product overflows).
    pub routers: Option<usize>,
    /// Ports per router, terminals included (`None` when the sum overflows).
    pub radix: Option<usize>,
    /// Terminals per router.
    pub concentration: usize,
}

/// A kind's parameters checked and completed with their defaults, ready to build.
pub trait Generator: fmt::Debug + Send + Sync {
    /// The size, for the checks made before building; `None` for imported files (they check
    /// their own sizes while reading).
    fn size(&self) -> Option<Size>;

    /// Builds the topology with links of `links`.
    fn build(&self, links: &LinkParams) -> Result<Topology>;
}

/// A validated topology description, ready to build.
#[derive(Debug)]
pub struct TopologySpec(pub Box<dyn Generator>);

impl TopologyConfig {
    /// The kind's parameter struct `P`; errors name the key alone (`p`, `genome[2]`), the
    /// caller prefixes the table. A key that `P` does not have is refused with the keys the
    /// kind takes.
    pub(crate) fn read_params<P: DeserializeOwned>(&self) -> Result<P> {
        let entry = registry::entry_of(self)?;
        self.params.read("", &entry.misplaced())
    }

    /// The error of a family's resolver given a kind that is not one of its own (a registry
    /// line that points at the wrong resolver).
    pub(crate) fn not_in_family(&self, family: &str) -> Error {
        Error::field(
            "kind",
            format!(
                "`{}` is not a {family} kind",
                self.kind.as_deref().unwrap_or_default()
            ),
        )
    }

    /// Validates the fields for the chosen kind. `base_dir` resolves a relative `path`;
    /// `default_seed` is the problem's seed, used when `seed` is not given.
    pub fn resolve(
        &self,
        base_dir: &Path,
        default_seed: u64,
    ) -> Result<(TopologySpec, LinkParams)> {
        let entry = registry::entry_of(self)?;
        self.reject_links(entry)?;
        registry::check_params(self, "")?;
        let ctx = ResolveContext {
            base_dir,
            default_seed,
        };
        let generator = (entry.resolve)(self, &ctx)?;
        Ok((TopologySpec(generator), self.link_params()?))
    }

    /// A kind whose file holds the whole topology refuses the link keys too.
    fn reject_links(&self, entry: &TopologyEntry) -> Result<()> {
        let Some(reason) = entry.no_links else {
            return Ok(());
        };
        let set = [
            self.local_latency.is_some(),
            self.terminal_latency.is_some(),
            self.bandwidth.is_some(),
        ];
        match LINK_KEYS.iter().zip(set).find(|(_, set)| *set) {
            Some((key, _)) => Err(Error::field(
                *key,
                format!("does not apply to kind `{}` ({reason})", entry.name),
            )),
            None => Ok(()),
        }
    }

    fn link_params(&self) -> Result<LinkParams> {
        let bandwidth = self.bandwidth.unwrap_or(1.0);
        if !(bandwidth > 0.0 && bandwidth.is_finite()) {
            return Err(Error::field(
                "bandwidth",
                format!("must be a positive number of flits per cycle (got {bandwidth})"),
            ));
        }
        let channel = |field: &str, value: Option<u32>| -> Result<ChannelParams> {
            Ok(ChannelParams {
                latency: check_latency(field, value)?,
                bandwidth,
            })
        };
        let local = channel("local_latency", self.local_latency)?;
        Ok(LinkParams {
            local,
            global: channel("global_latency", None)?,
            terminal: channel("terminal_latency", self.terminal_latency)?,
        })
    }

    /// Parses a command-line spec: `kind[:positional][,key=value...]`, e.g. `torus:4x4x4,c=2`,
    /// `dragonfly:p=4,arrangement=relative`, `exanest:R=2,N=4,M=2,genome=5/17/8/22`.
    pub fn parse_spec(spec: &str) -> Result<TopologyConfig> {
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let kind = kind.trim().to_ascii_lowercase();
        let Some(positional) = registry::find(&kind).and_then(|e| e.positional) else {
            return Err(Error::field(
                "kind",
                format!(
                    "unknown topology `{kind}` (expected one of {}, or a .toml/.json/.txt file)",
                    registry::spec_names().join(", ")
                ),
            ));
        };
        let mut table = toml::Table::new();
        for (i, item) in rest
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .enumerate()
        {
            let (key, value) = match item.split_once('=') {
                Some((k, v)) => (canonical_key(k.trim()), v.trim()),
                None if i == 0 => (positional.to_string(), item),
                None => {
                    return Err(Error::field(
                        item,
                        "expected key=value (only the first item may be positional)",
                    ));
                }
            };
            if table.contains_key(&key) || key == "kind" {
                return Err(Error::field(key, "is given twice"));
            }
            table.insert(key, spec_value(value));
        }
        let mut config = TopologyConfig {
            kind: Some(kind),
            ..TopologyConfig::default()
        };
        for (key, value) in table {
            fn typed<T: DeserializeOwned>(key: &str, value: toml::Value) -> Result<Option<T>> {
                T::deserialize(value)
                    .map(Some)
                    .map_err(|e| Error::field(key, clean_serde_message(&e.to_string())))
            }
            match key.as_str() {
                "name" => config.name = typed(&key, value)?,
                "local_latency" => config.local_latency = typed(&key, value)?,
                "terminal_latency" => config.terminal_latency = typed(&key, value)?,
                "bandwidth" => config.bandwidth = typed(&key, value)?,
                _ => config.params.set(&key, value),
            }
        }
        registry::check_params(&config, "")?;
        Ok(config)
    }

    /// Builds the topology this config describes.
    pub fn build(&self, base_dir: &Path, default_seed: u64) -> Result<Topology> {
        let (spec, params) = self.resolve(base_dir, default_seed)?;
        let mut topo = spec.build(&params)?;
        if let Some(name) = &self.name {
            topo.name = name.clone();
        }
        Ok(topo)
    }
}

/// The topology of a command-line spec string such as `mesh:4x4` (tests of every module).
///
/// # Panics
/// If the spec is refused: a mistake in the test.
#[cfg(test)]
pub(crate) fn test_topology(spec: &str) -> Topology {
    TopologyConfig::parse_spec(spec)
        .and_then(|config| config.build(Path::new("."), 1))
        .unwrap_or_else(|e| panic!("test topology `{spec}`: {e}"))
}

/// A link latency: `field`'s value, 1 cycle by default, at most [`MAX_LATENCY`].
pub(crate) fn check_latency(field: &str, value: Option<u32>) -> Result<u32> {
    let latency = value.unwrap_or(1);
    if latency == 0 {
        return Err(Error::field(field, "must be at least 1 cycle"));
    }
    if latency > MAX_LATENCY {
        return Err(Error::field(
            field,
            format!("at most {MAX_LATENCY} cycles (got {latency})"),
        ));
    }
    Ok(latency)
}

/// A required parameter: `field` is named when it is missing.
pub(crate) fn require<'a, T>(value: &'a Option<T>, field: &str) -> Result<&'a T> {
    value
        .as_ref()
        .ok_or_else(|| Error::field(field, "is required for this kind"))
}

impl TopologySpec {
    pub fn build(&self, params: &LinkParams) -> Result<Topology> {
        self.check_size()?;
        self.0.build(params)
    }

    /// Routers × ports per router of a generated topology (an upper bound on its ports),
    /// without building it; `None` for imports or when the product overflows. Lets callers
    /// that take arbitrary specs (the fuzz targets) skip huge but valid ones.
    pub fn ports_upper_bound(&self) -> Option<usize> {
        let size = self.0.size()?;
        size.routers?.checked_mul(size.radix?)
    }

    /// Refuses a generated topology larger than an imported one may be (routers, ports per
    /// router, ports in all), before anything is allocated. Every product is checked, so an
    /// absurd size is an error naming its field rather than a wrapped number or an allocation
    /// failure. A 114,582-node dragonfly (p = 13) is far inside the limits.
    fn check_size(&self) -> Result<()> {
        let Some(size) = self.0.size() else {
            // Imports check their own sizes while reading.
            return Ok(());
        };
        let too_many = |what: &str| {
            Error::field(
                size.field,
                format!(
                    "the topology would have {what}; the limits are {MAX_ROUTERS} routers, \
                     {MAX_PORTS} ports per router and {MAX_TOTAL_PORTS} ports in all"
                ),
            )
        };
        let concentration = size.concentration;
        if concentration > MAX_PORTS {
            return Err(Error::field(
                "concentration",
                format!("{concentration} terminals per router is more than {MAX_PORTS} ports"),
            ));
        }
        let routers = size
            .routers
            .filter(|&n| n <= MAX_ROUTERS)
            .ok_or_else(|| too_many("too many routers"))?;
        let radix = size
            .radix
            .filter(|&k| k <= MAX_PORTS)
            .ok_or_else(|| too_many("too many ports per router"))?;
        match routers.checked_mul(radix) {
            Some(total) if total <= MAX_TOTAL_PORTS => Ok(()),
            _ => Err(too_many(&format!(
                "{routers} routers of up to {radix} ports"
            ))),
        }
    }
}

/// Written as one flat table, as the problem file has it: every key any kind takes, `null`
/// when unset (so that checkpoints' configuration fingerprints compare key by key), the
/// kind's parameters under the names its struct writes (`r` for `R`).
impl Serialize for TopologyConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let params = registry::canonical_params(self);
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("kind", &self.kind)?;
        map.serialize_entry("name", &self.name)?;
        let own = registry::own_keys();
        for key in &own {
            map.serialize_entry(key, &params.get(key))?;
        }
        for key in params.keys().filter(|k| !own.contains(k)) {
            map.serialize_entry(key, &params.get(key))?;
        }
        map.serialize_entry("local_latency", &self.local_latency)?;
        map.serialize_entry("terminal_latency", &self.terminal_latency)?;
        map.serialize_entry("bandwidth", &self.bandwidth)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for TopologyConfig {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Table;
        impl<'de> Visitor<'de> for Table {
            type Value = TopologyConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a [topology] table")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<TopologyConfig, A::Error> {
                let mut c = TopologyConfig::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "kind" => c.kind = Some(map.next_value()?),
                        "name" => c.name = Some(map.next_value()?),
                        "local_latency" => c.local_latency = Some(map.next_value()?),
                        "terminal_latency" => c.terminal_latency = Some(map.next_value()?),
                        "bandwidth" => c.bandwidth = Some(map.next_value()?),
                        _ => c.params.insert_spanned(key, map.next_value()?),
                    }
                }
                Ok(c)
            }
        }
        d.deserialize_map(Table)
    }
}

fn canonical_key(key: &str) -> String {
    match key {
        "c" => "concentration".into(),
        "R" => "r".into(),
        "N" => "n".into(),
        "M" => "m".into(),
        other => other.into(),
    }
}

/// Spec values: `8x8` and `5/17/8/22` are integer lists, then integers, floats, words.
fn spec_value(text: &str) -> toml::Value {
    let list = |sep: char| {
        let parts: Vec<&str> = text.split(sep).collect();
        parts
            .iter()
            .map(|p| p.trim().parse::<i64>().map(toml::Value::Integer))
            .collect::<Result<Vec<_>, _>>()
            .ok()
            .map(toml::Value::Array)
    };
    if text.contains('x') {
        if let Some(v) = list('x') {
            return v;
        }
    }
    if text.contains('/') {
        if let Some(v) = list('/') {
            return v;
        }
    }
    if let Ok(i) = text.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = text.parse::<f64>() {
        return toml::Value::Float(f);
    }
    toml::Value::String(text.to_string())
}

/// serde says "invalid value: integer `-1`, expected usize"; keep it on one line.
pub(crate) fn clean_serde_message(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Result<TopologySpec> {
        TopologyConfig::parse_spec(s)?
            .resolve(Path::new("."), 1)
            .map(|(s, _)| s)
    }

    /// The resolved generator, e.g. `Cartesian { dims: [4, 4], wrap: true, concentration: 1 }`.
    fn resolved(s: &str) -> String {
        format!("{:?}", spec(s).unwrap().0)
    }

    #[test]
    fn parses_specs() {
        assert_eq!(
            resolved("torus:4x4x4,c=2"),
            "Cartesian { dims: [4, 4, 4], wrap: true, concentration: 2 }"
        );
        assert_eq!(
            resolved("dragonfly:p=4"),
            "Dragonfly { p: 4, a: 8, h: 4, g: 33, arrangement: Absolute, global_latency: 1 }"
        );
        assert_eq!(
            resolved("exanest:R=2,N=4,M=2,genome=5/17/8/22"),
            "Exanest { r: 2, n: 4, m: 2, genome: [5, 17, 8, 22], concentration: 3, \
             global_latency: 1 }"
        );
    }

    #[test]
    fn rejects_bad_specs_naming_the_field() {
        let msg = |s: &str| spec(s).unwrap_err().to_string();
        assert!(msg("blob:3").starts_with("kind: unknown topology `blob`"));
        assert!(msg("mesh:8xq").contains("dims"), "{}", msg("mesh:8xq"));
        assert!(msg("dragonfly:p=4,x=3").contains("unknown field `x`"));
        assert!(msg("mesh:8x8,p=3").starts_with("p: does not apply to kind `mesh`"));
        assert!(msg("dragonfly:p=-1").starts_with("p: "));
        assert!(msg("dragonfly:p=4,arrangement=zigzag").starts_with("arrangement: unknown"));
        assert!(msg("exanest:R=2,N=4,M=2,genome=5/-1").starts_with("genome[2]: gene 2 = -1"));
    }

    #[test]
    fn sizes_are_checked_before_building() {
        let build = |s: &str| {
            TopologyConfig::parse_spec(s)
                .and_then(|c| c.build(Path::new("."), 1))
                .map(|t| t.num_terminals())
        };
        let msg = |s: &str| build(s).unwrap_err().to_string();
        // 2^32 x 2^32 wrapped to 0 routers before; now the product is checked.
        assert!(msg("mesh:4294967296x4294967296").starts_with("dims: the topology would have"));
        assert!(msg("dragonfly:p=4611686018427387904").starts_with("p: 4611686018427387904 is"));
        assert!(msg("dragonfly:p=8,h=100000").starts_with("h: 100000 is more than"));
        assert!(msg("dragonfly:p=60,a=5000,h=5000").starts_with("g: the topology would have"));
        assert!(msg("exanest:R=2,N=4611686018427387904,M=4,genome=5/17/8/22").starts_with("m: "));
        assert!(msg("jellyfish:routers=100000,degree=2000").starts_with("degree: the topology"));
        assert!(msg("ring:8,c=1000000").starts_with("concentration: 1000000 terminals"));
        assert!(msg("torus:4x4,local_latency=100000").starts_with("local_latency: at most 65536"));
        // The 114,582-node dragonfly of the issue is inside the limits.
        assert_eq!(build("dragonfly:p=13").unwrap(), 114_582);
    }

    /// Found by fuzzing (fuzz/corpus/problem_file/regression-huge-g.toml): a value above
    /// i64::MAX, which TOML cannot write back, panicked in the check of unused fields. The
    /// kind's parameters are now kept as TOML values, so such a value is refused when read,
    /// naming its key.
    #[test]
    fn values_above_the_toml_integer_range_are_errors() {
        let e = toml::from_str::<TopologyConfig>(
            "kind = \"dragonfly\"\np = 2\ng = 18446744073709551615\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("u64 value was too large"), "{e}");
        assert!(e.contains("line 3"), "{e}");
    }

    /// Checkpoints compare configurations key by key: every key any kind takes is written,
    /// `null` when unset, under the name its struct writes.
    #[test]
    fn writes_every_key_as_the_flat_table_did() {
        let config = TopologyConfig::parse_spec("exanest:R=2,N=4,M=2").unwrap();
        let json = serde_json::to_value(&config).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "a",
                "arrangement",
                "bandwidth",
                "concentration",
                "degree",
                "dimension",
                "dims",
                "g",
                "genome",
                "global_latency",
                "h",
                "kind",
                "local_latency",
                "m",
                "n",
                "name",
                "p",
                "path",
                "r",
                "routers",
                "seed",
                "terminal_latency"
            ]
        );
        assert_eq!(json["r"], 2);
        assert_eq!(json["genome"], serde_json::Value::Null);
    }
}
