//! Key/value cache of autoregressive decoding.
//!
//! Per token and layer a decoder keeps one key and one value per key/value head:
//! `2 × kv_heads × head_dim` values (Pope et al. 2022, "Efficiently Scaling Transformer
//! Inference", §2), so grouped-query and multi-query attention shrink it by `heads/kv_heads`.
//! Multi-head latent attention caches the compressed latent and the decoupled rope key
//! instead: `kv_lora_rank + qk_rope_head_dim` values per layer (DeepSeek-V2 report, §2.1.2).

use gpuplan_model::TransformerSpec;

/// Bytes of cache one token adds across all decoder layers, before tensor parallelism.
pub fn bytes_per_token(spec: &TransformerSpec, bytes_per_value: f64) -> f64 {
    let layers = if spec.decoder_layers > 0 {
        spec.decoder_layers
    } else {
        spec.layers
    } as f64;
    let values_per_layer = match spec.mla {
        Some(mla) => (mla.kv_lora_rank + mla.qk_rope_head_dim) as f64,
        None => 2.0 * spec.kv_width() as f64,
    };
    layers * values_per_layer * bytes_per_value
}

/// The share of a full-attention cache a sequence of `context` tokens keeps: layers with a
/// sliding window hold at most its width (Beltagy et al. 2020, "Longformer", §3; Gemma 2
/// report §2; what vLLM's hybrid KV cache manager from 0.10, TensorRT-LLM's per-layer
/// attention windows and SGLang's sliding-window pool allocate), the others the whole context.
pub fn context_share(spec: &TransformerSpec, context: f64) -> f64 {
    let Some(sliding) = spec.sliding_window else {
        return 1.0;
    };
    let layers = spec.layers.max(1) as f64;
    let local = (sliding.local_layers as f64).min(layers);
    let kept = if context > 0.0 {
        (sliding.window as f64 / context).min(1.0)
    } else {
        1.0
    };
    (layers - local + local * kept) / layers
}

/// How many ways tensor parallelism splits the cache: by key/value heads, which are
/// replicated once the degree exceeds their number; MLA's latent is not split.
pub fn tensor_parallel_split(spec: &TransformerSpec, tp: u32) -> f64 {
    if spec.mla.is_some() {
        1.0
    } else {
        (u64::from(tp).min(spec.kv_heads.max(1))) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_specs::llama;

    #[test]
    fn a_sliding_window_caps_its_layers_cache() {
        let mut spec = llama(4096, 32, 32, 8, 14336, 128256);
        assert_eq!(context_share(&spec, 32_768.0), 1.0);
        // Half the layers keep 4,096 of 32,768 tokens: 1/2 + 1/2 × 1/8.
        spec.sliding_window = Some(gpuplan_model::SlidingWindow {
            window: 4096,
            local_layers: 16,
        });
        assert!((context_share(&spec, 32_768.0) - 0.5625).abs() < 1e-12);
        // Within the window nothing is saved.
        assert_eq!(context_share(&spec, 2048.0), 1.0);
    }

    #[test]
    fn llama_3_8b_keeps_128_kib_per_token() {
        let spec = llama(4096, 32, 32, 8, 14336, 128256);
        // 2 × 8 × 128 × 32 layers × 2 bytes = 131,072 bytes.
        assert_eq!(bytes_per_token(&spec, 2.0), 131_072.0);
        assert_eq!(tensor_parallel_split(&spec, 16), 8.0);
    }
}
