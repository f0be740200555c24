//! The estimators' fitted constants as data: each with its value, the evidence for it and the
//! validation cases it was set from (`calibrated_on`), so that accuracy can be reported on the
//! cases it was not set from. The catalog owns the data (`gpuplan-catalog/data/calibration.toml`)
//! and hands it to the estimators; a catalog directory may carry its own.

use crate::{
    Checkpointing, Engine, EngineBackend, EngineRelease, EngineSettings, Framework, LoraTargets, WeightKernel,
};
use serde::Deserialize;
use std::collections::BTreeMap;

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
    /// Full training runs purely in the 16-bit dtype: no fp32 master copy of the weights, the
    /// optimizer's moments in that dtype too (torchtune's `dtype: bf16`), where mixed precision
    /// keeps 12 bytes of optimizer state per parameter.
    #[serde(default)]
    pub pure_low_precision: bool,
    /// Trains in 4-bit floating point (Transformer Engine's NVFP4 recipe on Blackwell).
    #[serde(default)]
    pub four_bit_training: bool,
    /// Virtual stages per GPU its default pipeline schedule runs (1: plain 1F1B); none: the
    /// generic `pipeline_virtual_stages`.
    #[serde(default)]
    pub pipeline_virtual_stages: Option<u32>,
    /// Its pipeline splits each replica's batch into as many micro-batches as there are
    /// stages unless told otherwise (torchtitan's `pipeline_parallel_microbatches` default).
    #[serde(default)]
    pub microbatches_per_stage: bool,
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

/// The scalar constants, named once: `for_each_scalar_constant!(m)` calls `m!(name: type, …)`
/// with every one, so the struct here and the estimators' accessors are written from one list.
#[macro_export]
macro_rules! for_each_scalar_constant {
    ($m:ident) => {
        $m!(
    hidden_size_at_half_efficiency: f64,
    micro_batch_tokens_at_half_efficiency: f64,
    qlora_speed_factor: f64,
    data_parallel_overlap: f64,
    collective_bandwidth_fraction: f64,
    pipeline_virtual_stages: u64,
    all_reduce_round_seconds: f64,
    cuda_context_gib: f64,
    nccl_buffers_gib: f64,
    allocator_fragmentation: f64,
    qlora_activation_factor: f64,
    serving_prefill_chunk_tokens: u64,
    low_precision_decode_factor: f64,
    serving_gemm_half_tokens: f64,
    serving_roofline_knee: f64,
    serving_eight_bit_gemm_factor: f64,
    serving_four_bit_gemm_factor: f64,
    serving_moe_expert_seconds: f64,
    serving_grouped_gemm_factor: f64,
    serving_expert_imbalance: f64,
    serving_sort_seconds_per_logit: f64,
    serving_eager_seconds_per_layer: f64,
    host_memory_bandwidth_gb_per_s: f64,
    training_moe_expert_seconds: f64,
    cnn_inference_activation_share: f64,
    fp32_share_of_tensor_rate: f64,
    cnn_activation_bytes_per_forward_flop: f64,
    memory_uncertainty: f64,
    training_uncertainty: f64,
    inference_uncertainty: f64,
    cnn_efficiency_factor: f64,
    convolution_peak_fraction: f64,
    tf32_convolution_share: f64,
    convolution_half_efficiency_elements: f64,
    elementwise_bandwidth_fraction: f64,
    cpu_adam_parameters_per_second: f64,
    cnn_inference_factor: f64,
    compiled_training_speedup: f64,
);
    };
}

/// The struct the scalar constants parse into (a misspelt or missing one fails to parse) and
/// the list of all of them.
macro_rules! scalar_constants_struct {
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
    };
}

for_each_scalar_constant!(scalar_constants_struct);

/// Training's fraction of dense peak on one family of architectures.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchitectureFraction {
    /// Substrings of the accelerator's architecture this entry covers.
    #[serde(default)]
    pub matches: Vec<String>,
    /// Accelerators this entry covers by id whatever their architecture, for a part that
    /// sustains a different clock than others of its architecture (power limits).
    #[serde(default)]
    pub accelerators: Vec<String>,
    /// At 16-bit precisions (and TF32).
    pub sixteen_bit: f64,
    /// At 8-bit precisions.
    pub eight_bit: f64,
    /// At 4-bit floating point, against the 4-bit peak, where the architecture trains in it.
    pub four_bit: Option<f64>,
    /// The serving engines' GEMM fractions (set on Hopper) on this architecture, as a factor,
    /// where serving measurements set it; otherwise the ratio of the 16-bit training fractions.
    pub serving: Option<f64>,
    /// The validation cases `serving` was set from.
    #[serde(default)]
    pub serving_calibrated_on: Vec<String>,
    /// The serving engines' native 4-bit GEMMs on this part against its own 4-bit peak, as a
    /// factor on `serving_four_bit_gemm_factor`, where serving measurements set one (a part
    /// whose 4-bit peak its power limit does not let it sustain).
    pub serving_four_bit: Option<f64>,
    /// The validation cases `serving_four_bit` was set from.
    #[serde(default)]
    pub serving_four_bit_calibrated_on: Vec<String>,
    /// How this entry was set, where the table's evidence does not say.
    pub note: Option<String>,
}

impl ArchitectureFraction {
    /// Whether the entry covers the accelerator `id` of `architecture` (lower-cased, as the
    /// substrings are written).
    pub fn covers(&self, id: &str, architecture: &str) -> bool {
        self.accelerators.iter().any(|a| a.eq_ignore_ascii_case(id))
            || self.matches.iter().any(|m| architecture.contains(m.as_str()))
    }
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
    pub engine_releases: Vec<ReleaseProfile>,
    /// Quantised-weight kernels, by name.
    pub weight_kernels: BTreeMap<String, WeightKernelProfile>,
    pub diffusion_unet_peak_fraction: DiffusionPeakFraction,
    /// By engine name; engines not listed pay PyTorch eager's.
    pub diffusion_seconds_per_operator: BTreeMap<String, OperatorTime>,
    pub frameworks: BTreeMap<String, FrameworkProfile>,
    /// The 80 % intervals estimates state, from the held-out residuals of the validation tables.
    #[serde(default)]
    pub intervals: Vec<Interval>,
}

/// What an interval bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalKind {
    /// Peak memory per GPU.
    Memory,
    /// Training speed (tokens or samples per second; time and GPU-hours are its inverse).
    Training,
    /// Training speed of a mixture of experts, whose error is of another size.
    MoeTraining,
    /// Inference speed (throughput; latencies are its inverse).
    Inference,
    /// The load a continuous-batching replica takes: its capacity, or its goodput within
    /// latency limits.
    ServingCapacity,
    /// The same for a mixture of experts, whose error is of another size.
    MoeServingCapacity,
}

/// How many GPUs a workload spans, as far as its error goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    OneGpu,
    OneNode,
    MultiNode,
}

impl Regime {
    pub fn of(gpus: u32, gpus_per_node: u32) -> Regime {
        match gpus {
            0 | 1 => Regime::OneGpu,
            n if n <= gpus_per_node.max(1) => Regime::OneNode,
            _ => Regime::MultiNode,
        }
    }
}

/// The range measured / estimated falls in for 80 % of the held-out validation cases of a kind
/// (and regime): the 10th and 90th percentiles of the ratio on one half of the cases (split
/// conformal prediction; the other half checks the coverage).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    pub kind: IntervalKind,
    /// `None`: every regime (where one regime has too few cases of its own).
    #[serde(default)]
    pub regime: Option<Regime>,
    pub low: f64,
    pub high: f64,
    /// Cases the percentiles were taken over.
    pub cases: usize,
    pub evidence: String,
}

impl Calibration {
    /// The interval for `kind` on `regime`: the regime's own, else the kind's.
    pub fn interval(&self, kind: IntervalKind, regime: Regime) -> Option<&Interval> {
        let of_kind = || self.intervals.iter().filter(move |i| i.kind == kind);
        of_kind()
            .find(|i| i.regime == Some(regime))
            .or_else(|| of_kind().find(|i| i.regime.is_none()))
    }
}

/// How an inference engine uses the hardware.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineProfile {
    /// Fraction of dense peak reached in prefill (compute-bound).
    pub prefill_peak_fraction: f64,
    /// Fraction of memory bandwidth reached by decode (memory-bound).
    pub decode_bandwidth_fraction: f64,
    /// The same on GPUs with HBM, where it differs: a kernel that streams one token's weights
    /// from a few thousand threads saturates GDDR but not HBM's wider, deeper pipeline.
    #[serde(default)]
    pub hbm_decode_bandwidth_fraction: Option<f64>,
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

impl EngineProfile {
    /// The fraction of `accelerator`'s memory bandwidth decode reaches: the HBM figure on a
    /// GPU whose memory is HBM, where the profile has one.
    pub fn decode_bandwidth_fraction_on(&self, accelerator: &crate::Accelerator) -> f64 {
        let hbm = accelerator
            .memory_type
            .as_deref()
            .is_some_and(|kind| kind.to_ascii_uppercase().starts_with("HBM"));
        match self.hbm_decode_bandwidth_fraction {
            Some(fraction) if hbm => fraction,
            _ => self.decode_bandwidth_fraction,
        }
    }
}

/// One continuous-batching iteration of an engine: a fixed cost, a cost per running
/// sequence, and the efficiency its matrix multiplications reach when many tokens share them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServingProfile {
    /// Fraction of the dense 16-bit peak the iteration's GEMMs reach with many tokens in them
    /// (the efficiency at M tokens is this × M / (M + `serving_gemm_half_tokens`)).
    pub gemm_peak_fraction: f64,
    /// Time every iteration costs whatever it holds: scheduling, sampling, launches, seconds.
    pub step_seconds: f64,
    /// Time every iteration costs per layer of the model whatever it holds (the kernels each
    /// layer runs, launched one after another), seconds; 0 where the fixed cost is per
    /// iteration only.
    #[serde(default)]
    pub seconds_per_layer: f64,
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
    /// The share of `step_seconds` the serving profile states per layer of the model (0 where
    /// the fixed time is the iteration's, or a release states its own).
    pub seconds_per_layer: f64,
    pub seconds_per_sequence: f64,
}

impl EngineProfile {
    /// The continuous-batching figures, or ones read from the batch-1 fields.
    pub fn iteration_costs(&self, layers: f64) -> IterationCosts {
        match &self.serving {
            Some(serving) => IterationCosts {
                gemm_peak_fraction: serving.gemm_peak_fraction,
                step_seconds: serving.step_seconds + serving.seconds_per_layer * layers,
                seconds_per_layer: serving.seconds_per_layer,
                seconds_per_sequence: serving.seconds_per_sequence,
            },
            None => IterationCosts {
                gemm_peak_fraction: self.decode_peak_fraction,
                step_seconds: self.step_overhead_seconds + self.per_layer_overhead_seconds * layers,
                seconds_per_layer: 0.0,
                seconds_per_sequence: 0.0,
            },
        }
    }
}

/// How a range of an engine's releases (or one of its runtimes) differs from its current
/// one: defaults and host overheads that changed when its scheduler was rewritten, and the
/// GEMM efficiency where its kernels changed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseProfile {
    pub engine: String,
    /// First and last release lines (`0.4`, `0.5`) the profile covers; no last one: through
    /// the current release.
    pub from: String,
    #[serde(default)]
    pub through: Option<String>,
    /// The runtime the profile is for (TensorRT-LLM's TensorRT engines or PyTorch backend);
    /// none: whichever the release runs.
    #[serde(default)]
    pub backend: Option<EngineBackend>,
    #[serde(default)]
    pub gemm_peak_fraction: Option<f64>,
    #[serde(default)]
    pub step_seconds: Option<f64>,
    #[serde(default)]
    pub seconds_per_sequence: Option<f64>,
    #[serde(default)]
    pub chunked_prefill: Option<bool>,
    #[serde(default)]
    pub max_num_seqs: Option<f64>,
    /// How the releases apply their limits to a pipeline's micro-batches, where they differ
    /// from the current release.
    #[serde(default)]
    pub pipeline_limits: Option<crate::PipelineLimits>,
    /// The runtime's CUDA graphs replay decode-only iterations alone: an iteration that carries
    /// prompt tokens launches its kernels from the host one by one, and lasts at least that
    /// long (the constant `serving_eager_seconds_per_layer` a layer).
    #[serde(default)]
    pub eager_prompt_iterations: bool,
    pub evidence: String,
    pub sources: Vec<String>,
    #[serde(default)]
    pub calibrated_on: Vec<String>,
}

impl ReleaseProfile {
    /// Whether `engine` as `settings` describe it (its release, `None` for the current one,
    /// and its runtime) falls in this profile.
    pub fn covers(&self, engine: Engine, settings: &EngineSettings) -> bool {
        let bound = |text: &str| EngineRelease::parse(text);
        let in_range = match settings.release {
            Some(release) => {
                bound(&self.from).is_some_and(|from| from <= release)
                    && self
                        .through
                        .as_deref()
                        .is_none_or(|through| bound(through).is_some_and(|through| release <= through))
            }
            None => self.through.is_none(),
        };
        self.engine == engine.name()
            && in_range
            && self
                .backend
                .is_none_or(|backend| settings.backend_of(engine) == Some(backend))
    }
}

/// What a quantised-weight kernel costs beyond its bytes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
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

/// Why calibration data cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationDataError {
    #[error("no {kind} profile for `{name}`")]
    MissingProfile { kind: &'static str, name: String },
    #[error("a {kind} profile for `{name}`, which is not one")]
    UnknownProfile { kind: &'static str, name: String },
    #[error("{what} is {value}, not a fraction between 0 and 1")]
    NotAFraction { what: String, value: f64 },
    #[error("{what} is {value}; it must be {bound}")]
    OutOfRange {
        what: String,
        value: f64,
        bound: &'static str,
    },
}

impl Calibration {
    /// The profile of `framework`.
    pub fn framework(&self, framework: Framework) -> &FrameworkProfile {
        self.frameworks
            .get(framework.name())
            .expect("a checked calibration has every framework's profile")
    }

    /// The profile of `engine`.
    pub fn engine(&self, engine: Engine) -> &EngineProfile {
        self.engines
            .get(engine.name())
            .expect("a checked calibration has every engine's profile")
    }

    /// The profile of `kernel`.
    pub fn weight_kernel(&self, kernel: WeightKernel) -> &WeightKernelProfile {
        self.weight_kernels
            .get(kernel.name())
            .expect("a checked calibration has every weight kernel's profile")
    }

    /// Every validation case some constant was set from: the in-sample cases.
    pub fn calibrated_cases(&self) -> std::collections::BTreeSet<&str> {
        self.constants
            .all()
            .flat_map(|c| &c.calibrated_on)
            .chain(&self.training_peak_fraction.calibrated_on)
            .chain(
                self.training_peak_fraction
                    .architectures
                    .iter()
                    .flat_map(|a| a.serving_calibrated_on.iter().chain(&a.serving_four_bit_calibrated_on)),
            )
            .chain(self.engines.values().flat_map(|e| &e.calibrated_on))
            .chain(
                self.engines
                    .values()
                    .flat_map(|e| e.serving.iter().flat_map(|s| &s.calibrated_on)),
            )
            .chain(&self.diffusion_unet_peak_fraction.calibrated_on)
            .chain(self.frameworks.values().flat_map(|f| &f.calibrated_on))
            .chain(self.engine_releases.iter().flat_map(|r| &r.calibrated_on))
            .chain(self.weight_kernels.values().flat_map(|k| &k.calibrated_on))
            .map(String::as_str)
            .collect()
    }

    /// Checks what parsing cannot: a profile for every framework, engine and weight kernel and
    /// none for anything else, and fractions that are fractions.
    pub fn check(&self) -> Result<(), CalibrationDataError> {
        profiles("framework", &self.frameworks, Framework::ALL.iter().map(|f| f.name()))?;
        profiles("engine", &self.engines, Engine::ALL.iter().map(|e| e.name()))?;
        profiles(
            "weight kernel",
            &self.weight_kernels,
            WeightKernel::ALL.iter().map(|k| k.name()),
        )?;
        let training = &self.training_peak_fraction;
        let mut fractions: Vec<(String, f64)> = training
            .architectures
            .iter()
            .flat_map(|a| {
                [
                    (
                        format!("training_peak_fraction {:?} sixteen_bit", a.matches),
                        a.sixteen_bit,
                    ),
                    (format!("training_peak_fraction {:?} eight_bit", a.matches), a.eight_bit),
                ]
                .into_iter()
                .chain(
                    a.four_bit
                        .map(|f| (format!("training_peak_fraction {:?} four_bit", a.matches), f)),
                )
            })
            .collect();
        for (name, profile) in &self.engines {
            fractions.push((format!("{name} prefill_peak_fraction"), profile.prefill_peak_fraction));
            fractions.push((
                format!("{name} decode_bandwidth_fraction"),
                profile.decode_bandwidth_fraction,
            ));
            if let Some(hbm) = profile.hbm_decode_bandwidth_fraction {
                fractions.push((format!("{name} hbm_decode_bandwidth_fraction"), hbm));
            }
            fractions.push((format!("{name} decode_peak_fraction"), profile.decode_peak_fraction));
        }
        for release in &self.engine_releases {
            if let Some(fraction) = release.gemm_peak_fraction {
                let what = format!("{} {}… gemm_peak_fraction", release.engine, release.from);
                fractions.push((what, fraction));
            }
        }
        if let Some((what, value)) = fractions.into_iter().find(|(_, v)| !(*v > 0.0 && *v < 1.0)) {
            return Err(CalibrationDataError::NotAFraction { what, value });
        }
        self.check_serving_factors()
    }

    /// The architectures' serving factors are positive and the roofline's knee at least 1 (a
    /// smaller exponent would make a step longer than its two sides together).
    fn check_serving_factors(&self) -> Result<(), CalibrationDataError> {
        for (name, profile) in &self.engines {
            let Some(serving) = &profile.serving else { continue };
            for (field, value) in [
                ("step_seconds", serving.step_seconds),
                ("seconds_per_layer", serving.seconds_per_layer),
                ("seconds_per_sequence", serving.seconds_per_sequence),
            ] {
                if !(value >= 0.0 && value.is_finite()) {
                    return Err(CalibrationDataError::OutOfRange {
                        what: format!("{name} serving {field}"),
                        value,
                        bound: "0 or more",
                    });
                }
            }
        }
        let knee = self.constants.serving_roofline_knee.value;
        if knee.is_nan() || knee < 1.0 {
            return Err(CalibrationDataError::OutOfRange {
                what: "serving_roofline_knee".to_string(),
                value: knee,
                bound: "at least 1",
            });
        }
        let architectures = &self.training_peak_fraction.architectures;
        let bad = |f: &Option<f64>| f.is_some_and(|f| f.is_nan() || f <= 0.0);
        match architectures.iter().find_map(|a| {
            [("serving", a.serving), ("serving_four_bit", a.serving_four_bit)]
                .into_iter()
                .find(|(_, f)| bad(f))
                .map(|(field, f)| (a, field, f))
        }) {
            Some((a, field, value)) => Err(CalibrationDataError::OutOfRange {
                what: format!("training_peak_fraction {:?} {field}", a.matches),
                value: value.unwrap_or_default(),
                bound: "above 0",
            }),
            None => Ok(()),
        }
    }
}

/// Every name in `expected` has a profile in `table`, and nothing else does.
fn profiles<'a, T>(
    kind: &'static str,
    table: &BTreeMap<String, T>,
    expected: impl Iterator<Item = &'a str> + Clone,
) -> Result<(), CalibrationDataError> {
    if let Some(name) = expected.clone().find(|name| !table.contains_key(*name)) {
        return Err(CalibrationDataError::MissingProfile {
            kind,
            name: name.to_string(),
        });
    }
    match table
        .keys()
        .find(|key| !expected.clone().any(|name| name == key.as_str()))
    {
        Some(name) => Err(CalibrationDataError::UnknownProfile {
            kind,
            name: name.clone(),
        }),
        None => Ok(()),
    }
}
