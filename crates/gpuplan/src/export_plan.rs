//! From a plan to deployment files: a saved plan (`plan --format json`) is read back, one of
//! its configurations picked, and the model's facts looked up in the catalog, so that a plan
//! exported now and one exported from a file give the same files.

use crate::options::PlanOptions;
use crate::{Error, resolve};
use gpuplan_catalog::Catalog;
use gpuplan_catalog::compatibility::Version;
use gpuplan_emit::manifest::{
    Deployment, Fabric, GpuDirectTcp, ManifestFile, Placement, ServingService, SkyPilotFlavour, Storage,
    TrainingFlavour, TrainingJob, Workload, dns_label, kubernetes_manifests, skypilot_task,
};
use gpuplan_model::{Architecture, Engine, ImageRole, ModelSpec, ProviderId, SoftwareStack, Task};
use serde::Deserialize;

/// What an export reads of a saved plan (other fields are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct SavedPlan {
    pub recommendations: Vec<SavedRecommendation>,
    #[serde(default)]
    pub request: Option<PlanOptions>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SavedRecommendation {
    pub provider: String,
    pub instance_type: String,
    pub region: Option<String>,
    pub gpu: Option<String>,
    pub gpus: u32,
    pub gpus_per_node: u32,
    pub nodes: u32,
    pub interruptible: bool,
    pub time_seconds: Option<f64>,
    pub serving: Option<SavedServing>,
    /// Absent in plans saved before layouts were read back: no expert parallelism.
    #[serde(default)]
    pub layout: Option<SavedLayout>,
    /// The software stack the configuration runs on (cuda, rocm, neuron, xla); absent in
    /// older saves, where the accelerator's vendor says.
    #[serde(default)]
    pub stack: Option<String>,
}

/// The parts of a saved layout an export follows.
#[derive(Debug, Clone, Deserialize)]
pub struct SavedLayout {
    #[serde(default = "one")]
    pub ep: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize)]
pub struct SavedServing {
    pub gpus_per_replica: u32,
    pub replicas: u32,
    pub min_replicas: u32,
    pub max_replicas: u32,
    pub requests_per_second_per_replica: f64,
    /// Spot rows: the floor on another billing mode (absent in older saves: all spot).
    #[serde(default)]
    pub fleet: Option<SavedFleet>,
    /// One replica at a light load: whether taking it to zero when idle pays.
    #[serde(default)]
    pub scale_to_zero: Option<SavedScaleToZero>,
}

/// The part of the scale-to-zero comparison an export follows.
#[derive(Debug, Clone, Deserialize)]
pub struct SavedScaleToZero {
    pub wins: bool,
}

/// The part of a spot fleet an export follows.
#[derive(Debug, Clone, Deserialize)]
pub struct SavedFleet {
    #[serde(default)]
    pub floor_billing: Option<String>,
    pub floor_instances: u32,
}

pub use gpuplan_model::ExportTarget;

/// How the files are written.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSettings {
    /// Which configuration, counting from 1 in the plan's order.
    pub pick: usize,
    pub flavour: TrainingFlavour,
    pub image: Option<String>,
    /// The checkpoint volume's StorageClass; `None`: the provider's shared-file class on
    /// several nodes, the cluster's default on one.
    pub storage_class: Option<String>,
    pub name: Option<String>,
    pub namespace: String,
}

/// The training script run when none is named: replace it with yours.
const DEFAULT_SCRIPT: &str = "train.py";
/// Disk beyond the model and checkpoints: the image, the environment, logs.
const DISK_HEADROOM_GB: f64 = 100.0;

/// A saved plan's text, read.
pub fn read_saved_plan(text: &str, name: &str) -> Result<SavedPlan, Error> {
    let plan: SavedPlan = serde_json::from_str(text).map_err(|e| {
        Error::invalid(
            format!("{name}: not a saved plan: {e}"),
            Some("save one with `gpuplan plan … --format json > plan.json`".to_string()),
        )
    })?;
    checked(
        plan,
        name,
        "the file was edited or damaged: plan again with --format json",
    )
}

/// `plan`, refused where a configuration in it could not have been planned (`hint` says what
/// to do in the words of the front end that read it).
pub(crate) fn checked(plan: SavedPlan, name: &str, hint: &str) -> Result<SavedPlan, Error> {
    for (index, recommendation) in plan.recommendations.iter().enumerate() {
        if let Some(why) = recommendation.impossible() {
            return Err(Error::invalid(
                format!("{name}: configuration {}: {why}", index + 1),
                Some(hint.to_string()),
            ));
        }
    }
    Ok(plan)
}

/// A Kubernetes object name: an RFC 1123 label.
fn is_dns_label(text: &str) -> bool {
    (1..=63).contains(&text.len())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}

/// Most GPUs (and so nodes) a saved configuration may name: the largest clusters built hold
/// about 100,000.
const MAX_SAVED_GPUS: u32 = 100_000;

/// Most replicas a saved service may name.
const MAX_SAVED_REPLICAS: u32 = 10_000;

impl SavedRecommendation {
    /// What no plan writes: no GPUs, GPUs that do not add up to the nodes, a replica range
    /// upside down, a time that is not one. A saved plan is checked as strictly as a request.
    fn impossible(&self) -> Option<String> {
        if self.gpus == 0 || self.gpus > MAX_SAVED_GPUS || self.gpus_per_node == 0 || self.nodes == 0 {
            return Some(format!(
                "{} GPUs, {} per node on {} nodes: a plan has at least one of each",
                self.gpus, self.gpus_per_node, self.nodes
            ));
        }
        if u64::from(self.gpus_per_node) * u64::from(self.nodes) != u64::from(self.gpus) {
            return Some(format!(
                "{} GPUs is not {} per node × {} nodes",
                self.gpus, self.gpus_per_node, self.nodes
            ));
        }
        if self.time_seconds.is_some_and(|t| !(t.is_finite() && t >= 0.0)) {
            return Some("a time that is not a duration".to_string());
        }
        let serving = self.serving.as_ref()?;
        if serving.gpus_per_replica == 0
            || serving.replicas == 0
            || serving.replicas > MAX_SAVED_REPLICAS
            || serving.max_replicas > MAX_SAVED_REPLICAS
        {
            return Some(format!(
                "{} replicas of {} GPUs: a service has at least one of each",
                serving.replicas, serving.gpus_per_replica
            ));
        }
        if serving.min_replicas == 0 || serving.min_replicas > serving.max_replicas {
            return Some(format!(
                "an autoscaling range of {} to {} replicas",
                serving.min_replicas, serving.max_replicas
            ));
        }
        if !(serving.requests_per_second_per_replica.is_finite() && serving.requests_per_second_per_replica >= 0.0) {
            return Some("a load per replica that is not a number".to_string());
        }
        None
    }
}

/// The files of `target` for the configuration `settings.pick` of `plan`.
pub fn export_plan(
    catalog: &Catalog,
    plan: &SavedPlan,
    target: ExportTarget,
    settings: &ExportSettings,
) -> Result<Vec<ManifestFile>, Error> {
    crate::with_fitted(catalog, || export_plan_in(catalog, plan, target, settings))
}

fn export_plan_in(
    catalog: &Catalog,
    plan: &SavedPlan,
    target: ExportTarget,
    settings: &ExportSettings,
) -> Result<Vec<ManifestFile>, Error> {
    if let Some(image) = settings
        .image
        .as_deref()
        .filter(|i| i.trim().is_empty() || i.contains(char::is_whitespace))
    {
        return Err(Error::invalid(
            format!("--image `{image}` is not a container image reference"),
            Some("give a reference such as nvcr.io/nvidia/pytorch:24.10-py3".to_string()),
        ));
    }
    for (what, text) in [
        ("--name", settings.name.as_deref()),
        ("--namespace", Some(settings.namespace.as_str())),
    ] {
        if let Some(text) = text.filter(|t| !is_dns_label(t)) {
            return Err(Error::invalid(
                format!("{what} `{text}` is not a Kubernetes name (lower-case letters, digits and `-`, at most 63)"),
                None,
            ));
        }
    }
    let request = plan.request.as_ref().ok_or_else(|| {
        Error::invalid(
            "the saved plan does not say what was asked (no `request`)",
            Some("plan again with this version and --format json".to_string()),
        )
    })?;
    let count = plan.recommendations.len();
    let chosen = settings
        .pick
        .checked_sub(1)
        .and_then(|i| plan.recommendations.get(i))
        .ok_or_else(|| {
            Error::invalid(
                format!("--pick {}: the plan has {count} configurations", settings.pick),
                Some(format!("pick 1 to {count}")),
            )
        })?;
    let query = request.query()?;
    let model = resolve::model(catalog, &query.model)?;
    let mut chosen_placement = placement(catalog, chosen)?;
    let alternatives = plan
        .recommendations
        .iter()
        .enumerate()
        .filter(|(i, _)| *i + 1 != settings.pick)
        .filter_map(|(_, r)| placement(catalog, r).ok())
        .collect();
    let online = query.task == Task::Inference && query.dataset_size.is_none();
    let weights_gb = parameters(&model) as f64 * 2.0 / 1e9;
    let (workload, disk_gb) = if online {
        let serving = chosen
            .serving
            .as_ref()
            .ok_or_else(|| Error::invalid("the chosen configuration has no serving figures", None))?;
        let service = ServingService {
            served_model: served_name(&model),
            gpus_per_replica: serving.gpus_per_replica,
            expert_parallel: chosen.layout.as_ref().is_some_and(|l| l.ep > 1),
            replicas: serving.replicas,
            // SkyServe's load balancer sees requests and wakes a replica from zero; a
            // Kubernetes autoscaler reading the engine's own metrics cannot.
            min_replicas: if target == ExportTarget::SkyServe && serving.scale_to_zero.as_ref().is_some_and(|s| s.wins)
            {
                0
            } else {
                serving.min_replicas
            },
            max_replicas: serving.max_replicas,
            target_qps_per_replica: serving.requests_per_second_per_replica,
            ttft_target_seconds: query.serving.ttft.map(|t| t.seconds),
            max_model_len: longest_request(&query, &model)?,
            // The sequence limit the plan assumed: the one asked for, else the engine's default.
            max_num_seqs: query.engine_settings.max_num_seqs.map(u64::from),
            gpu_memory_utilization: 1.0 - query.memory_margin.unwrap_or(gpuplan_plan::DEFAULT_MEMORY_MARGIN),
            // The weights as downloaded (16-bit), with room for the Hub's metadata and a
            // second revision.
            model_cache_gib: weights_gb * 1e9 / f64::from(1u32 << 30) * 1.2 + 10.0,
            on_demand_floor_replicas: serving
                .fleet
                .as_ref()
                .filter(|f| f.floor_billing.is_some() && f.floor_instances > 0)
                .map(|f| f.floor_instances * (chosen.gpus_per_node / serving.gpus_per_replica.max(1)).max(1)),
        };
        (Workload::Serving(service), weights_gb * 1.2 + DISK_HEADROOM_GB)
    } else if query.task.is_training() {
        let mut ignored = Vec::new();
        let trainable = trainable_parameters(&model, &query, &mut ignored);
        let checkpoint = gpuplan_plan::checkpoint_bytes(parameters(&model), trainable, query.task);
        let job = TrainingJob {
            script: vec![DEFAULT_SCRIPT.to_string()],
            checkpoint_bytes: checkpoint as u64,
            expected_seconds: chosen.time_seconds,
        };
        // Each node keeps its shard of the last two checkpoints.
        let shards_gb = checkpoint * 2.0 / f64::from(chosen.nodes.max(1)) / 1e9;
        (Workload::Training(job), weights_gb + shards_gb + DISK_HEADROOM_GB)
    } else {
        return Err(Error::invalid(
            "exports cover training and online serving; this plan is a batch of requests",
            Some("plan without {dataset_size} for a service".to_string()),
        ));
    };
    if target == ExportTarget::SkyServe && !online {
        return Err(Error::invalid(
            "--export skyserve serves a model: this plan trains one",
            Some("use --export skypilot or k8s".to_string()),
        ));
    }
    let name = settings.name.clone().unwrap_or_else(|| {
        format!(
            "{}-{}",
            model.id,
            if online {
                "serve".to_string()
            } else {
                query.task.to_string()
            }
        )
    });
    let (image, image_note) = match &settings.image {
        Some(image) => (image.clone(), None),
        None => {
            let engine = online.then(|| query.engine.unwrap_or(Engine::Vllm));
            stack_image(catalog, chosen, &chosen_placement, engine)?
        }
    };
    let storage = storage_class(
        catalog,
        settings.storage_class.as_deref(),
        &chosen_placement,
        workload.spread_nodes(&chosen_placement),
        if online { "model cache" } else { "checkpoint" },
    );
    // One Deployment cannot hold a floor on on-demand nodes and the rest on spot: Kubernetes
    // places every replica on on-demand nodes and its header says how to add the spot share.
    if target == ExportTarget::Kubernetes
        && matches!(&workload, Workload::Serving(s) if s.on_demand_floor_replicas.is_some())
    {
        chosen_placement.spot = false;
    }
    let deployment = Deployment {
        name: dns_label(&name),
        namespace: dns_label(&settings.namespace),
        image,
        image_note,
        workload,
        placement: chosen_placement,
        alternatives,
        storage,
    };
    let manifest_error = |e: gpuplan_emit::manifest::ManifestError| Error::invalid(e.0, None);
    match target {
        ExportTarget::Kubernetes => kubernetes_manifests(&deployment, settings.flavour).map_err(manifest_error),
        ExportTarget::SkyPilot | ExportTarget::SkyServe => {
            let flavour = if target == ExportTarget::SkyServe {
                SkyPilotFlavour::Service
            } else {
                SkyPilotFlavour::Task
            };
            skypilot_task(&deployment, flavour, disk_gb.ceil() as u64)
                .map(|file| vec![file])
                .map_err(manifest_error)
        }
    }
}

/// The catalog's image for the configuration's stack: its serving image with `engine`, or its
/// training image; a training job across nodes over EFA gets the stack's EFA image where the
/// catalog has one (libfabric and the AWS OFI NCCL plugin inside, from the registry of the
/// instance's region), since NCCL in the general image would fall back to TCP. An NGC image
/// whose release no longer supports the GPU (25.01 on need compute capability 7.5) gives way to
/// the newest release that does, and the files say so. Refused, naming the stack, where the
/// catalog has none.
fn stack_image(
    catalog: &Catalog,
    chosen: &SavedRecommendation,
    placement: &Placement,
    engine: Option<Engine>,
) -> Result<(String, Option<String>), Error> {
    let gpu = chosen.gpu.as_deref().unwrap_or_default();
    let accelerator = catalog.accelerators().resolve_one(gpu)?.accelerator;
    let stack = stack_of(chosen, accelerator)?;
    let capability = accelerator
        .compute_capability
        .as_deref()
        .and_then(|cc| cc.parse::<Version>().ok());
    let runs =
        |image: &gpuplan_model::StackImage| capability.as_ref().is_none_or(|cc| catalog.image_runs_on(image, cc));
    let over_efa = placement.nodes > 1 && matches!(placement.fabric, Some(gpuplan_emit::manifest::Fabric::Efa { .. }));
    if let Some(image) = catalog
        .fabric_training_image(stack, "efa")
        .filter(|image| engine.is_none() && over_efa && runs(image))
        .and_then(|image| image.reference_in(placement.region.as_deref()))
    {
        return Ok((image, None));
    }
    let role = if engine.is_some() {
        ImageRole::Serving
    } else {
        ImageRole::Training
    };
    let image = catalog.stack_image(stack, role, engine).ok_or_else(|| {
        let what = engine.map_or("training".to_string(), |e| format!("{e} serving"));
        Error::invalid(
            format!("the catalog knows no {stack} image for {what}"),
            Some("give the image with --image".to_string()),
        )
    })?;
    match capability.as_ref().filter(|_| !runs(image)) {
        Some(cc) => older_release(catalog, &image.image, gpu, cc),
        None => Ok((image.image.clone(), None)),
    }
}

/// The newest release of `image`'s repository that runs on the GPU (compute capability `cc`)
/// where `image` does not, and the line for the files' header that says why.
fn older_release(catalog: &Catalog, image: &str, gpu: &str, cc: &Version) -> Result<(String, Option<String>), Error> {
    let facts = catalog.compatibility();
    let (repository, _) = image.rsplit_once(':').unwrap_or((image, ""));
    let needs = facts
        .container(image)
        .and_then(|c| facts.container_floor(c))
        .map_or("a newer GPU".to_string(), |min| {
            format!("compute capability {min} or newer")
        });
    let older = facts.newest_container_on(repository, cc).ok_or_else(|| {
        Error::invalid(
            format!("no {repository} release the compatibility data knows runs on the {gpu} (compute capability {cc})"),
            Some("give the image with --image".to_string()),
        )
    })?;
    let note = format!(
        "Image: {} (CUDA {}), the newest {repository} release that runs on the {gpu} (compute capability {cc}); the catalog's {image} needs {needs}.",
        older.image, older.cuda
    );
    Ok((older.image.clone(), Some(note)))
}

/// The stack a configuration runs on: as the plan saved it, or (plans saved before they named
/// their stack) the one its accelerator's vendor ships.
fn stack_of(r: &SavedRecommendation, accelerator: &gpuplan_model::Accelerator) -> Result<SoftwareStack, Error> {
    if let Some(stack) = &r.stack {
        return stack.parse::<SoftwareStack>().map_err(|e| Error::invalid(e, None));
    }
    Ok(match accelerator.vendor.as_str() {
        "AMD" => SoftwareStack::Rocm,
        "AWS" => SoftwareStack::Neuron,
        "Google" => SoftwareStack::Xla,
        _ => SoftwareStack::Cuda,
    })
}

/// The checkpoint (or model-cache) volume's class: the one given; where the pods may run on
/// `nodes` > 1 nodes, which share it, the provider's shared-file class from the catalog, or none
/// with a warning where the catalog knows none.
fn storage_class(catalog: &Catalog, given: Option<&str>, placement: &Placement, nodes: u32, what: &str) -> Storage {
    if let Some(class) = given {
        // A class the tables describe for this provider gets its notes (what to install, how a
        // claim's size is rounded); another is named as given.
        let known = catalog
            .operations()
            .shared_storage_class(&ProviderId::new(&placement.provider), class);
        return Storage {
            class: Some(class.to_string()),
            note: known.map(|shared| shared_storage_note(shared, what)),
        };
    }
    if nodes <= 1 {
        return Storage::default();
    }
    let provider = ProviderId::new(&placement.provider);
    match catalog.operations().shared_storage(&provider) {
        Some(shared) => {
            let mut note = shared_storage_note(shared, what);
            for other in catalog
                .operations()
                .shared_storage
                .iter()
                .filter(|s| s.provider == provider && s.storage_class != shared.storage_class)
            {
                note.push_str(&format!(
                    "\nAlso known for {}: {} ({}); choose it with --storage-class {}.",
                    provider, other.storage_class, other.kind, other.storage_class
                ));
            }
            Storage {
                class: Some(shared.storage_class.clone()),
                note: Some(note),
            }
        }
        None => Storage {
            class: None,
            note: Some(format!(
                "WARNING: the {what} volume is shared by every node (ReadWriteMany), which most default \
                 StorageClasses (block storage) cannot bind: give a shared-file class with --storage-class."
            )),
        },
    }
}

/// What the files' header says about a shared-file class: the service, what the cluster needs
/// first, and what becomes of the claim's size.
fn shared_storage_note(shared: &gpuplan_model::SharedStorage, what: &str) -> String {
    let class = &shared.storage_class;
    let mut note = format!(
        "The {what} volume is shared by every node (ReadWriteMany): class {class}, {}.\n{} needs {}.",
        shared.kind,
        if shared.built_in { "It" } else { "Not built in: it" },
        shared.needs
    );
    if !shared.dynamic {
        note.push_str("\nThe class does not create volumes: the claim binds only to a PersistentVolume made first.");
    }
    if let gpuplan_model::ClaimSize::RoundedUpTo { min_gib } = shared.claim_size {
        note.push_str(&format!(
            "\nVolumes start at {min_gib:.0} GiB: a smaller claim gets, and is billed for, {min_gib:.0} GiB."
        ));
    }
    note
}

/// The longest request the plan was sized for, prompt and output: the request mix's longest,
/// or the prompt and output lengths the plan used (its defaults where none were given).
fn longest_request(query: &crate::PlanQuery, model: &ModelSpec) -> Result<u64, Error> {
    let given = (query.seq, query.output_tokens);
    if let Some(mix) = crate::defaults::request_mix(query.serving.requests.as_ref(), given)? {
        return Ok(mix.max_context());
    }
    let (seq, output) = crate::defaults::lengths(given, None, query.task, model.transformer(), &mut Vec::new());
    Ok(seq + output)
}

/// One configuration's placement, its accelerator's facts from the catalog.
fn placement(catalog: &Catalog, r: &SavedRecommendation) -> Result<Placement, Error> {
    let gpu = r
        .gpu
        .as_deref()
        .ok_or_else(|| Error::invalid(format!("{} has no accelerator to export", r.instance_type), None))?;
    let accelerator = catalog.accelerators().resolve_one(gpu)?.accelerator;
    // The device plugin's resource is the stack's, as its images record it.
    let stack = stack_of(r, accelerator)?;
    let gpu_resource = [None, Some(Engine::Vllm)]
        .into_iter()
        .find_map(|engine| {
            let role = engine.map_or(ImageRole::Training, |_| ImageRole::Serving);
            catalog.stack_image(stack, role, engine)
        })
        .map_or("nvidia.com/gpu", |image| image.device_resource.as_str());
    let offering = catalog
        .offerings()
        .iter()
        .find(|o| o.provider.as_str() == r.provider && o.instance_type == r.instance_type && o.region == r.region);
    let fabric = offering.and_then(|o| {
        let fabric = o.node_fabric();
        fabric_request(&r.provider, fabric.kind, fabric.devices)
    });
    Ok(Placement {
        fabric,
        tpu: gpuplan_emit::manifest::tpu_slice(accelerator.id.as_str(), r.gpus),
        vcpus_per_node: offering.map(|o| o.vcpus.floor() as u32).filter(|n| *n > 0),
        memory_gib_per_node: offering.map(|o| o.memory.as_gib()).filter(|m| *m > 0.0),
        provider: r.provider.clone(),
        region: r.region.clone(),
        instance_type: r.instance_type.clone(),
        gpu: accelerator.id.to_string(),
        gpu_resource: gpu_resource.to_string(),
        gpu_product_label: product_label(&accelerator.aliases),
        skypilot_accelerator: skypilot_name(accelerator.id.as_str(), &accelerator.aliases),
        gpus_per_node: r.gpus_per_node,
        ranks_per_device: accelerator.ranks_per_device(),
        nodes: r.nodes.max(1),
        spot: r.interruptible,
    })
}

/// NCCL over Azure's InfiniBand as Azure/aks-rdma-infiniband's NCCL test sets it
/// (tests/scenarios/k8s/values.yaml @ 700dabb): InfiniBand on, and GPUDirect RDMA at any PCIe
/// distance, since the VM's virtual topology hides the GPU–NIC affinity.
const AZURE_INFINIBAND_NCCL: &[(&str, &str)] = &[("NCCL_IB_DISABLE", "0"), ("NCCL_NET_GDR_LEVEL", "SYS")];

/// NCCL over OCI's RoCE as oracle-quickstart/oci-hpc-oke's NCCL test sets it
/// (manifests/nccl-tests/kueue/virtual-functions/BM.GPU.H100.8.yaml @ 61d210a): the RoCE v2
/// GID, the traffic class and service level of OCI's cluster network, the ConnectX NICs.
const OCI_ROCE_NCCL: &[(&str, &str)] = &[
    ("NCCL_CUMEM_ENABLE", "0"),
    ("NCCL_IB_SPLIT_DATA_ON_QPS", "0"),
    ("NCCL_IB_GID_INDEX", "3"),
    ("NCCL_IB_HCA", "mlx5"),
    ("NCCL_IB_TC", "41"),
    ("NCCL_IB_SL", "0"),
    ("NCCL_IB_TIMEOUT", "22"),
    ("NCCL_SOCKET_IFNAME", "eth0"),
    ("NCCL_IGNORE_CPU_AFFINITY", "1"),
];

/// How a pod asks for the fabric the plan priced between nodes, as each provider documents it;
/// `None` where there is nothing to ask for (Ethernet, a TPU slice's own interconnect).
fn fabric_request(provider: &str, kind: gpuplan_model::FabricKind, devices: Option<u32>) -> Option<Fabric> {
    use gpuplan_model::FabricKind as Kind;
    let not_requested = |what: &str, how: &'static str| {
        Some(Fabric::NotRequested {
            what: what.to_string(),
            how,
        })
    };
    match (provider, kind) {
        (_, Kind::Efa) => Some(Fabric::Efa { devices }),
        ("azure", Kind::Infiniband) => Some(Fabric::Rdma {
            resource: "rdma/ib",
            devices,
            attachment: None,
            env: AZURE_INFINIBAND_NCCL,
            setup: "InfiniBand: each pod takes the VM's InfiniBand NICs as `rdma/ib` and IPC_LOCK to pin memory; the cluster needs the NVIDIA Network Operator with its SR-IOV device plugin publishing them under that name (Azure/aks-rdma-infiniband, configurations/network-operator) and the node pool in one scale set. For full bandwidth also give NCCL the VM size's topology file (NCCL_TOPO_FILE, the nd*-topo.xml of Azure's HPC images, as the same repository's tests mount it).",
        }),
        (_, Kind::GpudirectTcpxo) => Some(Fabric::GkeTcp(GpuDirectTcp::Tcpxo)),
        (_, Kind::GpudirectTcpx) => Some(Fabric::GkeTcp(GpuDirectTcp::Tcpx)),
        ("gcp", Kind::Rocev2) => Some(Fabric::GkeRdma),
        ("oci", Kind::Rocev2) if devices.is_some() => Some(Fabric::Rdma {
            resource: "nvidia.com/rdma-vf",
            devices,
            attachment: Some("rdma-vf"),
            env: OCI_ROCE_NCCL,
            setup: "RoCE on OKE: each pod takes the node's RDMA SR-IOV virtual functions as `nvidia.com/rdma-vf`, each attached through the `rdma-vf` network (Multus), and IPC_LOCK to pin memory; the cluster needs the NVIDIA Network Operator that creates them (oracle-quickstart/oci-hpc-oke, docs/using-rdma-network-interfaces-in-manifests.md; pods outside the default namespace name it `default/rdma-vf`).",
        }),
        ("oci", Kind::Rocev2) => not_requested(
            "RDMA over RoCE",
            "OKE documents host-network privileged pods with /dev/infiniband, or the NVIDIA Network Operator's SR-IOV virtual functions as `nvidia.com/rdma-vf` (oracle-quickstart/oci-hpc-oke, docs/using-rdma-network-interfaces-in-manifests.md); how many this shape has is not in the fabric table.",
        ),
        (_, Kind::Infiniband | Kind::Rocev2) => not_requested(
            "an RDMA fabric",
            "Ask the provider how pods reach its RDMA NICs (usually the NVIDIA Network Operator's RDMA or SR-IOV device plugin) and add that resource and IPC_LOCK.",
        ),
        (_, Kind::Ici | Kind::Ethernet) => None,
    }
}

/// GPU Feature Discovery labels a node with the device name NVML reports, spaces as dashes
/// (`NVIDIA H100 80GB HBM3` → `NVIDIA-H100-80GB-HBM3`); the catalog keeps that name among the
/// aliases.
fn product_label(aliases: &[String]) -> Option<String> {
    aliases
        .iter()
        .find(|a| a.starts_with("NVIDIA ") || a.starts_with("Tesla "))
        .map(|a| a.replace(' ', "-"))
}

/// SkyPilot's accelerator name: it names a family where memory or form factor differ by a
/// suffix (`A100` is 40 GB, `A100-80GB`), the reverse of the catalog import's mapping.
fn skypilot_name(id: &str, aliases: &[String]) -> String {
    let by_id = match id {
        "A100-SXM4-40GB" | "A100-PCIE-40GB" => Some("A100"),
        "A100-SXM4-80GB" | "A100-PCIE-80GB" => Some("A100-80GB"),
        "H100-SXM5-80GB" | "H100-PCIE-80GB" => Some("H100"),
        "H100-NVL-94GB" => Some("H100-NVL"),
        "H200-SXM-141GB" => Some("H200"),
        "V100-SXM2-16GB" | "V100-PCIE-16GB" => Some("V100"),
        "V100-SXM2-32GB" => Some("V100-32GB"),
        "GH200-96GB" | "GH200-144GB" => Some("GH200"),
        "B200" | "B300" | "GB200" => Some(id),
        _ => None,
    };
    by_id
        .map(str::to_string)
        .or_else(|| aliases.iter().find(|a| !a.contains(' ') && !a.contains('/')).cloned())
        .unwrap_or_else(|| id.to_string())
}

/// The name an engine loads the model by: its Hugging Face repository where the catalog knows
/// it.
fn served_name(model: &ModelSpec) -> String {
    model
        .aliases
        .iter()
        .find(|a| a.contains('/'))
        .cloned()
        .unwrap_or_else(|| model.id.clone())
}

fn parameters(model: &ModelSpec) -> u64 {
    match &model.architecture {
        Architecture::Transformer(spec) => gpuplan_estimate::parameters::count_parameters(spec).total,
        Architecture::Cited(cited) => cited.components.iter().map(|(_, n)| n).sum(),
    }
}

fn trainable_parameters(model: &ModelSpec, query: &crate::PlanQuery, notes: &mut Vec<crate::Defaulted>) -> u64 {
    match (&model.architecture, query.task) {
        (Architecture::Transformer(spec), Task::Lora | Task::Qlora) => {
            let rank = crate::defaults::lora_rank(query.lora_rank, query.task, notes);
            let targets = crate::defaults::lora_targets(query.lora_targets, query.task, query.framework, notes);
            gpuplan_estimate::memory::lora_parameters(spec, rank, targets)
        }
        _ => parameters(model),
    }
}
