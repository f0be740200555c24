//! The continuous-batching serving model against published serving measurements
//! (`tests/validation/serving.toml`): offline and fixed-concurrency throughput, throughput at
//! an offered request rate, and TTFT / TPOT / ITL percentiles.
//!
//! Calibration is kept apart from validation. The constants the serving model uses were set
//! from the cases its calibration data lists in `calibrated_on` (the engine profiles' fp8 decode factor from
//! TensorRT-LLM's fp8 throughput tables on H100/H200); the targets are asserted on every
//! other case.
//!
//! `cargo test -p gpuplan --test serving_validation -- --nocapture` prints the table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use gpuplan::estimator::serving::{self, StepCost, closed_loop};
use gpuplan::model::{Engine, Precision, RequestMix, Task};
use gpuplan::{Catalog, ModelSource, WorkloadRequest, estimate_workload};
use serde::Deserialize;
use std::sync::OnceLock;

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::embedded().unwrap())
}

/// Case-id prefixes the serving constants were set from (see `efficiency.rs`:
/// `low_precision_decode_factor()` cites TensorRT-LLM's fp8 throughput tables on H100/H200).
/// Median relative error allowed on the held-out cases: 15 % for throughput, 20 % for
/// latency percentiles.
const THROUGHPUT_TARGET: f64 = 0.15;
const LATENCY_TARGET: f64 = 0.20;

#[derive(Debug, Deserialize)]
struct Table {
    case: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    id: String,
    kind: String,
    statistic: String,
    model: String,
    gpu: String,
    gpus: u32,
    tp: u32,
    precision: String,
    engine: String,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    request_rate: Option<f64>,
    max_concurrency: Option<f64>,
    /// Iterations scheduled at once, where the benchmark set it (vLLM 0.6 multi-step).
    scheduler_steps: Option<f64>,
    /// Whether the benchmark's engine mixed prompt chunks into decode steps, where its
    /// configuration says (vLLM 0.6 with a 4k context did not).
    chunked_prefill: Option<bool>,
    measured: f64,
}

fn table() -> Table {
    toml::from_str(include_str!("validation/serving.toml")).unwrap()
}

fn step_cost(case: &Case, input: u64, output: u64) -> Option<StepCost> {
    let mut request = WorkloadRequest::new(ModelSource::BuiltIn(case.model.clone()), Task::Inference, &case.gpu);
    request.gpus = Some(case.tp);
    request.tp = Some(case.tp);
    request.precision = Some(case.precision.parse::<Precision>().unwrap());
    request.engine = Some(case.engine.parse::<Engine>().unwrap());
    request.seq = Some(input);
    request.output_tokens = Some(output);
    request.batch = Some(1);
    estimate_workload(catalog(), &request).ok()?.estimate.serving_cost
}

/// Whether a case measures throughput (else a latency in ms).
fn is_throughput(case: &Case) -> bool {
    case.kind.contains("throughput")
}

/// The model's figure for a case, in the case's unit; `None` where the case cannot be
/// evaluated (an input length the source does not state) or the model saturates.
fn predict(case: &Case) -> Result<f64, String> {
    let (Some(input), Some(output)) = (case.input_tokens, case.output_tokens) else {
        return Err("input length unstated".to_string());
    };
    let mut cost = step_cost(case, input, output).ok_or("does not fit")?;
    if let Some(steps) = case.scheduler_steps {
        cost.scheduler.steps_per_schedule = steps;
    }
    // Where the benchmark ran without chunked prefill, prompts ran in prefill-only iterations.
    if case.chunked_prefill == Some(false) {
        cost.scheduler.mixes_prefill = false;
    }
    let mix = RequestMix::fixed(input, output);
    let replicas = f64::from(case.gpus / case.tp.max(1));
    let per_replica_rate = case.request_rate.map(|r| r / replicas);
    let concurrency = case.max_concurrency.map(|c| c / replicas);
    let closed = closed_loop(&cost, &mix, concurrency);
    let point = per_replica_rate.map(|rate| serving::at_load(&cost, rate, &mix));
    if is_throughput(case) {
        let (tokens, requests) = match point {
            Some(Ok(p)) => (p.output_tokens_per_second(), p.requests_per_second),
            _ => (closed.output_tokens_per_second, closed.requests_per_second),
        };
        return Ok(replicas
            * match case.kind.as_str() {
                "request_throughput" => requests,
                "throughput_total" => tokens * (input + output) as f64 / output as f64,
                _ => tokens,
            });
    }
    let q = match case.statistic.as_str() {
        "p50" => Some(0.5),
        "p90" => Some(0.9),
        "p99" => Some(0.99),
        _ => None,
    };
    let seconds = match point {
        Some(Ok(p)) => match (case.kind.as_str(), q) {
            ("ttft", Some(q)) => p.ttft_at(q),
            ("ttft", None) => p.ttft_mean(),
            ("tpot", Some(q)) => p.tpot_at(q),
            ("tpot", None) => p.tpot_mean(),
            ("itl", Some(q)) => p.itl_at(q),
            ("itl", None) => p.tpot_mean(),
            ("e2e_latency", _) => p.e2e_mean(),
            (kind, _) => return Err(format!("unknown kind {kind}")),
        },
        Some(Err(saturation)) => return Err(format!("saturated: {saturation:?}")),
        None => match case.kind.as_str() {
            "tpot" | "itl" => closed.step_seconds,
            "ttft" => {
                let p =
                    serving::at_load(&cost, closed.requests_per_second * 0.9, &mix).map_err(|s| format!("{s:?}"))?;
                p.ttft_mean()
            }
            kind => return Err(format!("{kind} without a load")),
        },
    };
    Ok(seconds * 1e3)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return f64::NAN;
    }
    let mid = values.len() / 2;
    if values.len() % 2 == 0 {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

#[test]
fn the_table_has_enough_cases_across_gpus_and_engines() {
    let cases = table().case;
    assert!(cases.len() >= 25, "{}", cases.len());
    let mut gpus: Vec<&str> = cases.iter().map(|c| c.gpu.as_str()).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let mut engines: Vec<&str> = cases.iter().map(|c| c.engine.as_str()).collect();
    engines.sort_unstable();
    engines.dedup();
    assert!(gpus.len() >= 3 && engines.len() >= 3, "{gpus:?} {engines:?}");
}

#[test]
fn held_out_serving_errors_meet_the_targets() {
    let mut throughput = Vec::new();
    let mut latency = Vec::new();
    let mut skipped = Vec::new();
    let calibrated = gpuplan::estimator::calibration::calibrated_cases();
    println!("{:<64} {:>10} {:>10} {:>8}  role", "case", "measured", "model", "error");
    for case in table().case {
        let calibration = calibrated.contains(case.id.as_str());
        match predict(&case) {
            Ok(predicted) => {
                let error = (predicted - case.measured) / case.measured;
                println!(
                    "{:<64} {:>10.1} {:>10.1} {:>+7.1}%  {}",
                    case.id,
                    case.measured,
                    predicted,
                    error * 100.0,
                    if calibration { "calibration" } else { "held out" }
                );
                if !calibration {
                    if is_throughput(&case) {
                        throughput.push(error.abs());
                    } else {
                        latency.push(error.abs());
                    }
                }
            }
            Err(why) => {
                println!("{:<64} {:>10.1} {:>10} ({why})", case.id, case.measured, "-");
                skipped.push((case.id, why));
            }
        }
    }
    let (t, l) = (median(throughput.clone()), median(latency.clone()));
    println!(
        "held out: throughput median |error| {:.1} % over {} cases; latency {:.1} % over {}; {} not evaluated",
        t * 100.0,
        throughput.len(),
        l * 100.0,
        latency.len(),
        skipped.len()
    );
    assert!(throughput.len() + latency.len() >= 25);
    assert!(t <= THROUGHPUT_TARGET, "throughput median error {:.1} %", t * 100.0);
    assert!(l <= LATENCY_TARGET, "latency median error {:.1} %", l * 100.0);
}
