//! `hotspot`: a share of the packets to a few terminals, the rest uniform.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{DestinationPattern, PatternInput, PatternParams, uniform_other};
use crate::error::{Error, Result};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HotspotParams {
    /// The hotspot terminals (required, non-empty).
    pub hotspots: Option<Vec<usize>>,
    /// Share of packets sent to a hotspot (default 1).
    pub hotspot_fraction: Option<f64>,
}

impl PatternParams for HotspotParams {
    fn check(&self) -> Result<()> {
        if self.hotspots.as_ref().is_none_or(Vec::is_empty) {
            return Err(Error::field(
                "hotspots",
                "is required for pattern = \"hotspot\": a non-empty list of terminal ids",
            ));
        }
        let fraction = self.hotspot_fraction.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&fraction) {
            return Err(Error::field(
                "hotspot_fraction",
                format!("must be between 0 and 1 (got {fraction})"),
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Hotspot {
    n: u32,
    /// Sorted, distinct.
    spots: Vec<u32>,
    fraction: f64,
}

pub(crate) fn build(
    input: &PatternInput,
    _: &mut ChaCha8Rng,
) -> Result<Box<dyn DestinationPattern>> {
    let params: HotspotParams = input.read_params()?;
    params.check()?;
    let hotspots = params.hotspots.unwrap_or_default();
    let n = input.terminals();
    let mut spots = Vec::with_capacity(hotspots.len());
    for (i, &h) in hotspots.iter().enumerate() {
        if h >= n {
            return Err(Error::field(
                format!("hotspots[{i}]"),
                format!("terminal {h} does not exist (the topology has {n})"),
            ));
        }
        spots.push(h as u32);
    }
    spots.sort_unstable();
    if let Some(w) = spots.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::field(
            "hotspots",
            format!("terminal {} is listed twice", w[0]),
        ));
    }
    Ok(Box::new(Hotspot {
        n: n as u32,
        spots,
        fraction: params.hotspot_fraction.unwrap_or(1.0),
    }))
}

impl DestinationPattern for Hotspot {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        let spots = &self.spots;
        if self.fraction > 0.0 && rng.random::<f64>() < self.fraction {
            match spots.binary_search(&src) {
                Err(_) => {
                    return Some(spots[rng.random_range(0..spots.len() as u32) as usize]);
                }
                Ok(i) if spots.len() > 1 => {
                    let mut r = rng.random_range(0..spots.len() as u32 - 1) as usize;
                    if r >= i {
                        r += 1;
                    }
                    return Some(spots[r]);
                }
                Ok(_) => {}
            }
        }
        Some(uniform_other(src, self.n, rng))
    }

    fn send_fraction(&self, _: u32) -> f64 {
        1.0
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        let n = self.n;
        let others: Vec<u32> = self.spots.iter().copied().filter(|&h| h != src).collect();
        let (f, rest) = if others.is_empty() {
            (0.0, 1.0)
        } else {
            (self.fraction, 1.0 - self.fraction)
        };
        let mut v: Vec<(u32, f64)> = (0..n)
            .filter(|&d| d != src)
            .map(|d| (d, rest / f64::from(n - 1)))
            .collect();
        for h in others.iter() {
            v.push((*h, f / others.len() as f64));
        }
        v
    }
}
