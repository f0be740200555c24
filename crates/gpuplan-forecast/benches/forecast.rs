//! Forecast cost against history length: every candidate fitted and backtested.
//! `cargo bench -p gpuplan-forecast`

#![allow(clippy::unwrap_used)]

use gpuplan_forecast::forecast;
use gpuplan_forecast::history::{HistoryOptions, Period, parse_csv, start_after};
use gpuplan_forecast::{Frequency, Series};
use gpuplan_model::Date;

fn main() {
    divan::main();
}

/// A daily history of `days` with a weekly cycle and a trend (deterministic).
fn daily(days: usize) -> Series {
    let start = Series {
        starts: vec![Date::new(2000, 1, 1).unwrap().into()],
        values: Vec::new(),
        frequency: Frequency::Daily,
        filled: Vec::new(),
    };
    Series {
        starts: (0..days).map(|i| start_after(&start, i)).collect(),
        values: (0..days)
            .map(|i| {
                100.0
                    + 0.01 * i as f64
                    + 10.0 * (i as f64 * std::f64::consts::TAU / 7.0).sin()
                    + ((i * 7919) % 13) as f64 * 0.3
            })
            .collect(),
        frequency: Frequency::Daily,
        filled: Vec::new(),
    }
}

#[divan::bench(args = [1_000, 10_000, 30_000])]
fn forecast_daily_history(bencher: divan::Bencher, days: usize) {
    let series = daily(days);
    bencher.bench(|| forecast(&series, 30, 0.9).unwrap().points.len());
}

#[divan::bench]
fn forecast_air_passengers(bencher: divan::Bencher) {
    let series = parse_csv(
        include_str!("../tests/fixtures/air-passengers.csv"),
        &HistoryOptions::default(),
    )
    .unwrap();
    bencher.bench(|| forecast(&series, 12, 0.9).unwrap().points.len());
}

/// A year of per-minute telemetry (525,600 rows of GPUs in use, RFC 3339 timestamps), read,
/// combined into days and forecast: what `gpuplan forecast --history telemetry.csv` does.
#[divan::bench(sample_count = 5)]
fn forecast_a_year_of_per_minute_telemetry(bencher: divan::Bencher) {
    let text = per_minute_year();
    let options = HistoryOptions {
        aggregate: gpuplan_forecast::history::Aggregate::Mean,
        ..HistoryOptions::default()
    };
    bencher.bench(|| {
        let series = parse_csv(&text, &options).unwrap();
        forecast(&series, 30, 0.9).unwrap().points.len()
    });
}

/// The same year kept hourly (`--period hour`): 8,760 hours with daily and weekly seasons,
/// forecast four weeks ahead.
#[divan::bench(sample_count = 5)]
fn forecast_a_year_of_per_minute_telemetry_hourly(bencher: divan::Bencher) {
    let text = per_minute_year();
    let options = HistoryOptions {
        aggregate: gpuplan_forecast::history::Aggregate::Mean,
        period: Some(Period::Hour),
        ..HistoryOptions::default()
    };
    bencher.bench(|| {
        let series = parse_csv(&text, &options).unwrap();
        forecast(&series, 672, 0.9).unwrap().points.len()
    });
}

/// GPUs in use each minute of 2025: a daily cycle, quieter weekends.
fn per_minute_year() -> String {
    let start = jiff::civil::date(2025, 1, 1).at(0, 0, 0, 0);
    let mut text = String::from("timestamp,value\n");
    for minute in 0..525_600i64 {
        let at = start.checked_add(jiff::Span::new().minutes(minute)).unwrap();
        let weekend = if (minute / 1440 + 2) % 7 >= 5 { -1.5 } else { 0.0 };
        let busy = 4.0 + weekend + 2.0 * (minute as f64 * std::f64::consts::TAU / 1440.0).sin();
        text.push_str(&format!("{at}Z,{busy:.2}\n"));
    }
    text
}
