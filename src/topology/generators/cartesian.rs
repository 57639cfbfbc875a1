//! Meshes, tori, rings, hypercubes and complete graphs: their parameter structs (the keys of
//! their `[topology]` tables besides the common ones), resolvers and generators.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::topology::model::{LinkKind, Shape, Topology, TopologyBuilder};
use crate::topology::spec::{Generator, LinkParams, ResolveContext, Size, TopologyConfig, require};
use crate::topology::symmetry::{Digit, Symmetry};

/// `mesh` and `torus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CartesianParams {
    /// Routers along each dimension (required).
    pub dims: Option<Vec<usize>>,
    /// Terminals per router (default 1).
    pub concentration: Option<usize>,
}

/// `ring`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RingParams {
    /// Routers on the ring (required).
    pub routers: Option<usize>,
    /// Terminals per router (default 1).
    pub concentration: Option<usize>,
}

/// `hypercube`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HypercubeParams {
    /// Dimensions, 1 to 24 (required): 2^dimension routers.
    pub dimension: Option<usize>,
    /// Terminals per router (default 1).
    pub concentration: Option<usize>,
}

/// `complete`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompleteParams {
    /// Routers, 2 to 4096 (required).
    pub routers: Option<usize>,
    /// Terminals per router (default 1).
    pub concentration: Option<usize>,
}

/// A mesh or torus (rings and hypercubes are ones too), resolved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cartesian {
    pub dims: Vec<usize>,
    pub wrap: bool,
    pub concentration: usize,
}

/// A complete graph, resolved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Complete {
    pub routers: usize,
    pub concentration: usize,
}

/// Resolves `mesh` and `torus`.
pub fn resolve(cfg: &TopologyConfig, _: &ResolveContext) -> Result<Box<dyn Generator>> {
    let p: CartesianParams = cfg.read_params()?;
    let wrap = match cfg.kind.as_deref() {
        Some("mesh") => false,
        Some("torus") => true,
        _ => return Err(cfg.not_in_family("mesh/torus")),
    };
    Ok(Box::new(Cartesian {
        dims: require(&p.dims, "dims")?.clone(),
        wrap,
        concentration: p.concentration.unwrap_or(1),
    }))
}

pub(crate) fn resolve_ring(cfg: &TopologyConfig, _: &ResolveContext) -> Result<Box<dyn Generator>> {
    let p: RingParams = cfg.read_params()?;
    Ok(Box::new(Cartesian {
        dims: vec![*require(&p.routers, "routers")?],
        wrap: true,
        concentration: p.concentration.unwrap_or(1),
    }))
}

pub(crate) fn resolve_hypercube(
    cfg: &TopologyConfig,
    _: &ResolveContext,
) -> Result<Box<dyn Generator>> {
    let p: HypercubeParams = cfg.read_params()?;
    let d = *require(&p.dimension, "dimension")?;
    if !(1..=24).contains(&d) {
        return Err(Error::field(
            "dimension",
            format!("must be in 1..=24 (got {d})"),
        ));
    }
    Ok(Box::new(Cartesian {
        dims: vec![2; d],
        wrap: false,
        concentration: p.concentration.unwrap_or(1),
    }))
}

pub(crate) fn resolve_complete(
    cfg: &TopologyConfig,
    _: &ResolveContext,
) -> Result<Box<dyn Generator>> {
    let p: CompleteParams = cfg.read_params()?;
    Ok(Box::new(Complete {
        routers: *require(&p.routers, "routers")?,
        concentration: p.concentration.unwrap_or(1),
    }))
}

impl Generator for Cartesian {
    fn size(&self) -> Option<Size> {
        Some(Size {
            field: "dims",
            routers: self.dims.iter().try_fold(1usize, |n, &k| n.checked_mul(k)),
            radix: self
                .concentration
                .checked_add(self.dims.len().saturating_mul(2)),
            concentration: self.concentration,
        })
    }

    fn build(&self, links: &LinkParams) -> Result<Topology> {
        cartesian(&self.dims, self.wrap, self.concentration, links)
    }
}

impl Generator for Complete {
    fn size(&self) -> Option<Size> {
        Some(Size {
            field: "routers",
            routers: Some(self.routers),
            radix: self.routers.checked_add(self.concentration),
            concentration: self.concentration,
        })
    }

    fn build(&self, links: &LinkParams) -> Result<Topology> {
        complete(self.routers, self.concentration, links)
    }
}

/// A mesh (`wrap = false`) or torus (`wrap = true`) with `dims[d]` routers along dimension `d`.
///
/// Router id = sum of `coord[d] * prod(dims[..d])` (dimension 0 varies fastest). Ports: terminals
/// `0..c`, then for each dimension `d` port `c + 2d` towards `coord[d] - 1` and port `c + 2d + 1`
/// towards `coord[d] + 1`; mesh edge ports exist but stay unconnected. In a torus of radix 2
/// both ports of a dimension lead to the same neighbour, so the two routers share two parallel
/// links (as in BookSim's k-ary n-cube); use a mesh of radix 2 (or `hypercube:n`) for one link.
pub fn cartesian(
    dims: &[usize],
    wrap: bool,
    concentration: usize,
    params: &LinkParams,
) -> Result<Topology> {
    if dims.is_empty() {
        return Err(Error::field("dims", "needs at least one dimension"));
    }
    if let Some((d, &k)) = dims.iter().enumerate().find(|&(_, &k)| k < 2) {
        return Err(Error::field(
            format!("dims[{d}]"),
            format!("must be at least 2 routers (got {k})"),
        ));
    }
    let n = dims
        .iter()
        .try_fold(1usize, |acc, &k| acc.checked_mul(k))
        .filter(|&n| n <= 1 << 24)
        .ok_or_else(|| Error::field("dims", "more than 16,777,216 routers"))?;
    let kind = if wrap { "torus" } else { "mesh" };
    let label: Vec<String> = dims.iter().map(ToString::to_string).collect();
    let mut b = TopologyBuilder::new(format!("{kind}:{}", label.join("x")), n);
    let c = concentration;
    for r in 0..n {
        b.reserve_ports(r, c + 2 * dims.len());
    }
    b.attach_terminals_everywhere(c, params.terminal);
    let mut stride = 1;
    for (d, &k) in dims.iter().enumerate() {
        for r in 0..n {
            let coord = (r / stride) % k;
            if coord + 1 < k || wrap {
                let next = r - coord * stride + ((coord + 1) % k) * stride;
                b.connect(
                    (r, c + 2 * d + 1),
                    (next, c + 2 * d),
                    LinkKind::Local,
                    params.local,
                )?;
            }
        }
        stride *= k;
    }
    // Ids are mixed radix with dimension 0 least significant; translations along a torus
    // dimension (or flips along a radix-2 mesh dimension) are automorphisms.
    let symmetry = Symmetry::new(
        dims.iter()
            .rev()
            .map(|&k| Digit {
                radix: k,
                translatable: wrap || k == 2,
            })
            .collect(),
    );
    b.finish(
        Shape::Cartesian {
            dims: dims.to_vec(),
            wrap,
        },
        (!symmetry.is_trivial()).then_some(symmetry),
    )
}

/// The complete graph K_n. Ports: terminals `0..c`, then port `c + j` to the j-th other router
/// in ascending id order.
pub fn complete(routers: usize, concentration: usize, params: &LinkParams) -> Result<Topology> {
    if !(2..=4096).contains(&routers) {
        return Err(Error::field(
            "routers",
            format!("must be in 2..=4096 (got {routers})"),
        ));
    }
    let c = concentration;
    let mut b = TopologyBuilder::new(format!("complete:{routers}"), routers);
    b.attach_terminals_everywhere(c, params.terminal);
    for u in 0..routers {
        for v in u + 1..routers {
            b.connect((u, c + v - 1), (v, c + u), LinkKind::Local, params.local)?;
        }
    }
    let symmetry = Symmetry::new(vec![Digit {
        radix: routers,
        translatable: true,
    }]);
    b.finish(Shape::Complete, Some(symmetry))
}
