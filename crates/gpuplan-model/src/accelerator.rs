use crate::{
    AcceleratorId, Bytes, BytesPerSecond, Engine, FlopsPerSecond, Precision, Source, StackSupport, Task, Watts,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Peak throughput per precision. A precision is absent when the hardware lacks it or no
/// source states it; there are no zeros standing for "unknown".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PeakTable(pub BTreeMap<Precision, FlopsPerSecond>);

impl PeakTable {
    pub fn get(&self, precision: Precision) -> Option<FlopsPerSecond> {
        self.0.get(&precision).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (Precision, FlopsPerSecond)> + '_ {
        self.0.iter().map(|(precision, rate)| (*precision, *rate))
    }
}

/// An NVIDIA NVLink attachment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NvLink {
    pub generation: u8,
    /// Total bidirectional bandwidth per GPU.
    pub bandwidth: BytesPerSecond,
}

/// GPUs a node holds where a part's systems do not say otherwise (an HGX board, an MI300X
/// platform).
pub const USUAL_GPUS_PER_NODE: u32 = 8;

/// One accelerator model (a GPU, TPU chip or Neuron device) with its datasheet figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accelerator {
    pub id: AcceleratorId,
    pub name: String,
    pub vendor: String,
    pub architecture: String,
    pub compute_capability: Option<String>,
    pub form_factor: Option<String>,
    pub release_year: Option<u16>,
    /// Device memory as the datasheet states it.
    pub memory: Bytes,
    /// Memory the driver reports, where a source gives it (slightly less than `memory`).
    pub reported_memory: Option<Bytes>,
    pub memory_type: Option<String>,
    pub memory_bandwidth: Option<BytesPerSecond>,
    pub tdp: Option<Watts>,
    pub pcie_generation: Option<u8>,
    pub nvlink: Option<NvLink>,
    pub interconnect: Option<String>,
    /// Total bidirectional bandwidth per device over a scale-up link other than NVLink
    /// (AMD Infinity Fabric, AWS NeuronLink, Google ICI).
    #[serde(default)]
    pub peer_link: Option<BytesPerSecond>,
    /// GPUs one scale-up domain joins in the systems the part ships in (8 on an HGX board or
    /// an MI300X platform, 72 in a GB200 NVL72 rack): tensor-, expert- and context-parallel
    /// groups within it talk over the scale-up link, larger ones over the network.
    #[serde(default)]
    pub scale_up_domain: Option<u32>,
    /// GPUs one node holds in the systems the part ships in, where that is not the usual
    /// server's 8: a GB200 or GB300 compute tray's 4, a GH200 node's 1.
    #[serde(default)]
    pub gpus_per_node: Option<u32>,
    /// Compute cores the software runs as separate ranks on one device, where that is more
    /// than one: a Trainium or Inferentia2 chip is two NeuronCores, each a worker process of
    /// a training job and a tensor-parallel rank of a served model; a Trainium2 chip four
    /// logical ones at the SDK's default pairing. `None`: the device is one rank (a GPU).
    #[serde(default)]
    pub cores_per_device: Option<u32>,
    pub aliases: Vec<String>,
    /// Dense peak throughput (no sparsity).
    pub dense: PeakTable,
    /// 2:4 structured-sparsity figures, kept apart from the dense ones.
    pub sparse: PeakTable,
    pub sources: Vec<Source>,
    /// The software stacks that run models on it, and for what.
    #[serde(default)]
    pub stacks: Vec<StackSupport>,
}

impl Accelerator {
    /// The first of its stacks (within `allowed`, empty: any) that runs `task` for a model of
    /// `model_type` with `engine`; else every stack's reason.
    pub fn stack_for(
        &self,
        allowed: &[crate::SoftwareStack],
        task: Task,
        model_type: Option<&str>,
        engine: Engine,
    ) -> Result<&StackSupport, String> {
        let candidates: Vec<&StackSupport> = self
            .stacks
            .iter()
            .filter(|s| allowed.is_empty() || allowed.contains(&s.stack))
            .collect();
        if candidates.is_empty() {
            return Err(if self.stacks.is_empty() {
                "no software stack is recorded for it".to_string()
            } else {
                let names: Vec<String> = self.stacks.iter().map(|s| s.stack.to_string()).collect();
                format!("it runs {} only", names.join(", "))
            });
        }
        let mut reasons = Vec::new();
        for support in candidates {
            match support.runs(task, model_type, engine) {
                Ok(()) => return Ok(support),
                Err(reason) => reasons.push(reason),
            }
        }
        reasons.dedup();
        Err(reasons.join("; "))
    }

    /// GPUs one node of the part's systems holds: the recorded figure, else
    /// [`USUAL_GPUS_PER_NODE`].
    pub fn node_gpus(&self) -> u32 {
        self.gpus_per_node.unwrap_or(USUAL_GPUS_PER_NODE)
    }

    /// Ranks (worker processes, tensor-parallel ranks) one device hosts: its cores where the
    /// software addresses them one by one, else 1.
    pub fn ranks_per_device(&self) -> u32 {
        self.cores_per_device.unwrap_or(1).max(1)
    }

    /// Memory available to a program: the driver-reported figure when known, else the
    /// datasheet figure.
    pub fn usable_memory(&self) -> Bytes {
        self.reported_memory.unwrap_or(self.memory)
    }

    /// Dense peak at `precision`.
    pub fn peak(&self, precision: Precision) -> Option<FlopsPerSecond> {
        self.dense.get(precision)
    }

    /// The CUDA compute capability, NVIDIA only.
    pub fn cuda_capability(&self) -> Option<crate::ComputeCapability> {
        crate::ComputeCapability::parse(self.compute_capability.as_deref()?)
    }

    /// The major CUDA compute capability (8 for `"8.6"`, 10 for `"10.0"`), NVIDIA only.
    pub fn compute_capability_major(&self) -> Option<u32> {
        self.compute_capability.as_deref()?.split('.').next()?.parse().ok()
    }

    /// Whether the part sits on an NVLink baseboard or board of its own (SXM modules, and the
    /// Grace superchips GH200, GB200 and GB300, whose GPUs are NVLink-connected in their
    /// systems), so that without an offering's word its node's GPUs are taken as NVLinked.
    pub fn on_nvlink_board(&self) -> bool {
        self.nvlink.is_some()
            && self
                .form_factor
                .as_deref()
                .is_some_and(|f| f.starts_with("SXM") || f.eq_ignore_ascii_case("superchip"))
    }

    /// Exponentials a second the special-function units return (softmax's `exp2f`), NVIDIA
    /// parts whose 32-bit peak and compute capability are known: the 32-bit peak counts two
    /// FLOPs an FMA lane a clock, and the capability says how many lanes share one
    /// exponential a clock ([`crate::ComputeCapability::fp32_lanes_per_exponential`]). B200:
    /// 75 TFLOPS / 2 / 8 = 4.7 × 10¹² a second.
    pub fn exponentials_per_second(&self) -> Option<f64> {
        let lanes = self.cuda_capability()?.fp32_lanes_per_exponential()?;
        Some(self.peak(Precision::Fp32)?.0 / 2.0 / lanes)
    }

    /// Ampere and newer (compute capability 8.0+): bf16 at the fp16 tensor rate, even where a
    /// datasheet lists only fp16 (A10G).
    pub fn is_ampere_or_newer(&self) -> bool {
        self.compute_capability_major().is_some_and(|major| major >= 8)
    }

    /// Whether FlashAttention-2 runs on the part, so that attention keeps no score matrix:
    /// NVIDIA from compute capability 8.0, and AMD's CDNA 2 to 4 parts (MI200, MI300 and MI350
    /// series) through its ROCm build (Dao-AILab/flash-attention README, "AMD ROCm Support":
    /// "MI200 or MI300 GPUs"; its setup.py builds for gfx90a, gfx942 and gfx950).
    pub fn runs_flash_attention(&self) -> bool {
        let cdna = self
            .architecture
            .strip_prefix("CDNA")
            .and_then(|generation| generation.trim().parse::<u32>().ok());
        self.is_ampere_or_newer() || (self.vendor == "AMD" && cdna.is_some_and(|generation| generation >= 2))
    }
}
