//! A machine's measured GPUs against what the same GPUs reach elsewhere: factors on their
//! datasheet figures, written by `probe` and applied by `estimate` and `plan`
//! (`--calibration FILE`). A factor of 1 is a GPU measuring like the published ones; 0.8 is a
//! power-capped or throttled one, and every estimate on it runs 20 % slower.

use crate::{Accelerator, AcceleratorId, BytesPerSecond, FlopsPerSecond, Precision};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Factors for one GPU type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuCalibration {
    /// The catalog's accelerator.
    pub gpu: AcceleratorId,
    /// Factor on the dense (and sparse) peak of each precision measured.
    pub compute: BTreeMap<Precision, f64>,
    /// Factor on the precisions not measured (fp8, fp4, int8): the 16-bit one's, since a power
    /// cap or a throttle slows all of a GPU's tensor-core math alike.
    pub compute_other: Option<f64>,
    /// Factor on the memory bandwidth.
    pub memory_bandwidth: Option<f64>,
    /// Factor on the NVLink bandwidth: the measured all-reduce bus bandwidth over the one the
    /// estimates assume.
    #[serde(default)]
    pub interconnect: Option<f64>,
    /// How each factor was found, one line each.
    pub evidence: Vec<String>,
    /// Where the published figures compared with come from.
    #[serde(default)]
    pub sources: Vec<String>,
}

impl CalibrationProfile {
    /// Every GPU's factors checked ([`GpuCalibration::check`]).
    pub fn check(&self) -> Result<(), String> {
        self.gpus.iter().try_for_each(GpuCalibration::check)
    }
}

/// A calibration file: what was measured where, and the factors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationProfile {
    /// The machine: driver and GPUs (`driver 550.54.15, 8× NVIDIA H100 80GB HBM3`).
    pub measured_on: String,
    /// How the machine was measured.
    pub method: String,
    pub gpus: Vec<GpuCalibration>,
}

/// Largest factor a measured GPU may have on its datasheet figures: measurements above it are
/// a broken benchmark, not a faster chip.
pub const MAX_CALIBRATION_FACTOR: f64 = 2.0;

impl GpuCalibration {
    /// Every factor positive, finite and at most [`MAX_CALIBRATION_FACTOR`]; the first one
    /// that is not, named.
    pub fn check(&self) -> Result<(), String> {
        let factors = self
            .compute
            .iter()
            .map(|(p, f)| (format!("{p} compute"), Some(*f)))
            .chain([
                ("other compute".to_string(), self.compute_other),
                ("memory bandwidth".to_string(), self.memory_bandwidth),
                ("interconnect".to_string(), self.interconnect),
            ]);
        for (what, factor) in factors {
            if let Some(f) = factor.filter(|f| !(*f > 0.0 && *f <= MAX_CALIBRATION_FACTOR)) {
                return Err(format!(
                    "{}: the {what} factor ×{f} is not a measurement (factors lie above 0 and at most ×{MAX_CALIBRATION_FACTOR})",
                    self.gpu
                ));
            }
        }
        Ok(())
    }

    /// The factor on `precision`'s peak.
    pub fn compute_factor(&self, precision: Precision) -> Option<f64> {
        self.compute.get(&precision).copied().or(self.compute_other)
    }

    /// `accelerator`'s figures as measured: every peak and the memory bandwidth scaled.
    pub fn apply(&self, accelerator: &mut Accelerator) {
        for table in [&mut accelerator.dense, &mut accelerator.sparse] {
            for (precision, rate) in table.0.iter_mut() {
                if let Some(factor) = self.compute.get(precision).copied().or(self.compute_other) {
                    *rate = FlopsPerSecond(rate.0 * factor);
                }
            }
        }
        if let (Some(factor), Some(bandwidth)) = (self.memory_bandwidth, accelerator.memory_bandwidth) {
            accelerator.memory_bandwidth = Some(BytesPerSecond(bandwidth.0 * factor));
        }
        if let (Some(factor), Some(link)) = (self.interconnect, accelerator.nvlink.as_mut()) {
            link.bandwidth = BytesPerSecond(link.bandwidth.0 * factor);
        }
    }

    /// One line: `H100-SXM5-80GB: compute ×0.78 (bf16), memory ×0.95`.
    pub fn summary(&self) -> String {
        let compute: Vec<String> = self
            .compute
            .iter()
            .map(|(precision, factor)| format!("{precision} ×{factor:.2}"))
            .collect();
        let mut parts = vec![format!("compute {}", compute.join(", "))];
        if let Some(other) = self.compute_other {
            parts.push(format!("other precisions ×{other:.2}"));
        }
        if let Some(memory) = self.memory_bandwidth {
            parts.push(format!("memory bandwidth ×{memory:.2}"));
        }
        if let Some(link) = self.interconnect {
            parts.push(format!("NVLink ×{link:.2}"));
        }
        format!("{}: {}", self.gpu, parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu() -> Accelerator {
        let json = r#"{"id":"X1","name":"X1","vendor":"v","architecture":"Hopper","compute_capability":"9.0",
            "form_factor":null,"release_year":null,"memory":80000000000,"reported_memory":null,
            "memory_type":null,"memory_bandwidth":3.35e12,"tdp":null,"pcie_generation":null,
            "nvlink":{"generation":4,"bandwidth":9e11},"interconnect":null,"aliases":[],"dense":{"bf16":9.89e14,"fp8":1.979e15},
            "sparse":{"bf16":1.979e15},"sources":[]}"#;
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn measured_factors_scale_the_peaks_and_the_bandwidth() {
        let calibration = GpuCalibration {
            gpu: AcceleratorId::new("X1"),
            compute: [(Precision::Bf16, 0.8)].into_iter().collect(),
            compute_other: Some(0.8),
            memory_bandwidth: Some(0.9),
            interconnect: Some(0.5),
            evidence: Vec::new(),
            sources: Vec::new(),
        };
        let mut a = gpu();
        calibration.apply(&mut a);
        let close = |x: f64, y: f64| (x / y - 1.0).abs() < 1e-12;
        assert!(close(a.dense.get(Precision::Bf16).unwrap().0, 0.8 * 9.89e14));
        assert!(close(a.dense.get(Precision::Fp8).unwrap().0, 0.8 * 1.979e15));
        assert!(close(a.sparse.get(Precision::Bf16).unwrap().0, 0.8 * 1.979e15));
        assert!(close(a.memory_bandwidth.unwrap().0, 0.9 * 3.35e12));
        assert!(close(a.nvlink.unwrap().bandwidth.0, 0.5 * 9e11));
        assert_eq!(
            calibration.summary(),
            "X1: compute bf16 ×0.80, other precisions ×0.80, memory bandwidth ×0.90, NVLink ×0.50"
        );
    }

    #[test]
    fn without_a_factor_for_the_other_precisions_they_stay_as_the_datasheet_says() {
        let calibration = GpuCalibration {
            gpu: AcceleratorId::new("X1"),
            compute: [(Precision::Bf16, 0.5)].into_iter().collect(),
            compute_other: None,
            memory_bandwidth: None,
            interconnect: None,
            evidence: Vec::new(),
            sources: Vec::new(),
        };
        let mut a = gpu();
        calibration.apply(&mut a);
        assert_eq!(a.dense.get(Precision::Fp8), gpu().dense.get(Precision::Fp8));
        assert_eq!(a.memory_bandwidth, gpu().memory_bandwidth);
        assert_eq!(a.nvlink, gpu().nvlink);
    }
}
