//! `fabricopt hypervolume`: the exact hypervolume of a point set read from a CSV file (all
//! objectives minimised), and optionally each point's exclusive contribution.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use crate::error::Error;
use crate::search::hypervolume::csv::{
    checked_contributions, checked_hypervolume, number, parse_points,
};

#[derive(Args, Debug)]
pub struct HypervolumeArgs {
    /// CSV file: one point per line, values separated by commas (double-quoted cells allowed);
    /// blank lines and `#` comments are skipped; the first line may be a header of names.
    /// A `front.csv` written by `search` works as it is: its objectives come first.
    pub points: PathBuf,
    /// The reference point, one value per objective, e.g. `--ref 1.1,1.1,1.1`.
    #[arg(
        long = "ref",
        visible_alias = "reference",
        value_name = "R1,R2,...",
        allow_hyphen_values = true
    )]
    pub reference: String,
    /// The objective columns, by header name, in the order of `--ref` (other columns, such as
    /// a front's extras and genome, are ignored). Default: every column, or the first as many
    /// columns as `--ref` has values when a header names more.
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub columns: Vec<String>,
    /// Objective columns (by header name) that are maximised, as a `search` front gives them
    /// in their natural sign: their values and `--ref` values are negated, so that the result
    /// is the hypervolume `search` reports with that reference point. Default: all minimised.
    #[arg(
        long,
        visible_alias = "maximize",
        value_delimiter = ',',
        value_name = "NAME,..."
    )]
    pub maximise: Vec<String>,
    /// Also print each point's exclusive contribution, one line per input point, in input order.
    #[arg(long)]
    pub contributions: bool,
    /// Print one JSON object instead of plain values.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(args: &HypervolumeArgs) -> Result<()> {
    let mut reference = parse_reference(&args.reference)?;
    let text = std::fs::read_to_string(&args.points).map_err(|e| Error::io(&args.points, e))?;
    let table = parse_points(&args.points, &text, reference.len(), &args.columns)?;
    let mut points = table.points;
    if let Some(name) = args.maximise.iter().find(|m| !table.names.contains(m)) {
        bail!(
            "--maximise: `{name}` is not an objective column (they are {})",
            describe_names(&table.names)
        );
    }
    for (j, name) in table.names.iter().enumerate() {
        if args.maximise.contains(name) {
            reference[j] = -reference[j];
            for p in &mut points {
                p[j] = -p[j];
            }
        }
    }
    if table.ignored > 0 && args.columns.is_empty() && !args.json {
        eprintln!(
            "note: objectives {} (the first {} columns; {} more ignored, --columns picks others)",
            describe_names(&table.names),
            table.names.len(),
            table.ignored
        );
    }
    let volume = checked_hypervolume(&args.points, &points, &reference)?;
    let contrib = if args.contributions {
        Some(checked_contributions(&args.points, &points, &reference)?)
    } else {
        None
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut value = serde_json::json!({
            "hypervolume": volume,
            "points": points.len(),
            "dimensions": reference.len(),
        });
        if !table.names.is_empty() {
            value["columns"] = serde_json::json!(table.names);
        }
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

fn describe_names(names: &[String]) -> String {
    if names.is_empty() {
        "unnamed: the file has no header".to_string()
    } else {
        names.join(", ")
    }
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
