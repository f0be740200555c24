//! `rightsize`: GPU telemetry → what each GPU and job used → what to change, with the dollars
//! it saves a month at catalog prices.

use crate::{Error, resolve};
use gpuplan_catalog::Catalog;
use gpuplan_model::{Accelerator, BillingMode, CommitmentTerm, Precision};
use gpuplan_telemetry::{GpuSummary, JobSummary, Sample, summarise, summarise_jobs};
use serde::Serialize;

/// Hours in a month of renting (8,760 / 12).
const HOURS_PER_MONTH: f64 = 730.0;
/// Idle for more than this share of the time observed: release the GPU, or share it.
const IDLE_SHARE: f64 = 0.5;
/// Tensor cores active less than this share while the GPU is busy: the matmuls are not on them.
const LOW_TENSOR_ACTIVITY: f64 = 0.1;
/// Busy above this utilisation (p50) for the tensor-activity finding to mean something.
const BUSY_UTILISATION: f64 = 0.5;
/// A job's GPUs at a p95 utilisation under this could be packed onto fewer.
const CONSOLIDATE_BELOW: f64 = 0.3;
/// Utilisation aimed at when packing a job onto fewer GPUs.
const TARGET_UTILISATION: f64 = 0.7;

/// Observation needed before a month of savings is extrapolated from it, hours.
const MIN_OBSERVED_HOURS: f64 = 1.0;
/// MIG slices per GPU offered (A100/H100: 1g, 2g, 3g, 4g, 7g of 7 compute slices).
const MIG_SLICES: [u32; 3] = [7, 3, 2];
/// Accelerators with Multi-Instance GPU (NVIDIA MIG user guide: A30, A100, H100, H200, B200).
const MIG_CAPABLE: [&str; 9] = [
    "A30",
    "A100-SXM4-40GB",
    "A100-SXM4-80GB",
    "A100-PCIE-40GB",
    "A100-PCIE-80GB",
    "H100-SXM5-80GB",
    "H100-PCIE-80GB",
    "H200-SXM-141GB",
    "B200",
];

/// A rightsizing question.
#[derive(Debug, Clone)]
pub struct RightsizeQuery {
    pub samples: Vec<Sample>,
    /// The rate paid per GPU-hour, where the catalog's on-demand price is not it.
    pub price_per_gpu_hour: Option<f64>,
    /// Providers whose prices are compared (default: every provider).
    pub providers: Vec<String>,
    /// Room kept above the observed peak memory and compute.
    pub headroom: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct GpuUse {
    pub gpu: String,
    pub name: String,
    /// The catalog's accelerator, where the device name resolves.
    pub accelerator: Option<String>,
    pub jobs: Vec<String>,
    pub samples: usize,
    pub hours: f64,
    pub utilisation_p50: Option<f64>,
    pub utilisation_p95: Option<f64>,
    pub tensor_active_mean: Option<f64>,
    pub memory_peak_bytes: Option<u64>,
    pub memory_total_bytes: Option<u64>,
    pub power_mean_watts: Option<f64>,
    pub idle_hours: f64,
    /// What one GPU-hour of it costs (the rate given, else the catalog's cheapest on-demand).
    pub usd_per_gpu_hour: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobUse {
    pub job: String,
    pub gpus: usize,
    pub name: String,
    pub gpu_hours: f64,
    pub utilisation_p50: Option<f64>,
    pub utilisation_p95: Option<f64>,
    pub tensor_active_mean: Option<f64>,
    pub memory_peak_bytes: Option<u64>,
}

/// One thing to change.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// idle, smaller-gpu, fewer-gpus, mig, low-tensor-activity or reserve-base.
    pub kind: &'static str,
    /// The GPU or job it is about.
    pub subject: String,
    pub what: String,
    pub savings_usd_per_month: Option<f64>,
    /// The GPUs it changes: findings that share one are alternatives, counted once.
    pub covers: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RightsizeAnswer {
    pub gpus: Vec<GpuUse>,
    pub jobs: Vec<JobUse>,
    pub findings: Vec<Finding>,
    /// Savings of findings that change different GPUs, the largest first.
    pub savings_usd_per_month: f64,
    pub assumptions: Vec<String>,
}

/// The catalog's cheapest on-demand rate per GPU of `accelerator` among `providers`.
fn cheapest_rate(catalog: &Catalog, accelerator: &str, providers: &[gpuplan_model::ProviderId]) -> Option<f64> {
    cheapest_offer(catalog, accelerator, providers).map(|(rate, _)| rate)
}

/// The cheapest on-demand rate per GPU of `accelerator` among `providers`, and who sells it.
fn cheapest_offer(
    catalog: &Catalog,
    accelerator: &str,
    providers: &[gpuplan_model::ProviderId],
) -> Option<(f64, String)> {
    catalog
        .offerings()
        .iter()
        .filter(|o| o.accelerator.as_ref().is_some_and(|a| a.as_str() == accelerator))
        .filter(|o| providers.is_empty() || providers.contains(&o.provider))
        .filter(|o| o.price_flagged(BillingMode::OnDemand).is_none() && o.accelerator_count > 0)
        .filter_map(|o| {
            o.on_demand
                .map(|p| (p.0 / f64::from(o.accelerator_count), o.provider.as_str().to_string()))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

fn dense_16bit_tflops(accelerator: &Accelerator) -> Option<f64> {
    accelerator
        .peak(Precision::Bf16)
        .or_else(|| accelerator.peak(Precision::Fp16))
        .map(|f| f.0 / 1e12)
}

pub fn rightsize(catalog: &Catalog, query: &RightsizeQuery) -> Result<RightsizeAnswer, Error> {
    crate::with_fitted(catalog, || rightsize_in(catalog, query))
}

fn rightsize_in(catalog: &Catalog, query: &RightsizeQuery) -> Result<RightsizeAnswer, Error> {
    if query.samples.is_empty() {
        return Err(Error::invalid(
            "no GPU samples",
            Some("give nvidia-smi logs or DCGM scrapes".to_string()),
        ));
    }
    gpuplan_telemetry::check_samples(&query.samples).map_err(|e| {
        Error::invalid(
            e.to_string(),
            Some("check the log: a truncated or edited file reads as impossible values".to_string()),
        )
    })?;
    if let Some(rate) = query.price_per_gpu_hour.filter(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(Error::invalid(
            format!("--price must be a positive rate per GPU-hour, found {rate}"),
            None,
        ));
    }
    let providers = resolve::providers(catalog, &query.providers)?;
    let summaries = summarise(&query.samples);
    let job_summaries = summarise_jobs(&query.samples, &summaries);
    let mut assumptions = vec![
        format!(
            "idle: below {:.0} % utilisation",
            gpuplan_telemetry::IDLE_UTILISATION * 100.0
        ),
        format!(
            "{:.0} % headroom above observed memory and compute peaks",
            query.headroom * 100.0
        ),
        format!("a month is {HOURS_PER_MONTH} h of renting"),
    ];
    assumptions.push(match query.price_per_gpu_hour {
        Some(rate) => format!("every GPU priced at the rate given, ${rate:.2} per GPU-hour"),
        None => "GPUs priced at the catalog's cheapest on-demand rate per GPU for their type".to_string(),
    });
    let brief = summaries.iter().filter(|s| s.hours < MIN_OBSERVED_HOURS).count();
    if brief > 0 {
        assumptions.push(format!(
            "{brief} GPU{} observed for under an hour: findings without monthly savings (too little to extrapolate)",
            if brief == 1 { "" } else { "s" }
        ));
    }
    let mut findings = Vec::new();
    let gpus: Vec<GpuUse> = summaries
        .iter()
        .map(|s| {
            let accelerator = catalog.accelerators().resolve_one(&s.name).ok().map(|r| r.accelerator);
            let rate = query
                .price_per_gpu_hour
                .or_else(|| accelerator.and_then(|a| cheapest_rate(catalog, a.id.as_str(), &providers)));
            findings.extend(gpu_findings(catalog, query, &providers, s, accelerator, rate));
            GpuUse {
                gpu: s.gpu.0.clone(),
                name: s.name.clone(),
                accelerator: accelerator.map(|a| a.id.to_string()),
                jobs: s.jobs.clone(),
                samples: s.samples,
                hours: s.hours,
                utilisation_p50: s.utilisation_p50,
                utilisation_p95: s.utilisation_p95,
                tensor_active_mean: s.tensor_active_mean,
                memory_peak_bytes: s.memory_peak_bytes,
                memory_total_bytes: s.memory_total_bytes,
                power_mean_watts: s.power_mean_watts,
                idle_hours: s.idle_hours,
                usd_per_gpu_hour: rate,
            }
        })
        .collect();
    for job in &job_summaries {
        let rate = gpus
            .iter()
            .find(|g| g.jobs.contains(&job.job))
            .and_then(|g| g.usd_per_gpu_hour);
        let on_it: Vec<String> = gpus
            .iter()
            .filter(|g| g.jobs.contains(&job.job))
            .map(|g| g.gpu.clone())
            .collect();
        findings.extend(job_findings(job, &on_it, rate));
    }
    findings.extend(base_load(catalog, &query.samples, &gpus, &providers, &mut assumptions));
    let fleet_usd_per_month: f64 = gpus.iter().filter_map(|g| g.usd_per_gpu_hour).sum::<f64>() * HOURS_PER_MONTH;
    let savings_usd_per_month = total_savings(&findings, fleet_usd_per_month);
    Ok(RightsizeAnswer {
        gpus,
        jobs: job_summaries.iter().map(job_use).collect(),
        findings,
        savings_usd_per_month,
        assumptions,
    })
}

fn job_use(j: &JobSummary) -> JobUse {
    JobUse {
        job: j.job.clone(),
        gpus: j.gpus,
        name: j.name.clone(),
        gpu_hours: j.gpu_hours,
        utilisation_p50: j.utilisation_p50,
        utilisation_p95: j.utilisation_p95,
        tensor_active_mean: j.tensor_active_mean,
        memory_peak_bytes: j.memory_peak_bytes,
    }
}

/// Findings that change the same GPU are alternatives (a GPU released is not also shrunk, a job
/// packed onto fewer GPUs does not also slice them): the largest first, each GPU counted once.
/// A reservation of the base load discounts what the fleet still spends after those changes,
/// so its saving shrinks by the share of the fleet's spend they remove (reserving A10Gs that
/// another finding replaces with T4s saves the discount on T4 prices, not on A10G prices).
fn total_savings(findings: &[Finding], fleet_usd_per_month: f64) -> f64 {
    let (reservations, changes): (Vec<&Finding>, Vec<&Finding>) =
        findings.iter().partition(|f| f.kind == "reserve-base");
    let changed = changes_saving(&changes);
    let remaining = if fleet_usd_per_month > 0.0 {
        (1.0 - changed / fleet_usd_per_month).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let reserved: f64 = reservations
        .iter()
        .filter_map(|f| f.savings_usd_per_month)
        .map(|saving| saving * remaining)
        .sum();
    changed + reserved
}

/// The saving of the findings that change GPUs, each GPU counted once.
fn changes_saving(findings: &[&Finding]) -> f64 {
    let mut ranked: Vec<&Finding> = findings
        .iter()
        .copied()
        .filter(|f| f.savings_usd_per_month.is_some())
        .collect();
    ranked.sort_by(|a, b| {
        b.savings_usd_per_month
            .unwrap_or(0.0)
            .total_cmp(&a.savings_usd_per_month.unwrap_or(0.0))
    });
    let mut changed = std::collections::BTreeSet::new();
    let mut total = 0.0;
    for finding in ranked {
        if finding.covers.iter().any(|gpu| changed.contains(gpu)) {
            continue;
        }
        changed.extend(finding.covers.iter().cloned());
        total += finding.savings_usd_per_month.unwrap_or(0.0);
    }
    total
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 30)
}

fn gpu_findings(
    catalog: &Catalog,
    query: &RightsizeQuery,
    providers: &[gpuplan_model::ProviderId],
    s: &GpuSummary,
    accelerator: Option<&Accelerator>,
    rate: Option<f64>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let subject = format!("{} ({})", s.gpu.0, s.name);
    let covers = vec![s.gpu.0.clone()];
    // A month's savings are extrapolated only from an hour of observation or more.
    let monthly = |share: f64| {
        rate.filter(|_| s.hours >= MIN_OBSERVED_HOURS)
            .map(|r| r * HOURS_PER_MONTH * share)
    };
    if s.hours > 0.0 && s.idle_hours / s.hours > IDLE_SHARE {
        findings.push(Finding {
            kind: "idle",
            subject: subject.clone(),
            what: format!(
                "idle {:.0} % of {:.1} h observed: release it when idle (autoscale, or a shorter reservation)",
                s.idle_hours / s.hours * 100.0,
                s.hours
            ),
            savings_usd_per_month: monthly(s.idle_hours / s.hours),
            covers: covers.clone(),
        });
        // An idle GPU is to be released, not resized.
        return findings;
    }
    let (Some(current), Some(peak)) = (accelerator, s.memory_peak_bytes) else {
        return findings;
    };
    let need_memory = peak as f64 * (1.0 + query.headroom);
    let busy = s
        .utilisation_p95
        .unwrap_or(1.0)
        .max(s.tensor_active_mean.unwrap_or(0.0));
    // The busy share of the current GPU's peak compute and memory bandwidth is what the work
    // used of each (decode is bound by bandwidth, training by compute): a candidate has both.
    let need_tflops = dense_16bit_tflops(current).map(|t| t * busy * (1.0 + query.headroom));
    let need_bandwidth = current.memory_bandwidth.map(|b| b.0 * busy * (1.0 + query.headroom));
    let enough_bandwidth = |a: &Accelerator| match (need_bandwidth, a.memory_bandwidth) {
        (Some(need), Some(has)) => has.0 >= need,
        (Some(_), None) => false,
        (None, _) => true,
    };
    if let (Some(rate), Some(need_tflops)) = (rate, need_tflops) {
        let cheaper = catalog
            .accelerators()
            .iter()
            // The same vendor: the workload's software (CUDA, ROCm, Neuron) runs there unchanged.
            .filter(|a| a.id != current.id && a.vendor == current.vendor && a.memory.0 as f64 >= need_memory)
            .filter(|a| dense_16bit_tflops(a).is_some_and(|t| t >= need_tflops) && enough_bandwidth(a))
            .filter_map(|a| cheapest_offer(catalog, a.id.as_str(), providers).map(|r| (a, r)))
            .filter(|(_, (r, _))| *r < rate)
            .min_by(|x, y| x.1.0.total_cmp(&y.1.0));
        if let Some((smaller, (smaller_rate, seller))) = cheaper {
            findings.push(Finding {
                kind: "smaller-gpu",
                subject: subject.clone(),
                what: format!(
                    "peak {:.1} GiB and {:.0} % busy (of compute and memory bandwidth) fit a {} ({seller}, ${smaller_rate:.2} against ${rate:.2} per GPU-hour) with the headroom",
                    gib(peak),
                    busy * 100.0,
                    smaller.id
                ),
                savings_usd_per_month: Some((rate - smaller_rate) * HOURS_PER_MONTH),
                covers: covers.clone(),
            });
        }
    }
    let mig = MIG_CAPABLE.contains(&current.id.as_str());
    if mig && s.utilisation_p95.is_some_and(|u| u < CONSOLIDATE_BELOW) {
        let slices = MIG_SLICES
            .iter()
            .copied()
            .find(|k| need_memory <= current.memory.0 as f64 / f64::from(*k) && busy * f64::from(*k) <= 1.0);
        if let Some(k) = slices {
            findings.push(Finding {
                kind: "mig",
                subject: subject.clone(),
                what: format!(
                    "peak {:.1} GiB and {:.0} % busy fit 1/{k} of the GPU: a MIG slice (or time-slicing) shares it {k} ways",
                    gib(peak),
                    busy * 100.0
                ),
                savings_usd_per_month: monthly(1.0 - 1.0 / f64::from(k)),
                covers: covers.clone(),
            });
        }
    }
    if s.utilisation_p50.is_some_and(|u| u > BUSY_UTILISATION)
        && s.tensor_active_mean.is_some_and(|t| t < LOW_TENSOR_ACTIVITY)
    {
        findings.push(Finding {
            kind: "low-tensor-activity",
            subject,
            what: format!(
                "busy (p50 {:.0} %) but tensor cores active {:.0} % of cycles: check that the matmuls run in bf16/fp16 (autocast) and that input is not the bottleneck",
                s.utilisation_p50.unwrap_or(0.0) * 100.0,
                s.tensor_active_mean.unwrap_or(0.0) * 100.0
            ),
            savings_usd_per_month: None,
            covers,
        });
    }
    findings
}

fn job_findings(job: &JobSummary, gpus: &[String], rate: Option<f64>) -> Vec<Finding> {
    let Some(p95) = job.utilisation_p95 else {
        return Vec::new();
    };
    if job.gpus < 2 || p95 >= CONSOLIDATE_BELOW {
        return Vec::new();
    }
    let needed = ((job.gpus as f64 * p95 / TARGET_UTILISATION).ceil() as usize).max(1);
    if needed >= job.gpus {
        return Vec::new();
    }
    vec![Finding {
        kind: "fewer-gpus",
        subject: job.job.clone(),
        what: format!(
            "{} GPUs at p95 {:.0} % would run on {needed} at {:.0} %",
            job.gpus,
            p95 * 100.0,
            TARGET_UTILISATION * 100.0
        ),
        savings_usd_per_month: rate.map(|r| r * HOURS_PER_MONTH * (job.gpus - needed) as f64),
        covers: gpus.to_vec(),
    }]
}

/// GPUs busy even at the quietest hours: reserve them, rent the rest on demand or spot.
fn base_load(
    catalog: &Catalog,
    samples: &[Sample],
    gpus: &[GpuUse],
    providers: &[gpuplan_model::ProviderId],
    assumptions: &mut Vec<String>,
) -> Option<Finding> {
    let hours = gpuplan_telemetry::usage_per_hour(samples);
    // A day of hours at least, so that the quiet hours are in it.
    const MIN_HOURS: usize = 24;
    if hours.len() < MIN_HOURS {
        return None;
    }
    let mut busy: Vec<f64> = hours.iter().map(|(_, b)| *b).collect();
    busy.sort_by(f64::total_cmp);
    let base = busy[busy.len() / 20].floor();
    if base < 1.0 {
        return None;
    }
    let rate = gpus.iter().filter_map(|g| g.usd_per_gpu_hour).min_by(f64::total_cmp)?;
    let provider = providers
        .first()
        .cloned()
        .unwrap_or_else(|| gpuplan_model::ProviderId::new("aws"));
    let discount = catalog
        .reserved_discounts()
        .iter()
        .find(|d| d.provider == provider && d.term == CommitmentTerm::OneYear)?;
    assumptions.push(format!(
        "base load: the 5th percentile of busy GPUs per hour; reserved at {}'s {:.0} % one-year discount",
        provider.display_name(),
        discount.discount * 100.0
    ));
    Some(Finding {
        kind: "reserve-base",
        subject: "fleet".to_string(),
        what: format!(
            "{base:.0} GPU{} busy in 95 % of hours: reserve {} for a year, and rent the bursts on demand or spot",
            if base == 1.0 { " is" } else { "s are" },
            if base == 1.0 { "it" } else { "them" }
        ),
        savings_usd_per_month: Some(base * rate * discount.discount * HOURS_PER_MONTH),
        covers: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: &'static str, saving: f64, covers: &[&str]) -> Finding {
        Finding {
            kind,
            subject: String::new(),
            what: String::new(),
            savings_usd_per_month: Some(saving),
            covers: covers.iter().map(|g| g.to_string()).collect(),
        }
    }

    #[test]
    fn a_reservation_discounts_what_the_other_changes_leave() {
        // Two A10Gs at $1/h ($1,460 a month): replacing both with T4s saves $730; reserving
        // the base of two at a 40 % discount alone would save $584, but on what remains
        // ($730) it saves $292.
        let findings = [
            finding("smaller-gpu", 365.0, &["gpu0"]),
            finding("smaller-gpu", 365.0, &["gpu1"]),
            // Shrinking the same GPU again is an alternative, not a second saving.
            finding("mig", 100.0, &["gpu0"]),
            finding("reserve-base", 584.0, &[]),
        ];
        let total = total_savings(&findings, 1460.0);
        assert!((total - (730.0 + 292.0)).abs() < 1e-9, "{total}");
    }
}
