//! Routing-table export: fabricopt routes JSON, a per-router forwarding CSV, the path list
//! the seed fed to BookSim's table routing, and InfiniBand OpenSM linear forwarding tables.
//! The readers are in `routing::table::io`; the formats are documented in docs/formats.md
//! (Routing tables).
//!
//! Also builds the table a deterministic routing function of the registry uses
//! ([`table_from_routing`]), so that classical algorithms can be exported too.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::routing::RoutingFunction;
use crate::routing::paths::walk_packet;
use crate::routing::table::io::{
    CA_GUID_BASE, CSV_HEADER, DEFAULT_VC_CLASS, MAX_UNICAST_LID, PathEntry, ROUTES_FORMAT,
    ROUTES_VERSION, RoutesFile, SWITCH_GUID_BASE, TableMetadata, lowest_ports, switch_lid,
    terminal_lid,
};
use crate::routing::table::{PathOrigin, RouterPath, RoutingTable, pair_of};
use crate::topology::Topology;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutesFormat {
    Json,
    Csv,
    Paths,
    Lft,
}

impl RoutesFormat {
    /// The usual file extension (without the dot).
    pub fn extension(self) -> &'static str {
        match self {
            RoutesFormat::Json => "json",
            RoutesFormat::Csv => "csv",
            RoutesFormat::Paths => "paths",
            RoutesFormat::Lft => "lft",
        }
    }
}

/// Writes the table in `format` to `path` atomically; returns warnings (what the format
/// cannot express).
pub fn write_routes(
    topo: &Topology,
    table: &RoutingTable,
    meta: &TableMetadata,
    format: RoutesFormat,
    path: &Path,
) -> Result<Vec<String>> {
    let (text, warnings) = to_format_string(topo, table, meta, format)?;
    super::write_atomically(path, text.as_bytes())?;
    Ok(warnings)
}

/// The file contents for `format`, with warnings. Fails for LFTs when the table is not
/// destination-based and when a CSV VC class cannot be written.
pub fn to_format_string(
    topo: &Topology,
    table: &RoutingTable,
    meta: &TableMetadata,
    format: RoutesFormat,
) -> Result<(String, Vec<String>)> {
    Ok(match format {
        RoutesFormat::Json => (to_json_string(table, meta), Vec::new()),
        RoutesFormat::Csv => (to_csv_string(table, &meta.vc_class)?, Vec::new()),
        RoutesFormat::Paths => to_path_list_string(topo, table),
        RoutesFormat::Lft => (to_lft_string(topo, table)?, Vec::new()),
    })
}

/// The routes JSON: the header fields, then one path per line (so that diffs stay readable),
/// pairs in [`crate::routing::table::pair_index`] order.
pub fn to_json_string(table: &RoutingTable, meta: &TableMetadata) -> String {
    let file = RoutesFile {
        format: ROUTES_FORMAT.into(),
        version: ROUTES_VERSION,
        topology: meta.topology.clone(),
        num_routers: table.num_routers,
        vc_classes: meta.vc_classes.clone(),
        metadata: meta.metadata.clone(),
        paths: Vec::new(),
    };
    // Pretty-print the header, then splice in compact path objects, one per line.
    let mut head = serde_json::to_string_pretty(&file).expect("JSON values serialise");
    let cut = head
        .rfind("\"paths\": []")
        .expect("the paths field is serialised last");
    head.truncate(cut);
    let mut out = head;
    out.push_str("\"paths\": [\n");
    let n = table.num_routers;
    for (i, p) in table.paths.iter().enumerate() {
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
        out.push_str("    ");
        out.push_str(&serde_json::to_string(&entry).expect("JSON values serialise"));
        out.push_str(if i + 1 < table.paths.len() {
            ",\n"
        } else {
            "\n"
        });
    }
    out.push_str("  ]\n}\n");
    out
}

/// The per-router forwarding CSV: one row per (path, hop) — at `router`, a packet of
/// (`source`, `destination`) router at hop index `hop` leaves by `output_port` on VC class
/// `vc_class` (`vc_class[pair]`, or `table` when not given). Rows are sorted by router, then
/// source, destination and hop, so that each router's forwarding state is one block.
pub fn to_csv_string(table: &RoutingTable, vc_class: &[Option<String>]) -> Result<String> {
    let n = table.num_routers;
    let mut rows: Vec<(u32, usize, usize, usize, u16, &str)> = Vec::new();
    for (pair, p) in table.paths.iter().enumerate() {
        let (s, d) = pair_of(n, pair);
        let class = vc_class
            .get(pair)
            .and_then(|c| c.as_deref())
            .unwrap_or(DEFAULT_VC_CLASS);
        // No quoting: classes are identifiers, so refuse what would need it.
        if class.is_empty() || class.contains([',', '"', '\n', '\r']) || class.trim() != class {
            return Err(Error::field(
                format!("vc_class of pair {s} -> {d}"),
                format!(
                    "{class:?} cannot be written to CSV (needs a non-empty name without commas, quotes, line breaks or surrounding spaces)"
                ),
            ));
        }
        for (hop, (&r, &port)) in p.routers.iter().zip(&p.ports).enumerate() {
            rows.push((r, s, d, hop, port, class));
        }
    }
    rows.sort_unstable();
    let mut out = String::with_capacity(24 * rows.len() + CSV_HEADER.len() + 1);
    out.push_str(CSV_HEADER);
    out.push('\n');
    for (r, s, d, hop, port, class) in rows {
        let _ = writeln!(out, "{r},{s},{d},{hop},{port},{class}");
    }
    Ok(out)
}

/// The path list: a `#` header naming the topology, then `src dst r0 r1 ... rk` per ordered
/// router pair in pair order. Router-level only, so reading it back takes the lowest port
/// between consecutive routers; paths that take another of several parallel links are
/// counted in a warning (their port choice is lost).
pub fn to_path_list_string(topo: &Topology, table: &RoutingTable) -> (String, Vec<String>) {
    let n = table.num_routers;
    let lowest = lowest_ports(topo);
    let mut other_port = 0usize;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# fabricopt routes: topology {}, {n} routers, {} paths",
        one_line(&topo.name),
        table.paths.len()
    );
    out.push_str("# src dst r0 r1 ... rk (router ids; r0 = src, rk = dst)\n");
    for (pair, p) in table.paths.iter().enumerate() {
        let (s, d) = pair_of(n, pair);
        let _ = write!(out, "{s} {d}");
        for r in &p.routers {
            let _ = write!(out, " {r}");
        }
        out.push('\n');
        let takes_other = p
            .routers
            .windows(2)
            .zip(&p.ports)
            .any(|(w, &port)| lowest.get(&(w[0], w[1])) != Some(&port));
        other_port += usize::from(takes_other);
    }
    let mut warnings = Vec::new();
    if other_port > 0 {
        warnings.push(format!(
            "a path list names routers, not ports: {other_port} paths take a parallel link other than the lowest-numbered one and will read back on the lowest"
        ));
    }
    (out, warnings)
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The single next port of every (router, destination router), `next[r * n + d]`
/// (`u16::MAX` on the diagonal), or an error naming the first (router, destination) pair
/// that two paths leave by different ports.
pub fn destination_next_hops(table: &RoutingTable) -> Result<Vec<u16>> {
    let n = table.num_routers;
    let mut next = vec![u16::MAX; n * n];
    // The pair that set each slot, to name both paths in the error.
    let mut set_by = vec![usize::MAX; n * n];
    for (pair, p) in table.paths.iter().enumerate() {
        let d = p.destination();
        for (&r, &port) in p.routers.iter().zip(&p.ports) {
            let slot = r as usize * n + d;
            if next[slot] == u16::MAX {
                next[slot] = port;
                set_by[slot] = pair;
            } else if next[slot] != port {
                let (s1, _) = pair_of(n, set_by[slot]);
                let (s2, _) = pair_of(n, pair);
                return Err(Error::field(
                    "table",
                    format!(
                        "not destination-based, so it cannot be an InfiniBand LFT: at router {r} \
                         towards router {d} the path from {s1} leaves by port {} and the path from {s2} by port {port}",
                        next[slot]
                    ),
                ));
            }
        }
    }
    Ok(next)
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
pub fn to_lft_string(topo: &Topology, table: &RoutingTable) -> Result<String> {
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
        let _ = writeln!(
            out,
            "Unicast lids [0x0-0x{max_lid:x}] of switch Lid {} guid 0x{:016x} (router {r}):",
            switch_lid(r),
            SWITCH_GUID_BASE + r as u64
        );
        out.push_str("  Lid  Out   Destination\n       Port     Info\n");
        for (i, &port) in row.iter().enumerate() {
            let lid = i + 1;
            let dest = if lid <= n {
                let d = lid - 1;
                format!(
                    "Switch portguid 0x{:016x}: 'router {d}'",
                    SWITCH_GUID_BASE + d as u64
                )
            } else {
                let t = lid - n - 1;
                format!(
                    "Channel Adapter portguid 0x{:016x}: 'terminal {t}'",
                    CA_GUID_BASE + t as u64
                )
            };
            let _ = writeln!(out, "0x{lid:04x} {port:03} : ({dest})");
        }
        let _ = writeln!(out, "{} valid lids dumped", row.len());
        out.push('\n');
    }
    Ok(out)
}

/// Per switch, the InfiniBand output port for every LID 1..=num_routers + num_terminals
/// (`entries[r][lid - 1]`).
pub fn lft_entries(topo: &Topology, table: &RoutingTable) -> Result<Vec<Vec<u8>>> {
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
    let ib_port = |r: usize, port: usize| -> Result<u8> {
        u8::try_from(port + 1)
            .ok()
            .filter(|&p| p < 255)
            .ok_or_else(|| {
                Error::field(
                    format!("router {r} port {port}"),
                    "InfiniBand switches have at most 254 ports (IB port = port + 1)",
                )
            })
    };
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
pub const DETERMINISTIC_ALGORITHMS: &[&str] = &["dor", "min", "dfsssp", "updown"];

/// The table of a deterministic routing function: for every ordered router pair, the path
/// [`walk_packet`] takes between the first terminals of the two routers. Errors when a router
/// has no terminal (there is nothing to walk from) or the walk fails.
pub fn table_from_routing(
    routing: &dyn RoutingFunction,
    topo: &Topology,
    num_vcs: usize,
    origin: PathOrigin,
) -> Result<(RoutingTable, Vec<Option<PathOrigin>>)> {
    let n = topo.num_routers();
    if n < 2 {
        return Err(Error::field(
            "topology",
            "a routing table needs at least 2 routers",
        ));
    }
    let mut first_terminal = vec![None; n];
    for (t, term) in topo.terminals.iter().enumerate() {
        first_terminal[term.router].get_or_insert(t);
    }
    if let Some(r) = first_terminal.iter().position(Option::is_none) {
        return Err(Error::field(
            "topology",
            format!("router {r} has no terminal, so no packet can be walked from or to it"),
        ));
    }
    let max_hops = 4 * n + 16;
    let mut paths = Vec::with_capacity(n * (n - 1));
    for pair in 0..n * (n - 1) {
        let (s, d) = pair_of(n, pair);
        let (ts, td) = (
            first_terminal[s].expect("checked"),
            first_terminal[d].expect("checked"),
        );
        let hops = walk_packet(routing, topo, ts, td, num_vcs, max_hops).map_err(|e| {
            Error::field(
                "routing",
                format!(
                    "`{}` fails from router {s} to router {d}: {e:?}",
                    routing.name()
                ),
            )
        })?;
        // The last hop ejects to the terminal; the rest are router-to-router.
        let network = &hops[..hops.len() - 1];
        let mut routers: Vec<u32> = network.iter().map(|h| h.0 as u32).collect();
        routers.push(d as u32);
        paths.push(RouterPath {
            routers,
            ports: network.iter().map(|h| h.1 as u16).collect(),
        });
    }
    let table = RoutingTable {
        num_routers: n,
        paths,
    };
    table.validate(topo)?;
    Ok((table, vec![Some(origin); n * (n - 1)]))
}

/// Metadata for a walked table: the algorithm and the VC count it was walked with.
pub fn walked_metadata(topo: &Topology, algorithm: &str, num_vcs: usize) -> TableMetadata {
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
