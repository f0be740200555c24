//! Dynamic batching: engines that run one batch at a time (Triton's dynamic batcher, eager
//! PyTorch generation, encoders, CNNs, diffusion). Each batch size `b` the replica holds has a
//! pass that keeps it busy `T(b)` seconds (the forward pass, or the whole generation of an
//! eager engine), gives its first output after `F(b)` and then a token every `tpot(b)`.
//!
//! - **The batch a load forms.** Requests that arrive while a batch runs form the next one,
//!   so at `λ` requests/s the batcher runs the smallest batch whose rate `b / T(b)` keeps up
//!   with `λ` (Triton's dynamic batcher with a queue delay under one pass behaves so).
//! - **Latency.** The replica is busy a share `ρ = λ·T(b)/b` of the time; a request arriving
//!   while it is busy waits for the running pass, a residual time uniform on `[0, T(b)]`
//!   (deterministic service seen by Poisson arrivals), then its own pass. So the wait is 0
//!   with probability `1 − ρ` and `T(b)·(q − 1 + ρ)/ρ` at a percentile `q` above that, and
//!   the time to first output is the wait plus `F(b)`.
//! - **Goodput.** The highest rate `b / T(b)` among the batches whose latency at that full
//!   load (`ρ = 1`) meets the targets at their percentiles; the replica is planned at the
//!   goodput less the stated headroom, as continuous batching is.

use crate::rejection::Constraint;
use crate::replica::Refusal;
use crate::request::ServingTargets;
use gpuplan_estimate::InferenceEstimate;
use gpuplan_estimate::serving::{GoodputLimit, Percentiles, Saturation};
use gpuplan_model::LatencyTarget;
use serde::Serialize;

/// One batch size a replica can run, and what its pass takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BatchPass {
    pub batch: f64,
    /// How long the pass keeps the replica busy, seconds.
    pub busy_seconds: f64,
    /// From the pass's start to its first output, seconds.
    pub first_seconds: f64,
    /// Per output token after the first (0 for single-pass models), seconds.
    pub tpot_seconds: f64,
}

impl BatchPass {
    pub fn new(batch: u64, estimate: &InferenceEstimate) -> BatchPass {
        BatchPass {
            batch: batch as f64,
            busy_seconds: estimate.request_latency_seconds.max(estimate.ttft_seconds),
            first_seconds: estimate.ttft_seconds,
            tpot_seconds: estimate.tpot_seconds,
        }
    }

    /// Requests/s at this batch with the replica never idle.
    pub fn rate(&self) -> f64 {
        self.batch / self.busy_seconds
    }

    /// Seconds waited for the running pass at `percentile` (0–100), busy a share `busy`.
    fn wait(&self, percentile: f64, busy: f64) -> f64 {
        let q = (percentile / 100.0).clamp(0.0, 1.0);
        if busy <= 0.0 || q <= 1.0 - busy {
            0.0
        } else {
            self.busy_seconds * (q - (1.0 - busy)) / busy
        }
    }

    fn first_at(&self, percentile: f64, busy: f64) -> f64 {
        self.wait(percentile, busy) + self.first_seconds
    }

    /// The first target this pass misses at full load, if any.
    fn missed(&self, targets: &ServingTargets) -> Option<(GoodputLimit, LatencyTarget, f64)> {
        if let Some(t) = targets.ttft {
            let first = self.first_at(t.percentile, 1.0);
            if first > t.seconds {
                return Some((GoodputLimit::TimeToFirstToken, t, first));
            }
        }
        targets
            .tpot
            .filter(|t| self.tpot_seconds > t.seconds)
            .map(|t| (GoodputLimit::TimePerOutputToken, t, self.tpot_seconds))
    }
}

/// A dynamically batched replica: its passes from batch 1 up to the largest that fits, and
/// the goodput they give within the targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DynamicReplica {
    /// Increasing batch.
    pub passes: Vec<BatchPass>,
    /// Index of the pass that sets the goodput.
    pub chosen: usize,
    /// Highest load within the targets, requests/s.
    pub goodput: f64,
    pub limit: GoodputLimit,
}

/// What a dynamically batched replica does at one load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DynamicPoint {
    pub batch: f64,
    pub ttft: Percentiles,
    pub tpot: Percentiles,
    /// Mean end-to-end latency of a request, seconds.
    pub request_latency_seconds: f64,
}

impl DynamicReplica {
    /// Sizes the replica from its passes (increasing batch, at least one): offline, the
    /// fastest; online, the fastest that meets the targets at full load.
    pub fn size(passes: Vec<BatchPass>, targets: &ServingTargets, offline: bool) -> Result<DynamicReplica, Refusal> {
        let fastest_meeting = passes
            .iter()
            .enumerate()
            .filter(|(_, p)| offline || p.missed(targets).is_none())
            .max_by(|a, b| a.1.rate().total_cmp(&b.1.rate()))
            .map(|(i, _)| i);
        let Some(chosen) = fastest_meeting else {
            return Err(refusal(passes.first(), targets));
        };
        // What stops a larger batch: a target it misses, else the replica's memory or speed.
        let limit = passes[chosen + 1..]
            .iter()
            .find_map(|p| p.missed(targets).filter(|_| !offline).map(|(limit, _, _)| limit))
            .unwrap_or(GoodputLimit::Saturation(Saturation::Throughput));
        Ok(DynamicReplica {
            goodput: passes[chosen].rate(),
            chosen,
            limit,
            passes,
        })
    }

    pub fn pass(&self) -> &BatchPass {
        &self.passes[self.chosen]
    }

    /// Requests/s planned per replica: the goodput less the headroom (offline: all of it).
    pub fn planned(&self, targets: &ServingTargets, offline: bool) -> f64 {
        if offline {
            self.goodput
        } else {
            self.goodput * (1.0 - targets.headroom())
        }
    }

    /// The latency at `rate` requests/s: the smallest batch that keeps up with it.
    pub fn at_rate(&self, rate: f64) -> DynamicPoint {
        let pass = self.passes.iter().find(|p| p.rate() >= rate).unwrap_or(self.pass());
        let busy = (rate * pass.busy_seconds / pass.batch).clamp(0.0, 1.0);
        let at = |percentile: f64| pass.first_at(percentile, busy);
        DynamicPoint {
            batch: pass.batch,
            ttft: Percentiles {
                mean: busy * pass.busy_seconds / 2.0 + pass.first_seconds,
                p50: at(50.0),
                p90: at(90.0),
                p99: at(99.0),
            },
            tpot: Percentiles::flat(pass.tpot_seconds),
            request_latency_seconds: busy * pass.busy_seconds / 2.0 + pass.busy_seconds,
        }
    }
}

/// Why not even one request at a time meets the targets.
fn refusal(single: Option<&BatchPass>, targets: &ServingTargets) -> Refusal {
    let missed = single.and_then(|p| p.missed(targets));
    let Some((limit, target, value)) = missed else {
        return Refusal {
            constraint: Constraint::Latency,
            reason: "no batch size fits".to_string(),
            shortfall: 1.0,
            needed: None,
        };
    };
    let what = match limit {
        GoodputLimit::TimeToFirstToken => "time to first output, waiting for the running batch included",
        _ => "time per output token",
    };
    Refusal {
        constraint: Constraint::Latency,
        reason: format!(
            "{what} {:.0} ms at p{}, target {:.0} ms",
            value * 1e3,
            target.percentile,
            target.seconds * 1e3
        ),
        shortfall: value / target.seconds,
        needed: Some(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass of `batch` taking 10 ms + 1 ms per request.
    fn pass(batch: u64) -> BatchPass {
        let seconds = 0.010 + 0.001 * batch as f64;
        BatchPass {
            batch: batch as f64,
            busy_seconds: seconds,
            first_seconds: seconds,
            tpot_seconds: 0.0,
        }
    }

    fn passes() -> Vec<BatchPass> {
        [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].into_iter().map(pass).collect()
    }

    fn within(ms: f64) -> ServingTargets {
        ServingTargets {
            ttft: Some(LatencyTarget::new(ms / 1e3, 99.0).unwrap()),
            ..ServingTargets::default()
        }
    }

    #[test]
    fn a_light_load_runs_small_batches_and_waits_little() {
        let replica = DynamicReplica::size(passes(), &ServingTargets::default(), false).unwrap();
        assert_eq!(replica.pass().batch, 512.0);
        // 10 requests/s: one at a time keeps up (91/s), busy 11 % of the time.
        let point = replica.at_rate(10.0);
        assert_eq!(point.batch, 1.0);
        assert!((point.ttft.p50 - 0.011).abs() < 1e-9, "{:?}", point.ttft);
        assert!(point.ttft.p99 < 0.022, "{:?}", point.ttft);
    }

    #[test]
    fn a_latency_target_caps_the_batch_and_the_goodput() {
        // At full load a request waits up to a whole pass, then runs its own: 2·T(b) ≤ 100 ms.
        let replica = DynamicReplica::size(passes(), &within(100.0), false).unwrap();
        assert_eq!(replica.pass().batch, 32.0);
        assert_eq!(replica.limit, GoodputLimit::TimeToFirstToken);
        assert!((replica.goodput - 32.0 / 0.042).abs() < 1e-9);
        let planned = replica.planned(&within(100.0), false);
        assert!((planned - replica.goodput * 0.9).abs() < 1e-9);
        assert!(replica.at_rate(planned).ttft.p99 <= 0.1);
    }

    #[test]
    fn a_target_one_request_misses_is_refused_with_the_time() {
        let refused = DynamicReplica::size(passes(), &within(15.0), false).unwrap_err();
        assert!(
            refused.reason.contains("22 ms at p99, target 15 ms"),
            "{}",
            refused.reason
        );
    }
}
