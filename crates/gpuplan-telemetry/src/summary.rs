//! Samples summarised per GPU and per job: utilisation percentiles, memory peak, tensor
//! activity, power, idle time; and the busy GPU-hours of each hour, the history `forecast`
//! reads.

use crate::sample::{GpuKey, Sample};
use std::collections::{BTreeMap, BTreeSet};

/// Below this share of time running kernels a GPU counts as idle (nvidia-smi and DCGM report
/// a few percent on an idle GPU from monitoring alone).
pub const IDLE_UTILISATION: f64 = 0.05;

/// Seconds in an hour.
const HOUR: i64 = 3600;

#[derive(Debug, Clone, PartialEq)]
pub struct GpuSummary {
    pub gpu: GpuKey,
    pub name: String,
    pub jobs: Vec<String>,
    pub samples: usize,
    /// Hours observed: samples times the usual interval between them.
    pub hours: f64,
    pub utilisation_p50: Option<f64>,
    pub utilisation_p95: Option<f64>,
    pub tensor_active_mean: Option<f64>,
    pub memory_peak_bytes: Option<u64>,
    pub memory_total_bytes: Option<u64>,
    pub power_mean_watts: Option<f64>,
    /// Hours with utilisation below [`IDLE_UTILISATION`].
    pub idle_hours: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct JobSummary {
    pub job: String,
    pub gpus: usize,
    pub name: String,
    pub gpu_hours: f64,
    pub utilisation_p50: Option<f64>,
    pub utilisation_p95: Option<f64>,
    pub tensor_active_mean: Option<f64>,
    /// The largest memory any of its GPUs used.
    pub memory_peak_bytes: Option<u64>,
    pub memory_total_bytes: Option<u64>,
}

/// The `p`-th percentile (0–1) by nearest rank; `None` for no values.
fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The usual gap between one GPU's samples, seconds (the median; 0 for a single sample).
fn interval(times: &[i64]) -> f64 {
    let mut gaps: Vec<f64> = times
        .windows(2)
        .map(|w| (w[1] - w[0]) as f64)
        .filter(|g| *g > 0.0)
        .collect();
    gaps.sort_by(f64::total_cmp);
    gaps.get(gaps.len() / 2).copied().unwrap_or(0.0)
}

fn of<T>(samples: &[&Sample], field: impl Fn(&Sample) -> Option<T>) -> Vec<T> {
    samples.iter().filter_map(|s| field(s)).collect()
}

fn by_gpu(samples: &[Sample]) -> BTreeMap<&GpuKey, Vec<&Sample>> {
    let mut groups: BTreeMap<&GpuKey, Vec<&Sample>> = BTreeMap::new();
    for sample in samples {
        groups.entry(&sample.gpu).or_default().push(sample);
    }
    for group in groups.values_mut() {
        group.sort_by_key(|s| s.at);
    }
    groups
}

/// One summary per GPU, in GPU order.
pub fn summarise(samples: &[Sample]) -> Vec<GpuSummary> {
    by_gpu(samples)
        .into_iter()
        .map(|(gpu, group)| {
            let times: Vec<i64> = group.iter().map(|s| s.at).collect();
            let step_hours = interval(&times) / HOUR as f64;
            let utilisation = of(&group, |s| s.utilisation);
            let idle = utilisation.iter().filter(|u| **u < IDLE_UTILISATION).count();
            let jobs: BTreeSet<String> = group.iter().filter_map(|s| s.job.clone()).collect();
            GpuSummary {
                gpu: gpu.clone(),
                name: group.last().map(|s| s.name.clone()).unwrap_or_default(),
                jobs: jobs.into_iter().collect(),
                samples: group.len(),
                hours: group.len() as f64 * step_hours,
                utilisation_p50: percentile(&utilisation, 0.5),
                utilisation_p95: percentile(&utilisation, 0.95),
                tensor_active_mean: mean(&of(&group, |s| s.tensor_active)),
                memory_peak_bytes: of(&group, |s| s.memory_used_bytes).into_iter().max(),
                memory_total_bytes: of(&group, |s| s.memory_total_bytes).into_iter().max(),
                power_mean_watts: mean(&of(&group, |s| s.power_watts)),
                idle_hours: idle as f64 * step_hours,
            }
        })
        .collect()
}

/// One summary per job the samples name (DCGM on Kubernetes labels each GPU with its pod).
pub fn summarise_jobs(samples: &[Sample], gpus: &[GpuSummary]) -> Vec<JobSummary> {
    let hours_per_sample: BTreeMap<&GpuKey, f64> = gpus
        .iter()
        .map(|g| {
            (
                &g.gpu,
                if g.samples == 0 {
                    0.0
                } else {
                    g.hours / g.samples as f64
                },
            )
        })
        .collect();
    let mut jobs: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
    for sample in samples {
        if let Some(job) = &sample.job {
            jobs.entry(job).or_default().push(sample);
        }
    }
    jobs.into_iter()
        .map(|(job, group)| {
            let utilisation = of(&group, |s| s.utilisation);
            let distinct: BTreeSet<&GpuKey> = group.iter().map(|s| &s.gpu).collect();
            JobSummary {
                job: job.to_string(),
                gpus: distinct.len(),
                name: group.last().map(|s| s.name.clone()).unwrap_or_default(),
                gpu_hours: group
                    .iter()
                    .map(|s| hours_per_sample.get(&s.gpu).copied().unwrap_or(0.0))
                    .sum(),
                utilisation_p50: percentile(&utilisation, 0.5),
                utilisation_p95: percentile(&utilisation, 0.95),
                tensor_active_mean: mean(&of(&group, |s| s.tensor_active)),
                memory_peak_bytes: of(&group, |s| s.memory_used_bytes).into_iter().max(),
                memory_total_bytes: of(&group, |s| s.memory_total_bytes).into_iter().max(),
            }
        })
        .collect()
}

/// Busy GPU-hours in each hour (UTC, seconds since the epoch at the hour's start): for every
/// GPU, the share of its samples in that hour above [`IDLE_UTILISATION`]. What the fleet had
/// to have running, hour by hour: the history `forecast` reads.
pub fn usage_per_hour(samples: &[Sample]) -> Vec<(i64, f64)> {
    let mut hours: BTreeMap<i64, BTreeMap<&GpuKey, (usize, usize)>> = BTreeMap::new();
    for sample in samples {
        let Some(utilisation) = sample.utilisation else {
            continue;
        };
        let hour = sample.at.div_euclid(HOUR) * HOUR;
        let counts = hours.entry(hour).or_default().entry(&sample.gpu).or_default();
        counts.1 += 1;
        if utilisation >= IDLE_UTILISATION {
            counts.0 += 1;
        }
    }
    hours
        .into_iter()
        .map(|(hour, gpus)| {
            let busy = gpus.values().map(|(busy, all)| *busy as f64 / *all as f64).sum();
            (hour, busy)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: i64, gpu: &str, utilisation: f64, memory_gib: u64) -> Sample {
        Sample {
            at,
            gpu: GpuKey(gpu.to_string()),
            name: "NVIDIA A100-SXM4-80GB".to_string(),
            job: Some("ml/train".to_string()),
            utilisation: Some(utilisation),
            sm_active: None,
            tensor_active: None,
            memory_used_bytes: Some(memory_gib << 30),
            memory_total_bytes: Some(80 << 30),
            power_watts: None,
        }
    }

    #[test]
    fn a_gpu_busy_half_the_time_is_idle_the_other_half() {
        // Two hours at 60 s intervals: busy in the first, idle in the second.
        let samples: Vec<Sample> = (0..120)
            .map(|i| sample(i * 60, "a", if i < 60 { 0.9 } else { 0.0 }, if i < 60 { 30 } else { 1 }))
            .collect();
        let summary = &summarise(&samples)[0];
        assert!((summary.hours - 2.0).abs() < 1e-9);
        assert!((summary.idle_hours - 1.0).abs() < 1e-9);
        assert_eq!(summary.utilisation_p95, Some(0.9));
        assert_eq!(summary.memory_peak_bytes, Some(30 << 30));
        assert_eq!(usage_per_hour(&samples), vec![(0, 1.0), (3600, 0.0)]);
        let jobs = summarise_jobs(&samples, &summarise(&samples));
        assert_eq!(jobs[0].gpus, 1);
        assert!((jobs[0].gpu_hours - 2.0).abs() < 1e-9);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 0.95), Some(95.0));
        assert_eq!(percentile(&values, 0.5), Some(50.0));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
