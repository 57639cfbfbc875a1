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

pub fn run(args: &HypervolumeArgs) -> Result<()> {
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

/// The points read from a CSV file, with the names of their columns (empty without a header)
/// and how many further columns each row had that were not read.
struct Table {
    names: Vec<String>,
    points: Vec<Vec<f64>>,
    ignored: usize,
}

/// Splits one CSV line into cells: commas separate, double quotes enclose a cell that may hold
/// commas (`""` is a quote inside it), and an unquoted `#` starts a comment. Cells are trimmed.
fn split_cells(line: &str) -> std::result::Result<Vec<String>, String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            ('"', true) => quoted = false,
            ('"', false) if cell.trim().is_empty() => {
                cell.clear();
                quoted = true;
            }
            (',', false) => cells.push(std::mem::take(&mut cell).trim().to_string()),
            ('#', false) => break,
            (c, _) => cell.push(c),
        }
    }
    if quoted {
        return Err("a quoted cell is not closed on its line".to_string());
    }
    cells.push(cell.trim().to_string());
    Ok(cells)
}

/// Reads the points; every error names the file, the line and (for values) the column.
/// `columns` names the objective columns (it needs a header); see [`HypervolumeArgs`].
fn parse_points(path: &Path, text: &str, dims: usize, columns: &[String]) -> Result<Table, Error> {
    let mut points = Vec::new();
    let mut names: Vec<String> = Vec::new();
    // Which cells of a row are the objectives, and how many cells a row has.
    let mut selected: Vec<usize> = (0..dims).collect();
    let mut width = None;
    let mut first = true;
    for (index, raw) in text.lines().enumerate() {
        let at = |column: Option<usize>| match column {
            Some(c) => format!("line {}, column {c}", index + 1),
            None => format!("line {}", index + 1),
        };
        let fields = split_cells(raw).map_err(|reason| Error::parse(path, at(None), reason))?;
        if fields.len() == 1 && fields[0].is_empty() {
            continue;
        }
        let parsed: Vec<_> = fields.iter().map(|f| number(f)).collect();
        // A header is a first line of names only (a mix of names and numbers is a typo).
        let header = first
            && parsed.iter().all(|p| p.is_err())
            && fields.iter().all(|f| !f.trim().is_empty());
        if first && !columns.is_empty() && !header {
            return Err(Error::parse(
                path,
                at(None),
                "--columns needs a first line of column names",
            ));
        }
        first = false;
        if header {
            if !columns.is_empty() {
                if columns.len() != dims {
                    return Err(Error::parse(
                        path,
                        at(None),
                        format!("--columns names {}, but --ref has {dims}", columns.len()),
                    ));
                }
                selected = columns
                    .iter()
                    .map(|c| {
                        fields.iter().position(|f| f == c).ok_or_else(|| {
                            Error::parse(
                                path,
                                at(None),
                                format!(
                                    "no column `{c}` for --columns (the columns are {})",
                                    fields.join(", ")
                                ),
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?;
            } else if fields.len() < dims {
                return Err(Error::parse(
                    path,
                    at(None),
                    format!("{} names, but --ref has {dims}", fields.len()),
                ));
            }
            names = selected.iter().map(|&j| fields[j].clone()).collect();
            width = Some(fields.len());
            continue;
        }
        let expected = width.unwrap_or(dims);
        if fields.len() != expected {
            let want = match width {
                Some(w) => format!("the header has {w} names"),
                None => format!("--ref has {dims}"),
            };
            return Err(Error::parse(
                path,
                at(None),
                format!("{} values, but {want}", fields.len()),
            ));
        }
        let mut point = Vec::with_capacity(dims);
        for &column in &selected {
            let value = parsed[column]
                .clone()
                .map_err(|reason| Error::parse(path, at(Some(column + 1)), reason))?;
            point.push(value);
        }
        points.push(point);
    }
    if points.is_empty() {
        return Err(Error::File {
            path: path.to_path_buf(),
            reason: "no points (the file is empty or holds only comments and a header)".into(),
        });
    }
    let ignored = width.map_or(0, |w| w - dims);
    Ok(Table {
        names,
        points,
        ignored,
    })
}
