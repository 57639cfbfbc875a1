//! Topology export: fabricopt JSON, Graphviz DOT and BookSim anynet. See
//! `docs/formats.md` (Topology files).
//!
//! Every writer returns the text and warnings naming what the format could not express; the
//! JSON file is complete (reading it back gives the same topology).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::Result;
use crate::topology::format_json::TopologyFile;
use crate::topology::{Endpoint, LinkKind, Topology};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyFormat {
    Json,
    Dot,
    Anynet,
}

impl TopologyFormat {
    /// The usual file extension (without the dot).
    pub fn extension(self) -> &'static str {
        match self {
            TopologyFormat::Json => "json",
            TopologyFormat::Dot => "dot",
            TopologyFormat::Anynet => "anynet",
        }
    }
}

/// Writes `topo` to `path` (atomically: a temporary file in the same directory renamed over
/// `path`); returns warnings (e.g. what a format cannot express).
pub fn write_topology(topo: &Topology, format: TopologyFormat, path: &Path) -> Result<Vec<String>> {
    let (text, warnings) = to_format_string(topo, format);
    crate::files::write_atomically(path, text.as_bytes())?;
    Ok(warnings)
}

/// The file contents for `format`, with warnings.
pub(crate) fn to_format_string(topo: &Topology, format: TopologyFormat) -> (String, Vec<String>) {
    match format {
        TopologyFormat::Json => to_json_string(topo),
        TopologyFormat::Dot => to_dot_string(topo),
        TopologyFormat::Anynet => to_anynet_string(topo),
    }
}

/// The fabricopt topology JSON (pretty-printed, one router, terminal or link per line).
pub fn to_json_string(topo: &Topology) -> (String, Vec<String>) {
    let (file, warnings) = TopologyFile::from_topology(topo);
    (file.to_pretty_string(), warnings)
}

/// A DOT string literal.
fn dot_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn dot_end(e: Endpoint) -> String {
    match e {
        Endpoint::Router { router, .. } => format!("\"r{router}\""),
        Endpoint::Terminal { terminal } => format!("\"t{terminal}\""),
    }
}

fn describe_end(e: Endpoint) -> String {
    match e {
        Endpoint::Router { router, port } => format!("router {router} port {port}"),
        Endpoint::Terminal { terminal } => format!("terminal {terminal}"),
    }
}

/// An undirected Graphviz graph: node `"rN"` per router (labelled N), a small point `"tN"` per
/// terminal, one edge per link (parallel links as separate edges, in link id order). Local
/// links are solid black, global links dashed blue, terminal links dotted grey; latencies other
/// than 1 are edge labels, and every edge's tooltip gives kind, ports, latency and bandwidth.
pub fn to_dot_string(topo: &Topology) -> (String, Vec<String>) {
    let mut out = String::new();
    let _ = writeln!(out, "graph {} {{", dot_quote(&topo.name));
    let _ = writeln!(
        out,
        "  // fabricopt topology: {} routers, {} terminals, {} links",
        topo.num_routers(),
        topo.num_terminals(),
        topo.links.len()
    );
    out.push_str("  graph [overlap=false, splines=true];\n");
    out.push_str("  node [shape=circle, fontsize=10];\n");
    for (r, router) in topo.routers.iter().enumerate() {
        let _ = writeln!(
            out,
            "  \"r{r}\" [label=\"{r}\", tooltip=\"router {r} ({} ports)\"];",
            router.ports.len()
        );
    }
    for t in 0..topo.terminals.len() {
        let _ = writeln!(
            out,
            "  \"t{t}\" [shape=point, width=0.08, tooltip=\"terminal {t}\"];"
        );
    }
    for (id, l) in topo.links.iter().enumerate() {
        let style = match l.kind {
            LinkKind::Local => "style=solid, color=black",
            LinkKind::Global => "style=dashed, color=blue",
            LinkKind::Terminal => "style=dotted, color=gray50",
        };
        let label = if l.params.latency != 1 {
            format!(", label=\"{}\"", l.params.latency)
        } else {
            String::new()
        };
        let tooltip = format!(
            "link {id} ({}): {} to {}, latency {}, bandwidth {}",
            l.kind.name(),
            describe_end(l.ends[0]),
            describe_end(l.ends[1]),
            l.params.latency,
            l.params.bandwidth
        );
        let _ = writeln!(
            out,
            "  {} -- {} [{style}{label}, tooltip={}];",
            dot_end(l.ends[0]),
            dot_end(l.ends[1]),
            dot_quote(&tooltip)
        );
    }
    out.push_str("}\n");
    (out, Vec::new())
}

/// A BookSim2 anynet file: one line per router,
/// `router R node T1 [lat] ... router S1 LAT router S2 LAT ...`, nodes being the router's
/// terminals (node id = terminal id, latency written when not 1) and routers its distinct
/// neighbours in ascending id with the link latency (each link appears on both routers' lines).
///
/// Warnings: parallel links (collapsed into one; the lowest link id gives the latency), link
/// kinds (all read back as local), bandwidths other than 1 (not expressible).
pub fn to_anynet_string(topo: &Topology) -> (String, Vec<String>) {
    let n = topo.num_routers();
    let mut warnings = Vec::new();
    let mut nodes: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for (t, term) in topo.terminals.iter().enumerate() {
        let latency = topo.links.get(term.link).map_or(1, |l| l.params.latency);
        if let Some(list) = nodes.get_mut(term.router) {
            list.push((t, latency));
        }
    }
    let mut neighbours: Vec<BTreeMap<usize, u32>> = vec![BTreeMap::new(); n];
    let (mut collapsed, mut self_loops, mut global, mut bandwidth) = (0, 0, 0, 0);
    for l in &topo.links {
        if l.params.bandwidth != 1.0 {
            bandwidth += 1;
        }
        let [
            Endpoint::Router { router: a, .. },
            Endpoint::Router { router: b, .. },
        ] = l.ends
        else {
            continue;
        };
        if l.kind == LinkKind::Global {
            global += 1;
        }
        if a == b {
            self_loops += 1;
            continue;
        }
        if neighbours[a].contains_key(&b) {
            collapsed += 1;
            continue;
        }
        neighbours[a].insert(b, l.params.latency);
        neighbours[b].insert(a, l.params.latency);
    }
    if collapsed > 0 {
        warnings.push(format!(
            "anynet cannot express parallel links: {collapsed} parallel links were collapsed into the first link between the same routers"
        ));
    }
    if self_loops > 0 {
        warnings.push(format!(
            "anynet cannot express a link from a router to itself: {self_loops} such links were left out"
        ));
    }
    if global > 0 {
        warnings.push(format!(
            "anynet has no link kinds: {global} global links will read back as local"
        ));
    }
    if bandwidth > 0 {
        warnings.push(format!(
            "anynet has no bandwidths: {bandwidth} links with a bandwidth other than 1 flit/cycle were written without it"
        ));
    }
    let mut out = String::new();
    for r in 0..n {
        let _ = write!(out, "router {r}");
        for &(t, latency) in &nodes[r] {
            let _ = write!(out, " node {t}");
            if latency != 1 {
                let _ = write!(out, " {latency}");
            }
        }
        for (&s, &latency) in &neighbours[r] {
            let _ = write!(out, " router {s} {latency}");
        }
        out.push('\n');
    }
    (out, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::LinkParams;
    use crate::topology::generators::{cartesian, complete};

    #[test]
    fn dot_has_one_edge_per_link_and_quotes_names() {
        let mut t = cartesian(&[3, 2], true, 1, &LinkParams::default()).unwrap();
        t.name = "say \"hi\"".into();
        let (dot, warnings) = to_dot_string(&t);
        assert!(warnings.is_empty());
        assert!(dot.starts_with("graph \"say \\\"hi\\\"\" {\n"), "{dot}");
        assert_eq!(dot.matches(" -- ").count(), t.links.len());
        assert_eq!(dot.matches('{').count(), dot.matches('}').count());
        assert!(dot.ends_with("}\n"));
    }

    #[test]
    fn anynet_lists_both_directions_and_warns_about_parallel_links() {
        // A torus of radix 2 has two parallel links between neighbours along that dimension.
        let t = cartesian(&[2, 3], true, 1, &LinkParams::default()).unwrap();
        let (text, warnings) = to_anynet_string(&t);
        assert_eq!(text.lines().count(), 6);
        assert_eq!(
            text.lines().next().unwrap(),
            "router 0 node 0 router 1 1 router 2 1 router 4 1"
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("3 parallel links"), "{warnings:?}");
    }

    #[test]
    fn anynet_of_a_complete_graph_has_no_warnings() {
        let t = complete(4, 2, &LinkParams::default()).unwrap();
        let (text, warnings) = to_anynet_string(&t);
        assert!(warnings.is_empty());
        assert_eq!(
            text,
            "router 0 node 0 node 1 router 1 1 router 2 1 router 3 1\n\
             router 1 node 2 node 3 router 0 1 router 2 1 router 3 1\n\
             router 2 node 4 node 5 router 0 1 router 1 1 router 3 1\n\
             router 3 node 6 node 7 router 0 1 router 1 1 router 2 1\n"
        );
    }

    #[test]
    fn writes_atomically_and_reports_io_errors_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        let t = complete(3, 1, &LinkParams::default()).unwrap();
        write_topology(&t, TopologyFormat::Json, &path).unwrap();
        write_topology(&t, TopologyFormat::Json, &path).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("t.json")]);
        let bad = dir.path().join("missing-dir").join("t.dot");
        let err = write_topology(&t, TopologyFormat::Dot, &bad)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(&bad.display().to_string()), "{err}");
    }
}
