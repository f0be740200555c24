//! `probe`: a machine's GPUs (as its driver reports them) against the catalog: which catalog
//! accelerator each is, and where the machine differs from the datasheet (memory, power limit,
//! compute capability, MIG, ECC).

use crate::Error;
use gpuplan_catalog::Catalog;
use gpuplan_telemetry::HostFacts;
use serde::Serialize;

/// Memory the driver reports may differ from the catalog's by this share before it is noted
/// (drivers reserve a few hundred MiB).
const MEMORY_TOLERANCE: f64 = 0.03;
/// A power limit this far below the datasheet TDP is noted (a capped GPU is slower).
const POWER_CAP_TOLERANCE: f64 = 0.95;

#[derive(Debug, Clone, Serialize)]
pub struct DeviceCheck {
    pub index: u32,
    pub name: String,
    /// The catalog's accelerator, where the name resolves.
    pub accelerator: Option<String>,
    /// Where the machine differs from the catalog, or what to know.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeAnswer {
    pub host: HostFacts,
    pub devices: Vec<DeviceCheck>,
    /// The machine's measurements against the published ones, where it was measured.
    pub calibration: Option<gpuplan_model::CalibrationProfile>,
    /// What this probe did not measure, and why.
    pub not_measured: Vec<String>,
}

pub fn check_probe(catalog: &Catalog, host: HostFacts) -> Result<ProbeAnswer, Error> {
    crate::with_fitted(catalog, || check_probe_in(catalog, host))
}

fn check_probe_in(catalog: &Catalog, host: HostFacts) -> Result<ProbeAnswer, Error> {
    if host.devices.is_empty() {
        return Err(Error::invalid(
            "the driver reports no GPU",
            Some("check `nvidia-smi`; in a container, run it with the GPUs (--gpus all)".to_string()),
        ));
    }
    let devices = host
        .devices
        .iter()
        .map(|d| {
            let resolved = catalog.accelerators().resolve_one(&d.name).ok().map(|r| r.accelerator);
            let mut notes = Vec::new();
            match resolved {
                None => notes.push(format!("`{}` is not in the catalog", d.name)),
                Some(a) => {
                    let expected = a.reported_memory.unwrap_or(a.memory).0 as f64;
                    let seen = d.memory_total_bytes as f64;
                    if (seen / expected - 1.0).abs() > MEMORY_TOLERANCE {
                        notes.push(format!(
                            "memory {:.1} GiB, the catalog says {:.1} GiB",
                            seen / f64::from(1u32 << 30),
                            expected / f64::from(1u32 << 30)
                        ));
                    }
                    if let (Some(limit), Some(tdp)) = (d.power_limit_watts, a.tdp) {
                        if limit < tdp.0 * POWER_CAP_TOLERANCE {
                            notes.push(format!(
                                "power capped at {limit:.0} W against a {:.0} W TDP: expect lower clocks than the estimates assume",
                                tdp.0
                            ));
                        }
                    }
                    if let (Some(seen), Some(listed)) = (&d.compute_capability, &a.compute_capability) {
                        if seen != listed {
                            notes.push(format!("compute capability {seen}, the catalog says {listed}"));
                        }
                    }
                }
            }
            if d.mig_enabled == Some(true) {
                notes.push("MIG is on: each slice is a smaller GPU".to_string());
            }
            if d.ecc_enabled == Some(false) {
                notes.push("ECC is off".to_string());
            }
            DeviceCheck {
                index: d.index,
                name: d.name.clone(),
                accelerator: resolved.map(|a| a.id.to_string()),
                notes,
            }
        })
        .collect();
    let (calibration, not_measured) = match &host.benchmarks {
        None => (
            None,
            vec!["GEMM throughput, memory bandwidth and all-reduce (--facts-only: no kernels were run)".to_string()],
        ),
        Some(benchmarks) => {
            let mut not_measured = benchmarks.skipped.clone();
            if benchmarks.all_reduce.is_none() && host.devices.len() < 2 {
                not_measured.push("all-reduce: one GPU".to_string());
            }
            (Some(crate::calibrate(catalog, &host)?), not_measured)
        }
    };
    Ok(ProbeAnswer {
        host,
        devices,
        calibration,
        not_measured,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_telemetry::DeviceFacts;

    fn h100(power: f64, memory: u64) -> DeviceFacts {
        DeviceFacts {
            index: 0,
            name: "NVIDIA H100 80GB HBM3".to_string(),
            uuid: "GPU-1".to_string(),
            memory_total_bytes: memory,
            compute_capability: Some("9.0".to_string()),
            max_sm_clock_mhz: Some(1980),
            max_memory_clock_mhz: Some(2619),
            power_limit_watts: Some(power),
            mig_enabled: Some(false),
            ecc_enabled: Some(true),
            nvlinks_active: Some(18),
        }
    }

    fn host(devices: Vec<DeviceFacts>) -> HostFacts {
        HostFacts {
            driver_version: "550.54.15".to_string(),
            cuda_driver_version: "12.4".to_string(),
            devices,
            links: Vec::new(),
            benchmarks: None,
        }
    }

    #[test]
    fn a_capped_gpu_is_noted_and_a_stock_one_is_not() {
        let catalog = Catalog::embedded().unwrap();
        let memory = 81_559 * 1024 * 1024;
        let stock = check_probe(&catalog, host(vec![h100(700.0, memory)])).unwrap();
        assert_eq!(stock.devices[0].accelerator.as_deref(), Some("H100-SXM5-80GB"));
        assert!(stock.devices[0].notes.is_empty(), "{:?}", stock.devices[0].notes);
        let capped = check_probe(&catalog, host(vec![h100(400.0, memory)])).unwrap();
        assert!(
            capped.devices[0].notes[0].starts_with("power capped at 400 W"),
            "{:?}",
            capped.devices[0].notes
        );
        assert!(check_probe(&catalog, host(Vec::new())).is_err());
    }
}
