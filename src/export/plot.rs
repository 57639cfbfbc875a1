//! SVG plots written by the tool itself (plotters, SVG backend: no system fonts needed).

use std::path::Path;

use plotters::prelude::*;

use crate::error::{Error, Result};

/// One curve of a plot.
pub(crate) struct Series<'a> {
    pub label: &'a str,
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` as lines with markers into an SVG file at `path` (written atomically).
pub(crate) fn line_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
    let all = || series.iter().flat_map(|s| s.points.iter().copied());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in all().filter(|(x, y)| x.is_finite() && y.is_finite()) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        return Err(Error::File {
            path: path.to_path_buf(),
            reason: "nothing to plot (no finite points)".into(),
        });
    }
    let pad = |a: f64, b: f64| {
        if (b - a).abs() < 1e-12 {
            1.0
        } else {
            (b - a) * 0.05
        }
    };
    let (px, py) = (pad(x0, x1), pad(y0, y1));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 560)).into_drawing_area();
        let draw = |e: &dyn std::fmt::Display| Error::File {
            path: path.to_path_buf(),
            reason: format!("drawing failed: {e}"),
        };
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d((x0 - px)..(x1 + px), (y0.min(0.0))..(y1 + py))
            .map_err(|e| draw(&e))?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()
            .map_err(|e| draw(&e))?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|e| draw(&e))?
                .label(s.label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| draw(&e))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| draw(&e))?;
        root.present().map_err(|e| draw(&e))?;
    }
    crate::files::write_atomically(path, svg.as_bytes())
}

/// One routing's curve on a latency-load plot: the stable points (joined) and the flagged
/// ones (saturated, unstable or deadlocked: marked with a cross, not joined).
pub(crate) struct LoadCurve<'a> {
    pub label: &'a str,
    pub stable: Vec<(f64, f64)>,
    pub flagged: Vec<(f64, f64)>,
}

/// Reference points drawn over a latency-load plot (a paper's values), not joined.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Overlay {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Ten distinct colours, dark enough on white (matplotlib's "tab10").
const TAB10: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (148, 103, 189),
    (255, 127, 14),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

fn tab10(i: usize) -> RGBAColor {
    let (r, g, b) = TAB10[i % TAB10.len()];
    RGBColor(r, g, b).to_rgba()
}

/// A label reduced to its letters and digits, lower case: `Q-adaptive` and `q_adaptive`,
/// `UGALg` and `ugal_g` match.
fn plain(label: &str) -> String {
    label
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Latency against offered load into an SVG file at `path`: each curve's stable points
/// joined, its flagged points marked and not joined, the overlay's points as triangles (in
/// the colour of the curve whose label they name after a first word such as "paper"); the
/// latency axis is logarithmic when the latencies span more than a decade.
pub(crate) fn latency_load_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[LoadCurve],
    overlay: &[Overlay],
) -> Result<()> {
    let finite = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && y > 0.0;
    let all: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| c.stable.iter().chain(&c.flagged))
        .chain(overlay.iter().flat_map(|o| &o.points))
        .copied()
        .filter(finite)
        .collect();
    if all.is_empty() {
        return Err(Error::File {
            path: path.to_path_buf(),
            reason: "nothing to plot (no point with a finite latency)".into(),
        });
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    // A log axis (plotted as log10, labelled at the powers of ten) once the latencies span
    // more than a decade.
    let log = y1 / y0 > 10.0;
    let ty = |y: f64| if log { y.log10() } else { y };
    let (ty0, ty1) = if log {
        (y0.log10().floor(), y1.log10().ceil())
    } else {
        (0.0, y1 * 1.05)
    };
    let px = if x1 > x0 { (x1 - x0) * 0.05 } else { 1.0 };
    // The colour of each overlay: that of the curve it names after its first word.
    let overlay_colour = |i: usize, o: &Overlay| {
        let named = o
            .label
            .split_once(' ')
            .map_or(o.label.as_str(), |(_, rest)| rest);
        curves
            .iter()
            .position(|c| plain(c.label) == plain(named))
            .map_or(tab10(curves.len() + i), tab10)
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1080, 560)).into_drawing_area();
        let draw = |e: &dyn std::fmt::Display| Error::File {
            path: path.to_path_buf(),
            reason: format!("drawing failed: {e}"),
        };
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        let root = root
            .titled(title, ("sans-serif", 17))
            .map_err(|e| draw(&e))?;
        // The chart on the left, its legend beside it (never over the points).
        let (plot_area, legend_area) = root.split_horizontally(800);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((x0 - px).max(0.0)..(x1 + px), ty0..ty1)
            .map_err(|e| draw(&e))?;
        let y_format = |v: &f64| {
            if log {
                let value = 10f64.powf(*v);
                format!("{}", (value * 1000.0).round() / 1000.0)
            } else {
                format!("{v}")
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_label)
            .y_desc(y_label)
            .y_label_formatter(&y_format);
        if log {
            mesh.y_labels((ty1 - ty0) as usize + 1);
        }
        mesh.draw().map_err(|e| draw(&e))?;
        for (i, c) in curves.iter().enumerate() {
            let color = tab10(i);
            let mut stable: Vec<(f64, f64)> = c
                .stable
                .iter()
                .copied()
                .filter(finite)
                .map(|(x, y)| (x, ty(y)))
                .collect();
            stable.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(stable.clone(), color.stroke_width(2)))
                .map_err(|e| draw(&e))?;
            chart
                .draw_series(stable.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| draw(&e))?;
            chart
                .draw_series(
                    c.flagged
                        .iter()
                        .copied()
                        .filter(finite)
                        .map(|(x, y)| Cross::new((x, ty(y)), 5, color.stroke_width(2))),
                )
                .map_err(|e| draw(&e))?;
        }
        for (i, o) in overlay.iter().enumerate() {
            let color = overlay_colour(i, o);
            chart
                .draw_series(
                    o.points
                        .iter()
                        .copied()
                        .filter(finite)
                        .map(|(x, y)| TriangleMarker::new((x, ty(y)), 6, color.filled())),
                )
                .map_err(|e| draw(&e))?;
        }
        // The legend: one row per curve, the flagged-point marker, one row per overlay.
        let font = ("sans-serif", 13).into_font();
        let row = |k: usize| 30 + 22 * k as i32;
        let mut k = 0;
        for (i, c) in curves.iter().enumerate() {
            let (color, y) = (tab10(i), row(k));
            legend_area
                .draw(&PathElement::new(
                    vec![(5, y), (29, y)],
                    color.stroke_width(2),
                ))
                .map_err(|e| draw(&e))?;
            legend_area
                .draw(&Circle::new((17, y), 3, color.filled()))
                .map_err(|e| draw(&e))?;
            legend_area
                .draw(&Text::new(c.label.to_string(), (38, y - 7), font.clone()))
                .map_err(|e| draw(&e))?;
            k += 1;
        }
        if curves.iter().any(|c| !c.flagged.is_empty()) {
            let y = row(k);
            legend_area
                .draw(&Cross::new((17, y), 5, BLACK.stroke_width(2)))
                .map_err(|e| draw(&e))?;
            for (n, line) in ["saturated, unstable or", "deadlocked (not joined)"]
                .iter()
                .enumerate()
            {
                legend_area
                    .draw(&Text::new(
                        line.to_string(),
                        (38, y - 7 + 15 * n as i32),
                        font.clone(),
                    ))
                    .map_err(|e| draw(&e))?;
            }
            k += 2;
        }
        for (i, o) in overlay.iter().enumerate() {
            let (color, y) = (overlay_colour(i, o), row(k));
            legend_area
                .draw(&TriangleMarker::new((17, y), 6, color.filled()))
                .map_err(|e| draw(&e))?;
            legend_area
                .draw(&Text::new(o.label.clone(), (38, y - 7), font.clone()))
                .map_err(|e| draw(&e))?;
            k += 1;
        }
        root.present().map_err(|e| draw(&e))?;
    }
    crate::files::write_atomically(path, svg.as_bytes())
}

/// Reads overlay points from a CSV file with the header `label,load,latency` (in the plot's
/// units): one overlay per label, in order of first appearance.
pub(crate) fn read_overlay(path: &Path) -> Result<Vec<Overlay>> {
    let err = |line: usize, reason: String| Error::File {
        path: path.to_path_buf(),
        reason: format!("line {line}: {reason}"),
    };
    let text = std::fs::read_to_string(path).map_err(|e| Error::File {
        path: path.to_path_buf(),
        reason: format!("cannot read: {e}"),
    })?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    match lines.next() {
        Some((_, header)) if header.trim() == "label,load,latency" => {}
        _ => {
            return Err(err(
                1,
                "the first line must be the header `label,load,latency`".into(),
            ));
        }
    }
    let mut overlays: Vec<Overlay> = Vec::new();
    for (i, line) in lines {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [label, load, latency] = fields[..] else {
            return Err(err(
                i + 1,
                format!("expected 3 fields, found {}", fields.len()),
            ));
        };
        let number = |s: &str, what: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| err(i + 1, format!("{what} `{s}` is not a finite number")))
        };
        let point = (number(load, "load")?, number(latency, "latency")?);
        match overlays.iter_mut().find(|o| o.label == label) {
            Some(o) => o.points.push(point),
            None => overlays.push(Overlay {
                label: label.to_string(),
                points: vec![point],
            }),
        }
    }
    Ok(overlays)
}
