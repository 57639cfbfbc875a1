//! ExaNeSt chassis/cabinet systems T = (R, N, M) decoded from a one-chassis genome
//! (docs/sources.md §3): 2 routers per chassis, N chassis per cabinet, M cabinets.
//!
//! Link numbers are 1-based: chassis `c` (0-based, `c = cabinet * N + chassis_in_cabinet`) owns
//! links `2R*c + 1 ..= 2R*c + 2R`; slot `i` (1-based) of a chassis is on router 0 for
//! `i <= R` and on router 1 otherwise. Gene `s_i` (0 = unused) connects link `g = 2R*c + i` of
//! every chassis to link `g'`:
//! * internal gene, `s_i` in `[2R - i + 1, 2NR - i]`: `g' = 2RN*m + ((2R*n + i - 1 + s_i) mod 2NR) + 1`;
//! * external gene, `s_i` in `[2NR - i + 1, 2MNR - i]`: `g' = ((g - 1 + s_i) mod 2MNR) + 1`.
//!
//! Router id = `2c + side`. Ports: terminals `0..conc`, then `conc + k` for the k-th slot of
//! the router's half (its own gene's link, unconnected when the gene is 0), then one port per
//! gene (ascending gene index) whose links land on this router's half, for the cable arriving
//! from another chassis. Every chassis gets the same layout, which keeps the replication
//! symmetry visible in port numbers too.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::topology::model::{LinkKind, Shape, Topology, TopologyBuilder};
use crate::topology::spec::{
    Generator, LinkParams, ResolveContext, Size, TopologyConfig, check_latency, require,
};
use crate::topology::symmetry::{Digit, Symmetry};

/// The keys of a `kind = "exanest"` table besides the common ones (`R`, `N`, `M` are read as
/// `r`, `n`, `m`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExanestParams {
    /// Links per router of a chassis (required).
    #[serde(alias = "R")]
    pub r: Option<usize>,
    /// Chassis per cabinet (required).
    #[serde(alias = "N")]
    pub n: Option<usize>,
    /// Cabinets (required).
    #[serde(alias = "M")]
    pub m: Option<usize>,
    /// The 2R genes of one chassis, 0 = unused (required; the exanest search finds it).
    pub genome: Option<Vec<i64>>,
    /// Terminals per router (default 3).
    pub concentration: Option<usize>,
    /// Latency of global links in cycles (default 1).
    pub global_latency: Option<u32>,
}

/// An ExaNeSt system, resolved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Exanest {
    pub r: usize,
    pub n: usize,
    pub m: usize,
    pub genome: Vec<usize>,
    pub concentration: usize,
    pub global_latency: u32,
}

pub fn resolve(cfg: &TopologyConfig, _: &ResolveContext) -> Result<Box<dyn Generator>> {
    let p: ExanestParams = cfg.read_params()?;
    let genome = require(&p.genome, "genome")?
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            usize::try_from(s).map_err(|_| {
                Error::field(
                    format!("genome[{}]", i + 1),
                    format!("gene {} = {s} is negative (0 means unused)", i + 1),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Box::new(Exanest {
        r: *require(&p.r, "r")?,
        n: *require(&p.n, "n")?,
        m: *require(&p.m, "m")?,
        genome,
        concentration: p.concentration.unwrap_or(3),
        global_latency: check_latency("global_latency", p.global_latency)?,
    }))
}

impl Generator for Exanest {
    fn size(&self) -> Option<Size> {
        let Exanest {
            r,
            n,
            m,
            concentration,
            ..
        } = *self;
        Some(Size {
            field: "m",
            routers: n.checked_mul(m).and_then(|x| x.checked_mul(2)),
            radix: r
                .checked_mul(2)
                .and_then(|x| x.checked_add(concentration))
                .and_then(|x| x.checked_add(1)),
            concentration,
        })
    }

    fn build(&self, links: &LinkParams) -> Result<Topology> {
        let links = links.with_global_latency(self.global_latency);
        exanest(
            self.r,
            self.n,
            self.m,
            &self.genome,
            self.concentration,
            &links,
        )
    }
}

/// One decoded cable: 1-based global link numbers on both ends, and whether it is external.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExanestLink {
    pub gene: usize,
    pub from: usize,
    pub to: usize,
    pub external: bool,
}

/// Checks T = (R, N, M) before anything is sized by it.
pub(crate) fn check_dims(r: usize, n: usize, m: usize) -> Result<()> {
    for (name, v) in [("r", r), ("n", n), ("m", m)] {
        if v == 0 {
            return Err(Error::field(name, "must be at least 1"));
        }
    }
    // R links per router side: bounded like a router's ports, so that 2R and 2MNR are exact.
    if r > crate::topology::import::MAX_PORTS {
        return Err(Error::field(
            "r",
            format!(
                "{r} links per router is more than {} ports",
                crate::topology::import::MAX_PORTS
            ),
        ));
    }
    if n.saturating_mul(m) < 2 {
        return Err(Error::field(
            "n",
            "a system needs at least two chassis (N * M >= 2)",
        ));
    }
    if n.saturating_mul(m).saturating_mul(2) > 1 << 22 {
        return Err(Error::field("m", "more than 4,194,304 routers"));
    }
    Ok(())
}

/// Decodes every cable of the system, checking each gene's range.
pub fn exanest_links(r: usize, n: usize, m: usize, genome: &[usize]) -> Result<Vec<ExanestLink>> {
    check_dims(r, n, m)?;
    if genome.len() != 2 * r {
        return Err(Error::field(
            "genome",
            format!(
                "has {} genes but T = (R={r}, N={n}, M={m}) needs 2R = {}",
                genome.len(),
                2 * r
            ),
        ));
    }
    let chassis_links = 2 * r;
    let cabinet_links = 2 * n * r;
    let total_links = 2 * m * n * r;
    let mut kinds = Vec::with_capacity(genome.len());
    for (idx, &s) in genome.iter().enumerate() {
        let i = idx + 1;
        let internal = (chassis_links + 1 - i)..=(cabinet_links - i);
        let external = (cabinet_links + 1 - i)..=(total_links - i);
        let kind = if s == 0 {
            None
        } else if internal.contains(&s) {
            Some(false)
        } else if m > 1 && external.contains(&s) {
            Some(true)
        } else {
            let target_slot = (i - 1 + s) % chassis_links + 1;
            let why = if s < *internal.start() {
                let side = |slot: usize| if slot <= r { 0 } else { 1 };
                if side(target_slot) == side(i) {
                    format!("it would connect router {} to itself", side(i))
                } else {
                    "it would connect the two routers of one chassis".to_string()
                }
            } else {
                "it points past the last link of the system".to_string()
            };
            let ext = if m > 1 {
                format!(" or external [{}, {}]", external.start(), external.end())
            } else {
                " (no external genes with M = 1)".to_string()
            };
            return Err(Error::field(
                format!("genome[{i}]"),
                format!(
                    "gene {i} = {s} is out of range: internal [{}, {}]{ext}, or 0 for unused; {why}",
                    internal.start(),
                    internal.end()
                ),
            ));
        };
        kinds.push(kind);
    }
    let mut links = Vec::new();
    for c in 0..n * m {
        let (cab, pos) = (c / n, c % n);
        for (idx, (&s, kind)) in genome.iter().zip(&kinds).enumerate() {
            let Some(external) = *kind else { continue };
            let i = idx + 1;
            let from = chassis_links * c + i;
            let to = if external {
                (from - 1 + s) % total_links + 1
            } else {
                cabinet_links * cab + (chassis_links * pos + i - 1 + s) % cabinet_links + 1
            };
            links.push(ExanestLink {
                gene: i,
                from,
                to,
                external,
            });
        }
    }
    Ok(links)
}

/// Router (`2 * chassis + side`) owning 1-based global link `link` with `2R` links per chassis.
pub(crate) fn exanest_router_of(r: usize, link: usize) -> usize {
    let chassis_links = 2 * r;
    2 * ((link - 1) / chassis_links) + usize::from((link - 1) % chassis_links >= r)
}

/// The translation group every genome of T = (R, N, M) keeps, over router ids
/// `(cabinet * N + chassis) * 2 + side`. Shifting whole cabinets always preserves the system;
/// rotating chassis inside every cabinet does too when no cable leaves a cabinet, and rotating
/// all chassis globally does when every cable is external (offsets are then global).
pub fn exanest_symmetry(n: usize, m: usize, has_internal: bool, has_external: bool) -> Symmetry {
    let digits = if m == 1 || !has_external {
        vec![(m, true), (n, true), (2, false)]
    } else if !has_internal {
        vec![(n * m, true), (2, false)]
    } else {
        vec![(m, true), (n, false), (2, false)]
    };
    Symmetry::new(
        digits
            .into_iter()
            .map(|(radix, translatable)| Digit {
                radix,
                translatable,
            })
            .collect(),
    )
}

pub fn exanest(
    r: usize,
    n: usize,
    m: usize,
    genome: &[usize],
    concentration: usize,
    params: &LinkParams,
) -> Result<Topology> {
    let cables = exanest_links(r, n, m, genome)?;
    let chassis_links = 2 * r;
    let routers = 2 * n * m;
    let slot_of = |link: usize| (link - 1) % chassis_links + 1;
    let router_of = |link: usize| exanest_router_of(r, link);
    // Incoming port of each gene on its target side: rank among genes landing on that side.
    let mut incoming_port = vec![0; genome.len() + 1];
    let mut next_incoming = [concentration + r; 2];
    for (idx, &s) in genome.iter().enumerate() {
        if s == 0 {
            continue;
        }
        let target_slot = (idx + s) % chassis_links + 1;
        let side = usize::from(target_slot > r);
        incoming_port[idx + 1] = next_incoming[side];
        next_incoming[side] += 1;
    }
    let label: Vec<String> = genome.iter().map(ToString::to_string).collect();
    let mut b = TopologyBuilder::new(
        format!("exanest:R={r},N={n},M={m},genome={}", label.join("/")),
        routers,
    );
    for v in 0..routers {
        b.reserve_ports(v, concentration + r);
    }
    b.attach_terminals_everywhere(concentration, params.terminal);
    for cable in &cables {
        let from_port = concentration + (slot_of(cable.from) - 1) % r;
        let (kind, link_params) = if cable.external {
            (LinkKind::Global, params.global)
        } else {
            (LinkKind::Local, params.local)
        };
        b.connect(
            (router_of(cable.from), from_port),
            (router_of(cable.to), incoming_port[cable.gene]),
            kind,
            link_params,
        )?;
    }
    let has_internal = cables.iter().any(|c| !c.external);
    let has_external = cables.iter().any(|c| c.external);
    let symmetry = exanest_symmetry(n, m, has_internal, has_external);
    b.finish(
        Shape::Exanest {
            r,
            n,
            m,
            genome: genome.to_vec(),
        },
        (!symmetry.is_trivial()).then_some(symmetry),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of docs/sources.md §3 (the paper's Fig. 2).
    #[test]
    fn decodes_the_worked_example() {
        let links = exanest_links(2, 4, 2, &[5, 17, 8, 22]).unwrap();
        let gene1: Vec<(usize, usize)> = links
            .iter()
            .filter(|l| l.gene == 1)
            .map(|l| (l.from, l.to))
            .take(4)
            .collect();
        assert_eq!(gene1, vec![(1, 6), (5, 10), (9, 14), (13, 2)]);
        assert!(links.contains(&ExanestLink {
            gene: 2,
            from: 30,
            to: 15,
            external: true
        }));
        // Link 3 connects to link 3 + 8 inside the cabinet.
        assert!(
            links
                .iter()
                .any(|l| l.from == 3 && l.to == 11 && !l.external)
        );
        assert_eq!(links.len(), 4 * 8);
    }

    #[test]
    fn rejects_bad_genes_saying_why() {
        let err = exanest_links(2, 4, 2, &[1, 0, 0, 0])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("genome[1]: gene 1 = 1 is out of range: internal [4, 15]"),
            "{err}"
        );
        assert!(err.contains("router 0 to itself"), "{err}");
        let err = exanest_links(2, 4, 2, &[2, 0, 0, 0])
            .unwrap_err()
            .to_string();
        assert!(err.contains("the two routers of one chassis"), "{err}");
        let err = exanest_links(2, 4, 2, &[0, 31, 0, 0])
            .unwrap_err()
            .to_string();
        assert!(err.contains("past the last link"), "{err}");
        let err = exanest_links(2, 4, 1, &[0, 17, 0, 0])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no external genes with M = 1"), "{err}");
        let err = exanest_links(2, 4, 2, &[5, 17]).unwrap_err().to_string();
        assert!(err.starts_with("genome: has 2 genes"), "{err}");
    }

    #[test]
    fn builds_the_worked_example_with_ports_and_symmetry() {
        let t = exanest(2, 4, 2, &[5, 17, 8, 22], 3, &LinkParams::default()).unwrap();
        assert_eq!(t.num_routers(), 16);
        assert_eq!(t.num_terminals(), 48);
        assert_eq!(t.num_network_links(), 32);
        assert_eq!(t.links_of_kind(LinkKind::Global), 16);
        // Link 1 (chassis 0, slot 1, router 0, port 3) reaches link 6 (chassis 1, slot 2, router 2).
        let peer = t.peer(0, 3).unwrap();
        assert!(matches!(
            peer,
            crate::topology::model::Endpoint::Router { router: 2, .. }
        ));
        let sym = t.symmetry.clone().unwrap();
        assert_eq!(sym.group_order(), 2);
        assert!(sym.is_automorphism_of(&t.router_graph()));
    }

    #[test]
    fn absurd_sizes_are_refused_without_overflow() {
        let big = usize::MAX / 2 + 1;
        let err = exanest_links(big, 2, 2, &[1, 2]).unwrap_err().to_string();
        assert!(err.starts_with("r: "), "{err}");
        let err = exanest_links(2, big, 4, &[5, 17, 8, 22])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("m: more than 4,194,304 routers"), "{err}");
    }
}
