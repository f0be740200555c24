//! The search: every offering × node count × layout × precision × billing mode, constrained,
//! priced and ranked.

use crate::configure::{Configured, configure};
use crate::input_pipeline::input_bound;
use crate::offering_source::OfferingSource;
use crate::pareto::pareto_front;
use crate::recommendation::{Batching, Recommendation, Serving, ServingLatency, candidate_label};
use crate::rejection::{Constraint, Rejection};
use crate::replica::{
    ContinuousReplica, Refusal, SplitPools, latency_at, latency_with_users, size_continuous, split_pools,
};
use crate::request::{Objective, Operational, PlanRequest, ServingTargets};
use crate::startup::{JobWeights, Startup, startup};
use gpuplan_catalog::fold_zones;
use gpuplan_estimate::spot::{SpotJob, expected};
use gpuplan_estimate::{Cluster, EstimateError, TrainingAmount, TrainingEstimate};
use gpuplan_model::{
    BillingMode, FabricKind, GpuInterconnect, Offering, Precision, RequestMix, SoftwareStack, Task,
    UNKNOWN_NODE_NETWORK_GBPS,
};
use std::collections::{BTreeMap, HashMap};

mod batch;
mod checks;
mod fleet;
mod one_fewer;
pub use one_fewer::{OneFewer, OneFewerReading};
mod price;
mod rank;
mod scale_to_zero;
pub use scale_to_zero::{SCALE_TO_ZERO_IDLE_SECONDS, ScaleToZero};
mod serving;
mod training;

use batch::*;
use checks::*;
use price::*;
use rank::*;
use serving::*;
use training::*;

/// Node counts tried for training: powers of two up to `max_nodes`, and `max_nodes` itself.
fn node_counts(max_nodes: u32) -> impl Iterator<Item = u32> {
    let powers = std::iter::successors(Some(1u32), |n| n.checked_mul(2)).take_while(move |n| *n < max_nodes);
    powers.chain(std::iter::once(max_nodes.max(1)))
}

/// Serving batches tried per replica.
const SERVING_BATCHES: [u64; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/// Below this per-node bandwidth multi-node training is not worth planning (Gbit/s).
pub const MIN_MULTI_NODE_GBPS: f64 = 25.0;

/// Below this per-node bandwidth multi-node training works but communication dominates.
pub const RECOMMENDED_MULTI_NODE_GBPS: f64 = 100.0;

/// Host resources per GPU that keep a training GPU fed (data loading, CPU-side optimizer
/// work): ≥ 8 vCPUs and ≥ 64 GiB RAM per A100/H100-class GPU (NVIDIA DGX A100/H100 ship 16
/// vCPU-equivalents and 128–256 GiB per GPU; cloud reference shapes p4d/p5/a3 have 12–24 vCPU
/// and 144–256 GiB per GPU).
pub const MIN_VCPUS_PER_LARGE_GPU: f64 = 8.0;
pub const MIN_HOST_GIB_PER_LARGE_GPU: f64 = 64.0;

/// Spot interruptions per node-hour where neither the user nor the catalog gives a rate for
/// the provider: 5 % per hour, the middle of the rates published for GPU spot capacity.
pub const FALLBACK_INTERRUPTIONS_PER_HOUR: f64 = 0.05;

/// GPUs a routine quota request yields on the clouds whose new accounts start at zero: one
/// 8-GPU node. Larger counts are marked with what the provider requires beyond it.
pub const ROUTINE_QUOTA_GPUS: u32 = 8;

/// Work assumed to price spot capacity when the job length is unknown (ranked per token).
pub const REFERENCE_SPOT_WORK_HOURS: f64 = 24.0;

/// Parameters above which plain Ethernet between training nodes earns a warning: models of
/// 13B and more are trained with tensor or pipeline parallelism across nodes, whose
/// per-layer traffic the published recipes run over InfiniBand or EFA (Megatron-LM,
/// Llama 2 and OPT training reports).
pub const FABRIC_ADVISED_ABOVE_PARAMETERS: u64 = 13_000_000_000;

/// The autoscaling floor as a share of the steady load: serving traffic follows a daily
/// cycle whose trough is a fraction of the mean, and a floor of a quarter keeps a warm
/// replica without paying for the peak overnight. An assumption, stated in the output's
/// range, not a measured figure.
pub const AUTOSCALE_FLOOR_SHARE: f64 = 0.25;

/// Hours in a month of continuous serving (8,760 / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;

/// The answer: ranked recommendations and why the rest lost.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Best first by the objective; the cheapest, the fastest and the Pareto front included.
    pub recommendations: Vec<Recommendation>,
    pub cheapest: usize,
    pub fastest: usize,
    /// Indices of the cost–time Pareto front, cheapest first.
    pub pareto: Vec<usize>,
    /// Nearest misses of each constraint.
    pub rejected: Vec<Rejection>,
    /// How many candidates each constraint removed.
    pub rejected_counts: BTreeMap<Constraint, usize>,
    /// Candidates evaluated (offering × nodes × precision × billing).
    pub evaluated: usize,
    /// All feasible candidates before truncation to `top`.
    pub feasible: usize,
    pub assumptions: Vec<String>,
}

/// No configuration satisfies every constraint.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no configuration satisfies the constraints ({evaluated} candidates evaluated)")]
pub struct Infeasible {
    pub rejected_counts: BTreeMap<Constraint, usize>,
    /// The nearest misses, nearest first.
    pub nearest: Vec<Rejection>,
    /// What to relax, in words, naming the request's fields as `{key}` placeholders that each
    /// front end writes in its own words (a flag, a JSON key, a form field).
    pub suggestion: Option<gpuplan_model::field::Phrase>,
    pub evaluated: usize,
}

/// A request the planner cannot work on at all.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Infeasible(Box<Infeasible>),
    #[error("{0}")]
    Invalid(String),
    #[error("the plan was cancelled: nobody waits for it")]
    Cancelled,
}

/// Whether `offering` belongs to one of `families` (keys).
fn in_families(offering: &Offering, families: &[String]) -> bool {
    gpuplan_model::instance_families(offering.provider.as_str(), &offering.instance_type)
        .iter()
        .any(|name| families.contains(&gpuplan_model::family_key(name)))
}

/// The offerings of `source` the request allows, zones folded into regions.
fn eligible(source: &impl OfferingSource, request: &PlanRequest) -> Vec<Offering> {
    let c = &request.constraints;
    let allowed = source.offerings().iter().filter(|offering| {
        let Some(accelerator) = &offering.accelerator else {
            return false;
        };
        let region = offering.region.as_deref().unwrap_or("").to_lowercase();
        (c.providers.is_empty() || c.providers.contains(&offering.provider))
            && (c.gpus.is_empty() || c.gpus.contains(accelerator))
            && !c.exclude_gpus.contains(accelerator)
            && (c.regions.is_empty() || c.regions.iter().any(|r| region.starts_with(&r.to_lowercase())))
            && (c.families.is_empty() || in_families(offering, &c.families))
            && c.locations.as_ref().is_none_or(|allowed| {
                allowed.contains(&(offering.provider.clone(), offering.region.clone().unwrap_or_default()))
            })
    });
    if request.operational.trust_prices {
        return fold_zones(allowed);
    }
    // A zone's flagged price must not become its region's price when zones fold. Only the
    // few flagged rows are copied.
    let flagged: Vec<Offering> = allowed
        .clone()
        .filter(|o| !o.price_flags.is_empty())
        .map(without_flagged_prices)
        .collect();
    let mut folded = fold_zones(allowed.filter(|o| o.price_flags.is_empty()).chain(flagged.iter()));
    // Another zone's price may stand in for a flagged one; keep only the flags of prices gone.
    for offering in &mut folded {
        let (spot, on_demand) = (offering.spot.is_some(), offering.on_demand.is_some());
        offering.price_flags.retain(|flag| match flag.billing() {
            BillingMode::Spot => !spot,
            _ => !on_demand,
        });
    }
    folded
}

/// The offering with the prices that failed the catalog's checks removed (their flags kept,
/// so the rejection can say why).
fn without_flagged_prices(offering: &Offering) -> Offering {
    let mut checked = offering.clone();
    for flag in &offering.price_flags {
        match flag.billing() {
            BillingMode::Spot => checked.spot = None,
            _ => checked.on_demand = None,
        }
    }
    checked
}

/// One estimate per cluster shape, shared by every offering of that shape.
type ShapeKey = (String, u32, u32, Option<GpuInterconnect>, u64, Precision, u64, u32);

/// One serving replica sizing per replica shape (GPU, GPUs, link, precision, expert-parallel
/// degree): the same for every offering and region of that shape.
type ReplicaKey = (String, u32, Option<GpuInterconnect>, Precision, u32);

/// The replica size an offering gets (GPU, GPUs an instance, link, node network, precision):
/// the same for every offering and region of that instance shape.
type InstanceShapeKey = (String, u32, Option<GpuInterconnect>, u64, Precision);

/// The latency of the replica an instance shape gets, at a load per replica (requests/s and
/// users, as bits).
type LatencyKey = (InstanceShapeKey, u64, Option<u64>);

/// The instance-shape key of `offering` at `precision`.
fn instance_shape_key(offering: &Offering, precision: Precision) -> InstanceShapeKey {
    (
        accelerator_key(offering),
        offering.accelerator_count,
        offering.gpu_interconnect,
        network_key(offering),
        precision,
    )
}

/// The accelerator of `offering` in a key, empty where it has none.
fn accelerator_key(offering: &Offering) -> String {
    offering.accelerator.as_ref().map(|a| a.to_string()).unwrap_or_default()
}

/// The node network of `offering` in a key: tenths of Gbps, 0 where it states none.
fn network_key(offering: &Offering) -> u64 {
    node_network_gbps(offering).map_or(0, |n| (n * 10.0) as u64)
}

/// The replica-shape key of `gpus` GPUs of `offering`'s accelerator.
fn replica_key(offering: &Offering, gpus: u32, precision: Precision, ep: u32) -> ReplicaKey {
    (
        accelerator_key(offering),
        gpus,
        offering.gpu_interconnect,
        precision,
        ep,
    )
}

/// A price per instance-hour under a billing mode, with the note a derived price carries.
type Priced = (BillingMode, f64, Option<String>);

/// One offering at one precision, priced, as the evaluators take it.
struct Candidate<'a> {
    offering: &'a Offering,
    stack: Option<SoftwareStack>,
    precision: Precision,
    priced: &'a [Priced],
}

/// What an evaluator found for one candidate (and, merged, the search for all): the
/// configurations that work, the candidates each constraint removed, and how many candidates
/// were tried.
#[derive(Default)]
struct Outcomes {
    feasible: Vec<Recommendation>,
    rejections: Vec<Rejection>,
    evaluated: usize,
}

impl Outcomes {
    fn reject(&mut self, rejection: Rejection) {
        self.rejections.push(rejection);
    }

    /// These outcomes and `other`'s together.
    fn merge(&mut self, other: Outcomes) {
        self.feasible.extend(other.feasible);
        self.rejections.extend(other.rejections);
        self.evaluated += other.evaluated;
    }

    /// Rejections per constraint.
    fn counts(&self) -> BTreeMap<Constraint, usize> {
        let mut counts = BTreeMap::new();
        for rejection in &self.rejections {
            *counts.entry(rejection.constraint).or_default() += 1;
        }
        counts
    }
}

struct Evaluator<'a, S: OfferingSource> {
    source: &'a S,
    request: &'a PlanRequest<'a>,
    cache: HashMap<ShapeKey, Result<Option<Configured>, EstimateError>>,
    replicas: HashMap<ReplicaKey, Result<Option<SizedReplica>, Rejection>>,
    /// Disaggregated pools per replica shape and KV-transfer bandwidth (MB/s).
    splits: HashMap<(ReplicaKey, u64), Option<SplitPools>>,
    /// The replica size chosen per instance shape.
    sized: HashMap<InstanceShapeKey, Result<SizedReplica, Rejection>>,
    /// A replica's latency at its share of the load, and where its percentiles are pending
    /// the index of its load point in `points`.
    latencies: HashMap<LatencyKey, (ServingLatency, Option<u32>)>,
    /// The load points whose latency percentiles are worked out once the plan is ranked.
    points: Vec<gpuplan_estimate::serving::LoadPoint>,
}

impl<S: OfferingSource> Evaluator<'_, S> {
    fn configured(
        &mut self,
        offering: &Offering,
        gpus: u32,
        gpus_per_node: u32,
        precision: Precision,
        batch: Option<u64>,
        ep: u32,
    ) -> Result<Option<Configured>, EstimateError> {
        let accelerator_id = accelerator_key(offering);
        let Some(accelerator) = offering.accelerator.as_ref().and_then(|id| self.source.accelerator(id)) else {
            return Ok(None);
        };
        // bf16 on GPUs that lack it (V100, T4) means fp16, as the user-facing default says.
        let precision = if precision == Precision::Bf16
            && accelerator.peak(Precision::Bf16).is_none()
            && accelerator.peak(Precision::Fp16).is_some()
            && !accelerator.is_ampere_or_newer()
        {
            Precision::Fp16
        } else {
            precision
        };
        let network = network_key(offering);
        let key = (
            accelerator_id,
            gpus,
            gpus_per_node,
            offering.gpu_interconnect,
            network,
            precision,
            batch.unwrap_or(0),
            ep,
        );
        if let Some(cached) = self.cache.get(&key) {
            return cached.clone();
        }
        let cluster = Cluster::new(
            accelerator,
            gpus,
            gpus_per_node,
            offering.gpu_interconnect,
            node_network_gbps(offering),
        );
        let mut template = self.request.template.clone();
        template.precision = precision;
        template.ep = ep;
        // Flash attention only where the hardware runs it.
        template.flash_attention &= accelerator.runs_flash_attention();
        if batch.is_some() {
            template.batch = batch;
        }
        let result = configure(
            self.request.model,
            accelerator,
            &template,
            cluster,
            self.request.amount,
            self.request.constraints.memory_margin,
        );
        self.cache.insert(key, result.clone());
        result
    }
}

/// Plans `request` over `source`.
pub fn plan(source: &impl OfferingSource, request: &PlanRequest) -> Result<Plan, PlanError> {
    let c = &request.constraints;
    if request.precisions.is_empty() {
        return Err(PlanError::Invalid("no precision allowed".to_string()));
    }
    if c.billing.is_empty() {
        return Err(PlanError::Invalid("no billing mode allowed".to_string()));
    }
    if c.deadline_hours.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
        return Err(PlanError::Invalid(
            "the deadline must be a positive duration".to_string(),
        ));
    }
    if c.budget_usd.is_some_and(|b| !(b > 0.0 && b.is_finite())) {
        return Err(PlanError::Invalid("the budget must be a positive amount".to_string()));
    }
    let serving = request.template.task == Task::Inference;
    let mut evaluator = Evaluator {
        replicas: HashMap::new(),
        splits: HashMap::new(),
        sized: HashMap::new(),
        latencies: HashMap::new(),
        points: Vec::new(),
        source,
        request,
        cache: HashMap::new(),
    };
    let mut outcomes = Outcomes::default();

    // Whether each accelerator's stacks run the request, decided once per accelerator.
    let mut stacks: HashMap<Option<gpuplan_model::AcceleratorId>, Result<Option<SoftwareStack>, String>> =
        HashMap::new();
    for offering in eligible(source, request) {
        if request.cancel.is_cancelled() {
            return Err(PlanError::Cancelled);
        }
        let per_node = offering.accelerator_count;
        if per_node == 0 {
            continue;
        }
        if let Some(rejection) = host_rejection(source, &offering, c) {
            outcomes.evaluated += 1;
            outcomes.reject(rejection);
            continue;
        }
        let stack_key = offering.accelerator.clone();
        let stack = stacks
            .entry(stack_key)
            .or_insert_with(|| stack_rejection(source, &offering, request).map_err(|r| r.reason))
            .clone()
            .map_err(|reason| {
                Box::new(Rejection::outright(
                    candidate_label(&offering, 1, None),
                    Constraint::Stack,
                    reason,
                ))
            });
        let stack = match stack {
            Ok(stack) => stack,
            Err(rejection) => {
                outcomes.evaluated += 1;
                outcomes.reject(*rejection);
                continue;
            }
        };
        let trusted =
            |billing: BillingMode| request.operational.trust_prices || offering.price_flagged(billing).is_none();
        let priced: Vec<Priced> = c
            .billing
            .iter()
            .filter(|billing| trusted(**billing))
            .filter_map(|&billing| hourly_price(source, &offering, billing).map(|(price, note)| (billing, price, note)))
            .collect();
        if priced.is_empty() {
            outcomes.evaluated += 1;
            let flagged: Vec<&str> = offering.price_flags.iter().map(|f| f.describe()).collect();
            let reason = if flagged.is_empty() {
                format!(
                    "no price for {}",
                    c.billing.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(" or ")
                )
            } else {
                format!(
                    "price failed the catalog's checks ({}); --trust-prices uses it",
                    flagged.join(", ")
                )
            };
            outcomes.reject(Rejection::outright(
                candidate_label(&offering, 1, None),
                Constraint::Price,
                reason,
            ));
            continue;
        }
        for &precision in &request.precisions {
            let candidate = Candidate {
                offering: &offering,
                stack,
                precision,
                priced: &priced,
            };
            outcomes.merge(if serving {
                evaluate_serving(&mut evaluator, &candidate)
            } else {
                evaluate_training(&mut evaluator, &candidate)
            });
        }
    }

    if let Some(cap) = c.max_hourly_usd {
        let (within, over): (Vec<Recommendation>, Vec<Recommendation>) = std::mem::take(&mut outcomes.feasible)
            .into_iter()
            .partition(|r| r.hourly_usd <= cap);
        outcomes.feasible = within;
        for r in over {
            outcomes.reject(Rejection {
                candidate: r.label(),
                constraint: Constraint::HourlyPrice,
                reason: format!("${:.2} per hour, over the ${cap:.2} cap", r.hourly_usd),
                shortfall: r.hourly_usd / cap,
                needed: Some(r.hourly_usd),
            });
        }
    }
    let counts = outcomes.counts();
    let Outcomes {
        feasible,
        rejections,
        evaluated,
    } = outcomes;
    if feasible.is_empty() {
        return Err(PlanError::Infeasible(Box::new(infeasible(
            rejections, counts, evaluated, request,
        ))));
    }
    let mut plan = rank(feasible, rejections, counts, evaluated, request);
    for recommendation in &mut plan.recommendations {
        serving::complete_latency(recommendation, &evaluator.points);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::node_counts;

    #[test]
    fn node_counts_reach_the_limit_given() {
        assert_eq!(node_counts(1).collect::<Vec<_>>(), [1]);
        assert_eq!(node_counts(8).collect::<Vec<_>>(), [1, 2, 4, 8]);
        assert_eq!(node_counts(12).collect::<Vec<_>>(), [1, 2, 4, 8, 12]);
        assert_eq!(node_counts(2048).last(), Some(2048));
    }
}
