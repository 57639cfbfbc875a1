//! `stencil3d` and `manytomany`: terminals on a periodic X x Y x Z grid (terminal
//! `x + X*(y + Y*z)`), as in the dragonfly paper's application traffic.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{DestinationPattern, PatternInput, PatternParams, uniform_other};
use crate::error::{Error, Result};

/// The default grid of the dragonfly paper (2,550 terminals).
pub(crate) const DEFAULT_GRID: [usize; 3] = [5, 10, 51];

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GridParams {
    /// The X x Y x Z grid (default 5 x 10 x 51); X*Y*Z must equal the terminal count.
    pub dims: Option<Vec<usize>>,
}

impl GridParams {
    fn grid(&self) -> Result<[usize; 3]> {
        match &self.dims {
            None => Ok(DEFAULT_GRID),
            Some(d) if d.len() == 3 && d.iter().all(|&k| k >= 1) => Ok([d[0], d[1], d[2]]),
            Some(d) => Err(Error::field(
                "dims",
                format!(
                    "must be three sizes [X, Y, Z], each at least 1 (got {d:?}); X*Y*Z must equal the terminal count"
                ),
            )),
        }
    }

    /// The grid checked against the topology's `n` terminals.
    fn for_terminals(&self, n: usize) -> Result<[u32; 3]> {
        let dims = self.grid()?;
        let product = dims[0]
            .checked_mul(dims[1])
            .and_then(|p| p.checked_mul(dims[2]));
        if product != Some(n) {
            return Err(Error::field(
                "dims",
                format!(
                    "{} x {} x {} = {} terminals but the topology has {n}; set dims = [X, Y, Z] with X*Y*Z = {n}",
                    dims[0],
                    dims[1],
                    dims[2],
                    product.map_or("too many".to_string(), |p| p.to_string())
                ),
            ));
        }
        Ok(dims.map(|k| k as u32))
    }
}

impl PatternParams for GridParams {
    fn check(&self) -> Result<()> {
        self.grid().map(drop)
    }
}

/// One of the 6 grid neighbours.
#[derive(Clone, Debug)]
pub(crate) struct Stencil {
    dims: [u32; 3],
}

/// Any other terminal of the same Z line.
#[derive(Clone, Debug)]
pub(crate) struct ManyToMany {
    dims: [u32; 3],
}

pub(crate) fn stencil3d(
    input: &PatternInput,
    _: &mut ChaCha8Rng,
) -> Result<Box<dyn DestinationPattern>> {
    let params: GridParams = input.read_params()?;
    Ok(Box::new(Stencil {
        dims: params.for_terminals(input.terminals())?,
    }))
}

pub(crate) fn manytomany(
    input: &PatternInput,
    _: &mut ChaCha8Rng,
) -> Result<Box<dyn DestinationPattern>> {
    let params: GridParams = input.read_params()?;
    Ok(Box::new(ManyToMany {
        dims: params.for_terminals(input.terminals())?,
    }))
}

fn stencil_step(src: u32, dims: [u32; 3], dir: u32) -> u32 {
    let [x_n, y_n, _] = dims;
    let mut c = [src % x_n, src / x_n % y_n, src / (x_n * y_n)];
    let axis = (dir / 2) as usize;
    let k = dims[axis];
    c[axis] = if dir % 2 == 0 {
        (c[axis] + k - 1) % k
    } else {
        (c[axis] + 1) % k
    };
    c[0] + x_n * (c[1] + y_n * c[2])
}

impl DestinationPattern for Stencil {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        let d = stencil_step(src, self.dims, rng.random_range(0..6u32));
        (d != src).then_some(d)
    }

    fn send_fraction(&self, src: u32) -> f64 {
        (0..6u32)
            .filter(|&dir| stencil_step(src, self.dims, dir) != src)
            .count() as f64
            / 6.0
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        (0..6u32)
            .map(|dir| (stencil_step(src, self.dims, dir), 1.0 / 6.0))
            .filter(|&(d, _)| d != src)
            .collect()
    }
}

impl DestinationPattern for ManyToMany {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        let dims = self.dims;
        let plane = dims[0] * dims[1];
        if dims[2] < 2 {
            return None;
        }
        Some(src % plane + plane * uniform_other(src / plane, dims[2], rng))
    }

    fn send_fraction(&self, _: u32) -> f64 {
        f64::from(u8::from(self.dims[2] >= 2))
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        let dims = self.dims;
        let plane = dims[0] * dims[1];
        let z = src / plane;
        let p = 1.0 / f64::from(dims[2].saturating_sub(1).max(1));
        (0..dims[2])
            .filter(|&k| k != z)
            .map(|k| (src % plane + plane * k, p))
            .collect()
    }
}
