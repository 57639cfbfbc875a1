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
