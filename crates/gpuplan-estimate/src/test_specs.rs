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
