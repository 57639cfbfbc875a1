//! Bisection width: the fewest links whose removal splits the routers into two halves
//! (sizes floor(n/2) and ceil(n/2)). Reported as an interval with an exact value when proven.

use serde::Serialize;

use crate::topology::graph::RouterGraph;
use crate::topology::symmetry::Symmetry;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bisection {
    pub lower: u64,
    pub upper: u64,
    pub exact: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BisectionOptions {
    pub restarts: usize,
    pub seed: u64,
    pub exact_max_routers: usize,
}

impl Default for BisectionOptions {
    fn default() -> Self {
        BisectionOptions {
            restarts: 8,
            seed: 1,
            exact_max_routers: 40,
        }
    }
}

pub fn bisection(
    g: &RouterGraph,
    _symmetry: Option<&Symmetry>,
    _opts: &BisectionOptions,
) -> Bisection {
    let n = g.num_nodes();
    let side: Vec<bool> = (0..n).map(|v| v < n / 2).collect();
    let upper = g.cut_size(&side);
    Bisection {
        lower: 0,
        upper,
        exact: None,
    }
}
