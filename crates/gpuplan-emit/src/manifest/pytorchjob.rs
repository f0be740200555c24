//! A Kubeflow PyTorchJob (`kubeflow.org/v1`, kubeflow/training-operator): a master and
//! `nodes − 1` workers; the operator sets torchrun's rendezvous (`PET_*` variables).

use super::Deployment;
use super::kubernetes::metadata;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use std::collections::BTreeMap;

/// The operator finds the training container by this name.
pub(crate) const CONTAINER_NAME: &str = "pytorch";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PyTorchJob {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    spec: PyTorchJobSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct PyTorchJobSpec {
    /// Processes per node, as the operator takes it (a string).
    nproc_per_node: String,
    pytorch_replica_specs: BTreeMap<&'static str, ReplicaSpec>,
    run_policy: RunPolicy,
}

/// Retries before the operator marks the job failed: as many as the Job and JobSet flavours
/// allow (more on spot, whose reclaims restart the pods).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct RunPolicy {
    backoff_limit: i32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplicaSpec {
    replicas: i32,
    restart_policy: &'static str,
    template: PodTemplateSpec,
}

pub(crate) fn pytorch_job(deployment: &Deployment, template: PodTemplateSpec) -> PyTorchJob {
    let p = &deployment.placement;
    let workers = i32::try_from(p.nodes.saturating_sub(1)).unwrap_or(i32::MAX);
    let replica = |replicas| ReplicaSpec {
        replicas,
        restart_policy: "OnFailure",
        template: template.clone(),
    };
    PyTorchJob {
        api_version: "kubeflow.org/v1",
        kind: "PyTorchJob",
        metadata: metadata(deployment, &deployment.name),
        spec: PyTorchJobSpec {
            nproc_per_node: p.ranks_per_node().to_string(),
            pytorch_replica_specs: BTreeMap::from([("Master", replica(1)), ("Worker", replica(workers))]),
            run_policy: RunPolicy {
                backoff_limit: super::kubernetes_training::backoff_limit(deployment),
            },
        },
    }
}
