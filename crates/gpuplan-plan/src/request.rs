use crate::WorkloadTemplate;
use crate::input_pipeline::InputSettings;
use crate::startup::StartupOverrides;
use gpuplan_estimate::TrainingAmount;
use gpuplan_model::{
    AcceleratorId, BillingMode, LatencyTarget, ModelSpec, Precision, ProviderId, RequestMix, SoftwareStack,
};
use serde::Serialize;
use std::fmt;

/// What the ranking optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// Lowest total cost (serving: lowest cost per hour).
    #[default]
    Cost,
    /// Shortest time to finish (serving: lowest request latency).
    Time,
    /// Cost under a deadline, time under a budget; without either, the geometric mean of the
    /// two ratios to the best.
    Balanced,
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Objective::Cost => "cost",
            Objective::Time => "time",
            Objective::Balanced => "balanced",
        })
    }
}

/// Serving targets.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServingTargets {
    /// Requests per second to sustain.
    pub qps: Option<f64>,
    /// Peak requests per second, for the autoscaling range.
    pub peak_qps: Option<f64>,
    /// Time to first token at a percentile.
    pub ttft: Option<LatencyTarget>,
    /// Time per output token at a percentile.
    pub tpot: Option<LatencyTarget>,
    /// Prompt and output lengths of the traffic; `None`: every request at the template's
    /// `seq` and `output_tokens`.
    pub requests: Option<RequestMix>,
    /// Share of a replica's goodput kept free for bursts beyond Poisson arrivals and for
    /// forecast error; `None`: [`DEFAULT_SERVING_HEADROOM`].
    pub headroom: Option<f64>,
    /// A closed-loop load instead of `qps`: this many users, each sending the next request
    /// when the last one ends; replicas are sized by the users each takes within the targets.
    pub concurrency: Option<f64>,
}

/// Share of each replica's goodput a serving plan keeps free unless told otherwise: the
/// model's own error on held-out published loads is about this size, so a plan at goodput
/// minus it meets its targets on the systems measured.
pub const DEFAULT_SERVING_HEADROOM: f64 = 0.1;

impl ServingTargets {
    /// The headroom in force.
    pub fn headroom(&self) -> f64 {
        self.headroom.unwrap_or(DEFAULT_SERVING_HEADROOM)
    }
}

/// Everything a configuration must satisfy.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraints {
    pub deadline_hours: Option<f64>,
    pub budget_usd: Option<f64>,
    /// The most a configuration may cost per hour, all its instances together.
    pub max_hourly_usd: Option<f64>,
    pub serving: ServingTargets,
    /// Empty: all providers.
    pub providers: Vec<ProviderId>,
    /// Region prefixes; empty: all.
    pub regions: Vec<String>,
    /// Instance families as [`gpuplan_model::family_key`]s; empty: all.
    pub families: Vec<String>,
    /// The `(provider, region)` pairs allowed by what providers publish (SLA, compliance,
    /// country); `None`: all.
    pub locations: Option<std::collections::BTreeSet<(gpuplan_model::ProviderId, String)>>,
    /// Accelerators allowed; empty: all.
    pub gpus: Vec<AcceleratorId>,
    pub exclude_gpus: Vec<AcceleratorId>,
    pub billing: Vec<BillingMode>,
    pub max_gpus: u32,
    pub max_nodes: u32,
    /// Share of each GPU's memory kept free (fragmentation, spikes).
    pub memory_margin: f64,
    /// Host resources each GPU needs at least (data loading, preprocessing).
    pub min_vcpus_per_gpu: Option<f64>,
    pub min_host_memory_gib_per_gpu: Option<f64>,
    /// Host resources each instance needs at least, whatever its GPUs: vCPUs and GiB.
    pub min_vcpus: Option<f64>,
    pub min_memory_gib: Option<f64>,
    /// Local disk each instance needs at least, GB (datasets staged, checkpoints, caches).
    pub min_local_disk_gb: Option<f64>,
    /// The GPUs' CUDA compute capability at least (a kernel or build that needs it).
    pub min_compute_capability: Option<gpuplan_model::ComputeCapability>,
}

impl Default for Constraints {
    fn default() -> Self {
        Constraints {
            deadline_hours: None,
            budget_usd: None,
            max_hourly_usd: None,
            serving: ServingTargets::default(),
            providers: Vec::new(),
            regions: Vec::new(),
            families: Vec::new(),
            locations: None,
            gpus: Vec::new(),
            exclude_gpus: Vec::new(),
            billing: vec![BillingMode::OnDemand],
            max_gpus: DEFAULT_MAX_GPUS,
            max_nodes: DEFAULT_MAX_NODES,
            memory_margin: DEFAULT_MEMORY_MARGIN,
            min_vcpus_per_gpu: None,
            min_host_memory_gib_per_gpu: None,
            min_vcpus: None,
            min_memory_gib: None,
            min_local_disk_gb: None,
            min_compute_capability: None,
        }
    }
}

/// GPUs planned at most unless the user allows more: eight 8-GPU nodes, about what a
/// hyperscaler account rents on demand after a routine quota increase; larger clusters need
/// capacity reservations (AWS Capacity Blocks, GCP DWS calendar mode) and a deliberate choice.
pub const DEFAULT_MAX_GPUS: u32 = 64;

/// Nodes planned at most unless the user allows more.
pub const DEFAULT_MAX_NODES: u32 = 64;

/// How the job is run around its computation, and which prices and stacks are trusted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Operational {
    pub startup: StartupOverrides,
    /// Spot interruptions per node-hour; else the provider's published default.
    pub interruption_rate: Option<f64>,
    /// Share of a reserved term the capacity is used (this job and others); `None`: the job
    /// pays the whole term.
    pub utilisation: Option<f64>,
    /// Use prices that failed the catalog's checks.
    pub trust_prices: bool,
    /// Stacks allowed; empty: every stack that runs the request.
    pub stacks: Vec<SoftwareStack>,
    /// Offline batch inference: requests to process (with the deadline, the throughput).
    pub batch_requests: Option<f64>,
    /// How a vision job reads and decodes its images.
    pub input: InputSettings,
}

/// Differences in cost or time a plan treats as no difference unless told otherwise: the
/// estimators' median error on held-out published measurements is 7–12 % (docs/accuracy.md),
/// so a configuration that wins by less has not been shown to win.
pub const DEFAULT_TOLERANCE: f64 = 0.1;

/// Memory kept free on each GPU by default: estimates carry a ±10 % band (the validation
/// report), and an OOM costs more than a slightly larger GPU.
pub const DEFAULT_MEMORY_MARGIN: f64 = 0.10;

/// A planning question.
#[derive(Debug, Clone)]
pub struct PlanRequest<'a> {
    pub model: &'a ModelSpec,
    /// The workload; its `precision` is replaced by each of `precisions` in turn.
    pub template: WorkloadTemplate,
    /// Precisions (and quantisations) the user accepts, preferred first.
    pub precisions: Vec<Precision>,
    pub amount: Option<TrainingAmount>,
    pub constraints: Constraints,
    pub objective: Objective,
    /// Recommendations to return (the cheapest, fastest and Pareto-optimal are always kept).
    pub top: usize,
    /// A configuration beats another only by more than this share of cost or time: the
    /// Pareto front and the cheapest and fastest labels ignore smaller differences.
    pub tolerance: f64,
    pub operational: Operational,
    /// Set by the asker when nobody waits for the answer any more: the search stops.
    pub cancel: gpuplan_model::Cancel,
}
