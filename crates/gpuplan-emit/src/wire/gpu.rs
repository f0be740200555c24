use gpuplan_model::{Accelerator, PeakTable, Source};
use serde::Serialize;
use std::collections::BTreeMap;

/// One accelerator, as `gpuplan gpus --format json` lists it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct GpuJson {
    pub id: String,
    pub name: String,
    pub vendor: String,
    pub architecture: String,
    pub compute_capability: Option<String>,
    pub form_factor: Option<String>,
    pub release_year: Option<u16>,
    pub aliases: Vec<String>,
    pub memory_bytes: u64,
    pub reported_memory_bytes: Option<u64>,
    pub memory_type: Option<String>,
    pub memory_bandwidth_bytes_per_second: Option<f64>,
    /// Dense peak TFLOPS (TOPS for integers) per precision; absent when unsupported or unknown.
    pub peak_tflops: BTreeMap<String, f64>,
    /// 2:4 structured-sparsity peaks, kept apart from the dense ones.
    pub sparse_peak_tflops: BTreeMap<String, f64>,
    pub tdp_watts: Option<f64>,
    pub pcie_generation: Option<u8>,
    pub nvlink: Option<NvLinkJson>,
    /// Total bidirectional bandwidth per device over a scale-up link other than NVLink
    /// (Infinity Fabric, ICI, NeuronLink).
    pub peer_link_bytes_per_second: Option<f64>,
    /// GPUs one scale-up domain joins in the systems the part ships in (8 on HGX boards, 72
    /// in a GB200 NVL72 rack).
    pub scale_up_domain_gpus: Option<u32>,
    /// GPUs one node holds in the systems the part ships in, where not the usual 8 (a GB200
    /// compute tray's 4, a GH200 node's 1); `estimate` takes it for `gpus_per_node`.
    pub gpus_per_node: Option<u32>,
    /// Cores the software runs as separate ranks on one device (NeuronCores), where more
    /// than one.
    pub cores_per_device: Option<u32>,
    pub interconnect: Option<String>,
    #[schema(value_type = Vec<Object>)]
    pub sources: Vec<Source>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct NvLinkJson {
    pub generation: u8,
    pub bandwidth_bytes_per_second: f64,
}

fn tflops(table: &PeakTable) -> BTreeMap<String, f64> {
    table
        .iter()
        .map(|(precision, rate)| (precision.to_string(), rate.as_tflops()))
        .collect()
}

impl From<&Accelerator> for GpuJson {
    fn from(a: &Accelerator) -> Self {
        GpuJson {
            id: a.id.to_string(),
            name: a.name.clone(),
            vendor: a.vendor.clone(),
            architecture: a.architecture.clone(),
            compute_capability: a.compute_capability.clone(),
            form_factor: a.form_factor.clone(),
            release_year: a.release_year,
            aliases: a.aliases.clone(),
            memory_bytes: a.memory.as_u64(),
            reported_memory_bytes: a.reported_memory.map(|m| m.as_u64()),
            memory_type: a.memory_type.clone(),
            memory_bandwidth_bytes_per_second: a.memory_bandwidth.map(|b| b.0),
            peak_tflops: tflops(&a.dense),
            sparse_peak_tflops: tflops(&a.sparse),
            tdp_watts: a.tdp.map(|w| w.0),
            pcie_generation: a.pcie_generation,
            nvlink: a.nvlink.map(|link| NvLinkJson {
                generation: link.generation,
                bandwidth_bytes_per_second: link.bandwidth.0,
            }),
            peer_link_bytes_per_second: a.peer_link.map(|b| b.0),
            scale_up_domain_gpus: a.scale_up_domain,
            gpus_per_node: a.gpus_per_node,
            cores_per_device: a.cores_per_device,
            interconnect: a.interconnect.clone(),
            sources: a.sources.clone(),
        }
    }
}
