//! Forecasts on series of known structure and on a real usage-like series.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan_forecast::history::{HistoryOptions, parse_csv, regular};
use gpuplan_forecast::{CommitmentPrices, forecast, plan_commitment};
use gpuplan_model::Date;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn synthetic(seed: u64, months: usize) -> gpuplan_forecast::Series {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rows = (0..months)
        .map(|i| {
            let date = Date::new(2015 + (i / 12) as u16, (i % 12 + 1) as u8, 1).unwrap();
            let season = 40.0 * (2.0 * std::f64::consts::PI * (i % 12) as f64 / 12.0).sin();
            let noise: f64 = rng.random_range(-5.0..5.0);
            (i as u64 + 2, date.into(), 500.0 + 4.0 * i as f64 + season + noise)
        })
        .collect();
    regular(rows).unwrap()
}

#[test]
fn trend_and_seasonality_are_learned() {
    let series = synthetic(7, 96);
    let f = forecast(&series, 12, 0.9).unwrap();
    assert!(f.model.contains("period 12"), "a seasonal model: {}", f.model);
    assert!(f.backtest.mape < 0.03, "{:?}", f.backtest);
    assert!(f.backtest.mape < f.backtest.seasonal_naive_mape);
    // The truth 12 months ahead (without noise) lies inside the band.
    for (h, point) in f.points.iter().enumerate() {
        let i = 96 + h;
        let truth = 500.0 + 4.0 * i as f64 + 40.0 * (2.0 * std::f64::consts::PI * (i % 12) as f64 / 12.0).sin();
        assert!(
            point.lower - 10.0 <= truth && truth <= point.upper + 10.0,
            "{h}: {truth} vs {point:?}"
        );
    }
    assert_eq!(f.points[0].timestamp.to_string(), "2023-01-01");
}

#[test]
fn the_air_passengers_series() {
    let text = include_str!("fixtures/air-passengers.csv");
    let series = parse_csv(text, &HistoryOptions::default()).unwrap();
    assert_eq!(series.values.len(), 144);
    let f = forecast(&series, 12, 0.9).unwrap();
    assert!(f.backtest.mape < 0.10, "{:?}", f.backtest);
    assert!(f.backtest.mase < 1.5, "{:?}", f.backtest);
    assert_eq!(f.points.len(), 12);
    assert!(f.points.iter().all(|p| p.lower <= p.mean && p.mean <= p.upper));
}

#[test]
fn a_commitment_is_sized_between_zero_and_p90() {
    let series = synthetic(3, 60);
    let f = forecast(&series, 12, 0.9).unwrap();
    let prices = CommitmentPrices {
        on_demand_usd_per_gpu_hour: 4.0,
        reserved_usd_per_gpu_hour: 2.5,
        hours_per_period: 730.0,
    };
    // Values are GPU-hours per month: ≈ 740 → about one GPU.
    let c = plan_commitment(&f, &prices).unwrap();
    let p90_gpus = f.points.iter().map(|p| p.upper).fold(0.0, f64::max) / 730.0;
    assert!(c.reserved_gpus as f64 <= p90_gpus);
    assert!(c.expected_cost_usd <= c.on_demand_only_cost_usd + 1e-9);
    assert!(c.cost_at_low_demand_usd <= c.cost_at_high_demand_usd);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn a_commitment_never_exceeds_p90_demand(seed in 0u64..1000, discount in 0.05f64..0.8) {
        let series = synthetic(seed, 48);
        let f = forecast(&series, 6, 0.9).unwrap();
        let prices = CommitmentPrices {
            on_demand_usd_per_gpu_hour: 3.0,
            reserved_usd_per_gpu_hour: 3.0 * (1.0 - discount),
            hours_per_period: 24.0,
        };
        let c = plan_commitment(&f, &prices).unwrap();
        let p90 = f.points.iter().map(|p| p.upper).fold(0.0, f64::max);
        prop_assert!(c.reserved_gpus as f64 * 24.0 <= p90 + 1e-9);
    }
}

#[test]
fn bad_input_is_refused() {
    let series = synthetic(1, 24);
    assert!(forecast(&series, 0, 0.9).is_err());
    assert!(forecast(&series, 3, 1.5).is_err());
    let few = "timestamp,value\n2024-01-01,1\n2024-02-01,2\n";
    assert!(
        parse_csv(few, &HistoryOptions::default())
            .unwrap_err()
            .to_string()
            .contains("too few")
    );
}

/// GPUs in use each hour over `weeks` weeks: busy office hours, quiet nights, half the load at
/// weekends, and noise; what a team's cluster telemetry looks like rolled up to hours.
fn hourly_telemetry(weeks: usize) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let start = jiff::civil::date(2025, 1, 6).at(0, 0, 0, 0); // a Monday
    let mut text = String::from("timestamp,value\n");
    for hour in 0..(weeks * 168) as i64 {
        let at = start.checked_add(jiff::Span::new().hours(hour)).unwrap();
        let day_of_week = (hour / 24) % 7;
        let office = (8..18).contains(&(hour % 24));
        let base = if office { 24.0 } else { 8.0 };
        let weekend = if day_of_week >= 5 { 0.5 } else { 1.0 };
        let noise: f64 = rng.random_range(-1.0..1.0);
        text.push_str(&format!("{at}Z,{:.2}\n", base * weekend + noise));
    }
    text
}

/// Hourly telemetry has two cycles, the day and the week. A forecast per hour must see both:
/// Saturday afternoon is quieter than Monday afternoon, nights quieter than days.
#[test]
fn hourly_histories_forecast_the_day_and_the_week() {
    use gpuplan_forecast::history::{Aggregate, Period};
    let options = HistoryOptions {
        aggregate: Aggregate::Mean,
        period: Some(Period::Hour),
        ..HistoryOptions::default()
    };
    let series = parse_csv(&hourly_telemetry(8), &options).unwrap();
    assert_eq!(series.frequency, gpuplan_forecast::Frequency::Hourly);
    let f = forecast(&series, 168, 0.9).unwrap();
    assert!(f.model.contains("periods 24 and 168"), "{}", f.model);
    assert!(f.backtest.mape < 0.1, "{:?}", f.backtest);
    // The history ends on a Sunday at 23:00: the forecast starts on Monday at midnight.
    assert_eq!(f.points[0].timestamp.to_string(), "2025-03-03T00:00");
    let at = |day: usize, hour: usize| f.points[day * 24 + hour].mean;
    assert!(
        at(0, 14) > 20.0 && at(5, 14) < 15.0,
        "Monday {} Saturday {}",
        at(0, 14),
        at(5, 14)
    );
    assert!(at(0, 3) < 10.0, "a night: {}", at(0, 3));
}
