//! The entry point: one workload of one model on one cluster → memory, speed and the
//! assumptions behind them.

use crate::cluster::Cluster;
use crate::diffusion::Denoiser;
use crate::efficiency::{
    cnn_activation_bytes_per_forward_flop, cnn_efficiency_factor, cnn_inference_factor, engine_profile,
    inference_uncertainty, memory_uncertainty, training_peak_fraction, training_uncertainty,
};
use crate::error::EstimateError;
use crate::inference::{InferenceEstimate, InferenceShape};
use crate::memory::{self, MemoryEstimate};
use crate::notes::Notes;
use crate::parameters::{ParameterCount, count_parameters};
use crate::precision_bytes::{activation_bytes, weight_bytes};
use crate::serving::StepCost;
use crate::training::{TrainingEstimate, TrainingShape};
use crate::{flops, inference, kv_cache, training};
use gpuplan_model::{
    Accelerator, Architecture, Bytes, CitedSpec, Engine, FlopsPerSecond, KvCacheDtype, ModelSpec, Precision, Task,
    TransformerSpec, WeightKernel, Workload,
};
use serde::Serialize;

/// How much training is asked for, to turn throughput into time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrainingAmount {
    Tokens(f64),
    Samples(f64),
}

/// Everything one estimate needs.
#[derive(Debug, Clone, Copy)]
pub struct EstimateRequest<'a> {
    pub model: &'a ModelSpec,
    pub accelerator: &'a Accelerator,
    pub workload: &'a Workload,
    pub cluster: Cluster,
    pub amount: Option<TrainingAmount>,
    /// Keep the assumptions in words (off while a search weighs thousands of candidates).
    pub explain: bool,
}

/// Parameter counts of the model as estimated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ParameterSummary {
    pub total: u64,
    /// Used per token (differs from total for mixture-of-experts models).
    pub active: u64,
    /// Updated by the optimizer (the adapters for LoRA/QLoRA; 0 for inference).
    pub trainable: u64,
}

/// How far the estimates may be off: relative half-widths of the bands they carry and, where
/// the validation tables measure it, the 80 % interval of measured / estimated (speed:
/// throughput; a time's interval is its inverse).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Uncertainty {
    pub memory: f64,
    pub speed: f64,
    pub memory_interval: Option<[f64; 2]>,
    pub speed_interval: Option<[f64; 2]>,
}

impl Uncertainty {
    /// Half-widths only, before the measured intervals are looked up.
    pub fn bands(memory: f64, speed: f64) -> Uncertainty {
        Uncertainty {
            memory,
            speed,
            memory_interval: None,
            speed_interval: None,
        }
    }

    /// With the 80 % intervals the in-force calibration measured for a workload of `task` on
    /// `gpus` GPUs, `gpus_per_node` to a node (a mixture of experts' training has its own).
    pub fn measured(self, training: bool, moe: bool, gpus: u32, gpus_per_node: u32) -> Uncertainty {
        use gpuplan_model::fitted::{IntervalKind, Regime};
        let calibration = crate::calibration::calibration();
        let regime = Regime::of(gpus, gpus_per_node);
        let interval = |kind| calibration.interval(kind, regime).map(|i| [i.low, i.high]);
        let speed = match (training, moe) {
            (true, true) => IntervalKind::MoeTraining,
            (true, false) => IntervalKind::Training,
            (false, _) => IntervalKind::Inference,
        };
        Uncertainty {
            memory_interval: interval(IntervalKind::Memory),
            speed_interval: interval(speed),
            ..self
        }
    }
}

/// An estimate with its reasons.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub parameters: ParameterSummary,
    pub memory: MemoryEstimate,
    pub training: Option<TrainingEstimate>,
    pub inference: Option<InferenceEstimate>,
    /// The iteration cost of a continuous-batching engine, for load and goodput questions
    /// ([`crate::serving`]).
    #[serde(skip)]
    pub serving_cost: Option<StepCost>,
    pub uncertainty: Uncertainty,
    /// The image pipeline as estimated (diffusion models counted layer by layer).
    pub image: Option<ImageSummary>,
    pub assumptions: Vec<String>,
}

/// What a diffusion estimate resolved: size, schedule and the UNet's cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ImageSummary {
    /// Pixels per side.
    pub resolution: u64,
    pub denoising_steps: u64,
    /// Classifier-free guidance (two UNet passes per step).
    pub guidance: bool,
    /// FLOPs of one UNet pass over one image, attention included.
    pub unet_flops_per_pass: f64,
    /// FLOPs of the VAE decoder over one image, when its config is known.
    pub decoder_flops: Option<f64>,
    /// Seconds of one denoising step over the batch (inference), the VAE decode excluded.
    pub step_seconds: Option<f64>,
}

/// Largest sizes accepted: beyond these, inputs are mistakes, and products could overflow.
const MAX_SEQUENCE: u64 = 10_000_000;
const MAX_BATCH: u64 = 100_000_000;
const MAX_GPUS: u32 = 1_000_000;

/// The dense peak the workload computes at, falling back where the format only stores weights.
/// The kernel for the workload's weights: the one asked for where it serves the precision,
/// else the engine's default.
pub fn weight_kernel(workload: &Workload) -> WeightKernel {
    workload
        .weight_kernel
        .filter(|k| k.precisions().contains(&workload.precision))
        .unwrap_or_else(|| WeightKernel::default_for(workload.engine, workload.precision))
}

/// The layers a quantised checkpoint keeps in 16 bits beside the rest, in words (empty where
/// none): the attention layers its config keeps out of quantisation, or latent attention's
/// projections beside 4-bit weights.
fn sixteen_bit_layers_note(spec: &TransformerSpec, precision: Precision) -> String {
    let kept = crate::precision_bytes::sixteen_bit_layer_parameters(spec, precision);
    if kept <= 0.0 {
        return String::new();
    }
    if spec.quantization.as_ref().is_some_and(|q| q.unquantized_attention) {
        format!(
            "; so are its attention layers ({:.2}B parameters, 16-bit weights and matmuls), which the checkpoint's \
             config keeps out of quantisation",
            kept / 1e9
        )
    } else {
        format!(
            "; so are latent attention's projections but the output one ({:.2}B parameters, 16-bit weights and \
             matmuls), as NVIDIA's NVFP4 checkpoints of DeepSeek-R1 keep them",
            kept / 1e9
        )
    }
}

/// The precision the matmuls run at and the part's dense peak there. `fp4_format` is the
/// 4-bit float checkpoint's format, where the model is a transformer.
fn compute_peak(
    accelerator: &Accelerator,
    workload: &Workload,
    fp4_format: Option<gpuplan_model::Fp4Format>,
) -> Result<(Precision, FlopsPerSecond), EstimateError> {
    let wanted = match (workload.task, workload.precision) {
        // Weight-only quantisation: int4 weights are dequantised to 16-bit for the matmul.
        (Task::Inference, Precision::Int4 | Precision::Fp4 | Precision::Fp6) => {
            if accelerator.peak(workload.precision).is_some() && workload.precision == Precision::Fp4 {
                // MXFP4 weights meet MXFP8 activations on NVIDIA's 8-bit MMA.
                if fp4_format.is_some_and(|format| format.multiplies_eight_bit_activations(accelerator)) {
                    Precision::Fp8
                } else {
                    Precision::Fp4
                }
            } else {
                Precision::Fp16
            }
        }
        // Weight-only int8 kernels (bitsandbytes, Marlin-class) multiply in 16 bits.
        (Task::Inference, Precision::Int8)
            if accelerator.peak(Precision::Int8).is_none() || weight_kernel(workload) != WeightKernel::Native =>
        {
            Precision::Fp16
        }
        // QLoRA computes in 16-bit.
        (Task::Qlora, _) => Precision::Bf16,
        (_, precision) => precision,
    };
    let fallback = match wanted {
        Precision::Bf16 => Some(Precision::Fp16),
        Precision::Fp16 => Some(Precision::Bf16),
        Precision::Tf32 => Some(Precision::Fp32),
        _ => None,
    };
    // bf16 on a part without bf16 (V100, T4) is an error for training, where the format
    // matters; serving 16-bit weights runs in fp16 there.
    // Ampere and newer run bf16 at the fp16 rate, so an fp16-only datasheet covers bf16.
    let bf16_capable = accelerator.is_ampere_or_newer();
    let allow_fallback =
        workload.task == Task::Inference || workload.task == Task::Qlora || wanted != Precision::Bf16 || bf16_capable;
    accelerator
        .peak(wanted)
        .map(|peak| (wanted, peak))
        .or_else(|| {
            fallback
                .filter(|_| allow_fallback)
                .and_then(|p| accelerator.peak(p).map(|peak| (p, peak)))
        })
        .ok_or_else(|| EstimateError::PrecisionUnsupported {
            accelerator: accelerator.id.to_string(),
            precision: wanted.to_string(),
        })
}

fn validate(request: &EstimateRequest) -> Result<(), EstimateError> {
    let w = request.workload;
    for (what, value) in [
        ("batch", w.batch),
        ("micro-batch", w.micro_batch),
        ("sequence length", w.seq),
    ] {
        if value == 0 {
            return Err(EstimateError::NotPositive { what });
        }
    }
    if w.seq > MAX_SEQUENCE {
        return Err(EstimateError::OutOfRange {
            what: "sequence length",
            value: w.seq.to_string(),
        });
    }
    if w.output_tokens > MAX_SEQUENCE {
        return Err(EstimateError::OutOfRange {
            what: "output tokens",
            value: w.output_tokens.to_string(),
        });
    }
    if w.batch > MAX_BATCH || w.micro_batch > MAX_BATCH {
        return Err(EstimateError::OutOfRange {
            what: "batch",
            value: w.batch.to_string(),
        });
    }
    let layout = w.layout;
    if layout.tp == 0 || layout.pp == 0 || layout.dp == 0 || request.cluster.gpus > MAX_GPUS {
        return Err(EstimateError::NotPositive {
            what: "parallel degree",
        });
    }
    if layout.zero > 3 {
        return Err(EstimateError::OutOfRange {
            what: "ZeRO stage",
            value: layout.zero.to_string(),
        });
    }
    if layout.gpus() != request.cluster.gpus {
        return Err(EstimateError::LayoutMismatch {
            layout: layout.gpus(),
            gpus: request.cluster.gpus,
        });
    }
    // Serving is timed from the memory bandwidth: without one, decode would look free.
    if w.task == Task::Inference && request.accelerator.memory_bandwidth.is_none() {
        return Err(EstimateError::SpecMissing {
            accelerator: request.accelerator.id.to_string(),
            what: "memory bandwidth",
        });
    }
    if matches!(w.task, Task::Lora | Task::Qlora) && w.lora_rank == 0 {
        return Err(EstimateError::NotPositive { what: "LoRA rank" });
    }
    if w.task.is_training() && w.batch % (w.micro_batch * u64::from(layout.dp)) != 0 {
        return Err(EstimateError::BatchNotDivisible {
            batch: w.batch,
            micro_batch: w.micro_batch,
            dp: layout.dp,
        });
    }
    if layout.cp == 0 || layout.ep == 0 {
        return Err(EstimateError::NotPositive {
            what: "parallel degree",
        });
    }
    if u64::from(layout.cp) > w.seq {
        return Err(EstimateError::OutOfRange {
            what: "context parallel degree (more than the tokens)",
            value: layout.cp.to_string(),
        });
    }
    if layout.ep > 1 {
        let experts = request
            .model
            .transformer()
            .and_then(|spec| spec.moe.map(|moe| moe.experts));
        let Some(experts) = experts else {
            return Err(EstimateError::Unsupported {
                task: "expert parallelism".to_string(),
                model: request.model.id.clone(),
                why: "it has no mixture-of-experts layers".to_string(),
            });
        };
        // Serving spreads the experts over the GPUs of one replica (its tensor-parallel
        // group); training over the data-parallel replicas.
        if w.task == Task::Inference {
            if layout.tp % layout.ep != 0 || experts % u64::from(layout.ep) != 0 {
                return Err(EstimateError::OutOfRange {
                    what: "expert parallel degree for serving (must divide the tensor-parallel GPUs of a replica and the experts)",
                    value: format!("{} (TP {}, {experts} experts)", layout.ep, layout.tp),
                });
            }
        } else if (layout.dp % layout.ep != 0 && !layout.experts_folded()) || experts % u64::from(layout.ep) != 0 {
            return Err(EstimateError::OutOfRange {
                what: "expert parallel degree (must divide the experts, and the data-parallel replicas or those times the tensor-parallel GPUs)",
                value: format!("{} (DP {}, TP {}, {experts} experts)", layout.ep, layout.dp, layout.tp),
            });
        }
    }
    if let Architecture::Transformer(spec) = &request.model.architecture {
        let tp = u64::from(layout.tp);
        if spec.heads % tp != 0 {
            return Err(EstimateError::TensorParallelHeads {
                tp: layout.tp,
                heads: spec.heads,
            });
        }
        if spec.mla.is_none() && spec.kv_heads % tp != 0 && tp % spec.kv_heads != 0 {
            return Err(EstimateError::TensorParallelKvHeads {
                tp: layout.tp,
                kv_heads: spec.kv_heads,
            });
        }
        if u64::from(layout.pp) > spec.layers + spec.decoder_layers {
            return Err(EstimateError::PipelineTooDeep {
                pp: layout.pp,
                layers: spec.layers + spec.decoder_layers,
            });
        }
        if w.task == Task::Inference && !spec.generates() && w.output_tokens > 0 {
            return Err(EstimateError::Unsupported {
                task: "generation".to_string(),
                model: request.model.id.clone(),
                why: "it is an encoder without a decoder; use --output-tokens 0".to_string(),
            });
        }
    }
    Ok(())
}

/// Estimates memory and speed of `request`.
pub fn estimate(request: &EstimateRequest) -> Result<Estimate, EstimateError> {
    validate(request)?;
    let fp4_format = match &request.model.architecture {
        Architecture::Transformer(spec) => Some(crate::precision_bytes::Fp4Format::of(spec, request.accelerator)),
        Architecture::Cited(_) => None,
    };
    let (compute_precision, peak) = compute_peak(request.accelerator, request.workload, fp4_format)?;
    let mut assumptions = Notes::new(request.explain);
    if compute_precision != request.workload.precision {
        let why = if request.workload.precision == Precision::Fp4 && compute_precision == Precision::Fp8 {
            ": the engines multiply MXFP4 weights by MXFP8 activations on NVIDIA's 8-bit MMA"
        } else {
            ""
        };
        assumptions.add(|| {
            format!(
                "{} weights; matmuls run at {} ({} dense peak {peak}){why}",
                request.workload.precision, compute_precision, request.accelerator.id
            )
        });
    }
    match &request.model.architecture {
        Architecture::Transformer(spec) => transformer(request, spec, (compute_precision, peak), assumptions),
        Architecture::Cited(spec) => cited(request, spec, peak, assumptions),
    }
}

/// Sequence length the model actually sees: a ViT sees its patches, whatever was asked.
fn effective_sequence(spec: &TransformerSpec, workload: &Workload) -> u64 {
    match spec.image {
        Some(_) => spec.max_context,
        None => workload.seq,
    }
}

fn transformer(
    request: &EstimateRequest,
    spec: &TransformerSpec,
    (compute_precision, peak): (Precision, FlopsPerSecond),
    mut assumptions: Notes,
) -> Result<Estimate, EstimateError> {
    let workload = request.workload;
    let counts: ParameterCount = count_parameters(spec);
    for note in &spec.read_notes {
        assumptions.add(|| note.clone());
    }
    let seq = effective_sequence(spec, workload);
    if spec.image.is_some() && seq != workload.seq {
        assumptions.add(|| format!("a vision transformer sees {seq} tokens per image (patches + class token)"));
    }
    if spec.max_context > 0 && seq > spec.max_context && spec.image.is_none() {
        assumptions.add(|| {
            format!(
                "sequence {seq} is longer than the {} tokens the model was trained for",
                spec.max_context
            )
        });
    }
    assumptions.add(|| match request.model.checkpoint_parameters {
        Some(held) => format!(
            "{} parameters ({} active per token): the checkpoint holds {held} (its model.safetensors.index.json); \
             what it holds beyond the architecture's layers is counted as weights without FLOPs",
            counts.total, counts.active
        ),
        None => format!(
            "{} parameters ({} active per token) counted from the architecture",
            counts.total, counts.active
        ),
    });

    if workload.task == Task::Inference {
        // TensorRT-LLM's fp8 and fp4 recipes quantise the KV cache to fp8 as well (its
        // performance tables and NVIDIA's MLPerf submissions are measured so); other engines
        // keep it in 16-bit unless told otherwise.
        let kv_value_bytes = match workload.kv_cache {
            KvCacheDtype::Eight => 1.0,
            KvCacheDtype::Half => 2.0,
            KvCacheDtype::Auto
                if matches!(workload.precision, Precision::Fp8 | Precision::Fp4)
                    && workload.engine == Engine::TensorrtLlm =>
            {
                1.0
            }
            KvCacheDtype::Auto => 2.0,
        };
        // With attention data parallelism each GPU keeps its own sequences' whole cache: a
        // replica's token costs 1/tp of it per GPU on average, with no heads repeated.
        let attention_dp = workload.layout.attention_dp && workload.layout.tp > 1 && spec.moe.is_some();
        let kv_split = if attention_dp {
            f64::from(workload.layout.tp)
        } else {
            kv_cache::tensor_parallel_split(spec, workload.layout.tp)
        };
        // Sliding-window layers keep at most their window: the cache per token is averaged over
        // the request's whole length (prompt and output).
        let context = (workload.seq + workload.output_tokens) as f64;
        let share = kv_cache::context_share(spec, context);
        if let (Some(sliding), true) = (spec.sliding_window, share < 1.0) {
            assumptions.add(|| {
                format!(
                    "sliding-window attention: {} of {} layers keep only the last {} tokens, so at {context:.0} tokens the KV cache is {:.0} % of full attention's (as vLLM from 0.10, TensorRT-LLM and SGLang allocate it; older vLLM kept the whole context)",
                    sliding.local_layers,
                    spec.layers,
                    sliding.window,
                    share * 100.0
                )
            });
        }
        let kv_gpu = kv_cache::bytes_per_token(spec, kv_value_bytes) * share / kv_split;
        let mut memory = memory::inference(spec, &counts, workload, request.accelerator, kv_gpu);
        let host = crate::host_offload::HostOffload::place(
            spec,
            &counts,
            workload,
            &mut memory,
            kv_gpu,
            (
                crate::host_offload::host_bandwidth_bytes_per_second(workload),
                request.cluster.host_link.0,
            ),
        );
        let kv_gpu = host.map_or(kv_gpu, |h| kv_gpu - h.kv_bytes_per_token);
        if let Some(host) = &host {
            assumptions.add(|| crate::host_offload::note(host, workload));
        }
        // Routed experts: the parameters of one, and the layers that hold them.
        let experts = spec.moe.map(|moe| {
            let one = if spec.gated_ffn { 3 } else { 2 } * spec.hidden * moe.expert_ffn;
            (moe, one, spec.layers.saturating_sub(moe.dense_layers))
        });
        let expert_bytes = memory::routed_expert_parameters(spec) as f64
            * crate::precision_bytes::served_weight_bytes(spec, request.accelerator, workload.precision)
            / f64::from(workload.layout.tp * workload.layout.pp);
        let reserved = memory.weights + memory.activations + memory.overhead;
        let kernel = weight_kernel(workload);
        let kernel_profile = crate::efficiency::weight_kernel_profile(kernel);
        if kernel != WeightKernel::Native {
            assumptions.add(|| {
                format!(
                    "{} weights through the {kernel} kernel: {}",
                    workload.precision, kernel_profile.evidence
                )
            });
        }
        let tp = workload.layout.tp.max(1);
        let expert_parallel = if attention_dp { tp } else { workload.layout.ep };
        let shape = InferenceShape {
            layers: spec.layers + spec.decoder_layers,
            host,
            scaled_expert_layers: experts
                .filter(|_| workload.precision.bits() <= 8)
                .map_or(0, |(moe, _, layers)| layers * moe.experts),
            expert_matmul_parameters: experts
                .map_or(0.0, |(moe, one, layers)| (moe.experts_per_token * one * layers) as f64),
            expert_parallel,
            hidden: spec.hidden,
            vocab: spec.vocab,
            matmul_parameters: counts.active_matmul() as f64,
            sixteen_bit_matmul_parameters: crate::precision_bytes::sixteen_bit_layer_parameters(
                spec,
                workload.precision,
            ),
            logits_matmul_parameters: counts.logits_matmul as f64,
            // Sliding-window layers attend to their window only: the work per token of context
            // is averaged over the request's length as its cache is.
            attention_flops_per_token_per_context: flops::attention_forward_per_token(spec, 1) * share,
            decode_attention_flops_per_token_per_context: flops::attention_decode_per_token(spec, 1) * share,
            attention_exponentials_per_token_per_context: flops::attention_exponentials_per_token(spec, 1) * share,
            four_bit_matmuls: compute_precision == Precision::Fp4,
            weight_bytes_gpu: memory.weights.as_u64() as f64,
            expert_bytes_gpu: expert_bytes,
            expert_share_per_token: spec.moe.map_or(0.0, |m| m.experts_per_token as f64 / m.experts as f64),
            kv_bytes_per_token_gpu: kv_gpu / f64::from(workload.layout.pp),
            kv_budget_bytes: kv_budget(&memory, reserved, workload, request.accelerator),
            tensor_parallel_bandwidth: request.cluster.group_bandwidth(workload.layout.tp, 1).0,
            activation_bytes_per_sequence: memory.activations.as_u64() as f64 / workload.batch.max(1) as f64,
            generates: spec.generates(),
            weight_time_factor_batch1: kernel_profile.weight_time_factor_batch1,
            weight_time_factor: kernel_profile.weight_time_factor,
            gemm_factor: kernel_profile.gemm_factor,
            attention_data_parallel: attention_dp,
            moe_layers: experts.map_or(0, |(_, _, layers)| layers),
            experts_per_token: experts.map_or(0, |(moe, _, _)| moe.experts_per_token),
            // Experts spread over `expert_parallel` of the `tp` GPUs are sliced the rest of the way.
            expert_width: experts.map_or(0.0, |(moe, _, _)| {
                moe.expert_ffn as f64 * f64::from(expert_parallel.clamp(1, tp)) / f64::from(tp)
            }),
            dispatch_bytes: if workload.precision.bits() <= 8 { 1.0 } else { 2.0 },
            expert_row_copy_bytes: crate::inference::expert_row_copy_bytes(workload.engine, workload.precision),
        };
        if let Some(mla) = spec.mla {
            assumptions.add(|| {
                format!(
                    "multi-head latent attention decodes in its absorbed form, each of {} heads scoring the {}-wide latent and its {}-wide rotary key: {:.1} MFLOP per token of context, {:.1}× the form its prompts are attended in",
                    spec.heads,
                    mla.kv_lora_rank,
                    mla.qk_rope_head_dim,
                    shape.decode_attention_flops_per_token_per_context / 1e6,
                    shape.decode_attention_flops_per_token_per_context / shape.attention_flops_per_token_per_context
                )
            });
        }
        if shape.expert_width > 0.0 {
            assumptions.add(|| {
                format!(
                    "routed experts' GEMMs at {:.0} % of the dense GEMMs' rate: the engines' grouped GEMMs at {:.0} % (set from NVIDIA's MLPerf Mixtral-8x7B H100 run), × {:.0} % for a width of {:.0} on one GPU against the model's {} (GEMM efficiency w/(w + {:.0}))",
                    shape.expert_gemm_efficiency() * 100.0,
                    crate::efficiency::serving_grouped_gemm_factor() * 100.0,
                    shape.expert_width_efficiency() * 100.0,
                    shape.expert_width,
                    shape.hidden,
                    crate::efficiency::hidden_size_at_half_efficiency()
                )
            });
            assumptions.add(|| {
                format!(
                    "routed experts' rows through memory beyond their weights: each of a token's {} rows per MoE layer is read back by the weighted combine after the second GEMM{}, {} a token on each GPU, at its memory bandwidth, in kernels of their own",
                    shape.experts_per_token,
                    if shape.expert_row_copy_bytes > 0.0 {
                        " and, with TensorRT-LLM, first copied into expert order"
                    } else {
                        ""
                    },
                    Bytes(shape.expert_row_bytes_per_token() as u64),
                )
            });
        }
        if shape.logits_matmul_parameters > 0.0 {
            assumptions.add(|| {
                format!(
                    "the logits projection ({} × {} = {:.2}B parameters) runs only for the tokens that yield an output, each generated token and the last of each prompt{}",
                    spec.vocab,
                    spec.hidden,
                    shape.logits_matmul_parameters / 1e9,
                    if workload.precision.bits() <= 8 {
                        ", and in 16 bits: quantised checkpoints keep the output layer unquantised"
                    } else {
                        ""
                    }
                )
            });
        }
        if attention_dp {
            assumptions.add(|| {
                format!(
                    "attention data parallel over the {} GPUs of a replica: each runs attention for its own sequences with the whole attention weights ({} per GPU in all) and keeps their whole KV cache; the experts are spread over all of them, tokens sent to their experts in {} bits and back in 16 once per MoE layer (all-to-all); sequences assumed spread evenly, but a prompt runs on the one rank that holds it and every MoE layer waits for the busiest rank (the expected largest of the ranks' Poisson shares of the prompts); TensorRT-LLM's batch and token limits apply per rank",
                    workload.layout.tp,
                    Bytes(shape.weight_bytes_gpu as u64),
                    shape.dispatch_bytes * 8.0,
                )
            });
        }
        if tp > 1 && !attention_dp {
            assumptions.add(|| {
                let (fixed, per_token) = shape.collective_seconds(f64::from(tp));
                format!(
                    "tensor parallelism over {tp} GPUs: two all-reduces of the hidden state a layer ({} a step), each {:.0} µs of latency (1 + log₂ {tp} rounds of {:.1} µs, set from two light-load TP4 H100 runs) plus its bytes, a ring's 2(n − 1)/n of {} bytes a token, at {:.0} GB/s a GPU: {:.1} ms a step and {:.2} µs a token",
                    2 * shape.layers,
                    crate::inference::all_reduce_latency(f64::from(tp)) * 1e6,
                    crate::efficiency::all_reduce_round_seconds() * 1e6,
                    shape.hidden * 2,
                    shape.tensor_parallel_bandwidth / 1e9,
                    fixed * 1e3,
                    per_token * 1e6,
                )
            });
        }
        if workload.layout.pp > 1 {
            assumptions.add(|| {
                format!(
                    "{} pipeline stages: with continuous batching each stage runs its own micro-batch of the running sequences at once, so an iteration is {} stage-steps and a token passes every stage; a static batch passes them one after another",
                    workload.layout.pp, workload.layout.pp,
                )
            });
        }
        if shape.expert_parallel > 1 && !attention_dp {
            assumptions.add(|| {
                format!(
                    "experts placed whole over the {} GPUs of a replica (expert parallelism, attention tensor-parallel): each GPU routes to its {} of them, and the step waits for the GPU that drew the most tokens, assumed {:.1}× the mean",
                    shape.expert_parallel,
                    spec.moe.map_or(0, |m| m.experts) / u64::from(shape.expert_parallel),
                    crate::efficiency::serving_expert_imbalance(),
                )
            });
        }
        if shape.scaled_expert_layers > 0 {
            assumptions.add(|| {
                format!(
                    "the MoE layers hold {} routed experts in all (experts × layers), whose quantised grouped GEMMs cost {:.2} ms more per iteration on each GPU ({:.1} µs per expert and layer a GPU serves: activation quantisation, scales and launches per expert, set from DeepSeek-R1 fp8 serving runs, where engines differ by 2× around it; 16-bit experts run plain grouped GEMMs and do not pay it)",
                    shape.scaled_expert_layers,
                    crate::efficiency::serving_moe_expert_seconds() * 1e3 * shape.scaled_expert_layers as f64
                        / f64::from(shape.expert_parallel.max(1)),
                    crate::efficiency::serving_moe_expert_seconds() * 1e6,
                )
            });
        }
        let estimate = inference::estimate(request.accelerator, peak, workload, &shape, &mut assumptions);
        let serving_cost = (workload.engine.continuous_batching() && shape.generates).then(|| {
            StepCost::new(
                request.accelerator,
                peak,
                workload.engine,
                &workload.engine_settings,
                workload.precision,
                &workload.layout,
                &shape,
            )
        });
        if let Some(cost) = &serving_cost {
            assumptions.add(|| crate::efficiency::serving_gemm_note(request.accelerator));
            if let Some(note) = cost.attention_note() {
                assumptions.add(|| note);
            }
            assumptions.add(|| {
                crate::serving_iteration::iteration_note(workload.engine, &workload.engine_settings, shape.layers)
            });
        }
        assumptions.add(|| {
            format!(
                "KV cache in {}: {} per token on each GPU",
                if kv_value_bytes < 2.0 { "fp8" } else { "16-bit" },
                Bytes((kv_gpu / f64::from(workload.layout.pp)) as u64)
            )
        });
        push_memory_assumptions(&mut assumptions, request);
        return Ok(Estimate {
            parameters: ParameterSummary {
                total: counts.total,
                active: counts.active,
                trainable: 0,
            },
            memory,
            training: None,
            inference: Some(estimate),
            serving_cost,
            uncertainty: Uncertainty::bands(memory_uncertainty(), inference_uncertainty()),
            image: None,
            assumptions: assumptions.into_vec(),
        });
    }

    let memory = memory::training(spec, &counts, workload, request.accelerator, seq, request.cluster.gpus);
    let trainable = match workload.task {
        Task::Lora | Task::Qlora => memory::lora_parameters(spec, workload.lora_rank, workload.lora_targets),
        _ => counts.total,
    };
    let shape = TrainingShape {
        hidden: spec.hidden,
        layers: spec.layers + spec.decoder_layers,
        seq,
        trainable_parameters: trainable as f64,
        parameters: counts.total as f64,
        expert_parameters: crate::memory::expert_parameters(spec),
        kv_width: spec.kv_width(),
        moe_layers: spec.moe.map_or(0, |moe| spec.layers.saturating_sub(moe.dense_layers)),
        experts_per_token: spec.moe.map_or(0, |moe| moe.experts_per_token),
        experts: spec.moe.map_or(0, |moe| moe.experts),
        flops_per_token: flops::training_per_token(spec, &counts, seq, workload.task, workload.checkpointing),
        saved_activation_bytes: memory.activations.as_u64() as f64,
    };
    let mut estimate = training::estimate(
        request.accelerator,
        peak,
        workload,
        &request.cluster,
        &shape,
        &mut assumptions,
    );
    estimate = page_optimizer_states(estimate, &memory, request.cluster.host_link.0, &mut assumptions);
    estimate = apply_amount(estimate, request, seq);
    push_memory_assumptions(&mut assumptions, request);
    Ok(Estimate {
        parameters: ParameterSummary {
            total: counts.total,
            active: counts.active,
            trainable,
        },
        memory,
        training: Some(estimate),
        inference: None,
        serving_cost: None,
        uncertainty: Uncertainty::bands(memory_uncertainty(), training_uncertainty()),
        image: None,
        assumptions: assumptions.into_vec(),
    })
}

/// Paged optimizer states stay on the GPU as far as the rest leaves room; the others move in
/// for each step's update and out again to make room: bitsandbytes prefetches paged states to
/// the GPU before it updates them (`Optimizer8bit.prefetch_state`) and the driver evicts
/// managed pages under pressure. The two directions of the host link run at once (the states
/// just updated leave while the next arrive), and the update waits for its states, so the
/// step pays one pass of what does not fit.
fn page_optimizer_states(
    estimate: TrainingEstimate,
    memory: &MemoryEstimate,
    host_link: f64,
    notes: &mut Notes,
) -> TrainingEstimate {
    let paged = memory.paged_optimizer.as_u64() as f64;
    if paged <= 0.0 {
        return estimate;
    }
    let room = (memory.capacity.as_u64() as f64 - memory.per_gpu.as_u64() as f64).max(0.0);
    let away = (paged - room).max(0.0);
    let seconds = if host_link > 0.0 { away / host_link } else { 0.0 };
    notes.add(|| {
        if away > 0.0 {
            format!(
                "paged optimizer states: {} in CUDA managed memory, {} of it beyond the GPU's free memory, paged in \
                 and out every step at {:.0} GB/s: {seconds:.2} s",
                Bytes(paged as u64),
                Bytes(away as u64),
                host_link / 1e9
            )
        } else {
            format!(
                "paged optimizer states: {} in CUDA managed memory, all of it resident beside the rest",
                Bytes(paged as u64)
            )
        }
    });
    estimate.with_exposed_transfer(seconds)
}

pub(crate) fn apply_amount(estimate: TrainingEstimate, request: &EstimateRequest, _seq: u64) -> TrainingEstimate {
    match request.amount {
        Some(TrainingAmount::Tokens(tokens)) => estimate.for_tokens(tokens, request.cluster.gpus),
        Some(TrainingAmount::Samples(samples)) => estimate.for_samples(samples, request.cluster.gpus),
        None => estimate,
    }
}

fn push_memory_assumptions(assumptions: &mut Notes, request: &EstimateRequest) {
    let w = request.workload;
    let master_copy = || {
        if crate::memory::trains_purely_in_low_precision(w) {
            "with no fp32 master copy (the framework trains purely in its low precision)"
        } else {
            "with an fp32 master copy under mixed precision"
        }
    };
    // Sharded states: the experts a GPU holds only over the ranks that hold the same ones.
    let sharding = || {
        let layout = w.layout;
        let expert_dp = layout.expert_replicas(f64::from(layout.dp));
        let experts = if layout.ep > 1 && layout.zero >= 1 && expert_dp < f64::from(layout.dp) {
            format!(", the experts a GPU holds over the {expert_dp:.0} that hold the same experts")
        } else {
            String::new()
        };
        format!(
            "ZeRO stage {} over {} data-parallel ranks{experts}",
            layout.zero, layout.dp
        )
    };
    match w.task {
        Task::Pretrain | Task::Finetune if w.precision.bits() <= 8 => assumptions.add(|| format!(
            "16-bit weights and gradients with {} casts for the matmuls (Transformer Engine, torchao), {} optimizer \
             {} ({})",
            w.precision, w.optimizer, master_copy(), sharding()
        )),
        Task::Pretrain | Task::Finetune => assumptions.add(|| format!(
            "{} weights, {} gradients, {} optimizer {} ({})",
            w.precision, w.precision, w.optimizer, master_copy(), sharding()
        )),
        Task::Lora => assumptions.add(|| format!(
            "LoRA rank {} on every linear layer of attention and MLP, adapters in fp32 with AdamW; frozen base in {}",
            w.lora_rank, w.precision
        )),
        Task::Qlora => assumptions.add(|| format!(
            "QLoRA: NF4 base (4.5 bits per weight: bitsandbytes' default, no double quantisation), embeddings in \
             16-bit, rank-{} fp32 adapters on every linear layer; activations ×{} (empirical, LitGPT QLoRA peaks)",
            w.lora_rank,
            crate::efficiency::qlora_activation_factor()
        )),
        Task::Inference => {
            let file = match &request.model.architecture {
                gpuplan_model::Architecture::Transformer(spec) => {
                    crate::precision_bytes::served_file_bytes(spec, w).map(|bytes| (spec, bytes))
                }
                _ => None,
            };
            match file {
                Some((spec, bytes)) => assumptions.add(|| {
                    let stored = spec.quantization.as_ref().and_then(|q| q.bits_per_weight).is_some();
                    format!(
                        "{} weights at {:.2} bits each over the whole model, embeddings and output layer included: {}",
                        w.precision,
                        bytes * 8.0,
                        if stored {
                            "the GGUF file's mix of block types (llama.cpp's quantize table)"
                        } else {
                            "llama.cpp's usual GGUF mix for the precision (Q4_K_M for int4, Q8_0 for int8; give the GGUF file for its own)"
                        }
                    )
                }),
                None => assumptions.add(|| {
                    let (format, kept) = match &request.model.architecture {
                        gpuplan_model::Architecture::Transformer(spec) => {
                            let format = if w.precision == Precision::Fp4 {
                                let format = crate::precision_bytes::Fp4Format::of(spec, request.accelerator);
                                format!(" as {}", format.describe())
                            } else {
                                String::new()
                            };
                            (format, sixteen_bit_layers_note(spec, w.precision))
                        }
                        gpuplan_model::Architecture::Cited(_) => (String::new(), String::new()),
                    };
                    format!("{} weights{format}; embeddings and output layer kept in 16-bit{kept}", w.precision)
                }),
            }
        }
    }
    if w.optimizer_in_backward {
        assumptions.add(|| {
            "optimizer stepped in the backward pass: each gradient is applied and freed once complete, so the \
             largest parameter's (the embedding table or a feed-forward matrix) is the most held at once"
                .to_string()
        });
    }
    if w.task.is_training() {
        assumptions.add(|| {
            format!(
                "activations per Korthikanti et al. 2022, {} recomputation, flash attention {}, micro-batch {}",
                w.checkpointing,
                if w.flash_attention { "on" } else { "off" },
                w.micro_batch
            )
        });
        if let Some(framework) = w.framework {
            assumptions.add(|| format!("{framework}: {}", crate::calibration::framework(framework).evidence));
        }
    }
    // The same sizes under each vendor's names: HIP and RCCL on AMD (RCCL is NCCL's port).
    let (context, collectives) = match request.accelerator.vendor.as_str() {
        "NVIDIA" => ("CUDA context", "NCCL buffers"),
        "AMD" => ("HIP context", "RCCL buffers"),
        _ => ("runtime context", "collective buffers"),
    };
    assumptions.add(|| {
        format!(
            "runtime overhead: {} GiB {context}{}, {:.0} % allocator fragmentation on activations and gradients",
            crate::efficiency::cuda_context_gib(),
            if request.cluster.gpus > 1 {
                format!(" + {} GiB {collectives}", crate::efficiency::nccl_buffers_gib())
            } else {
                String::new()
            },
            crate::efficiency::allocator_fragmentation() * 100.0
        )
    });
}

/// UNet passes per denoising step with classifier-free guidance (conditional and
/// unconditional; Ho & Salimans 2022, "Classifier-Free Diffusion Guidance").
const CLASSIFIER_FREE_GUIDANCE_PASSES: f64 = 2.0;

fn cited(
    request: &EstimateRequest,
    spec: &CitedSpec,
    peak: FlopsPerSecond,
    mut assumptions: Notes,
) -> Result<Estimate, EstimateError> {
    if let Some(unet) = &spec.unet {
        return crate::diffusion::diffusion(request, spec, Denoiser::Unet(unet), peak, assumptions);
    }
    if let Some(transformer) = &spec.transformer {
        return crate::diffusion::diffusion(request, spec, Denoiser::Transformer(transformer), peak, assumptions);
    }
    if let Some(resnet) = &spec.resnet {
        return crate::convnet::network(request, resnet, spec.resolution, assumptions);
    }
    if let Some(convnext) = &spec.convnext {
        return crate::convnet::network(request, convnext, spec.resolution, assumptions);
    }
    if let Some(swin) = &spec.swin {
        return crate::convnet::network(request, swin.as_ref(), spec.resolution, assumptions);
    }
    if let Some(yolo) = &spec.yolo {
        return crate::convnet::network(request, yolo.as_ref(), spec.resolution, assumptions);
    }
    let workload = request.workload;
    let model = request.model;
    let parameters = model
        .published_parameters
        .unwrap_or_else(|| spec.components.iter().map(|(_, p)| p).sum());
    let params = parameters as f64;
    let split = f64::from(workload.layout.tp * workload.layout.pp);
    let weights = params * weight_bytes(workload.task, workload.precision) / split;
    assumptions.add(|| {
        format!(
            "{parameters} parameters as published; figures at {0}×{0} pixels",
            spec.resolution
        )
    });
    let forward = spec.forward_flops_per_sample;
    let activation_per_sample = match (spec.activation_bytes_per_sample, forward) {
        (Some(bytes), _) => bytes as f64,
        (None, Some(flops)) => {
            assumptions.add(|| {
                format!(
                    "activation memory per sample taken as {} bytes per forward FLOP \
                 (no published figure for this model)",
                    cnn_activation_bytes_per_forward_flop()
                )
            });
            flops * cnn_activation_bytes_per_forward_flop()
        }
        (None, None) => 0.0,
    };
    let memory = if workload.task.is_training() {
        let trainable = params / split;
        let gradients = trainable * crate::precision_bytes::gradient_bytes(workload.task, workload.precision);
        let optimizer =
            trainable * crate::precision_bytes::optimizer_bytes(workload.task, workload.precision, workload.optimizer);
        let activations =
            activation_per_sample * workload.micro_batch as f64 * activation_bytes(workload.precision) / 2.0;
        memory::without_kv_cache(
            weights,
            gradients,
            optimizer,
            activations,
            memory::training_overhead(activations, gradients),
            memory::capacity(request.accelerator, workload),
        )
    } else {
        let activations =
            activation_per_sample * workload.batch as f64 * crate::efficiency::cnn_inference_activation_share();
        memory::without_kv_cache(
            weights,
            0.0,
            0.0,
            activations,
            Bytes::from_gib(crate::efficiency::cuda_context_gib()),
            memory::capacity(request.accelerator, workload),
        )
    };
    let Some(forward) = forward else {
        assumptions.add(|| "no published FLOPs per sample for this model: speed is not estimated".to_string());
        return Ok(Estimate {
            parameters: ParameterSummary {
                total: parameters,
                active: parameters,
                trainable: 0,
            },
            memory,
            training: None,
            inference: None,
            serving_cost: None,
            uncertainty: Uncertainty::bands(memory_uncertainty() * 2.0, f64::NAN),
            image: None,
            assumptions: assumptions.into_vec(),
        });
    };
    let gpus = f64::from(request.cluster.gpus);
    if workload.task.is_training() {
        let (base, evidence) = training_peak_fraction(request.accelerator, workload.precision);
        assumptions.add(|| evidence.to_string());
        assumptions.add(|| format!("convolutional networks reach ×{} of that", cnn_efficiency_factor()));
        let per_sample = 3.0 * forward;
        let step = per_sample * workload.batch as f64 / (gpus * peak.0 * base * cnn_efficiency_factor());
        let samples_per_second = workload.batch as f64 / step;
        let mut training = TrainingEstimate {
            step_seconds: step,
            tokens_per_second: 0.0,
            samples_per_second,
            mfu: per_sample * samples_per_second / (gpus * peak.0),
            hfu: per_sample * samples_per_second / (gpus * peak.0),
            time_seconds: None,
            gpu_hours: None,
            compute_seconds: step,
            communication_seconds: 0.0,
            pipeline_bubble: 0.0,
            scaling_efficiency: 1.0,
        };
        training = apply_amount(training, request, 0);
        return Ok(Estimate {
            parameters: ParameterSummary {
                total: parameters,
                active: parameters,
                trainable: parameters,
            },
            memory,
            training: Some(training),
            inference: None,
            serving_cost: None,
            uncertainty: Uncertainty::bands(memory_uncertainty() * 2.0, training_uncertainty()),
            image: None,
            assumptions: assumptions.into_vec(),
        });
    }
    let profile = engine_profile(workload.engine);
    // Diffusion pipelines run the UNet twice per step under classifier-free guidance, which
    // diffusers' Stable Diffusion pipelines enable by default (guidance_scale 7.5 / 5.0).
    let guidance_passes = if spec.family == "diffusion" {
        CLASSIFIER_FREE_GUIDANCE_PASSES
    } else {
        1.0
    };
    let steps = spec.denoising_steps.unwrap_or(1) as f64 * guidance_passes;
    if spec.family == "diffusion" {
        assumptions.add(|| {
            format!(
                "{} denoising steps × {CLASSIFIER_FREE_GUIDANCE_PASSES} UNet passes (classifier-free guidance); text encoder and VAE not counted",
                spec.denoising_steps.unwrap_or(1)
            )
        });
    }
    let latency = steps * forward * workload.batch as f64
        / (gpus * peak.0 * profile.prefill_peak_fraction * cnn_inference_factor())
        + profile.step_overhead_seconds * steps;
    assumptions.add(|| {
        format!(
            "engine profile: {}; ×{} for convolutions",
            profile.evidence,
            cnn_inference_factor()
        )
    });
    Ok(Estimate {
        parameters: ParameterSummary {
            total: parameters,
            active: parameters,
            trainable: 0,
        },
        memory,
        training: None,
        serving_cost: None,
        inference: Some(InferenceEstimate {
            ttft_seconds: latency,
            tpot_seconds: 0.0,
            output_tokens_per_second: 0.0,
            requests_per_second: workload.batch as f64 / latency,
            max_concurrent_sequences: (memory
                .capacity
                .as_u64()
                .saturating_sub(memory.weights.as_u64() + memory.overhead.as_u64())
                as f64
                / (memory.activations.as_u64() as f64 / workload.batch.max(1) as f64).max(1.0))
                as u64,
            request_latency_seconds: latency,
            decode_bound: inference::Bound::Compute,
            host_memory_bytes: None,
        }),
        uncertainty: Uncertainty::bands(memory_uncertainty() * 2.0, inference_uncertainty()),
        image: None,
        assumptions: assumptions.into_vec(),
    })
}

/// Bytes the KV cache may take: what the engine's memory share leaves after the weights,
/// activations and runtime (vLLM, SGLang), or its share of the memory they leave free
/// (TensorRT-LLM).
fn kv_budget(
    memory: &crate::MemoryEstimate,
    reserved: gpuplan_model::Bytes,
    workload: &Workload,
    accelerator: &Accelerator,
) -> f64 {
    let free = memory.capacity.as_u64().saturating_sub(reserved.as_u64()) as f64;
    if workload.task == Task::Inference && workload.engine.continuous_batching() {
        let scheduler = crate::serving::scheduler(workload.engine, accelerator, &workload.engine_settings);
        if scheduler.memory_of_free {
            return free * scheduler.memory_fraction;
        }
    }
    free
}
