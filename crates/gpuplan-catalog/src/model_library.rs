//! The built-in models: `data/models/*.json`, each a Hugging Face config (or cited totals for
//! CNNs and diffusion pipelines) with the published parameter count and its source.

use crate::diffusers_config::{parse_transformer_config, parse_unet_config, parse_vae_config};
use crate::error::CatalogError;
use crate::hf_config::parse_hf_config;
use gpuplan_model::{Architecture, CitedSpec, ModelSpec, ResnetSpec, Source, did_you_mean};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;

#[derive(Deserialize)]
struct RawModel {
    id: String,
    name: String,
    #[serde(default)]
    aliases: Vec<String>,
    kind: String,
    published_parameters: Option<u64>,
    parameters_source: Option<RawSource>,
    config_source: Option<RawSource>,
    config: Option<Map<String, Value>>,
    vision: Option<RawVision>,
    components: Option<Vec<RawComponent>>,
    #[serde(default)]
    published_counts_output_layer_twice: bool,
}

#[derive(Deserialize)]
struct RawSource {
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

#[derive(Deserialize)]
struct RawVision {
    resolution: u64,
    forward_flops_per_sample: Option<f64>,
    flops_source: Option<RawSource>,
    activation_bytes_per_sample: Option<f64>,
    activation_source: Option<RawSource>,
    denoising_steps_default: Option<u64>,
    /// A diffusers `UNet2DConditionModel` config (diffusion models).
    unet_config: Option<Map<String, Value>>,
    unet_config_source: Option<RawSource>,
    /// A diffusers diffusion-transformer config (`SD3Transformer2DModel`,
    /// `FluxTransformer2DModel`), and the text tokens its pipeline feeds it when not the
    /// pipeline's default.
    transformer_config: Option<Map<String, Value>>,
    transformer_config_source: Option<RawSource>,
    text_tokens: Option<u64>,
    /// A diffusers `AutoencoderKL` config (diffusion models).
    vae_config: Option<Map<String, Value>>,
    vae_config_source: Option<RawSource>,
    /// A residual network's stages (torchvision ResNets): speed and memory are then walked
    /// layer by layer.
    resnet: Option<ResnetSpec>,
    /// A ConvNeXt's stages, walked layer by layer the same way.
    convnext: Option<gpuplan_model::ConvnextSpec>,
    /// A Swin Transformer's stages, walked layer by layer the same way.
    swin: Option<gpuplan_model::SwinSpec>,
    /// A YOLOv8 detector's scale, walked layer by layer the same way.
    yolo: Option<gpuplan_model::YoloSpec>,
}

#[derive(Deserialize)]
struct RawComponent {
    name: String,
    parameters: u64,
}

fn source(raw: RawSource, covers: &str) -> Result<Source, String> {
    Ok(Source {
        covers: vec![covers.to_string()],
        title: raw.title,
        url: raw.url,
        as_of: raw.as_of.parse().map_err(|e: gpuplan_model::DateError| e.to_string())?,
        note: raw.note,
    })
}

/// Parses one `models/*.json` file.
pub(crate) fn parse_model(file: &str, text: &str) -> Result<ModelSpec, CatalogError> {
    let raw: RawModel = serde_json::from_str(text).map_err(|error| {
        CatalogError::new(file, error.to_string())
            .at_line(Some(error.line()))
            .at_column(Some(error.column()))
    })?;
    let fail = |field: &str, message: String| CatalogError::new(file, message).in_field(field);
    let mut sources = Vec::new();
    if let Some(raw) = raw.parameters_source {
        sources.push(source(raw, "published_parameters").map_err(|m| fail("parameters_source", m))?);
    }
    if let Some(raw) = raw.config_source {
        sources.push(source(raw, "config").map_err(|m| fail("config_source", m))?);
    }
    let architecture = match raw.kind.as_str() {
        "transformer" => {
            let config = raw
                .config
                .ok_or_else(|| fail("config", "a transformer needs its config".to_string()))?;
            Architecture::Transformer(parse_hf_config(&config).map_err(|e| fail("config", e.to_string()))?)
        }
        "vision" | "diffusion" => {
            let vision = raw
                .vision
                .ok_or_else(|| fail("vision", "a vision model needs its cited figures".to_string()))?;
            let flops = vision.forward_flops_per_sample;
            if flops.is_some_and(|flops| !(flops > 0.0 && flops.is_finite())) {
                return Err(fail(
                    "vision.forward_flops_per_sample",
                    "must be a positive number".to_string(),
                ));
            }
            if let Some(raw) = vision.flops_source {
                sources.push(source(raw, "forward_flops_per_sample").map_err(|m| fail("vision.flops_source", m))?);
            }
            if let Some(raw) = vision.activation_source {
                sources
                    .push(source(raw, "activation_bytes_per_sample").map_err(|m| fail("vision.activation_source", m))?);
            }
            let unet = vision
                .unet_config
                .as_ref()
                .map(parse_unet_config)
                .transpose()
                .map_err(|e| fail("vision.unet_config", e.to_string()))?;
            let transformer = vision
                .transformer_config
                .as_ref()
                .map(|config| parse_transformer_config(config, vision.text_tokens).map(Box::new))
                .transpose()
                .map_err(|e| fail("vision.transformer_config", e.to_string()))?;
            if let Some(raw) = vision.transformer_config_source {
                sources
                    .push(source(raw, "transformer_config").map_err(|m| fail("vision.transformer_config_source", m))?);
            }
            let vae_decoder = vision
                .vae_config
                .as_ref()
                .map(parse_vae_config)
                .transpose()
                .map_err(|e| fail("vision.vae_config", e.to_string()))?;
            if let Some(raw) = vision.unet_config_source {
                sources.push(source(raw, "unet_config").map_err(|m| fail("vision.unet_config_source", m))?);
            }
            if let Some(raw) = vision.vae_config_source {
                sources.push(source(raw, "vae_config").map_err(|m| fail("vision.vae_config_source", m))?);
            }
            if let Some(yolo) = &vision.yolo {
                let scale_ok = yolo.depth > 0.0 && yolo.width > 0.0 && yolo.max_channels > 0 && yolo.classes > 0;
                if !matches!(yolo.version, 8 | 11) || !scale_ok {
                    return Err(fail(
                        "vision.yolo",
                        format!(
                            "version {} with depth {}, width {}: only YOLOv8 and YOLO11 (8, 11) at positive scales are walked",
                            yolo.version, yolo.depth, yolo.width
                        ),
                    ));
                }
            }
            Architecture::Cited(CitedSpec {
                family: raw.kind.clone(),
                resolution: vision.resolution,
                forward_flops_per_sample: flops,
                activation_bytes_per_sample: vision.activation_bytes_per_sample.map(|b| b.round() as u64),
                denoising_steps: vision.denoising_steps_default,
                components: raw
                    .components
                    .unwrap_or_default()
                    .into_iter()
                    .map(|c| (c.name, c.parameters))
                    .collect(),
                unet,
                transformer,
                vae_decoder,
                resnet: vision.resnet,
                convnext: vision.convnext,
                swin: vision.swin.map(Box::new),
                yolo: vision.yolo.map(Box::new),
            })
        }
        other => {
            return Err(fail(
                "kind",
                format!("`{other}` is not transformer, vision or diffusion"),
            ));
        }
    };
    Ok(ModelSpec {
        id: raw.id,
        name: raw.name,
        aliases: raw.aliases,
        architecture,
        published_parameters: raw.published_parameters,
        published_counts_output_layer_twice: raw.published_counts_output_layer_twice,
        checkpoint_parameters: None,
        sources,
    })
}

/// Folds a model name for lookup: case, spaces, `-` and `_` are ignored, dots are kept
/// (`opt-1.3b` and `opt-13b` are different models).
fn model_key(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The built-in models by id and alias.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModelLibrary {
    models: Vec<ModelSpec>,
    by_name: HashMap<String, usize>,
}

/// A model name that is neither a built-in id nor an alias.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown model `{input}`")]
pub struct UnknownModel {
    pub input: String,
    pub suggestion: Option<String>,
}

impl ModelLibrary {
    pub(crate) fn new(mut models: Vec<ModelSpec>) -> Result<ModelLibrary, String> {
        models.sort_by(|a, b| a.id.cmp(&b.id));
        let mut by_name = HashMap::new();
        for (index, model) in models.iter().enumerate() {
            for name in std::iter::once(&model.id).chain(&model.aliases) {
                if let Some(other) = by_name.insert(model_key(name), index) {
                    if other != index {
                        return Err(format!(
                            "the name `{name}` belongs to both {} and {}",
                            models[other].id, model.id
                        ));
                    }
                }
            }
        }
        Ok(ModelLibrary { models, by_name })
    }

    pub fn iter(&self) -> impl Iterator<Item = &ModelSpec> {
        self.models.iter()
    }

    pub fn len(&self) -> usize {
        self.models.len()
    }

    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// The model with this id or alias (case and separators ignored).
    pub fn get(&self, name: &str) -> Result<&ModelSpec, UnknownModel> {
        self.by_name
            .get(&model_key(name))
            .map(|&i| &self.models[i])
            .ok_or_else(|| {
                // Prefer an id; fall back to aliases (`meta-llama/…`).
                let ids = self.models.iter().map(|m| m.id.as_str());
                let aliases = self.models.iter().flat_map(|m| m.aliases.iter().map(String::as_str));
                UnknownModel {
                    input: name.to_string(),
                    suggestion: did_you_mean(name, ids)
                        .or_else(|| did_you_mean(name, aliases))
                        .map(str::to_string),
                }
            })
    }
}
