//! Dragonfly (Kim et al.): `g` groups of `a` routers, complete graph inside each group, `h`
//! global links per router, `p` terminals per router.
//!
//! Router id = `group * a + r`. Ports (docs/sources.md §2): terminals `0..p`, local ports
//! `p..p+a-1` to the other routers of the group in ascending order, global ports
//! `p+a-1..p+a-1+h`. A group's global port index is `k = r*h + j` for global port `j` of
//! router `r`. With `L = a*h / (g-1)` links per group pair (1 in the balanced case
//! `g = a*h + 1`), `k` reaches its target through slot `k mod (g-1)` in replica `k div (g-1)`:
//!
//! * absolute: slot `s` is the s-th other group in ascending order (skipping the own group);
//! * relative: slot `s` is group `G + s + 1 (mod g)`;
//! * circulant: slot `s` is group `G + (s/2 + 1)` for even `s` and `G - (s/2 + 1)` for odd `s`
//!   (mod g), so the group graph is a circulant graph; needs `g - 1` even.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::topology::import::MAX_PORTS;
use crate::topology::model::{LinkKind, Shape, Topology, TopologyBuilder};
use crate::topology::spec::{
    Generator, LinkParams, ResolveContext, Size, TopologyConfig, check_latency, require,
};
use crate::topology::symmetry::{Digit, Symmetry};

/// The keys of a `kind = "dragonfly"` table besides the common ones.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DragonflyParams {
    /// Terminals per router (required).
    pub p: Option<usize>,
    /// Routers per group (default 2p).
    pub a: Option<usize>,
    /// Global links per router (default p).
    pub h: Option<usize>,
    /// Groups (default a*h + 1).
    pub g: Option<usize>,
    /// `absolute` (default), `relative` or `circulant`.
    pub arrangement: Option<String>,
    /// Latency of global links in cycles (default 1).
    pub global_latency: Option<u32>,
}

/// A dragonfly, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Dragonfly {
    pub p: usize,
    pub a: usize,
    pub h: usize,
    pub g: usize,
    pub arrangement: DragonflyArrangement,
    pub global_latency: u32,
}

pub fn resolve(cfg: &TopologyConfig, _: &ResolveContext) -> Result<Box<dyn Generator>> {
    let params: DragonflyParams = cfg.read_params()?;
    let p = *require(&params.p, "p")?;
    // The defaults multiply p: bound every factor by the router radix limit first, so that 2p
    // and a*h + 1 cannot overflow.
    for (name, v) in [("p", Some(p)), ("a", params.a), ("h", params.h)] {
        if let Some(v) = v.filter(|&v| v > MAX_PORTS) {
            return Err(Error::field(
                name,
                format!("{v} is more than a router's {MAX_PORTS} ports"),
            ));
        }
    }
    let a = params.a.unwrap_or(2 * p);
    let h = params.h.unwrap_or(p);
    let g = params.g.unwrap_or(a * h + 1);
    let arrangement = match params.arrangement.as_deref().unwrap_or("absolute") {
        "absolute" => DragonflyArrangement::Absolute,
        "relative" => DragonflyArrangement::Relative,
        "circulant" => DragonflyArrangement::Circulant,
        other => {
            return Err(Error::field(
                "arrangement",
                format!("unknown arrangement `{other}` (expected absolute, relative or circulant)"),
            ));
        }
    };
    Ok(Box::new(Dragonfly {
        p,
        a,
        h,
        g,
        arrangement,
        global_latency: check_latency("global_latency", params.global_latency)?,
    }))
}

impl Generator for Dragonfly {
    fn size(&self) -> Option<Size> {
        let Dragonfly { p, a, h, g, .. } = *self;
        Some(Size {
            field: "g",
            routers: a.checked_mul(g),
            radix: p.checked_add(a).and_then(|x| x.checked_add(h)),
            concentration: p,
        })
    }

    fn build(&self, links: &LinkParams) -> Result<Topology> {
        let links = links.with_global_latency(self.global_latency);
        dragonfly(self.p, self.a, self.h, self.g, self.arrangement, &links)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DragonflyArrangement {
    Absolute,
    Relative,
    Circulant,
}

impl DragonflyArrangement {
    pub fn name(self) -> &'static str {
        match self {
            DragonflyArrangement::Absolute => "absolute",
            DragonflyArrangement::Relative => "relative",
            DragonflyArrangement::Circulant => "circulant",
        }
    }

    /// Target group of slot `s` of group `group`.
    fn target(self, group: usize, s: usize, g: usize) -> usize {
        match self {
            DragonflyArrangement::Absolute => {
                if s < group {
                    s
                } else {
                    s + 1
                }
            }
            DragonflyArrangement::Relative => (group + s + 1) % g,
            DragonflyArrangement::Circulant => {
                let offset = s / 2 + 1;
                if s % 2 == 0 {
                    (group + offset) % g
                } else {
                    (group + g - offset) % g
                }
            }
        }
    }

    /// The slot of group `target` that points back at group `group` through the same pairing.
    fn reverse_slot(self, group: usize, target: usize, s: usize, g: usize) -> usize {
        match self {
            DragonflyArrangement::Absolute => {
                if group < target {
                    group
                } else {
                    group - 1
                }
            }
            DragonflyArrangement::Relative => (group + g - target - 1) % g,
            // +offset pairs with -offset: even slot s <-> odd slot s + 1.
            DragonflyArrangement::Circulant => s ^ 1,
        }
    }
}

pub fn dragonfly(
    p: usize,
    a: usize,
    h: usize,
    g: usize,
    arrangement: DragonflyArrangement,
    params: &LinkParams,
) -> Result<Topology> {
    for (name, v) in [("p", p), ("a", a), ("h", h)] {
        if v == 0 {
            return Err(Error::field(name, "must be at least 1"));
        }
    }
    if g < 2 {
        return Err(Error::field(
            "g",
            format!("must be at least 2 groups (got {g})"),
        ));
    }
    if g > a * h + 1 {
        return Err(Error::field(
            "g",
            format!(
                "{g} groups need {} global links per group but a*h = {} (g must be at most a*h + 1 = {})",
                g - 1,
                a * h,
                a * h + 1
            ),
        ));
    }
    if (a * h) % (g - 1) != 0 {
        return Err(Error::field(
            "g",
            format!(
                "g - 1 = {} must divide a*h = {} so that every group pair gets the same number of global links",
                g - 1,
                a * h
            ),
        ));
    }
    if arrangement == DragonflyArrangement::Circulant && (g - 1) % 2 != 0 {
        return Err(Error::field(
            "arrangement",
            format!("circulant needs an even g - 1 (got g = {g})"),
        ));
    }
    let routers = a * g;
    if routers > 1 << 22 {
        return Err(Error::field("g", "more than 4,194,304 routers"));
    }
    let mut b = TopologyBuilder::new(
        format!("dragonfly:p={p},a={a},h={h},g={g},{}", arrangement.name()),
        routers,
    );
    for r in 0..routers {
        b.reserve_ports(r, p + a - 1 + h);
    }
    b.attach_terminals_everywhere(p, params.terminal);
    let local_port = |r: usize, other: usize| p + if other < r { other } else { other - 1 };
    for group in 0..g {
        for r in 0..a {
            for other in r + 1..a {
                b.connect(
                    (group * a + r, local_port(r, other)),
                    (group * a + other, local_port(other, r)),
                    LinkKind::Local,
                    params.local,
                )?;
            }
        }
    }
    let slots = g - 1;
    let global_port = |k: usize| (k / h, p + a - 1 + k % h);
    for group in 0..g {
        for k in 0..a * h {
            let (slot, replica) = (k % slots, k / slots);
            let target = arrangement.target(group, slot, g);
            if target < group {
                continue; // connected from the other side
            }
            let back = replica * slots + arrangement.reverse_slot(group, target, slot, g);
            let (r, port) = global_port(k);
            let (tr, tport) = global_port(back);
            b.connect(
                (group * a + r, port),
                (target * a + tr, tport),
                LinkKind::Global,
                params.global,
            )?;
        }
    }
    // Relative and circulant arrangements depend only on group differences: rotating every
    // group by one is an automorphism.
    let symmetry = (arrangement != DragonflyArrangement::Absolute).then(|| {
        Symmetry::new(vec![
            Digit {
                radix: g,
                translatable: true,
            },
            Digit {
                radix: a,
                translatable: false,
            },
        ])
    });
    b.finish(
        Shape::Dragonfly {
            p,
            a,
            h,
            g,
            arrangement: arrangement.name().into(),
        },
        symmetry,
    )
}
