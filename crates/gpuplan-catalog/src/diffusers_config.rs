//! Reads diffusers `config.json` files of a latent-diffusion pipeline's UNet
//! (`UNet2DConditionModel`) and VAE (`AutoencoderKL`) into their layer shapes.

use crate::hf_config::ModelConfigError;
use gpuplan_model::{UnetBlockKind, UnetSpec, VaeDecoderSpec};
use serde_json::{Map, Value};

/// Text tokens a CLIP tokeniser pads every prompt to (`max_position_embeddings` of the CLIP
/// text encoders of Stable Diffusion 1.x, 2.x and XL), which the cross-attention attends to.
pub const CLIP_TEXT_TOKENS: u64 = 77;

/// The diffusers class names this reader understands.
pub const SUPPORTED_DIFFUSERS_CLASSES: &[&str] = &["UNet2DConditionModel", "AutoencoderKL"];

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
