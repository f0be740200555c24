//! Kubernetes, training: a priority class, a checkpoint volume sized from the estimate, and a
//! Job for one node; for several, an indexed Job with a headless Service, a JobSet or a
//! Kubeflow PyTorchJob, with torchrun's rendezvous set up.

use super::kubernetes::{TrainingFlavour, claim_volume, metadata, pod_spec, priority_class, shared_claim, shm_volume};
use super::{Deployment, Fabric, ManifestError, ManifestFile, Placement, RENDEZVOUS_PORT, TrainingJob, yaml};
use k8s_openapi::api::batch::v1::{
    Job, JobSpec, JobTemplateSpec, PodFailurePolicy, PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, EnvVar, EnvVarSource, ObjectFieldSelector, PersistentVolumeClaim, PodTemplateSpec,
    SecurityContext, Service, ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// Checkpoints kept on the volume: the last complete one and the one being written.
const CHECKPOINTS_KEPT: f64 = 2.0;
/// Room on the checkpoint volume beyond the checkpoints (logs, optimizer shards' metadata).
const VOLUME_HEADROOM: f64 = 1.2;
/// Smallest checkpoint volume asked for, GiB.
const MIN_VOLUME_GIB: f64 = 10.0;
/// Retries of a failed pod: interruptions are expected on spot capacity.
pub(crate) const BACKOFF_LIMIT_SPOT: i32 = 6;
pub(crate) const BACKOFF_LIMIT: i32 = 2;
/// Where checkpoints are written.
const CHECKPOINT_PATH: &str = "/checkpoints";
/// The annotation an indexed Job gives each pod: its index, 0 to completions − 1.
const COMPLETION_INDEX: &str = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

pub(crate) fn manifests(
    deployment: &Deployment,
    job: &TrainingJob,
    flavour: TrainingFlavour,
) -> Result<Vec<ManifestFile>, ManifestError> {
    if deployment.placement.tpu.as_ref().is_some_and(|slice| slice.hosts > 1) && flavour == TrainingFlavour::PyTorchJob
    {
        return Err(ManifestError(
            "Kubeflow's PyTorchJob launches torchrun, which a multi-host TPU slice does not run: export --flavour indexed-job or jobset".to_string(),
        ));
    }
    let hosts = tpu_hosts(deployment);
    let deployment = hosts.as_ref().unwrap_or(deployment);
    let name = &deployment.name;
    let priority = format!("{name}-training");
    let header = header(deployment, job);
    let mut files = vec![
        file(
            "priorityclass.yaml",
            &header,
            &priority_class(deployment, &priority, true),
        )?,
        file("pvc.yaml", &header, &checkpoint_volume(deployment, job))?,
    ];
    let nodes = deployment.placement.nodes;
    if nodes <= 1 {
        files.push(file("job.yaml", &header, &single_node_job(deployment, job, &priority))?);
        return Ok(files);
    }
    match flavour {
        TrainingFlavour::IndexedJob => {
            files.push(file("service.yaml", &header, &headless_service(deployment))?);
            files.push(file("job.yaml", &header, &indexed_job(deployment, job, &priority))?);
        }
        TrainingFlavour::JobSet => {
            let template = job_template(deployment, job, &priority, &format!("{name}-node-0-0.{name}"));
            files.push(file(
                "jobset.yaml",
                &header,
                &super::jobset::jobset(deployment, template),
            )?);
        }
        TrainingFlavour::PyTorchJob => {
            let container = container(
                deployment,
                super::pytorchjob::CONTAINER_NAME,
                operator_launch(job),
                Vec::new(),
            );
            let template = training_template(deployment, container, &priority, "OnFailure");
            files.push(file(
                "pytorchjob.yaml",
                &header,
                &super::pytorchjob::pytorch_job(deployment, template),
            )?);
        }
    }
    Ok(files)
}

fn header(deployment: &Deployment, job: &TrainingJob) -> String {
    let p = &deployment.placement;
    let time = job
        .expected_seconds
        .map_or(String::new(), |s| format!(", about {:.1} h", s / 3600.0));
    let storage: String = deployment
        .image_note
        .iter()
        .cloned()
        .chain(deployment.storage.note.iter().cloned())
        .chain(super::kubernetes::affinity_note(p))
        .chain(fabric_note(p))
        .chain(p.tpu.as_ref().map(|slice| {
            format!(
                "TPU slice {}: {} GKE node{} ({}) of {} chips, topology {}; PyTorch/XLA runs the script on every host (PJRT_DEVICE=TPU, one process per chip from torch_xla.launch), the hosts found through GKE's TPU_WORKER_ID and TPU_WORKER_HOSTNAMES.",
                p.instance_type,
                slice.hosts,
                if slice.hosts == 1 { "" } else { "s" },
                slice.machine_type,
                slice.chips_per_host,
                slice.topology
            )
        }))
        .map(|note| format!("\n{note}"))
        .collect();
    format!(
        "gpuplan: {} on {} × {} ({} {}{}, {} node{}){time}.\nReplace the training command (`{}`) with yours.{storage}",
        deployment.name,
        p.gpus_per_node * p.nodes,
        p.gpu,
        p.provider,
        p.instance_type,
        if p.spot { ", spot" } else { "" },
        p.nodes,
        if p.nodes == 1 { "" } else { "s" },
        job.script.join(" "),
    )
}

fn file<T: serde::Serialize>(name: &str, header: &str, value: &T) -> Result<ManifestFile, ManifestError> {
    Ok(ManifestFile {
        name: name.to_string(),
        yaml: yaml(header, value)?,
        alternative: false,
    })
}

/// Room for two checkpoints and some headroom, shared by every node when there are several.
fn checkpoint_volume(deployment: &Deployment, job: &TrainingJob) -> PersistentVolumeClaim {
    let gib =
        (job.checkpoint_bytes as f64 * CHECKPOINTS_KEPT * VOLUME_HEADROOM / f64::from(1u32 << 30)).max(MIN_VOLUME_GIB);
    shared_claim(deployment, "checkpoints", gib)
}

fn checkpoint_mount_volume(name: &str) -> Volume {
    claim_volume("checkpoints", name, "checkpoints")
}

fn env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value.to_string()),
        ..EnvVar::default()
    }
}

/// The training container: the GPUs, shared memory, the checkpoint volume and `command`.
fn container(deployment: &Deployment, name: &str, command: Vec<String>, mut extra_env: Vec<EnvVar>) -> Container {
    let p = &deployment.placement;
    let (_, shm_mount) = shm_volume();
    let mut environment = vec![env("CHECKPOINT_DIR", CHECKPOINT_PATH)];
    if p.tpu.is_some() {
        environment.push(env("PJRT_DEVICE", "TPU"));
    }
    environment.append(&mut extra_env);
    let mut resources = super::kubernetes::gpu_resources(p, p.gpus_per_node);
    let fabric = requested_fabric(p);
    let command = match fabric {
        Some(Fabric::GkeRdma) => super::gke_rdma::wrap(command),
        Some(Fabric::GkeTcp(path)) => path.wrap(command),
        _ => command,
    };
    if let Some(fabric) = fabric {
        environment.extend(fabric_env(fabric));
        if let Some((resource, count)) = fabric_devices(fabric) {
            for list in [resources.limits.as_mut(), resources.requests.as_mut()]
                .into_iter()
                .flatten()
            {
                list.insert(resource.to_string(), Quantity(count.to_string()));
            }
        }
    }
    Container {
        name: name.to_string(),
        image: Some(deployment.image.clone()),
        command: Some(command),
        env: Some(environment),
        resources: Some(resources),
        // RDMA registers (pins) memory, which a container may do only with IPC_LOCK.
        security_context: fabric.filter(|f| pins_memory(f)).map(|_| SecurityContext {
            capabilities: Some(Capabilities {
                add: Some(vec!["IPC_LOCK".to_string()]),
                ..Capabilities::default()
            }),
            ..SecurityContext::default()
        }),
        volume_mounts: Some(
            [
                shm_mount,
                VolumeMount {
                    name: "checkpoints".to_string(),
                    mount_path: CHECKPOINT_PATH.to_string(),
                    ..VolumeMount::default()
                },
            ]
            .into_iter()
            .chain(fabric.map(fabric_mounts).into_iter().flatten())
            .collect(),
        ),
        ..Container::default()
    }
}

/// The fabric the pods ask for: the plan's, across nodes, where these files can ask for it.
fn requested_fabric(p: &Placement) -> Option<&Fabric> {
    p.fabric
        .as_ref()
        .filter(|f| p.nodes > 1 && !matches!(f, Fabric::NotRequested { .. }))
}

/// A training pod: its container, the checkpoint volume, and what the fabric adds to the pod
/// (GKE's network annotations, node folders and the TCPX daemon).
fn training_template(deployment: &Deployment, container: Container, priority: &str, restart: &str) -> PodTemplateSpec {
    let fabric = requested_fabric(&deployment.placement);
    let mut volumes = vec![checkpoint_mount_volume(&deployment.name)];
    let (annotations, sidecar) = match fabric {
        Some(Fabric::GkeRdma) => {
            volumes.extend(super::gke_rdma::volumes());
            (Some(super::gke_rdma::annotations()), None)
        }
        Some(Fabric::GkeTcp(path)) => {
            volumes.extend(path.volumes());
            (Some(path.annotations()), Some(path.sidecar()))
        }
        Some(Fabric::Rdma {
            devices: Some(n),
            attachment: Some(network),
            ..
        }) => (Some(multus_networks(network, *n)), None),
        _ => (None, None),
    };
    let mut spec = pod_spec(&deployment.placement, container, volumes, priority, restart);
    spec.init_containers = sidecar.map(|c| vec![super::kubernetes::hardened(c)]);
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(super::kubernetes::labels(deployment)),
            annotations,
            ..ObjectMeta::default()
        }),
        spec: Some(spec),
    }
}

/// Multus' annotation attaching `count` interfaces of `network` to the pod.
fn multus_networks(network: &str, count: u32) -> BTreeMap<String, String> {
    let list = vec![network; count as usize].join(",");
    BTreeMap::from([("k8s.v1.cni.cncf.io/networks".to_string(), list)])
}

/// Whether the trainer pins memory for `fabric` (RDMA registration), which needs IPC_LOCK.
fn pins_memory(fabric: &Fabric) -> bool {
    match fabric {
        Fabric::Efa { .. } | Fabric::Rdma { .. } | Fabric::GkeRdma => true,
        Fabric::GkeTcp(path) => path.pins_memory(),
        Fabric::NotRequested { .. } => false,
    }
}

/// The node folders the trainer mounts for `fabric`.
fn fabric_mounts(fabric: &Fabric) -> Vec<VolumeMount> {
    match fabric {
        Fabric::GkeRdma => super::gke_rdma::mounts(),
        Fabric::GkeTcp(path) => path.mounts(),
        _ => Vec::new(),
    }
}

/// The device-plugin resource and count a pod requests to use `fabric`: the AWS EFA
/// Kubernetes device plugin's `vpc.amazonaws.com/efa`, one per interface the instance attaches;
/// an RDMA device plugin's resource, one per NIC.
fn fabric_devices(fabric: &Fabric) -> Option<(&'static str, u32)> {
    match fabric {
        Fabric::Efa { devices } => devices.map(|n| ("vpc.amazonaws.com/efa", n)),
        Fabric::Rdma { resource, devices, .. } => devices.map(|n| (*resource, n)),
        Fabric::GkeRdma | Fabric::GkeTcp(_) | Fabric::NotRequested { .. } => None,
    }
}

/// The environment NCCL needs to use `fabric` rather than fall back to TCP sockets:
/// libfabric's EFA provider (the image must carry the AWS OFI NCCL plugin, which also turns
/// GPUDirect RDMA on where the instance has it). Over RDMA NICs NCCL's own InfiniBand
/// transport is taken by default once the devices are in the pod.
fn fabric_env(fabric: &Fabric) -> Vec<EnvVar> {
    match fabric {
        Fabric::Efa { .. } => vec![env("FI_PROVIDER", "efa")],
        Fabric::GkeRdma => super::gke_rdma::env(),
        Fabric::GkeTcp(path) => path.env(),
        Fabric::Rdma { env: settings, .. } => settings.iter().map(|(name, value)| env(name, value)).collect(),
        Fabric::NotRequested { .. } => Vec::new(),
    }
}

/// What the reader must know about the fabric: what the cluster needs for it, or that these
/// files do not request it.
fn fabric_note(p: &Placement) -> Option<String> {
    match p.fabric.as_ref().filter(|_| p.nodes > 1)? {
        Fabric::Efa { devices } => Some(format!(
            "EFA: the pods ask the AWS EFA device plugin for {} and may pin memory (IPC_LOCK); libfabric needs a large locked-memory limit, which EKS's AL2023 AMI leaves at containerd's default (Bottlerocket raises it when EFA is attached): raise the nodes' memlock limit (containerd's base runtime spec) if NCCL reports EFA memory-registration errors (-12).",
            devices.map_or("the instance's EFA interfaces".to_string(), |n| format!(
                "the instance's {n} EFA interfaces"
            )),
        )),
        Fabric::Rdma { setup, .. } => Some(setup.to_string()),
        Fabric::GkeRdma => Some(super::gke_rdma::SETUP.to_string()),
        Fabric::GkeTcp(path) => Some(path.setup().to_string()),
        Fabric::NotRequested { what, how } => Some(format!(
            "WARNING: the plan priced {what} between nodes; these pods do not request it, so NCCL runs over TCP on the pod network. {how}"
        )),
    }
}

/// A TPU slice's deployment as the nodes GKE makes of it: its hosts, each with its share of
/// the chips, vCPUs and memory; `None` where the configuration is no TPU slice.
fn tpu_hosts(deployment: &Deployment) -> Option<Deployment> {
    let slice = deployment.placement.tpu.as_ref()?;
    let mut hosts = deployment.clone();
    let p = &mut hosts.placement;
    let share = f64::from(slice.hosts.max(1));
    p.nodes = slice.hosts;
    p.gpus_per_node = slice.chips_per_host;
    p.vcpus_per_node = p.vcpus_per_node.map(|v| (f64::from(v) / share).floor() as u32);
    p.memory_gib_per_node = p.memory_gib_per_node.map(|m| m / share);
    Some(hosts)
}

/// The training command on one node: torchrun with `rendezvous`, or on a TPU host the script
/// itself, which PyTorch/XLA runs on every host at once (one process per chip, from
/// `torch_xla.launch`; the hosts find each other through GKE's `TPU_WORKER_*` variables).
fn launch(deployment: &Deployment, rendezvous: &[String], script: &[String]) -> Vec<String> {
    if deployment.placement.tpu.is_some() {
        let mut command = vec!["python3".to_string()];
        command.extend(script.iter().cloned());
        return command;
    }
    torchrun(deployment.placement.ranks_per_node(), rendezvous, script)
}

fn torchrun(nproc: u32, rendezvous: &[String], script: &[String]) -> Vec<String> {
    let mut command = vec!["torchrun".to_string(), format!("--nproc_per_node={nproc}")];
    command.extend(rendezvous.iter().cloned());
    command.extend(script.iter().cloned());
    command
}

/// The operator sets torchrun's rendezvous through `PET_*` variables.
fn operator_launch(job: &TrainingJob) -> Vec<String> {
    let mut command = vec!["torchrun".to_string()];
    command.extend(job.script.iter().cloned());
    command
}

fn single_node_job(deployment: &Deployment, job: &TrainingJob, priority: &str) -> Job {
    let command = launch(deployment, &["--standalone".to_string()], &job.script);
    Job {
        metadata: metadata(deployment, &deployment.name),
        spec: Some(JobSpec {
            backoff_limit: Some(backoff_limit(deployment)),
            pod_failure_policy: Some(disruptions_ignored()),
            template: pod_template(
                deployment,
                container(deployment, "train", command, Vec::new()),
                priority,
            ),
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

/// Pods stopped by a disruption (a spot reclaim, a preemption, a node drain) do not count
/// against the backoff limit: the Job restarts them from the last checkpoint instead of
/// failing after a few reclaims.
fn disruptions_ignored() -> PodFailurePolicy {
    PodFailurePolicy {
        rules: vec![PodFailurePolicyRule {
            action: "Ignore".to_string(),
            on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                type_: "DisruptionTarget".to_string(),
                status: "True".to_string(),
            }]),
            ..PodFailurePolicyRule::default()
        }],
    }
}

pub(crate) fn backoff_limit(deployment: &Deployment) -> i32 {
    if deployment.placement.spot {
        BACKOFF_LIMIT_SPOT
    } else {
        BACKOFF_LIMIT
    }
}

fn pod_template(deployment: &Deployment, container: Container, priority: &str) -> PodTemplateSpec {
    training_template(deployment, container, priority, "Never")
}

/// The container of every node of a multi-node job: torchrun with a static rendezvous at
/// node 0, each node's rank its completion index.
fn rendezvous_container(deployment: &Deployment, job: &TrainingJob, master: &str) -> Container {
    let p = &deployment.placement;
    let rendezvous = [
        "--nnodes=$(NNODES)".to_string(),
        "--node_rank=$(NODE_RANK)".to_string(),
        "--master_addr=$(MASTER_ADDR)".to_string(),
        format!("--master_port={RENDEZVOUS_PORT}"),
    ];
    let node_rank = EnvVar {
        name: "NODE_RANK".to_string(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: COMPLETION_INDEX.to_string(),
                ..ObjectFieldSelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    };
    if p.tpu.is_some() {
        return container(deployment, "train", launch(deployment, &[], &job.script), Vec::new());
    }
    container(
        deployment,
        "train",
        launch(deployment, &rendezvous, &job.script),
        vec![
            env("NNODES", &p.nodes.to_string()),
            env("MASTER_ADDR", master),
            node_rank,
        ],
    )
}

/// An indexed Job of `nodes` pods, all started together.
fn job_template(deployment: &Deployment, job: &TrainingJob, priority: &str, master: &str) -> JobTemplateSpec {
    let nodes = i32::try_from(deployment.placement.nodes).unwrap_or(i32::MAX);
    JobTemplateSpec {
        metadata: None,
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".to_string()),
            completions: Some(nodes),
            parallelism: Some(nodes),
            backoff_limit: Some(backoff_limit(deployment)),
            pod_failure_policy: Some(disruptions_ignored()),
            template: pod_template(deployment, rendezvous_container(deployment, job, master), priority),
            ..JobSpec::default()
        }),
    }
}

fn indexed_job(deployment: &Deployment, job: &TrainingJob, priority: &str) -> Job {
    let name = &deployment.name;
    let mut spec = job_template(deployment, job, priority, &format!("{name}-0.{name}"))
        .spec
        .unwrap_or_default();
    if let Some(pod) = spec.template.spec.as_mut() {
        // Each pod is reachable as <job>-<index>.<service>.
        pod.subdomain = Some(name.clone());
    }
    Job {
        metadata: metadata(deployment, name),
        spec: Some(spec),
        ..Job::default()
    }
}

/// The headless Service that gives each pod of the indexed Job a DNS name.
fn headless_service(deployment: &Deployment) -> Service {
    Service {
        metadata: metadata(deployment, &deployment.name),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_string()),
            selector: Some(BTreeMap::from([("job-name".to_string(), deployment.name.clone())])),
            ports: Some(vec![ServicePort {
                name: Some("rendezvous".to_string()),
                port: RENDEZVOUS_PORT,
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}
