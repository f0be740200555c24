//! How much capacity to reserve for a term, given a demand forecast: the newsvendor trade-off
//! between paying for reserved capacity that sits idle and paying on-demand for the excess.
//!
//! With demand `D` per period (GPU-hours) and `c` GPUs reserved for `h` hours a period, a
//! period costs `c·h·r + E[max(0, D − c·h)]·o` (`r` reserved, `o` on-demand rate per GPU-hour).
//! Demand in each period is taken as normal with the forecast mean and the spread its
//! prediction interval implies; `c` is searched over whole GPUs from 0 to the forecast's P90
//! peak, so the plan never reserves more than P90 demand.

use crate::forecast::Forecast;
use serde::Serialize;

/// The prices a commitment is weighed with, per GPU-hour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommitmentPrices {
    pub on_demand_usd_per_gpu_hour: f64,
    pub reserved_usd_per_gpu_hour: f64,
    /// Hours in one forecast period.
    pub hours_per_period: f64,
}

/// The recommended commitment and its risks.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Commitment {
    /// GPUs to reserve for the term.
    pub reserved_gpus: u64,
    /// Expected cost over the forecast with that commitment (reserved + on-demand excess).
    pub expected_cost_usd: f64,
    /// Expected cost with everything on demand.
    pub on_demand_only_cost_usd: f64,
    pub expected_savings_usd: f64,
    /// Cost if demand follows the lower (P10-like) or upper (P90-like) edge of the band.
    pub cost_at_low_demand_usd: f64,
    pub cost_at_high_demand_usd: f64,
    /// Expected share of reserved GPU-hours used.
    pub expected_utilization: f64,
    pub why: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CommitmentError(pub String);

/// Standard normal CDF via the complementary error function (Abramowitz & Stegun 7.1.26,
/// absolute error below 1.5 × 10⁻⁷).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 { 0.5 * (1.0 + erf) } else { 0.5 * (1.0 - erf) }
}

fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// z of a two-sided interval at `level` (0.8, 0.9, 0.95…), by bisection on the CDF.
pub(crate) fn z_of(level: f64) -> f64 {
    let target = 0.5 + level / 2.0;
    let (mut lo, mut hi) = (0.0, 10.0);
    for _ in 0..80 {
        let mid = (lo + hi) / 2.0;
        if normal_cdf(mid) < target { lo = mid } else { hi = mid }
    }
    (lo + hi) / 2.0
}

/// E[max(0, D − k)] for D ~ N(mean, sd²).
fn expected_excess(mean: f64, sd: f64, k: f64) -> f64 {
    if sd <= 0.0 {
        return (mean - k).max(0.0);
    }
    let z = (k - mean) / sd;
    sd * normal_pdf(z) + (mean - k) * (1.0 - normal_cdf(z))
}

/// The reservation from 0 to `most` GPUs with the least expected cost (the smallest where
/// several tie). The cost is convex in the reservation — a linear rent plus the expected excess
/// demand, convex in it — so the smallest reservation from which one more GPU stops paying is
/// the optimum: found by bisection in log time, whatever the demand.
fn cheapest_reservation(cost: &dyn Fn(f64) -> f64, most: u64) -> u64 {
    let (mut low, mut high) = (0u64, most);
    while low < high {
        let mid = low + (high - low) / 2;
        if cost((mid + 1) as f64) >= cost(mid as f64) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    low
}

pub fn plan_commitment(forecast: &Forecast, prices: &CommitmentPrices) -> Result<Commitment, CommitmentError> {
    let p = prices;
    if !(p.on_demand_usd_per_gpu_hour > 0.0 && p.reserved_usd_per_gpu_hour > 0.0 && p.hours_per_period > 0.0) {
        return Err(CommitmentError("prices and period length must be positive".to_string()));
    }
    if p.reserved_usd_per_gpu_hour >= p.on_demand_usd_per_gpu_hour {
        return Err(CommitmentError(
            "the reserved rate is not below on-demand: nothing to gain".to_string(),
        ));
    }
    let z = z_of(forecast.level);
    let demand: Vec<(f64, f64)> = forecast
        .points
        .iter()
        .map(|pt| (pt.mean, ((pt.upper - pt.lower) / (2.0 * z)).max(0.0)))
        .collect();
    let cost = |gpus: f64| -> f64 {
        demand
            .iter()
            .map(|(mean, sd)| {
                let reserved = gpus * p.hours_per_period;
                reserved * p.reserved_usd_per_gpu_hour
                    + expected_excess(*mean, *sd, reserved) * p.on_demand_usd_per_gpu_hour
            })
            .sum()
    };
    let peak_p90 = forecast.points.iter().map(|pt| pt.upper).fold(0.0, f64::max);
    let max_gpus = (peak_p90 / p.hours_per_period).floor() as u64;
    let best = cheapest_reservation(&cost, max_gpus);
    let best_cost = cost(best as f64);
    let deterministic = |pick: &dyn Fn(&crate::forecast::ForecastPoint) -> f64| -> f64 {
        forecast
            .points
            .iter()
            .map(|pt| {
                let reserved = best as f64 * p.hours_per_period;
                reserved * p.reserved_usd_per_gpu_hour + (pick(pt) - reserved).max(0.0) * p.on_demand_usd_per_gpu_hour
            })
            .sum()
    };
    let reserved_hours = best as f64 * p.hours_per_period * forecast.points.len() as f64;
    let used: f64 = demand
        .iter()
        .map(|(mean, _)| mean.min(best as f64 * p.hours_per_period))
        .sum();
    let on_demand_only = cost(0.0);
    let break_even = 1.0 - p.reserved_usd_per_gpu_hour / p.on_demand_usd_per_gpu_hour;
    Ok(Commitment {
        reserved_gpus: best,
        expected_cost_usd: best_cost,
        on_demand_only_cost_usd: on_demand_only,
        expected_savings_usd: on_demand_only - best_cost,
        cost_at_low_demand_usd: deterministic(&|pt| pt.lower),
        cost_at_high_demand_usd: deterministic(&|pt| pt.upper),
        expected_utilization: if reserved_hours > 0.0 {
            (used / reserved_hours).min(1.0)
        } else {
            0.0
        },
        why: vec![
            format!(
                "a reserved GPU pays off when it is busy more than {:.0} % of the time (reserved ${:.3} against on-demand ${:.3} per GPU-hour)",
                (1.0 - break_even) * 100.0,
                p.reserved_usd_per_gpu_hour,
                p.on_demand_usd_per_gpu_hour
            ),
            format!("searched 0–{max_gpus} GPUs: never above the forecast's P90 peak demand"),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bisection_finds_what_a_scan_finds() {
        for (mean, sd, rent) in [
            (2000.0, 400.0, 24.0 * 1.6),
            (50.0, 0.0, 10.0),
            (0.0, 5.0, 1.0),
            (1e6, 3e5, 30.0),
        ] {
            let cost = |g: f64| g * rent + expected_excess(mean, sd, g * 24.0) * 2.5;
            let scan = (0..=2000u64)
                .map(|g| (g, cost(g as f64)))
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
                .unwrap();
            assert_eq!(cheapest_reservation(&cost, 2000), scan.0, "{mean} {sd}");
        }
        // A demand of a trillion GPU-hours is answered at once.
        let huge = |g: f64| g * 40.0 + expected_excess(1e12, 1e9, g * 24.0) * 2.5;
        assert!(cheapest_reservation(&huge, u64::MAX) > 0);
    }

    #[test]
    fn normal_tables() {
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
        assert!((z_of(0.9) - 1.6449).abs() < 1e-3);
        assert!((expected_excess(10.0, 0.0, 4.0) - 6.0).abs() < 1e-12);
    }
}
