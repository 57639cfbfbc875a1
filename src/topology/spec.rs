//! Topology descriptions: the `[topology]` table of a problem file and the short spec strings of
//! the command line (`mesh:8x8`, `dragonfly:p=4`, ...). Both are read into the same flat
//! [`TopologyConfig`], so both get the same validation and the same error messages.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::generators::{self, DragonflyArrangement};
use super::import::{MAX_PORTS, MAX_ROUTERS, MAX_TOTAL_PORTS};
use super::model::{ChannelParams, MAX_LATENCY, Topology};
use crate::error::{Error, Result};

/// Every field a `[topology]` table may hold; which ones apply depends on `kind`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    pub kind: Option<String>,
    pub name: Option<String>,
    pub dims: Option<Vec<usize>>,
    pub dimension: Option<usize>,
    pub routers: Option<usize>,
    pub degree: Option<usize>,
    pub concentration: Option<usize>,
    pub p: Option<usize>,
    pub a: Option<usize>,
    pub h: Option<usize>,
    pub g: Option<usize>,
    pub arrangement: Option<String>,
    #[serde(alias = "R")]
    pub r: Option<usize>,
    #[serde(alias = "N")]
    pub n: Option<usize>,
    #[serde(alias = "M")]
    pub m: Option<usize>,
    pub genome: Option<Vec<i64>>,
    pub seed: Option<u64>,
    pub path: Option<PathBuf>,
    pub local_latency: Option<u32>,
    pub global_latency: Option<u32>,
    pub terminal_latency: Option<u32>,
    pub bandwidth: Option<f64>,
}

/// A validated topology description, ready to build.
#[derive(Clone, Debug, PartialEq)]
pub enum TopologySpec {
    Cartesian {
        dims: Vec<usize>,
        wrap: bool,
        concentration: usize,
    },
    Dragonfly {
        p: usize,
        a: usize,
        h: usize,
        g: usize,
        arrangement: DragonflyArrangement,
    },
    Exanest {
        r: usize,
        n: usize,
        m: usize,
        genome: Vec<usize>,
        concentration: usize,
    },
    Jellyfish {
        routers: usize,
        degree: usize,
        concentration: usize,
        seed: u64,
    },
    Complete {
        routers: usize,
        concentration: usize,
    },
    File {
        path: PathBuf,
    },
}

/// Link parameters by kind, shared by all generators.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkParams {
    pub local: ChannelParams,
    pub global: ChannelParams,
    pub terminal: ChannelParams,
}

pub const KINDS: &[&str] = &[
    "mesh",
    "torus",
    "ring",
    "hypercube",
    "dragonfly",
    "exanest",
    "jellyfish",
    "complete",
    "file",
];

impl TopologyConfig {
    /// Validates the fields for the chosen kind. `base_dir` resolves a relative `path`;
    /// `default_seed` is the problem's seed, used when `seed` is not given.
    pub fn resolve(
        &self,
        base_dir: &Path,
        default_seed: u64,
    ) -> Result<(TopologySpec, LinkParams)> {
        let kind = self.kind.as_deref().ok_or_else(|| {
            Error::field("kind", format!("is required (one of {})", KINDS.join(", ")))
        })?;
        let allowed: &[&str] = match kind {
            "mesh" | "torus" => &["dims", "concentration"],
            "ring" | "complete" => &["routers", "concentration"],
            "hypercube" => &["dimension", "concentration"],
            "dragonfly" => &["p", "a", "h", "g", "arrangement", "global_latency"],
            "exanest" => &["r", "n", "m", "genome", "concentration", "global_latency"],
            "jellyfish" => &["routers", "degree", "concentration", "seed"],
            "file" => &["path"],
            other => {
                return Err(Error::field(
                    "kind",
                    format!(
                        "unknown topology kind `{other}` (expected one of {})",
                        KINDS.join(", ")
                    ),
                ));
            }
        };
        self.reject_unused(kind, allowed)?;
        let concentration = self.concentration.unwrap_or(1);
        let spec = match kind {
            "mesh" | "torus" => TopologySpec::Cartesian {
                dims: require(&self.dims, "dims")?.clone(),
                wrap: kind == "torus",
                concentration,
            },
            "ring" => TopologySpec::Cartesian {
                dims: vec![*require(&self.routers, "routers")?],
                wrap: true,
                concentration,
            },
            "hypercube" => {
                let d = *require(&self.dimension, "dimension")?;
                if !(1..=24).contains(&d) {
                    return Err(Error::field(
                        "dimension",
                        format!("must be in 1..=24 (got {d})"),
                    ));
                }
                TopologySpec::Cartesian {
                    dims: vec![2; d],
                    wrap: false,
                    concentration,
                }
            }
            "complete" => TopologySpec::Complete {
                routers: *require(&self.routers, "routers")?,
                concentration,
            },
            "dragonfly" => {
                let p = *require(&self.p, "p")?;
                // The defaults multiply p: bound every factor by the router radix limit first,
                // so that 2p and a*h + 1 cannot overflow.
                for (name, v) in [("p", Some(p)), ("a", self.a), ("h", self.h)] {
                    if let Some(v) = v.filter(|&v| v > MAX_PORTS) {
                        return Err(Error::field(
                            name,
                            format!("{v} is more than a router's {MAX_PORTS} ports"),
                        ));
                    }
                }
                let a = self.a.unwrap_or(2 * p);
                let h = self.h.unwrap_or(p);
                let g = self.g.unwrap_or(a * h + 1);
                let arrangement = match self.arrangement.as_deref().unwrap_or("absolute") {
                    "absolute" => DragonflyArrangement::Absolute,
                    "relative" => DragonflyArrangement::Relative,
                    "circulant" => DragonflyArrangement::Circulant,
                    other => {
                        return Err(Error::field(
                            "arrangement",
                            format!(
                                "unknown arrangement `{other}` (expected absolute, relative or circulant)"
                            ),
                        ));
                    }
                };
                TopologySpec::Dragonfly {
                    p,
                    a,
                    h,
                    g,
                    arrangement,
                }
            }
            "exanest" => {
                let genome = require(&self.genome, "genome")?;
                let genome = genome
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| {
                        usize::try_from(s).map_err(|_| {
                            Error::field(
                                format!("genome[{}]", i + 1),
                                format!("gene {} = {s} is negative (0 means unused)", i + 1),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                TopologySpec::Exanest {
                    r: *require(&self.r, "r")?,
                    n: *require(&self.n, "n")?,
                    m: *require(&self.m, "m")?,
                    genome,
                    concentration: self.concentration.unwrap_or(3),
                }
            }
            "jellyfish" => TopologySpec::Jellyfish {
                routers: *require(&self.routers, "routers")?,
                degree: *require(&self.degree, "degree")?,
                concentration,
                seed: self.seed.unwrap_or(default_seed),
            },
            "file" => {
                let path = require(&self.path, "path")?;
                TopologySpec::File {
                    path: if path.is_absolute() {
                        path.clone()
                    } else {
                        base_dir.join(path)
                    },
                }
            }
            _ => unreachable!("kinds are matched above"),
        };
        let mut params = LinkParams::default();
        let bandwidth = self.bandwidth.unwrap_or(1.0);
        if !(bandwidth > 0.0 && bandwidth.is_finite()) {
            return Err(Error::field(
                "bandwidth",
                format!("must be a positive number of flits per cycle (got {bandwidth})"),
            ));
        }
        for (value, name, target) in [
            (self.local_latency, "local_latency", &mut params.local),
            (self.global_latency, "global_latency", &mut params.global),
            (
                self.terminal_latency,
                "terminal_latency",
                &mut params.terminal,
            ),
        ] {
            let latency = value.unwrap_or(1);
            if latency == 0 {
                return Err(Error::field(name, "must be at least 1 cycle"));
            }
            if latency > MAX_LATENCY {
                return Err(Error::field(
                    name,
                    format!("at most {MAX_LATENCY} cycles (got {latency})"),
                ));
            }
            *target = ChannelParams { latency, bandwidth };
        }
        Ok((spec, params))
    }

    fn reject_unused(&self, kind: &str, allowed: &[&str]) -> Result<()> {
        let always = [
            "kind",
            "name",
            "local_latency",
            "terminal_latency",
            "bandwidth",
        ];
        // JSON rather than TOML: TOML integers stop at i64::MAX, so a field such as
        // `g = 18446744073709551615` (read into a usize) would not serialise. Unset fields are
        // null.
        let value =
            serde_json::to_value(self).map_err(|e| Error::field("topology", e.to_string()))?;
        if let serde_json::Value::Object(table) = value {
            let set = table.iter().filter(|(_, v)| !v.is_null()).map(|(k, _)| k);
            for key in set {
                if kind == "file" && key != "kind" && key != "name" && key != "path" {
                    return Err(Error::field(
                        key.as_str(),
                        "does not apply to kind `file` (the file holds the whole topology)",
                    ));
                }
                if !always.contains(&key.as_str()) && !allowed.contains(&key.as_str()) {
                    return Err(Error::field(
                        key.as_str(),
                        format!(
                            "does not apply to kind `{kind}` (it takes {})",
                            allowed.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Parses a command-line spec: `kind[:positional][,key=value...]`, e.g. `torus:4x4x4,c=2`,
    /// `dragonfly:p=4,arrangement=relative`, `exanest:R=2,N=4,M=2,genome=5/17/8/22`.
    pub fn parse_spec(spec: &str) -> Result<TopologyConfig> {
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let kind = kind.trim().to_ascii_lowercase();
        if !KINDS.contains(&kind.as_str()) || kind == "file" {
            return Err(Error::field(
                "kind",
                format!(
                    "unknown topology `{kind}` (expected one of {}, or a .toml/.json/.txt file)",
                    KINDS[..KINDS.len() - 1].join(", ")
                ),
            ));
        }
        let mut table = toml::Table::new();
        table.insert("kind".into(), toml::Value::String(kind.clone()));
        for (i, item) in rest
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .enumerate()
        {
            let (key, value) = match item.split_once('=') {
                Some((k, v)) => (canonical_key(k.trim()), v.trim()),
                None if i == 0 => (positional_key(&kind).to_string(), item),
                None => {
                    return Err(Error::field(
                        item,
                        "expected key=value (only the first item may be positional)",
                    ));
                }
            };
            if table.contains_key(&key) {
                return Err(Error::field(key, "is given twice"));
            }
            table.insert(key, spec_value(value));
        }
        let mut track = serde_path_to_error::Track::new();
        let de = serde_path_to_error::Deserializer::new(toml::Value::Table(table), &mut track);
        TopologyConfig::deserialize(de).map_err(|e| {
            let path = track.path().to_string();
            Error::field(path, clean_serde_message(&e.to_string()))
        })
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

impl TopologySpec {
    pub fn build(&self, params: &LinkParams) -> Result<Topology> {
        self.check_size()?;
        match self {
            TopologySpec::Cartesian {
                dims,
                wrap,
                concentration,
            } => generators::cartesian(dims, *wrap, *concentration, params),
            TopologySpec::Dragonfly {
                p,
                a,
                h,
                g,
                arrangement,
            } => generators::dragonfly(*p, *a, *h, *g, *arrangement, params),
            TopologySpec::Exanest {
                r,
                n,
                m,
                genome,
                concentration,
            } => generators::exanest(*r, *n, *m, genome, *concentration, params),
            TopologySpec::Jellyfish {
                routers,
                degree,
                concentration,
                seed,
            } => generators::jellyfish(*routers, *degree, *concentration, *seed, params),
            TopologySpec::Complete {
                routers,
                concentration,
            } => generators::complete(*routers, *concentration, params),
            TopologySpec::File { path } => super::import::read_topology_file(path),
        }
    }
}

impl TopologySpec {
    /// What a generated topology's size depends on, before anything is built: the field
    /// errors name, the routers and the ports per router (terminals included; `None` when the
    /// product overflows) and the terminals per router. `None` for imported files.
    #[allow(clippy::type_complexity)]
    fn dimensions(&self) -> Option<(&'static str, Option<usize>, Option<usize>, usize)> {
        let dims = match self {
            TopologySpec::Cartesian {
                dims,
                concentration,
                ..
            } => (
                "dims",
                dims.iter().try_fold(1usize, |n, &k| n.checked_mul(k)),
                concentration.checked_add(dims.len().saturating_mul(2)),
                *concentration,
            ),
            TopologySpec::Dragonfly { p, a, h, g, .. } => (
                "g",
                a.checked_mul(*g),
                p.checked_add(*a).and_then(|x| x.checked_add(*h)),
                *p,
            ),
            TopologySpec::Exanest {
                r,
                n,
                m,
                concentration,
                ..
            } => (
                "m",
                n.checked_mul(*m).and_then(|x| x.checked_mul(2)),
                r.checked_mul(2)
                    .and_then(|x| x.checked_add(*concentration))
                    .and_then(|x| x.checked_add(1)),
                *concentration,
            ),
            TopologySpec::Jellyfish {
                routers,
                degree,
                concentration,
                ..
            } => (
                "degree",
                Some(*routers),
                degree.checked_add(*concentration),
                *concentration,
            ),
            TopologySpec::Complete {
                routers,
                concentration,
            } => (
                "routers",
                Some(*routers),
                routers.checked_add(*concentration),
                *concentration,
            ),
            // Imports check their own sizes while reading.
            TopologySpec::File { .. } => return None,
        };
        Some(dims)
    }

    /// Routers × ports per router of a generated topology (an upper bound on its ports),
    /// without building it; `None` for imports or when the product overflows. Lets callers
    /// that take arbitrary specs (the fuzz targets) skip huge but valid ones.
    pub fn ports_upper_bound(&self) -> Option<usize> {
        let (_, routers, radix, _) = self.dimensions()?;
        routers?.checked_mul(radix?)
    }

    /// Refuses a generated topology larger than an imported one may be (routers, ports per
    /// router, ports in all), before anything is allocated. Every product is checked, so an
    /// absurd size is an error naming its field rather than a wrapped number or an allocation
    /// failure. A 114,582-node dragonfly (p = 13) is far inside the limits.
    fn check_size(&self) -> Result<()> {
        let too_many = |field: &str, what: &str| {
            Error::field(
                field,
                format!(
                    "the topology would have {what}; the limits are {MAX_ROUTERS} routers, \
                     {MAX_PORTS} ports per router and {MAX_TOTAL_PORTS} ports in all"
                ),
            )
        };
        let Some((field, routers, radix, concentration)) = self.dimensions() else {
            // Imports check their own sizes while reading.
            return Ok(());
        };
        if concentration > MAX_PORTS {
            return Err(Error::field(
                "concentration",
                format!("{concentration} terminals per router is more than {MAX_PORTS} ports"),
            ));
        }
        let routers = routers
            .filter(|&n| n <= MAX_ROUTERS)
            .ok_or_else(|| too_many(field, "too many routers"))?;
        let radix = radix
            .filter(|&k| k <= MAX_PORTS)
            .ok_or_else(|| too_many(field, "too many ports per router"))?;
        match routers.checked_mul(radix) {
            Some(total) if total <= MAX_TOTAL_PORTS => Ok(()),
            _ => Err(too_many(
                field,
                &format!("{routers} routers of up to {radix} ports"),
            )),
        }
    }
}

fn require<'a, T>(value: &'a Option<T>, field: &str) -> Result<&'a T> {
    value
        .as_ref()
        .ok_or_else(|| Error::field(field, "is required for this kind"))
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

fn positional_key(kind: &str) -> &'static str {
    match kind {
        "mesh" | "torus" => "dims",
        "hypercube" => "dimension",
        "dragonfly" => "p",
        _ => "routers",
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

    #[test]
    fn parses_specs() {
        assert_eq!(
            spec("torus:4x4x4,c=2").unwrap(),
            TopologySpec::Cartesian {
                dims: vec![4, 4, 4],
                wrap: true,
                concentration: 2
            }
        );
        assert_eq!(
            spec("dragonfly:p=4").unwrap(),
            TopologySpec::Dragonfly {
                p: 4,
                a: 8,
                h: 4,
                g: 33,
                arrangement: DragonflyArrangement::Absolute
            }
        );
        assert_eq!(
            spec("exanest:R=2,N=4,M=2,genome=5/17/8/22").unwrap(),
            TopologySpec::Exanest {
                r: 2,
                n: 4,
                m: 2,
                genome: vec![5, 17, 8, 22],
                concentration: 3
            }
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
    /// i64::MAX, which TOML cannot write back, panicked in the check of unused fields.
    #[test]
    fn values_above_the_toml_integer_range_are_errors() {
        let config: TopologyConfig =
            toml::from_str("kind = \"dragonfly\"\np = 2\ng = 18446744073709551615\n").unwrap();
        let e = config.build(Path::new("."), 1).unwrap_err().to_string();
        assert!(
            e.starts_with("g: the topology would have too many routers"),
            "{e}"
        );
    }
}
