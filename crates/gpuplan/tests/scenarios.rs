//! Requests as practitioners make them, each with what an experienced engineer expects in
//! words, asserted on the plan's JSON contract (docs/json.md). The expectations follow the
//! advice of cloud providers' and framework authors' guides, not gpuplan's own output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan::model::{BillingMode, Task};
use gpuplan::planner::{Objective, ServingTargets};
use gpuplan::{
    Catalog, CostQuery, ModelSource, PlanQuery, WorkloadRequest, cost_job, estimate_workload, plan_workload,
};
use serde_json::Value;

use crate::catalog;

fn query(model: &str, task: Task) -> PlanQuery {
    PlanQuery::new(ModelSource::BuiltIn(model.to_string()), task)
}

/// The plan as `gpuplan plan --format json` prints it.
fn plan(query: &PlanQuery) -> Value {
    match plan_workload(catalog(), query).unwrap() {
        Ok(answer) => serde_json::to_value(answer.wire(gpuplan::Naming::Flags)).unwrap(),
        Err(infeasible) => panic!("infeasible: {:?} {:?}", infeasible.suggestion, infeasible.nearest),
    }
}

fn recommendations(plan: &Value) -> &Vec<Value> {
    plan["recommendations"].as_array().unwrap()
}

fn best(plan: &Value) -> &Value {
    &recommendations(plan)[0]
}

fn label(r: &Value) -> String {
    format!(
        "{} {} ×{} {} {}",
        r["provider"], r["instance_type"], r["nodes"], r["gpu"], r["billing"]
    )
}

fn aws(mut q: PlanQuery) -> PlanQuery {
    q.providers = vec!["aws".to_string()];
    q
}

/// Accelerators built for inference only.
const INFERENCE_ONLY: [&str; 1] = ["Inferentia2"];

/// Whether an estimate fits with the default 10 % of each GPU kept free.
fn fits_with_margin(answer: &gpuplan::EstimateAnswer) -> bool {
    let m = &answer.estimate.memory;
    m.per_gpu.as_gib() <= 0.9 * m.capacity.as_gib()
}

/// Whether one of an estimate's assumptions says `words`.
fn assumes(answer: &gpuplan::EstimateAnswer, words: &str) -> bool {
    answer.estimate.assumptions.iter().any(|a| a.contains(words))
}

fn lora_8b() -> PlanQuery {
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.seq = Some(4096);
    q.batch = Some(32);
    q.tokens = Some(5e8);
    q.deadline_hours = Some(24.0);
    q
}

#[test]
fn an_aws_only_lora_of_an_8b_model_runs_on_one_node() {
    let p = plan(&aws(lora_8b()));
    assert_eq!(best(&p)["nodes"], 1, "{}", label(best(&p)));
}

#[test]
fn a_cluster_of_one_gpu_vms_without_a_cluster_fabric_is_never_planned() {
    for q in [aws(lora_8b()), lora_8b()] {
        let p = plan(&q);
        for r in recommendations(&p) {
            if r["nodes"].as_u64().unwrap() > 1 {
                let fabric = &r["fabric"];
                assert_ne!(fabric["kind"], "ethernet", "{}", label(r));
                assert!(!fabric.is_null(), "{}", label(r));
            }
        }
    }
}

#[test]
fn multi_node_pretraining_of_a_70b_model_runs_over_efa_on_eight_gpu_nodes() {
    let mut q = aws(query("llama-2-70b", Task::Pretrain));
    q.tokens = Some(1e10);
    q.max_gpus = Some(64);
    let p = plan(&q);
    for r in recommendations(&p).iter().filter(|r| r["nodes"].as_u64().unwrap() > 1) {
        assert_eq!(r["gpus_per_node"], 8, "{}", label(r));
        assert_eq!(r["fabric"]["kind"], "efa", "{}", label(r));
    }
}

#[test]
fn no_inference_only_chip_trains() {
    let mut q = query("llama-3.1-8b", Task::Finetune);
    q.billing = vec![BillingMode::OnDemand, BillingMode::Spot];
    let p = plan(&q);
    for r in recommendations(&p) {
        assert!(!INFERENCE_ONLY.contains(&r["gpu"].as_str().unwrap()), "{}", label(r));
    }
    assert!(p["rejected_counts"]["software stack"].as_u64().unwrap() > 0);
}

#[test]
fn an_inference_chip_may_serve_a_model_its_stack_supports() {
    let mut q = aws(query("llama-3.1-8b", Task::Inference));
    q.gpus = vec!["Inferentia2".to_string()];
    let p = plan(&q);
    assert_eq!(best(&p)["stack"], "neuron");
}

#[test]
fn tensorrt_llm_serving_lands_on_nvidia_only() {
    let mut q = query("llama-3.1-8b", Task::Inference);
    q.engine = "tensorrt-llm".parse().ok();
    let p = plan(&q);
    for r in recommendations(&p) {
        assert_eq!(r["stack"], "cuda", "{}", label(r));
    }
}

#[test]
fn the_stack_flag_restricts_to_amd() {
    let mut q = query("llama-3.1-8b", Task::Inference);
    q.operational.stacks = vec!["rocm".parse().unwrap()];
    let p = plan(&q);
    for r in recommendations(&p) {
        assert!(r["gpu"].as_str().unwrap().starts_with("MI"), "{}", label(r));
    }
}

#[test]
fn nothing_starts_in_zero_seconds() {
    let mut q = query("resnet-50", Task::Pretrain);
    q.dataset_size = Some(1_281_167.0);
    q.epochs = Some(90.0);
    let p = plan(&q);
    for r in recommendations(&p) {
        let startup = r["startup_seconds"].as_f64().unwrap();
        assert!(startup >= 60.0, "{}: {startup} s", label(r));
        assert!(r["time_seconds"].as_f64().unwrap() > startup);
    }
}

#[test]
fn a_large_cluster_is_never_planned_for_a_job_shorter_than_its_start_up() {
    let mut q = query("resnet-50", Task::Pretrain);
    q.dataset_size = Some(1_281_167.0);
    q.epochs = Some(90.0);
    q.max_gpus = Some(512);
    q.objective = Objective::Time;
    let p = plan(&q);
    for r in recommendations(&p).iter().filter(|r| r["nodes"].as_u64().unwrap() > 1) {
        let startup = r["startup_seconds"].as_f64().unwrap();
        let compute = r["time_seconds"].as_f64().unwrap() - startup;
        assert!(
            compute > startup,
            "{}: {compute:.0} s of compute after {startup:.0} s",
            label(r)
        );
    }
}

#[test]
fn imagenet_staging_counts_in_the_start_up_of_vision_training() {
    let mut with_data = query("resnet-50", Task::Pretrain);
    with_data.dataset_size = Some(1_281_167.0);
    with_data.epochs = Some(1.0);
    with_data.providers = vec!["aws".to_string()];
    let p = plan(&with_data);
    // 1.28 M JPEGs of about 110 KB are about 140 GB: minutes to copy at object-storage speed.
    assert!(best(&p)["startup_seconds"].as_f64().unwrap() > 120.0 + 60.0);
}

#[test]
fn the_default_size_limit_is_stated() {
    let p = plan(&lora_8b());
    let defaulted = p["defaulted"].as_array().unwrap();
    assert!(
        defaulted.iter().any(|d| d["field"] == "max_gpus" && d["value"] == "64"),
        "{defaulted:?}"
    );
    let lines = p["defaults"].to_string();
    assert!(
        lines.contains("--max-gpus 64 (larger clusters need capacity reservations)"),
        "{lines}"
    );
    for r in recommendations(&p) {
        assert!(r["gpus"].as_u64().unwrap() <= 64);
    }
}

#[test]
fn more_than_a_node_of_h100s_on_a_hyperscaler_carries_a_capacity_note() {
    let mut q = aws(query("llama-2-70b", Task::Pretrain));
    q.tokens = Some(1e10);
    let p = plan(&q);
    let big = recommendations(&p)
        .iter()
        .find(|r| r["gpus"].as_u64().unwrap() > 8)
        .expect("a multi-node option");
    let warnings = big["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w.as_str().unwrap().contains("Capacity Blocks")),
        "{warnings:?}"
    );
}

#[test]
fn spot_is_ranked_with_its_interruptions_and_says_so() {
    let mut q = lora_8b();
    q.billing = vec![BillingMode::OnDemand, BillingMode::Spot];
    q.deadline_hours = None;
    let p = plan(&q);
    let spot = recommendations(&p)
        .iter()
        .find(|r| r["billing"] == "spot")
        .expect("a spot option");
    assert!(spot["expected_interruptions"].as_f64().unwrap() > 0.0);
    assert!(
        spot["why"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("interruptions per node-hour"))
    );
}

#[test]
fn a_spot_price_under_a_tenth_of_on_demand_is_not_recommended() {
    let mut q = aws(query("llama-3.1-8b", Task::Inference));
    q.gpus = vec!["Inferentia2".to_string()];
    q.billing = vec![BillingMode::Spot];
    let p = plan(&q);
    for r in recommendations(&p) {
        assert!(r["price_flags"].as_array().unwrap().is_empty(), "{}", label(r));
    }
}

#[test]
fn flagged_prices_are_used_only_when_trusted() {
    let flagged: Vec<_> = catalog()
        .offerings()
        .iter()
        .filter(|o| !o.price_flags.is_empty())
        .collect();
    assert!(!flagged.is_empty());
    let mut q = aws(query("llama-3.1-8b", Task::Inference));
    q.gpus = vec!["Inferentia2".to_string()];
    q.billing = vec![BillingMode::Spot];
    q.operational.trust_prices = true;
    let p = plan(&q);
    assert!(
        recommendations(&p)
            .iter()
            .any(|r| !r["price_flags"].as_array().unwrap().is_empty())
    );
}

/// "What would 8 H100s cost on demand, on spot and reserved for a year?" is answered for an
/// offering that has all three prices, not for the cheapest one that has only the first.
#[test]
fn a_gpu_priced_in_three_billing_modes_is_an_offering_that_has_all_three() {
    let mut q = CostQuery::for_hours(100.0);
    q.gpu = Some("H100".to_string());
    q.gpus = Some(8);
    q.billing = vec![BillingMode::OnDemand, BillingMode::Spot, BillingMode::Reserved1y];
    let answer = cost_job(catalog(), &q).unwrap();
    assert!(
        answer.unpriced.is_empty(),
        "{:?} for {}",
        answer.unpriced,
        answer.subject
    );
    assert_eq!(answer.lines.len(), 3, "{}", answer.subject);
}

#[test]
fn a_one_year_reservation_for_a_three_day_job_pays_the_year() {
    let mut q = CostQuery::for_hours(72.0);
    q.instance = Some("p4d.24xlarge".to_string());
    q.billing = vec![BillingMode::OnDemand, BillingMode::Reserved1y];
    let answer = cost_job(catalog(), &q).unwrap();
    let reserved = answer.lines.iter().find(|l| l.billing == "reserved-1y").unwrap();
    let on_demand = answer.lines.iter().find(|l| l.billing == "on-demand").unwrap();
    assert_eq!(reserved.breakdown.billed_hours, 8760.0);
    assert!(reserved.breakdown.total_usd > 10.0 * on_demand.breakdown.total_usd);
}

#[test]
fn a_shared_reservation_is_cheaper_than_on_demand_at_high_use() {
    let mut q = CostQuery::for_hours(72.0);
    q.instance = Some("p4d.24xlarge".to_string());
    q.billing = vec![BillingMode::OnDemand, BillingMode::Reserved1y];
    q.utilisation = Some(0.9);
    let answer = cost_job(catalog(), &q).unwrap();
    let total = |b: &str| {
        answer
            .lines
            .iter()
            .find(|l| l.billing == b)
            .unwrap()
            .breakdown
            .total_usd
    };
    assert!(total("reserved-1y") < total("on-demand"));
}

#[test]
fn a_reserved_plan_for_a_short_job_bills_the_term() {
    let mut q = lora_8b();
    q.billing = vec![BillingMode::Reserved1y];
    q.deadline_hours = None;
    let p = plan(&q);
    let r = best(&p);
    let hours = r["time_seconds"].as_f64().unwrap() / 3600.0;
    assert!(hours < 8760.0);
    assert!(r["total_usd"].as_f64().unwrap() >= r["hourly_usd"].as_f64().unwrap() * 8760.0 * 0.999);
}

#[test]
fn a_million_prompts_in_a_day_need_twelve_requests_a_second() {
    let mut q = query("llama-3.1-8b", Task::Inference);
    q.dataset_size = Some(1e6);
    q.deadline_hours = Some(24.0);
    let p = plan(&q);
    for r in recommendations(&p) {
        let s = &r["serving"];
        let throughput = s["replicas"].as_f64().unwrap() * s["requests_per_second_per_replica"].as_f64().unwrap();
        assert!(throughput >= 1e6 / 86_400.0, "{}: {throughput:.1} req/s", label(r));
        assert!(r["time_seconds"].as_f64().unwrap() <= 24.0 * 3600.0);
        assert!(r["total_usd"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn a_serving_flag_on_a_training_plan_is_refused() {
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.tokens = Some(1e8);
    q.serving = ServingTargets {
        qps: Some(10.0),
        ..ServingTargets::default()
    };
    let error = plan_workload(catalog(), &q).unwrap_err();
    assert_eq!(error.exit_status(), gpuplan::ExitStatus::Error);
    assert!(error.to_string().contains("--qps"));
}

#[test]
fn a_deadline_on_online_serving_is_refused() {
    let mut q = query("llama-3.1-8b", Task::Inference);
    q.deadline_hours = Some(24.0);
    let error = plan_workload(catalog(), &q).unwrap_err();
    assert!(error.to_string().contains("--deadline"), "{error}");
}

#[test]
fn a_70b_fine_tune_on_one_t4_does_not_fit_and_names_what_would() {
    let mut request = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-70b".into()), Task::Finetune, "T4");
    request.gpus = Some(1);
    let answer = estimate_workload(catalog(), &request).unwrap();
    assert!(!answer.fits);
    assert_eq!(answer.memory_margin, 0.10);
    assert!(answer.nearest_fit.iter().any(|n| n.starts_with("--gpus ")));
}

#[test]
fn an_8b_lora_fits_one_80_gb_gpu_with_the_same_headroom_as_plan() {
    let request = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Lora, "H100");
    let answer = estimate_workload(catalog(), &request).unwrap();
    assert!(answer.fits);
}

#[test]
fn gradient_boosting_sized_work_never_rents_a_multi_node_gpu_cluster_for_a_small_cnn() {
    let mut q = query("resnet-50", Task::Finetune);
    q.dataset_size = Some(50_000.0);
    q.epochs = Some(5.0);
    let p = plan(&q);
    assert_eq!(best(&p)["nodes"], 1);
    assert!(best(&p)["gpus"].as_u64().unwrap() <= 8);
}

#[test]
fn every_multi_node_recommendation_reports_its_scaling_efficiency() {
    let mut q = query("llama-2-70b", Task::Pretrain);
    q.tokens = Some(1e10);
    let p = plan(&q);
    for r in recommendations(&p).iter().filter(|r| r["nodes"].as_u64().unwrap() > 1) {
        assert!(
            r["why"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().contains("scaling efficiency")),
            "{}",
            label(r)
        );
    }
}

fn imagenet_resnet(gpu: &str) -> PlanQuery {
    let mut q = aws(query("resnet-50", Task::Pretrain));
    q.dataset_size = Some(1_281_167.0);
    q.epochs = Some(90.0);
    q.gpus = vec![gpu.to_string()];
    q.regions = vec!["us-east-1".to_string()];
    q.top = 200;
    q
}

fn input_bound(r: &Value) -> bool {
    r["why"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().starts_with("input-bound"))
}

/// NVIDIA's DALI documentation and the torchvision reference recipes agree that ResNet-50 on
/// a modern GPU consumes more JPEGs than a handful of CPU cores decode; a 4-vCPU one-GPU VM
/// is starved, and moving decode onto the GPU is the standard fix.
#[test]
fn resnet_50_on_a_four_vcpu_l40s_vm_is_input_bound_and_dali_lifts_it() {
    let starved = |q: &PlanQuery| {
        let p = plan(q);
        recommendations(&p)
            .iter()
            .find(|r| r["instance_type"] == "g6e.xlarge" && r["nodes"] == 1)
            .cloned()
            .expect("g6e.xlarge planned")
    };
    let cpu = starved(&imagenet_resnet("L40S"));
    assert!(input_bound(&cpu), "{:?}", cpu["why"]);
    let mut dali = imagenet_resnet("L40S");
    dali.operational.input.pipeline = Some("dali".to_string());
    let gpu = starved(&dali);
    assert!(!input_bound(&gpu), "{:?}", gpu["why"]);
    let (slow, fast) = (
        cpu["time_seconds"].as_f64().unwrap(),
        gpu["time_seconds"].as_f64().unwrap(),
    );
    assert!(fast < slow / 2.0, "cpu {slow} s, dali {fast} s");
}

/// Streaming a dataset from object storage at 1 Gbit/s feeds about 1,100 ImageNet JPEGs a
/// second, far fewer than an 8-GPU node consumes.
#[test]
fn streaming_imagenet_over_one_gigabit_is_bounded_by_storage() {
    let mut q = imagenet_resnet("A100-SXM4-40GB");
    q.operational.input.stream_dataset = true;
    q.operational.startup.storage_gbps = Some(1.0);
    let p = plan(&q);
    let r = best(&p);
    let why: Vec<&str> = r["why"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(why.iter().any(|w| w.contains("storage reads")), "{why:?}");
}

#[test]
fn an_input_pipeline_for_a_text_model_is_refused() {
    let mut q = lora_8b();
    q.operational.input.pipeline = Some("dali".to_string());
    let error = plan_workload(catalog(), &q).unwrap_err();
    assert!(error.to_string().contains("--input-pipeline"), "{error}");
}

mod frameworks {
    //! What an engineer who knows the training frameworks expects of their profiles.
    use super::*;
    use gpuplan::model::{Checkpointing, Framework, Precision};

    fn training(model: &str, gpu: &str, gpus: u32) -> WorkloadRequest {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn(model.to_string()), Task::Pretrain, gpu);
        r.gpus = Some(gpus);
        r.gpus_per_node = Some(8);
        r.seq = Some(8192);
        r.batch = Some(u64::from(gpus) * 2);
        r.micro_batch = Some(2);
        r.zero = Some(3);
        r
    }

    /// torchtitan's per-op checkpointing keeps the attention output and every other matmul's
    /// output: far less than everything Megatron's selective recomputation keeps, paid for by
    /// recomputing the other matmuls.
    #[test]
    fn per_op_checkpointing_trades_memory_for_recomputed_matmuls() {
        let run = |mode| {
            let mut r = training("llama-3.1-8b", "H100-SXM5-80GB", 8);
            (r.checkpointing, r.tp) = (Some(mode), Some(1));
            estimate_workload(catalog(), &r).unwrap().estimate
        };
        let (selective, op) = (run(Checkpointing::Selective), run(Checkpointing::Op));
        let (op_training, selective_training) = (op.training.unwrap(), selective.training.unwrap());
        assert!(op.memory.activations.as_gib() < 0.6 * selective.memory.activations.as_gib());
        assert!(op_training.tokens_per_second < selective_training.tokens_per_second);
        assert!(op_training.tokens_per_second > 0.85 * selective_training.tokens_per_second);
    }

    /// NeMo's Llama 2 70B fp8 recipe on 64 H100 (TP 4, PP 4) runs with Megatron's distributed
    /// optimizer and without full recomputation; the generic search, which offers only none or
    /// full recomputation and starts from plain data parallelism, must not force full
    /// recomputation on it.
    #[test]
    fn megatron_shards_the_optimizer_instead_of_recomputing_everything() {
        let mut r = training("llama-2-70b", "H100-SXM5-80GB", 64);
        (r.seq, r.batch, r.micro_batch, r.zero) = (Some(4096), Some(128), Some(1), None);
        (r.tp, r.pp, r.precision) = (Some(4), Some(4), Some(Precision::Fp8));
        r.framework = Some(Framework::Megatron);
        let answer = estimate_workload(catalog(), &r).unwrap();
        assert_eq!(answer.workload.layout.zero, 1, "{:?}", answer.workload);
        assert_ne!(answer.workload.checkpointing, Checkpointing::Full);
    }

    /// torchtune projects and upcasts the logits chunk by chunk; the Hugging Face loss upcasts
    /// the whole batch. With Llama 3's 128k vocabulary that is gigabytes at 8k tokens.
    #[test]
    fn a_chunked_loss_needs_less_memory_than_a_full_fp32_upcast() {
        let run = |framework| {
            let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Lora, "RTX-4090");
            (r.seq, r.batch, r.micro_batch) = (Some(2048), Some(2), Some(2));
            r.checkpointing = Some(Checkpointing::Full);
            r.framework = Some(framework);
            // The same adapters under both, so that only the loss differs.
            r.lora_targets = Some(gpuplan::model::LoraTargets::AllLinear);
            estimate_workload(catalog(), &r)
                .unwrap()
                .estimate
                .memory
                .per_gpu
                .as_gib()
        };
        let saved = run(Framework::HfTrainer) - run(Framework::Torchtune);
        // 4096 tokens × 128,256 logits × 4 bytes ≈ 1.96 GiB, plus fragmentation on it.
        assert!((1.9..2.3).contains(&saved), "{saved}");
    }

    #[test]
    fn a_framework_is_refused_for_serving() {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Inference, "H100");
        r.framework = Some(Framework::Torchtitan);
        let error = estimate_workload(catalog(), &r).unwrap_err();
        assert!(error.to_string().contains("--framework applies to training"), "{error}");
    }
}

/// How the training step runs: eager or compiled, packed or padded examples.
mod training_step {
    use super::*;
    use gpuplan::model::{Precision, SequencePacking};

    fn sft(padding: SequencePacking, compiled: bool, precision: Precision) -> gpuplan::estimator::Estimate {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-3.1-8b".into()),
            Task::Finetune,
            "H100-SXM5-80GB",
        );
        (r.gpus, r.seq, r.batch, r.micro_batch) = (Some(8), Some(2048), Some(64), Some(2));
        (r.packing, r.compiled, r.precision, r.tokens) = (padding, compiled, Some(precision), Some(1e9));
        estimate_workload(catalog(), &r).unwrap().estimate
    }

    /// Chat fine-tuning without packing pads every example to the longest: when examples are a
    /// quarter of the padded length, three quarters of the compute is padding, and a billion
    /// real tokens take four times as long. Memory is that of the padded length.
    #[test]
    fn padding_to_four_times_the_mean_length_takes_four_times_as_long() {
        let packed = sft(SequencePacking::Packed, false, Precision::Bf16);
        let padded = sft(SequencePacking::Padded { mean_tokens: 512 }, false, Precision::Bf16);
        let (p, q) = (packed.training.unwrap(), padded.training.unwrap());
        let slower = q.time_seconds.unwrap() / p.time_seconds.unwrap();
        assert!((slower - 4.0).abs() < 1e-9, "{slower}");
        assert_eq!(q.mfu, p.mfu, "the GPUs compute the padding at the same rate");
        assert_eq!(padded.memory.per_gpu, packed.memory.per_gpu);
    }

    /// torch.compile fuses the element-wise work between matmuls: published 16-bit runs gain
    /// 16–28 % (torchtitan, fms-fsdp, torchtune), never a multiple. 8-bit training is measured
    /// compiled already, so it gains nothing more.
    #[test]
    fn compiling_speeds_up_sixteen_bit_training_by_a_sixth() {
        let speed = |compiled, precision| {
            sft(SequencePacking::Packed, compiled, precision)
                .training
                .unwrap()
                .tokens_per_second
        };
        let gain = speed(true, Precision::Bf16) / speed(false, Precision::Bf16);
        assert!((1.1..1.3).contains(&gain), "{gain}");
        assert_eq!(speed(true, Precision::Fp8), speed(false, Precision::Fp8));
    }

    #[test]
    fn compile_and_padding_are_refused_for_serving() {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Inference, "H100");
        r.compiled = true;
        let error = estimate_workload(catalog(), &r).unwrap_err();
        assert!(error.to_string().contains("--compile applies to training"), "{error}");
    }
}

mod module_recomputation {
    //! Megatron-Core's MoE recipes recompute chosen modules only (`--recompute-modules
    //! layernorm moe_act`), the cheapest memory there is to win back.
    use super::*;
    use gpuplan::model::{Checkpointing, Framework, Precision};

    fn gpt_oss_on_64_b200(checkpointing: Checkpointing) -> gpuplan::EstimateAnswer {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("gpt-oss-120b".into()), Task::Pretrain, "B200");
        (r.gpus, r.gpus_per_node, r.tp, r.pp, r.ep) = (Some(64), Some(8), Some(1), Some(1), Some(8));
        (r.seq, r.batch, r.micro_batch) = (Some(4096), Some(1280), Some(4));
        r.precision = Some(Precision::Bf16);
        r.framework = Some(Framework::Megatron);
        r.checkpointing = Some(checkpointing);
        estimate_workload(catalog(), &r).unwrap()
    }

    /// Megatron-Core's distributed optimizer shards a routed expert's states only over the
    /// ranks that hold that expert (its expert-data-parallel group), the rest of the model over
    /// every replica. On 64 GPUs with EP 8 each GPU holds an eighth of gpt-oss-120b's 114.6B
    /// expert parameters and shares their 12 bytes of states (fp32 master copy and two
    /// moments) with the 7 other GPUs that hold the same ones: about 21.5 GB a GPU, the same
    /// as all experts' states over all 64 ranks, where sharding them over 64 would leave a
    /// tenth of that and a plan that runs out of memory.
    #[test]
    fn an_experts_optimizer_states_are_sharded_only_over_the_ranks_that_hold_it() {
        let answer = gpt_oss_on_64_b200(Checkpointing::NormsAndActivation);
        let optimizer = answer.estimate.memory.optimizer.as_u64() as f64 / 1e9;
        assert!((21.0..23.5).contains(&optimizer), "{optimizer} GB");
        assert!(
            assumes(&answer, "the experts a GPU holds over the 8 that hold the same experts"),
            "{:?}",
            answer.estimate.assumptions
        );
    }

    /// Megatron-Bridge's gpt-oss-120b recipe on 64 B200 (EP 8, micro-batch 4) recomputes its
    /// layernorms and the experts' activation: without it the step does not fit in 180 GB,
    /// with it it does, and it repeats no matmul, so it is as fast as keeping everything and
    /// faster than recomputing whole layers.
    #[test]
    fn recomputing_norms_and_expert_activations_fits_gpt_oss_at_no_matmul_cost() {
        let step = |a: &gpuplan::EstimateAnswer| a.estimate.training.unwrap().step_seconds;
        let (none, modules, full) = (
            gpt_oss_on_64_b200(Checkpointing::None),
            gpt_oss_on_64_b200(Checkpointing::NormsAndActivation),
            gpt_oss_on_64_b200(Checkpointing::Full),
        );
        assert!(!fits_with_margin(&none), "{}", none.estimate.memory.per_gpu);
        assert!(fits_with_margin(&modules), "{}", modules.estimate.memory.per_gpu);
        assert_eq!(step(&modules), step(&none));
        assert!(step(&modules) < 0.85 * step(&full));
        assert_eq!(
            "layernorm,moe_act".parse::<Checkpointing>(),
            Ok(Checkpointing::NormsAndActivation)
        );
    }
}

mod optimizer_memory {
    //! Where the optimizer keeps its states and when gradients are freed, as torchtune's
    //! single-GPU full fine-tuning recipe runs it (paged 8-bit AdamW stepped in the backward
    //! pass).
    use super::*;
    use gpuplan::model::{Checkpointing, Framework, Optimizer, Precision};

    fn full_8b_on_a_4090(optimizer: Optimizer, in_backward: bool) -> gpuplan::EstimateAnswer {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Finetune, "RTX-4090");
        (r.gpus, r.seq, r.batch, r.micro_batch) = (Some(1), Some(2048), Some(2), Some(2));
        r.precision = Some(Precision::Bf16);
        r.framework = Some(Framework::Torchtune);
        r.checkpointing = Some(Checkpointing::Full);
        r.optimizer = Some(optimizer);
        r.optimizer_in_backward = in_backward;
        estimate_workload(catalog(), &r).unwrap()
    }

    /// An engineer who has run torchtune's recipe knows an 8B full fine-tune fits a 24 GB card
    /// that way (its README: 18.9 GiB), and that plain AdamW keeping every gradient does not.
    #[test]
    fn torchtune_fits_an_8b_full_fine_tune_on_a_24_gb_card_with_paged_adam_stepped_in_backward() {
        let recipe = full_8b_on_a_4090(Optimizer::PagedAdam8bit, true);
        assert!(fits_with_margin(&recipe), "{}", recipe.estimate.memory.per_gpu);
        let gib = recipe.estimate.memory.per_gpu.as_gib();
        assert!((17.0..21.0).contains(&gib), "{gib}");
        // The paged states are reported, outside the total.
        assert!(recipe.estimate.memory.paged_optimizer.as_gib() > 7.0);
        assert!(!fits_with_margin(&full_8b_on_a_4090(Optimizer::AdamW, false)));
    }

    /// Stepping in the backward pass frees the gradients; paging the states frees their memory
    /// but pays for what does not fit by crossing PCIe every step.
    #[test]
    fn each_half_of_the_recipe_saves_its_own_part() {
        let plain = full_8b_on_a_4090(Optimizer::Adam8bit, false);
        let in_backward = full_8b_on_a_4090(Optimizer::Adam8bit, true);
        let paged = full_8b_on_a_4090(Optimizer::PagedAdam8bit, false);
        let (m, b, p) = (
            &plain.estimate.memory,
            &in_backward.estimate.memory,
            &paged.estimate.memory,
        );
        assert!(b.gradients.as_gib() < 0.1 * m.gradients.as_gib());
        assert_eq!(b.optimizer, m.optimizer);
        assert_eq!(p.optimizer.as_u64(), 0);
        assert_eq!(p.paged_optimizer, m.optimizer);
        assert_eq!(p.gradients, m.gradients);
        let step = |a: &gpuplan::EstimateAnswer| a.estimate.training.unwrap().step_seconds;
        // Paged states that do not fit move over the host link each step.
        assert!(step(&paged) > step(&plain));
        assert!(assumes(&paged, "paged in and out every step"));
    }

    #[test]
    fn the_optimizer_steps_in_the_backward_pass_only_in_full_training_without_accumulation() {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Lora, "RTX-4090");
        r.optimizer_in_backward = true;
        let only_full_training = |error: gpuplan::Error| {
            let text = error.to_string();
            assert!(
                text.contains("--optimizer-in-backward applies to full training"),
                "{text}"
            );
            assert_eq!(error.exit_status(), gpuplan::ExitStatus::Error);
        };
        only_full_training(estimate_workload(catalog(), &r).unwrap_err());
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Finetune, "H100");
        (r.gpus, r.batch, r.micro_batch) = (Some(8), Some(64), Some(2));
        r.optimizer_in_backward = true;
        let error = estimate_workload(catalog(), &r).unwrap_err();
        assert!(error.to_string().contains("one micro-batch a step"), "{error}");
        // Without a micro-batch it is the batch over the replicas.
        r.micro_batch = None;
        let answer = estimate_workload(catalog(), &r).unwrap();
        let layout = answer.workload.layout;
        assert_eq!(answer.workload.micro_batch * u64::from(layout.dp), 64);
        assert_eq!(layout.pp, 1);
        // `plan` refuses it where `estimate` does.
        let mut q = query("llama-3.1-8b", Task::Lora);
        q.optimizer_in_backward = true;
        only_full_training(plan_workload(catalog(), &q).unwrap_err());
    }
}

mod offload {
    //! Offloading to host memory, as DeepSpeed, FSDP and torchtune do it.
    use super::*;
    use gpuplan::model::{Checkpointing, Offload};

    fn qlora_70b_on_two_3090s(offload: &str) -> gpuplan::EstimateAnswer {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-2-70b".into()), Task::Qlora, "RTX-3090");
        (r.gpus, r.gpus_per_node, r.zero) = (Some(2), Some(2), Some(3));
        (r.seq, r.batch, r.micro_batch) = (Some(2048), Some(2), Some(1));
        r.checkpointing = Some(Checkpointing::Full);
        r.offload = Some(offload.parse::<Offload>().unwrap());
        estimate_workload(catalog(), &r).unwrap()
    }

    /// Answer.AI's FSDP + QLoRA trains Llama 2 70B on two 24 GB cards with the sharded 4-bit
    /// base in host memory; without offload the shards alone nearly fill them.
    #[test]
    fn qlora_of_a_70b_model_fits_two_24_gb_cards_only_with_parameters_offloaded() {
        assert!(!fits_with_margin(&qlora_70b_on_two_3090s("none")));
        let offloaded = qlora_70b_on_two_3090s("params");
        assert!(fits_with_margin(&offloaded), "{}", offloaded.estimate.memory.per_gpu);
        assert!(assumes(&offloaded, "parameters offloaded"));
    }

    /// Offloading the optimizer frees its states from the GPU and pays for the CPU Adam step.
    #[test]
    fn an_offloaded_optimizer_frees_memory_and_costs_time() {
        let run = |offload: &str| {
            let mut r = WorkloadRequest::new(
                ModelSource::BuiltIn("llama-2-7b".into()),
                Task::Finetune,
                "A100-SXM4-80GB",
            );
            (r.gpus, r.zero, r.seq, r.batch, r.micro_batch) = (Some(8), Some(2), Some(4096), Some(64), Some(1));
            r.checkpointing = Some(Checkpointing::Full);
            r.offload = Some(offload.parse::<Offload>().unwrap());
            estimate_workload(catalog(), &r).unwrap().estimate
        };
        let (kept, offloaded) = (run("none"), run("optimizer"));
        assert_eq!(offloaded.memory.optimizer.as_u64(), 0);
        assert!(offloaded.memory.per_gpu < kept.memory.per_gpu);
        assert!(offloaded.training.unwrap().step_seconds > kept.training.unwrap().step_seconds);
    }

    #[test]
    fn parameters_are_offloaded_only_when_sharded() {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-2-7b".into()),
            Task::Finetune,
            "A100-SXM4-80GB",
        );
        (r.gpus, r.zero) = (Some(8), Some(1));
        r.offload = Some("params".parse::<Offload>().unwrap());
        let error = estimate_workload(catalog(), &r).unwrap_err();
        assert!(error.to_string().contains("ZeRO-3"), "{error}");
    }
}

mod your_prices {
    //! Negotiated prices change what is cheapest: a team with a deep discount at one provider
    //! should see that provider first.
    use super::*;
    use gpuplan::catalog::PriceOverlay;

    fn plan_with(catalog: &Catalog, query: &PlanQuery) -> Value {
        match plan_workload(catalog, query).unwrap() {
            Ok(answer) => serde_json::to_value(answer.wire(gpuplan::Naming::Flags)).unwrap(),
            Err(infeasible) => panic!("infeasible: {:?}", infeasible.suggestion),
        }
    }

    #[test]
    fn a_negotiated_discount_moves_its_provider_to_the_top() {
        let mut q = lora_8b();
        q.providers = vec!["aws".to_string(), "gcp".to_string()];
        let list = plan(&q);
        let first = best(&list)["provider"].as_str().unwrap().to_string();
        let other = if first == "aws" { "gcp" } else { "aws" };
        let overlay = PriceOverlay::parse(
            "ours.toml",
            &format!("[[discount]]\nprovider = \"{other}\"\npercent = 90\n"),
        )
        .unwrap();
        let ours = catalog().clone().with_prices("ours.toml", &overlay).unwrap();
        let discounted = plan_with(&ours, &q);
        assert_eq!(best(&discounted)["provider"], other, "{}", label(best(&discounted)));
        assert!(ours.your_prices().unwrap().offerings > 0);
    }

    #[test]
    fn a_price_for_an_instance_the_catalog_lacks_is_an_error() {
        let overlay = PriceOverlay::parse(
            "ours.toml",
            "[[price]]\nprovider = \"aws\"\ninstance_type = \"p5.48xlarg\"\nusd_per_hour = 30.0\n",
        )
        .unwrap();
        let error = catalog().clone().with_prices("ours.toml", &overlay).unwrap_err();
        assert!(error.to_string().contains("did you mean `p5.48xlarge`"), "{error}");
    }
}

/// Moving 20 TB out of AWS costs about $1,700 at its published tiers; Lambda publishes free
/// egress, so the same transfer costs nothing there. Google meters per GiB: 20,000 GB is
/// 18,626 GiB, $1,807.56 at its tiers ($0.12 to 1 TiB, $0.11 to 10 TiB, $0.08 beyond), not the
/// $1,917 those prices would come to per GB.
#[test]
fn egress_is_priced_at_each_providers_own_rates() {
    let egress = |instance: &str| {
        let mut q = CostQuery::for_hours(10.0);
        q.instance = Some(instance.to_string());
        q.egress_gb = 20_000.0;
        let answer = cost_job(catalog(), &q).unwrap();
        answer.lines[0].breakdown.egress_usd
    };
    let aws = egress("p4d.24xlarge");
    assert!((1_500.0..2_000.0).contains(&aws), "{aws}");
    assert_eq!(egress("gpu_1x_h100_sxm5"), 0.0);
    let gcp = egress("a2-highgpu-1g");
    assert!((gcp - 1_807.56).abs() < 0.01, "{gcp}");
}

/// DeepSeek-V3 on 1,024 H100 with 64-way expert parallelism over 16 pipeline stages: each
/// stage holds only its own MoE layers, so the all-to-alls it pays for are theirs; the step is
/// its compute plus its communication, and the communication is reported, not hidden in the
/// step. DeepSeek report 180 K H800 GPU-hours per trillion tokens (about 1.5 k tokens/s per GPU,
/// with their all-to-alls overlapped by DualPipe): an estimate that counts them exposed may be
/// slower, but not by an order of magnitude.
#[test]
fn expert_parallel_training_step_and_its_breakdown_agree() {
    let mut r = WorkloadRequest::new(ModelSource::BuiltIn("deepseek-v3".into()), Task::Pretrain, "H100");
    (r.gpus, r.ep, r.tp, r.pp) = (Some(1024), Some(64), Some(1), Some(16));
    (r.batch, r.seq, r.precision) = (Some(8192), Some(4096), Some(gpuplan::model::Precision::Fp8));
    let answer = estimate_workload(catalog(), &r).unwrap();
    let training = answer.estimate.training.unwrap();
    let explained = training.compute_seconds + training.communication_seconds;
    assert!(
        (training.step_seconds - explained).abs() < 1e-6 * training.step_seconds,
        "step {} s against compute {} s + communication {} s",
        training.step_seconds,
        training.compute_seconds,
        training.communication_seconds
    );
    assert!(training.communication_seconds > 1.0, "the all-to-alls are counted");
    let per_gpu = training.tokens_per_second / 1024.0;
    assert!((500.0..3000.0).contains(&per_gpu), "{per_gpu} tokens/s per GPU");
    assert!(training.scaling_efficiency > 0.3, "{}", training.scaling_efficiency);
}

/// A GB200 NVL72 rack is one NVLink domain of 72 GPUs: 64-way expert parallelism stays on
/// NVLink there, where on 8-GPU B200 boards it crosses the network, so the rack's all-to-alls
/// cost a fraction of the boards'.
#[test]
fn a_72_gpu_nvl72_rack_keeps_expert_parallelism_inside_nvlink() {
    let communication = |gpu: &str| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("deepseek-v3".into()), Task::Pretrain, gpu);
        (r.gpus, r.ep, r.tp, r.pp) = (Some(256), Some(64), Some(1), Some(4));
        (r.batch, r.seq, r.precision) = (Some(4096), Some(4096), Some(gpuplan::model::Precision::Fp8));
        let answer = estimate_workload(catalog(), &r).unwrap();
        answer.estimate.training.unwrap().communication_seconds
    };
    let (rack, boards) = (communication("GB200"), communication("B200"));
    assert!(rack < boards / 4.0, "GB200 NVL72 {rack} s against HGX B200 {boards} s");
    let gb200 = catalog().accelerators().resolve_one("GB200").unwrap().accelerator;
    assert_eq!(gb200.scale_up_domain, Some(72));
}

/// Megatron-Bridge trains Qwen3-235B-A22B on 256 H100 with 32-way expert parallelism, the
/// all-to-alls crossing four nodes, and overlaps them with the adjacent micro-batch's compute
/// (combined 1F1B). Overlapped, the step waits for less of them, but never for less than the
/// passes without a partner, nor for less than what the compute cannot cover; the step is still
/// its compute plus the communication it reports. The overlap is a Megatron schedule for
/// training experts spread over ranks: asked for elsewhere, it is refused.
#[test]
fn overlapping_the_expert_all_to_alls_hides_what_the_compute_covers() {
    let request = |overlap: Option<bool>| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("qwen3-235b-a22b".into()), Task::Pretrain, "H100");
        (r.gpus, r.tp, r.pp, r.vp, r.ep) = (Some(256), Some(2), Some(8), Some(4), Some(32));
        (r.batch, r.micro_batch, r.seq) = (Some(2048), Some(1), Some(4096));
        r.precision = Some(gpuplan::model::Precision::Fp8);
        r.framework = Some(gpuplan::model::Framework::Megatron);
        r.ep_overlap = overlap;
        r
    };
    let training = |overlap| {
        let answer = estimate_workload(catalog(), &request(overlap)).unwrap();
        assert_eq!(answer.workload.layout.ep_overlap, overlap == Some(true));
        answer.estimate.training.unwrap()
    };
    let (exposed, overlapped) = (training(None), training(Some(true)));
    let saved = exposed.step_seconds - overlapped.step_seconds;
    assert!(
        saved > 0.3 * exposed.communication_seconds,
        "overlapping saves {saved:.2} s of {:.2} s of communication",
        exposed.communication_seconds
    );
    // No more hides than the compute lasts: the all-to-alls take longer than the compute here.
    assert!(
        saved < overlapped.compute_seconds,
        "{saved:.2} s hidden behind {:.2} s of compute",
        overlapped.compute_seconds
    );
    let explained = overlapped.compute_seconds + overlapped.communication_seconds;
    assert!((overlapped.step_seconds - explained).abs() < 1e-6 * overlapped.step_seconds);
    // Published: 1,575 tokens/s per GPU (Megatron-Bridge 25.11).
    let per_gpu = overlapped.tokens_per_second / 256.0;
    assert!((1400.0..1750.0).contains(&per_gpu), "{per_gpu} tokens/s per GPU");
    let refused = |edit: fn(&mut WorkloadRequest)| {
        let mut r = request(Some(true));
        edit(&mut r);
        match estimate_workload(catalog(), &r) {
            Err(error) => Some((error.code(), error.field())),
            Ok(_) => None,
        }
    };
    let not_applicable = Some((gpuplan::ErrorCode::NotApplicable, Some(gpuplan::Field::EpOverlap)));
    assert_eq!(refused(|r| r.ep = None), not_applicable, "without expert parallelism");
    let serving = |r: &mut WorkloadRequest| (r.task, r.vp, r.pp, r.framework) = (Task::Inference, None, None, None);
    assert_eq!(refused(serving), not_applicable, "serving");
    assert_eq!(
        refused(|r| r.model = ModelSource::BuiltIn("llama-3.1-70b".into())),
        not_applicable,
        "a dense model"
    );
    let conflict = Some((gpuplan::ErrorCode::ConflictingFields, Some(gpuplan::Field::EpOverlap)));
    assert_eq!(
        refused(|r| r.framework = Some(gpuplan::model::Framework::Deepspeed)),
        conflict,
        "under DeepSpeed"
    );
    // Megatron-Core's own conditions: no full recomputation, and with pipeline stages an
    // interleaved schedule whose virtual stages are given.
    assert_eq!(
        refused(|r| r.checkpointing = Some(gpuplan::model::Checkpointing::Full)),
        conflict,
        "with full recomputation"
    );
    let needs = refused(|r| r.vp = None);
    assert_eq!(
        needs.map(|(_, field)| field),
        Some(Some(gpuplan::Field::EpOverlap)),
        "without --vp"
    );
}

/// A node is what the part ships in: a GB200 compute tray holds four GPUs (eighteen to an NVL72
/// rack), a GH200 node one superchip. Asked for eight of each without a node size, `estimate`
/// takes those, says why, and keeps a TP8 group of GB200s on the rack's NVLink while the eight
/// GH200s, in eight nodes, all-reduce over the network, far more slowly.
#[test]
fn superchips_are_laid_out_in_the_nodes_their_systems_have() {
    let answer = |gpu: &str| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Pretrain, gpu);
        (r.gpus, r.tp, r.pp, r.seq, r.batch) = (Some(8), Some(8), Some(1), Some(4096), Some(64));
        estimate_workload(catalog(), &r).unwrap()
    };
    let (rack, superchips) = (answer("GB200"), answer("GH200"));
    assert_eq!((rack.gpus_per_node, superchips.gpus_per_node), (4, 1));
    let why = |a: &gpuplan::EstimateAnswer| {
        a.defaults
            .iter()
            .find(|d| d.field == gpuplan::Field::GpusPerNode)
            .map(|d| d.why.clone())
            .unwrap_or_default()
    };
    assert!(why(&rack).contains("as GB200 systems have"), "{}", why(&rack));
    assert!(why(&superchips).contains("one per node"), "{}", why(&superchips));
    let communication = |a: &gpuplan::EstimateAnswer| a.estimate.training.as_ref().unwrap().communication_seconds;
    assert!(
        communication(&superchips) > 5.0 * communication(&rack),
        "GH200 {} s against GB200 {} s",
        communication(&superchips),
        communication(&rack)
    );
    let mut hgx = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Pretrain, "H100");
    hgx.gpus = Some(16);
    assert_eq!(estimate_workload(catalog(), &hgx).unwrap().gpus_per_node, 8);
}

/// A ConvNeXt's config.json (Hugging Face's facebook/convnext-tiny-224 fields) is read as a
/// convolutional network walked layer by layer: ConvNeXt-T's 28.6M parameters, and, as timm's
/// RTX 4090 table measures (4,797 against 4,218 images/s at 224 pixels), a little faster than
/// ResNet-50 at inference despite its 9 % more multiply-accumulates.
#[test]
fn a_convnext_config_is_a_convolutional_network_a_little_faster_than_resnet_50() {
    let labels: serde_json::Map<String, Value> = (0..1000)
        .map(|i| (i.to_string(), Value::String(format!("class {i}"))))
        .collect();
    let config = serde_json::json!({
        "architectures": ["ConvNextForImageClassification"], "model_type": "convnext",
        "depths": [3, 3, 9, 3], "hidden_sizes": [96, 192, 384, 768], "patch_size": 4,
        "num_channels": 3, "image_size": 224, "id2label": labels
    });
    let speed = |source: ModelSource| {
        let mut r = WorkloadRequest::new(source, Task::Inference, "RTX-4090");
        (r.gpus, r.batch, r.precision) = (Some(1), Some(1024), Some(gpuplan::model::Precision::Fp16));
        let answer = estimate_workload(catalog(), &r).unwrap();
        (
            answer.estimate.inference.unwrap().requests_per_second,
            answer.model.clone(),
        )
    };
    let (convnext, model) = speed(ModelSource::Config {
        name: "convnext-tiny-224".into(),
        text: config.to_string(),
        checkpoint_index: None,
    });
    let parameters: u64 = match &model.architecture {
        gpuplan::model::Architecture::Cited(cited) => cited.components.iter().map(|(_, p)| p).sum(),
        other => panic!("{other:?}"),
    };
    assert_eq!(parameters, 28_589_128);
    let (resnet, _) = speed(ModelSource::BuiltIn("resnet-50".into()));
    let ratio = convnext / resnet;
    assert!((1.0..1.4).contains(&ratio), "ConvNeXt-T / ResNet-50 = {ratio}");
}

/// Llama 3 70B in Q4_K_M (about 42 GB) does not fit a 24 GB RTX 4090, and the answer says how
/// many layers llama.cpp can keep on it instead. With 40 of its 80 layers there, the rest run on
/// the CPU from host memory: the GPU holds about half the weights, and a generated token waits
/// for the host to read its ~21 GB, so it comes at a couple of tokens a second, twice as fast
/// on a host with twice the bandwidth, and far slower than the 15 tokens/s an L40S with the whole
/// model manages (XiongjieDai's llama.cpp table: 15.31).
#[test]
fn llama_cpp_keeps_the_layers_that_fit_and_the_host_sets_the_pace() {
    let ask = |gpu: &str, layers: Option<u32>, bandwidth: Option<f64>| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3-70b".into()), Task::Inference, gpu);
        (r.gpus, r.batch, r.seq, r.output_tokens) = (Some(1), Some(1), Some(200), Some(200));
        r.precision = Some(gpuplan::model::Precision::Int4);
        r.engine = Some(gpuplan::model::Engine::LlamaCpp);
        r.engine_settings.gpu_layers = layers;
        r.engine_settings.host_bandwidth_gb_per_s = bandwidth;
        estimate_workload(catalog(), &r).unwrap()
    };
    let whole = ask("RTX-4090", None, None);
    assert!(!whole.fits);
    assert!(
        whole.nearest_fit.iter().any(|f| f.contains("--gpu-layers")),
        "{:?}",
        whole.nearest_fit
    );
    let half = ask("RTX-4090", Some(40), None);
    assert!(half.fits);
    let gpu_weights = half.estimate.memory.weights.as_u64() as f64;
    assert!((19e9..23e9).contains(&gpu_weights), "{gpu_weights}");
    let speed = |answer: &gpuplan::EstimateAnswer| answer.estimate.inference.unwrap().tpot_seconds.recip();
    let slow = speed(&half);
    assert!((1.0..4.0).contains(&slow), "{slow} tokens/s");
    let faster = speed(&ask("RTX-4090", Some(40), Some(100.0)));
    assert!((1.7..2.1).contains(&(faster / slow)), "{faster} against {slow}");
    assert!(speed(&ask("L40S", None, None)) > 4.0 * slow);
    assert!(
        half.estimate
            .assumptions
            .iter()
            .any(|a| a.contains("40 of 80 layers on the GPU"))
    );
}

/// A Swin Transformer's config.json (microsoft/swin-tiny-patch4-window7-224's fields) is read
/// as a network walked stage by stage: Swin-T's 28.3M parameters, and, as the ConvNeXt paper's
/// Table 1 measures on one V100 (757.9 against 774.7 images/s at 224 pixels, the same 4.5
/// GMACs each), about as fast as ConvNeXt-T at inference, a little slower for its attention.
#[test]
fn a_swin_config_is_walked_by_stage_and_runs_about_as_fast_as_convnext_tiny() {
    let config = |model_type: &str| match model_type {
        "swin" => serde_json::json!({
            "architectures": ["SwinForImageClassification"], "model_type": "swin", "embed_dim": 96,
            "depths": [2, 2, 6, 2], "num_heads": [3, 6, 12, 24], "window_size": 7, "mlp_ratio": 4.0,
            "patch_size": 4, "num_channels": 3, "image_size": 224, "qkv_bias": true,
            "use_absolute_embeddings": false, "num_labels": 1000
        }),
        _ => serde_json::json!({
            "model_type": "convnext", "depths": [3, 3, 9, 3], "hidden_sizes": [96, 192, 384, 768],
            "num_labels": 1000
        }),
    };
    let speed = |model_type: &str| {
        let source = ModelSource::Config {
            name: format!("{model_type}-tiny"),
            text: config(model_type).to_string(),
            checkpoint_index: None,
        };
        let mut r = WorkloadRequest::new(source, Task::Inference, "V100-SXM2-32GB");
        (r.gpus, r.batch, r.precision) = (Some(1), Some(256), Some(gpuplan::model::Precision::Fp16));
        let answer = estimate_workload(catalog(), &r).unwrap();
        let parameters: u64 = match &answer.model.architecture {
            gpuplan::model::Architecture::Cited(cited) => cited.components.iter().map(|(_, p)| p).sum(),
            other => panic!("{other:?}"),
        };
        (answer.estimate.inference.unwrap().requests_per_second, parameters)
    };
    let (swin, parameters) = speed("swin");
    assert_eq!(parameters, 28_288_354);
    let (convnext, _) = speed("convnext");
    let ratio = swin / convnext;
    assert!((0.75..1.02).contains(&ratio), "Swin-T / ConvNeXt-T = {ratio}");
}

/// H100 NVL cards are sold as NVLink-bridged pairs: a tensor-parallel pair talks over the
/// bridge (300 GB/s each way), while a group of four, or a pair of GPUs from different bridges,
/// crosses PCIe. A TP2 Llama-2-70B server on such a pair spends far less of each decode step
/// in all-reduces than it would over PCIe.
#[test]
fn h100_nvl_pairs_talk_over_their_bridge_and_the_rest_over_pcie() {
    let nvl = catalog().accelerators().resolve_one("H100-NVL").unwrap().accelerator;
    let cluster = gpuplan::estimator::Cluster::new(nvl, 4, 4, None, None);
    let (pair, four, across) = (
        cluster.group_bandwidth(2, 1).as_gb_per_s(),
        cluster.group_bandwidth(4, 1).as_gb_per_s(),
        cluster.group_bandwidth(2, 2).as_gb_per_s(),
    );
    assert!(pair > 5.0 * four, "bridged pair {pair} GB/s against {four} over PCIe");
    assert_eq!(four, across);
    let pcie = catalog()
        .accelerators()
        .resolve_one("H100-PCIE-80GB")
        .unwrap()
        .accelerator;
    let unbridged = gpuplan::estimator::Cluster::new(pcie, 4, 4, None, None);
    assert_eq!(unbridged.group_bandwidth(2, 1).as_gb_per_s(), four);
}

/// NVFP4 training (Transformer Engine's recipe in Megatron-Core) runs on Blackwell's 4-bit
/// tensor cores: Llama 3 70B on 64 GB200 in the layout Megatron-Bridge publishes trains faster
/// than with MXFP8 (1.23× in its 26.02 table), but not at twice the speed the peak suggests.
/// Hopper has no 4-bit tensor cores, and frameworks without the recipe do not train in it.
#[test]
fn nvfp4_trains_faster_than_fp8_on_blackwell_and_nowhere_else() {
    let request = |gpu: &str, precision: &str, framework: &str| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3-70b".into()), Task::Pretrain, gpu);
        (r.gpus, r.gpus_per_node, r.tp, r.pp) = (Some(64), Some(4), Some(2), Some(4));
        (r.batch, r.micro_batch, r.seq) = (Some(256), Some(1), Some(8192));
        r.precision = Some(precision.parse().unwrap());
        r.framework = Some(framework.parse().unwrap());
        r
    };
    let speed = |precision: &str| {
        let answer = estimate_workload(catalog(), &request("GB200", precision, "megatron")).unwrap();
        answer.estimate.training.unwrap().tokens_per_second
    };
    let ratio = speed("fp4") / speed("fp8");
    assert!((1.1..1.6).contains(&ratio), "NVFP4 / FP8 = {ratio}");
    let hopper = estimate_workload(catalog(), &request("H100-SXM5-80GB", "fp4", "megatron")).unwrap_err();
    assert_eq!(hopper.exit_status(), gpuplan::ExitStatus::Error, "{hopper}");
    let no_recipe = estimate_workload(catalog(), &request("GB200", "fp4", "hf-trainer")).unwrap_err();
    assert!(no_recipe.to_string().contains("not a training recipe"), "{no_recipe}");
}

/// Megatron-Core's MoE layers launch kernels per expert a GPU holds (Transformer Engine's
/// GroupedLinear), so spreading DeepSeek-V3's 256 experts over 64 GPUs rather than 8 leaves
/// each GPU 4 experts instead of 32 and a step with less of that overhead; and expert groups
/// may span the tensor-parallel GPUs (MoE parallel folding: Qwen3-235B-A22B on 256 H100 as
/// TP2 × PP8 with EP32, as Megatron-Bridge runs it), but not a degree that divides neither.
#[test]
fn fewer_experts_per_gpu_cost_less_and_expert_groups_may_fold_over_tensor_parallelism() {
    let step = |ep: u32| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("deepseek-v3".into()), Task::Pretrain, "GB200");
        (r.gpus, r.gpus_per_node, r.ep, r.tp, r.pp) = (Some(256), Some(4), Some(ep), Some(1), Some(4));
        (r.batch, r.seq, r.precision) = (Some(4096), Some(4096), Some(gpuplan::model::Precision::Fp8));
        estimate_workload(catalog(), &r)
            .unwrap()
            .estimate
            .training
            .unwrap()
            .step_seconds
    };
    assert!(step(64) < step(8), "EP 64: {} s, EP 8: {} s", step(64), step(8));
    let qwen = |ep: u32| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("qwen3-235b-a22b".into()), Task::Pretrain, "H100");
        (r.gpus, r.ep, r.tp, r.pp) = (Some(256), Some(ep), Some(2), Some(8));
        (r.batch, r.seq, r.precision) = (Some(8192), Some(4096), Some(gpuplan::model::Precision::Fp8));
        estimate_workload(catalog(), &r)
    };
    assert!(qwen(32).is_ok(), "EP 32 over TP 2 × DP 16");
    assert!(qwen(64).is_err(), "EP 64 divides neither DP 16 nor TP × DP 32");
}

/// Llama 3.1 405B on 15.6 T tokens with 16 K H100 allowed: Meta trained it on 16 K GPUs in
/// about 54 days. A plan by time uses more than 8 K GPUs (the global batch grows with data
/// parallelism, up to 16 M tokens, instead of capping the cluster at 256 replicas) and finishes
/// within 120 days.
#[test]
fn a_405b_pretraining_run_with_16k_h100_allowed_uses_thousands_of_them() {
    let mut q = aws(query("llama-3.1-405b", Task::Pretrain));
    q.tokens = Some(15.6e12);
    q.seq = Some(8192);
    q.gpus = vec!["H100".to_string()];
    (q.max_gpus, q.max_nodes) = (Some(16384), Some(2048));
    q.objective = Objective::Time;
    let p = plan(&q);
    let fastest = best(&p);
    assert!(fastest["gpus"].as_u64().unwrap() > 8000, "{}", label(fastest));
    let days = fastest["time_seconds"].as_f64().unwrap() / 86400.0;
    assert!(days < 120.0, "{days} days on {}", label(fastest));
    // The time and the bill carry the interval the held-out multi-node runs measured.
    let range = &fastest["time_interval_seconds"];
    let (fast, slow) = (range[0].as_f64().unwrap(), range[1].as_f64().unwrap());
    assert!(fast < days * 86400.0 && days * 86400.0 < slow, "{range}");
    assert!(fastest["total_usd_interval"][1].as_f64().unwrap() > fastest["total_usd"].as_f64().unwrap());
    let batch = fastest["batch"].as_u64().unwrap();
    assert!(batch > 256, "the batch grows with the replicas: {batch}");
    assert!(
        batch * 8192 <= 16 * 1024 * 1024,
        "and stays within its critical size: {batch}"
    );
}

/// The same run with the sequence length left at its default: a layout without pipeline
/// stages over thousands of GPUs spends most of each step communicating (ZeRO-3 over 4,096
/// replicas: 17 % scaling efficiency, a year), so the search weighs pipelined layouts too,
/// whose smaller data-parallel groups and batch of four micro-batches per stage and replica
/// bring it back to months at several times the MFU.
#[test]
fn at_thousands_of_gpus_the_plan_weighs_pipeline_stages() {
    let (fastest, days) = pretraining_on_aws_h100_by_time("llama-3.1-405b", 15.6e12, 16384);
    assert!(days < 120.0, "{days} days on {}", label(&fastest));
    assert!(fastest["layout"]["pp"].as_u64().unwrap() > 1, "{}", fastest["layout"]);
    // Without stages the same GPUs ran at 8 % MFU.
    assert!(fastest["mfu"].as_f64().unwrap() > 0.2, "{}", label(&fastest));
}

/// The fastest plan to pre-train `model` on `tokens` with up to `max_gpus` H100 on AWS, and
/// its days.
fn pretraining_on_aws_h100_by_time(model: &str, tokens: f64, max_gpus: u32) -> (Value, f64) {
    let mut q = aws(query(model, Task::Pretrain));
    q.tokens = Some(tokens);
    q.gpus = vec!["H100".to_string()];
    q.max_gpus = Some(max_gpus);
    q.objective = Objective::Time;
    let fastest = best(&plan(&q)).clone();
    let days = fastest["time_seconds"].as_f64().unwrap() / 86400.0;
    (fastest, days)
}

/// A mixture of experts is planned with its experts spread (expert parallelism) where that is
/// faster: DeepSeek-V3 on up to 2,048 H100 holds whole experts per GPU group and finishes in
/// about three months, where keeping every expert on each pipeline stage took 220 days
/// (DeepSeek trained it on 2,048 H800 in fp8 in under two months).
#[test]
fn a_mixture_of_experts_plan_spreads_its_experts() {
    let (fastest, days) = pretraining_on_aws_h100_by_time("deepseek-v3", 14.8e12, 2048);
    assert!(fastest["layout"]["ep"].as_u64().unwrap() > 1, "{}", fastest["layout"]);
    assert!(days < 120.0, "{days} days on {}", label(&fastest));
}

/// Allowing 16 K GPUs is enough to use them: the node bound the user did not set follows the
/// GPU bound (2,048 nodes of eight), the answer names that default, and a 120-day deadline is
/// met. With the node bound set low, the infeasible answer says that bound stopped it.
#[test]
fn a_larger_gpu_bound_is_not_stopped_by_a_node_bound_nobody_set() {
    let mut q = aws(query("llama-3.1-405b", Task::Pretrain));
    (q.tokens, q.seq) = (Some(15.6e12), Some(8192));
    q.gpus = vec!["H100".to_string()];
    q.max_gpus = Some(16384);
    q.deadline_hours = Some(120.0 * 24.0);
    let p = plan(&q);
    assert!(best(&p)["gpus"].as_u64().unwrap() > 8000, "{}", label(best(&p)));
    let defaults = p["defaults"].to_string();
    assert!(defaults.contains("--max-nodes 2048"), "{defaults}");
    q.max_nodes = Some(64);
    let Err(infeasible) = plan_workload(catalog(), &q).unwrap() else {
        panic!("64 nodes of H100 do not train 405B on 15.6 T tokens in 120 days");
    };
    let hint = infeasible.suggestion.unwrap().render(gpuplan::Naming::Flags);
    assert!(
        hint.contains("raise --max-nodes: the search stops at 64 nodes"),
        "{hint}"
    );
}

/// An estimate says how far it may be off as measured on runs it was not fitted on: an 80 %
/// interval around 1 for memory and speed, wider across several nodes than within one.
#[test]
fn estimates_carry_the_intervals_their_held_out_runs_measured() {
    let interval = |gpus: u32| {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-70b".into()), Task::Pretrain, "H100");
        (r.gpus, r.seq, r.batch) = (Some(gpus), Some(4096), Some(256));
        let u = estimate_workload(catalog(), &r).unwrap().estimate.uncertainty;
        (u.memory_interval.unwrap(), u.speed_interval.unwrap())
    };
    let (memory, one_node) = interval(8);
    let (_, many_nodes) = interval(64);
    assert!(memory[0] < 1.0 && 1.0 < memory[1], "{memory:?}");
    assert!(one_node[0] < 1.0 && 1.0 < one_node[1], "{one_node:?}");
    assert_ne!(one_node, many_nodes, "each regime has its own interval");
}

/// Compute hours billed for `hours` of `instance` on demand, and the stated terms.
fn billed(instance: &str, hours: f64) -> (f64, Vec<String>) {
    let mut q = CostQuery::for_hours(hours);
    q.instance = Some(instance.to_string());
    q.billing = vec![BillingMode::OnDemand];
    let answer = cost_job(catalog(), &q).unwrap();
    (answer.lines[0].breakdown.billed_hours, answer.assumptions)
}

#[test]
fn a_quarter_hour_bills_what_each_provider_meters() {
    // Lambda bills by the minute: 15 minutes cost 15 minutes, not an hour.
    let (lambda, terms) = billed("gpu_1x_h100_pcie", 0.25);
    assert!((lambda - 0.25).abs() < 1e-9, "{lambda}");
    assert!(
        terms.iter().any(|t| t == "billed per minute, at least 1 min"),
        "{terms:?}"
    );
    // RunPod by the second.
    let (runpod, _) = billed("1x_H100-SXM_SECURE", 0.25);
    assert!((runpod - 0.25).abs() < 1e-9, "{runpod}");
    // Oracle bills bare metal per second with a one-hour minimum, VMs with a one-minute one.
    assert_eq!(billed("BM.GPU.A10.4", 0.25).0, 1.0);
    assert!((billed("VM.GPU.A10.1", 0.25).0 - 0.25).abs() < 1e-9);
    // Ten seconds on AWS bill the 60-second minimum.
    assert!((billed("p4d.24xlarge", 10.0 / 3600.0).0 - 60.0 / 3600.0).abs() < 1e-9);
    // A provider whose terms are not published is billed whole hours, and says so.
    let (fluidstack, terms) = billed("H100_NVLINK_80GB::8", 0.25);
    assert_eq!(fluidstack, 1.0);
    assert!(
        terms.iter().any(|t| t.contains("granularity not published")),
        "{terms:?}"
    );
}

#[test]
fn a_cluster_on_infiniband_or_roce_is_not_warned_about_a_slow_or_plain_network() {
    // The warnings read the network the estimate used (the fabric table), not the front-end NIC,
    // and a quota note names the instance it is about.
    for provider in ["azure", "gcp"] {
        let mut q = query("llama-2-70b", Task::Lora);
        q.tokens = Some(2e8);
        q.providers = vec![provider.to_string()];
        q.top = 20;
        let p = plan(&q);
        let clusters: Vec<&Value> = recommendations(&p)
            .iter()
            .filter(|r| r["nodes"].as_u64().unwrap() > 1 && r["fabric"]["gbps"].as_f64().unwrap_or(0.0) >= 400.0)
            .collect();
        assert!(
            !clusters.is_empty(),
            "{provider}: no multi-node row on a cluster fabric"
        );
        for r in clusters {
            for warning in r["warnings"].as_array().unwrap() {
                let warning = warning.as_str().unwrap();
                assert!(
                    !warning.contains("Gbps between nodes") && !warning.contains("plain Ethernet"),
                    "{}: {warning}",
                    label(r)
                );
                if warning.contains("rents on demand") {
                    let instance = r["instance_type"].as_str().unwrap();
                    assert!(warning.contains(instance), "{}: {warning}", label(r));
                    assert!(
                        !warning.contains("H100_v5") || instance.contains("H100_v5"),
                        "{warning}"
                    );
                }
            }
        }
    }
}

#[test]
fn an_encoder_at_a_light_load_answers_in_milliseconds_not_a_full_batch_later() {
    // BERT-base at 10 requests/s: a dynamic batcher runs batches of one or two, so the time to
    // an answer is one short forward pass, not the 512-request batch the replica could hold.
    let mut q = query("bert-base-uncased", Task::Inference);
    q.serving.qps = Some(10.0);
    let p = plan(&q);
    let serving = &best(&p)["serving"];
    assert_eq!(serving["batching"], "dynamic");
    assert!(serving["concurrent_sequences"].as_f64().unwrap() <= 2.0, "{serving}");
    assert!(serving["ttft"]["p50"].as_f64().unwrap() < 0.05, "{serving}");
    // Planned at the goodput less the default 10 % headroom, not at a hidden utilisation.
    let goodput = serving["goodput_per_replica"].as_f64().unwrap();
    let planned = serving["requests_per_second_per_replica"].as_f64().unwrap();
    assert!((planned - 0.9 * goodput).abs() < 1e-6 * goodput, "{planned} {goodput}");
    // A p99 target of 30 ms caps the batch: the goodput falls and the p99 at goodput holds it.
    q.serving.ttft = Some(gpuplan::model::LatencyTarget::new(0.03, 99.0).unwrap());
    let capped = plan(&q);
    let serving = &best(&capped)["serving"];
    assert!(serving["batch_per_replica"].as_u64().unwrap() < 512, "{serving}");
    assert!(serving["ttft"]["p99"].as_f64().unwrap() <= 0.03, "{serving}");
}

#[test]
fn a_service_allowed_reserved_and_spot_keeps_its_minimum_replicas_off_spot() {
    // Practice (SkyServe's on-demand fallback, Karpenter capacity types): the replicas the
    // service never scales below sit on committed capacity, the bursts on spot, and the price
    // counts the reclaimed instances' replacements.
    let mut q = query("llama-3.1-8b", Task::Inference);
    q.serving.qps = Some(20.0);
    q.providers = vec!["aws".to_string(), "gcp".to_string(), "azure".to_string()];
    q.billing = vec![BillingMode::OnDemand, BillingMode::Spot, BillingMode::Reserved1y];
    let p = plan(&q);
    let spot_rows: Vec<&Value> = recommendations(&p).iter().filter(|r| r["billing"] == "spot").collect();
    assert!(!spot_rows.is_empty());
    for r in spot_rows {
        let serving = &r["serving"];
        let fleet = &serving["fleet"];
        let min = serving["min_replicas"].as_u64().unwrap();
        let per_instance = r["gpus_per_node"].as_u64().unwrap() / serving["gpus_per_replica"].as_u64().unwrap();
        if fleet["floor_billing"].is_null() {
            // Only where the offering has no other price.
            assert!(r["why"].to_string().contains("all on spot"), "{}", label(r));
            continue;
        }
        let floor = fleet["floor_instances"].as_u64().unwrap();
        assert!(
            floor * per_instance >= min,
            "{}: floor {floor} for {min} replicas",
            label(r)
        );
        assert!(fleet["spot_instances"].as_u64().unwrap() > 0);
        let total = fleet["floor_usd_per_hour"].as_f64().unwrap() + fleet["spot_usd_per_hour"].as_f64().unwrap();
        assert!((total - r["hourly_usd"].as_f64().unwrap()).abs() < 1e-9, "{}", label(r));
    }
}

#[test]
fn a_service_used_a_few_times_a_day_is_offered_scale_to_zero_and_a_busy_one_is_not() {
    let mut q = query("llama-3.1-8b", Task::Inference);
    q.serving.qps = Some(24.0 / 86_400.0);
    let p = plan(&q);
    let idle = &best(&p)["serving"]["scale_to_zero"];
    assert_eq!(idle["wins"], true, "{idle}");
    assert!(idle["up_share"].as_f64().unwrap() < 0.5, "{idle}");
    assert!(idle["usd_per_month"].as_f64().unwrap() < best(&p)["total_usd"].as_f64().unwrap());
    // One request every 20 s keeps the replica up for good: nothing to save.
    q.serving.qps = Some(0.05);
    let p = plan(&q);
    let idle = &best(&p)["serving"]["scale_to_zero"];
    assert_eq!(idle["wins"], false, "{idle}");
    assert!(best(&p)["why"].to_string().contains("keep it warm"));
}

#[test]
fn an_8b_model_is_not_served_from_an_inf2_xlarge_whose_host_memory_cannot_stage_it() {
    // The Neuron runtime reads the checkpoint through host memory: 16 GB of bf16 weights do not
    // load on a 16 GiB inf2.xlarge (they fail at load, OOM-killed), however well they fit the
    // accelerator.
    let mut q = aws(query("llama-3.1-8b", Task::Inference));
    q.serving.qps = Some(20.0);
    q.gpus = vec!["Inferentia2".to_string()];
    let p = plan(&q);
    for r in recommendations(&p) {
        assert_ne!(r["instance_type"], "inf2.xlarge", "{}", label(r));
    }
    let rejected = p["rejected"].to_string();
    assert!(rejected.contains("cannot stage"), "{rejected}");
}

#[test]
fn an_image_service_is_planned_within_what_its_host_can_decode() {
    // ResNet-50 on a V100 classifies thousands of images a second; the host's PIL decode on 31
    // vCPUs (about 100 images/s each) is what caps the instance.
    let mut q = query("resnet-50", Task::Inference);
    q.serving.qps = Some(2000.0);
    let p = plan(&q);
    let bounded: Vec<&Value> = recommendations(&p)
        .iter()
        .filter(|r| r["why"].to_string().contains("image decode"))
        .collect();
    assert!(!bounded.is_empty());
    for r in bounded {
        let serving = &r["serving"];
        let planned = serving["requests_per_second_per_replica"].as_f64().unwrap();
        let goodput = serving["goodput_per_replica"].as_f64().unwrap();
        assert!(planned < 0.9 * goodput, "{}: {planned} of {goodput}", label(r));
    }
    assert!(
        p["defaulted"].to_string().contains("decode each request's image"),
        "{}",
        p["defaulted"]
    );
}

/// torchtitan runs plain 1F1B by default and splits each replica's batch into one micro-batch
/// per pipeline stage, so Llama 3.1 405B on 512 H100 as FSDP 8 × TP 8 × PP 8 idles for 7/8 of
/// a step's compute (torchtitan's own table: 100 tokens/s per GPU); its interleaved schedule
/// (two stages per GPU, `--vp 2`) halves that bubble (128). A virtual stage count without
/// pipeline stages is refused.
#[test]
fn torchtitans_pipeline_schedule_sets_the_bubble() {
    let request = |vp: Option<u32>| {
        let mut r = WorkloadRequest::new(
            ModelSource::BuiltIn("llama-3.1-405b".into()),
            Task::Pretrain,
            "H100-SXM5-80GB",
        );
        (r.gpus, r.tp, r.pp, r.vp, r.zero) = (Some(512), Some(8), Some(8), vp, Some(2));
        (r.batch, r.seq, r.precision) = (Some(256), Some(8192), Some(gpuplan::model::Precision::Fp8));
        r.framework = Some("torchtitan".parse().unwrap());
        r.checkpointing = Some("full".parse().unwrap());
        r
    };
    let training = |vp| {
        estimate_workload(catalog(), &request(vp))
            .unwrap()
            .estimate
            .training
            .unwrap()
    };
    let (plain, interleaved) = (training(None), training(Some(2)));
    assert!(
        (plain.pipeline_bubble - 0.875).abs() < 1e-9,
        "{}",
        plain.pipeline_bubble
    );
    assert!(
        (interleaved.pipeline_bubble - 0.4375).abs() < 1e-9,
        "{}",
        interleaved.pipeline_bubble
    );
    let ratio = interleaved.tokens_per_second / plain.tokens_per_second;
    assert!(
        (1.15..1.45).contains(&ratio),
        "interleaved / 1F1B = {ratio} (published 1.28)"
    );
    let mut no_stages = request(Some(2));
    no_stages.pp = None;
    assert!(estimate_workload(catalog(), &no_stages).is_err());
}

/// GB200 racks are rented as their providers sell them: Azure's ND GB200 v6 VMs of four GPUs
/// join over InfiniBand in one scale set, the 72 GPUs of a rack sharing NVLink; OCI lists its
/// GB200 nodes at one global price but documents no cluster network for them, so a job too big
/// for one node is planned on Azure, not on several OCI nodes over Ethernet.
#[test]
fn a_70b_pretraining_on_gb200_spans_azure_vms_over_infiniband_and_no_oci_cluster() {
    let mut q = query("llama-3.1-70b", Task::Pretrain);
    q.gpus = vec!["GB200".to_string()];
    q.tokens = Some(2e10);
    let p = plan(&q);
    let multi: Vec<&Value> = recommendations(&p)
        .iter()
        .filter(|r| r["nodes"].as_u64().unwrap() > 1)
        .collect();
    assert!(!multi.is_empty(), "{p}");
    for r in multi {
        assert_eq!(r["provider"], "azure", "{}", label(r));
        assert_eq!(r["gpus_per_node"], 4, "{}", label(r));
        assert_eq!(r["fabric"]["kind"], "infiniband", "{}", label(r));
    }
    let rejected = p["rejected"].to_string();
    assert!(
        rejected.contains("BM.GPU.GB200.4") && rejected.contains("multi-node"),
        "{rejected}"
    );
}
