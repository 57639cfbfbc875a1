//! Reading point sets for the hypervolume: one point per CSV line (a `front.csv` written by
//! `search` included). Every error names the file, the line and, for values, the column.

use std::path::Path;

use crate::error::Error;

/// A finite number, or why the field is not one.
pub fn number(field: &str) -> std::result::Result<f64, String> {
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
pub struct PointTable {
    pub names: Vec<String>,
    pub points: Vec<Vec<f64>>,
    pub ignored: usize,
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
/// `dims` is the number of objectives (the reference point's length); `columns` names the
/// objective columns by header name (it needs a header). Without `columns`, a header naming
/// more columns than `dims` selects the first `dims` (a `search` front's objectives come first).
pub fn parse_points(
    path: &Path,
    text: &str,
    dims: usize,
    columns: &[String],
) -> Result<PointTable, Error> {
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
    Ok(PointTable {
        names,
        points,
        ignored,
    })
}

/// The hypervolume of points read from `path`, or an error when it is not a finite number:
/// values near the range of a double (±1.8e308) overflow the volumes' products, and the
/// difference of two infinite volumes is NaN. Found by fuzzing.
pub fn checked_hypervolume(
    path: &Path,
    points: &[Vec<f64>],
    reference: &[f64],
) -> Result<f64, Error> {
    finite(path, super::hypervolume(points, reference))
}

/// Each point's exclusive contribution, checked like [`checked_hypervolume`].
pub fn checked_contributions(
    path: &Path,
    points: &[Vec<f64>],
    reference: &[f64],
) -> Result<Vec<f64>, Error> {
    super::contributions(points, reference)
        .into_iter()
        .map(|c| finite(path, c))
        .collect()
}

fn finite(path: &Path, value: f64) -> Result<f64, Error> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(Error::File {
            path: path.to_path_buf(),
            reason: format!(
                "the hypervolume is {value}: the values or the reference point are too large for \
                 a double's range (about 1.8e308) once multiplied; rescale the objectives"
            ),
        })
    }
}
