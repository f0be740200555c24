use crate::replica::SplitPools;
use gpuplan_estimate::Estimate;
use gpuplan_estimate::serving::GoodputLimit;
use gpuplan_model::{BillingMode, NodeFabric, Offering, SoftwareStack, Workload};
use serde::Serialize;

/// One feasible configuration, priced.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    /// The offering (zones folded: the region's on-demand price, its lowest spot price).
    pub offering: Offering,
    pub billing: BillingMode,
    /// Instances rented (training nodes, or serving instances).
    pub nodes: u32,
    /// GPUs rented in all.
    pub gpus: u32,
    pub workload: Workload,
    pub estimate: Estimate,
    /// Price of all instances per hour under this billing mode.
    pub hourly_usd: f64,
    /// Time to finish the training job, when an amount was given.
    pub time_seconds: Option<f64>,
    /// Cost of the job, when its length is known.
    pub total_usd: Option<f64>,
    /// Serving: model replicas and the autoscaling range.
    pub serving: Option<Serving>,
    /// The value the ranking compares for cost, and for time.
    pub cost_metric: f64,
    pub time_metric: f64,
    /// Why this configuration is here, in words.
    pub why: Vec<String>,
    /// Things that do not disqualify it but a user should know.
    pub warnings: Vec<String>,
    /// Rent to first useful step (provisioning, image pull, staging), part of `time_seconds`.
    pub startup_seconds: Option<f64>,
    /// The network between nodes, for multi-node configurations.
    pub fabric: Option<NodeFabric>,
    /// The software stack it runs on.
    pub stack: Option<SoftwareStack>,
    /// Spot: interruptions expected over the job (all nodes together).
    pub expected_interruptions: Option<f64>,
}

/// How a serving configuration meets its load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Serving {
    /// Sequences each replica serves at once, chosen to meet the latency targets.
    pub batch_per_replica: u64,
    /// GPUs per replica (tensor parallel degree).
    pub gpus_per_replica: u32,
    pub replicas: u32,
    /// Requests per second one replica sustains at that batch.
    pub requests_per_second_per_replica: f64,
    pub min_replicas: u32,
    pub max_replicas: u32,
    pub usd_per_million_output_tokens: Option<f64>,
    pub usd_per_thousand_requests: Option<f64>,
    /// How each replica batches and the latency it gives at its share of the load.
    #[serde(flatten)]
    pub latency: ServingLatency,
    /// Prefill and decode on separate pools, where that needs fewer instances; `replicas`
    /// then counts both pools.
    pub disaggregated: Option<SplitPools>,
    /// Spot rows: the floor on another billing mode and the spot share, priced with reclaims.
    pub fleet: Option<Fleet>,
    /// One replica at a light load: what taking it to zero when idle would do.
    pub scale_to_zero: Option<crate::ScaleToZero>,
    /// More than one instance at a given load: what each replica would carry with one fewer.
    pub one_fewer: Option<crate::OneFewer>,
    /// The replica's load point, whose latency percentiles are worked out once the plan is
    /// ranked, for the configurations it keeps (an index into the search's own table).
    #[serde(skip)]
    pub(crate) pending_latency: Option<u32>,
}

/// A serving fleet whose instances are billed under two modes: a floor of reserved or
/// on-demand instances for the minimum replicas, the rest on spot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fleet {
    /// The mode of the floor; `None`: every instance on spot.
    pub floor_billing: Option<BillingMode>,
    pub floor_instances: u32,
    pub spot_instances: u32,
    /// Spot reclaims expected per instance-hour.
    pub reclaims_per_hour: f64,
    /// Time to replace a reclaimed instance (boot and model load, billed without serving).
    pub replacement_seconds: f64,
    pub floor_usd_per_hour: f64,
    /// The spot share's price with the replacements' billed time.
    pub spot_usd_per_hour: f64,
}

/// How a replica groups requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Batching {
    /// Iteration-level scheduling with chunked prefill (vLLM, SGLang, TensorRT-LLM, TGI).
    Continuous,
    /// Requests grouped into batches within a queue delay (Triton's dynamic batcher).
    Dynamic,
    /// An offline batch processed at full concurrency.
    Offline,
}

pub use gpuplan_estimate::serving::Percentiles;

/// The latency side of a serving recommendation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServingLatency {
    pub batching: Batching,
    /// Highest load one replica sustains within the latency targets, requests/s.
    pub goodput_per_replica: Option<f64>,
    /// What bounds the goodput.
    pub goodput_limit: Option<GoodputLimit>,
    /// Load each replica carries in the plan, requests/s.
    pub load_per_replica: f64,
    /// Time to first token at that load, seconds (dynamic batching: the wait for the running
    /// batch included).
    pub ttft: Option<Percentiles>,
    /// Time per output token at that load, seconds.
    pub tpot: Option<Percentiles>,
    /// Sequences decoding at once on a replica, on average.
    pub concurrent_sequences: Option<f64>,
    /// Share of the KV cache in use.
    pub kv_cache_utilisation: Option<f64>,
    /// A closed loop (`concurrency`): the users one replica takes within the targets, and
    /// those each replica carries in the plan.
    pub users_within_targets_per_replica: Option<f64>,
    pub users_per_replica: Option<f64>,
    /// Mean end-to-end latency of a request, seconds.
    #[serde(skip)]
    pub request_latency_seconds: f64,
}

impl ServingLatency {
    /// An offline batch: no latency targets, full concurrency.
    pub fn offline(per_replica: f64) -> ServingLatency {
        ServingLatency {
            batching: Batching::Offline,
            goodput_per_replica: None,
            goodput_limit: None,
            load_per_replica: per_replica,
            ttft: None,
            tpot: None,
            concurrent_sequences: None,
            kv_cache_utilisation: None,
            users_within_targets_per_replica: None,
            users_per_replica: None,
            request_latency_seconds: 0.0,
        }
    }
}

impl Recommendation {
    /// `aws p5.48xlarge (us-east-1) 8× H100-SXM5-80GB ×2, on-demand`.
    pub fn label(&self) -> String {
        candidate_label(&self.offering, self.nodes, Some(self.billing))
    }
}

/// A short name for a candidate in explanations.
pub fn candidate_label(offering: &Offering, nodes: u32, billing: Option<BillingMode>) -> String {
    let gpus = match &offering.accelerator {
        Some(id) => format!("{}× {id}", offering.accelerator_count),
        None => "CPU".to_string(),
    };
    let mut label = format!(
        "{} {} ({}) {gpus}",
        offering.provider,
        offering.instance_type,
        offering.region.as_deref().unwrap_or("any region")
    );
    if nodes > 1 {
        label.push_str(&format!(" ×{nodes}"));
    }
    if let Some(billing) = billing {
        label.push_str(&format!(", {billing}"));
    }
    label
}
