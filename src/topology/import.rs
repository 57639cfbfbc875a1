//! Reading topologies from files: fabricopt JSON (`.json`), edge lists (`.txt`, `.edges`) and
//! BookSim anynet (`.anynet`). See `docs/formats.md` (Topology files).
//!
//! Each format is parsed into a [`RawTopology`] (routers, terminals and links with optional
//! port numbers, each remembering where in the file it came from); [`RawTopology::build`] then
//! checks ids, connectivity and ports the same way for all formats, so that every error is one
//! line naming the file, the line or field, and the reason.

use std::path::Path;

use super::graph::RouterGraph;
use super::model::{
    ChannelParams, Endpoint, Link, LinkId, LinkKind, PortId, Router, RouterId, Shape, Terminal,
    Topology,
};
use crate::error::{Error, Result};

/// Most routers an imported topology may have (the largest generator's limit).
pub(crate) const MAX_ROUTERS: usize = 1 << 24;
/// Most ports one router may have.
pub(crate) const MAX_PORTS: usize = 1 << 16;
/// Most ports (connected or not) all routers together may have.
pub(crate) const MAX_TOTAL_PORTS: usize = 1 << 26;

/// The input formats, chosen by file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyFileFormat {
    /// `.json`: the fabricopt topology schema.
    Json,
    /// `.txt`, `.edges`: one link per line.
    EdgeList,
    /// `.anynet`: BookSim2's anynet network file.
    Anynet,
}

/// The extensions [`read_topology_file`] accepts, for messages.
pub(crate) const ACCEPTED_EXTENSIONS: &str =
    ".json (fabricopt JSON), .txt or .edges (edge list), .anynet (BookSim anynet)";

impl TopologyFileFormat {
    /// The format a file's extension (case-insensitive) names.
    pub(crate) fn from_path(path: &Path) -> Result<Self> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("json") => Ok(TopologyFileFormat::Json),
            Some("txt") | Some("edges") => Ok(TopologyFileFormat::EdgeList),
            Some("anynet") => Ok(TopologyFileFormat::Anynet),
            Some(other) => Err(Error::File {
                path: path.to_path_buf(),
                reason: format!(
                    "unknown topology file extension `.{other}` (accepted: {ACCEPTED_EXTENSIONS})"
                ),
            }),
            None => Err(Error::File {
                path: path.to_path_buf(),
                reason: format!(
                    "the file name has no extension to tell its format (accepted: {ACCEPTED_EXTENSIONS})"
                ),
            }),
        }
    }
}

/// Reads a topology file, choosing the format by extension.
pub fn read_topology_file(path: &Path) -> Result<Topology> {
    let format = TopologyFileFormat::from_path(path)?;
    let text = crate::cluster::read_input(path).map_err(|e| Error::io(path, e))?;
    parse_topology(&text, format, path)
}

/// Parses `text` in `format`; `path` names the file in errors (and gives the default name).
pub fn parse_topology(text: &str, format: TopologyFileFormat, path: &Path) -> Result<Topology> {
    let raw = match format {
        TopologyFileFormat::Json => super::import_json::parse(text, path)?,
        TopologyFileFormat::EdgeList => super::import_edges::parse(text, path)?,
        TopologyFileFormat::Anynet => super::import_anynet::parse(text, path)?,
    };
    raw.build(path)
}

/// The name an imported topology gets when the file does not give one.
pub(crate) fn default_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".to_string())
}

/// Where an item came from: a JSON field path (`links[3]`, sub-fields appended) or a text
/// location (`line 7`, sub-fields ignored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Loc {
    base: String,
    fields: bool,
}

impl Loc {
    pub(crate) fn field(base: impl Into<String>) -> Self {
        Loc {
            base: base.into(),
            fields: true,
        }
    }

    pub(crate) fn line(line: usize) -> Self {
        Loc {
            base: format!("line {line}"),
            fields: false,
        }
    }

    pub(crate) fn text(text: impl Into<String>) -> Self {
        Loc {
            base: text.into(),
            fields: false,
        }
    }

    pub(crate) fn at(&self, sub: &str) -> String {
        if self.fields && !sub.is_empty() {
            format!("{}.{sub}", self.base)
        } else {
            self.base.clone()
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct RawTerminal {
    pub router: RouterId,
    pub port: Option<PortId>,
    /// Explicit link id (JSON only).
    pub link: Option<LinkId>,
    pub params: ChannelParams,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub(crate) struct RawLink {
    /// `(router, port)` of `ends[0]` and `ends[1]`; a `None` port takes the lowest free one.
    pub ends: [(RouterId, Option<PortId>); 2],
    pub kind: LinkKind,
    pub params: ChannelParams,
    pub loc: Loc,
}

/// A parsed but not yet checked topology.
#[derive(Clone, Debug)]
pub(crate) struct RawTopology {
    pub name: String,
    pub shape: Shape,
    /// Declared router count and where it was declared; `None`: max id used + 1.
    pub routers: Option<(usize, Loc)>,
    /// Declared port count of router `i` (the list may be shorter than the router count).
    pub port_counts: Vec<Option<usize>>,
    /// Where `port_counts[i]` was declared, for messages (`routers[i].ports`).
    pub port_count_loc: fn(usize) -> String,
    pub terminals: Vec<RawTerminal>,
    pub links: Vec<RawLink>,
}

/// With more than 2L + 1 routers for L links some router has no link, so the graph cannot be
/// connected: refused from the links alone, before anything is sized by the router count (a
/// one-line edge list naming router 11110209 used to build an 11-million-router graph first;
/// found by fuzzing). The message names the lowest router without a link.
pub(crate) fn check_enough_links(n: usize, links: &[RawLink], path: &Path) -> Result<()> {
    if n <= 1 || n <= 2 * links.len() + 1 {
        return Ok(());
    }
    let mut linked: Vec<RouterId> = links
        .iter()
        .flat_map(|l| [l.ends[0].0, l.ends[1].0])
        .collect();
    linked.sort_unstable();
    linked.dedup();
    // The first id that differs from its index is missing (there are more ids than links).
    let lonely = linked
        .iter()
        .enumerate()
        .find(|&(i, &r)| i != r)
        .map_or(linked.len(), |(i, _)| i);
    Err(Error::File {
        path: path.to_path_buf(),
        reason: format!(
            "the router graph is disconnected: router {lonely} has no link ({n} routers, {} \
             links)",
            links.len()
        ),
    })
}

/// Which item holds a port, for "already used by" messages.
#[derive(Clone, Copy)]
enum Owner {
    Terminal(usize),
    LinkEnd(usize, usize),
}

const SIDE: [&str; 2] = ["a", "b"];

impl RawTopology {
    fn owner_loc(&self, owner: Owner) -> String {
        match owner {
            Owner::Terminal(t) => self.terminals[t].loc.at(""),
            Owner::LinkEnd(l, side) => self.links[l].loc.at(SIDE[side]),
        }
    }

    /// Checks everything and builds the topology (symmetry unknown).
    pub(crate) fn build(self, path: &Path) -> Result<Topology> {
        let parse = |loc: String, reason: String| Error::parse(path, loc, reason);
        let file = |reason: String| Error::File {
            path: path.to_path_buf(),
            reason,
        };

        // Router ids and count.
        let ids = self
            .terminals
            .iter()
            .map(|t| (t.router, t.loc.at("router")))
            .chain(
                self.links
                    .iter()
                    .flat_map(|l| (0..2).map(move |s| (l.ends[s].0, l.loc.at(SIDE[s])))),
            );
        let n = match &self.routers {
            Some((n, decl)) => {
                if *n > MAX_ROUTERS {
                    return Err(parse(
                        decl.at(""),
                        format!("{n} routers are too many (at most {MAX_ROUTERS})"),
                    ));
                }
                for (r, loc) in ids {
                    if r >= *n {
                        return Err(parse(
                            loc,
                            format!(
                                "router {r} is out of range: {} declares {n} routers (ids 0..={})",
                                decl.at(""),
                                n.saturating_sub(1)
                            ),
                        ));
                    }
                }
                *n
            }
            None => {
                let mut max = None;
                for (r, loc) in ids {
                    if r >= MAX_ROUTERS {
                        return Err(parse(
                            loc,
                            format!(
                                "router id {r} is too large (at most {} routers)",
                                MAX_ROUTERS
                            ),
                        ));
                    }
                    max = max.max(Some(r));
                }
                max.map_or(0, |m| m + 1)
            }
        };
        if n == 0 {
            return Err(file("the file defines no routers".into()));
        }
        for l in &self.links {
            if l.ends[0].0 == l.ends[1].0 {
                return Err(parse(
                    l.loc.at(""),
                    format!(
                        "the link connects router {} to itself; self-loops are not allowed",
                        l.ends[0].0
                    ),
                ));
            }
        }

        // Connectivity, before any per-port allocation.
        check_enough_links(n, &self.links, path)?;
        let graph =
            RouterGraph::from_edges(n, self.links.iter().map(|l| (l.ends[0].0, l.ends[1].0)));
        let comps = graph.components();
        if comps.len() > 1 {
            return Err(file(format!(
                "the router graph is disconnected: {} components; router {} cannot reach router {}",
                comps.len(),
                comps[0][0],
                comps[1][0]
            )));
        }

        // Declared port counts, and a bound on the ports needed before allocating them.
        let declared = |r: RouterId| self.port_counts.get(r).copied().flatten();
        let mut need = vec![0usize; n];
        for (r, count) in self.port_counts.iter().enumerate() {
            if let Some(c) = *count {
                if c > MAX_PORTS {
                    return Err(parse(
                        (self.port_count_loc)(r),
                        format!("{c} ports are too many (at most {MAX_PORTS})"),
                    ));
                }
                if r < n {
                    need[r] = c;
                }
            }
        }
        let ends = self
            .terminals
            .iter()
            .enumerate()
            .map(|(i, t)| (t.router, t.port, Owner::Terminal(i)))
            .chain(self.links.iter().enumerate().flat_map(|(i, l)| {
                (0..2).map(move |s| (l.ends[s].0, l.ends[s].1, Owner::LinkEnd(i, s)))
            }))
            .collect::<Vec<_>>();
        let mut auto = vec![0usize; n];
        for &(r, port, owner) in &ends {
            match port {
                Some(p) => {
                    let sub_loc = || match owner {
                        Owner::Terminal(t) => self.terminals[t].loc.at("port"),
                        Owner::LinkEnd(..) => self.owner_loc(owner),
                    };
                    if let Some(c) = declared(r) {
                        if p >= c {
                            return Err(parse(
                                sub_loc(),
                                format!(
                                    "port {p} of router {r} is out of range ({} = {c})",
                                    (self.port_count_loc)(r)
                                ),
                            ));
                        }
                    } else if p >= MAX_PORTS {
                        return Err(parse(
                            sub_loc(),
                            format!("port {p} is too large (at most {} ports)", MAX_PORTS),
                        ));
                    }
                    need[r] = need[r].max(p + 1);
                }
                None => auto[r] += 1,
            }
        }
        let total = need
            .iter()
            .zip(&auto)
            .try_fold(0usize, |acc, (a, b)| acc.checked_add(a + b))
            .unwrap_or(usize::MAX);
        if total > MAX_TOTAL_PORTS {
            return Err(file(format!(
                "the routers would need {total} ports in total (at most {MAX_TOTAL_PORTS})"
            )));
        }

        // Ports: explicit ones first, then the lowest free port in file order.
        let mut owners: Vec<Vec<Option<Owner>>> = need.iter().map(|&c| vec![None; c]).collect();
        for &(r, port, owner) in &ends {
            let Some(p) = port else { continue };
            let slot = &mut owners[r][p];
            if let Some(prev) = *slot {
                return Err(parse(
                    self.owner_loc(owner),
                    format!(
                        "router {r} port {p} is used twice (already by {})",
                        self.owner_loc(prev)
                    ),
                ));
            }
            *slot = Some(owner);
        }
        let mut cursor = vec![0usize; n];
        let mut term_port = vec![0; self.terminals.len()];
        let mut link_port = vec![[0; 2]; self.links.len()];
        for &(r, port, owner) in &ends {
            let p = match port {
                Some(p) => p,
                None => {
                    let slots = &mut owners[r];
                    while cursor[r] < slots.len() && slots[cursor[r]].is_some() {
                        cursor[r] += 1;
                    }
                    let p = cursor[r];
                    if let Some(c) = declared(r) {
                        if p >= c {
                            return Err(parse(
                                self.owner_loc(owner),
                                format!(
                                    "router {r} has no free port left ({} = {c})",
                                    (self.port_count_loc)(r)
                                ),
                            ));
                        }
                    }
                    if p == slots.len() {
                        slots.push(None);
                    }
                    slots[p] = Some(owner);
                    p
                }
            };
            match owner {
                Owner::Terminal(t) => term_port[t] = p,
                Owner::LinkEnd(l, s) => link_port[l][s] = p,
            }
        }

        // Link ids: terminal links first (link i = terminal i) unless every terminal gives its
        // link id, then network links in file order in the remaining ids.
        let num_links = self.terminals.len() + self.links.len();
        let explicit = self.terminals.iter().filter(|t| t.link.is_some()).count();
        let mut slot_of_terminal: Vec<LinkId> = (0..self.terminals.len()).collect();
        let mut taken = vec![None::<usize>; num_links];
        if explicit > 0 {
            if explicit != self.terminals.len() {
                let (with, without) = (
                    self.terminals.iter().position(|t| t.link.is_some()),
                    self.terminals.iter().position(|t| t.link.is_none()),
                );
                let (with, without) = (with.unwrap_or(0), without.unwrap_or(0));
                return Err(parse(
                    self.terminals[without].loc.at("link"),
                    format!(
                        "is not given but {} is: give `link` for every terminal or for none",
                        self.terminals[with].loc.at("link")
                    ),
                ));
            }
            for (i, t) in self.terminals.iter().enumerate() {
                let id = t.link.unwrap_or(i);
                if id >= num_links {
                    return Err(parse(
                        t.loc.at("link"),
                        format!(
                            "link id {id} is out of range: the file has {num_links} links (ids 0..={})",
                            num_links - 1
                        ),
                    ));
                }
                if let Some(prev) = taken[id] {
                    return Err(parse(
                        t.loc.at("link"),
                        format!(
                            "link id {id} is used twice (already by {})",
                            self.terminals[prev].loc.at("link")
                        ),
                    ));
                }
                taken[id] = Some(i);
                slot_of_terminal[i] = id;
            }
        } else {
            for (i, slot) in taken.iter_mut().take(self.terminals.len()).enumerate() {
                *slot = Some(i);
            }
        }
        let mut free_ids = taken
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_none())
            .map(|(id, _)| id);
        let slot_of_link: Vec<LinkId> = (0..self.links.len())
            .map(|_| free_ids.next().expect("as many free ids as network links"))
            .collect();

        // Assemble.
        let mut routers: Vec<Router> = owners
            .iter()
            .map(|o| Router {
                ports: vec![None; o.len()],
            })
            .collect();
        let mut links: Vec<Option<Link>> = vec![None; num_links];
        let mut terminals = Vec::with_capacity(self.terminals.len());
        for (i, t) in self.terminals.iter().enumerate() {
            let (link, port) = (slot_of_terminal[i], term_port[i]);
            routers[t.router].ports[port] = Some(link);
            links[link] = Some(Link {
                ends: [
                    Endpoint::Terminal { terminal: i },
                    Endpoint::Router {
                        router: t.router,
                        port,
                    },
                ],
                kind: LinkKind::Terminal,
                params: t.params,
            });
            terminals.push(Terminal {
                router: t.router,
                port,
                link,
            });
        }
        for (i, l) in self.links.iter().enumerate() {
            let id = slot_of_link[i];
            let ends = [0, 1].map(|s| Endpoint::Router {
                router: l.ends[s].0,
                port: link_port[i][s],
            });
            for s in 0..2 {
                routers[l.ends[s].0].ports[link_port[i][s]] = Some(id);
            }
            links[id] = Some(Link {
                ends,
                kind: l.kind,
                params: l.params,
            });
        }
        let topo = Topology {
            name: self.name,
            shape: self.shape,
            routers,
            terminals,
            links: links
                .into_iter()
                .map(|l| l.expect("every link id is filled"))
                .collect(),
            symmetry: None,
        };
        topo.validate().map_err(|e| e.in_file(path))?;
        Ok(topo)
    }
}

/// Checks a latency read from a file (at least one cycle, at most [`MAX_LATENCY`]).
///
/// [`MAX_LATENCY`]: super::model::MAX_LATENCY
pub(crate) fn check_latency(latency: u32) -> std::result::Result<u32, String> {
    use super::model::MAX_LATENCY;
    if latency == 0 {
        Err("latency must be at least 1 cycle (got 0)".into())
    } else if latency > MAX_LATENCY {
        Err(format!(
            "latency must be at most {MAX_LATENCY} cycles (got {latency})"
        ))
    } else {
        Ok(latency)
    }
}

/// Checks a bandwidth read from a file (positive and finite).
pub(crate) fn check_bandwidth(bandwidth: f64) -> std::result::Result<f64, String> {
    if bandwidth > 0.0 && bandwidth.is_finite() {
        Ok(bandwidth)
    } else {
        Err(format!(
            "bandwidth must be a positive number of flits per cycle (got {bandwidth})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(a: (usize, Option<usize>), b: (usize, Option<usize>), i: usize) -> RawLink {
        RawLink {
            ends: [a, b],
            kind: LinkKind::Local,
            params: ChannelParams::default(),
            loc: Loc::field(format!("links[{i}]")),
        }
    }

    fn raw(links: Vec<RawLink>, terminals: Vec<RawTerminal>) -> RawTopology {
        RawTopology {
            name: "t".into(),
            shape: Shape::Imported,
            routers: None,
            port_counts: vec![],
            port_count_loc: |r| format!("routers[{r}].ports"),
            terminals,
            links,
        }
    }

    #[test]
    fn formats_follow_extensions() {
        let f = |p: &str| TopologyFileFormat::from_path(Path::new(p));
        assert_eq!(f("a.json").unwrap(), TopologyFileFormat::Json);
        assert_eq!(f("a.TXT").unwrap(), TopologyFileFormat::EdgeList);
        assert_eq!(f("a.edges").unwrap(), TopologyFileFormat::EdgeList);
        assert_eq!(f("dir/a.anynet").unwrap(), TopologyFileFormat::Anynet);
        let err = f("a.xml").unwrap_err().to_string();
        assert!(err.starts_with("a.xml: unknown topology file extension `.xml`"));
        assert!(err.contains(".anynet"), "{err}");
        let err = f("noext").unwrap_err().to_string();
        assert!(
            err.starts_with("noext: the file name has no extension"),
            "{err}"
        );
    }

    #[test]
    fn omitted_ports_take_the_lowest_free_port_after_explicit_ones() {
        let t = raw(
            vec![
                link((0, None), (1, None), 0),
                link((0, Some(0)), (1, Some(2)), 1),
                link((0, None), (1, None), 2),
            ],
            vec![],
        )
        .build(Path::new("x.json"))
        .unwrap();
        assert_eq!(t.routers[0].ports, vec![Some(1), Some(0), Some(2)]);
        assert_eq!(t.routers[1].ports, vec![Some(0), Some(2), Some(1)]);
    }

    #[test]
    fn explicit_terminal_link_ids_interleave_network_links() {
        let term = |router, link| RawTerminal {
            router,
            port: None,
            link: Some(link),
            params: ChannelParams::default(),
            loc: Loc::field("terminals[0]"),
        };
        let t = raw(
            vec![link((0, None), (1, None), 0)],
            vec![term(0, 1), term(1, 2)],
        )
        .build(Path::new("x.json"))
        .unwrap();
        assert_eq!(t.links[0].kind, LinkKind::Local);
        assert_eq!(t.terminals[0].link, 1);
        assert_eq!(t.terminals[1].link, 2);
        assert_eq!(t.routers[0].ports, vec![Some(1), Some(0)]);
    }

    #[test]
    fn a_port_used_twice_names_both_users() {
        let err = raw(
            vec![
                link((0, Some(1)), (1, None), 0),
                link((0, Some(1)), (1, None), 1),
            ],
            vec![],
        )
        .build(Path::new("x.json"))
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "x.json: links[1].a: router 0 port 1 is used twice (already by links[0].a)"
        );
    }

    #[test]
    fn too_few_links_are_rejected_before_building_the_graph() {
        let e = parse_topology(
            "11110209 212\n",
            TopologyFileFormat::EdgeList,
            Path::new("x.txt"),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "x.txt: the router graph is disconnected: router 0 has no link (11110210 routers, 1 \
             links)"
        );
    }

    #[test]
    fn disconnected_graphs_are_rejected() {
        let err = raw(
            vec![link((0, None), (1, None), 0), link((2, None), (3, None), 1)],
            vec![],
        )
        .build(Path::new("x.json"))
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "x.json: the router graph is disconnected: 2 components; router 0 cannot reach router 2"
        );
    }
}
