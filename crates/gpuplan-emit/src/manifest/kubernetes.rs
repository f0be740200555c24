//! Kubernetes: what training and serving share (labels, GPU requests, node affinity from the
//! well-known labels, tolerations for GPU and spot taints, shared memory, priority classes), and
//! the entry point that writes every file of an export.

use super::{Deployment, ManifestError, ManifestFile, Placement, Workload};
use k8s_openapi::api::core::v1::{
    Affinity, Capabilities, Container, EmptyDirVolumeSource, NodeAffinity, NodeSelector, NodeSelectorRequirement,
    NodeSelectorTerm, PersistentVolumeClaim, PersistentVolumeClaimSpec, PersistentVolumeClaimVolumeSource,
    PodSecurityContext, PodSpec, ResourceRequirements, SeccompProfile, Toleration, Volume, VolumeMount,
    VolumeResourceRequirements,
};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

pub use gpuplan_model::TrainingFlavour;

/// Every file of the Kubernetes export, in the order to apply them.
pub fn kubernetes_manifests(
    deployment: &Deployment,
    flavour: TrainingFlavour,
) -> Result<Vec<ManifestFile>, ManifestError> {
    match &deployment.workload {
        Workload::Training(job) => super::kubernetes_training::manifests(deployment, job, flavour),
        Workload::Serving(service) => super::kubernetes_serving::manifests(deployment, service),
    }
}

/// Priority of training pods: low, so serving preempts them.
pub(crate) const TRAINING_PRIORITY: i32 = 1_000;
/// Priority of serving pods: above training.
pub(crate) const SERVING_PRIORITY: i32 = 100_000;

/// Where the shared memory PyTorch's data loaders and NCCL use is mounted.
const SHM_PATH: &str = "/dev/shm";

/// The labels every object of an export carries.
pub(crate) fn labels(deployment: &Deployment) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), deployment.name.clone()),
        ("app.kubernetes.io/managed-by".to_string(), "gpuplan".to_string()),
    ])
}

pub(crate) fn metadata(deployment: &Deployment, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: Some(deployment.namespace.clone()),
        labels: Some(labels(deployment)),
        ..ObjectMeta::default()
    }
}

/// A priority class: training low and never preempting, serving high.
pub(crate) fn priority_class(deployment: &Deployment, name: &str, training: bool) -> PriorityClass {
    PriorityClass {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels(deployment)),
            ..ObjectMeta::default()
        },
        value: if training { TRAINING_PRIORITY } else { SERVING_PRIORITY },
        preemption_policy: Some(if training { "Never" } else { "PreemptLowerPriority" }.to_string()),
        global_default: Some(false),
        description: Some(
            if training {
                "Training: preemptible, preempts nothing (gpuplan)"
            } else {
                "Online serving: preempts training (gpuplan)"
            }
            .to_string(),
        ),
    }
}

/// `count` GPUs of the placement's device plugin resource, as requests and limits.
pub(crate) fn gpu_resources(placement: &Placement, count: u32) -> ResourceRequirements {
    let gpus = BTreeMap::from([(placement.gpu_resource.clone(), Quantity(count.to_string()))]);
    let mut requests = gpus.clone();
    // The pod's share of the node's CPUs and memory, less what the kubelet and system daemons
    // keep: a pod without requests is BestEffort, the first evicted under pressure.
    let share = f64::from(count) / f64::from(placement.gpus_per_node.max(1)) * ALLOCATABLE_SHARE;
    if let Some(vcpus) = placement.vcpus_per_node {
        let cpus = (f64::from(vcpus) * share).floor().max(1.0);
        requests.insert("cpu".to_string(), Quantity(format!("{cpus}")));
    }
    if let Some(gib) = placement.memory_gib_per_node {
        let memory = (gib * share).floor().max(1.0);
        requests.insert("memory".to_string(), Quantity(format!("{memory}Gi")));
    }
    // Limits equal to the requests make the pod Guaranteed: the last evicted under memory
    // pressure, and eligible for exclusive cores under the kubelet's static CPU manager.
    let mut limits = gpus;
    limits.extend(requests.iter().map(|(name, quantity)| (name.clone(), quantity.clone())));
    ResourceRequirements {
        limits: Some(limits),
        requests: Some(requests),
        ..ResourceRequirements::default()
    }
}

/// Share of a node's CPUs and memory a pod's requests claim: the rest is the kubelet's,
/// the system daemons' and the eviction threshold's (EKS reserves about 6–8 % of memory and a
/// fraction of a core on large instances; GKE and AKS similar).
const ALLOCATABLE_SHARE: f64 = 0.85;

/// Clouds whose managed Kubernetes labels nodes with the instance type names the catalog uses
/// (`node.kubernetes.io/instance-type`: EKS, GKE, AKS, OKE).
const INSTANCE_TYPE_LABELLED: [&str; 4] = ["aws", "gcp", "azure", "oci"];

/// Nodes of the planned instance type (the cloud's well-known label; on spot, only the managed
/// service's spot nodes: the price the plan used), never another shape with the same GPU at
/// another price; on a cluster of other machines, nodes whose GPUs GPU Feature Discovery labels
/// with the planned product. `None` where no label is known to match (see [`affinity_note`]).
pub(crate) fn node_affinity(placement: &Placement) -> Option<Affinity> {
    let labelled = INSTANCE_TYPE_LABELLED.contains(&placement.provider.as_str());
    let spot = spot_node_label(&placement.provider).filter(|_| placement.spot);
    let mut terms = Vec::new();
    if let Some(slice) = &placement.tpu {
        // A TPU slice's nodes carry the slice's accelerator and topology, not its name.
        let mut expressions = vec![
            requirement("cloud.google.com/gke-tpu-accelerator", slice.accelerator_label),
            requirement("cloud.google.com/gke-tpu-topology", slice.topology),
        ];
        if let Some((spot_key, spot_value)) = spot {
            expressions.push(requirement(spot_key, spot_value));
        }
        terms.push(NodeSelectorTerm {
            match_expressions: Some(expressions),
            ..NodeSelectorTerm::default()
        });
    } else if labelled {
        let mut expressions = vec![requirement(
            "node.kubernetes.io/instance-type",
            &placement.instance_type,
        )];
        if let Some((spot_key, spot_value)) = spot {
            expressions.push(requirement(spot_key, spot_value));
        }
        terms.push(NodeSelectorTerm {
            match_expressions: Some(expressions),
            ..NodeSelectorTerm::default()
        });
    }
    // Machines without the instance-type label: nodes with the same GPU.
    if let Some(product) = placement.gpu_product_label.as_ref().filter(|_| !labelled) {
        terms.push(NodeSelectorTerm {
            match_expressions: Some(vec![requirement("nvidia.com/gpu.product", product)]),
            ..NodeSelectorTerm::default()
        });
    }
    (!terms.is_empty()).then(|| Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: terms,
            }),
            ..NodeAffinity::default()
        }),
        ..Affinity::default()
    })
}

/// What the files' header says where the affinity rests on a label the provider's nodes do
/// not carry by themselves, or where no label is known to match the planned machines.
pub(crate) fn affinity_note(placement: &Placement) -> Option<String> {
    if INSTANCE_TYPE_LABELLED.contains(&placement.provider.as_str()) {
        return None;
    }
    Some(match &placement.gpu_product_label {
        Some(product) => format!(
            "Node affinity: {} nodes carry no label naming {}, so the pods ask for nodes labelled nvidia.com/gpu.product={product}, which GPU Feature Discovery (NVIDIA's GPU Operator) writes; without it no node matches: install it, or replace the affinity with your nodes' labels.",
            placement.provider, placement.instance_type
        ),
        None => format!(
            "No node affinity: {} nodes carry no label known to name {} or its GPU; add a nodeSelector for your nodes.",
            placement.provider, placement.instance_type
        ),
    })
}

fn requirement(key: &str, value: &str) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.to_string(),
        operator: "In".to_string(),
        values: Some(vec![value.to_string()]),
    }
}

/// The node label each managed Kubernetes service puts on spot nodes (EKS managed node groups,
/// GKE Spot VMs, AKS spot node pools).
fn spot_node_label(provider: &str) -> Option<(&'static str, &'static str)> {
    match provider {
        "aws" => Some(("eks.amazonaws.com/capacityType", "SPOT")),
        "gcp" => Some(("cloud.google.com/gke-spot", "true")),
        "azure" => Some(("kubernetes.azure.com/scalesetpriority", "spot")),
        _ => None,
    }
}

/// Tolerations for the taints GPU nodes carry (the device plugin's resource name, as GKE, AKS
/// and the GPU operator set them) and, on spot, the provider's spot taint.
pub(crate) fn tolerations(placement: &Placement) -> Vec<Toleration> {
    let mut tolerations = vec![Toleration {
        key: Some(placement.gpu_resource.clone()),
        operator: Some("Exists".to_string()),
        effect: Some("NoSchedule".to_string()),
        ..Toleration::default()
    }];
    let spot_taint = match placement.provider.as_str() {
        "gcp" => Some(("cloud.google.com/gke-spot", "true")),
        "azure" => Some(("kubernetes.azure.com/scalesetpriority", "spot")),
        _ => None,
    };
    if let Some((key, value)) = spot_taint.filter(|_| placement.spot) {
        tolerations.push(Toleration {
            key: Some(key.to_string()),
            operator: Some("Equal".to_string()),
            value: Some(value.to_string()),
            effect: Some("NoSchedule".to_string()),
            ..Toleration::default()
        });
    }
    tolerations
}

/// A memory-backed `/dev/shm`: the container runtime's 64 MB default starves data loaders and
/// NCCL.
pub(crate) fn shm_volume() -> (Volume, VolumeMount) {
    (
        Volume {
            name: "shm".to_string(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".to_string()),
                ..EmptyDirVolumeSource::default()
            }),
            ..Volume::default()
        },
        VolumeMount {
            name: "shm".to_string(),
            mount_path: SHM_PATH.to_string(),
            ..VolumeMount::default()
        },
    )
}

/// The pod every workload runs: one container on the planned nodes, with its priority.
/// A claim named `{deployment}-{suffix}` of `gib` in the export's storage class, shared by
/// every node (ReadWriteMany) where the deployment spans several.
pub(crate) fn shared_claim(deployment: &Deployment, suffix: &str, gib: f64) -> PersistentVolumeClaim {
    let access = if deployment.workload.spread_nodes(&deployment.placement) > 1 {
        "ReadWriteMany"
    } else {
        "ReadWriteOnce"
    };
    PersistentVolumeClaim {
        metadata: metadata(deployment, &format!("{}-{suffix}", deployment.name)),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec![access.to_string()]),
            storage_class_name: deployment.storage.class.clone(),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_string(),
                    Quantity(format!("{:.0}Gi", gib.ceil())),
                )])),
                ..VolumeResourceRequirements::default()
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    }
}

/// The pod volume `volume` on the claim `{deployment}-{suffix}`.
pub(crate) fn claim_volume(volume: &str, deployment: &str, suffix: &str) -> Volume {
    Volume {
        name: volume.to_string(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: format!("{deployment}-{suffix}"),
            ..PersistentVolumeClaimVolumeSource::default()
        }),
        ..Volume::default()
    }
}

/// A container that cannot gain privileges and keeps no Linux capability but those it was
/// given (IPC_LOCK where RDMA pins memory). It still runs as the image's user: the CUDA, ROCm
/// and Neuron images run as root and write their caches under it.
pub(crate) fn hardened(mut container: Container) -> Container {
    let mut context = container.security_context.take().unwrap_or_default();
    let added = context.capabilities.take().and_then(|c| c.add);
    context.capabilities = Some(Capabilities {
        add: added,
        drop: Some(vec!["ALL".to_string()]),
    });
    context.allow_privilege_escalation = Some(false);
    container.security_context = Some(context);
    container
}

pub(crate) fn pod_spec(
    placement: &Placement,
    container: Container,
    mut volumes: Vec<Volume>,
    priority_class: &str,
    restart_policy: &str,
) -> PodSpec {
    let (shm, _) = shm_volume();
    volumes.insert(0, shm);
    PodSpec {
        containers: vec![hardened(container)],
        // The engines and trainers never call the Kubernetes API.
        automount_service_account_token: Some(false),
        security_context: Some(PodSecurityContext {
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".to_string(),
                ..SeccompProfile::default()
            }),
            ..PodSecurityContext::default()
        }),
        volumes: Some(volumes),
        affinity: node_affinity(placement),
        tolerations: Some(tolerations(placement)),
        priority_class_name: Some(priority_class.to_string()),
        restart_policy: Some(restart_policy.to_string()),
        ..PodSpec::default()
    }
}
