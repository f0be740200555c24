//! Reads a Hugging Face `config.json` into a [`TransformerSpec`].
//!
//! Each supported `model_type` names its fields differently (`n_embd` in GPT-2, `d_model` in
//! T5, `hidden_size` elsewhere); this module maps them onto one shape and says which field is
//! missing when one is.

use gpuplan_model::{AttentionBias, MlaSpec, MoeSpec, Norm, SlidingWindow, Stacks, TransformerSpec};
use serde_json::{Map, Value};

/// The `model_type`s this reader understands.
pub const SUPPORTED_MODEL_TYPES: &[&str] = &[
    "llama",
    "mistral",
    "mixtral",
    "phimoe",
    "granitemoe",
    "olmoe",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3_text",
    "phi3",
    "deepseek_v3",
    "deepseek_v2",
    "cohere",
    "gpt_oss",
    "glm4",
    "glm4_moe",
    "chatglm",
    "olmo2",
    "granite",
    "llama4",
    "llama4_text",
    "gpt2",
    "gptj",
    "gpt_neox",
    "opt",
    "bloom",
    "falcon",
    "mpt",
    "bert",
    "roberta",
    "t5",
    "mt5",
    "whisper",
    "vit",
];

/// A `config.json` that cannot be read as a supported transformer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelConfigError {
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Malformed {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the config has no `model_type`")]
    NoModelType,
    #[error(
        "model_type `{model_type}` is not supported: it is none of {}, and its config has neither a text_config nor a decoder's fields ({})",
        SUPPORTED_MODEL_TYPES.join(", "),
        DECODER_FIELDS.join(", ")
    )]
    Unsupported { model_type: String },
    #[error("model_type `{model_type}` needs the field `{field}`, which the config lacks")]
    MissingField { model_type: String, field: String },
    #[error("field `{field}`: {message}")]
    Invalid { field: String, message: String },
}

/// Parses the text of a `config.json`.
pub fn parse_hf_config_text(text: &str) -> Result<TransformerSpec, ModelConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|error| ModelConfigError::Malformed {
        line: error.line(),
        column: error.column(),
        message: error
            .to_string()
            .split(" at line")
            .next()
            .unwrap_or_default()
            .to_string(),
    })?;
    let Value::Object(config) = value else {
        return Err(ModelConfigError::Invalid {
            field: "(root)".to_string(),
            message: "a config.json is a JSON object".to_string(),
        });
    };
    parse_hf_config(&config)
}

struct Fields<'a> {
    config: &'a Map<String, Value>,
    model_type: &'a str,
}

impl Fields<'_> {
    fn opt(&self, names: &[&str]) -> Result<Option<u64>, ModelConfigError> {
        for name in names {
            match self.config.get(*name) {
                None | Some(Value::Null) => continue,
                Some(value) => {
                    let number = value.as_u64().ok_or_else(|| ModelConfigError::Invalid {
                        field: (*name).to_string(),
                        message: format!("expected a non-negative whole number, found {value}"),
                    })?;
                    if number > MAX_FIELD {
                        return Err(invalid(
                            name,
                            format!("{number} is beyond any real model (at most {MAX_FIELD})"),
                        ));
                    }
                    return Ok(Some(number));
                }
            }
        }
        Ok(None)
    }

    fn req(&self, names: &[&str]) -> Result<u64, ModelConfigError> {
        match self.opt(names)? {
            Some(0) => Err(ModelConfigError::Invalid {
                field: names[0].to_string(),
                message: "must be positive".to_string(),
            }),
            Some(value) => Ok(value),
            None => Err(ModelConfigError::MissingField {
                model_type: self.model_type.to_string(),
                field: names[0].to_string(),
            }),
        }
    }

    /// A boolean field: `true` or `false`, never a word that looks like one.
    fn flag(&self, name: &str) -> Result<Option<bool>, ModelConfigError> {
        match self.config.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(invalid(name, format!("expected true or false, found {other}"))),
        }
    }

    /// An optional size that, when given, must be positive (`max_position_embeddings: 0` is
    /// no context at all).
    fn opt_positive(&self, names: &[&str]) -> Result<Option<u64>, ModelConfigError> {
        match self.opt(names)? {
            Some(0) => Err(invalid(names[0], "must be positive".to_string())),
            other => Ok(other),
        }
    }

    /// The width of one attention head: `head_dim` where given, else the hidden size over the
    /// heads, which must then divide it.
    fn head_dim(&self, hidden: u64, heads: u64) -> Result<u64, ModelConfigError> {
        match self.opt(&["head_dim"])? {
            Some(dim) => Ok(dim),
            None if heads > 0 && hidden % heads != 0 => Err(invalid(
                "num_attention_heads",
                format!("{heads} heads do not divide the hidden size {hidden} (and no head_dim is given)"),
            )),
            None => Ok(hidden / heads.max(1)),
        }
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.config.get(name).and_then(Value::as_str)
    }
}

/// Parses an already-decoded `config.json` object.
///
/// A `model_type` this reader does not name is read by its structure: a multimodal wrapper
/// (`gemma3`, `mistral3`, `llava`…) by its `text_config`, with the vision tower of its
/// `vision_config` counted as a ViT; any other config with a decoder's fields
/// (`hidden_size`, `num_hidden_layers`, `num_attention_heads`, `intermediate_size`,
/// `vocab_size`) as a Llama-style decoder. What was assumed is kept in `read_notes`.
pub fn parse_hf_config(config: &Map<String, Value>) -> Result<TransformerSpec, ModelConfigError> {
    let model_type = config
        .get("model_type")
        .and_then(Value::as_str)
        .ok_or(ModelConfigError::NoModelType)?;
    if model_type == "llama4" {
        return llama4(config);
    }
    if !SUPPORTED_MODEL_TYPES.contains(&model_type) {
        return by_structure(config, model_type);
    }
    let f = Fields { config, model_type };
    let spec = match model_type {
        "gpt2" => gpt2(&f)?,
        "gptj" => gptj(&f)?,
        "gpt_neox" => gpt_neox(&f)?,
        "chatglm" => chatglm(&f)?,
        "opt" => opt(&f)?,
        "bloom" => bloom(&f)?,
        "falcon" => falcon(&f)?,
        "mpt" => mpt(&f)?,
        "bert" | "roberta" => bert(&f)?,
        "t5" | "mt5" => t5(&f)?,
        "whisper" => whisper(&f)?,
        "vit" => vit(&f)?,
        _ => llama_like(&f)?,
    };
    let spec = TransformerSpec {
        quantization: crate::hf_quantization::checkpoint_quantization(config)?,
        sliding_window: sliding_window(&f, spec.layers, spec.max_context)?,
        ..spec
    };
    validate(&spec)?;
    Ok(spec)
}

/// Largest number any size field may hold when it is read, so that the arithmetic of the
/// parsers (products of two or three fields) stays far inside 64 bits.
const MAX_FIELD: u64 = 1 << 26;

/// Largest sizes a config may state: a hundred times today's largest models, and far below
/// where the parameter arithmetic could overflow.
const MAX_WIDTH: u64 = 1 << 20;
const MAX_LAYERS: u64 = 10_000;
const MAX_VOCAB: u64 = 1 << 24;
const MAX_CONTEXT: u64 = 1 << 26;
const MAX_IMAGE_SIDE: u64 = 1 << 16;

fn invalid(field: &str, message: String) -> ModelConfigError {
    ModelConfigError::Invalid {
        field: field.to_string(),
        message,
    }
}

/// The architecture as a whole: every size in range, and the relations between them hold.
fn validate(spec: &TransformerSpec) -> Result<(), ModelConfigError> {
    let positive = [
        ("hidden_size", spec.hidden),
        ("num_hidden_layers", spec.layers),
        ("num_attention_heads", spec.heads),
        ("num_key_value_heads", spec.kv_heads),
        ("head_dim", spec.head_dim),
        ("intermediate_size", spec.ffn),
        // Vision transformers read patches, not tokens: no vocabulary.
        ("vocab_size", if spec.image.is_some() { 1 } else { spec.vocab }),
    ];
    if let Some((field, _)) = positive.iter().find(|(_, v)| *v == 0) {
        return Err(invalid(field, "must be positive".to_string()));
    }
    let ranges = [
        ("hidden_size", spec.hidden, MAX_WIDTH),
        ("intermediate_size", spec.ffn, 16 * MAX_WIDTH),
        ("head_dim", spec.head_dim, MAX_WIDTH),
        ("num_attention_heads", spec.heads, MAX_WIDTH),
        ("num_hidden_layers", spec.layers + spec.decoder_layers, MAX_LAYERS),
        ("vocab_size", spec.vocab, MAX_VOCAB),
        ("max_position_embeddings", spec.max_context, MAX_CONTEXT),
        (
            "type_vocab_size / extra parameters",
            spec.extra_parameters,
            MAX_VOCAB * MAX_WIDTH,
        ),
    ];
    if let Some((field, value, max)) = ranges.iter().find(|(_, v, max)| v > max) {
        return Err(invalid(
            field,
            format!("{value} is beyond any real model (at most {max})"),
        ));
    }
    if spec.heads % spec.kv_heads != 0 {
        return Err(invalid(
            "num_key_value_heads",
            format!("{} does not divide the {} attention heads", spec.kv_heads, spec.heads),
        ));
    }
    if let Some(moe) = &spec.moe {
        if moe.experts == 0 || moe.experts_per_token == 0 || moe.experts_per_token > moe.experts {
            return Err(invalid(
                "num_experts_per_tok",
                format!(
                    "{} experts per token out of {} experts: it must be between 1 and the expert count",
                    moe.experts_per_token, moe.experts
                ),
            ));
        }
    }
    if let Some((side, patch)) = spec.image {
        if side == 0 || patch == 0 || patch > side || side > MAX_IMAGE_SIDE {
            return Err(invalid(
                "patch_size",
                format!(
                    "an image of {side} pixels in patches of {patch}: both positive, the patch no larger, the image at most {MAX_IMAGE_SIDE}"
                ),
            ));
        }
    }
    Ok(())
}

fn base(model_type: &str, stacks: Stacks) -> TransformerSpec {
    TransformerSpec {
        model_type: model_type.to_string(),
        stacks,
        hidden: 0,
        layers: 0,
        decoder_layers: 0,
        heads: 0,
        kv_heads: 0,
        head_dim: 0,
        ffn: 0,
        gated_ffn: false,
        vocab: 0,
        tied_embeddings: true,
        learned_positions: 0,
        norm: Norm::LayerNorm,
        norms_per_layer: 2,
        attention_bias: AttentionBias::All,
        mlp_bias: true,
        moe: None,
        mla: None,
        max_context: 0,
        extra_parameters: 0,
        image: None,
        quantization: None,
        sliding_window: None,
        read_notes: Vec::new(),
    }
}

/// Whether `field` is a non-empty array.
fn has_items(config: &Map<String, Value>, field: &str) -> bool {
    config
        .get(field)
        .and_then(Value::as_array)
        .is_some_and(|items| !items.is_empty())
}

/// Llama and its descendants: RMSNorm, rotary positions, SwiGLU, optional GQA / MoE / MLA.
fn llama_like(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let heads = f.req(&["num_attention_heads"])?;
    let mut spec = base(f.model_type, Stacks::DecoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["num_hidden_layers"])?;
    spec.heads = heads;
    spec.kv_heads = f.opt(&["num_key_value_heads"])?.unwrap_or(heads);
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.req(&["intermediate_size"])?;
    spec.gated_ffn = true;
    spec.vocab = f.req(&["vocab_size"])?;
    let tie_default = matches!(f.model_type, "gemma" | "gemma2" | "gemma3_text" | "cohere");
    spec.tied_embeddings = f.flag("tie_word_embeddings")?.unwrap_or(tie_default);
    // Phi-3.5-MoE keeps Phi-2's LayerNorms (with their biases); the rest of the family uses RMSNorm.
    spec.norm = if f.model_type == "phimoe" {
        Norm::LayerNorm
    } else {
        Norm::RmsNorm
    };
    // Gemma 2/3 and GLM-4 add a norm after attention and after the MLP: four per layer.
    // Cohere's block runs attention and the MLP in parallel after one norm.
    spec.norms_per_layer = match f.model_type {
        "gemma2" | "gemma3_text" | "glm4" => 4,
        "cohere" => 1,
        _ => 2,
    };
    spec.attention_bias = match (f.model_type, f.flag("attention_bias")?) {
        ("qwen2" | "qwen2_moe", _) => AttentionBias::Qkv,
        // GLM-4's `attention_bias` puts biases on the query, key and value projections only.
        ("glm4" | "glm4_moe", Some(true)) => AttentionBias::Qkv,
        (_, Some(true)) => AttentionBias::All,
        _ => AttentionBias::None,
    };
    spec.mlp_bias = f.flag("mlp_bias")?.unwrap_or(false);
    // Per-head RMSNorms on queries and keys (Qwen3, Gemma 3: one head wide; OLMo 2 and OLMoE:
    // the whole query and key width).
    let q_k_norms = match f.model_type {
        "qwen3" | "qwen3_moe" | "gemma3_text" => 2 * spec.head_dim,
        "olmo2" | "olmoe" => spec.attention_width() + spec.kv_width(),
        // Command R+'s `use_qk_norm`: a norm over every query and key head.
        "cohere" if f.flag("use_qk_norm")?.unwrap_or(false) => spec.attention_width() + spec.kv_width(),
        _ => 0,
    };
    spec.extra_parameters = spec.layers * q_k_norms;
    spec.max_context = f.opt_positive(&["max_position_embeddings"])?.unwrap_or(0);
    match f.model_type {
        // Mixtral's layout: every layer a mixture of `num_local_experts` experts as wide as
        // `intermediate_size`, no shared expert (Phi-3.5-MoE and Granite 3.0's MoE models name
        // their fields the same way; OLMoE calls the count `num_experts`).
        "mixtral" | "phimoe" | "granitemoe" | "olmoe" => {
            spec.moe = Some(MoeSpec {
                experts: f.req(&["num_local_experts", "num_experts"])?,
                experts_per_token: f.req(&["num_experts_per_tok"])?,
                shared_experts: 0,
                expert_ffn: spec.ffn,
                shared_ffn: 0,
                dense_layers: 0,
            });
        }
        "llama4_text" => {
            // Dense layers run an MLP of `intermediate_size_mlp`; every
            // `interleave_moe_layer_step`-th layer is a mixture of `num_local_experts` experts of
            // `intermediate_size` with one shared expert of the same size beside them.
            spec.ffn = f.req(&["intermediate_size_mlp"])?;
            let expert_ffn = f.req(&["intermediate_size"])?;
            let step = f.opt_positive(&["interleave_moe_layer_step"])?.unwrap_or(1);
            let moe_layers = match f.config.get("moe_layers").and_then(Value::as_array) {
                Some(listed) => listed.len() as u64,
                None => spec.layers / step,
            };
            spec.moe = Some(MoeSpec {
                experts: f.req(&["num_local_experts"])?,
                experts_per_token: f.req(&["num_experts_per_tok"])?,
                shared_experts: 1,
                expert_ffn,
                shared_ffn: expert_ffn,
                dense_layers: spec.layers.saturating_sub(moe_layers),
            });
        }
        "qwen3_moe" => {
            if f.opt(&["decoder_sparse_step"])?.unwrap_or(1) != 1 || has_items(f.config, "mlp_only_layers") {
                return Err(invalid(
                    "decoder_sparse_step",
                    "only configs with every layer sparse (decoder_sparse_step 1, no mlp_only_layers) are read"
                        .to_string(),
                ));
            }
            spec.moe = Some(MoeSpec {
                experts: f.req(&["num_experts"])?,
                experts_per_token: f.req(&["num_experts_per_tok"])?,
                shared_experts: 0,
                expert_ffn: f.req(&["moe_intermediate_size"])?,
                shared_ffn: 0,
                dense_layers: 0,
            });
        }
        "gpt_oss" => {
            // Every expert's projections carry biases, as do the attention projections; each
            // layer adds a learned sink logit per head and the router's per-expert bias.
            let experts = f.req(&["num_local_experts"])?;
            spec.moe = Some(MoeSpec {
                experts,
                experts_per_token: f.req(&["num_experts_per_tok", "experts_per_token"])?,
                shared_experts: 0,
                expert_ffn: spec.ffn,
                shared_ffn: 0,
                dense_layers: 0,
            });
            spec.mlp_bias = true;
            spec.attention_bias = AttentionBias::All;
            spec.extra_parameters = spec.layers * (spec.heads + experts);
        }
        "qwen2_moe" => {
            spec.moe = Some(MoeSpec {
                experts: f.req(&["num_experts"])?,
                experts_per_token: f.req(&["num_experts_per_tok"])?,
                shared_experts: u64::from(f.opt(&["shared_expert_intermediate_size"])?.unwrap_or(0) > 0),
                expert_ffn: f.req(&["moe_intermediate_size"])?,
                shared_ffn: f.opt(&["shared_expert_intermediate_size"])?.unwrap_or(0),
                dense_layers: 0,
            });
            // Qwen-MoE's shared expert has a one-unit sigmoid gate per layer.
            spec.extra_parameters = spec.layers * hidden;
        }
        "deepseek_v3" | "deepseek_v2" => {
            let moe = deepseek_experts(f, spec.layers)?;
            spec.moe = Some(moe);
            let mla = MlaSpec {
                q_lora_rank: f.opt(&["q_lora_rank"])?.unwrap_or(0),
                kv_lora_rank: f.req(&["kv_lora_rank"])?,
                qk_nope_head_dim: f.req(&["qk_nope_head_dim"])?,
                qk_rope_head_dim: f.req(&["qk_rope_head_dim"])?,
                v_head_dim: f.req(&["v_head_dim"])?,
            };
            spec.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
            spec.mla = Some(mla);
            // DeepSeek-V3's router adds a per-expert score-correction bias (V2's has none).
            if f.model_type == "deepseek_v3" {
                spec.extra_parameters = (spec.layers - moe.dense_layers) * moe.experts;
            }
        }
        "glm4_moe" => {
            // GLM-4.5: DeepSeek-V3's expert layout (routed and shared experts of
            // `moe_intermediate_size` after `first_k_dense_replace` dense layers, a per-expert
            // score-correction bias) on grouped-query attention; the multi-token-prediction
            // layers the checkpoint adds (`num_nextn_predict_layers`) are not run to generate.
            let moe = deepseek_experts(f, spec.layers)?;
            spec.extra_parameters += (spec.layers - moe.dense_layers) * moe.experts;
            spec.moe = Some(moe);
        }
        _ => {}
    }
    Ok(spec)
}

/// DeepSeek's expert layout (V2, V3, and GLM-4.5 after it): `n_routed_experts` routed and
/// `n_shared_experts` shared experts of `moe_intermediate_size`, after `first_k_dense_replace`
/// dense layers.
fn deepseek_experts(f: &Fields, layers: u64) -> Result<MoeSpec, ModelConfigError> {
    let expert_ffn = f.req(&["moe_intermediate_size"])?;
    let shared = f.opt(&["n_shared_experts"])?.unwrap_or(0);
    let dense_layers = f.opt(&["first_k_dense_replace"])?.unwrap_or(0);
    if dense_layers > layers {
        return Err(invalid(
            "first_k_dense_replace",
            format!("more dense layers than the model's {layers} layers"),
        ));
    }
    Ok(MoeSpec {
        experts: f.req(&["n_routed_experts"])?,
        experts_per_token: f.req(&["num_experts_per_tok"])?,
        shared_experts: shared,
        expert_ffn,
        shared_ffn: shared * expert_ffn,
        dense_layers,
    })
}

/// Llama 4 (`Llama4ForConditionalGeneration`): the language model's `text_config` (read as
/// `llama4_text`) with the vision encoder, its pixel-shuffle adapter and the projector into the
/// language model counted from `vision_config`. The local-attention chunks of three layers in
/// four (`attention_chunk_size`) are not modelled: their KV cache is counted in full, which
/// over-states it beyond the chunk (8,192 tokens).
fn llama4(config: &Map<String, Value>) -> Result<TransformerSpec, ModelConfigError> {
    let Some(Value::Object(text)) = config.get("text_config") else {
        return Err(ModelConfigError::MissingField {
            model_type: "llama4".to_string(),
            field: "text_config".to_string(),
        });
    };
    let mut text = text.clone();
    text.insert("model_type".to_string(), Value::String("llama4_text".to_string()));
    if !text.contains_key("tie_word_embeddings") {
        if let Some(tied) = config.get("tie_word_embeddings") {
            text.insert("tie_word_embeddings".to_string(), tied.clone());
        }
    }
    let mut spec = parse_hf_config(&text)?;
    if let Some(Value::Object(vision)) = config.get("vision_config") {
        let vision = Fields {
            config: vision,
            model_type: "llama4_vision_model",
        };
        spec.extra_parameters += llama4_vision_parameters(&vision, spec.hidden)?;
    }
    spec.quantization = crate::hf_quantization::checkpoint_quantization(config)?.or(spec.quantization);
    // Again: the vision encoder's parameters now count in `extra_parameters`, which is bounded.
    validate(&spec)?;
    Ok(spec)
}

/// The layers that attend within a sliding window: those `layer_types` names
/// `sliding_attention` (gpt-oss, Gemma 3 in newer configs), else by the family's rule: Gemma 2
/// alternates starting with a local layer, Gemma 3 makes every `sliding_window_pattern`-th
/// layer (6) global, Mistral 7B v0.1 windows every layer. Other families' `sliding_window`
/// fields (Qwen's, beside `use_sliding_window: false`) are not read as windows.
fn sliding_window(f: &Fields, layers: u64, max_context: u64) -> Result<Option<SlidingWindow>, ModelConfigError> {
    let Some(window) = f.opt_positive(&["sliding_window"])? else {
        return Ok(None);
    };
    if max_context > 0 && window >= max_context {
        return Ok(None);
    }
    let local = match f.config.get("layer_types").and_then(Value::as_array) {
        Some(types) => types.iter().filter(|t| t.as_str() == Some("sliding_attention")).count() as u64,
        None => match f.model_type {
            "gemma2" => layers.div_ceil(2),
            "gemma3_text" => layers - layers / f.opt_positive(&["sliding_window_pattern"])?.unwrap_or(6),
            "mistral" => layers,
            _ => 0,
        },
    };
    Ok((local > 0).then_some(SlidingWindow {
        window,
        local_layers: local.min(layers),
    }))
}

/// The fields that make a config a decoder the Llama reader can count.
const DECODER_FIELDS: [&str; 5] = [
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
];

/// A config whose `model_type` the reader does not name: a wrapper around a language model,
/// or a decoder read as Llama-style by its fields; else refused as unsupported.
fn by_structure(config: &Map<String, Value>, model_type: &str) -> Result<TransformerSpec, ModelConfigError> {
    if let Some(Value::Object(text)) = config.get("text_config") {
        return wrapper(config, text, model_type);
    }
    if !DECODER_FIELDS
        .iter()
        .all(|field| config.get(*field).is_some_and(Value::is_u64))
    {
        return Err(ModelConfigError::Unsupported {
            model_type: model_type.to_string(),
        });
    }
    if config.contains_key("num_experts")
        || config.contains_key("num_local_experts")
        || config.contains_key("n_routed_experts")
    {
        return Err(invalid(
            "model_type",
            format!(
                "`{model_type}` is a mixture of experts this reader does not know; its experts' layout cannot be read by structure alone"
            ),
        ));
    }
    let f = Fields { config, model_type };
    let mut spec = llama_like(&f)?;
    // What the fields say of the block: a GELU MLP of two matrices (a SiLU one is SwiGLU's
    // three), LayerNorm where its epsilon is named so, biases everywhere under `use_bias`.
    let activation = f.text("hidden_act").unwrap_or("silu");
    spec.gated_ffn = matches!(activation, "silu" | "swish" | "swiglu");
    if config.contains_key("layer_norm_eps") || config.contains_key("norm_epsilon") {
        spec.norm = Norm::LayerNorm;
    }
    if f.flag("use_bias")?.unwrap_or(false) {
        spec.attention_bias = AttentionBias::All;
        spec.mlp_bias = true;
    }
    spec.quantization = crate::hf_quantization::checkpoint_quantization(config)?;
    spec.read_notes.push(format!(
        "model_type `{model_type}` is not one gpuplan knows by name: read by its fields as a decoder with rotary positions, {} norms, a {} MLP ({activation}){}",
        if spec.norm == Norm::RmsNorm { "RMS" } else { "Layer" },
        if spec.gated_ffn { "gated three-matrix" } else { "two-matrix" },
        match (spec.attention_bias, spec.mlp_bias) {
            (AttentionBias::None, false) => ", no biases".to_string(),
            _ => ", biases where the config says".to_string(),
        }
    ));
    add_vision_tower(&mut spec, config)?;
    validate(&spec)?;
    Ok(spec)
}

/// The vision tower of a `vision_config`, where there is one, counted into the weights; one
/// in a form the reader does not count is named as left out.
fn add_vision_tower(spec: &mut TransformerSpec, config: &Map<String, Value>) -> Result<(), ModelConfigError> {
    let Some(Value::Object(vision)) = config.get("vision_config") else {
        return Ok(());
    };
    let vision = Fields {
        config: vision,
        model_type: "vision_config",
    };
    match vision_tower_parameters(&vision, spec.hidden) {
        Ok(tower) => {
            spec.extra_parameters += tower;
            spec.read_notes.push(format!(
                "its vision tower counted from vision_config as a ViT with a linear projector ({:.2}B parameters, held in memory; images' compute not timed)",
                tower as f64 / 1e9
            ));
        }
        Err(ModelConfigError::MissingField { field, .. }) => spec.read_notes.push(format!(
            "its vision tower is left out: vision_config has no `{field}` (towers are typically 0.4–0.7B parameters)"
        )),
        Err(other) => return Err(other),
    }
    Ok(())
}

/// A multimodal wrapper (`gemma3`, `mistral3`, `llava`, …): the language model of its
/// `text_config` (the wrapper's `tie_word_embeddings` where the text config lacks one), and
/// the vision tower of its `vision_config` counted as a ViT with a linear projector.
fn wrapper(
    config: &Map<String, Value>,
    text: &Map<String, Value>,
    model_type: &str,
) -> Result<TransformerSpec, ModelConfigError> {
    let mut text = text.clone();
    if !text.contains_key("model_type") {
        text.insert("model_type".to_string(), Value::String(format!("{model_type}_text")));
    }
    if !text.contains_key("tie_word_embeddings") {
        if let Some(tied) = config.get("tie_word_embeddings") {
            text.insert("tie_word_embeddings".to_string(), tied.clone());
        }
    }
    let mut spec = parse_hf_config(&text)?;
    spec.read_notes.push(format!(
        "`{model_type}` wraps a language model: its text_config is the model counted and timed"
    ));
    add_vision_tower(&mut spec, config)?;
    spec.quantization = crate::hf_quantization::checkpoint_quantization(config)?.or(spec.quantization);
    validate(&spec)?;
    Ok(spec)
}

/// A ViT-style vision tower: patch embedding, position embeddings, `num_hidden_layers` layers
/// of biased attention and a two-matrix GELU MLP with two LayerNorms, a final LayerNorm, and a
/// linear projector to the language model's width. SigLIP (Gemma 3) and Pixtral (Mistral 3)
/// differ in details worth well under a percent of a multimodal model.
fn vision_tower_parameters(f: &Fields, text_hidden: u64) -> Result<u64, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let ffn = f.req(&["intermediate_size"])?;
    let layers = f.req(&["num_hidden_layers"])?;
    let patch = f.opt_positive(&["patch_size"])?.unwrap_or(14);
    let side = f.opt_positive(&["image_size"])?.unwrap_or(224) / patch;
    let channels = f.opt(&["num_channels"])?.unwrap_or(3);
    let layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 4 * hidden;
    Ok(channels * patch * patch * hidden
        + hidden
        + side * side * hidden
        + layers * layer
        + 2 * hidden
        + hidden * text_hidden)
}

/// Llama 4's vision encoder: class and position embeddings, the patch projection, pre and
/// post LayerNorms, `num_hidden_layers` ViT layers (biased attention and GELU MLP, two
/// LayerNorms), the pixel-shuffle adapter MLP and the bias-free projector to `text_hidden`.
fn llama4_vision_parameters(f: &Fields, text_hidden: u64) -> Result<u64, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let ffn = f.req(&["intermediate_size"])?;
    let layers = f.req(&["num_hidden_layers"])?;
    let patch = f.req(&["patch_size"])?;
    let side = f.req(&["image_size"])? / patch;
    let channels = f.opt(&["num_channels"])?.unwrap_or(3);
    let adapter_in = f.req(&["projector_input_dim"])?;
    let adapter_out = f.req(&["projector_output_dim"])?;
    let output = f.req(&["vision_output_dim"])?;
    // A pixel-shuffle ratio of 0.5 folds 2 × 2 patches into one: 4× the width.
    let shuffle = match f.config.get("pixel_shuffle_ratio").and_then(Value::as_f64) {
        Some(ratio) if ratio > 0.0 && ratio <= 1.0 => (1.0 / (ratio * ratio)).round() as u64,
        Some(_) => return Err(invalid("pixel_shuffle_ratio", "must be in (0, 1]".to_string())),
        None => 4,
    };
    let layer = 4 * (hidden * hidden + hidden) + (hidden * ffn + ffn) + (ffn * hidden + hidden) + 4 * hidden;
    Ok(hidden
        + (side * side + 1) * hidden
        + channels * patch * patch * hidden
        + 4 * hidden
        + layers * layer
        + hidden * shuffle * adapter_in
        + adapter_in * adapter_out
        + output * text_hidden)
}

fn gpt2(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["n_embd", "hidden_size"])?;
    let heads = f.req(&["n_head", "num_attention_heads"])?;
    let mut spec = base(f.model_type, Stacks::DecoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["n_layer", "num_hidden_layers"])?;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.opt(&["n_inner"])?.unwrap_or(4 * hidden);
    spec.vocab = f.req(&["vocab_size"])?;
    spec.learned_positions = f.req(&["n_positions", "max_position_embeddings"])?;
    spec.max_context = spec.learned_positions;
    Ok(spec)
}

fn gptj(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let mut spec = gpt2(f)?;
    spec.learned_positions = 0;
    spec.tied_embeddings = f.flag("tie_word_embeddings")?.unwrap_or(false);
    spec.norms_per_layer = 1;
    spec.attention_bias = AttentionBias::None;
    // GPT-J's output layer has a bias.
    spec.extra_parameters = spec.vocab;
    Ok(spec)
}

/// ChatGLM's own config (ChatGLM2/3, GLM-4-9B in THUDM's format): its names for a Llama-style
/// decoder (`num_layers`, `ffn_hidden_size`, `kv_channels`, `multi_query_group_num`,
/// `padded_vocab_size`), a SwiGLU MLP, RMSNorm, query/key/value biases (`add_qkv_bias`) and an
/// output layer of its own.
fn chatglm(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let heads = f.req(&["num_attention_heads"])?;
    let mut spec = base(f.model_type, Stacks::DecoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["num_layers", "num_hidden_layers"])?;
    spec.heads = heads;
    spec.kv_heads = match f.flag("multi_query_attention")? {
        Some(false) => heads,
        _ => f.opt(&["multi_query_group_num"])?.unwrap_or(heads),
    };
    spec.head_dim = match f.opt(&["kv_channels"])? {
        Some(dim) => dim,
        None => f.head_dim(hidden, heads)?,
    };
    spec.ffn = f.req(&["ffn_hidden_size", "intermediate_size"])?;
    spec.gated_ffn = true;
    spec.vocab = f.req(&["padded_vocab_size", "vocab_size"])?;
    spec.tied_embeddings = f.flag("tie_word_embeddings")?.unwrap_or(false);
    spec.norm = if f.flag("rmsnorm")?.unwrap_or(true) {
        Norm::RmsNorm
    } else {
        Norm::LayerNorm
    };
    spec.attention_bias = if f.flag("add_qkv_bias")?.unwrap_or(false) {
        AttentionBias::Qkv
    } else {
        AttentionBias::None
    };
    spec.mlp_bias = f.flag("add_bias_linear")?.unwrap_or(false);
    spec.max_context = f.opt_positive(&["seq_length", "max_position_embeddings"])?.unwrap_or(0);
    Ok(spec)
}

fn gpt_neox(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let heads = f.req(&["num_attention_heads"])?;
    let mut spec = base(f.model_type, Stacks::DecoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["num_hidden_layers"])?;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.req(&["intermediate_size"])?;
    spec.vocab = f.req(&["vocab_size"])?;
    spec.tied_embeddings = f.flag("tie_word_embeddings")?.unwrap_or(false);
    spec.max_context = f.opt_positive(&["max_position_embeddings"])?.unwrap_or(0);
    Ok(spec)
}

fn opt(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let heads = f.req(&["num_attention_heads"])?;
    let mut spec = base(f.model_type, Stacks::DecoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["num_hidden_layers"])?;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.req(&["ffn_dim"])?;
    spec.vocab = f.req(&["vocab_size"])?;
    spec.tied_embeddings = f.flag("tie_word_embeddings")?.unwrap_or(true);
    let positions = f.req(&["max_position_embeddings"])?;
    // OPT's learned positions are offset by 2 rows.
    spec.learned_positions = positions + 2;
    spec.max_context = positions;
    Ok(spec)
}

fn bloom(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["hidden_size", "n_embed"])?;
    let heads = f.req(&["n_head", "num_attention_heads"])?;
    let mut spec = base(f.model_type, Stacks::DecoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["n_layer", "num_hidden_layers"])?;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = 4 * hidden;
    spec.vocab = f.req(&["vocab_size"])?;
    spec.max_context = f.opt(&["seq_length"])?.unwrap_or(2048);
    // The layer norm right after the word embeddings.
    spec.extra_parameters = 2 * hidden;
    Ok(spec)
}

fn falcon(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let heads = f.req(&["num_attention_heads", "n_head"])?;
    let new_architecture = f.flag("new_decoder_architecture")?.unwrap_or(false);
    let mut spec = base(f.model_type, Stacks::DecoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["num_hidden_layers", "n_layer"])?;
    spec.heads = heads;
    spec.kv_heads = if new_architecture {
        f.req(&["num_kv_heads", "n_head_kv"])?
    } else if f.flag("multi_query")?.unwrap_or(true) {
        1
    } else {
        heads
    };
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.opt(&["ffn_hidden_size"])?.unwrap_or(4 * hidden);
    spec.vocab = f.req(&["vocab_size"])?;
    spec.norms_per_layer = if new_architecture { 2 } else { 1 };
    let bias = f.flag("bias")?.unwrap_or(false);
    spec.attention_bias = if bias { AttentionBias::All } else { AttentionBias::None };
    spec.mlp_bias = bias;
    spec.max_context = f.opt_positive(&["max_position_embeddings"])?.unwrap_or(2048);
    Ok(spec)
}

fn mpt(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["d_model"])?;
    let heads = f.req(&["n_heads"])?;
    let mut spec = base(f.model_type, Stacks::DecoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["n_layers"])?;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.opt(&["expansion_ratio"])?.unwrap_or(4) * hidden;
    spec.vocab = f.req(&["vocab_size"])?;
    let no_bias = f.flag("no_bias")?.unwrap_or(true);
    spec.attention_bias = if no_bias {
        AttentionBias::None
    } else {
        AttentionBias::All
    };
    spec.mlp_bias = !no_bias;
    // MPT's layer norms have no bias when `no_bias` is set.
    if no_bias {
        spec.norm = Norm::RmsNorm;
    }
    spec.max_context = f.opt(&["max_seq_len"])?.unwrap_or(2048);
    Ok(spec)
}

fn bert(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let heads = f.req(&["num_attention_heads"])?;
    let mut spec = base(f.model_type, Stacks::EncoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["num_hidden_layers"])?;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.req(&["intermediate_size"])?;
    spec.vocab = f.req(&["vocab_size"])?;
    spec.learned_positions = f.req(&["max_position_embeddings"])?;
    spec.max_context = if f.model_type == "roberta" {
        spec.learned_positions - 2
    } else {
        spec.learned_positions
    };
    let token_types = f.opt(&["type_vocab_size"])?.unwrap_or(2);
    // Token-type embeddings, the embedding layer norm, the pooler (dense + bias).
    spec.extra_parameters = token_types * hidden + 2 * hidden + hidden * hidden + hidden;
    Ok(spec)
}

fn t5(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["d_model"])?;
    let heads = f.req(&["num_heads"])?;
    let layers = f.req(&["num_layers"])?;
    let mut spec = base(f.model_type, Stacks::EncoderDecoder);
    spec.hidden = hidden;
    spec.layers = layers;
    spec.decoder_layers = f.opt_positive(&["num_decoder_layers"])?.unwrap_or(layers);
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.req(&["d_kv"])?;
    spec.ffn = f.req(&["d_ff"])?;
    spec.gated_ffn = f
        .text("feed_forward_proj")
        .is_some_and(|proj| proj.starts_with("gated"));
    spec.vocab = f.req(&["vocab_size"])?;
    spec.tied_embeddings = f.flag("tie_word_embeddings")?.unwrap_or(true);
    spec.norm = Norm::RmsNorm;
    spec.attention_bias = AttentionBias::None;
    spec.mlp_bias = false;
    spec.max_context = f.opt(&["n_positions"])?.unwrap_or(512);
    // Relative position buckets, one table in the encoder and one in the decoder.
    let buckets = f.opt(&["relative_attention_num_buckets"])?.unwrap_or(32);
    spec.extra_parameters = 2 * buckets * heads;
    Ok(spec)
}

fn whisper(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["d_model"])?;
    let heads = f.req(&["encoder_attention_heads"])?;
    let mut spec = base(f.model_type, Stacks::EncoderDecoder);
    spec.hidden = hidden;
    spec.layers = f.req(&["encoder_layers"])?;
    spec.decoder_layers = f.req(&["decoder_layers"])?;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.req(&["encoder_ffn_dim"])?;
    spec.vocab = f.req(&["vocab_size"])?;
    let mel_bins = f.opt(&["num_mel_bins"])?.unwrap_or(80);
    let source_positions = f.opt(&["max_source_positions"])?.unwrap_or(1500);
    let target_positions = f.opt(&["max_target_positions"])?.unwrap_or(448);
    spec.learned_positions = target_positions;
    spec.max_context = target_positions;
    // Whisper's K projections have no bias: one h-vector less per attention block.
    let attention_blocks = spec.layers + 2 * spec.decoder_layers;
    let conv_stem = mel_bins * hidden * 3 + hidden + hidden * hidden * 3 + hidden;
    spec.extra_parameters =
        (conv_stem + source_positions * hidden + 4 * hidden).saturating_sub(attention_blocks * hidden);
    Ok(spec)
}

fn vit(f: &Fields) -> Result<TransformerSpec, ModelConfigError> {
    let hidden = f.req(&["hidden_size"])?;
    let heads = f.req(&["num_attention_heads"])?;
    let image = f.opt(&["image_size"])?.unwrap_or(224);
    let patch = f.opt(&["patch_size"])?.unwrap_or(16);
    let channels = f.opt(&["num_channels"])?.unwrap_or(3);
    let labels = f
        .config
        .get("id2label")
        .and_then(Value::as_object)
        .map_or(1000, |labels| labels.len() as u64);
    let mut spec = base(f.model_type, Stacks::EncoderOnly);
    spec.hidden = hidden;
    spec.layers = f.req(&["num_hidden_layers"])?;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = f.head_dim(hidden, heads)?;
    spec.ffn = f.req(&["intermediate_size"])?;
    spec.vocab = 0;
    let patches = (image / patch.max(1)).pow(2);
    spec.max_context = patches + 1;
    spec.image = Some((image, patch));
    // Patch embedding, class token, position embeddings, final norm, classifier.
    spec.extra_parameters = channels * patch * patch * hidden
        + hidden
        + hidden
        + (patches + 1) * hidden
        + 2 * hidden
        + labels * hidden
        + labels;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_json_names_line_and_column() {
        let error = parse_hf_config_text("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": ,\n}").unwrap_err();
        let ModelConfigError::Malformed { line, column, .. } = error else {
            panic!("{error:?}")
        };
        assert_eq!((line, column), (3, 18));
    }

    #[test]
    fn an_unsupported_architecture_lists_the_supported_ones() {
        let error = parse_hf_config_text(r#"{"model_type": "mamba"}"#).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("`mamba` is not supported") && text.contains("llama") && text.contains("t5"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_field_is_named() {
        let error = parse_hf_config_text(r#"{"model_type": "llama", "hidden_size": 4096}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "model_type `llama` needs the field `num_attention_heads`, which the config lacks"
        );
    }

    #[test]
    fn a_negative_size_is_invalid() {
        let error = parse_hf_config_text(r#"{"model_type": "llama", "hidden_size": -1, "num_attention_heads": 32}"#)
            .unwrap_err();
        assert!(error.to_string().contains("field `hidden_size`"), "{error}");
    }

    #[test]
    fn reads_gqa_and_head_dim() {
        let spec = parse_hf_config_text(
            r#"{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256}"#,
        )
        .unwrap();
        assert_eq!((spec.kv_heads, spec.head_dim, spec.tied_embeddings), (8, 128, false));
    }
}

#[cfg(test)]
mod validation_tests {
    use super::*;

    fn llama(overrides: &str) -> Result<TransformerSpec, ModelConfigError> {
        let base = r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
            "vocab_size": 128256, "max_position_embeddings": 8192"#;
        parse_hf_config_text(&format!("{base}{overrides}}}"))
    }

    #[test]
    fn impossible_architectures_name_the_field() {
        assert!(llama("").is_ok());
        let error = llama(r#", "num_key_value_heads": 0"#).unwrap_err().to_string();
        assert!(error.contains("num_key_value_heads"), "{error}");
        let error = llama(r#", "num_key_value_heads": 5"#).unwrap_err().to_string();
        assert!(error.contains("does not divide"), "{error}");
        let error = llama(r#", "vocab_size": 18446744073709551615"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("beyond any real model"), "{error}");
        let mixtral = llama(r#", "model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 8"#);
        let error = mixtral.unwrap_err().to_string();
        assert!(error.contains("experts"), "{error}");
    }

    #[test]
    fn a_vit_patch_larger_than_its_image_is_refused() {
        let text = r#"{"model_type": "vit", "hidden_size": 768, "num_hidden_layers": 12,
            "num_attention_heads": 12, "intermediate_size": 3072, "image_size": 16, "patch_size": 32}"#;
        let error = parse_hf_config_text(text).unwrap_err().to_string();
        assert!(error.contains("patch"), "{error}");
    }
}
