//! DCGM exporter scrapes (Prometheus text format 0.0.4, or OpenMetrics): `DCGM_FI_DEV_GPU_UTIL`,
//! `DCGM_FI_PROF_SM_ACTIVE`, `DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`, `DCGM_FI_DEV_FB_USED`,
//! `DCGM_FI_DEV_FB_FREE`, `DCGM_FI_DEV_POWER_USAGE`, each labelled with the GPU (`UUID`, `gpu`,
//! `Hostname`, `modelName`) and, on Kubernetes, the pod using it (`namespace`, `pod`). The
//! metrics of one GPU at one moment become one sample.

use crate::sample::{GpuKey, MIB, Sample, TelemetryError};
use std::collections::BTreeMap;

/// The samples of a scrape. Lines without a timestamp are taken at `scraped_at` (seconds).
pub fn parse_dcgm(text: &str, scraped_at: i64) -> Result<Vec<Sample>, TelemetryError> {
    let mut samples: BTreeMap<(GpuKey, i64), Sample> = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line_number = index as u64 + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || !line.starts_with("DCGM_FI_") {
            continue;
        }
        let bad = |message: String| TelemetryError::Line {
            line: line_number,
            message,
        };
        let (name, labels, rest) = split_metric(line).map_err(bad)?;
        let mut fields = rest.split_whitespace();
        let value: f64 = fields
            .next()
            .and_then(|v| v.parse().ok())
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| bad(format!("{name}: no number after the labels")))?;
        let at = match fields.next() {
            // Prometheus text timestamps are milliseconds; OpenMetrics' are seconds.
            Some(stamp) => timestamp_seconds(stamp).ok_or_else(|| bad(format!("timestamp `{stamp}`")))?,
            None => scraped_at,
        };
        let gpu = GpuKey(match (labels.get("UUID"), labels.get("Hostname"), labels.get("gpu")) {
            (Some(uuid), _, _) => uuid.clone(),
            (None, Some(host), Some(gpu)) => format!("{host}/gpu{gpu}"),
            (None, None, Some(gpu)) => format!("gpu{gpu}"),
            _ => return Err(bad(format!("{name}: no UUID or gpu label"))),
        });
        let sample = samples.entry((gpu.clone(), at)).or_insert_with(|| Sample {
            at,
            gpu,
            name: labels.get("modelName").cloned().unwrap_or_default(),
            job: job_of(&labels),
            utilisation: None,
            sm_active: None,
            tensor_active: None,
            memory_used_bytes: None,
            memory_total_bytes: None,
            power_watts: None,
        });
        record(sample, name, value);
    }
    if samples.is_empty() {
        return Err(TelemetryError::Empty);
    }
    Ok(samples.into_values().map(complete).collect())
}

fn record(sample: &mut Sample, metric: &str, value: f64) {
    let mib = |v: f64| (v.max(0.0) * MIB as f64) as u64;
    match metric {
        "DCGM_FI_DEV_GPU_UTIL" => sample.utilisation = Some((value / 100.0).clamp(0.0, 1.0)),
        "DCGM_FI_PROF_SM_ACTIVE" => sample.sm_active = Some(value.clamp(0.0, 1.0)),
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" => sample.tensor_active = Some(value.clamp(0.0, 1.0)),
        "DCGM_FI_DEV_FB_USED" => sample.memory_used_bytes = Some(mib(value)),
        // Total memory is what is used plus what is free and what the driver reserves; these
        // are added up as they come, and the used part once it is known (`complete`).
        "DCGM_FI_DEV_FB_FREE" | "DCGM_FI_DEV_FB_RESERVED" => {
            sample.memory_total_bytes = Some(sample.memory_total_bytes.unwrap_or(0).saturating_add(mib(value)));
        }
        "DCGM_FI_DEV_POWER_USAGE" => sample.power_watts = Some(value.max(0.0)),
        _ => {}
    }
}

/// The total memory once the used part is known: free and reserved were added up alone.
fn complete(mut sample: Sample) -> Sample {
    sample.memory_total_bytes = match (sample.memory_total_bytes, sample.memory_used_bytes) {
        (Some(rest), Some(used)) => Some(rest.saturating_add(used)),
        _ => None,
    };
    sample
}

/// `namespace/pod`, where the exporter maps the GPU to a pod.
fn job_of(labels: &BTreeMap<String, String>) -> Option<String> {
    match (labels.get("namespace"), labels.get("pod")) {
        (Some(namespace), Some(pod)) if !pod.is_empty() => Some(format!("{namespace}/{pod}")),
        (None, Some(pod)) if !pod.is_empty() => Some(pod.clone()),
        _ => None,
    }
}

/// Above this a timestamp is in milliseconds (Prometheus text), below in seconds (OpenMetrics).
const MILLISECOND_STAMPS_FROM: f64 = 1e11;

fn timestamp_seconds(text: &str) -> Option<i64> {
    let value: f64 = text.parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    Some(if value >= MILLISECOND_STAMPS_FROM {
        value / 1000.0
    } else {
        value
    } as i64)
}

/// `NAME{k="v",…} rest` → name, labels, rest.
fn split_metric(line: &str) -> Result<(&str, BTreeMap<String, String>, &str), String> {
    let Some(open) = line.find('{') else {
        let (name, rest) = line.split_once(char::is_whitespace).ok_or("a metric without a value")?;
        return Ok((name, BTreeMap::new(), rest));
    };
    let name = &line[..open];
    let mut labels = BTreeMap::new();
    let mut chars = line[open + 1..].char_indices();
    loop {
        let mut key = String::new();
        let close = loop {
            match chars.next() {
                Some((i, '}')) if key.trim().is_empty() => break Some(i),
                Some((_, '=')) => break None,
                Some((_, ',')) if key.trim().is_empty() => {}
                Some((_, c)) => key.push(c),
                None => return Err(format!("{name}: labels not closed")),
            }
        };
        if let Some(i) = close {
            return Ok((name, labels, &line[open + 1 + i + 1..]));
        }
        if chars.next().map(|(_, c)| c) != Some('"') {
            return Err(format!("{name}: label `{}` without a quoted value", key.trim()));
        }
        let mut value = String::new();
        loop {
            match chars.next() {
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c)) => value.push(c),
                    None => return Err(format!("{name}: labels not closed")),
                },
                Some((_, '"')) => break,
                Some((_, c)) => value.push(c),
                None => return Err(format!("{name}: labels not closed")),
            }
        }
        labels.insert(key.trim().to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRAPE: &str = r#"# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",namespace="ml",pod="train-0"} 93
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",namespace="ml",pod="train-0"} 0.412
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-aaaa",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",namespace="ml",pod="train-0"} 70000
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-aaaa",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",namespace="ml",pod="train-0"} 11559
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",namespace="ml",pod="train-0"} 612.5
"#;

    #[test]
    fn the_metrics_of_one_gpu_become_one_sample() {
        let samples = parse_dcgm(SCRAPE, 1_700_000_000).unwrap();
        assert_eq!(samples.len(), 1);
        let s = &samples[0];
        assert_eq!(s.job.as_deref(), Some("ml/train-0"));
        assert_eq!(s.utilisation, Some(0.93));
        assert_eq!(s.tensor_active, Some(0.412));
        assert_eq!(s.memory_used_bytes, Some(70000 * MIB));
        assert_eq!(s.memory_total_bytes, Some(81559 * MIB));
        assert_eq!(s.name, "NVIDIA H100 80GB HBM3");
        assert_eq!(s.at, 1_700_000_000);
    }

    #[test]
    fn timestamps_and_damage() {
        let timed = "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"h\"} 50 1700000060000\n";
        assert_eq!(parse_dcgm(timed, 0).unwrap()[0].at, 1_700_000_060);
        let broken = "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"h\" 50\n";
        assert!(parse_dcgm(broken, 0).unwrap_err().to_string().starts_with("line 1:"));
        let no_value = "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"}\n";
        assert!(parse_dcgm(no_value, 0).is_err());
        assert_eq!(parse_dcgm("# only comments\n", 0), Err(TelemetryError::Empty));
    }
}
