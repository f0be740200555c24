//! Bytes per value for weights, gradients and optimizer states.

use gpuplan_model::{Accelerator, Engine, Optimizer, Precision, Task, TransformerSpec, Workload};

/// Bytes of one NF4 weight as bitsandbytes stores it by default (Dettmers et al. 2023,
/// "QLoRA", §3): 4 bits plus a 32-bit absmax scale per block of 64, 4.5 bits. Hugging Face's
/// `BitsAndBytesConfig` leaves double quantisation off by default; with it on, the scales are
/// themselves quantised to 8 bits (4.127 bits per weight, [`NF4_DOUBLE_QUANT_BYTES_PER_PARAMETER`]).
pub const NF4_BYTES_PER_PARAMETER: f64 = (4.0 + 32.0 / 64.0) / 8.0;

/// NF4 with double quantisation: 4 + 8/64 + 32/(64·256) = 4.127 bits.
pub const NF4_DOUBLE_QUANT_BYTES_PER_PARAMETER: f64 = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;

/// Bytes of one int4 weight with a 16-bit scale and zero point per group of 128 (GPTQ / AWQ
/// defaults): 4 + 32/128 bits.
pub const INT4_BYTES_PER_PARAMETER: f64 = (4.0 + 32.0 / 128.0) / 8.0;

pub use gpuplan_model::{Fp4Format, MXFP4_BYTES_PER_PARAMETER, NVFP4_BYTES_PER_PARAMETER};

/// Bytes per weight of a served model's quantised layers on `accelerator`: [`weight_bytes`],
/// with 4-bit floating point in the format it is stored in ([`Fp4Format::of`]).
pub fn served_weight_bytes(spec: &TransformerSpec, accelerator: &Accelerator, precision: Precision) -> f64 {
    if precision == Precision::Fp4 {
        Fp4Format::of(spec, accelerator).bytes_per_parameter()
    } else {
        weight_bytes(Task::Inference, precision)
    }
}

/// Parameters of a served model's layers that its checkpoints keep in 16 bits when the rest
/// are 4-bit floats: multi-head latent attention's projections but the output one (DeepSeek-V3
/// and R1: 70 M a layer, 4.25 B in all). NVIDIA's NVFP4 checkpoints of DeepSeek-R1 leave them
/// out of quantisation: `exclude_modules` names `self_attn.fused_a`, `q_proj`, `q_b_proj` and
/// `kv_b_proj` of every layer in MLPerf Inference v5.1's
/// `closed/NVIDIA/code/deepseek-r1/tensorrt/hf_quant_config.json` and in nvidia/DeepSeek-R1-FP4
/// (whose first release keeps the output projection `o_proj` out too; its v2 quantises it, as
/// MLPerf's does). A checkpoint whose config keeps its attention layers out of quantisation
/// holds all of them in 16 bits (gpt-oss: 0.96 B parameters of the 120b model's 117 B;
/// [`gpuplan_model::CheckpointQuantization::unquantized_attention`]). 0 in 16 bits and wider.
pub fn sixteen_bit_layer_parameters(spec: &TransformerSpec, precision: Precision) -> f64 {
    if precision.bits() > 8 {
        return 0.0;
    }
    if spec
        .quantization
        .as_ref()
        .is_some_and(|q| q.unquantized_attention && q.precision == Some(precision))
    {
        return crate::parameters::attention_parameters(spec) as f64;
    }
    if precision == Precision::Fp4 {
        crate::parameters::latent_projection_parameters(spec) as f64
    } else {
        0.0
    }
}

/// Bytes of a value held in `precision` for compute.
pub fn activation_bytes(precision: Precision) -> f64 {
    match precision {
        Precision::Fp64 => 8.0,
        Precision::Fp32 | Precision::Tf32 => 4.0,
        _ => 2.0,
    }
}

/// Bytes per weight of the layers' linear matrices for `task` at `precision`.
pub fn weight_bytes(task: Task, precision: Precision) -> f64 {
    match task {
        Task::Qlora => NF4_BYTES_PER_PARAMETER,
        Task::Inference => match precision {
            Precision::Fp64 => 8.0,
            Precision::Fp32 | Precision::Tf32 => 4.0,
            Precision::Fp16 | Precision::Bf16 => 2.0,
            Precision::Fp8 | Precision::Int8 => 1.0,
            Precision::Fp6 => 0.75 + 2.0 / 32.0,
            Precision::Fp4 => NVFP4_BYTES_PER_PARAMETER,
            Precision::Int4 => INT4_BYTES_PER_PARAMETER,
        },
        // Training keeps 16-bit weights for every mixed-precision format, fp8 included
        // (Transformer Engine casts to fp8 per matmul).
        _ => activation_bytes(precision),
    }
}

/// llama.cpp's usual GGUF mixes for a 4- and an 8-bit model, in bits a weight over the whole
/// file (llama.cpp `tools/quantize/README.md`, Llama-3.1-8B: Q4_K_M 4.8944, Q8_0 8.5008): the
/// block scales and the wider tensors each mix keeps are in them.
const GGUF_Q4_K_M_BITS: f64 = 4.8944;
const GGUF_Q8_0_BITS: f64 = 8.5008;

/// Bytes a served model's weights take on average, embeddings and output layer included,
/// where one figure holds for all of them: the checkpoint's own where it states its bits and
/// is served as stored (a GGUF file), else llama.cpp's usual mix for its precision (Q4_K_M for
/// int4, Q8_0 for int8). `None`: the precision's bytes for the layers and 16 bits for the
/// embeddings ([`weight_bytes`], [`embedding_bytes`]).
pub fn served_file_bytes(spec: &TransformerSpec, workload: &Workload) -> Option<f64> {
    if workload.task != Task::Inference {
        return None;
    }
    let stored = spec
        .quantization
        .as_ref()
        .filter(|q| q.precision == Some(workload.precision))
        .and_then(|q| q.bits_per_weight);
    let llama_cpp = (workload.engine == Engine::LlamaCpp)
        .then_some(match workload.precision {
            Precision::Int4 => Some(GGUF_Q4_K_M_BITS),
            Precision::Int8 => Some(GGUF_Q8_0_BITS),
            _ => None,
        })
        .flatten();
    stored.or(llama_cpp).map(|bits| bits / 8.0)
}

/// Bytes per weight of embeddings and the output layer, which quantisation leaves in 16 bits.
pub fn embedding_bytes(task: Task, precision: Precision) -> f64 {
    match task {
        Task::Inference | Task::Qlora => weight_bytes(Task::Inference, precision)
            .max(2.0)
            .min(activation_bytes(precision)),
        _ => weight_bytes(task, precision),
    }
}

/// Bytes per trainable parameter of gradients.
pub fn gradient_bytes(task: Task, precision: Precision) -> f64 {
    match task {
        // Adapters are trained in fp32 (PEFT keeps LoRA weights in fp32 under autocast).
        Task::Lora | Task::Qlora => 4.0,
        _ => activation_bytes(precision),
    }
}

/// Bytes per trainable parameter of optimizer state, fp32 master copy included when
/// training in mixed precision.
///
/// References: Rajbhandari et al. 2020 ("ZeRO", §3.1): mixed-precision Adam keeps an fp32
/// copy of the parameters, momentum and variance, 12 bytes per parameter, on top of 2-byte
/// weights and 2-byte gradients (16 bytes in all). Dettmers et al. 2022 ("8-bit Optimizers
/// via Block-wise Quantization"): 2 bytes of state per parameter. Shazeer & Stern 2018
/// ("Adafactor"): factored second moments, O(n + m) per n × m matrix.
pub fn optimizer_bytes(task: Task, precision: Precision, optimizer: Optimizer) -> f64 {
    let master_copy = match task {
        Task::Lora | Task::Qlora => 0.0,
        _ if activation_bytes(precision) < 4.0 => 4.0,
        _ => 0.0,
    };
    master_copy + optimizer_state_bytes(optimizer)
}

/// The optimizer's own state per parameter, without a master copy: AdamW's two fp32 moments,
/// 8-bit Adam's two 8-bit ones (bitsandbytes), SGD's fp32 momentum, Adafactor's factored
/// second moments. Paged variants keep the same states in managed memory.
pub fn optimizer_state_bytes(optimizer: Optimizer) -> f64 {
    match optimizer {
        Optimizer::AdamW | Optimizer::PagedAdamW => 8.0,
        Optimizer::Adam8bit | Optimizer::PagedAdam8bit => 2.0,
        Optimizer::SgdMomentum => 4.0,
        Optimizer::Adafactor => 0.1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_precision_adam_is_sixteen_bytes_per_parameter() {
        let total = weight_bytes(Task::Pretrain, Precision::Bf16)
            + gradient_bytes(Task::Pretrain, Precision::Bf16)
            + optimizer_bytes(Task::Pretrain, Precision::Bf16, Optimizer::AdamW);
        assert_eq!(total, 16.0);
    }

    #[test]
    fn fp32_adam_is_sixteen_bytes_too() {
        let total = weight_bytes(Task::Pretrain, Precision::Fp32)
            + gradient_bytes(Task::Pretrain, Precision::Fp32)
            + optimizer_bytes(Task::Pretrain, Precision::Fp32, Optimizer::AdamW);
        assert_eq!(total, 16.0);
    }

    #[test]
    fn nf4_with_and_without_double_quantisation() {
        assert_eq!(NF4_BYTES_PER_PARAMETER, 0.5625);
        assert!((NF4_DOUBLE_QUANT_BYTES_PER_PARAMETER - 0.5159).abs() < 1e-4);
        assert_eq!(embedding_bytes(Task::Qlora, Precision::Bf16), 2.0);
        assert_eq!(weight_bytes(Task::Inference, Precision::Int8), 1.0);
    }

    #[test]
    fn a_checkpoint_that_keeps_attention_unquantized_holds_it_in_sixteen_bits() {
        let mut spec = crate::test_specs::llama_2_7b();
        assert_eq!(sixteen_bit_layer_parameters(&spec, Precision::Fp4), 0.0);
        spec.quantization = Some(gpuplan_model::CheckpointQuantization {
            method: "mxfp4".into(),
            precision: Some(Precision::Fp4),
            kernel: None,
            bits_per_weight: None,
            fp4_format: Some(Fp4Format::Mxfp4),
            unquantized_attention: true,
        });
        // Llama 2 7B's attention: four 4096 × 4096 projections in each of 32 layers.
        assert_eq!(
            sixteen_bit_layer_parameters(&spec, Precision::Fp4),
            32.0 * 4.0 * 4096.0 * 4096.0
        );
        // Served at another precision than its checkpoint's, the checkpoint says nothing.
        assert_eq!(sixteen_bit_layer_parameters(&spec, Precision::Fp8), 0.0);
    }

    #[test]
    fn latent_attention_keeps_its_projections_in_sixteen_bits_beside_fp4() {
        // DeepSeek-V3/R1: fused_a 7168 × (1536 + 576), q_b_proj 1536 × 128·192, kv_b_proj
        // 512 × 128·256, and the two latents' norms, in each of 61 layers: 4.25 B.
        let spec = crate::test_specs::deepseek_v3_attention();
        let per_layer: u64 = 7168 * 2112 + 1536 * 24576 + 512 * 32768 + 1536 + 512;
        assert_eq!(
            sixteen_bit_layer_parameters(&spec, Precision::Fp4),
            (61 * per_layer) as f64
        );
        assert!((sixteen_bit_layer_parameters(&spec, Precision::Fp4) / 1e9 - 4.25).abs() < 0.01);
        // fp8 checkpoints quantise them with the rest; grouped-query attention has none.
        assert_eq!(sixteen_bit_layer_parameters(&spec, Precision::Fp8), 0.0);
        let llama = crate::test_specs::llama_2_7b();
        assert_eq!(sixteen_bit_layer_parameters(&llama, Precision::Fp4), 0.0);
    }

    #[test]
    fn four_bit_floats_carry_their_block_scales() {
        // NVFP4: 8 bytes of values and one scale byte per 16 weights; MXFP4: one per 32.
        assert_eq!(NVFP4_BYTES_PER_PARAMETER * 16.0, 9.0);
        assert_eq!(MXFP4_BYTES_PER_PARAMETER * 32.0, 17.0);
        assert_eq!(weight_bytes(Task::Inference, Precision::Fp4), NVFP4_BYTES_PER_PARAMETER);
        assert_eq!(weight_bytes(Task::Inference, Precision::Int4), 4.25 / 8.0);
    }
}
