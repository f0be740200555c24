//! gpuplan's estimators: how much memory a workload needs per GPU, how fast it trains or
//! serves, and what that rests on.
//!
//! Every function here is pure: a model's architecture ([`gpuplan_model::ModelSpec`]), an
//! accelerator, a workload and a [`Cluster`] in, an [`Estimate`] out, with the assumptions
//! behind every number. The formulas cite their sources in each module's "References";
//! every heuristic constant lives in [`efficiency`] with the evidence for its value.
//!
//! ```
//! use gpuplan_estimate::parameters::count_parameters;
//! # use gpuplan_model::*;
//! # let spec = TransformerSpec { model_type: "llama".into(), stacks: Stacks::DecoderOnly, hidden: 4096,
//! #     layers: 32, decoder_layers: 0, heads: 32, kv_heads: 32, head_dim: 128, ffn: 11008, gated_ffn: true,
//! #     vocab: 32000, tied_embeddings: false, learned_positions: 0, norm: Norm::RmsNorm, norms_per_layer: 2,
//! #     attention_bias: AttentionBias::None, mlp_bias: false, moe: None, mla: None, max_context: 4096,
//! #     extra_parameters: 0, image: None, quantization: None, sliding_window: None, read_notes: Vec::new() };
//! // Llama-2-7B, counted layer by layer: exactly the published 6,738,415,616.
//! assert_eq!(count_parameters(&spec).total, 6_738_415_616);
//! ```

pub mod activations;
pub mod calibration;
mod cluster;
mod convnet;
pub mod cost;
pub mod decode_iterations;
mod diffusion;
pub mod diffusion_flops;
pub mod dit_flops;
pub mod efficiency;
pub mod energy;
mod error;
mod estimate;
pub mod flops;
pub mod host_offload;
pub mod inference;
pub mod kv_cache;
pub mod memory;
mod notes;
pub mod op_checkpointing;
mod parallel_costs;
pub mod parameters;
pub mod precision_bytes;
mod prompt_queue;
pub mod serving;
pub mod serving_iteration;
pub mod serving_near_capacity;
pub mod serving_users;
pub mod spot;
#[cfg(test)]
mod test_specs;
pub mod training;

pub use cluster::Cluster;
pub use error::EstimateError;
pub use estimate::{Estimate, EstimateRequest, ImageSummary, ParameterSummary, TrainingAmount, Uncertainty, estimate};
pub use inference::{Bound, InferenceEstimate};
pub use memory::MemoryEstimate;
pub use training::TrainingEstimate;
