//! The fields a Hugging Face vision config (ConvNeXt, Swin) shares: whole-number lists per
//! stage, bounded numbers with the config class's defaults, and the classes of its head.

use crate::hf_config::ModelConfigError;
use serde_json::{Map, Value};

/// Stages a config may list, far beyond any published network.
pub(crate) const MAX_STAGES: usize = 16;

/// The error for a field a `model_type` config must give.
pub(crate) fn missing(model_type: &str, field: &str) -> ModelConfigError {
    ModelConfigError::MissingField {
        model_type: model_type.to_string(),
        field: field.to_string(),
    }
}

/// A list of 1 to [`MAX_STAGES`] whole numbers from 1 to `most`, which must be given.
pub(crate) fn stage_list(
    config: &Map<String, Value>,
    model_type: &str,
    field: &str,
    most: u64,
) -> Result<Vec<u64>, ModelConfigError> {
    let values = config
        .get(field)
        .and_then(Value::as_array)
        .ok_or_else(|| missing(model_type, field))?;
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
}

/// A whole number from 1 to 16,384, `default` where the config leaves it out.
pub(crate) fn whole_number(config: &Map<String, Value>, field: &str, default: u64) -> Result<u64, ModelConfigError> {
    match config.get(field) {
        None => Ok(default),
        Some(value) => value
            .as_u64()
            .filter(|n| (1..=16_384).contains(n))
            .ok_or_else(|| ModelConfigError::Invalid {
                field: field.to_string(),
                message: "expected a whole number from 1 to 16384".to_string(),
            }),
    }
}

/// The head's classes: the labels of `id2label`, or `num_labels`; one of them must be given.
fn classes(config: &Map<String, Value>, model_type: &str) -> Result<u64, ModelConfigError> {
    match (
        config.get("id2label").and_then(Value::as_object),
        config.get("num_labels"),
    ) {
        (Some(labels), _) if !labels.is_empty() => Ok(labels.len() as u64),
        (_, Some(_)) => whole_number(config, "num_labels", 1),
        _ => Err(missing(model_type, "id2label")),
    }
}

/// What every vision config states alike, with the config classes' defaults: the stem's
/// patch side (`patch_size`, 4), the image channels (`num_channels`, 3), the head's classes and
/// the image side the model was trained at (`image_size`, 224).
pub(crate) struct ImageFields {
    pub patch_size: u64,
    pub image_channels: u64,
    pub classes: u64,
    pub image_size: u64,
}

pub(crate) fn image_fields(config: &Map<String, Value>, model_type: &str) -> Result<ImageFields, ModelConfigError> {
    Ok(ImageFields {
        patch_size: whole_number(config, "patch_size", 4)?,
        image_channels: whole_number(config, "num_channels", 3)?,
        classes: classes(config, model_type)?,
        image_size: whole_number(config, "image_size", 224)?,
    })
}

/// A JSON object from a `json!` literal, for the config readers' tests.
#[cfg(test)]
pub(crate) fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// Two stage lists that must be as long as each other.
pub(crate) fn same_stages(first: &[u64], (field, second): (&str, &[u64]), of: &str) -> Result<(), ModelConfigError> {
    if first.len() == second.len() {
        return Ok(());
    }
    Err(ModelConfigError::Invalid {
        field: field.to_string(),
        message: format!("{} stages, but `{of}` has {}", second.len(), first.len()),
    })
}
