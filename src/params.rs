//! The parameters of one registry entry (a routing algorithm today): the keys of its table
//! other than the name that selects the entry. Each entry reads them into its own struct
//! (serde, `deny_unknown_fields`), so a key that does not belong to the chosen entry is an
//! error naming the table, the key and its line in the problem file.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};

use crate::error::{Error, Result};

/// An entry's parameters as written, with the line of each key when read from a problem file.
/// Two parameter sets are equal when their values are (where they were written is not
/// compared).
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: toml::Table,
    /// Where each key was written, when it was read from text.
    places: BTreeMap<String, Place>,
}

/// Where a key's value was written: its byte offset in the text it was read from, until
/// [`Params::locate`] is given that text and turns it into a line.
#[derive(Clone, Copy, Debug)]
enum Place {
    Offset(usize),
    Line(usize),
}

impl Params {
    /// Sets `key` (replacing a value given before), e.g. `Params::default().with("tie", "random")`.
    pub fn with(mut self, key: &str, value: impl Into<toml::Value>) -> Self {
        self.set(key, value);
        self
    }

    pub fn set(&mut self, key: &str, value: impl Into<toml::Value>) {
        self.values.insert(key.to_string(), value.into());
    }

    /// Every field of `params` that is not `None`, e.g. a typed parameter struct.
    pub(crate) fn from_struct(params: &impl Serialize) -> Result<Self> {
        let values =
            toml::Table::try_from(params).map_err(|e| Error::field("parameters", e.to_string()))?;
        Ok(Params {
            values,
            ..Params::default()
        })
    }

    pub fn remove(&mut self, key: &str) {
        self.values.remove(key);
        self.places.remove(key);
    }

    pub fn get(&self, key: &str) -> Option<&toml::Value> {
        self.values.get(key)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    /// Turns the byte offsets recorded while reading `text` into line numbers.
    pub(crate) fn locate(&mut self, text: &str) {
        for place in self.places.values_mut() {
            if let Place::Offset(offset) = *place {
                *place = Place::Line(text[..offset.min(text.len())].matches('\n').count() + 1);
            }
        }
    }

    /// A field error about `key` of table `table` (just `key` when `table` is empty: the
    /// caller prefixes the table), with its line when known.
    pub fn error(&self, table: &str, key: &str, reason: String) -> Error {
        let field = if table.is_empty() {
            key.to_string()
        } else {
            format!("{table}.{key}")
        };
        match self.places.get(key) {
            Some(Place::Line(line)) => Error::field(format!("line {line}: {field}"), reason),
            _ => Error::field(field, reason),
        }
    }

    /// Reads the parameter struct `P` of entry `what` (e.g. "routing `dor`"); `table` names
    /// the table in errors (`routing` gives `routing.tie`; empty: just `tie`).
    pub fn read<P: DeserializeOwned>(&self, table: &str, what: &str) -> Result<P> {
        let fields = field_names::<P>();
        if let Some(key) = self.keys().find(|k| !fields.contains(k)) {
            return Err(self.error(table, key, format!("does not apply to {what}")));
        }
        let value = toml::Value::Table(self.values.clone());
        let mut track = serde_path_to_error::Track::new();
        P::deserialize(serde_path_to_error::Deserializer::new(value, &mut track)).map_err(|e| {
            let path = track.path().to_string();
            let key = path
                .split(['.', '['])
                .next()
                .unwrap_or_default()
                .to_string();
            let message = e.to_string();
            let reason = message
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            let mut err = self.error(table, &key, reason);
            if path.len() > key.len()
                && let Error::Field { field, .. } = &mut err
            {
                field.push_str(&path[key.len()..]);
            }
            err
        })
    }
}

/// The field names a derived `Deserialize` struct declares (serde passes them to
/// `deserialize_struct`), so that the list a message quotes is the struct's own.
pub(crate) fn field_names<P: DeserializeOwned>() -> &'static [&'static str] {
    struct Probe(Option<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl fmt::Display for Stop {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("probe")
        }
    }
    impl std::error::Error for Stop {}
    impl de::Error for Stop {
        fn custom<T: fmt::Display>(_: T) -> Self {
            Stop
        }
    }
    impl<'de> de::Deserializer<'de> for &mut Probe {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> std::result::Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> std::result::Result<V::Value, Stop> {
            self.0 = Some(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut probe = Probe(None);
    let _ = P::deserialize(&mut probe);
    probe.0.unwrap_or(&[])
}

/// The names a parameter struct writes its fields under, in declaration order: the
/// [`field_names`] without serde aliases (exanest reads `R` as `r` and writes `r`).
pub(crate) fn own_field_names<P: DeserializeOwned + Serialize + Default>() -> Vec<&'static str> {
    let written = serde_json::to_value(P::default()).unwrap_or_default();
    field_names::<P>()
        .iter()
        .copied()
        .filter(|name| written.get(name).is_some())
        .collect()
}

impl PartialEq for Params {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl Serialize for Params {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.values.serialize(s)
    }
}

impl Params {
    /// Adds a key read from TOML text with where its value starts (for [`Params::locate`]).
    pub(crate) fn insert_spanned(&mut self, key: String, value: toml::Spanned<toml::Value>) {
        self.places
            .insert(key.clone(), Place::Offset(value.span().start));
        self.values.insert(key, value.into_inner());
    }

    /// Reads a table made of a selector key (`algorithm`) and an entry's parameters, keeping
    /// where each parameter's value starts in the TOML text (for [`Params::locate`]).
    pub(crate) fn read_with_selector<'de, A: MapAccess<'de>>(
        mut map: A,
        selector: &str,
    ) -> std::result::Result<(Option<String>, Params), A::Error> {
        let mut name = None;
        let mut params = Params::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == selector {
                name = Some(map.next_value::<String>()?);
            } else {
                params.insert_spanned(key, map.next_value()?);
            }
        }
        Ok((name, params))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        alpha: Option<f64>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        size: Option<usize>,
        inner: Option<Inner>,
    }

    /// A `[t]` table read as a selector and parameters, as `RoutingConfig` reads `[routing]`.
    fn read(text: &str) -> (String, Params) {
        #[derive(Deserialize)]
        struct Doc {
            t: Selected,
        }
        struct Selected(String, Params);
        impl<'de> Deserialize<'de> for Selected {
            fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Selected;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("a table")
                    }
                    fn visit_map<A: MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> std::result::Result<Selected, A::Error> {
                        let (name, params) = Params::read_with_selector(map, "kind")?;
                        Ok(Selected(name.unwrap_or_default(), params))
                    }
                }
                d.deserialize_map(V)
            }
        }
        let Selected(name, mut params) = toml::from_str::<Doc>(text).unwrap().t;
        params.locate(text);
        (name, params)
    }

    #[test]
    fn reads_the_entry_struct_and_names_field_and_line() {
        let (name, p) = read("[t]\nkind = \"x\"\nsize = 3\n");
        assert_eq!(name, "x");
        let e: Entry = p.read("t", "kind `x`").unwrap();
        assert_eq!((e.size, e.inner), (Some(3), None));
        let (_, p) = read("[t]\nkind = \"x\"\n\ncolour = 3\n");
        let err = p.read::<Entry>("t", "kind `x`").unwrap_err().to_string();
        assert_eq!(err, "line 4: t.colour: does not apply to kind `x`");
        let (_, p) = read("[t]\nkind = \"x\"\nsize = -1\n");
        let err = p.read::<Entry>("t", "kind `x`").unwrap_err().to_string();
        assert!(err.starts_with("line 3: t.size: invalid value"), "{err}");
        let (_, p) = read("[t]\nkind = \"x\"\n[t.inner]\nalpha = \"no\"\n");
        let err = p.read::<Entry>("t", "kind `x`").unwrap_err().to_string();
        assert!(
            err.starts_with("line 3: t.inner.alpha: invalid type"),
            "{err}"
        );
    }

    #[test]
    fn parameters_set_in_code_have_no_line() {
        let p = Params::default().with("colour", 3);
        let err = p.read::<Entry>("t", "kind `x`").unwrap_err().to_string();
        assert_eq!(err, "t.colour: does not apply to kind `x`");
        assert_eq!(field_names::<Entry>(), ["size", "inner"]);
    }
}
