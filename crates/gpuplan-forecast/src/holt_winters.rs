//! Holt-Winters exponential smoothing with additive trend and seasonality, in the error
//! correction form of ETS(A,A,A) (Hyndman, Koehler, Ord & Snyder 2008, "Forecasting with
//! Exponential Smoothing", §2.5 and Table 6.1 class 1 for the forecast variance). Fitted on
//! the logarithm of the series it is the multiplicative-seasonality model whose seasonal swing
//! grows with the level.
//!
//! Smoothing parameters and the initial level and trend minimise the one-step squared error
//! (Nelder–Mead), starting from a classical decomposition of the first seasons, which also
//! gives the initial season.

use crate::optimize::minimize;

/// A fitted model, ready to forecast.
#[derive(Debug, Clone, PartialEq)]
pub struct HoltWinters {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    level: f64,
    trend: f64,
    /// Seasonal states, indexed by period position of the next observation onward.
    season: Vec<f64>,
    /// Position in the season of the first forecast period.
    next: usize,
    /// One-step residual variance.
    pub sigma2: f64,
}

/// Seasons the initial states are estimated from.
const INITIAL_SEASONS: usize = 4;

/// Initial level, trend and season from the first few seasons: the trend from the change
/// of the seasonal means, the season from the detrended values averaged over those seasons
/// (the classical decomposition start of Hyndman et al. 2008, §2.6.1).
fn initial_states(y: &[f64], period: usize) -> (f64, f64, Vec<f64>) {
    let seasons = (y.len() / period).clamp(2, INITIAL_SEASONS);
    let means: Vec<f64> = (0..seasons)
        .map(|j| y[j * period..(j + 1) * period].iter().sum::<f64>() / period as f64)
        .collect();
    let trend = (means[seasons - 1] - means[0]) / ((seasons - 1) * period) as f64;
    let level = means[0] - trend * (period + 1) as f64 / 2.0;
    let mut season: Vec<f64> = (0..period)
        .map(|i| {
            (0..seasons)
                .map(|j| {
                    let t = j * period + i;
                    y[t] - (level + trend * (t + 1) as f64)
                })
                .sum::<f64>()
                / seasons as f64
        })
        .collect();
    let offset = season.iter().sum::<f64>() / period as f64;
    season.iter_mut().for_each(|s| *s -= offset);
    (level, trend, season)
}

/// Runs the recursions over `y`; returns the sum of squared one-step errors and the final
/// states.
fn filter(y: &[f64], period: usize, p: &[f64]) -> (f64, f64, f64, Vec<f64>) {
    let (alpha, beta, gamma) = (p[0], p[1], p[2]);
    let (level, trend, mut season) = initial_states(y, period);
    // The initial level and trend are refined with the smoothing parameters, in units of
    // the first season's spread.
    let spread = season.iter().map(|s| s.abs()).sum::<f64>() / period as f64 + 1e-9;
    let (mut level, mut trend) = (level + p[3] * spread, trend + p[4] * spread / period as f64);
    let mut sse = 0.0;
    for (t, value) in y.iter().enumerate() {
        let s = t % period;
        let error = value - (level + trend + season[s]);
        sse += error * error;
        level += trend + alpha * error;
        trend += beta * error;
        season[s] += gamma * error;
    }
    (sse, level, trend, season)
}

impl HoltWinters {
    /// Fits the model to `y` with seasonal `period`; `None` with fewer than two seasons and a
    /// point, or when the errors are not finite.
    pub fn fit(y: &[f64], period: usize) -> Option<HoltWinters> {
        if period < 2 || y.len() < 2 * period + 1 || y.iter().any(|v| !v.is_finite()) {
            return None;
        }
        // Parameters live in the unit box with β < α and γ < 1 − α (the usual admissible
        // region of the error-correction form); outside it the objective is infinite.
        let objective = |p: &[f64]| {
            let (alpha, beta, gamma) = (p[0], p[1], p[2]);
            if !(0.0..1.0).contains(&alpha)
                || !(0.0..alpha.max(1e-9)).contains(&beta)
                || !(0.0..1.0 - alpha).contains(&gamma)
            {
                return f64::INFINITY;
            }
            filter(y, period, p).0
        };
        let best = minimize(objective, &[0.3, 0.05, 0.1, 0.0, 0.0], 0.1, 4000, 1e-12);
        let (alpha, beta, gamma) = (best[0], best[1], best[2]);
        let (sse, level, trend, season) = filter(y, period, &best);
        let parameters = 5.0;
        let sigma2 = sse / (y.len() as f64 - parameters).max(1.0);
        sigma2.is_finite().then_some(HoltWinters {
            alpha,
            beta,
            gamma,
            level,
            trend,
            season,
            next: y.len() % period,
            sigma2,
        })
    }

    /// Point forecasts and their standard deviations for `horizon` periods.
    pub fn forecast(&self, horizon: usize) -> (Vec<f64>, Vec<f64>) {
        let period = self.season.len();
        let point = (1..=horizon)
            .map(|h| self.level + h as f64 * self.trend + self.season[(self.next + h - 1) % period])
            .collect();
        let sd = (1..=horizon)
            .map(|h| {
                let spread: f64 = (1..h)
                    .map(|j| {
                        let seasonal = if j % period == 0 { self.gamma } else { 0.0 };
                        (self.alpha + self.beta * j as f64 + seasonal).powi(2)
                    })
                    .sum();
                (self.sigma2 * (1.0 + spread)).sqrt()
            })
            .collect();
        (point, sd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_clean_trend_and_season() {
        let y: Vec<f64> = (0..60)
            .map(|t| 100.0 + 2.0 * t as f64 + [10.0, -5.0, 0.0, -5.0][t % 4])
            .collect();
        let model = HoltWinters::fit(&y, 4).unwrap();
        let (point, sd) = model.forecast(4);
        for (h, value) in point.iter().enumerate() {
            let t = 60 + h;
            let truth = 100.0 + 2.0 * t as f64 + [10.0, -5.0, 0.0, -5.0][t % 4];
            assert!((value - truth).abs() < 1.0, "h {h}: {value} vs {truth}");
        }
        assert!(sd.windows(2).all(|w| w[1] >= w[0]));
    }

    #[test]
    fn too_short_a_series_is_refused() {
        assert!(HoltWinters::fit(&[1.0; 7], 4).is_none());
    }
}
