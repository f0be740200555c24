//! Calibration: what `probe` measured on a machine's GPUs against what the same GPUs reach
//! elsewhere, as factors on their datasheet figures that `estimate` and `plan` apply.
//!
//! The reference for a GPU and precision is the median of the published measurements of that
//! GPU (`data/benchmarks/published.toml`); where there are none, the median fraction of the
//! datasheet that the published measurements of its architecture reach, times its datasheet
//! figure; where there are none either, that fraction over every GPU measured. The estimators'
//! fractions of peak were fitted on GPUs that measure like the published ones, so a GPU at its
//! reference is calibrated at ×1, and only a machine that measures slower (a power cap, a
//! throttle, a shared card) or faster than its peers moves the estimates.

use crate::Error;
use gpuplan_catalog::Catalog;
use gpuplan_catalog::published_benchmarks::{Measured, PublishedBenchmarks, PublishedMeasurement};
use gpuplan_model::{Accelerator, AcceleratorId, CalibrationProfile, GpuCalibration, Precision};
use gpuplan_telemetry::HostFacts;
use std::collections::BTreeMap;

const TERA: f64 = 1e12;
const GIGA: f64 = 1e9;

/// The catalog with `profile`'s factors applied.
pub fn calibrated(catalog: &Catalog, profile: &CalibrationProfile) -> Result<Catalog, Error> {
    catalog.clone().with_calibration(profile).map_err(|e| {
        Error::invalid(
            format!("{{calibration}}: {e}"),
            Some("give a file written by `gpuplan probe --calibration-out`".to_string()),
        )
    })
}

/// The line an answer carries when its catalog is calibrated (for one GPU, or all).
pub fn calibration_note(catalog: &Catalog, only: Option<&AcceleratorId>) -> Option<String> {
    let profile = catalog.calibration()?;
    let gpus: Vec<String> = profile
        .gpus
        .iter()
        .filter(|g| only.is_none_or(|id| &g.gpu == id))
        .map(GpuCalibration::summary)
        .collect();
    (!gpus.is_empty()).then(|| {
        format!(
            "calibrated on {}: {} (MFU is against the measured peaks)",
            profile.measured_on,
            gpus.join("; ")
        )
    })
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// A datasheet figure in the published rows' unit (TFLOPS, GB/s).
fn datasheet(gpu: &Accelerator, what: Measured, precision: Option<Precision>) -> Option<f64> {
    match what {
        Measured::Gemm => precision.and_then(|p| gpu.dense.get(p)).map(|f| f.0 / TERA),
        Measured::MemoryBandwidth => gpu.memory_bandwidth.map(|b| b.0 / GIGA),
    }
}

/// The precision whose tensor-core rate equals `precision`'s on every GPU that has both
/// (fp16 and bf16: NVIDIA's datasheets since Ampere, AMD's CDNA).
fn same_rate(precision: Option<Precision>) -> Option<Precision> {
    match precision {
        Some(Precision::Fp16) => Some(Precision::Bf16),
        Some(Precision::Bf16) => Some(Precision::Fp16),
        _ => None,
    }
}

/// What `gpu` reaches elsewhere, how that was found, and the sources.
fn reference(
    catalog: &Catalog,
    published: &PublishedBenchmarks,
    gpu: &Accelerator,
    what: Measured,
    precision: Option<Precision>,
) -> Option<(f64, String, Vec<String>)> {
    let twin = same_rate(precision)
        .filter(|twin| what == Measured::Gemm && precision.and_then(|p| gpu.dense.get(p)) == gpu.dense.get(*twin));
    for (rows_of, label) in [
        (precision, String::new()),
        (twin, format!(" at {}", twin.map_or("", |t| t.name()))),
    ] {
        if rows_of.is_none() && what == Measured::Gemm {
            continue;
        }
        let same: Vec<&PublishedMeasurement> = published.of(&gpu.id, what, rows_of).collect();
        if let Some(figure) = median(same.iter().map(|m| m.measured).collect()) {
            let sources = same.iter().map(|m| m.source.clone()).collect();
            let runs = if same.len() == 1 { "run" } else { "runs" };
            return Some((
                figure,
                format!("published {figure:.0}{label} (median of {} {runs})", same.len()),
                sources,
            ));
        }
    }
    let own = datasheet(gpu, what, precision)?;
    let fraction = |filter: &dyn Fn(&Accelerator) -> bool| {
        let ratios: Vec<f64> = published
            .measuring(what, precision)
            .filter_map(|m| {
                let peer = catalog.accelerators().get(m.gpu.as_str())?;
                filter(peer).then(|| datasheet(peer, what, precision).map(|d| m.measured / d))?
            })
            .collect();
        let count = ratios.len();
        median(ratios).map(|f| (f, count))
    };
    let (fraction, count, whose) = match fraction(&|peer| peer.architecture == gpu.architecture) {
        Some((f, count)) => (f, count, format!("{} GPUs", gpu.architecture)),
        None => {
            let (f, count) = fraction(&|_| true)?;
            (f, count, "all GPUs".to_string())
        }
    };
    Some((
        fraction * own,
        format!(
            "no published figure for {}; {whose} reach {fraction:.2} of the datasheet (median of {count}) × {own:.0}",
            gpu.id
        ),
        Vec::new(),
    ))
}

/// One GPU type's factors from its devices' measurements.
fn calibrate_gpu(
    catalog: &Catalog,
    published: &PublishedBenchmarks,
    gpu: &Accelerator,
    gemm: &BTreeMap<Precision, Vec<f64>>,
    copies: Vec<f64>,
    devices: usize,
) -> GpuCalibration {
    let mut evidence = Vec::new();
    let mut sources = std::collections::BTreeSet::new();
    let mut compute = BTreeMap::new();
    for (precision, measured) in gemm {
        let Some(measured) = median(measured.clone()) else {
            continue;
        };
        match reference(catalog, published, gpu, Measured::Gemm, Some(*precision)) {
            Some((expected, how, from)) => {
                sources.extend(from);
                let factor = measured / expected;
                compute.insert(*precision, factor);
                evidence.push(format!(
                    "{precision} GEMM {measured:.0} TFLOPS measured (median of {devices} GPUs); {how} → ×{factor:.2}"
                ));
            }
            None => evidence.push(format!(
                "{precision} GEMM {measured:.0} TFLOPS measured; no datasheet or published figure to compare: not applied"
            )),
        }
    }
    let compute_other = compute.get(&Precision::Bf16).or(compute.get(&Precision::Fp16)).copied();
    let memory_bandwidth = median(copies).and_then(|measured| {
        let Some((expected, how, from)) = reference(catalog, published, gpu, Measured::MemoryBandwidth, None) else {
            evidence.push(format!(
                "memory copy {measured:.0} GB/s measured; no figure to compare: not applied"
            ));
            return None;
        };
        sources.extend(from);
        let factor = measured / expected;
        evidence.push(format!("memory copy {measured:.0} GB/s measured; {how} → ×{factor:.2}"));
        Some(factor)
    });
    GpuCalibration {
        gpu: gpu.id.clone(),
        compute,
        compute_other,
        memory_bandwidth,
        interconnect: None,
        evidence,
        sources: sources.into_iter().collect(),
    }
}

/// The NVLink factor from the machine's all-reduce: its bus bandwidth over the intra-node
/// collective bandwidth the estimates assume for that many GPUs of `gpu` on NVLink (the
/// link's rate per direction times nccl-tests' share of it). PCIe machines are reported, not
/// applied: the estimates' PCIe figure is per PCIe generation, not per GPU.
fn interconnect_factor(host: &HostFacts, gpu: &Accelerator, evidence: &mut Vec<String>) -> Option<f64> {
    let measured = host.benchmarks.as_ref()?.all_reduce.as_ref()?;
    let on_nvlink = gpu.nvlink.is_some() && host.devices.iter().all(|d| d.nvlinks_active.is_some_and(|n| n > 0));
    if !on_nvlink {
        evidence.push(format!(
            "all-reduce {:.0} GB/s bus bandwidth on {} GPUs without NVLink: not applied",
            measured.bus_gb_per_s, measured.gpus
        ));
        return None;
    }
    let assumed = gpuplan_estimate::Cluster::new(
        gpu,
        measured.gpus,
        measured.gpus,
        Some(gpuplan_model::GpuInterconnect::Nvlink),
        None,
    )
    .intra_node
    .as_gb_per_s();
    let factor = measured.bus_gb_per_s / assumed;
    evidence.push(format!(
        "all-reduce {:.0} GB/s bus bandwidth on {} GPUs; the estimates assume {assumed:.0} on NVLink → ×{factor:.2}",
        measured.bus_gb_per_s, measured.gpus
    ));
    Some(factor)
}

/// The calibration `host`'s measurements give, one entry per GPU type the catalog knows.
pub fn calibrate(catalog: &Catalog, host: &HostFacts) -> Result<CalibrationProfile, Error> {
    let Some(benchmarks) = &host.benchmarks else {
        return Err(Error::invalid(
            "the probe report has no measurements",
            Some("run `gpuplan probe` without --facts-only on the GPU machine".to_string()),
        ));
    };
    let published = catalog.published_benchmarks();
    // GPU type → (precision → TFLOPS per device, copy GB/s per device, devices).
    type Measurements = (BTreeMap<Precision, Vec<f64>>, Vec<f64>, usize);
    let mut by_gpu: BTreeMap<AcceleratorId, Measurements> = BTreeMap::new();
    for measured in &benchmarks.devices {
        let Some(facts) = host.devices.iter().find(|d| d.index == measured.index) else {
            continue;
        };
        let Ok(resolved) = catalog.accelerators().resolve_one(&facts.name) else {
            continue;
        };
        let entry = by_gpu.entry(resolved.accelerator.id.clone()).or_default();
        for gemm in &measured.gemm {
            if !(gemm.tflops.is_finite() && gemm.tflops > 0.0) {
                return Err(Error::invalid(
                    format!(
                        "{}: a {} GEMM of {} TFLOPS is not a measurement",
                        facts.name, gemm.precision, gemm.tflops
                    ),
                    Some("measure again with `gpuplan probe`".to_string()),
                ));
            }
            if let Ok(precision) = gemm.precision.parse::<Precision>() {
                entry.0.entry(precision).or_default().push(gemm.tflops);
            }
        }
        if let Some(bad) = measured.memory_copy_gb_per_s.filter(|g| !(g.is_finite() && *g > 0.0)) {
            return Err(Error::invalid(
                format!("{}: a memory copy at {bad} GB/s is not a measurement", facts.name),
                Some("measure again with `gpuplan probe`".to_string()),
            ));
        }
        entry.1.extend(measured.memory_copy_gb_per_s);
        entry.2 += 1;
    }
    if by_gpu.is_empty() {
        return Err(Error::invalid(
            "no measured GPU is in the catalog",
            Some("`gpuplan gpus` lists the GPUs a calibration can apply to".to_string()),
        ));
    }
    let one_type = by_gpu.len() == 1;
    let gpus = by_gpu
        .into_iter()
        .filter_map(|(id, (gemm, copies, devices))| {
            let gpu = catalog.accelerators().get(id.as_str())?;
            let mut calibration = calibrate_gpu(catalog, published, gpu, &gemm, copies, devices);
            // The all-reduce spans every GPU of the machine: it speaks for one GPU type only.
            if one_type {
                calibration.interconnect = interconnect_factor(host, gpu, &mut calibration.evidence);
            }
            Some(calibration)
        })
        .collect();
    let names: BTreeMap<&str, usize> = host.devices.iter().fold(BTreeMap::new(), |mut counts, d| {
        *counts.entry(d.name.as_str()).or_default() += 1;
        counts
    });
    let machine: Vec<String> = names.iter().map(|(name, n)| format!("{n}× {name}")).collect();
    let profile = CalibrationProfile {
        measured_on: format!("driver {}, {}", host.driver_version, machine.join(", ")),
        method: benchmarks.method.clone(),
        gpus,
    };
    profile.check().map_err(|e| {
        Error::invalid(
            format!("the measurements give {e}"),
            Some("a benchmark that ran far beyond or below the datasheet is broken: measure again".to_string()),
        )
    })?;
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(Vec::new()), None);
    }

    #[test]
    fn a_gpu_with_published_figures_is_compared_with_them() {
        let catalog = Catalog::embedded().unwrap();
        let published = catalog.published_benchmarks();
        let h100 = catalog.accelerators().get("H100-SXM5-80GB").unwrap();
        let (figure, how, sources) =
            reference(&catalog, published, h100, Measured::Gemm, Some(Precision::Bf16)).unwrap();
        // Two published bf16 rows, 794.5 and 797.5 TFLOPS.
        assert!((figure - 796.0).abs() < 1.0, "{figure}");
        assert_eq!(how, "published 796 (median of 2 runs)");
        assert_eq!(sources.len(), 2);
        // None at fp16, which runs at the bf16 rate.
        let (figure, how, _) = reference(&catalog, published, h100, Measured::Gemm, Some(Precision::Fp16)).unwrap();
        assert!((figure - 796.0).abs() < 1.0, "{figure}");
        assert_eq!(how, "published 796 at bf16 (median of 2 runs)");
    }

    #[test]
    fn a_gpu_without_published_figures_takes_its_architectures_fraction_of_the_datasheet() {
        let catalog = Catalog::embedded().unwrap();
        let published = catalog.published_benchmarks();
        let h100_nvl = catalog.accelerators().get("H100-NVL-94GB").unwrap();
        let (figure, how, _) = reference(&catalog, published, h100_nvl, Measured::Gemm, Some(Precision::Bf16)).unwrap();
        let peak = h100_nvl.dense.get(Precision::Bf16).unwrap().0 / TERA;
        assert!(figure > 0.6 * peak && figure < 0.9 * peak, "{figure} of {peak}");
        assert!(how.contains("Hopper GPUs reach"), "{how}");
    }

    fn host(name: &str, nvlinks: u32, bf16_tflops: f64, bus_gb_per_s: f64) -> HostFacts {
        let device = |index| gpuplan_telemetry::DeviceFacts {
            index,
            name: name.to_string(),
            uuid: format!("GPU-{index}"),
            memory_total_bytes: 80 << 30,
            compute_capability: Some("9.0".to_string()),
            max_sm_clock_mhz: None,
            max_memory_clock_mhz: None,
            power_limit_watts: None,
            mig_enabled: None,
            ecc_enabled: None,
            nvlinks_active: Some(nvlinks),
        };
        let measured = |index| gpuplan_telemetry::DeviceBenchmark {
            index,
            gemm: vec![gpuplan_telemetry::GemmMeasurement {
                precision: "bf16".to_string(),
                size: 8192,
                tflops: bf16_tflops,
            }],
            memory_copy_gb_per_s: None,
        };
        HostFacts {
            driver_version: "550.54.15".to_string(),
            cuda_driver_version: "12.4".to_string(),
            devices: vec![device(0), device(1)],
            links: Vec::new(),
            benchmarks: Some(gpuplan_telemetry::HostBenchmarks {
                method: "test".to_string(),
                devices: vec![measured(0), measured(1)],
                all_reduce: Some(gpuplan_telemetry::AllReduceMeasurement {
                    gpus: 2,
                    bytes: 1 << 28,
                    bus_gb_per_s,
                }),
                skipped: Vec::new(),
            }),
        }
    }

    #[test]
    fn the_all_reduce_scales_nvlink_and_is_only_reported_over_pcie() {
        let catalog = Catalog::embedded().unwrap();
        let nvlink = calibrate(&catalog, &host("NVIDIA H100 80GB HBM3", 18, 796.0, 180.0)).unwrap();
        let h100 = &nvlink.gpus[0];
        // 796 TFLOPS is the published median: ×1.
        assert!((h100.compute[&Precision::Bf16] - 1.0).abs() < 0.01, "{h100:?}");
        // The estimates assume 450 GB/s a direction × 0.8 = 360 on NVLink.
        assert!((h100.interconnect.unwrap() - 0.5).abs() < 0.01, "{h100:?}");
        let pcie = calibrate(&catalog, &host("NVIDIA H100 PCIe", 0, 500.0, 20.0)).unwrap();
        let h100_pcie = &pcie.gpus[0];
        assert_eq!(h100_pcie.gpu.as_str(), "H100-PCIE-80GB");
        assert_eq!(h100_pcie.interconnect, None);
        assert!(
            h100_pcie
                .evidence
                .iter()
                .any(|e| e.contains("without NVLink: not applied")),
            "{h100_pcie:?}"
        );
        // A report without measurements gives no calibration.
        let mut facts_only = host("NVIDIA H100 80GB HBM3", 18, 796.0, 180.0);
        facts_only.benchmarks = None;
        assert!(calibrate(&catalog, &facts_only).is_err());
    }
}
