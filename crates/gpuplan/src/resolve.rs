//! Names from users → catalog values, with hints on a miss.

use crate::Error;
use crate::estimate_workload::ModelSource;
use gpuplan_catalog::{Catalog, parse_hf_config_text};
use gpuplan_model::{Architecture, ModelSpec, ProviderId, did_you_mean};
use std::collections::BTreeSet;

/// Where the built-in models are listed and how another model is described, in words that
/// hold for every front end: the API never reads a file path.
const OTHER_MODELS: &str = "the built-in models are listed by `gpuplan models` (API: GET /api/v1/models); any other is described by its Hugging Face config.json (command line: its path, or its Hub id ORG/NAME, as the model; API: its contents as `model_config`), or by a bare size (`7b`, `500m`; `8x7b` for eight experts on the 7B shape, `70b-moe:8x` for eight totalling 70B) for a generic decoder";

/// A built-in model or a user's config.json.
pub fn model(catalog: &Catalog, source: &ModelSource) -> Result<ModelSpec, Error> {
    match source {
        ModelSource::BuiltIn(name)
            if catalog.models().get(name).is_err() && crate::generic_model::is_generic_name(name) =>
        {
            // A bare size (`7b`) is a generic decoder of that size, its shape assumed.
            crate::generic_model::generic_decoder(name)
                .unwrap_or_else(|| Err(format!("`{name}` is not a size")))
                .map_err(|message| Error::invalid(message, None))
        }
        ModelSource::BuiltIn(name) => catalog.models().get(name).cloned().map_err(|unknown| {
            Error::invalid(
                unknown.to_string(),
                Some(format!(
                    "{}{OTHER_MODELS}",
                    unknown
                        .suggestion
                        .map_or(String::new(), |near| format!("did you mean `{near}`? "))
                )),
            )
        }),
        ModelSource::Config {
            name,
            text,
            checkpoint_index,
        } => {
            // Networks walked from their own config: a checkpoint index would size nothing. An
            // Ultralytics model YAML may come as YAML; any other config that is not JSON is left
            // to the transformer reader, which says why.
            let config: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text)
                .or_else(|_| serde_yaml_ng::from_str(text))
                .unwrap_or_default();
            let walked = match diffusion_transformer_model(name, &config)? {
                Some(pipeline) => Some((pipeline, "a diffusion transformer's are counted from its blocks")),
                None => match vision_model(name, &config)? {
                    Some(walked) => Some(walked),
                    None => {
                        yolo_model(name, &config)?.map(|yolo| (yolo, "a YOLO detector's are counted from its layers"))
                    }
                },
            };
            if let Some((model, counted)) = walked {
                if checkpoint_index.is_some() {
                    return Err(Error::invalid(
                        format!("{name}: a checkpoint index sizes a language model's weights; {counted}"),
                        Some("leave the checkpoint index out".to_string()),
                    ));
                }
                return Ok(model);
            }
            let mut spec =
                parse_hf_config_text(text).map_err(|error| Error::invalid(format!("{name}: {error}"), None))?;
            let checkpoint = checkpoint_index
                .as_deref()
                .map(|index| checkpoint_parameters(name, index, text))
                .transpose()?;
            // Weights the checkpoint holds beyond the layers the architecture describes (a
            // vision tower, a multi-token-prediction head) take memory and no FLOPs.
            if let Some(held) = checkpoint {
                let counted = gpuplan_estimate::parameters::count_parameters(&spec).total;
                spec.extra_parameters += held.saturating_sub(counted);
            }
            Ok(ModelSpec {
                id: name.clone(),
                name: name.clone(),
                aliases: Vec::new(),
                architecture: Architecture::Transformer(spec),
                published_parameters: None,
                published_counts_output_layer_twice: false,
                checkpoint_parameters: checkpoint,
                sources: Vec::new(),
            })
        }
    }
}

/// A Hugging Face vision config walked layer by layer, by its `model_type` (ConvNeXt, Swin,
/// ResNet as microsoft/resnet-50 publishes it), with what its parameters are counted from;
/// `None` for any other config.
fn vision_model(
    name: &str,
    config: &serde_json::Map<String, serde_json::Value>,
) -> Result<Option<(ModelSpec, &'static str)>, Error> {
    let invalid = |error: gpuplan_catalog::ModelConfigError| Error::invalid(format!("{name}: {error}"), None);
    let model_type = config.get("model_type").and_then(serde_json::Value::as_str);
    let walked = match model_type {
        Some(gpuplan_catalog::CONVNEXT_MODEL_TYPE) => {
            let (spec, side) = gpuplan_catalog::parse_convnext_config(config).map_err(invalid)?;
            let parameters = gpuplan_model::ConvNetwork::unroll(&spec, side).1;
            let model = convnet_model(name, side, ("ConvNeXt", parameters), |c| c.convnext = Some(spec));
            (model, "a ConvNeXt's are counted from its stages")
        }
        Some(gpuplan_catalog::SWIN_MODEL_TYPE) => {
            let (spec, side) = gpuplan_catalog::parse_swin_config(config).map_err(invalid)?;
            let parameters = gpuplan_model::ConvNetwork::unroll(&spec, side).1;
            let model = convnet_model(name, side, ("Swin Transformer", parameters), |c| {
                c.swin = Some(Box::new(spec))
            });
            (model, "a Swin Transformer's are counted from its stages")
        }
        Some(gpuplan_catalog::RESNET_MODEL_TYPE) => {
            let (spec, side) = gpuplan_catalog::parse_resnet_config(config).map_err(invalid)?;
            let parameters = gpuplan_model::ConvNetwork::unroll(&spec, side).1;
            let model = convnet_model(name, side, ("ResNet", parameters), |c| c.resnet = Some(spec));
            (model, "a ResNet's are counted from its stages")
        }
        _ => return Ok(None),
    };
    Ok(Some(walked))
}

/// An Ultralytics model YAML (read as JSON) of the stock YOLOv8 or YOLO11 detection layout,
/// with its own classes and scale, walked layer by layer like the built-in detectors; `None`
/// for any other config.
fn yolo_model(name: &str, config: &serde_json::Map<String, serde_json::Value>) -> Result<Option<ModelSpec>, Error> {
    if !gpuplan_catalog::is_ultralytics_config(config) {
        return Ok(None);
    }
    let spec = gpuplan_catalog::parse_ultralytics_config(config)
        .map_err(|error| Error::invalid(format!("{name}: {error}"), None))?;
    let resolution = gpuplan_catalog::ULTRALYTICS_RESOLUTION;
    let parameters = gpuplan_model::ConvNetwork::unroll(&spec, resolution).1;
    let component = if spec.version == 11 { "YOLO11" } else { "YOLOv8" };
    Ok(Some(convnet_model(
        name,
        resolution,
        (component, parameters),
        |cited| cited.yolo = Some(Box::new(spec)),
    )))
}

/// A pasted convolutional network as a vision model of one component, its walk set by `walk`.
fn convnet_model(
    name: &str,
    resolution: u64,
    (component, parameters): (&str, u64),
    walk: impl FnOnce(&mut gpuplan_model::CitedSpec),
) -> ModelSpec {
    let mut cited = gpuplan_model::CitedSpec {
        family: "vision".to_string(),
        resolution,
        forward_flops_per_sample: None,
        activation_bytes_per_sample: None,
        denoising_steps: None,
        components: vec![(component.to_string(), parameters)],
        unet: None,
        transformer: None,
        vae_decoder: None,
        resnet: None,
        convnext: None,
        swin: None,
        yolo: None,
    };
    walk(&mut cited);
    ModelSpec {
        id: name.to_string(),
        name: name.to_string(),
        aliases: Vec::new(),
        architecture: Architecture::Cited(cited),
        published_parameters: None,
        published_counts_output_layer_twice: false,
        checkpoint_parameters: None,
        sources: Vec::new(),
    }
}

/// A diffusers diffusion-transformer config (`SD3Transformer2DModel`, `FluxTransformer2DModel`)
/// as a diffusion pipeline of that denoiser alone: its text encoders and VAE are not in the
/// file, and the estimate says they are not counted. `None` for any other config.
fn diffusion_transformer_model(
    name: &str,
    config: &serde_json::Map<String, serde_json::Value>,
) -> Result<Option<ModelSpec>, Error> {
    let class = config.get("_class_name").and_then(serde_json::Value::as_str);
    if !matches!(class, Some("SD3Transformer2DModel" | "FluxTransformer2DModel")) {
        return Ok(None);
    }
    let spec = gpuplan_catalog::parse_transformer_config(config, None)
        .map_err(|error| Error::invalid(format!("{name}: {error}"), None))?;
    let parameters = gpuplan_estimate::dit_flops::dit_pass(&spec, 1, 1).parameters;
    Ok(Some(ModelSpec {
        id: name.to_string(),
        name: name.to_string(),
        aliases: Vec::new(),
        architecture: Architecture::Cited(gpuplan_model::CitedSpec {
            family: "diffusion".to_string(),
            resolution: DIFFUSION_TRANSFORMER_RESOLUTION,
            forward_flops_per_sample: None,
            activation_bytes_per_sample: None,
            denoising_steps: Some(PIPELINE_STEPS),
            components: vec![("transformer".to_string(), parameters)],
            unet: None,
            transformer: Some(Box::new(spec)),
            vae_decoder: None,
            resnet: None,
            convnext: None,
            swin: None,
            yolo: None,
        }),
        published_parameters: None,
        published_counts_output_layer_twice: false,
        checkpoint_parameters: None,
        sources: Vec::new(),
    }))
}

/// The resolution and steps diffusers' SD3 and FLUX pipelines default to
/// (`pipeline_stable_diffusion_3.py`, `pipeline_flux.py`: 1024 px, 28 steps).
const DIFFUSION_TRANSFORMER_RESOLUTION: u64 = 1024;
const PIPELINE_STEPS: u64 = 28;

/// The parameters a checkpoint's safetensors index says it holds; an index that cannot say is
/// an error naming what is missing.
fn checkpoint_parameters(name: &str, index: &str, config: &str) -> Result<u64, Error> {
    let config: serde_json::Value = serde_json::from_str(config).unwrap_or_default();
    gpuplan_catalog::checkpoint_parameters(index, &config)
        .map(|held| held.parameters)
        .map_err(|error| Error::invalid(format!("{name}: {error}"), None))
}

/// Provider names, checked against the catalog.
pub fn providers(catalog: &Catalog, names: &[String]) -> Result<Vec<ProviderId>, Error> {
    let known: BTreeSet<&str> = catalog.offerings().iter().map(|o| o.provider.as_str()).collect();
    names
        .iter()
        .map(|name| {
            let provider = ProviderId::new(name);
            if known.contains(provider.as_str()) {
                Ok(provider)
            } else {
                let hint = did_you_mean(name, known.iter().copied())
                    .map(|near| format!("did you mean `{near}`?"))
                    .unwrap_or_else(|| {
                        format!(
                            "known providers: {}",
                            known.iter().copied().collect::<Vec<_>>().join(", ")
                        )
                    });
                Err(Error::invalid(format!("unknown provider `{name}`"), Some(hint)))
            }
        })
        .collect()
}

/// Instance family names as typed (`NDv4`, `A3 Mega`, `gn7i`) to the keys offerings are
/// matched by; a family no offering belongs to is refused with the nearest one.
pub fn families(catalog: &Catalog, names: &[String]) -> Result<Vec<String>, Error> {
    let known: BTreeSet<String> = catalog
        .offerings()
        .iter()
        .flat_map(|o| gpuplan_model::instance_families(o.provider.as_str(), &o.instance_type))
        .collect();
    let keys: BTreeSet<String> = known.iter().map(|name| gpuplan_model::family_key(name)).collect();
    names
        .iter()
        .map(|name| {
            let key = gpuplan_model::family_key(name);
            if keys.contains(&key) {
                return Ok(key);
            }
            let hint = did_you_mean(name, known.iter().map(String::as_str))
                .map(|near| format!("did you mean `{near}`?"))
                .unwrap_or_else(|| "`gpuplan instances` lists the instance types; a family is the part of the name before the size (p5, a3 mega, NDv4, gn7i)".to_string());
            Err(crate::RequestError::invalid(
                crate::Field::Family,
                name,
                format!("no instance family `{name}` in the catalog"),
            )
            .with_hint(hint)
            .into())
        })
        .collect()
}

/// A CUDA compute capability as a guide writes it (`8.0`, `8.6`, `sm_90`).
pub fn compute_capability(text: &str) -> Result<gpuplan_model::ComputeCapability, Error> {
    gpuplan_model::ComputeCapability::parse(text).ok_or_else(|| {
        crate::RequestError::invalid(
            crate::Field::ComputeCapability,
            text,
            format!("`{text}` is not a compute capability"),
        )
        .with_hint("write it as MAJOR.MINOR (8.0 for A100, 8.9 for L4 and L40S, 9.0 for H100) or as sm_90")
        .into()
    })
}
