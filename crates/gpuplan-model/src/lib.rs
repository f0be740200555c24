//! The vocabulary of gpuplan.
//!
//! Plain values shared by every other crate: units as newtypes ([`Bytes`], [`FlopsPerSecond`],
//! [`UsdPerHour`] …), names that normalise themselves ([`AcceleratorId`], [`ProviderId`]),
//! hardware ([`Accelerator`]), rentable shapes ([`Offering`]) and the provenance every catalog
//! number carries ([`Source`], [`Date`]). Nothing here reads files, prints or touches a clock.
//!
//! ```
//! use gpuplan_model::{Bytes, Precision};
//!
//! let weights = Bytes::from_gib(13.5);
//! assert_eq!(weights.to_string(), "13.5 GiB");
//! assert_eq!("BF16".parse::<Precision>().unwrap(), Precision::Bf16);
//! ```

mod accelerator;
mod accelerator_id;
mod billing;
mod cancel;
mod compute_capability;
mod convnext_spec;
mod counted;
mod date;
mod diffusion_spec;
pub mod duration;
mod engine_settings;
mod export_kind;
mod fabric;
pub mod field;
pub mod fitted;
mod fp4_format;
mod framework;
mod gpu_calibration;
mod instance_family;
mod model_spec;
mod name;
mod named_enum;
mod offering;
mod offload;
mod operations;
mod packing;
mod pipeline_limits;
mod precision;
mod provider;
mod provider_facts;
mod resnet_spec;
mod serving;
mod shared_storage;
mod software_stack;
mod source;
mod storage_pricing;
mod suggestion;
mod swin_spec;
mod units;
mod workload;
mod yolo_spec;

pub use accelerator::{Accelerator, NvLink, PeakTable, USUAL_GPUS_PER_NODE};
pub use accelerator_id::AcceleratorId;
pub use billing::{BillingGranularity, BillingMeter, BillingMode, CommitmentTerm, ReservedDiscount};
pub use cancel::Cancel;
pub use compute_capability::ComputeCapability;
pub use convnext_spec::ConvnextSpec;
pub use counted::counted;
pub use date::{Date, DateError};
pub use diffusion_spec::{DitFamily, DitSpec, UnetBlockKind, UnetSpec, VaeDecoderSpec};
pub use engine_settings::{EngineBackend, EngineRelease, EngineSettings, Sampling};
pub use export_kind::{ExportTarget, TrainingFlavour};
pub use fabric::{FabricKind, FabricRule, FabricSource, NodeFabric};
pub use fp4_format::{Fp4Format, MXFP4_BYTES_PER_PARAMETER, NVFP4_BYTES_PER_PARAMETER};
pub use framework::Framework;
pub use gpu_calibration::{CalibrationProfile, GpuCalibration};
pub use instance_family::{family_key, instance_families};
pub use model_spec::{
    Architecture, AttentionBias, CheckpointQuantization, CitedSpec, MlaSpec, ModelSpec, MoeSpec, Norm, SlidingWindow,
    Stacks, TransformerSpec,
};
pub use name::normalize_name;
pub use offering::{
    ExchangeRate, GpuInterconnect, NativePrice, NodeNetwork, Offering, PriceFlag, UNKNOWN_NODE_NETWORK_GBPS,
};
pub use offload::Offload;
pub use operations::{
    BillingTerms, CapacityLimit, DecodeRate, InterruptionRate, Operations, SpotPrice, SpotShare, StartupProfile,
    UsageTiers,
};
pub use packing::SequencePacking;
pub use pipeline_limits::PipelineLimits;
pub use precision::{Precision, UnknownPrecision};
pub use provider::ProviderId;
pub use provider_facts::{COMPLIANCE_PROGRAMMES, ProviderFacts, RegionLatency, programme_key};
pub use resnet_spec::{ConvNetwork, ConvOp, ResnetSpec};
pub use serving::{DEFAULT_TARGET_PERCENTILE, LatencyTarget, RequestMix, RequestShape};
pub use shared_storage::{ClaimSize, SharedStorage};
pub use software_stack::{ImageRole, SoftwareStack, StackImage, StackSupport, StackTarget};
pub use source::Source;
pub use storage_pricing::{DataUnit, StoragePricing};
pub use suggestion::did_you_mean;
pub use swin_spec::SwinSpec;
pub use units::{Bytes, BytesPerSecond, FlopsPerSecond, GigabitsPerSecond, UsdPerHour, Watts};
pub use workload::{
    Checkpointing, Engine, ImageSettings, KvCacheDtype, LoraTargets, Optimizer, ParallelLayout, Task, WeightKernel,
    Workload,
};
pub use yolo_spec::YoloSpec;
