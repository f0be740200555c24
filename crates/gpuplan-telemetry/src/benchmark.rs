//! What `probe` measured on a machine's GPUs: dense matrix-multiply throughput per precision,
//! device-memory bandwidth and all-reduce bus bandwidth, with the method, so a report written
//! on a GPU machine can be read back and turned into a calibration anywhere.

use serde::{Deserialize, Serialize};

/// Floating-point operations of one `m × k` by `k × n` matrix multiply (a multiply and an add
/// per term).
pub fn gemm_flops(m: u64, n: u64, k: u64) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

/// Bus bandwidth of a ring all-reduce of `bytes` over `gpus` that took `seconds`: the
/// algorithm bandwidth (`bytes / seconds`) times `2 (n − 1) / n`, the share of the data each
/// GPU's link carries, so the figure compares with the link's speed whatever the GPU count
/// (nccl-tests, doc/PERFORMANCE.md).
pub fn all_reduce_bus_bandwidth(bytes: u64, gpus: u32, seconds: f64) -> f64 {
    let n = f64::from(gpus);
    bytes as f64 / seconds * 2.0 * (n - 1.0) / n
}

/// Everything measured on one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostBenchmarks {
    /// How the figures were taken, in one line (library, sizes, repetitions).
    pub method: String,
    pub devices: Vec<DeviceBenchmark>,
    /// Across all the machine's GPUs; absent with one GPU or without NCCL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_reduce: Option<AllReduceMeasurement>,
    /// What could not be measured, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceBenchmark {
    /// The GPU's index, as in the facts.
    pub index: u32,
    pub gemm: Vec<GemmMeasurement>,
    /// Device-to-device copy, bytes read plus bytes written per second, GB/s (10⁹).
    pub memory_copy_gb_per_s: Option<f64>,
}

/// The best of a square matrix multiply's timed repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GemmMeasurement {
    /// `fp32`, `tf32`, `fp16` or `bf16` (inputs; accumulation in fp32).
    pub precision: String,
    /// m = n = k.
    pub size: u32,
    /// Dense TFLOPS (10¹²).
    pub tflops: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllReduceMeasurement {
    pub gpus: u32,
    /// Bytes reduced per GPU.
    pub bytes: u64,
    /// nccl-tests' bus bandwidth, GB/s.
    pub bus_gb_per_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gemm_counts_a_multiply_and_an_add_per_term() {
        assert_eq!(gemm_flops(8192, 8192, 8192), 2.0 * 8192f64.powi(3));
    }

    #[test]
    fn bus_bandwidth_is_the_algorithm_bandwidth_scaled_to_one_link() {
        // 1 GB in 10 ms over 8 GPUs: algorithm bandwidth 100 GB/s, bus 175 GB/s.
        let bus = all_reduce_bus_bandwidth(1_000_000_000, 8, 0.01);
        assert!((bus - 175e9).abs() < 1.0, "{bus}");
        // Two GPUs: each link carries the data once.
        assert!((all_reduce_bus_bandwidth(1_000_000_000, 2, 0.01) - 100e9).abs() < 1.0);
    }
}
