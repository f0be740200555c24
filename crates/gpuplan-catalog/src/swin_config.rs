//! A Hugging Face `SwinConfig` (`model_type: swin`) read into a [`SwinSpec`].

use crate::hf_config::ModelConfigError;
use crate::vision_config_fields::{image_fields, same_stages, stage_list, whole_number};
use gpuplan_model::SwinSpec;
use serde_json::{Map, Value};

/// The `model_type` of Hugging Face's Swin Transformer configs.
pub const SWIN_MODEL_TYPE: &str = "swin";

// Bounds far beyond any published Swin (Swin-L: 2, 2, 18, 2 blocks, 6 to 48 heads, 192
// channels first), so that a config cannot ask for an unbounded walk.
const MAX_BLOCKS_PER_STAGE: u64 = 1_000;
const MAX_HEADS: u64 = 1_024;

/// The stages of a Swin config, and the image side it was trained at (`image_size`). As
/// `SwinConfig` defaults them: `embed_dim` 96, `window_size` 7, `mlp_ratio` 4, `patch_size` 4,
/// `image_size` 224. `depths`, `num_heads` and the classes (`id2label` or `num_labels`) must be
/// given. Absolute position embeddings and bias-free attention projections are refused rather
/// than counted wrong: no published Swin uses them.
pub fn parse_swin_config(config: &Map<String, Value>) -> Result<(SwinSpec, u64), ModelConfigError> {
    let depths = stage_list(config, SWIN_MODEL_TYPE, "depths", MAX_BLOCKS_PER_STAGE)?;
    let heads = stage_list(config, SWIN_MODEL_TYPE, "num_heads", MAX_HEADS)?;
    same_stages(&depths, ("num_heads", &heads), "depths")?;
    // Each flag with the value no published Swin has.
    let unpublished = [("qkv_bias", false), ("use_absolute_embeddings", true)]
        .into_iter()
        .find(|(field, value)| config.get(*field).and_then(Value::as_bool) == Some(*value));
    if let Some((field, _)) = unpublished {
        return Err(ModelConfigError::Invalid {
            field: field.to_string(),
            message: "only the published layout (relative position bias, attention projections with bias) is counted"
                .to_string(),
        });
    }
    let mlp_ratio = match config.get("mlp_ratio") {
        None => 4.0,
        Some(value) => {
            value
                .as_f64()
                .filter(|r| (0.25..=64.0).contains(r))
                .ok_or_else(|| ModelConfigError::Invalid {
                    field: "mlp_ratio".to_string(),
                    message: "expected a number from 0.25 to 64".to_string(),
                })?
        }
    };
    let image = image_fields(config, SWIN_MODEL_TYPE)?;
    let spec = SwinSpec {
        embed_dim: whole_number(config, "embed_dim", 96)?,
        depths,
        heads,
        window_size: whole_number(config, "window_size", 7)?,
        mlp_ratio,
        patch_size: image.patch_size,
        image_channels: image.image_channels,
        classes: image.classes,
    };
    Ok((spec, image.image_size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vision_config_fields::object;
    use gpuplan_model::ConvNetwork;
    use serde_json::json;

    /// microsoft/swin-tiny-patch4-window7-224's fields (its id2label shortened to a count).
    #[test]
    fn reads_swin_tiny_and_names_what_is_missing() {
        let (spec, side) = parse_swin_config(&object(json!({
            "model_type": "swin", "embed_dim": 96, "depths": [2, 2, 6, 2], "num_heads": [3, 6, 12, 24],
            "window_size": 7, "mlp_ratio": 4.0, "patch_size": 4, "num_channels": 3, "image_size": 224,
            "qkv_bias": true, "use_absolute_embeddings": false, "num_labels": 1000
        })))
        .unwrap();
        assert_eq!(side, 224);
        assert_eq!(spec.unroll(224).1, 28_288_354);
        let error = parse_swin_config(&object(json!({"depths": [2], "num_labels": 10}))).unwrap_err();
        assert!(error.to_string().contains("`num_heads`"), "{error}");
        let uneven =
            parse_swin_config(&object(json!({"depths": [2, 2], "num_heads": [3], "num_labels": 10}))).unwrap_err();
        assert!(uneven.to_string().contains("num_heads"), "{uneven}");
        let absolute = parse_swin_config(&object(json!({
            "depths": [2], "num_heads": [3], "num_labels": 10, "use_absolute_embeddings": true
        })))
        .unwrap_err();
        assert!(absolute.to_string().contains("use_absolute_embeddings"), "{absolute}");
    }
}
