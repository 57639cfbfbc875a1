//! Import of the fabricopt topology JSON schema ([`super::format_json`]).

use std::path::Path;

use super::format_json::{FORMAT_NAME, FORMAT_VERSION, TopologyFile};
use super::import::{
    Loc, RawLink, RawTerminal, RawTopology, check_bandwidth, check_latency, default_name,
};
use super::model::{ChannelParams, LinkKind, Shape};
use crate::error::{Error, Result};

/// Parses the JSON text into a raw topology; errors name the JSON field path.
pub(crate) fn parse(text: &str, path: &Path) -> Result<RawTopology> {
    let mut de = serde_json::Deserializer::from_str(text);
    let file: TopologyFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        json_error(path, field, e.into_inner())
    })?;
    // Nothing but white space may follow the document.
    de.end().map_err(|e| json_error(path, String::new(), e))?;
    let bad = |field: String, reason: String| Error::parse(path, field, reason);

    if let Some(format) = &file.format {
        if format != FORMAT_NAME {
            return Err(bad(
                "format".into(),
                format!("expected \"{FORMAT_NAME}\", found {format:?}"),
            ));
        }
    }
    if let Some(version) = file.version {
        if version != FORMAT_VERSION {
            return Err(bad(
                "version".into(),
                format!(
                    "unsupported version {version} (this fabricopt reads version {FORMAT_VERSION})"
                ),
            ));
        }
    }
    let params = |loc: &Loc, latency: Option<u32>, bandwidth: Option<f64>| {
        let d = ChannelParams::default();
        Ok(ChannelParams {
            latency: check_latency(latency.unwrap_or(d.latency))
                .map_err(|e| bad(loc.at("latency"), e))?,
            bandwidth: check_bandwidth(bandwidth.unwrap_or(d.bandwidth))
                .map_err(|e| bad(loc.at("bandwidth"), e))?,
        })
    };
    let terminals = file
        .terminals
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let loc = Loc::field(format!("terminals[{i}]"));
            Ok(RawTerminal {
                router: t.router,
                port: t.port,
                link: t.link,
                params: params(&loc, t.latency, t.bandwidth)?,
                loc,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let links = file
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let loc = Loc::field(format!("links[{i}]"));
            Ok(RawLink {
                ends: [(l.a.router, l.a.port), (l.b.router, l.b.port)],
                kind: l.kind.map_or(LinkKind::Local, LinkKind::from),
                params: params(&loc, l.latency, l.bandwidth)?,
                loc,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RawTopology {
        name: file.name.unwrap_or_else(|| default_name(path)),
        shape: file.shape.unwrap_or(Shape::Imported),
        routers: file
            .routers
            .as_ref()
            .map(|r| (r.len(), Loc::text("`routers`"))),
        port_counts: file
            .routers
            .unwrap_or_default()
            .iter()
            .map(|r| r.ports)
            .collect(),
        port_count_loc: |r| format!("routers[{r}].ports"),
        terminals,
        links,
    })
}

/// One-line error for a serde_json error at `field` (a path, or empty / `.` for the root, when
/// the line and column are the more useful location).
fn json_error(path: &Path, field: String, inner: serde_json::Error) -> Error {
    // Messages may quote strings from the file; keep them on one line.
    let one_line = |s: String| s.replace('\n', "\\n").replace('\r', "\\r");
    if field == "." || field.is_empty() {
        let suffix = format!(" at line {} column {}", inner.line(), inner.column());
        let msg = inner.to_string();
        let msg = one_line(msg.strip_suffix(&suffix).unwrap_or(&msg).to_string());
        Error::parse(
            path,
            format!("line {} column {}", inner.line(), inner.column()),
            msg,
        )
    } else {
        Error::parse(path, one_line(field), one_line(inner.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match parse(text, Path::new("t.json")) {
            Ok(_) => panic!("accepted {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn errors_stay_on_one_line_and_name_the_field() {
        let e = err(r#"{"links": [{"a": 0, "b": 1, "kind": "a\nb"}]}"#);
        assert!(
            e.starts_with("t.json: links[0].kind: unknown variant `a\\nb`"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        let e = err("{} {}");
        assert!(
            e.starts_with("t.json: line 1 column 4: trailing characters"),
            "{e}"
        );
        let e = err(r#"{"terminals": [{"router": 0, "latency": 0}]}"#);
        assert!(e.starts_with("t.json: terminals[0].latency: "), "{e}");
    }

    #[test]
    fn missing_fields_take_defaults() {
        let raw = parse(
            r#"{"links": [{"a": [0, 3], "b": 1}]}"#,
            Path::new("d/x.json"),
        )
        .unwrap();
        assert_eq!(raw.name, "x");
        assert_eq!(raw.shape, Shape::Imported);
        assert!(raw.routers.is_none());
        assert_eq!(raw.links[0].ends, [(0, Some(3)), (1, None)]);
        assert_eq!(raw.links[0].kind, LinkKind::Local);
        assert_eq!(raw.links[0].params, ChannelParams::default());
    }
}
