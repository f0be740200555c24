use crate::WorkloadTemplate;
use gpuplan_estimate::TrainingAmount;
use gpuplan_model::{AcceleratorId, BillingMode, ModelSpec, Precision, ProviderId};
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
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ServingTargets {
    /// Requests per second to sustain.
    pub qps: Option<f64>,
    /// Peak requests per second, for the autoscaling range.
    pub peak_qps: Option<f64>,
    pub ttft_seconds: Option<f64>,
    pub tpot_seconds: Option<f64>,
}

/// Everything a configuration must satisfy.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraints {
    pub deadline_hours: Option<f64>,
    pub budget_usd: Option<f64>,
    pub serving: ServingTargets,
    /// Empty: all providers.
    pub providers: Vec<ProviderId>,
    /// Region prefixes; empty: all.
    pub regions: Vec<String>,
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
}

impl Default for Constraints {
    fn default() -> Self {
        Constraints {
            deadline_hours: None,
            budget_usd: None,
            serving: ServingTargets::default(),
            providers: Vec::new(),
            regions: Vec::new(),
            gpus: Vec::new(),
            exclude_gpus: Vec::new(),
            billing: vec![BillingMode::OnDemand],
            max_gpus: 512,
            max_nodes: 64,
            memory_margin: DEFAULT_MEMORY_MARGIN,
            min_vcpus_per_gpu: None,
            min_host_memory_gib_per_gpu: None,
        }
    }
}

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
}
