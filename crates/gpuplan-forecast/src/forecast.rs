//! Forecasts with prediction intervals, the model chosen by backtest.
//!
//! Candidates:
//! - MSTL (seasonal-trend decomposition with LOESS, Bandara et al. 2021) with an automatically
//!   selected ETS model on the trend, with the day and the week together for hourly series, and a non-seasonal AutoETS (Hyndman et al. 2002, "A
//!   state space framework for automatic forecasting using exponential smoothing"), both
//!   from Grafana's `augurs`;
//! - Holt-Winters with additive trend and season, on the series and on its logarithm
//!   (multiplicative seasonality) — [`crate::holt_winters`];
//! - seasonal ARIMA with orders chosen by AICc, on the series and on its logarithm —
//!   [`crate::sarima`].
//!
//! The one with the lowest error on the last periods held out wins; the seasonal-naive
//! forecast is the baseline MASE is measured against (Hyndman & Koehler 2006, "Another look
//! at measures of forecast accuracy").

use crate::commitment::z_of;
use crate::history::{Series, start_after};
use crate::holt_winters::HoltWinters;
use crate::period_start::PeriodStart;
use crate::sarima::{Orders, Sarima, fit_orders};
use augurs_core::prelude::*;
use augurs_ets::AutoETS;
use augurs_mstl::MSTLModel;
use serde::Serialize;

/// One forecast period.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ForecastPoint {
    /// The period's start: `2024-01-01`, or `2024-01-01T07:00` for hourly periods.
    #[schema(value_type = String)]
    pub timestamp: PeriodStart,
    pub mean: f64,
    pub lower: f64,
    pub upper: f64,
}

/// How the chosen model did on held-out history.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Backtest {
    /// Periods held out at the end of the history.
    pub holdout: usize,
    /// Mean absolute percentage error of the chosen model on them.
    pub mape: f64,
    /// Mean absolute scaled error (below 1: better than the in-sample seasonal-naive forecast).
    pub mase: f64,
    /// The seasonal-naive forecast's MAPE on the same periods.
    pub seasonal_naive_mape: f64,
    /// Each candidate's MAPE.
    pub candidates: Vec<(String, f64)>,
}

/// A forecast and the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Forecast {
    pub model: String,
    /// Prediction-interval level (0.9: the 5th to 95th percentile).
    pub level: f64,
    pub points: Vec<ForecastPoint>,
    pub backtest: Backtest,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForecastError {
    #[error("the horizon must be at least one period")]
    Horizon,
    #[error("a horizon of {horizon} periods reaches beyond what the history supports (at most {longest})")]
    TooFar { horizon: usize, longest: usize },
    #[error("the forecast would run past the year 9999, beyond the calendar dates can be written in")]
    PastCalendar,
    #[error("the interval level must be between 0 and 1")]
    Level,
    #[error("no model could be fitted: {0}")]
    Fit(String),
}

/// Point forecast, lower and upper interval edges.
type Bands = (Vec<f64>, Vec<f64>, Vec<f64>);

#[derive(Clone, Copy)]
enum Candidate {
    /// MSTL with one season, or two nested ones (hourly series: the day and the week).
    Seasonal(usize, Option<usize>),
    Trend,
    /// Holt-Winters; `true`: on the logarithm (multiplicative season).
    HoltWinters(usize, bool),
    /// Seasonal ARIMA with automatic orders; `true`: on the logarithm.
    Arima(usize, bool),
    /// Seasonal ARIMA of orders already chosen, refitted (backtest origins, the final fit).
    ArimaOrders(Orders, bool),
    /// The last value plus the mean step, with a random walk's spread: fits any history of
    /// two points or more (Hyndman & Athanasopoulos, "Forecasting: Principles and Practice",
    /// §5.2, the drift method).
    Drift,
}

/// Observations the models are fitted on: the most recent, enough for twenty seasons. Older
/// history adds fitting time (the cost grows with length) more than accuracy for the
/// horizons capacity planning asks about.
const FIT_WINDOW_SEASONS: usize = 20;
const MIN_FIT_WINDOW: usize = 500;

fn fit_window(history: &[f64], period: usize) -> &[f64] {
    let window = (FIT_WINDOW_SEASONS * period).max(MIN_FIT_WINDOW);
    &history[history.len().saturating_sub(window)..]
}

/// Bands from a model on `log` (or not) scale: point ± z·sd, back-transformed.
fn bands(point: Vec<f64>, sd: Vec<f64>, level: f64, log: bool) -> Bands {
    let z = z_of(level);
    let back = |v: f64| if log { v.exp() } else { v };
    let lower = point.iter().zip(&sd).map(|(p, s)| back(p - z * s)).collect();
    let upper = point.iter().zip(&sd).map(|(p, s)| back(p + z * s)).collect();
    (point.into_iter().map(back).collect(), lower, upper)
}

/// The series on the model's scale: its logarithm where asked (all values positive).
fn scaled(history: &[f64], log: bool) -> Result<Vec<f64>, String> {
    if !log {
        return Ok(history.to_vec());
    }
    if history.iter().any(|v| *v <= 0.0) {
        return Err("the logarithm needs positive values".to_string());
    }
    Ok(history.iter().map(|v| v.ln()).collect())
}

impl Candidate {
    fn period(self) -> usize {
        match self {
            Candidate::Seasonal(period, long) => long.unwrap_or(period),
            Candidate::HoltWinters(period, _) | Candidate::Arima(period, _) => period,
            Candidate::ArimaOrders(orders, _) => orders.period,
            Candidate::Trend | Candidate::Drift => 1,
        }
    }

    /// An automatic ARIMA with its orders chosen once on `history`, so the backtest origins
    /// and the final fit only refit coefficients. The earlier origins' held-out windows lie
    /// inside that history, so ARIMA's backtest sees its orders chosen with a little hindsight.
    fn settle(self, history: &[f64]) -> Candidate {
        match self {
            Candidate::Arima(period, log) => scaled(fit_window(history, period), log)
                .ok()
                .and_then(|y| Sarima::auto(&y, period))
                .map_or(self, |model| Candidate::ArimaOrders(model.orders, log)),
            other => other,
        }
    }

    fn name(self) -> String {
        let scale = |log: bool| if log { " on log values" } else { "" };
        match self {
            Candidate::Seasonal(period, None) => format!("MSTL(period {period}) + AutoETS trend"),
            Candidate::Seasonal(short, Some(long)) => format!("MSTL(periods {short} and {long}) + AutoETS trend"),
            Candidate::Trend => "AutoETS (non-seasonal)".to_string(),
            Candidate::HoltWinters(period, log) => format!("Holt-Winters (period {period}){}", scale(log)),
            Candidate::Arima(period, log) => format!("seasonal ARIMA (period {period}, AICc){}", scale(log)),
            Candidate::ArimaOrders(orders, log) => format!("{orders}{}", scale(log)),
            Candidate::Drift => "drift (random walk with the mean step)".to_string(),
        }
    }

    fn predict(self, history: &[f64], horizon: usize, level: f64) -> Result<Bands, String> {
        let history = fit_window(history, self.period());
        let forecast = match self {
            Candidate::HoltWinters(period, log) => {
                let y = scaled(history, log)?;
                let model = HoltWinters::fit(&y, period).ok_or("Holt-Winters needs two seasons")?;
                let (point, sd) = model.forecast(horizon);
                return finite(bands(point, sd, level, log));
            }
            Candidate::Arima(period, log) => {
                let y = scaled(history, log)?;
                let model = Sarima::auto(&y, period).ok_or("no ARIMA order could be fitted")?;
                let (point, sd) = model.forecast(horizon);
                return finite(bands(point, sd, level, log));
            }
            Candidate::ArimaOrders(orders, log) => {
                let y = scaled(history, log)?;
                let model = fit_orders(&y, orders).ok_or("the ARIMA orders could not be fitted")?;
                let (point, sd) = model.forecast(horizon);
                return finite(bands(point, sd, level, log));
            }
            Candidate::Drift => {
                let (point, sd) = drift(history, horizon).ok_or("drift needs two points")?;
                return finite(bands(point, sd, level, false));
            }
            Candidate::Seasonal(period, long) => {
                let periods = std::iter::once(period).chain(long).collect();
                let model = MSTLModel::new(periods, AutoETS::non_seasonal().into_trend_model());
                let fit = model.fit(history).map_err(|e| e.to_string())?;
                fit.predict(horizon, level).map_err(|e| e.to_string())?
            }
            Candidate::Trend => {
                let fit = AutoETS::non_seasonal().fit(history).map_err(|e| e.to_string())?;
                fit.predict(horizon, level).map_err(|e| e.to_string())?
            }
        };
        let point = forecast.point;
        let (lower, upper) = match forecast.intervals {
            Some(intervals) => (intervals.lower, intervals.upper),
            None => (point.clone(), point.clone()),
        };
        finite((point, lower, upper))
    }
}

fn finite(bands: Bands) -> Result<Bands, String> {
    let (point, lower, upper) = &bands;
    if point.iter().chain(lower).chain(upper).any(|v| !v.is_finite()) {
        return Err("the model produced non-finite values".to_string());
    }
    Ok(bands)
}

/// The drift method's forecast and its standard deviations (σ·√(h(1 + h/T))).
fn drift(y: &[f64], horizon: usize) -> Option<(Vec<f64>, Vec<f64>)> {
    let (first, last) = (*y.first()?, *y.last()?);
    let steps = (y.len() - 1) as f64;
    if steps < 1.0 {
        return None;
    }
    let slope = (last - first) / steps;
    let residuals: Vec<f64> = y.windows(2).map(|w| w[1] - w[0] - slope).collect();
    let sigma = (residuals.iter().map(|r| r * r).sum::<f64>() / (steps - 1.0).max(1.0)).sqrt();
    let point = (1..=horizon).map(|h| last + slope * h as f64).collect();
    let sd = (1..=horizon)
        .map(|h| {
            let h = h as f64;
            sigma * (h * (1.0 + h / steps)).sqrt()
        })
        .collect();
    Some((point, sd))
}

fn seasonal_naive(history: &[f64], period: usize, horizon: usize) -> Vec<f64> {
    let period = period.min(history.len()).max(1);
    (0..horizon)
        .map(|h| history[history.len() - period + h % period])
        .collect()
}

fn mape(actual: &[f64], predicted: &[f64]) -> f64 {
    let pairs: Vec<f64> = actual
        .iter()
        .zip(predicted)
        .filter(|(a, _)| **a > 0.0)
        .map(|(a, p)| (a - p).abs() / a)
        .collect();
    if pairs.is_empty() {
        0.0
    } else {
        pairs.iter().sum::<f64>() / pairs.len() as f64
    }
}

/// Longest horizon as a multiple of the history: beyond it the forecast extrapolates nothing
/// the history shows.
const MAX_HORIZON_OVER_HISTORY: usize = 5;

/// Longest horizon in periods at all (27 years of days).
const MAX_HORIZON: usize = 10_000;

/// Slope of log(seasonal spread) on log(level) above which a series is modelled on the
/// logarithm: a spread proportional to the level (slope 1) is multiplicative seasonality, a
/// constant spread (slope 0) additive; the midpoint splits them. This is Guerrero's (1993)
/// Box-Cox rule, λ = 1 − slope, rounded to the log (λ = 0) or no transform (λ = 1).
const LOG_SLOPE: f64 = 0.5;

/// Log-range of seasonal levels below which the transform is not chosen: ln 1.5, a level that
/// grows by half over the history.
const MIN_LOG_LEVEL_RANGE: f64 = 0.405;

/// Whether the seasonal swing of `y` grows with its level (fit on the logarithm).
fn multiplicative(y: &[f64], period: usize) -> bool {
    if period < 2 || y.iter().any(|v| *v <= 0.0) {
        return false;
    }
    let points: Vec<(f64, f64)> = y
        .chunks_exact(period)
        .filter_map(|season| {
            let mean = season.iter().sum::<f64>() / period as f64;
            let spread = (season.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (period - 1) as f64).sqrt();
            (spread > 0.0).then(|| (mean.ln(), spread.ln()))
        })
        .collect();
    if points.len() < 3 {
        return false;
    }
    // Over a narrow range of levels the two forms cannot be told apart; keep the plain one.
    let (low, high) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.0), h.max(p.0)));
    if high - low < MIN_LOG_LEVEL_RANGE {
        return false;
    }
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    sxx > 0.0 && sxy / sxx > LOG_SLOPE
}

/// Backtest origins: the last `holdout` periods, and as many earlier windows of the same
/// length as the history allows (up to this many), each forecast from the data before it.
/// Several origins make the choice less a matter of one year's luck (Tashman 2000,
/// "Out-of-sample tests of forecasting accuracy").
const BACKTEST_ORIGINS: usize = 3;

/// Candidates averaged into the forecast: the best two by backtest. Combining forecasts is
/// more accurate on average than picking one (Clemen 1989; the M4 competition, Makridakis et
/// al. 2020), and the combination's own backtest error is what the report shows. Two rather
/// than one or three was chosen on the statsmodels comparison series (docs/accuracy.md), so that
/// comparison is in-sample for this one choice.
const COMBINED: usize = 2;

/// A runner-up joins the combination only when its backtest error is within this factor of
/// the best's: averaging a model that found the structure with one that missed it (an hourly
/// series' weekly cycle, say) only adds the miss.
const COMBINE_WITHIN: f64 = 2.0;

/// Mean of several bands, element by element.
fn average(bands: &[&Bands]) -> Bands {
    let n = bands.len().max(1) as f64;
    let mean = |pick: fn(&Bands) -> &Vec<f64>| -> Vec<f64> {
        let len = bands.first().map_or(0, |b| pick(b).len());
        (0..len)
            .map(|i| bands.iter().map(|b| pick(b)[i]).sum::<f64>() / n)
            .collect()
    };
    (mean(|b| &b.0), mean(|b| &b.1), mean(|b| &b.2))
}

/// A candidate's mean MAPE over the backtest origins, and its points at the last origin.
fn backtest(candidate: Candidate, y: &[f64], holdout: usize, origins: usize, level: f64) -> Option<(f64, Vec<f64>)> {
    let mut errors = Vec::new();
    let mut last = None;
    for k in 0..origins {
        let end = y.len() - k * holdout;
        let (train, test) = y[..end].split_at(end - holdout);
        let (point, _, _) = candidate.predict(train, holdout, level).ok()?;
        errors.push(mape(test, &point));
        if k == 0 {
            last = Some(point);
        }
    }
    Some((errors.iter().sum::<f64>() / errors.len() as f64, last?))
}

/// Forecasts `horizon` periods of `series` at interval `level`.
pub fn forecast(series: &Series, horizon: usize, level: f64) -> Result<Forecast, ForecastError> {
    if horizon == 0 {
        return Err(ForecastError::Horizon);
    }
    let longest = (series.values.len() * MAX_HORIZON_OVER_HISTORY).min(MAX_HORIZON);
    if horizon > longest {
        return Err(ForecastError::TooFar { horizon, longest });
    }
    if !crate::history::calendar_holds(series, horizon) {
        return Err(ForecastError::PastCalendar);
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(ForecastError::Level);
    }
    let y = &series.values;
    let period = series.frequency.season();
    let mut candidates = vec![Candidate::Drift, Candidate::Trend, Candidate::Arima(1, false)];
    if y.len() >= 2 * period + 2 {
        let log = multiplicative(y, period);
        candidates.insert(0, Candidate::Seasonal(period, None));
        candidates.extend([Candidate::HoltWinters(period, log), Candidate::Arima(period, log)]);
    }
    if let Some(long) = series.frequency.long_season().filter(|long| y.len() >= 2 * long + 2) {
        candidates.insert(0, Candidate::Seasonal(period, Some(long)));
    }
    let holdout = horizon.min(y.len() / 5).max(1);
    // Earlier origins only where each still leaves two seasons and a point to fit on.
    let origins = (1..=BACKTEST_ORIGINS)
        .take_while(|k| y.len() >= k * holdout + 2 * period + 2)
        .count()
        .max(1);
    let (train, test) = y.split_at(y.len() - holdout);
    let naive_period = match series.frequency.long_season() {
        Some(long) if train.len() > long => long,
        _ if train.len() > period => period,
        _ => 1,
    };
    let baseline = seasonal_naive(train, naive_period, holdout);
    let mut scores: Vec<(Candidate, f64, Vec<f64>)> = candidates
        .iter()
        .map(|c| c.settle(train))
        .filter_map(|c| backtest(c, y, holdout, origins, level).map(|(m, p)| (c, m, p)))
        .collect();
    if scores.is_empty() {
        return Err(ForecastError::Fit("every candidate failed on the backtest".to_string()));
    }
    scores.sort_by(|a, b| a.1.total_cmp(&b.1));
    let best = scores[0].1;
    let joined = scores
        .iter()
        .take(COMBINED)
        .take_while(|s| s.1 <= best * COMBINE_WITHIN)
        .count()
        .max(1);
    let chosen: Vec<Candidate> = scores.iter().take(joined).map(|s| s.0).collect();
    let combined_point: Vec<f64> = (0..holdout)
        .map(|i| scores.iter().take(joined).map(|s| s.2[i]).sum::<f64>() / chosen.len() as f64)
        .collect();
    let scale = {
        let diffs: Vec<f64> = train
            .windows(naive_period + 1)
            .map(|w| (w[naive_period] - w[0]).abs())
            .collect();
        diffs.iter().sum::<f64>() / diffs.len().max(1) as f64
    };
    let mae = test
        .iter()
        .zip(&combined_point)
        .map(|(a, p)| (a - p).abs())
        .sum::<f64>()
        / holdout as f64;
    let fitted: Vec<Bands> = chosen
        .iter()
        .filter_map(|c| c.predict(y, horizon, level).ok())
        .collect();
    if fitted.is_empty() {
        return Err(ForecastError::Fit(
            "no chosen model could be refitted on the whole history".to_string(),
        ));
    }
    let (point, lower, upper) = average(&fitted.iter().collect::<Vec<_>>());
    let points = (0..horizon)
        .map(|h| ForecastPoint {
            timestamp: start_after(series, h + 1),
            mean: point[h].max(0.0),
            lower: lower[h].min(point[h]).max(0.0),
            upper: upper[h].max(point[h]).max(0.0),
        })
        .collect();
    let model = if chosen.len() == 1 {
        chosen[0].name()
    } else {
        format!(
            "mean of {}",
            chosen.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
        )
    };
    Ok(Forecast {
        model,
        level,
        points,
        backtest: Backtest {
            holdout,
            mape: mape(test, &combined_point),
            mase: if scale > 0.0 { mae / scale } else { 0.0 },
            seasonal_naive_mape: mape(test, &baseline),
            candidates: scores.iter().map(|(c, m, _)| (c.name(), *m)).collect(),
        },
    })
}
