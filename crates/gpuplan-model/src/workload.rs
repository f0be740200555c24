//! What a user wants to run: the task, its sizes, its precision and its parallel layout.

use crate::named_enum::named_enum;
use crate::{Framework, Offload, Precision, SequencePacking};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

named_enum!(
    /// What is done with the model.
    Task, "task" {
        /// Training from scratch.
        Pretrain => "pretrain" | "pre-train" | "pretraining" | "training",
        /// Full fine-tuning: every weight trained.
        Finetune => "finetune" | "fine-tune" | "full-finetune" | "sft",
        /// Low-rank adapters on a frozen 16-bit base.
        Lora => "lora",
        /// Low-rank adapters on a frozen 4-bit NF4 base (Dettmers et al. 2023).
        Qlora => "qlora",
        /// Serving: prefill and decode.
        Inference => "inference" | "serving" | "infer",
    }
);

impl Task {
    pub fn is_training(self) -> bool {
        !matches!(self, Task::Inference)
    }
}

named_enum!(
    /// Activation recomputation during the backward pass.
    Checkpointing, "checkpointing mode" {
        /// Keep every activation.
        None => "none" | "off",
        /// Recompute the attention core only (Korthikanti et al. 2022; Megatron-LM's
        /// `--recompute-granularity selective`).
        Selective => "selective",
        /// Recompute the norms and the routed experts' activation function only (Megatron-Core's
        /// `--recompute-modules layernorm moe_act`, as its MoE recipes run): each norm's output
        /// and the experts' activation output are rebuilt from what is kept, element-wise work
        /// with no matmul repeated. Applies to transformer layers.
        NormsAndActivation => "norms-activation" | "layernorm,moe_act" | "layernorm+moe_act",
        /// Per-operator selective checkpointing (torchtitan's `selective_ac_option = "op"`):
        /// the outputs of every other matmul and of the attention kernel are kept, the rest
        /// is recomputed.
        Op => "op" | "selective-op" | "per-op",
        /// Keep only each layer's input and recompute the layer.
        Full => "full" | "on",
    }
);

named_enum!(
    /// The optimizer, which sets the per-parameter state kept in memory.
    Optimizer, "optimizer" {
        /// Adam/AdamW: two fp32 moments (plus an fp32 master copy under mixed precision).
        AdamW => "adamw" | "adam",
        /// 8-bit Adam (bitsandbytes): two 8-bit moments.
        Adam8bit => "adam8bit" | "adamw8bit" | "adam-8bit",
        /// bitsandbytes' paged AdamW: AdamW's moments in CUDA managed memory, which the
        /// driver moves to the host when the GPU runs short and back before each step.
        PagedAdamW => "paged-adamw" | "paged-adamw-32bit" | "pagedadamw",
        /// bitsandbytes' paged 8-bit AdamW (torchtune's single-GPU full fine-tuning recipes).
        PagedAdam8bit => "paged-adamw-8bit" | "paged-adam8bit" | "pagedadamw8bit",
        /// SGD with momentum: one fp32 buffer.
        SgdMomentum => "sgd" | "sgd-momentum",
        /// Adafactor: factored second moments, about no extra state per parameter.
        Adafactor => "adafactor",
    }
);

named_enum!(
    /// Which linear layers LoRA adapts.
    LoraTargets, "set of LoRA targets" {
        /// Query and value projections (PEFT's and LitGPT's default for Llama-style models).
        QueryValue => "q,v" | "qv" | "q_proj,v_proj" | "query-value",
        /// Every attention projection: query, key, value and output.
        Attention => "attention" | "q,k,v,o" | "qkvo",
        /// Every linear layer of attention and the feed-forward (QLoRA's recommendation).
        AllLinear => "all-linear" | "all",
        /// Every linear layer and the output head.
        AllLinearAndHead => "all-linear+head" | "all+head",
    }
);

impl Optimizer {
    /// Whether the states live in CUDA managed memory (bitsandbytes' paged optimizers,
    /// `bitsandbytes.functional.get_paged`): outside the framework's allocator, paged out to
    /// the host under memory pressure instead of running out of memory.
    pub fn paged(self) -> bool {
        matches!(self, Optimizer::PagedAdamW | Optimizer::PagedAdam8bit)
    }
}

impl LoraTargets {
    /// Whether the feed-forward's projections are adapted.
    pub fn feed_forward(self) -> bool {
        matches!(self, LoraTargets::AllLinear | LoraTargets::AllLinearAndHead)
    }
}

named_enum!(
    /// How a serving engine stores the key/value cache (vLLM's and SGLang's `--kv-cache-dtype`).
    KvCacheDtype, "KV-cache type" {
        /// The engine's default: fp8 under TensorRT-LLM's fp8 recipes, 16-bit otherwise.
        Auto => "auto",
        /// 16-bit keys and values.
        Half => "16-bit" | "fp16" | "bf16" | "half",
        /// 8-bit keys and values (fp8 e4m3/e5m2, or int8), read back at the compute precision.
        Eight => "fp8" | "fp8_e4m3" | "fp8_e5m2" | "int8" | "8-bit",
    }
);

named_enum!(
    /// The software that runs inference, where measured efficiencies differ.
    Engine, "engine" {
        /// Hugging Face Transformers / plain PyTorch, eager mode.
        Pytorch => "pytorch" | "torch" | "transformers" | "hf",
        /// PyTorch with `torch.compile` and CUDA graphs (gpt-fast style decoding).
        TorchCompile => "torch-compile" | "compile" | "gpt-fast",
        Vllm => "vllm",
        /// SGLang: continuous batching with a radix-tree prefix cache.
        Sglang => "sglang",
        TensorrtLlm => "tensorrt-llm" | "trt-llm" | "trtllm",
        /// Hugging Face Text Generation Inference.
        Tgi => "tgi" | "text-generation-inference",
        /// TensorRT for CNN / BERT style models.
        Tensorrt => "tensorrt" | "trt",
        Onnxruntime => "onnxruntime" | "onnx" | "ort",
        /// llama.cpp (`llama-server`, `llama-cli`) running a GGUF file: its layers on the GPU
        /// up to `--gpu-layers`, the rest on the host's CPU.
        LlamaCpp => "llama.cpp" | "llamacpp" | "llama-cpp",
    }
);

named_enum!(
    /// The kernel that multiplies by quantised weights: how fast a 4- or 8-bit checkpoint runs
    /// depends on it as much as on its bytes.
    WeightKernel, "weight kernel" {
        /// The precision's own tensor-core path: fp8, int8 W8A8 (SmoothQuant), fp4 on
        /// Blackwell, 16-bit.
        Native => "native" | "smoothquant" | "w8a8",
        /// A fused weight-only kernel that dequantises in registers, at close to the bytes'
        /// speed in decode (Marlin and Machete for AWQ/GPTQ in vLLM and SGLang, TensorRT-LLM's
        /// W4A16, gpt-fast's int4/int8).
        Marlin => "marlin" | "machete" | "w4a16" | "awq-marlin" | "gptq-marlin",
        /// AutoAWQ's GEMM kernel: dequantises per tile; faster than 16-bit only at small batch.
        AwqGemm => "awq-gemm" | "awq",
        /// ExLlamaV2's GPTQ kernel as Transformers runs it.
        Exllamav2 => "exllamav2" | "exllama",
        /// bitsandbytes 4-bit (NF4/FP4, `load_in_4bit`): weights dequantised to 16 bits before
        /// each matmul.
        BnbNf4 => "bnb-nf4" | "nf4" | "bnb-fp4" | "bnb-4bit",
        /// bitsandbytes LLM.int8() (`load_in_8bit`): int8 matmul with 16-bit outlier columns.
        BnbInt8 => "bnb-int8" | "llm.int8" | "bnb-8bit",
    }
);

impl WeightKernel {
    /// The kernel a precision runs with on `engine` unless told otherwise: the serving engines
    /// and compiled graphs use fused kernels; Transformers' eager 4- and 8-bit loading is
    /// bitsandbytes; llama.cpp runs its own.
    pub fn default_for(engine: Engine, precision: crate::Precision) -> WeightKernel {
        use crate::Precision::{Int4, Int8};
        match (engine, precision) {
            // llama.cpp multiplies its GGUF blocks with its own kernels (MMVQ/MMQ), at the
            // bytes' speed in decode; its profile holds what they reach.
            (Engine::LlamaCpp, _) => WeightKernel::Native,
            (Engine::Pytorch, Int4) => WeightKernel::BnbNf4,
            (Engine::Pytorch, Int8) => WeightKernel::BnbInt8,
            (Engine::TorchCompile, Int8) | (_, Int4) => WeightKernel::Marlin,
            _ => WeightKernel::Native,
        }
    }

    /// The weight formats the kernel serves; empty: every precision's own path.
    pub fn precisions(self) -> &'static [crate::Precision] {
        use crate::Precision::{Int4, Int8};
        match self {
            WeightKernel::Native => &[],
            WeightKernel::Marlin => &[Int4, Int8],
            WeightKernel::AwqGemm | WeightKernel::Exllamav2 | WeightKernel::BnbNf4 => &[Int4],
            WeightKernel::BnbInt8 => &[Int8],
        }
    }
}

impl Engine {
    /// Engines that schedule per iteration (continuous batching) with a paged KV cache.
    pub fn continuous_batching(self) -> bool {
        matches!(self, Engine::Vllm | Engine::Sglang | Engine::TensorrtLlm | Engine::Tgi)
    }
}

/// How the GPUs share the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ParallelLayout {
    /// Data-parallel replicas.
    pub dp: u32,
    /// Tensor-parallel degree (within a node).
    pub tp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Context (sequence) parallel degree: each GPU holds a slice of every sequence
    /// (ring attention, Megatron context parallelism).
    #[serde(default = "one")]
    pub cp: u32,
    /// Expert parallel degree: a mixture-of-experts model's experts are spread over this many
    /// data-parallel ranks, each holding `experts / ep` of them split over its tensor-parallel
    /// GPUs; where `ep` does not divide the data-parallel ranks but divides them times the
    /// tensor-parallel ones, the expert groups span both and each GPU holds `experts / ep` of
    /// them whole (Megatron-Core's MoE parallel folding, expert tensor parallelism 1).
    #[serde(default = "one")]
    pub ep: u32,
    /// Virtual pipeline stages per GPU (Megatron's interleaved 1F1B, torchtitan's looped
    /// schedules: 1 is plain 1F1B); `None`: the framework's default schedule.
    #[serde(default)]
    pub vp: Option<u32>,
    /// ZeRO stage (0–3; FSDP full sharding = 3) across the data-parallel group.
    pub zero: u8,
    /// Serving a mixture of experts with attention data parallelism: each of the `tp` GPUs of
    /// a replica runs attention for its own share of the sequences, with the whole attention
    /// weights and its sequences' whole KV cache, and the experts spread over all of them
    /// (TensorRT-LLM `enable_attention_dp`, SGLang `--enable-dp-attention`, vLLM
    /// `--data-parallel-size` with `--enable-expert-parallel`).
    #[serde(default)]
    pub attention_dp: bool,
    /// Training a mixture of experts with its expert-parallel all-to-alls overlapped: the
    /// dispatch and combine of one micro-batch run beside the forward or backward compute of
    /// the next (Megatron-Core's combined 1F1B, `--overlap-moe-expert-parallel-comm`, which
    /// Megatron-Bridge's recipes call `moe_a2a_overlap`).
    #[serde(default)]
    pub ep_overlap: bool,
}

fn one() -> u32 {
    1
}

fn all_linear() -> LoraTargets {
    LoraTargets::AllLinear
}

fn auto_kv_cache() -> KvCacheDtype {
    KvCacheDtype::Auto
}

impl ParallelLayout {
    /// Whether the expert-parallel groups span tensor-parallel GPUs (MoE parallel folding).
    pub fn experts_folded(&self) -> bool {
        self.ep > 1 && self.dp % self.ep != 0 && (self.dp * self.tp) % self.ep == 0
    }

    /// Ways a pipeline stage's routed experts are divided beyond its tensor-parallel split:
    /// `ep`, or `ep / tp` when the expert groups fold over the tensor-parallel GPUs (each GPU
    /// then holds `1/ep` of them whole rather than `1/(ep·tp)` of them in slices).
    pub fn expert_split(&self) -> f64 {
        let ep = f64::from(self.ep.max(1));
        if self.experts_folded() {
            ep / f64::from(self.tp.max(1))
        } else {
            ep
        }
    }

    /// Of `replicas` ranks that hold the same weights (data parallelism, with its context-
    /// parallel ranks), those that hold the same experts: the group an expert's gradients are
    /// reduced and its states sharded over (Megatron-Core's expert data parallelism).
    pub fn expert_replicas(&self, replicas: f64) -> f64 {
        (replicas / self.expert_split()).clamp(1.0, replicas.max(1.0))
    }

    pub fn single() -> Self {
        ParallelLayout {
            dp: 1,
            tp: 1,
            pp: 1,
            cp: 1,
            ep: 1,
            vp: None,
            zero: 0,
            attention_dp: false,
            ep_overlap: false,
        }
    }

    /// GPUs the layout occupies; expert parallelism reuses the data-parallel ranks.
    pub fn gpus(&self) -> u32 {
        self.dp
            .saturating_mul(self.tp)
            .saturating_mul(self.pp)
            .saturating_mul(self.cp)
    }
}

impl fmt::Display for ParallelLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DP{}×TP{}×PP{}", self.dp, self.tp, self.pp)?;
        if self.cp > 1 {
            write!(f, "×CP{}", self.cp)?;
        }
        if self.ep > 1 {
            write!(f, " EP{}", self.ep)?;
            if self.ep_overlap {
                write!(f, " overlapped")?;
            }
        }
        if self.attention_dp {
            write!(f, " attention-DP")?;
        }
        if self.zero > 0 {
            write!(f, " ZeRO-{}", self.zero)?;
        }
        Ok(())
    }
}

/// A described job, with every size explicit. Front ends fill defaults before building one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub task: Task,
    /// Compute precision for training; weight precision for inference.
    pub precision: Precision,
    /// Global batch: sequences (or samples) per optimizer step; for inference, sequences
    /// processed together.
    pub batch: u64,
    /// Sequences per GPU per forward/backward pass.
    pub micro_batch: u64,
    /// Tokens per sequence (the prompt for inference).
    pub seq: u64,
    /// Tokens generated per sequence (inference).
    pub output_tokens: u64,
    pub layout: ParallelLayout,
    pub checkpointing: Checkpointing,
    pub optimizer: Optimizer,
    /// Training: each parameter is updated, and its gradient freed, as soon as its gradient is
    /// complete in the backward pass (torchtune's `optimizer_in_bwd`; PyTorch's
    /// `register_post_accumulate_grad_hook`), so no step holds every gradient at once. Needs one
    /// micro-batch per step on each replica: accumulated gradients would have to be kept.
    #[serde(default)]
    pub optimizer_in_backward: bool,
    /// Rank of the LoRA adapters (LoRA / QLoRA).
    pub lora_rank: u64,
    /// The layers the adapters sit on (LoRA / QLoRA).
    #[serde(default = "all_linear")]
    pub lora_targets: LoraTargets,
    /// Training state kept in host memory.
    #[serde(default)]
    pub offload: Offload,
    /// Training: whether examples are packed into full sequences or padded one per sequence.
    #[serde(default)]
    pub packing: SequencePacking,
    /// Training: the step runs under `torch.compile` (fused element-wise kernels).
    #[serde(default)]
    pub compiled: bool,
    /// Fused attention that never materialises the score matrix (FlashAttention).
    pub flash_attention: bool,
    pub engine: Engine,
    /// The serving engine's release and scheduler knobs.
    #[serde(default)]
    pub engine_settings: crate::EngineSettings,
    /// The kernel that multiplies by quantised weights (inference); `None`: the engine's
    /// default for the precision ([`WeightKernel::default_for`]).
    #[serde(default)]
    pub weight_kernel: Option<WeightKernel>,
    /// The training framework, whose defaults and kernels the estimate follows; `None`: no
    /// particular one (Megatron-style selective recomputation, fp32 logits for the loss).
    #[serde(default)]
    pub framework: Option<Framework>,
    /// Storage of the serving engine's key/value cache.
    #[serde(default = "auto_kv_cache")]
    pub kv_cache: KvCacheDtype,
    /// Image size and denoising schedule (image models only).
    pub image: ImageSettings,
}

/// Settings of image models (CNNs and diffusion pipelines); `None` means the model's reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ImageSettings {
    /// Pixels per side of the (square) image.
    pub resolution: Option<u64>,
    /// Denoising steps per image (diffusion).
    pub denoising_steps: Option<u64>,
    /// Classifier-free guidance, which runs the UNet on a conditional and an unconditional
    /// copy of each image at every step (diffusion; on unless turned off).
    pub guidance: Option<bool>,
}
