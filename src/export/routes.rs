//! Routing-table export: fabricopt routes JSON, a per-router forwarding CSV, the path list
//! the seed fed to BookSim's table routing, and InfiniBand OpenSM linear forwarding tables.
//! The readers are in `routing::table::io`; the formats are documented in docs/formats.md
//! (Routing tables).
//!
//! Also builds the table a deterministic routing function of the registry uses
//! ([`table_from_routing`]), so that classical algorithms can be exported too.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::routing::RoutingFunction;
use crate::routing::table::io::{
    CA_GUID_BASE, CSV_HEADER, DEFAULT_VC_CLASS, MAX_UNICAST_LID, NextHopEntry, PathEntry,
    ROUTES_FORMAT, ROUTES_VERSION, RoutesFile, SWITCH_GUID_BASE, TableMetadata, lowest_ports,
    switch_lid, terminal_lid,
};
use crate::routing::table::{PathOrigin, RouterPath, RoutingTable, pair_of};
use crate::topology::Topology;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RoutesFormat {
    Json,
    Csv,
    Paths,
    Lft,
}

impl RoutesFormat {
    /// The usual file extension (without the dot).
    pub(crate) fn extension(self) -> &'static str {
        match self {
            RoutesFormat::Json => "json",
            RoutesFormat::Csv => "csv",
            RoutesFormat::Paths => "paths",
            RoutesFormat::Lft => "lft",
        }
    }
}

/// Writes the table in `format` to `path` atomically, streamed (a 1,024-router table's CSV is
/// 500 MB); returns warnings (what the format cannot express).
pub(crate) fn write_routes(
    topo: &Topology,
    table: &RoutingTable,
    meta: &TableMetadata,
    format: RoutesFormat,
    path: &Path,
) -> Result<Vec<String>> {
    let prepared = prepare(topo, table, meta, format)?;
    crate::files::write_atomically_with(path, |w| write_format(table, meta, &prepared, w))?;
    Ok(prepared.warnings)
}

/// The file contents for `format`, with warnings. Fails for LFTs when the table is not
/// destination-based and when a CSV VC class cannot be written.
pub(crate) fn to_format_string(
    topo: &Topology,
    table: &RoutingTable,
    meta: &TableMetadata,
    format: RoutesFormat,
) -> Result<(String, Vec<String>)> {
    let prepared = prepare(topo, table, meta, format)?;
    let mut out = Vec::new();
    write_format(table, meta, &prepared, &mut out).expect("writing to memory");
    Ok((into_text(out), prepared.warnings))
}

/// A format checked before any file is opened (so that a refused table leaves none).
struct Prepared<'a> {
    topo: &'a Topology,
    format: RoutesFormat,
    warnings: Vec<String>,
    /// The LFT text, built by its check (one entry per switch and LID: small).
    lft: Option<String>,
}

fn prepare<'a>(
    topo: &'a Topology,
    table: &RoutingTable,
    meta: &TableMetadata,
    format: RoutesFormat,
) -> Result<Prepared<'a>> {
    let mut prepared = Prepared {
        topo,
        format,
        warnings: Vec::new(),
        lft: None,
    };
    match format {
        RoutesFormat::Json => {}
        RoutesFormat::Csv => check_csv_classes(table, &meta.vc_class)?,
        RoutesFormat::Paths => prepared.warnings = path_list_warnings(topo, table),
        RoutesFormat::Lft => prepared.lft = Some(to_lft_string(topo, table)?),
    }
    Ok(prepared)
}

/// Streams the table in the prepared format to `out`.
fn write_format(
    table: &RoutingTable,
    meta: &TableMetadata,
    prepared: &Prepared,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match prepared.format {
        RoutesFormat::Json => write_json(table, meta, out),
        RoutesFormat::Csv => write_csv(table, &meta.vc_class, out),
        RoutesFormat::Paths => write_path_list(prepared.topo, table, out),
        RoutesFormat::Lft => out.write_all(prepared.lft.as_deref().unwrap_or_default().as_bytes()),
    }
}

/// Text written to memory by one of the writers (which write only UTF-8).
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("the writers write UTF-8")
}

/// The routes JSON: the header fields, then one path per line (so that diffs stay readable),
/// pairs in [`crate::routing::table::pair_index`] order.
pub fn to_json_string(table: &RoutingTable, meta: &TableMetadata) -> String {
    let mut out = Vec::new();
    write_json(table, meta, &mut out).expect("writing to memory");
    into_text(out)
}

/// The compact routes JSON whatever the table's size (the writer uses it above
/// [`FULL_FILE_PAIRS`]).
#[cfg(test)]
pub(crate) fn to_compact_json_string(table: &RoutingTable, meta: &TableMetadata) -> String {
    let mut out = Vec::new();
    write_json_as(table, meta, true, &mut out).expect("writing to memory");
    into_text(out)
}

fn write_json(
    table: &RoutingTable,
    meta: &TableMetadata,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    write_json_as(table, meta, writes_compact_json(table, meta), out)
}

fn write_json_as(
    table: &RoutingTable,
    meta: &TableMetadata,
    compact: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let file = RoutesFile {
        format: ROUTES_FORMAT.into(),
        version: ROUTES_VERSION,
        topology: meta.topology.clone(),
        num_routers: table.num_routers,
        vc_classes: meta.vc_classes.clone(),
        metadata: meta.metadata.clone(),
        next_hops: Vec::new(),
        paths: Vec::new(),
    };
    // Pretty-print the header, then splice in compact path objects, one per line.
    let mut head = serde_json::to_string_pretty(&file).expect("JSON values serialise");
    let cut = head
        .rfind("\"paths\": []")
        .expect("the paths field is serialised last");
    head.truncate(cut);
    out.write_all(head.as_bytes())?;
    let n = table.num_routers;
    let entry = |out: &mut dyn Write, i: usize, p: &RouterPath, last: bool| {
        let (src, dst) = pair_of(n, i);
        let entry = PathEntry {
            src,
            dst,
            routers: p.routers.clone(),
            ports: p.ports.clone(),
            hops: p.hops(),
            origin: meta.origins.get(i).copied().flatten(),
            vc_class: meta.vc_class.get(i).cloned().flatten(),
        };
        out.write_all(b"    ")?;
        serde_json::to_writer(&mut *out, &entry)?;
        out.write_all(if last { b"\n" } else { b",\n" })
    };
    if compact {
        // Next hops per destination, then only the pairs that do not follow them.
        let compact = table.compact();
        out.write_all(b"\"next_hops\": [\n")?;
        for d in 0..n {
            let hop = |r: usize| compact.next[r * n + d];
            let e = NextHopEntry {
                dst: d,
                ports: (0..n).map(|r| hop(r).map(|h| h.0)).collect(),
                routers: (0..n).map(|r| hop(r).map(|h| h.1)).collect(),
            };
            out.write_all(b"    ")?;
            serde_json::to_writer(&mut *out, &e)?;
            out.write_all(if d + 1 < n { b",\n" } else { b"\n" })?;
        }
        out.write_all(b"  ],\n  \"paths\": [\n")?;
        let count = compact.listed.len();
        for (k, (&i, p)) in compact.listed.iter().enumerate() {
            entry(out, i, p, k + 1 == count)?;
        }
    } else {
        out.write_all(b"\"paths\": [\n")?;
        let pairs = table.num_pairs();
        for (i, p) in table.paths().enumerate() {
            entry(out, i, &p, i + 1 == pairs)?;
        }
    }
    out.write_all(b"  ]\n}\n")
}

/// Tables with more router pairs than this are written as compact routes JSON (next hops
/// plus the pairs that do not follow them) and `routes evolve` skips their per-pair CSV and
/// path list: above 1,024 routers those are tens of GB (a 64x64 mesh's CSV would be ~18 GB).
pub(crate) const FULL_FILE_PAIRS: usize = 1 << 20;

/// Whether [`write_json`] writes the compact form: for large tables whose pairs carry no
/// per-pair origin or VC class.
fn writes_compact_json(table: &RoutingTable, meta: &TableMetadata) -> bool {
    table.num_pairs() > FULL_FILE_PAIRS && meta.origins.is_empty() && meta.vc_class.is_empty()
}

/// The VC class of every pair for the CSV (`vc_class[pair]`, or `table` when not given).
fn csv_class(vc_class: &[Option<String>], pair: usize) -> &str {
    vc_class
        .get(pair)
        .and_then(|c| c.as_deref())
        .unwrap_or(DEFAULT_VC_CLASS)
}

/// No quoting in the CSV: classes are identifiers, so refuse what would need it.
fn check_csv_classes(table: &RoutingTable, vc_class: &[Option<String>]) -> Result<()> {
    let n = table.num_routers;
    for pair in 0..table.num_pairs() {
        let class = csv_class(vc_class, pair);
        if class.is_empty() || class.contains([',', '"', '\n', '\r']) || class.trim() != class {
            let (s, d) = pair_of(n, pair);
            return Err(Error::field(
                format!("vc_class of pair {s} -> {d}"),
                format!(
                    "{class:?} cannot be written to CSV (needs a non-empty name without commas, quotes, line breaks or surrounding spaces)"
                ),
            ));
        }
    }
    Ok(())
}

/// The per-router forwarding CSV: one row per (path, hop) — at `router`, a packet of
/// (`source`, `destination`) router at hop index `hop` leaves by `output_port` on VC class
/// `vc_class` (`vc_class[pair]`, or `table` when not given). Rows are sorted by router, then
/// source, destination and hop, so that each router's forwarding state is one block.
#[cfg(test)]
pub(crate) fn to_csv_string(table: &RoutingTable, vc_class: &[Option<String>]) -> Result<String> {
    check_csv_classes(table, vc_class)?;
    let mut out = Vec::new();
    write_csv(table, vc_class, &mut out).expect("writing to memory");
    Ok(into_text(out))
}

fn write_csv(
    table: &RoutingTable,
    vc_class: &[Option<String>],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let n = table.num_routers;
    // The (pair, hop) of every row, grouped by router (a counting sort): pairs are visited in
    // order and `pair_index` orders them by source, then destination, so each router's rows
    // come out sorted. 8 bytes a row where sorting tuples took 48.
    let mut start = vec![0usize; n + 1];
    for p in table.paths() {
        for &r in &p.routers[..p.ports.len()] {
            start[r as usize + 1] += 1;
        }
    }
    for r in 0..n {
        start[r + 1] += start[r];
    }
    let mut next = start.clone();
    let mut rows = vec![0u64; start[n]];
    for (pair, p) in table.paths().enumerate() {
        for (hop, &r) in p.routers[..p.ports.len()].iter().enumerate() {
            rows[next[r as usize]] = ((pair as u64) << 16) | hop as u64;
            next[r as usize] += 1;
        }
    }
    writeln!(out, "{CSV_HEADER}")?;
    for (r, range) in start.windows(2).enumerate() {
        for &row in &rows[range[0]..range[1]] {
            let (pair, hop) = ((row >> 16) as usize, (row & 0xffff) as usize);
            let (s, d) = pair_of(n, pair);
            let port = table
                .port_at(r, s, d, hop)
                .expect("a row is a hop before the destination");
            let class = csv_class(vc_class, pair);
            writeln!(out, "{r},{s},{d},{hop},{port},{class}")?;
        }
    }
    Ok(())
}

/// The path list: a `#` header naming the topology, then `src dst r0 r1 ... rk` per ordered
/// router pair in pair order. Router-level only, so reading it back takes the lowest port
/// between consecutive routers; paths that take another of several parallel links are
/// counted in a warning (their port choice is lost).
#[cfg(test)]
pub(crate) fn to_path_list_string(topo: &Topology, table: &RoutingTable) -> (String, Vec<String>) {
    let mut out = Vec::new();
    write_path_list(topo, table, &mut out).expect("writing to memory");
    (into_text(out), path_list_warnings(topo, table))
}

fn write_path_list(
    topo: &Topology,
    table: &RoutingTable,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let n = table.num_routers;
    writeln!(
        out,
        "# fabricopt routes: topology {}, {n} routers, {} paths",
        one_line(&topo.name),
        table.num_pairs()
    )?;
    out.write_all(b"# src dst r0 r1 ... rk (router ids; r0 = src, rk = dst)\n")?;
    for (pair, p) in table.paths().enumerate() {
        let (s, d) = pair_of(n, pair);
        write!(out, "{s} {d}")?;
        for r in &p.routers {
            write!(out, " {r}")?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The path list's warning: how many paths take a parallel link other than the lowest one.
fn path_list_warnings(topo: &Topology, table: &RoutingTable) -> Vec<String> {
    let lowest = lowest_ports(topo);
    let other_port = table
        .paths()
        .filter(|p| {
            p.routers
                .windows(2)
                .zip(&p.ports)
                .any(|(w, &port)| lowest.get(&(w[0], w[1])) != Some(&port))
        })
        .count();
    let mut warnings = Vec::new();
    if other_port > 0 {
        warnings.push(format!(
            "a path list names routers, not ports: {other_port} paths take a parallel link other than the lowest-numbered one and will read back on the lowest"
        ));
    }
    warnings
}

pub(crate) fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The single next port of every (router, destination router), `next[r * n + d]`
/// (`u16::MAX` on the diagonal), or an error naming the first (router, destination) pair
/// that two paths leave by different ports.
pub(crate) fn destination_next_hops(table: &RoutingTable) -> Result<Vec<u16>> {
    let n = table.num_routers;
    table.destination_ports().map_err(|c| {
        let (s1, _) = pair_of(n, c.first.0);
        let (s2, _) = pair_of(n, c.second.0);
        Error::field(
            "table",
            format!(
                "not destination-based, so it cannot be an InfiniBand LFT: at router {} \
                 towards router {} the path from {s1} leaves by port {} and the path from {s2} by port {}",
                c.router, c.destination, c.first.1, c.second.1
            ),
        )
    })
}

/// InfiniBand OpenSM linear forwarding tables in the format of `ibroute` / OpenSM's
/// `dump_lfts` (what OpenSM's `file` routing engine loads through `lfts_file`):
///
/// * router `r` is a switch with LID `r + 1` and GUID `0x0002c90000000000 + r`;
/// * terminal `t` is a channel adapter with LID `num_routers + t + 1` and port GUID
///   `0x0002c90100000000 + t`, attached to its router's terminal port;
/// * our port `p` is InfiniBand port `p + 1` (IB switch port 0 is the switch's management
///   port, the output for the switch's own LID).
///
/// Every switch gets an entry for every LID. Needs a destination-based table (one next hop per
/// (router, destination)); a terminal's LID follows its router's next hops and, at its router,
/// leaves by its terminal port.
pub(crate) fn to_lft_string(topo: &Topology, table: &RoutingTable) -> Result<String> {
    let n = table.num_routers;
    let entries = lft_entries(topo, table)?;
    let max_lid = n + topo.num_terminals();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# fabricopt linear forwarding tables: topology {}, {n} switches (LID = router + 1), \
         {} channel adapters (LID = {n} + terminal + 1), IB port = port + 1",
        one_line(&topo.name),
        topo.num_terminals()
    );
    for (r, row) in entries.iter().enumerate() {
        let lids: Vec<(usize, u8, LidOwner)> = row
            .iter()
            .enumerate()
            .map(|(i, &port)| {
                let lid = i + 1;
                let owner = if lid <= n {
                    LidOwner::Router(lid - 1)
                } else {
                    LidOwner::Terminal(lid - n - 1)
                };
                (lid, port, owner)
            })
            .collect();
        write_switch_lft(&mut out, r, max_lid, &lids);
    }
    Ok(out)
}

/// What a LID addresses, for the description column of an LFT dump.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LidOwner {
    Router(usize),
    Terminal(usize),
}

/// One switch's table in the `dump_lfts` format: its header line, `(lid, IB port, owner)` per
/// entry, and the `N valid lids dumped` footer.
pub(crate) fn write_switch_lft(
    out: &mut String,
    r: usize,
    max_lid: usize,
    lids: &[(usize, u8, LidOwner)],
) {
    let _ = writeln!(
        out,
        "Unicast lids [0x0-0x{max_lid:x}] of switch Lid {} guid 0x{:016x} (router {r}):",
        switch_lid(r),
        SWITCH_GUID_BASE + r as u64
    );
    out.push_str("  Lid  Out   Destination\n       Port     Info\n");
    for &(lid, port, owner) in lids {
        let dest = match owner {
            LidOwner::Router(d) => format!(
                "Switch portguid 0x{:016x}: 'router {d}'",
                SWITCH_GUID_BASE + d as u64
            ),
            LidOwner::Terminal(t) => format!(
                "Channel Adapter portguid 0x{:016x}: 'terminal {t}'",
                CA_GUID_BASE + t as u64
            ),
        };
        let _ = writeln!(out, "0x{lid:04x} {port:03} : ({dest})");
    }
    let _ = writeln!(out, "{} valid lids dumped", lids.len());
    out.push('\n');
}

/// InfiniBand port of our `port` (`port + 1`; IB switches have at most 254 ports).
pub(crate) fn ib_port(r: usize, port: usize) -> Result<u8> {
    u8::try_from(port + 1)
        .ok()
        .filter(|&p| p < 255)
        .ok_or_else(|| {
            Error::field(
                format!("router {r} port {port}"),
                "InfiniBand switches have at most 254 ports (IB port = port + 1)",
            )
        })
}

/// Per switch, the InfiniBand output port for every LID 1..=num_routers + num_terminals
/// (`entries[r][lid - 1]`).
pub(crate) fn lft_entries(topo: &Topology, table: &RoutingTable) -> Result<Vec<Vec<u8>>> {
    let n = table.num_routers;
    if n != topo.num_routers() {
        return Err(Error::field(
            "num_routers",
            format!("{n} but the topology has {}", topo.num_routers()),
        ));
    }
    let max_lid = n + topo.num_terminals();
    if max_lid > MAX_UNICAST_LID {
        return Err(Error::field(
            "table",
            format!(
                "{n} switches and {} channel adapters need {max_lid} LIDs; InfiniBand has {MAX_UNICAST_LID} unicast LIDs",
                topo.num_terminals()
            ),
        ));
    }
    let next = destination_next_hops(table)?;
    let mut entries = vec![Vec::with_capacity(max_lid); n];
    for (r, row) in entries.iter_mut().enumerate() {
        for d in 0..n {
            row.push(if d == r {
                0
            } else {
                ib_port(r, usize::from(next[r * n + d]))?
            });
        }
        for t in &topo.terminals {
            row.push(if t.router == r {
                ib_port(r, t.port)?
            } else {
                ib_port(r, usize::from(next[r * n + t.router]))?
            });
        }
        debug_assert_eq!(row.len(), terminal_lid(n, topo.num_terminals()) - 1);
    }
    Ok(entries)
}

/// Algorithms whose first-choice path in an empty network is the path every packet takes
/// (no adaptivity, no random intermediate): their walked table is exact.
pub(crate) const DETERMINISTIC_ALGORITHMS: &[&str] = &["dor", "min", "dfsssp", "updown"];

/// The table of a deterministic routing function: for every ordered router pair, the path
/// [`walk_packet`] takes between the first terminals of the two routers. Errors when a router
/// has no terminal (there is nothing to walk from) or the walk fails.
pub fn table_from_routing(
    routing: &dyn RoutingFunction,
    topo: &Topology,
    num_vcs: usize,
    origin: PathOrigin,
) -> Result<(RoutingTable, Vec<Option<PathOrigin>>)> {
    let table = crate::routing::table::route::table_from_routing(routing, topo, num_vcs)?;
    let origins = vec![Some(origin); table.num_pairs()];
    Ok((table, origins))
}

/// Metadata for a walked table: the algorithm and the VC count it was walked with.
pub(crate) fn walked_metadata(topo: &Topology, algorithm: &str, num_vcs: usize) -> TableMetadata {
    let mut metadata = Map::new();
    metadata.insert("algorithm".into(), Value::from(algorithm));
    metadata.insert("num_vcs".into(), Value::from(num_vcs));
    metadata.insert(
        "source".into(),
        Value::from("first-choice walk in an empty network"),
    );
    TableMetadata {
        topology: topo.name.clone(),
        metadata,
        ..TableMetadata::default()
    }
}

#[cfg(test)]
#[path = "routes_tests.rs"]
mod tests;
