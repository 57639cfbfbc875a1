//! `randneighbours`: each terminal sends uniformly to its own random list of targets, drawn
//! once from the pattern's random stream.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{DestinationPattern, PatternInput, PatternParams, uniform_other};
use crate::error::{Error, Result};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RandNeighboursParams {
    /// Fewest targets per terminal (default 6).
    pub neighbours_min: Option<usize>,
    /// Most targets per terminal (default 20, or neighbours_min when larger).
    pub neighbours_max: Option<usize>,
}

impl RandNeighboursParams {
    fn range(&self) -> (usize, usize) {
        let min = self.neighbours_min.unwrap_or(6);
        (min, self.neighbours_max.unwrap_or(20.max(min)))
    }
}

impl PatternParams for RandNeighboursParams {
    fn check(&self) -> Result<()> {
        let (min, max) = self.range();
        if min == 0 {
            return Err(Error::field("neighbours_min", "must be at least 1"));
        }
        if max < min {
            return Err(Error::field(
                "neighbours_max",
                format!("must be at least neighbours_min = {min} (got {max})"),
            ));
        }
        Ok(())
    }
}

/// Uniform among per-source target lists.
#[derive(Clone, Debug)]
pub(crate) struct Lists {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

pub(crate) fn build(
    input: &PatternInput,
    rng: &mut ChaCha8Rng,
) -> Result<Box<dyn DestinationPattern>> {
    let params: RandNeighboursParams = input.read_params()?;
    params.check()?;
    let (min, max) = params.range();
    let n = input.terminals();
    let mut offsets = Vec::with_capacity(n + 1);
    let mut targets = Vec::new();
    offsets.push(0u32);
    for t in 0..n as u32 {
        let k = rng.random_range(min..=max).min(n - 1);
        let first = targets.len();
        while targets.len() - first < k {
            let d = uniform_other(t, n as u32, rng);
            if !targets[first..].contains(&d) {
                targets.push(d);
            }
        }
        offsets.push(targets.len() as u32);
    }
    Ok(Box::new(Lists { offsets, targets }))
}

impl Lists {
    fn list(&self, src: u32) -> &[u32] {
        &self.targets[self.offsets[src as usize] as usize..self.offsets[src as usize + 1] as usize]
    }
}

impl DestinationPattern for Lists {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        let list = self.list(src);
        (!list.is_empty()).then(|| list[rng.random_range(0..list.len() as u32) as usize])
    }

    fn send_fraction(&self, src: u32) -> f64 {
        f64::from(u8::from(!self.list(src).is_empty()))
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        let list = self.list(src);
        list.iter().map(|&d| (d, 1.0 / list.len() as f64)).collect()
    }
}
