//! The GPUs of this machine as its NVIDIA driver reports them (NVML, loaded at run time:
//! without a driver the probe fails cleanly instead of the binary failing to start), and what
//! they measure (CUDA, cuBLAS and NCCL, loaded at run time likewise).

#[allow(unsafe_code)]
pub mod benchmarks;
pub mod poc;

use gpuplan_telemetry::{DeviceFacts, DeviceLink, HostFacts};
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::error::NvmlError;

/// Why the GPUs could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("no NVIDIA driver found ({0})")]
    NoDriver(String),
    #[error("the NVIDIA driver did not answer: {0}")]
    Driver(#[from] NvmlError),
    #[error("{0} not found")]
    NoCudaLibrary(&'static str),
    #[error("CUDA: {0}")]
    Cuda(String),
    #[error("`{0}` not found")]
    NoPython(String),
    #[error("proof of concept: {0}")]
    Poc(String),
}

/// Measures this machine's GPUs ([`benchmarks::run`]); a panic inside the CUDA libraries'
/// loader (a symbol missing from an old library) comes back as an error.
pub fn measure(
    devices: u32,
    settings: &benchmarks::BenchSettings,
) -> Result<gpuplan_telemetry::HostBenchmarks, ProbeError> {
    std::panic::catch_unwind(|| benchmarks::run(devices, settings)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_else(|| "the CUDA libraries failed to load".to_string());
        Err(ProbeError::Cuda(message))
    })
}

/// NVLink links a GPU may have (NVML's `NVML_NVLINK_MAX_LINKS`).
const MAX_NVLINKS: u32 = 18;
const MILLIWATTS_PER_WATT: f64 = 1000.0;

/// The driver's facts about every GPU of this machine.
pub fn read_host() -> Result<HostFacts, ProbeError> {
    let nvml = Nvml::init().map_err(|e| match e {
        NvmlError::LibloadingError(_) | NvmlError::DriverNotLoaded | NvmlError::LibraryNotFound => {
            ProbeError::NoDriver(e.to_string())
        }
        other => ProbeError::Driver(other),
    })?;
    let cuda = nvml.sys_cuda_driver_version()?;
    let count = nvml.device_count()?;
    let mut devices = Vec::new();
    for index in 0..count {
        let device = nvml.device_by_index(index)?;
        let capability = device.cuda_compute_capability().ok();
        devices.push(DeviceFacts {
            index,
            name: device.name()?,
            uuid: device.uuid()?,
            memory_total_bytes: device.memory_info()?.total,
            compute_capability: capability.map(|c| format!("{}.{}", c.major, c.minor)),
            max_sm_clock_mhz: device.max_clock_info(Clock::SM).ok(),
            max_memory_clock_mhz: device.max_clock_info(Clock::Memory).ok(),
            power_limit_watts: device
                .enforced_power_limit()
                .ok()
                .map(|mw| f64::from(mw) / MILLIWATTS_PER_WATT),
            mig_enabled: device.mig_mode().ok().map(|m| m.current == 1),
            ecc_enabled: device.is_ecc_enabled().ok().map(|e| e.currently_enabled),
            nvlinks_active: Some(
                (0..MAX_NVLINKS)
                    .filter(|link| device.link_wrapper_for(*link).is_active().unwrap_or(false))
                    .count() as u32,
            ),
        });
    }
    let mut links = Vec::new();
    for from in 0..count {
        for to in from + 1..count {
            let (a, b) = (nvml.device_by_index(from)?, nvml.device_by_index(to)?);
            if let Ok(level) = a.topology_common_ancestor(b) {
                links.push(DeviceLink {
                    from,
                    to,
                    level: format!("{level:?}").to_lowercase(),
                });
            }
        }
    }
    Ok(HostFacts {
        driver_version: nvml.sys_driver_version()?,
        cuda_driver_version: format!("{}.{}", cuda / 1000, (cuda % 1000) / 10),
        devices,
        links,
        benchmarks: None,
    })
}
