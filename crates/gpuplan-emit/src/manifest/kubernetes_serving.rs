//! Kubernetes, serving: a priority class above training, the engine's Deployment with its
//! probes, a Service, a PodDisruptionBudget, a KEDA ScaledObject, and an HPA for clusters
//! without KEDA.

use super::kubernetes::{claim_volume, labels, metadata, pod_spec, priority_class, shared_claim, shm_volume};
use super::{Deployment, ENGINE_PORT, ManifestError, ManifestFile, Placement, ServingService, yaml};
use k8s_openapi::api::apps::v1::{
    Deployment as KubeDeployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
};
use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricIdentifier, MetricSpec, MetricTarget, PodsMetricSource,
};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction, PersistentVolumeClaim, PodTemplateSpec, Probe,
    SecretKeySelector, Service, ServicePort, ServiceSpec, VolumeMount,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

/// Seconds between startup checks, and how many may fail: weights take minutes to load.
const STARTUP_PERIOD_SECONDS: i32 = 10;
const STARTUP_FAILURES_ALLOWED: i32 = 90;
/// The engine's health endpoint (vLLM's OpenAI-compatible server).
const HEALTH_PATH: &str = "/health";
/// The Service's port.
const SERVICE_PORT: i32 = 80;
/// Where the engine keeps what it downloads from the Hugging Face Hub (`HF_HOME`): on the
/// shared model-cache volume, so a new replica or a restart reads the weights from it instead
/// of downloading them again.
const MODEL_CACHE_PATH: &str = "/root/.cache/huggingface";

pub(crate) fn manifests(deployment: &Deployment, service: &ServingService) -> Result<Vec<ManifestFile>, ManifestError> {
    let priority = format!("{}-serving", deployment.name);
    let header = header(deployment, service);
    let file = |name: &str, yaml: String, alternative: bool| ManifestFile {
        name: name.to_string(),
        yaml,
        alternative,
    };
    Ok(vec![
        file(
            "priorityclass.yaml",
            yaml(&header, &priority_class(deployment, &priority, false))?,
            false,
        ),
        file(
            "deployment.yaml",
            yaml(&header, &engine_deployment(deployment, service, &priority))?,
            false,
        ),
        file("service.yaml", yaml(&header, &engine_service(deployment))?, false),
        file(
            "model-cache.yaml",
            yaml(&header, &model_cache_volume(deployment, service))?,
            false,
        ),
        file(
            "pdb.yaml",
            yaml(&header, &disruption_budget(deployment, service))?,
            false,
        ),
        file(
            "podmonitor.yaml",
            yaml(
                &format!(
                    "{header}\nThe Prometheus Operator's Prometheus that scaledobject.yaml queries scrapes the engine through this PodMonitor; if its podMonitorSelector asks for a label (kube-prometheus-stack: release=<its Helm release>), add that label here."
                ),
                &super::pod_monitor::pod_monitor(deployment),
            )?,
            false,
        ),
        file(
            "scaledobject.yaml",
            yaml(&header, &super::keda::scaled_object(deployment, service))?,
            false,
        ),
        file(
            "hpa-without-keda.yaml",
            yaml(
                &format!(
                    "{header}\nInstead of scaledobject.yaml where KEDA is not installed: needs prometheus-adapter\nserving vLLM's vllm:num_requests_waiting as the pods metric vllm_num_requests_waiting."
                ),
                &autoscaler(deployment, service),
            )?,
            true,
        ),
    ])
}

fn header(deployment: &Deployment, service: &ServingService) -> String {
    let p = &deployment.placement;
    format!(
        "gpuplan: {} serving {} on {} replica{} of {} × {} ({} {}{}), {}–{} replicas at {:.1} requests/s each.\nFirst: kubectl create secret generic hf-token -n {} --from-literal=token=<your Hugging Face token> (gated models such as Llama need one; an empty token does for public models).",
        deployment.name,
        service.served_model,
        service.replicas,
        if service.replicas == 1 { "" } else { "s" },
        service.gpus_per_replica,
        p.gpu,
        p.provider,
        p.instance_type,
        if p.spot { ", spot" } else { "" },
        service.min_replicas,
        service.max_replicas,
        service.target_qps_per_replica,
        deployment.namespace,
    ) + &deployment
        .image_note
        .as_ref()
        .map_or(String::new(), |note| format!("\n{note}"))
        + &super::kubernetes::affinity_note(p).map_or(String::new(), |note| format!("\n{note}"))
        + &rollout_note(service, p)
        + &deployment
            .storage
            .note
            .as_ref()
            .map_or(String::new(), |note| format!("\n{note}"))
        + &service
            .on_demand_floor_replicas
            .filter(|_| !p.spot)
            .map_or(String::new(), |floor| {
                format!(
                    "\nThe plan is a spot fleet with a floor of {} on on-demand capacity; every replica here runs on on-demand nodes (safe, at the floor's price). To run the rest on spot, copy the Deployment with the spot node label and minReplicas 0, and point the ScaledObject at the copy.",
                    gpuplan_model::counted(floor, "replica", "replicas")
                )
            })
}

fn selector(deployment: &Deployment) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels(deployment)),
        ..LabelSelector::default()
    }
}

fn http_probe(period: i32, failures: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(HEALTH_PATH.to_string()),
            port: IntOrString::Int(ENGINE_PORT),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(period),
        failure_threshold: Some(failures),
        ..Probe::default()
    }
}

fn engine_container(deployment: &Deployment, service: &ServingService) -> Container {
    let (_, shm_mount) = shm_volume();
    let token = EnvVar {
        name: "HF_TOKEN".to_string(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: "hf-token".to_string(),
                key: "token".to_string(),
                // A missing secret stops the pod at once, instead of a failed download later.
                optional: Some(false),
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    };
    let home = EnvVar {
        name: "HF_HOME".to_string(),
        value: Some(MODEL_CACHE_PATH.to_string()),
        ..EnvVar::default()
    };
    let cache_mount = VolumeMount {
        name: "model-cache".to_string(),
        mount_path: MODEL_CACHE_PATH.to_string(),
        ..VolumeMount::default()
    };
    Container {
        name: "engine".to_string(),
        image: Some(deployment.image.clone()),
        args: Some({
            let mut args = vec!["--model".to_string(), service.served_model.clone()];
            let ranks = deployment.placement.ranks(service.gpus_per_replica);
            args.extend(service.engine_args(&ranks.to_string()));
            args
        }),
        env: Some(vec![token, home]),
        ports: Some(vec![ContainerPort {
            name: Some("http".to_string()),
            container_port: ENGINE_PORT,
            ..ContainerPort::default()
        }]),
        resources: Some(super::kubernetes::gpu_resources(
            &deployment.placement,
            service.gpus_per_replica,
        )),
        startup_probe: Some(http_probe(STARTUP_PERIOD_SECONDS, STARTUP_FAILURES_ALLOWED)),
        readiness_probe: Some(http_probe(STARTUP_PERIOD_SECONDS, 3)),
        liveness_probe: Some(http_probe(STARTUP_PERIOD_SECONDS * 3, 3)),
        volume_mounts: Some(vec![shm_mount, cache_mount]),
        ..Container::default()
    }
}

fn engine_deployment(deployment: &Deployment, service: &ServingService, priority: &str) -> KubeDeployment {
    KubeDeployment {
        metadata: metadata(deployment, &deployment.name),
        spec: Some(DeploymentSpec {
            replicas: Some(i32::try_from(service.replicas).unwrap_or(i32::MAX)),
            selector: selector(deployment),
            strategy: Some(rollout(service)),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(deployment)),
                    // The autoscaler reads the engine's metrics from Prometheus: these ask the
                    // usual `kubernetes-pods` scrape job (the Prometheus community chart's) to
                    // collect them; with the Prometheus Operator, add a PodMonitor on the labels.
                    annotations: Some(BTreeMap::from([
                        ("prometheus.io/scrape".to_string(), "true".to_string()),
                        ("prometheus.io/port".to_string(), ENGINE_PORT.to_string()),
                        ("prometheus.io/path".to_string(), "/metrics".to_string()),
                    ])),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod_spec(
                    &deployment.placement,
                    engine_container(deployment, service),
                    vec![claim_volume("model-cache", &deployment.name, "model-cache")],
                    priority,
                    "Always",
                )),
            },
            ..DeploymentSpec::default()
        }),
        ..KubeDeployment::default()
    }
}

/// The volume the replicas share for the weights: ReadWriteMany where they run on several
/// nodes (the export's storage class says which class binds it).
fn model_cache_volume(deployment: &Deployment, service: &ServingService) -> PersistentVolumeClaim {
    shared_claim(deployment, "model-cache", service.model_cache_gib.max(1.0))
}

fn engine_service(deployment: &Deployment) -> Service {
    Service {
        metadata: metadata(deployment, &deployment.name),
        spec: Some(ServiceSpec {
            selector: Some(labels(deployment)),
            ports: Some(vec![ServicePort {
                name: Some("http".to_string()),
                port: SERVICE_PORT,
                target_port: Some(IntOrString::String("http".to_string())),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// One replica down at a time during node drains and upgrades; with a single replica, none
/// (a drain then waits until a second replica runs, instead of taking the service down).
fn disruption_budget(deployment: &Deployment, service: &ServingService) -> PodDisruptionBudget {
    let (min_available, max_unavailable) = if service.min_replicas <= 1 {
        (Some(IntOrString::Int(1)), None)
    } else {
        (None, Some(IntOrString::Int(1)))
    };
    PodDisruptionBudget {
        metadata: metadata(deployment, &deployment.name),
        spec: Some(PodDisruptionBudgetSpec {
            min_available,
            max_unavailable,
            selector: Some(selector(deployment)),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    }
}

/// Rolling updates that fit the GPUs the plan rents and never take the service down: where
/// the autoscaler keeps at least two replicas, one is replaced at a time in place (no surge,
/// which would need a spare GPU node); where it may scale down to one (the disruption budget's
/// case too), the update surges, since replacing the only replica in place is an outage.
/// What an update needs: at one replica it starts the new pod beside the old one, so the
/// cluster needs room for one more replica's GPUs for the length of the update.
fn rollout_note(service: &ServingService, p: &Placement) -> String {
    if service.min_replicas > 1 {
        return String::new();
    }
    format!(
        "\nUpdates start the new pod before stopping the old one (maxSurge 1), so that a single replica never goes down: the cluster needs {} × {} free for the update's length (or set maxSurge 0 and maxUnavailable 1 to replace it in place, with an outage).",
        service.gpus_per_replica, p.gpu
    )
}

fn rollout(service: &ServingService) -> DeploymentStrategy {
    let (surge, unavailable) = if service.min_replicas <= 1 { (1, 0) } else { (0, 1) };
    DeploymentStrategy {
        type_: Some("RollingUpdate".to_string()),
        rolling_update: Some(RollingUpdateDeployment {
            max_surge: Some(IntOrString::Int(surge)),
            max_unavailable: Some(IntOrString::Int(unavailable)),
        }),
    }
}

fn autoscaler(deployment: &Deployment, service: &ServingService) -> HorizontalPodAutoscaler {
    HorizontalPodAutoscaler {
        metadata: metadata(deployment, &deployment.name),
        spec: Some(HorizontalPodAutoscalerSpec {
            scale_target_ref: k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference {
                api_version: Some("apps/v1".to_string()),
                kind: "Deployment".to_string(),
                name: deployment.name.clone(),
            },
            min_replicas: Some(i32::try_from(service.min_replicas).unwrap_or(i32::MAX)),
            max_replicas: i32::try_from(service.max_replicas).unwrap_or(i32::MAX),
            metrics: Some(vec![MetricSpec {
                type_: "Pods".to_string(),
                pods: Some(PodsMetricSource {
                    metric: MetricIdentifier {
                        name: "vllm_num_requests_waiting".to_string(),
                        ..MetricIdentifier::default()
                    },
                    target: MetricTarget {
                        type_: "AverageValue".to_string(),
                        average_value: Some(Quantity(super::keda::waiting_threshold(service).to_string())),
                        ..MetricTarget::default()
                    },
                }),
                ..MetricSpec::default()
            }]),
            ..HorizontalPodAutoscalerSpec::default()
        }),
        ..HorizontalPodAutoscaler::default()
    }
}
