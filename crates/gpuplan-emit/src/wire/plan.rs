use super::estimate::LayoutJson;
use gpuplan_model::field::{Defaulted, Naming};
use gpuplan_plan::{Constraint, Infeasible, Plan, Recommendation, Rejection, Serving, TabularOption, pareto_front};
use serde::Serialize;
use std::collections::BTreeMap;

/// `gpuplan plan --format json`: the stable contract of docs/json.md.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PlanJson {
    pub recommendations: Vec<RecommendationJson>,
    pub cheapest: usize,
    pub fastest: usize,
    pub pareto: Vec<usize>,
    pub rejected: Vec<RejectionJson>,
    pub rejected_counts: BTreeMap<String, usize>,
    pub candidates_evaluated: usize,
    pub feasible_candidates: usize,
    /// Values gpuplan chose because the request left them open, one line each in the asking
    /// front end's words.
    pub defaults: Vec<String>,
    /// The same choices as records: the field's key, the value and why.
    pub defaulted: Vec<super::DefaultedJson>,
    pub assumptions: Vec<String>,
    /// What was asked: the plan's options (absent for tabular plans), so that a saved plan can
    /// be exported, compared or planned again.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub request: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RecommendationJson {
    pub provider: String,
    pub instance_type: String,
    pub region: Option<String>,
    pub gpu: Option<String>,
    pub gpus: u32,
    pub gpus_per_node: u32,
    pub nodes: u32,
    pub layout: LayoutJson,
    /// Training: the global batch (sequences or samples per optimizer step) and the
    /// micro-batch per data-parallel replica this configuration uses; null for serving.
    pub batch: Option<u64>,
    pub micro_batch: Option<u64>,
    pub precision: String,
    pub billing: String,
    pub interruptible: bool,
    pub memory_per_gpu_bytes: u64,
    pub memory_capacity_bytes: u64,
    pub time_seconds: Option<f64>,
    /// Training: the 80 % interval of the time and of the total, from the measured interval of
    /// the estimate's speed (held-out validation runs); null otherwise.
    pub time_interval_seconds: Option<[f64; 2]>,
    pub total_usd_interval: Option<[f64; 2]>,
    pub hourly_usd: f64,
    pub total_usd: Option<f64>,
    pub tokens_per_second: Option<f64>,
    pub mfu: Option<f64>,
    #[schema(value_type = Option<Object>)]
    pub serving: Option<Serving>,
    /// Rent to first useful step, seconds (part of `time_seconds`).
    pub startup_seconds: Option<f64>,
    /// The network between nodes, for multi-node configurations.
    pub fabric: Option<FabricJson>,
    /// The software stack it runs on: cuda, rocm, neuron or xla.
    pub stack: Option<String>,
    /// Spot: interruptions expected over the job.
    pub expected_interruptions: Option<f64>,
    /// Checks the offering's prices failed (used only with --trust-prices).
    pub price_flags: Vec<String>,
    pub why: Vec<String>,
    pub warnings: Vec<String>,
}

/// The node-to-node network of a multi-node configuration.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FabricJson {
    /// efa, infiniband, rocev2, gpudirect-tcpx, gpudirect-tcpxo, ici or ethernet.
    #[schema(value_type = String)]
    pub kind: gpuplan_model::FabricKind,
    pub gbps: Option<f64>,
    pub cluster_product: Option<String>,
    pub source: Option<String>,
}

impl From<&gpuplan_model::NodeFabric> for FabricJson {
    fn from(f: &gpuplan_model::NodeFabric) -> Self {
        FabricJson {
            kind: f.kind,
            gbps: f.bandwidth.map(|g| g.0),
            cluster_product: f.cluster_product.clone(),
            source: f.source.as_ref().map(|s| s.url.clone()),
        }
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RejectionJson {
    pub candidate: String,
    #[schema(value_type = String)]
    pub constraint: Constraint,
    pub reason: String,
}

/// `gpuplan plan` when nothing is feasible (exit code 1).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct InfeasibleJson {
    pub feasible: bool,
    pub candidates_evaluated: usize,
    pub rejected_counts: BTreeMap<String, usize>,
    pub nearest: Vec<RejectionJson>,
    pub suggestion: Option<String>,
}

impl From<&Rejection> for RejectionJson {
    fn from(r: &Rejection) -> Self {
        RejectionJson {
            candidate: r.candidate.clone(),
            constraint: r.constraint,
            reason: r.reason.clone(),
        }
    }
}

impl From<&Recommendation> for RecommendationJson {
    fn from(r: &Recommendation) -> Self {
        let o = &r.offering;
        RecommendationJson {
            provider: o.provider.to_string(),
            instance_type: o.instance_type.clone(),
            region: o.region.clone(),
            gpu: o.accelerator.as_ref().map(|a| a.to_string()),
            gpus: r.gpus,
            gpus_per_node: o.accelerator_count,
            nodes: r.nodes,
            layout: r.workload.layout.into(),
            batch: r.estimate.training.map(|_| r.workload.batch),
            micro_batch: r.estimate.training.map(|_| r.workload.micro_batch),
            precision: r.workload.precision.to_string(),
            billing: r.billing.to_string(),
            interruptible: r.billing == gpuplan_model::BillingMode::Spot,
            memory_per_gpu_bytes: r.estimate.memory.per_gpu.as_u64(),
            memory_capacity_bytes: r.estimate.memory.capacity.as_u64(),
            time_seconds: r.time_seconds,
            time_interval_seconds: slower_and_faster(r, r.time_seconds),
            total_usd_interval: slower_and_faster(r, r.total_usd),
            hourly_usd: r.hourly_usd,
            total_usd: r.total_usd,
            tokens_per_second: r.estimate.training.map(|t| t.tokens_per_second).filter(|t| *t > 0.0),
            mfu: r.estimate.training.map(|t| t.mfu),
            serving: r.serving,
            startup_seconds: r.startup_seconds,
            fabric: r.fabric.as_ref().map(FabricJson::from),
            stack: r.stack.map(|s| s.to_string()),
            expected_interruptions: r.expected_interruptions,
            price_flags: o.price_flags.iter().map(|f| f.describe().to_string()).collect(),
            why: r.why.clone(),
            warnings: r.warnings.clone(),
        }
    }
}

/// A training figure proportional to the run's length (its time, its bill) over the 80 %
/// interval of the estimate's speed: the fast end first.
fn slower_and_faster(r: &Recommendation, value: Option<f64>) -> Option<[f64; 2]> {
    let [slow, fast] = r.estimate.uncertainty.speed_interval?;
    r.estimate.training?;
    value.map(|v| [v / fast, v / slow])
}

fn counts(counts: &BTreeMap<Constraint, usize>) -> BTreeMap<String, usize> {
    counts
        .iter()
        .map(|(constraint, count)| (constraint.to_string(), *count))
        .collect()
}

impl PlanJson {
    pub fn new(plan: &Plan, chosen: &[Defaulted], naming: Naming) -> PlanJson {
        let (defaults, defaulted) = super::defaulted::defaults(chosen, naming);
        PlanJson {
            recommendations: plan.recommendations.iter().map(RecommendationJson::from).collect(),
            cheapest: plan.cheapest,
            fastest: plan.fastest,
            pareto: plan.pareto.clone(),
            rejected: plan.rejected.iter().map(RejectionJson::from).collect(),
            rejected_counts: counts(&plan.rejected_counts),
            candidates_evaluated: plan.evaluated,
            feasible_candidates: plan.feasible,
            defaults,
            defaulted,
            assumptions: plan.assumptions.clone(),
            request: None,
        }
    }
}

impl InfeasibleJson {
    /// The report, its suggestion naming the request's fields as `naming` writes them.
    pub fn new(i: &Infeasible, naming: gpuplan_model::field::Naming) -> Self {
        InfeasibleJson {
            feasible: false,
            candidates_evaluated: i.evaluated,
            rejected_counts: counts(&i.rejected_counts),
            nearest: i.nearest.iter().map(RejectionJson::from).collect(),
            suggestion: i.suggestion.as_ref().map(|s| s.render(naming)),
        }
    }
}

impl PlanJson {
    /// The plan of a tabular (gradient-boosting) job, in the same contract.
    pub fn from_tabular(
        options: &[TabularOption],
        top: usize,
        chosen: &[Defaulted],
        naming: Naming,
        assumptions: &[String],
    ) -> PlanJson {
        let (defaults, defaulted) = super::defaulted::defaults(chosen, naming);
        let shown = &options[..options.len().min(top.max(1))];
        let points: Vec<(f64, f64)> = shown.iter().map(|o| (o.total_usd, o.time_seconds)).collect();
        let index_of_min = |key: &dyn Fn(&TabularOption) -> f64| {
            (0..shown.len())
                .min_by(|&a, &b| key(&shown[a]).total_cmp(&key(&shown[b])))
                .unwrap_or(0)
        };
        PlanJson {
            recommendations: shown
                .iter()
                .map(|o| RecommendationJson {
                    provider: o.provider.clone(),
                    instance_type: o.instance_type.clone(),
                    region: o.region.clone(),
                    gpu: o.gpu.clone(),
                    gpus: o.gpus,
                    gpus_per_node: o.gpus,
                    nodes: 1,
                    layout: gpuplan_model::ParallelLayout::single().into(),
                    batch: None,
                    micro_batch: None,
                    precision: "fp32".to_string(),
                    billing: o.billing.to_string(),
                    interruptible: o.billing == gpuplan_model::BillingMode::Spot,
                    memory_per_gpu_bytes: o.memory_needed_bytes,
                    memory_capacity_bytes: o.memory_available_bytes,
                    time_seconds: Some(o.time_seconds),
                    time_interval_seconds: None,
                    total_usd_interval: None,
                    hourly_usd: o.hourly_usd,
                    total_usd: Some(o.total_usd),
                    tokens_per_second: None,
                    mfu: None,
                    serving: None,
                    startup_seconds: None,
                    fabric: None,
                    stack: None,
                    expected_interruptions: None,
                    price_flags: Vec::new(),
                    why: o.why.clone(),
                    warnings: Vec::new(),
                })
                .collect(),
            cheapest: index_of_min(&|o| o.total_usd),
            fastest: index_of_min(&|o| o.time_seconds),
            pareto: pareto_front(&points, gpuplan_plan::DEFAULT_TOLERANCE),
            rejected: Vec::new(),
            rejected_counts: BTreeMap::new(),
            candidates_evaluated: options.len(),
            feasible_candidates: options.len(),
            defaults,
            defaulted,
            assumptions: assumptions.to_vec(),
            request: None,
        }
    }
}
