//! `matrix`: destinations weighted by a CSV file of N x N weights (`traffic::matrix` reads it).

use std::path::PathBuf;

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{DestinationPattern, PatternInput, PatternParams};
use crate::error::{Error, Result};
use crate::traffic::matrix::{MatrixRows, read_matrix};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatrixParams {
    /// CSV file of N x N weights, relative to the problem file's folder (required).
    pub matrix: Option<PathBuf>,
}

impl PatternParams for MatrixParams {
    fn check(&self) -> Result<()> {
        match self.matrix {
            Some(_) => Ok(()),
            None => Err(Error::field(
                "matrix",
                "is required for pattern = \"matrix\": a CSV file of N x N weights",
            )),
        }
    }
}

pub(crate) fn build(
    input: &PatternInput,
    _: &mut ChaCha8Rng,
) -> Result<Box<dyn DestinationPattern>> {
    let params: MatrixParams = input.read_params()?;
    params.check()?;
    let path = params.matrix.unwrap_or_default();
    let full = if path.is_absolute() {
        path
    } else {
        input.base_dir.join(path)
    };
    Ok(Box::new(read_matrix(&full, input.terminals(), "matrix")?))
}

impl DestinationPattern for MatrixRows {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        MatrixRows::sample(self, src, rng)
    }

    fn send_fraction(&self, src: u32) -> f64 {
        f64::from(u8::from(self.sends(src)))
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        self.distribution(src)
    }
}
