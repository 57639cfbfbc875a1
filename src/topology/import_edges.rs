//! Import of edge lists (`.txt`, `.edges`): one link per line, `A B [key=value ...]`.
//!
//! ```text
//! # a ring of four routers, two terminals each
//! routers 4
//! concentration 2
//! 0 1
//! 1 2 latency=3
//! 2 3 kind=global bandwidth=0.5
//! 3 0
//! ```
//!
//! Keys: `latency` (cycles, default 1), `bandwidth` (flits/cycle, default 1.0), `kind` (`local`
//! or `global`, default `local`). Header lines `routers N` (default: highest id + 1) and
//! `concentration C` (terminals per router, default 1) must come before the first link. Router
//! `r` gets terminals `r*C .. r*C+C-1` on ports `0..C`, then one network port per link in file
//! order. Parallel links are allowed, self-loops are not.

use std::path::Path;

use super::import::{
    Loc, MAX_ROUTERS, MAX_TOTAL_PORTS, RawLink, RawTerminal, RawTopology, check_bandwidth,
    check_enough_links, check_latency, default_name,
};
use super::model::{ChannelParams, LinkKind, Shape};
use crate::error::{Error, Result};

pub(crate) fn parse(text: &str, path: &Path) -> Result<RawTopology> {
    let mut routers: Option<(usize, usize)> = None; // (count, line)
    let mut concentration: Option<(usize, usize)> = None;
    let mut links = Vec::new();
    let mut max_id: Option<usize> = None;
    for (idx, full) in text.lines().enumerate() {
        let line = idx + 1;
        let err = |reason: String| Error::parse(path, format!("line {line}"), reason);
        let content = full.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = content.split_whitespace().collect();
        let Some(&first) = tokens.first() else {
            continue;
        };
        if first == "routers" || first == "concentration" {
            let (slot, what) = if first == "routers" {
                (&mut routers, "a router count")
            } else {
                (&mut concentration, "a number of terminals per router")
            };
            if let Some((_, prev)) = *slot {
                return Err(err(format!(
                    "`{first}` is given twice (first on line {prev})"
                )));
            }
            if !links.is_empty() {
                return Err(err(format!("`{first}` must come before the first link")));
            }
            let [_, value] = tokens[..] else {
                return Err(err(format!("expected `{first} N` with {what}")));
            };
            let value: usize = value.parse().map_err(|_| {
                err(format!(
                    "bad {first} value `{value}`: expected a non-negative integer"
                ))
            })?;
            let limit = if first == "routers" {
                MAX_ROUTERS
            } else {
                super::import::MAX_PORTS
            };
            if value > limit {
                return Err(err(format!(
                    "{first} {value} is too large (at most {limit})"
                )));
            }
            *slot = Some((value, line));
            continue;
        }
        if tokens.len() < 2 {
            return Err(err(format!(
                "expected a link `A B [key=value ...]` or a header `routers N` / `concentration C`, found `{}`",
                content.trim()
            )));
        }
        let id = |tok: &str| -> Result<usize> {
            let r: usize = tok.parse().map_err(|_| {
                err(format!(
                    "bad router id `{tok}`: expected a non-negative integer"
                ))
            })?;
            if r >= MAX_ROUTERS {
                return Err(err(format!(
                    "router id {r} is too large (at most {} routers)",
                    MAX_ROUTERS
                )));
            }
            Ok(r)
        };
        let (a, b) = (id(tokens[0])?, id(tokens[1])?);
        let mut latency = None;
        let mut bandwidth = None;
        let mut kind = None;
        for tok in &tokens[2..] {
            let Some((key, value)) = tok.split_once('=') else {
                return Err(err(format!(
                    "expected key=value after the two router ids, found `{tok}`"
                )));
            };
            let dup = |set: bool| {
                if set {
                    Err(err(format!("key `{key}` is given twice")))
                } else {
                    Ok(())
                }
            };
            match key {
                "latency" => {
                    dup(latency.is_some())?;
                    let v: u32 = value.parse().map_err(|_| {
                        err(format!(
                            "bad latency `{value}`: expected a whole number of cycles"
                        ))
                    })?;
                    latency = Some(check_latency(v).map_err(err)?);
                }
                "bandwidth" => {
                    dup(bandwidth.is_some())?;
                    let v: f64 = value.parse().map_err(|_| {
                        err(format!(
                            "bad bandwidth `{value}`: expected a number of flits per cycle"
                        ))
                    })?;
                    bandwidth = Some(check_bandwidth(v).map_err(err)?);
                }
                "kind" => {
                    dup(kind.is_some())?;
                    kind = Some(match value {
                        "local" => LinkKind::Local,
                        "global" => LinkKind::Global,
                        other => {
                            return Err(err(format!(
                                "unknown link kind `{other}` (expected local or global)"
                            )));
                        }
                    });
                }
                other => {
                    return Err(err(format!(
                        "unknown key `{other}` (expected latency, bandwidth or kind)"
                    )));
                }
            }
        }
        max_id = max_id.max(Some(a.max(b)));
        let d = ChannelParams::default();
        links.push(RawLink {
            ends: [(a, None), (b, None)],
            kind: kind.unwrap_or(LinkKind::Local),
            params: ChannelParams {
                latency: latency.unwrap_or(d.latency),
                bandwidth: bandwidth.unwrap_or(d.bandwidth),
            },
            loc: Loc::line(line),
        });
    }
    let n = routers.map_or(max_id.map_or(0, |m| m + 1), |(n, _)| n);
    let (c, c_line) = concentration.unwrap_or((1, 0));
    // Before a terminal is made for every router.
    check_enough_links(n, &links, path)?;
    if n.checked_mul(c).is_none_or(|t| t > MAX_TOTAL_PORTS) {
        return Err(Error::parse(
            path,
            if c_line > 0 {
                format!("line {c_line}")
            } else {
                "concentration".into()
            },
            format!(
                "{c} terminals on each of {n} routers are too many (at most {MAX_TOTAL_PORTS} in total)"
            ),
        ));
    }
    let term_loc = if c_line > 0 {
        Loc::line(c_line)
    } else {
        Loc::text("concentration (default 1)")
    };
    let terminals = (0..n)
        .flat_map(|r| (0..c).map(move |p| (r, p)))
        .map(|(r, p)| RawTerminal {
            router: r,
            port: Some(p),
            link: None,
            params: ChannelParams::default(),
            loc: term_loc.clone(),
        })
        .collect();
    Ok(RawTopology {
        name: default_name(path),
        shape: Shape::Imported,
        routers: routers.map(|(n, line)| (n, Loc::line(line))),
        port_counts: Vec::new(),
        port_count_loc: |_| String::new(),
        terminals,
        links,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_keys() {
        let raw = parse(
            "routers 3 # three\n\nconcentration 0\n0 2 kind=global latency=7\n",
            Path::new("x.edges"),
        )
        .unwrap();
        assert_eq!(raw.routers.as_ref().map(|r| r.0), Some(3));
        assert!(raw.terminals.is_empty());
        assert_eq!(raw.links.len(), 1);
        assert_eq!(raw.links[0].kind, LinkKind::Global);
        assert_eq!(raw.links[0].params.latency, 7);
        assert_eq!(raw.links[0].loc, Loc::line(4));
    }

    /// Found by fuzzing: terminals used to be made for every declared router before the file
    /// was found to be disconnected.
    #[test]
    fn sizes_are_refused_before_terminals_are_made() {
        let err = |text: &str| parse(text, Path::new("x.txt")).unwrap_err().to_string();
        assert_eq!(
            err("routers 16777216\nconcentration 4\n0 1\n"),
            "x.txt: the router graph is disconnected: router 2 has no link (16777216 routers, 1 \
             links)"
        );
        assert_eq!(
            err("routers 2\nconcentration 30000000\n0 1\n"),
            "x.txt: line 2: concentration 30000000 is too large (at most 65536)"
        );
    }

    #[test]
    fn errors_give_the_line() {
        let err = |text: &str| parse(text, Path::new("x.txt")).unwrap_err().to_string();
        assert_eq!(
            err("0 1\n0 1 latency=1 latency=2\n"),
            "x.txt: line 2: key `latency` is given twice"
        );
        assert_eq!(
            err("routers 2\nrouters 3\n"),
            "x.txt: line 2: `routers` is given twice (first on line 1)"
        );
        assert_eq!(
            err("routers\n"),
            "x.txt: line 1: expected `routers N` with a router count"
        );
        assert_eq!(
            err("7\n"),
            "x.txt: line 1: expected a link `A B [key=value ...]` or a header `routers N` / `concentration C`, found `7`"
        );
        assert!(err("0 99999999999999999999\n").starts_with("x.txt: line 1: bad router id"));
        assert!(err("0 16777216\n").contains("too large"));
    }
}
