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
    replicated_jobs: Vec<ReplicatedJob>,
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
            replicated_jobs: vec![ReplicatedJob {
                name: REPLICATED_JOB,
                replicas: 1,
                template,
            }],
        },
    }
}
