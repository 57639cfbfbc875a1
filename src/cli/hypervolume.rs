//! `fabricopt hypervolume`: the exact hypervolume of a point set read from a CSV file (all
//! objectives minimised), and optionally each point's exclusive contribution.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;

use crate::error::Error;
use crate::search::hypervolume::{contributions, hypervolume};

#[derive(Args, Debug)]
pub struct HypervolumeArgs {
    /// CSV file: one point per line, values separated by commas; blank lines and `#` comments
    /// are skipped; the first line may be a header of names.
    pub points: PathBuf,
    /// The reference point, one value per objective (minimised), e.g. `--ref 1.1,1.1,1.1`.
    #[arg(long = "ref", value_name = "R1,R2,...", allow_hyphen_values = true)]
    pub reference: String,
    /// Also print each point's exclusive contribution, one line per input point, in input order.
    #[arg(long)]
    pub contributions: bool,
    /// Print one JSON object instead of plain values.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &HypervolumeArgs) -> Result<()> {
    let reference = parse_reference(&args.reference)?;
    let text = std::fs::read_to_string(&args.points).map_err(|e| Error::io(&args.points, e))?;
    let points = parse_points(&args.points, &text, reference.len())?;
    let volume = hypervolume(&points, &reference);
    let contrib = args
        .contributions
        .then(|| contributions(&points, &reference));
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut value = serde_json::json!({
            "hypervolume": volume,
            "points": points.len(),
            "dimensions": reference.len(),
        });
        if let Some(c) = &contrib {
            value["contributions"] = serde_json::json!(c);
        }
        writeln!(out, "{value}")?;
    } else {
        writeln!(out, "{volume}")?;
        for c in contrib.iter().flatten() {
            writeln!(out, "{c}")?;
        }
    }
    Ok(())
}

fn parse_reference(text: &str) -> Result<Vec<f64>> {
    if text.trim().is_empty() {
        bail!("--ref: expected comma-separated values, e.g. 1.1,1.1 (got nothing)");
    }
    text.split(',')
        .enumerate()
        .map(|(i, field)| {
            number(field)
                .map_err(|reason| anyhow::anyhow!("--ref `{text}`: value {}: {reason}", i + 1))
        })
        .collect()
}

/// A finite number, or why the field is not one.
fn number(field: &str) -> std::result::Result<f64, String> {
    let field = field.trim();
    if field.is_empty() {
        return Err("empty value".to_string());
    }
    match field.parse::<f64>() {
        Ok(v) if v.is_nan() => Err(format!("`{field}`: NaN is not allowed")),
        Ok(v) if v.is_infinite() => Err(format!("`{field}`: infinite values are not allowed")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("`{field}` is not a number")),
    }
}

/// Reads the points; every error names the file, the line and (for values) the column.
fn parse_points(path: &Path, text: &str, dims: usize) -> Result<Vec<Vec<f64>>, Error> {
    let mut points = Vec::new();
    let mut first = true;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |column: Option<usize>| match column {
            Some(c) => format!("line {}, column {c}", index + 1),
            None => format!("line {}", index + 1),
        };
        let fields: Vec<&str> = line.split(',').collect();
        let parsed: Vec<_> = fields.iter().map(|f| number(f)).collect();
        // A header is a first line of names only (a mix of names and numbers is a typo).
        let header = first
            && parsed.iter().all(|p| p.is_err())
            && fields.iter().all(|f| !f.trim().is_empty());
        first = false;
        if fields.len() != dims {
            let what = if header { "names" } else { "values" };
            return Err(Error::parse(
                path,
                at(None),
                format!("{} {what}, but --ref has {dims}", fields.len()),
            ));
        }
        if header {
            continue;
        }
        let mut point = Vec::with_capacity(dims);
        for (column, value) in parsed.into_iter().enumerate() {
            point.push(value.map_err(|reason| Error::parse(path, at(Some(column + 1)), reason))?);
        }
        points.push(point);
    }
    if points.is_empty() {
        return Err(Error::File {
            path: path.to_path_buf(),
            reason: "no points (the file is empty or holds only comments and a header)".into(),
        });
    }
    Ok(points)
}
