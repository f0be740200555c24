//! Floating-point operations of training and inference.
//!
//! References:
//! - Kaplan et al. 2020 ("Scaling Laws for Neural Language Models", §2.1): a forward pass
//!   costs 2N FLOPs per token for N non-embedding parameters, the backward pass twice that.
//! - Chowdhery et al. 2022 ("PaLM", Appendix B): model FLOPs per token for MFU are
//!   6N + 12·L·H·Q·T (L layers, H heads, Q head size, T sequence length), recomputation
//!   excluded; we use the same definition so that our MFU compares with published ones.
//! - Hu et al. 2021 ("LoRA"): frozen weights need no weight gradients, so the backward pass
//!   costs one matmul per weight instead of two (≈ 4N per token in all).

use crate::op_checkpointing;
use crate::parameters::ParameterCount;
use gpuplan_model::{Checkpointing, Task, TransformerSpec};

/// Attention-score FLOPs per token of one forward pass (QKᵀ and AV) over `seq` tokens, in
/// the PaLM convention (the causal mask is not discounted).
pub fn attention_forward_per_token(spec: &TransformerSpec, seq: u64) -> f64 {
    let layers = (spec.layers + spec.decoder_layers) as f64;
    let width = match spec.mla {
        Some(mla) => (spec.heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim)) as f64 / 2.0,
        None => spec.attention_width() as f64,
    };
    4.0 * layers * width * seq as f64
}

/// Attention-score FLOPs per generated token over `seq` tokens of context. Multi-head latent
/// attention decodes with the up-projections absorbed into the query and output (DeepSeek-V2
/// §2.1.2; FlashMLA, vLLM's, SGLang's and TensorRT-LLM's MLA decode kernels): every head scores
/// the cached latent and its rotary part (`kv_lora_rank + qk_rope_head_dim` wide) and sums the
/// latent (`kv_lora_rank` wide), 2.1× the width its prompts are attended with. Other attention
/// decodes as it prefills.
pub fn attention_decode_per_token(spec: &TransformerSpec, seq: u64) -> f64 {
    let Some(mla) = spec.mla else {
        return attention_forward_per_token(spec, seq);
    };
    let layers = (spec.layers + spec.decoder_layers) as f64;
    let per_head = 2.0 * (mla.kv_lora_rank + mla.qk_rope_head_dim) as f64 + 2.0 * mla.kv_lora_rank as f64;
    layers * spec.heads as f64 * per_head * seq as f64
}

/// Softmax exponentials per token over `seq` tokens of context: one per head and key in every
/// layer, whatever the form the scores are computed in (latent attention's absorbed decode
/// included). Where the special-function units return fewer of them than the tensor cores
/// multiply scores, they set attention's pace (FlashAttention-3, Shah et al. 2024, §3: H100
/// SXM5's 3.9 TFLOPS of special functions against 989 TFLOPS of FP16 matmul;
/// FlashAttention-4 on Blackwell, whose tensor cores doubled and exponentials did not).
pub fn attention_exponentials_per_token(spec: &TransformerSpec, seq: u64) -> f64 {
    ((spec.layers + spec.decoder_layers) * spec.heads) as f64 * seq as f64
}

/// FLOPs per trained token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainingFlops {
    /// Model FLOPs (the MFU numerator): forward + backward, no recomputation; with adapters
    /// (LoRA, QLoRA) the frozen weights' gradients are not part of the work (≈ 4N, not 6N).
    pub model: f64,
    /// FLOPs the hardware executes: recomputation included, frozen weights' gradients excluded.
    pub hardware: f64,
    /// Of `hardware`, the output layer's logits projection, forward and backward: the one
    /// matmul that low-precision training leaves in 16 bits.
    pub logits: f64,
}

pub fn training_per_token(
    spec: &TransformerSpec,
    counts: &ParameterCount,
    seq: u64,
    task: Task,
    checkpointing: Checkpointing,
) -> TrainingFlops {
    let matmul = 2.0 * counts.active_matmul() as f64;
    let attention = attention_forward_per_token(spec, seq);
    let forward = matmul + attention;
    // Backward: input gradients (one forward's worth) plus weight gradients (another, only
    // for trained weights) plus the attention backward (two forwards' worth).
    let backward = match task {
        Task::Lora | Task::Qlora => matmul + 2.0 * attention,
        _ => 2.0 * forward,
    };
    let model = forward + backward;
    let logits_forward = 2.0 * counts.logits_matmul as f64;
    let logits = match task {
        Task::Lora | Task::Qlora => 2.0 * logits_forward,
        _ => 3.0 * logits_forward,
    };
    let recompute = match checkpointing {
        Checkpointing::Full => forward,
        Checkpointing::Selective => attention,
        Checkpointing::Op => op_checkpointing::recomputed_flops_per_token(spec),
        // Norms and activation functions: element-wise work, no matmul FLOPs.
        Checkpointing::None | Checkpointing::NormsAndActivation => 0.0,
    };
    TrainingFlops {
        model,
        hardware: forward + backward + recompute,
        logits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parameters::count_parameters;
    use crate::test_specs::llama_2_7b;

    #[test]
    fn an_exponential_comes_with_four_head_widths_of_score_flops() {
        let spec = llama_2_7b();
        let exponentials = attention_exponentials_per_token(&spec, 4096);
        assert_eq!(exponentials, 32.0 * 32.0 * 4096.0);
        assert_eq!(attention_forward_per_token(&spec, 4096) / exponentials, 4.0 * 128.0);
        // Latent attention's absorbed decode scores more per exponential than its prompts.
        let mla = crate::test_specs::deepseek_v3_attention();
        let per_exponential = |flops: f64| flops / attention_exponentials_per_token(&mla, 1);
        assert!(
            per_exponential(attention_decode_per_token(&mla, 1))
                > 3.0 * per_exponential(attention_forward_per_token(&mla, 1))
        );
    }

    #[test]
    fn six_n_plus_attention() {
        let spec = llama_2_7b();
        let counts = count_parameters(&spec);
        let flops = training_per_token(&spec, &counts, 4096, Task::Pretrain, Checkpointing::None);
        let n = (counts.total - 32000 * 4096) as f64;
        assert_eq!(flops.model, 6.0 * n + 12.0 * 32.0 * 4096.0 * 4096.0);
        assert_eq!(flops.hardware, flops.model);
        let lora = training_per_token(&spec, &counts, 4096, Task::Lora, Checkpointing::None);
        let matmul = 2.0 * counts.active_matmul() as f64;
        assert!(
            (lora.model - (flops.model - matmul)).abs() < 1.0,
            "no weight gradients of the frozen base"
        );
        assert_eq!(lora.hardware, lora.model);
        let full = training_per_token(&spec, &counts, 4096, Task::Pretrain, Checkpointing::Full);
        assert!((full.hardware / full.model - 4.0 / 3.0).abs() < 1e-12);
        // The output layer's share: forward and both gradients, or no weight gradient when
        // the base is frozen; recomputation does not redo it.
        let output = 32000.0 * 4096.0;
        assert_eq!(flops.logits, 6.0 * output);
        assert_eq!(lora.logits, 4.0 * output);
        assert_eq!(full.logits, flops.logits);
    }

    /// DeepSeek-V3's latent attention (128 heads, a 512-wide latent, 64-wide rotary keys,
    /// 128 + 64 query and 128 value dimensions a head) decodes with its up-projections
    /// absorbed: 128 × (2 × 576 + 2 × 512) FLOPs a layer per token of context, against the
    /// 4 × 128 × 320 / 2 of its prompts. Grouped-query attention decodes as it prefills.
    #[test]
    fn latent_attention_decodes_in_its_absorbed_form() {
        let spec = crate::test_specs::deepseek_v3_attention();
        let (prompt, decode) = (
            attention_forward_per_token(&spec, 1),
            attention_decode_per_token(&spec, 1),
        );
        assert_eq!(prompt, 4.0 * 61.0 * 128.0 * 320.0 / 2.0);
        assert_eq!(decode, 61.0 * 128.0 * (2.0 * 576.0 + 2.0 * 512.0));
        assert!((decode / prompt - 3.4).abs() < 0.01, "{}", decode / prompt);
        let llama = llama_2_7b();
        assert_eq!(
            attention_decode_per_token(&llama, 100),
            attention_forward_per_token(&llama, 100)
        );
    }
}
