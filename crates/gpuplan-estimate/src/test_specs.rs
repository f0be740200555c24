//! Model shapes the unit tests share.

use gpuplan_model::{AttentionBias, Norm, Stacks, TransformerSpec};

/// A Llama-style decoder: RMSNorm, SwiGLU, rotary positions, untied output layer.
pub(crate) fn llama(hidden: u64, layers: u64, heads: u64, kv_heads: u64, ffn: u64, vocab: u64) -> TransformerSpec {
    TransformerSpec {
        model_type: "llama".into(),
        stacks: Stacks::DecoderOnly,
        hidden,
        layers,
        decoder_layers: 0,
        heads,
        kv_heads,
        head_dim: hidden / heads,
        ffn,
        gated_ffn: true,
        vocab,
        tied_embeddings: false,
        learned_positions: 0,
        norm: Norm::RmsNorm,
        norms_per_layer: 2,
        attention_bias: AttentionBias::None,
        mlp_bias: false,
        moe: None,
        mla: None,
        max_context: 4096,
        extra_parameters: 0,
        image: None,
        quantization: None,
        sliding_window: None,
        read_notes: Vec::new(),
    }
}

/// Llama 2 7B: 32 layers, 4096 wide, 32 heads, SwiGLU 11008, 32k vocabulary.
pub(crate) fn llama_2_7b() -> TransformerSpec {
    llama(4096, 32, 32, 32, 11008, 32000)
}

/// DeepSeek-V3's attention on a Llama body: 61 layers, 7168 wide, 128 heads of multi-head
/// latent attention (queries through a 1,536-wide latent, keys and values through a 512-wide
/// one with a 64-wide rotary key). Its experts are left out.
pub(crate) fn deepseek_v3_attention() -> TransformerSpec {
    let mut spec = llama(7168, 61, 128, 128, 18432, 129280);
    spec.mla = Some(gpuplan_model::MlaSpec {
        q_lora_rank: 1536,
        kv_lora_rank: 512,
        qk_nope_head_dim: 128,
        qk_rope_head_dim: 64,
        v_head_dim: 128,
    });
    spec
}
