//! Training speed: step time from FLOPs and achieved throughput, plus what the parallel
//! layout adds (`parallel_costs`: the pipeline bubble and the exchanges, with their sources)
//! and what offloading moves over PCIe.

use crate::calibration;
use crate::cluster::Cluster;
use crate::efficiency::{
    compiled_training_speedup, cpu_adam_parameters_per_second, hidden_size_at_half_efficiency,
    micro_batch_tokens_at_half_efficiency, qlora_speed_factor, training_peak_fraction,
};
use crate::flops::TrainingFlops;
use crate::notes::Notes;
use crate::parallel_costs::StepOf;
use crate::precision_bytes::{gradient_bytes, weight_bytes};
use gpuplan_model::{Accelerator, FlopsPerSecond, Precision, Task, Workload};
use serde::Serialize;

/// How fast training runs and how long it takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainingEstimate {
    /// One optimizer step (the global batch).
    pub step_seconds: f64,
    /// Tokens per second over all GPUs.
    pub tokens_per_second: f64,
    /// Sequences (or samples) per second over all GPUs.
    pub samples_per_second: f64,
    /// Model FLOPs utilisation: model FLOPs per second over the GPUs' dense peak.
    pub mfu: f64,
    /// Hardware FLOPs utilisation: FLOPs executed per second (recomputation included) over peak.
    pub hfu: f64,
    /// Time for the requested tokens or epochs, when given.
    pub time_seconds: Option<f64>,
    pub gpu_hours: Option<f64>,
    /// Compute part of a step: pipeline bubble and the routed experts' per-expert kernels
    /// included.
    pub compute_seconds: f64,
    /// Communication not hidden behind compute.
    pub communication_seconds: f64,
    /// Pipeline bubble as a fraction of the ideal compute time.
    pub pipeline_bubble: f64,
    /// Ideal compute time over actual step time (the routed experts' per-expert kernels left
    /// out): 1 when communication and bubbles cost nothing.
    pub scaling_efficiency: f64,
}

/// The inputs of one training-speed estimate.
#[derive(Debug, Clone, Copy)]
pub struct TrainingShape {
    pub hidden: u64,
    pub layers: u64,
    pub seq: u64,
    /// Parameters updated by the optimizer, whole model.
    pub trainable_parameters: f64,
    /// All parameters, whole model.
    pub parameters: f64,
    /// Parameters of the routed experts, whole model (0 for dense models): with expert
    /// parallelism each GPU holds 1/EP of them and reduces their gradients only with the
    /// data-parallel ranks that hold the same experts.
    pub expert_parameters: f64,
    /// Width of keys (or values) of all KV heads, for context-parallel exchanges.
    pub kv_width: u64,
    /// Mixture-of-experts layers and experts per token, for expert-parallel all-to-alls.
    pub moe_layers: u64,
    pub experts_per_token: u64,
    /// Routed experts of each MoE layer (0 for a dense model).
    pub experts: u64,
    pub flops_per_token: TrainingFlops,
    /// Activation bytes one GPU keeps for the backward pass (what activation offloading moves).
    pub saved_activation_bytes: f64,
}

/// The share of a GEMM's best rate a pass of `tokens` tokens reaches: t/(t + t½), where t½
/// (`micro_batch_tokens_at_half_efficiency`) is where it reaches half.
pub(crate) fn micro_batch_efficiency(tokens: f64) -> f64 {
    tokens / (tokens + micro_batch_tokens_at_half_efficiency())
}

/// Achieved fraction of peak for this model shape and micro-batch, and why.
pub fn efficiency(accelerator: &Accelerator, workload: &Workload, shape: &TrainingShape, notes: &mut Notes) -> f64 {
    let (base, evidence) = training_peak_fraction(accelerator, workload.precision);
    let hidden = shape.hidden as f64;
    let size = hidden / (hidden + hidden_size_at_half_efficiency());
    let tokens = (workload.micro_batch * shape.seq) as f64;
    let micro_batch = micro_batch_efficiency(tokens);
    let qlora = if workload.task == Task::Qlora {
        qlora_speed_factor()
    } else {
        1.0
    };
    notes.add(|| evidence.to_string());
    notes.add(|| {
        format!(
            "matmul efficiency scales with hidden size h/(h + {}) and micro-batch tokens \
             t/(t + {}): {size:.2} × {micro_batch:.2} here",
            hidden_size_at_half_efficiency(),
            micro_batch_tokens_at_half_efficiency()
        )
    });
    if workload.task == Task::Qlora {
        notes.add(|| {
            format!(
                "QLoRA dequantises the 4-bit base before each matmul: ×{} speed",
                qlora_speed_factor()
            )
        });
    }
    let framework = match workload.framework {
        Some(framework) if workload.precision.bits() <= 8 => {
            let factor = calibration::framework(framework).low_precision_factor;
            if factor != 1.0 {
                notes.add(|| {
                    format!("{framework} runs 8- and 4-bit training at ×{factor} the generic fraction of peak")
                });
            }
            factor
        }
        _ => 1.0,
    };
    // The 8-bit fractions of peak were measured on compiled steps (torchao's float8 needs
    // torch.compile; Transformer Engine fuses its own kernels), so compiling adds nothing there.
    let compiled = if workload.compiled && workload.precision.bits() > 8 {
        notes.add(|| {
            format!(
                "torch.compile fuses the step's element-wise work: ×{} speed",
                compiled_training_speedup()
            )
        });
        compiled_training_speedup()
    } else {
        1.0
    };
    base * size * micro_batch * qlora * framework * compiled
}

/// Step time and throughput of training `shape` with `workload` on `cluster`.
pub fn estimate(
    accelerator: &Accelerator,
    peak: FlopsPerSecond,
    workload: &Workload,
    cluster: &Cluster,
    shape: &TrainingShape,
    notes: &mut Notes,
) -> TrainingEstimate {
    let layout = workload.layout;
    let gpus = f64::from(cluster.gpus);
    let achieved = efficiency(accelerator, workload, shape, notes);
    let tokens_per_step = (workload.batch * shape.seq) as f64;
    let ideal = ideal_compute_seconds(accelerator, peak, workload, shape, achieved, notes) * tokens_per_step / gpus;

    let micro_batches = (workload.batch as f64 / (workload.micro_batch as f64 * f64::from(layout.dp))).max(1.0);
    let step_of = StepOf {
        workload,
        cluster,
        shape,
        micro_batches,
    };
    let bubble = step_of.pipeline_bubble(notes);
    let compute = ideal * (1.0 + bubble);
    let tp_seconds = step_of.tensor_parallel_seconds();
    let exposed_dp = step_of.exposed_data_parallel_seconds(ideal, notes);
    let cp_seconds = step_of.context_parallel_seconds();
    let exchanges = step_of.expert_parallel_seconds();
    let (ep_seconds, unpaired) = step_of.exposed_expert_parallel_seconds(exchanges, ideal);
    if layout.cp > 1 || layout.ep > 1 {
        notes.add(|| {
            let counted = if layout.ep_overlap {
                "context- and expert-parallel exchanges (the expert ones overlapped, below):"
            } else {
                "context- and expert-parallel exchanges are counted as exposed communication:"
            };
            format!(
                "{counted} {:.2} s (context) and {:.2} s (expert all-to-all, top-{} dispatch and combine over {} MoE \
                 layers per stage) per step",
                cp_seconds,
                exchanges,
                shape.experts_per_token,
                step_of.moe_layers_here()
            )
        });
    }
    if layout.ep_overlap && exchanges > 0.0 {
        notes.add(|| {
            format!(
                "expert all-to-alls overlapped with the adjacent micro-batch's compute (Megatron-Core's combined \
                 1F1B): {ep_seconds:.2} s of the {exchanges:.2} s exposed, those of the {:.1} % of passes without a \
                 partner in the pipeline's warm-up and cool-down and what the {ideal:.2} s of compute does not cover",
                unpaired * 100.0
            )
        });
    }
    let expert_seconds = step_of.expert_kernel_seconds(notes);
    let offload_seconds = offload_seconds(workload, cluster, shape, ideal, micro_batches, notes);
    let step = compute + tp_seconds + exposed_dp + cp_seconds + ep_seconds + expert_seconds + offload_seconds;
    let tokens_per_second = tokens_per_step / step;
    let real_share = workload.packing.real_share(shape.seq);
    if workload.packing.is_padded() {
        notes.add(|| {
            format!(
                "examples padded to {} tokens are {:.0} % real text: tokens/s, time and GPU-hours count real \
                 tokens, MFU counts the padding the GPUs compute",
                shape.seq,
                real_share * 100.0
            )
        });
    }
    TrainingEstimate {
        step_seconds: step,
        tokens_per_second: tokens_per_second * real_share,
        samples_per_second: workload.batch as f64 / step,
        mfu: shape.flops_per_token.model * tokens_per_second / (gpus * peak.0),
        hfu: shape.flops_per_token.hardware * tokens_per_second / (gpus * peak.0),
        time_seconds: None,
        gpu_hours: None,
        compute_seconds: compute + expert_seconds,
        communication_seconds: tp_seconds + exposed_dp + cp_seconds + ep_seconds + offload_seconds,
        pipeline_bubble: bubble,
        // What spreading the work costs: the per-expert kernels are not a cost of scale.
        scaling_efficiency: ideal / (step - expert_seconds),
    }
}

/// Time a step spends on what offloading adds and compute does not hide. The CPU optimizer
/// step and the upload of updated parameters follow the backward pass (DeepSpeed steps the
/// CPU optimizer after it; only the gradient copy overlaps the backward pass); parameter and
/// activation copies are prefetched on a side stream and cost only what exceeds the compute.
fn offload_seconds(
    workload: &Workload,
    cluster: &Cluster,
    shape: &TrainingShape,
    compute: f64,
    micro_batches: f64,
    notes: &mut Notes,
) -> f64 {
    let offload = workload.offload;
    if !offload.any() {
        return 0.0;
    }
    let layout = workload.layout;
    let ranks = f64::from(layout.tp) * f64::from(layout.pp) * f64::from(layout.dp);
    let link = cluster.host_link.0;
    let mut seconds = 0.0;
    if offload.optimizer {
        let shard = shape.trainable_parameters / ranks;
        let per_process = cpu_adam_parameters_per_second() / f64::from(cluster.gpus_per_node.max(1));
        let cpu_step = shard / per_process;
        let copies = shard * gradient_bytes(workload.task, workload.precision) / link;
        let upload = shard * weight_bytes(Task::Finetune, workload.precision) / link;
        seconds += cpu_step + upload + (copies - compute * 2.0 / 3.0).max(0.0);
        notes.add(|| {
            format!(
                "optimizer offloaded: {:.2} s of CPU Adam per step ({:.1} G parameters/s per node shared by {} GPUs) and \
                 {:.2} s of parameter upload at {:.0} GB/s",
                cpu_step,
                cpu_adam_parameters_per_second() / 1e9,
                cluster.gpus_per_node,
                upload,
                link / 1e9
            )
        });
    }
    if offload.parameters {
        let fetched = 2.0 * micro_batches * shape.parameters / ranks * weight_bytes(workload.task, workload.precision);
        seconds += (fetched / link - compute).max(0.0);
        notes.add(|| {
            "parameters offloaded: each micro-batch fetches its shard for the forward and backward passes".to_string()
        });
    }
    if offload.activations {
        let moved = 2.0 * micro_batches * shape.saved_activation_bytes;
        seconds += (moved / link - compute).max(0.0);
        notes.add(|| "activations offloaded: saved tensors copied to the host and back on a side stream".to_string());
    }
    seconds
}

impl TrainingEstimate {
    /// The same training run `factor` times slower (an input pipeline that cannot keep up):
    /// steps and the whole run take longer, throughput and utilisation fall.
    pub fn slowed_by(mut self, factor: f64) -> TrainingEstimate {
        self.step_seconds *= factor;
        self.tokens_per_second /= factor;
        self.samples_per_second /= factor;
        self.mfu /= factor;
        self.hfu /= factor;
        self.time_seconds = self.time_seconds.map(|t| t * factor);
        self.gpu_hours = self.gpu_hours.map(|h| h * factor);
        self
    }

    /// The same step with `seconds` of transfers that nothing hides added to its exposed
    /// communication.
    pub fn with_exposed_transfer(self, seconds: f64) -> TrainingEstimate {
        if seconds <= 0.0 || self.step_seconds <= 0.0 {
            return self;
        }
        let factor = (self.step_seconds + seconds) / self.step_seconds;
        let mut slowed = self.slowed_by(factor);
        slowed.communication_seconds += seconds;
        slowed.scaling_efficiency /= factor;
        slowed
    }

    /// The same estimate with the time to process `tokens` tokens.
    pub fn for_tokens(mut self, tokens: f64, gpus: u32) -> TrainingEstimate {
        let seconds = tokens / self.tokens_per_second;
        self.time_seconds = Some(seconds);
        self.gpu_hours = Some(seconds * f64::from(gpus) / 3600.0);
        self
    }

    /// The same estimate with the time to process `samples` samples.
    pub fn for_samples(mut self, samples: f64, gpus: u32) -> TrainingEstimate {
        let seconds = samples / self.samples_per_second;
        self.time_seconds = Some(seconds);
        self.gpu_hours = Some(seconds * f64::from(gpus) / 3600.0);
        self
    }
}

/// Seconds of compute per token on one GPU at full utilisation of `achieved` of `peak`. At 8
/// bits or fewer the output layer's logits projection runs in 16 bits: Megatron-Core builds
/// it as a plain `ColumnParallelLinear`, outside Transformer Engine's fp8 autocast, and
/// torchtitan's Float8 conversion leaves the module named `output` out by default.
fn ideal_compute_seconds(
    accelerator: &Accelerator,
    peak: FlopsPerSecond,
    workload: &Workload,
    shape: &TrainingShape,
    achieved: f64,
    notes: &mut Notes,
) -> f64 {
    let flops = shape.flops_per_token;
    if workload.precision.bits() > 8 || flops.logits <= 0.0 {
        return flops.hardware / (peak.0 * achieved);
    }
    notes.add(|| {
        format!(
            "the output layer's logits projection ({:.1} % of the FLOPs) runs in 16 bits, as the frameworks leave it",
            100.0 * flops.logits / flops.hardware
        )
    });
    let (low, _) = training_peak_fraction(accelerator, workload.precision);
    let (high, _) = training_peak_fraction(accelerator, Precision::Bf16);
    let sixteen = crate::inference::logits_peak(accelerator, peak, workload.precision);
    (flops.hardware - flops.logits) / (peak.0 * achieved) + flops.logits / (sixteen * achieved * high / low)
}
