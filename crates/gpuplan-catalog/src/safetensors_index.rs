//! A sharded checkpoint's `model.safetensors.index.json` (the Hugging Face Hub's layout): its
//! `metadata` gives the bytes of every tensor (`total_size`) and, as newer writers save it, the
//! parameter count itself (`total_parameters`). With the config's `torch_dtype` the bytes give
//! the count where the file does not.

use serde_json::Value;

/// The parameters a checkpoint holds, and how the figure was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointParameters {
    pub parameters: u64,
    /// `true` when the index states the count; `false` when it is its bytes over the
    /// config's dtype width.
    pub stated: bool,
}

/// Why an index gives no parameter count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    #[error("model.safetensors.index.json is not JSON: {0}")]
    Malformed(String),
    #[error("model.safetensors.index.json has no metadata.total_size")]
    NoSize,
    #[error(
        "model.safetensors.index.json gives bytes, not parameters, and the config's torch_dtype ({0}) does not say how wide they are"
    )]
    UnknownWidth(String),
}

/// The parameter count of the checkpoint `index` describes, for the model whose config.json is
/// `config`. A quantised checkpoint (`quantization_config`) packs several weights per byte
/// beside 16-bit ones, so only a stated count is taken from it.
pub fn checkpoint_parameters(index: &str, config: &Value) -> Result<CheckpointParameters, IndexError> {
    let index: Value = serde_json::from_str(index).map_err(|e| IndexError::Malformed(e.to_string()))?;
    let metadata = &index["metadata"];
    if let Some(parameters) = metadata["total_parameters"].as_u64().filter(|p| *p > 0) {
        return Ok(CheckpointParameters {
            parameters,
            stated: true,
        });
    }
    let bytes = metadata["total_size"]
        .as_u64()
        .or_else(|| metadata["total_size"].as_str().and_then(|s| s.parse().ok()))
        .filter(|b| *b > 0)
        .ok_or(IndexError::NoSize)?;
    let dtype = config["torch_dtype"]
        .as_str()
        .or_else(|| config["dtype"].as_str())
        .unwrap_or("unstated");
    let width = match dtype {
        "bfloat16" | "float16" => 2,
        "float32" => 4,
        _ => 0,
    };
    if width == 0 || config.get("quantization_config").is_some() {
        let shown = if config.get("quantization_config").is_some() {
            format!("{dtype}, quantised")
        } else {
            dtype.to_string()
        };
        return Err(IndexError::UnknownWidth(shown));
    }
    Ok(CheckpointParameters {
        parameters: bytes / width,
        stated: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stated_count_is_taken_as_it_is() {
        let index = r#"{"metadata": {"total_parameters": 8030261248, "total_size": 16060522496}, "weight_map": {}}"#;
        let got = checkpoint_parameters(index, &json!({"torch_dtype": "bfloat16"})).unwrap();
        assert_eq!((got.parameters, got.stated), (8_030_261_248, true));
    }

    #[test]
    fn bytes_over_the_dtype_width_give_the_count_otherwise() {
        // Llama 3.1 8B's index: 16,060,522,496 bytes of bf16.
        let index = r#"{"metadata": {"total_size": 16060522496}, "weight_map": {}}"#;
        let got = checkpoint_parameters(index, &json!({"torch_dtype": "bfloat16"})).unwrap();
        assert_eq!((got.parameters, got.stated), (8_030_261_248, false));
        let fp32 = checkpoint_parameters(index, &json!({"torch_dtype": "float32"})).unwrap();
        assert_eq!(fp32.parameters, 4_015_130_624);
    }

    #[test]
    fn a_quantised_or_unstated_width_gives_no_count() {
        let index = r#"{"metadata": {"total_size": 5000}}"#;
        let quantised = json!({"torch_dtype": "float16", "quantization_config": {"quant_method": "awq"}});
        assert!(matches!(
            checkpoint_parameters(index, &quantised),
            Err(IndexError::UnknownWidth(_))
        ));
        assert!(matches!(
            checkpoint_parameters(index, &json!({})),
            Err(IndexError::UnknownWidth(_))
        ));
        assert_eq!(
            checkpoint_parameters("{}", &json!({"torch_dtype": "bfloat16"})),
            Err(IndexError::NoSize)
        );
        assert!(matches!(
            checkpoint_parameters("not json", &json!({})),
            Err(IndexError::Malformed(_))
        ));
    }
}
