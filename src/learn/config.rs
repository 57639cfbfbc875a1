//! The `[routing.q]` table (learning parameters of `q_adaptive` and `q_routing`) and the
//! registry entry that builds them.

use serde::{Deserialize, Serialize};

use super::q_adaptive::{QAdaptive, QAdaptiveParams};
use super::q_routing::{QRouting, QRoutingParams};
use super::session::FeedbackAt;
use crate::error::{Error, Result};
use crate::routing::RoutingFunction;
use crate::routing::config::RoutingConfig;
use crate::topology::Topology;

/// `[routing.q]`: every field optional. Defaults are the paper's values for the 1,056-node
/// dragonfly (docs/sources.md §2); times are in cycles (1 cycle = 1 ns there).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QConfig {
    /// Learning rate when the news is good (delta < 0); default 0.2. Q-routing's only rate.
    pub alpha: Option<f64>,
    /// Q-adaptive: learning rate when the news is bad (delta >= 0); default 0.04.
    pub beta: Option<f64>,
    /// Probability of sending a packet out of a random network port at a decision; 0.001.
    pub epsilon: Option<f64>,
    /// Q-adaptive: minimal-path bias at the source router; default 0.2.
    pub q_thld1: Option<f64>,
    /// Q-adaptive: minimal-path bias at the first intermediate-group router; default 0.35.
    pub q_thld2: Option<f64>,
    /// Q-adaptive: initial value of a global port that reaches the destination group
    /// directly; default 300.
    pub init_direct: Option<f64>,
    /// Q-adaptive: initial value of every other port; default 330.
    pub init_other: Option<f64>,
    /// Q-routing: most router-to-router hops (= VCs needed); default min(num_vcs,
    /// diameter + 2).
    pub max_hops: Option<usize>,
    /// Q-routing: initial estimate per hop (Q = hops to the destination x this); default the
    /// mean latency of the router-to-router links.
    pub init_hop: Option<f64>,
    /// Q-adaptive: integer Q-values, truncated at every update (the authors' code); false.
    pub integer_q: Option<bool>,
    /// Q-adaptive: when a hop's feedback is sent, `arrival` (default) or `input_exit`.
    pub feedback_at: Option<FeedbackAt>,
}

/// Fields of Q-adaptive only (Q-routing has one learning rate and no minimal bias).
const ADAPTIVE_ONLY: [&str; 7] = [
    "beta",
    "q_thld1",
    "q_thld2",
    "init_direct",
    "init_other",
    "integer_q",
    "feedback_at",
];

impl QConfig {
    fn is_set(&self, field: &str) -> bool {
        match field {
            "alpha" => self.alpha.is_some(),
            "beta" => self.beta.is_some(),
            "epsilon" => self.epsilon.is_some(),
            "q_thld1" => self.q_thld1.is_some(),
            "q_thld2" => self.q_thld2.is_some(),
            "init_direct" => self.init_direct.is_some(),
            "init_other" => self.init_other.is_some(),
            "max_hops" => self.max_hops.is_some(),
            "init_hop" => self.init_hop.is_some(),
            "integer_q" => self.integer_q.is_some(),
            "feedback_at" => self.feedback_at.is_some(),
            _ => unreachable!("not a [routing.q] field: {field}"),
        }
    }

    /// Errors on the first of `fields` that is given although `algorithm` ignores it.
    fn reject(&self, algorithm: &str, fields: &[&str]) -> Result<()> {
        match fields.iter().find(|f| self.is_set(f)) {
            Some(f) => Err(Error::field(
                format!("routing.q.{f}"),
                format!("does not apply to routing `{algorithm}`"),
            )),
            None => Ok(()),
        }
    }

    pub(crate) fn q_adaptive(&self) -> Result<QAdaptiveParams> {
        self.reject("q_adaptive", &["max_hops", "init_hop"])?;
        let init_direct = positive("init_direct", self.init_direct.unwrap_or(300.0))?;
        let init_other = positive("init_other", self.init_other.unwrap_or(330.0))?;
        Ok(QAdaptiveParams {
            alpha: rate("alpha", self.alpha.unwrap_or(0.2), false)?,
            beta: rate("beta", self.beta.unwrap_or(0.04), true)?,
            epsilon: probability("epsilon", self.epsilon.unwrap_or(0.001))?,
            q_thld1: threshold("q_thld1", self.q_thld1.unwrap_or(0.2))?,
            q_thld2: threshold("q_thld2", self.q_thld2.unwrap_or(0.35))?,
            init_direct: init_direct as f32,
            init_other: init_other as f32,
            integer_q: self.integer_q.unwrap_or(false),
            feedback_at: self.feedback_at.unwrap_or_default(),
        })
    }

    /// The Q-routing parameters; `max_hops` and `init_hop` stay `None` when not given (their
    /// defaults depend on the topology).
    pub(crate) fn q_routing(&self) -> Result<QRoutingParams> {
        self.reject("q_routing", &ADAPTIVE_ONLY)?;
        let max_hops = match self.max_hops {
            Some(h) if !(1..=255).contains(&h) => {
                return Err(Error::field(
                    "routing.q.max_hops",
                    format!("must be from 1 to 255 (got {h})"),
                ));
            }
            h => h,
        };
        Ok(QRoutingParams {
            alpha: rate("alpha", self.alpha.unwrap_or(0.2), false)?,
            epsilon: probability("epsilon", self.epsilon.unwrap_or(0.001))?,
            max_hops,
            init_hop: self
                .init_hop
                .map(|v| positive("init_hop", v).map(|v| v as f32))
                .transpose()?,
        })
    }
}

/// A learning rate: in (0, 1], or [0, 1] when `zero_ok`.
fn rate(field: &str, v: f64, zero_ok: bool) -> Result<f32> {
    let ok = v.is_finite() && v <= 1.0 && (v > 0.0 || (zero_ok && v == 0.0));
    if ok {
        Ok(v as f32)
    } else {
        let range = if zero_ok { "0 <= x <= 1" } else { "0 < x <= 1" };
        Err(Error::field(
            format!("routing.q.{field}"),
            format!("must satisfy {range} (got {v})"),
        ))
    }
}

fn probability(field: &str, v: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(Error::field(
            format!("routing.q.{field}"),
            format!("must be a probability from 0 to 1 (got {v})"),
        ))
    }
}

fn threshold(field: &str, v: f64) -> Result<f32> {
    if v.is_finite() && v >= 0.0 {
        Ok(v as f32)
    } else {
        Err(Error::field(
            format!("routing.q.{field}"),
            format!("must be a finite number >= 0 (got {v})"),
        ))
    }
}

/// A time estimate: positive (the decision rules divide by Q-values) and finite.
fn positive(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 && v < 1e9 {
        Ok(v)
    } else {
        Err(Error::field(
            format!("routing.q.{field}"),
            format!("must be a number of cycles > 0 and < 1e9 (got {v})"),
        ))
    }
}

/// Parameters of `q_adaptive` and `q_routing`: the `[routing.q]` table.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QParams {
    pub q: Option<QConfig>,
}

/// Builds `q_adaptive` or `q_routing` (registry: `crate::registry::routing`).
pub fn build(
    cfg: &RoutingConfig,
    topo: &Topology,
    num_vcs: usize,
) -> Result<Box<dyn RoutingFunction>> {
    let q = cfg.read_params::<QParams>()?.q.unwrap_or_default();
    match cfg.algorithm.as_str() {
        "q_adaptive" => Ok(Box::new(QAdaptive::new(topo, num_vcs, q.q_adaptive()?)?)),
        "q_routing" => Ok(Box::new(QRouting::new(topo, num_vcs, q.q_routing()?)?)),
        _ => Err(cfg.not_in_family("Q-learning")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(toml: &str) -> Result<QConfig, String> {
        toml::from_str(toml).map_err(|e| e.to_string())
    }

    #[test]
    fn q_config_defaults_are_the_papers() {
        let p = QConfig::default().q_adaptive().unwrap();
        assert_eq!(
            (p.alpha, p.beta, p.epsilon, p.q_thld1, p.q_thld2),
            (0.2, 0.04, 0.001, 0.2, 0.35)
        );
        assert_eq!((p.init_direct, p.init_other), (300.0, 330.0));
        let r = QConfig::default().q_routing().unwrap();
        assert_eq!(
            (r.alpha, r.epsilon, r.max_hops, r.init_hop),
            (0.2, 0.001, None, None)
        );
    }

    #[test]
    fn q_config_errors_name_the_field() {
        let err = |toml: &str, adaptive: bool| {
            let c = q(toml).unwrap();
            let e = if adaptive {
                c.q_adaptive().err()
            } else {
                c.q_routing().err()
            };
            e.expect("should fail").to_string()
        };
        assert!(err("alpha = 0.0", true).starts_with("routing.q.alpha: "));
        assert!(err("alpha = 1.5", false).starts_with("routing.q.alpha: "));
        assert!(err("beta = -0.1", true).starts_with("routing.q.beta: "));
        assert!(err("epsilon = 2.0", true).starts_with("routing.q.epsilon: "));
        assert!(err("q_thld1 = -1.0", true).starts_with("routing.q.q_thld1: "));
        assert!(err("q_thld2 = nan", true).starts_with("routing.q.q_thld2: "));
        assert!(err("init_direct = 0.0", true).starts_with("routing.q.init_direct: "));
        assert!(err("init_other = inf", true).starts_with("routing.q.init_other: "));
        assert!(err("max_hops = 0", false).starts_with("routing.q.max_hops: "));
        assert!(err("init_hop = -3.0", false).starts_with("routing.q.init_hop: "));
        // Fields of the other algorithm.
        assert_eq!(
            err("max_hops = 4", true),
            "routing.q.max_hops: does not apply to routing `q_adaptive`"
        );
        assert_eq!(
            err("beta = 0.1", false),
            "routing.q.beta: does not apply to routing `q_routing`"
        );
        // beta = 0 is allowed (values then only ever fall, as in distributed Q-learning).
        assert_eq!(q("beta = 0.0").unwrap().q_adaptive().unwrap().beta, 0.0);
        assert!(q("gamma = 0.9").unwrap_err().contains("gamma"));
    }
}
