//! What a plan is exported to, and the object a multi-node training job becomes on Kubernetes:
//! named once for the command line (`--to`, `--flavour`) and the API (`to`, `flavour`).

use crate::named_enum::named_enum;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

named_enum!(
    /// What a plan's files are for.
    ExportTarget, "export target" {
        /// Kubernetes manifests: a Job (training) or a Deployment with a KEDA ScaledObject
        /// (serving).
        Kubernetes => "k8s" | "kubernetes",
        /// A SkyPilot task YAML.
        SkyPilot => "skypilot",
        /// A SkyPilot task YAML with a SkyServe `service:` section.
        SkyServe => "skyserve",
    }
);

named_enum!(
    /// The kind of object a multi-node training job becomes.
    TrainingFlavour, "flavour" {
        /// An indexed Job with a headless Service: no operator needed.
        IndexedJob => "indexed-job",
        /// A JobSet (kubernetes-sigs/jobset).
        JobSet => "jobset",
        /// A Kubeflow PyTorchJob (kubeflow/training-operator).
        PyTorchJob => "pytorchjob",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_a_near_miss() {
        assert_eq!("K8s".parse(), Ok(ExportTarget::Kubernetes));
        assert_eq!("jobset".parse(), Ok(TrainingFlavour::JobSet));
        let error = "skypilto".parse::<ExportTarget>().unwrap_err();
        assert!(error.contains("did you mean `skypilot`"), "{error}");
    }
}
