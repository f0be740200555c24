use gpuplan_estimate::parameters::count_parameters;
use gpuplan_model::{Architecture, ModelSpec};
use serde::Serialize;

/// One built-in model, as `gpuplan models --format json` lists it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ModelSummaryJson {
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    /// `transformer`, `vision` or `diffusion`.
    pub kind: String,
    /// `model_type` of the Hugging Face config, for transformers.
    pub architecture: Option<String>,
    /// Computed from the architecture (transformers) or as published.
    pub parameters: u64,
    pub active_parameters: u64,
    pub published_parameters: Option<u64>,
    pub layers: Option<u64>,
    pub hidden_size: Option<u64>,
    pub context: Option<u64>,
    #[schema(value_type = Vec<Object>)]
    pub sources: Vec<gpuplan_model::Source>,
}

impl From<&ModelSpec> for ModelSummaryJson {
    fn from(model: &ModelSpec) -> Self {
        let (kind, architecture, parameters, active, layers, hidden, context) = match &model.architecture {
            Architecture::Transformer(spec) => {
                let counts = count_parameters(spec);
                (
                    "transformer".to_string(),
                    Some(spec.model_type.clone()),
                    counts.total,
                    counts.active,
                    Some(spec.layers + spec.decoder_layers),
                    Some(spec.hidden),
                    (spec.max_context > 0).then_some(spec.max_context),
                )
            }
            Architecture::Cited(spec) => {
                // A network read from a pasted config has no published count: its walk's.
                let total = model
                    .published_parameters
                    .unwrap_or_else(|| spec.components.iter().map(|(_, p)| p).sum());
                (spec.family.clone(), None, total, total, None, None, None)
            }
        };
        ModelSummaryJson {
            id: model.id.clone(),
            name: model.name.clone(),
            aliases: model.aliases.clone(),
            kind,
            architecture,
            parameters,
            active_parameters: active,
            published_parameters: model.published_parameters,
            layers,
            hidden_size: hidden,
            context,
            sources: model.sources.clone(),
        }
    }
}
