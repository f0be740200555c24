//! A Hugging Face `ConvNextConfig` (`model_type: convnext`) read into a [`ConvnextSpec`].

use crate::hf_config::ModelConfigError;
use crate::vision_config_fields::{image_fields, same_stages, stage_list};
use gpuplan_model::ConvnextSpec;
use serde_json::{Map, Value};

/// The `model_type` of Hugging Face's ConvNeXt configs.
pub const CONVNEXT_MODEL_TYPE: &str = "convnext";

// Bounds far beyond any published ConvNeXt (ConvNeXt-XXL: 4 stages of 3, 4, 30 and 3 blocks,
// up to 3,072 channels), so that a config cannot ask for an unbounded walk.
const MAX_BLOCKS_PER_STAGE: u64 = 1_000;
const MAX_CHANNELS: u64 = 65_536;

/// The stages of a ConvNeXt config, and the image side it was trained at (`image_size`, 224
/// where the config does not say, as `ConvNextConfig` defaults it). `depths`, `hidden_sizes`
/// and the classes (`id2label` or `num_labels`) must be given.
pub fn parse_convnext_config(config: &Map<String, Value>) -> Result<(ConvnextSpec, u64), ModelConfigError> {
    let depths = stage_list(config, CONVNEXT_MODEL_TYPE, "depths", MAX_BLOCKS_PER_STAGE)?;
    let hidden_sizes = stage_list(config, CONVNEXT_MODEL_TYPE, "hidden_sizes", MAX_CHANNELS)?;
    same_stages(&depths, ("hidden_sizes", &hidden_sizes), "depths")?;
    let image = image_fields(config, CONVNEXT_MODEL_TYPE)?;
    let spec = ConvnextSpec {
        depths,
        hidden_sizes,
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

    #[test]
    fn reads_convnext_tiny_and_names_what_is_missing() {
        let labels: Map<String, Value> = (0..1000)
            .map(|i| (i.to_string(), json!(format!("class {i}"))))
            .collect();
        let (spec, side) = parse_convnext_config(&object(json!({
            "model_type": "convnext", "depths": [3, 3, 9, 3], "hidden_sizes": [96, 192, 384, 768],
            "patch_size": 4, "num_channels": 3, "image_size": 224, "id2label": labels
        })))
        .unwrap();
        assert_eq!((spec.classes, side), (1000, 224));
        assert_eq!(spec.unroll(224).1, 28_589_128);
        let error = parse_convnext_config(&object(json!({"depths": [3], "id2label": {"0": "a"}}))).unwrap_err();
        assert!(error.to_string().contains("`hidden_sizes`"), "{error}");
        let uneven = parse_convnext_config(&object(json!({
            "depths": [3, 3], "hidden_sizes": [96], "num_labels": 10
        })))
        .unwrap_err();
        assert!(uneven.to_string().contains("2"), "{uneven}");
        let huge = parse_convnext_config(&object(json!({
            "depths": [1_000_000_000_u64], "hidden_sizes": [96], "num_labels": 10
        })))
        .unwrap_err();
        assert!(huge.to_string().contains("`depths`"), "{huge}");
    }
}
