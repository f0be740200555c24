//! Parameter counts from a transformer's shape.
//!
//! Every weight matrix and bias of the standard blocks is counted: attention (multi-head,
//! grouped-query, multi-query, or DeepSeek's multi-head latent attention), dense or gated
//! feed-forward, mixture-of-experts layers with routed and shared experts, norms, embeddings
//! and the output layer.
//!
//! References:
//! - Vaswani et al. 2017, "Attention Is All You Need" (the block).
//! - Shazeer 2020, "GLU Variants Improve Transformer" (three-matrix gated feed-forward).
//! - Ainslie et al. 2023, "GQA" (grouped key/value heads).
//! - DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", §2.1 (MLA and DeepSeekMoE shapes).

use gpuplan_model::{AttentionBias, Norm, Stacks, TransformerSpec};
use serde::Serialize;

/// A model's parameters, split the way memory and FLOPs need them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ParameterCount {
    /// Every parameter, counted once (a tied output layer is not counted twice).
    pub total: u64,
    /// Input token and position embeddings.
    pub embedding: u64,
    /// The output layer when it is not tied to the input embedding.
    pub output_head: u64,
    /// Parameters a single token passes through: all of them for dense models; for
    /// mixture-of-experts models, only the routed experts it is sent to.
    pub active: u64,
    /// Parameters in the repeated layers (the linear layers LoRA adapts live here).
    pub layers: u64,
    /// Size of the vocabulary projection that produces logits (vocab × hidden), whether or
    /// not its matrix is shared with the input embedding; 0 for encoders without one.
    pub logits_matmul: u64,
}

impl ParameterCount {
    /// Parameters whose matrix multiplications cost FLOPs per token: the active parameters
    /// without the embedding lookups, with the logits projection (Kaplan et al. 2020, §2.1).
    pub fn active_matmul(&self) -> u64 {
        self.active.saturating_sub(self.embedding + self.output_head) + self.logits_matmul
    }
}

fn norm(spec: &TransformerSpec) -> u64 {
    match spec.norm {
        Norm::RmsNorm => spec.hidden,
        Norm::LayerNorm => 2 * spec.hidden,
    }
}

/// Self-attention of one layer.
fn attention(spec: &TransformerSpec) -> u64 {
    let h = spec.hidden;
    if let Some(mla) = spec.mla {
        return latent_projections(spec, mla) + spec.heads * mla.v_head_dim * h;
    }
    let q = spec.attention_width();
    let kv = spec.kv_width();
    let weights = h * q + 2 * h * kv + q * h;
    let biases = match spec.attention_bias {
        AttentionBias::None => 0,
        AttentionBias::Qkv => q + 2 * kv,
        AttentionBias::All => q + 2 * kv + h,
    };
    weights + biases
}

/// Multi-head latent attention's projections of one layer but the output one: the query's
/// (down to `q_lora_rank` and up, or one projection without compression) and the keys' and
/// values' (down to the latent and its rotary key, and up), with the norms of the latents.
fn latent_projections(spec: &TransformerSpec, mla: gpuplan_model::MlaSpec) -> u64 {
    let h = spec.hidden;
    let query_width = spec.heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim);
    let query = if mla.q_lora_rank > 0 {
        h * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * query_width
    } else {
        h * query_width
    };
    let key_value = h * (mla.kv_lora_rank + mla.qk_rope_head_dim)
        + mla.kv_lora_rank
        + mla.kv_lora_rank * spec.heads * (mla.qk_nope_head_dim + mla.v_head_dim);
    query + key_value
}

/// Self-attention's parameters over all layers (the main stack's).
pub fn attention_parameters(spec: &TransformerSpec) -> u64 {
    spec.layers * attention(spec)
}

/// [`latent_projections`] over all layers; 0 without latent attention.
pub fn latent_projection_parameters(spec: &TransformerSpec) -> u64 {
    spec.mla.map_or(0, |mla| spec.layers * latent_projections(spec, mla))
}

/// Cross-attention of an encoder-decoder's decoder layer (keys and values from the encoder).
fn cross_attention(spec: &TransformerSpec) -> u64 {
    let h = spec.hidden;
    let q = spec.attention_width();
    let biases = match spec.attention_bias {
        AttentionBias::None => 0,
        AttentionBias::Qkv => 3 * q,
        AttentionBias::All => 3 * q + h,
    };
    4 * h * q + biases
}

/// A dense feed-forward of hidden size `ffn`.
fn feed_forward(spec: &TransformerSpec, ffn: u64) -> u64 {
    let h = spec.hidden;
    let matrices = if spec.gated_ffn { 3 } else { 2 };
    let biases = if spec.mlp_bias { (matrices - 1) * ffn + h } else { 0 };
    matrices * h * ffn + biases
}

/// Feed-forward parameters of layer `index`: `(total, active per token)`.
fn layer_feed_forward(spec: &TransformerSpec, index: u64) -> (u64, u64) {
    match spec.moe {
        Some(moe) if index >= moe.dense_layers => {
            let router = spec.hidden * moe.experts;
            let one_expert = feed_forward(spec, moe.expert_ffn);
            let shared = if moe.shared_ffn > 0 {
                feed_forward(spec, moe.shared_ffn)
            } else {
                0
            };
            (
                router + moe.experts * one_expert + shared,
                router + moe.experts_per_token * one_expert + shared,
            )
        }
        _ => {
            let dense = feed_forward(spec, spec.ffn);
            (dense, dense)
        }
    }
}

/// Counts the parameters of `spec`.
pub fn count_parameters(spec: &TransformerSpec) -> ParameterCount {
    let h = spec.hidden;
    let embedding = spec.vocab * h + spec.learned_positions * h;
    let output_head = if spec.tied_embeddings { 0 } else { spec.vocab * h };

    let mut layers_total = 0;
    let mut layers_active = 0;
    for index in 0..spec.layers {
        let (ffn_total, ffn_active) = layer_feed_forward(spec, index);
        let shared = attention(spec) + spec.norms_per_layer * norm(spec);
        layers_total += shared + ffn_total;
        layers_active += shared + ffn_active;
    }
    // The decoder of an encoder-decoder: self-attention, cross-attention, feed-forward, 3 norms.
    let decoder_layer = attention(spec) + cross_attention(spec) + feed_forward(spec, spec.ffn) + 3 * norm(spec);
    layers_total += spec.decoder_layers * decoder_layer;
    layers_active += spec.decoder_layers * decoder_layer;

    let final_norms = match spec.stacks {
        Stacks::DecoderOnly => norm(spec),
        Stacks::EncoderDecoder => 2 * norm(spec),
        Stacks::EncoderOnly => 0,
    };
    let rest = embedding + output_head + final_norms + spec.extra_parameters;
    ParameterCount {
        total: layers_total + rest,
        embedding,
        output_head,
        active: layers_active + rest,
        layers: layers_total,
        logits_matmul: if spec.generates() { spec.vocab * h } else { 0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_specs::llama_2_7b;
    use gpuplan_model::MoeSpec;

    #[test]
    fn llama_2_7b_is_exactly_its_published_count() {
        // Hand count: 32 × (4·4096² + 3·4096·11008 + 2·4096) + 2·32000·4096 + 4096.
        let count = count_parameters(&llama_2_7b());
        assert_eq!(count.total, 6_738_415_616);
        assert_eq!(count.active, count.total);
        assert_eq!(count.output_head, 32000 * 4096);
    }

    #[test]
    fn moe_activates_only_the_routed_experts() {
        let mut spec = llama_2_7b();
        spec.moe = Some(MoeSpec {
            experts: 8,
            experts_per_token: 2,
            shared_experts: 0,
            expert_ffn: 11008,
            shared_ffn: 0,
            dense_layers: 0,
        });
        let count = count_parameters(&spec);
        let expert = 3 * 4096 * 11008;
        assert_eq!(count.total - count.active, 32 * 6 * expert);
    }
}
