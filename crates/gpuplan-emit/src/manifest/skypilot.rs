//! A SkyPilot task (and, for SkyServe, its `service:` section): the chosen configuration first,
//! then the plan's other configurations in ranking order, for SkyPilot to fall back on.

use super::{
    Deployment, ENGINE_PORT, ManifestError, ManifestFile, Placement, RENDEZVOUS_PORT, ServingService, Workload, yaml,
};
use serde::Serialize;
use std::collections::BTreeMap;

/// A plain task, or a SkyServe service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkyPilotFlavour {
    Task,
    Service,
}

/// The clouds SkyPilot 0.14 launches on, by gpuplan's provider id.
const SKYPILOT_CLOUDS: &[&str] = &[
    "aws",
    "azure",
    "gcp",
    "ibm",
    "lambda",
    "oci",
    "runpod",
    "vast",
    "cudo",
    "fluidstack",
    "nebius",
    "hyperbolic",
    "seeweb",
    "mithril",
    "verda",
];
/// SkyPilot's default disk, GB; asked for at least.
const MIN_DISK_GB: u64 = 256;
/// Restarts of a managed job after its own errors (interruptions are always recovered).
const RESTARTS_ON_ERRORS: u32 = 3;
/// Seconds SkyServe waits before probing a new replica: weights take minutes to load.
const READINESS_DELAY_SECONDS: u32 = 600;
/// The configurations SkyPilot is offered: the chosen one and a few runners-up.
const MAX_CANDIDATES: usize = 5;

#[derive(Debug, Clone, Serialize)]
struct Task {
    name: String,
    resources: Resources,
    #[serde(skip_serializing_if = "Option::is_none")]
    num_nodes: Option<u32>,
    /// The folder `sky launch` runs from, synced to every node (the training code).
    #[serde(skip_serializing_if = "Option::is_none")]
    workdir: Option<&'static str>,
    /// Checkpoints in a bucket SkyPilot creates and mounts, so a recovered managed job resumes
    /// from the last one instead of from the start.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    file_mounts: BTreeMap<&'static str, BucketMount>,
    envs: BTreeMap<&'static str, String>,
    /// Values passed at launch (`--secret HF_TOKEN`), kept out of the file and the logs.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    secrets: BTreeMap<&'static str, Option<String>>,
    setup: String,
    run: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<Service>,
}

#[derive(Debug, Clone, Serialize)]
struct BucketMount {
    name: String,
    mode: &'static str,
}

#[derive(Debug, Clone, Serialize)]
struct Resources {
    use_spot: bool,
    disk_size: u64,
    /// `best` asks SkyPilot for the cloud's fast interconnect (EFA, GPUDirect-TCPX,
    /// InfiniBand) between the nodes of a multi-node task.
    #[serde(skip_serializing_if = "Option::is_none")]
    network_tier: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ports: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    job_recovery: Option<JobRecovery>,
    ordered: Vec<Candidate>,
}

#[derive(Debug, Clone, Serialize)]
struct Candidate {
    infra: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    instance_type: Option<String>,
    accelerators: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    accelerator_args: Option<AcceleratorArgs>,
}

/// A TPU VM's software: the runtime Google names for the chip (Cloud TPU "TPU software
/// versions", cloud.google.com/tpu/docs/runtimes: `v2-alpha-tpuv6e`, `v2-alpha-tpuv5`,
/// `v2-alpha-tpuv5-lite`, `tpu-ubuntu2204-base` for v4), set rather than left to SkyPilot's
/// default.
#[derive(Debug, Clone, Serialize)]
struct AcceleratorArgs {
    runtime_version: &'static str,
}

/// SkyPilot's TPU runtime for the catalog's TPU accelerator, where known.
fn tpu_runtime(gpu: &str) -> Option<&'static str> {
    match gpu {
        "TPU-v6e" => Some("v2-alpha-tpuv6e"),
        "TPU-v5p" => Some("v2-alpha-tpuv5"),
        "TPU-v5e" => Some("v2-alpha-tpuv5-lite"),
        "TPU-v4" => Some("tpu-ubuntu2204-base"),
        _ => None,
    }
}

#[derive(Debug, Clone, Serialize)]
struct JobRecovery {
    strategy: &'static str,
    max_restarts_on_errors: u32,
}

#[derive(Debug, Clone, Serialize)]
struct Service {
    readiness_probe: ReadinessProbe,
    replica_policy: ReplicaPolicy,
}

#[derive(Debug, Clone, Serialize)]
struct ReadinessProbe {
    path: &'static str,
    initial_delay_seconds: u32,
}

#[derive(Debug, Clone, Serialize)]
struct ReplicaPolicy {
    min_replicas: u32,
    max_replicas: u32,
    target_qps_per_replica: f64,
    /// Replicas SkyServe keeps on on-demand capacity beside the spot ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    base_ondemand_fallback_replicas: Option<u32>,
}

/// `provider/region` where SkyPilot knows the cloud; `None` where it does not launch there.
fn infra(placement: &Placement) -> Option<String> {
    let cloud = SKYPILOT_CLOUDS.iter().find(|c| **c == placement.provider)?;
    Some(match placement.region.as_deref() {
        Some(region) if region != "default" && !region.contains('/') => format!("{cloud}/{region}"),
        _ => (*cloud).to_string(),
    })
}

/// One configuration SkyPilot may launch; the instance type is named only when a task fills it
/// (a SkyServe replica may need fewer GPUs than the planned node packs).
fn candidate(placement: &Placement, gpus: u32, whole_node: bool) -> Option<Candidate> {
    if placement.tpu.is_some() {
        // SkyPilot names a TPU slice as one accelerator (`tpu-v5litepod-64`) and picks the
        // TPU VM itself; it runs the task on every host of the slice.
        return Some(Candidate {
            infra: infra(placement)?,
            instance_type: None,
            accelerators: format!("tpu-{}", placement.instance_type),
            accelerator_args: tpu_runtime(&placement.gpu).map(|runtime_version| AcceleratorArgs { runtime_version }),
        });
    }
    Some(Candidate {
        infra: infra(placement)?,
        instance_type: whole_node.then(|| placement.instance_type.clone()),
        accelerators: format!("{}:{gpus}", placement.skypilot_accelerator),
        accelerator_args: None,
    })
}

pub fn skypilot_task(
    deployment: &Deployment,
    flavour: SkyPilotFlavour,
    disk_gb: u64,
) -> Result<ManifestFile, ManifestError> {
    let p = &deployment.placement;
    if infra(p).is_none() {
        return Err(ManifestError(format!(
            "SkyPilot does not launch on {}; export another configuration (--pick) or to k8s",
            p.provider
        )));
    }
    // Fallbacks run the same script on the same cluster shape: the same accelerator, as many
    // per node, as many nodes; only the place (region, cloud) differs.
    let same_shape =
        |a: &Placement| a.nodes == p.nodes && a.spot == p.spot && a.gpu == p.gpu && a.gpus_per_node == p.gpus_per_node;
    let (task, header) = match &deployment.workload {
        Workload::Training(job) => {
            let mut ordered: Vec<Candidate> = std::iter::once(p)
                .chain(deployment.alternatives.iter().filter(|a| same_shape(a)))
                .filter_map(|a| candidate(a, a.gpus_per_node, true))
                .collect();
            ordered.truncate(MAX_CANDIDATES);
            let run = if p.tpu.is_some() {
                format!("PJRT_DEVICE=TPU python3 {}\n", job.script.join(" "))
            } else {
                let nproc = ranks_of(p, p.gpus_per_node);
                let torchrun = format!(
                    "torchrun --nnodes=$SKYPILOT_NUM_NODES --nproc_per_node={nproc} --node_rank=$SKYPILOT_NODE_RANK --master_addr=$MASTER_ADDR --master_port={RENDEZVOUS_PORT} {}",
                    job.script.join(" ")
                );
                let master = "MASTER_ADDR=$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)";
                if vendor_image(p) {
                    // The vendor's image carries the ROCm or Neuron PyTorch the VM lacks: the
                    // synced workdir and the checkpoint mount run inside it, on the host's
                    // network and devices. The host's shell fills in SkyPilot's variables.
                    format!(
                        "{master}\ndocker run --privileged --net host --ipc host --shm-size 16g -e CHECKPOINT_DIR -v $HOME/sky_workdir:/workdir -v /checkpoints:/checkpoints -w /workdir {} bash -c \"pip install -r requirements.txt && {torchrun}\"\n",
                        deployment.image
                    )
                } else {
                    format!("{master}\n{torchrun}\n")
                }
            };
            let task = Task {
                name: deployment.name.clone(),
                resources: Resources {
                    use_spot: p.spot,
                    disk_size: disk_gb.max(MIN_DISK_GB),
                    network_tier: (p.nodes > 1).then_some("best"),
                    ports: None,
                    // A managed job recovers from a reclaimed spot node, and a job across nodes
                    // from a node or NCCL failure, from its last checkpoint.
                    job_recovery: (p.spot || p.nodes > 1).then_some(JobRecovery {
                        strategy: "EAGER_NEXT_REGION",
                        max_restarts_on_errors: RESTARTS_ON_ERRORS,
                    }),
                    ordered,
                },
                num_nodes: (p.nodes > 1).then_some(p.nodes),
                workdir: Some("."),
                // Bucket names are global: the default carries a digest of the configuration,
                // and `--env CHECKPOINT_BUCKET=…` chooses another. Writes land in a local cache
                // and are uploaded behind them (MOUNT_CACHED), as SkyPilot advises for
                // checkpoints; a plain MOUNT writes through FUSE at the training step's pace.
                file_mounts: BTreeMap::from([(
                    "/checkpoints",
                    BucketMount {
                        name: "${CHECKPOINT_BUCKET}".to_string(),
                        mode: "MOUNT_CACHED",
                    },
                )]),
                envs: BTreeMap::from([
                    ("CHECKPOINT_DIR", "/checkpoints".to_string()),
                    ("CHECKPOINT_BUCKET", checkpoint_bucket(deployment)),
                ]),
                secrets: BTreeMap::new(),
                setup: if vendor_image(p) {
                    format!("docker pull {}\n", deployment.image)
                } else {
                    "pip install -r requirements.txt\n".to_string()
                },
                run,
                service: None,
            };
            let shape = match &p.tpu {
                Some(slice) => format!(
                    "a {} slice ({} × {} on {} host{}: SkyPilot runs the task on every host)",
                    p.instance_type,
                    p.gpus_per_node * p.nodes,
                    p.gpu,
                    slice.hosts,
                    if slice.hosts == 1 { "" } else { "s" }
                ),
                None => format!(
                    "{} × {} per node, {} node{}",
                    p.gpus_per_node,
                    p.gpu,
                    p.nodes,
                    if p.nodes == 1 { "" } else { "s" }
                ),
            };
            let header = format!(
                "gpuplan: {} on {shape}{}. Run it from your training code's folder (workdir);\nreplace setup and the training command with yours. Checkpoints go to the bucket CHECKPOINT_BUCKET\nnames, which SkyPilot creates (names are global: `--env CHECKPOINT_BUCKET=<yours>` to choose one);\nlaunch it as a managed job (`sky jobs launch`) so a reclaimed or failed node resumes from the last one.",
                deployment.name,
                if p.spot { ", spot" } else { "" },
            );
            (task, header)
        }
        Workload::Serving(service) => {
            let whole = service.gpus_per_replica == p.gpus_per_node && p.nodes == service.replicas;
            // Only the same accelerator: the replica policy's target rate is that GPU's.
            let mut ordered: Vec<Candidate> = std::iter::once(p)
                .chain(deployment.alternatives.iter().filter(|a| a.gpu == p.gpu))
                .filter_map(|a| candidate(a, service.gpus_per_replica, whole && a == p))
                .collect();
            // One entry per place and accelerator: SkyPilot picks the instance type there.
            let mut seen = std::collections::BTreeSet::new();
            ordered.retain(|c| seen.insert((c.infra.clone(), c.accelerators.clone())));
            ordered.truncate(MAX_CANDIDATES);
            let task = Task {
                name: deployment.name.clone(),
                resources: Resources {
                    use_spot: p.spot,
                    disk_size: disk_gb.max(MIN_DISK_GB),
                    network_tier: None,
                    ports: Some(ENGINE_PORT),
                    job_recovery: None,
                    ordered,
                },
                num_nodes: None,
                workdir: None,
                file_mounts: BTreeMap::new(),
                envs: BTreeMap::from([("MODEL_ID", service.served_model.clone())]),
                // Gated models (Llama, Gemma) download only with a Hugging Face token.
                secrets: BTreeMap::from([("HF_TOKEN", None)]),
                setup: serving_setup(&deployment.image, &p.gpu_resource),
                run: serving_run(service, &deployment.image, p),
                service: (flavour == SkyPilotFlavour::Service).then(|| Service {
                    readiness_probe: ReadinessProbe {
                        path: "/health",
                        initial_delay_seconds: READINESS_DELAY_SECONDS,
                    },
                    replica_policy: ReplicaPolicy {
                        min_replicas: service.min_replicas,
                        max_replicas: service.max_replicas,
                        target_qps_per_replica: (service.target_qps_per_replica * 100.0).round() / 100.0,
                        base_ondemand_fallback_replicas: service.on_demand_floor_replicas.filter(|_| p.spot),
                    },
                }),
            };
            let header = format!(
                "gpuplan: {} serving {}: {}–{} replicas of {} × {} at {:.1} requests/s each.{}",
                deployment.name,
                service.served_model,
                service.min_replicas,
                service.max_replicas,
                service.gpus_per_replica,
                p.gpu,
                service.target_qps_per_replica,
                match service.on_demand_floor_replicas.filter(|_| p.spot) {
                    Some(floor) => format!(
                        "\nSpot with a floor: {} on on-demand capacity (a reservation or commitment for the instance type applies to them), the rest on spot.",
                        gpuplan_model::counted(floor, "replica", "replicas")
                    ),
                    None => String::new(),
                },
            );
            (task, header)
        }
    };
    if flavour == SkyPilotFlavour::Service && task.service.is_none() {
        return Err(ManifestError(
            "a SkyServe service serves a model: plan with --task inference, or export skypilot".to_string(),
        ));
    }
    Ok(ManifestFile {
        name: if flavour == SkyPilotFlavour::Service {
            "service.yaml"
        } else {
            "task.yaml"
        }
        .to_string(),
        yaml: yaml(
            // A training task on NVIDIA GPUs runs on the VM's own software; serving, and
            // training on other accelerators, pull the image.
            &match (&deployment.image_note, &deployment.workload) {
                (Some(note), Workload::Serving(_)) => format!("{header}\n{note}"),
                (Some(note), Workload::Training(_)) if vendor_image(p) => format!("{header}\n{note}"),
                _ => header,
            },
            &task,
        )?,
        alternative: false,
    })
}

/// A bucket name for the configuration's checkpoints: its name and a digest of where and how
/// it runs (FNV-1a), within the 63 characters S3 and GCS allow, lowercase.
fn checkpoint_bucket(deployment: &Deployment) -> String {
    let p = &deployment.placement;
    let key = format!(
        "{}|{}|{}|{}|{}|{}",
        deployment.name,
        p.provider,
        p.instance_type,
        p.region.as_deref().unwrap_or_default(),
        p.nodes,
        p.spot
    );
    let digest = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let stem: String = deployment.name.chars().take(40).collect();
    format!("{}-ckpt-{:08x}", stem.trim_end_matches('-'), digest & 0xffff_ffff)
}

/// The ranks (torchrun workers, vLLM's tensor-parallel size) of `devices` devices, as a task
/// writes them: SkyPilot's own count of the node's accelerators where a device is one rank, the
/// number itself on Neuron, whose devices are several NeuronCores SkyPilot does not count.
fn ranks_of(p: &Placement, devices: u32) -> String {
    if p.ranks_per_device > 1 {
        p.ranks(devices).to_string()
    } else {
        "$SKYPILOT_NUM_GPUS_PER_NODE".to_string()
    }
}

/// Whether a training task runs in the vendor's image: on AMD and Neuron hosts, whose VM
/// images carry no ROCm or Neuron PyTorch to `pip install` the script's requirements over (a
/// TPU slice runs PyTorch/XLA from its own runtime; NVIDIA hosts run the VM's CUDA).
fn vendor_image(p: &Placement) -> bool {
    p.tpu.is_none() && p.gpu_resource != "nvidia.com/gpu"
}

/// The engine's installation for a service: on NVIDIA GPUs the vLLM release the catalog's
/// image carries (`vllm/vllm-openai:v0.11.0` → `pip install vllm==0.11.0`); on other
/// accelerators nothing, as the vendor's image runs the engine (see [`serving_run`]).
fn serving_setup(image: &str, gpu_resource: &str) -> String {
    if gpu_resource != "nvidia.com/gpu" {
        return format!("docker pull {image}\n");
    }
    match image.rsplit_once(":v").map(|(_, version)| version) {
        Some(version) if image.starts_with("vllm/vllm-openai:") => format!("pip install vllm=={version}\n"),
        _ => "pip install vllm\n".to_string(),
    }
}

/// The engine's command with the plan's arguments: `vllm serve` on NVIDIA GPUs; elsewhere
/// the vendor's vLLM image run as a task (SkyPilot's documented way to run an invocable
/// container), privileged and on the host's network so that it sees the ROCm, Neuron or TPU
/// devices and serves on the replica's port.
fn serving_run(service: &ServingService, image: &str, p: &Placement) -> String {
    let args = service.engine_args(&ranks_of(p, service.gpus_per_replica)).join(" ");
    if p.gpu_resource == "nvidia.com/gpu" {
        return format!("vllm serve $MODEL_ID {args}\n");
    }
    format!(
        "docker run --privileged --net host --ipc host --shm-size 16g -e HF_TOKEN -v $HOME/.cache/huggingface:/root/.cache/huggingface {image} vllm serve $MODEL_ID {args}\n"
    )
}
