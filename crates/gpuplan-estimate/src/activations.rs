//! Activation memory of training, per token and layer.
//!
//! The per-layer terms follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in
//! Large Transformer Models", §4.1: `sbh(34 + 5as/h)` bytes per layer for GPT with 16-bit
//! activations), written term by term so that they adapt to grouped-query attention, gated
//! feed-forwards, mixture-of-experts routing, models without dropout, fused (flash)
//! attention and recomputation:
//! - norms: the 16-bit input of each norm;
//! - attention: the QKV input, Q, K and V, the attention output (the input of the output
//!   projection); without flash attention also the softmax output (`2as` per token) and, with
//!   dropout, its mask and dropout output (`3as`);
//! - feed-forward: its input, and the intermediate tensors (`2f` plain: up-projection and
//!   activation output; `4 × 2f` gated: gate, up, activation and product);
//! - dropout masks (1 byte per element) after attention and feed-forward where the model
//!   uses dropout;
//! - with 8-bit training the linear layers' inputs are kept in their 8-bit casts (Transformer
//!   Engine and torchao float8 save those for the weight gradients), half their 16-bit size.

use crate::op_checkpointing;
use gpuplan_model::{Checkpointing, TransformerSpec};

/// Model types trained with dropout in their reference recipes.
fn has_dropout(spec: &TransformerSpec) -> bool {
    matches!(
        spec.model_type.as_str(),
        "gpt2" | "bert" | "roberta" | "t5" | "mt5" | "opt" | "whisper"
    )
}

/// Activation bytes one token leaves per layer for the backward pass, before tensor
/// parallelism, for a sequence of `seq` tokens, with 16-bit activations.
pub fn layer_bytes_per_token(
    spec: &TransformerSpec,
    seq: u64,
    flash_attention: bool,
    checkpointing: Checkpointing,
) -> f64 {
    if checkpointing == Checkpointing::Op {
        return 2.0 * op_checkpointing::saved_elements_per_token(spec);
    }
    let h = spec.hidden as f64;
    let a = spec.heads as f64;
    let q = spec.attention_width() as f64;
    let kv = spec.kv_width() as f64;
    let f = spec.ffn as f64;
    let dropout = has_dropout(spec);
    let mask = if dropout { 1.0 } else { 0.0 };

    let norms = spec.norms_per_layer.min(2) as f64 * 2.0 * h;
    // Recomputed norms keep no output: the inputs of the QKV projection and of the
    // feed-forward, which a norm produces in a pre-norm layer, are rebuilt in the backward pass.
    let norm_outputs = checkpointing == Checkpointing::NormsAndActivation && spec.norms_per_layer > 0;
    let linear_input = if norm_outputs { 0.0 } else { 2.0 * h };
    let mut attention = linear_input + 2.0 * q + 4.0 * kv + 2.0 * q + mask * h;
    let quadratic = if dropout { 5.0 } else { 2.0 } * a * seq as f64;
    if !flash_attention && checkpointing == Checkpointing::None {
        attention += quadratic;
    }
    let (ffn_width, routed) = match spec.moe {
        Some(moe) => (
            moe.expert_ffn as f64,
            moe.experts_per_token as f64 + moe.shared_experts.min(1) as f64,
        ),
        None => (f, 1.0),
    };
    let mut intermediate = if spec.gated_ffn { 8.0 } else { 4.0 } * ffn_width * routed;
    if checkpointing == Checkpointing::NormsAndActivation {
        if let Some(moe) = spec.moe {
            // The routed experts keep their first projection's output (gate and up) and
            // rebuild the activation and its product from it.
            intermediate -= if spec.gated_ffn { 4.0 } else { 2.0 } * ffn_width * moe.experts_per_token as f64;
        }
    }
    let feed_forward = linear_input + intermediate + mask * h;
    norms + attention + feed_forward
}

/// Bytes per token and layer that 8-bit training (Transformer Engine, torchao float8) does not
/// keep in 16 bits: the inputs of the four linear layers (QKV, output projection, and the
/// feed-forward's two), which it saves for the weight gradients in their 8-bit casts.
pub fn eight_bit_linear_input_savings(spec: &TransformerSpec) -> f64 {
    let h = spec.hidden as f64;
    let q = spec.attention_width() as f64;
    let (ffn_width, routed) = match spec.moe {
        Some(moe) => (
            moe.expert_ffn as f64,
            moe.experts_per_token as f64 + moe.shared_experts.min(1) as f64,
        ),
        None => (spec.ffn as f64, 1.0),
    };
    h + q + h * routed + ffn_width * routed
}

/// Activation bytes per token for the whole stack on one GPU: every layer's share, or with
/// full recomputation only each layer's input plus one layer being recomputed; with per-op
/// checkpointing what each layer keeps plus the rest of the one being recomputed.
pub fn stack_bytes_per_token(
    spec: &TransformerSpec,
    layers: u64,
    seq: u64,
    flash_attention: bool,
    checkpointing: Checkpointing,
) -> f64 {
    let per_layer = layer_bytes_per_token(spec, seq, flash_attention, checkpointing);
    // One layer at a time is recomputed in full, on top of what every layer kept.
    let recomputed_layer = || layer_bytes_per_token(spec, seq, flash_attention, Checkpointing::Selective);
    match checkpointing {
        Checkpointing::Full => layers as f64 * 2.0 * spec.hidden as f64 + per_layer,
        Checkpointing::Op => layers as f64 * per_layer + recomputed_layer() - per_layer,
        Checkpointing::None | Checkpointing::Selective | Checkpointing::NormsAndActivation => layers as f64 * per_layer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_model::{AttentionBias, Norm, Stacks};

    fn gpt(hidden: u64, heads: u64) -> TransformerSpec {
        TransformerSpec {
            model_type: "gpt2".into(),
            stacks: Stacks::DecoderOnly,
            hidden,
            layers: 1,
            decoder_layers: 0,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            ffn: 4 * hidden,
            gated_ffn: false,
            vocab: 50257,
            tied_embeddings: true,
            learned_positions: 1024,
            norm: Norm::LayerNorm,
            norms_per_layer: 2,
            attention_bias: AttentionBias::All,
            mlp_bias: true,
            moe: None,
            mla: None,
            max_context: 1024,
            extra_parameters: 0,
            image: None,
            quantization: None,
            sliding_window: None,
            read_notes: Vec::new(),
        }
    }

    #[test]
    fn reproduces_korthikanti_for_gpt() {
        // sbh(34 + 5as/h) per layer: per token 34h + 5as.
        let (h, a, s) = (4096.0, 32.0, 2048.0);
        let bytes = layer_bytes_per_token(&gpt(4096, 32), 2048, false, Checkpointing::None);
        assert_eq!(bytes, 34.0 * h + 5.0 * a * s);
    }

    #[test]
    fn flash_attention_drops_the_quadratic_term() {
        let bytes = layer_bytes_per_token(&gpt(4096, 32), 2048, true, Checkpointing::None);
        assert_eq!(bytes, 34.0 * 4096.0);
    }

    /// Megatron's `--recompute-modules layernorm moe_act`: the two norms' outputs (the QKV and
    /// feed-forward inputs, 2h bytes each) are not kept, and a gated expert keeps its first
    /// projection (gate and up) but not the activation and its product (2 × 2f bytes each).
    #[test]
    fn recomputing_norms_and_the_expert_activation_drops_their_outputs() {
        let dense = gpt(4096, 32);
        let saved = |spec: &TransformerSpec| {
            layer_bytes_per_token(spec, 2048, true, Checkpointing::None)
                - layer_bytes_per_token(spec, 2048, true, Checkpointing::NormsAndActivation)
        };
        assert_eq!(saved(&dense), 4.0 * 4096.0);
        let mut moe = gpt(2880, 64);
        moe.gated_ffn = true;
        moe.moe = Some(gpuplan_model::MoeSpec {
            experts: 128,
            experts_per_token: 4,
            shared_experts: 0,
            expert_ffn: 2880,
            shared_ffn: 0,
            dense_layers: 0,
        });
        assert_eq!(saved(&moe), 4.0 * 2880.0 + 4.0 * 2880.0 * 4.0);
        let hardware = |checkpointing| {
            let counts = crate::parameters::count_parameters(&moe);
            crate::flops::training_per_token(&moe, &counts, 4096, gpuplan_model::Task::Pretrain, checkpointing).hardware
        };
        assert_eq!(
            hardware(Checkpointing::NormsAndActivation),
            hardware(Checkpointing::None)
        );
    }

    #[test]
    fn full_recomputation_keeps_layer_inputs() {
        let spec = gpt(4096, 32);
        let kept = stack_bytes_per_token(&spec, 32, 2048, true, Checkpointing::Full);
        assert_eq!(kept, 32.0 * 2.0 * 4096.0 + 34.0 * 4096.0);
    }
}
