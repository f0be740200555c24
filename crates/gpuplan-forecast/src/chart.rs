//! An SVG chart of a usage history, its forecast inside the prediction band and the
//! commitment line, with axes, period labels and a legend (plotters).

use crate::PeriodStart;
use crate::forecast::Forecast;
use plotters::prelude::*;

const WIDTH: u32 = 900;
const HEIGHT: u32 = 380;
/// Room above the highest value drawn.
const TOP_MARGIN: f64 = 1.08;
const HISTORY: RGBColor = RGBColor(0x55, 0x55, 0x55);
const FORECAST: RGBColor = RGBColor(0x31, 0x82, 0xbd);
const BAND: RGBColor = RGBColor(0x9e, 0xca, 0xe1);
const COMMITMENT: RGBColor = RGBColor(0xe6, 0x55, 0x0d);

/// Draws the history (grey), the forecast mean (blue) inside its band (light blue) and the
/// GPU-hours per period a commitment covers (orange, dashed), as a standalone SVG document.
/// `starts` are the history's periods; values are GPU-hours per period.
pub fn svg(
    starts: &[PeriodStart],
    history: &[f64],
    forecast: &Forecast,
    commitment: Option<f64>,
    title: &str,
) -> String {
    let mut out = String::new();
    // Drawing into a string cannot fail for want of space; an error leaves what was drawn.
    let _ = draw(&mut out, starts, history, forecast, commitment, title);
    out
}

fn draw(
    out: &mut String,
    starts: &[PeriodStart],
    history: &[f64],
    forecast: &Forecast,
    commitment: Option<f64>,
    title: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = history.len() + forecast.points.len();
    let top = history
        .iter()
        .copied()
        .chain(forecast.points.iter().map(|p| p.upper))
        .chain(commitment)
        .fold(1e-9, f64::max)
        * TOP_MARGIN;
    let label_of = |x: &f64| {
        let i = x.round().max(0.0) as usize;
        starts
            .get(i)
            .copied()
            .or_else(|| {
                forecast
                    .points
                    .get(i.saturating_sub(history.len()))
                    .map(|p| p.timestamp)
            })
            .map_or(String::new(), |s| s.to_string())
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..(n.max(2) - 1) as f64, 0f64..top)?;
    chart
        .configure_mesh()
        .x_labels(6)
        .x_label_formatter(&label_of)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .y_desc("GPU-hours per period")
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let offset = history.len() as f64;
    let upper = forecast
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (offset + i as f64, p.upper));
    let lower = forecast
        .points
        .iter()
        .enumerate()
        .rev()
        .map(|(i, p)| (offset + i as f64, p.lower));
    chart
        .draw_series(std::iter::once(Polygon::new(
            upper.chain(lower).collect::<Vec<_>>(),
            BAND.mix(0.6).filled(),
        )))?
        .label(format!("{:.0} % band", forecast.level * 100.0))
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], BAND.filled()));
    chart
        .draw_series(LineSeries::new(
            history.iter().enumerate().map(|(i, v)| (i as f64, *v)),
            HISTORY.stroke_width(2),
        ))?
        .label("history")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], HISTORY.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            forecast
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (offset + i as f64, p.mean)),
            FORECAST.stroke_width(2),
        ))?
        .label("forecast")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], FORECAST.stroke_width(2)));
    if let Some(level) = commitment {
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, level), ((n.max(2) - 1) as f64, level)],
                8,
                5,
                COMMITMENT.stroke_width(2),
            ))?
            .label("commitment")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], COMMITMENT.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forecast::{Backtest, ForecastPoint};

    #[test]
    fn the_chart_has_axes_a_legend_and_every_series() {
        let day = |d: u8| PeriodStart::from(gpuplan_model::Date::new(2024, 1, d).unwrap());
        let starts: Vec<PeriodStart> = (1..=10).map(day).collect();
        let history: Vec<f64> = (1..=10u8).map(|i| f64::from(i) * 10.0).collect();
        let forecast = Forecast {
            model: "drift".to_string(),
            level: 0.9,
            points: (11..=13)
                .map(|d| ForecastPoint {
                    timestamp: day(d),
                    mean: 110.0,
                    lower: 100.0,
                    upper: 120.0,
                })
                .collect(),
            backtest: Backtest {
                holdout: 2,
                mape: 0.1,
                mase: 0.5,
                seasonal_naive_mape: 0.2,
                candidates: Vec::new(),
            },
        };
        let svg = svg(&starts, &history, &forecast, Some(105.0), "usage");
        assert!(svg.starts_with("<svg"), "{svg}");
        for text in [
            "GPU-hours per period",
            "history",
            "forecast",
            "commitment",
            "90 % band",
            "2024-01-01",
        ] {
            assert!(svg.contains(text), "{text}");
        }
        assert!(
            svg.contains("stroke-dasharray") || svg.matches("<line").count() > 2,
            "a dashed commitment line"
        );
        let without = super::svg(&starts, &history, &forecast, None, "usage");
        assert!(!without.contains("commitment"));
    }
}
