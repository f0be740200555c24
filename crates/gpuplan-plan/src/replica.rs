//! Sizing one serving replica (a tensor-parallel group) for a load and its latency targets.
//!
//! - Continuous-batching engines (vLLM, SGLang, TensorRT-LLM, TGI) serving generative
//!   models: the replica's goodput is the highest Poisson load whose TTFT and TPOT
//!   percentiles meet the targets ([`gpuplan_estimate::serving`]), or its saturation
//!   throughput without targets; it is planned at that goodput less the stated headroom
//!   ([`ServingTargets::headroom`]), and at nothing else.
//! - Other engines and models (CNNs, encoders, diffusion; eager PyTorch): dynamic batching,
//!   sized the same way from each batch's pass ([`crate::DynamicReplica`]).

use crate::rejection::Constraint;
use crate::request::ServingTargets;
use gpuplan_estimate::serving::{
    GoodputLimit, LoadPoint, Percentiles, StepCost, at_load, closed_loop, disaggregated, goodput, prefill_ttft,
};
use gpuplan_estimate::serving_users::{UsersPoint, at_users, users_within};
use gpuplan_model::{LatencyTarget, RequestMix};
use serde::Serialize;

/// Why a replica size does not serve.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub constraint: Constraint,
    pub reason: String,
    pub shortfall: f64,
    pub needed: Option<f64>,
}

/// A continuous-batching replica and what it sustains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContinuousReplica {
    pub cost: StepCost,
    /// Highest load within the targets (offline: the closed-loop throughput), requests/s.
    pub goodput: f64,
    pub limit: Option<GoodputLimit>,
    /// Load planned per replica, requests/s.
    pub planned: f64,
    /// A closed loop of users: those one replica takes within the targets, and those it is
    /// planned for (less the headroom).
    pub users: Option<Users>,
}

/// Closed-loop users of one replica.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Users {
    pub within: f64,
    pub planned: f64,
}

/// The targets as quantiles, for messages: `TTFT p90 1.2 s over the 1 s target`.
fn miss(point: &LoadPoint, ttft: Option<LatencyTarget>, tpot: Option<LatencyTarget>) -> Refusal {
    let late = |target: LatencyTarget, value: f64, what: &str| Refusal {
        constraint: Constraint::Latency,
        reason: format!(
            "{what} p{} {:.0} ms even at a trickle of requests, target {:.0} ms",
            target.percentile,
            value * 1e3,
            target.seconds * 1e3
        ),
        shortfall: value / target.seconds,
        needed: Some(value),
    };
    if let Some(t) = ttft.filter(|t| point.ttft_at(t.percentile / 100.0) > t.seconds) {
        return late(t, point.ttft_at(t.percentile / 100.0), "time to first token");
    }
    if let Some(t) = tpot.filter(|t| point.tpot_at(t.percentile / 100.0) > t.seconds) {
        return late(t, point.tpot_at(t.percentile / 100.0), "time per output token");
    }
    Refusal {
        constraint: Constraint::Latency,
        reason: "latency targets missed".to_string(),
        shortfall: 1.0,
        needed: None,
    }
}

/// Sizes a continuous-batching replica for `mix` within `targets`; `offline` ignores latency
/// and runs the replica at full concurrency.
pub fn size_continuous(
    cost: &StepCost,
    mix: &RequestMix,
    targets: &ServingTargets,
    offline: bool,
) -> Result<ContinuousReplica, Refusal> {
    let context = mix.max_context() as f64;
    if cost.kv_capacity_tokens < context {
        return Err(Refusal {
            constraint: Constraint::Memory,
            reason: format!(
                "the KV cache left beside the weights holds {:.0} tokens, less than one request of {context:.0}",
                cost.kv_capacity_tokens
            ),
            shortfall: context / cost.kv_capacity_tokens.max(1.0),
            needed: None,
        });
    }
    if offline {
        let throughput = closed_loop(cost, mix, None).requests_per_second;
        return Ok(ContinuousReplica {
            cost: *cost,
            goodput: throughput,
            limit: None,
            planned: throughput,
            users: None,
        });
    }
    if targets.concurrency.is_some() {
        return size_for_users(cost, mix, targets);
    }
    let Some(found) = goodput(cost, mix, targets.ttft, targets.tpot) else {
        return Err(match at_load(cost, 1e-6, mix) {
            Ok(point) => miss(&point, targets.ttft, targets.tpot),
            Err(_) => Refusal {
                constraint: Constraint::Memory,
                reason: "the replica holds no request of this size".to_string(),
                shortfall: f64::INFINITY,
                needed: None,
            },
        });
    };
    Ok(ContinuousReplica {
        cost: *cost,
        goodput: found.requests_per_second,
        limit: Some(found.limit),
        planned: found.requests_per_second * (1.0 - targets.headroom()),
        users: None,
    })
}

/// A replica sized by the closed-loop users it takes within the targets, less the headroom.
fn size_for_users(cost: &StepCost, mix: &RequestMix, targets: &ServingTargets) -> Result<ContinuousReplica, Refusal> {
    let Some(within) = users_within(cost, mix, targets.ttft, targets.tpot) else {
        let one = at_users(cost, mix, 1.0);
        let late = |target: LatencyTarget, p: &Percentiles, what: &str| {
            let value = p.at(target.percentile);
            Refusal {
                constraint: Constraint::Latency,
                reason: format!(
                    "{what} p{} {:.0} ms with a single user, target {:.0} ms",
                    target.percentile,
                    value * 1e3,
                    target.seconds * 1e3
                ),
                shortfall: value / target.seconds,
                needed: Some(value),
            }
        };
        return Err(match (targets.ttft, targets.tpot) {
            (Some(t), _) if !one.meets(Some(t), None) => late(t, &one.ttft, "time to first token"),
            (_, Some(t)) => late(t, &one.tpot, "time per output token"),
            _ => Refusal {
                constraint: Constraint::Latency,
                reason: "latency targets missed with a single user".to_string(),
                shortfall: 1.0,
                needed: None,
            },
        });
    };
    let planned_users = (within * (1.0 - targets.headroom())).max(1.0);
    let next = at_users(cost, mix, within + 1.0);
    let limit = match (targets.ttft, targets.tpot) {
        (None, None) => GoodputLimit::Saturation(cost.sequence_bound(mix).1),
        (ttft, _) if !next.meets(ttft, None) => GoodputLimit::TimeToFirstToken,
        _ => GoodputLimit::TimePerOutputToken,
    };
    Ok(ContinuousReplica {
        cost: *cost,
        goodput: at_users(cost, mix, within).requests_per_second,
        limit: Some(limit),
        planned: at_users(cost, mix, planned_users).requests_per_second,
        users: Some(Users {
            within,
            planned: planned_users,
        }),
    })
}

/// The replica's latency distribution at `rate` requests/s (its share of the load).
pub fn latency_at(replica: &ContinuousReplica, rate: f64, mix: &RequestMix) -> Option<LoadPoint> {
    at_load(&replica.cost, rate.max(1e-6), mix).ok()
}

/// The replica with `users` in a closed loop (its share of the users).
pub fn latency_with_users(replica: &ContinuousReplica, users: f64, mix: &RequestMix) -> UsersPoint {
    at_users(&replica.cost, mix, users)
}

/// Prefill and decode on separate pools of replicas, as planned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SplitPools {
    pub prefill_replicas: u32,
    pub decode_replicas: u32,
    /// Requests/s each pool's replica sustains within its target.
    pub prefill_goodput_per_replica: f64,
    pub decode_goodput_per_replica: f64,
    /// Moving a mean prompt's KV cache from its prefill replica to a decode replica, seconds.
    pub kv_transfer_seconds: f64,
    /// Latency at the planned load: TTFT on the prefill pool (with the transfer), TPOT on the
    /// decode pool (no prompt ever shares its steps).
    pub ttft: Percentiles,
    pub tpot: Percentiles,
    /// Sequences decoding at once on a decode replica.
    pub decode_sequences: f64,
}

impl SplitPools {
    pub fn replicas(&self) -> u32 {
        self.prefill_replicas + self.decode_replicas
    }
}

/// Sizes disaggregated pools for `qps`; the KV cache moves at `transfer_bytes_per_second`
/// per GPU. `None` where a pool cannot meet its target.
pub fn split_pools(
    replica: &ContinuousReplica,
    mix: &RequestMix,
    targets: &ServingTargets,
    qps: f64,
    transfer_bytes_per_second: f64,
) -> Option<SplitPools> {
    let cost = &replica.cost;
    let pools = disaggregated(cost, mix, targets.ttft, targets.tpot, transfer_bytes_per_second)?;
    let prefill = pools.prefill_goodput * (1.0 - targets.headroom());
    let decode = pools.decode_goodput * (1.0 - targets.headroom());
    if prefill <= 0.0 || decode <= 0.0 {
        return None;
    }
    let prefill_replicas = ((qps / prefill).ceil() as u32).max(1);
    let decode_replicas = ((qps / decode).ceil() as u32).max(1);
    let per_decode = qps / f64::from(decode_replicas);
    let sequences = per_decode * mix.mean_output() * pools.decode_step_seconds;
    let context = mix.mean_context_in_flight();
    Some(SplitPools {
        prefill_replicas,
        decode_replicas,
        prefill_goodput_per_replica: pools.prefill_goodput,
        decode_goodput_per_replica: pools.decode_goodput,
        kv_transfer_seconds: pools.kv_transfer_seconds,
        ttft: prefill_ttft(cost, mix, transfer_bytes_per_second, qps / f64::from(prefill_replicas)),
        tpot: Percentiles::flat(cost.decode_step(sequences.max(1.0), context)),
        decode_sequences: sequences,
    })
}
