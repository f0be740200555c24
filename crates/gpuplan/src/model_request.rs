//! A model read back on its own (`POST /api/v1/model`): what a plan or an estimate would count
//! of the model a request names, before anything is planned. The fields are the requests' own
//! (`model`, `model_config`, `checkpoint_index`), read by the same function.

use crate::request_error::RequestError;
use crate::{Catalog, Error, Field, ModelSource};
use gpuplan_model::ModelSpec;
use serde::{Deserialize, Serialize};

/// The model part of a request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelRequest {
    /// A built-in model id (`gpuplan models`), a Hugging Face Hub id where the server reads the
    /// Hub, or the name of the config in `model_config`.
    pub model: String,
    /// A Hugging Face config.json (or an Ultralytics model YAML's content) for `model`, as an
    /// object or as text.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub model_config: Option<serde_json::Value>,
    /// The checkpoint's `model.safetensors.index.json` for `model_config`, as text.
    #[serde(default)]
    pub checkpoint_index: Option<String>,
}

impl ModelRequest {
    /// Where the model comes from.
    pub fn source(&self) -> ModelSource {
        model_source(&self.model, self.model_config.as_ref(), self.checkpoint_index.as_ref())
    }
}

/// A request's model: built in by its name, or read from the config given beside it.
pub(crate) fn model_source(
    model: &str,
    config: Option<&serde_json::Value>,
    checkpoint_index: Option<&String>,
) -> ModelSource {
    let text = match config {
        None => return ModelSource::BuiltIn(model.to_string()),
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(object) => object.to_string(),
    };
    ModelSource::Config {
        name: model.to_string(),
        text,
        checkpoint_index: checkpoint_index.cloned(),
    }
}

/// The model `request` names, read as a plan or an estimate reads it.
pub fn read_model(catalog: &Catalog, request: &ModelRequest) -> Result<ModelSpec, Error> {
    if request.model.trim().is_empty() {
        return Err(RequestError::missing(Field::Model, "to say which model is read").into());
    }
    crate::resolve::model(catalog, &request.source())
}
