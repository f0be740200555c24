//! The host side of vision training: images must be read and decoded (and augmented) as fast
//! as the GPUs consume them. The bound is the smaller of the decode rate — per vCPU for CPU
//! pipelines, per GPU for DALI — and, when the dataset streams from object storage instead of
//! being staged to local disk, the storage read rate. Rates come from the catalog's
//! `operations/input_pipeline.toml`, each with its evidence.

use gpuplan_model::{DecodeRate, Offering, Operations};

/// The pipeline planned unless the user names another: PyTorch DataLoader workers decoding
/// with Pillow, the default of the torchvision reference scripts.
pub const DEFAULT_PIPELINE: &str = "cpu-pil";

/// Images per vCPU per second assumed for a CPU pipeline where the catalog has no table:
/// the lower end of Pillow decode + RandomResizedCrop on current server cores (the catalog's
/// `cpu-pil` entry cites 80–154 decode-only).
pub const FALLBACK_IMAGES_PER_VCPU: f64 = 100.0;

/// The name users give for DALI; the catalog's entries are per GPU class
/// (`dali-gpu` with a hardware JPEG engine, `dali-gpu-cuda` without).
pub const DALI: &str = "dali";

/// vCPUs of a node left to the input pipeline: one is kept for each GPU's training process.
pub fn pipeline_vcpus(offering: &Offering) -> f64 {
    (offering.vcpus - f64::from(offering.accelerator_count)).max(1.0)
}

/// How a vision job feeds its GPUs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InputSettings {
    /// Decode pipeline (`cpu-pil`, `cpu-pillow-simd`, `ffcv-jpeg`, `dali`); `None`: the default.
    pub pipeline: Option<String>,
    /// Read the dataset from object storage every epoch instead of staging it to local disk.
    pub stream_dataset: bool,
    /// Mean bytes per training image; `None`: the job does not decode images.
    pub image_bytes: Option<f64>,
}

/// The host's ceiling on images per second, and what sets it.
#[derive(Debug, Clone, PartialEq)]
pub struct InputBound {
    pub images_per_second: f64,
    /// In words, for the recommendation: "decode (cpu-pil, 100 img/s per vCPU × 88 vCPUs)".
    pub what: String,
}

/// The decode rate of `pipeline` on `offering`, as images per second per node.
fn decode_per_node(operations: &Operations, pipeline: &str, offering: &Offering) -> Result<(f64, String), String> {
    let Some(accelerator) = offering.accelerator.as_ref() else {
        return Err("a CPU-only instance trains no vision model".to_string());
    };
    let entry: Option<&DecodeRate> = if pipeline == DALI {
        operations
            .decode("dali-gpu", accelerator)
            .filter(|d| d.accelerators.is_some())
            .or_else(|| {
                operations
                    .decode("dali-gpu-cuda", accelerator)
                    .filter(|d| d.accelerators.is_some())
            })
    } else {
        operations.decode(pipeline, accelerator)
    };
    let gpus = f64::from(offering.accelerator_count);
    let vcpus = pipeline_vcpus(offering);
    match entry {
        Some(DecodeRate {
            images_per_second_per_gpu: Some(per_gpu),
            pipeline: name,
            ..
        }) => Ok((
            per_gpu * gpus,
            format!("{name}, {per_gpu:.0} img/s per GPU × {gpus:.0}"),
        )),
        Some(DecodeRate {
            images_per_second_per_vcpu: Some(per_vcpu),
            pipeline: name,
            ..
        }) => Ok((
            per_vcpu * vcpus,
            format!("{name}, {per_vcpu:.0} img/s per vCPU × {vcpus:.0} vCPUs"),
        )),
        _ if pipeline == DALI => Err(format!("DALI has no decode rate for {accelerator} (NVIDIA GPUs only)")),
        _ if pipeline == DEFAULT_PIPELINE => Ok((
            FALLBACK_IMAGES_PER_VCPU * vcpus,
            format!("{pipeline}, {FALLBACK_IMAGES_PER_VCPU:.0} img/s per vCPU (assumed) × {vcpus:.0} vCPUs"),
        )),
        _ => Err(format!("the catalog has no decode rate for pipeline `{pipeline}`")),
    }
}

/// The images per second `nodes` nodes of `offering` can feed, or why the pipeline cannot run
/// there. `storage_gbps` is the object-storage read rate per node.
pub fn input_bound(
    operations: &Operations,
    settings: &InputSettings,
    offering: &Offering,
    nodes: u32,
    storage_gbps: f64,
) -> Result<Option<InputBound>, String> {
    let Some(image_bytes) = settings.image_bytes else {
        return Ok(None);
    };
    let pipeline = settings.pipeline.as_deref().unwrap_or(DEFAULT_PIPELINE);
    let (per_node, how) = decode_per_node(operations, pipeline, offering)?;
    let nodes = f64::from(nodes);
    let decode = InputBound {
        images_per_second: per_node * nodes,
        what: format!("decode ({how}{})", if nodes > 1.0 { " per node" } else { "" }),
    };
    if !settings.stream_dataset {
        return Ok(Some(decode));
    }
    let read = storage_gbps * 1e9 / 8.0 / image_bytes * nodes;
    if read < decode.images_per_second {
        Ok(Some(InputBound {
            images_per_second: read,
            what: format!(
                "storage reads ({storage_gbps} Gbit/s per node of {:.0} kB images)",
                image_bytes / 1e3
            ),
        }))
    } else {
        Ok(Some(decode))
    }
}

/// Names the pipelines a catalog knows, for messages (`dali` for the per-GPU entries).
pub fn known_pipelines(operations: &Operations) -> Vec<String> {
    let mut names: Vec<String> = operations
        .decode
        .iter()
        .map(|d| {
            if d.pipeline.starts_with("dali") {
                DALI.to_string()
            } else {
                d.pipeline.clone()
            }
        })
        .collect();
    names.dedup();
    if !names.iter().any(|n| n == DEFAULT_PIPELINE) {
        names.insert(0, DEFAULT_PIPELINE.to_string());
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_model::{AcceleratorId, Source};

    fn source() -> Source {
        Source {
            covers: Vec::new(),
            title: "test".to_string(),
            url: "https://example.org".to_string(),
            as_of: "2026-11-23".parse().unwrap(),
            note: None,
        }
    }

    fn tables() -> Operations {
        Operations {
            decode: vec![
                DecodeRate {
                    pipeline: "cpu-pil".to_string(),
                    accelerators: None,
                    images_per_second_per_vcpu: Some(100.0),
                    images_per_second_per_gpu: None,
                    source: source(),
                },
                DecodeRate {
                    pipeline: "dali-gpu".to_string(),
                    accelerators: Some(vec![AcceleratorId::new("A100-SXM4-80GB")]),
                    images_per_second_per_vcpu: None,
                    images_per_second_per_gpu: Some(7000.0),
                    source: source(),
                },
            ],
            ..Operations::default()
        }
    }

    fn node(accelerator: &str, gpus: u32, vcpus: f64) -> Offering {
        crate::test_offering::offering(Some(accelerator), gpus, vcpus)
    }

    fn settings(pipeline: Option<&str>, stream: bool) -> InputSettings {
        InputSettings {
            pipeline: pipeline.map(str::to_string),
            stream_dataset: stream,
            image_bytes: Some(110e3),
        }
    }

    #[test]
    fn cpu_decode_scales_with_the_vcpus_left_to_the_pipeline() {
        let bound = input_bound(
            &tables(),
            &settings(None, false),
            &node("A100-SXM4-80GB", 8, 96.0),
            2,
            10.0,
        )
        .unwrap()
        .unwrap();
        assert_eq!(bound.images_per_second, 100.0 * 88.0 * 2.0);
        assert!(bound.what.contains("88 vCPUs"), "{}", bound.what);
    }

    #[test]
    fn dali_uses_the_per_gpu_rate_and_refuses_gpus_it_has_no_rate_for() {
        let a100 = input_bound(
            &tables(),
            &settings(Some("dali"), false),
            &node("A100-SXM4-80GB", 8, 96.0),
            1,
            10.0,
        )
        .unwrap()
        .unwrap();
        assert_eq!(a100.images_per_second, 56_000.0);
        let mi300 = input_bound(
            &tables(),
            &settings(Some("dali"), false),
            &node("MI300X", 8, 96.0),
            1,
            10.0,
        );
        assert!(mi300.unwrap_err().contains("MI300X"));
    }

    #[test]
    fn streaming_is_bounded_by_storage_reads() {
        // 1 Gbit/s of 110 kB images is ≈ 1,136 images/s, below 8,800 decoded.
        let bound = input_bound(
            &tables(),
            &settings(None, true),
            &node("A100-SXM4-80GB", 8, 96.0),
            1,
            1.0,
        )
        .unwrap()
        .unwrap();
        assert!((bound.images_per_second - 1e9 / 8.0 / 110e3).abs() < 1e-6);
        assert!(bound.what.starts_with("storage"));
    }

    #[test]
    fn an_unknown_pipeline_is_an_error_and_no_images_is_no_bound() {
        let offering = node("A100-SXM4-80GB", 8, 96.0);
        assert!(input_bound(&tables(), &settings(Some("magic"), false), &offering, 1, 1.0).is_err());
        let text = InputSettings::default();
        assert_eq!(input_bound(&tables(), &text, &offering, 1, 1.0), Ok(None));
    }
}
