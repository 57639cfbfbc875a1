//! Bisection width: the fewest links (counted with multiplicity) whose removal splits the
//! routers into two halves of sizes floor(n/2) and ceil(n/2). Reported as an interval with an
//! exact value when proven.
//!
//! * `upper`: the best bisection found by the multilevel FM partitioner ([`partition()`]) —
//!   a real cut, so a proven upper bound.
//! * `lower`: the spectral bound ceil(lambda_2 * floor(n/2) * ceil(n/2) / n) ([`spectral`]);
//!   proven up to floating-point rounding for the dense and symmetry-block eigen-solvers, and
//!   "certified-ish" for the Lanczos path used on large graphs without symmetry.
//! * `exact`: when the two bounds meet, or when a branch and bound ([`exact`]) finishes within
//!   its node budget on a graph of at most `exact_max_routers` routers.

pub mod exact;
pub mod partition;
pub(crate) mod spectral;

#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::topology::graph::RouterGraph;
use crate::topology::symmetry::Symmetry;

pub(crate) use exact::{DEFAULT_NODE_BUDGET, exact_bisection};
pub(crate) use partition::fm_refine;
pub use partition::partition;
#[cfg(test)]
use partition::{multilevel_bisection, structured_cuts};
#[cfg(test)]
use spectral::{SpectralMethod, algebraic_connectivity_dense, algebraic_connectivity_symmetric};
pub(crate) use spectral::{algebraic_connectivity, spectral_lower_bound};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bisection {
    /// Proven lower bound (see the module documentation for the Lanczos caveat).
    pub lower: u64,
    /// Cut of the best bisection found.
    pub upper: u64,
    /// The bisection width when proven; then `lower == upper == exact`.
    pub exact: Option<u64>,
    /// The algebraic connectivity behind `lower` (a lower estimate for the Lanczos method).
    pub spectral_lambda2: f64,
    pub lower_method: String,
    pub upper_method: String,
    /// How `exact` was proven (absent when it was not).
    pub exact_method: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BisectionOptions {
    pub restarts: usize,
    pub seed: u64,
    pub exact_max_routers: usize,
    /// Search nodes the exact branch and bound may visit before giving up (then `exact` is
    /// left unset); bounds its time to a few seconds.
    pub exact_node_budget: u64,
}

impl Default for BisectionOptions {
    fn default() -> Self {
        BisectionOptions {
            restarts: 8,
            seed: 1,
            exact_max_routers: 40,
            exact_node_budget: DEFAULT_NODE_BUDGET,
        }
    }
}

/// Bounds (and, when provable, the exact value) of the bisection width. `symmetry` must be a
/// verified automorphism group of `g`; it speeds up the spectral bound and adds structured
/// starting cuts.
pub fn bisection(
    g: &RouterGraph,
    symmetry: Option<&Symmetry>,
    opts: &BisectionOptions,
) -> Bisection {
    let n = g.num_nodes();
    let (side, upper) = partition(g, symmetry, opts.restarts, opts.seed);
    let spectral = algebraic_connectivity(g, symmetry);
    let lower = spectral_lower_bound(n, spectral.lambda2).min(upper);
    let mut out = Bisection {
        lower,
        upper,
        exact: None,
        spectral_lambda2: spectral.lambda2,
        lower_method: spectral.method.name().to_string(),
        upper_method: format!(
            "multilevel FM partitioner ({} restarts + structured cuts)",
            opts.restarts.max(1)
        ),
        exact_method: None,
    };
    if n < 2 {
        out.exact = Some(0);
        out.exact_method = Some("fewer than two routers".to_string());
    } else if lower == upper {
        out.exact = Some(upper);
        out.exact_method = Some("spectral lower bound meets the partitioner's cut".to_string());
    } else if n <= opts.exact_max_routers {
        if let Some((width, _)) = exact_bisection(g, Some((upper, side)), opts.exact_node_budget) {
            out.exact = Some(width);
            out.exact_method = Some("branch and bound".to_string());
        }
    }
    if let Some(x) = out.exact {
        out.lower = x;
        out.upper = x;
    }
    out
}
