//! Explicit traffic matrices: a CSV file of N x N nonnegative weights, row = source terminal.

use std::path::Path;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};

/// Row-normalised weights, stored sparsely: for source `s`, the entries
/// `offsets[s]..offsets[s + 1]` of `dst` and `cum` (cumulative probability, the last one 1).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MatrixRows {
    offsets: Vec<usize>,
    dst: Vec<u32>,
    cum: Vec<f64>,
}

impl MatrixRows {
    /// Builds the rows from dense weights; the diagonal (sending to oneself) is ignored.
    pub(crate) fn from_weights(rows: &[Vec<f64>]) -> MatrixRows {
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        let mut dst = Vec::new();
        let mut cum = Vec::new();
        offsets.push(0);
        for (s, row) in rows.iter().enumerate() {
            let total: f64 = row
                .iter()
                .enumerate()
                .filter(|&(d, _)| d != s)
                .map(|(_, &w)| w)
                .sum();
            if total > 0.0 {
                let mut acc = 0.0;
                for (d, &w) in row.iter().enumerate() {
                    if d != s && w > 0.0 {
                        acc += w;
                        dst.push(d as u32);
                        cum.push(acc / total);
                    }
                }
                *cum.last_mut().expect("a positive row has an entry") = 1.0;
            }
            offsets.push(dst.len());
        }
        MatrixRows { offsets, dst, cum }
    }

    fn row(&self, src: u32) -> (&[u32], &[f64]) {
        let range = self.offsets[src as usize]..self.offsets[src as usize + 1];
        (&self.dst[range.clone()], &self.cum[range])
    }

    pub(crate) fn sends(&self, src: u32) -> bool {
        !self.row(src).0.is_empty()
    }

    pub(crate) fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        let (dst, cum) = self.row(src);
        if dst.is_empty() {
            return None;
        }
        let u = rng.random::<f64>();
        let i = cum.partition_point(|&c| c <= u).min(dst.len() - 1);
        Some(dst[i])
    }

    pub(crate) fn distribution(&self, src: u32) -> Vec<(u32, f64)> {
        let (dst, cum) = self.row(src);
        let mut previous = 0.0;
        dst.iter()
            .zip(cum)
            .map(|(&d, &c)| {
                let p = c - previous;
                previous = c;
                (d, p)
            })
            .collect()
    }
}

/// Reads a matrix file for `n` terminals. `field` names the config key in errors about the
/// file as a whole; errors about its content name the file and the line.
pub(crate) fn read_matrix(path: &Path, n: usize, field: &str) -> Result<MatrixRows> {
    let text = crate::cluster::read_input(path).map_err(|e| {
        Error::field(
            field,
            format!("cannot read matrix file {}: {e}", path.display()),
        )
    })?;
    let rows = parse_matrix(&text, n).map_err(|(line, reason)| {
        let location = line.map_or("file".to_string(), |l| format!("line {l}"));
        Error::parse(path, location, reason)
    })?;
    Ok(MatrixRows::from_weights(&rows))
}

/// Parses CSV text (commas, or whitespace when a line has no comma; blank lines and lines
/// starting with `#` are skipped) into `n` rows of `n` weights.
pub(crate) fn parse_matrix(
    text: &str,
    n: usize,
) -> std::result::Result<Vec<Vec<f64>>, (Option<usize>, String)> {
    let mut rows = Vec::with_capacity(n);
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if rows.len() == n {
            return Err((
                Some(line_no),
                format!("more than {n} rows (the topology has {n} terminals)"),
            ));
        }
        let cells: Vec<&str> = if line.contains(',') {
            line.split(',').map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        if cells.len() != n {
            return Err((
                Some(line_no),
                format!(
                    "row {} has {} values but the topology has {n} terminals (N x N weights expected)",
                    rows.len(),
                    cells.len()
                ),
            ));
        }
        let mut row = Vec::with_capacity(n);
        for (col, cell) in cells.iter().enumerate() {
            let w: f64 = cell.parse().map_err(|_| {
                (
                    Some(line_no),
                    format!("column {col}: \"{cell}\" is not a number"),
                )
            })?;
            if !(w.is_finite() && w >= 0.0) {
                return Err((
                    Some(line_no),
                    format!("column {col}: weights must be finite and nonnegative (got {w})"),
                ));
            }
            row.push(w);
        }
        rows.push(row);
    }
    if rows.len() != n {
        return Err((
            None,
            format!(
                "has {} rows but the topology has {n} terminals (N x N weights expected)",
                rows.len()
            ),
        ));
    }
    Ok(rows)
}
