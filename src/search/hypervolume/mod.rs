//! Exact hypervolume (minimisation): the volume dominated by a point set and bounded by a
//! reference point, and each point's exclusive contribution.
//!
//! PLACEHOLDER (to be replaced in this issue): both functions currently use the slow
//! slicing reference in [`reference`]; the fast algorithms (2-D/3-D sweeps, WFG) replace them.

pub mod reference;

/// Hypervolume of `points` (each of the reference point's dimension) with respect to
/// `reference`, minimising every objective. Points that do not strictly dominate the reference
/// point contribute nothing.
pub fn hypervolume(points: &[Vec<f64>], reference: &[f64]) -> f64 {
    reference::hypervolume(points, reference)
}

/// Each point's exclusive contribution `HV(S) - HV(S \ {p})` (0 for dominated points and
/// for duplicates).
pub fn contributions(points: &[Vec<f64>], reference: &[f64]) -> Vec<f64> {
    reference::contributions(points, reference)
}
