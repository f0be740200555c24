//! Seasonal ARIMA(p,d,q)(P,D,Q)m with automatic order selection (Box & Jenkins 1976;
//! Hyndman & Khandakar 2008, "Automatic time series forecasting: the forecast package for R",
//! for selecting orders by AICc).
//!
//! - Differencing: the orders d, D ∈ {0, 1} whose differenced series has the smallest
//!   standard deviation (the Box–Jenkins rule that over-differencing raises the variance).
//! - Estimation: conditional sum of squares, minimised by Nelder–Mead; each coefficient is
//!   kept inside (−1, 1).
//! - Selection: p, q ∈ {0, 1, 2} and P, Q ∈ {0, 1}, the lowest AICc.
//! - Forecast: the recursions of the full operator, differencing included; the h-step
//!   variance σ²·Σψⱼ² from the ψ-weights of the MA(∞) form.

use crate::optimize::minimize;

/// Polynomial orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Orders {
    pub p: usize,
    pub d: usize,
    pub q: usize,
    pub seasonal_p: usize,
    pub seasonal_d: usize,
    pub seasonal_q: usize,
    pub period: usize,
}

impl std::fmt::Display for Orders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SARIMA({},{},{})({},{},{}){}",
            self.p, self.d, self.q, self.seasonal_p, self.seasonal_d, self.seasonal_q, self.period
        )
    }
}

/// A fitted model, ready to forecast.
#[derive(Debug, Clone, PartialEq)]
pub struct Sarima {
    pub orders: Orders,
    /// Coefficients of the full autoregressive operator, differencing included:
    /// y_t = Σ ar[i]·y_{t−1−i} + e_t + Σ ma[j]·e_{t−1−j} (+ mean, undifferenced models only).
    ar: Vec<f64>,
    ma: Vec<f64>,
    mean: f64,
    /// The series and its one-step residuals (zero where conditioned away).
    history: Vec<f64>,
    residuals: Vec<f64>,
    pub sigma2: f64,
    pub aicc: f64,
}

/// Multiplies two polynomials given by their coefficients from lag 0 (a seasonal one is mostly
/// zeros, which are skipped).
fn multiply(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate().filter(|(_, x)| **x != 0.0) {
        for (j, y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

/// 1 − c₁B − c₂B² … for AR (`sign` −1) or 1 + c₁B … for MA (`sign` +1), at lag multiples of
/// `stride`.
fn lag_polynomial(coefficients: &[f64], stride: usize, sign: f64) -> Vec<f64> {
    let mut out = vec![0.0; coefficients.len() * stride + 1];
    out[0] = 1.0;
    for (i, c) in coefficients.iter().enumerate() {
        out[(i + 1) * stride] = sign * c;
    }
    out
}

/// (1 − B)^d (1 − B^m)^D.
fn differencing(orders: &Orders) -> Vec<f64> {
    let mut out = vec![1.0];
    for _ in 0..orders.d {
        out = multiply(&out, &[1.0, -1.0]);
    }
    for _ in 0..orders.seasonal_d {
        out = multiply(&out, &lag_polynomial(&[1.0], orders.period, -1.0));
    }
    out
}

/// The AR and MA lag coefficients (from lag 1) of the full model for `params`
/// (φ₁…φp, Φ₁…ΦP, θ₁…θq, Θ₁…ΘQ), differencing included in the AR side.
fn operators(orders: &Orders, params: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (p, sp, q) = (orders.p, orders.seasonal_p, orders.q);
    let phi = lag_polynomial(&params[..p], 1, -1.0);
    let seasonal_phi = lag_polynomial(&params[p..p + sp], orders.period, -1.0);
    let theta = lag_polynomial(&params[p + sp..p + sp + q], 1, 1.0);
    let seasonal_theta = lag_polynomial(&params[p + sp + q..], orders.period, 1.0);
    let ar = multiply(&multiply(&phi, &seasonal_phi), &differencing(orders));
    let ma = multiply(&theta, &seasonal_theta);
    (ar[1..].iter().map(|c| -c).collect(), ma[1..].to_vec())
}

/// Conditional sum of squares of `y` under `params`: residuals before the AR lags are
/// available are conditioned to zero. A seasonal model's lag polynomials are mostly zeros
/// (one coefficient at lag 168 of an hourly-weekly model, none between), so only the lags
/// that carry a coefficient are visited.
fn residuals(y: &[f64], mean: f64, ar: &[f64], ma: &[f64]) -> (Vec<f64>, usize) {
    let start = ar.len();
    let (ar, ma) = (nonzero_lags(ar), nonzero_lags(ma));
    let mut e = vec![0.0; y.len()];
    for t in start..y.len() {
        let mut predicted = mean;
        for &(lag, c) in &ar {
            predicted += c * (y[t - lag] - mean);
        }
        for &(lag, c) in &ma {
            if lag <= t {
                predicted += c * e[t - lag];
            }
        }
        e[t] = y[t] - predicted;
    }
    (e, start)
}

/// The (lag, coefficient) pairs of a lag polynomial given from lag 1, zeros left out.
fn nonzero_lags(coefficients: &[f64]) -> Vec<(usize, f64)> {
    coefficients
        .iter()
        .enumerate()
        .filter(|(_, c)| **c != 0.0)
        .map(|(i, c)| (i + 1, *c))
        .collect()
}

/// Fits one order set; `None` when the series is too short for it.
/// Fits the coefficients of given orders (chosen before, e.g. on a longer history).
pub fn fit_orders(y: &[f64], orders: Orders) -> Option<Sarima> {
    let count = orders.p + orders.q + orders.seasonal_p + orders.seasonal_q;
    let differenced = orders.d + orders.seasonal_d > 0;
    let lags = orders.p + orders.d + (orders.seasonal_p + orders.seasonal_d) * orders.period;
    if y.len() < lags + count + 10 {
        return None;
    }
    let mean = if differenced {
        0.0
    } else {
        y.iter().sum::<f64>() / y.len() as f64
    };
    let css = |x: &[f64]| {
        let params: Vec<f64> = x.iter().map(|v| v.tanh()).collect();
        let (ar, ma) = operators(&orders, &params);
        let (e, start) = residuals(y, mean, &ar, &ma);
        let sum: f64 = e[start..].iter().map(|v| v * v).sum();
        if sum.is_finite() { sum } else { f64::INFINITY }
    };
    let best = minimize(css, &vec![0.1; count], 0.3, 400 * (count + 1), 1e-10);
    let params: Vec<f64> = best.iter().map(|v| v.tanh()).collect();
    let (ar, ma) = operators(&orders, &params);
    let (e, start) = residuals(y, mean, &ar, &ma);
    let n = (y.len() - start) as f64;
    let sigma2 = e[start..].iter().map(|v| v * v).sum::<f64>() / n;
    if !(sigma2.is_finite() && sigma2 > 0.0) {
        return None;
    }
    let k = (count + usize::from(!differenced) + 1) as f64;
    let log_likelihood = -0.5 * n * ((2.0 * std::f64::consts::PI * sigma2).ln() + 1.0);
    let aicc = -2.0 * log_likelihood + 2.0 * k + 2.0 * k * (k + 1.0) / (n - k - 1.0).max(1.0);
    Some(Sarima {
        orders,
        ar,
        ma,
        mean,
        history: y.to_vec(),
        residuals: e,
        sigma2,
        aicc,
    })
}

/// The differencing orders whose differenced series varies least.
fn choose_differencing(y: &[f64], period: usize, seasonal: bool) -> (usize, usize) {
    let spread = |d: usize, seasonal_d: usize| {
        let orders = Orders {
            p: 0,
            d,
            q: 0,
            seasonal_p: 0,
            seasonal_d,
            seasonal_q: 0,
            period,
        };
        let operator = differencing(&orders);
        let lag = operator.len() - 1;
        if y.len() <= lag + 2 {
            return f64::INFINITY;
        }
        let w: Vec<f64> = (lag..y.len())
            .map(|t| operator.iter().enumerate().map(|(i, c)| c * y[t - i]).sum())
            .collect();
        let mean = w.iter().sum::<f64>() / w.len() as f64;
        (w.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (w.len() - 1) as f64).sqrt()
    };
    let seasonal_options: &[usize] = if seasonal { &[0, 1] } else { &[0] };
    let mut best = (0, 0, f64::INFINITY);
    for d in [0, 1] {
        for &seasonal_d in seasonal_options {
            let s = spread(d, seasonal_d);
            if s < best.2 {
                best = (d, seasonal_d, s);
            }
        }
    }
    (best.0, best.1)
}

impl Sarima {
    /// The model of lowest AICc for `y` with seasonal `period` (1: no seasonality).
    pub fn auto(y: &[f64], period: usize) -> Option<Sarima> {
        if y.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let seasonal = period > 1 && y.len() >= 3 * period;
        let (d, seasonal_d) = choose_differencing(y, period, seasonal);
        let seasonal_orders: &[usize] = if seasonal { &[0, 1] } else { &[0] };
        let mut best: Option<Sarima> = None;
        for p in 0..=2 {
            for q in 0..=2 {
                for &seasonal_p in seasonal_orders {
                    for &seasonal_q in seasonal_orders {
                        let orders = Orders {
                            p,
                            d,
                            q,
                            seasonal_p,
                            seasonal_d: if seasonal { seasonal_d } else { 0 },
                            seasonal_q,
                            period: if seasonal { period } else { 1 },
                        };
                        if let Some(model) = fit_orders(y, orders) {
                            if best.as_ref().is_none_or(|b| model.aicc < b.aicc) {
                                best = Some(model);
                            }
                        }
                    }
                }
            }
        }
        best
    }

    /// Point forecasts and their standard deviations for `horizon` periods.
    pub fn forecast(&self, horizon: usize) -> (Vec<f64>, Vec<f64>) {
        let mut y = self.history.clone();
        let mut e = self.residuals.clone();
        for _ in 0..horizon {
            let t = y.len();
            let mut value = self.mean;
            for (i, c) in self.ar.iter().enumerate() {
                value += c * (y[t - 1 - i] - self.mean);
            }
            for (j, c) in self.ma.iter().enumerate() {
                value += c * e[t - 1 - j];
            }
            y.push(value);
            e.push(0.0);
        }
        // ψ-weights of the MA(∞) form: ψ₀ = 1, ψⱼ = maⱼ + Σ arᵢ ψⱼ₋ᵢ.
        let mut psi = vec![1.0];
        for j in 1..horizon {
            let mut value = self.ma.get(j - 1).copied().unwrap_or(0.0);
            for i in 1..=j.min(self.ar.len()) {
                value += self.ar[i - 1] * psi[j - i];
            }
            psi.push(value);
        }
        let sd = (1..=horizon)
            .map(|h| (self.sigma2 * psi[..h].iter().map(|v| v * v).sum::<f64>()).sqrt())
            .collect();
        (y[self.history.len()..].to_vec(), sd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(seed: u64, n: usize) -> Vec<f64> {
        // A fixed linear congruential sequence, centred: deterministic test noise.
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((state >> 11) as f64 / (1u64 << 53) as f64) - 0.5
            })
            .collect()
    }

    #[test]
    fn an_ar1_process_is_recovered() {
        let e = noise(7, 400);
        let mut y = vec![0.0];
        for t in 1..400 {
            y.push(0.7 * y[t - 1] + e[t]);
        }
        let model = fit_orders(
            &y,
            Orders {
                p: 1,
                d: 0,
                q: 0,
                seasonal_p: 0,
                seasonal_d: 0,
                seasonal_q: 0,
                period: 1,
            },
        )
        .unwrap();
        assert!((model.ar[0] - 0.7).abs() < 0.1, "{:?}", model.ar);
    }

    #[test]
    fn a_random_walk_is_differenced_and_its_spread_grows() {
        let e = noise(3, 200);
        let y: Vec<f64> = e
            .iter()
            .scan(0.0, |s, v| {
                *s += v;
                Some(*s)
            })
            .collect();
        let model = Sarima::auto(&y, 1).unwrap();
        assert_eq!(model.orders.d, 1);
        let (_, sd) = model.forecast(10);
        assert!(sd[9] > sd[0] * 2.0, "{sd:?}");
    }

    #[test]
    fn a_seasonal_series_gets_seasonal_differencing_and_forecasts_its_pattern() {
        let e = noise(11, 144);
        let y: Vec<f64> = (0..144)
            .map(|t| 50.0 + 0.5 * t as f64 + 10.0 * ((t % 12) as f64 / 12.0 * std::f64::consts::TAU).sin() + e[t])
            .collect();
        let model = Sarima::auto(&y, 12).unwrap();
        assert_eq!(model.orders.seasonal_d, 1, "{}", model.orders);
        let (point, _) = model.forecast(12);
        for (h, value) in point.iter().enumerate() {
            let t = 144 + h;
            let truth = 50.0 + 0.5 * t as f64 + 10.0 * ((t % 12) as f64 / 12.0 * std::f64::consts::TAU).sin();
            assert!((value - truth).abs() < 3.0, "h {h}: {value} vs {truth}");
        }
    }
}
