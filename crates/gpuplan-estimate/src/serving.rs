//! Serving with continuous batching: one replica (a tensor-parallel group) running an
//! iteration-level scheduler at an offered load, with latency percentiles.
//!
//! The engine runs in iterations. Each iteration decodes one token for every running
//! sequence and fills the rest of its token budget with prompt chunks of waiting requests
//! (chunked prefill). How long an iteration takes follows the roofline of the work in it:
//! the weights and the running sequences' KV cache are read once, every token costs its
//! matmul and attention FLOPs, plus the engine's fixed time per step.
//!
//! At an offered load of λ requests/s (Poisson arrivals) with mean prompt `I` and output
//! `O`, the steady state holds N = λ·O·s sequences decoding and λ·I·s prompt tokens per
//! iteration of mean length s, which makes s the fixed point of the step cost. From it:
//! - time per output token: a request sees the decode-only step plus the prefill chunks that
//!   join during its life (Poisson, with mean N), averaged over its output;
//! - time to first token: the rest of the current step, the wait for prompt budget (an M/G/1
//!   queue whose server is the per-step budget left by decodes: Pollaczek–Khinchine mean,
//!   exponential tail), and the prefill of its own prompt;
//! - goodput: the highest load whose percentiles meet the targets; capacity: the KV cache
//!   bounds the concurrent sequences, the engine's `max_num_seqs` too.
//!
//! References: Yu et al. 2022 (Orca, iteration-level scheduling); Kwon et al. 2023
//! (PagedAttention); Agrawal et al. 2024 (Sarathi-Serve, chunked prefills and generation
//! stalls); Zhong et al. 2024 (DistServe, goodput under TTFT/TPOT targets); Kleinrock 1975,
//! Queueing Systems vol. 1, §5.6 (M/G/1 waiting time) and Kingman's exponential tail.

use crate::decode_iterations::DecodeIterations;
use crate::efficiency::{
    engine_profile, release_profile, serving_architecture_factor, serving_eager_seconds_per_layer,
    serving_eight_bit_gemm_factor, serving_expert_imbalance, serving_four_bit_gemm_factor, serving_gemm_half_tokens,
    serving_moe_expert_seconds, serving_roofline_knee, serving_sort_seconds_per_logit,
};
use crate::inference::InferenceShape;
use crate::prompt_queue::{OWN_POINTS, OWN_SHARES, PromptQueue};
use gpuplan_model::{
    Accelerator, Engine, EngineSettings, FlopsPerSecond, LatencyTarget, ParallelLayout, PipelineLimits, Precision,
    RequestMix, Sampling,
};
use serde::Serialize;

/// What an engine's scheduler allows per iteration by default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scheduler {
    /// Tokens (decodes plus prompt chunks) one iteration processes at most.
    pub token_budget: f64,
    /// Sequences running at once at most.
    pub max_sequences: f64,
    /// Fraction of GPU memory the engine takes for weights, activations and KV cache; with
    /// `memory_of_free`, the fraction of the memory left after them that the KV cache takes.
    pub memory_fraction: f64,
    /// The fraction is of the memory free once the weights are loaded (TensorRT-LLM's
    /// `free_gpu_memory_fraction`), not of the whole GPU (vLLM's `gpu_memory_utilization`).
    pub memory_of_free: bool,
    /// KV cache reserved for a sequence's whole context on admission (no eviction), rather
    /// than grown block by block.
    pub reserves_full_context: bool,
    /// New prompts wait until they are this share of the running sequences, or for this many
    /// steps (TGI's `waiting_served_ratio` and `max_waiting_tokens`); `None`: admitted at once.
    pub batch_wait: Option<(f64, f64)>,
    /// Iterations scheduled at once (vLLM 0.5–0.6 `--num-scheduler-steps`): new prompts join
    /// only between such runs. 1 in every current engine's default.
    pub steps_per_schedule: f64,
    /// Prompts are prefilled inside the decode iterations (vLLM's chunked prefill,
    /// TensorRT-LLM's in-flight batching); otherwise a prefill-only iteration runs while
    /// every decoding sequence waits (SGLang without `--enable-mixed-chunk`, TGI, vLLM 0.6
    /// without chunked prefill).
    pub mixes_prefill: bool,
    /// Prompts longer than the iteration's room are cut into chunks (vLLM's and SGLang's
    /// chunked prefill, TensorRT-LLM's chunked context). TensorRT-LLM's in-flight batching
    /// runs prompts beside the decodes with its chunked context off too, each whole.
    pub chunks_prompts: bool,
    pub evidence: &'static str,
    /// How a pipeline's micro-batches share the limits (the release's, where it differs).
    pub pipeline_limits: PipelineLimits,
    /// Parts that each take up to the token budget given (pipeline micro-batches, and
    /// TensorRT-LLM's attention data-parallel ranks): `token_budget` is their sum.
    pub token_parts: f64,
    /// Parts that each run up to the sequences given: `max_sequences` is their sum.
    pub sequence_parts: f64,
    /// The release and knobs the user gave, applied over the defaults above.
    pub given: EngineSettings,
}

impl Scheduler {
    /// The release's defaults, then the knobs given.
    fn with(mut self, engine: Engine, given: &EngineSettings) -> Scheduler {
        if let Some(profile) = release_profile(engine, given) {
            if let Some(chunked) = profile.chunked_prefill {
                self.set_chunked_prefill(engine, chunked);
            }
            if let Some(seqs) = profile.max_num_seqs {
                self.max_sequences = seqs;
            }
            if let Some(limits) = profile.pipeline_limits {
                self.pipeline_limits = limits;
            }
        }
        if let Some(seqs) = given.max_num_seqs {
            self.max_sequences = f64::from(seqs);
        }
        if let Some(tokens) = given.max_num_batched_tokens {
            self.token_budget = f64::from(tokens);
        }
        if let Some(steps) = given.scheduler_steps {
            self.steps_per_schedule = f64::from(steps.max(1));
        }
        if let Some(chunked) = given.chunked_prefill {
            self.set_chunked_prefill(engine, chunked);
        }
        if let Some(reserve) = given.reserve_full_context {
            self.reserves_full_context = reserve;
        }
        if let Some(fraction) = given.gpu_memory_fraction {
            self.memory_fraction = fraction;
        }
        self.given = *given;
        self
    }

    /// Chunked prefill on or off. TensorRT-LLM batches prompts with the decodes in flight either
    /// way ("sequences in the context phase can be processed together with sequences in the
    /// generation phase", its in-flight batching documentation); its chunked context only cuts
    /// them. The other engines without it run prompts in prefill-only iterations.
    fn set_chunked_prefill(&mut self, engine: Engine, chunked: bool) {
        self.chunks_prompts = chunked;
        if engine != Engine::TensorrtLlm {
            self.mixes_prefill = chunked;
        }
    }

    /// The replica's limits where it schedules in parts, each up to the limits given: with
    /// TensorRT-LLM, each of `ranks` attention data-parallel ranks (its `max_batch_size` and
    /// `max_num_tokens` are per rank: NVIDIA's DeepSeek-R1 guide runs 384 × 8 = 3,072 requests
    /// at once on eight ranks), and with a pipeline of `stages`, its micro-batches as the
    /// engine takes them apart ([`PipelineLimits`]).
    fn per_scheduler(mut self, engine: Engine, ranks: f64, stages: f64) -> Scheduler {
        let ranks = if engine == Engine::TensorrtLlm { ranks } else { 1.0 };
        let (tokens, sequences) = self.pipeline_limits.multiples(stages);
        self.token_parts = ranks * tokens;
        self.sequence_parts = ranks * sequences;
        self.token_budget *= self.token_parts;
        self.max_sequences *= self.sequence_parts;
        self
    }

    /// The sequences and tokens an iteration runs, and where the replica schedules in parts
    /// (pipeline micro-batches, TensorRT-LLM's attention data-parallel ranks), each part's.
    fn limits_in_parts(&self) -> String {
        let whole = format!(
            "{:.0} sequences and {:.0} tokens an iteration",
            self.max_sequences, self.token_budget
        );
        let parts = "pipeline micro-batches and attention data-parallel ranks, scheduled apart";
        if self.token_parts <= 1.0 {
            whole
        } else if self.sequence_parts == self.token_parts {
            format!(
                "{whole} ({:.0} and {:.0} for each of the {:.0} {parts})",
                self.max_sequences / self.sequence_parts,
                self.token_budget / self.token_parts,
                self.token_parts
            )
        } else {
            format!(
                "{whole} ({:.0} tokens for each of the {:.0} {parts}; the sequences are the replica's)",
                self.token_budget / self.token_parts,
                self.token_parts
            )
        }
    }

    /// What the scheduler runs with, for the answer: the defaults' evidence, the release's, and
    /// the values in force where the user changed any.
    pub fn describe(&self, engine: Engine) -> String {
        let mut text = self.evidence.to_string();
        let release = self
            .given
            .release
            .map_or("(current release)".to_string(), |release| release.to_string());
        let runtime = self
            .given
            .backend_of(engine)
            .map_or(String::new(), |backend| format!(" on the {backend} backend"));
        match release_profile(engine, &self.given) {
            Some(profile) => text.push_str(&format!("; {engine} {release}{runtime}: {}", profile.evidence)),
            None if self.given.release.is_some() || self.given.backend.is_some() => text.push_str(&format!(
                "; {engine} {release}{runtime}: the current release's defaults"
            )),
            None => {}
        }
        match self.given.sampling {
            Some(Sampling::TopP) if sorts_logits(engine) => text.push_str(&format!(
                "; top-p/top-k sampling: {engine} sorts each sequence's logits every step ({:.2} ns a \
                 vocabulary entry, {:.0} µs a sequence for Llama 3's 128,256)",
                serving_sort_seconds_per_logit() * 1e9,
                serving_sort_seconds_per_logit() * 128_256.0 * 1e6
            )),
            Some(Sampling::TopP) => text.push_str(&format!(
                "; top-p/top-k sampling: {engine} samples in its own kernels without a PyTorch sort, none counted"
            )),
            Some(Sampling::Greedy) | None => {}
        }
        if self.given.piecewise_cuda_graphs == Some(true) {
            text.push_str(
                "; piecewise CUDA graphs: the iterations that carry prompt tokens replay captured \
                 graphs too, so none waits for the host's launches",
            );
        }
        if self.given.enforce_eager == Some(true) {
            text.push_str(&format!(
                "; run eagerly (no CUDA/HIP graphs): an iteration lasts at least the host's kernel \
                 launches, {:.2} ms a layer",
                serving_eager_seconds_per_layer() * 1e3
            ));
        }
        if self.given.max_num_seqs.is_some()
            || self.given.max_num_batched_tokens.is_some()
            || self.given.scheduler_steps.is_some()
            || self.given.chunked_prefill.is_some()
            || self.given.reserve_full_context.is_some()
            || self.given.gpu_memory_fraction.is_some()
            || self.token_parts > 1.0
        {
            let per_scheduler = self.limits_in_parts();
            text.push_str(&format!(
                "; in force: {per_scheduler}, {}, prompts {}, KV cache {}, {:.0} % of {}",
                gpuplan_model::counted(self.steps_per_schedule, "scheduler step", "scheduler steps"),
                match (self.mixes_prefill, self.chunks_prompts) {
                    (true, true) => "chunked into the decode iterations",
                    (true, false) => "whole, in the decode iterations (in-flight batching without chunked context)",
                    (false, _) => "in prefill-only iterations",
                },
                if self.reserves_full_context {
                    "reserved for each request's whole length on admission"
                } else {
                    "grown as requests generate"
                },
                self.memory_fraction * 100.0,
                if self.memory_of_free {
                    "the memory the weights leave free"
                } else {
                    "the GPU's memory"
                }
            ));
        }
        text
    }
}

/// GPU memory from which vLLM and SGLang raise their batch defaults, GiB.
const LARGE_GPU_GIB: f64 = 70.0;

/// Memory SGLang keeps out of its static pool on GPUs over 60 GB (`mem_fraction_static`
/// reserves at least 10 GB there), GiB.
const SGLANG_RESERVED_GIB: f64 = 10.0;

/// The default scheduler of `engine` on `accelerator`.
///
/// Evidence (engine sources of their 2025 releases):
/// - vLLM 0.11 `engine/arg_utils.py`: for `vllm serve`, `max_num_batched_tokens` 8192 and
///   `max_num_seqs` 1024 on GPUs with ≥ 70 GiB other than A100, else 2048 and 256; chunked
///   prefill and prefix caching on; `gpu_memory_utilization` 0.9 (`config/cache.py`).
/// - SGLang 0.5.4 `server_args.py`: `chunked_prefill_size` 2048 under 35 GB, 4096 under
///   60 GB, 8192 under 160 GB, 16384 above; `enable_mixed_chunk` off (prefill batches run on
///   their own); `mem_fraction_static` leaves ≥ 10 GB on GPUs over 60 GB (0.88 otherwise);
///   running requests up to the request pool (≤ 4096).
/// - TensorRT-LLM (`builder.py`, `llmapi/llm_args.py`, `commands/serve.py`):
///   `max_batch_size` 2048, `max_num_tokens` 8192, KV cache in 90 % of free memory, capacity
///   policy GUARANTEED_NO_EVICT (a sequence's whole context reserved on admission), chunked
///   prefill off.
/// - TGI 3.3 `launcher/src/main.rs`: `max_concurrent_requests` 128, `max_batch_prefill_tokens`
///   4096 (when no compute estimate), `waiting_served_ratio` 0.3, `max_waiting_tokens` 20,
///   KV cache in 90 % of free memory.
///
/// With pipeline stages ([`PipelineLimits`]): TensorRT-LLM schedules each micro-batch up to
/// both limits (`TrtGptModelInflightBatching`'s constructor builds
/// `CapacityScheduler(getMaxBatchSize() * mNumMicroBatches, …)`, a micro-batch per stage).
/// vLLM's V1 engine keeps a batch queue as deep as the pipeline (`v1/engine/core.py`,
/// `step_with_batch_queue`) and fills each batch up to `max_num_batched_tokens`; a decoding
/// request waits for its sampled token, so it runs in one micro-batch at a time, and the
/// running requests stay bounded by one `max_num_seqs` (`v1/core/sched/scheduler.py`). Its V0
/// engine (0.7 and earlier, the release profiles') ran a scheduler per stage, each with both
/// limits. SGLang's and TGI's limits are taken as the replica's.
pub fn scheduler(engine: Engine, accelerator: &Accelerator, given: &EngineSettings) -> Scheduler {
    default_scheduler(engine, accelerator).with(engine, given)
}

/// The current release's default scheduler of `engine` on `accelerator`.
fn default_scheduler(engine: Engine, accelerator: &Accelerator) -> Scheduler {
    let memory_gib = accelerator.memory.as_gib();
    let large = memory_gib >= LARGE_GPU_GIB;
    match engine {
        Engine::Sglang => Scheduler {
            token_budget: match memory_gib {
                m if m < 35.0 => 2048.0,
                m if m < 60.0 => 4096.0,
                m if m < 160.0 => 8192.0,
                _ => 16384.0,
            },
            max_sequences: 4096.0,
            memory_of_free: false,
            memory_fraction: if memory_gib > 60.0 {
                1.0 - SGLANG_RESERVED_GIB / memory_gib
            } else {
                0.88
            },
            reserves_full_context: false,
            batch_wait: None,
            steps_per_schedule: 1.0,
            token_parts: 1.0,
            sequence_parts: 1.0,
            pipeline_limits: PipelineLimits::Replica,
            mixes_prefill: false,
            chunks_prompts: true,
            given: EngineSettings::default(),
            evidence: "SGLang defaults: chunked prefill 2048–16384 tokens by GPU memory in prefill-only iterations (mixed chunks off), up to 4096 running requests, ≥ 10 GB kept out of the pool on large GPUs",
        },
        Engine::TensorrtLlm => Scheduler {
            token_budget: 8192.0,
            max_sequences: 2048.0,
            memory_fraction: 0.90,
            memory_of_free: true,
            reserves_full_context: true,
            batch_wait: None,
            steps_per_schedule: 1.0,
            token_parts: 1.0,
            sequence_parts: 1.0,
            pipeline_limits: PipelineLimits::PerMicroBatch,
            mixes_prefill: true,
            chunks_prompts: false,
            given: EngineSettings::default(),
            evidence: "TensorRT-LLM defaults: max_num_tokens 8192, max_batch_size 2048, KV cache in 90 % of the memory free after the weights, reserved per sequence (GUARANTEED_NO_EVICT)",
        },
        Engine::Tgi => Scheduler {
            token_budget: 4096.0,
            max_sequences: 128.0,
            memory_fraction: 0.90,
            memory_of_free: false,
            reserves_full_context: false,
            batch_wait: Some((0.3, 20.0)),
            steps_per_schedule: 1.0,
            token_parts: 1.0,
            sequence_parts: 1.0,
            pipeline_limits: PipelineLimits::Replica,
            mixes_prefill: false,
            chunks_prompts: false,
            given: EngineSettings::default(),
            evidence: "TGI defaults: max_batch_prefill_tokens 4096 in prefill-only iterations, max_concurrent_requests 128, new prompts join when 30 % of the running batch or after 20 steps",
        },
        _ => {
            let raised = large && !accelerator.id.to_string().contains("A100");
            Scheduler {
                token_budget: if raised { 8192.0 } else { 2048.0 },
                max_sequences: if raised { 1024.0 } else { 256.0 },
                memory_fraction: 0.90,
                memory_of_free: false,
                reserves_full_context: false,
                batch_wait: None,
                steps_per_schedule: 1.0,
                token_parts: 1.0,
                sequence_parts: 1.0,
                pipeline_limits: PipelineLimits::TokensPerMicroBatch,
                mixes_prefill: true,
                chunks_prompts: true,
                given: EngineSettings::default(),
                evidence: "vLLM defaults: max_num_batched_tokens 8192 and max_num_seqs 1024 on ≥ 70 GiB GPUs other than A100 (2048 and 256 otherwise), gpu_memory_utilization 0.9",
            }
        }
    }
}

/// The cost of one iteration on one replica, from the model's shape and the hardware.
///
/// An iteration runs its kernels one after another, so their times add: the GEMMs (each at
/// the slower of reading its weights and computing its tokens, at an efficiency that rises
/// with the tokens sharing them: `e·M/(M + M½)`, which makes the compute time
/// `(M + M½)·flops/(peak·e)`), attention (reading every running sequence's KV cache, and
/// the prompt chunks' attention FLOPs), the tensor-parallel all-reduces, and the engine's
/// fixed and per-sequence host time. Overlapping the GEMMs' compute with the attention's
/// memory traffic, as a single roofline over the whole step would, under-states mid-size
/// batches; an efficiency fixed at its small-batch value over-states large ones.
///
/// A replica split into pipeline stages runs one micro-batch per stage at once (TensorRT-LLM's
/// and vLLM's pipeline parallelism): an iteration, in which every running sequence gains one
/// token, is `stages` stage-steps, each over its own share of the sequences, the stage's
/// layers and the weights one GPU holds. Compute and attention so divide by the stages while
/// each GPU's weights are read once per micro-batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepCost {
    /// Pipeline stages of the replica (1 without pipeline parallelism).
    stages: f64,
    fixed_seconds: f64,
    seconds_per_sequence: f64,
    prefill_fixed_seconds: f64,
    /// Host time to launch one stage-step's kernels where no graph replays them (an engine
    /// run eagerly); the GPU's work hides it when longer.
    launch_seconds: f64,
    /// The same for a stage-step that carries prompt tokens: engines whose graphs replay
    /// decode-only iterations alone launch those eagerly (TensorRT-LLM's PyTorch backend).
    prompt_launch_seconds: f64,
    dense_weight_seconds: f64,
    expert_weight_seconds: f64,
    expert_share: f64,
    /// The quantised-weight kernel's weight phase at one token per step, relative to more.
    batch1_weight_ratio: f64,
    kv_seconds_per_token: f64,
    /// GEMM time per token through the layers (the logits projection apart).
    gemm_seconds_per_token: f64,
    /// GEMM time of the logits projection per token that yields an output: each decode, and
    /// the last token of each prompt (engines compute no logits for the rest of a prompt).
    logits_seconds_per_output: f64,
    /// The part of `gemm_seconds_per_token` outside the routed experts (attention
    /// projections, dense and shared FFNs), which attention data parallelism leaves on the rank
    /// that holds the token.
    dense_gemm_seconds_per_token: f64,
    /// Attention data-parallel ranks of the replica (1 without): each runs attention and the
    /// dense layers for its own sequences, and every MoE layer waits for all of them.
    ranks: f64,
    gemm_half_tokens: f64,
    /// The exponent of the roofline's rounded knee ([`rounded_roofline`]).
    roofline_knee: f64,
    attention_seconds_per_context: f64,
    /// The attention of a generated token per token of its context (latent attention's
    /// absorbed form where the model has it).
    decode_attention_seconds_per_context: f64,
    /// Where softmax's exponentials, not the tensor cores, set the prompts' attention pace.
    attention_exponentials: Option<ExponentialBound>,
    sync_seconds_per_token: f64,
    /// The routed experts' rows through memory beyond their weights, per token
    /// ([`InferenceShape::expert_row_bytes_per_token`]), on the busiest GPU.
    expert_rows_seconds_per_token: f64,
    /// KV-cache bytes per token on each GPU (what a disaggregated prefill hands over).
    pub kv_bytes_per_token: f64,
    /// Bandwidth between GPUs of one node, bytes/s (NVLink or PCIe).
    pub link_bytes_per_second: f64,
    /// KV-cache tokens the replica holds.
    pub kv_capacity_tokens: f64,
    pub scheduler: Scheduler,
    pub engine: Engine,
}

impl StepCost {
    pub fn new(
        accelerator: &Accelerator,
        peak: FlopsPerSecond,
        engine: Engine,
        settings: &EngineSettings,
        precision: Precision,
        layout: &ParallelLayout,
        shape: &InferenceShape,
    ) -> StepCost {
        let profile = engine_profile(engine);
        let tp = f64::from(layout.tp.max(1));
        let stages = f64::from(layout.pp.max(1));
        let layers = shape.layers as f64;
        let serving = crate::serving_iteration::iteration_costs(engine, settings, layers);
        let bandwidth = accelerator.memory_bandwidth.map_or(f64::INFINITY, |b| b.0) * profile.decode_bandwidth_fraction;
        let low_precision = precision.bits() <= 8;
        let engine_fraction = serving.gemm_peak_fraction * serving_architecture_factor(accelerator);
        // Blackwell's fp4 tensor cores multiply the weights in fp4; attention stays in fp8
        // (TensorRT-LLM's fp8 context FMHA), so its FLOPs run at the 8-bit rate.
        let native_fp4 = shape.four_bit_matmuls;
        let gemm_fraction = engine_fraction
            * if native_fp4 {
                serving_four_bit_gemm_factor() * crate::efficiency::serving_four_bit_part_factor(accelerator)
            } else if low_precision {
                serving_eight_bit_gemm_factor()
            } else {
                1.0
            };
        let gemm_rate = peak.0 * gemm_fraction * shape.gemm_factor;
        // Weights the checkpoint keeps in 16 bits beside the others multiply at the 16-bit
        // rate: the time they take beyond the precision's, per token.
        let sixteen_bit_seconds = shape.sixteen_bit_seconds_per_token(
            tp,
            gemm_rate,
            accelerator
                .peak(Precision::Bf16)
                .map(|bf16| bf16.0 * engine_fraction * shape.gemm_factor),
        );
        let logits_rate = if low_precision {
            crate::inference::logits_peak(accelerator, peak, precision) * engine_fraction
        } else {
            gemm_rate
        };
        let logits = shape.logits_flops(tp);
        let attention_rate = match accelerator.peak(Precision::Fp8) {
            Some(fp8) if native_fp4 => fp8.0 * engine_fraction * serving_eight_bit_gemm_factor(),
            _ => gemm_rate,
        };
        let weight_factor = shape.weight_time_factor;
        // Experts placed whole on the GPUs of the replica: each GPU launches and routes to its
        // own share of them, and the step waits for the one that drew the most tokens.
        let ep = f64::from(shape.expert_parallel.max(1));
        let imbalance = if ep > 1.0 { serving_expert_imbalance() } else { 1.0 };
        let dense_matmul = 2.0 * (shape.matmul_parameters - shape.expert_matmul_parameters).max(0.0) / tp - logits;
        let matmul = 2.0 * shape.matmul_parameters_at_dense_rate(imbalance) / tp - logits;
        let ranks = if shape.attention_data_parallel { tp } else { 1.0 };
        let attention = shape.attention_flops_per_token_per_context / tp;
        let decode_attention = shape.decode_attention_flops_per_token_per_context / tp;
        // Softmax's exponentials, at the engine's share of the special-function units' rate.
        let exponentials = ExponentialBound::of(accelerator, engine_fraction, shape, tp);
        let attention_seconds =
            |flops: f64| (flops / attention_rate).max(exponentials.map_or(0.0, ExponentialBound::seconds_per_context));
        let (sync_fixed, sync_per_token) = shape.collective_seconds(tp);
        let eager_launch = serving_eager_seconds_per_layer() * layers / stages;
        StepCost {
            stages,
            fixed_seconds: serving.step_seconds
                + (sync_fixed + serving_moe_expert_seconds() * shape.scaled_expert_layers as f64 / ep) / stages,
            seconds_per_sequence: serving.seconds_per_sequence
                + sort_seconds_per_sequence(engine, settings, shape.vocab),
            prefill_fixed_seconds: profile.prefill_per_layer_overhead_seconds * layers / stages,
            launch_seconds: if settings.enforce_eager == Some(true) {
                eager_launch
            } else {
                0.0
            },
            prompt_launch_seconds: if settings.enforce_eager == Some(true)
                || (settings.piecewise_cuda_graphs != Some(true)
                    && release_profile(engine, settings).is_some_and(|release| release.eager_prompt_iterations))
            {
                eager_launch
            } else {
                0.0
            },
            dense_weight_seconds: (shape.weight_bytes_gpu - shape.expert_bytes_gpu) * weight_factor / bandwidth,
            expert_weight_seconds: shape.expert_bytes_gpu * weight_factor * imbalance / bandwidth,
            expert_share: shape.expert_share_per_token,
            batch1_weight_ratio: shape.weight_time_factor_batch1 / weight_factor,
            kv_seconds_per_token: shape.kv_bytes_per_token_gpu / bandwidth,
            gemm_seconds_per_token: (matmul / gemm_rate + sixteen_bit_seconds) / stages,
            logits_seconds_per_output: logits / logits_rate / stages,
            dense_gemm_seconds_per_token: (dense_matmul / gemm_rate + sixteen_bit_seconds) / stages,
            ranks,
            gemm_half_tokens: serving_gemm_half_tokens(),
            roofline_knee: serving_roofline_knee(),
            attention_seconds_per_context: attention_seconds(attention) / stages,
            decode_attention_seconds_per_context: attention_seconds(decode_attention) / stages,
            attention_exponentials: exponentials
                .filter(|bound| bound.seconds_per_context() > attention / attention_rate),
            sync_seconds_per_token: sync_per_token / stages,
            expert_rows_seconds_per_token: shape.expert_row_bytes_per_token() * imbalance / bandwidth / stages,
            kv_bytes_per_token: shape.kv_bytes_per_token_gpu,
            link_bytes_per_second: shape.tensor_parallel_bandwidth,
            kv_capacity_tokens: if shape.kv_bytes_per_token_gpu > 0.0 {
                (shape.kv_budget_bytes / shape.kv_bytes_per_token_gpu).max(0.0)
            } else {
                0.0
            },
            scheduler: scheduler(engine, accelerator, settings).per_scheduler(engine, ranks, stages),
            engine,
        }
    }

    /// One iteration with `decodes` sequences at mean context `context` and
    /// `prefill_tokens` prompt tokens of prompts `prompt` long (for a mix of lengths, the
    /// size-biased mean [`RequestMix::size_biased_input`]: the prompt an average prompt token
    /// belongs to, whose half its attention spans); `prefill_share` of the iterations carry a
    /// prompt chunk.
    pub(crate) fn step(&self, decodes: f64, context: f64, prefill_tokens: f64, prompt: f64, prefill_share: f64) -> f64 {
        let stages = self.stages;
        stages
            * self.stage_step(
                decodes / stages,
                context,
                prefill_tokens / stages,
                prompt,
                prefill_share,
            )
    }

    /// One pipeline stage's step over its micro-batch (the whole iteration without stages).
    fn stage_step(&self, decodes: f64, context: f64, prefill_tokens: f64, prompt: f64, prefill_share: f64) -> f64 {
        let tokens = decodes + prefill_tokens;
        let touched = 1.0 - (1.0 - self.expert_share).powf(tokens.max(1.0));
        let single = if tokens <= 1.0 { self.batch1_weight_ratio } else { 1.0 };
        let weights = (self.dense_weight_seconds + self.expert_weight_seconds * touched) * single;
        // Tokens that yield an output: the decodes and, per prompt, its last token (`prompt` is
        // the size-biased mean length for a mix, so a mix's prompts are counted a little short).
        let outputs = decodes + prefill_tokens / prompt.max(1.0);
        let gemms = rounded_roofline(
            weights,
            (tokens + self.gemm_half_tokens) * self.gemm_seconds_per_token
                + (outputs + self.gemm_half_tokens) * self.logits_seconds_per_output,
            self.roofline_knee,
        );
        let decode_attention =
            decodes * context * self.kv_seconds_per_token.max(self.decode_attention_seconds_per_context);
        let prefill_attention =
            prefill_tokens * (self.kv_seconds_per_token + self.attention_seconds_per_context * prompt / 2.0);
        let busiest = self.busiest_rank_excess(prefill_tokens, prompt)
            * self.ranks
            * (self.dense_gemm_seconds_per_token
                + self.kv_seconds_per_token
                + self.attention_seconds_per_context * prompt / 2.0);
        let device = (self.sync_seconds_per_token + self.expert_rows_seconds_per_token) * tokens
            + gemms
            + decode_attention
            + prefill_attention
            + busiest;
        // The iterations that carry a prompt chunk (`prefill_share` of them) last at least their
        // eager launches where no graph replays them.
        let launched = device.max(self.launch_seconds);
        let prompt_launches = prefill_share.min(1.0) * (self.prompt_launch_seconds - launched).max(0.0);
        self.fixed_seconds
            + self.seconds_per_sequence * decodes
            + self.prefill_fixed_seconds * prefill_share.min(1.0)
            + launched
            + prompt_launches
    }

    /// Prompt tokens the busiest attention data-parallel rank runs beyond an even share.
    fn busiest_rank_excess(&self, prefill_tokens: f64, prompt: f64) -> f64 {
        busiest_rank_excess(
            prefill_tokens,
            prompt,
            self.ranks,
            self.scheduler.token_budget / self.ranks / self.scheduler.pipeline_limits.multiples(self.stages).0,
        )
    }

    /// Engines that prefill on their own: with prompts arriving at `rate` and decode
    /// iterations `interval` apart, the share of them preceded by a prefill-only iteration
    /// (one or more prompts arrived meanwhile) and that iteration's length.
    fn prefill_iteration(&self, rate: f64, interval: f64, mix: &RequestMix) -> (f64, f64) {
        let share = 1.0 - (-rate * interval).exp();
        if share <= 0.0 {
            return (0.0, 0.0);
        }
        let tokens = rate * interval * mix.mean_prefill() / share;
        (share, self.step(0.0, 0.0, tokens, mix.size_biased_input(), 1.0))
    }

    /// The time a prompt token adds to an iteration of `decodes` sequences that carries a
    /// chunk of `chunk` prompt tokens of prompts `prompt` long: the iteration with the chunk,
    /// less the iteration without it, per token (the chunk's GEMMs and attention, and the
    /// per-layer work of an iteration that runs a prompt).
    pub(crate) fn prompt_token_seconds(&self, decodes: f64, context: f64, chunk: f64, prompt: f64) -> f64 {
        let chunk = chunk.max(1.0);
        (self.step(decodes, context, chunk, prompt, 1.0) - self.step(decodes, context, 0.0, prompt, 0.0)) / chunk
    }

    /// What the estimate says of its prompts' attention where softmax's exponentials, not the
    /// tensor cores, set its pace.
    pub fn attention_note(&self) -> Option<String> {
        let bound = self.attention_exponentials?;
        Some(format!(
            "prompt attention at the pace of its softmax exponentials: {:.0} a token of context on each GPU, at {:.0} % of the special-function units' {:.1} × 10¹² a second (as the engine's GEMMs run at that share of theirs), slower than the tensor cores would score them",
            bound.per_context,
            bound.fraction * 100.0,
            bound.peak / 1e12,
        ))
    }

    /// The kind of replica, as far as the capacity's measured range goes: dense, or a mixture
    /// of experts.
    pub fn measured_on(&self) -> crate::serving_near_capacity::MeasuredOn {
        crate::serving_near_capacity::MeasuredOn::of(self.expert_share > 0.0)
    }

    /// The decode-only iteration with `decodes` sequences at context `context`.
    pub fn decode_step(&self, decodes: f64, context: f64) -> f64 {
        self.step(decodes, context, 0.0, 0.0, 0.0)
    }

    /// Sequences the KV cache and the scheduler allow at once for requests of this mix.
    pub fn max_sequences(&self, mix: &RequestMix) -> f64 {
        self.sequence_bound(mix).0
    }

    /// The sequences allowed at once and which bound sets it: the KV cache, or the engine's
    /// limit on running sequences where that comes first.
    pub fn sequence_bound(&self, mix: &RequestMix) -> (f64, Saturation) {
        let per_sequence = mix.kv_tokens_in_flight(self.scheduler.reserves_full_context);
        let held = self.kv_capacity_tokens / per_sequence.max(1.0);
        if self.scheduler.max_sequences < held {
            (self.scheduler.max_sequences, Saturation::SequenceLimit)
        } else {
            (held, Saturation::KvCache)
        }
    }
}

/// Softmax's exponentials as a bound on attention: how many a token of context costs one GPU,
/// how fast its special-function units return them, and at what share of that.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ExponentialBound {
    per_context: f64,
    peak: f64,
    fraction: f64,
}

impl ExponentialBound {
    /// `None` where the part's rate is unknown (no compute capability or 32-bit peak).
    fn of(accelerator: &Accelerator, fraction: f64, shape: &InferenceShape, tp: f64) -> Option<ExponentialBound> {
        Some(ExponentialBound {
            per_context: shape.attention_exponentials_per_token_per_context / tp,
            peak: accelerator.exponentials_per_second()?,
            fraction,
        })
    }

    /// The time a token of context's exponentials take.
    fn seconds_per_context(self) -> f64 {
        self.per_context / (self.peak * self.fraction)
    }
}

/// The time of matrix multiplications that stream `weights` seconds of weights and need
/// `compute` seconds of tensor-core work: the larger of the two far from the ridge, and more
/// than either near it, where neither the loads nor the math keep the other hidden (a
/// roofline with a rounded knee, `(wᵖ + cᵖ)^(1/p)`, p = `knee`, the `serving_roofline_knee`).
fn rounded_roofline(weights: f64, compute: f64, knee: f64) -> f64 {
    let (low, top) = (weights.min(compute), weights.max(compute));
    let ratio = if top > 0.0 { low / top } else { 0.0 };
    // Far from the ridge the rounding is below a millionth: skipped on the search's hot path.
    if ratio < 0.01 {
        return top;
    }
    let rounded = if knee == 3.0 {
        (1.0 + ratio * ratio * ratio).cbrt()
    } else {
        (1.0 + ratio.powf(knee)).powf(1.0 / knee)
    };
    top * rounded
}

/// Prompt tokens the busiest of `ranks` attention data-parallel ranks runs beyond an even share
/// of an iteration's `prefill_tokens`. A prompt (or its chunk, up to the rank's token budget)
/// runs on the one rank that holds the request, and the ranks meet at every MoE layer, so the
/// iteration lasts as long as the rank that drew the most. Prompts land on the ranks
/// independently: the busiest holds the expected largest of `ranks` Poisson counts, at most a
/// rank's budget.
fn busiest_rank_excess(prefill_tokens: f64, prompt: f64, ranks: f64, rank_budget: f64) -> f64 {
    if ranks <= 1.0 || prefill_tokens <= 0.0 {
        return 0.0;
    }
    let unit = prompt.min(rank_budget).max(1.0);
    let even = prefill_tokens / ranks;
    let busiest = unit * expected_poisson_maximum(prefill_tokens / unit / ranks, ranks);
    (busiest.min(rank_budget.max(even)) - even).max(0.0)
}

/// The expected largest of `count` independent Poisson counts of mean `mean`:
/// Σₖ P(max > k) = Σₖ 1 − F(k)^count.
fn expected_poisson_maximum(mean: f64, count: f64) -> f64 {
    if mean <= 0.0 {
        return 0.0;
    }
    let last = mean + 12.0 * mean.sqrt() + 12.0;
    let (mut k, mut probability) = (0.0, (-mean).exp());
    let (mut cumulative, mut sum) = (probability, 0.0);
    while k < last {
        sum += 1.0 - cumulative.min(1.0).powf(count);
        k += 1.0;
        probability *= mean / k;
        cumulative += probability;
    }
    sum
}

/// Whether `engine` samples top-p/top-k by sorting each sequence's logits in PyTorch: vLLM's
/// default sampler (`torch.sort` unless FlashInfer's is switched on) and TGI's top-p warper do;
/// SGLang samples without a sort (FlashInfer's rejection sampling) and TensorRT-LLM in its own
/// CUDA kernels, whose cost is not known and not counted.
fn sorts_logits(engine: Engine) -> bool {
    matches!(engine, Engine::Vllm | Engine::Tgi)
}

/// What sampling adds to each running sequence's share of an iteration: the sort of its logits
/// over the vocabulary for top-p or top-k; greedy decoding and a plain temperature draw take
/// none.
fn sort_seconds_per_sequence(engine: Engine, settings: &EngineSettings, vocab: u64) -> f64 {
    match settings.sampling {
        Some(Sampling::TopP) if sorts_logits(engine) => vocab as f64 * serving_sort_seconds_per_logit(),
        _ => 0.0,
    }
}

/// A latency distribution's summary, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl Percentiles {
    /// A bound that holds at every percentile (a worst case).
    pub fn flat(seconds: f64) -> Percentiles {
        Percentiles {
            mean: seconds,
            p50: seconds,
            p90: seconds,
            p99: seconds,
        }
    }

    /// The value at `percentile` (0–100): the kept percentile at or above it.
    pub fn at(&self, percentile: f64) -> f64 {
        match percentile {
            x if x <= 50.0 => self.p50,
            x if x <= 90.0 => self.p90,
            _ => self.p99,
        }
    }
}

/// The largest whole number from 1 to `most` for which `holds` is true, `holds` being true at
/// 1 and, once false, false for every larger number.
pub(crate) fn largest_holding(most: f64, mut holds: impl FnMut(f64) -> bool) -> f64 {
    if holds(most) {
        return most;
    }
    let (mut low, mut high) = (1.0, most);
    while high - low > 1.0 {
        let mid = (0.5 * (low + high)).floor();
        if holds(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// Why a replica cannot take a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Saturation {
    /// Iterations grow without bound: compute or memory bandwidth is exhausted.
    Throughput,
    /// Prompts arrive faster than the token budget left by decodes admits them.
    PrefillBudget,
    /// The KV cache cannot hold the sequences in flight.
    KvCache,
    /// The engine's limit on running sequences (vLLM's `max_num_seqs`, SGLang's
    /// `max_running_requests`, TensorRT-LLM's `max_batch_size`) is reached while the KV cache
    /// still has room.
    SequenceLimit,
}

/// One replica at one offered load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadPoint {
    pub requests_per_second: f64,
    /// The iterations decoding requests ride in, and the per-token latencies they give.
    pub iterations: DecodeIterations,
    /// Sequences decoding at once, on average.
    pub sequences: f64,
    /// Share of the prompt-token budget in use.
    pub prefill_utilisation: f64,
    /// Share of the KV cache in use.
    pub kv_utilisation: f64,
    mean_output: f64,
    queue: PromptQueue,
    own_prefill: [f64; OWN_POINTS],
    own_prefill_mean: f64,
    batch_wait_window: f64,
    /// The wait for a free sequence slot (KV cache or the engine's sequence limit).
    admission: Admission,
}

/// The wait of a new request for a free sequence slot when the sequences in flight come close
/// to what the KV cache (or the engine's sequence limit) holds: an M/G/c queue whose `c`
/// servers are the slots and whose service is a request's generation. Erlang C gives the
/// probability of waiting (M/M/c); the wait, when there is one, is exponential with mean
/// `service / (c − a)`, scaled by `(1 + CV²)/2` for the spread of output lengths (the
/// Lee–Longton approximation for M/G/c).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Admission {
    probability: f64,
    mean_wait: f64,
}

impl Admission {
    fn new(slots: f64, offered: f64, service_seconds: f64, output_variation: f64) -> Admission {
        let free = slots.floor() - offered;
        if free <= 0.0 {
            return Admission {
                probability: 1.0,
                mean_wait: f64::INFINITY,
            };
        }
        Admission {
            probability: erlang_c(slots.floor(), offered),
            mean_wait: service_seconds / free * (1.0 + output_variation) / 2.0,
        }
    }

    /// The wait at quantile `q` (0–1): none with probability 1 − P, else exponential.
    fn at(&self, q: f64) -> f64 {
        if self.probability <= 0.0 || q <= 1.0 - self.probability {
            return 0.0;
        }
        self.mean_wait * (self.probability / (1.0 - q).max(1e-12)).ln()
    }

    fn mean(&self) -> f64 {
        self.probability * self.mean_wait
    }
}

/// Erlang C: the probability that an arrival waits when `servers` serve an offered load of
/// `offered` (in servers' worth of work), by the stable Erlang B recursion.
fn erlang_c(servers: f64, offered: f64) -> f64 {
    if offered <= 0.0 {
        return 0.0;
    }
    if offered >= servers {
        return 1.0;
    }
    // Far from the limit the chance of waiting is nil (Halfin–Whitt: below 1e-9 once the free
    // servers exceed six standard deviations of the load), and the recursion, linear in the
    // servers, is skipped on the search's hot path.
    if servers - offered > 6.0 * offered.sqrt() + 10.0 {
        return 0.0;
    }
    let mut blocking = 1.0;
    let mut k = 1.0;
    while k <= servers {
        blocking = offered * blocking / (k + offered * blocking);
        k += 1.0;
    }
    servers * blocking / (servers - offered * (1.0 - blocking))
}

/// Relative precision of the fixed points and quantiles solved by bisection (times).
pub(crate) const STEP_TOLERANCE: f64 = 1e-5;

/// Relative precision of the goodput bisection (loads): 0.1 %, well inside the model's error.
const LOAD_TOLERANCE: f64 = 1e-3;

/// How prompt work lands on the iterations of an engine that mixes it into decoding. Prompts
/// shorter than the iteration's token budget are taken in as they arrive, a few hundred
/// tokens beside the decodes, and the steps carry the mean. A prompt longer than the budget
/// is cut into chunks that fill the iterations it rides in, up to the budget the running
/// decodes leave, while the other iterations decode alone: averaging its tokens over every
/// step would let a 9K-token prompt ride for free on memory-bound decode steps, which no engine
/// manages, as a chunk of a few thousand tokens is compute-bound (Agrawal et al. 2024,
/// Sarathi-Serve §3; vLLM and TensorRT-LLM fill each iteration up to
/// `max_num_batched_tokens` / `max_num_tokens`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct PromptChunks {
    /// Prompt tokens in an iteration that carries any.
    tokens: f64,
    /// Share of the iterations that carry prompt tokens.
    share: f64,
    /// Iterations one prompt's tokens ride in.
    per_prompt: f64,
}

impl PromptChunks {
    /// `arrivals` prompts of `computed` tokens (mean) per iteration beside `decodes`.
    fn new(budget: f64, decodes: f64, arrivals: f64, computed: f64) -> PromptChunks {
        let mean = arrivals * computed;
        if computed <= budget {
            return PromptChunks {
                tokens: mean,
                share: arrivals.min(1.0),
                per_prompt: 1.0,
            };
        }
        let left = (budget - decodes).max(1.0);
        let tokens = left.max(mean);
        PromptChunks {
            tokens,
            share: (mean / tokens).min(1.0),
            per_prompt: computed / tokens,
        }
    }

    /// The mean iteration, from `step(prompt tokens, share of iterations with a prompt)`.
    fn mean_step(&self, step: impl Fn(f64, f64) -> f64) -> f64 {
        if self.share >= 1.0 || self.per_prompt <= 1.0 {
            return step(self.tokens, self.share);
        }
        self.share * step(self.tokens, 1.0) + (1.0 - self.share) * step(0.0, 0.0)
    }
}

/// The mean iteration time at `rate` requests/s: the fixed point of the step cost with
/// N = rate·O·s decodes and rate·I·s prompt tokens per step; `None` when none exists.
fn steady_state_step(cost: &StepCost, rate: f64, mix: &RequestMix) -> Option<f64> {
    let (input, output) = (mix.size_biased_input(), mix.mean_output().max(1.0));
    let computed = mix.mean_prefill();
    let context = mix.mean_context_in_flight();
    let budget = cost.scheduler.token_budget;
    let mixed = |s: f64| {
        let decodes = rate * output * s;
        let chunks = PromptChunks::new(budget, decodes, rate * s, computed);
        chunks.mean_step(|tokens, share| cost.step(decodes, context, tokens, input, share))
    };
    let separate = |s: f64| {
        let decodes = rate * output * s;
        let (share, prefill_step) = cost.prefill_iteration(rate, s, mix);
        cost.decode_step(decodes, context) + share * prefill_step
    };
    let g = |s: f64| {
        if cost.scheduler.mixes_prefill {
            mixed(s)
        } else {
            separate(s)
        }
    };
    if rate <= 0.0 {
        return Some(g(0.0));
    }
    // g is increasing and convex in s: a fixed point exists when g(s) < s somewhere.
    let mut high = g(0.0).max(1e-6);
    while g(high) >= high {
        high *= 2.0;
        if high > 1e4 {
            return None;
        }
    }
    Some(bisect(0.0, high, STEP_TOLERANCE, |s| g(s) >= s).1)
}

/// The boundary of `holds` between `low` (where it holds) and `high` (where it does not), to
/// a relative `tolerance`: the last point found to hold and the first found not to.
pub(crate) fn bisect(mut low: f64, mut high: f64, tolerance: f64, mut holds: impl FnMut(f64) -> bool) -> (f64, f64) {
    while high - low > tolerance * high {
        let mid = 0.5 * (low + high);
        if holds(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low, high)
}

/// The replica at `rate` requests/s of `mix`, or why it saturates.
pub fn at_load(cost: &StepCost, rate: f64, mix: &RequestMix) -> Result<LoadPoint, Saturation> {
    let output = mix.mean_output().max(1.0);
    let context = mix.mean_context_in_flight();
    let step = steady_state_step(cost, rate, mix).ok_or(Saturation::Throughput)?;
    let sequences = rate * output * step;
    let (max_sequences, bound) = cost.sequence_bound(mix);
    if sequences >= max_sequences {
        return Err(bound);
    }
    let admission = Admission::new(max_sequences, sequences, output * step, mix.output_variation());
    let budget = cost.scheduler.token_budget;
    let left = (budget - sequences).max(0.0);
    let computed = mix.mean_prefill();
    let prefill_tokens = rate * computed * step;
    if left <= 0.0 || prefill_tokens >= left {
        return Err(Saturation::PrefillBudget);
    }
    // The prompt queue drains at the slower of two paces. The budget's: an iteration of the
    // mean length takes in at most `left` prompt tokens. The GPU's: each prompt token lengthens
    // the iteration that carries it, by the time a full chunk beside the running decodes adds
    // over a decode-only iteration, per token. Short prompts (many to a chunk) meet the budget
    // first; long ones, whose chunks fill iterations several times the decode-only length,
    // the GPU time. (The mean step alone let a Llama-3.1-405B prompt server that is busy three
    // quarters of the time look a third busy. The full chunk's whole iteration, decodes
    // included, over-counts: the decodes run whether a prompt waits or not.)
    let biased = mix.size_biased_input();
    let budget_pace = step / left;
    let gpu_pace = cost.prompt_token_seconds(sequences, context, left, biased);
    let seconds_per_token = budget_pace.max(gpu_pace);
    let saturation = if gpu_pace > budget_pace {
        Saturation::Throughput
    } else {
        Saturation::PrefillBudget
    };
    let queue = PromptQueue::new(rate, seconds_per_token, mix).ok_or(saturation)?;
    let decode_step = cost.decode_step(sequences, context).min(step);
    // A prompt of `tokens` is prefilled in chunks inside the running steps (mixed), or in a
    // prefill-only iteration with the other prompts that arrived meanwhile.
    let (iterations, separate_batch) = if cost.scheduler.mixes_prefill {
        // Each chunk of the N prompts that arrive during a request's life lengthens one of its
        // steps.
        let chunks = PromptChunks::new(budget, sequences, rate * step, computed);
        let arrivals = (chunks.per_prompt <= 1.0).then_some(rate * step);
        let iterations = DecodeIterations::mixed(step, decode_step, chunks.share, arrivals, sequences, mix);
        (iterations, None)
    } else {
        let (share, prefill_step) = cost.prefill_iteration(rate, step, mix);
        let batch = rate * step * computed / share.max(1e-12);
        (
            DecodeIterations::separate(step, decode_step, share, prefill_step, mix),
            Some(batch),
        )
    };
    // The iterations carry the prompt's own chunks or, where those are fewer, the other prompts'
    // tokens; whichever fills them sets the span their attention covers.
    let own = |tokens: f64| match separate_batch {
        None => {
            let steps = (tokens / left).ceil().max(1.0);
            let chunk = tokens.min(left);
            let prompt = if chunk >= prefill_tokens { tokens } else { biased };
            // Every chunk but the last fills the iteration's budget; the last holds what is left
            // of the prompt, beside the other prompts' tokens. A prompt that fits is its own last
            // chunk, timed once.
            let last = tokens - (steps - 1.0) * left;
            let last_prompt = if last >= prefill_tokens { tokens } else { biased };
            let full = if steps > 1.0 {
                (steps - 1.0) * cost.step(sequences, context, prefill_tokens.max(chunk), prompt, 1.0)
            } else {
                0.0
            };
            full + cost.step(sequences, context, prefill_tokens.max(last), last_prompt, 1.0)
        }
        Some(batch) => {
            let prompt = if tokens >= batch { tokens } else { biased };
            cost.step(0.0, 0.0, batch.max(tokens), prompt, 1.0)
        }
    };
    // Neighbouring points often share a length (a fixed request has one): each is timed once.
    let mut timed = (f64::NAN, 0.0);
    let own_prefill = OWN_SHARES.map(|(q, _)| {
        let tokens = mix.prefill_quantile(q);
        if tokens != timed.0 {
            timed = (tokens, own(tokens));
        }
        timed.1
    });
    // Engines that hold new prompts back until enough wait (TGI): the window in which a
    // request may wait for its batch to be admitted.
    let held_steps = cost.scheduler.batch_wait.map_or(0.0, |(ratio, max_steps)| {
        ((ratio * sequences - 1.0).max(0.0) / (rate * step)).min(max_steps)
    });
    let batch_wait_window = (held_steps + cost.scheduler.steps_per_schedule - 1.0) * step;
    let own_prefill_mean = own(computed);
    Ok(LoadPoint {
        requests_per_second: rate,
        iterations,
        sequences,
        prefill_utilisation: queue.utilisation,
        kv_utilisation: if cost.kv_capacity_tokens > 0.0 {
            sequences * context / cost.kv_capacity_tokens
        } else {
            0.0
        },
        mean_output: output,
        queue,
        own_prefill,
        own_prefill_mean,
        batch_wait_window,
        admission,
    })
}

impl LoadPoint {
    /// Time to first token at quantile `q` (0–1): the rest of the running step, the wait for
    /// budget and the prompt's own prefill (the quantile of their sum), plus the waits for a
    /// batch and a sequence slot.
    pub fn ttft_at(&self, q: f64) -> f64 {
        self.queue
            .sojourn_quantile(self.iterations.step_seconds, &self.own_prefill, q)
            + q * self.batch_wait_window
            + self.admission.at(q)
    }

    /// Whether the time to first token at quantile `q` is at most `seconds`: what
    /// `ttft_at(q) <= seconds` answers, without searching for the quantile.
    pub fn ttft_within(&self, q: f64, seconds: f64) -> bool {
        let fixed = q * self.batch_wait_window + self.admission.at(q);
        self.queue
            .sojourn_within(self.iterations.step_seconds, &self.own_prefill, q, seconds - fixed)
    }

    pub fn ttft_mean(&self) -> f64 {
        self.iterations.step_seconds / 2.0
            + self.queue.mean_wait
            + self.own_prefill_mean
            + self.batch_wait_window / 2.0
            + self.admission.mean()
    }

    /// Time per output token at quantile `q` over requests.
    pub fn tpot_at(&self, q: f64) -> f64 {
        self.iterations.tpot_at(q)
    }

    /// Inter-token latency at quantile `q` over iterations.
    pub fn itl_at(&self, q: f64) -> f64 {
        self.iterations.itl_at(q)
    }

    /// Output tokens per second the replica produces at this load.
    pub fn output_tokens_per_second(&self) -> f64 {
        self.requests_per_second * self.mean_output
    }

    pub fn ttft(&self) -> Percentiles {
        Percentiles {
            mean: self.ttft_mean(),
            p50: self.ttft_at(0.5),
            p90: self.ttft_at(0.9),
            p99: self.ttft_at(0.99),
        }
    }

    pub fn tpot(&self) -> Percentiles {
        self.iterations.tpot()
    }

    /// End-to-end latency of a mean request.
    pub fn e2e_mean(&self) -> f64 {
        self.ttft_mean() + (self.mean_output - 1.0).max(0.0) * self.iterations.step_seconds
    }

    /// Whether the latency percentiles meet the targets.
    pub fn meets(&self, ttft: Option<LatencyTarget>, tpot: Option<LatencyTarget>) -> bool {
        ttft.is_none_or(|t| self.ttft_within(t.percentile / 100.0, t.seconds))
            && tpot.is_none_or(|t| self.iterations.tpot_within(t.percentile / 100.0, t.seconds))
    }
}

/// A closed loop of `concurrency` sequences (an offline batch, or a benchmark at fixed
/// concurrency): each finished sequence is replaced at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClosedLoop {
    /// Sequences decoding at once (after the caps).
    pub sequences: f64,
    /// The iterations they ride in: N/O prompts join each, on average, to replace the
    /// sequences that finished.
    pub iterations: DecodeIterations,
    pub output_tokens_per_second: f64,
    pub requests_per_second: f64,
}

/// Throughput with `concurrency` sequences in flight (`None`: as many as the engine and KV
/// cache allow).
pub fn closed_loop(cost: &StepCost, mix: &RequestMix, concurrency: Option<f64>) -> ClosedLoop {
    let (input, output) = (mix.size_biased_input(), mix.mean_output().max(1.0));
    let computed = mix.mean_prefill();
    let context = mix.mean_context_in_flight();
    let cap = cost.max_sequences(mix).max(1.0);
    let mut sequences = concurrency.map_or(cap, |c| c.min(cap)).max(1.0);
    // Each iteration refills the sequences that finished: N·I/O prompt tokens.
    let budget = cost.scheduler.token_budget;
    if sequences * (1.0 + computed / output) > budget {
        sequences = (budget * output / (computed + output)).min(sequences).max(1.0);
    }
    let prefill = sequences * computed / output;
    let decode_step = cost.decode_step(sequences, context);
    let iterations = if cost.scheduler.mixes_prefill {
        let chunks_per_prompt = (computed / budget).max(1.0);
        let share = (sequences / output * chunks_per_prompt).min(1.0);
        let step = cost.step(sequences, context, prefill, input, share);
        let arrivals = (computed <= budget).then_some(sequences / output);
        DecodeIterations::mixed(step, decode_step, share, arrivals, sequences, mix)
    } else {
        // N/O sequences finish per decode iteration and are replaced by a prefill-only one.
        let share = 1.0 - (-sequences / output).exp();
        let prefill_step = cost.step(0.0, 0.0, prefill / share.max(1e-12), input, 1.0);
        DecodeIterations::separate(
            decode_step + share * prefill_step,
            decode_step,
            share,
            prefill_step,
            mix,
        )
    };
    let step = iterations.step_seconds;
    ClosedLoop {
        sequences,
        iterations,
        output_tokens_per_second: sequences / step,
        requests_per_second: sequences / step / output,
    }
}

/// The highest load one replica sustains with its latency percentiles within the targets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goodput {
    pub requests_per_second: f64,
    /// What stops more load: a latency target, or a saturation.
    pub limit: GoodputLimit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GoodputLimit {
    TimeToFirstToken,
    TimePerOutputToken,
    Saturation(Saturation),
}

impl std::fmt::Display for GoodputLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GoodputLimit::TimeToFirstToken => "the time-to-first-token target",
            GoodputLimit::TimePerOutputToken => "the time-per-output-token target",
            GoodputLimit::Saturation(s) => match s {
                Saturation::Throughput => "compute and memory bandwidth",
                Saturation::PrefillBudget => "the prompt-token budget per step",
                Saturation::KvCache => "the KV cache",
                Saturation::SequenceLimit => "the engine's limit on running sequences, with room left in the KV cache",
            },
        })
    }
}

impl std::fmt::Display for Saturation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        GoodputLimit::Saturation(*self).fmt(f)
    }
}

/// Bisects the offered load for the highest that meets the targets; without targets, the
/// highest load before saturation. `None`: not even a trickle of requests meets them.
pub fn goodput(
    cost: &StepCost,
    mix: &RequestMix,
    ttft: Option<LatencyTarget>,
    tpot: Option<LatencyTarget>,
) -> Option<Goodput> {
    let trickle = at_load(cost, 1e-6, mix).ok()?;
    if !trickle.meets(ttft, tpot) {
        return None;
    }
    let high = closed_loop(cost, mix, None).requests_per_second * 1.5;
    let mut limit = GoodputLimit::Saturation(Saturation::Throughput);
    let (low, _) = bisect(1e-6, high, LOAD_TOLERANCE, |rate| match at_load(cost, rate, mix) {
        Ok(point) if point.meets(ttft, tpot) => true,
        Ok(point) => {
            limit = if ttft.is_some_and(|t| !point.ttft_within(t.percentile / 100.0, t.seconds)) {
                GoodputLimit::TimeToFirstToken
            } else {
                GoodputLimit::TimePerOutputToken
            };
            false
        }
        Err(saturation) => {
            limit = GoodputLimit::Saturation(saturation);
            false
        }
    });
    Some(Goodput {
        requests_per_second: low,
        limit,
    })
}

/// Prefill and decode on separate pools of replicas (DistServe, Zhong et al. 2024;
/// Splitwise, Patel et al. 2024): prompts never stall decoding, each pool is sized for its
/// own target, and the KV cache of every prompt moves from its prefill replica to a decode
/// replica.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Disaggregated {
    /// Requests/s one prefill replica sustains with TTFT within its target.
    pub prefill_goodput: f64,
    /// Requests/s one prefill replica processes at most.
    pub prefill_capacity: f64,
    /// Requests/s one decode replica sustains with TPOT within its target.
    pub decode_goodput: f64,
    /// Requests/s one decode replica finishes at most.
    pub decode_capacity: f64,
    /// Sequences a decode replica runs at once.
    pub decode_sequences: f64,
    /// Time per output token on a decode replica at that concurrency, seconds.
    pub decode_step_seconds: f64,
    /// Moving one mean prompt's KV cache between the pools, seconds.
    pub kv_transfer_seconds: f64,
}

/// A replica that only prefills: full prompt-token budgets back to back, each prompt's KV
/// cache then sent to a decode replica.
struct PrefillPool<'a> {
    mix: &'a RequestMix,
    step: f64,
    /// A prompt's own prefill at the [`OWN_SHARES`] of prompt lengths: whole iterations.
    own: [f64; OWN_POINTS],
    /// Mean prompt's share of the replica's time, seconds.
    service: f64,
    seconds_per_token: f64,
    transfer: f64,
}

impl<'a> PrefillPool<'a> {
    fn new(cost: &StepCost, mix: &'a RequestMix, transfer_bytes_per_second: f64) -> PrefillPool<'a> {
        let input = mix.mean_input();
        let computed = mix.mean_prefill();
        let budget = cost.scheduler.token_budget;
        let chunk = budget.min(computed.max(1.0));
        let step = cost.step(0.0, 0.0, chunk, mix.size_biased_input(), 1.0);
        let tokens_per_second = chunk / step;
        PrefillPool {
            mix,
            step,
            own: OWN_SHARES.map(|(p, _)| (mix.prefill_quantile(p) / budget).ceil().max(1.0) * step),
            service: computed / tokens_per_second,
            seconds_per_token: 1.0 / tokens_per_second,
            transfer: input * cost.kv_bytes_per_token / transfer_bytes_per_second.max(1.0),
        }
    }

    fn capacity(&self) -> f64 {
        1.0 / self.service
    }

    fn ttft_at(&self, rate: f64, q: f64) -> f64 {
        let Some(queue) = PromptQueue::new(rate, self.seconds_per_token, self.mix) else {
            return f64::INFINITY;
        };
        queue.sojourn_quantile(self.step, &self.own, q) + self.transfer
    }
}

/// Time to first token of a disaggregated deployment whose prefill replicas each take
/// `rate` requests/s.
pub fn prefill_ttft(cost: &StepCost, mix: &RequestMix, transfer_bytes_per_second: f64, rate: f64) -> Percentiles {
    let pool = PrefillPool::new(cost, mix, transfer_bytes_per_second);
    let at = |q: f64| pool.ttft_at(rate, q);
    Percentiles {
        mean: at(0.5),
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
    }
}

/// Sizes the two pools of a disaggregated deployment for `mix` within the targets; the KV
/// cache moves at `transfer_bytes_per_second` per GPU. `None` when a pool cannot meet its
/// target at any load.
pub fn disaggregated(
    cost: &StepCost,
    mix: &RequestMix,
    ttft: Option<LatencyTarget>,
    tpot: Option<LatencyTarget>,
    transfer_bytes_per_second: f64,
) -> Option<Disaggregated> {
    let pool = PrefillPool::new(cost, mix, transfer_bytes_per_second);
    let prefill_goodput = match ttft {
        Some(target) => {
            let q = target.percentile / 100.0;
            if pool.ttft_at(1e-6, q) > target.seconds {
                return None;
            }
            bisect(1e-6, pool.capacity(), LOAD_TOLERANCE, |rate| {
                pool.ttft_at(rate, q) <= target.seconds
            })
            .0
        }
        None => pool.capacity(),
    };
    // Decode pool: the most sequences whose decode-only step meets the TPOT target.
    let output = mix.mean_output().max(1.0);
    let context = mix.mean_context_in_flight();
    let most = cost.max_sequences(mix).max(1.0).floor();
    let meets = |n: f64| tpot.is_none_or(|t| cost.decode_step(n, context) <= t.seconds);
    if !meets(1.0) {
        return None;
    }
    let sequences = largest_holding(most, meets);
    let decode_step = cost.decode_step(sequences, context);
    Some(Disaggregated {
        prefill_goodput,
        prefill_capacity: pool.capacity(),
        decode_goodput: sequences / (output * decode_step),
        decode_capacity: most / (output * cost.decode_step(most, context)),
        decode_sequences: sequences,
        decode_step_seconds: decode_step,
        kv_transfer_seconds: pool.transfer,
    })
}

/// One replica's serving figures for a question: its capacity, its goodput within the
/// targets, and its latency distribution at the offered load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadReport {
    /// Where the request shapes came from (`fixed`, a file) and their means.
    pub requests: String,
    /// How the log's lengths were scaled to the prompt and output lengths given beside it.
    pub requests_scaled: Option<String>,
    pub mean_input_tokens: f64,
    pub mean_output_tokens: f64,
    /// Highest throughput with the engine's full concurrency, requests/s (saturation).
    pub capacity_requests_per_second: f64,
    pub capacity_output_tokens_per_second: f64,
    /// Sequences the KV cache and the scheduler hold at once for these requests.
    pub max_concurrent_sequences: f64,
    /// Highest Poisson load within the latency targets, requests/s; `None` without targets,
    /// or when not even a trickle meets them.
    pub goodput_requests_per_second: Option<f64>,
    pub goodput_limit: Option<GoodputLimit>,
    /// The offered load the figures below are at, requests/s.
    pub load_requests_per_second: Option<f64>,
    /// The capacity's 80 % range as multiples of the estimate (measured over estimated, held-out
    /// MLPerf runs: dense models', or mixtures of experts' for a replica with routed experts);
    /// `None` where the calibration data holds none.
    pub capacity_interval: Option<crate::serving_near_capacity::CapacityInterval>,
    /// What the load saturates, when it exceeds the replica beyond the capacity's error.
    pub saturated: Option<Saturation>,
    /// A load past the estimated capacity but within its error: it may hold, at its limit.
    pub near_capacity: Option<crate::serving_near_capacity::NearCapacity>,
    pub ttft: Option<Percentiles>,
    pub tpot: Option<Percentiles>,
    pub concurrent_sequences: Option<f64>,
    pub kv_cache_utilisation: Option<f64>,
    /// The most users in a closed loop whose percentiles meet the targets; `None` without
    /// targets.
    pub users_within_targets: Option<f64>,
    /// The replica with the closed-loop users asked for (`concurrency`).
    pub closed_loop: Option<crate::serving_users::UsersPoint>,
    pub scheduler: String,
}

/// The load a question states: an open one of Poisson arrivals, or a closed loop of users.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Load {
    /// Requests/s.
    pub rate: Option<f64>,
    /// Users each sending the next request when the last ends.
    pub users: Option<f64>,
}

/// The serving figures of one replica for `mix` at `load` (if given) within the targets (if
/// given).
pub fn report(
    cost: &StepCost,
    mix: &RequestMix,
    load: Load,
    ttft: Option<LatencyTarget>,
    tpot: Option<LatencyTarget>,
) -> LoadReport {
    use crate::serving_users::{at_users, users_within};
    let capacity = closed_loop(cost, mix, None);
    let targeted = ttft.is_some() || tpot.is_some();
    let found = targeted.then(|| goodput(cost, mix, ttft, tpot)).flatten();
    let users_within_targets = targeted.then(|| users_within(cost, mix, ttft, tpot).unwrap_or(0.0));
    let closed = load.users.map(|users| at_users(cost, mix, users));
    let load = load.rate;
    let point = load.map(|rate| at_load(cost, rate, mix));
    let at = point.and_then(Result::ok);
    // A load the model finds saturating: within the capacity's error, or beyond it.
    let past = load.zip(point.and_then(Result::err)).map(|(rate, bound)| {
        crate::serving_near_capacity::classify(bound, rate, capacity.requests_per_second, cost.measured_on())
    });
    LoadReport {
        requests: mix.origin.clone(),
        requests_scaled: mix.scaling.clone(),
        mean_input_tokens: mix.mean_input(),
        mean_output_tokens: mix.mean_output(),
        capacity_requests_per_second: capacity.requests_per_second,
        capacity_output_tokens_per_second: capacity.output_tokens_per_second,
        max_concurrent_sequences: cost.max_sequences(mix),
        goodput_requests_per_second: found.map(|g| g.requests_per_second).or(targeted.then_some(0.0)),
        goodput_limit: found.map(|g| g.limit),
        load_requests_per_second: load,
        capacity_interval: crate::serving_near_capacity::capacity_interval(cost.measured_on()),
        saturated: past.and_then(Result::err),
        near_capacity: past.and_then(Result::ok),
        ttft: at.map(|p| p.ttft()),
        tpot: at.map(|p| p.tpot()),
        concurrent_sequences: at.map(|p| p.sequences),
        kv_cache_utilisation: at.map(|p| p.kv_utilisation),
        users_within_targets,
        closed_loop: closed,
        scheduler: cost.scheduler.describe(cost.engine),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_longer_than_the_budget_fill_whole_iterations() {
        // A step costs 20 ms decoding alone and 0.1 ms per prompt token beyond 100 tokens (the
        // ridge): below it prompt tokens ride on the weight reads.
        let step = |tokens: f64, _share: f64| 0.02 + 1e-4 * (tokens - 100.0).max(0.0);
        // 9,000-token prompts, one every 50 steps, beside 48 decodes with a 2,048-token budget:
        // each rides in chunks of 2,000 tokens, in 9 % of the iterations.
        let long = PromptChunks::new(2048.0, 48.0, 0.02, 9000.0);
        assert_eq!(long.tokens, 2000.0);
        assert!((long.share - 0.09).abs() < 1e-12);
        assert!((long.per_prompt - 4.5).abs() < 1e-12);
        // The mean step pays each chunk's compute, 20 ms + 9 % × 190 ms = 37 ms, not the 28 ms
        // of a step carrying the mean 180 prompt tokens, most of them under the ridge.
        let mean_step = long.mean_step(step);
        assert!((mean_step - (0.02 + 0.09 * 0.19)).abs() < 1e-12, "{mean_step}");
        assert!(mean_step > 1.3 * step(180.0, 1.0));
        // Prompts shorter than the budget are taken in as they arrive: the steps carry the mean.
        let short = PromptChunks::new(2048.0, 48.0, 0.5, 220.0);
        assert_eq!((short.tokens, short.share, short.per_prompt), (110.0, 0.5, 1.0));
        assert_eq!(short.mean_step(step), step(110.0, 0.5));
    }

    #[test]
    fn the_largest_of_poisson_counts_has_its_limits() {
        // One count: its mean. Rare events: the chance that any of the counts is one.
        assert!((expected_poisson_maximum(3.0, 1.0) - 3.0).abs() < 1e-9);
        let rare = expected_poisson_maximum(1e-4, 8.0);
        assert!((rare - (1.0 - (-8e-4_f64).exp())).abs() < 1e-7, "{rare}");
        // More ranks, a larger maximum; never below the mean.
        assert!(expected_poisson_maximum(2.0, 8.0) > expected_poisson_maximum(2.0, 2.0));
        assert!(expected_poisson_maximum(2.0, 2.0) > 2.0);
    }

    #[test]
    fn a_long_prompt_keeps_its_rank_busy_while_short_ones_spread() {
        // 8 ranks, 8,192 tokens each. 8,192 prompt tokens an iteration as 64 prompts of 128:
        // the busiest rank holds about half again its even share of 1,024.
        let short = busiest_rank_excess(8192.0, 128.0, 8.0, 8192.0);
        assert!(short > 200.0 && short < 1024.0, "{short}");
        // The same tokens as 5,000-token prompts: the busiest rank holds a whole prompt,
        // several times its even share.
        let long = busiest_rank_excess(8192.0, 5000.0, 8.0, 8192.0);
        assert!(long > 3.0 * 1024.0, "{long}");
        // Never more than a rank's budget, and nothing without ranks.
        assert!(busiest_rank_excess(8192.0, 20_000.0, 8.0, 8192.0) <= 8192.0 - 1024.0);
        assert_eq!(busiest_rank_excess(8192.0, 5000.0, 1.0, 8192.0), 0.0);
    }

    #[test]
    fn the_roofline_rounds_only_near_its_knee() {
        // Far from the ridge the larger term alone; where the two are equal, 2^(1/3) of it.
        assert_eq!(rounded_roofline(10.0, 0.05, 3.0), 10.0);
        assert!((rounded_roofline(4.0, 4.0, 3.0) - 4.0 * 2f64.cbrt()).abs() < 1e-12);
        let (weights, halfway) = (10.0, rounded_roofline(10.0, 5.0, 3.0));
        assert!(halfway > weights && halfway < rounded_roofline(10.0, 10.0, 3.0));
        assert_eq!(rounded_roofline(0.0, 0.0, 3.0), 0.0);
    }

    #[test]
    fn erlang_c_matches_its_tables() {
        // Two servers at an offered load of one: P(wait) = 1/3.
        assert!((erlang_c(2.0, 1.0) - 1.0 / 3.0).abs() < 1e-12);
        // One server: P(wait) = utilisation.
        assert!((erlang_c(1.0, 0.7) - 0.7).abs() < 1e-12);
        // A thousand slots at 95 % and 99 %: rare, then common (Halfin–Whitt: ≈ 0.07, ≈ 0.6).
        let (light, heavy) = (erlang_c(1000.0, 950.0), erlang_c(1000.0, 990.0));
        assert!(light > 0.03 && light < 0.12, "{light}");
        assert!(heavy > 0.5 && heavy < 0.8, "{heavy}");
        let admission = Admission::new(1000.0, 990.0, 40.0, 0.0);
        assert_eq!(admission.at(0.2), 0.0);
        assert!(admission.at(0.99) > 5.0 * admission.mean(), "{admission:?}");
    }
}
