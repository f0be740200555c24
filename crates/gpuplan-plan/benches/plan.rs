//! How long a plan over the full embedded catalog takes.
//!
//! `cargo bench -p gpuplan-plan` — the README reports these figures.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use gpuplan_catalog::Catalog;
use gpuplan_estimate::TrainingAmount;
use gpuplan_model::{Engine, LatencyTarget, Optimizer, Precision, RequestMix, RequestShape, Task};
use gpuplan_plan::{Constraints, Objective, Operational, PlanRequest, ServingTargets, WorkloadTemplate, plan};
use std::sync::OnceLock;

fn main() {
    divan::main();
}

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::embedded().unwrap())
}

fn template(task: Task, batch: Option<u64>, seq: u64, output_tokens: u64, engine: Engine) -> WorkloadTemplate {
    WorkloadTemplate {
        task,
        precision: Precision::Bf16,
        batch,
        micro_batch: None,
        seq,
        output_tokens,
        tp: None,
        pp: None,
        cp: 1,
        ep: 1,
        vp: None,
        attention_dp: false,
        ep_overlap: false,
        zero: None,
        checkpointing: None,
        optimizer: Optimizer::AdamW,
        optimizer_in_backward: false,
        lora_rank: 16,
        flash_attention: true,
        engine,
        framework: None,
        engine_settings: gpuplan_model::EngineSettings::default(),
        weight_kernel: None,
        kv_cache: gpuplan_model::KvCacheDtype::Auto,
        lora_targets: gpuplan_model::LoraTargets::AllLinear,
        offload: gpuplan_model::Offload::NONE,
        packing: gpuplan_model::SequencePacking::Packed,
        compiled: false,
        image: Default::default(),
    }
}

/// Parsing and validating the embedded catalog (once per process in the CLI).
#[divan::bench]
fn load_catalog() -> Catalog {
    Catalog::embedded().unwrap()
}

/// `gpuplan plan --model llama-3.1-8b --task lora --seq 4096 --batch 32 --tokens 5e8 --deadline 24h`
#[divan::bench]
fn plan_lora_fine_tuning(bencher: divan::Bencher) {
    let model = catalog().models().get("llama-3.1-8b").unwrap();
    let request = PlanRequest {
        model,
        template: template(Task::Lora, Some(32), 4096, 0, Engine::Pytorch),
        precisions: vec![Precision::Bf16],
        amount: Some(TrainingAmount::Tokens(5e8)),
        constraints: Constraints {
            deadline_hours: Some(24.0),
            ..Constraints::default()
        },
        objective: Objective::Cost,
        top: 10,
        tolerance: gpuplan_plan::DEFAULT_TOLERANCE,
        operational: Operational::default(),
        cancel: Default::default(),
    };
    bencher.bench(|| plan(catalog(), &request).unwrap().evaluated);
}

/// The serving benchmark's request: `requests` lengths, or 1,000 in / 200 out.
fn serving_request(requests: Option<RequestMix>) -> PlanRequest<'static> {
    let model = catalog().models().get("mistral-7b").unwrap();
    PlanRequest {
        model,
        template: template(Task::Inference, None, 1000, 200, Engine::Vllm),
        precisions: vec![Precision::Bf16],
        amount: None,
        constraints: Constraints {
            serving: ServingTargets {
                qps: Some(20.0),
                peak_qps: None,
                ttft: Some(LatencyTarget::at_default_percentile(1.0).unwrap()),
                tpot: Some(LatencyTarget::at_default_percentile(0.05).unwrap()),
                requests,
                headroom: None,
                concurrency: None,
            },
            ..Constraints::default()
        },
        objective: Objective::Cost,
        top: 10,
        tolerance: gpuplan_plan::DEFAULT_TOLERANCE,
        operational: Operational::default(),
        cancel: Default::default(),
    }
}

/// `gpuplan plan --model mistral-7b --task inference --qps 20 --input-tokens 1000 --output-tokens 200 --ttft 1s --tpot 50ms`
#[divan::bench]
fn plan_serving(bencher: divan::Bencher) {
    let request = serving_request(None);
    bencher.bench(|| plan(catalog(), &request).unwrap().evaluated);
}

/// The same with `--requests` of a request log: the 24,576 prompt and output lengths of the
/// MLPerf Llama-2-70B dataset (the validation tables' copy).
#[divan::bench]
fn plan_serving_request_log(bencher: divan::Bencher) {
    let text = include_str!("../../gpuplan/tests/validation/openorca-llama2-lengths.csv");
    let shapes: Vec<RequestShape> = text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .skip(1)
        .map(|line| {
            let mut fields = line.split(',').map(|f| f.trim().parse::<u64>().unwrap());
            RequestShape {
                input_tokens: fields.next().unwrap(),
                output_tokens: fields.next().unwrap(),
            }
        })
        .collect();
    let request = serving_request(RequestMix::from_shapes(shapes, "bench"));
    bencher.bench(|| plan(catalog(), &request).unwrap().evaluated);
}
