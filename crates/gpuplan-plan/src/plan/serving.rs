//! Serving candidates: one replica sized per shape against the latency targets (continuous
//! or dynamic batching, expert parallelism, disaggregated pools), then replicas for the load.

use super::*;
use crate::{BatchPass, DynamicReplica};
use gpuplan_estimate::serving::LoadPoint;

/// One replica size of an offering and the load it is planned to carry.
#[derive(Clone)]
pub(super) struct SizedReplica {
    pub(super) configured: Configured,
    pub(super) gpus_per_replica: u32,
    /// Requests/s one replica carries at the planned utilisation (offline: all it can).
    pub(super) planned: f64,
    pub(super) continuous: Option<ContinuousReplica>,
    pub(super) dynamic: Option<DynamicReplica>,
}

/// The request shapes a serving plan sizes for: the user's log, or the template's lengths.
pub(super) fn serving_mix<'r>(request: &'r PlanRequest) -> std::borrow::Cow<'r, RequestMix> {
    match &request.constraints.serving.requests {
        Some(mix) => std::borrow::Cow::Borrowed(mix),
        None => std::borrow::Cow::Owned(RequestMix::fixed(request.template.seq, request.template.output_tokens)),
    }
}

pub(super) fn refusal(label: &str, refusal: Refusal) -> Rejection {
    Rejection {
        candidate: label.to_string(),
        constraint: refusal.constraint,
        reason: refusal.reason,
        shortfall: refusal.shortfall,
        needed: refusal.needed,
    }
}

/// A dynamically batched replica of `gpus` GPUs: every batch that fits, sized by the fastest
/// within the targets ([`DynamicReplica`]).
pub(super) fn size_dynamic(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    gpus: u32,
    precision: Precision,
    offline: bool,
    label: &str,
) -> Result<Option<SizedReplica>, Rejection> {
    let c = &evaluator.request.constraints;
    let mut fitted: Vec<(Configured, BatchPass)> = Vec::new();
    for batch in SERVING_BATCHES {
        let ep = evaluator.request.template.ep;
        let configured = match evaluator.configured(offering, gpus, gpus, precision, Some(batch), ep) {
            Ok(Some(configured)) => configured,
            _ => break,
        };
        if let Some(rejection) = memory_rejection(|| label.to_string(), &configured, c.memory_margin) {
            if batch == 1 {
                return Err(rejection);
            }
            break;
        }
        let Some(inference) = configured.estimate.inference else {
            break;
        };
        let pass = BatchPass::new(batch, &inference);
        fitted.push((configured, pass));
    }
    if fitted.is_empty() {
        return Ok(None);
    }
    let passes = fitted.iter().map(|(_, pass)| *pass).collect();
    let replica = DynamicReplica::size(passes, &c.serving, offline).map_err(|miss| refusal(label, miss))?;
    let planned = replica.planned(&c.serving, offline);
    let configured = fitted.swap_remove(replica.chosen).0;
    Ok(Some(SizedReplica {
        configured,
        gpus_per_replica: gpus,
        planned,
        continuous: None,
        dynamic: Some(replica),
    }))
}

/// One continuous-batching replica shape asked of an offering: its GPUs, precision and
/// expert-parallel degree, and the traffic it is sized for.
#[derive(Clone, Copy)]
pub(super) struct ReplicaAsk<'m> {
    pub(super) gpus: u32,
    pub(super) precision: Precision,
    pub(super) ep: u32,
    pub(super) mix: &'m RequestMix,
    pub(super) offline: bool,
}

/// A continuous-batching replica sized by its goodput; `Ok(None)` when the model is not one a
/// continuous-batching engine generates with.
pub(super) fn size_continuous_replica(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    ask: ReplicaAsk<'_>,
    label: &str,
) -> Result<Option<SizedReplica>, Rejection> {
    let key = replica_key(offering, ask.gpus, ask.precision, ask.ep);
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

pub(super) fn size_continuous_uncached(
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
        dynamic: None,
    }))
}

/// The replica size of `offering` that serves the most requests per instance, sized once per
/// instance shape.
pub(super) fn size_replica(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    precision: Precision,
    mix: &RequestMix,
    offline: bool,
) -> Result<SizedReplica, Rejection> {
    let key = instance_shape_key(offering, precision);
    if let Some(cached) = evaluator.sized.get(&key) {
        return cached.clone().map_err(|rejection| Rejection {
            candidate: candidate_label(offering, 1, None),
            ..rejection
        });
    }
    let sized = size_replica_uncached(evaluator, offering, precision, mix, offline);
    evaluator.sized.insert(key, sized.clone());
    sized
}

fn size_replica_uncached(
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
pub(super) fn expert_parallel_if_better(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    offering: &Offering,
    ask: ReplicaAsk<'_>,
    label: &str,
    split: Result<Option<SizedReplica>, Rejection>,
) -> Result<Option<SizedReplica>, Rejection> {
    let gpus = ask.gpus;
    let experts = evaluator
        .request
        .model
        .transformer()
        .and_then(|spec| spec.moe.map(|moe| moe.experts));
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
pub(super) fn offered_rate(targets: &ServingTargets, sized: &SizedReplica) -> Option<f64> {
    targets.qps.or_else(|| {
        let users = targets.concurrency?;
        let per_replica = sized.continuous.as_ref()?.users?;
        Some(users * sized.planned / per_replica.planned)
    })
}

/// The latency at `rate` requests/s per replica, or with `users` per replica in a closed loop.
/// At a Poisson rate the percentiles are left to [`complete_latency`], which works them out for
/// the configurations the plan keeps; the load point they come from is returned beside.
pub(super) fn serving_latency(
    sized: &SizedReplica,
    rate: f64,
    users: Option<f64>,
    mix: &RequestMix,
) -> (ServingLatency, Option<LoadPoint>) {
    let Some(replica) = &sized.continuous else {
        let point = sized.dynamic.as_ref().map(|d| d.at_rate(rate));
        let latency = ServingLatency {
            batching: Batching::Dynamic,
            goodput_per_replica: sized.dynamic.as_ref().map(|d| d.goodput),
            goodput_limit: sized.dynamic.as_ref().map(|d| d.limit),
            load_per_replica: rate,
            ttft: point.map(|p| p.ttft),
            tpot: point.filter(|p| p.tpot.p50 > 0.0).map(|p| p.tpot),
            concurrent_sequences: point.map(|p| p.batch),
            kv_cache_utilisation: None,
            users_within_targets_per_replica: None,
            users_per_replica: None,
            request_latency_seconds: point.map_or(0.0, |p| p.request_latency_seconds),
        };
        return (latency, None);
    };
    if let Some(users) = users.filter(|_| replica.users.is_some()) {
        let point = latency_with_users(replica, users, mix);
        let latency = ServingLatency {
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
        return (latency, None);
    }
    let point = latency_at(replica, rate, mix);
    let latency = ServingLatency {
        batching: Batching::Continuous,
        goodput_per_replica: Some(replica.goodput),
        goodput_limit: replica.limit,
        load_per_replica: rate,
        ttft: None,
        tpot: None,
        concurrent_sequences: point.map(|p| p.sequences),
        kv_cache_utilisation: point.map(|p| p.kv_utilisation),
        users_within_targets_per_replica: None,
        users_per_replica: None,
        request_latency_seconds: point.map_or(f64::INFINITY, |p| p.e2e_mean()),
    };
    (latency, point)
}

/// The latency percentiles of a kept configuration whose search left them to be worked out.
pub(super) fn complete_latency(recommendation: &mut Recommendation, points: &[LoadPoint]) {
    let Some(serving) = recommendation.serving.as_mut() else {
        return;
    };
    if let Some(point) = serving.pending_latency.take().and_then(|i| points.get(i as usize)) {
        serving.latency.ttft = Some(point.ttft());
        serving.latency.tpot = Some(point.tpot());
    }
}

/// Disaggregated pools for the load and the instances they take. The KV cache moves over the
/// node's GPU links when both pools fit in one instance, else over the network between
/// instances.
pub(super) fn split_for_load(
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
        replica_key(
            offering,
            sized.gpus_per_replica,
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

pub(super) fn evaluate_serving(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    candidate: &Candidate<'_>,
) -> Outcomes {
    let mut outcomes = Outcomes::default();
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
    let mut sized = match size_replica(evaluator, offering, precision, &mix, offline) {
        Ok(sized) => sized,
        Err(rejection) => {
            outcomes.reject(rejection);
            return outcomes;
        }
    };
    let replicas_per_instance = per_node / sized.gpus_per_replica;
    // An image model's requests are decoded on the host: its vCPUs may cap the instance.
    let decode = input_bound(
        evaluator.source.operations(),
        &request.operational.input,
        offering,
        1,
        f64::INFINITY,
    )
    .ok()
    .flatten()
    .filter(|bound| bound.images_per_second < sized.planned * f64::from(replicas_per_instance));
    if let Some(bound) = &decode {
        sized.planned = bound.images_per_second / f64::from(replicas_per_instance);
    }
    let checkpoint = sized.configured.estimate.parameters.total as f64
        * crate::startup::stored_bytes_per_parameter(sized.configured.workload.precision);
    if let Some(rejection) = staging_rejection(offering, stack, gpuplan_model::Bytes(checkpoint as u64))
        .or_else(|| host_layers_rejection(offering, &sized.configured, replicas_per_instance))
    {
        outcomes.reject(rejection);
        return outcomes;
    }
    if let Some(requests) = request.operational.batch_requests {
        let shape = BatchShape {
            requests,
            per_replica: sized.planned,
            replicas_per_instance,
            gpus_per_replica: sized.gpus_per_replica,
        };
        outcomes.merge(evaluate_batch(evaluator, candidate, &sized.configured, shape));
        return outcomes;
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
        return outcomes;
    }
    // Every replica of the instances serves: the load spreads over all of them.
    let serving_replicas = split.map_or(instances * replicas_per_instance, |s| s.replicas());
    let load = asked.map_or(sized.planned, |qps| qps / f64::from(serving_replicas));
    let users = targets.concurrency.map(|n| n / f64::from(serving_replicas));
    let latency_key = (
        instance_shape_key(offering, precision),
        load.to_bits(),
        users.map(f64::to_bits),
    );
    let (mut latency, mut pending_latency) = match evaluator.latencies.get(&latency_key) {
        Some(cached) => *cached,
        None => {
            let (latency, point) = serving_latency(&sized, load, users, &mix);
            let pending = point.map(|point| {
                evaluator.points.push(point);
                (evaluator.points.len() - 1) as u32
            });
            evaluator.latencies.insert(latency_key, (latency, pending));
            (latency, pending)
        }
    };
    if let Some(split) = &split {
        pending_latency = None;
        latency.ttft = Some(split.ttft);
        latency.tpot = Some(split.tpot);
        latency.concurrent_sequences = Some(split.decode_sequences);
        latency.kv_cache_utilisation = None;
        latency.request_latency_seconds = split.ttft.mean + split.tpot.mean * (mix.mean_output() - 1.0).max(0.0);
    }
    // What the last instance buys, where the replicas carry a given rate.
    let fewer = match (asked, latency.goodput_per_replica, &split, users, latency.batching) {
        (Some(rate), Some(goodput), None, None, Batching::Continuous) => {
            let of = sized
                .continuous
                .as_ref()
                .map_or(gpuplan_estimate::serving_near_capacity::MeasuredOn::DenseModels, |c| {
                    c.cost.measured_on()
                });
            super::one_fewer::one_fewer(instances, replicas_per_instance, rate, goodput, of)
        }
        _ => None,
    };
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
        .chain(super::checks::disk_warning(offering, checkpoint))
        .collect();
    let served = asked.unwrap_or(sized.planned);
    let output_tokens_per_hour = served * mix.mean_output() * 3600.0;
    // A spot row is a fleet: the minimum replicas on a floor of another allowed mode.
    let (reclaims_per_hour, reclaim_source) =
        interruption_rate(evaluator.source, request.operational.interruption_rate, offering);
    let replacement = startup(
        evaluator.source.operations(),
        &request.operational.startup,
        offering,
        1,
        sized.configured.job_weights(),
    )
    .seconds();
    let floor_instances = min_replicas.div_ceil(replicas_per_instance);
    for (billing, price, note) in priced {
        let fleet = (*billing == BillingMode::Spot).then(|| {
            fleet::spot_fleet(
                priced,
                *price,
                instances,
                floor_instances,
                reclaims_per_hour,
                replacement,
            )
        });
        // A floor as large as the fleet leaves nothing on spot: that is the floor's own row.
        if fleet.is_some_and(|f| f.spot_instances == 0) {
            continue;
        }
        let hourly = fleet.map_or(price * f64::from(instances), |f| f.usd_per_hour());
        // One replica on one instance at a light load: would it pay to let it go idle?
        let idle = (instances == 1 && serving_replicas == 1 && fleet.is_none())
            .then_some(asked)
            .flatten()
            .filter(|rate| *rate < 1.0)
            .map(|rate| scale_to_zero::scale_to_zero(rate, hourly, replacement, targets.ttft, request.tolerance));
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
        if let Some(fleet) = &fleet {
            why.push(fleet.explain(min_replicas, &reclaim_source));
        }
        if let Some(idle) = &idle {
            why.push(idle.explain());
        }
        if let Some(bound) = &decode {
            why.push(format!(
                "bounded by the host's image {}: {:.0} images/s per instance, below what its GPUs serve",
                bound.what, bound.images_per_second
            ));
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
                fleet,
                scale_to_zero: idle,
                one_fewer: fewer,
                pending_latency,
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
    outcomes
}
