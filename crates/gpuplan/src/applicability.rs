//! Flags that do not apply to a request are refused, never silently ignored: each rule names
//! the flag, what it applies to, and what to do instead.

use crate::plan_workload::PlanQuery;
use crate::{Error, Field, RequestError};
use gpuplan_model::{Architecture, BillingMode, ModelSpec, SequencePacking, Task};

/// One field and whether the user gave it.
struct Given(Field, bool);

/// `field` means nothing here: it applies to `applies_to`; `hint` says what to do. Both
/// name other fields as `{key}`.
fn refuse(field: Field, applies_to: &str, hint: &str) -> Error {
    RequestError::not_applicable(field, applies_to).with_hint(hint).into()
}

fn first_given(flags: &[Given]) -> Option<Field> {
    flags.iter().find(|g| g.1).map(|g| g.0)
}

/// Checks that every flag of `query` means something for its task and model.
pub(crate) fn check_plan_query(query: &PlanQuery, model: &ModelSpec) -> Result<(), Error> {
    let task = query.task;
    let serving = [
        Given(Field::Qps, query.serving.qps.is_some()),
        Given(Field::PeakQps, query.serving.peak_qps.is_some()),
        Given(Field::Headroom, query.serving.headroom.is_some()),
        Given(Field::Ttft, query.serving.ttft.is_some()),
        Given(Field::Tpot, query.serving.tpot.is_some()),
        Given(Field::OutputTokens, query.output_tokens.is_some()),
        Given(Field::Engine, query.engine.is_some()),
        Given(Field::Requests, query.serving.requests.is_some()),
        Given(Field::PrefixCacheHit, query.prefix_cache_hit.is_some()),
        Given(Field::KvCacheDtype, query.kv_cache.is_some()),
    ];
    let training = [
        Given(Field::Tokens, query.tokens.is_some()),
        Given(Field::Epochs, query.epochs.is_some()),
        Given(Field::Optimizer, query.optimizer.is_some()),
        Given(Field::OptimizerInBackward, query.optimizer_in_backward),
        Given(Field::Checkpointing, query.checkpointing.is_some()),
        Given(Field::Framework, query.framework.is_some()),
        Given(Field::Offload, query.offload.is_some_and(|o| o.any())),
        Given(Field::MicroBatch, query.micro_batch.is_some()),
        Given(
            Field::CheckpointEvery,
            query.operational.startup.checkpoint_interval_hours.is_some(),
        ),
    ];
    if task.is_training() {
        if let Some(flag) = first_given(&serving) {
            return Err(refuse(
                flag,
                "{task} inference",
                "drop it, or plan serving with {task} inference",
            ));
        }
    } else {
        if let Some(flag) = first_given(&training) {
            return Err(refuse(
                flag,
                "training tasks (pretrain, finetune, lora, qlora)",
                "drop it; inference is sized by {qps} and latency targets, or by {dataset_size} and {deadline} for a batch",
            ));
        }
        let batch = query.dataset_size.is_some();
        if query.deadline_hours.is_some() && !batch {
            return Err(refuse(
                Field::Deadline,
                "training, or to batch inference with {dataset_size}",
                "give {dataset_size} (requests to process) with {deadline}, or size online serving with {qps}",
            ));
        }
        if query.serving.qps.is_some() && query.serving.concurrency.is_some() {
            return Err(RequestError::conflict(
                Field::Qps,
                Field::Concurrency,
                "are two ways to state the load; give one",
            )
            .with_hint("{qps} is an open load of Poisson arrivals; {concurrency} N is N users in a closed loop")
            .into());
        }
        if query.serving.peak_qps.is_some() && query.serving.concurrency.is_some() {
            return Err(refuse(
                Field::PeakQps,
                "a load given as {qps}",
                "with {concurrency} the replicas are sized for that many users; drop {peak_qps}",
            ));
        }
        let online = [
            Given(Field::Qps, query.serving.qps.is_some()),
            Given(Field::Concurrency, query.serving.concurrency.is_some()),
            Given(Field::PeakQps, query.serving.peak_qps.is_some()),
            Given(Field::Ttft, query.serving.ttft.is_some()),
            Given(Field::Tpot, query.serving.tpot.is_some()),
        ];
        if let (true, Some(flag)) = (batch, first_given(&online)) {
            return Err(refuse(
                flag,
                "online serving, not to a batch of {dataset_size} requests",
                "a batch is sized by {dataset_size} and {deadline}; drop one of the two",
            ));
        }
    }
    if query.lora_rank.is_some() && !matches!(task, Task::Lora | Task::Qlora) {
        return Err(refuse(Field::LoraRank, "{task} lora or qlora", "drop {lora_rank}"));
    }
    if query.lora_targets.is_some() && !matches!(task, Task::Lora | Task::Qlora) {
        return Err(refuse(
            Field::LoraTargets,
            "{task} lora or qlora",
            "drop {lora_targets}",
        ));
    }
    crate::defaults::check_optimizer_in_backward(query.optimizer_in_backward, task, query.offload, None)?;
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
    let flags = [
        Given(Field::Compile, compiled),
        Given(Field::MeanSeq, packing.is_padded()),
    ];
    if let Some(flag) = first_given(&flags) {
        if !task.is_training() {
            return Err(refuse(
                flag,
                "training tasks (pretrain, finetune, lora, qlora)",
                "drop it; serving engines are chosen with {engine} (torch-compile among them)",
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
            return Err(
                RequestError::out_of_range(Field::MeanSeq, mean_tokens, "a positive number")
                    .with_hint("the mean number of real tokens in each padded example")
                    .into(),
            );
        }
        if mean_tokens > seq {
            return Err(RequestError::beyond(
                Field::MeanSeq,
                mean_tokens,
                format!("longer than {{seq}} {seq}, the length examples are padded to"),
            )
            .with_hint("give {seq} the padded length (the longest example) and {mean_seq} their mean")
            .into());
        }
    }
    Ok(())
}

fn check_image_flags(query: &PlanQuery, model: &ModelSpec) -> Result<(), Error> {
    let image_model = matches!(model.architecture, Architecture::Cited(_));
    let diffusion = crate::defaults::is_diffusion(model);
    if query.tokens.is_some() && image_model {
        return Err(refuse(
            Field::Tokens,
            "text models, which train on tokens",
            "image models train on images: give {dataset_size} (images) and {epochs}",
        ));
    }
    if query.image.resolution.is_some() && !image_model {
        return Err(refuse(
            Field::Resolution,
            "image models (CNNs, ViTs from cited figures, diffusion pipelines)",
            "drop {resolution}; transformers take {seq}",
        ));
    }
    if !diffusion {
        if query.image.denoising_steps.is_some() {
            return Err(refuse(Field::Steps, "diffusion models", "drop {steps}"));
        }
        if query.image.guidance.is_some() {
            return Err(refuse(Field::NoGuidance, "diffusion models", "drop {no_guidance}"));
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
        Given(Field::Requests, query.serving.requests.is_some()),
        Given(Field::PrefixCacheHit, query.prefix_cache_hit.is_some()),
        Given(Field::Concurrency, query.serving.concurrency.is_some()),
    ];
    match first_given(&shapes).or_else(|| settings.first_given()) {
        Some(flag) if !(generates && continuous) => Err(refuse(
            flag,
            "text generation served by a continuous-batching engine (vllm, sglang, tensorrt-llm, tgi)",
            "drop it, or serve a text-generation model with one of those engines",
        )),
        _ => Ok(()),
    }
}

fn check_input_flags(query: &PlanQuery, model: &ModelSpec) -> Result<(), Error> {
    // A service of an image model decodes each request's image on its host too.
    let serves_images = query.task == Task::Inference && crate::defaults::decodes_images(model);
    if query.operational.input.pipeline.is_some() && serves_images {
        return Ok(());
    }
    let input = [
        Given(Field::InputPipeline, query.operational.input.pipeline.is_some()),
        Given(Field::StreamDataset, query.operational.input.stream_dataset),
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
            Field::Utilisation,
            "reserved billing",
            "add {billing} reserved-1y (or reserved-3y), or drop {utilisation}",
        ));
    }
    if let Some(u) = query.operational.utilisation {
        if !(u > 0.0 && u <= 1.0) {
            return Err(
                RequestError::beyond(Field::Utilisation, u, "not a share between 0 and 1")
                    .with_hint("0.7 means the reserved capacity is busy 70 % of its term")
                    .into(),
            );
        }
    }
    if query.operational.interruption_rate.is_some() && !query.billing.contains(&BillingMode::Spot) {
        return Err(refuse(
            Field::InterruptionRate,
            "spot billing",
            "add {spot}, or drop {interruption_rate}",
        ));
    }
    if let Some(rate) = query.operational.interruption_rate {
        if !(rate >= 0.0 && rate.is_finite()) {
            return Err(RequestError::out_of_range(Field::InterruptionRate, rate, "zero or more").into());
        }
    }
    Ok(())
}
