//! Reading routing tables back from the files `export::routes` writes: fabricopt routes JSON,
//! the per-router forwarding CSV, the path list (the seed's BookSim input) and InfiniBand
//! OpenSM linear forwarding tables (LFTs). The formats are documented in docs/formats.md
//! (Routing tables).
//!
//! Every reader returns [`Error::Parse`] naming the file, the line (or JSON field) and the
//! reason; none panics on bad input. The JSON file is complete; the other formats need the
//! topology (or the router count) to rebuild what they leave out.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{PathOrigin, RouterPath, RoutingTable, pair_index, pair_of};
use crate::error::{Error, Result};
use crate::topology::{Endpoint, Topology};

/// The `format` field of a routes JSON file.
pub(crate) const ROUTES_FORMAT: &str = "fabricopt-routes";
/// The only version this fabricopt reads and writes.
pub(crate) const ROUTES_VERSION: u32 = 1;
/// Header of the per-router forwarding CSV.
pub(crate) const CSV_HEADER: &str = "router,source,destination,hop,output_port,vc_class";
/// VC class written when the caller gives none: the packet uses the VCs of table routing.
pub(crate) const DEFAULT_VC_CLASS: &str = "table";

/// First GUID of the synthetic switch GUIDs (router `r` is switch `SWITCH_GUID_BASE + r`).
/// 0x0002c9 is an OUI seen on real InfiniBand hardware; the low 40 bits keep the synthetic
/// ids apart from real ones only within one file, which is all OpenSM's file engine needs
/// (it looks switches up by GUID in the subnet it discovered, so a real deployment maps
/// these GUIDs to the real ones first).
pub(crate) const SWITCH_GUID_BASE: u64 = 0x0002_c900_0000_0000;
/// First GUID of the synthetic channel-adapter port GUIDs (terminal `t` is `CA_GUID_BASE + t`).
pub(crate) const CA_GUID_BASE: u64 = 0x0002_c901_0000_0000;
/// Highest unicast LID (0xC000 and above are multicast).
pub(crate) const MAX_UNICAST_LID: usize = 0xBFFF;

/// Reads a per-pair file (`source_router destination_router value` per line after `#`
/// comments, as the SL and LID-offset files are) for `num_routers` routers: every pair exactly
/// once, every value below `limit`. Errors name the file, line and `name` of the value.
pub(crate) fn parse_pair_values(
    text: &str,
    path: &Path,
    num_routers: usize,
    name: &str,
    limit: usize,
) -> Result<Vec<u8>> {
    debug_assert!(limit <= usize::from(u8::MAX));
    let n = num_routers;
    let mut sl = vec![u8::MAX; n * n.saturating_sub(1)];
    let at = |line: usize, why: String| Error::field(format!("line {line}"), why).in_file(path);
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [s, d, l] = fields[..] else {
            return Err(at(
                line_no,
                format!("expected `source destination {name}`, got `{line}`"),
            ));
        };
        let parse = |x: &str, what: &str, limit: usize| -> Result<usize> {
            x.parse::<usize>()
                .ok()
                .filter(|&v| v < limit)
                .ok_or_else(|| at(line_no, format!("{what} `{x}` is not below {limit}")))
        };
        let (s, d, l) = (
            parse(s, "source router", n)?,
            parse(d, "destination router", n)?,
            parse(l, name, limit)?,
        );
        if s == d {
            return Err(at(line_no, format!("source and destination are both {s}")));
        }
        let slot = &mut sl[pair_index(n, s, d)];
        if *slot != u8::MAX {
            return Err(at(line_no, format!("pair {s} -> {d} appears twice")));
        }
        *slot = l as u8;
    }
    if let Some(pair) = sl.iter().position(|&l| l == u8::MAX) {
        let (s, d) = pair_of(n, pair);
        return Err(Error::field(name, format!("pair {s} -> {d} has no line")).in_file(path));
    }
    Ok(sl)
}

/// A per-pair file: `header` (its `#` lines), then `source destination value` per pair.
pub(crate) fn pair_values_string(header: &str, num_routers: usize, values: &[u8]) -> String {
    let mut out = header.to_string();
    for (pair, &v) in values.iter().enumerate() {
        let (s, d) = pair_of(num_routers, pair);
        let _ = writeln!(out, "{s} {d} {v}");
    }
    out
}

/// Everything a routes JSON file holds besides the paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableMetadata {
    /// Name of the topology the table was computed on.
    pub topology: String,
    /// Free-form description of the VC classes (whatever the caller put there).
    pub vc_classes: Option<Value>,
    /// Free-form top-level metadata: algorithm, seed, max_channel_load, ...
    pub metadata: Map<String, Value>,
    /// Per pair (indexed by [`pair_index`]) where the path came from; empty when not given.
    pub origins: Vec<Option<PathOrigin>>,
    /// Per pair VC class; empty when not given.
    pub vc_class: Vec<Option<String>>,
}

/// The routes JSON document (serialised as is by the writer, so field order is the file's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoutesFile {
    pub format: String,
    pub version: u32,
    pub topology: String,
    pub num_routers: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vc_classes: Option<Value>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
    /// The compact form: one entry per destination router; every pair `paths` does not list
    /// follows them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next_hops: Vec<NextHopEntry>,
    pub paths: Vec<PathEntry>,
}

/// The next hops towards one destination router in the compact routes JSON: at router `r`,
/// leave by `ports[r]` to router `routers[r]` (both null where no listed-free path passes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NextHopEntry {
    pub dst: usize,
    pub ports: Vec<Option<u16>>,
    pub routers: Vec<Option<u32>>,
}

/// One path of a routes JSON file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PathEntry {
    pub src: usize,
    pub dst: usize,
    pub routers: Vec<u32>,
    pub ports: Vec<u16>,
    /// Redundant (`ports.len()`), for readers that only want path lengths; checked on read.
    pub hops: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<PathOrigin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vc_class: Option<String>,
}

fn read_text(path: &Path) -> Result<String> {
    crate::cluster::read_input(path).map_err(|e| Error::io(path, e))
}

/// Checks that `num_routers` can hold a table: at least two routers, and few enough that the
/// n (n - 1) pairs fit in memory (a hostile header must not make us allocate terabytes).
fn check_num_routers(n: usize) -> std::result::Result<(), String> {
    const MAX: usize = 1 << 14;
    if n < 2 {
        return Err(format!("{n} routers: a table needs at least 2"));
    }
    if n > MAX {
        return Err(format!("{n} routers is too many (at most {MAX})"));
    }
    Ok(())
}

/// Reads a routes JSON file; see [`parse_json`].
pub(crate) fn read_json(path: &Path) -> Result<(RoutingTable, TableMetadata)> {
    parse_json(&read_text(path)?, path)
}

/// Parses routes JSON. Every ordered router pair must appear exactly once (in any order); each
/// path must start at `src`, end at `dst` and have one port fewer than routers. Whether the
/// ports lead where the path says is the topology's business: call
/// [`RoutingTable::validate`].
pub fn parse_json(text: &str, path: &Path) -> Result<(RoutingTable, TableMetadata)> {
    let mut de = serde_json::Deserializer::from_str(text);
    let file: RoutesFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        json_error(path, field, e.into_inner())
    })?;
    de.end().map_err(|e| json_error(path, String::new(), e))?;
    let bad = |field: String, reason: String| Error::parse(path, field, reason);
    if file.format != ROUTES_FORMAT {
        return Err(bad(
            "format".into(),
            format!("expected \"{ROUTES_FORMAT}\", found {:?}", file.format),
        ));
    }
    if file.version != ROUTES_VERSION {
        return Err(bad(
            "version".into(),
            format!(
                "unsupported version {} (this fabricopt reads version {ROUTES_VERSION})",
                file.version
            ),
        ));
    }
    let n = file.num_routers;
    check_num_routers(n).map_err(|e| bad("num_routers".into(), e))?;
    let next = next_hops_of(&file.next_hops, n).map_err(|(f, r)| bad(f, r))?;
    let pairs = n * (n - 1);
    let mut paths: Vec<Option<RouterPath>> = vec![None; pairs];
    let mut origins = vec![None; pairs];
    let mut vc_class = vec![None; pairs];
    let (mut any_origin, mut any_class) = (false, false);
    for (i, e) in file.paths.into_iter().enumerate() {
        let at = |f: &str| format!("paths[{i}].{f}");
        for (f, v) in [("src", e.src), ("dst", e.dst)] {
            if v >= n {
                return Err(bad(at(f), format!("router {v} is out of range (0..{n})")));
            }
        }
        if e.src == e.dst {
            return Err(bad(
                at("dst"),
                format!("equals src ({}): a table has no path to itself", e.src),
            ));
        }
        let p = RouterPath {
            routers: e.routers,
            ports: e.ports,
        };
        check_path_shape(&p, e.src, e.dst, n).map_err(|(f, r)| bad(at(f), r))?;
        if e.hops != p.hops() {
            return Err(bad(
                at("hops"),
                format!("{} but the path has {} ports", e.hops, p.hops()),
            ));
        }
        let pair = pair_index(n, e.src, e.dst);
        if paths[pair].is_some() {
            return Err(bad(
                format!("paths[{i}]"),
                format!("pair {} -> {} is given twice", e.src, e.dst),
            ));
        }
        paths[pair] = Some(p);
        any_origin |= e.origin.is_some();
        any_class |= e.vc_class.is_some();
        origins[pair] = e.origin;
        vc_class[pair] = e.vc_class;
    }
    let table = match next {
        None => RoutingTable::from_paths(
            n,
            collect_pairs(paths, n).map_err(|r| bad("paths".into(), r))?,
        )
        .expect("one path per pair"),
        Some(next) => {
            let listed = paths
                .into_iter()
                .enumerate()
                .filter_map(|(pair, p)| Some((pair, p?)))
                .collect();
            RoutingTable::from_compact(n, &next, listed).map_err(|r| bad("next_hops".into(), r))?
        }
    };
    Ok((
        table,
        TableMetadata {
            topology: file.topology,
            vc_classes: file.vc_classes,
            metadata: file.metadata,
            origins: if any_origin { origins } else { Vec::new() },
            vc_class: if any_class { vc_class } else { Vec::new() },
        },
    ))
}

/// The next hops of a compact routes JSON (`r * n + d`), None for the full form. Errors are
/// (field, reason).
#[allow(clippy::type_complexity)]
fn next_hops_of(
    entries: &[NextHopEntry],
    n: usize,
) -> std::result::Result<Option<Vec<Option<(u16, u32)>>>, (String, String)> {
    if entries.is_empty() {
        return Ok(None);
    }
    if entries.len() != n {
        return Err((
            "next_hops".into(),
            format!(
                "{} entries for {n} routers (one per destination)",
                entries.len()
            ),
        ));
    }
    let mut next = vec![None; n * n];
    let mut seen = vec![false; n];
    for (i, e) in entries.iter().enumerate() {
        let at = |f: &str| format!("next_hops[{i}].{f}");
        let d = e.dst;
        if d >= n || std::mem::replace(&mut seen[d], true) {
            return Err((
                at("dst"),
                format!("{d} is out of range (0..{n}) or given twice"),
            ));
        }
        if e.ports.len() != n || e.routers.len() != n {
            return Err((
                at("ports"),
                format!(
                    "{} ports and {} routers for {n} routers",
                    e.ports.len(),
                    e.routers.len()
                ),
            ));
        }
        for (r, (p, q)) in e.ports.iter().zip(&e.routers).enumerate() {
            next[r * n + d] = match (*p, *q) {
                (Some(p), Some(q)) => Some((p, q)),
                (None, None) => None,
                _ => {
                    return Err((
                        at(&format!("ports[{r}]")),
                        "a port needs its router and a router its port".into(),
                    ));
                }
            };
        }
    }
    Ok(Some(next))
}

fn json_error(path: &Path, field: String, e: serde_json::Error) -> Error {
    let location = if field.is_empty() || field == "." {
        format!("line {}", e.line())
    } else {
        format!("line {}: {field}", e.line())
    };
    // serde_json appends " at line L column C", which the location already says.
    let msg = e.to_string();
    let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
    Error::parse(path, location, msg)
}

/// Shape checks that need no topology: endpoints, router range, port count.
fn check_path_shape(
    p: &RouterPath,
    src: usize,
    dst: usize,
    n: usize,
) -> std::result::Result<(), (&'static str, String)> {
    if p.routers.first().map(|&r| r as usize) != Some(src) {
        return Err((
            "routers",
            format!("must start at the source router {src}: {:?}", p.routers),
        ));
    }
    if p.routers.last().map(|&r| r as usize) != Some(dst) {
        return Err((
            "routers",
            format!("must end at the destination router {dst}: {:?}", p.routers),
        ));
    }
    if let Some(&r) = p.routers.iter().find(|&&r| r as usize >= n) {
        return Err(("routers", format!("router {r} is out of range (0..{n})")));
    }
    if p.routers.len() != p.ports.len() + 1 {
        return Err((
            "ports",
            format!(
                "{} ports for {} routers (need one port fewer than routers)",
                p.ports.len(),
                p.routers.len()
            ),
        ));
    }
    Ok(())
}

/// Turns the per-pair slots into the table's path vector, naming the first missing pair.
fn collect_pairs(
    paths: Vec<Option<RouterPath>>,
    n: usize,
) -> std::result::Result<Vec<RouterPath>, String> {
    let missing = paths.iter().filter(|p| p.is_none()).count();
    if let Some(first) = paths.iter().position(Option::is_none) {
        let (s, d) = pair_of(n, first);
        return Err(format!(
            "{missing} of the {} ordered router pairs have no path (the first is {s} -> {d})",
            paths.len()
        ));
    }
    Ok(paths.into_iter().flatten().collect())
}

/// Parses the per-router forwarding CSV (`router,source,destination,hop,output_port,vc_class`,
/// rows in any order). Returns the table and each pair's VC class (all rows of a pair must
/// agree). The hops of every pair must be 0..k without gaps, hop 0 must be at the source, and
/// the router after the last hop is the destination.
pub fn parse_csv(
    text: &str,
    path: &Path,
    num_routers: usize,
) -> Result<(RoutingTable, Vec<String>)> {
    let n = num_routers;
    check_num_routers(n).map_err(|e| Error::parse(path, "file", e))?;
    // Per pair: hop -> (router, port, line), and the VC class with its first line.
    let mut hops: Vec<BTreeMap<usize, (u32, u16, usize)>> = vec![BTreeMap::new(); n * (n - 1)];
    let mut classes: Vec<Option<(String, usize)>> = vec![None; n * (n - 1)];
    let mut header_seen = false;
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let err = |reason: String| Error::parse(path, format!("line {line}"), reason);
        let content = raw.trim_end_matches('\r');
        if content.trim().is_empty() {
            continue;
        }
        if !header_seen {
            if content.trim() != CSV_HEADER {
                return Err(err(format!(
                    "expected the header `{CSV_HEADER}`, found `{}`",
                    content.trim()
                )));
            }
            header_seen = true;
            continue;
        }
        let fields: Vec<&str> = content.split(',').map(str::trim).collect();
        let [router, source, destination, hop, port, class] = fields[..] else {
            return Err(err(format!(
                "expected 6 comma-separated fields ({CSV_HEADER}), found {}",
                fields.len()
            )));
        };
        let num = |name: &str, v: &str, limit: usize| -> Result<usize> {
            let x: usize = v
                .parse()
                .map_err(|_| err(format!("bad {name} `{v}`: expected a non-negative integer")))?;
            if x >= limit {
                return Err(err(format!("{name} {x} is out of range (0..{limit})")));
            }
            Ok(x)
        };
        let router = num("router", router, n)?;
        let (s, d) = (
            num("source", source, n)?,
            num("destination", destination, n)?,
        );
        if s == d {
            return Err(err(format!(
                "source and destination are both router {s}: a table has no path to itself"
            )));
        }
        // A path is no longer than... any bound works; n² keeps hostile files small.
        let hop = num("hop", hop, n * n)?;
        let port = num("output_port", port, usize::from(u16::MAX))? as u16;
        if class.is_empty() {
            return Err(err("vc_class is empty".into()));
        }
        let pair = pair_index(n, s, d);
        match &classes[pair] {
            None => classes[pair] = Some((class.to_string(), line)),
            Some((c, first)) if c != class => {
                return Err(err(format!(
                    "vc_class `{class}` differs from `{c}` given for pair {s} -> {d} on line {first}"
                )));
            }
            Some(_) => {}
        }
        if let Some(&(_, _, prev)) = hops[pair].get(&hop) {
            return Err(err(format!(
                "hop {hop} of pair {s} -> {d} is given twice (first on line {prev})"
            )));
        }
        hops[pair].insert(hop, (router as u32, port, line));
    }
    if !header_seen {
        return Err(Error::parse(
            path,
            "line 1",
            format!("empty file: expected the header `{CSV_HEADER}`"),
        ));
    }
    let mut paths = Vec::with_capacity(n * (n - 1));
    for (pair, rows) in hops.iter().enumerate() {
        let (s, d) = pair_of(n, pair);
        if rows.is_empty() {
            let missing = hops.iter().filter(|h| h.is_empty()).count();
            return Err(Error::parse(
                path,
                "file",
                format!(
                    "{missing} of the {} ordered router pairs have no rows (the first is {s} -> {d})",
                    n * (n - 1)
                ),
            ));
        }
        let mut p = RouterPath {
            routers: Vec::with_capacity(rows.len() + 1),
            ports: Vec::with_capacity(rows.len()),
        };
        for (i, (&hop, &(router, port, line))) in rows.iter().enumerate() {
            let err = |reason: String| Error::parse(path, format!("line {line}"), reason);
            if hop != i {
                return Err(err(format!("pair {s} -> {d} has hop {hop} but no hop {i}")));
            }
            if i == 0 && router as usize != s {
                return Err(err(format!(
                    "hop 0 of pair {s} -> {d} is at router {router}, not at the source"
                )));
            }
            p.routers.push(router);
            p.ports.push(port);
        }
        p.routers.push(d as u32);
        paths.push(p);
    }
    let classes = classes
        .into_iter()
        .map(|c| c.map_or_else(|| DEFAULT_VC_CLASS.to_string(), |(c, _)| c))
        .collect();
    Ok((
        RoutingTable::from_paths(n, paths).expect("one path per pair"),
        classes,
    ))
}

/// For every ordered pair of adjacent routers, the lowest port of the first that leads to the
/// second (what the path list means by "go from a to b").
pub(crate) fn lowest_ports(topo: &Topology) -> HashMap<(u32, u32), u16> {
    let mut lowest = HashMap::new();
    for r in 0..topo.num_routers() {
        for p in 0..topo.routers[r].ports.len() {
            if let Some(Endpoint::Router { router, .. }) = topo.peer(r, p) {
                lowest.entry((r as u32, router as u32)).or_insert(p as u16);
            }
        }
    }
    lowest
}

/// Parses a path list: `src dst r0 r1 ... rk` per ordered router pair (`#` starts a comment).
/// Each step `r[i] -> r[i+1]` takes the lowest port of `r[i]` that leads to `r[i+1]`; routers
/// that are not adjacent are an error naming the line.
pub fn parse_path_list(text: &str, path: &Path, topo: &Topology) -> Result<RoutingTable> {
    let n = topo.num_routers();
    check_num_routers(n).map_err(|e| Error::parse(path, "file", e))?;
    let lowest = lowest_ports(topo);
    let mut paths: Vec<Option<(RouterPath, usize)>> = vec![None; n * (n - 1)];
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let err = |reason: String| Error::parse(path, format!("line {line}"), reason);
        let content = raw.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = content.split_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        if tokens.len() < 4 {
            return Err(err(format!(
                "expected `src dst r0 r1 ... rk` (at least 4 router ids), found `{}`",
                content.trim()
            )));
        }
        let ids = tokens
            .iter()
            .map(|t| {
                let r: usize = t.parse().map_err(|_| {
                    err(format!(
                        "bad router id `{t}`: expected a non-negative integer"
                    ))
                })?;
                if r >= n {
                    return Err(err(format!(
                        "router {r} is out of range (the topology has {n} routers)"
                    )));
                }
                Ok(r as u32)
            })
            .collect::<Result<Vec<u32>>>()?;
        let (s, d, routers) = (ids[0] as usize, ids[1] as usize, &ids[2..]);
        if s == d {
            return Err(err(format!(
                "src and dst are both router {s}: a table has no path to itself"
            )));
        }
        if routers[0] as usize != s || *routers.last().expect("len >= 2") as usize != d {
            return Err(err(format!(
                "the path must run from src {s} to dst {d}, but runs {} to {}",
                routers[0],
                routers[routers.len() - 1]
            )));
        }
        let ports = routers
            .windows(2)
            .map(|w| {
                lowest.get(&(w[0], w[1])).copied().ok_or_else(|| {
                    err(format!(
                        "routers {} and {} are not adjacent in topology `{}`",
                        w[0], w[1], topo.name
                    ))
                })
            })
            .collect::<Result<Vec<u16>>>()?;
        let pair = pair_index(n, s, d);
        if let Some((_, prev)) = &paths[pair] {
            return Err(err(format!(
                "pair {s} -> {d} is given twice (first on line {prev})"
            )));
        }
        paths[pair] = Some((
            RouterPath {
                routers: routers.to_vec(),
                ports,
            },
            line,
        ));
    }
    let paths = collect_pairs(paths.into_iter().map(|p| p.map(|(p, _)| p)).collect(), n)
        .map_err(|r| Error::parse(path, "file", r))?;
    Ok(RoutingTable::from_paths(n, paths).expect("one path per pair"))
}

/// One switch's linear forwarding table as read from an LFT dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchLft {
    pub lid: u16,
    pub guid: u64,
    /// Destination LID -> InfiniBand output port (0 = the switch itself).
    pub ports: BTreeMap<u16, u8>,
}

/// The unicast LFTs of a file, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinearForwardingTables {
    pub switches: Vec<SwitchLft>,
}

/// The LID of router `r` (switch LIDs come first, from 1).
pub(crate) fn switch_lid(r: usize) -> usize {
    r + 1
}

/// The LID of terminal `t`'s channel adapter (after all switch LIDs).
pub(crate) fn terminal_lid(num_routers: usize, t: usize) -> usize {
    num_routers + t + 1
}

/// Parses the unicast LFT dump that `ibroute` prints, `opensm`'s `dump_lfts` writes and
/// OpenSM's `file` routing engine loads (`lfts_file`):
///
/// ```text
/// Unicast lids [0x0-0x5] of switch Lid 1 guid 0x0000000000200000 (Switch1):
///   Lid  Out   Destination
///        Port     Info
/// 0x0002 001 : (Channel Adapter portguid 0x0000000000100001: 'Hca1')
/// 4 valid lids dumped
/// ```
///
/// Like OpenSM, it keys on a line starting with `Unicast lids` (needs ` Lid N` and
/// ` guid 0x...`) and on entry lines starting with `0x` (hex LID, then the decimal port, then
/// anything: the destination description after `:` or `#` is not needed); `#` lines and all
/// other lines are skipped. Unlike OpenSM it refuses what it cannot use (an entry before any
/// switch, a LID given twice for one switch, a port above 254) instead of skipping it.
pub fn parse_lft(text: &str, path: &Path) -> Result<LinearForwardingTables> {
    let mut lfts = LinearForwardingTables::default();
    let mut first_line_of: HashMap<u16, usize> = HashMap::new();
    let mut entry_lines: HashMap<u16, usize> = HashMap::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let err = |reason: String| Error::parse(path, format!("line {line}"), reason);
        let content = raw.trim();
        if content.starts_with('#') {
            continue;
        }
        if content.starts_with("Multicast mlids") {
            return Err(err(
                "a multicast forwarding table dump, not a unicast LFT dump".into(),
            ));
        }
        if content.starts_with("Unicast lids") {
            let lid = number_after(content, " Lid ", 10)
                .ok_or_else(|| err("cannot read the switch LID (` Lid N`)".into()))?;
            let guid = number_after(content, " guid 0x", 16)
                .ok_or_else(|| err("cannot read the switch GUID (` guid 0x...`)".into()))?;
            let lid = check_lid(lid).map_err(err)?;
            if let Some(prev) = first_line_of.insert(lid, line) {
                return Err(err(format!(
                    "switch LID {lid} is given twice (first on line {prev})"
                )));
            }
            entry_lines.clear();
            lfts.switches.push(SwitchLft {
                lid,
                guid,
                ports: BTreeMap::new(),
            });
            continue;
        }
        let Some(rest) = content.strip_prefix("0x") else {
            continue;
        };
        let Some(sw) = lfts.switches.last_mut() else {
            return Err(err(
                "an LFT entry before any `Unicast lids ... of switch` line".into(),
            ));
        };
        let mut tokens = rest.split_whitespace();
        let lid_tok = tokens.next().unwrap_or("");
        let lid = u64::from_str_radix(lid_tok, 16)
            .map_err(|_| err(format!("bad LID `0x{lid_tok}`: expected hexadecimal")))?;
        let lid = check_lid(lid).map_err(err)?;
        let port_tok = tokens
            .next()
            .ok_or_else(|| err(format!("LID 0x{lid:04x} has no output port")))?;
        let port: u8 = port_tok
            .parse()
            .ok()
            .filter(|&p: &u8| p < 255)
            .ok_or_else(|| {
                err(format!(
                    "bad output port `{port_tok}`: expected a decimal port number 0..254"
                ))
            })?;
        if let Some(prev) = entry_lines.insert(lid, line) {
            return Err(err(format!(
                "LID 0x{lid:04x} is given twice for switch LID {} (first on line {prev})",
                sw.lid
            )));
        }
        sw.ports.insert(lid, port);
    }
    Ok(lfts)
}

/// The number in `base` right after `marker` (up to white space or a non-digit).
fn number_after(s: &str, marker: &str, base: u32) -> Option<u64> {
    let start = s.find(marker)? + marker.len();
    let digits: String = s[start..]
        .chars()
        .take_while(|c| c.is_digit(base))
        .collect();
    u64::from_str_radix(&digits, base).ok()
}

fn check_lid(lid: u64) -> std::result::Result<u16, String> {
    if lid == 0 || lid > MAX_UNICAST_LID as u64 {
        return Err(format!(
            "LID {lid} is not a unicast LID (1..=0x{MAX_UNICAST_LID:X})"
        ));
    }
    Ok(lid as u16)
}

impl LinearForwardingTables {
    /// Rebuilds the routing table by following the next hops switch by switch from every
    /// source router to every destination router's LID (LID = router + 1, InfiniBand port
    /// p + 1 = our port p; see docs/formats.md). Errors name the switch and destination where
    /// the walk fails: a missing switch or entry, a port that does not lead to a router, a loop.
    pub fn to_table(&self, topo: &Topology, path: &Path) -> Result<RoutingTable> {
        let n = topo.num_routers();
        let by_router = self.by_router(topo, path)?;
        let paths = (0..n * (n.saturating_sub(1)))
            .map(|pair| {
                let (s, d) = pair_of(n, pair);
                walk_lid(&by_router, topo, path, s, d, switch_lid(d) as u16)
            })
            .collect::<Result<_>>()?;
        Ok(RoutingTable::from_paths(n, paths).expect("one path per pair"))
    }

    /// Every router's switch table (checked: one per router, LID = router + 1, fabricopt's
    /// GUID), in router order.
    pub(crate) fn by_router(&self, topo: &Topology, path: &Path) -> Result<Vec<&SwitchLft>> {
        let n = topo.num_routers();
        check_num_routers(n).map_err(|e| Error::parse(path, "file", e))?;
        let mut by_router: Vec<Option<&SwitchLft>> = vec![None; n];
        for sw in &self.switches {
            let r = sw.lid as usize - 1;
            if r >= n {
                return Err(Error::parse(
                    path,
                    format!("switch LID {}", sw.lid),
                    format!(
                        "is not a router of `{}` ({n} routers: LIDs 1..={n})",
                        topo.name
                    ),
                ));
            }
            let expect = SWITCH_GUID_BASE + r as u64;
            if sw.guid != expect {
                return Err(Error::parse(
                    path,
                    format!("switch LID {}", sw.lid),
                    format!(
                        "guid 0x{:016x} is not router {r}'s (0x{expect:016x}); fabricopt's \
                         LFTs use LID = router + 1 and GUID = 0x{SWITCH_GUID_BASE:016x} + router",
                        sw.guid
                    ),
                ));
            }
            by_router[r] = Some(sw);
        }
        if let Some(r) = by_router.iter().position(Option::is_none) {
            return Err(Error::parse(
                path,
                "file",
                format!("no table for router {r} (switch LID {})", switch_lid(r)),
            ));
        }
        Ok(by_router
            .into_iter()
            .map(|s| s.expect("checked above"))
            .collect())
    }
}

/// Follows the switch tables from router `s` towards `dlid`, a LID that router `d` delivers
/// (its own, or one of its terminals'), until the walk reaches `d`. Errors name the switch
/// where it fails: a missing entry, port 0, a port that does not lead to a router, a loop.
pub(crate) fn walk_lid(
    by_router: &[&SwitchLft],
    topo: &Topology,
    path: &Path,
    s: usize,
    d: usize,
    dlid: u16,
) -> Result<RouterPath> {
    let n = by_router.len();
    let mut p = RouterPath {
        routers: vec![s as u32],
        ports: Vec::new(),
    };
    let mut cur = s;
    while cur != d {
        let at = format!("switch LID {}", switch_lid(cur));
        let bad = |reason: String| Error::parse(path, at.clone(), reason);
        if p.ports.len() >= n {
            return Err(bad(format!(
                "the route from router {s} to router {d} (LID {dlid}) loops: {:?}",
                p.routers
            )));
        }
        let sw = by_router[cur];
        let ib_port = *sw
            .ports
            .get(&dlid)
            .ok_or_else(|| bad(format!("has no entry for LID {dlid} (router {d})")))?;
        if ib_port == 0 {
            return Err(bad(format!(
                "sends LID {dlid} (router {d}) to port 0, its own management port"
            )));
        }
        let port = usize::from(ib_port) - 1;
        let Some(Endpoint::Router { router: next, .. }) = topo.peer(cur, port) else {
            return Err(bad(format!(
                "sends LID {dlid} (router {d}) to IB port {ib_port} (port {port}), \
                 which does not lead to a router"
            )));
        };
        p.ports.push(port as u16);
        p.routers.push(next as u32);
        cur = next;
    }
    Ok(p)
}
