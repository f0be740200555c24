//! A model named only by its size (`7b`, `1.5b`, `500m`), as people ask "what do I need for a
//! 7B model?": a dense decoder of that many parameters in Llama 3's proportions, whose shape is
//! assumed and says so in its name. `8x7b` is a mixture of experts in Mixtral's convention
//! (Jiang et al. 2024, "Mixtral of Experts": each layer's FFN replaced by 8 copies, 2 routed
//! per token, attention and embeddings shared): the 7B shape with 8 experts.
//!
//! Proportions (Llama 3 Herd of Models, Dubey et al. 2024, Table 3: 8B is 32 layers of width
//! 4,096 with a 14,336 FFN; 70B 80 × 8,192 with 28,672; 405B 126 × 16,384 with 53,248; 8 KV
//! heads and a 128,256-token vocabulary throughout): 128-wide attention heads, 8 KV heads, a
//! SwiGLU FFN 3.5 × the width, an untied 128,256-token vocabulary, and a width of 100–160 per
//! layer (Llama 3: 102 to 130; GPT-3 175B: 128; Kaplan et al. 2020 find loss flat over a wide
//! range of this aspect ratio) in whole 8-head groups, so the 8 KV heads divide the heads. Of
//! those shapes, the one whose total comes nearest the size asked, the aspect ratio nearest 128
//! on a tie.

use crate::Field;
use gpuplan_model::field::Defaulted;
use gpuplan_model::{Architecture, ModelSpec};

const VOCABULARY: f64 = 128_256.0;
const KV_HEADS: f64 = 8.0;
const HEAD_DIM: f64 = 128.0;
/// Width per layer (the aspect ratio).
const WIDTH_PER_LAYER: f64 = 128.0;
const FFN_RATIO: f64 = 3.5;

/// `7b` → 7e9, `1.5B` → 1.5e9, `500m` → 5e8; `None` for anything else.
pub fn parse_size(text: &str) -> Option<f64> {
    let lower = text.trim().to_ascii_lowercase();
    let (number, scale) = match lower.strip_suffix('b') {
        Some(number) => (number, 1e9),
        None => (lower.strip_suffix('m')?, 1e6),
    };
    let value: f64 = number.parse().ok()?;
    (value.is_finite() && value > 0.0).then_some(value * scale)
}

/// `8x7b` → (8 experts, 7e9 per expert model); `None` for anything else.
pub fn parse_experts(text: &str) -> Option<(u64, f64)> {
    let lower = text.trim().to_ascii_lowercase();
    let (experts, size) = lower.split_once('x')?;
    let experts: u64 = experts.parse().ok()?;
    ((2..=512).contains(&experts)).then_some(())?;
    Some((experts, parse_size(size)?))
}

/// `70b-moe:8x` → (8 experts, 7e10 in all); `70b-moe` → 8 experts, Mixtral's count; `None` for
/// anything else.
pub fn parse_total_moe(text: &str) -> Option<(u64, f64)> {
    let lower = text.trim().to_ascii_lowercase();
    let (size, experts) = match lower.split_once("-moe") {
        Some((size, "")) => (size, DEFAULT_EXPERTS),
        Some((size, rest)) => (size, rest.strip_prefix(':')?.strip_suffix('x')?.parse().ok()?),
        None => return None,
    };
    ((2..=512).contains(&experts)).then_some(())?;
    Some((experts, parse_size(size)?))
}

/// Whether `name` is a size a generic model is built from.
pub fn is_generic_name(name: &str) -> bool {
    parse_size(name).is_some() || parse_experts(name).is_some() || parse_total_moe(name).is_some()
}

/// Experts of a mixture named by its total alone (`70b-moe`): Mixtral's eight.
const DEFAULT_EXPERTS: u64 = 8;

/// Experts routed per token in the mixtures built here (Mixtral's top-2).
const EXPERTS_PER_TOKEN: u64 = 2;

/// Parameters of `layers` layers of `width`.
fn parameters(layers: f64, width: f64) -> f64 {
    let ffn = (FFN_RATIO * width / 256.0).round() * 256.0;
    let attention = 2.0 * width * width + 2.0 * width * KV_HEADS * HEAD_DIM;
    let per_layer = attention + 3.0 * width * ffn + 2.0 * width;
    layers * per_layer + 2.0 * VOCABULARY * width + width
}

/// Parameters of `layers` layers of `width` whose FFN is `experts` routed copies (1: dense),
/// with a router per layer.
fn mixture_parameters(layers: f64, width: f64, experts: f64) -> f64 {
    if experts <= 1.0 {
        return parameters(layers, width);
    }
    let ffn = (FFN_RATIO * width / 256.0).round() * 256.0;
    parameters(layers, width) + layers * ((experts - 1.0) * 3.0 * width * ffn + width * experts)
}

/// The (layers, width) nearest `size` within the aspect ratios above.
fn shape(size: f64) -> (f64, f64) {
    shape_of(size, 1.0)
}

/// The (layers, width) whose mixture of `experts` (1: a dense model) totals nearest `size`.
fn shape_of(size: f64, experts: f64) -> (f64, f64) {
    let mut best = (32.0, 4096.0);
    let mut best_key = (f64::INFINITY, f64::INFINITY);
    for layers in (1..=400).map(f64::from) {
        for groups in (1..=256).map(f64::from) {
            let width = groups * KV_HEADS * HEAD_DIM;
            let ratio = width / layers;
            // The narrowest width (one 8-head group) also serves models too small for the ratio.
            let allowed = (100.0..=160.0).contains(&ratio) || (groups == 1.0 && ratio > 160.0);
            if !allowed {
                continue;
            }
            let key = (
                (mixture_parameters(layers, width, experts) / size - 1.0).abs(),
                (ratio - WIDTH_PER_LAYER).abs(),
            );
            if key.0 < best_key.0 - 1e-3 || (key.0 <= best_key.0 + 1e-3 && key.1 < best_key.1) {
                best = (layers, width);
                best_key = key;
            }
        }
    }
    best
}

/// The generic decoder of `size` parameters, where `name` is a size between 50M and 2T, or
/// `EXPERTSxSIZE` for a mixture of experts on that size's shape.
pub fn generic_decoder(name: &str) -> Option<Result<ModelSpec, String>> {
    // `8x7b`: the 7B shape with 8 experts; `70b-moe:8x`: 8 experts on the shape that totals 70B.
    let (experts, size, total) = match (parse_experts(name), parse_total_moe(name)) {
        (Some((experts, size)), _) => (Some(experts), size, false),
        (None, Some((experts, size))) => (Some(experts), size, true),
        (None, None) => (None, parse_size(name)?, false),
    };
    if !(5e7..=2e12).contains(&size) {
        return Some(Err(format!(
            "`{name}` is {size:.3e} parameters; a generic decoder is built from 50M to 2T"
        )));
    }
    let (layers, width) = if total {
        shape_of(size, experts.map_or(1.0, |e| e as f64))
    } else {
        shape(size)
    };
    let heads = width / HEAD_DIM;
    let mut config = serde_json::json!({
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": width as u64,
        "num_hidden_layers": layers as u64,
        "num_attention_heads": heads as u64,
        "num_key_value_heads": KV_HEADS.min(heads) as u64,
        "intermediate_size": ((FFN_RATIO * width / 256.0).round() * 256.0) as u64,
        "vocab_size": VOCABULARY as u64,
        "max_position_embeddings": 8192,
        "tie_word_embeddings": false,
        "torch_dtype": "bfloat16",
        "rope_theta": 500000.0,
        "hidden_act": "silu"
    });
    if let Some(experts) = experts {
        config["model_type"] = "mixtral".into();
        config["architectures"] = serde_json::json!(["MixtralForCausalLM"]);
        config["num_local_experts"] = experts.into();
        config["num_experts_per_tok"] = EXPERTS_PER_TOKEN.into();
    }
    let spec = match gpuplan_catalog::parse_hf_config_text(&config.to_string()) {
        Ok(spec) => spec,
        Err(error) => return Some(Err(error.to_string())),
    };
    let id = name.trim().to_ascii_lowercase();
    let kind = match experts {
        Some(experts) => format!("mixture-of-experts decoder, {experts} experts, {EXPERTS_PER_TOKEN} per token"),
        None => "decoder".to_string(),
    };
    Some(Ok(ModelSpec {
        name: format!(
            "generic {} {kind} (shape assumed: {layers:.0} layers × {width:.0}, Llama 3 proportions)",
            id.to_ascii_uppercase()
        ),
        id,
        aliases: Vec::new(),
        architecture: Architecture::Transformer(spec),
        published_parameters: None,
        published_counts_output_layer_twice: false,
        checkpoint_parameters: None,
        sources: Vec::new(),
    }))
}

/// The record every answer on a generic decoder carries: its shape was chosen, not read.
pub fn assumed_shape(model: &ModelSpec) -> Option<Defaulted> {
    let Architecture::Transformer(spec) = &model.architecture else {
        return None;
    };
    (is_generic_name(&model.id) && model.name.starts_with("generic ")).then(|| {
        let experts = spec
            .moe
            .as_ref()
            .map_or(String::new(), |m| format!(", {} experts of which {} per token", m.experts, m.experts_per_token));
        Defaulted::new(
            Field::Model,
            format!(
                "{} layers × {}, {} heads ({} KV), FFN {}, vocabulary {}{experts}",
                spec.layers, spec.hidden, spec.heads, spec.kv_heads, spec.ffn, spec.vocab
            ),
            if spec.moe.is_some() {
                "a bare size: Llama 3's proportions (Dubey et al. 2024, Table 3) with Mixtral's experts (Jiang et al. 2024), its shape assumed"
            } else {
                "a bare size: a dense decoder in Llama 3's proportions (Dubey et al. 2024, Table 3), its shape assumed"
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("7b"), Some(7e9));
        assert_eq!(parse_size("1.5B"), Some(1.5e9));
        assert_eq!(parse_size("500m"), Some(5e8));
        assert_eq!(parse_size("llama-7b"), None);
        assert_eq!(parse_size("b"), None);
    }

    #[test]
    fn the_proportions_give_back_llama_3_8b_at_32_layers() {
        // 32 × 4,096 with a 14,336 FFN and the 128,256 vocabulary: 8.03B, as published.
        assert!(
            (parameters(32.0, 4096.0) - 8.03e9).abs() < 0.01e9,
            "{}",
            parameters(32.0, 4096.0)
        );
    }

    #[test]
    fn a_generic_model_lands_near_the_size_asked_and_says_it_is_assumed() {
        // Small sizes are dominated by the 128K vocabulary: Llama 3.2 "1B" is itself 1.24B.
        for (name, size, within) in [
            ("7b", 7e9, 0.02),
            ("70b", 70e9, 0.02),
            ("405b", 405e9, 0.02),
            ("1b", 1e9, 0.3),
        ] {
            let spec = generic_decoder(name).unwrap().unwrap();
            let Architecture::Transformer(t) = &spec.architecture else {
                panic!("{name}")
            };
            let total = parameters(t.layers as f64, t.hidden as f64);
            assert!((total / size - 1.0).abs() < within, "{name}: {total:.3e}");
            assert!(spec.name.contains("shape assumed"), "{}", spec.name);
        }
        assert!(generic_decoder("5000b").unwrap().is_err());
        // Mixtral's convention: 8 experts on a 7B shape hold about 47B, 13B active per token
        // (Mixtral 8x7B: 46.7B and 12.9B).
        let moe = generic_decoder("8x7b").unwrap().unwrap();
        let Architecture::Transformer(t) = &moe.architecture else {
            panic!("8x7b")
        };
        let counts = gpuplan_estimate::parameters::count_parameters(t);
        assert!((40e9..52e9).contains(&(counts.total as f64)), "{}", counts.total);
        assert!((11e9..15e9).contains(&(counts.active as f64)), "{}", counts.active);
        assert!(moe.name.contains("8 experts, 2 per token"), "{}", moe.name);
        assert_eq!(parse_experts("1x7b"), None);
        // A mixture named by its total: its shape is the one whose eight experts total 70B.
        assert_eq!(parse_total_moe("70b-moe:8x"), Some((8, 7e10)));
        assert_eq!(parse_total_moe("70B-MoE"), Some((8, 7e10)));
        assert_eq!(parse_total_moe("70b-moe:1x"), None);
        let total = generic_decoder("70b-moe:8x").unwrap().unwrap();
        let Architecture::Transformer(spec) = &total.architecture else {
            panic!("70b-moe:8x")
        };
        let counts = gpuplan_estimate::parameters::count_parameters(spec);
        assert!((counts.total as f64 / 7e10 - 1.0).abs() < 0.1, "{}", counts.total);
        assert!(
            counts.active < counts.total / 3,
            "{} of {}",
            counts.active,
            counts.total
        );
        assert_eq!(parse_experts("8x"), None);
        assert!(generic_decoder("gpt-7").is_none());
    }
}
