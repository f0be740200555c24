//! The fitted constants of the estimators, as data: each with its value, the evidence for it
//! and the validation cases it was set from (`calibrated_on`), so that accuracy can be
//! reported on the cases it was not set from.
//!
//! The data is `data/calibration.toml`, embedded in the binary and parsed once.

use crate::efficiency::EngineProfile;
use gpuplan_model::{Checkpointing, Framework, LoraTargets};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The embedded calibration data.
pub const CALIBRATION_TOML: &str = include_str!("../data/calibration.toml");

/// What a training framework does by default that changes memory or speed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameworkProfile {
    /// Recomputation modes the framework offers, least recomputation first; the search takes
    /// the first that fits.
    pub checkpointing: Vec<Checkpointing>,
    /// ZeRO stages (optimizer, gradient and parameter sharding) it offers for full training,
    /// in the order the search tries them.
    pub zero_stages: Vec<u8>,
    /// Bytes per logit its loss keeps alive during training.
    pub logit_bytes: f64,
    /// Factor on the architecture's training fraction of peak at 8-bit precisions.
    pub low_precision_factor: f64,
    /// The layers its LoRA recipes adapt when none are named.
    pub lora_targets: LoraTargets,
    /// Dropout its LoRA adapters apply to their input (0: none, so no copy is kept).
    pub lora_dropout: f64,
    /// Where the LoRA defaults come from.
    pub lora_evidence: String,
    /// What the profile rests on, in one line for the estimate's assumptions.
    pub evidence: String,
    /// The framework's code and documentation behind it.
    pub sources: Vec<String>,
    /// Validation cases the profile's numbers were set from.
    #[serde(default)]
    pub calibrated_on: Vec<String>,
}

/// One fitted or measured number.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constant {
    pub value: f64,
    pub unit: String,
    pub evidence: String,
    #[serde(default)]
    pub calibrated_on: Vec<String>,
}

/// Declares the scalar constants once: the struct they parse into (a misspelt or missing one
/// fails to parse), the list of all of them, and one typed accessor each.
macro_rules! scalar_constants {
    ($($name:ident: $ty:ty),+ $(,)?) => {
        /// The scalar constants, one field each.
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Constants {
            $(pub $name: Constant,)+
        }

        impl Constants {
            /// Every scalar constant.
            pub fn all(&self) -> impl Iterator<Item = &Constant> {
                [$(&self.$name),+].into_iter()
            }
        }

        /// The value of each scalar constant, in the type the estimators use.
        pub mod accessors {
            $(
                pub fn $name() -> $ty {
                    super::constants().$name.value as $ty
                }
            )+
        }
    };
}

scalar_constants!(
    hidden_size_at_half_efficiency: f64,
    micro_batch_tokens_at_half_efficiency: f64,
    qlora_speed_factor: f64,
    data_parallel_overlap: f64,
    collective_bandwidth_fraction: f64,
    pipeline_virtual_stages: u64,
    all_reduce_latency_seconds: f64,
    cuda_context_gib: f64,
    nccl_buffers_gib: f64,
    allocator_fragmentation: f64,
    qlora_activation_factor: f64,
    serving_prefill_chunk_tokens: u64,
    low_precision_decode_factor: f64,
    serving_gemm_half_tokens: f64,
    serving_eight_bit_gemm_factor: f64,
    serving_moe_expert_seconds: f64,
    serving_expert_imbalance: f64,
    cnn_inference_activation_share: f64,
    fp32_share_of_tensor_rate: f64,
    cnn_activation_bytes_per_forward_flop: f64,
    memory_uncertainty: f64,
    training_uncertainty: f64,
    inference_uncertainty: f64,
    cnn_efficiency_factor: f64,
    convolution_peak_fraction: f64,
    elementwise_bandwidth_fraction: f64,
    cpu_adam_parameters_per_second: f64,
    cnn_inference_factor: f64,
    compiled_training_speedup: f64,
);

/// Training's fraction of dense peak on one family of architectures.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchitectureFraction {
    /// Substrings of the accelerator's architecture this entry covers.
    pub matches: Vec<String>,
    /// At 16-bit precisions (and TF32).
    pub sixteen_bit: f64,
    /// At 8-bit and narrower precisions.
    pub eight_bit: f64,
}

/// Training's fraction of dense peak, by architecture.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingPeakFraction {
    /// fp32/fp64 math on CUDA cores, any architecture.
    pub fp32: f64,
    /// Architectures no entry covers.
    pub other: f64,
    pub evidence: String,
    pub sources: Vec<String>,
    #[serde(default)]
    pub calibrated_on: Vec<String>,
    pub architectures: Vec<ArchitectureFraction>,
}

/// A diffusion UNet's fraction of dense peak on one family of architectures.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffusionFraction {
    pub matches: Vec<String>,
    pub value: f64,
    pub evidence: String,
}

/// A diffusion UNet's fraction of dense peak, by architecture.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffusionPeakFraction {
    pub other: f64,
    pub other_evidence: String,
    #[serde(default)]
    pub calibrated_on: Vec<String>,
    pub architectures: Vec<DiffusionFraction>,
}

/// Host time per GPU operator of one engine in a diffusion pipeline.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorTime {
    pub seconds: f64,
    pub evidence: String,
}

/// Every fitted constant.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The loss's bytes per logit and the fp8 factor where no framework is named.
    pub generic_logit_bytes: f64,
    pub constants: Constants,
    pub training_peak_fraction: TrainingPeakFraction,
    /// Inference engine profiles, by engine name.
    pub engines: BTreeMap<String, EngineProfile>,
    /// Release ranges of engines whose defaults or overheads differ from the current release.
    #[serde(default)]
    pub engine_releases: Vec<crate::efficiency::ReleaseProfile>,
    /// Quantised-weight kernels, by name.
    pub weight_kernels: BTreeMap<String, crate::efficiency::WeightKernelProfile>,
    pub diffusion_unet_peak_fraction: DiffusionPeakFraction,
    /// By engine name; engines not listed pay PyTorch eager's.
    pub diffusion_seconds_per_operator: BTreeMap<String, OperatorTime>,
    pub frameworks: BTreeMap<String, FrameworkProfile>,
}

static CALIBRATION: LazyLock<Calibration> = LazyLock::new(|| {
    toml::from_str(CALIBRATION_TOML).expect("the embedded calibration data parses (a unit test checks it)")
});

/// The calibration data.
pub fn calibration() -> &'static Calibration {
    &CALIBRATION
}

/// The scalar constants.
pub fn constants() -> &'static Constants {
    &calibration().constants
}

/// The profile of `framework`.
pub fn framework(framework: Framework) -> &'static FrameworkProfile {
    calibration()
        .frameworks
        .get(framework.name())
        .expect("every framework has a profile (a unit test checks it)")
}

/// Every validation case some constant was set from: the in-sample cases.
pub fn calibrated_cases() -> std::collections::BTreeSet<&'static str> {
    let data = calibration();
    data.constants
        .all()
        .flat_map(|c| &c.calibrated_on)
        .chain(&data.training_peak_fraction.calibrated_on)
        .chain(data.engines.values().flat_map(|e| &e.calibrated_on))
        .chain(
            data.engines
                .values()
                .flat_map(|e| e.serving.iter().flat_map(|s| &s.calibrated_on)),
        )
        .chain(&data.diffusion_unet_peak_fraction.calibrated_on)
        .chain(data.frameworks.values().flat_map(|f| &f.calibrated_on))
        .map(String::as_str)
        .collect()
}

/// Bytes per logit the training loss keeps alive under `framework`.
pub fn logit_bytes(framework: Option<Framework>) -> f64 {
    framework.map_or(calibration().generic_logit_bytes, |f| self::framework(f).logit_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_parses_and_every_framework_has_a_profile() {
        let parsed: Calibration = toml::from_str(CALIBRATION_TOML).expect("parses");
        for framework in Framework::ALL {
            let profile = parsed.frameworks.get(framework.name());
            let profile = profile.unwrap_or_else(|| panic!("no profile for {framework}"));
            assert!(!profile.checkpointing.is_empty() && !profile.zero_stages.is_empty());
            assert!(profile.zero_stages.iter().all(|z| *z <= 3));
            assert!(profile.logit_bytes >= 0.0 && profile.low_precision_factor > 0.0);
        }
        assert_eq!(
            parsed.frameworks.len(),
            Framework::ALL.len(),
            "a profile for an unknown framework"
        );
    }

    #[test]
    fn every_weight_kernel_has_a_profile() {
        for kernel in gpuplan_model::WeightKernel::ALL {
            let profile = crate::efficiency::weight_kernel_profile(*kernel);
            assert!(profile.weight_time_factor_batch1 > 0.0 && profile.weight_time_factor > 0.0);
            assert!(profile.gemm_factor > 0.0 && profile.gemm_factor <= 1.0);
        }
        assert_eq!(
            calibration().weight_kernels.len(),
            gpuplan_model::WeightKernel::ALL.len()
        );
    }

    #[test]
    fn every_engine_has_a_profile() {
        for engine in gpuplan_model::Engine::ALL {
            assert!(
                calibration().engines.contains_key(engine.name()),
                "no profile for {engine}"
            );
        }
        assert_eq!(calibration().engines.len(), gpuplan_model::Engine::ALL.len());
    }

    #[test]
    fn serving_evidence_states_the_values_in_force() {
        for profile in calibration().engines.values() {
            if let Some(serving) = &profile.serving {
                let ms = format!("{} ms fixed", serving.step_seconds * 1e3);
                let percent = format!("{} % of peak", (serving.gemm_peak_fraction * 100.0).round());
                assert!(
                    serving.evidence.contains(&ms) && serving.evidence.contains(&percent),
                    "{}: {ms}, {percent}",
                    serving.evidence
                );
            }
        }
    }

    #[test]
    fn fractions_are_fractions() {
        let data = calibration();
        let training = &data.training_peak_fraction;
        for entry in &training.architectures {
            assert!(
                entry.sixteen_bit > 0.0 && entry.sixteen_bit < 1.0 && entry.eight_bit > 0.0 && entry.eight_bit < 1.0
            );
        }
        for profile in data.engines.values() {
            for f in [
                profile.prefill_peak_fraction,
                profile.decode_bandwidth_fraction,
                profile.decode_peak_fraction,
            ] {
                assert!(f > 0.0 && f < 1.0, "{}", profile.evidence);
            }
        }
        assert!(!calibrated_cases().is_empty());
    }
}
