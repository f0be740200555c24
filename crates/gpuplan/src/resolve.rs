//! Names from users → catalog values, with hints on a miss.

use crate::Error;
use crate::estimate_workload::ModelSource;
use gpuplan_catalog::{Catalog, parse_hf_config_text};
use gpuplan_model::{Architecture, ModelSpec, ProviderId, did_you_mean};
use std::collections::BTreeSet;

/// A built-in model or a user's config.json.
pub fn model(catalog: &Catalog, source: &ModelSource) -> Result<ModelSpec, Error> {
    match source {
        ModelSource::BuiltIn(name) => catalog.models().get(name).cloned().map_err(|unknown| {
            Error::invalid(
                unknown.to_string(),
                Some(match unknown.suggestion {
                    Some(near) => {
                        format!(
                            "did you mean `{near}`? (`gpuplan models` lists them; a path to a config.json works too)"
                        )
                    }
                    None => {
                        "`gpuplan models` lists the built-in models; a path to a Hugging Face config.json works too"
                            .to_string()
                    }
                }),
            )
        }),
        ModelSource::Config { name, text } => {
            let spec = parse_hf_config_text(text).map_err(|error| Error::invalid(format!("{name}: {error}"), None))?;
            Ok(ModelSpec {
                id: name.clone(),
                name: name.clone(),
                aliases: Vec::new(),
                architecture: Architecture::Transformer(spec),
                published_parameters: None,
                published_counts_output_layer_twice: false,
                sources: Vec::new(),
            })
        }
    }
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
