//! Every heuristic constant of the estimators, by name. The values, the evidence behind them
//! and the validation cases they were set from are data (`data/calibration.toml`, read by
//! [`crate::calibration`]); each one an estimate used is listed among its assumptions.

use crate::calibration::calibration;
use gpuplan_model::{Accelerator, Engine, Precision};

/// Fraction of an accelerator's dense peak that large, well-tuned training reaches on the
/// FLOPs it actually executes (hardware FLOPs utilisation, recomputation included), from the
/// calibration data's per-architecture table, with the evidence.
pub fn training_peak_fraction(accelerator: &Accelerator, precision: Precision) -> (f64, &'static str) {
    let table = &calibration().training_peak_fraction;
    let architecture = accelerator.architecture.to_lowercase();
    let fraction = if matches!(precision, Precision::Fp32 | Precision::Fp64) {
        table.fp32
    } else {
        let eight_bit = precision.bits() <= 8;
        table
            .architectures
            .iter()
            .find(|entry| entry.matches.iter().any(|m| architecture.contains(m.as_str())))
            .map_or(
                table.other,
                |entry| if eight_bit { entry.eight_bit } else { entry.sixteen_bit },
            )
    };
    (fraction, table.evidence.as_str())
}

/// How hard an architecture's tensor cores are to keep busy, relative to Hopper, on which the
/// serving engines' GEMM fractions were set: the ratio of the training table's 16-bit
/// fractions (A100 ≈ 1.3×, CDNA ≈ 0.66×), the only cross-architecture evidence in the data.
pub fn serving_architecture_factor(accelerator: &Accelerator) -> f64 {
    let table = &calibration().training_peak_fraction;
    let hopper = table
        .architectures
        .iter()
        .find(|entry| entry.matches.iter().any(|m| m == "hopper"))
        .map_or(table.other, |entry| entry.sixteen_bit);
    training_peak_fraction(accelerator, Precision::Bf16).0 / hopper
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

/// Network bandwidth assumed between nodes when no offering states one, Gbit/s per node:
/// the reference designs of each GPU generation's training servers (DGX H100/H200/B200:
/// 8 × 400 Gb/s ConnectX-7; DGX A100: 8 × 200 Gb/s ConnectX-6), and plain 100 Gb/s Ethernet
/// for everything else.
pub fn default_node_network_gbps(accelerator: &gpuplan_model::Accelerator) -> f64 {
    let architecture = accelerator.architecture.to_lowercase();
    let sxm = accelerator.on_nvlink_board();
    if sxm && (architecture.contains("hopper") || architecture.contains("blackwell")) {
        3200.0
    } else if sxm && architecture.contains("ampere") {
        1600.0
    } else {
        100.0
    }
}

/// How an inference engine uses the hardware.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineProfile {
    /// Fraction of dense peak reached in prefill (compute-bound).
    pub prefill_peak_fraction: f64,
    /// Fraction of memory bandwidth reached by decode (memory-bound).
    pub decode_bandwidth_fraction: f64,
    /// Fraction of dense peak reached when decode becomes compute-bound at large batch.
    pub decode_peak_fraction: f64,
    /// Fixed time per decode step (scheduling, sampling, launches), seconds.
    pub step_overhead_seconds: f64,
    /// Additional time per layer per decode step (kernel launches without CUDA graphs).
    pub per_layer_overhead_seconds: f64,
    /// Additional time per layer of a prefill (context) pass, which engines run without CUDA
    /// graphs.
    pub prefill_per_layer_overhead_seconds: f64,
    /// One line for the estimate's assumptions.
    pub evidence: String,
    /// The measurements behind the numbers.
    pub sources: Vec<String>,
    /// Validation cases the numbers were set from.
    #[serde(default)]
    pub calibrated_on: Vec<String>,
    /// How the engine's continuous-batching iterations scale with the work in them; engines
    /// without one (eager PyTorch, compiled graphs) are timed from the fields above.
    #[serde(default)]
    pub serving: Option<ServingProfile>,
}

/// One continuous-batching iteration of an engine: a fixed cost, a cost per running
/// sequence, and the efficiency its matrix multiplications reach when many tokens share them.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServingProfile {
    /// Fraction of the dense 16-bit peak the iteration's GEMMs reach with many tokens in them
    /// (the efficiency at M tokens is this × M / (M + `serving_gemm_half_tokens`)).
    pub gemm_peak_fraction: f64,
    /// Time every iteration costs whatever it holds: scheduling, sampling, launches, seconds.
    pub step_seconds: f64,
    /// Host time per running sequence per iteration (detokenising, sampling, bookkeeping),
    /// seconds.
    pub seconds_per_sequence: f64,
    pub evidence: String,
    pub sources: Vec<String>,
    /// Validation cases the numbers were set from.
    #[serde(default)]
    pub calibrated_on: Vec<String>,
}

/// The figures of a [`ServingProfile`] one iteration is timed with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterationCosts {
    pub gemm_peak_fraction: f64,
    pub step_seconds: f64,
    pub seconds_per_sequence: f64,
}

impl EngineProfile {
    /// The continuous-batching figures, or ones read from the batch-1 fields.
    pub fn iteration_costs(&self, layers: f64) -> IterationCosts {
        match &self.serving {
            Some(serving) => IterationCosts {
                gemm_peak_fraction: serving.gemm_peak_fraction,
                step_seconds: serving.step_seconds,
                seconds_per_sequence: serving.seconds_per_sequence,
            },
            None => IterationCosts {
                gemm_peak_fraction: self.decode_peak_fraction,
                step_seconds: self.step_overhead_seconds + self.per_layer_overhead_seconds * layers,
                seconds_per_sequence: 0.0,
            },
        }
    }
}

/// How a range of an engine's releases differs from its current one: defaults and host
/// overheads that changed when its scheduler was rewritten.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseProfile {
    pub engine: String,
    /// First and last release lines (`0.4`, `0.5`) the profile covers.
    pub from: String,
    pub through: String,
    #[serde(default)]
    pub step_seconds: Option<f64>,
    #[serde(default)]
    pub seconds_per_sequence: Option<f64>,
    #[serde(default)]
    pub chunked_prefill: Option<bool>,
    #[serde(default)]
    pub max_num_seqs: Option<f64>,
    pub evidence: String,
    pub sources: Vec<String>,
    #[serde(default)]
    pub calibrated_on: Vec<String>,
}

impl ReleaseProfile {
    /// Whether `release` of `engine` falls in this profile's range.
    pub fn covers(&self, engine: Engine, release: gpuplan_model::EngineRelease) -> bool {
        let bound = |text: &str| gpuplan_model::EngineRelease::parse(text);
        self.engine == engine.name()
            && bound(&self.from).is_some_and(|from| from <= release)
            && bound(&self.through).is_some_and(|through| release <= through)
    }
}

/// The profile of `engine`'s `release`, where it differs from the current release.
pub fn release_profile(engine: Engine, release: gpuplan_model::EngineRelease) -> Option<&'static ReleaseProfile> {
    calibration().engine_releases.iter().find(|p| p.covers(engine, release))
}

/// What a quantised-weight kernel costs beyond its bytes.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightKernelProfile {
    /// Time to stream (and dequantise) the weights once at batch 1, as a multiple of reading
    /// them at their stored size.
    pub weight_time_factor_batch1: f64,
    /// The same with more than one token per step.
    pub weight_time_factor: f64,
    /// GEMM efficiency with many tokens, as a share of the engine's 16-bit (or the precision's
    /// own) efficiency.
    pub gemm_factor: f64,
    pub evidence: String,
    pub sources: Vec<String>,
    #[serde(default)]
    pub calibrated_on: Vec<String>,
}

/// The profile of `kernel`.
pub fn weight_kernel_profile(kernel: gpuplan_model::WeightKernel) -> &'static WeightKernelProfile {
    calibration()
        .weight_kernels
        .get(kernel.name())
        .expect("every weight kernel has a profile (a unit test checks it)")
}

/// The measured behaviour of `engine`, from the calibration data.
pub fn engine_profile(engine: Engine) -> &'static EngineProfile {
    calibration()
        .engines
        .get(engine.name())
        .expect("every engine has a profile (a unit test checks it)")
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
