//! The search: every offering × node count × layout × precision × billing mode, constrained,
//! priced and ranked.

use crate::configure::{Configured, configure};
use crate::input_pipeline::input_bound;
use crate::offering_source::OfferingSource;
use crate::pareto::pareto_front;
use crate::recommendation::{Batching, Percentiles, Recommendation, Serving, ServingLatency, candidate_label};
use crate::rejection::{Constraint, Rejection};
use crate::replica::{
    ContinuousReplica, Refusal, SplitPools, dynamic_batch_latency, dynamic_batch_meets, latency_at, latency_with_users,
    size_continuous, split_pools,
};
use crate::request::{Objective, Operational, PlanRequest, ServingTargets};
use crate::startup::{JobWeights, Startup, startup};
use gpuplan_catalog::fold_zones;
use gpuplan_estimate::cost::billed_hours;
use gpuplan_estimate::spot::{SpotJob, expected};
use gpuplan_estimate::{Cluster, EstimateError, TrainingAmount, TrainingEstimate};
use gpuplan_model::{
    Architecture, BillingMode, GpuInterconnect, NodeNetwork, Offering, Precision, RequestMix, SoftwareStack, Task,
    UNKNOWN_NODE_NETWORK_GBPS,
};
use std::collections::{BTreeMap, HashMap};

/// Node counts tried for training: powers of two up to `max_nodes`, and `max_nodes` itself.
fn node_counts(max_nodes: u32) -> impl Iterator<Item = u32> {
    let powers = std::iter::successors(Some(1u32), |n| n.checked_mul(2)).take_while(move |n| *n < max_nodes);
    powers.chain(std::iter::once(max_nodes.max(1)))
}

/// Serving batches tried per replica.
const SERVING_BATCHES: [u64; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/// Headroom kept on replicas: a service sized for 100 % utilisation queues at every burst.
/// 70 % target utilisation is the usual autoscaling set point (Kubernetes HPA examples, KEDA).
pub const SERVING_TARGET_UTILISATION: f64 = 0.7;

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
    /// What to relax, in words.
    pub suggestion: Option<String>,
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

/// Hourly price per instance for a billing mode, with the note a derived price carries.
fn hourly_price(
    source: &impl OfferingSource,
    offering: &Offering,
    billing: BillingMode,
) -> Option<(f64, Option<String>)> {
    let rate = crate::rate(source, offering, billing, None)?;
    let note = rate.derivation().map(|how| format!("{billing} price derived: {how}"));
    Some((rate.usd_per_hour, note))
}

/// Hours a reserved mode bills over its term; `None` for pay-as-you-go modes.
fn term_hours(billing: BillingMode) -> Option<f64> {
    billing.commitment().map(|term| term.hours())
}

/// Bandwidth between nodes for training traffic: the fabric table's figure, else the
/// offering's network, else the conservative default (the same number the message states).
fn node_network_gbps(offering: &Offering) -> Option<f64> {
    Some(offering.node_bandwidth_gbps().0)
}

/// Why several instances of `offering` cannot train together, if they cannot.
fn fabric_rejection(offering: &Offering, label: &str) -> Option<Rejection> {
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

/// One estimate per cluster shape, shared by every offering of that shape.
type ShapeKey = (String, u32, u32, Option<GpuInterconnect>, u64, Precision, u64, u32);

/// One serving replica sizing per replica shape (GPU, GPUs, link, precision, expert-parallel
/// degree): the same for every offering and region of that shape.
type ReplicaKey = (String, u32, Option<GpuInterconnect>, Precision, u32);

/// A price per instance-hour under a billing mode, with the note a derived price carries.
type Priced = (BillingMode, f64, Option<String>);

/// One offering at one precision, priced, as the evaluators take it.
struct Candidate<'a> {
    offering: &'a Offering,
    stack: Option<SoftwareStack>,
    precision: Precision,
    priced: &'a [Priced],
}

/// What the evaluators found: the configurations that work, the candidates each constraint
/// removed, and how many candidates were tried.
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
        let accelerator_id = offering.accelerator.as_ref().map(|a| a.to_string()).unwrap_or_default();
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
        let network = node_network_gbps(offering).map_or(0, |n| (n * 10.0) as u64);
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
        template.flash_attention &= accelerator.is_ampere_or_newer();
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

fn memory_rejection(label: impl FnOnce() -> String, configured: &Configured, margin: f64) -> Option<Rejection> {
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
        if let Some(rejection) = host_rejection(&offering, c) {
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
            if serving {
                evaluate_serving(&mut evaluator, &candidate, &mut outcomes);
            } else {
                evaluate_training(&mut evaluator, &candidate, &mut outcomes);
            }
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
    Ok(rank(feasible, rejections, counts, evaluated, request))
}

fn evaluate_training(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    candidate: &Candidate<'_>,
    outcomes: &mut Outcomes,
) {
    let Candidate {
        offering,
        stack,
        precision,
        priced,
    } = *candidate;
    let request = evaluator.request;
    let c = &request.constraints;
    let per_node = offering.accelerator_count;
    for nodes in node_counts(c.max_nodes) {
        let gpus = nodes.saturating_mul(per_node);
        if nodes > c.max_nodes || gpus > c.max_gpus {
            break;
        }
        outcomes.evaluated += priced.len();
        // Labels are written only for candidates that are rejected.
        let label = || candidate_label(offering, nodes, None);
        if nodes > 1 {
            if let Some(rejection) = fabric_rejection(offering, &label()) {
                // The fabric is the same for every larger cluster of this shape.
                outcomes.reject(rejection);
                break;
            }
        }
        let configured = match evaluator.configured(offering, gpus, per_node, precision, None, request.template.ep) {
            Ok(Some(configured)) => configured,
            Ok(None) => {
                outcomes.reject(Rejection::outright(
                    label(),
                    Constraint::Layout,
                    format!("the batch cannot be spread over {gpus} GPUs"),
                ));
                continue;
            }
            Err(error) => {
                outcomes.reject(Rejection::outright(label(), Constraint::Layout, error.to_string()));
                continue;
            }
        };
        if let Some(rejection) = memory_rejection(label, &configured, c.memory_margin) {
            outcomes.reject(rejection);
            // More nodes may fit; keep going.
            continue;
        }
        let Some(training) = configured.estimate.training else {
            continue;
        };
        let ops = &request.operational;
        let parameters = configured.estimate.parameters;
        let boot = startup(
            evaluator.source.operations(),
            &ops.startup,
            offering,
            nodes,
            JobWeights {
                parameters: parameters.total,
                trainable: parameters.trainable,
                precision: configured.workload.precision,
                task: configured.workload.task,
            },
        );
        let (training, input_note) = match fed_training(evaluator.source, ops, offering, nodes, &boot, training) {
            Ok(fed) => fed,
            Err(reason) => {
                outcomes.reject(Rejection::outright(label(), Constraint::Stack, reason));
                continue;
            }
        };
        let mut estimate = configured.estimate.clone();
        estimate.training = Some(training);
        let work_seconds = training.time_seconds;
        if let Some(work) = work_seconds.filter(|work| nodes > 1 && *work < boot.seconds()) {
            outcomes.reject(Rejection {
                candidate: label(),
                constraint: Constraint::Size,
                reason: format!(
                    "{nodes} nodes would compute for {:.0} s after {:.0} s of start-up: scaling out buys nothing",
                    work,
                    boot.seconds()
                ),
                shortfall: boot.seconds() / work.max(1e-9),
                needed: None,
            });
            continue;
        }
        let mut warnings = host_warnings(offering, &configured, nodes);
        warnings.extend(capacity_warning(evaluator.source, offering, gpus));
        for (billing, price, note) in priced {
            let hourly = price * f64::from(nodes);
            let placement = Placement {
                offering,
                billing: *billing,
                nodes,
                work_seconds,
                task: configured.workload.task,
            };
            let run = job_run(evaluator.source, ops, placement, &boot);
            if run.wall_seconds.is_some_and(|s| !s.is_finite()) {
                outcomes.reject(Rejection::outright(
                    label(),
                    Constraint::Layout,
                    "the estimate gives no finite time for this amount of work".to_string(),
                ));
                continue;
            }
            let hours = run.wall_seconds.map(|s| s / 3600.0);
            let total = hours.map(|h| job_total(evaluator.source, offering, *billing, hourly, h, ops.utilisation));
            let label = || candidate_label(offering, nodes, Some(*billing));
            if let (Some(deadline), Some(h)) = (c.deadline_hours, hours) {
                if h > deadline {
                    outcomes.reject(Rejection {
                        candidate: label(),
                        constraint: Constraint::Deadline,
                        reason: format!("{h:.1} h, over the {deadline} h deadline"),
                        shortfall: h / deadline,
                        needed: Some(h),
                    });
                    continue;
                }
            }
            if let (Some(budget), Some(total)) = (c.budget_usd, total) {
                if total > budget {
                    outcomes.reject(Rejection {
                        candidate: label(),
                        constraint: Constraint::Budget,
                        reason: format!("${total:.0}, over the ${budget:.0} budget"),
                        shortfall: total / budget,
                        needed: Some(total),
                    });
                    continue;
                }
            }
            // Without an amount, rank by price per token processed (spot inflated by the
            // expected interruptions of a reference-length job).
            let per_token =
                hourly * run.slowdown / (training.tokens_per_second.max(training.samples_per_second) * 3600.0);
            let mut why = Vec::new();
            if let Some(note) = note {
                why.push(note.clone());
            }
            why.extend(run.note.clone());
            why.extend(input_note.clone());
            if let Some(term) = term_hours(*billing) {
                match ops.utilisation {
                    Some(utilisation) => why.push(format!(
                        "{billing}: the job's hours at the reserved rate over {:.0} % use of the term",
                        utilisation * 100.0
                    )),
                    None if hours.is_some_and(|h| h < term) => why.push(format!(
                        "a {billing} commitment bills {term:.0} h whatever the job uses (--utilisation shares it)"
                    )),
                    None => {}
                }
            }
            if nodes > 1 {
                let fabric = offering.node_fabric();
                why.push(format!(
                    "{nodes} nodes over {} ({:.0} Gbps), {:.0} % scaling efficiency",
                    fabric.kind,
                    offering.node_bandwidth_gbps().0,
                    training.scaling_efficiency * 100.0
                ));
            }
            warnings.dedup();
            outcomes.feasible.push(Recommendation {
                offering: offering.clone(),
                billing: *billing,
                nodes,
                gpus,
                workload: configured.workload.clone(),
                estimate: estimate.clone(),
                hourly_usd: hourly,
                time_seconds: run.wall_seconds,
                total_usd: total,
                serving: None,
                cost_metric: total.unwrap_or(per_token),
                time_metric: run.wall_seconds.unwrap_or(training.step_seconds * run.slowdown),
                why,
                warnings: warnings.clone(),
                startup_seconds: Some(boot.seconds()),
                fabric: (nodes > 1).then(|| offering.node_fabric()),
                stack,
                expected_interruptions: run.interruptions,
            });
        }
    }
}

/// Training as fast as the host can feed it: a vision job whose input pipeline decodes (or
/// reads) fewer images per second than the GPUs would consume runs at the pipeline's rate,
/// and says so. `Err`: the pipeline cannot run on this offering.
fn fed_training(
    source: &impl OfferingSource,
    ops: &Operational,
    offering: &Offering,
    nodes: u32,
    boot: &Startup,
    training: TrainingEstimate,
) -> Result<(TrainingEstimate, Option<String>), String> {
    let bound = input_bound(source.operations(), &ops.input, offering, nodes, boot.storage_read_gbps)?;
    match bound {
        Some(bound) if bound.images_per_second < training.samples_per_second => {
            let slowdown = training.samples_per_second / bound.images_per_second;
            let note = format!(
                "input-bound: {} feeds {:.0} images/s, the GPUs could take {:.0}",
                bound.what, bound.images_per_second, training.samples_per_second
            );
            Ok((training.slowed_by(slowdown), Some(note)))
        }
        _ => Ok((training, None)),
    }
}

/// A training job's wall time under one billing mode.
struct JobRun {
    /// Start-up, work, checkpoints and (spot) interruptions; `None` without an amount.
    wall_seconds: Option<f64>,
    /// Wall time over uninterrupted wall time (spot > 1).
    slowdown: f64,
    interruptions: Option<f64>,
    note: Option<String>,
}

/// Spot interruptions per node-hour for `offering`'s provider: the user's, the catalog's, or
/// the fallback; with where it came from.
fn interruption_rate(source: &impl OfferingSource, rate: Option<f64>, offering: &Offering) -> (f64, String) {
    if let Some(rate) = rate {
        return (rate, "--interruption-rate".to_string());
    }
    match source.operations().interruption(&offering.provider) {
        Some(published) => (
            published.per_hour,
            format!(
                "{}'s default{}",
                offering.provider.display_name(),
                published.band.as_deref().map(|b| format!(", {b}")).unwrap_or_default()
            ),
        ),
        None => (
            FALLBACK_INTERRUPTIONS_PER_HOUR,
            "no published rate; assumed".to_string(),
        ),
    }
}

/// `nodes` instances of an offering under one billing mode, doing `work_seconds` of `task`.
struct Placement<'a> {
    offering: &'a Offering,
    billing: BillingMode,
    nodes: u32,
    work_seconds: Option<f64>,
    task: Task,
}

fn job_run(
    source: &impl OfferingSource,
    ops: &crate::request::Operational,
    placement: Placement<'_>,
    boot: &Startup,
) -> JobRun {
    let Placement {
        offering,
        billing,
        nodes,
        work_seconds,
        task,
    } = placement;
    if billing != BillingMode::Spot {
        return JobRun {
            wall_seconds: work_seconds.map(|work| boot.wall_seconds(work, task)),
            slowdown: 1.0,
            interruptions: None,
            note: None,
        };
    }
    // Any node's interruption stops a synchronous job.
    let (per_node, origin) = interruption_rate(source, ops.interruption_rate, offering);
    let rate = per_node * f64::from(nodes);
    let spot_job = |work_hours: f64| SpotJob {
        work_hours,
        interruption_rate: rate,
        checkpoint_interval_hours: None,
        checkpoint_write_hours: boot.checkpoint_write_seconds / 3600.0,
        restart_hours: (boot.provision_seconds + boot.reload_seconds) / 3600.0,
        spot_usd_per_hour: 1.0,
        on_demand_usd_per_hour: None,
    };
    let reference = expected(&spot_job(REFERENCE_SPOT_WORK_HOURS)).ok();
    let slowdown = reference.map_or(1.0, |e| e.expected_wall_hours / REFERENCE_SPOT_WORK_HOURS);
    let estimate = work_seconds.and_then(|work| expected(&spot_job(work / 3600.0)).ok());
    let note = format!(
        "spot: {per_node:.3} interruptions per node-hour ({origin}); checkpoints every {:.1} h (Young's optimum), each restart {:.0} min",
        estimate.or(reference).map_or(0.0, |e| e.checkpoint_interval_hours),
        (boot.provision_seconds + boot.reload_seconds) / 60.0
    );
    JobRun {
        wall_seconds: estimate.map(|e| e.expected_wall_hours * 3600.0 + boot.seconds()),
        slowdown,
        interruptions: estimate.map(|e| e.expected_interruptions),
        note: Some(note),
    }
}

/// What `hours` of a job cost at `hourly` under `billing`: metered at the provider's
/// granularity and minimum; a reserved term billed whole unless `utilisation` shares it.
fn job_total(
    source: &impl OfferingSource,
    offering: &Offering,
    billing: BillingMode,
    hourly: f64,
    hours: f64,
    utilisation: Option<f64>,
) -> f64 {
    let billed = billed_hours(hours, offering.billing_granularity).max(billing_minimum_hours(source, offering));
    match (term_hours(billing), utilisation) {
        (None, _) => hourly * billed,
        (Some(_), Some(utilisation)) => hourly * billed / utilisation,
        (Some(term), None) => hourly * term.max(billed),
    }
}

/// The provider's shortest billed period, hours (0 when the catalog does not say).
fn billing_minimum_hours(source: &impl OfferingSource, offering: &Offering) -> f64 {
    source
        .operations()
        .billing_minimum(&offering.provider)
        .map_or(0.0, |m| m.seconds / 3600.0)
}

/// A note when `gpus` of this accelerator exceed what the provider typically rents on demand.
fn capacity_warning(source: &impl OfferingSource, offering: &Offering, gpus: u32) -> Option<String> {
    let accelerator = offering.accelerator.as_ref()?;
    let limit = source.operations().capacity(&offering.provider, accelerator)?;
    // One node is what a routine quota request buys; beyond that, capacity is reserved.
    let threshold = limit
        .on_demand_gpus
        .max(offering.accelerator_count)
        .max(ROUTINE_QUOTA_GPUS);
    (gpus > threshold).then(|| {
        format!(
            "{gpus} × {accelerator} is more than {} rents on demand without arrangement ({} for a new account): {}",
            offering.provider.display_name(),
            limit.on_demand_gpus,
            limit.beyond
        )
    })
}

/// The stack `offering`'s accelerator runs the request on (`None` where the catalog records
/// no stack for it), or why it runs nowhere allowed.
fn stack_rejection(
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
    let model_type = match &request.model.architecture {
        Architecture::Transformer(spec) => Some(spec.model_type.as_str()),
        Architecture::Cited(_) => None,
    };
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

/// The user's minimum host resources per GPU, checked before anything is estimated.
fn host_rejection(offering: &Offering, c: &crate::request::Constraints) -> Option<Rejection> {
    let gpus = f64::from(offering.accelerator_count.max(1));
    let vcpus = offering.vcpus / gpus;
    let memory = offering.memory.as_gib() / gpus;
    let short = |what: &str, have: f64, need: f64| Rejection {
        candidate: candidate_label(offering, 1, None),
        constraint: Constraint::Host,
        reason: format!("{have:.0} {what} per GPU, {need:.0} required"),
        shortfall: need / have.max(1e-9),
        needed: None,
    };
    if let Some(need) = c.min_vcpus_per_gpu.filter(|need| vcpus < *need) {
        return Some(short("vCPUs", vcpus, need));
    }
    c.min_host_memory_gib_per_gpu
        .filter(|need| memory < *need)
        .map(|need| short("GiB host memory", memory, need))
}

fn host_warnings(offering: &Offering, configured: &Configured, nodes: u32) -> Vec<String> {
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
        match offering.network {
            Some(gbps) if gbps.0 < RECOMMENDED_MULTI_NODE_GBPS => warnings.push(format!(
                "{} Gbps between nodes: communication will dominate (≥ {RECOMMENDED_MULTI_NODE_GBPS} Gbps advised)",
                gbps.0
            )),
            None => warnings.push(format!(
                "network bandwidth between nodes not published; {UNKNOWN_NODE_NETWORK_GBPS} Gbps assumed"
            )),
            _ => {}
        }
        if offering.node_network == Some(NodeNetwork::Ethernet)
            && configured.estimate.parameters.total > FABRIC_ADVISED_ABOVE_PARAMETERS
        {
            warnings.push("plain Ethernet between nodes; InfiniBand or EFA is usual for models this large".to_string());
        }
    }
    warnings
}

/// One replica size of an offering and the load it is planned to carry.
#[derive(Clone)]
struct SizedReplica {
    configured: Configured,
    gpus_per_replica: u32,
    /// Requests/s one replica carries at the planned utilisation (offline: all it can).
    planned: f64,
    continuous: Option<ContinuousReplica>,
}

/// The request shapes a serving plan sizes for: the user's log, or the template's lengths.
fn serving_mix(request: &PlanRequest) -> RequestMix {
    request
        .constraints
        .serving
        .requests
        .clone()
        .unwrap_or_else(|| RequestMix::fixed(request.template.seq, request.template.output_tokens))
}

fn refusal(label: &str, refusal: Refusal) -> Rejection {
    Rejection {
        candidate: label.to_string(),
        constraint: refusal.constraint,
        reason: refusal.reason,
        shortfall: refusal.shortfall,
        needed: refusal.needed,
    }
}

/// A dynamically batched replica of `gpus` GPUs: the largest batch within the targets.
fn size_dynamic(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    gpus: u32,
    precision: Precision,
    offline: bool,
    label: &str,
) -> Result<Option<SizedReplica>, Rejection> {
    let c = &evaluator.request.constraints;
    let mut sized: Option<SizedReplica> = None;
    for batch in SERVING_BATCHES {
        let ep = evaluator.request.template.ep;
        let configured = match evaluator.configured(offering, gpus, gpus, precision, Some(batch), ep) {
            Ok(Some(configured)) => configured,
            _ => break,
        };
        if let Some(rejection) = memory_rejection(|| label.to_string(), &configured, c.memory_margin) {
            return if batch == 1 { Err(rejection) } else { Ok(sized) };
        }
        let Some(inference) = configured.estimate.inference else {
            break;
        };
        if !offline {
            if let Err(miss) = dynamic_batch_meets(&inference, &c.serving) {
                return if batch == 1 {
                    Err(refusal(label, miss))
                } else {
                    Ok(sized)
                };
            }
        }
        let utilisation = if offline { 1.0 } else { SERVING_TARGET_UTILISATION };
        sized = Some(SizedReplica {
            configured,
            gpus_per_replica: gpus,
            planned: inference.requests_per_second * utilisation,
            continuous: None,
        });
    }
    Ok(sized)
}

/// One continuous-batching replica shape asked of an offering: its GPUs, precision and
/// expert-parallel degree, and the traffic it is sized for.
#[derive(Clone, Copy)]
struct ReplicaAsk<'m> {
    gpus: u32,
    precision: Precision,
    ep: u32,
    mix: &'m RequestMix,
    offline: bool,
}

/// A continuous-batching replica sized by its goodput; `Ok(None)` when the model is not one a
/// continuous-batching engine generates with.
fn size_continuous_replica(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    ask: ReplicaAsk<'_>,
    label: &str,
) -> Result<Option<SizedReplica>, Rejection> {
    let key = (
        offering.accelerator.as_ref().map(|a| a.to_string()).unwrap_or_default(),
        ask.gpus,
        offering.gpu_interconnect,
        ask.precision,
        ask.ep,
    );
    if let Some(cached) = evaluator.replicas.get(&key) {
        return cached.clone().map_err(|rejection| Rejection {
            candidate: label.to_string(),
            ..rejection
        });
    }
    let sized = size_continuous_uncached(evaluator, offering, ask, label);
    evaluator.replicas.insert(key, sized.clone());
    sized
}

fn size_continuous_uncached(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    ask: ReplicaAsk<'_>,
    label: &str,
) -> Result<Option<SizedReplica>, Rejection> {
    let c = &evaluator.request.constraints;
    let configured = match evaluator.configured(offering, ask.gpus, ask.gpus, ask.precision, Some(1), ask.ep) {
        Ok(Some(configured)) => configured,
        _ => return Ok(None),
    };
    if let Some(rejection) = memory_rejection(|| label.to_string(), &configured, c.memory_margin) {
        return Err(rejection);
    }
    let Some(cost) = configured.estimate.serving_cost else {
        return Ok(None);
    };
    let replica = size_continuous(&cost, ask.mix, &c.serving, ask.offline).map_err(|miss| refusal(label, miss))?;
    Ok(Some(SizedReplica {
        configured,
        gpus_per_replica: ask.gpus,
        planned: replica.planned,
        continuous: Some(replica),
    }))
}

/// The replica size of `offering` that serves the most requests per instance.
fn size_replica(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    precision: Precision,
    mix: &RequestMix,
    offline: bool,
) -> Result<SizedReplica, Rejection> {
    let per_node = offering.accelerator_count;
    let label = candidate_label(offering, 1, None);
    let continuous = evaluator.request.template.engine.continuous_batching();
    let qps = evaluator.request.constraints.serving.qps.filter(|_| !offline);
    let mut best: Option<(SizedReplica, f64)> = None;
    let mut nearest: Option<Rejection> = None;
    for gpus in [1u32, 2, 4, 8]
        .into_iter()
        .filter(|g| *g <= per_node && per_node % g == 0)
    {
        let sized = if continuous {
            let ask = ReplicaAsk {
                gpus,
                precision,
                ep: 1,
                mix,
                offline,
            };
            match size_continuous_replica(evaluator, offering, ask, &label) {
                Ok(None) => size_dynamic(evaluator, offering, gpus, precision, offline, &label),
                other => expert_parallel_if_better(evaluator, offering, ask, &label, other),
            }
        } else {
            size_dynamic(evaluator, offering, gpus, precision, offline, &label)
        };
        match sized {
            Ok(Some(sized)) => {
                // Fewest instances for the load, then the smallest replica (no sharding
                // without need); without a load, the most requests per instance.
                let per_instance = f64::from(per_node / gpus) * sized.planned;
                let score = match qps {
                    Some(qps) => -(qps / per_instance).ceil() - f64::from(gpus) * 1e-3,
                    None => per_instance,
                };
                if best.as_ref().is_none_or(|(_, current)| score > *current) {
                    best = Some((sized, score));
                }
            }
            Ok(None) => {}
            Err(rejection) => {
                if nearest.as_ref().is_none_or(|n| rejection.shortfall < n.shortfall) {
                    nearest = Some(rejection);
                }
            }
        }
    }
    best.map(|(sized, _)| sized).ok_or_else(|| {
        nearest.unwrap_or(Rejection::outright(
            label,
            Constraint::Layout,
            "no replica size serves this model".to_string(),
        ))
    })
}

/// A mixture-of-experts replica of several GPUs also weighed with its experts placed whole over
/// them (expert parallelism), which routes to fewer experts per GPU but waits for the busiest;
/// the one that plans more requests/s is kept (tensor-parallel experts on a tie).
fn expert_parallel_if_better(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    ask: ReplicaAsk<'_>,
    label: &str,
    split: Result<Option<SizedReplica>, Rejection>,
) -> Result<Option<SizedReplica>, Rejection> {
    let gpus = ask.gpus;
    let experts = match &evaluator.request.model.architecture {
        gpuplan_model::Architecture::Transformer(spec) => spec.moe.map(|m| m.experts),
        gpuplan_model::Architecture::Cited(_) => None,
    };
    if gpus < 2 || evaluator.request.template.ep > 1 || experts.is_none_or(|e| e % u64::from(gpus) != 0) {
        return split;
    }
    let whole = size_continuous_replica(evaluator, offering, ReplicaAsk { ep: gpus, ..ask }, label);
    match (&split, &whole) {
        (Ok(Some(a)), Ok(Some(b))) if b.planned > a.planned => whole,
        (Err(_) | Ok(None), Ok(Some(_))) => whole,
        _ => split,
    }
}

/// What the plan says of a replica's latency at its share of the load.
/// The load in requests/s: `qps`, or for a closed loop of users the rate they send at the
/// users planned per replica.
fn offered_rate(targets: &ServingTargets, sized: &SizedReplica) -> Option<f64> {
    targets.qps.or_else(|| {
        let users = targets.concurrency?;
        let per_replica = sized.continuous.as_ref()?.users?;
        Some(users * sized.planned / per_replica.planned)
    })
}

/// The latency at `rate` requests/s per replica, or with `users` per replica in a closed loop.
fn serving_latency(sized: &SizedReplica, rate: f64, users: Option<f64>, mix: &RequestMix) -> ServingLatency {
    let Some(replica) = &sized.continuous else {
        let inference = sized.configured.estimate.inference;
        return ServingLatency {
            batching: Batching::Dynamic,
            goodput_per_replica: None,
            goodput_limit: None,
            load_per_replica: rate,
            ttft: inference.map(|i| Percentiles::flat(dynamic_batch_latency(i.ttft_seconds))),
            tpot: inference
                .filter(|i| i.tpot_seconds > 0.0)
                .map(|i| Percentiles::flat(i.tpot_seconds)),
            concurrent_sequences: None,
            kv_cache_utilisation: None,
            users_within_targets_per_replica: None,
            users_per_replica: None,
            request_latency_seconds: inference.map_or(0.0, |i| dynamic_batch_latency(i.request_latency_seconds)),
        };
    };
    if let Some(users) = users.filter(|_| replica.users.is_some()) {
        let point = latency_with_users(replica, users, mix);
        return ServingLatency {
            batching: Batching::Continuous,
            goodput_per_replica: Some(replica.goodput),
            goodput_limit: replica.limit,
            load_per_replica: point.requests_per_second,
            ttft: Some(point.ttft),
            tpot: Some(point.tpot),
            concurrent_sequences: Some(point.sequences),
            kv_cache_utilisation: None,
            users_within_targets_per_replica: replica.users.map(|u| u.within),
            users_per_replica: Some(users),
            request_latency_seconds: point.ttft.mean + point.tpot.mean * (mix.mean_output() - 1.0).max(0.0),
        };
    }
    let point = latency_at(replica, rate, mix);
    ServingLatency {
        batching: Batching::Continuous,
        goodput_per_replica: Some(replica.goodput),
        goodput_limit: replica.limit,
        load_per_replica: rate,
        ttft: point.map(|p| p.ttft()),
        tpot: point.map(|p| p.tpot()),
        concurrent_sequences: point.map(|p| p.sequences),
        kv_cache_utilisation: point.map(|p| p.kv_utilisation),
        users_within_targets_per_replica: None,
        users_per_replica: None,
        request_latency_seconds: point.map_or(f64::INFINITY, |p| p.e2e_mean()),
    }
}

/// Disaggregated pools for the load and the instances they take. The KV cache moves over the
/// node's GPU links when both pools fit in one instance, else over the network between
/// instances.
fn split_for_load(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    sized: &SizedReplica,
    mix: &RequestMix,
    offering: &Offering,
    precision: Precision,
) -> Option<(SplitPools, u32)> {
    let targets = &evaluator.request.constraints.serving;
    let replica = sized.continuous.as_ref()?;
    let qps = targets.qps?;
    let per_node = offering.accelerator_count;
    let replicas_per_instance = per_node / sized.gpus_per_replica;
    let transfer = if replicas_per_instance >= 2 {
        replica.cost.link_bytes_per_second
    } else {
        offering.node_bandwidth_gbps().0 * 1e9 / 8.0 / f64::from(per_node)
    };
    let key = (
        (
            offering.accelerator.as_ref().map(|a| a.to_string()).unwrap_or_default(),
            sized.gpus_per_replica,
            offering.gpu_interconnect,
            precision,
            sized.configured.workload.layout.ep,
        ),
        (transfer / 1e6) as u64,
    );
    let split = match evaluator.splits.get(&key) {
        Some(cached) => *cached,
        None => {
            let split = split_pools(replica, mix, targets, qps, transfer);
            evaluator.splits.insert(key, split);
            split
        }
    };
    split.map(|split| (split, split.replicas().div_ceil(replicas_per_instance)))
}

fn evaluate_serving(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    candidate: &Candidate<'_>,
    outcomes: &mut Outcomes,
) {
    let Candidate {
        offering,
        stack,
        precision,
        priced,
    } = *candidate;
    let request = evaluator.request;
    let c = &request.constraints;
    let targets = &c.serving;
    let per_node = offering.accelerator_count;
    outcomes.evaluated += priced.len();
    let label = candidate_label(offering, 1, None);
    let mix = serving_mix(request);
    let offline = request.operational.batch_requests.is_some();
    let sized = match size_replica(evaluator, offering, precision, &mix, offline) {
        Ok(sized) => sized,
        Err(rejection) => {
            outcomes.reject(rejection);
            return;
        }
    };
    let replicas_per_instance = per_node / sized.gpus_per_replica;
    if let Some(requests) = request.operational.batch_requests {
        let shape = BatchShape {
            requests,
            per_replica: sized.planned,
            replicas_per_instance,
            gpus_per_replica: sized.gpus_per_replica,
        };
        evaluate_batch(evaluator, candidate, &sized.configured, shape, outcomes);
        return;
    }
    let replicas_for = |qps: f64| ((qps / sized.planned).ceil() as u32).max(1);
    let asked = offered_rate(targets, &sized);
    let replicas = asked.map_or(1, replicas_for);
    let colocated = replicas.div_ceil(replicas_per_instance);
    let split_option = split_for_load(evaluator, &sized, &mix, offering, precision);
    let split = split_option.filter(|(_, n)| *n < colocated).map(|(split, _)| split);
    let instances = split.map_or(colocated, |s| s.replicas().div_ceil(replicas_per_instance));
    if instances > c.max_nodes || instances * per_node > c.max_gpus {
        outcomes.reject(Rejection {
            candidate: label,
            constraint: Constraint::Size,
            reason: format!("{instances} instances needed for the load, over the limits"),
            shortfall: f64::from(instances * per_node) / f64::from(c.max_gpus.max(1)),
            needed: None,
        });
        return;
    }
    // Every replica of the instances serves: the load spreads over all of them.
    let serving_replicas = split.map_or(instances * replicas_per_instance, |s| s.replicas());
    let load = asked.map_or(sized.planned, |qps| qps / f64::from(serving_replicas));
    let users = targets.concurrency.map(|n| n / f64::from(serving_replicas));
    let mut latency = serving_latency(&sized, load, users, &mix);
    if let Some(split) = &split {
        latency.ttft = Some(split.ttft);
        latency.tpot = Some(split.tpot);
        latency.concurrent_sequences = Some(split.decode_sequences);
        latency.kv_cache_utilisation = None;
        latency.request_latency_seconds = split.ttft.mean + split.tpot.mean * (mix.mean_output() - 1.0).max(0.0);
    }
    // The autoscaling range: a quarter of the load at least, the peak (or every replica the
    // instances hold) at most.
    let max_replicas = targets
        .peak_qps
        .map_or(serving_replicas, replicas_for)
        .max(serving_replicas);
    let min_replicas = asked
        .map_or(1, |qps| replicas_for(qps * AUTOSCALE_FLOOR_SHARE))
        .min(max_replicas);
    let warnings: Vec<String> = capacity_warning(evaluator.source, offering, instances * per_node)
        .into_iter()
        .collect();
    let served = asked.unwrap_or(sized.planned);
    let output_tokens_per_hour = served * mix.mean_output() * 3600.0;
    for (billing, price, note) in priced {
        let hourly = price * f64::from(instances);
        let mut why = Vec::new();
        if let Some(note) = note {
            why.push(note.clone());
        }
        if let (Some(within), Some(users), Some(limit)) = (
            latency.users_within_targets_per_replica,
            sized.continuous.and_then(|c| c.users),
            latency.goodput_limit,
        ) {
            why.push(format!(
                "{within:.0} concurrent users per replica within the targets, bounded by {limit}; planned for {:.0} ({:.0} % headroom)",
                users.planned,
                targets.headroom() * 100.0
            ));
        } else if let (Some(goodput), Some(limit)) = (latency.goodput_per_replica, latency.goodput_limit) {
            why.push(format!(
                "goodput {goodput:.2} req/s per replica, bounded by {}; planned at {:.2} ({:.0} % headroom)",
                limit,
                sized.planned,
                targets.headroom() * 100.0
            ));
        }
        match (&split, &split_option) {
            (Some(split), _) => why.push(format!(
                "prefill and decode on separate pools ({} + {} replicas, {:.0} ms to move each prompt's KV cache): {instances} instances against {colocated} colocated",
                split.prefill_replicas,
                split.decode_replicas,
                split.kv_transfer_seconds * 1e3
            )),
            (None, Some((alternative, n))) => why.push(format!(
                "colocated prefill and decode: separate pools would take {n} instances ({} + {} replicas)",
                alternative.prefill_replicas, alternative.decode_replicas
            )),
            (None, None) => {}
        }
        if *billing == BillingMode::Spot {
            why.push("spot: instances can be reclaimed; keep on-demand capacity for the minimum replicas".to_string());
        }
        let monthly = hourly * HOURS_PER_MONTH;
        if let Some(budget) = c.budget_usd.filter(|budget| monthly > *budget) {
            outcomes.reject(Rejection {
                candidate: candidate_label(offering, instances, Some(*billing)),
                constraint: Constraint::Budget,
                reason: format!("${monthly:.0} per month, over the ${budget:.0} budget"),
                shortfall: monthly / budget,
                needed: Some(monthly),
            });
            continue;
        }
        outcomes.feasible.push(Recommendation {
            offering: offering.clone(),
            billing: *billing,
            nodes: instances,
            gpus: instances * per_node,
            workload: sized.configured.workload.clone(),
            estimate: sized.configured.estimate.clone(),
            hourly_usd: hourly,
            time_seconds: None,
            total_usd: Some(monthly),
            serving: Some(Serving {
                batch_per_replica: sized.configured.workload.batch,
                gpus_per_replica: sized.gpus_per_replica,
                replicas: serving_replicas,
                requests_per_second_per_replica: sized.planned,
                min_replicas,
                max_replicas,
                usd_per_million_output_tokens: (output_tokens_per_hour > 0.0)
                    .then(|| hourly / output_tokens_per_hour * 1e6),
                usd_per_thousand_requests: (served > 0.0).then(|| hourly / (served * 3600.0) * 1e3),
                latency,
                disaggregated: split,
            }),
            cost_metric: hourly,
            time_metric: latency.request_latency_seconds,
            why,
            warnings: warnings.clone(),
            startup_seconds: None,
            fabric: None,
            stack,
            expected_interruptions: None,
        });
    }
}

/// An offline batch of requests and what one replica processes.
#[derive(Debug, Clone, Copy)]
struct BatchShape {
    requests: f64,
    /// Requests per second of one replica, at full use (no latency headroom offline).
    per_replica: f64,
    replicas_per_instance: u32,
    gpus_per_replica: u32,
}

/// Offline batch inference: enough replicas to process every request before the deadline
/// (one instance without one), priced for the hours it runs, start-up included.
fn evaluate_batch(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    candidate: &Candidate<'_>,
    configured: &Configured,
    shape: BatchShape,
    outcomes: &mut Outcomes,
) {
    let Candidate {
        offering,
        stack,
        priced,
        ..
    } = *candidate;
    let request = evaluator.request;
    let c = &request.constraints;
    let per_node = offering.accelerator_count;
    let parameters = configured.estimate.parameters;
    let boot = startup(
        evaluator.source.operations(),
        &request.operational.startup,
        offering,
        1,
        JobWeights {
            parameters: parameters.total,
            trainable: 0,
            precision: configured.workload.precision,
            task: Task::Inference,
        },
    );
    let label = candidate_label(offering, 1, None);
    let replicas = match c.deadline_hours {
        Some(deadline) => {
            let available = deadline * 3600.0 - boot.seconds();
            if available <= 0.0 {
                outcomes.reject(Rejection {
                    candidate: label,
                    constraint: Constraint::Deadline,
                    reason: format!(
                        "{:.0} min of start-up leaves no time before the deadline",
                        boot.seconds() / 60.0
                    ),
                    shortfall: boot.seconds() / (deadline * 3600.0),
                    needed: Some(boot.seconds() / 3600.0),
                });
                return;
            }
            ((shape.requests / available / shape.per_replica).ceil() as u32).max(1)
        }
        None => shape.replicas_per_instance,
    };
    let instances = replicas.div_ceil(shape.replicas_per_instance);
    let replicas = instances * shape.replicas_per_instance;
    if instances > c.max_nodes || instances * per_node > c.max_gpus {
        outcomes.reject(Rejection {
            candidate: label,
            constraint: Constraint::Size,
            reason: format!("{instances} instances needed to finish in time, over the limits"),
            shortfall: f64::from(instances * per_node) / f64::from(c.max_gpus.max(1)),
            needed: None,
        });
        return;
    }
    let seconds = boot.seconds() + shape.requests / (f64::from(replicas) * shape.per_replica);
    let warnings: Vec<String> = capacity_warning(evaluator.source, offering, instances * per_node)
        .into_iter()
        .collect();
    for (billing, price, note) in priced {
        let hourly = price * f64::from(instances);
        let total = job_total(
            evaluator.source,
            offering,
            *billing,
            hourly,
            seconds / 3600.0,
            request.operational.utilisation,
        );
        if let (Some(budget), true) = (c.budget_usd, total > c.budget_usd.unwrap_or(f64::INFINITY)) {
            outcomes.reject(Rejection {
                candidate: candidate_label(offering, instances, Some(*billing)),
                constraint: Constraint::Budget,
                reason: format!("${total:.0}, over the ${budget:.0} budget"),
                shortfall: total / budget,
                needed: Some(total),
            });
            continue;
        }
        let mut why: Vec<String> = note.iter().cloned().collect();
        why.push(format!(
            "batch: {:.3e} requests at {:.2} req/s per replica × {replicas} replicas",
            shape.requests, shape.per_replica
        ));
        outcomes.feasible.push(Recommendation {
            offering: offering.clone(),
            billing: *billing,
            nodes: instances,
            gpus: instances * per_node,
            workload: configured.workload.clone(),
            estimate: configured.estimate.clone(),
            hourly_usd: hourly,
            time_seconds: Some(seconds),
            total_usd: Some(total),
            serving: Some(Serving {
                batch_per_replica: configured.workload.batch,
                gpus_per_replica: shape.gpus_per_replica,
                replicas,
                requests_per_second_per_replica: shape.per_replica,
                min_replicas: replicas,
                max_replicas: replicas,
                usd_per_million_output_tokens: None,
                usd_per_thousand_requests: Some(total / shape.requests * 1e3),
                latency: ServingLatency::offline(shape.per_replica),
                disaggregated: None,
            }),
            cost_metric: total,
            time_metric: seconds,
            why,
            warnings: warnings.clone(),
            startup_seconds: Some(boot.seconds()),
            fabric: None,
            stack,
            expected_interruptions: None,
        });
    }
}

fn order(
    objective: Objective,
    a: &Recommendation,
    b: &Recommendation,
    best_cost: f64,
    best_time: f64,
) -> std::cmp::Ordering {
    let by_cost = a
        .cost_metric
        .total_cmp(&b.cost_metric)
        .then(a.time_metric.total_cmp(&b.time_metric));
    let by_time = a
        .time_metric
        .total_cmp(&b.time_metric)
        .then(a.cost_metric.total_cmp(&b.cost_metric));
    match objective {
        Objective::Cost => by_cost,
        Objective::Time => by_time,
        Objective::Balanced => {
            let score = |r: &Recommendation| ((r.cost_metric / best_cost) * (r.time_metric / best_time)).sqrt();
            score(a).total_cmp(&score(b)).then(by_cost)
        }
    }
}

/// Provider, instance type, nodes, billing, precision, hourly price and time (as bits).
type RegionFoldKey = (String, String, u32, BillingMode, Precision, u64, u64);

/// Candidates that differ only by region (same price, same estimate) become one, whose
/// `why` names the other regions.
fn fold_regions(feasible: Vec<Recommendation>) -> Vec<Recommendation> {
    let mut folded: Vec<Recommendation> = Vec::new();
    let mut index: HashMap<RegionFoldKey, (usize, Vec<String>)> = HashMap::new();
    for candidate in feasible {
        let key = (
            candidate.offering.provider.to_string(),
            candidate.offering.instance_type.clone(),
            candidate.nodes,
            candidate.billing,
            candidate.workload.precision,
            candidate.hourly_usd.to_bits(),
            candidate.time_metric.to_bits(),
        );
        match index.get_mut(&key) {
            Some((_, regions)) => regions.extend(candidate.offering.region.clone()),
            None => {
                index.insert(key, (folded.len(), Vec::new()));
                folded.push(candidate);
            }
        }
    }
    for (at, regions) in index.into_values() {
        if !regions.is_empty() {
            let mut regions = regions;
            regions.sort();
            let shown: Vec<&str> = regions.iter().take(4).map(String::as_str).collect();
            let more = if regions.len() > 4 {
                format!(" and {} more", regions.len() - 4)
            } else {
                String::new()
            };
            folded[at].why.push(format!("same price in {}{more}", shown.join(", ")));
        }
    }
    folded
}

fn rank(
    feasible: Vec<Recommendation>,
    mut rejections: Vec<Rejection>,
    counts: BTreeMap<Constraint, usize>,
    evaluated: usize,
    request: &PlanRequest,
) -> Plan {
    let total_feasible = feasible.len();
    let feasible = fold_regions(feasible);
    let best_cost = feasible.iter().map(|r| r.cost_metric).fold(f64::INFINITY, f64::min);
    let best_time = feasible.iter().map(|r| r.time_metric).fold(f64::INFINITY, f64::min);
    let objective = match (
        request.objective,
        request.constraints.deadline_hours,
        request.constraints.budget_usd,
    ) {
        (Objective::Balanced, Some(_), None) => Objective::Cost,
        (Objective::Balanced, None, Some(_)) => Objective::Time,
        (objective, _, _) => objective,
    };
    // Sort positions, then move each recommendation once: they are large.
    let mut positions: Vec<usize> = (0..feasible.len()).collect();
    positions.sort_by(|&a, &b| order(objective, &feasible[a], &feasible[b], best_cost, best_time));
    let mut slots: Vec<Option<Recommendation>> = feasible.into_iter().map(Some).collect();
    let feasible: Vec<Recommendation> = positions.iter().filter_map(|&i| slots[i].take()).collect();
    let front: Vec<usize> = pareto_front(
        &feasible
            .iter()
            .map(|r| (r.cost_metric, r.time_metric))
            .collect::<Vec<_>>(),
    );
    let cheapest = (0..feasible.len())
        .min_by(|&a, &b| {
            feasible[a]
                .cost_metric
                .total_cmp(&feasible[b].cost_metric)
                .then(a.cmp(&b))
        })
        .unwrap_or(0);
    let fastest = (0..feasible.len())
        .min_by(|&a, &b| {
            feasible[a]
                .time_metric
                .total_cmp(&feasible[b].time_metric)
                .then(a.cmp(&b))
        })
        .unwrap_or(0);

    // Keep the top N, plus the cheapest, the fastest and the front.
    let top = request.top.max(1);
    let mut keep: Vec<usize> = (0..feasible.len().min(top)).collect();
    for index in front.iter().copied().chain([cheapest, fastest]) {
        if !keep.contains(&index) {
            keep.push(index);
        }
    }
    keep.sort_unstable();
    let remap: HashMap<usize, usize> = keep.iter().enumerate().map(|(new, old)| (*old, new)).collect();
    let kept: Vec<Recommendation> = keep.iter().map(|&i| feasible[i].clone()).collect();
    let mut recommendations = kept;
    let pareto: Vec<usize> = front.iter().filter_map(|i| remap.get(i).copied()).collect();

    // Explain the winner against its neighbours.
    if recommendations.len() > 1 {
        let winner = recommendations[0].clone();
        recommendations[0].why.insert(0, format!("best by {objective}"));
        for other in recommendations.iter_mut().skip(1) {
            let cost_ratio = other.cost_metric / winner.cost_metric;
            let speed_ratio = winner.time_metric / other.time_metric;
            other.why.insert(
                0,
                format!(
                    "{:.2}× the cost of the best for {:.2}× its speed",
                    cost_ratio, speed_ratio
                ),
            );
        }
    } else if let Some(only) = recommendations.first_mut() {
        only.why.insert(0, "the only feasible configuration".to_string());
    }

    // Nearest misses: the three closest of each constraint.
    rejections.sort_by(|a, b| {
        a.constraint
            .cmp(&b.constraint)
            .then(a.shortfall.total_cmp(&b.shortfall))
    });
    let mut shown: BTreeMap<Constraint, usize> = BTreeMap::new();
    rejections.retain(|r| {
        let count = shown.entry(r.constraint).or_default();
        *count += 1;
        *count <= 3
    });

    let mut assumptions = vec![
        format!(
            "memory must fit with {:.0} % of each GPU kept free",
            request.constraints.memory_margin * 100.0
        ),
        "zones folded per region: on-demand is the region's price, spot the lowest of its zones".to_string(),
        "per-second billing rounds up to a 60 s minimum, per-minute to the minute, unknown granularity to whole hours"
            .to_string(),
    ];
    if request.template.task == Task::Inference {
        assumptions.push(format!(
            "replicas sized for {:.0} % utilisation at the target load; cost is per month of {HOURS_PER_MONTH} h",
            SERVING_TARGET_UTILISATION * 100.0
        ));
    }
    if let Some(TrainingAmount::Tokens(tokens)) = request.amount {
        assumptions.push(format!("{tokens:.3e} training tokens"));
    }
    if let Some(first) = recommendations.first() {
        assumptions.extend(first.estimate.assumptions.iter().cloned());
    }
    Plan {
        recommendations,
        cheapest: remap.get(&cheapest).copied().unwrap_or(0),
        fastest: remap.get(&fastest).copied().unwrap_or(0),
        pareto,
        rejected: rejections,
        rejected_counts: counts,
        evaluated,
        feasible: total_feasible,
        assumptions,
    }
}

fn infeasible(
    mut rejections: Vec<Rejection>,
    counts: BTreeMap<Constraint, usize>,
    evaluated: usize,
    request: &PlanRequest,
) -> Infeasible {
    rejections.sort_by(|a, b| a.shortfall.total_cmp(&b.shortfall));
    // One suggestion per constraint that removed something, the user's own limits first.
    let mut suggestions = Vec::new();
    for constraint in [
        Constraint::Deadline,
        Constraint::Budget,
        Constraint::Latency,
        Constraint::Memory,
        Constraint::Network,
        Constraint::Size,
    ] {
        let Some(nearest) = rejections
            .iter()
            .find(|r| r.constraint == constraint && r.shortfall.is_finite())
        else {
            continue;
        };
        suggestions.push(match constraint {
            Constraint::Deadline => format!(
                "relax the deadline to {:.0} h (nearest: {})",
                nearest.needed.unwrap_or(0.0).ceil(),
                nearest.candidate
            ),
            Constraint::Budget => {
                format!(
                    "raise the budget to ${:.0} (nearest: {})",
                    nearest.needed.unwrap_or(0.0).ceil(),
                    nearest.candidate
                )
            }
            Constraint::Memory => {
                let quantise = if request.template.task == Task::Inference {
                    "allow int8 or int4 weights (--precision), "
                } else {
                    ""
                };
                format!(
                    "{quantise}allow more GPUs (--max-gpus) or larger GPUs: the nearest needs {:.0} % more memory",
                    (nearest.shortfall - 1.0) * 100.0
                )
            }
            Constraint::Latency => format!(
                "relax the latency target to {:.0} ms (nearest: {})",
                nearest.needed.unwrap_or(0.0) * 1e3,
                nearest.candidate
            ),
            Constraint::Network => "allow single-node configurations or providers with faster networks".to_string(),
            _ => "raise --max-gpus or --max-nodes".to_string(),
        });
    }
    let suggestion = (!suggestions.is_empty()).then(|| suggestions.join("; or "));
    // The nearest misses shown: per constraint (the user's own limits first), a few distinct
    // reasons, since the same shape misses the same way in every region.
    let priority = |c: Constraint| match c {
        Constraint::Host => 5,
        Constraint::Deadline => 0,
        Constraint::Budget => 1,
        Constraint::Latency => 2,
        Constraint::Memory => 3,
        _ => 4,
    };
    rejections.sort_by(|a, b| {
        priority(a.constraint)
            .cmp(&priority(b.constraint))
            .then(a.shortfall.total_cmp(&b.shortfall))
    });
    let mut seen = std::collections::HashSet::new();
    let mut per_constraint: BTreeMap<Constraint, usize> = BTreeMap::new();
    rejections.retain(|r| {
        let count = per_constraint.entry(r.constraint).or_default();
        if *count >= 3 || !seen.insert((r.constraint, r.reason.clone())) {
            return false;
        }
        *count += 1;
        true
    });
    rejections.truncate(10);
    Infeasible {
        rejected_counts: counts,
        nearest: rejections,
        suggestion,
        evaluated,
    }
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
