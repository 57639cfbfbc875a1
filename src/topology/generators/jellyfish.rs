//! Random regular graphs built the way Jellyfish (Singla et al., NSDI'12) builds them: join
//! random pairs of routers with free ports that are not yet neighbours; when no such pair is
//! left but a router still has two free ports, remove a random link (x, y) and connect the
//! router to both x and y. Deterministic for a given seed.
//!
//! Ports: terminals `0..c`, then network ports to the neighbours in ascending id order. A
//! regular graph needs `routers * degree` even (each link has two ends): an odd product is
//! refused rather than built with a free port.

use std::collections::BTreeSet;

use rand::{SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::topology::graph::RouterGraph;
use crate::topology::model::{LinkKind, Shape, Topology, TopologyBuilder};
use crate::topology::spec::{Generator, LinkParams, ResolveContext, Size, TopologyConfig, require};

/// The keys of a `kind = "jellyfish"` table besides the common ones.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JellyfishParams {
    /// Routers (required).
    pub routers: Option<usize>,
    /// Router-to-router links per router (required).
    pub degree: Option<usize>,
    /// Terminals per router (default 1).
    pub concentration: Option<usize>,
    /// The graph's seed (default: the problem's seed).
    pub seed: Option<u64>,
}

/// A Jellyfish graph, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Jellyfish {
    pub routers: usize,
    pub degree: usize,
    pub concentration: usize,
    pub seed: u64,
}

pub fn resolve(cfg: &TopologyConfig, ctx: &ResolveContext) -> Result<Box<dyn Generator>> {
    let p: JellyfishParams = cfg.read_params()?;
    Ok(Box::new(Jellyfish {
        routers: *require(&p.routers, "routers")?,
        degree: *require(&p.degree, "degree")?,
        concentration: p.concentration.unwrap_or(1),
        seed: p.seed.unwrap_or(ctx.default_seed),
    }))
}

impl Generator for Jellyfish {
    fn size(&self) -> Option<Size> {
        Some(Size {
            field: "degree",
            routers: Some(self.routers),
            radix: self.degree.checked_add(self.concentration),
            concentration: self.concentration,
        })
    }

    fn build(&self, links: &LinkParams) -> Result<Topology> {
        jellyfish(
            self.routers,
            self.degree,
            self.concentration,
            self.seed,
            links,
        )
    }
}

pub fn jellyfish(
    routers: usize,
    degree: usize,
    concentration: usize,
    seed: u64,
    params: &LinkParams,
) -> Result<Topology> {
    if !(2..=1 << 20).contains(&routers) {
        return Err(Error::field(
            "routers",
            format!("must be in 2..=1048576 (got {routers})"),
        ));
    }
    if degree < 2 || degree >= routers {
        return Err(Error::field(
            "degree",
            format!(
                "must be in 2..{routers} (routers - 1) so that the graph can be connected (got {degree})"
            ),
        ));
    }
    // Both are at most 2^20 here, so the product fits.
    if routers * degree % 2 == 1 {
        return Err(Error::field(
            "degree",
            format!(
                "routers x degree = {routers} x {degree} is odd, so no {degree}-regular graph \
                 exists (each link uses two ports); make routers or degree even"
            ),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // A random regular graph of degree >= 3 is connected with high probability; retry with the
    // same stream otherwise (degree 2 gives a union of cycles and may need a few tries).
    for _ in 0..1000 {
        let edges = random_regular(routers, degree, &mut rng);
        let graph = RouterGraph::from_edges(routers, edges.iter().copied());
        // The rewiring can in principle stop with a free port: such a graph is not regular.
        if !graph.is_connected() || 2 * edges.len() != routers * degree {
            continue;
        }
        let mut b = TopologyBuilder::new(
            format!("jellyfish:routers={routers},degree={degree},seed={seed}"),
            routers,
        );
        b.attach_terminals_everywhere(concentration, params.terminal);
        for &(u, v) in &edges {
            b.connect_next(u, v, LinkKind::Local, params.local)?;
        }
        return b.finish(Shape::Jellyfish { degree, seed }, None);
    }
    Err(Error::field(
        "degree",
        format!(
            "no connected random {degree}-regular graph on {routers} routers found in 1000 tries"
        ),
    ))
}

/// Edges sorted ascending, so that port order follows neighbour ids.
fn random_regular(n: usize, d: usize, rng: &mut ChaCha8Rng) -> Vec<(usize, usize)> {
    let mut adj: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut free: Vec<usize> = vec![d; n];
    let mut open: Vec<usize> = (0..n).collect(); // routers with a free port
    let link = |adj: &mut Vec<BTreeSet<usize>>, u: usize, v: usize| {
        adj[u].insert(v);
        adj[v].insert(u);
    };
    loop {
        open.retain(|&v| free[v] > 0);
        if open.is_empty() || (open.len() == 1 && free[open[0]] < 2) {
            break;
        }
        // Random tries first; fall back to an exhaustive scan before concluding none is left.
        let mut pair = None;
        for _ in 0..if open.len() >= 2 { 64 } else { 0 } {
            let u = *open.choose(rng).expect("non-empty");
            let v = *open.choose(rng).expect("non-empty");
            if u != v && !adj[u].contains(&v) {
                pair = Some((u, v));
                break;
            }
        }
        if pair.is_none() {
            let candidates: Vec<(usize, usize)> = open
                .iter()
                .enumerate()
                .flat_map(|(i, &u)| open[i + 1..].iter().map(move |&v| (u, v)))
                .filter(|&(u, v)| !adj[u].contains(&v))
                .collect();
            pair = candidates.choose(rng).copied();
        }
        if let Some((u, v)) = pair {
            link(&mut adj, u, v);
            free[u] -= 1;
            free[v] -= 1;
            continue;
        }
        // Stuck: routers with free ports are all neighbours. Rewire through an existing link
        // (x, y): either one router with two free ports takes both ends, or two routers with
        // one free port each take one end each.
        let (u, v) = match open.iter().find(|&&w| free[w] >= 2) {
            Some(&u) => (u, u),
            None => (open[0], open[1]),
        };
        let fits = |w: usize, x: usize| x != u && x != v && !adj[w].contains(&x);
        let candidates: Vec<(usize, usize)> = (0..n)
            .flat_map(|x| adj[x].iter().map(move |&y| (x, y)))
            .filter(|&(x, y)| fits(u, x) && fits(v, y) && (u != v || x < y))
            .collect();
        let Some(&(x, y)) = candidates.choose(rng) else {
            break;
        };
        adj[x].remove(&y);
        adj[y].remove(&x);
        link(&mut adj, u, x);
        link(&mut adj, v, y);
        free[u] -= 1;
        free[v] -= 1;
    }
    (0..n)
        .flat_map(|u| adj[u].iter().filter(move |&&v| u < v).map(move |&v| (u, v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_regular_connected_and_deterministic() {
        let p = LinkParams::default();
        let t = jellyfish(50, 5, 2, 7, &p).unwrap();
        let degrees = t.network_degrees();
        // 50 * 5 is even: every router uses all its ports.
        assert!(degrees.iter().all(|&d| d == 5), "{degrees:?}");
        assert!(t.router_graph().is_connected());
        assert_eq!(t.router_graph().num_links(), 125);
        let again = jellyfish(50, 5, 2, 7, &p).unwrap();
        assert_eq!(t.links, again.links);
        let other = jellyfish(50, 5, 2, 8, &p).unwrap();
        assert_ne!(t.links, other.links);
    }

    #[test]
    fn every_port_is_used_whatever_the_seed() {
        for seed in 0..30 {
            for (n, d) in [(64, 6), (20, 3), (16, 15)] {
                let t = jellyfish(n, d, 0, seed, &LinkParams::default()).unwrap();
                assert!(
                    t.network_degrees().iter().all(|&x| x == d),
                    "n={n} d={d} seed={seed}"
                );
            }
        }
    }

    #[test]
    fn odd_port_total_is_refused() {
        for (n, d) in [(11, 3), (5, 3)] {
            let err = jellyfish(n, d, 1, 1, &LinkParams::default())
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("degree: routers x degree"), "{err}");
            assert!(err.contains("is odd"), "{err}");
        }
        assert!(jellyfish(5, 4, 1, 1, &LinkParams::default()).is_ok());
        let err = jellyfish(5, 5, 1, 1, &LinkParams::default())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("degree: must be in 2..5"), "{err}");
    }
}
