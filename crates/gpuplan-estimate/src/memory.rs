//! Peak memory per GPU: weights, gradients, optimizer states, activations, KV cache and the
//! runtime's own overhead.
//!
//! References: Rajbhandari et al. 2020 ("ZeRO", §5): stage 1 shards optimizer states over the
//! N data-parallel ranks, stage 2 also gradients, stage 3 also parameters; Narayanan et al.
//! 2021 (§2.2): 1F1B pipelining keeps up to `p` micro-batches in flight on the first stage;
//! Korthikanti et al. 2022: sequence parallelism splits the remaining activations by `t`.

use crate::activations;
use crate::calibration;
use crate::efficiency::{
    allocator_fragmentation, cuda_context_gib, nccl_buffers_gib, qlora_activation_factor, serving_prefill_chunk_tokens,
};
use crate::parameters::ParameterCount;
use crate::precision_bytes::{
    activation_bytes, embedding_bytes, gradient_bytes, optimizer_bytes, optimizer_state_bytes, served_weight_bytes,
    weight_bytes,
};
use gpuplan_model::{Accelerator, Bytes, Checkpointing, Engine, LoraTargets, Task, TransformerSpec, Workload};
use serde::Serialize;

/// Memory needed on the busiest GPU, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryEstimate {
    pub weights: Bytes,
    pub gradients: Bytes,
    pub optimizer: Bytes,
    pub activations: Bytes,
    pub kv_cache: Bytes,
    pub overhead: Bytes,
    /// The sum of the above.
    pub per_gpu: Bytes,
    /// Optimizer states in CUDA managed memory (bitsandbytes' paged optimizers), outside
    /// `per_gpu`: they stay on the GPU while it has room and are paged to the host otherwise,
    /// so they never exhaust it; the framework's allocator does not count them either.
    pub paged_optimizer: Bytes,
    /// What the GPU offers the workload (driver-visible memory; vLLM's 90 % share for vLLM).
    pub capacity: Bytes,
}

impl MemoryEstimate {
    /// Memory PyTorch's allocator hands out (`torch.cuda.max_memory_allocated`): everything but
    /// the CUDA context, communication buffers and fragmentation.
    pub fn allocated(&self) -> Bytes {
        self.weights + self.gradients + self.optimizer + self.activations + self.kv_cache
    }

    pub fn fits(&self) -> bool {
        self.per_gpu <= self.capacity
    }

    /// Capacity minus need, negative when it does not fit.
    pub fn headroom_bytes(&self) -> i64 {
        self.capacity.as_u64() as i64 - self.per_gpu.as_u64() as i64
    }
}

/// Trainable adapter parameters of LoRA on every linear layer of attention and the dense
/// feed-forward: rank × (inputs + outputs) per matrix (Hu et al. 2021; Dettmers et al. 2023
/// adapt all linear layers, which QLoRA found necessary to match full fine-tuning).
pub fn lora_parameters(spec: &TransformerSpec, rank: u64, targets: LoraTargets) -> u64 {
    let h = spec.hidden;
    let q = spec.attention_width();
    let kv = spec.kv_width();
    let attention = match targets {
        LoraTargets::QueryValue => (h + q) + (h + kv),
        _ => (h + q) + 2 * (h + kv) + (q + h),
    };
    let (ffn, copies) = match spec.moe {
        // Adapters on the shared and routed experts' matrices as well.
        Some(moe) => (moe.expert_ffn, moe.experts + moe.shared_experts),
        None => (spec.ffn, 1),
    };
    let matrices = if spec.gated_ffn { 3 } else { 2 };
    let feed_forward = if targets.feed_forward() {
        matrices * (h + ffn) * copies
    } else {
        0
    };
    let head = if targets == LoraTargets::AllLinearAndHead {
        rank * (h + spec.vocab)
    } else {
        0
    };
    rank * (attention + feed_forward) * (spec.layers + spec.decoder_layers) + head
}

/// Activation bytes per token the adapters add: with LoRA dropout, each adapted layer keeps a
/// dropped-out copy of its input and the mask (PEFT and LitGPT apply dropout to the adapter's
/// input only); an adapted output head also produces a second full-vocabulary tensor.
pub fn lora_activation_bytes_per_token(spec: &TransformerSpec, workload: &Workload, layers: u64) -> f64 {
    let dropout = workload
        .framework
        .map_or(0.0, |f| crate::calibration::framework(f).lora_dropout);
    let h = spec.hidden as f64;
    let ffn_inputs = if spec.gated_ffn { 2.0 * h } else { h } + spec.ffn as f64;
    let inputs = match workload.lora_targets {
        LoraTargets::QueryValue => 2.0 * h,
        LoraTargets::Attention => 3.0 * h + spec.attention_width() as f64,
        LoraTargets::AllLinear | LoraTargets::AllLinearAndHead => 3.0 * h + spec.attention_width() as f64 + ffn_inputs,
    };
    let copy = activation_bytes(workload.precision) + 1.0;
    let kept = if dropout > 0.0 {
        inputs * copy * layers as f64
    } else {
        0.0
    };
    let head = if workload.lora_targets == LoraTargets::AllLinearAndHead {
        spec.vocab as f64 * activation_bytes(workload.precision) + if dropout > 0.0 { h * copy } else { 0.0 }
    } else {
        0.0
    };
    kept + head
}

/// Parameters of the routed experts that expert parallelism moves off each GPU: with `ep`
/// ranks, each keeps `1/ep` of them.
pub fn expert_parameters_elsewhere(spec: &TransformerSpec, split: f64) -> f64 {
    expert_parameters(spec) * (1.0 - 1.0 / split.max(1.0))
}

/// Parameters of every routed expert of a mixture-of-experts model (0 for a dense one).
pub fn expert_parameters(spec: &TransformerSpec) -> f64 {
    spec.moe.map_or(0.0, |moe| {
        let matrices = if spec.gated_ffn { 3 } else { 2 };
        let layers = spec.layers.saturating_sub(moe.dense_layers);
        (layers * moe.experts * matrices * spec.hidden * moe.expert_ffn) as f64
    })
}

/// Whether full training keeps no fp32 master copy: a framework that trains purely in its
/// low precision (torchtune), at a precision below 32 bits.
pub(crate) fn trains_purely_in_low_precision(workload: &Workload) -> bool {
    !matches!(workload.task, Task::Lora | Task::Qlora)
        && activation_bytes(workload.precision) < 4.0
        && workload
            .framework
            .is_some_and(|f| calibration::framework(f).pure_low_precision)
}

/// Optimizer state per parameter when training runs purely in 16 bits: the moments in the
/// parameters' dtype and no master copy (AdamW's two moments: 4 bytes, not 12).
fn pure_optimizer_bytes(optimizer: gpuplan_model::Optimizer) -> f64 {
    use gpuplan_model::Optimizer;
    match optimizer {
        Optimizer::AdamW | Optimizer::PagedAdamW => 4.0,
        Optimizer::Adam8bit | Optimizer::PagedAdam8bit => 2.0,
        Optimizer::SgdMomentum => 2.0,
        Optimizer::Adafactor => 0.1,
    }
}

fn gib(value: f64) -> Bytes {
    Bytes::from_gib(value)
}

fn runtime_overhead(gpus: u32) -> Bytes {
    gib(cuda_context_gib() + if gpus > 1 { nccl_buffers_gib() } else { 0.0 })
}

/// Memory of a workload that keeps no KV cache, each part in bytes (truncated to whole bytes);
/// `per_gpu` is their sum with `overhead`.
pub(crate) fn without_kv_cache(
    weights: f64,
    gradients: f64,
    optimizer: f64,
    activations: f64,
    overhead: Bytes,
    capacity: Bytes,
) -> MemoryEstimate {
    let parts = [weights, gradients, optimizer, activations].map(|b| Bytes(b as u64));
    MemoryEstimate {
        weights: parts[0],
        gradients: parts[1],
        optimizer: parts[2],
        activations: parts[3],
        kv_cache: Bytes::ZERO,
        overhead,
        per_gpu: parts.iter().fold(overhead, |sum, part| sum + *part),
        paged_optimizer: Bytes::ZERO,
        capacity,
    }
}

/// The CUDA context plus the allocator's fragmentation of what changes every step
/// (activations and gradients), for one GPU training alone.
pub(crate) fn training_overhead(activations: f64, gradients: f64) -> Bytes {
    gib(cuda_context_gib()) + Bytes(((activations + gradients) * allocator_fragmentation()) as u64)
}

/// Capacity a workload may use on `accelerator`.
pub fn capacity(accelerator: &Accelerator, workload: &Workload) -> Bytes {
    let usable = accelerator.usable_memory();
    if workload.task == Task::Inference && workload.engine.continuous_batching() {
        let scheduler = crate::serving::scheduler(workload.engine, accelerator, &workload.engine_settings);
        if scheduler.memory_of_free {
            return usable;
        }
        Bytes((usable.as_u64() as f64 * scheduler.memory_fraction) as u64)
    } else {
        usable
    }
}

/// Training memory of a transformer on the busiest GPU (the first pipeline stage).
pub fn training(
    spec: &TransformerSpec,
    counts: &ParameterCount,
    workload: &Workload,
    accelerator: &Accelerator,
    seq: u64,
    gpus: u32,
) -> MemoryEstimate {
    let layout = workload.layout;
    let model_split = f64::from(layout.tp) * f64::from(layout.pp);
    // ZeRO and FSDP shard over every rank that holds the same weights: the data-parallel
    // replicas and, within each, the context-parallel ranks (Megatron's distributed optimizer
    // shards over its data-parallel-with-context group, torchtitan's FSDP over dp_shard × cp).
    let dp = f64::from(layout.dp) * f64::from(layout.cp.max(1));
    let task = workload.task;
    let precision = workload.precision;

    let embedding_params = (counts.embedding + counts.output_head) as f64;
    let elsewhere = expert_parameters_elsewhere(spec, layout.expert_split());
    let body_params = counts.total as f64 - embedding_params - elsewhere;
    let mut weights = (body_params * weight_bytes(task, precision)
        + embedding_params * embedding_bytes(task, precision))
        / model_split;
    let trainable = match task {
        Task::Lora | Task::Qlora => lora_parameters(spec, workload.lora_rank, workload.lora_targets) as f64,
        _ => counts.total as f64 - elsewhere,
    } / model_split;
    let mut gradients = trainable * gradient_bytes(task, precision);
    let pure = trains_purely_in_low_precision(workload);
    let per_parameter = if pure {
        pure_optimizer_bytes(workload.optimizer)
    } else {
        optimizer_bytes(task, precision, workload.optimizer)
    };
    let mut optimizer = trainable * per_parameter;
    // Paged optimizers keep their states (not a master copy) in managed memory.
    let mut paged = if workload.optimizer.paged() {
        trainable
            * if pure {
                per_parameter
            } else {
                optimizer_state_bytes(workload.optimizer)
            }
    } else {
        0.0
    };
    optimizer -= paged;
    match task {
        Task::Lora | Task::Qlora => {
            if layout.zero >= 3 {
                // FSDP shards the frozen base as well (torchtune's multi-GPU QLoRA recipes).
                let layer = counts.layers as f64 / (spec.layers + spec.decoder_layers).max(1) as f64;
                weights = weights / dp + 2.0 * layer * weight_bytes(task, precision) / f64::from(layout.tp);
            }
            weights += trainable * 4.0;
        }
        _ => {
            // The experts this GPU holds are sharded only over the ranks that hold the same ones
            // (the expert-data-parallel group), the rest of the model over every replica:
            // Megatron-Core reduces and shards expert parameters over `expt_dp` and the rest over
            // `dp_cp` (megatron/core/optimizer), as DeepSpeed-MoE and torchtitan's FSDP with
            // expert parallelism do. Per GPU that is all the experts' states over all the ranks,
            // not this GPU's experts over all of them.
            let experts_here = ((expert_parameters(spec) - elsewhere) / model_split).clamp(0.0, trainable);
            let expert_share = if trainable > 0.0 { experts_here / trainable } else { 0.0 };
            let expert_dp = layout.expert_replicas(dp);
            let shard = |bytes: f64| bytes * (1.0 - expert_share) / dp + bytes * expert_share / expert_dp;
            if layout.zero >= 1 {
                optimizer = shard(optimizer);
                paged = shard(paged);
            }
            if layout.zero >= 2 {
                gradients = shard(gradients);
            }
            if layout.zero >= 3 {
                // Sharded parameters, plus the layers gathered ahead of use (prefetch of about
                // two layers, FSDP/DeepSpeed defaults).
                let layer = counts.layers as f64 / (spec.layers + spec.decoder_layers).max(1) as f64;
                let expert_weights = experts_here * weight_bytes(task, precision);
                weights = (weights - expert_weights) / dp
                    + expert_weights / expert_dp
                    + 2.0 * layer * weight_bytes(task, precision) / f64::from(layout.tp);
            }
        }
    }

    let layer = counts.layers as f64 / (spec.layers + spec.decoder_layers).max(1) as f64;
    if workload.offload.optimizer {
        // Optimizer states and master weights live on the host; gradients leave for it after
        // their reduction, one layer's bucket at a time.
        optimizer = 0.0;
        paged = 0.0;
        gradients = gradients.min(2.0 * layer * gradient_bytes(task, precision) / f64::from(layout.tp));
    }
    if workload.optimizer_in_backward {
        // Each gradient is applied and freed once complete: the largest parameter's (the
        // embedding table, or a feed-forward matrix) is the most held at once.
        let largest = (spec.vocab.max(spec.ffn) * spec.hidden) as f64 / f64::from(layout.tp);
        gradients = gradients.min(largest * gradient_bytes(task, precision));
    }
    if workload.offload.parameters {
        // Only the layers being used (and the next, prefetched) are on the GPU.
        weights = 2.0 * layer * weight_bytes(task, precision) / f64::from(layout.tp)
            + if matches!(task, Task::Lora | Task::Qlora) {
                trainable * 4.0
            } else {
                0.0
            };
    }

    // Activations: micro-batch tokens through this stage's layers, times the micro-batches
    // in flight under 1F1B, split by tensor (and sequence) parallelism.
    let layers_here = (spec.layers + spec.decoder_layers).div_ceil(u64::from(layout.pp));
    let micro_batches = (workload.batch / (workload.micro_batch * u64::from(layout.dp)).max(1)).max(1);
    let in_flight = u64::from(layout.pp).min(micro_batches) as f64;
    // Context parallelism gives each GPU 1/cp of every sequence.
    let tokens = (workload.micro_batch * seq) as f64 / f64::from(layout.cp.max(1));
    let scale = activation_bytes(precision) / 2.0;
    let mut per_token =
        activations::stack_bytes_per_token(spec, layers_here, seq, workload.flash_attention, workload.checkpointing);
    let eight_bit = precision.bits() <= 8 && task.is_training() && !matches!(task, Task::Qlora);
    // (Recomputed norms keep no 16-bit linear inputs to halve; the rest of that mode's savings
    // is not claimed.)
    if eight_bit && matches!(workload.checkpointing, Checkpointing::None | Checkpointing::Selective) {
        per_token -= layers_here as f64 * activations::eight_bit_linear_input_savings(spec);
    }
    let mut activation = per_token * tokens * in_flight * scale / f64::from(layout.tp);
    if workload.offload.activations && layers_here > 2 {
        // What every layer keeps goes to the host; the GPU holds the layer being worked on
        // and the copies in flight either side of it.
        activation *= 2.0 / layers_here as f64;
    }
    if task == Task::Qlora {
        activation *= qlora_activation_factor();
    }
    if matches!(task, Task::Lora | Task::Qlora) {
        activation +=
            tokens * in_flight * lora_activation_bytes_per_token(spec, workload, layers_here) / f64::from(layout.tp);
    }
    if spec.generates() {
        // The output layer's logits for the loss (on the last stage; counted here as the
        // busiest stage holds the embedding when pp = 1).
        activation += tokens * spec.vocab as f64 * calibration::logit_bytes(workload.framework) / f64::from(layout.tp);
    }
    let dynamic = (activation + gradients) * allocator_fragmentation();

    let weights = Bytes(weights as u64);
    let gradients = Bytes(gradients as u64);
    let optimizer = Bytes(optimizer as u64);
    let activations = Bytes(activation as u64);
    let overhead = runtime_overhead(gpus) + Bytes(dynamic as u64);
    MemoryEstimate {
        weights,
        gradients,
        optimizer,
        activations,
        kv_cache: Bytes::ZERO,
        overhead,
        per_gpu: weights + gradients + optimizer + activations + overhead,
        paged_optimizer: Bytes(paged as u64),
        capacity: capacity(accelerator, workload),
    }
}

/// Serving memory of a transformer on each GPU of a tensor/pipeline-parallel group.
/// Parameters of the routed experts of a mixture of experts, all layers (0 for a dense model).
pub fn routed_expert_parameters(spec: &TransformerSpec) -> u64 {
    spec.moe.map_or(0, |moe| {
        let one = if spec.gated_ffn { 3 } else { 2 } * spec.hidden * moe.expert_ffn;
        moe.experts * one * spec.layers.saturating_sub(moe.dense_layers)
    })
}

pub fn inference(
    spec: &TransformerSpec,
    counts: &ParameterCount,
    workload: &Workload,
    accelerator: &Accelerator,
    kv_bytes_per_token_gpu: f64,
) -> MemoryEstimate {
    let layout = workload.layout;
    let model_split = f64::from(layout.tp) * f64::from(layout.pp);
    let embedding_params = (counts.embedding + counts.output_head) as f64;
    // A serving replica spreads its experts over its own tensor-parallel GPUs (whole experts
    // or slices of every one, the same bytes per GPU), so expert parallelism moves none away.
    let body_params = counts.total as f64 - embedding_params;
    let sixteen_bit = crate::precision_bytes::sixteen_bit_layer_parameters(spec, workload.precision);
    let weights = match crate::precision_bytes::served_file_bytes(spec, workload) {
        Some(bytes) => counts.total as f64 * bytes / model_split,
        None => {
            ((body_params - sixteen_bit) * served_weight_bytes(spec, accelerator, workload.precision)
                + sixteen_bit * 2.0
                + embedding_params * embedding_bytes(Task::Inference, workload.precision))
                / model_split
        }
    };
    // Attention data parallelism keeps everything but the routed experts whole on every GPU.
    let weights = if layout.attention_dp && layout.tp > 1 {
        let experts =
            routed_expert_parameters(spec) as f64 * served_weight_bytes(spec, accelerator, workload.precision);
        let tp = f64::from(layout.tp);
        // (dense + experts) / (tp·pp) per GPU before; dense / pp + experts / (tp·pp) now.
        weights * tp - experts * (tp - 1.0) / tp / f64::from(layout.pp)
    } else {
        weights
    };
    let context = workload.seq + workload.output_tokens;
    let kv = if spec.generates() {
        kv_bytes_per_token_gpu * (workload.batch * context) as f64 / f64::from(layout.pp)
    } else {
        0.0
    };
    // Transient activations of one layer during prefill, plus the last position's logits.
    let prefill_tokens = match workload.engine {
        Engine::Pytorch => workload.batch * workload.seq,
        _ => (workload.batch * workload.seq).min(serving_prefill_chunk_tokens()),
    } as f64;
    let width = (4 * spec.hidden + 2 * spec.kv_width() + 3 * spec.ffn) as f64;
    let activation =
        prefill_tokens * width * 2.0 / f64::from(layout.tp) + workload.batch as f64 * spec.vocab as f64 * 4.0;

    let weights = Bytes(weights as u64);
    let kv_cache = Bytes(kv as u64);
    let activations = Bytes(activation as u64);
    let overhead = runtime_overhead(layout.gpus());
    MemoryEstimate {
        weights,
        gradients: Bytes::ZERO,
        optimizer: Bytes::ZERO,
        activations,
        kv_cache,
        overhead,
        per_gpu: weights + kv_cache + activations + overhead,
        paged_optimizer: Bytes::ZERO,
        capacity: capacity(accelerator, workload),
    }
}
