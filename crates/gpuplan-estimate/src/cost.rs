//! What renting costs: hours billed at a provider's granularity, storage and tiered egress.

use gpuplan_model::BillingMeter;
use serde::Serialize;

/// Block storage price per GB-month used when none is given: AWS EBS gp3 in us-east-1,
/// $0.08 per GB-month (<https://aws.amazon.com/ebs/pricing/>, read 2026-11-22).
pub const DEFAULT_STORAGE_USD_PER_GB_MONTH: f64 = 0.08;

/// Internet egress tiers per month used when none are given: AWS EC2 data transfer out to the
/// internet, us-east-1 (<https://aws.amazon.com/ec2/pricing/on-demand/>, "Data Transfer", read
/// 2026-11-22): the first 100 GB free, then $0.09/GB up to 10 TB, $0.085 to 50 TB, $0.07 to
/// 150 TB, $0.05 beyond. `(GB up to, USD per GB)`.
pub const DEFAULT_EGRESS_TIERS: [(f64, f64); 5] = [
    (100.0, 0.0),
    (10_240.0, 0.09),
    (51_200.0, 0.085),
    (153_600.0, 0.07),
    (f64::INFINITY, 0.05),
];

/// Cost of `gb` of egress over tiers `(upper bound in GB, USD per GB)`; the last tier's price
/// also applies beyond its bound.
pub fn egress_cost(gb: f64, tiers: &[(f64, f64)]) -> f64 {
    let mut cost = 0.0;
    let mut lower = 0.0;
    for (index, &(upper, price)) in tiers.iter().enumerate() {
        if gb <= lower {
            break;
        }
        let upper = if index + 1 == tiers.len() { f64::INFINITY } else { upper };
        cost += (gb.min(upper) - lower) * price;
        lower = upper;
    }
    cost
}

/// The storage and egress prices a job is charged at.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageRates {
    pub block_usd_per_gb_month: f64,
    pub egress_tiers: Vec<(f64, f64)>,
}

impl Default for StorageRates {
    /// AWS's, where nothing else is known.
    fn default() -> Self {
        StorageRates {
            block_usd_per_gb_month: DEFAULT_STORAGE_USD_PER_GB_MONTH,
            egress_tiers: DEFAULT_EGRESS_TIERS.to_vec(),
        }
    }
}

/// Hours in a billing month (8,760 / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;

/// Compute cost under staged prices that restart every month: `tiers` are `(from hour of the
/// month, USD per hour)`, the first starting at 0 (e.g. `[(0, 3.06), (500, 2.50)]`: a lower
/// rate after 500 hours in a month).
pub fn tiered_compute_cost(hours: f64, tiers: &[(f64, f64)]) -> f64 {
    let month = |hours_in_month: f64| -> f64 {
        let mut cost = 0.0;
        for (index, &(from, price)) in tiers.iter().enumerate() {
            let until = tiers.get(index + 1).map_or(f64::INFINITY, |next| next.0);
            if hours_in_month > from {
                cost += (hours_in_month.min(until) - from) * price;
            }
        }
        cost
    };
    let full_months = (hours / HOURS_PER_MONTH).floor();
    full_months * month(HOURS_PER_MONTH) + month(hours - full_months * HOURS_PER_MONTH)
}

/// A savings-plan style commitment of `commitment_usd_per_hour` (at discounted rates) for
/// `hours`, covering usage that costs `on_demand_usd_per_hour` at a `discount`: the commitment
/// is paid whatever the use, usage beyond it at on-demand.
pub fn savings_plan_cost(hours: f64, on_demand_usd_per_hour: f64, discount: f64, commitment_usd_per_hour: f64) -> f64 {
    let discounted = on_demand_usd_per_hour * (1.0 - discount);
    let covered = (commitment_usd_per_hour / discounted).min(1.0);
    hours * (commitment_usd_per_hour + on_demand_usd_per_hour * (1.0 - covered))
}

/// A cost broken down.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct CostBreakdown {
    pub compute_usd: f64,
    pub storage_usd: f64,
    pub egress_usd: f64,
    pub total_usd: f64,
    pub billed_hours: f64,
}

/// Compute at `usd_per_hour` for `hours`, plus storage and egress.
pub fn job_cost(
    usd_per_hour: f64,
    hours: f64,
    meter: BillingMeter,
    storage_gb_months: f64,
    egress_gb: f64,
    rates: &StorageRates,
) -> CostBreakdown {
    let billed = meter.billed_hours(hours);
    let compute = usd_per_hour * billed;
    let storage = storage_gb_months * rates.block_usd_per_gb_month;
    let egress = egress_cost(egress_gb, &rates.egress_tiers);
    CostBreakdown {
        compute_usd: compute,
        storage_usd: storage,
        egress_usd: egress,
        total_usd: compute + storage + egress,
        billed_hours: billed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_prices_restart_each_month() {
        let tiers = [(0.0, 3.0), (500.0, 2.0)];
        assert_eq!(tiered_compute_cost(400.0, &tiers), 1200.0);
        assert_eq!(tiered_compute_cost(730.0, &tiers), 500.0 * 3.0 + 230.0 * 2.0);
        assert_eq!(tiered_compute_cost(1460.0, &tiers), 2.0 * (500.0 * 3.0 + 230.0 * 2.0));
    }

    #[test]
    fn savings_plans_cover_up_to_the_commitment() {
        // $10/h on demand at 30 % off: $7/h covers all of it.
        assert!((savings_plan_cost(100.0, 10.0, 0.3, 7.0) - 700.0).abs() < 1e-9);
        // $3.50/h covers half; the other half pays on demand.
        assert!((savings_plan_cost(100.0, 10.0, 0.3, 3.5) - (350.0 + 500.0)).abs() < 1e-9);
        // Over-committing pays for nothing.
        assert!((savings_plan_cost(100.0, 10.0, 0.3, 9.0) - 900.0).abs() < 1e-9);
    }

    #[test]
    fn textbook_on_demand_and_reserved_years() {
        let year = |rate: f64| {
            job_cost(
                rate,
                8760.0,
                BillingMeter::default(),
                0.0,
                0.0,
                &StorageRates::default(),
            )
        };
        assert!((year(3.06).total_usd - 26_805.60).abs() < 1e-6);
        assert!((year(1.38).total_usd - 12_088.80).abs() < 1e-6);
    }

    #[test]
    fn egress_is_tiered() {
        assert_eq!(egress_cost(50.0, &DEFAULT_EGRESS_TIERS), 0.0);
        assert!((egress_cost(1_100.0, &DEFAULT_EGRESS_TIERS) - 90.0).abs() < 1e-9);
        let twenty_tb = egress_cost(20_480.0, &DEFAULT_EGRESS_TIERS);
        assert!((twenty_tb - ((10_240.0 - 100.0) * 0.09 + 10_240.0 * 0.085)).abs() < 1e-6);
    }
}
