//! The exact LPs, built with good_lp: the candidate-path relaxation and the edge-based
//! min-congestion multicommodity flow.

use std::collections::HashSet;

use good_lp::{
    Constraint, Expression, ProblemVariables, Solution, SolverModel, Variable, constraint, variable,
};

use super::path_ipm::{self, MasterPair};
use super::{Bound, BoundKind, Network, check_demand, demand_by_source};
use crate::error::{Error, Result};
use crate::routing::table::load::RouterDemand;
use crate::routing::table::{CandidateSet, RouterPath, pair_of};
use crate::topology::Topology;

/// Which LP solver to use. The default is HiGHS when the `highs` cargo feature is on, Clarabel
/// (pure Rust) otherwise: on the 64-router routing LP Clarabel takes seconds where microlp takes
/// minutes (docs/bounds.md has the measurements).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LpSolver {
    /// Pure-Rust simplex (good_lp's `microlp` feature): exact vertex solutions, but far slower
    /// than Clarabel beyond a few thousand variables.
    // Only the tests cross-check the default solver against it (100x slower here).
    #[cfg(test)]
    Microlp,
    /// Pure-Rust interior point (good_lp's `clarabel` feature), accurate to about 1e-8.
    #[cfg_attr(not(feature = "highs"), default)]
    Clarabel,
    /// HiGHS (cargo feature `highs`; needs cmake to build).
    #[cfg(feature = "highs")]
    #[default]
    Highs,
}

impl LpSolver {
    pub(crate) fn name(self) -> &'static str {
        match self {
            #[cfg(test)]
            #[cfg(test)]
            LpSolver::Microlp => "microlp",
            LpSolver::Clarabel => "clarabel",
            #[cfg(feature = "highs")]
            LpSolver::Highs => "highs",
        }
    }
}

/// Minimises `t` subject to `constraints` and returns its optimal value.
fn minimise(
    vars: ProblemVariables,
    t: Variable,
    constraints: Vec<Constraint>,
    solver: LpSolver,
) -> Result<f64> {
    let lp_error = |e: good_lp::ResolutionError| Error::field("lp", format!("{e}"));
    let problem = vars.minimise(t);
    let value = match solver {
        #[cfg(test)]
        LpSolver::Microlp => problem
            .using(good_lp::microlp)
            .with_all(constraints)
            .solve()
            .map_err(lp_error)?
            .value(t),
        LpSolver::Clarabel => problem
            .using(good_lp::clarabel)
            .with_all(constraints)
            .solve()
            .map_err(lp_error)?
            .value(t),
        #[cfg(feature = "highs")]
        LpSolver::Highs => problem
            .using(good_lp::highs)
            .with_all(constraints)
            .solve()
            .map_err(lp_error)?
            .value(t),
    };
    if value.is_finite() {
        Ok(value)
    } else {
        Err(Error::field("lp", format!("solver returned {value}")))
    }
}

/// The largest entry, used to scale demands to O(1) so that solver tolerances are relative.
fn demand_scale(demand: &RouterDemand) -> f64 {
    demand.demand.iter().copied().fold(0.0, f64::max)
}

/// LP relaxation of "choose one candidate path per pair": variables `x[pair][k] >= 0` with
/// `sum_k x[pair][k] = 1` for every pair with demand, channel load `sum demand[pair] *
/// x[pair][k] / bandwidth` over the candidates using the channel (a path using it twice counts
/// twice) `<= t`, minimise `t`. Identical candidates of a pair share one variable, and a pair
/// with a single distinct candidate is a constant load. The optimum is a lower bound on the max
/// channel load of every table drawn from the candidates (and equals the best fractional mix).
pub(crate) fn candidate_bound_with(
    topo: &Topology,
    cands: &CandidateSet,
    demand: &RouterDemand,
    solver: LpSolver,
) -> Result<Bound> {
    check_candidates(topo, cands, demand)?;
    let method = format!("candidate LP ({})", solver.name());
    let scale = demand_scale(demand);
    if scale == 0.0 {
        return Ok(Bound::new(0.0, BoundKind::Exact, method));
    }
    let mut vars = ProblemVariables::new();
    let t = vars.add(variable().min(0.0));
    let mut load: Vec<Expression> = vec![Expression::from(0.0); 2 * topo.links.len()];
    let mut used = vec![false; load.len()];
    let mut constraints = Vec::new();
    for (d, distinct) in candidate_columns(topo, cands, demand, scale)? {
        if let [channels] = distinct.as_slice() {
            for &c in channels {
                load[c] += d;
                used[c] = true;
            }
            continue;
        }
        let mut sum = Expression::from(0.0);
        for channels in &distinct {
            let x = vars.add(variable().min(0.0));
            sum += x;
            for &c in channels {
                load[c].add_mul(d, x);
                used[c] = true;
            }
        }
        constraints.push(constraint::eq(sum, 1.0));
    }
    for (c, expr) in load.into_iter().enumerate() {
        if used[c] {
            let bw = topo.links[c / 2].params.bandwidth;
            constraints.push(constraint::leq(expr * (1.0 / bw), t));
        }
    }
    let opt = minimise(vars, t, constraints, solver)?;
    Ok(Bound::new(opt.max(0.0) * scale, BoundKind::Exact, method))
}

/// The candidate LP of [`candidate_bound_with`] solved by column generation's dense interior
/// point (`path_ipm.rs`; Clarabel took 42-52 s on the 32x32 mesh transpose's, longer than the
/// GA it runs beside). The bound is the interior point's dual objective, a lower bound on the
/// optimum (weak duality) within 1e-8 of it. None if the interior point did not converge.
pub(crate) fn candidate_bound_dense(
    topo: &Topology,
    cands: &CandidateSet,
    demand: &RouterDemand,
) -> Result<Option<Bound>> {
    check_candidates(topo, cands, demand)?;
    let method = "candidate LP (dense interior point)".to_string();
    let scale = demand_scale(demand);
    if scale == 0.0 {
        return Ok(Some(Bound::new(0.0, BoundKind::Exact, method)));
    }
    let columns = candidate_columns(topo, cands, demand, scale)?;
    let pairs: Vec<MasterPair> = columns
        .iter()
        .map(|(d, distinct)| MasterPair {
            demand: *d,
            columns: distinct,
        })
        .collect();
    let bandwidth: Vec<f64> = (0..2 * topo.links.len())
        .map(|c| topo.links[c / 2].params.bandwidth)
        .collect();
    Ok(path_ipm::solve(&bandwidth, &pairs).map(|sol| {
        Bound::new(
            sol.dual_objective.max(0.0) * scale,
            BoundKind::Exact,
            method,
        )
    }))
}

/// The demand is routable on `topo` and `cands` has a candidate list per pair of it.
fn check_candidates(topo: &Topology, cands: &CandidateSet, demand: &RouterDemand) -> Result<()> {
    let n = topo.num_routers();
    let net = Network::new(topo);
    check_demand(topo, &net, demand)?;
    if cands.num_routers != n || cands.num_pairs() != demand.demand.len() {
        return Err(Error::field(
            "candidates",
            format!(
                "{} pairs for {} routers but the topology has {n} routers ({} pairs)",
                cands.num_pairs(),
                cands.num_routers,
                demand.demand.len()
            ),
        ));
    }
    Ok(())
}

/// Per pair with demand: its demand divided by `scale`, and the channels of each of its
/// distinct candidates (identical candidates would only split one variable).
fn candidate_columns(
    topo: &Topology,
    cands: &CandidateSet,
    demand: &RouterDemand,
    scale: f64,
) -> Result<Vec<(f64, Vec<Vec<usize>>)>> {
    let n = topo.num_routers();
    let mut out = Vec::new();
    for (pair, &rate) in demand.demand.iter().enumerate() {
        let d = rate / scale;
        if d == 0.0 {
            continue;
        }
        let paths = cands.paths(pair);
        let (s, dst) = pair_of(n, pair);
        let mut seen: HashSet<&RouterPath> = HashSet::new();
        let mut distinct = Vec::new();
        for (k, p) in paths.iter().enumerate() {
            if seen.insert(p) {
                distinct.push(path_channels(topo, p, s, dst, pair, k)?);
            }
        }
        if distinct.is_empty() {
            return Err(Error::field(
                format!("candidates[{s} -> {dst}]"),
                "has demand but no candidate path",
            ));
        }
        out.push((d, distinct));
    }
    Ok(out)
}

/// The channels of candidate `k` of `pair`, checking that it is a path of the topology
/// between the pair's routers (candidate sets can come from files).
fn path_channels(
    topo: &Topology,
    p: &RouterPath,
    s: usize,
    d: usize,
    pair: usize,
    k: usize,
) -> Result<Vec<usize>> {
    let field = || format!("candidates[{pair}][{k}]");
    if p.routers.first() != Some(&(s as u32)) || p.routers.last() != Some(&(d as u32)) {
        return Err(Error::field(
            field(),
            format!("stored for pair {s} -> {d} but runs {:?}", p.routers),
        ));
    }
    if p.routers.iter().any(|&r| r as usize >= topo.num_routers()) {
        return Err(Error::field(field(), "names a router out of range"));
    }
    p.validate(topo).map_err(|e| e.prefix_field(&field()))?;
    Ok(p.channels(topo))
}

/// Min-congestion multicommodity flow over all paths, as an edge LP with one commodity per
/// source router (its flows to all destinations share variables, which is exact for
/// min-congestion: any per-source flow decomposes into paths to its destinations). Variables
/// `f[s][c] >= 0` per source and network channel; conservation at every router; `sum_s f[s][c]
/// <= t * bandwidth(c)`; minimise `t`.
pub(crate) fn routing_bound_exact(
    topo: &Topology,
    demand: &RouterDemand,
    solver: LpSolver,
) -> Result<Bound> {
    let net = Network::new(topo);
    check_demand(topo, &net, demand)?;
    let method = format!("routing LP ({})", solver.name());
    let scale = demand_scale(demand);
    if scale == 0.0 {
        return Ok(Bound::new(0.0, BoundKind::Exact, method));
    }
    let by_source = demand_by_source(demand);
    let mut vars = ProblemVariables::new();
    let t = vars.add(variable().min(0.0));
    let mut cap: Vec<Expression> = vec![Expression::from(0.0); net.chans.len()];
    let mut constraints = Vec::new();
    for (s, dests) in by_source.iter().enumerate() {
        if dests.is_empty() {
            continue;
        }
        // Net outflow per router: the source's total out, each destination's demand in.
        let mut balance: Vec<Expression> = vec![Expression::from(0.0); net.n];
        for (e, ch) in net.chans.iter().enumerate() {
            let f = vars.add(variable().min(0.0));
            balance[ch.from] += f;
            balance[ch.to] -= f;
            cap[e] += f;
        }
        let mut rhs = vec![0.0; net.n];
        for &(d, rate) in dests {
            rhs[s] += rate / scale;
            rhs[d] -= rate / scale;
        }
        for (b, r) in balance.into_iter().zip(rhs) {
            constraints.push(constraint::eq(b, r));
        }
    }
    for (expr, ch) in cap.into_iter().zip(&net.chans) {
        constraints.push(constraint::leq(expr, ch.cap * t));
    }
    let opt = minimise(vars, t, constraints, solver)?;
    Ok(Bound::new(opt.max(0.0) * scale, BoundKind::Exact, method))
}
