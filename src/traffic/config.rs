//! The `[[traffic]]` tables of a problem file: parsing and validation into a resolved class
//! specification. Every field is documented in `docs/traffic.md`.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use super::process::Sizes;
use super::registry::{self, PatternEntry};
use crate::error::{Error, Result};
use crate::params::Params;
#[cfg(test)]
use crate::topology::spec::clean_serde_message;

/// Most flits per packet: the simulator numbers a packet's flits in 31 bits, and a packet
/// this long already takes a million cycles to cross one channel.
pub(crate) const MAX_PACKET_FLITS: u32 = 1 << 20;

/// Most packets per `alltoall` message: a message's packets are all created at once.
pub(crate) const MAX_PACKETS_PER_MESSAGE: u32 = 1 << 16;

/// Injection process names accepted by `injection`.
pub(crate) const INJECTIONS: &[&str] = &["bernoulli", "periodic", "onoff", "alltoall"];

/// Declares [`TrafficConfig`]: the keys every class may give (each an `Option`), then
/// `params`, the pattern's own keys. One list gives the struct, [`COMMON_KEYS`] and the
/// (de)serialisation, so that a key is added in one place.
macro_rules! traffic_config {
    ($(#[$sattr:meta])* pub struct $name:ident {
        $( $(#[$attr:meta])* $field:ident: $ty:ty, )*
    }) => {
        $(#[$sattr])*
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct $name {
            $( $(#[$attr])* pub $field: Option<$ty>, )*
            /// The pattern's own parameters as written (`hotspots`, `shift`, `dims`, ...); the
            /// pattern reads them into its own struct.
            pub params: Params,
        }

        /// The keys every `[[traffic]]` table may give, whatever its pattern.
        pub(crate) const COMMON_KEYS: &[&str] = &[$(stringify!($field)),*];

        /// Written as one table: the common keys that are set, then the pattern's.
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                $(
                    if let Some(value) = &self.$field {
                        map.serialize_entry(stringify!($field), value)?;
                    }
                )*
                for key in self.params.keys() {
                    map.serialize_entry(key, &self.params.get(key))?;
                }
                map.end()
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                struct Table;
                impl<'de> Visitor<'de> for Table {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("a [[traffic]] table")
                    }
                    fn visit_map<A: MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> std::result::Result<$name, A::Error> {
                        let mut c = $name::default();
                        while let Some(key) = map.next_key::<String>()? {
                            match key.as_str() {
                                $( stringify!($field) => c.$field = Some(map.next_value()?), )*
                                k if registry::all_keys().contains(&k) => {
                                    c.params.insert_spanned(key, map.next_value()?)
                                }
                                _ => map.next_value_seed(UnknownField(key))?,
                            }
                        }
                        Ok(c)
                    }
                }
                d.deserialize_map(Table)
            }
        }
    };
}

/// A key no `[[traffic]]` table takes: refused as its value is read, so that the error has the
/// key's path and line, with every key a table may give.
struct UnknownField(String);

impl<'de> DeserializeSeed<'de> for UnknownField {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, _: D) -> std::result::Result<(), D::Error> {
        Err(de::Error::unknown_field(&self.0, registry::all_keys()))
    }
}

traffic_config! {
    /// One traffic class: a `[[traffic]]` table. The class index is the table's position.
    ///
    /// All fields are optional in the type so that missing and misplaced fields get errors that
    /// name them; [`TrafficConfig`] is validated when the traffic is built. The keys below are
    /// the ones every class may give; the pattern's own parameters are in `params`, read by the
    /// pattern into its own struct (`traffic::registry` lists the patterns).
    pub struct TrafficConfig {
        /// A label for reports (default `class<i>`).
        name: String,
        /// Destination pattern (one of `traffic::registry::PATTERNS`); required unless
        /// `injection = "alltoall"`.
        pattern: String,
        /// Offered flits per terminal per cycle.
        load: f64,
        /// Injection process (one of [`INJECTIONS`]); default `bernoulli`.
        injection: String,

        // Injection parameters.
        /// `onoff`: mean ON period in cycles (>= 1).
        burst_on: f64,
        /// `onoff`: mean OFF period in cycles (>= 1).
        burst_off: f64,
        /// `alltoall`: cycles between the starts of two exchanges.
        period: u64,
        /// `alltoall`: terminals per exchange group (consecutive ids; default all).
        group: usize,
        /// `alltoall`: spread an exchange's packets evenly over the period (default false: burst).
        spread: bool,
        /// `alltoall`: destination order, `rotate` (default) or `shuffle`.
        order: String,
        /// `alltoall`: packets per message (one message per other member and exchange; a long
        /// message split into packets, as DPSNN's spike messages are). Default 1.
        packets_per_message: u32,
        /// Piecewise load by cycle (instead of `load`), for `bernoulli`, `periodic` and `onoff`.
        phases: Vec<PhaseConfig>,

        // Packet sizes.
        /// Fixed packet size in flits (default 1).
        packet_size: u32,
        /// Smallest payload in flits (uniform between `payload_min` and `payload_max`).
        payload_min: u32,
        /// Largest payload in flits.
        payload_max: u32,
        /// Header flits added to the payload (default 0).
        header: u32,
        /// Footer flits added to the payload (default 0).
        footer: u32,

        /// Most packets waiting in a source queue (none = unbounded); the simulator enforces it.
        source_queue: usize,
        /// Packets to the source itself, as BookSim2 sends them (they cross one router): `uniform`
        /// draws the source too, a permutation's fixed points (transpose's diagonal, ...) send to
        /// themselves, `diagonal` sends its 2/3 share to itself. Default false (none is created),
        /// true under `simulation.preset = "booksim"`. For `uniform`, `diagonal` and the
        /// permutations `transpose`, `bitcomp`, `bitrev`, `shuffle`, `tornado`, `neighbor`.
        self_packets: bool,
        /// Changes this class's random streams without changing the problem's seed.
        seed_offset: u64,
    }
}

/// The `booksim` simulation preset's traffic defaults: `self_packets` on wherever it
/// applies and is not set.
pub(crate) fn apply_booksim_defaults(configs: &mut [TrafficConfig]) {
    for c in configs {
        let applies = c
            .pattern
            .as_deref()
            .and_then(registry::find)
            .is_some_and(|e| e.self_packets);
        if applies && c.self_packets.is_none() {
            c.self_packets = Some(true);
        }
    }
}

/// One step of a dynamic load: `load` applies from the end of the previous phase (cycle 0 for
/// the first) until just before `until_cycle`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    pub until_cycle: u64,
    pub load: f64,
}

impl TrafficConfig {
    /// A class with the given pattern and load and every other field at its default.
    pub fn new(pattern: &str, load: f64) -> Self {
        TrafficConfig {
            pattern: Some(pattern.to_string()),
            load: Some(load),
            ..TrafficConfig::default()
        }
    }

    /// Sets the pattern's parameter `key` to a value as the problem file would write it, e.g.
    /// `TrafficConfig::new("hotspot", 0.1).with("hotspots", [0, 9])`.
    ///
    /// # Panics
    /// If `value` has no TOML form: a programming error.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        let value = toml::Value::try_from(&value)
            .unwrap_or_else(|e| panic!("traffic.{key} has no TOML form: {e}"));
        self.params.set(key, value);
        self
    }
}

#[derive(Deserialize)]
#[cfg(test)]
struct TrafficTables {
    #[serde(default)]
    traffic: Vec<TrafficConfig>,
}

/// Reads the `[[traffic]]` tables out of a problem file's text; other tables are ignored.
/// Errors name the line and the field path (`traffic[1].pattern`).
#[cfg(test)]
pub(crate) fn parse_traffic_tables(text: &str) -> Result<Vec<TrafficConfig>> {
    let de = toml::Deserializer::parse(text)
        .map_err(|e| Error::field(line_of(&e, text), clean_serde_message(e.message())))?;
    let mut track = serde_path_to_error::Track::new();
    let mut configs =
        TrafficTables::deserialize(serde_path_to_error::Deserializer::new(de, &mut track))
            .map(|t| t.traffic)
            .map_err(|e| {
                // A key kept with its position (`toml::Spanned`) adds serde's private name.
                let path = track
                    .path()
                    .to_string()
                    .replace(".$__serde_spanned_private_value", "");
                let location = line_of(&e, text);
                Error::field(
                    format!("{location}: {path}"),
                    clean_serde_message(e.message()),
                )
            })?;
    check_types(&mut configs, text)?;
    Ok(configs)
}

/// Checks the type of every pattern key of every class, naming its line (`traffic[0].shift`).
pub(crate) fn check_types(configs: &mut [TrafficConfig], text: &str) -> Result<()> {
    for (i, c) in configs.iter_mut().enumerate() {
        c.params.locate(text);
        registry::check_types(&c.params, &format!("traffic[{i}]"))?;
    }
    Ok(())
}

#[cfg(test)]
fn line_of(e: &toml::de::Error, text: &str) -> String {
    match e.span() {
        Some(span) => format!(
            "line {}",
            text[..span.start.min(text.len())].matches('\n').count() + 1
        ),
        None => "file".to_string(),
    }
}

/// A validated injection process.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum InjectionSpec {
    Bernoulli,
    Periodic,
    OnOff {
        on: f64,
        off: f64,
    },
    AllToAll {
        /// Cycles between exchange starts (fractional after `with_load`).
        period: f64,
        spread: bool,
        shuffle: bool,
        packets_per_message: u32,
    },
}

impl InjectionSpec {
    #[cfg(test)]
    pub(crate) fn name(&self) -> &'static str {
        match self {
            InjectionSpec::Bernoulli => "bernoulli",
            InjectionSpec::Periodic => "periodic",
            InjectionSpec::OnOff { .. } => "onoff",
            InjectionSpec::AllToAll { .. } => "alltoall",
        }
    }
}

/// How the load is given.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum LoadSpec {
    Constant(f64),
    /// `(until_cycle, load)`, `until_cycle` strictly increasing.
    Phases(Vec<(u64, f64)>),
    /// `alltoall`: implied by the period, the group and the packet size.
    Implied,
}

/// A validated `[[traffic]]` table.
#[derive(Clone, Debug)]
pub(crate) struct ClassSpec {
    // docs/traffic.md calls it the label for reports, but no report shows it yet (only the
    // tests read it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub name: Option<String>,
    pub pattern_name: String,
    /// The pattern's entry; `None` for an all-to-all exchange (its group is the pattern).
    pub pattern: Option<&'static PatternEntry>,
    pub injection: InjectionSpec,
    pub load: LoadSpec,
    pub sizes: Sizes,
    pub source_queue: Option<usize>,
    pub self_packets: bool,
    pub seed_offset: u64,
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_load(field: &str, load: f64) -> Result<f64> {
    if load.is_finite() && load >= 0.0 {
        Ok(load)
    } else {
        Err(Error::field(
            field,
            format!("must be a finite number of flits per terminal per cycle >= 0 (got {load})"),
        ))
    }
}

fn check_mean_period(field: &str, value: Option<f64>) -> Result<f64> {
    match value {
        None => Err(Error::field(
            field,
            "is required for injection = \"onoff\" (mean period length in cycles, >= 1)",
        )),
        Some(v) if v.is_finite() && v >= 1.0 => Ok(v),
        Some(v) => Err(Error::field(
            field,
            format!("must be a mean period length in cycles >= 1 (got {v})"),
        )),
    }
}

impl TrafficConfig {
    /// The class as plot titles name it: its `name`, else its pattern (or injection, for
    /// `alltoall`) with the pattern's own parameters (`adv (shift = 1)`).
    pub(crate) fn label(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        let base = self
            .pattern
            .clone()
            .or_else(|| self.injection.clone())
            .unwrap_or_default();
        let params: Vec<String> = self
            .params
            .keys()
            .filter_map(|k| self.params.get(k).map(|v| format!("{k} = {v}")))
            .collect();
        if params.is_empty() {
            base
        } else {
            format!("{base} ({})", params.join(", "))
        }
    }

    /// Validates the table on its own (everything that does not need the topology).
    pub(crate) fn resolve(&self) -> Result<ClassSpec> {
        let injection_name = self.injection.as_deref().unwrap_or("bernoulli");
        if !INJECTIONS.contains(&injection_name) {
            return Err(Error::field(
                "injection",
                format!(
                    "unknown injection process \"{injection_name}\" (one of {})",
                    quoted(INJECTIONS)
                ),
            ));
        }
        let alltoall = injection_name == "alltoall";
        let pattern_name = match (&self.pattern, alltoall) {
            (Some(p), false) if registry::find(p).is_some() => p.clone(),
            (Some(p), false) => {
                return Err(Error::field(
                    "pattern",
                    format!(
                        "unknown pattern \"{p}\" (one of {})",
                        quoted(&registry::names())
                    ),
                ));
            }
            (None, false) => {
                return Err(Error::field(
                    "pattern",
                    format!("is required (one of {})", quoted(&registry::names())),
                ));
            }
            (Some(_), true) => {
                return Err(Error::field(
                    "pattern",
                    "does not apply to injection = \"alltoall\" (it sends to every other member of its group)",
                ));
            }
            (None, true) => "alltoall".to_string(),
        };
        self.check_applicable(&pattern_name, injection_name)?;
        let sizes = self.sizes()?;
        let pattern = registry::find(&pattern_name);
        if let Some(entry) = pattern {
            (entry.check)(&self.params, &format!("pattern = \"{pattern_name}\""))?;
        }
        if self.self_packets == Some(true) && !pattern.is_some_and(|e| e.self_packets) {
            return Err(Error::field(
                "self_packets",
                format!(
                    "applies only to pattern = {} (this class has \"{pattern_name}\")",
                    quoted(&registry::self_packet_names())
                ),
            ));
        }
        let injection = match injection_name {
            "bernoulli" => InjectionSpec::Bernoulli,
            "periodic" => InjectionSpec::Periodic,
            "onoff" => InjectionSpec::OnOff {
                on: check_mean_period("burst_on", self.burst_on)?,
                off: check_mean_period("burst_off", self.burst_off)?,
            },
            _ => {
                let period = match self.period {
                    Some(p) if p >= 1 => p as f64,
                    Some(_) => return Err(Error::field("period", "must be at least 1 cycle")),
                    None => {
                        return Err(Error::field(
                            "period",
                            "is required for injection = \"alltoall\" (cycles between exchanges)",
                        ));
                    }
                };
                let shuffle = match self.order.as_deref() {
                    None | Some("rotate") => false,
                    Some("shuffle") => true,
                    Some(other) => {
                        return Err(Error::field(
                            "order",
                            format!("unknown order \"{other}\" (one of \"rotate\", \"shuffle\")"),
                        ));
                    }
                };
                InjectionSpec::AllToAll {
                    period,
                    spread: self.spread.unwrap_or(false),
                    shuffle,
                    packets_per_message: match self.packets_per_message {
                        None => 1,
                        Some(0) => {
                            return Err(Error::field("packets_per_message", "must be at least 1"));
                        }
                        // Every packet of a message is created in the same cycle.
                        Some(k) if k > MAX_PACKETS_PER_MESSAGE => {
                            return Err(Error::field(
                                "packets_per_message",
                                format!("at most {MAX_PACKETS_PER_MESSAGE} (got {k})"),
                            ));
                        }
                        Some(k) => k,
                    },
                }
            }
        };
        let load = self.load_spec(alltoall)?;
        if self.source_queue == Some(0) {
            return Err(Error::field(
                "source_queue",
                "must be at least 1 packet (omit it for an unbounded queue)",
            ));
        }
        Ok(ClassSpec {
            name: self.name.clone(),
            pattern_name,
            pattern,
            injection,
            load,
            sizes,
            source_queue: self.source_queue,
            self_packets: self.self_packets.unwrap_or(false),
            seed_offset: self.seed_offset.unwrap_or(0),
        })
    }

    /// Rejects parameters that belong to another pattern or injection process.
    fn check_applicable(&self, pattern: &str, injection: &str) -> Result<()> {
        let own = registry::find(pattern).map_or(&[][..], |e| (e.keys)());
        if let Some(field) = self.params.keys().find(|k| !own.contains(k)) {
            let owners = registry::owners(field);
            if owners.is_empty() {
                // Only a class made in code gets here: a table's unknown keys are refused
                // when it is read.
                return Err(Error::field(
                    field,
                    format!(
                        "unknown field `{field}`, expected one of {}",
                        registry::all_keys()
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            return Err(Error::field(
                field,
                format!(
                    "applies only to pattern = {} (this class has {})",
                    owners
                        .iter()
                        .map(|o| format!("\"{o}\""))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    if pattern == "alltoall" {
                        "injection = \"alltoall\"".to_string()
                    } else {
                        format!("pattern = \"{pattern}\"")
                    }
                ),
            ));
        }
        let injection_params: [(&str, bool, &[&str]); 8] = [
            (
                "packets_per_message",
                self.packets_per_message.is_some(),
                &["alltoall"],
            ),
            ("burst_on", self.burst_on.is_some(), &["onoff"]),
            ("burst_off", self.burst_off.is_some(), &["onoff"]),
            ("period", self.period.is_some(), &["alltoall"]),
            ("group", self.group.is_some(), &["alltoall"]),
            ("spread", self.spread.is_some(), &["alltoall"]),
            ("order", self.order.is_some(), &["alltoall"]),
            (
                "phases",
                self.phases.is_some(),
                &["bernoulli", "periodic", "onoff"],
            ),
        ];
        for (field, set, owners) in injection_params {
            if set && !owners.contains(&injection) {
                return Err(Error::field(
                    field,
                    format!(
                        "applies only to injection = {} (this class has injection = \"{injection}\")",
                        owners
                            .iter()
                            .map(|o| format!("\"{o}\""))
                            .collect::<Vec<_>>()
                            .join(" or "),
                    ),
                ));
            }
        }
        Ok(())
    }

    fn sizes(&self) -> Result<Sizes> {
        let ranged = [self.payload_min, self.payload_max, self.header, self.footer]
            .iter()
            .any(Option::is_some);
        if let Some(size) = self.packet_size {
            if ranged {
                return Err(Error::field(
                    "packet_size",
                    "give either packet_size or payload_min/payload_max (with header/footer), not both",
                ));
            }
            if size == 0 {
                return Err(Error::field("packet_size", "must be at least 1 flit"));
            }
            if size > MAX_PACKET_FLITS {
                return Err(Error::field(
                    "packet_size",
                    format!("at most {MAX_PACKET_FLITS} flits (got {size})"),
                ));
            }
            return Ok(Sizes::Fixed(size));
        }
        let (min, max) = match (self.payload_min, self.payload_max) {
            (None, None) if ranged => {
                let field = if self.header.is_some() {
                    "header"
                } else {
                    "footer"
                };
                return Err(Error::field(
                    field,
                    "applies only together with payload_min and payload_max",
                ));
            }
            (None, None) => return Ok(Sizes::Fixed(1)),
            (Some(_), None) => {
                return Err(Error::field(
                    "payload_max",
                    "is required together with payload_min",
                ));
            }
            (None, Some(_)) => {
                return Err(Error::field(
                    "payload_min",
                    "is required together with payload_max",
                ));
            }
            (Some(a), Some(b)) => (a, b),
        };
        if min > max {
            return Err(Error::field(
                "payload_max",
                format!("must be at least payload_min = {min} (got {max})"),
            ));
        }
        let overhead = self
            .header
            .unwrap_or(0)
            .checked_add(self.footer.unwrap_or(0))
            .filter(|o| o.checked_add(max).is_some())
            .ok_or_else(|| Error::field("payload_max", "packet sizes overflow 32 bits"))?;
        if overhead + max > MAX_PACKET_FLITS {
            return Err(Error::field(
                "payload_max",
                format!(
                    "header + payload_max + footer = {} flits; at most {MAX_PACKET_FLITS}",
                    u64::from(overhead) + u64::from(max)
                ),
            ));
        }
        if overhead + min == 0 {
            return Err(Error::field(
                "payload_min",
                "header + payload_min + footer must be at least 1 flit",
            ));
        }
        Ok(Sizes::Range { overhead, min, max })
    }

    fn load_spec(&self, alltoall: bool) -> Result<LoadSpec> {
        if alltoall {
            if self.load.is_some() {
                return Err(Error::field(
                    "load",
                    "does not apply to injection = \"alltoall\" (its load is implied by period, group and packet size)",
                ));
            }
            return Ok(LoadSpec::Implied);
        }
        match (self.load, &self.phases) {
            (Some(_), Some(_)) => Err(Error::field(
                "phases",
                "give either load or phases, not both",
            )),
            (Some(load), None) => Ok(LoadSpec::Constant(check_load("load", load)?)),
            (None, Some(phases)) => {
                if phases.is_empty() {
                    return Err(Error::field(
                        "phases",
                        "needs at least one { until_cycle, load } entry",
                    ));
                }
                let mut previous = 0;
                let mut out = Vec::with_capacity(phases.len());
                for (i, p) in phases.iter().enumerate() {
                    if p.until_cycle <= previous {
                        return Err(Error::field(
                            format!("phases[{i}].until_cycle"),
                            format!(
                                "must be greater than the previous phase's end ({previous}); phases are listed in time order"
                            ),
                        ));
                    }
                    previous = p.until_cycle;
                    out.push((
                        p.until_cycle,
                        check_load(&format!("phases[{i}].load"), p.load)?,
                    ));
                }
                Ok(LoadSpec::Phases(out))
            }
            (None, None) => Err(Error::field(
                "load",
                "is required: offered flits per terminal per cycle (e.g. 0.5), or give phases",
            )),
        }
    }
}
