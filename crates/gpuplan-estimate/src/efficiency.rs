//! Every heuristic constant of the estimators, by name. The values, the evidence behind them
//! and the validation cases they were set from are data (the catalog's `data/calibration.toml`, read
//! through [`crate::calibration`]); each one an estimate used is listed among its assumptions.

use crate::calibration::calibration;
pub use gpuplan_model::fitted::{EngineProfile, IterationCosts, ReleaseProfile, ServingProfile, WeightKernelProfile};
use gpuplan_model::{Accelerator, Engine, Precision};

/// Fraction of an accelerator's dense peak that large, well-tuned training reaches on the
/// FLOPs it actually executes (hardware FLOPs utilisation, recomputation included), from the
/// calibration data's per-architecture table, with the evidence.
pub fn training_peak_fraction(accelerator: &Accelerator, precision: Precision) -> (f64, &'static str) {
    let table = &calibration().training_peak_fraction;
    let fraction = if matches!(precision, Precision::Fp32 | Precision::Fp64) {
        table.fp32
    } else {
        let bits = precision.bits();
        let architecture = accelerator.architecture.to_lowercase();
        table
            .architectures
            .iter()
            .find(|entry| entry.covers(accelerator.id.as_str(), &architecture))
            .map_or(table.other, |entry| match bits {
                // Without a 4-bit figure the 4-bit peak is taken at the 8-bit speed: no gain.
                ..=4 => entry.four_bit.unwrap_or(entry.eight_bit / 2.0),
                5..=8 => entry.eight_bit,
                _ => entry.sixteen_bit,
            })
    };
    (fraction, table.evidence.as_str())
}

/// How hard an architecture's tensor cores are to keep busy in serving, relative to Hopper, on
/// which the serving engines' GEMM fractions were set: the architecture's own serving factor
/// where serving measurements set one (CDNA), else the ratio of the training table's 16-bit
/// fractions (A100 ≈ 1.3×), the only other cross-architecture evidence in the data.
pub fn serving_architecture_factor(accelerator: &Accelerator) -> f64 {
    measured_serving_factor(accelerator).unwrap_or_else(|| training_ratio_factor(accelerator))
}

/// The ratio of the architecture's 16-bit training fraction to Hopper's.
fn training_ratio_factor(accelerator: &Accelerator) -> f64 {
    let table = &calibration().training_peak_fraction;
    let hopper = table
        .architectures
        .iter()
        .find(|entry| entry.matches.iter().any(|m| m == "hopper"))
        .map_or(table.other, |entry| entry.sixteen_bit);
    training_peak_fraction(accelerator, Precision::Bf16).0 / hopper
}

/// The architecture's own serving factor, where serving measurements set one.
fn measured_serving_factor(accelerator: &Accelerator) -> Option<f64> {
    peak_fraction_entry(accelerator).and_then(|entry| entry.serving)
}

/// The first entry of the training-fraction table that covers `accelerator`.
fn peak_fraction_entry(accelerator: &Accelerator) -> Option<&'static gpuplan_model::fitted::ArchitectureFraction> {
    let architecture = accelerator.architecture.to_lowercase();
    calibration()
        .training_peak_fraction
        .architectures
        .iter()
        .find(|entry| entry.covers(accelerator.id.as_str(), &architecture))
}

/// The part's own factor on the serving engines' native 4-bit GEMMs, where serving
/// measurements set one (1 elsewhere).
pub fn serving_four_bit_part_factor(accelerator: &Accelerator) -> f64 {
    peak_fraction_entry(accelerator)
        .and_then(|entry| entry.serving_four_bit)
        .unwrap_or(1.0)
}

/// The serving assumptions for `accelerator` in words: the factor above and the rounded roofline.
pub fn serving_gemm_note(accelerator: &Accelerator) -> String {
    let knee = crate::calibration::accessors::serving_roofline_knee();
    let (factor, origin) = match measured_serving_factor(accelerator) {
        Some(factor) => (factor, "set from serving runs on it"),
        None => (
            training_ratio_factor(accelerator),
            "the ratio of the training fractions",
        ),
    };
    let four_bit = match peak_fraction_entry(accelerator).and_then(|entry| entry.serving_four_bit) {
        Some(part) => format!(
            "; native 4-bit GEMMs at {part:.2}× the 4-bit factor on the {} (set from serving runs on it)",
            accelerator.id
        ),
        None => String::new(),
    };
    format!(
        "serving iterations: the engine's GEMM fraction (set on Hopper) × {:.2} on {} ({}){four_bit}; a step's \
         weight stream and GEMMs combine as a roofline rounded at its ridge, (wᵖ + cᵖ)^(1/p) with p = {knee}, \
         ×{:.2} where the two take as long",
        factor,
        accelerator.architecture,
        origin,
        2f64.powf(1.0 / knee),
    )
}

/// Effective PCIe bandwidth per GPU for collectives, GB/s per direction (Gen4 x16 is 32 GB/s
/// on paper; nccl-tests on PCIe-only servers reach ≈ 20 GB/s; Gen5 ≈ 40).
pub fn pcie_bandwidth_gb_per_s(generation: Option<u8>) -> f64 {
    match generation {
        Some(5) | Some(6) => 40.0,
        Some(4) => 20.0,
        _ => 10.0,
    }
}

/// Network bandwidth assumed between nodes of `gpus_per_node` GPUs when no offering states
/// one, Gbit/s per node: the reference designs of each GPU generation's training servers, one
/// NIC per GPU (DGX H100/H200/B200: 400 Gb/s ConnectX-7 a GPU, 3,200 a node of eight; a GB200
/// NVL72 compute tray: four of them for its four GPUs; DGX A100: 200 Gb/s ConnectX-6 a GPU),
/// and plain 100 Gb/s Ethernet a node for everything else.
pub fn default_node_network_gbps(accelerator: &gpuplan_model::Accelerator, gpus_per_node: u32) -> f64 {
    let architecture = accelerator.architecture.to_lowercase();
    let sxm = accelerator.on_nvlink_board();
    let gpus = f64::from(gpus_per_node.max(1));
    if sxm && (architecture.contains("hopper") || architecture.contains("blackwell")) {
        400.0 * gpus
    } else if sxm && architecture.contains("ampere") {
        200.0 * gpus
    } else {
        100.0
    }
}

/// The profile of `engine`'s release and runtime as `settings` give them, where it differs
/// from the current release's default.
pub fn release_profile(engine: Engine, settings: &gpuplan_model::EngineSettings) -> Option<&'static ReleaseProfile> {
    calibration()
        .engine_releases
        .iter()
        .find(|p| p.covers(engine, settings))
}

/// The profile of `kernel`.
pub fn weight_kernel_profile(kernel: gpuplan_model::WeightKernel) -> &'static WeightKernelProfile {
    calibration().weight_kernel(kernel)
}

/// The measured behaviour of `engine`, from the calibration data.
pub fn engine_profile(engine: Engine) -> &'static EngineProfile {
    calibration().engine(engine)
}

/// Fraction of the dense 16-bit peak a diffusion UNet pass reaches in a diffusers pipeline
/// (PyTorch eager, fused attention) when compute-bound, per architecture, from the calibration
/// data.
pub fn diffusion_unet_peak_fraction(accelerator: &Accelerator) -> (f64, &'static str) {
    let table = &calibration().diffusion_unet_peak_fraction;
    let architecture = accelerator.architecture.to_lowercase();
    table
        .architectures
        .iter()
        .find(|entry| entry.matches.iter().any(|m| architecture.contains(m.as_str())))
        .map_or((table.other, table.other_evidence.as_str()), |entry| {
            (entry.value, entry.evidence.as_str())
        })
}

/// Host time per GPU operator an engine pays in a diffusion pipeline, which bounds small UNet
/// passes from below; engines without their own entry pay PyTorch eager's.
pub fn diffusion_seconds_per_operator(engine: Engine) -> (f64, &'static str) {
    let table = &calibration().diffusion_seconds_per_operator;
    let entry = table
        .get(engine.name())
        .or_else(|| table.get(Engine::Pytorch.name()))
        .expect("PyTorch eager has an operator time (a unit test checks it)");
    (entry.seconds, entry.evidence.as_str())
}

/// The scalar constants of `data/calibration.toml`, by name; the evidence for each is there.
pub use crate::calibration::accessors::*;
