//! A Prometheus Operator PodMonitor (`monitoring.coreos.com/v1`): the Prometheus the KEDA
//! triggers query scrapes the engine's `/metrics` on its named port. The Operator's Prometheus
//! reads PodMonitors, not the `prometheus.io/*` annotations the pods also carry for a plain
//! Prometheus's `kubernetes-pods` job.

use super::Deployment;
use super::kubernetes::{labels, metadata};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use std::collections::BTreeMap;

/// How often the engine is scraped: the autoscaler's triggers average over a minute.
const SCRAPE_INTERVAL: &str = "15s";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodMonitor {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    spec: PodMonitorSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct PodMonitorSpec {
    selector: Selector,
    pod_metrics_endpoints: Vec<Endpoint>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Selector {
    match_labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Endpoint {
    port: &'static str,
    path: &'static str,
    interval: &'static str,
}

/// The engine's pods, scraped on their `http` port.
pub(crate) fn pod_monitor(deployment: &Deployment) -> PodMonitor {
    PodMonitor {
        api_version: "monitoring.coreos.com/v1",
        kind: "PodMonitor",
        metadata: metadata(deployment, &deployment.name),
        spec: PodMonitorSpec {
            selector: Selector {
                match_labels: labels(deployment),
            },
            pod_metrics_endpoints: vec![Endpoint {
                port: "http",
                path: "/metrics",
                interval: SCRAPE_INTERVAL,
            }],
        },
    }
}
