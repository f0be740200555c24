//! Serving requests as practitioners make them, each with what an experienced engineer
//! expects in words, asserted on the plan's JSON contract (docs/json.md). The expectations
//! follow vLLM's and SGLang's deployment guides and published serving benchmarks (one H100
//! serves a 7–8B model at tens of requests per second; a 70B model wants TP4–TP8 on
//! H100-class GPUs), not gpuplan's own output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan::model::{LatencyTarget, RequestMix, RequestShape, Task};
use gpuplan::planner::ServingTargets;
use gpuplan::{ModelSource, PlanQuery, ServingQuestion, WorkloadRequest, estimate_workload, plan_workload};
use serde_json::Value;

use crate::catalog;

fn plan(query: &PlanQuery) -> Value {
    match plan_workload(catalog(), query).unwrap() {
        Ok(answer) => serde_json::to_value(answer.wire(gpuplan::Naming::Flags)).unwrap(),
        Err(infeasible) => panic!("infeasible: {:?} {:?}", infeasible.suggestion, infeasible.nearest),
    }
}

fn best(plan: &Value) -> &Value {
    &plan["recommendations"][0]
}

fn recommendations(plan: &Value) -> &Vec<Value> {
    plan["recommendations"].as_array().unwrap()
}

fn target(text: &str) -> LatencyTarget {
    LatencyTarget::parse_with(text, |t| {
        t.strip_suffix("ms")
            .map(|ms| ms.parse::<f64>().map(|v| v / 1e3))
            .or_else(|| t.strip_suffix('s').map(str::parse::<f64>))
            .unwrap()
            .map_err(|e| e.to_string())
    })
    .unwrap()
}

/// Online serving of `model` at `qps` with `input`/`output` tokens and the targets.
fn serving(model: &str, qps: f64, input: u64, output: u64, ttft: &str, tpot: &str) -> PlanQuery {
    let mut q = PlanQuery::new(ModelSource::BuiltIn(model.to_string()), Task::Inference);
    q.seq = Some(input);
    q.output_tokens = Some(output);
    q.serving = ServingTargets {
        qps: Some(qps),
        ttft: Some(target(ttft)),
        tpot: Some(target(tpot)),
        ..ServingTargets::default()
    };
    q
}

fn h100(mut q: PlanQuery) -> PlanQuery {
    q.gpus = vec!["H100-SXM5-80GB".to_string()];
    q
}

fn f(value: &Value) -> f64 {
    value.as_f64().unwrap_or_else(|| panic!("not a number: {value}"))
}

#[test]
fn one_8_h100_node_serves_llama_70b_at_10_qps_1000_in_200_out() {
    let mut q = h100(serving("llama-3.1-70b", 10.0, 1000, 200, "1s", "50ms"));
    q.providers = vec!["aws".into(), "gcp".into(), "lambda".into()];
    let p = plan(&q);
    let r = best(&p);
    assert!(f(&r["gpus"]) <= 8.0, "{} GPUs", r["gpus"]);
    assert!(
        f(&r["serving"]["gpus_per_replica"]) >= 4.0,
        "70B bf16 is sharded over 4–8 H100s"
    );
}

/// 60 prompts/s of 1,000 tokens are 870 TFLOP/s of prefill alone for a 7B model, 1.5 H100s at
/// 60 % of their bf16 peak before a token is decoded; with 50 ms TPOT, three or four.
#[test]
fn mistral_7b_at_60_qps_needs_three_or_four_h100s_not_eight() {
    let mut q = h100(serving("mistral-7b", 60.0, 1000, 200, "1s", "50ms"));
    q.providers = vec!["aws".into()];
    // At the limit: the default 10 % headroom is a policy on top of what the GPUs can carry.
    q.serving.headroom = Some(0.0);
    let p = plan(&q);
    let r = best(&p);
    assert!((3.0..=4.0).contains(&f(&r["gpus"])), "{} GPUs", r["gpus"]);
    assert_eq!(f(&r["serving"]["gpus_per_replica"]), 1.0);
}

#[test]
fn a_7b_model_at_modest_load_runs_unsharded() {
    let p = plan(&serving("llama-3.1-8b", 2.0, 500, 200, "1s", "100ms"));
    // 16 GB of 16-bit weights: any GPU of 24 GB or more holds them with room for the cache.
    let roomy = |r: &Value| f(&r["memory_capacity_bytes"]) >= 22.0 * 1024f64.powi(3);
    let checked: Vec<&Value> = recommendations(&p).iter().filter(|r| roomy(r)).collect();
    assert!(checked.len() >= 5);
    for r in checked {
        assert_eq!(f(&r["serving"]["gpus_per_replica"]), 1.0, "{}", r["instance_type"]);
    }
}

#[test]
fn every_recommendation_meets_its_percentile_targets_at_the_planned_load() {
    let p = plan(&serving("llama-3.1-8b", 30.0, 2000, 300, "p99:2s", "p90:40ms"));
    for r in recommendations(&p) {
        let s = &r["serving"];
        assert_eq!(s["batching"], "continuous");
        assert!(f(&s["ttft"]["p99"]) <= 2.0, "{}", s["ttft"]);
        assert!(f(&s["tpot"]["p90"]) <= 0.040, "{}", s["tpot"]);
        assert!(f(&s["load_per_replica"]) <= f(&s["goodput_per_replica"]) + 1e-9);
        assert!(f(&s["kv_cache_utilisation"]) < 1.0);
        let capacity = f(&s["replicas"]) * f(&s["requests_per_second_per_replica"]);
        assert!(capacity >= 30.0 - 1e-9, "{capacity}");
    }
}

#[test]
fn a_p99_target_needs_at_least_the_replicas_of_the_same_bound_at_p50() {
    let replicas = |tpot: &str| {
        let p = plan(&h100(serving("llama-3.1-8b", 40.0, 2000, 300, "2s", tpot)));
        f(&best(&p)["serving"]["replicas"])
    };
    assert!(replicas("p99:25ms") >= replicas("p50:25ms"));
}

#[test]
fn tightening_time_per_token_never_needs_fewer_gpus() {
    let gpus = |tpot: &str| {
        let p = plan(&h100(serving("llama-3.1-8b", 40.0, 1000, 300, "2s", tpot)));
        f(&best(&p)["gpus"])
    };
    let (loose, tight) = (gpus("100ms"), gpus("15ms"));
    assert!(tight >= loose, "15 ms: {tight} GPUs, 100 ms: {loose}");
}

#[test]
fn the_peak_load_sets_the_autoscaling_maximum() {
    let mut q = h100(serving("llama-3.1-8b", 20.0, 1000, 200, "1s", "50ms"));
    q.serving.peak_qps = Some(80.0);
    let p = plan(&q);
    let s = &best(&p)["serving"];
    assert!(f(&s["max_replicas"]) >= 3.5 * f(&s["replicas"]).min(f(&s["max_replicas"]) / 4.0));
    assert!(f(&s["max_replicas"]) * f(&s["requests_per_second_per_replica"]) >= 80.0 - 1e-9);
    assert!(f(&s["min_replicas"]) <= f(&s["replicas"]));
}

#[test]
fn llm_serving_defaults_to_vllm_and_says_so() {
    let p = plan(&serving("llama-3.1-8b", 5.0, 1000, 200, "1s", "50ms"));
    let defaults: Vec<&str> = p["defaults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(defaults.iter().any(|d| d.starts_with("--engine vllm")), "{defaults:?}");
    let engine = p["defaulted"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["field"] == "engine");
    assert_eq!(engine.map(|d| d["value"].clone()), Some("vllm".into()));
    assert!(defaults.iter().any(|d| d.contains("90th percentile")), "{defaults:?}");
}

#[test]
fn long_prompts_need_more_replicas_than_short_ones_at_the_same_load() {
    let with_log = |input: u64| {
        let mut q = h100(serving("llama-3.1-8b", 30.0, 1000, 200, "2s", "50ms"));
        let shapes = (0..100)
            .map(|i| RequestShape {
                input_tokens: input + i * 10,
                output_tokens: 200,
            })
            .collect();
        q.serving.requests = RequestMix::from_shapes(shapes, "log");
        // The log's own lengths: a length given beside it would scale it.
        (q.seq, q.output_tokens) = (None, None);
        f(&best(&plan(&q))["gpus"])
    };
    assert!(with_log(6000) > with_log(300));
}

#[test]
fn a_shared_prompt_prefix_in_cache_needs_fewer_gpus() {
    let gpus = |hit: Option<f64>| {
        let mut q = h100(serving("llama-3.1-8b", 40.0, 4000, 200, "2s", "50ms"));
        q.prefix_cache_hit = hit;
        f(&best(&plan(&q))["gpus"])
    };
    assert!(gpus(Some(0.8)) < gpus(None));
}

#[test]
fn image_classification_is_served_with_dynamic_batching() {
    let mut q = PlanQuery::new(ModelSource::BuiltIn("resnet-50".to_string()), Task::Inference);
    q.serving = ServingTargets {
        qps: Some(500.0),
        ttft: Some(target("100ms")),
        ..ServingTargets::default()
    };
    let p = plan(&q);
    let s = &best(&p)["serving"];
    assert_eq!(s["batching"], "dynamic");
    assert!(f(&s["ttft"]["p99"]) <= 0.1);
}

#[test]
fn a_plan_says_whether_separate_prefill_and_decode_pools_would_pay() {
    let p = plan(&h100(serving("llama-3.1-8b", 100.0, 4000, 300, "2s", "p99:12ms")));
    let why: Vec<&str> = best(&p)["why"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(why.iter().any(|w| w.contains("separate pools")), "{why:?}");
}

#[test]
fn an_estimate_beyond_a_replicas_capacity_says_it_saturates() {
    let mut r = WorkloadRequest::new(
        ModelSource::BuiltIn("llama-3.1-8b".to_string()),
        Task::Inference,
        "H100-SXM5-80GB",
    );
    r.seq = Some(1000);
    r.output_tokens = Some(200);
    r.serving = ServingQuestion {
        qps: Some(1000.0),
        ..ServingQuestion::default()
    };
    let answer = estimate_workload(catalog(), &r).unwrap();
    let report = answer.serving.unwrap();
    assert!(report.saturated.is_some());
    assert!(report.capacity_requests_per_second < 1000.0);
    r.serving.qps = Some(report.capacity_requests_per_second * 0.5);
    let half = estimate_workload(catalog(), &r).unwrap().serving.unwrap();
    assert!(half.saturated.is_none() && half.ttft.is_some() && half.tpot.is_some());
}

/// Llama-3.1-8B on one H100 with vLLM, 500-token prompts and 200-token answers, at most 32
/// sequences running.
fn vllm_8b_held_to_32_sequences() -> WorkloadRequest {
    let mut r = WorkloadRequest::new(
        ModelSource::BuiltIn("llama-3.1-8b".into()),
        Task::Inference,
        "H100-SXM5-80GB",
    );
    (r.seq, r.output_tokens, r.engine) = (Some(500), Some(200), Some(gpuplan::model::Engine::Vllm));
    r.engine_settings.max_num_seqs = Some(32);
    r
}

/// An 8B model on an 80 GB GPU with vLLM held to 32 running sequences: the KV cache holds
/// hundreds, so past the replica's capacity it is the sequence limit that stops it, and the
/// answer says so (raising `max_num_seqs` is the fix, not more memory); with the limit lifted
/// the same load saturates on compute instead.
#[test]
fn a_replica_stopped_by_its_sequence_limit_says_so_not_the_kv_cache() {
    use gpuplan::estimator::serving::Saturation;
    let mut r = vllm_8b_held_to_32_sequences();
    let capacity = estimate_workload(catalog(), &r)
        .unwrap()
        .serving
        .unwrap()
        .capacity_requests_per_second;
    r.serving.qps = Some(capacity * 1.3);
    let held = estimate_workload(catalog(), &r).unwrap().serving.unwrap();
    assert_eq!(held.saturated, Some(Saturation::SequenceLimit));
    assert_eq!(held.max_concurrent_sequences, 32.0);
    r.engine_settings.max_num_seqs = Some(4096);
    let lifted = estimate_workload(catalog(), &r).unwrap().serving.unwrap();
    assert_eq!(
        lifted.saturated, None,
        "30 % over the limited capacity is well within the lifted one"
    );
    r.serving.qps = Some(1000.0);
    let flooded = estimate_workload(catalog(), &r).unwrap().serving.unwrap();
    assert_eq!(flooded.saturated, Some(Saturation::Throughput));
}

/// A load a few per cent past the estimated capacity is inside the estimate's own error
/// (measured capacities run up to about a tenth above it): the answer says it may hold, at its
/// limit, and names the bound, rather than that queues grow without end; a load a third past
/// it is saturated.
#[test]
fn a_load_just_past_the_estimated_capacity_is_near_it_not_saturated() {
    use gpuplan::estimator::serving::Saturation;
    let mut r = vllm_8b_held_to_32_sequences();
    let capacity = serving_of(&r).capacity_requests_per_second;
    r.serving.qps = Some(capacity * 1.04);
    let near = serving_of(&r);
    assert_eq!(near.saturated, None);
    assert!(near.ttft.is_none() && near.tpot.is_none());
    let within = near.near_capacity.expect("4 % over the estimate is within its range");
    assert_eq!(within.bound, Saturation::SequenceLimit);
    assert!((within.load_over_capacity - 1.04).abs() < 1e-9);
    assert!(within.capacity_high_requests_per_second > capacity * 1.04);
    r.serving.qps = Some(capacity * 1.3);
    let past = serving_of(&r);
    assert_eq!(past.saturated, Some(Saturation::SequenceLimit));
    assert_eq!(past.near_capacity, None);
}

#[test]
fn serving_flags_on_a_model_no_continuous_batching_engine_runs_are_refused() {
    let mut r = WorkloadRequest::new(ModelSource::BuiltIn("resnet-50".to_string()), Task::Inference, "L4");
    r.serving.qps = Some(10.0);
    let error = estimate_workload(catalog(), &r).unwrap_err();
    assert_eq!(error.exit_status(), gpuplan::ExitStatus::Error);
}

/// Sarathi-Serve's observation: an engine that runs prompts in prefill-only iterations
/// stalls every decoding sequence, so at the same load its time per output token is longer
/// than that of an engine that folds prompt chunks into the decode steps.
#[test]
fn prefill_only_iterations_stall_decoding_more_than_chunked_prefill() {
    let tpot = |engine: &str| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-3.1-8b".to_string()),
            Task::Inference,
            "H100-SXM5-80GB",
        );
        r.seq = Some(2000);
        r.output_tokens = Some(200);
        r.engine = Some(engine.parse().unwrap());
        r.serving.qps = Some(8.0);
        estimate_workload(catalog(), &r)
            .unwrap()
            .serving
            .unwrap()
            .tpot
            .unwrap()
            .p90
    };
    assert!(
        tpot("sglang") > tpot("vllm"),
        "sglang {} vllm {}",
        tpot("sglang"),
        tpot("vllm")
    );
}

/// vLLM's `--kv-cache-dtype fp8` halves the cache each sequence needs, so a replica of Llama 3.1
/// 70B on two H100s holds about twice the sequences and reads half the cache per step.
#[test]
fn an_fp8_kv_cache_holds_twice_the_sequences() {
    let run = |kv| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-3.1-70b".into()),
            Task::Inference,
            "H100-SXM5-80GB",
        );
        (r.gpus, r.tp, r.precision) = (Some(2), Some(2), Some(gpuplan::model::Precision::Fp8));
        (r.batch, r.seq, r.output_tokens) = (Some(64), Some(2000), Some(500));
        (r.engine, r.kv_cache) = (Some(gpuplan::model::Engine::Vllm), Some(kv));
        estimate_workload(catalog(), &r).unwrap().estimate
    };
    let (half, eight) = (
        run(gpuplan::model::KvCacheDtype::Half),
        run(gpuplan::model::KvCacheDtype::Eight),
    );
    let ratio = eight.inference.unwrap().max_concurrent_sequences as f64
        / half.inference.unwrap().max_concurrent_sequences as f64;
    assert!((1.8..2.2).contains(&ratio), "{ratio}");
    assert!(
        eight.memory.kv_cache.as_u64() * 2 == half.memory.kv_cache.as_u64()
            || (eight.memory.kv_cache.as_gib() * 2.0 - half.memory.kv_cache.as_gib()).abs() < 0.01
    );
}

/// Headroom is stated, not hidden: a replica is planned at its goodput less the share asked
/// for, so keeping 40 % free needs more replicas than planning at the limit, the default
/// 10 % is named among the defaults, and a share outside 0–0.9 is refused.
#[test]
fn headroom_is_a_stated_share_of_goodput() {
    let at = |headroom: Option<f64>| {
        let mut q = h100(serving("llama-3.1-8b", 40.0, 1000, 200, "1s", "50ms"));
        q.providers = vec!["aws".into()];
        q.serving.headroom = headroom;
        plan(&q)
    };
    let (limit, spare) = (at(Some(0.0)), at(Some(0.4)));
    let replicas = |p: &Value| f(&best(p)["serving"]["replicas"]);
    let planned = |p: &Value| f(&best(p)["serving"]["requests_per_second_per_replica"]);
    let goodput = |p: &Value| f(&best(p)["serving"]["goodput_per_replica"]);
    assert!(
        replicas(&spare) > replicas(&limit),
        "{} vs {}",
        replicas(&spare),
        replicas(&limit)
    );
    assert!((planned(&limit) - goodput(&limit)).abs() < 1e-9);
    assert!((planned(&spare) - 0.6 * goodput(&spare)).abs() < 1e-6 * goodput(&spare));
    let defaults = at(None)["defaults"].to_string();
    assert!(defaults.contains("--headroom 0.1"), "{defaults}");
    let mut q = serving("llama-3.1-8b", 4.0, 500, 200, "1s", "100ms");
    for bad in [0.95, -0.1, f64::NAN] {
        q.serving.headroom = Some(bad);
        assert!(plan_workload(catalog(), &q).is_err(), "{bad} accepted");
    }
}

/// An 8B model on one H100 with 1,000-token prompts and 200-token answers, as `estimate` asks it.
fn llama_8b_h100(engine: &str, settings: gpuplan::model::EngineSettings) -> WorkloadRequest {
    let mut r = WorkloadRequest::new(
        ModelSource::BuiltIn("llama-3.1-8b".to_string()),
        Task::Inference,
        "H100-SXM5-80GB",
    );
    (r.seq, r.output_tokens) = (Some(1000), Some(200));
    r.engine = Some(engine.parse().unwrap());
    r.engine_settings = settings;
    r
}

fn serving_of(r: &WorkloadRequest) -> gpuplan::estimator::serving::LoadReport {
    estimate_workload(catalog(), r).unwrap().serving.unwrap()
}

/// `model` on one `gpu` with vLLM, `seq` tokens in and `output` out, as `estimate` asks it.
fn vllm_request(model: &str, gpu: &str, seq: u64, output: u64) -> WorkloadRequest {
    let mut r = WorkloadRequest::new(ModelSource::BuiltIn(model.into()), Task::Inference, gpu);
    (r.seq, r.output_tokens, r.engine) = (Some(seq), Some(output), Some(gpuplan::model::Engine::Vllm));
    r
}

/// The iteration cost of the replica `r` describes.
fn step_cost_of(r: &WorkloadRequest) -> gpuplan::estimator::serving::StepCost {
    estimate_workload(catalog(), r).unwrap().estimate.serving_cost.unwrap()
}

/// vLLM 0.5's V0 engine spent most of each decode iteration on the CPU (the v0.6.0 release
/// post: 38 % GPU time on Llama 3 8B on an H100), so at the same load its time per token is
/// longer, and its capacity lower, than the current engine's; the answer names the release.
#[test]
fn an_old_vllm_release_decodes_slower_than_the_current_one() {
    use gpuplan::model::{EngineRelease, EngineSettings};
    let at = |release: Option<EngineRelease>| {
        let mut r = llama_8b_h100(
            "vllm",
            EngineSettings {
                release,
                ..EngineSettings::default()
            },
        );
        r.serving.qps = Some(4.0);
        serving_of(&r)
    };
    let (old, current) = (at(Some(EngineRelease::new(0, 5))), at(None));
    assert!(old.tpot.unwrap().p50 > current.tpot.unwrap().p50 * 1.1);
    assert!(old.capacity_requests_per_second < current.capacity_requests_per_second);
    assert!(old.scheduler.contains("vllm 0.5"), "{}", old.scheduler);
    assert!(old.max_concurrent_sequences <= 256.0);
}

/// The scheduler knobs change the answer the way the engines' docs say: ten scheduler steps
/// make a new prompt wait for the running ones (longer TTFT); a lower `--max-num-seqs` caps
/// the sequences and so the capacity; without chunked prefill, prompts stall the decodes.
#[test]
fn scheduler_knobs_move_the_answer_in_the_documented_direction() {
    use gpuplan::model::EngineSettings;
    let at = |settings: EngineSettings| {
        let mut r = llama_8b_h100("vllm", settings);
        r.serving.qps = Some(4.0);
        serving_of(&r)
    };
    let default = at(EngineSettings::default());
    let multi_step = at(EngineSettings {
        scheduler_steps: Some(10),
        ..EngineSettings::default()
    });
    assert!(multi_step.ttft.unwrap().p90 > default.ttft.unwrap().p90);
    let capped = at(EngineSettings {
        max_num_seqs: Some(16),
        ..EngineSettings::default()
    });
    assert_eq!(capped.max_concurrent_sequences, 16.0);
    assert!(capped.capacity_requests_per_second < default.capacity_requests_per_second * 0.5);
    assert!(
        capped.scheduler.contains("in force: 16 sequences"),
        "{}",
        capped.scheduler
    );
    let separate = at(EngineSettings {
        chunked_prefill: Some(false),
        ..EngineSettings::default()
    });
    assert!(separate.tpot.unwrap().p90 > default.tpot.unwrap().p90);
}

/// A pipeline of two stages runs two micro-batches, and the engines take their limits apart
/// in their own ways. TensorRT-LLM schedules each micro-batch up to `max_batch_size` and
/// `max_num_tokens` (its capacity scheduler admits the batch size times the micro-batches): a
/// replica of two stages held to 64 sequences runs 128 at once, and takes more load than a
/// single micro-batch's limits would let it. vLLM's V1 engine fills each micro-batch up to
/// its token budget but runs one `max_num_seqs` of requests; its V0 engine (0.6) ran a
/// scheduler per stage, each up to both.
#[test]
fn a_pipeline_schedules_its_micro_batches_as_each_engine_does() {
    use gpuplan::model::{EngineRelease, EngineSettings};
    let at = |engine: &str, release: Option<EngineRelease>, stages: u32| {
        let mut r = llama_8b_h100(
            engine,
            EngineSettings {
                max_num_seqs: Some(64),
                release,
                ..EngineSettings::default()
            },
        );
        (r.gpus, r.tp, r.pp) = (Some(stages), Some(1), Some(stages));
        r.serving.qps = Some(1.0);
        serving_of(&r)
    };
    let (trtllm, single) = (at("tensorrt-llm", None, 2), at("tensorrt-llm", None, 1));
    assert_eq!(trtllm.max_concurrent_sequences, 128.0);
    assert_eq!(single.max_concurrent_sequences, 64.0);
    assert!(trtllm.capacity_requests_per_second > single.capacity_requests_per_second * 1.3);
    assert!(
        trtllm
            .scheduler
            .contains("64 and 8192 for each of the 2 pipeline micro-batches"),
        "{}",
        trtllm.scheduler
    );
    let vllm = at("vllm", None, 2);
    assert_eq!(vllm.max_concurrent_sequences, 64.0);
    assert!(
        vllm.scheduler
            .contains("16384 tokens an iteration (8192 tokens for each of the 2")
            && vllm.scheduler.contains("the sequences are the replica's"),
        "{}",
        vllm.scheduler
    );
    assert_eq!(
        at("vllm", Some(EngineRelease::new(0, 6)), 2).max_concurrent_sequences,
        128.0
    );
    assert_eq!(at("sglang", None, 2).max_concurrent_sequences, 64.0);
}

/// A closed loop of users, as `vllm bench serve --max-concurrency` runs: more users give more
/// throughput and longer tokens until the engine is full; the users one replica takes within
/// the targets is a number an engineer can check against such a sweep; and a plan for twice
/// the users needs at least as many replicas.
#[test]
fn a_closed_loop_of_users_is_sized_by_the_users_each_replica_takes() {
    let at = |users: f64| {
        let mut r = llama_8b_h100("vllm", Default::default());
        r.serving.concurrency = Some(users);
        (r.serving.ttft, r.serving.tpot) = (Some(target("1s")), Some(target("50ms")));
        serving_of(&r)
    };
    let (few, many) = (at(8.0), at(128.0));
    let (few_loop, many_loop) = (few.closed_loop.unwrap(), many.closed_loop.unwrap());
    assert!(many_loop.requests_per_second > few_loop.requests_per_second * 4.0);
    assert!(many_loop.tpot.p50 > few_loop.tpot.p50);
    let users = few.users_within_targets.unwrap();
    assert!((50.0..=1000.0).contains(&users), "{users} users within 1 s / 50 ms");
    let plan_for = |users: f64| {
        let mut q = h100(serving("llama-3.1-8b", 1.0, 1000, 200, "1s", "50ms"));
        q.serving.qps = None;
        q.serving.concurrency = Some(users);
        q.providers = vec!["aws".into()];
        plan(&q)
    };
    let (small, large) = (plan_for(200.0), plan_for(2000.0));
    let replicas = |p: &Value| f(&best(p)["serving"]["replicas"]);
    assert!(
        replicas(&large) >= replicas(&small) * 5.0,
        "{} {}",
        replicas(&large),
        replicas(&small)
    );
    let per_replica = f(&best(&large)["serving"]["users_per_replica"]);
    let within = f(&best(&large)["serving"]["users_within_targets_per_replica"]);
    assert!(
        per_replica <= within * 0.9 + 1.0,
        "{per_replica} users planned of {within}"
    );
}

/// The kernel, not only the bytes: with bitsandbytes (Transformers' `load_in_4bit`) NF4
/// decodes slower than bf16 at batch 1 on an A100 (LitGPT: 20 against 31 tokens/s), while the
/// same 4-bit weights through a fused Marlin kernel in vLLM decode faster than bf16; and
/// AutoAWQ's GEMM kernel loses to 16-bit at large batch.
#[test]
fn nf4_decodes_slower_than_bf16_with_bitsandbytes_and_faster_with_marlin() {
    use gpuplan::model::{Engine, Precision, WeightKernel};
    let tokens = |engine: Engine, precision: Precision, kernel: Option<WeightKernel>, batch: u64| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-2-7b".to_string()),
            Task::Inference,
            "A100-SXM4-40GB",
        );
        (r.seq, r.output_tokens, r.batch) = (Some(8), Some(50), Some(batch));
        (r.engine, r.precision, r.weight_kernel) = (Some(engine), Some(precision), kernel);
        let answer = estimate_workload(catalog(), &r).unwrap();
        answer.estimate.inference.unwrap().output_tokens_per_second
    };
    let bf16 = tokens(Engine::Pytorch, Precision::Bf16, None, 1);
    let nf4 = tokens(Engine::Pytorch, Precision::Int4, None, 1);
    assert!(
        nf4 < bf16 * 0.85,
        "bitsandbytes NF4 {nf4:.1} against bf16 {bf16:.1} tokens/s"
    );
    let vllm_bf16 = tokens(Engine::Vllm, Precision::Bf16, None, 1);
    let marlin = tokens(Engine::Vllm, Precision::Int4, None, 1);
    assert!(
        marlin > vllm_bf16 * 1.5,
        "Marlin {marlin:.1} against bf16 {vllm_bf16:.1} tokens/s"
    );
    let awq_large = tokens(Engine::Vllm, Precision::Int4, Some(WeightKernel::AwqGemm), 256);
    let bf16_large = tokens(Engine::Vllm, Precision::Bf16, None, 256);
    assert!(
        awq_large < bf16_large,
        "AWQ GEMM {awq_large:.0} against bf16 {bf16_large:.0} at batch 256"
    );
}

/// TensorRT-LLM's default capacity policy (GUARANTEED_NO_EVICT) reserves each request's whole
/// length on admission; MAX_UTILIZATION, which NVIDIA's MLPerf harness runs, grows the cache as
/// requests generate, so the same replica holds more sequences at once.
#[test]
fn growing_the_kv_cache_holds_more_sequences_than_reserving_it() {
    let cost = |reserve: Option<bool>| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-2-70b".into()),
            Task::Inference,
            "H100-SXM5-80GB",
        );
        (r.gpus, r.tp, r.precision) = (Some(2), Some(2), Some(gpuplan::model::Precision::Fp8));
        (r.seq, r.output_tokens) = (Some(222), Some(290));
        r.engine = Some(gpuplan::model::Engine::TensorrtLlm);
        r.engine_settings.reserve_full_context = reserve;
        estimate_workload(catalog(), &r).unwrap().estimate.serving_cost.unwrap()
    };
    let mix = gpuplan::model::RequestMix::fixed(222, 290);
    let (reserved, grown) = (cost(None).max_sequences(&mix), cost(Some(false)).max_sequences(&mix));
    // Reserved: 222 + 290 tokens each; grown: 222 + 145 on average.
    assert!(grown > 1.3 * reserved, "reserved {reserved} grown {grown}");
    assert!(
        cost(Some(false))
            .scheduler
            .describe(gpuplan::model::Engine::TensorrtLlm)
            .contains("grown")
    );
}

/// A request that generates few tokens spreads the prompts that stall it over few tokens, so
/// traffic whose output lengths vary has a longer p99 TPOT than identical requests of the same
/// mean lengths at the same load, while the mean step is about the same.
#[test]
fn short_outputs_widen_the_tpot_tail() {
    let cost = step_cost_of(&vllm_request("llama-3.1-8b", "H100-SXM5-80GB", 500, 200));
    let fixed = gpuplan::model::RequestMix::fixed(500, 200);
    let shapes = [10, 390]
        .iter()
        .map(|&o| gpuplan::model::RequestShape {
            input_tokens: 500,
            output_tokens: o,
        })
        .collect();
    let varied = gpuplan::model::RequestMix::from_shapes(shapes, "two kinds").unwrap();
    let rate = 0.5
        * gpuplan::estimator::serving::goodput(&cost, &fixed, None, None)
            .unwrap()
            .requests_per_second;
    let (a, b) = (
        gpuplan::estimator::serving::at_load(&cost, rate, &fixed).unwrap(),
        gpuplan::estimator::serving::at_load(&cost, rate, &varied).unwrap(),
    );
    assert!(
        b.tpot_at(0.99) > 1.1 * a.tpot_at(0.99),
        "{} {}",
        a.tpot_at(0.99),
        b.tpot_at(0.99)
    );
    assert!(b.tpot_at(0.5) < b.tpot_at(0.99));
}

/// Most of a log's prompt tokens belong to its long prompts, and a prompt token's attention
/// spans half of its own prompt. Half the prompts at 2,000 tokens and half at 62,000 so cost
/// more than prompts all of their mean 32,000: the average prompt token attends to 30,000
/// earlier tokens, not 16,000, and the replica takes fewer requests.
#[test]
fn long_prompts_in_a_log_weigh_by_their_tokens_not_their_count() {
    use gpuplan::estimator::serving::goodput;
    use gpuplan::model::{RequestMix, RequestShape};
    let cost = step_cost_of(&vllm_request("llama-3.1-8b", "H200-SXM-141GB", 32_000, 100));
    let fixed = RequestMix::fixed(32_000, 100);
    let shapes = [2_000, 62_000]
        .iter()
        .map(|&input_tokens| RequestShape {
            input_tokens,
            output_tokens: 100,
        })
        .collect();
    let log = RequestMix::from_shapes(shapes, "two kinds").unwrap();
    assert_eq!(log.mean_input(), fixed.mean_input());
    let capacity = |mix: &RequestMix| goodput(&cost, mix, None, None).unwrap().requests_per_second;
    let (even, spread) = (capacity(&fixed), capacity(&log));
    assert!(spread < 0.9 * even, "{spread} requests/s against {even}");
}

/// Prompts longer than an iteration's token budget are prefilled chunk after chunk, and each
/// chunk makes its iteration several times as long as a decode-only one: at half the replica's
/// capacity the iterations carrying chunks take most of the time, though they are a minority
/// of the iterations, and a prompt that arrives behind another waits for its chunks. So the
/// tail of the time to first token is well above a lone prompt's prefill, not a few percent.
#[test]
fn long_prompts_queue_for_the_gpu_time_their_chunks_take() {
    use gpuplan::estimator::serving::{at_load, goodput};
    let mut r = vllm_request("llama-3.1-70b", "H100-SXM5-80GB", 8_000, 200);
    (r.gpus, r.tp) = (Some(4), Some(4));
    r.engine_settings.max_num_batched_tokens = Some(2048);
    let cost = step_cost_of(&r);
    let mix = gpuplan::model::RequestMix::fixed(8_000, 200);
    let capacity = goodput(&cost, &mix, None, None).unwrap().requests_per_second;
    let lone = at_load(&cost, 0.01 * capacity, &mix).unwrap().ttft_at(0.99);
    let half = at_load(&cost, 0.5 * capacity, &mix).unwrap().ttft_at(0.99);
    assert!(
        half > 1.5 * lone,
        "p99 {half:.2} s at half the capacity, {lone:.2} s alone"
    );
}

/// A prompt a little longer than an iteration's token budget rides in one full chunk and a
/// small one: its own prefill costs a full iteration and a light one, not two full ones. At
/// light load, on 4 H100s with TensorRT-LLM chunking prompts into iterations of 2,048 tokens,
/// a 2,300-token prompt's first token comes well before a 4,000-token one's (two full chunks),
/// and after a 2,000-token one's (one). Timing every chunk as a full one put 2,300 tokens
/// within 2 % of 4,000.
#[test]
fn a_prompts_last_chunk_costs_what_it_holds() {
    use gpuplan::estimator::serving::at_load;
    let mut r = vllm_request("llama-3.1-70b", "H100-SXM5-80GB", 4_096, 200);
    (r.gpus, r.tp, r.engine) = (Some(4), Some(4), Some(gpuplan::model::Engine::TensorrtLlm));
    r.engine_settings.max_num_batched_tokens = Some(2048);
    r.engine_settings.chunked_prefill = Some(true);
    let cost = step_cost_of(&r);
    let ttft = |input: u64| {
        let mix = gpuplan::model::RequestMix::fixed(input, 200);
        at_load(&cost, 0.05, &mix).unwrap().ttft_mean()
    };
    let (one, just_past, two) = (ttft(2_000), ttft(2_300), ttft(4_000));
    assert!(
        just_past > one && just_past < 0.75 * two,
        "2,000: {one:.3} s, 2,300: {just_past:.3} s, 4,000: {two:.3} s"
    );
}

/// When the engine's sequence limit is what bounds a replica, requests beyond it wait for a
/// free slot rather than the iterations growing: close to the limit the time to first token
/// climbs steeply (a queue for slots) while the time per output token stays where the full
/// batch puts it.
#[test]
fn near_the_sequence_limit_requests_queue_for_a_slot() {
    let r = vllm_8b_held_to_32_sequences();
    let cost = estimate_workload(catalog(), &r).unwrap().estimate.serving_cost.unwrap();
    let mix = RequestMix::fixed(500, 200);
    let most = gpuplan::estimator::serving::goodput(&cost, &mix, None, None)
        .unwrap()
        .requests_per_second;
    let at = |share: f64| gpuplan::estimator::serving::at_load(&cost, share * most, &mix).unwrap();
    let (half, near) = (at(0.5), at(0.97));
    assert!(
        near.ttft_at(0.99) > 4.0 * half.ttft_at(0.99),
        "{} {}",
        half.ttft_at(0.99),
        near.ttft_at(0.99)
    );
    assert!(
        near.tpot_at(0.99) < 2.0 * half.tpot_at(0.99),
        "{} {}",
        half.tpot_at(0.99),
        near.tpot_at(0.99)
    );
    assert!(near.sequences < 32.0);
}

/// DeepSeek-V3 on eight H200s: spreading the 256 experts whole over the GPUs (expert
/// parallelism) rather than splitting every expert eight ways leaves each GPU 32 experts to
/// route to instead of 256 slices, so a decode step at 64 sequences is shorter, though the
/// busiest GPU sets its pace; the weights per GPU are the same.
#[test]
fn expert_parallelism_shortens_a_deepseek_decode_step() {
    let run = |ep| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("deepseek-v3".into()),
            Task::Inference,
            "H200-SXM-141GB",
        );
        (r.gpus, r.tp, r.ep, r.precision) = (Some(8), Some(8), Some(ep), Some(gpuplan::model::Precision::Fp8));
        (r.seq, r.output_tokens, r.engine) = (Some(3200), Some(800), Some(gpuplan::model::Engine::Sglang));
        estimate_workload(catalog(), &r).unwrap().estimate
    };
    let (split, whole) = (run(1), run(8));
    assert_eq!(split.memory.weights, whole.memory.weights);
    let step = |e: &gpuplan::estimator::Estimate| e.serving_cost.unwrap().decode_step(64.0, 3600.0);
    assert!(step(&whole) < 0.8 * step(&split), "{} {}", step(&split), step(&whole));
    assert!(whole.assumptions.iter().any(|a| a.contains("1.2× the mean")));
}

/// Planning DeepSeek-V3 on H200s, an engineer places its 256 experts whole over the eight GPUs
/// of a replica (expert parallelism) rather than splitting each eight ways: the plan weighs both
/// and keeps the layout that plans more requests per replica, and says so in the layout.
#[test]
fn a_deepseek_plan_spreads_the_experts_over_the_replica() {
    let mut q = serving("deepseek-v3", 2.0, 3200, 800, "10s", "200ms");
    q.gpus = vec!["H200-SXM-141GB".to_string()];
    q.precisions = vec![gpuplan::model::Precision::Fp8];
    let p = plan(&q);
    let r = best(&p);
    assert_eq!(r["layout"]["tp"], 8, "{r}");
    assert_eq!(r["layout"]["ep"], 8, "{r}");
}

/// TensorRT-LLM's `free_gpu_memory_fraction` (0.9) is a share of the memory the weights leave
/// free, not of the whole GPU (vLLM's `gpu_memory_utilization`): with 65.7 GiB of fp8 70B
/// weights and runtime on a 140.4 GiB H200, its fp8 KV cache is 0.9 × 74.7 GiB = 67.2 GiB, 160
/// KiB a token, so 855 sequences of 222 + 293 tokens reserved whole (a share of the whole GPU
/// would leave 60.7 GiB, 772).
#[test]
fn tensorrt_llm_sizes_its_kv_cache_from_the_memory_the_weights_leave() {
    let mut r = WorkloadRequest::new(
        ModelSource::BuiltIn("llama-2-70b".to_string()),
        Task::Inference,
        "H200-SXM-141GB",
    );
    r.precision = Some(gpuplan::model::Precision::Fp8);
    r.engine = Some(gpuplan::model::Engine::TensorrtLlm);
    r.seq = Some(222);
    r.output_tokens = Some(293);
    r.engine_settings.max_num_seqs = Some(4096);
    r.engine_settings.reserve_full_context = Some(true);
    r.serving = ServingQuestion {
        qps: Some(1.0),
        ..ServingQuestion::default()
    };
    let sequences = estimate_workload(catalog(), &r)
        .unwrap()
        .serving
        .unwrap()
        .max_concurrent_sequences;
    assert!((840.0..870.0).contains(&sequences), "{sequences}");
}

/// A 9K-token prompt cannot ride for free on decode steps: an engine cuts it into chunks of
/// its token budget, and the steps that carry them are compute-bound. So at half a replica's
/// capacity of long prompts (MLPerf's Llama 3.1 405B set on 8 H200 with TensorRT-LLM's
/// 2,560-token budget) the time per output token grows far more over a lone request's than
/// it does for short prompts at the same share of capacity.
#[test]
fn long_prompts_stall_the_decode_steps_they_share() {
    let tpot_growth = |input: u64| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-3.1-405b".to_string()),
            Task::Inference,
            "H200-SXM-141GB",
        );
        (r.gpus, r.tp, r.precision) = (Some(8), Some(8), Some(gpuplan::model::Precision::Fp8));
        (r.seq, r.output_tokens) = (Some(input), Some(650));
        r.engine = Some(gpuplan::model::Engine::TensorrtLlm);
        // The runs' TensorRT engines, whose graphs cover the iterations that carry prompts.
        r.engine_settings.backend = Some(gpuplan::model::EngineBackend::Tensorrt);
        r.engine_settings.max_num_batched_tokens = Some(2560);
        let mut at = |qps: f64| {
            r.serving.qps = Some(qps);
            estimate_workload(catalog(), &r).unwrap().serving.unwrap()
        };
        let lone = at(1e-4);
        let half = at(lone.capacity_requests_per_second * 0.5);
        half.tpot.unwrap().p50 / lone.tpot.unwrap().p50
    };
    // Spread over every step, as averaging would, the long prompts' growth (×1.2) came out
    // below the short ones' (×1.3); cut into chunks it is ×1.8 against ×1.5 (the short
    // prompts' steps grow too, as their batch nears the roofline's knee): half as much again
    // added to a lone request's TPOT.
    let (long, short) = (tpot_growth(9400), tpot_growth(200));
    assert!(
        long > 1.6 && long - 1.0 > 1.4 * (short - 1.0),
        "TPOT at half capacity: long ×{long}, short ×{short}"
    );
}

/// NVFP4 doubles Blackwell's tensor peak over fp8, but a serving step is not all GEMM and the
/// 4-bit GEMMs keep less of their peak: Llama 3.3 70B on one B200 serves more in fp4 than in
/// fp8 (less to read, faster matmuls, more room for KV cache), and well under twice as much
/// (TensorRT-LLM 1.0's tables: 7,007 against H200's 2,909 tokens/s at 1000/1000 for fp4 on
/// B200 and fp8 on H200, a ratio the bandwidth and peak alone would put higher).
#[test]
fn fp4_on_blackwell_serves_more_than_fp8_but_well_under_twice() {
    let capacity = |precision| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-3.3-70b".to_string()),
            Task::Inference,
            "B200",
        );
        (r.gpus, r.precision) = (Some(1), Some(precision));
        (r.seq, r.output_tokens) = (Some(1000), Some(1000));
        r.engine = Some(gpuplan::model::Engine::TensorrtLlm);
        r.serving.qps = Some(0.01);
        estimate_workload(catalog(), &r)
            .unwrap()
            .serving
            .unwrap()
            .capacity_output_tokens_per_second
    };
    let (fp4, fp8) = (
        capacity(gpuplan::model::Precision::Fp4),
        capacity(gpuplan::model::Precision::Fp8),
    );
    assert!(fp4 > 1.1 * fp8 && fp4 < 1.9 * fp8, "fp4 {fp4} fp8 {fp8}");
}

/// MLPerf Inference Llama-2-70B, Server scenario: NVIDIA's eight H200s with TensorRT-LLM's fp8
/// engines passed 101–117 requests/s of OpenOrca prompts (222 tokens in, about 294 out) within
/// p99 TTFT 2 s and p99 TPOT 200 ms (rounds v4.1–v5.1). Asked for 100 requests/s at those
/// limits, with no headroom, a plan on H200 with that runtime needs no more than those eight.
/// With the PyTorch backend, which reaches less of the GEMM peak, it needs more.
#[test]
fn eight_h200_with_tensorrt_llm_fp8_engines_serve_llama_2_70b_at_100_qps_within_mlperf_limits() {
    let gpus = |backend: gpuplan::model::EngineBackend| {
        let mut q = serving("llama-2-70b", 100.0, 222, 294, "p99:2s", "p99:200ms");
        q.gpus = vec!["H200-SXM-141GB".to_string()];
        q.precisions = vec![gpuplan::model::Precision::Fp8];
        q.engine = Some(gpuplan::model::Engine::TensorrtLlm);
        q.engine_settings.backend = Some(backend);
        q.engine_settings.max_num_seqs = Some(2048);
        q.engine_settings.reserve_full_context = Some(false);
        q.serving.headroom = Some(0.0);
        f(&best(&plan(&q))["gpus"])
    };
    let engines = gpus(gpuplan::model::EngineBackend::Tensorrt);
    assert!(engines <= 8.0, "{engines} H200s");
    let pytorch = gpus(gpuplan::model::EngineBackend::Pytorch);
    assert!(pytorch > engines, "PyTorch backend {pytorch} GPUs, engines {engines}");
}

/// MLPerf Inference Mixtral-8x7B, Server scenario (v4.1): NVIDIA's eight H100s, one fp8
/// TensorRT-LLM replica a GPU, passed 348 requests/s of the dataset's prompts (427 tokens in
/// on average, 146 out) within p99 TTFT 2 s and TPOT 200 ms, and Google's identical system
/// the same load. Planned at that load over the dataset's request lengths with no headroom,
/// the replicas come to about those eight: not the seven a model that counts a routed
/// expert's grouped GEMMs at the dense GEMMs' rate asks for, nor more than nine.
#[test]
fn eight_h100_with_tensorrt_llm_serve_mixtral_at_its_mlperf_load() {
    // The dataset's reference answers as they are: the runs' outputs averaged 146 tokens
    // against their 145.
    let shapes = crate::serving_validation::dataset("dataset:mixtral-8x7b-mlperf").unwrap();
    let mut q = serving("mixtral-8x7b", 348.0, 427, 146, "p99:2s", "p99:200ms");
    q.serving.requests = RequestMix::from_shapes(shapes.to_vec(), "MLPerf Mixtral-8x7B");
    q.gpus = vec!["H100-SXM5-80GB".to_string()];
    q.precisions = vec![gpuplan::model::Precision::Fp8];
    q.engine = Some(gpuplan::model::Engine::TensorrtLlm);
    q.engine_settings.backend = Some(gpuplan::model::EngineBackend::Tensorrt);
    // The July 2024 TensorRT-LLM the round's harness pinned, in the 0.9–0.12 profile.
    q.engine_settings.release = Some(gpuplan::model::EngineRelease::new(0, 12));
    q.engine_settings.max_num_seqs = Some(896);
    q.engine_settings.reserve_full_context = Some(false);
    q.serving.headroom = Some(0.0);
    let answer = plan(&q);
    let best = best(&answer);
    let gpus = f(&best["gpus"]);
    assert!((8.0..=9.0).contains(&gpus), "{gpus} H100s: {best}");
}

/// A request log sets the lengths the single-request figures use: its mean prompt and output,
/// named among the defaults, never the generic 2,048 and 256 a request without one gets.
#[test]
fn a_request_log_sets_the_single_request_lengths() {
    let shapes = (0..10)
        .map(|i| RequestShape {
            input_tokens: 300 + i * 20,
            output_tokens: 100 + i * 10,
        })
        .collect();
    let mut r = WorkloadRequest::new(
        ModelSource::BuiltIn("llama-3.1-8b".to_string()),
        Task::Inference,
        "H100-SXM5-80GB",
    );
    r.serving = ServingQuestion {
        qps: Some(5.0),
        requests: RequestMix::from_shapes(shapes, "log"),
        ..ServingQuestion::default()
    };
    let answer = estimate_workload(catalog(), &r).unwrap();
    let defaults: Vec<String> = answer
        .defaults
        .iter()
        .map(|d| d.render(gpuplan::Naming::Flags))
        .collect();
    assert!(
        defaults.contains(&"--seq 390 (the request log's mean prompt)".to_string()),
        "{defaults:?}"
    );
    assert!(
        defaults.contains(&"--output-tokens 145 (the request log's mean output)".to_string()),
        "{defaults:?}"
    );
    assert!(
        !defaults.iter().any(|d| d.contains("2048") || d.contains("256")),
        "{defaults:?}"
    );
}

/// A request log with an output length beside it is that log with its outputs scaled to the
/// given mean, as a benchmark that keeps a dataset's prompts but stretches its outputs runs:
/// the serving figures are those of the stretched log, the single-request figures use the same
/// length, and the answer says how the log was scaled. Before, the log's own outputs were
/// served while the single-request figures used the given length.
#[test]
fn a_request_log_with_an_output_length_is_scaled_to_it() {
    let log = |stretch: u64| {
        let shapes = (0..10)
            .map(|i| RequestShape {
                input_tokens: 300 + i * 20,
                output_tokens: (100 + i * 10) * stretch,
            })
            .collect();
        RequestMix::from_shapes(shapes, "log")
    };
    let answer = |requests: Option<RequestMix>, output_tokens: Option<u64>| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-3.1-8b".to_string()),
            Task::Inference,
            "H100-SXM5-80GB",
        );
        r.output_tokens = output_tokens;
        r.serving = ServingQuestion {
            qps: Some(5.0),
            requests,
            ..ServingQuestion::default()
        };
        estimate_workload(catalog(), &r).unwrap()
    };
    let scaled = answer(log(1), Some(290));
    let stretched = answer(log(2), None);
    let (a, b) = (scaled.serving.clone().unwrap(), stretched.serving.clone().unwrap());
    assert_eq!(a.mean_output_tokens, 290.0);
    assert_eq!(a.requests_scaled.as_deref(), Some("outputs ×2.000 to a mean of 290"));
    assert_eq!(b.requests_scaled, None);
    let (ta, tb) = (a.tpot.unwrap().p99, b.tpot.unwrap().p99);
    assert!((ta - tb).abs() <= 1e-6 * tb, "{ta} against {tb}");
    assert_eq!(scaled.workload.output_tokens, 290);
}

/// Pipeline stages in serving (TensorRT-LLM and vLLM run one micro-batch per stage at once):
/// four B200s as two stages of TP2 carry Llama-3.1-405B's long prompts at least as fast as TP4
/// (no all-reduce across four GPUs, the compute shared by the stages), while a lone request
/// reads every stage's weights in turn, so its time per token is longer. NVIDIA's MLPerf v5.1
/// Offline runs chose TP2 × PP2 for this model on B200 for that throughput.
#[test]
fn two_pipeline_stages_keep_the_throughput_of_tensor_parallelism_and_cost_latency_alone() {
    let answer = |tp: u32, pp: u32| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-3.1-405b".to_string()),
            Task::Inference,
            "B200",
        );
        r.gpus = Some(4);
        r.tp = Some(tp);
        r.pp = Some(pp);
        r.precision = Some("fp4".parse().unwrap());
        r.engine = Some("tensorrt-llm".parse().unwrap());
        r.seq = Some(9429);
        r.output_tokens = Some(652);
        estimate_workload(catalog(), &r).unwrap()
    };
    let (tensor, pipeline) = (answer(4, 1), answer(2, 2));
    let capacity = |a: &gpuplan::EstimateAnswer| a.serving.as_ref().unwrap().capacity_requests_per_second;
    assert!(
        capacity(&pipeline) >= capacity(&tensor),
        "{} vs {} requests/s",
        capacity(&pipeline),
        capacity(&tensor)
    );
    let tpot = |a: &gpuplan::EstimateAnswer| a.estimate.inference.as_ref().unwrap().tpot_seconds;
    assert!(
        tpot(&pipeline) > 1.3 * tpot(&tensor),
        "{} vs {} s",
        tpot(&pipeline),
        tpot(&tensor)
    );
}

/// Top-p sampling is not free at large batch: vLLM sorts each sequence's logits over the
/// vocabulary every step, about 20 µs a sequence for Llama 3.1's 128K tokens, so 256 users of
/// Llama 3.1 8B on one H100 wait about 5 ms more a step than with greedy decoding (ML.ENERGY's
/// vLLM 0.11 sweep, top-p 0.95: 26 ms median between tokens). Eight users barely notice, and
/// SGLang, which samples without a sort (FlashInfer), is not charged; the answer says which
/// applied.
#[test]
fn top_p_sampling_lengthens_vllm_steps_at_256_users_and_not_at_8() {
    use gpuplan::model::{EngineSettings, Sampling};
    let at = |engine: &str, users: f64, sampling: Option<Sampling>| {
        let mut r = llama_8b_h100(
            engine,
            EngineSettings {
                sampling,
                ..EngineSettings::default()
            },
        );
        r.serving.concurrency = Some(users);
        serving_of(&r)
    };
    let step = |report: &gpuplan::estimator::serving::LoadReport| report.closed_loop.unwrap().tpot.mean;
    let (greedy, top_p) = (at("vllm", 256.0, None), at("vllm", 256.0, Some(Sampling::TopP)));
    let added = step(&top_p) - step(&greedy);
    assert!((0.004..0.006).contains(&added), "{added} s a step");
    assert!(
        top_p.scheduler.contains("sorts each sequence's logits"),
        "{}",
        top_p.scheduler
    );
    let light = step(&at("vllm", 8.0, Some(Sampling::TopP))) - step(&at("vllm", 8.0, None));
    assert!(light < 0.0003, "{light} s a step at 8 users");
    let sglang = step(&at("sglang", 256.0, Some(Sampling::TopP))) - step(&at("sglang", 256.0, None));
    assert_eq!(sglang, 0.0);
    assert!(
        at("sglang", 256.0, Some(Sampling::TopP))
            .scheduler
            .contains("without a PyTorch sort")
    );
}

/// An engine run without CUDA graphs waits for the host to launch each iteration's kernels:
/// a few users' steps get longer, while a full batch's GPU work hides the launches.
#[test]
fn an_eager_vllm_is_slower_with_a_few_users_and_not_with_many() {
    use gpuplan::model::EngineSettings;
    let at = |users: f64, enforce_eager: Option<bool>| {
        let mut r = llama_8b_h100(
            "vllm",
            EngineSettings {
                enforce_eager,
                ..EngineSettings::default()
            },
        );
        r.serving.concurrency = Some(users);
        serving_of(&r)
    };
    let step = |report: &gpuplan::estimator::serving::LoadReport| report.closed_loop.unwrap().tpot.mean;
    // Llama 3.1 8B has 32 layers: an eager step lasts at least 32 × 0.30 ms = 9.6 ms.
    let (graphs, eager) = (step(&at(8.0, None)), step(&at(8.0, Some(true))));
    assert!(
        eager >= 0.0096 && eager > graphs + 0.001,
        "{graphs} s with graphs, {eager} s eager"
    );
    let (graphs, eager) = (step(&at(512.0, None)), step(&at(512.0, Some(true))));
    assert!(
        (eager - graphs).abs() < 0.01 * graphs,
        "{graphs} s with graphs, {eager} s eager"
    );
    assert!(at(8.0, Some(true)).scheduler.contains("run eagerly"));
}

/// TensorRT-LLM's PyTorch backend replays CUDA graphs of decode-only iterations alone. At one
/// request a second, Llama 3.1 8B's short prompts are prefilled in iterations its host
/// launches kernel by kernel, at least 32 layers × 0.30 ms = 9.6 ms, where TensorRT engines
/// take the GPU's own time (about 6 ms to read 16 GB of weights on an H100): the time to
/// first token grows by the difference. The decode-only iterations are alike, and the answer
/// says why the prompts' are not.
#[test]
fn tensorrt_llm_s_pytorch_backend_prefills_without_graphs() {
    use gpuplan::model::{EngineBackend, EngineSettings};
    let at = |backend: EngineBackend| {
        let mut r = llama_8b_h100(
            "tensorrt-llm",
            EngineSettings {
                backend: Some(backend),
                ..EngineSettings::default()
            },
        );
        (r.seq, r.output_tokens, r.serving.qps) = (Some(100), Some(200), Some(1.0));
        serving_of(&r)
    };
    let (pytorch, engines) = (at(EngineBackend::Pytorch), at(EngineBackend::Tensorrt));
    let first_token = |report: &gpuplan::estimator::serving::LoadReport| report.ttft.unwrap().p50;
    // The prompt's iteration lasts its launches instead of its GPU time: longer, by less than
    // the launches themselves.
    let longer = first_token(&pytorch) - first_token(&engines);
    assert!(
        (0.002..0.0096).contains(&longer),
        "PyTorch backend {} s, engines {} s",
        first_token(&pytorch),
        first_token(&engines)
    );
    let per_token = |report: &gpuplan::estimator::serving::LoadReport| report.tpot.unwrap().p50;
    assert!(
        (per_token(&pytorch) / per_token(&engines) - 1.0).abs() < 0.05,
        "PyTorch backend {} s, engines {} s",
        per_token(&pytorch),
        per_token(&engines)
    );
    assert!(
        pytorch.scheduler.contains("decode-only iterations"),
        "{}",
        pytorch.scheduler
    );
    assert!(
        !engines.scheduler.contains("decode-only iterations"),
        "{}",
        engines.scheduler
    );
}

/// An HGX B300's datasheet gives it 1.56× a B200's dense fp4, but MLPerf v6.0's B300 systems ran
/// Llama-2-70B at 1.07–1.12× the B200's throughput a GPU on the same software: an fp4 replica of
/// Llama-2-70B on one B300 serves well short of 1.56× one on a B200 (about 1.3×: the weight and
/// KV-cache reads do not speed up, and the B300's sustained fp4 rate is 0.9 of its peak), and in
/// 8 bits, where the two parts' peaks are the same, it is not slower.
#[test]
fn a_b300_serves_fp4_llama_2_70b_a_little_faster_than_a_b200_not_half_again() {
    let capacity = |gpu: &str, precision: &str| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-2-70b".into()), Task::Inference, gpu);
        (r.seq, r.output_tokens) = (Some(222), Some(273));
        r.engine = Some("tensorrt-llm".parse().unwrap());
        r.precision = Some(precision.parse().unwrap());
        // The same scheduler on both, as the MLPerf configurations set it, so that the B300's
        // larger memory does not add sequences.
        r.engine_settings = gpuplan::model::EngineSettings {
            max_num_seqs: Some(2048),
            max_num_batched_tokens: Some(4608),
            reserve_full_context: Some(false),
            ..gpuplan::model::EngineSettings::default()
        };
        serving_of(&r).capacity_output_tokens_per_second
    };
    let fp4 = capacity("B300", "fp4") / capacity("B200", "fp4");
    assert!((1.05..1.35).contains(&fp4), "B300 over B200 in fp4: {fp4:.2}×");
    let fp8 = capacity("B300", "fp8") / capacity("B200", "fp8");
    assert!(fp8 >= 0.99, "B300 over B200 in fp8: {fp8:.2}×");
}

/// With piecewise CUDA graphs (torch_compile_config.enable_piecewise_cuda_graph, as NVIDIA's
/// MLPerf v6 configurations set it), TensorRT-LLM's PyTorch backend replays graphs for the
/// iterations that carry prompts too: at one request a second Llama 3.1 8B's first token comes
/// as soon as with prebuilt engines, not a host's 32 layers of launches later, and the answer
/// says so.
#[test]
fn piecewise_cuda_graphs_take_the_host_out_of_the_pytorch_backend_s_prompts() {
    use gpuplan::model::{EngineBackend, EngineSettings};
    let at = |backend: EngineBackend, piecewise_cuda_graphs: Option<bool>| {
        let mut r = llama_8b_h100(
            "tensorrt-llm",
            EngineSettings {
                backend: Some(backend),
                piecewise_cuda_graphs,
                ..EngineSettings::default()
            },
        );
        (r.seq, r.output_tokens, r.serving.qps) = (Some(100), Some(200), Some(1.0));
        serving_of(&r)
    };
    let first_token = |report: &gpuplan::estimator::serving::LoadReport| report.ttft.unwrap().p50;
    let eager = at(EngineBackend::Pytorch, None);
    let piecewise = at(EngineBackend::Pytorch, Some(true));
    let engines = at(EngineBackend::Tensorrt, None);
    assert!(
        first_token(&eager) > first_token(&piecewise) + 0.002,
        "eager prompts {} s, piecewise graphs {} s",
        first_token(&eager),
        first_token(&piecewise)
    );
    assert!(
        (first_token(&piecewise) / first_token(&engines) - 1.0).abs() < 0.05,
        "piecewise graphs {} s, engines {} s",
        first_token(&piecewise),
        first_token(&engines)
    );
    assert!(
        piecewise.scheduler.contains("piecewise CUDA graphs"),
        "{}",
        piecewise.scheduler
    );
    assert!(
        !eager.scheduler.contains("piecewise CUDA graphs"),
        "{}",
        eager.scheduler
    );
}

/// TensorRT-LLM batches prompts with the running decodes in flight whether its chunked context
/// is on or off: off, it only keeps each prompt whole. With 1,000-token prompts, which fit its
/// 8,192-token iterations whole, the two settings give the same latencies, and the answer says
/// the prompts ride in the decode iterations, not in prefill-only ones.
#[test]
fn tensorrt_llm_without_chunked_context_still_batches_prompts_in_flight() {
    use gpuplan::model::EngineSettings;
    let at = |chunked: bool| {
        let mut r = llama_8b_h100(
            "tensorrt-llm",
            EngineSettings {
                chunked_prefill: Some(chunked),
                ..EngineSettings::default()
            },
        );
        r.serving.qps = Some(20.0);
        serving_of(&r)
    };
    let (whole, chunked) = (at(false), at(true));
    assert_eq!(whole.tpot, chunked.tpot);
    assert_eq!(whole.ttft, chunked.ttft);
    assert!(
        whole.scheduler.contains("prompts whole, in the decode iterations"),
        "{}",
        whole.scheduler
    );
    assert!(
        chunked.scheduler.contains("prompts chunked into the decode iterations"),
        "{}",
        chunked.scheduler
    );
}

/// Llama-2-70B in fp8 on one H200 with TensorRT-LLM: at about 80 sequences a decode step's
/// weight stream and GEMMs take about as long, and a real step then takes longer than either
/// (NVIDIA's MLPerf Interactive run: 34 ms a token where each alone is ~18 ms). Far from that
/// ridge, at one sequence or at 1,000, the step is what the larger of the two gives. The
/// estimate says so among its assumptions, and an MI300X's (with vLLM: TensorRT-LLM does not
/// run on ROCm) says its serving GEMM factor was set from runs on that architecture.
#[test]
fn a_step_at_the_roofline_ridge_is_longer_than_either_side() {
    let run = |gpu: &str, engine: gpuplan::model::Engine| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-2-70b".into()), Task::Inference, gpu);
        (r.gpus, r.tp, r.precision) = (Some(1), Some(1), Some(gpuplan::model::Precision::Fp8));
        (r.seq, r.output_tokens, r.engine) = (Some(222), Some(294), Some(engine));
        estimate_workload(catalog(), &r).unwrap().estimate
    };
    let h200 = run("H200-SXM-141GB", gpuplan::model::Engine::TensorrtLlm);
    let step = |n: f64| h200.serving_cost.unwrap().decode_step(n, 370.0);
    // One sequence costs the weight stream; 1,000 cost the GEMMs, per sequence. At 80 the step
    // is clearly above both, where a sharp roofline would put it at the larger.
    let (weights, compute) = (step(1.0), step(1000.0) * 80.0 / 1000.0);
    assert!(
        step(80.0) > 1.15 * weights.max(compute),
        "{} against {weights} and {compute}",
        step(80.0)
    );
    assert!(h200.assumptions.iter().any(|a| a.contains("rounded at its ridge")));
    let mi300x = run("MI300X", gpuplan::model::Engine::Vllm);
    assert!(
        mi300x
            .assumptions
            .iter()
            .any(|a| a.contains("set from serving runs on it"))
    );
}

/// A 4-bit float is stored with its block scales: NVIDIA's NVFP4 (what TensorRT-LLM and
/// ModelOpt checkpoints hold on Blackwell) keeps an FP8 scale per 16 weights, 4.5 bits; the OCP
/// MXFP4 of gpt-oss's checkpoint and AMD's matrix cores an 8-bit scale per 32, 4.25 bits. So
/// Llama 3.1 70B in fp4 weighs about 6 % more on a B200 than on an MI355X, and the estimate says
/// which format it counted.
#[test]
fn four_bit_weights_are_counted_with_their_block_scales() {
    use gpuplan::model::Precision;
    let estimate = |model: &str, gpu: &str| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn(model.to_string()), Task::Inference, gpu);
        (r.seq, r.output_tokens, r.precision) = (Some(1024), Some(128), Some(Precision::Fp4));
        estimate_workload(catalog(), &r).unwrap()
    };
    let says =
        |answer: &gpuplan::EstimateAnswer, words: &str| answer.estimate.assumptions.iter().any(|a| a.contains(words));
    let nvidia = estimate("llama-3.1-70b", "B200");
    let amd = estimate("llama-3.1-70b", "MI355X");
    let ratio = nvidia.estimate.memory.weights.0 as f64 / amd.estimate.memory.weights.0 as f64;
    // Weights outside the embeddings: 4.5 / 4.25 bits; the 16-bit embeddings dilute it.
    assert!((1.04..1.06).contains(&ratio), "NVFP4 over MXFP4 weights: {ratio:.3}");
    assert!(says(&nvidia, "as NVFP4 (4.5 bits"), "{:?}", nvidia.estimate.assumptions);
    assert!(says(&amd, "as MXFP4 (4.25 bits"), "{:?}", amd.estimate.assumptions);
    let gpt_oss = estimate("gpt-oss-120b", "B200");
    assert!(
        says(&gpt_oss, "as MXFP4"),
        "the checkpoint's own format: {:?}",
        gpt_oss.estimate.assumptions
    );
}

/// The engine's memory share sets its KV cache: vLLM's `--gpu-memory-utilization` is of the
/// whole GPU, so what it adds or takes away goes to the KV cache once the weights are in
/// (Llama 3.1 70B in 16-bit on four H100s: 0.95 holds a few dozen more sequences than the
/// default 0.9, 0.5 only a few dozen in all, in proportion to the memory moved).
/// TensorRT-LLM's `free_gpu_memory_fraction` is of what the weights leave free, so its KV
/// cache scales with the fraction itself. Each answer says which share was in force.
#[test]
fn the_engines_memory_share_sets_how_many_sequences_its_kv_cache_holds() {
    use gpuplan::model::EngineSettings;
    let at = |engine: &str, fraction: Option<f64>| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-70b".into()), Task::Inference, "H100");
        (r.gpus, r.tp, r.seq, r.output_tokens) = (Some(4), Some(4), Some(2048), Some(256));
        r.engine = Some(engine.parse().unwrap());
        r.engine_settings = EngineSettings {
            gpu_memory_fraction: fraction,
            ..EngineSettings::default()
        };
        serving_of(&r)
    };
    let sequences = |engine: &str, fraction: Option<f64>| at(engine, fraction).max_concurrent_sequences;
    let (low, default, high) = (
        sequences("vllm", Some(0.5)),
        sequences("vllm", None),
        sequences("vllm", Some(0.95)),
    );
    assert!(low < default && default < high, "{low} {default} {high}");
    // The pool grows with the memory moved: 0.05 of the GPU against 0.40.
    let ratio = (high - default) / (default - low);
    assert!((0.10..0.15).contains(&ratio), "{low} {default} {high}: {ratio}");
    assert!(at("vllm", Some(0.95)).scheduler.contains("95 % of the GPU's memory"));
    let (default, high) = (sequences("tensorrt-llm", None), sequences("tensorrt-llm", Some(0.95)));
    let ratio = high / default;
    assert!((ratio - 0.95 / 0.9).abs() < 0.02, "{default} {high}");
    assert!(
        at("tensorrt-llm", Some(0.95))
            .scheduler
            .contains("95 % of the memory the weights leave free")
    );
}

/// A tensor-parallel replica says what its all-reduces cost: two a layer, each a fixed latency
/// plus its bytes over the GPUs' link, which on PCIe cards (L40S) is an eighteenth of NVLink's
/// on an H100 board: the 20 GB/s nccl-tests reach over PCIe 4.0, not that figure reduced again
/// by the share of a line rate ring collectives reach; one GPU has none to state.
#[test]
fn a_tensor_parallel_estimate_states_its_all_reduces_and_their_link() {
    let assumptions = |gpu: &str, tp: u32| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-2-70b".into()), Task::Inference, gpu);
        (r.gpus, r.tp, r.precision) = (Some(tp), Some(tp), Some(gpuplan::model::Precision::Fp8));
        r.engine = Some(gpuplan::model::Engine::TensorrtLlm);
        estimate_workload(catalog(), &r).unwrap().estimate.assumptions
    };
    let line = |gpu: &str, tp: u32| {
        assumptions(gpu, tp)
            .into_iter()
            .find(|a| a.starts_with("tensor parallelism over"))
    };
    let l40s = line("L40S", 4).expect("a TP4 replica states its all-reduces");
    assert!(
        l40s.contains("(160 a step)") && l40s.contains("at 20 GB/s a GPU"),
        "{l40s}"
    );
    let h100 = line("H100", 4).expect("so does one on NVLink");
    assert!(h100.contains("at 360 GB/s a GPU"), "{h100}");
    assert!(line("H200-SXM-141GB", 1).is_none());
}

/// A mixture of experts moves each token's expert rows through memory apart from the GEMMs:
/// Qwen3-235B sends every token to 8 experts in each of its 94 MoE layers. TensorRT-LLM's
/// CUTLASS MoE copies each 4,096-wide fp8 row into expert order (1 byte read, 1 written) and
/// its combine reads the 16-bit output back, 4 bytes a value: 94 · 8 · 4 · 4,096 = 11.8 MiB a
/// token on each GPU of a TP8 replica whose experts are split eight ways. vLLM's fused_moe
/// gathers the rows inside the GEMM and pays only the combine's 2 bytes (5.9 MiB); a dense
/// model none.
#[test]
fn a_mixture_of_experts_states_the_bytes_its_routing_moves_a_token() {
    let line = |model: &str, engine: gpuplan::model::Engine| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn(model.into()), Task::Inference, "H200-SXM-141GB");
        (r.gpus, r.tp, r.precision) = (Some(8), Some(8), Some(gpuplan::model::Precision::Fp8));
        (r.seq, r.output_tokens, r.engine) = (Some(2048), Some(128), Some(engine));
        estimate_workload(catalog(), &r)
            .unwrap()
            .estimate
            .assumptions
            .into_iter()
            .find(|a| a.starts_with("routed experts' rows through memory"))
    };
    let trtllm = line("qwen3-235b-a22b", gpuplan::model::Engine::TensorrtLlm).expect("a MoE states its rows");
    assert!(
        trtllm.contains("11.8 MiB a token") && trtllm.contains("copied into expert order"),
        "{trtllm}"
    );
    let vllm = line("qwen3-235b-a22b", gpuplan::model::Engine::Vllm).expect("with any engine");
    assert!(vllm.contains("5.9 MiB a token") && !vllm.contains("copied"), "{vllm}");
    assert!(line("llama-3.1-70b", gpuplan::model::Engine::Vllm).is_none());
}

/// Llama-3.1-405B in fp8 fills an 8-H200 instance, whether as one TP8 replica or two TP4
/// ones: a load past what one instance's replicas carry takes a second instance, doubling the
/// bill. The goodput is an estimate with a measured error, so the plan says what the last
/// instance buys: what each replica would carry without it, as a multiple of its goodput,
/// beside the range measured goodputs fall in.
#[test]
fn a_plan_rounded_up_to_a_second_eight_gpu_instance_says_what_one_would_carry() {
    let mut q = serving("llama-3.1-405b", 0.45, 9429, 654, "p99:6s", "p99:175ms");
    q.gpus = vec!["H200-SXM-141GB".to_string()];
    q.precisions = vec![gpuplan::model::Precision::Fp8];
    q.engine = Some(gpuplan::model::Engine::TensorrtLlm);
    let p = plan(&q);
    let r = best(&p);
    let serving = &r["serving"];
    assert_eq!(f(&r["nodes"]), 2.0, "{}", r["nodes"]);
    let fewer = &serving["one_fewer"];
    // One instance fewer keeps one instance's replicas, half the plan's.
    let replicas = f(&serving["replicas"]);
    assert_eq!(
        (f(&fewer["instances"]), f(&fewer["replicas"])),
        (1.0, replicas / 2.0),
        "{fewer}"
    );
    // They would carry the whole load, past their goodput: the second instance is not the
    // headroom's doing.
    assert!(
        (f(&fewer["load_per_replica"]) - 0.45 / f(&fewer["replicas"])).abs() < 1e-9,
        "{fewer}"
    );
    let over = f(&fewer["load_over_goodput"]);
    assert!(
        (over - f(&fewer["load_per_replica"]) / f(&serving["goodput_per_replica"])).abs() < 1e-9,
        "{fewer}"
    );
    assert!(over > 1.0, "{over}");
    let range = fewer["goodput_range"].as_array().unwrap();
    assert!(f(&range[0]) < 1.0 && f(&range[1]) > 1.0, "{range:?}");
    // Every multi-instance recommendation says it; a single instance has nothing to drop.
    for r in recommendations(&p) {
        assert_eq!(
            r["serving"]["one_fewer"].is_null(),
            f(&r["nodes"]) == 1.0,
            "{} nodes: {}",
            r["nodes"],
            r["serving"]["one_fewer"]
        );
    }
}

/// Attention computes one softmax exponential per head and key, and the special-function
/// units return 16 a clock per SM on Hopper and Blackwell alike (CUDA C++ Programming Guide).
/// Hopper's units keep up with its 16-bit and fp8 tensor cores at the engines' shares;
/// Blackwell's fp8 tensor cores outrun them (FlashAttention-4), so long prompts on a B200 in
/// fp8 are timed by their exponentials, and the estimate says so, while the same model in 16
/// bits on the B200, or in fp8 on an H100, is timed by its FLOPs and says nothing of it.
#[test]
fn blackwell_fp8_prompt_attention_waits_on_its_exponentials_and_hopper_does_not() {
    let says_so = |gpu: &str, precision: &str| {
        let mut r = vllm_request("llama-3.3-70b", gpu, 32_768, 256);
        r.precision = Some(precision.parse().unwrap());
        if gpu.starts_with("H100") {
            r.tp = Some(2);
            r.gpus = Some(2);
        }
        let answer = estimate_workload(catalog(), &r).unwrap();
        answer
            .estimate
            .assumptions
            .iter()
            .any(|a| a.contains("softmax exponentials"))
    };
    assert!(says_so("B200", "fp8"));
    assert!(!says_so("B200", "bf16"));
    assert!(!says_so("H100-SXM5-80GB", "fp8"));
}

/// gpt-oss ships its experts in MXFP4 and everything else in bf16 (its config's
/// `modules_to_not_convert`), and NVIDIA's engines multiply MXFP4 weights by MXFP8
/// activations on Blackwell (TensorRT-LLM's gpt-oss support matrix): on a B200 its matmuls run
/// at the 8-bit rate and its attention layers' weights are 16-bit, where an NVFP4 checkpoint
/// such as NVIDIA's Llama 3.3 70B multiplies at the 4-bit rate. So gpt-oss-120b's capacity is
/// below what a 4-bit rate would give, and the estimate says why.
#[test]
fn gpt_oss_mxfp4_experts_multiply_eight_bit_activations_on_blackwell() {
    let estimate = |model: &str| {
        let mut r = vllm_request(model, "B200", 8192, 1024);
        r.precision = Some("fp4".parse().unwrap());
        r.engine = Some("tensorrt-llm".parse().unwrap());
        estimate_workload(catalog(), &r).unwrap()
    };
    let says =
        |answer: &gpuplan::EstimateAnswer, words: &str| answer.estimate.assumptions.iter().any(|a| a.contains(words));
    let gpt_oss = estimate("gpt-oss-120b");
    assert!(says(&gpt_oss, "matmuls run at fp8"));
    assert!(says(&gpt_oss, "MXFP8 activations"));
    let llama = estimate("llama-3.3-70b");
    assert!(!says(&llama, "matmuls run at fp8"));
}
