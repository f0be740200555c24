//! Reads diffusers `config.json` files of a latent-diffusion pipeline's UNet
//! (`UNet2DConditionModel`) and VAE (`AutoencoderKL`) into their layer shapes.

use crate::hf_config::ModelConfigError;
use gpuplan_model::{DitFamily, DitSpec, UnetBlockKind, UnetSpec, VaeDecoderSpec};
use serde_json::{Map, Value};

/// Text tokens a CLIP tokeniser pads every prompt to (`max_position_embeddings` of the CLIP
/// text encoders of Stable Diffusion 1.x, 2.x and XL), which the cross-attention attends to.
pub const CLIP_TEXT_TOKENS: u64 = 77;

/// The diffusers class names this reader understands.
pub const SUPPORTED_DIFFUSERS_CLASSES: &[&str] = &[
    "UNet2DConditionModel",
    "SD3Transformer2DModel",
    "FluxTransformer2DModel",
    "AutoencoderKL",
];

/// T5 tokens `StableDiffusion3Pipeline` encodes by default (`max_sequence_length=256`); the two
/// CLIP encoders' 77 tokens join them on the sequence axis.
pub const SD3_T5_TOKENS: u64 = 256;

/// T5 tokens `FluxPipeline` encodes by default (`max_sequence_length=512`).
pub const FLUX_T5_TOKENS: u64 = 512;

/// Latent pixels `FluxPipeline` packs into one token along each side (`_pack_latents`: 2×2).
const FLUX_PACKING: u64 = 2;

/// Bounds on a diffusion transformer's config, far beyond any published one (FLUX.1: 57
/// blocks of width 3,072), so that a config cannot ask for an unbounded walk or overflow the
/// counts: blocks of each kind, model width, patch side, channels and text tokens.
const MAX_DIT_BLOCKS: u64 = 1_000;
const MAX_DIT_WIDTH: u64 = 65_536;
const MAX_DIT_PATCH: u64 = 16;
const MAX_DIT_CHANNELS: u64 = 65_536;

struct Fields<'a> {
    config: &'a Map<String, Value>,
    class: &'static str,
}

impl Fields<'_> {
    fn missing(&self, field: &str) -> ModelConfigError {
        ModelConfigError::MissingField {
            model_type: self.class.to_string(),
            field: field.to_string(),
        }
    }

    fn invalid(field: &str, message: String) -> ModelConfigError {
        ModelConfigError::Invalid {
            field: field.to_string(),
            message,
        }
    }

    fn whole(field: &str, value: &Value) -> Result<u64, ModelConfigError> {
        match value.as_u64() {
            Some(0) => Err(Self::invalid(field, "must be positive".to_string())),
            Some(number) => Ok(number),
            None => Err(Self::invalid(
                field,
                format!("expected a positive whole number, found {value}"),
            )),
        }
    }

    fn number(&self, field: &str) -> Result<u64, ModelConfigError> {
        let value = self.config.get(field).ok_or_else(|| self.missing(field))?;
        Self::whole(field, value)
    }

    fn number_or(&self, field: &str, default: u64) -> Result<u64, ModelConfigError> {
        match self.config.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(value) => Self::whole(field, value),
        }
    }

    fn numbers(&self, field: &str) -> Result<Vec<u64>, ModelConfigError> {
        let value = self.config.get(field).ok_or_else(|| self.missing(field))?;
        let items = value
            .as_array()
            .ok_or_else(|| Self::invalid(field, format!("expected a list of numbers, found {value}")))?;
        if items.is_empty() {
            return Err(Self::invalid(field, "must not be empty".to_string()));
        }
        items.iter().map(|item| Self::whole(field, item)).collect()
    }

    /// A per-level field given either as one number for every level or as a list.
    fn per_level(&self, field: &str, levels: usize) -> Result<Option<Vec<u64>>, ModelConfigError> {
        match self.config.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(_)) => {
                let list = self.numbers(field)?;
                if list.len() != levels {
                    return Err(Self::invalid(
                        field,
                        format!("has {} entries for {levels} levels", list.len()),
                    ));
                }
                Ok(Some(list))
            }
            Some(value) => Ok(Some(vec![Self::whole(field, value)?; levels])),
        }
    }

    fn blocks(&self, field: &str, levels: usize) -> Result<Vec<UnetBlockKind>, ModelConfigError> {
        let value = self.config.get(field).ok_or_else(|| self.missing(field))?;
        let names = value
            .as_array()
            .ok_or_else(|| Self::invalid(field, format!("expected a list of block names, found {value}")))?;
        if names.len() != levels {
            return Err(Self::invalid(
                field,
                format!("has {} blocks for {levels} levels", names.len()),
            ));
        }
        names
            .iter()
            .map(|name| match name.as_str() {
                Some("DownBlock2D" | "UpBlock2D") => Ok(UnetBlockKind::Residual),
                Some("CrossAttnDownBlock2D" | "CrossAttnUpBlock2D") => Ok(UnetBlockKind::CrossAttention),
                _ => Err(Self::invalid(
                    field,
                    format!(
                        "block {name} is not supported (supported: DownBlock2D, CrossAttnDownBlock2D, \
                         UpBlock2D, CrossAttnUpBlock2D)"
                    ),
                )),
            })
            .collect()
    }
}

/// Parses a diffusers `UNet2DConditionModel` config.
pub fn parse_unet_config(config: &Map<String, Value>) -> Result<UnetSpec, ModelConfigError> {
    let f = Fields {
        config,
        class: "UNet2DConditionModel",
    };
    let block_out_channels = f.numbers("block_out_channels")?;
    let levels = block_out_channels.len();
    let down_blocks = f.blocks("down_block_types", levels)?;
    let up_blocks = f.blocks("up_block_types", levels)?;
    if let Some(kind) = config.get("mid_block_type").and_then(Value::as_str)
        && kind != "UNetMidBlock2DCrossAttn"
    {
        return Err(Fields::invalid(
            "mid_block_type",
            format!("`{kind}` is not supported (supported: UNetMidBlock2DCrossAttn)"),
        ));
    }
    // diffusers takes the head count from `num_attention_heads`, else from `attention_head_dim`
    // (a historical misnomer: in these configs it counts heads).
    let attention_heads = match f.per_level("num_attention_heads", levels)? {
        Some(heads) => heads,
        None => f.per_level("attention_head_dim", levels)?.unwrap_or(vec![8; levels]),
    };
    for (level, (&channels, &heads)) in block_out_channels.iter().zip(&attention_heads).enumerate() {
        if channels % heads != 0 {
            return Err(Fields::invalid(
                "attention_head_dim",
                format!("{heads} heads do not divide the {channels} channels of level {level}"),
            ));
        }
    }
    let addition_embedding_input_dim = match config.get("addition_embed_type").and_then(Value::as_str) {
        None => None,
        Some("text_time") => Some(f.number("projection_class_embeddings_input_dim")?),
        Some(other) => {
            return Err(Fields::invalid(
                "addition_embed_type",
                format!("`{other}` is not supported (supported: text_time)"),
            ));
        }
    };
    Ok(UnetSpec {
        in_channels: f.number_or("in_channels", 4)?,
        out_channels: f.number_or("out_channels", 4)?,
        layers_per_block: f.number_or("layers_per_block", 2)?,
        transformer_layers_per_block: f
            .per_level("transformer_layers_per_block", levels)?
            .unwrap_or(vec![1; levels]),
        attention_heads,
        cross_attention_dim: f.number("cross_attention_dim")?,
        addition_embedding_input_dim,
        text_tokens: CLIP_TEXT_TOKENS,
        block_out_channels,
        down_blocks,
        up_blocks,
    })
}

/// Parses a diffusion transformer's config (`SD3Transformer2DModel`, `FluxTransformer2DModel`).
/// `text_tokens`: the text sequence the pipeline feeds it; `None`, the pipeline's default.
pub fn parse_transformer_config(
    config: &Map<String, Value>,
    text_tokens: Option<u64>,
) -> Result<DitSpec, ModelConfigError> {
    let class = config.get("_class_name").and_then(Value::as_str).unwrap_or_default();
    let (family, class) = match class {
        "SD3Transformer2DModel" => (DitFamily::StableDiffusion3, "SD3Transformer2DModel"),
        "FluxTransformer2DModel" => (DitFamily::Flux, "FluxTransformer2DModel"),
        other => {
            return Err(Fields::invalid(
                "_class_name",
                format!(
                    "`{other}` is not a diffusion transformer this reader knows (SD3Transformer2DModel, FluxTransformer2DModel)"
                ),
            ));
        }
    };
    let f = Fields { config, class };
    let patch = f.number("patch_size")?;
    let in_channels = f.number("in_channels")?;
    let out_channels = f.number_or("out_channels", in_channels)?;
    let dual_attention_blocks = match config.get("dual_attention_layers") {
        None | Some(Value::Null) => 0,
        Some(Value::Array(layers)) => layers.len() as u64,
        Some(value) => {
            return Err(Fields::invalid(
                "dual_attention_layers",
                format!("expected a list of block indices, found {value}"),
            ));
        }
    };
    let sd3 = family == DitFamily::StableDiffusion3;
    let spec = DitSpec {
        family,
        heads: f.number("num_attention_heads")?,
        head_dim: f.number("attention_head_dim")?,
        joint_blocks: f.number("num_layers")?,
        single_blocks: if sd3 { 0 } else { f.number("num_single_layers")? },
        dual_attention_blocks,
        latent_patch: if sd3 { patch } else { FLUX_PACKING * patch },
        // SD3 patchifies `in_channels` latent channels itself; FLUX's pipeline hands it packed
        // tokens of `in_channels` features.
        token_channels: if sd3 { in_channels * patch * patch } else { in_channels },
        joint_attention_dim: f.number("joint_attention_dim")?,
        pooled_projection_dim: f.number("pooled_projection_dim")?,
        guidance_embeds: config.get("guidance_embeds").and_then(Value::as_bool).unwrap_or(false),
        qk_norm: !sd3 || config.get("qk_norm").and_then(Value::as_str).is_some(),
        text_tokens: text_tokens.unwrap_or(if sd3 {
            CLIP_TEXT_TOKENS + SD3_T5_TOKENS
        } else {
            FLUX_T5_TOKENS
        }),
    };
    if out_channels * if sd3 { patch * patch } else { 1 } != spec.token_channels {
        return Err(Fields::invalid(
            "out_channels",
            format!("{out_channels} does not match in_channels {in_channels}"),
        ));
    }
    let bounds = [
        ("num_layers", spec.joint_blocks, MAX_DIT_BLOCKS),
        ("num_single_layers", spec.single_blocks, MAX_DIT_BLOCKS),
        (
            "num_attention_heads × attention_head_dim",
            spec.heads.saturating_mul(spec.head_dim),
            MAX_DIT_WIDTH,
        ),
        ("patch_size", patch, MAX_DIT_PATCH),
        ("in_channels", spec.token_channels, MAX_DIT_CHANNELS),
        ("joint_attention_dim", spec.joint_attention_dim, MAX_DIT_CHANNELS),
        ("pooled_projection_dim", spec.pooled_projection_dim, MAX_DIT_CHANNELS),
        ("text tokens", spec.text_tokens, MAX_DIT_CHANNELS),
    ];
    if let Some((field, value, bound)) = bounds.into_iter().find(|(_, value, bound)| value > bound) {
        return Err(Fields::invalid(
            field,
            format!("{value} is beyond any published model (at most {bound})"),
        ));
    }
    if spec.dual_attention_blocks > spec.joint_blocks {
        return Err(Fields::invalid(
            "dual_attention_layers",
            format!("lists {} blocks of {}", spec.dual_attention_blocks, spec.joint_blocks),
        ));
    }
    Ok(spec)
}

/// Parses the decoder half of a diffusers `AutoencoderKL` config.
pub fn parse_vae_config(config: &Map<String, Value>) -> Result<VaeDecoderSpec, ModelConfigError> {
    let f = Fields {
        config,
        class: "AutoencoderKL",
    };
    Ok(VaeDecoderSpec {
        latent_channels: f.number_or("latent_channels", 4)?,
        out_channels: f.number_or("out_channels", 3)?,
        block_out_channels: f.numbers("block_out_channels")?,
        layers_per_block: f.number_or("layers_per_block", 2)?,
        force_upcast: config.get("force_upcast").and_then(Value::as_bool).unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_sd3_and_flux_transformer_configs() {
        // stabilityai/stable-diffusion-3-medium-diffusers transformer/config.json.
        let sd3 = parse_transformer_config(
            &object(json!({
                "_class_name": "SD3Transformer2DModel", "sample_size": 128, "patch_size": 2,
                "in_channels": 16, "num_layers": 24, "attention_head_dim": 64,
                "num_attention_heads": 24, "joint_attention_dim": 4096,
                "caption_projection_dim": 1536, "pooled_projection_dim": 2048, "out_channels": 16,
                "pos_embed_max_size": 192, "dual_attention_layers": [], "qk_norm": null
            })),
            None,
        )
        .unwrap();
        assert_eq!(
            (sd3.width(), sd3.latent_patch, sd3.token_channels, sd3.text_tokens),
            (1536, 2, 64, 333)
        );
        assert!(sd3.guided_by_default() && !sd3.qk_norm);
        // black-forest-labs/FLUX.1-dev transformer/config.json (out_channels null).
        let flux = parse_transformer_config(
            &object(json!({
                "_class_name": "FluxTransformer2DModel", "attention_head_dim": 128,
                "axes_dims_rope": [16, 56, 56], "guidance_embeds": true, "in_channels": 64,
                "joint_attention_dim": 4096, "num_attention_heads": 24, "num_layers": 19,
                "num_single_layers": 38, "patch_size": 1, "pooled_projection_dim": 768,
                "out_channels": null
            })),
            None,
        )
        .unwrap();
        assert_eq!(
            (flux.width(), flux.latent_patch, flux.token_channels, flux.text_tokens),
            (3072, 2, 64, 512)
        );
        assert!(!flux.guided_by_default() && flux.guidance_embeds && flux.qk_norm);
        let missing = parse_transformer_config(
            &object(json!({"_class_name": "FluxTransformer2DModel", "patch_size": 1, "in_channels": 64})),
            None,
        )
        .unwrap_err();
        assert!(missing.to_string().contains("num_attention_heads"), "{missing}");
        let huge = parse_transformer_config(
            &object(json!({
                "_class_name": "FluxTransformer2DModel", "attention_head_dim": 128, "in_channels": 64,
                "joint_attention_dim": 4096, "num_attention_heads": 24, "num_layers": 1000000000,
                "num_single_layers": 38, "patch_size": 1, "pooled_projection_dim": 768
            })),
            None,
        )
        .unwrap_err();
        assert!(huge.to_string().contains("num_layers"), "{huge}");
        let unknown = parse_transformer_config(&object(json!({"_class_name": "PixArtTransformer2DModel"})), None);
        assert!(unknown.unwrap_err().to_string().contains("PixArtTransformer2DModel"));
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn reads_the_sdxl_unet_config() {
        let spec = parse_unet_config(&object(json!({
            "_class_name": "UNet2DConditionModel",
            "addition_embed_type": "text_time",
            "attention_head_dim": [5, 10, 20],
            "block_out_channels": [320, 640, 1280],
            "cross_attention_dim": 2048,
            "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
            "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
            "projection_class_embeddings_input_dim": 2816,
            "transformer_layers_per_block": [1, 2, 10],
            "layers_per_block": 2
        })))
        .unwrap();
        assert_eq!(spec.attention_heads, [5, 10, 20]);
        assert_eq!(spec.addition_embedding_input_dim, Some(2816));
        assert_eq!(spec.up_blocks[2], UnetBlockKind::Residual);
        assert_eq!(spec.time_embedding_dim(), 1280);
        assert_eq!(spec.middle_transformer_layers(), 10);
    }

    #[test]
    fn one_number_applies_to_every_level() {
        let spec = parse_unet_config(&object(json!({
            "attention_head_dim": 8,
            "block_out_channels": [320, 640],
            "cross_attention_dim": 768,
            "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"],
            "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"]
        })))
        .unwrap();
        assert_eq!(spec.attention_heads, [8, 8]);
        assert_eq!(spec.transformer_layers_per_block, [1, 1]);
    }

    #[test]
    fn names_what_is_wrong() {
        let missing = parse_unet_config(&object(json!({"block_out_channels": [320]}))).unwrap_err();
        assert!(missing.to_string().contains("down_block_types"), "{missing}");
        let unknown = parse_unet_config(&object(json!({
            "block_out_channels": [320],
            "cross_attention_dim": 768,
            "down_block_types": ["SimpleCrossAttnDownBlock2D"],
            "up_block_types": ["UpBlock2D"]
        })))
        .unwrap_err();
        assert!(unknown.to_string().contains("SimpleCrossAttnDownBlock2D"), "{unknown}");
        let heads = parse_unet_config(&object(json!({
            "attention_head_dim": 7,
            "block_out_channels": [320],
            "cross_attention_dim": 768,
            "down_block_types": ["DownBlock2D"],
            "up_block_types": ["UpBlock2D"]
        })))
        .unwrap_err();
        assert!(heads.to_string().contains("do not divide"), "{heads}");
    }
}
