//! Topology file formats: JSON round trips, anynet and DOT export, edge-list and anynet import,
//! and one-line errors naming the file, the line or field, and the reason.

use std::path::{Path, PathBuf};

use fabricopt::export::topology::{
    TopologyFormat, to_anynet_string, to_dot_string, to_json_string, write_topology,
};
use fabricopt::topology::generators::{
    DragonflyArrangement, cartesian, complete, dragonfly, exanest, jellyfish,
};
use fabricopt::topology::import::{TopologyFileFormat, parse_topology, read_topology_file};
use fabricopt::topology::{
    ChannelParams, Endpoint, LinkKind, LinkParams, Router, Shape, Terminal, Topology,
};

fn params() -> LinkParams {
    LinkParams {
        local: ChannelParams {
            latency: 2,
            bandwidth: 1.0,
        },
        global: ChannelParams {
            latency: 10,
            bandwidth: 0.5,
        },
        terminal: ChannelParams {
            latency: 1,
            bandwidth: 2.0,
        },
    }
}

/// Everything but the symmetry (which an import never claims).
fn assert_same(a: &Topology, b: &Topology) {
    assert_eq!(a.name, b.name);
    assert_eq!(a.shape, b.shape);
    assert_eq!(a.routers, b.routers);
    assert_eq!(a.terminals, b.terminals);
    assert_eq!(a.links, b.links);
}

/// JSON export then import, both in memory and through a file.
fn json_round_trip(t: &Topology) {
    let (text, warnings) = to_json_string(t);
    assert!(warnings.is_empty(), "{warnings:?}");
    let back = parse_topology(&text, TopologyFileFormat::Json, Path::new("t.json")).unwrap();
    assert_same(t, &back);
    assert!(back.symmetry.is_none());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    assert!(
        write_topology(t, TopologyFormat::Json, &path)
            .unwrap()
            .is_empty()
    );
    assert_same(t, &read_topology_file(&path).unwrap());
}

#[test]
fn json_round_trip_mesh() {
    let t = cartesian(&[4, 3], false, 2, &params()).unwrap();
    // Mesh edges leave ports unconnected; they must survive.
    assert!(t.routers[0].ports.contains(&None));
    json_round_trip(&t);
}

#[test]
fn json_round_trip_torus_with_parallel_links() {
    let t = cartesian(&[2, 3, 2], true, 1, &params()).unwrap();
    let g = t.router_graph();
    assert!(g.num_links() > g.num_edges() as u64);
    json_round_trip(&t);
}

#[test]
fn json_round_trip_dragonfly() {
    let t = dragonfly(2, 4, 2, 9, DragonflyArrangement::Relative, &params()).unwrap();
    assert!(t.links_of_kind(LinkKind::Global) > 0);
    json_round_trip(&t);
}

#[test]
fn json_round_trip_exanest_with_parallel_links() {
    let t = exanest(2, 2, 2, &[4, 3, 2, 5], 3, &params()).unwrap();
    let g = t.router_graph();
    assert!(g.num_links() > g.num_edges() as u64, "needs parallel links");
    json_round_trip(&t);
}

#[test]
fn json_round_trip_jellyfish_and_complete() {
    json_round_trip(&jellyfish(30, 4, 2, 3, &params()).unwrap());
    json_round_trip(&complete(5, 1, &params()).unwrap());
}

#[test]
fn json_round_trip_keeps_unusual_bandwidths() {
    let mut t = complete(4, 1, &LinkParams::default()).unwrap();
    let values = [
        1.0 / 3.0,
        0.1,
        2.0 / 7.0,
        1e-3,
        123.456789,
        0.30000000000000004,
    ];
    for (i, l) in t.links.iter_mut().enumerate() {
        l.params.bandwidth = values[i % values.len()];
    }
    json_round_trip(&t);
}

#[test]
fn json_round_trip_keeps_a_link_order_with_terminal_links_last() {
    let t = complete(3, 2, &params()).unwrap();
    // Renumber: network links first, then terminal links.
    let order: Vec<usize> = (0..t.links.len())
        .filter(|&i| t.links[i].kind != LinkKind::Terminal)
        .chain((0..t.links.len()).filter(|&i| t.links[i].kind == LinkKind::Terminal))
        .collect();
    let mut new_id = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new;
    }
    let u = Topology {
        name: t.name.clone(),
        shape: Shape::Imported,
        routers: t
            .routers
            .iter()
            .map(|r| Router {
                ports: r.ports.iter().map(|p| p.map(|l| new_id[l])).collect(),
            })
            .collect(),
        terminals: t
            .terminals
            .iter()
            .map(|x| Terminal {
                link: new_id[x.link],
                ..x.clone()
            })
            .collect(),
        links: order.iter().map(|&old| t.links[old].clone()).collect(),
        symmetry: None,
    };
    u.validate().unwrap();
    let (text, _) = to_json_string(&u);
    assert!(text.contains("\"link\":"));
    json_round_trip(&u);
}

#[test]
fn json_accepts_short_hand_written_files() {
    let text = r#"{
        "terminals": [{"router": 0}, {"router": 2, "latency": 4}],
        "links": [
            {"a": 0, "b": 1},
            {"a": [1, 5], "b": [2], "kind": "global", "latency": 3, "bandwidth": 0.5},
            {"a": [2, 0], "b": 0}
        ]
    }"#;
    let t = parse_topology(text, TopologyFileFormat::Json, Path::new("dir/small.json")).unwrap();
    assert_eq!(t.name, "small");
    assert_eq!(t.shape, Shape::Imported);
    assert_eq!(t.num_routers(), 3);
    // Terminals take link ids 0 and 1; router 2's explicit port 0 goes to links[2], so its
    // terminal takes port 1 and links[1] port 2.
    assert_eq!(t.terminals[0].port, 0);
    assert_eq!(t.terminals[1].port, 1);
    assert_eq!(t.terminals[1].link, 1);
    assert_eq!(t.links[1].params.latency, 4);
    assert_eq!(t.routers[0].ports.len(), 3);
    assert_eq!(t.routers[1].ports.len(), 6);
    assert_eq!(t.routers[1].ports[5], Some(3));
    assert_eq!(t.routers[2].ports, vec![Some(4), Some(1), Some(3)]);
    assert_eq!(t.links[3].kind, LinkKind::Global);
    assert_eq!(
        t.links[3].params,
        ChannelParams {
            latency: 3,
            bandwidth: 0.5
        }
    );
    assert_eq!(t.links[2].kind, LinkKind::Local);
    assert_eq!(t.links[2].params, ChannelParams::default());
}

/// Latency of the first link between routers `a` and `b`.
fn latency_between(t: &Topology, a: usize, b: usize) -> Option<u32> {
    t.links.iter().find_map(|l| match l.ends {
        [
            Endpoint::Router { router: x, .. },
            Endpoint::Router { router: y, .. },
        ] if (x, y) == (a, b) || (x, y) == (b, a) => Some(l.params.latency),
        _ => None,
    })
}

fn anynet_round_trip(t: &Topology) -> Topology {
    let (text, _) = to_anynet_string(t);
    let back = parse_topology(&text, TopologyFileFormat::Anynet, Path::new("t.anynet")).unwrap();
    assert_eq!(t.router_graph(), back.router_graph());
    for (a, b, _) in t.router_graph().edges() {
        let (a, b) = (*a as usize, *b as usize);
        assert_eq!(latency_between(t, a, b), latency_between(&back, a, b));
    }
    assert_eq!(t.num_terminals(), back.num_terminals());
    for (x, y) in t.terminals.iter().zip(&back.terminals) {
        assert_eq!(x.router, y.router);
        assert_eq!(
            t.links[x.link].params.latency,
            back.links[y.link].params.latency
        );
    }
    back
}

#[test]
fn anynet_round_trip_keeps_router_graph_and_latencies() {
    let mut p = params();
    p.terminal.latency = 3;
    let mut plain = LinkParams::default();
    plain.local.latency = 4;
    plain.terminal.latency = 2;
    let (_, warnings) = to_anynet_string(&cartesian(&[4, 3], false, 2, &plain).unwrap());
    assert!(warnings.is_empty(), "{warnings:?}");
    let (_, warnings) = to_anynet_string(&cartesian(&[4, 3], false, 2, &p).unwrap());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("no bandwidths: 24 links"),
        "{warnings:?}"
    );
    anynet_round_trip(&cartesian(&[4, 3], false, 2, &p).unwrap());
    anynet_round_trip(&cartesian(&[3, 3], true, 1, &p).unwrap());
    anynet_round_trip(&jellyfish(30, 4, 2, 3, &p).unwrap());
    let df = dragonfly(2, 4, 2, 9, DragonflyArrangement::Absolute, &p).unwrap();
    let (_, warnings) = to_anynet_string(&df);
    assert!(
        warnings.iter().any(|w| w.contains("global links")),
        "{warnings:?}"
    );
    let back = anynet_round_trip(&df);
    assert_eq!(back.links_of_kind(LinkKind::Global), 0);
    // A complete graph's ports already follow BookSim's order: everything survives but names.
    let k = complete(5, 2, &p).unwrap();
    let back = anynet_round_trip(&k);
    assert_eq!(k.routers, back.routers);
    assert_eq!(k.terminals, back.terminals);
}

#[test]
fn anynet_collapses_parallel_links_with_a_warning() {
    let t = exanest(2, 2, 2, &[4, 3, 2, 5], 3, &params()).unwrap();
    let g = t.router_graph();
    let (text, warnings) = to_anynet_string(&t);
    let parallel = g.num_links() - g.num_edges() as u64;
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(&format!("{parallel} parallel links were collapsed"))),
        "{warnings:?}"
    );
    let back = parse_topology(&text, TopologyFileFormat::Anynet, Path::new("x.anynet")).unwrap();
    let bg = back.router_graph();
    assert_eq!(bg.num_links(), g.num_edges() as u64);
    assert_eq!(bg.edges().len(), g.edges().len());
}

#[test]
fn anynet_import_follows_booksim() {
    let text = "\
router 0 node 1 node 0 router 2 router 1 15
router 1 router 2 4   # comment
router 2 node 2 7 router 1 4
";
    let t = parse_topology(text, TopologyFileFormat::Anynet, Path::new("a.anynet")).unwrap();
    assert_eq!(t.name, "a");
    assert_eq!(t.num_routers(), 3);
    assert_eq!(t.num_terminals(), 3);
    // Nodes first in ascending id, then routers in ascending id.
    assert_eq!(t.terminals[0].port, 0);
    assert_eq!(t.terminals[1].port, 1);
    assert_eq!(t.terminals[2].router, 2);
    assert_eq!(t.links[t.terminals[2].link].params.latency, 7);
    assert!(matches!(
        t.peer(0, 2),
        Some(Endpoint::Router { router: 1, port: 0 })
    ));
    assert!(matches!(
        t.peer(0, 3),
        Some(Endpoint::Router { router: 2, port: 1 })
    ));
    // Declared in one direction only: that latency for the link.
    assert_eq!(latency_between(&t, 0, 1), Some(15));
    assert_eq!(latency_between(&t, 0, 2), Some(1));
    assert_eq!(latency_between(&t, 1, 2), Some(4));
    // Duplicates collapse.
    let t = parse_topology(
        "router 0 router 1 router 1\nrouter 1 router 0\n",
        TopologyFileFormat::Anynet,
        Path::new("d.anynet"),
    )
    .unwrap();
    assert_eq!(t.num_network_links(), 1);
}

#[test]
fn edge_list_import() {
    let text = "\
# two routers joined twice, a third one further away
routers 3
concentration 2

0 1
0 1 latency=3 kind=global bandwidth=0.5
1 2 latency=2   # trailing comment
";
    let t = parse_topology(text, TopologyFileFormat::EdgeList, Path::new("e.txt")).unwrap();
    assert_eq!(t.name, "e");
    assert_eq!(t.num_routers(), 3);
    assert_eq!(t.num_terminals(), 6);
    assert_eq!(t.terminals[3].router, 1);
    assert_eq!(t.terminals[3].port, 1);
    // Terminal links come first, then links in file order on ports 2, 3, ...
    assert_eq!(t.links[6].kind, LinkKind::Local);
    assert_eq!(t.links[7].kind, LinkKind::Global);
    assert_eq!(
        t.links[7].params,
        ChannelParams {
            latency: 3,
            bandwidth: 0.5
        }
    );
    assert_eq!(t.routers[0].ports, vec![Some(0), Some(1), Some(6), Some(7)]);
    assert_eq!(
        t.routers[1].ports,
        vec![Some(2), Some(3), Some(6), Some(7), Some(8)]
    );
    assert_eq!(t.routers[2].ports, vec![Some(4), Some(5), Some(8)]);
    assert_eq!(t.router_graph().links_between(0, 1), 2);
    // Without headers: routers = max id + 1, one terminal each.
    let t = parse_topology(
        "0 1\n1 2\n",
        TopologyFileFormat::EdgeList,
        Path::new("x.edges"),
    )
    .unwrap();
    assert_eq!((t.num_routers(), t.num_terminals()), (3, 3));
}

#[test]
fn dot_output_has_one_edge_per_link_and_balanced_braces() {
    let t = dragonfly(2, 4, 2, 9, DragonflyArrangement::Relative, &params()).unwrap();
    let (dot, warnings) = to_dot_string(&t);
    assert!(warnings.is_empty());
    assert!(dot.starts_with("graph \""));
    let mut depth = 0i32;
    for c in dot.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        assert!(depth >= 0);
    }
    assert_eq!(depth, 0);
    let edges: Vec<&str> = dot.lines().filter(|l| l.contains("--")).collect();
    assert_eq!(edges.len(), t.links.len());
    assert!(edges.iter().all(|l| l.matches("--").count() == 1));
    assert!(edges.iter().all(|l| l.trim_end().ends_with("];")));
    assert_eq!(
        edges.iter().filter(|l| l.contains("style=dashed")).count(),
        t.links_of_kind(LinkKind::Global)
    );
    assert_eq!(
        dot.lines()
            .filter(|l| l.trim_start().starts_with("\"r") && !l.contains("--"))
            .count(),
        t.num_routers()
    );
    // Parallel links stay separate edges.
    let torus = cartesian(&[2, 2], true, 0, &params()).unwrap();
    let (dot, _) = to_dot_string(&torus);
    assert_eq!(
        dot.matches("\"r0\" -- \"r1\"").count() + dot.matches("\"r1\" -- \"r0\"").count(),
        2
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.dot");
    write_topology(&torus, TopologyFormat::Dot, &path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), dot);
}

/// Writes `contents` to a file named `name` and returns the import error's text.
fn import_error(dir: &Path, name: &str, contents: &str) -> String {
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    let err = match read_topology_file(&path) {
        Ok(_) => panic!("{name} should not import:\n{contents}"),
        Err(e) => e.to_string(),
    };
    assert!(!err.contains('\n'), "not one line: {err}");
    assert!(err.contains(name), "does not name the file: {err}");
    err
}

#[test]
fn errors_name_the_file_the_place_and_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[(&str, &str, &[&str])] = &[
        // JSON
        ("syntax.json", "{\"links\": [", &["line 1 column", "EOF"]),
        (
            "number.json",
            r#"{"links": [{"a": [0, "x"], "b": [1, 0]}]}"#,
            &["links[0].a", "invalid type"],
        ),
        (
            "kind.json",
            r#"{"links": [{"a": 0, "b": 1, "kind": "optical"}]}"#,
            &["links[0].kind", "unknown variant `optical`"],
        ),
        (
            "field.json",
            r#"{"links": [{"a": 0, "b": 1, "latncy": 2}]}"#,
            &["links[0]", "unknown field `latncy`"],
        ),
        (
            "twice.json",
            r#"{"links": [{"a": [0, 1], "b": 1}, {"a": [0, 1], "b": 2}]}"#,
            &["links[1].a", "router 0 port 1 is used twice", "links[0].a"],
        ),
        (
            "range.json",
            r#"{"routers": [{}, {}], "links": [{"a": 0, "b": 5}]}"#,
            &["links[0].b", "router 5 is out of range", "2 routers"],
        ),
        (
            "port.json",
            r#"{"routers": [{"ports": 2}, {}], "links": [{"a": [0, 2], "b": 1}]}"#,
            &[
                "links[0].a",
                "port 2 of router 0 is out of range (routers[0].ports = 2)",
            ],
        ),
        (
            "full.json",
            r#"{"routers": [{"ports": 1}, {}, {}], "links": [{"a": 0, "b": 1}, {"a": 0, "b": 2}]}"#,
            &[
                "links[1].a",
                "router 0 has no free port left (routers[0].ports = 1)",
            ],
        ),
        (
            "latency.json",
            r#"{"links": [{"a": 0, "b": 1, "latency": 0}]}"#,
            &["links[0].latency", "at least 1 cycle"],
        ),
        (
            "bandwidth.json",
            r#"{"links": [{"a": 0, "b": 1, "bandwidth": -1}]}"#,
            &["links[0].bandwidth", "positive"],
        ),
        (
            "format.json",
            r#"{"format": "other", "links": []}"#,
            &["format", "fabricopt-topology"],
        ),
        (
            "version.json",
            r#"{"version": 2, "links": []}"#,
            &["version", "unsupported version 2"],
        ),
        (
            "loop.json",
            r#"{"links": [{"a": [0, 0], "b": [0, 1]}]}"#,
            &["links[0]", "self-loops"],
        ),
        (
            "tlink.json",
            r#"{"terminals": [{"router": 0, "link": 0}, {"router": 1}], "links": [{"a": 0, "b": 1}]}"#,
            &["terminals[1].link", "every terminal or for none"],
        ),
        (
            "split.json",
            r#"{"links": [{"a": 0, "b": 1}, {"a": 2, "b": 3}]}"#,
            &["the router graph is disconnected: 2 components; router 0 cannot reach router 2"],
        ),
        ("empty.json", "{}", &["defines no routers"]),
        // Edge lists
        ("number.txt", "0 1\n1 x\n", &["line 2", "bad router id `x`"]),
        (
            "kind.txt",
            "0 1\n1 2\n2 0 kind=optical\n",
            &["line 3", "unknown link kind `optical`"],
        ),
        (
            "key.edges",
            "0 1 colour=red\n",
            &["line 1", "unknown key `colour`"],
        ),
        (
            "latency.txt",
            "0 1 latency=0\n",
            &["line 1", "at least 1 cycle"],
        ),
        (
            "bandwidth.txt",
            "0 1 bandwidth=fast\n",
            &["line 1", "bad bandwidth `fast`"],
        ),
        ("loop.txt", "0 1\n2 2\n", &["line 2", "self-loops"]),
        (
            "range.txt",
            "routers 3\n0 1\n1 5\n",
            &[
                "line 3",
                "router 5 is out of range",
                "line 1 declares 3 routers",
            ],
        ),
        (
            "header.txt",
            "0 1\nconcentration 2\n",
            &["line 2", "must come before the first link"],
        ),
        ("kv.txt", "0 1 latency\n", &["line 1", "expected key=value"]),
        (
            "split.txt",
            "routers 4\n0 1\n2 3\n",
            &["disconnected: 2 components; router 0 cannot reach router 2"],
        ),
        (
            "isolated.txt",
            "routers 3\n0 1\n",
            &["disconnected: 2 components; router 0 cannot reach router 2"],
        ),
        // Anynet
        (
            "twice.anynet",
            "router 0 node 0 router 1\nrouter 1 node 0\n",
            &[
                "line 2",
                "node 0 is connected to two routers: 0 (line 1) and 1",
            ],
        ),
        (
            "number.anynet",
            "router 0 router one\n",
            &["line 1", "bad router id `one`"],
        ),
        (
            "token.anynet",
            "router 0 switch 1\n",
            &["line 1", "expected `router` or `node`, found `switch`"],
        ),
        (
            "end.anynet",
            "router 0 router 1 router\n",
            &["line 1", "needs an id"],
        ),
        (
            "nodes.anynet",
            "router 0 node 0 node 2 router 1\n",
            &["node 1 never appears"],
        ),
        (
            "routers.anynet",
            "router 0 router 2\n",
            &["router 1 never appears"],
        ),
        (
            "latency.anynet",
            "router 0 router 1 3\nrouter 1 router 0 5\n",
            &[
                "line 2",
                "channel 1 -> 0 has latency 5",
                "line 1",
                "one latency",
            ],
        ),
        (
            "nn.anynet",
            "node 0 node 1\n",
            &["line 1", "cannot connect node 0 to node 1"],
        ),
        (
            "loop.anynet",
            "router 0 router 1\nrouter 1 router 1\n",
            &["line 2", "self-loops"],
        ),
        (
            "split.anynet",
            "router 0 router 1\nrouter 2 router 3\n",
            &["disconnected: 2 components; router 0 cannot reach router 2"],
        ),
        (
            "alone.anynet",
            "router 0 router 1\nrouter 2\n",
            &["disconnected: 2 components; router 0 cannot reach router 2"],
        ),
        // Dispatcher
        (
            "topology.xml",
            "<graph/>",
            &[
                "unknown topology file extension `.xml`",
                ".json",
                ".edges",
                ".anynet",
            ],
        ),
    ];
    for (name, contents, expected) in cases {
        let err = import_error(d, name, contents);
        for e in *expected {
            assert!(err.contains(e), "{name}: `{err}` lacks `{e}`");
        }
    }
    let missing = d.join("missing.json");
    let err = read_topology_file(&missing).unwrap_err().to_string();
    assert!(err.starts_with(&missing.display().to_string()), "{err}");
    assert!(!err.contains('\n'));
}

/// Deterministic mutations of valid files never make an importer panic.
#[test]
fn mangled_files_give_errors_not_panics() {
    let (json, _) =
        to_json_string(&dragonfly(1, 2, 1, 3, DragonflyArrangement::Absolute, &params()).unwrap());
    let (anynet, _) = to_anynet_string(&complete(4, 2, &params()).unwrap());
    let edges =
        "routers 4\nconcentration 2\n0 1 latency=2\n1 2 kind=global\n2 3 bandwidth=0.5\n3 0\n";
    let pieces = [
        "",
        " ",
        "-1",
        "0",
        "1",
        "99999999999999999999",
        "4294967296",
        "x",
        "#",
        "\n",
        "[",
        "]",
        "{",
        "}",
        ",",
        "\"",
        ":",
        "router",
        "node",
        "=",
        "kind=",
        "latency=0",
        "1e400",
        "null",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |bound: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % bound.max(1)
    };
    for (text, format, name) in [
        (json.as_str(), TopologyFileFormat::Json, "m.json"),
        (anynet.as_str(), TopologyFileFormat::Anynet, "m.anynet"),
        (edges, TopologyFileFormat::EdgeList, "m.txt"),
    ] {
        for _ in 0..400 {
            let mut s = text.to_string();
            for _ in 0..1 + next(3) {
                let start = next(s.len() + 1);
                let end = (start + next(6)).min(s.len());
                let piece = pieces[next(pieces.len())];
                s.replace_range(start..end, piece);
            }
            if let Err(e) = parse_topology(&s, format, Path::new(name)) {
                let e = e.to_string();
                assert!(e.starts_with(name) && !e.contains('\n'), "{e}");
            }
        }
    }
}
