//! When a run ends: a value the run loop asks after every generation, so the budget's
//! arithmetic lives here and not in the loop.

use crate::error::{Error, Result};
use crate::search::config::generations_budget;

/// A run's budget. Generation 0 evaluates the initial population; every later generation
/// evaluates `population` new individuals, the last one only what is left of the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// This many evaluations in all, the initial population included.
    Evaluations(usize),
    /// This many generations after the initial population: `population × (n + 1)`
    /// evaluations.
    Generations(usize),
}

impl Termination {
    /// Refuses a budget that does not cover the initial population, or generations whose
    /// budget overflows (errors name the field as `RunSettings` does).
    pub fn check(self, population: usize) -> Result<()> {
        match self {
            Termination::Evaluations(n) if n < population => Err(Error::field(
                "evaluations",
                format!("{n} is less than the population ({population})"),
            )),
            Termination::Evaluations(_) => Ok(()),
            Termination::Generations(g) => {
                generations_budget("generations", population, g).map(drop)
            }
        }
    }

    /// The budget in evaluations, the initial population included: what checkpoints store as
    /// `evaluation_budget` and a resume compares.
    pub fn evaluation_budget(self, population: usize) -> usize {
        match self {
            Termination::Evaluations(n) => n,
            // Saturates only for budgets that `check` refuses.
            Termination::Generations(g) => population.saturating_mul(g.saturating_add(1)),
        }
    }

    /// How many new individuals the generation after `evaluations` evaluations creates:
    /// `population`, or what is left of the budget; `None` once the budget is spent.
    pub(crate) fn next_generation(self, population: usize, evaluations: usize) -> Option<usize> {
        let budget = self.evaluation_budget(population);
        (evaluations < budget).then(|| population.min(budget - evaluations))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_generation_gets_what_is_left() {
        let t = Termination::Evaluations(4030);
        assert_eq!(t.next_generation(40, 40), Some(40));
        assert_eq!(t.next_generation(40, 4000), Some(30));
        assert_eq!(t.next_generation(40, 4030), None);
        let g = Termination::Generations(2);
        assert_eq!(g.evaluation_budget(10), 30);
        assert_eq!(
            [10, 20, 30].map(|e| g.next_generation(10, e)),
            [Some(10), Some(10), None]
        );
    }

    #[test]
    fn budgets_are_checked() {
        assert!(Termination::Evaluations(10).check(10).is_ok());
        let e = Termination::Evaluations(9)
            .check(10)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("evaluations") && e.contains("less than the population"),
            "{e}"
        );
        assert!(Termination::Generations(usize::MAX).check(10).is_err());
    }
}
