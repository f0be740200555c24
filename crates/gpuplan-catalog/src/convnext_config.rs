//! A Hugging Face `ConvNextConfig` (`model_type: convnext`) read into a [`ConvnextSpec`].

use crate::hf_config::ModelConfigError;
use gpuplan_model::ConvnextSpec;
use serde_json::{Map, Value};

/// The `model_type` of Hugging Face's ConvNeXt configs.
pub const CONVNEXT_MODEL_TYPE: &str = "convnext";

const MAX_STAGES: usize = 16;
const MAX_BLOCKS_PER_STAGE: u64 = 1_000;
const MAX_CHANNELS: u64 = 65_536;

/// The stages of a ConvNeXt config, and the image side it was trained at (`image_size`, 224
/// where the config does not say, as `ConvNextConfig` defaults it). `depths`, `hidden_sizes`
/// and the classes (`id2label` or `num_labels`) must be given.
pub fn parse_convnext_config(config: &Map<String, Value>) -> Result<(ConvnextSpec, u64), ModelConfigError> {
    let missing = |field: &str| ModelConfigError::MissingField {
        model_type: CONVNEXT_MODEL_TYPE.to_string(),
        field: field.to_string(),
    };
    // Bounds far beyond any published ConvNeXt (ConvNeXt-XXL: 4 stages of 3, 4, 30 and 3
    // blocks, up to 3,072 channels), so that a config cannot ask for an unbounded walk.
    let list = |field: &str, most: u64| -> Result<Vec<u64>, ModelConfigError> {
        let values = config
            .get(field)
            .and_then(Value::as_array)
            .ok_or_else(|| missing(field))?;
        let numbers: Option<Vec<u64>> = values
            .iter()
            .map(|v| v.as_u64().filter(|n| (1..=most).contains(n)))
            .collect();
        numbers
            .filter(|n| (1..=MAX_STAGES).contains(&n.len()))
            .ok_or_else(|| ModelConfigError::Invalid {
                field: field.to_string(),
                message: format!("expected 1 to {MAX_STAGES} whole numbers from 1 to {most}"),
            })
    };
    let number = |field: &str, default: u64| -> Result<u64, ModelConfigError> {
        match config.get(field) {
            None => Ok(default),
            Some(value) => {
                value
                    .as_u64()
                    .filter(|n| (1..=16_384).contains(n))
                    .ok_or_else(|| ModelConfigError::Invalid {
                        field: field.to_string(),
                        message: "expected a whole number from 1 to 16384".to_string(),
                    })
            }
        }
    };
    let depths = list("depths", MAX_BLOCKS_PER_STAGE)?;
    let hidden_sizes = list("hidden_sizes", MAX_CHANNELS)?;
    if depths.len() != hidden_sizes.len() {
        return Err(ModelConfigError::Invalid {
            field: "hidden_sizes".to_string(),
            message: format!("{} stages, but `depths` has {}", hidden_sizes.len(), depths.len()),
        });
    }
    let classes = match (
        config.get("id2label").and_then(Value::as_object),
        config.get("num_labels"),
    ) {
        (Some(labels), _) if !labels.is_empty() => labels.len() as u64,
        (_, Some(_)) => number("num_labels", 1)?,
        _ => return Err(missing("id2label")),
    };
    let spec = ConvnextSpec {
        depths,
        hidden_sizes,
        patch_size: number("patch_size", 4)?,
        image_channels: number("num_channels", 3)?,
        classes,
    };
    Ok((spec, number("image_size", 224)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_model::ConvNetwork;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

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
