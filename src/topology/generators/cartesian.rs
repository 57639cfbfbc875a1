//! Meshes, tori, rings, hypercubes and complete graphs.

use crate::error::{Error, Result};
use crate::topology::model::{LinkKind, Shape, Topology, TopologyBuilder};
use crate::topology::spec::LinkParams;
use crate::topology::symmetry::{Digit, Symmetry};

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
