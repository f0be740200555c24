//! An export asked over the API (`POST /api/v1/export`): a plan the API answered, which of its
//! configurations, and the settings `gpuplan export` takes as flags, under the same names in
//! snake_case. Parsed here, once; the files are the ones `gpuplan export` writes.

use crate::{Catalog, Error, ExportSettings, ExportTarget, SavedPlan};
use gpuplan_emit::manifest::{ManifestFile, TrainingFlavour};
use serde::Deserialize;

/// The body of an export request.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportOptions {
    /// The plan, as `POST /api/v1/plan` answered it (or `gpuplan plan --format json` wrote it).
    #[schema(value_type = Object)]
    pub plan: serde_json::Value,
    /// What to write: k8s, skypilot or skyserve.
    pub to: String,
    /// Which configuration, counting from 1 in the plan's order (default 1).
    #[serde(default)]
    pub pick: Option<usize>,
    /// Multi-node training on Kubernetes: indexed-job (the default), jobset or pytorchjob.
    #[serde(default)]
    pub flavour: Option<String>,
    /// Container image (default: the catalog's for the configuration's software stack).
    #[serde(default)]
    pub image: Option<String>,
    /// StorageClass of the checkpoint or model-cache volume (default: on several nodes, the
    /// provider's shared-file class; on one, the cluster's default).
    #[serde(default)]
    pub storage_class: Option<String>,
    /// Name of the job or service and of its objects (default: from the model and task).
    #[serde(default)]
    pub name: Option<String>,
    /// Kubernetes namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
}

impl ExportOptions {
    /// The target and settings these options ask for.
    pub fn settings(&self) -> Result<(ExportTarget, ExportSettings), Error> {
        let target = self
            .to
            .parse::<ExportTarget>()
            .map_err(|why| Error::invalid(format!("--to: {why}"), None))?;
        let flavour = match &self.flavour {
            Some(text) => text
                .parse::<TrainingFlavour>()
                .map_err(|why| Error::invalid(format!("--flavour: {why}"), None))?,
            None => TrainingFlavour::IndexedJob,
        };
        Ok((
            target,
            ExportSettings {
                pick: self.pick.unwrap_or(1),
                flavour,
                image: self.image.clone(),
                storage_class: self.storage_class.clone(),
                name: self.name.clone(),
                namespace: self.namespace.clone().unwrap_or_else(|| "default".to_string()),
            },
        ))
    }
}

/// The files an export request asks for: the plan read back as `gpuplan export` reads a saved
/// one, its configuration picked, the files written.
pub fn export_request(catalog: &Catalog, options: &ExportOptions) -> Result<Vec<ManifestFile>, Error> {
    let (target, settings) = options.settings()?;
    let plan = SavedPlan::deserialize(&options.plan).map_err(|e| {
        Error::invalid(
            format!("--plan is not a plan the API answered: {e}"),
            Some("send the answer of POST /api/v1/plan as it came".to_string()),
        )
    })?;
    let plan = crate::export_plan::checked(plan, "--plan", "the plan was edited or damaged: plan again")?;
    crate::export_plan(catalog, &plan, target, &settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(fields: serde_json::Value) -> ExportOptions {
        let mut body = serde_json::json!({"plan": {"recommendations": []}, "to": "k8s"});
        body.as_object_mut()
            .unwrap_or_else(|| unreachable!())
            .extend(fields.as_object().cloned().unwrap_or_default());
        serde_json::from_value(body).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_defaults_are_the_command_lines() {
        let (target, settings) = options(serde_json::json!({}))
            .settings()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(target, ExportTarget::Kubernetes);
        assert_eq!((settings.pick, settings.flavour), (1, TrainingFlavour::IndexedJob));
        assert_eq!(settings.namespace, "default");
    }

    #[test]
    fn an_unknown_target_or_flavour_is_named_with_the_choices() {
        let error = options(serde_json::json!({"to": "helm"})).settings().unwrap_err();
        assert!(
            error
                .message(crate::Naming::Keys)
                .starts_with("`to`: unknown export target `helm`"),
            "{error}"
        );
        assert!(error.to_string().contains("k8s, skypilot, skyserve"), "{error}");
        let error = options(serde_json::json!({"flavour": "mpijob"}))
            .settings()
            .unwrap_err();
        assert!(error.to_string().contains("indexed-job, jobset, pytorchjob"), "{error}");
    }
}
