//! An SVG chart of history, forecast band and commitment line, with no dependencies.

use crate::forecast::Forecast;
use std::fmt::Write as _;

/// Draws the history (grey), the forecast mean (blue) inside its interval band, and the
/// recommended commitment (orange, dashed), as a standalone SVG document.
pub fn svg(history: &[f64], forecast: &Forecast, commitment: Option<f64>, title: &str) -> String {
    let (width, height, margin) = (900.0, 360.0, 40.0);
    let n = history.len() + forecast.points.len();
    let max = history
        .iter()
        .copied()
        .chain(forecast.points.iter().map(|p| p.upper))
        .chain(commitment)
        .fold(1e-9, f64::max)
        * 1.05;
    let x = |i: usize| margin + (width - 2.0 * margin) * i as f64 / (n.max(2) - 1) as f64;
    let y = |v: f64| height - margin - (height - 2.0 * margin) * v / max;
    let path = |points: Vec<(f64, f64)>| {
        points
            .iter()
            .map(|(px, py)| format!("{px:.1},{py:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let offset = history.len();
    let mut band: Vec<(f64, f64)> = forecast
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (x(offset + i), y(p.upper)))
        .collect();
    band.extend(
        forecast
            .points
            .iter()
            .enumerate()
            .rev()
            .map(|(i, p)| (x(offset + i), y(p.lower))),
    );
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{margin}" y="22" font-size="14">{}</text>"#,
        title.replace('<', "&lt;")
    );
    let _ = writeln!(
        svg,
        r##"<line x1="{margin}" y1="{0}" x2="{1}" y2="{0}" stroke="#999"/>"##,
        height - margin,
        width - margin
    );
    let _ = writeln!(svg, r##"<text x="4" y="{:.1}">{max:.0}</text>"##, y(max) + 4.0);
    let _ = writeln!(
        svg,
        r##"<polygon points="{}" fill="#9ecae1" fill-opacity="0.5"/>"##,
        path(band)
    );
    let history_points: Vec<(f64, f64)> = history.iter().enumerate().map(|(i, v)| (x(i), y(*v))).collect();
    let _ = writeln!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="#555" stroke-width="1.5"/>"##,
        path(history_points)
    );
    let mean: Vec<(f64, f64)> = forecast
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (x(offset + i), y(p.mean)))
        .collect();
    let _ = writeln!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="#3182bd" stroke-width="2"/>"##,
        path(mean)
    );
    if let Some(level) = commitment {
        let _ = writeln!(
            svg,
            r##"<line x1="{margin}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#e6550d" stroke-dasharray="6 4" stroke-width="2"/><text x="{2}" y="{3:.1}" fill="#e6550d">commitment</text>"##,
            y(level),
            width - margin,
            width - margin - 80.0,
            y(level) - 6.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}
