//! A Hugging Face `ResNetConfig` (`model_type: resnet`, microsoft/resnet-18 … -152) read into a
//! [`ResnetSpec`].

use crate::hf_config::ModelConfigError;
use gpuplan_model::ResnetSpec;
use serde_json::{Map, Value};

/// The `model_type` of Hugging Face's ResNet configs.
pub const RESNET_MODEL_TYPE: &str = "resnet";

/// The stage widths of the ResNets of He et al. 2016 (Table 1), which the layer walk builds:
/// basic blocks end at 64 … 512 channels, bottleneck blocks at 4× that.
const BASIC_WIDTHS: [u64; 4] = [64, 128, 256, 512];
const BOTTLENECK_WIDTHS: [u64; 4] = [256, 512, 1024, 2048];
const MAX_BLOCKS_PER_STAGE: u64 = 1_000;

/// The blocks, block kind and classes of a ResNet config, and the image side it was trained at
/// (`image_size`, 224 where the config does not say). A network of other widths (`hidden_sizes`
/// or `embedding_size` not the paper's) is refused, naming the field.
pub fn parse_resnet_config(config: &Map<String, Value>) -> Result<(ResnetSpec, u64), ModelConfigError> {
    let invalid = |field: &str, message: String| ModelConfigError::Invalid {
        field: field.to_string(),
        message,
    };
    let missing = |field: &str| ModelConfigError::MissingField {
        model_type: RESNET_MODEL_TYPE.to_string(),
        field: field.to_string(),
    };
    let list = |field: &str| -> Result<Vec<u64>, ModelConfigError> {
        let values = config
            .get(field)
            .and_then(Value::as_array)
            .ok_or_else(|| missing(field))?;
        values
            .iter()
            .map(|v| v.as_u64().filter(|n| (1..=MAX_BLOCKS_PER_STAGE * 64).contains(n)))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| invalid(field, "expected whole numbers".to_string()))
    };
    let blocks = list("depths")?;
    if blocks.len() != 4 || blocks.iter().any(|b| *b > MAX_BLOCKS_PER_STAGE) {
        return Err(invalid(
            "depths",
            format!("four stages of 1 to {MAX_BLOCKS_PER_STAGE} blocks"),
        ));
    }
    let bottleneck = match config.get("layer_type").and_then(Value::as_str) {
        Some("bottleneck") | None => true,
        Some("basic") => false,
        Some(other) => {
            return Err(invalid(
                "layer_type",
                format!("`{other}`: expected basic or bottleneck"),
            ));
        }
    };
    let widths = if bottleneck { BOTTLENECK_WIDTHS } else { BASIC_WIDTHS };
    if let Some(given) = config.get("hidden_sizes") {
        if list("hidden_sizes")? != widths {
            return Err(invalid(
                "hidden_sizes",
                format!(
                    "{given}: only the paper's widths are walked ({widths:?} for {} blocks)",
                    if bottleneck { "bottleneck" } else { "basic" }
                ),
            ));
        }
    }
    if config.get("embedding_size").is_some_and(|e| e.as_u64() != Some(64)) {
        return Err(invalid(
            "embedding_size",
            "only the paper's 64-channel stem is walked".to_string(),
        ));
    }
    let classes = match (
        config.get("id2label").and_then(Value::as_object),
        config.get("num_labels"),
    ) {
        (Some(labels), _) if !labels.is_empty() => labels.len() as u64,
        (_, Some(n)) => n
            .as_u64()
            .filter(|n| *n >= 1)
            .ok_or_else(|| invalid("num_labels", "a positive whole number".to_string()))?,
        _ => 1000,
    };
    let side = match config.get("image_size") {
        None => 224,
        Some(v) => v
            .as_u64()
            .filter(|n| (32..=4096).contains(n))
            .ok_or_else(|| invalid("image_size", "32 to 4096 pixels".to_string()))?,
    };
    Ok((
        ResnetSpec {
            blocks,
            bottleneck,
            classes,
        },
        side,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_model::ConvNetwork;
    use serde_json::json;

    #[test]
    fn reads_microsofts_resnet_50_and_refuses_other_widths() {
        let config = json!({"model_type": "resnet", "depths": [3, 4, 6, 3], "hidden_sizes": [256, 512, 1024, 2048],
                            "embedding_size": 64, "layer_type": "bottleneck", "num_labels": 1000});
        let (spec, side) = parse_resnet_config(config.as_object().unwrap()).unwrap();
        assert_eq!(
            (spec.blocks.clone(), spec.bottleneck, side),
            (vec![3, 4, 6, 3], true, 224)
        );
        // torchvision's ResNet-50: 25,557,032 parameters.
        assert_eq!(spec.unroll(side).1, 25_557_032);
        let wide = json!({"model_type": "resnet", "depths": [3, 4, 6, 3], "hidden_sizes": [512, 1024, 2048, 4096]});
        let error = parse_resnet_config(wide.as_object().unwrap()).unwrap_err().to_string();
        assert!(error.contains("hidden_sizes"), "{error}");
    }
}
