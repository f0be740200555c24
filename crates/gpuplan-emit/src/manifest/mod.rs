//! Deployment files for a chosen configuration: Kubernetes (with KEDA for serving) and
//! SkyPilot/SkyServe. Each is built from typed values (the `k8s-openapi` types for core
//! Kubernetes objects, typed structs for custom resources and SkyPilot) and only then written
//! as YAML, so a file cannot come out malformed.

mod gke_rdma;
mod gke_tcpx;
mod gke_tpu;
mod jobset;
mod keda;
mod kubernetes;
mod kubernetes_serving;
mod kubernetes_training;
mod pod_monitor;
mod pytorchjob;
mod skypilot;

pub use gke_tcpx::GpuDirectTcp;
pub use gke_tpu::{TpuSlice, tpu_slice};
pub use kubernetes::{TrainingFlavour, kubernetes_manifests};
pub use skypilot::{SkyPilotFlavour, skypilot_task};

use serde::Serialize;

/// One file of an export: its name and its YAML text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFile {
    pub name: String,
    pub yaml: String,
    /// An alternative to other files (an HPA where KEDA is not installed): written to a folder,
    /// left out of a stream meant for `kubectl apply -f -`.
    pub alternative: bool,
}

/// The subfolder of an export folder that holds the alternatives (the HPA for clusters without
/// KEDA), so that `kubectl apply -f DIR`, which does not descend into folders, applies the rest
/// and not both autoscalers.
pub const ALTERNATIVES: &str = "alternatives";

/// The files to apply as one YAML stream (`kubectl apply -f -`); the alternatives are named in
/// a closing comment, not applied with the rest.
pub fn yaml_stream(files: &[ManifestFile]) -> String {
    let mut text = String::new();
    for file in files.iter().filter(|f| !f.alternative) {
        if !text.is_empty() {
            text.push_str("---\n");
        }
        text.push_str(&format!("# {}\n{}", file.name, file.yaml));
    }
    for file in files.iter().filter(|f| f.alternative) {
        text.push_str(&format!(
            "# {ALTERNATIVES}/{} is an alternative, not applied with the rest: written beside the others when the files are saved to a folder\n",
            file.name
        ));
    }
    text
}

/// Where one configuration runs: one row of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub provider: String,
    pub region: Option<String>,
    pub instance_type: String,
    /// Accelerator id in the catalog (`H100-SXM5-80GB`).
    pub gpu: String,
    /// The device plugin's resource: `nvidia.com/gpu`, `amd.com/gpu`, `aws.amazon.com/neuron`.
    pub gpu_resource: String,
    /// GPU Feature Discovery's `nvidia.com/gpu.product` value, where known.
    pub gpu_product_label: Option<String>,
    /// SkyPilot's name for the accelerator (`H100`, `A100-80GB`).
    pub skypilot_accelerator: String,
    pub gpus_per_node: u32,
    /// Worker processes and tensor-parallel ranks one device hosts: 2 NeuronCores on a
    /// Trainium or Inferentia2 chip, 4 logical ones on Trainium2, 1 on a GPU.
    pub ranks_per_device: u32,
    pub nodes: u32,
    pub spot: bool,
    /// The instance's vCPUs and memory, where the catalog knows them: each pod requests its
    /// GPUs' share, so that it is not the first to be evicted.
    pub vcpus_per_node: Option<u32>,
    pub memory_gib_per_node: Option<f64>,
    /// The network between nodes the plan priced, where it needs asking for.
    pub fabric: Option<Fabric>,
    /// A Cloud TPU slice's shape on GKE, where the configuration is one.
    pub tpu: Option<TpuSlice>,
}

impl Placement {
    /// Worker processes one node runs (torchrun's `--nproc_per_node`): a rank per core the
    /// software addresses, not per device the device plugin counts.
    pub fn ranks_per_node(&self) -> u32 {
        self.gpus_per_node * self.ranks_per_device.max(1)
    }

    /// Tensor-parallel ranks of a replica of `devices` devices (vLLM's
    /// `--tensor-parallel-size` counts NeuronCores on Neuron).
    pub fn ranks(&self, devices: u32) -> u32 {
        devices * self.ranks_per_device.max(1)
    }
}

/// A node-to-node fabric a multi-node pod must ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum Fabric {
    /// AWS Elastic Fabric Adapter, with the interfaces one instance attaches, where known.
    Efa { devices: Option<u32> },
    /// RDMA NICs (InfiniBand or RoCE) a device plugin hands to pods as `resource`, one per NIC
    /// the instance has, where known; `setup` says what the cluster must run for it.
    Rdma {
        resource: &'static str,
        devices: Option<u32>,
        setup: &'static str,
        /// The Multus network each device attaches through (`k8s.v1.cni.cncf.io/networks`,
        /// one entry per device), where the device plugin hands out SR-IOV functions.
        attachment: Option<&'static str>,
        /// NCCL's settings for the fabric, as the provider's own NCCL test manifests set them.
        env: &'static [(&'static str, &'static str)],
    },
    /// GKE's GPUDirect RDMA (A3 Ultra, A4): multi-network annotations and the gIB NCCL
    /// plugin from the node.
    GkeRdma,
    /// GKE's GPUDirect-TCPX (A3 High) or -TCPXO (A3 Mega): multi-network annotations, the
    /// receive-data-path daemon beside the trainer, and the NCCL plugin from the node.
    GkeTcp(GpuDirectTcp),
    /// A fabric the plan priced that these files do not request: `what` it is and `how` the
    /// provider documents asking for it. NCCL then runs over TCP on the pod network.
    NotRequested { what: String, how: &'static str },
}

/// What runs: a training job or an online service.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    Training(TrainingJob),
    Serving(ServingService),
}

impl ServingService {
    /// vLLM's arguments after the model: what the plan assumed (tensor-parallel size, expert
    /// placement, the longest request, the memory kept free, the sequence limit where one was
    /// asked for), the same for every export; `tensor_parallel` as the target writes it.
    pub fn engine_args(&self, tensor_parallel: &str) -> Vec<String> {
        let mut args = vec![
            "--tensor-parallel-size".to_string(),
            tensor_parallel.to_string(),
            "--port".to_string(),
            ENGINE_PORT.to_string(),
        ];
        if self.expert_parallel {
            args.push("--enable-expert-parallel".to_string());
        }
        args.extend([
            "--max-model-len".to_string(),
            self.max_model_len.to_string(),
            "--gpu-memory-utilization".to_string(),
            format!("{:.2}", self.gpu_memory_utilization),
        ]);
        if let Some(sequences) = self.max_num_seqs {
            args.extend(["--max-num-seqs".to_string(), sequences.to_string()]);
        }
        args
    }
}

impl Workload {
    /// Nodes the pods may run on at once, and so share a volume from: a job's planned nodes;
    /// a service's largest replica count the autoscaler may reach, packed `gpus_per_node` GPUs
    /// to a node.
    pub fn spread_nodes(&self, placement: &Placement) -> u32 {
        match self {
            Workload::Training(_) => placement
                .tpu
                .as_ref()
                .map_or(placement.nodes, |slice| slice.hosts.max(placement.nodes)),
            Workload::Serving(service) => {
                let gpus =
                    u64::from(service.max_replicas.max(service.replicas)) * u64::from(service.gpus_per_replica.max(1));
                let nodes = gpus.div_ceil(u64::from(placement.gpus_per_node.max(1)));
                u32::try_from(nodes).unwrap_or(u32::MAX).max(placement.nodes)
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TrainingJob {
    /// The training script and its arguments, run by torchrun on every node.
    pub script: Vec<String>,
    /// Size of one checkpoint: the persistent volume keeps two and some headroom.
    pub checkpoint_bytes: u64,
    /// Expected run time, for the SkyPilot comment and an active deadline with slack.
    pub expected_seconds: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServingService {
    /// The model as the engine loads it (a Hugging Face repository id).
    pub served_model: String,
    /// GPUs per replica (tensor parallelism).
    pub gpus_per_replica: u32,
    /// Whether a mixture-of-experts model's experts are placed whole over the replica's GPUs
    /// (vLLM's `--enable-expert-parallel`), as the plan sized it.
    pub expert_parallel: bool,
    pub replicas: u32,
    pub min_replicas: u32,
    pub max_replicas: u32,
    /// Requests per second one replica is planned to carry.
    pub target_qps_per_replica: f64,
    /// Time-to-first-token target, seconds: waiting requests per replica above what the target
    /// allows (Little's law) scale out.
    pub ttft_target_seconds: Option<f64>,
    /// The longest request the plan sized for, prompt and output (vLLM's `--max-model-len`;
    /// without it vLLM reserves for the model's whole context).
    pub max_model_len: u64,
    /// The engine's sequence limit the plan assumed (`--max-num-seqs`), where the request set
    /// one; otherwise the engine's default, which the plan used too.
    pub max_num_seqs: Option<u64>,
    /// Share of each GPU's memory the engine may take (`--gpu-memory-utilization`): what the
    /// plan kept free, given back as the rest.
    pub gpu_memory_utilization: f64,
    /// A spot fleet with a floor: replicas kept on on-demand (or reserved) capacity whatever
    /// spot does.
    pub on_demand_floor_replicas: Option<u32>,
    /// Size of the volume the replicas share for the downloaded weights, GiB.
    pub model_cache_gib: f64,
}

/// Everything an export needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    /// Name of the job or service, a DNS-1123 label.
    pub name: String,
    pub namespace: String,
    pub image: String,
    /// A line for the files' header about the image (an older release where the newest does
    /// not run on the GPU).
    pub image_note: Option<String>,
    pub workload: Workload,
    /// The chosen configuration.
    pub placement: Placement,
    /// The plan's other configurations, best first (SkyPilot may fall back to them).
    pub alternatives: Vec<Placement>,
    /// Where checkpoints are kept.
    pub storage: Storage,
}

/// The checkpoint volume's StorageClass, and what the reader must know about it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Storage {
    /// `None`: the cluster's default class.
    pub class: Option<String>,
    /// A line for the files' header (what the class needs; a warning where none binds).
    pub note: Option<String>,
}

/// The port the serving engine listens on (vLLM's default).
pub const ENGINE_PORT: i32 = 8000;
/// torchrun's rendezvous port (PyTorch's default `MASTER_PORT`).
pub const RENDEZVOUS_PORT: i32 = 29500;

/// `value` as YAML, after a comment header.
pub(crate) fn yaml<T: Serialize>(header: &str, value: &T) -> Result<String, ManifestError> {
    let body = serde_yaml_ng::to_string(value).map_err(|e| ManifestError(e.to_string()))?;
    let comments: String = header.lines().map(|l| format!("# {l}\n")).collect();
    Ok(format!("{comments}{body}"))
}

/// A manifest that could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write the manifest: {0}")]
pub struct ManifestError(pub String);

/// `text` as a DNS-1123 label: lowercase letters, digits and `-`, at most 63 characters,
/// starting and ending with an alphanumeric.
pub fn dns_label(text: &str) -> String {
    let mut label: String = text
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while label.contains("--") {
        label = label.replace("--", "-");
    }
    let trimmed: String = label.trim_matches('-').chars().take(MAX_LABEL_CHARS).collect();
    let trimmed = trimmed.trim_end_matches('-').to_string();
    if trimmed.is_empty() {
        "gpuplan".to_string()
    } else {
        trimmed
    }
}

/// Kubernetes' limit on a DNS-1123 label (and so on most object names).
const MAX_LABEL_CHARS: usize = 63;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_dns_labels() {
        assert_eq!(dns_label("Llama-3.1-8B LoRA"), "llama-3-1-8b-lora");
        assert_eq!(dns_label("--"), "gpuplan");
        assert!(dns_label(&"x".repeat(100)).len() <= 63);
    }
}
