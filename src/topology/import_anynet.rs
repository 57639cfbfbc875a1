//! Import of BookSim2 anynet network files (`.anynet`), following `src/networks/anynet.cpp`:
//!
//! ```text
//! router 0 node 0 node 1 router 1 3 router 2
//! router 1 node 2 router 2
//! router 2 node 3
//! ```
//!
//! * `router H ... router B [lat]` declares the channel H -> B with latency `lat` (default 1)
//!   and, if B -> H is not declared (yet), the channel B -> H with latency 1. A later
//!   declaration of the same direction replaces the earlier one, so parallel links cannot be
//!   written: they collapse into one.
//! * `router H ... node N [lat]` (or a line `node N router H [lat]`) attaches node N to router H
//!   with a terminal link of latency `lat` (default 1, both directions). A node attached to two
//!   routers is an error.
//! * Nodes must be numbered `0..N-1`; node `n` becomes terminal `n`. Routers must be numbered
//!   `0..R-1`.
//!
//! fabricopt links have one latency for both directions: a router pair whose channels were
//! declared in one direction only takes that latency; declared in both directions with
//! different latencies is an error. Ports follow BookSim's own order: a router's nodes first
//! (ascending node id), then its neighbour routers (ascending router id). `#` starts a comment
//! (an extension: BookSim itself has no comments).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::import::{
    Loc, MAX_ROUTERS, MAX_TOTAL_PORTS, RawLink, RawTerminal, RawTopology, check_latency,
    default_name,
};
use super::model::{ChannelParams, LinkKind, Shape};
use crate::error::{Error, Result};

/// A declared channel: latency, line, and whether the file declared it (or it was implied as
/// the reverse of a declared one).
#[derive(Clone, Copy)]
struct Channel {
    latency: u32,
    line: usize,
    explicit: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Router,
    Node,
}

pub(crate) fn parse(text: &str, path: &Path) -> Result<RawTopology> {
    let mut channels: BTreeMap<(usize, usize), Channel> = BTreeMap::new();
    // node -> (router, latency, line)
    let mut nodes: BTreeMap<usize, (usize, u32, usize)> = BTreeMap::new();
    let mut routers: BTreeSet<usize> = BTreeSet::new();
    for (idx, full) in text.lines().enumerate() {
        let line = idx + 1;
        let err = |reason: String| Error::parse(path, format!("line {line}"), reason);
        let content = full.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = content.split_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        let kind = |tok: &str| match tok {
            "router" => Some(Kind::Router),
            "node" => Some(Kind::Node),
            _ => None,
        };
        let id = |k: Kind, tok: &str| -> Result<usize> {
            let what = if k == Kind::Router { "router" } else { "node" };
            let v: usize = tok.parse().map_err(|_| {
                err(format!(
                    "bad {what} id `{tok}`: expected a non-negative integer"
                ))
            })?;
            let limit = if k == Kind::Router {
                MAX_ROUTERS
            } else {
                MAX_TOTAL_PORTS
            };
            if v >= limit {
                return Err(err(format!("{what} id {v} is too large (at most {limit})")));
            }
            Ok(v)
        };
        let Some(head_kind) = kind(tokens[0]) else {
            return Err(err(format!(
                "expected `router` or `node` at the start of the line, found `{}`",
                tokens[0]
            )));
        };
        let Some(&head_tok) = tokens.get(1) else {
            return Err(err(format!("`{}` needs an id", tokens[0])));
        };
        let head = id(head_kind, head_tok)?;
        if head_kind == Kind::Router {
            routers.insert(head);
        }
        let mut i = 2;
        while i < tokens.len() {
            let Some(body_kind) = kind(tokens[i]) else {
                return Err(err(format!(
                    "expected `router` or `node`, found `{}`",
                    tokens[i]
                )));
            };
            let Some(&body_tok) = tokens.get(i + 1) else {
                return Err(err(format!(
                    "`{}` at the end of the line needs an id",
                    tokens[i]
                )));
            };
            let body = id(body_kind, body_tok)?;
            i += 2;
            let mut latency = None;
            if let Some(&tok) = tokens.get(i) {
                if kind(tok).is_none() {
                    let v: u32 = tok.parse().map_err(|_| {
                        err(format!(
                            "bad latency `{tok}`: expected a whole number of cycles"
                        ))
                    })?;
                    latency = Some(check_latency(v).map_err(err)?);
                    i += 1;
                }
            }
            let latency_or_1 = latency.unwrap_or(1);
            match (head_kind, body_kind) {
                (Kind::Node, Kind::Node) => {
                    return Err(err(format!(
                        "cannot connect node {head} to node {body} (nodes attach to routers)"
                    )));
                }
                (Kind::Router, Kind::Router) => {
                    if head == body {
                        return Err(err(format!(
                            "router {head} is connected to itself; self-loops are not allowed"
                        )));
                    }
                    routers.insert(body);
                    channels.insert(
                        (head, body),
                        Channel {
                            latency: latency_or_1,
                            line,
                            explicit: true,
                        },
                    );
                    channels.entry((body, head)).or_insert(Channel {
                        latency: 1,
                        line,
                        explicit: false,
                    });
                }
                (Kind::Router, Kind::Node) | (Kind::Node, Kind::Router) => {
                    let (router, node) = if head_kind == Kind::Router {
                        (head, body)
                    } else {
                        (body, head)
                    };
                    routers.insert(router);
                    if let Some(&(other, _, prev)) = nodes.get(&node) {
                        if other != router {
                            return Err(err(format!(
                                "node {node} is connected to two routers: {other} (line {prev}) and {router}"
                            )));
                        }
                    }
                    nodes.insert(node, (router, latency_or_1, line));
                }
            }
        }
    }

    let file = |reason: String| Error::File {
        path: path.to_path_buf(),
        reason,
    };
    if let Some(&last) = routers.last() {
        if let Some((missing, _)) = routers.iter().enumerate().find(|&(i, &r)| i != r) {
            return Err(file(format!(
                "router ids must be 0..N-1 without gaps (BookSim numbers routers so): router {missing} never appears, but router {last} does"
            )));
        }
    }
    if let Some((&last, _)) = nodes.last_key_value() {
        if let Some((missing, _)) = nodes.keys().enumerate().find(|&(i, &n)| i != n) {
            return Err(file(format!(
                "node ids must be 0..N-1 without gaps (BookSim's traffic manager assumes so): node {missing} never appears, but node {last} does"
            )));
        }
    }

    // Ports in BookSim's order: nodes (ascending), then neighbour routers (ascending).
    let n = routers.last().map_or(0, |&r| r + 1);
    let mut next_port = vec![0usize; n];
    let mut terminals = Vec::with_capacity(nodes.len());
    for (&node, &(router, latency, line)) in &nodes {
        terminals.push(RawTerminal {
            router,
            port: Some(next_port[router]),
            link: None,
            params: ChannelParams {
                latency,
                bandwidth: 1.0,
            },
            loc: Loc::line(line),
        });
        debug_assert_eq!(terminals.len(), node + 1);
        next_port[router] += 1;
    }
    let mut port_of: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for &(head, body) in channels.keys() {
        port_of.insert((head, body), next_port[head]);
        next_port[head] += 1;
    }
    let mut links = Vec::new();
    for (&(a, b), ab) in channels.range(..) {
        if a > b {
            continue;
        }
        let (ab, ba) = (*ab, channels[&(b, a)]);
        let (latency, line) = match (ab.explicit, ba.explicit) {
            (true, true) if ab.latency != ba.latency => {
                let (first, second) = if ab.line <= ba.line {
                    ((a, b, ab), (b, a, ba))
                } else {
                    ((b, a, ba), (a, b, ab))
                };
                return Err(Error::parse(
                    path,
                    format!("line {}", second.2.line),
                    format!(
                        "channel {} -> {} has latency {} but channel {} -> {} has latency {} (line {}); fabricopt links have one latency for both directions",
                        second.0,
                        second.1,
                        second.2.latency,
                        first.0,
                        first.1,
                        first.2.latency,
                        first.2.line
                    ),
                ));
            }
            (true, _) => (ab.latency, ab.line),
            (false, _) => (ba.latency, ba.line),
        };
        links.push(RawLink {
            ends: [(a, Some(port_of[&(a, b)])), (b, Some(port_of[&(b, a)]))],
            kind: LinkKind::Local,
            params: ChannelParams {
                latency,
                bandwidth: 1.0,
            },
            loc: Loc::line(line),
        });
    }
    Ok(RawTopology {
        name: default_name(path),
        shape: Shape::Imported,
        routers: Some((n, Loc::text("the file"))),
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
    fn booksim_port_order_and_latencies() {
        let raw = parse(
            "router 1 node 1 router 0 2\nrouter 0 node 0 4\nnode 2 router 1 3\n",
            Path::new("x.anynet"),
        )
        .unwrap();
        assert_eq!(raw.routers.as_ref().map(|r| r.0), Some(2));
        let t: Vec<_> = raw
            .terminals
            .iter()
            .map(|t| (t.router, t.port, t.params.latency))
            .collect();
        assert_eq!(t, vec![(0, Some(0), 4), (1, Some(0), 1), (1, Some(1), 3)]);
        assert_eq!(raw.links.len(), 1);
        assert_eq!(raw.links[0].ends, [(0, Some(1)), (1, Some(2))]);
        assert_eq!(raw.links[0].params.latency, 2);
        assert_eq!(raw.links[0].loc, Loc::line(1));
    }

    #[test]
    fn a_later_declaration_of_a_direction_replaces_the_earlier_one() {
        let raw = parse(
            "router 0 router 1 5\nrouter 0 router 1 2\nrouter 1 router 0 2\n",
            Path::new("x.anynet"),
        )
        .unwrap();
        assert_eq!(raw.links.len(), 1);
        assert_eq!(raw.links[0].params.latency, 2);
    }

    #[test]
    fn bad_latencies_are_reported_with_the_line() {
        let err = |text: &str| parse(text, Path::new("x.anynet")).unwrap_err().to_string();
        assert_eq!(
            err("router 0 router 1 0\n"),
            "x.anynet: line 1: latency must be at least 1 cycle (got 0)"
        );
        assert_eq!(
            err("router 0 router 1 -3\n"),
            "x.anynet: line 1: bad latency `-3`: expected a whole number of cycles"
        );
        assert_eq!(
            err("router 0 router 1 2 3\n"),
            "x.anynet: line 1: expected `router` or `node`, found `3`"
        );
        assert_eq!(
            err("switch 0\n"),
            "x.anynet: line 1: expected `router` or `node` at the start of the line, found `switch`"
        );
    }
}
