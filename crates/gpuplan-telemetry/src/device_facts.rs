//! What a machine's NVIDIA driver says about its GPUs (through NVML): the facts `probe` reads
//! and writes, kept as data so a report written on a GPU machine can be read back anywhere.

use serde::{Deserialize, Serialize};

/// One machine: its driver and its GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFacts {
    /// The kernel driver's version (`550.54.15`).
    pub driver_version: String,
    /// The newest CUDA version the driver supports (`12.4`).
    pub cuda_driver_version: String,
    pub devices: Vec<DeviceFacts>,
    /// The nearest common ancestor of each pair of GPUs on the PCIe tree, as NVML's topology
    /// levels name it: `internal`, `single` (one switch), `multiple` (switches), `hostbridge`,
    /// `node` (one CPU) or `system` (across CPUs).
    #[serde(default)]
    pub links: Vec<DeviceLink>,
    /// What `probe` measured (absent with `--facts-only`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmarks: Option<crate::HostBenchmarks>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFacts {
    pub index: u32,
    /// The device name NVML reports (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    pub uuid: String,
    pub memory_total_bytes: u64,
    /// `9.0`.
    pub compute_capability: Option<String>,
    pub max_sm_clock_mhz: Option<u32>,
    pub max_memory_clock_mhz: Option<u32>,
    /// The power limit in force, watts.
    pub power_limit_watts: Option<f64>,
    pub mig_enabled: Option<bool>,
    pub ecc_enabled: Option<bool>,
    /// NVLink links up.
    pub nvlinks_active: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceLink {
    pub from: u32,
    pub to: u32,
    pub level: String,
}
