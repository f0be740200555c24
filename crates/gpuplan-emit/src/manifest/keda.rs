//! A KEDA ScaledObject (`keda.sh/v1alpha1`): the serving Deployment scaled between the plan's
//! minimum and maximum replicas on the engine's Prometheus metrics.

use super::kubernetes::metadata;
use super::{Deployment, ServingService};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use std::collections::BTreeMap;

/// Where the Prometheus that scrapes the engine answers (the Prometheus Operator's default
/// service in namespace `monitoring`); change it to yours.
pub(crate) const PROMETHEUS_ADDRESS: &str = "http://prometheus-operated.monitoring.svc:9090";
/// Seconds without load before scaling down to the minimum (KEDA's default is 300).
const COOLDOWN_SECONDS: i32 = 300;
/// Failed metric reads in a row before KEDA holds the fallback replicas (at its default
/// 30 s polling, a minute and a half).
const FALLBACK_FAILURES: i32 = 3;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScaledObject {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    spec: ScaledObjectSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ScaledObjectSpec {
    scale_target_ref: ScaleTarget,
    min_replica_count: i32,
    max_replica_count: i32,
    cooldown_period: i32,
    fallback: Fallback,
    triggers: Vec<Trigger>,
}

/// What KEDA does when the metrics cannot be read: hold the planned replicas.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Fallback {
    failure_threshold: i32,
    replicas: i32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ScaleTarget {
    api_version: &'static str,
    kind: &'static str,
    name: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Trigger {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'static str,
    metadata: BTreeMap<&'static str, String>,
}

/// Requests waiting per replica above which the time-to-first-token target is at risk: a
/// replica serving `qps` requests per second keeps `qps × ttft` waiting at most (Little's
/// law); one second of queue without a target.
pub(crate) fn waiting_threshold(service: &ServingService) -> u32 {
    let seconds = service.ttft_target_seconds.unwrap_or(1.0);
    (service.target_qps_per_replica * seconds).ceil().max(1.0) as u32
}

fn prometheus(name: &'static str, query: String, threshold: String) -> Trigger {
    Trigger {
        kind: "prometheus",
        name,
        metadata: BTreeMap::from([
            ("serverAddress", PROMETHEUS_ADDRESS.to_string()),
            ("query", query),
            ("threshold", threshold),
            // An empty result (nothing scraped) is an error, not zero load: the fallback
            // holds the planned replicas instead of scaling to the minimum.
            ("ignoreNullValues", "false".to_string()),
        ]),
    }
}

pub(crate) fn scaled_object(deployment: &Deployment, service: &ServingService) -> ScaledObject {
    let model = &service.served_model;
    let count = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    ScaledObject {
        api_version: "keda.sh/v1alpha1",
        kind: "ScaledObject",
        metadata: metadata(deployment, &deployment.name),
        spec: ScaledObjectSpec {
            scale_target_ref: ScaleTarget {
                api_version: "apps/v1",
                kind: "Deployment",
                name: deployment.name.clone(),
            },
            min_replica_count: count(service.min_replicas),
            max_replica_count: count(service.max_replicas),
            cooldown_period: COOLDOWN_SECONDS,
            fallback: Fallback {
                failure_threshold: FALLBACK_FAILURES,
                replicas: count(service.replicas),
            },
            triggers: vec![
                prometheus(
                    "requests-per-second",
                    format!("sum(rate(vllm:request_success_total{{model_name=\"{model}\"}}[2m]))"),
                    format!("{:.2}", service.target_qps_per_replica),
                ),
                prometheus(
                    "waiting-requests",
                    format!("sum(vllm:num_requests_waiting{{model_name=\"{model}\"}})"),
                    waiting_threshold(service).to_string(),
                ),
            ],
        },
    }
}
