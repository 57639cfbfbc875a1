//! The fabricopt topology JSON schema (`"format": "fabricopt-topology"`, version 1), shared by
//! the importer (`topology::import`) and the exporter (`export::topology`).
//!
//! The exporter writes every field, so that a file read back gives the same topology: the same
//! routers with the same port counts, the same links with the same ids, ends, ports, kinds,
//! latencies and bandwidths, the same terminals, name and shape. Hand-written files may leave
//! most fields out; see `docs/formats.md` (Topology files) for the defaults.

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::model::{Endpoint, LinkKind, PortId, RouterId, Shape, Topology};

/// The value of the `format` field.
pub(crate) const FORMAT_NAME: &str = "fabricopt-topology";
/// The schema version this build writes and reads.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// A whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TopologyFile {
    /// Must be [`FORMAT_NAME`] when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Must be [`FORMAT_VERSION`] when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// Defaults to the file name without its extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Defaults to `{"kind": "imported"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// Router `i` is `routers[i]`; when absent, routers are `0..=max id used`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routers: Option<Vec<RouterEntry>>,
    /// Terminal `i` is `terminals[i]`.
    #[serde(default)]
    pub terminals: Vec<TerminalEntry>,
    /// Router-to-router links, in link id order (after the terminal links, see
    /// [`TerminalEntry::link`]).
    #[serde(default)]
    pub links: Vec<LinkEntry>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RouterEntry {
    /// Number of ports (connected or not); when absent, one more than the highest port used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TerminalEntry {
    pub router: RouterId,
    /// When absent: the router's lowest free port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<PortId>,
    /// Id of the terminal's link. Only needed (and only written) when terminal links are not
    /// the first links in terminal order; given for every terminal or for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<f64>,
}

/// The kind of a router-to-router link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum NetworkKind {
    Local,
    Global,
}

impl From<NetworkKind> for LinkKind {
    fn from(k: NetworkKind) -> LinkKind {
        match k {
            NetworkKind::Local => LinkKind::Local,
            NetworkKind::Global => LinkKind::Global,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinkEntry {
    /// `ends[0]` of the link (channel 0 runs a -> b).
    pub a: End,
    pub b: End,
    /// Defaults to `local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<NetworkKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<f64>,
}

/// A link end: `[router, port]`, or `router` / `[router]` to take the router's lowest free port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct End {
    pub router: RouterId,
    pub port: Option<PortId>,
}

impl Serialize for End {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.port {
            Some(port) => {
                let mut t = s.serialize_tuple(2)?;
                t.serialize_element(&self.router)?;
                t.serialize_element(&port)?;
                t.end()
            }
            None => s.serialize_u64(self.router as u64),
        }
    }
}

impl<'de> Deserialize<'de> for End {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EndVisitor;
        impl<'de> Visitor<'de> for EndVisitor {
            type Value = End;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("[router, port], [router] or a router id")
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<End, E> {
                let router = usize::try_from(v)
                    .map_err(|_| E::custom(format!("router id {v} is too large")))?;
                Ok(End { router, port: None })
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<End, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<End, A::Error> {
                let router: usize = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let port: Option<usize> = seq.next_element()?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(End { router, port })
            }
        }
        d.deserialize_any(EndVisitor)
    }
}

/// What [`TopologyFile::from_topology`] could not express.
pub(crate) type Warnings = Vec<String>;

impl TopologyFile {
    /// The complete description of `topo` (every field given). Warnings name what the schema
    /// cannot hold: links whose kind does not match their ends, terminal links written
    /// router-first, links between two terminals (left out).
    pub(crate) fn from_topology(topo: &Topology) -> (TopologyFile, Warnings) {
        let mut warnings = Vec::new();
        let canonical = topo.terminals.iter().enumerate().all(|(i, t)| t.link == i);
        let mut terminal_link = vec![false; topo.links.len()];
        let terminals = topo
            .terminals
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if let Some(slot) = terminal_link.get_mut(t.link) {
                    *slot = true;
                }
                let link = topo.links.get(t.link);
                let params = link.map(|l| l.params).unwrap_or_default();
                if let Some(l) = link {
                    if l.kind != LinkKind::Terminal {
                        warnings.push(format!(
                            "terminal {i}'s link {} has kind {}; the file gives terminal links kind terminal",
                            t.link,
                            l.kind.name()
                        ));
                    }
                    if !matches!(l.ends[0], Endpoint::Terminal { .. }) {
                        warnings.push(format!(
                            "terminal {i}'s link {} runs router -> terminal; the file writes terminal links terminal -> router (channel 0 = injection)",
                            t.link
                        ));
                    }
                }
                TerminalEntry {
                    router: t.router,
                    port: Some(t.port),
                    link: (!canonical).then_some(t.link),
                    latency: Some(params.latency),
                    bandwidth: Some(params.bandwidth),
                }
            })
            .collect();
        let mut links = Vec::new();
        for (id, l) in topo.links.iter().enumerate() {
            if terminal_link[id] {
                continue;
            }
            let (
                Endpoint::Router {
                    router: ra,
                    port: pa,
                },
                Endpoint::Router {
                    router: rb,
                    port: pb,
                },
            ) = (l.ends[0], l.ends[1])
            else {
                warnings.push(format!(
                    "link {id} does not join two routers and is not a terminal's link; left out"
                ));
                continue;
            };
            let kind = match l.kind {
                LinkKind::Local => NetworkKind::Local,
                LinkKind::Global => NetworkKind::Global,
                LinkKind::Terminal => {
                    warnings.push(format!(
                        "link {id} joins two routers but has kind terminal; written as local"
                    ));
                    NetworkKind::Local
                }
            };
            links.push(LinkEntry {
                a: End {
                    router: ra,
                    port: Some(pa),
                },
                b: End {
                    router: rb,
                    port: Some(pb),
                },
                kind: Some(kind),
                latency: Some(l.params.latency),
                bandwidth: Some(l.params.bandwidth),
            });
        }
        let file = TopologyFile {
            format: Some(FORMAT_NAME.to_string()),
            version: Some(FORMAT_VERSION),
            name: Some(topo.name.clone()),
            shape: Some(topo.shape.clone()),
            routers: Some(
                topo.routers
                    .iter()
                    .map(|r| RouterEntry {
                        ports: Some(r.ports.len()),
                    })
                    .collect(),
            ),
            terminals,
            links,
        };
        (file, warnings)
    }

    /// Pretty-printed JSON with one router, terminal or link per line.
    pub(crate) fn to_pretty_string(&self) -> String {
        fn item<T: Serialize>(v: &T) -> String {
            // Plain data with string keys: serialisation cannot fail.
            serde_json::to_string(v).expect("plain data serialises")
        }
        fn list<T: Serialize>(out: &mut String, key: &str, items: &[T], last: bool) {
            out.push_str(&format!("  \"{key}\": ["));
            for (i, v) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n    " } else { ",\n    " });
                out.push_str(&item(v));
            }
            out.push_str(if items.is_empty() { "]" } else { "\n  ]" });
            out.push_str(if last { "\n" } else { ",\n" });
        }
        let mut out = String::from("{\n");
        let mut field = |key: &str, value: String| {
            out.push_str(&format!("  \"{key}\": {value},\n"));
        };
        if let Some(f) = &self.format {
            field("format", item(f));
        }
        if let Some(v) = &self.version {
            field("version", item(v));
        }
        if let Some(n) = &self.name {
            field("name", item(n));
        }
        if let Some(s) = &self.shape {
            field("shape", item(s));
        }
        if let Some(r) = &self.routers {
            list(&mut out, "routers", r, false);
        }
        list(&mut out, "terminals", &self.terminals, false);
        list(&mut out, "links", &self.links, true);
        out.push_str("}\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(text: &str) -> Result<End, serde_json::Error> {
        serde_json::from_str(text)
    }

    #[test]
    fn ends_accept_router_or_router_and_port() {
        assert_eq!(
            end("[3, 5]").unwrap(),
            End {
                router: 3,
                port: Some(5)
            }
        );
        assert_eq!(
            end("[3]").unwrap(),
            End {
                router: 3,
                port: None
            }
        );
        assert_eq!(
            end("3").unwrap(),
            End {
                router: 3,
                port: None
            }
        );
        assert!(end("[]").is_err());
        assert!(end("[1, 2, 3]").is_err());
        assert!(end("-1").is_err());
        assert!(end("\"x\"").is_err());
        assert_eq!(
            serde_json::to_string(&End {
                router: 3,
                port: Some(5)
            })
            .unwrap(),
            "[3,5]"
        );
    }

    #[test]
    fn pretty_output_is_valid_json_with_one_item_per_line() {
        let file = TopologyFile {
            format: Some(FORMAT_NAME.into()),
            version: Some(1),
            name: Some("a \"quoted\" name".into()),
            shape: Some(Shape::Complete),
            routers: Some(vec![RouterEntry { ports: Some(1) }; 2]),
            terminals: vec![],
            links: vec![LinkEntry {
                a: End {
                    router: 0,
                    port: Some(0),
                },
                b: End {
                    router: 1,
                    port: Some(0),
                },
                kind: Some(NetworkKind::Global),
                latency: Some(3),
                bandwidth: Some(0.5),
            }],
        };
        let text = file.to_pretty_string();
        let back: TopologyFile = serde_json::from_str(&text).unwrap();
        assert_eq!(back, file);
        assert!(text.contains("\n    {\"a\":[0,0],\"b\":[1,0],\"kind\":\"global\""));
        assert!(text.contains("\"terminals\": [],"));
    }
}
