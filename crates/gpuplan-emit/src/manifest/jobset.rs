//! A JobSet (`jobset.x-k8s.io/v1alpha2`, kubernetes-sigs/jobset): one replicated indexed Job
//! whose pods find each other by DNS name.

use super::Deployment;
use super::kubernetes::metadata;
use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobSet {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    spec: JobSetSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct JobSetSpec {
    network: Network,
    failure_policy: FailurePolicy,
    replicated_jobs: Vec<ReplicatedJob>,
}

/// How often the whole JobSet restarts when one of its Jobs fails (each node's pod failing
/// fails its Job): every node restarts together, from the last checkpoint.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct FailurePolicy {
    max_restarts: i32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Network {
    /// Pods reachable as `<jobset>-<job>-<job index>-<pod index>.<jobset>`.
    #[serde(rename = "enableDNSHostnames")]
    enable_dns_hostnames: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplicatedJob {
    name: &'static str,
    replicas: i32,
    template: JobTemplateSpec,
}

/// Whole-JobSet restarts allowed: a few for hardware faults, more on spot, where reclaims are
/// expected (the same allowance as the indexed Job's backoff limit).
const RESTARTS: i32 = super::kubernetes_training::BACKOFF_LIMIT;
const SPOT_RESTARTS: i32 = super::kubernetes_training::BACKOFF_LIMIT_SPOT;

/// The replicated job's name: pod `<jobset>-node-0-0` is the rendezvous host.
pub(crate) const REPLICATED_JOB: &str = "node";

pub(crate) fn jobset(deployment: &Deployment, template: JobTemplateSpec) -> JobSet {
    JobSet {
        api_version: "jobset.x-k8s.io/v1alpha2",
        kind: "JobSet",
        metadata: metadata(deployment, &deployment.name),
        spec: JobSetSpec {
            network: Network {
                enable_dns_hostnames: true,
            },
            failure_policy: FailurePolicy {
                max_restarts: if deployment.placement.spot {
                    SPOT_RESTARTS
                } else {
                    RESTARTS
                },
            },
            replicated_jobs: vec![ReplicatedJob {
                name: REPLICATED_JOB,
                replicas: 1,
                template,
            }],
        },
    }
}
