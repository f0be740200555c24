//! A closed loop of users on one replica: each of N users sends its next request when the
//! last one ends (`vllm bench serve --max-concurrency N`, genai-perf's concurrency mode, a
//! chat front end with a fixed number of seats). The replica runs min(N, its sequence cap)
//! sequences; the others wait for a slot.
//!
//! - Time per output token: the steady-state iterations with those sequences, some of them
//!   lengthened by the prompts that replace finished ones ([`closed_loop`]); its percentiles
//!   follow the Poisson count of such iterations a request meets.
//! - Time to first token: the wait for a free slot (Little's law on the users beyond the cap:
//!   waiting users over the completion rate), half an iteration for the running one to end,
//!   and the prompt's own prefill in the budget the decodes leave per iteration. The wait is
//!   taken as its mean at every percentile (a closed loop admits in order); the percentiles
//!   follow the prompt lengths.
//! - Users within targets: the most users whose TTFT and TPOT percentiles meet the targets.

use crate::serving::{ClosedLoop, Percentiles, StepCost, closed_loop, largest_holding};
use gpuplan_model::{LatencyTarget, RequestMix};
use serde::Serialize;

/// One replica with `users` in a closed loop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UsersPoint {
    pub users: f64,
    /// Sequences running at once (the rest wait for a slot).
    pub sequences: f64,
    pub requests_per_second: f64,
    pub output_tokens_per_second: f64,
    pub ttft: Percentiles,
    pub tpot: Percentiles,
}

/// The replica with `users` users in a closed loop.
pub fn at_users(cost: &StepCost, mix: &RequestMix, users: f64) -> UsersPoint {
    let users = users.max(1.0);
    let running: ClosedLoop = closed_loop(cost, mix, Some(users));
    let step = running.iterations.step_seconds;
    let waiting = (users - running.sequences).max(0.0);
    let slot_wait = if running.requests_per_second > 0.0 {
        waiting / running.requests_per_second
    } else {
        f64::INFINITY
    };
    let budget = cost.scheduler.token_budget;
    let left = (budget - running.sequences).max(1.0);
    let context = mix.mean_context_in_flight();
    // Each chunk of the prompt is an iteration of its own length: a full chunk beside the
    // running decodes (or alone, for engines that prefill on their own), at least the mean step.
    let own = |tokens: f64| {
        let chunks = (tokens / left).ceil().max(1.0);
        let chunk = (tokens / chunks).min(left);
        let iteration = if cost.scheduler.mixes_prefill {
            cost.step(running.sequences, context, chunk, tokens, 1.0)
        } else {
            cost.step(0.0, 0.0, chunk, tokens, 1.0)
        };
        chunks * iteration.max(step)
    };
    let ttft_at = |q: f64| slot_wait + step / 2.0 + own(mix.prefill_quantile(q));
    UsersPoint {
        users,
        sequences: running.sequences,
        requests_per_second: running.requests_per_second,
        output_tokens_per_second: running.output_tokens_per_second,
        ttft: Percentiles {
            mean: slot_wait + step / 2.0 + own(mix.mean_prefill()),
            p50: ttft_at(0.5),
            p90: ttft_at(0.9),
            p99: ttft_at(0.99),
        },
        tpot: running.iterations.tpot(),
    }
}

impl UsersPoint {
    /// Whether the percentiles meet the targets.
    pub fn meets(&self, ttft: Option<LatencyTarget>, tpot: Option<LatencyTarget>) -> bool {
        ttft.is_none_or(|t| self.ttft.at(t.percentile) <= t.seconds)
            && tpot.is_none_or(|t| self.tpot.at(t.percentile) <= t.seconds)
    }
}

/// The most users one replica takes with the targets met; `None` when not even one user
/// meets them. Without targets, the users that fill the engine's sequence cap.
pub fn users_within(
    cost: &StepCost,
    mix: &RequestMix,
    ttft: Option<LatencyTarget>,
    tpot: Option<LatencyTarget>,
) -> Option<f64> {
    let cap = cost.max_sequences(mix).max(1.0).floor();
    if ttft.is_none() && tpot.is_none() {
        return Some(cap);
    }
    let meets = |users: f64| at_users(cost, mix, users).meets(ttft, tpot);
    if !meets(1.0) {
        return None;
    }
    // Past the cap every extra user only waits longer: the answer lies below 4× the cap.
    Some(largest_holding(4.0 * cap, meets))
}

/// Mean time to first token when `requests` arrive at once (a benchmark that sends all its
/// prompts together, the first wave of an offline batch): their prompts are prefilled in
/// budget-sized iterations one after another, and a request's first token comes with the
/// iteration that finishes its prompt, the middle one on average.
pub fn burst_ttft(cost: &StepCost, mix: &RequestMix, requests: f64) -> f64 {
    let tokens = requests.max(1.0) * mix.mean_prefill();
    let budget = cost.scheduler.token_budget.max(1.0);
    let iterations = (tokens / budget).ceil().max(1.0);
    let chunk = tokens / iterations;
    let iteration = cost.step(0.0, 0.0, chunk, mix.size_biased_input(), 1.0);
    iteration * (iterations + 1.0) / 2.0
}
