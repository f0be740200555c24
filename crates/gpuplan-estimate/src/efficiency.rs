//! Every heuristic constant of the estimators, named, with the evidence behind its value.
//! Each one that an estimate used is listed among that estimate's assumptions.

use gpuplan_model::{Accelerator, Engine, Precision};

/// Fraction of an accelerator's dense peak that large, well-tuned training reaches on the
/// FLOPs it actually executes (hardware FLOPs utilisation, recomputation included).
///
/// Evidence:
/// - A100, bf16: MosaicML llm-foundry benchmarks reach 64 % MFU for MPT-7B (h = 4096, no
///   recomputation) and 51 % HFU for MPT-30B on 8 A100-80GB; Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
///   Transformer Models", Table 4) reach 54–57 % hardware utilisation for 22B–1T GPT models;
///   Narayanan et al. 2021 (Megatron-LM, Table 1) 44–52 % with full recomputation; Meta's
///   Llama 2 runs imply ≈ 45 % model FLOPs utilisation (184,320 GPU-hours for 2T tokens of 7B).
/// - H100, bf16: llm-foundry reaches 46 % MFU for MPT-7B and 51 % HFU for MPT-30B; the Llama 3 paper (Dubey et al. 2024, Table 4) reports 38–43 % MFU at
///   8k–16k GPUs; single-node runs do better (torchtitan reports ≈ 45–50 %).
/// - H100, fp8: fp8 training runs about 1.3–1.5× faster than bf16, i.e. ≈ 30–35 % of the fp8
///   peak (NVIDIA Transformer Engine and torchtitan fp8 reports).
/// - Ada (RTX 4090), bf16: torchtune LoRA of Llama 3.1 8B runs at ≈ 60 % of the 165 TFLOPS
///   fp32-accumulate peak with torch.compile.
/// - fp32 on CUDA cores: BERT-large fine-tuning on a V100 (Hugging Face "Model training
///   anatomy") runs at ≈ 65 % of the 15.7 TFLOPS fp32 peak.
/// - V100, fp16: Megatron-LM (Shoeybi et al. 2019) sustains 39 TFLOPS on one V100, 30 % of peak.
/// - Other architectures have less published evidence; the values interpolate the above.
pub fn training_peak_fraction(accelerator: &Accelerator, precision: Precision) -> (f64, &'static str) {
    let architecture = accelerator.architecture.to_lowercase();
    let low_precision = matches!(
        precision,
        Precision::Fp8 | Precision::Fp6 | Precision::Fp4 | Precision::Int8
    );
    let fraction = if matches!(precision, Precision::Fp32 | Precision::Fp64) {
        // CUDA-core (non-tensor) math: cuBLAS SGEMM runs near peak on large matrices.
        0.75
    } else if architecture.contains("hopper") || architecture.contains("blackwell") {
        if low_precision { 0.36 } else { 0.53 }
    } else if architecture.contains("ampere") {
        0.68
    } else if architecture.contains("volta") {
        0.33
    } else if architecture.contains("turing") {
        0.35
    } else if architecture.contains("ada") {
        if low_precision { 0.40 } else { 0.60 }
    } else if architecture.contains("cdna") {
        0.35
    } else if architecture.contains("tpu") {
        0.50
    } else {
        0.35
    };
    (
        fraction,
        "training reaches a hardware-FLOPs fraction of dense peak set per architecture from published \
         llm-foundry, Megatron-LM, Llama 3 and torchtune runs (A100 0.68, H100/B200 bf16 0.53, fp8 0.36, \
         Ada 0.60, V100 0.33, fp32 CUDA-core math 0.75)",
    )
}

/// Hidden size at which matrix multiplications reach half of their large-model efficiency.
/// Small models run narrower GEMMs and relatively more element-wise work: GPT-2 124M
/// (h = 768) trains at about 30 % MFU on A100 (nanoGPT: 300B tokens in ≈ 4 days on 8×A100)
/// against ≈ 50 % for h ≥ 8192 models.
pub const HIDDEN_SIZE_AT_HALF_EFFICIENCY: f64 = 400.0;

/// Tokens per micro-batch at which GEMM efficiency is half its large-batch value: a
/// micro-batch of 1 × 512 tokens leaves the GPU partly idle.
pub const MICRO_BATCH_TOKENS_AT_HALF_EFFICIENCY: f64 = 256.0;

/// QLoRA's 4-bit base weights are dequantised before every matmul; the QLoRA paper and
/// PEFT benchmarks show fine-tuning about 30–40 % slower than 16-bit LoRA.
pub const QLORA_SPEED_FACTOR: f64 = 0.65;

/// Part of data-parallel gradient communication hidden behind the backward pass (PyTorch
/// DDP / ZeRO bucketed overlap; Li et al. 2020, "PyTorch Distributed", §5).
pub const DATA_PARALLEL_OVERLAP: f64 = 0.8;

/// Achieved fraction of link bandwidth in NCCL ring collectives (nccl-tests bus bandwidth:
/// ≈ 80 % of NVLink and InfiniBand line rate).
pub const COLLECTIVE_BANDWIDTH_FRACTION: f64 = 0.8;

/// Effective PCIe bandwidth per GPU for collectives, GB/s per direction (Gen4 x16 is 32 GB/s
/// on paper; nccl-tests on PCIe-only servers reach ≈ 20 GB/s; Gen5 ≈ 40).
pub fn pcie_bandwidth_gb_per_s(generation: Option<u8>) -> f64 {
    match generation {
        Some(5) | Some(6) => 40.0,
        Some(4) => 20.0,
        _ => 10.0,
    }
}

/// Network bandwidth assumed between nodes when no offering states one, Gbit/s per node:
/// the reference designs of each GPU generation's training servers (DGX H100/H200/B200:
/// 8 × 400 Gb/s ConnectX-7; DGX A100: 8 × 200 Gb/s ConnectX-6), and plain 100 Gb/s Ethernet
/// for everything else.
pub fn default_node_network_gbps(accelerator: &gpuplan_model::Accelerator) -> f64 {
    let architecture = accelerator.architecture.to_lowercase();
    let sxm = accelerator.form_factor.as_deref().is_some_and(|f| f.starts_with("SXM"));
    if sxm && (architecture.contains("hopper") || architecture.contains("blackwell")) {
        3200.0
    } else if sxm && architecture.contains("ampere") {
        1600.0
    } else {
        100.0
    }
}

/// Virtual pipeline stages per GPU of the interleaved 1F1B schedule that large pipelined
/// runs use (Narayanan et al. 2021, §2.2.2: the bubble shrinks by this factor; Megatron-LM,
/// BLOOM and Llama 3 train with interleaving). Capped by the layers each stage holds.
pub const PIPELINE_VIRTUAL_STAGES: u64 = 4;

/// Latency of one small all-reduce inside a node (NCCL over NVLink: ≈ 10 µs; nccl-tests).
pub const ALL_REDUCE_LATENCY_SECONDS: f64 = 10e-6;

/// Memory the CUDA context, cuBLAS/cuDNN workspaces and loaded kernels take before the first
/// tensor: 0.5–1 GiB per process in nvidia-smi on A100/H100 with PyTorch 2.
pub const CUDA_CONTEXT_GIB: f64 = 0.8;

/// NCCL communicator buffers when a process talks to others (≈ 0.3–0.6 GiB per GPU at
/// default NCCL_BUFFSIZE and channel counts).
pub const NCCL_BUFFERS_GIB: f64 = 0.5;

/// Caching-allocator fragmentation on top of live activations and gradients (PyTorch's
/// reserved-minus-allocated memory is typically 5–15 % in training).
pub const ALLOCATOR_FRAGMENTATION: f64 = 0.10;

/// Bytes kept per logit for the loss of causal-LM training: the bf16 logits plus their fp32
/// upcast for cross-entropy (Hugging Face `LlamaForCausalLM` upcasts before the loss).
pub const LOGIT_BYTES_TRAINING: f64 = 6.0;

/// Extra activation memory of QLoRA training over 16-bit LoRA, as a factor on the activations.
/// Empirical: LitGPT's published QLoRA peaks (Llama 2 7B/13B, Llama 3 8B, Mistral 7B, Falcon
/// 7B on A10G and A100) sit 2–3 GB above the LoRA peak minus the weight savings, i.e. about
/// 45 % more activation memory; bitsandbytes' 4-bit layers keep dequantisation buffers and
/// 16-bit copies alive into the backward pass.
pub const QLORA_ACTIVATION_FACTOR: f64 = 1.45;

/// Longest prefill chunk serving engines batch at once (vLLM `max_num_batched_tokens` with
/// chunked prefill; TensorRT-LLM `max_num_tokens` 8192 default).
pub const SERVING_PREFILL_CHUNK_TOKENS: u64 = 8192;

/// How an inference engine uses the hardware.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineProfile {
    /// Fraction of dense peak reached in prefill (compute-bound).
    pub prefill_peak_fraction: f64,
    /// Fraction of memory bandwidth reached by decode (memory-bound).
    pub decode_bandwidth_fraction: f64,
    /// Fraction of dense peak reached when decode becomes compute-bound at large batch.
    pub decode_peak_fraction: f64,
    /// Fixed time per decode step (scheduling, sampling, launches), seconds.
    pub step_overhead_seconds: f64,
    /// Additional time per layer per decode step (kernel launches without CUDA graphs).
    pub per_layer_overhead_seconds: f64,
    /// Additional time per layer of a prefill (context) pass, which engines run without CUDA
    /// graphs: TensorRT-LLM's published first-token latencies of GPT-J 6B (28 layers) and
    /// Llama-2 70B (80 layers) at 128-token prompts sit ≈ 0.16–0.2 ms per layer above the
    /// time to read the weights.
    pub prefill_per_layer_overhead_seconds: f64,
    pub evidence: &'static str,
}

/// Share of an engine's decode compute efficiency kept at 8-bit precisions: TensorRT-LLM's
/// batch-1024 throughput tables for fp8 on H100/H200 imply ≈ 20–25 % of the fp8 peak in decode,
/// against ≈ 40 % of the fp16 peak on A100.
///
/// Calibration cases: the serving validation table's rows from the same TensorRT-LLM fp8
/// tables (`trtllm-0.17-llama-3.1-8b-h100-fp8-*`, `trtllm-0.17-llama-3.1-8b-h200-fp8-*`,
/// `trtllm-0.17-llama-3.1-70b-h200-tp1-fp8-*`), which the held-out errors leave out.
pub const LOW_PRECISION_DECODE_FACTOR: f64 = 0.55;

/// Measured behaviour of each engine.
///
/// Evidence: Hugging Face `generate` in eager mode spends ≈ 20–30 ms per token on a 7B
/// model at batch 1 on A100 whatever the bandwidth (launch-bound: ≈ 0.6 ms per layer); vLLM
/// and TensorRT-LLM with CUDA graphs reach 70–85 % of HBM bandwidth in decode (vLLM and
/// NVIDIA performance pages; Databricks "LLM inference performance engineering", 2023) and
/// 50–65 % of dense peak in prefill. TensorRT and ONNX Runtime run CNN/BERT inference at
/// ≈ 40–60 % of peak (NVIDIA Triton / DeepLearningExamples inference tables).
pub fn engine_profile(engine: Engine) -> EngineProfile {
    match engine {
        Engine::Pytorch => EngineProfile {
            prefill_peak_fraction: 0.45,
            decode_bandwidth_fraction: 0.60,
            decode_peak_fraction: 0.35,
            step_overhead_seconds: 2e-3,
            per_layer_overhead_seconds: 0.45e-3,
            prefill_per_layer_overhead_seconds: 0.45e-3,
            evidence: "PyTorch eager: prefill at 45 % of peak, decode at 60 % of bandwidth, 2 ms + 0.45 ms per layer per step",
        },
        Engine::TorchCompile => EngineProfile {
            prefill_peak_fraction: 0.50,
            decode_bandwidth_fraction: 0.75,
            decode_peak_fraction: 0.45,
            step_overhead_seconds: 0.5e-3,
            per_layer_overhead_seconds: 0.0,
            prefill_per_layer_overhead_seconds: 0.1e-3,
            evidence: "torch.compile with CUDA graphs: decode at 75 % of bandwidth, 0.5 ms per step (gpt-fast)",
        },
        Engine::Vllm => EngineProfile {
            prefill_peak_fraction: 0.55,
            decode_bandwidth_fraction: 0.75,
            decode_peak_fraction: 0.35,
            step_overhead_seconds: 1.5e-3,
            per_layer_overhead_seconds: 0.0,
            prefill_per_layer_overhead_seconds: 0.18e-3,
            evidence: "vLLM: prefill at 55 % of peak, decode at 75 % of bandwidth, 1.5 ms per step",
        },
        // No per-kernel breakdown is published for SGLang or TGI; both run FlashInfer or
        // FlashAttention kernels with CUDA graphs in decode, as vLLM does, and their own
        // benchmarks put them within ±15 % of vLLM's throughput (SGLang README tables, TGI v3
        // "benchmarks" page). They share vLLM's fractions; SGLang's overlap scheduler hides
        // part of the per-step CPU time.
        Engine::Sglang => EngineProfile {
            step_overhead_seconds: 1.0e-3,
            evidence: "SGLang: as vLLM (prefill 55 % of peak, decode 75 % of bandwidth), 1 ms per step (overlap scheduler)",
            ..engine_profile(Engine::Vllm)
        },
        Engine::Tgi => EngineProfile {
            evidence: "TGI: as vLLM (prefill 55 % of peak, decode 75 % of bandwidth, 1.5 ms per step)",
            ..engine_profile(Engine::Vllm)
        },
        Engine::TensorrtLlm => EngineProfile {
            prefill_peak_fraction: 0.62,
            decode_bandwidth_fraction: 0.82,
            decode_peak_fraction: 0.40,
            step_overhead_seconds: 0.8e-3,
            per_layer_overhead_seconds: 0.0,
            prefill_per_layer_overhead_seconds: 0.16e-3,
            evidence: "TensorRT-LLM: prefill at 62 % of peak, decode at 82 % of bandwidth, 0.8 ms per step",
        },
        Engine::Tensorrt => EngineProfile {
            prefill_peak_fraction: 0.55,
            decode_bandwidth_fraction: 0.80,
            decode_peak_fraction: 0.50,
            step_overhead_seconds: 0.3e-3,
            per_layer_overhead_seconds: 0.0,
            prefill_per_layer_overhead_seconds: 0.0,
            evidence: "TensorRT: forward at 55 % of peak, 0.3 ms per batch",
        },
        Engine::Onnxruntime => EngineProfile {
            prefill_peak_fraction: 0.45,
            decode_bandwidth_fraction: 0.70,
            decode_peak_fraction: 0.40,
            step_overhead_seconds: 0.5e-3,
            per_layer_overhead_seconds: 0.0,
            prefill_per_layer_overhead_seconds: 0.0,
            evidence: "ONNX Runtime (CUDA): forward at 45 % of peak, 0.5 ms per batch",
        },
    }
}

/// Share of a training step's activation memory a CNN inference pass holds at its peak: a
/// forward pass without autograd frees each activation once the next layer has read it, so
/// only a few layers' outputs are live at once. An assumption (no published inference peak
/// for the catalog's CNNs was found); inference memory of CNNs is dominated by the weights
/// and the CUDA context at the batch sizes served.
pub const CNN_INFERENCE_ACTIVATION_SHARE: f64 = 1.0 / 3.0;

/// CUDA-core fp32 rate as a share of the 16-bit tensor rate, where the catalog lists no fp32
/// or TF32 peak: data-center GPUs run 16-bit tensor math 4–16× faster than fp32 on CUDA cores
/// (A100: 312 vs 19.5 TFLOPS; T4: 65 vs 8.1); a quarter is the fast end of that range.
pub const FP32_SHARE_OF_TENSOR_RATE: f64 = 0.25;

/// Training activation memory of a CNN per sample, as bytes per forward FLOP, where no source
/// gives the activation size: ResNet-50 (8.2 GFLOPs at 224²) keeps ≈ 100 MB per image in
/// mixed precision (NVIDIA trains it at batch 256 per 32 GB V100).
pub const CNN_ACTIVATION_BYTES_PER_FORWARD_FLOP: f64 = 0.0125;

/// Relative uncertainty bands reported with each kind of estimate, from the validation report
/// (`cargo test -p gpuplan-estimate --test validation`, README): about the spread of the
/// errors there.
pub const MEMORY_UNCERTAINTY: f64 = 0.10;
pub const TRAINING_UNCERTAINTY: f64 = 0.25;
pub const INFERENCE_UNCERTAINTY: f64 = 0.35;

/// Fraction of the dense 16-bit peak a diffusion UNet pass reaches in a diffusers pipeline
/// (PyTorch eager, fused attention) when compute-bound, per architecture. Fitted to the
/// validation table's diffusion cases (so not independent evidence for them):
/// - Ampere 0.38: SDXL at batch 1 on A100-80GB reaches 0.38–0.41 (fal-ai benchmarks, 5.93 s for
///   50 steps; diffusers "fast diffusion" tutorial, 3.31 s for 30 steps; stable-fast, 8.7 it/s);
///   SD 1.5 at batch 4–16 only 0.24–0.28 (ONNX Runtime README torch rows; diffusers torch 2.0
///   tables), which this value overestimates by up to 60 %;
/// - Hopper/Blackwell 0.22: SDXL on H100 at 14.9 it/s (stable-fast) is 0.20 of 989 TFLOPS;
/// - Volta 0.33: SD 1.5 on V100 at batch 8–16 (ONNX Runtime README; diffusers tables);
/// - Ada 0.45: SD 1.5 on RTX 4090 at batch 4–16, 0.45–0.50 of its fp32-accumulate peak;
/// - Turing 0.18: SD 1.5 on T4 at batch 4 (diffusers tables), where the T4 runs at its power cap.
pub fn diffusion_unet_peak_fraction(accelerator: &Accelerator) -> (f64, &'static str) {
    let architecture = accelerator.architecture.to_lowercase();
    if architecture.contains("hopper") || architecture.contains("blackwell") {
        (
            0.22,
            "a diffusion UNet pass reaches 22 % of the dense peak on Hopper/Blackwell (SDXL on H100, stable-fast)",
        )
    } else if architecture.contains("ampere") {
        (
            0.38,
            "a diffusion UNet pass reaches 38 % of the dense peak on Ampere (SDXL on A100: fal-ai, diffusers, stable-fast)",
        )
    } else if architecture.contains("volta") {
        (
            0.33,
            "a diffusion UNet pass reaches 33 % of the dense peak on Volta (SD 1.5 on V100)",
        )
    } else if architecture.contains("ada") {
        (
            0.45,
            "a diffusion UNet pass reaches 45 % of the dense peak on Ada (SD 1.5 on RTX 4090)",
        )
    } else if architecture.contains("turing") {
        (
            0.18,
            "a diffusion UNet pass reaches 18 % of the dense peak on Turing (SD 1.5 on T4)",
        )
    } else {
        (
            0.30,
            "a diffusion UNet pass is assumed to reach 30 % of the dense peak (no measurement for this architecture)",
        )
    }
}

/// Host time per GPU operator an engine pays in a diffusion pipeline, which bounds small UNet
/// passes from below (the GPU then waits for launches). PyTorch eager: ≈ 30 µs, from the
/// 0.45 ms per ≈ 15-operator transformer layer of [`engine_profile`], and consistent with SD 1.5
/// at batch 1 on an A100 (≈ 900 operators per pass; 35.6 passes/s in the stable-fast README's
/// "Vanilla PyTorch" row, 28 ms each, against 13 ms of compute). Compiled engines fuse and
/// graph-capture most launches.
pub fn diffusion_seconds_per_operator(engine: Engine) -> (f64, &'static str) {
    match engine {
        Engine::TorchCompile => (8e-6, "torch.compile: ≈ 8 µs of host time per operator (fused kernels)"),
        Engine::Tensorrt => (1e-6, "TensorRT: launches captured in one engine, ≈ 1 µs per operator"),
        Engine::Onnxruntime => (10e-6, "ONNX Runtime: ≈ 10 µs of host time per operator"),
        Engine::Pytorch | Engine::Vllm | Engine::Sglang | Engine::Tgi | Engine::TensorrtLlm => {
            (30e-6, "PyTorch eager: ≈ 30 µs of host time per operator")
        }
    }
}
