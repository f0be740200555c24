//! Serving speed: prefill (compute-bound) and decode (bound by the larger of memory traffic
//! and compute), with a fixed per-step cost that depends on the engine.
//!
//! References:
//! - Pope et al. 2022 ("Efficiently Scaling Transformer Inference"), §2–3: decode reads all
//!   weights and the KV cache every step, so small batches are memory-bound; prefill is
//!   compute-bound.
//! - Kwon et al. 2023 ("Efficient Memory Management for LLM Serving with PagedAttention"):
//!   the number of concurrent sequences is bounded by the memory left for the KV cache.

use crate::efficiency::{
    all_reduce_round_seconds, engine_profile, hidden_size_at_half_efficiency, low_precision_decode_factor,
    serving_grouped_gemm_factor, serving_moe_expert_seconds, training_peak_fraction,
};
use crate::notes::Notes;
use gpuplan_model::{Accelerator, Engine, FlopsPerSecond, Precision, Workload};
use serde::Serialize;

/// What bounds a decode step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Memory,
    Compute,
    /// The host's kernel launches take longer than the GPU's work (small diffusion passes).
    Overhead,
}

/// How fast serving runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InferenceEstimate {
    /// Time to first token: prefill of the batch's prompts.
    pub ttft_seconds: f64,
    /// Time per output token (one decode step) at the average context length.
    pub tpot_seconds: f64,
    /// Output tokens per second over the batch, prefill included.
    pub output_tokens_per_second: f64,
    /// Completed requests per second with `batch` sequences in flight.
    pub requests_per_second: f64,
    /// Sequences of this length whose KV cache fits beside the weights.
    pub max_concurrent_sequences: u64,
    /// End-to-end latency of one request.
    pub request_latency_seconds: f64,
    pub decode_bound: Bound,
    /// Host memory the layers llama.cpp keeps there hold, with their KV cache, where it keeps
    /// any (`--gpu-layers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_memory_bytes: Option<u64>,
}

/// The model quantities serving needs, per GPU of a tensor-parallel group.
#[derive(Debug, Clone, Copy)]
pub struct InferenceShape {
    pub layers: u64,
    /// llama.cpp's layers left on the host, where some are.
    pub host: Option<crate::host_offload::HostOffload>,
    /// Routed experts summed over the mixture-of-experts layers, where their weights are
    /// quantised to 8 bits or fewer (0 for a dense model and for 16-bit experts): what the
    /// per-expert work of a quantised grouped GEMM (activation quantisation, scales, launches)
    /// costs an iteration.
    pub scaled_expert_layers: u64,
    /// Parameters of the routed experts a token passes through (whole model), and the GPUs of
    /// the replica its experts are spread over whole (1: every expert split across the
    /// tensor-parallel GPUs).
    pub expert_matmul_parameters: f64,
    pub expert_parallel: u32,
    pub hidden: u64,
    /// Vocabulary entries a sampler looks at for each sequence every step.
    pub vocab: u64,
    /// Parameters in matmuls per token (active experts only), whole model.
    pub matmul_parameters: f64,
    /// Of which the checkpoint keeps in 16 bits beside lower-precision layers, multiplied at
    /// the 16-bit rate ([`crate::precision_bytes::sixteen_bit_layer_parameters`]).
    pub sixteen_bit_matmul_parameters: f64,
    /// Of which the output layer's logits projection (vocabulary × hidden; 0 for encoders). It
    /// runs only for the tokens that yield an output, and in 16 bits whatever the weights'
    /// precision (the served checkpoints leave it unquantised).
    pub logits_matmul_parameters: f64,
    /// Forward attention FLOPs per token at a given context, whole model: `a × context`.
    pub attention_flops_per_token_per_context: f64,
    /// The same for a generated token, which latent attention scores in its absorbed form.
    pub decode_attention_flops_per_token_per_context: f64,
    /// Softmax exponentials per token at a given context, whole model
    /// ([`crate::flops::attention_exponentials_per_token`]).
    pub attention_exponentials_per_token_per_context: f64,
    /// Whether the matmuls multiply 4-bit weights by 4-bit activations at the part's 4-bit
    /// rate (NVFP4 on Blackwell), rather than by wider ones.
    pub four_bit_matmuls: bool,
    /// Weight bytes read per decode step on one GPU with all experts touched.
    pub weight_bytes_gpu: f64,
    /// Of which bytes belong to routed experts (MoE), and the share each token uses.
    pub expert_bytes_gpu: f64,
    pub expert_share_per_token: f64,
    pub kv_bytes_per_token_gpu: f64,
    /// Memory left for KV cache on one GPU.
    pub kv_budget_bytes: f64,
    /// Activation bytes one sequence needs when nothing is cached (encoders).
    pub activation_bytes_per_sequence: f64,
    /// Collective bandwidth between the GPUs of a tensor-parallel group, bytes/s.
    pub tensor_parallel_bandwidth: f64,
    pub generates: bool,
    /// What the quantised-weight kernel costs beyond the bytes: the weight phase as a multiple
    /// of reading the weights at their size, at one token and at several, and its GEMMs'
    /// efficiency as a share of the engine's.
    pub weight_time_factor_batch1: f64,
    pub weight_time_factor: f64,
    pub gemm_factor: f64,
    /// Attention data parallelism (mixture of experts): each GPU of the replica runs attention
    /// for its own sequences, and the MoE layers exchange tokens by all-to-all instead of the
    /// tensor-parallel all-reduces.
    pub attention_data_parallel: bool,
    /// Layers whose feed-forward is a mixture of experts, and the experts each token visits.
    pub moe_layers: u64,
    pub experts_per_token: u64,
    /// The narrowest dimension of one routed expert's GEMMs on one GPU: its feed-forward width,
    /// split by the tensor parallelism the experts share (0 without experts).
    pub expert_width: f64,
    /// Bytes per value a token's hidden state is sent to its experts in (the engines quantise
    /// the dispatch to 8 bits with 8-bit or 4-bit weights); it comes back in 16 bits.
    pub dispatch_bytes: f64,
    /// Bytes a value the engine's MoE kernel reads and writes to copy each expert row into
    /// expert order before the first GEMM: twice the activations' size, which TensorRT-LLM
    /// quantises per token before the layer (16-bit, 8-bit, or NVFP4's 4 bits with an 8-bit
    /// scale per 16); 0 where the rows are gathered inside the GEMM (vLLM, SGLang).
    pub expert_row_copy_bytes: f64,
}

impl InferenceShape {
    /// How fast an expert's GEMMs run against the model's dense ones: the engines' grouped
    /// GEMMs run at [`serving_grouped_gemm_factor`] of a dense GEMM's rate, and each multiplies
    /// by a matrix as narrow as the expert's feed-forward width on one GPU, whose efficiency
    /// falls with the narrow dimension as w/(w + h½) (the training estimator's law, h½ = 400):
    /// Qwen3-235B's 1,536-wide experts split over 8 GPUs lose two thirds of the rate to their
    /// width, Mixtral's 14,336-wide ones none.
    pub fn expert_gemm_efficiency(&self) -> f64 {
        if self.expert_width <= 0.0 {
            return 1.0;
        }
        self.expert_width_efficiency() * serving_grouped_gemm_factor()
    }

    /// The narrow expert's GEMM efficiency against the model's dense width (at most 1).
    pub fn expert_width_efficiency(&self) -> f64 {
        let law = |width: f64| width / (width + hidden_size_at_half_efficiency());
        (law(self.expert_width) / law(self.hidden as f64)).min(1.0)
    }

    /// The active matmul parameters a token multiplies by, counted at the dense GEMMs' rate,
    /// with the experts' share scaled by `expert_imbalance` (the busiest GPU's load over an even
    /// one; 1 where the experts are not spread).
    pub fn matmul_parameters_at_dense_rate(&self, expert_imbalance: f64) -> f64 {
        let experts = self.expert_matmul_parameters;
        (self.matmul_parameters - experts).max(0.0) + experts * expert_imbalance / self.expert_gemm_efficiency()
    }

    /// Seconds a token takes on one of `tp` GPUs in the matmuls kept in 16 bits, at
    /// `sixteen_bit_rate` FLOP/s, beyond what they would take at the precision's `rate`.
    pub fn sixteen_bit_seconds_per_token(&self, tp: f64, rate: f64, sixteen_bit_rate: Option<f64>) -> f64 {
        match sixteen_bit_rate {
            Some(slow) if self.sixteen_bit_matmul_parameters > 0.0 && slow > 0.0 => {
                (2.0 * self.sixteen_bit_matmul_parameters / tp * (1.0 / slow - 1.0 / rate)).max(0.0)
            }
            _ => 0.0,
        }
    }

    /// The logits projection's FLOPs per token that yields an output, on one of `tp` GPUs.
    pub fn logits_flops(&self, tp: f64) -> f64 {
        2.0 * self.logits_matmul_parameters / tp
    }

    /// Bytes one GPU moves through its memory per token to route it through its experts,
    /// beyond the expert GEMMs' own traffic: a fused MoE layer handles each of a token's `k`
    /// expert rows apart, and the weighted combine reads the second GEMM's 16-bit output rows
    /// back (2 bytes a value). TensorRT-LLM's CUTLASS MoE also copies each row into expert
    /// order before the first GEMM (its expandInputRows kernel reads and writes it:
    /// [`Self::expert_row_copy_bytes`]); the Triton fused_moe of vLLM and SGLang gathers the
    /// rows inside the GEMM instead. So `(c + 2)·h` bytes a row and MoE layer. What the GEMMs
    /// read and write is in their efficiency (narrow experts' GEMMs are bound by those bytes,
    /// as [`Self::expert_gemm_efficiency`] says). Every GPU that splits the experts handles all
    /// the rows (tensor-parallel experts); experts placed whole spread them over their GPUs.
    /// With attention data parallelism TensorRT-LLM gathers every rank's tokens onto each GPU
    /// before the layer and reduce-scatters after it, so its combine writes a 16-bit partial
    /// output for every gathered token (`2h` a token and MoE layer).
    pub fn expert_row_bytes_per_token(&self) -> f64 {
        if self.moe_layers == 0 || self.experts_per_token == 0 {
            return 0.0;
        }
        let per_value = self.expert_row_copy_bytes + 2.0;
        let rows = self.moe_layers as f64 * self.experts_per_token as f64 * per_value * self.hidden as f64
            / f64::from(self.expert_parallel.max(1));
        let gathered = if self.attention_data_parallel && self.expert_row_copy_bytes > 0.0 {
            self.moe_layers as f64 * 2.0 * self.hidden as f64
        } else {
            0.0
        };
        rows + gathered
    }

    /// The replica's collectives per iteration with `tp` GPUs: seconds whatever the tokens
    /// (latency) and seconds per token (volume). Tensor-parallel attention all-reduces the
    /// hidden state twice a layer (a ring: `2(tp − 1)/tp` of it through each GPU's link);
    /// attention data parallelism sends each token to its experts and back once per MoE
    /// layer, each GPU carrying its `1/tp` of the tokens to the `(tp − 1)/tp` of the experts
    /// on other GPUs (DeepEP's and the engines' dispatch and combine).
    pub fn collective_seconds(&self, tp: f64) -> (f64, f64) {
        if tp <= 1.0 {
            return (0.0, 0.0);
        }
        let hidden = self.hidden as f64;
        if self.attention_data_parallel {
            let layers = self.moe_layers as f64;
            let per_token = layers * self.experts_per_token as f64 * hidden * (self.dispatch_bytes + 2.0) * (tp - 1.0)
                / tp
                / tp
                / self.tensor_parallel_bandwidth;
            return (2.0 * layers * all_reduce_latency(tp), per_token);
        }
        let layers = self.layers as f64;
        (
            2.0 * layers * all_reduce_latency(tp),
            2.0 * layers * 2.0 * (tp - 1.0) / tp * hidden * 2.0 / self.tensor_parallel_bandwidth,
        )
    }

    /// The weight phase's multiple of the bytes' read time with `tokens` per step.
    pub fn weight_factor(&self, tokens: f64) -> f64 {
        if tokens <= 1.0 {
            self.weight_time_factor_batch1
        } else {
            self.weight_time_factor
        }
    }
}

pub fn estimate(
    accelerator: &Accelerator,
    peak: FlopsPerSecond,
    workload: &Workload,
    shape: &InferenceShape,
    notes: &mut Notes,
) -> InferenceEstimate {
    let profile = engine_profile(workload.engine);
    let tp = f64::from(workload.layout.tp);
    // A static batch passes the pipeline's stages one after another, each reading the weights
    // and KV cache its GPUs hold: the memory traffic of one pass is the stages' sum.
    let stages = f64::from(workload.layout.pp.max(1));
    let batch = workload.batch as f64;
    let seq = workload.seq as f64;
    let out = workload.output_tokens as f64;
    // The memory bandwidth the engine's kernels reach on this part.
    let bandwidth =
        accelerator.memory_bandwidth.map_or(f64::INFINITY, |b| b.0) * profile.decode_bandwidth_fraction_on(accelerator);
    let layers = shape.layers as f64;
    let (sync_fixed, sync_per_token) = shape.collective_seconds(tp);
    let tp_sync = |tokens: f64| sync_fixed + sync_per_token * tokens;
    let fixed = profile.step_overhead_seconds
        + profile.per_layer_overhead_seconds * layers
        + serving_moe_expert_seconds() * shape.scaled_expert_layers as f64 / f64::from(shape.expert_parallel.max(1));

    // Prefill: every prompt token through every layer's weights, and the logits projection
    // once a prompt, for its last token; causal attention averages half the prompt, an
    // encoder's bidirectional attention covers all of it.
    let attended = if shape.generates { seq / 2.0 } else { seq };
    let layer_matmul = shape.matmul_parameters_at_dense_rate(1.0) - shape.logits_matmul_parameters;
    let prefill_flops = batch
        * (seq * (2.0 * layer_matmul + shape.attention_flops_per_token_per_context * attended) / tp
            + shape.logits_flops(tp));
    let prefill_fraction = if shape.generates {
        profile.prefill_peak_fraction
    } else {
        encoder_fraction(accelerator, workload, batch * seq, notes)
    };
    let prefill_rate = peak.0 * prefill_fraction * shape.gemm_factor;
    let sixteen_bit_rate = accelerator
        .peak(Precision::Bf16)
        .map(|bf16| bf16.0 * prefill_fraction * shape.gemm_factor);
    let prefill_compute = prefill_flops / prefill_rate
        + batch * seq * shape.sixteen_bit_seconds_per_token(tp, prefill_rate, sixteen_bit_rate);
    let prefill_memory = stages * shape.weight_bytes_gpu * shape.weight_factor(batch * seq) / bandwidth;
    let host_prefill = shape.host.map_or(0.0, |h| h.prefill_seconds(batch * seq));
    // The routed experts' rows pass through memory in kernels of their own, after the whole
    // model's stages, one after another.
    let expert_row_bytes = shape.expert_row_bytes_per_token();
    let expert_rows = |tokens: f64| tokens * expert_row_bytes / bandwidth;
    let ttft = prefill_compute.max(prefill_memory)
        + expert_rows(batch * seq)
        + profile.step_overhead_seconds
        + profile.prefill_per_layer_overhead_seconds * layers
        + tp_sync(batch * seq)
        + host_prefill;

    // Decode at the average context of the generation.
    let context = seq + out / 2.0;
    let experts_touched = 1.0 - (1.0 - shape.expert_share_per_token).powf(batch);
    let weight_bytes =
        (shape.weight_bytes_gpu - shape.expert_bytes_gpu * (1.0 - experts_touched)) * shape.weight_factor(batch);
    let traffic = stages * (weight_bytes + batch * context * shape.kv_bytes_per_token_gpu);
    let decode_memory = traffic / bandwidth;
    let decode_flops = batch * (2.0 * layer_matmul + shape.decode_attention_flops_per_token_per_context * context) / tp;
    let low_precision = matches!(workload.precision, Precision::Fp8 | Precision::Int8);
    let decode_fraction = profile.decode_peak_fraction
        * if low_precision {
            low_precision_decode_factor()
        } else {
            1.0
        };
    let decode_compute = decode_flops / (peak.0 * decode_fraction * shape.gemm_factor)
        + batch * shape.logits_flops(tp)
            / (logits_peak(accelerator, peak, workload.precision) * profile.decode_peak_fraction);
    let (decode_core, bound) = if decode_memory >= decode_compute {
        (decode_memory, Bound::Memory)
    } else {
        (decode_compute, Bound::Compute)
    };
    // The host's layers run after the GPU's, each token waiting for both.
    let host_decode = shape.host.map_or(0.0, |h| h.decode_seconds(batch, context));
    let tpot = if shape.generates && out > 0.0 {
        decode_core + expert_rows(batch) + fixed + tp_sync(batch) + host_decode
    } else {
        0.0
    };

    let latency = ttft + out * tpot;
    let max_sequences = if shape.kv_bytes_per_token_gpu > 0.0 {
        (shape.kv_budget_bytes / (shape.kv_bytes_per_token_gpu * (seq + out).max(1.0)))
            .max(0.0)
            .floor() as u64
    } else {
        (shape.kv_budget_bytes / shape.activation_bytes_per_sequence.max(1.0))
            .max(0.0)
            .floor() as u64
    };
    notes.add(|| format!("engine profile: {}", profile.evidence));
    notes.add(|| {
        "TTFT is the prefill of the whole batch's prompts at once (a static batch); decode is timed at the \
         average context, prompt + half the output"
            .to_string()
    });
    InferenceEstimate {
        ttft_seconds: ttft,
        tpot_seconds: tpot,
        output_tokens_per_second: if latency > 0.0 { batch * out / latency } else { 0.0 },
        requests_per_second: if latency > 0.0 { batch / latency } else { 0.0 },
        max_concurrent_sequences: max_sequences,
        request_latency_seconds: latency,
        decode_bound: bound,
        host_memory_bytes: shape.host.map(|h| h.resident_bytes(batch * (seq + out)) as u64),
    }
}

/// Fraction of peak an encoder's forward pass reaches: the same matmuls as a training forward
/// pass, so the training fraction for the architecture with its batch-size factor, scaled by
/// how the engine compares with PyTorch eager. Training's width factor is left out: it reflects
/// small training micro-batches, while a served batch of thousands of tokens fills the GPU
/// (timm's ViT-B/16 runs at ≈ 60 % of an RTX 4090's peak at batch 1024).
fn encoder_fraction(accelerator: &Accelerator, workload: &Workload, tokens: f64, notes: &mut Notes) -> f64 {
    let (base, _) = training_peak_fraction(accelerator, workload.precision);
    let batch = crate::training::micro_batch_efficiency(tokens);
    let engine =
        engine_profile(workload.engine).prefill_peak_fraction / engine_profile(Engine::Pytorch).prefill_peak_fraction;
    let fraction = (base * batch * engine).min(1.0);
    notes.add(|| {
        format!(
            "an encoder's forward pass runs at the training matmul efficiency for its batch: {:.0} % of peak",
            fraction * 100.0
        )
    });
    fraction
}

/// Bytes a value an engine's MoE kernel reads and writes to copy an expert row into expert
/// order ([`InferenceShape::expert_row_copy_bytes`]): TensorRT-LLM quantises a token's
/// activations before the layer (fp8, or NVFP4's 4 bits with an 8-bit scale per 16) and copies
/// them at that size; vLLM and SGLang gather the rows inside the GEMM.
pub fn expert_row_copy_bytes(engine: Engine, precision: Precision) -> f64 {
    if engine != Engine::TensorrtLlm {
        return 0.0;
    }
    2.0 * match precision {
        Precision::Fp4 => crate::precision_bytes::NVFP4_BYTES_PER_PARAMETER,
        p if p.bits() <= 8 => 1.0,
        _ => 2.0,
    }
}

/// One all-reduce's latency beyond its bytes in a group of `n` GPUs: a launch and
/// synchronisation round, then the log₂ n exchanges of a latency-bound tree or recursive
/// doubling, each a round of the fitted constant.
pub fn all_reduce_latency(n: f64) -> f64 {
    all_reduce_round_seconds() * (1.0 + n.max(1.0).log2())
}

/// The rate the logits projection multiplies at, FLOP/s of dense peak: the 16-bit rate where
/// the weights are quantised to 8 bits or fewer, since served checkpoints keep the output layer
/// in 16 bits (ModelOpt's fp8 and NVFP4 exports list `lm_head` among the excluded modules;
/// vLLM's fp8, AWQ and GPTQ methods quantise the layers' linear modules, not the LM head;
/// bitsandbytes skips `lm_head`) and low-precision training leaves it there too, and the
/// precision's own rate otherwise (or where the GPU states no 16-bit peak).
pub(crate) fn logits_peak(accelerator: &Accelerator, peak: FlopsPerSecond, precision: Precision) -> f64 {
    if precision.bits() > 8 {
        return peak.0;
    }
    accelerator
        .peak(Precision::Bf16)
        .or(accelerator.peak(Precision::Fp16))
        .unwrap_or(peak)
        .0
}
