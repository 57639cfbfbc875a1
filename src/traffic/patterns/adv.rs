//! `adv`: ADV+i on a dragonfly, every packet to a random terminal of group G + i.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{DestinationPattern, PatternInput, PatternParams};
use crate::error::{Error, Result};
use crate::topology::Shape;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdvParams {
    /// The group offset i of ADV+i (default 1).
    pub shift: Option<usize>,
}

impl PatternParams for AdvParams {
    fn check(&self) -> Result<()> {
        if self.shift == Some(0) {
            return Err(Error::field(
                "shift",
                "must be at least 1 (ADV+i sends from group G to group G+i)",
            ));
        }
        Ok(())
    }
}

/// ADV+shift: a uniformly random terminal of group `(G + shift) mod groups`.
#[derive(Clone, Debug)]
pub(crate) struct Adv {
    shift: u32,
    groups: u32,
    group_of: Vec<u32>,
    /// Members of group `g` are `members[offsets[g]..offsets[g + 1]]`.
    offsets: Vec<u32>,
    members: Vec<u32>,
}

pub(crate) fn build(
    input: &PatternInput,
    _: &mut ChaCha8Rng,
) -> Result<Box<dyn DestinationPattern>> {
    let params: AdvParams = input.read_params()?;
    params.check()?;
    let shift = params.shift.unwrap_or(1);
    let topo = input.topo;
    let n = topo.num_terminals();
    let (a, g) = match topo.shape {
        Shape::Dragonfly { a, g, .. } => (a, g),
        _ => {
            return Err(Error::field(
                "pattern",
                format!(
                    "\"adv\" (ADV+i) needs a dragonfly topology (groups); {} is not one",
                    topo.name
                ),
            ));
        }
    };
    if shift >= g {
        return Err(Error::field(
            "shift",
            format!("must be between 1 and g - 1 = {} (got {shift})", g - 1),
        ));
    }
    let group_of: Vec<u32> = topo
        .terminals
        .iter()
        .map(|t| (t.router / a) as u32)
        .collect();
    let mut offsets = vec![0u32; g + 1];
    for &grp in &group_of {
        offsets[grp as usize + 1] += 1;
    }
    for i in 0..g {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut members = vec![0u32; n];
    for (t, &grp) in group_of.iter().enumerate() {
        members[fill[grp as usize] as usize] = t as u32;
        fill[grp as usize] += 1;
    }
    Ok(Box::new(Adv {
        shift: shift as u32,
        groups: g as u32,
        group_of,
        offsets,
        members,
    }))
}

impl Adv {
    fn members_for(&self, src: u32) -> &[u32] {
        let g = ((self.group_of[src as usize] + self.shift) % self.groups) as usize;
        &self.members[self.offsets[g] as usize..self.offsets[g + 1] as usize]
    }
}

impl DestinationPattern for Adv {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        let m = self.members_for(src);
        (!m.is_empty()).then(|| m[rng.random_range(0..m.len() as u32) as usize])
    }

    fn send_fraction(&self, src: u32) -> f64 {
        f64::from(u8::from(!self.members_for(src).is_empty()))
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        let m = self.members_for(src);
        m.iter().map(|&d| (d, 1.0 / m.len() as f64)).collect()
    }
}
