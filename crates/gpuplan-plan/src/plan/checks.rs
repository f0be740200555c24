//! The checks a candidate must pass before and beside its estimate: host resources, the
//! software stack, the node fabric, memory, and the warnings that do not reject it.

use super::*;

/// Bandwidth between nodes for training traffic: the fabric table's figure, else the
/// offering's network, else the conservative default (the same number the message states).
pub(super) fn node_network_gbps(offering: &Offering) -> Option<f64> {
    Some(offering.node_bandwidth_gbps().0)
}

/// Why several instances of `offering` cannot train together, if they cannot.
pub(super) fn fabric_rejection(offering: &Offering, label: &str) -> Option<Rejection> {
    let fabric = offering.node_fabric();
    let (gbps, assumed) = offering.node_bandwidth_gbps();
    let reject = |reason: String, shortfall: f64| Rejection {
        candidate: label.to_string(),
        constraint: Constraint::Network,
        reason,
        shortfall,
        needed: None,
    };
    if !fabric.cluster_placement {
        return Some(reject(
            format!(
                "{} does not place several {} together for multi-node training ({} between instances{})",
                offering.provider.display_name(),
                offering.instance_type,
                fabric.kind,
                if assumed {
                    format!(", {gbps} Gbps assumed")
                } else {
                    format!(", {gbps} Gbps")
                }
            ),
            f64::INFINITY,
        ));
    }
    (gbps < MIN_MULTI_NODE_GBPS).then(|| {
        reject(
            format!("{gbps} Gbps between nodes is too slow for multi-node training"),
            MIN_MULTI_NODE_GBPS / gbps.max(1e-9),
        )
    })
}

pub(super) fn memory_rejection(
    label: impl FnOnce() -> String,
    configured: &Configured,
    margin: f64,
) -> Option<Rejection> {
    let memory = &configured.estimate.memory;
    let limit = memory.capacity.as_u64() as f64 * (1.0 - margin);
    let need = memory.per_gpu.as_u64() as f64;
    (need > limit).then(|| Rejection {
        candidate: label(),
        constraint: Constraint::Memory,
        reason: format!(
            "{} per GPU needed, {} available ({:.0} % kept free)",
            memory.per_gpu,
            gpuplan_model::Bytes(limit as u64),
            margin * 100.0
        ),
        shortfall: need / limit,
        needed: None,
    })
}

/// A note when `gpus` of this accelerator exceed what the provider typically rents on demand.
pub(super) fn capacity_warning(source: &impl OfferingSource, offering: &Offering, gpus: u32) -> Option<String> {
    let accelerator = offering.accelerator.as_ref()?;
    let limit = source.operations().capacity(&offering.provider, accelerator)?;
    // One node is what a routine quota request buys; beyond that, capacity is reserved.
    let threshold = limit
        .on_demand_gpus
        .max(offering.accelerator_count)
        .max(ROUTINE_QUOTA_GPUS);
    // Quotas count GPUs at some providers and vCPUs at others: state both, of this instance.
    let nodes = gpus.div_ceil(offering.accelerator_count.max(1));
    (gpus > threshold).then(|| {
        format!(
            "{gpus} × {accelerator} is more than {} rents on demand without arrangement ({} for a new account); \
             {nodes} × {} = {:.0} vCPUs: {}",
            offering.provider.display_name(),
            limit.on_demand_gpus,
            offering.instance_type,
            offering.vcpus * f64::from(nodes),
            limit.beyond
        )
    })
}

/// The stack `offering`'s accelerator runs the request on (`None` where the catalog records
/// no stack for it), or why it runs nowhere allowed.
pub(super) fn stack_rejection(
    source: &impl OfferingSource,
    offering: &Offering,
    request: &PlanRequest,
) -> Result<Option<SoftwareStack>, Box<Rejection>> {
    let Some(accelerator) = offering.accelerator.as_ref().and_then(|id| source.accelerator(id)) else {
        return Ok(None);
    };
    if accelerator.stacks.is_empty() && request.operational.stacks.is_empty() {
        return Ok(None);
    }
    let model_type = request.model.transformer().map(|spec| spec.model_type.as_str());
    accelerator
        .stack_for(
            &request.operational.stacks,
            request.template.task,
            model_type,
            request.template.engine,
        )
        .map(|support| Some(support.stack))
        .map_err(|reason| {
            Box::new(Rejection::outright(
                candidate_label(offering, 1, None),
                Constraint::Stack,
                format!("{}: {reason}", accelerator.id),
            ))
        })
}

/// The user's minimum host resources per GPU and per instance, and the GPU's compute
/// capability, checked before anything is estimated.
pub(super) fn host_rejection(
    source: &impl OfferingSource,
    offering: &Offering,
    c: &crate::request::Constraints,
) -> Option<Rejection> {
    if let Some(need) = c.min_local_disk_gb {
        let have = offering.local_disk.map(|d| d.0 as f64 / 1e9);
        if have.is_none_or(|gb| gb < need) {
            return Some(Rejection {
                candidate: candidate_label(offering, 1, None),
                constraint: Constraint::Host,
                reason: match have {
                    Some(gb) => format!("{gb:.0} GB local disk, {need:.0} GB required"),
                    None => format!("local disk not stated in the catalog, {need:.0} GB required"),
                },
                shortfall: have.map_or(f64::INFINITY, |gb| need / gb.max(1e-9)),
                needed: None,
            });
        }
    }
    if let Some(need) = c.min_compute_capability {
        let accelerator = offering.accelerator.as_ref().and_then(|id| source.accelerator(id));
        let have = accelerator.and_then(|a| a.cuda_capability());
        if have.is_none_or(|cc| cc < need) {
            return Some(Rejection::outright(
                candidate_label(offering, 1, None),
                Constraint::Stack,
                match have {
                    Some(cc) => format!("compute capability {cc}, {need} required"),
                    None => format!("not a CUDA GPU; compute capability {need} required"),
                },
            ));
        }
    }
    let gpus = f64::from(offering.accelerator_count.max(1));
    let vcpus = offering.vcpus / gpus;
    let memory = offering.memory.as_gib() / gpus;
    // "12 vCPUs per GPU, 16 required", "48 GiB host memory per instance, 512 required".
    let short = |what: &str, per: &str, have: f64, need: f64| Rejection {
        candidate: candidate_label(offering, 1, None),
        constraint: Constraint::Host,
        reason: format!("{have:.0} {what} per {per}, {need:.0} required"),
        shortfall: need / have.max(1e-9),
        needed: None,
    };
    let instance_memory = offering.memory.as_gib();
    [
        (c.min_vcpus_per_gpu, vcpus, "vCPUs", "GPU"),
        (c.min_vcpus, offering.vcpus, "vCPUs", "instance"),
        (c.min_memory_gib, instance_memory, "GiB host memory", "instance"),
        (c.min_host_memory_gib_per_gpu, memory, "GiB host memory", "GPU"),
    ]
    .into_iter()
    .find_map(|(need, have, what, per)| {
        need.filter(|need| have < *need)
            .map(|need| short(what, per, have, need))
    })
}

pub(super) fn host_warnings(offering: &Offering, configured: &Configured, nodes: u32) -> Vec<String> {
    let mut warnings = Vec::new();
    let per_node = f64::from(offering.accelerator_count.max(1));
    let large = offering
        .accelerator_memory
        .is_some_and(|m| m.as_gib() / per_node >= 40.0);
    if large && configured.workload.task.is_training() {
        let vcpus = offering.vcpus / per_node;
        let ram = offering.memory.as_gib() / per_node;
        if vcpus < MIN_VCPUS_PER_LARGE_GPU {
            warnings.push(format!(
                "{vcpus:.0} vCPUs per GPU may not keep it fed (≥ {MIN_VCPUS_PER_LARGE_GPU} advised)"
            ));
        }
        if ram < MIN_HOST_GIB_PER_LARGE_GPU {
            warnings.push(format!(
                "{ram:.0} GiB host RAM per GPU (≥ {MIN_HOST_GIB_PER_LARGE_GPU} GiB advised)"
            ));
        }
    }
    if nodes > 1 {
        // The same network the estimate used: the fabric table's, else the row's own.
        match offering.node_bandwidth_gbps() {
            (_, true) => warnings.push(format!(
                "network bandwidth between nodes not published; {UNKNOWN_NODE_NETWORK_GBPS} Gbps assumed"
            )),
            (gbps, false) if gbps < RECOMMENDED_MULTI_NODE_GBPS => warnings.push(format!(
                "{gbps} Gbps between nodes: communication will dominate (≥ {RECOMMENDED_MULTI_NODE_GBPS} Gbps advised)"
            )),
            _ => {}
        }
        if offering.node_fabric().kind == FabricKind::Ethernet
            && configured.estimate.parameters.total > FABRIC_ADVISED_ABOVE_PARAMETERS
        {
            warnings.push("plain Ethernet between nodes; InfiniBand or EFA is usual for models this large".to_string());
        }
    }
    warnings
}

/// Where the catalog states an instance's local disk: whether it holds what a job copies onto
/// each node before it starts (the weights at their stored precision, a dataset staged to
/// local disk). Less is a warning, not a rejection: a network volume (the exports' claims)
/// takes what the disk cannot.
pub(super) fn disk_warning(offering: &Offering, staged_bytes: f64) -> Option<String> {
    let disk = offering.local_disk?.0 as f64;
    (disk > 0.0 && staged_bytes > disk).then(|| {
        format!(
            "{:.0} GB local disk cannot hold the {:.0} GB the job stages on each node (weights, dataset): mount a volume",
            disk / 1e9,
            staged_bytes / 1e9
        )
    })
}

/// Host memory the Neuron runtime needs beside the weights it stages while loading a model,
/// GiB. Neuron loads read the whole checkpoint into host memory before sharding it to the
/// NeuronCores (neuronx-distributed-inference `modules/checkpoint.py` merges every
/// safetensors shard into one state dict), and the runtime DMA-pins the pages: a 7B fp16
/// model "pretty much maxes out the RAM" of a 16 GiB inf2.xlarge (aws-neuron/CodeLlama-7b-hf-
/// neuron-8xlarge model card), a 12 GB bf16 model is OOM-killed at 15.3 GB RSS there
/// (neuronx-distributed-inference contrib/models/Trinity README), and published sizing puts
/// the need at the checkpoint plus 2–3 GB (aqidd/gemma3-12b-int8-inf2 model card).
pub const NEURON_STAGING_OVERHEAD_GIB: f64 = 3.0;

/// A Neuron instance whose host memory cannot stage the model it is to load: the runtime reads
/// the checkpoint (at its stored precision) into host memory first. Pre-sharded checkpoints
/// (`save_sharded_checkpoint`) avoid it, which the plan does not assume.
pub(super) fn staging_rejection(
    offering: &Offering,
    stack: Option<SoftwareStack>,
    checkpoint: gpuplan_model::Bytes,
) -> Option<Rejection> {
    if stack != Some(SoftwareStack::Neuron) {
        return None;
    }
    let need = checkpoint.as_gib() + NEURON_STAGING_OVERHEAD_GIB;
    let have = offering.memory.as_gib();
    (have < need).then(|| Rejection {
        candidate: candidate_label(offering, 1, None),
        constraint: Constraint::Host,
        reason: format!(
            "{have:.0} GiB host memory cannot stage the {:.1} GiB checkpoint the Neuron runtime loads through it ({need:.1} GiB needed); a larger instance, or a pre-sharded checkpoint",
            checkpoint.as_gib()
        ),
        shortfall: need / have.max(1e-9),
        needed: Some(need),
    })
}

/// An instance whose host memory cannot hold what llama.cpp keeps there for each of its
/// `replicas` (the layers left off the GPUs, their KV cache, the embeddings).
pub(super) fn host_layers_rejection(offering: &Offering, configured: &Configured, replicas: u32) -> Option<Rejection> {
    let held = configured.estimate.inference?.host_memory_bytes?;
    let need = gpuplan_model::Bytes(held).as_gib() * f64::from(replicas.max(1));
    let have = offering.memory.as_gib();
    (have > 0.0 && have < need).then(|| Rejection {
        candidate: candidate_label(offering, 1, None),
        constraint: Constraint::Host,
        reason: format!(
            "{have:.0} GiB host memory cannot hold the {need:.1} GiB llama.cpp keeps there (the layers left off the GPU, their KV cache, the embeddings); a larger instance, or more layers on the GPU"
        ),
        shortfall: need / have,
        needed: Some(need),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 405B in fp8 (405 GB of weights) does not fit a 240 GB disk and says so with both figures;
    /// 8B does; an instance whose disk the catalog does not state gets no warning.
    #[test]
    fn a_local_disk_smaller_than_what_is_staged_is_named() {
        let mut small = crate::test_offering::offering(Some("H100-SXM5-80GB"), 8, 96.0);
        small.local_disk = Some(gpuplan_model::Bytes(240_000_000_000));
        let warning = disk_warning(&small, 405e9).unwrap();
        assert!(warning.contains("240 GB") && warning.contains("405 GB"), "{warning}");
        assert_eq!(disk_warning(&small, 16e9), None);
        small.local_disk = None;
        assert_eq!(disk_warning(&small, 405e9), None);
    }
}
