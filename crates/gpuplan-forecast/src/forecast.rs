//! Forecasts with prediction intervals, the model chosen by backtest.
//!
//! Candidates: MSTL (seasonal-trend decomposition with LOESS, Bandara et al. 2021) with an
//! automatically selected ETS model on the trend, and a non-seasonal AutoETS (Hyndman et al.
//! 2002, "A state space framework for automatic forecasting using exponential smoothing"),
//! both from Grafana's `augurs`. The one with the lower error on the last periods held out
//! wins; the seasonal-naive forecast is the baseline MASE is measured against (Hyndman &
//! Koehler 2006, "Another look at measures of forecast accuracy").

use crate::history::{Series, date_after};
use augurs_core::prelude::*;
use augurs_ets::AutoETS;
use augurs_mstl::MSTLModel;
use gpuplan_model::Date;
use serde::Serialize;

/// One forecast period.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ForecastPoint {
    pub timestamp: Date,
    pub mean: f64,
    pub lower: f64,
    pub upper: f64,
}

/// How the chosen model did on held-out history.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    #[error("the interval level must be between 0 and 1")]
    Level,
    #[error("no model could be fitted: {0}")]
    Fit(String),
}

/// Point forecast, lower and upper interval edges.
type Bands = (Vec<f64>, Vec<f64>, Vec<f64>);

#[derive(Clone, Copy)]
enum Candidate {
    Seasonal(usize),
    Trend,
}

impl Candidate {
    fn name(self) -> String {
        match self {
            Candidate::Seasonal(period) => format!("MSTL(period {period}) + AutoETS trend"),
            Candidate::Trend => "AutoETS (non-seasonal)".to_string(),
        }
    }

    fn predict(self, history: &[f64], horizon: usize, level: f64) -> Result<Bands, String> {
        let forecast = match self {
            Candidate::Seasonal(period) => {
                let model = MSTLModel::new(vec![period], AutoETS::non_seasonal().into_trend_model());
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
        if point.iter().chain(&lower).chain(&upper).any(|v| !v.is_finite()) {
            return Err("the model produced non-finite values".to_string());
        }
        Ok((point, lower, upper))
    }
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

/// Forecasts `horizon` periods of `series` at interval `level`.
pub fn forecast(series: &Series, horizon: usize, level: f64) -> Result<Forecast, ForecastError> {
    if horizon == 0 {
        return Err(ForecastError::Horizon);
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(ForecastError::Level);
    }
    let y = &series.values;
    let period = series.frequency.season();
    let mut candidates = vec![Candidate::Trend];
    if y.len() >= 2 * period + 2 {
        candidates.insert(0, Candidate::Seasonal(period));
    }
    let holdout = horizon.min(y.len() / 5).max(1);
    let (train, test) = y.split_at(y.len() - holdout);
    let naive_period = if train.len() > period { period } else { 1 };
    let baseline = seasonal_naive(train, naive_period, holdout);
    let mut scores = Vec::new();
    for candidate in &candidates {
        if let Ok((point, _, _)) = candidate.predict(train, holdout, level) {
            scores.push((*candidate, mape(test, &point), point));
        }
    }
    let Some((best, best_mape, best_point)) = scores
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, m, p)| (*c, *m, p.clone()))
    else {
        return Err(ForecastError::Fit("every candidate failed on the backtest".to_string()));
    };
    let scale = {
        let diffs: Vec<f64> = train
            .windows(naive_period + 1)
            .map(|w| (w[naive_period] - w[0]).abs())
            .collect();
        diffs.iter().sum::<f64>() / diffs.len().max(1) as f64
    };
    let mae = test.iter().zip(&best_point).map(|(a, p)| (a - p).abs()).sum::<f64>() / holdout as f64;
    let (point, lower, upper) = best.predict(y, horizon, level).map_err(ForecastError::Fit)?;
    let points = (0..horizon)
        .map(|h| ForecastPoint {
            timestamp: date_after(series, h + 1),
            mean: point[h].max(0.0),
            lower: lower[h].max(0.0),
            upper: upper[h].max(0.0),
        })
        .collect();
    Ok(Forecast {
        model: best.name(),
        level,
        points,
        backtest: Backtest {
            holdout,
            mape: best_mape,
            mase: if scale > 0.0 { mae / scale } else { 0.0 },
            seasonal_naive_mape: mape(test, &baseline),
            candidates: scores.iter().map(|(c, m, _)| (c.name(), *m)).collect(),
        },
    })
}
