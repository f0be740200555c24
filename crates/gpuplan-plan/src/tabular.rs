//! Classical ML on tabular data (gradient-boosted trees): a CPU instance unless a GPU pays for
//! itself.
//!
//! References: Chen & Guestrin 2016 ("XGBoost"); Mitchell & Frank 2017 ("Accelerating the
//! XGBoost algorithm using GPU computing"), whose `gpu_hist` runs several times faster than the
//! multi-core `hist` on the same data. The rates below are order-of-magnitude figures from the
//! XGBoost Higgs benchmark (11M rows × 28 features): ≈ 4 × 10⁷ row·feature·rounds per second per
//! vCPU with `hist`, ≈ 1.3 × 10¹⁰ on a V100 with `gpu_hist`; treat results as ±50 %.

use crate::offering_source::OfferingSource;
use crate::request::Constraints;
use gpuplan_model::{BillingMode, Bytes, Offering, Precision, SoftwareStack};
use serde::Serialize;

/// Histogram-based boosting throughput per vCPU, row·feature·rounds per second.
pub const CPU_CELL_ROUNDS_PER_VCPU_SECOND: f64 = 4.0e7;

/// GPU boosting throughput on a V100 (900 GB/s), row·feature·rounds per second; other GPUs
/// scale with memory bandwidth, which bounds histogram building.
pub const GPU_CELL_ROUNDS_PER_SECOND_V100: f64 = 1.3e10;
const V100_BANDWIDTH_GB_PER_S: f64 = 900.0;

/// Time every job pays whatever the hardware: start the instance, load the data, export the
/// model.
pub const TABULAR_FIXED_SECONDS: f64 = 300.0;

/// Boosting rounds when not given: XGBoost's and LightGBM's default of 100 estimators.
pub const DEFAULT_BOOSTING_ROUNDS: u32 = 100;

/// A tabular training job.
#[derive(Debug, Clone, PartialEq)]
pub struct TabularRequest {
    pub rows: f64,
    pub features: f64,
    pub rounds: u32,
    pub constraints: Constraints,
}

/// One priced way to run it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TabularOption {
    pub provider: String,
    pub instance_type: String,
    pub region: Option<String>,
    /// `null` for CPU-only instances.
    pub gpu: Option<String>,
    pub gpus: u32,
    pub vcpus: f64,
    pub memory_needed_bytes: u64,
    pub memory_available_bytes: u64,
    pub time_seconds: f64,
    /// The billing mode the price is under: the cheapest of those allowed for the job.
    pub billing: BillingMode,
    pub hourly_usd: f64,
    pub total_usd: f64,
    pub why: Vec<String>,
}

/// The ways to train `request`, cheapest first (fastest first for `by_time`).
pub fn plan_tabular(source: &impl OfferingSource, request: &TabularRequest, by_time: bool) -> Vec<TabularOption> {
    let work = request.rows * request.features * f64::from(request.rounds);
    let host_need = host_need(request);
    // GPU memory: the compressed quantised matrix (1 byte per cell) plus gradients and pairs.
    let gpu_need = Bytes((request.rows * request.features + request.rows * 16.0) as u64);
    let c = &request.constraints;
    let mut options = Vec::new();
    for offering in source.offerings() {
        if !in_scope(c, offering) {
            continue;
        }
        if offering.memory < host_need || offering.vcpus < 1.0 {
            continue;
        }
        let (seconds, gpu, available, mut why) = match &offering.accelerator {
            None => {
                let seconds = work / (offering.vcpus * CPU_CELL_ROUNDS_PER_VCPU_SECOND);
                (
                    seconds,
                    None,
                    offering.memory,
                    vec![format!("{} vCPUs with histogram boosting", offering.vcpus)],
                )
            }
            Some(id) if offering.accelerator_count == 1 => {
                let Some(accelerator) = source.accelerator(id) else {
                    continue;
                };
                // XGBoost's and LightGBM's GPU builds are CUDA builds.
                let cuda = accelerator.stacks.iter().any(|s| s.stack == SoftwareStack::Cuda);
                if !cuda || accelerator.usable_memory() < gpu_need || accelerator.peak(Precision::Fp32).is_none() {
                    continue;
                }
                let bandwidth = accelerator
                    .memory_bandwidth
                    .map_or(V100_BANDWIDTH_GB_PER_S, |b| b.as_gb_per_s());
                let rate = GPU_CELL_ROUNDS_PER_SECOND_V100 * bandwidth / V100_BANDWIDTH_GB_PER_S;
                (
                    work / rate,
                    Some(id.to_string()),
                    accelerator.usable_memory(),
                    vec![format!("GPU boosting on {id}")],
                )
            }
            Some(_) => continue,
        };
        let total_seconds = seconds + TABULAR_FIXED_SECONDS;
        if c.deadline_hours.is_some_and(|d| total_seconds / 3600.0 > d) {
            continue;
        }
        let billed = source.operations().meter(offering).billed_hours(total_seconds / 3600.0);
        let Some((rate, total)) = cheapest_total(source, offering, &c.billing, billed) else {
            continue;
        };
        if c.budget_usd.is_some_and(|b| total > b) {
            continue;
        }
        why.extend(billing_notes(&rate, billed));
        why.push(format!(
            "{:.0} s of boosting + {TABULAR_FIXED_SECONDS:.0} s to start and load",
            seconds
        ));
        options.push(TabularOption {
            provider: offering.provider.to_string(),
            instance_type: offering.instance_type.clone(),
            region: offering.region.clone(),
            gpu,
            gpus: if offering.accelerator.is_some() { 1 } else { 0 },
            vcpus: offering.vcpus,
            memory_needed_bytes: if offering.accelerator.is_some() {
                gpu_need.as_u64()
            } else {
                host_need.as_u64()
            },
            memory_available_bytes: available.as_u64(),
            time_seconds: total_seconds,
            billing: rate.billing,
            hourly_usd: rate.usd_per_hour,
            total_usd: total,
            why,
        });
    }
    options.sort_by(|a, b| {
        let (first, second) = if by_time {
            (a.time_seconds, b.time_seconds)
        } else {
            (a.total_usd, b.total_usd)
        };
        first
            .total_cmp(&second)
            .then(a.total_usd.total_cmp(&b.total_usd))
            .then(a.instance_type.cmp(&b.instance_type))
    });
    // The same shape at the same price in several regions or zones: keep the first.
    options
        .dedup_by(|b, a| a.provider == b.provider && a.instance_type == b.instance_type && a.total_usd == b.total_usd);
    options
}

/// The billing mode that makes `billed` hours cheapest, and the total: a reserved mode bills
/// its whole term however short the job.
fn cheapest_total(
    source: &impl OfferingSource,
    offering: &Offering,
    modes: &[BillingMode],
    billed: f64,
) -> Option<(crate::Rate, f64)> {
    modes
        .iter()
        .filter_map(|mode| crate::rate(source, offering, *mode, None))
        .map(|rate| {
            let hours = rate
                .billing
                .commitment()
                .map_or(billed, |term| term.hours().max(billed));
            let total = rate.usd_per_hour * hours;
            (rate, total)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// What the price of a tabular option rests on, where it is not a plain on-demand rate.
fn billing_notes(rate: &crate::Rate, billed: f64) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(how) = rate.derivation() {
        notes.push(format!("{} price derived: {how}", rate.billing));
    }
    if let Some(term) = rate.billing.commitment().filter(|t| t.hours() > billed) {
        notes.push(format!(
            "a {} commitment bills {:.0} h whatever the job uses",
            rate.billing,
            term.hours()
        ));
    }
    notes
}

/// Whether `offering` is in the providers and regions asked (all when none).
fn in_scope(c: &Constraints, offering: &Offering) -> bool {
    (c.providers.is_empty() || c.providers.contains(&offering.provider))
        && (c.regions.is_empty()
            || c.regions
                .iter()
                .any(|r| offering.region.as_deref().unwrap_or("").starts_with(r.as_str())))
}

/// Host memory boosting needs: the float matrix, its quantised copy and per-row gradients
/// (3× the data).
fn host_need(request: &TabularRequest) -> Bytes {
    Bytes((request.rows * request.features * 4.0 * 3.0) as u64)
}

/// Why `request` has no option: the data too large for any instance in scope, the scope
/// empty, or the deadline or budget (only where given) too tight.
pub fn tabular_shortfall(source: &impl OfferingSource, request: &TabularRequest) -> String {
    let c = &request.constraints;
    let in_scope: Vec<&Offering> = source.offerings().iter().filter(|o| in_scope(c, o)).collect();
    if in_scope.is_empty() {
        return "no offering in the providers and regions asked; allow more".to_string();
    }
    let host_need = host_need(request);
    // The instances boosting runs on: CPU-only and single-GPU ones.
    let largest = in_scope
        .iter()
        .filter(|o| o.accelerator.is_none() || o.accelerator_count == 1)
        .map(|o| o.memory)
        .max()
        .unwrap_or(Bytes(0));
    if largest < host_need {
        return format!(
            "the data needs {host_need} of host memory (3× the {} float32 matrix) and the largest instance in scope has {largest}; \
             sample the rows or use external-memory or distributed boosting (Dask, Spark), which are not planned here",
            Bytes((request.rows * request.features * 4.0) as u64)
        );
    }
    match (c.deadline_hours.is_some(), c.budget_usd.is_some()) {
        (true, true) => "relax the deadline or the budget".to_string(),
        (true, false) => "relax the deadline".to_string(),
        (false, true) => "raise the budget".to_string(),
        (false, false) => "no offering in scope has a price for the billing modes asked".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_catalog::Catalog;

    fn request(billing: Vec<BillingMode>) -> TabularRequest {
        TabularRequest {
            rows: 1e7,
            features: 100.0,
            rounds: DEFAULT_BOOSTING_ROUNDS,
            constraints: Constraints {
                providers: vec![gpuplan_model::ProviderId::new("aws")],
                billing,
                ..Constraints::default()
            },
        }
    }

    /// A reserved term is priced like every other plan prices it: the discounted rate over the
    /// whole term, which a job of minutes never repays; so asked for on-demand or reserved,
    /// the cheapest answer is on demand, and asked for reserved only, it bills the year.
    #[test]
    fn a_reserved_term_bills_its_whole_term() {
        let catalog = Catalog::embedded().unwrap();
        let on_demand = plan_tabular(&catalog, &request(vec![BillingMode::OnDemand]), false);
        let either = plan_tabular(
            &catalog,
            &request(vec![BillingMode::OnDemand, BillingMode::Reserved1y]),
            false,
        );
        assert_eq!(either[0].total_usd, on_demand[0].total_usd);
        let reserved = plan_tabular(&catalog, &request(vec![BillingMode::Reserved1y]), false);
        let first = &reserved[0];
        assert!(first.total_usd > 8000.0 * first.hourly_usd, "{first:?}");
        assert!(
            first.why.iter().any(|w| w.contains("commitment bills 8760 h")),
            "{:?}",
            first.why
        );
        assert!(first.why.iter().any(|w| w.contains("price derived")), "{:?}", first.why);
    }
}
