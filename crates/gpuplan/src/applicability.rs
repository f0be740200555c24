//! Flags that do not apply to a request are refused, never silently ignored: each rule names
//! the flag, what it applies to, and what to do instead.

use crate::Error;
use crate::plan_workload::PlanQuery;
use gpuplan_model::{Architecture, BillingMode, ModelSpec, SequencePacking, Task};

/// One flag and whether the user gave it.
struct Given(&'static str, bool);

fn refuse(flag: &str, applies_to: &str, hint: &str) -> Error {
    Error::invalid(format!("{flag} applies to {applies_to}"), Some(hint.to_string()))
}

fn first_given(flags: &[Given]) -> Option<&'static str> {
    flags.iter().find(|g| g.1).map(|g| g.0)
}

/// Checks that every flag of `query` means something for its task and model.
pub(crate) fn check_plan_query(query: &PlanQuery, model: &ModelSpec) -> Result<(), Error> {
    let task = query.task;
    let serving = [
        Given("--qps", query.serving.qps.is_some()),
        Given("--peak-qps", query.serving.peak_qps.is_some()),
        Given("--headroom", query.serving.headroom.is_some()),
        Given("--ttft", query.serving.ttft.is_some()),
        Given("--tpot", query.serving.tpot.is_some()),
        Given("--output-tokens", query.output_tokens.is_some()),
        Given("--engine", query.engine.is_some()),
        Given("--requests", query.serving.requests.is_some()),
        Given("--prefix-cache-hit", query.prefix_cache_hit.is_some()),
        Given("--kv-cache-dtype", query.kv_cache.is_some()),
    ];
    let training = [
        Given("--tokens", query.tokens.is_some()),
        Given("--epochs", query.epochs.is_some()),
        Given("--optimizer", query.optimizer.is_some()),
        Given("--checkpointing", query.checkpointing.is_some()),
        Given("--framework", query.framework.is_some()),
        Given("--offload", query.offload.is_some_and(|o| o.any())),
        Given("--micro-batch", query.micro_batch.is_some()),
        Given(
            "--checkpoint-every",
            query.operational.startup.checkpoint_interval_hours.is_some(),
        ),
    ];
    if task.is_training() {
        if let Some(flag) = first_given(&serving) {
            return Err(refuse(
                flag,
                "--task inference",
                "drop it, or plan serving with --task inference",
            ));
        }
    } else {
        if let Some(flag) = first_given(&training) {
            return Err(refuse(
                flag,
                "training tasks (pretrain, finetune, lora, qlora)",
                "drop it; inference is sized by --qps and latency targets, or by --dataset-size and --deadline for a batch",
            ));
        }
        let batch = query.dataset_size.is_some();
        if query.deadline_hours.is_some() && !batch {
            return Err(refuse(
                "--deadline",
                "training, or to batch inference with --dataset-size",
                "give --dataset-size (requests to process) with --deadline, or size online serving with --qps",
            ));
        }
        if query.serving.qps.is_some() && query.serving.concurrency.is_some() {
            return Err(Error::invalid(
                "--qps and --concurrency are two ways to state the load; give one",
                Some(
                    "--qps is an open load of Poisson arrivals; --concurrency N is N users in a closed loop"
                        .to_string(),
                ),
            ));
        }
        if query.serving.peak_qps.is_some() && query.serving.concurrency.is_some() {
            return Err(refuse(
                "--peak-qps",
                "a load given as --qps",
                "with --concurrency the replicas are sized for that many users; drop --peak-qps",
            ));
        }
        let online = [
            Given("--qps", query.serving.qps.is_some()),
            Given("--concurrency", query.serving.concurrency.is_some()),
            Given("--peak-qps", query.serving.peak_qps.is_some()),
            Given("--ttft", query.serving.ttft.is_some()),
            Given("--tpot", query.serving.tpot.is_some()),
        ];
        if let (true, Some(flag)) = (batch, first_given(&online)) {
            return Err(refuse(
                flag,
                "online serving, not to a batch of --dataset-size requests",
                "a batch is sized by --dataset-size and --deadline; drop one of the two",
            ));
        }
    }
    if query.lora_rank.is_some() && !matches!(task, Task::Lora | Task::Qlora) {
        return Err(refuse("--lora-rank", "--task lora or qlora", "drop --lora-rank"));
    }
    if query.lora_targets.is_some() && !matches!(task, Task::Lora | Task::Qlora) {
        return Err(refuse("--lora-targets", "--task lora or qlora", "drop --lora-targets"));
    }
    check_image_flags(query, model)?;
    check_input_flags(query, model)?;
    check_request_shape_flags(query, model)?;
    check_billing_flags(query)
}

/// `--compile` and `--mean-seq` describe a transformer's training step; `--mean-seq` is the
/// mean real length of examples padded to `--seq`, so it lies in 1..=seq.
pub(crate) fn check_training_step(
    task: Task,
    model: &ModelSpec,
    packing: SequencePacking,
    compiled: bool,
    seq: u64,
) -> Result<(), Error> {
    let transformer = matches!(model.architecture, Architecture::Transformer(_));
    let flags = [Given("--compile", compiled), Given("--mean-seq", packing.is_padded())];
    if let Some(flag) = first_given(&flags) {
        if !task.is_training() {
            return Err(refuse(
                flag,
                "training tasks (pretrain, finetune, lora, qlora)",
                "drop it; serving engines are chosen with --engine (torch-compile among them)",
            ));
        }
        if !transformer {
            return Err(refuse(
                flag,
                "the training of transformers",
                "drop it; image models are trained from their cited or layer-by-layer figures",
            ));
        }
    }
    if let SequencePacking::Padded { mean_tokens } = packing {
        if mean_tokens == 0 {
            return Err(Error::invalid(
                format!("--mean-seq must be a positive number, found {mean_tokens}"),
                Some("the mean number of real tokens in each padded example".to_string()),
            ));
        }
        if mean_tokens > seq {
            return Err(Error::invalid(
                format!("--mean-seq {mean_tokens} is longer than --seq {seq}, the length examples are padded to"),
                Some("give --seq the padded length (the longest example) and --mean-seq their mean".to_string()),
            ));
        }
    }
    Ok(())
}

fn check_image_flags(query: &PlanQuery, model: &ModelSpec) -> Result<(), Error> {
    let image_model = matches!(model.architecture, Architecture::Cited(_));
    let diffusion = crate::defaults::is_diffusion(model);
    if query.tokens.is_some() && image_model {
        return Err(refuse(
            "--tokens",
            "text models, which train on tokens",
            "image models train on images: give --dataset-size (images) and --epochs",
        ));
    }
    if query.image.resolution.is_some() && !image_model {
        return Err(refuse(
            "--resolution",
            "image models (CNNs, ViTs from cited figures, diffusion pipelines)",
            "drop --resolution; transformers take --seq",
        ));
    }
    if !diffusion {
        if query.image.denoising_steps.is_some() {
            return Err(refuse("--steps", "diffusion models", "drop --steps"));
        }
        if query.image.guidance.is_some() {
            return Err(refuse("--no-guidance", "diffusion models", "drop --no-guidance"));
        }
    }
    Ok(())
}

/// Request logs and prefix caching shape the continuous-batching model of text generation;
/// elsewhere they would change nothing.
fn check_request_shape_flags(query: &PlanQuery, model: &ModelSpec) -> Result<(), Error> {
    let generates = matches!(&model.architecture, Architecture::Transformer(spec) if spec.generates());
    let continuous = query.engine.is_none_or(|engine| engine.continuous_batching());
    let settings = &query.engine_settings;
    let shapes = [
        Given("--requests", query.serving.requests.is_some()),
        Given("--prefix-cache-hit", query.prefix_cache_hit.is_some()),
        Given("--concurrency", query.serving.concurrency.is_some()),
        Given("--max-num-seqs", settings.max_num_seqs.is_some()),
        Given("--max-num-batched-tokens", settings.max_num_batched_tokens.is_some()),
        Given("--scheduler-steps", settings.scheduler_steps.is_some()),
        Given("--chunked-prefill", settings.chunked_prefill.is_some()),
        Given("--reserve-full-context", settings.reserve_full_context.is_some()),
        Given("--engine NAME@RELEASE", settings.release.is_some()),
    ];
    match first_given(&shapes) {
        Some(flag) if !(generates && continuous) => Err(refuse(
            flag,
            "text generation served by a continuous-batching engine (vllm, sglang, tensorrt-llm, tgi)",
            "drop it, or serve a text-generation model with one of those engines",
        )),
        _ => Ok(()),
    }
}

fn check_input_flags(query: &PlanQuery, model: &ModelSpec) -> Result<(), Error> {
    let input = [
        Given("--input-pipeline", query.operational.input.pipeline.is_some()),
        Given("--stream-dataset", query.operational.input.stream_dataset),
    ];
    let decodes = query.task.is_training() && crate::defaults::decodes_images(model);
    match first_given(&input) {
        Some(flag) if !decodes => Err(refuse(
            flag,
            "training of image models (CNNs, vision transformers), which decode images",
            "drop it; text models read pre-tokenised data",
        )),
        _ => Ok(()),
    }
}

fn check_billing_flags(query: &PlanQuery) -> Result<(), Error> {
    let reserved = query
        .billing
        .iter()
        .any(|b| matches!(b, BillingMode::Reserved1y | BillingMode::Reserved3y));
    if query.operational.utilisation.is_some() && !reserved {
        return Err(refuse(
            "--utilisation",
            "reserved billing",
            "add --billing reserved-1y (or reserved-3y), or drop --utilisation",
        ));
    }
    if let Some(u) = query.operational.utilisation {
        if !(u > 0.0 && u <= 1.0) {
            return Err(Error::invalid(
                format!("--utilisation {u} is not a share between 0 and 1"),
                Some("0.7 means the reserved capacity is busy 70 % of its term".to_string()),
            ));
        }
    }
    if query.operational.interruption_rate.is_some() && !query.billing.contains(&BillingMode::Spot) {
        return Err(refuse(
            "--interruption-rate",
            "spot billing",
            "add --spot, or drop --interruption-rate",
        ));
    }
    if let Some(rate) = query.operational.interruption_rate {
        if !(rate >= 0.0 && rate.is_finite()) {
            return Err(Error::invalid("--interruption-rate must be zero or more", None));
        }
    }
    Ok(())
}
