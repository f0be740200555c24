//! The defaults both `estimate` and `plan` fill in when a request leaves a value open; each
//! choice is recorded in words for the answer's `defaults`.

use crate::{Defaulted, Error, Field, RequestError};
use gpuplan_estimate::TrainingAmount;
use gpuplan_model::{Architecture, Engine, Framework, LoraTargets, ModelSpec, Offload, Task, TransformerSpec};

/// Default LoRA rank: the PEFT and torchtune recipes use 8–16; QLoRA's paper 64.
pub const DEFAULT_LORA_RANK: u64 = 16;
/// Default generated tokens per request for generative models.
pub const DEFAULT_OUTPUT_TOKENS: u64 = 256;
/// Default sequence length for language models (capped by the model's context).
pub const DEFAULT_SEQUENCE: u64 = 2048;

/// Why the global batch is what it is when none is given (plan and estimate).
pub(crate) const BATCH_DEFAULT_WHY: &str = "sequences (samples) per optimizer step; on clusters of more than 256 \
     data-parallel replicas one per replica, and with pipeline stages four micro-batches per stage and replica, up \
     to 16 M tokens (Llama 3 405B's final batch); each answer shows the batch it used";

/// Why the global batch is what it is when none is given and the optimizer steps in the
/// backward pass: nothing accumulates, so the batch is the micro-batch on every replica.
pub(crate) const BATCH_IN_BACKWARD_WHY: &str = "one micro-batch per data-parallel replica: the optimizer steps in \
     the backward pass, so nothing accumulates";

/// Tokens per prompt and generated per request: as given, else a request log's means (named
/// among the defaults: a log's lengths, not the generic ones, are what a single-request figure
/// should use), else [`sequence`]'s and [`output_tokens`]'s defaults.
pub fn lengths(
    given: (Option<u64>, Option<u64>),
    log: Option<&gpuplan_model::RequestMix>,
    task: Task,
    transformer: Option<&TransformerSpec>,
    defaults: &mut Vec<Defaulted>,
) -> (u64, u64) {
    let mut from_log = |given: Option<u64>, field: Field, mean: Option<f64>, what: &str| {
        given.or_else(|| {
            let tokens = mean?.round().max(1.0) as u64;
            defaults.push(Defaulted::new(field, tokens, format!("the request log's mean {what}")));
            Some(tokens)
        })
    };
    let seq = from_log(given.0, Field::Seq, log.map(|l| l.mean_input()), "prompt");
    let output = from_log(given.1, Field::OutputTokens, log.map(|l| l.mean_output()), "output");
    (
        sequence(seq, transformer, defaults),
        output_tokens(output, task, transformer, defaults),
    )
}

/// The traffic's request log with its prompts and outputs scaled to the lengths given beside
/// it: the single-request figures and the serving model then answer for the same requests,
/// and the log keeps its spread. A log's outputs are not scaled to nothing.
pub fn request_mix(
    log: Option<&gpuplan_model::RequestMix>,
    given: (Option<u64>, Option<u64>),
) -> Result<Option<gpuplan_model::RequestMix>, Error> {
    let Some(log) = log else {
        return Ok(None);
    };
    if given.1 == Some(0) {
        return Err(RequestError::invalid(
            Field::OutputTokens,
            0,
            "would scale the request log's outputs to nothing",
        )
        .with_hint("leave out {output_tokens} to serve the log's own outputs, or give a mean of 1 or more")
        .into());
    }
    Ok(Some(log.scaled_to(given.0, given.1)))
}

/// Tokens per sequence: as given, else 2048 capped by the model's context; a vision
/// transformer sees its patches; models described by cited totals take 1.
pub fn sequence(given: Option<u64>, transformer: Option<&TransformerSpec>, defaults: &mut Vec<Defaulted>) -> u64 {
    match (given, transformer) {
        (Some(seq), _) => seq,
        (None, Some(spec)) if spec.image.is_none() => {
            let chosen = if spec.max_context > 0 {
                DEFAULT_SEQUENCE.min(spec.max_context)
            } else {
                DEFAULT_SEQUENCE
            };
            let why = if chosen < DEFAULT_SEQUENCE {
                "the model's context, below the usual 2048"
            } else {
                "tokens per sequence, within the model's context"
            };
            defaults.push(Defaulted::new(Field::Seq, chosen, why));
            chosen
        }
        (None, Some(spec)) => spec.max_context,
        (None, None) => 1,
    }
}

/// Generated tokens per request: as given, else 256 for generative models served.
pub fn output_tokens(
    given: Option<u64>,
    task: Task,
    transformer: Option<&TransformerSpec>,
    defaults: &mut Vec<Defaulted>,
) -> u64 {
    match given {
        Some(tokens) => tokens,
        None if task == Task::Inference && transformer.is_some_and(|spec| spec.generates()) => {
            defaults.push(Defaulted::new(
                Field::OutputTokens,
                DEFAULT_OUTPUT_TOKENS,
                "generated tokens per request",
            ));
            DEFAULT_OUTPUT_TOKENS
        }
        None => 0,
    }
}

/// The adapters' rank: as given, else 16 for LoRA and QLoRA, 0 otherwise.
pub fn lora_rank(given: Option<u64>, task: Task, defaults: &mut Vec<Defaulted>) -> u64 {
    match (given, task) {
        (Some(rank), _) => rank,
        (None, Task::Lora | Task::Qlora) => {
            defaults.push(Defaulted::new(
                Field::LoraRank,
                DEFAULT_LORA_RANK,
                "PEFT and torchtune recipes use 8–16",
            ));
            DEFAULT_LORA_RANK
        }
        (None, _) => 0,
    }
}

/// The layers LoRA adapts: as given, else the framework's recipe default, else every linear
/// layer.
pub fn lora_targets(
    given: Option<LoraTargets>,
    task: Task,
    framework: Option<Framework>,
    defaults: &mut Vec<Defaulted>,
) -> LoraTargets {
    match (given, task) {
        (Some(targets), _) => targets,
        (None, Task::Lora | Task::Qlora) => {
            let targets = framework.map_or(LoraTargets::AllLinear, |f| {
                gpuplan_estimate::calibration::framework(f).lora_targets
            });
            let why = match framework {
                Some(f) => format!("the {f} recipe's layers"),
                None => "every linear layer".to_string(),
            };
            defaults.push(Defaulted::new(Field::LoraTargets, targets, why));
            targets
        }
        (None, _) => LoraTargets::AllLinear,
    }
}

/// Offloading applies to training, and parameters leave the GPU only sharded (ZeRO-3/FSDP).
pub fn check_offload(offload: Offload, task: Task, zero: Option<u8>) -> Result<(), Error> {
    if offload.any() && !task.is_training() {
        return Err(
            RequestError::not_applicable(Field::Offload, "training tasks (pretrain, finetune, lora, qlora)")
                .with_hint("drop it")
                .into(),
        );
    }
    if offload.parameters && zero.is_some_and(|z| z < 3) {
        return Err(
            RequestError::unsuitable(Field::Offload, "params", "needs sharded parameters (ZeRO-3 or FSDP)")
                .with_hint("use {zero} 3, or offload only the optimizer")
                .into(),
        );
    }
    Ok(())
}

/// Stepping the optimizer inside the backward pass applies to full training (torchtune offers
/// it in its full fine-tuning recipes), where the GPU runs the optimizer, and leaves nothing to
/// accumulate: no pipeline stages, whose micro-batches add up their gradients.
pub fn check_optimizer_in_backward(
    given: bool,
    task: Task,
    offload: Option<Offload>,
    pp: Option<u32>,
) -> Result<(), Error> {
    if !given {
        return Ok(());
    }
    if !matches!(task, Task::Pretrain | Task::Finetune) {
        return Err(RequestError::not_applicable(
            Field::OptimizerInBackward,
            "full training ({task} pretrain or finetune)",
        )
        .with_hint("drop it; adapters' gradients are small")
        .into());
    }
    if offload.is_some_and(|o| o.optimizer) {
        return Err(RequestError::conflict(
            Field::OptimizerInBackward,
            Field::Offload,
            "an offloaded optimizer steps on the CPU after the backward pass",
        )
        .with_hint("drop one of the two")
        .into());
    }
    if pp.is_some_and(|pp| pp > 1) {
        return Err(RequestError::conflict(
            Field::OptimizerInBackward,
            Field::Pp,
            "pipeline stages accumulate gradients over their micro-batches",
        )
        .with_hint("drop {pp}")
        .into());
    }
    Ok(())
}

/// How much training is asked for: `--tokens`, or `--epochs` × `--dataset-size` (one epoch
/// when only the size is given).
pub fn training_amount(
    tokens: Option<f64>,
    epochs: Option<f64>,
    dataset_size: Option<f64>,
) -> Result<Option<TrainingAmount>, Error> {
    match (tokens, epochs, dataset_size) {
        (Some(tokens), _, _) if tokens > 0.0 && tokens.is_finite() => Ok(Some(TrainingAmount::Tokens(tokens))),
        (Some(tokens), _, _) => {
            Err(RequestError::out_of_range(Field::Tokens, shown(tokens), "a positive number").into())
        }
        (None, epochs, Some(size)) if size > 0.0 && epochs.is_none_or(|e| e > 0.0) => {
            Ok(Some(TrainingAmount::Samples(size * epochs.unwrap_or(1.0))))
        }
        (None, Some(_), None) => {
            Err(RequestError::needs(Field::Epochs, Field::DatasetSize, " (samples per epoch)").into())
        }
        (None, Some(e), Some(_)) if e.is_nan() || e <= 0.0 => {
            Err(RequestError::out_of_range(Field::Epochs, shown(e), "a positive number").into())
        }
        (None, _, Some(size)) => {
            Err(RequestError::out_of_range(Field::DatasetSize, shown(size), "a positive number").into())
        }
        (None, None, None) => Ok(None),
    }
}

/// Whether the model is a diffusion pipeline whose UNet is known layer by layer (its attention
/// then runs through PyTorch's fused `scaled_dot_product_attention` unless told otherwise).
/// Serving engine for `task` unless the user names one: vLLM (continuous batching) for
/// models that generate text, diffusers on PyTorch for diffusion, PyTorch for the rest.
pub fn engine(given: Option<Engine>, task: Task, model: &ModelSpec, defaults: &mut Vec<Defaulted>) -> Engine {
    if let Some(engine) = given {
        return engine;
    }
    if task != Task::Inference {
        return Engine::Pytorch;
    }
    let generates = matches!(&model.architecture, Architecture::Transformer(spec) if spec.generates());
    let (engine, why) = if generates {
        (
            Engine::Vllm,
            "continuous batching; sglang, tensorrt-llm, tgi and pytorch are the others",
        )
    } else if is_diffusion(model) {
        (Engine::Pytorch, "diffusers")
    } else {
        (Engine::Pytorch, "dynamic batching of single forward passes")
    };
    defaults.push(Defaulted::new(Field::Engine, engine, why));
    engine
}

/// Whether training this model reads and decodes image files: CNNs and vision transformers
/// (diffusion training usually starts from pre-encoded latents).
pub fn decodes_images(model: &ModelSpec) -> bool {
    match &model.architecture {
        Architecture::Cited(spec) => spec.family == "vision",
        Architecture::Transformer(spec) => spec.image.is_some(),
    }
}

pub fn is_diffusion(model: &ModelSpec) -> bool {
    matches!(&model.architecture, Architecture::Cited(spec) if spec.unet.is_some() || spec.transformer.is_some())
}

/// Sizes and counts that must be at least one (`--seq 0` is a mistake, not an empty plan).
pub fn check_counts(counts: &[(Field, Option<u64>)]) -> Result<(), Error> {
    if let Some((field, _)) = counts.iter().find(|(_, value)| *value == Some(0)) {
        return Err(at_least_one(*field, 0));
    }
    match counts.iter().find(|(_, value)| value.is_some_and(|v| v > MAX_COUNT)) {
        Some((field, Some(value))) => {
            Err(RequestError::beyond(*field, value, format!("beyond any real workload (at most {MAX_COUNT})")).into())
        }
        _ => Ok(()),
    }
}

/// `field` must be at least 1; `value` was given.
pub fn at_least_one(field: Field, value: impl ToString) -> Error {
    RequestError::out_of_range(field, value, "at least 1").into()
}

/// `value` of `field`, which must be a positive finite number; the one wording every command
/// uses.
pub fn require_positive(field: Field, value: Option<f64>) -> Result<(), Error> {
    match value {
        Some(v) if !(v > 0.0 && v.is_finite()) => {
            Err(RequestError::out_of_range(field, shown(v), "a positive number").into())
        }
        _ => Ok(()),
    }
}

/// Fewest requests per second a service is sized for: one a day and a half (below it every
/// per-request figure is the whole replica's rent), and the most: ten million.
const LOAD_RANGE: std::ops::RangeInclusive<f64> = 1e-5..=1e7;

/// A number as a person reads it in a message: `5e8` rather than 500000000, `1e-320` rather
/// than three hundred zeros.
pub fn shown(value: f64) -> String {
    if value != 0.0 && (value.abs() >= 1e6 || value.abs() < 1e-3) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// `--qps` within [`LOAD_RANGE`].
pub fn require_plausible_load(qps: Option<f64>) -> Result<(), Error> {
    match qps {
        Some(q) if !LOAD_RANGE.contains(&q) => Err(RequestError::beyond(
            Field::Qps,
            shown(q),
            "outside the loads a service is sized for (1e-5 to 1e7 requests/s)",
        )
        .with_hint("for a handful of requests a day, serverless endpoints or a batch job fit better")
        .into()),
        _ => Ok(()),
    }
}

/// `value` of `field`, which must be zero or a positive finite number.
pub fn require_non_negative(field: Field, value: Option<f64>) -> Result<(), Error> {
    match value {
        Some(v) if !(v >= 0.0 && v.is_finite()) => {
            Err(RequestError::out_of_range(field, shown(v), "zero or more").into())
        }
        _ => Ok(()),
    }
}

/// Largest sequence length, batch, micro-batch or rank accepted: a hundred million.
const MAX_COUNT: u64 = 100_000_000;

/// GPUs in the largest cluster an estimate describes: eight times the largest published
/// training run (Llama 3's 16,384 H100s).
const MAX_CLUSTER_GPUS: u32 = 131_072;

/// A cluster of `gpus` in nodes of `per_node`: at least one per node, and whole nodes when
/// it spans several.
pub fn check_node_shape(gpus: u32, per_node: u32) -> Result<(), Error> {
    if gpus > MAX_CLUSTER_GPUS {
        return Err(RequestError::beyond(
            Field::Gpus,
            gpus,
            format!("more than any cluster holds (at most {MAX_CLUSTER_GPUS})"),
        )
        .into());
    }
    if per_node == 0 {
        return Err(at_least_one(Field::GpusPerNode, 0));
    }
    if gpus > per_node && gpus % per_node != 0 {
        return Err(Error::invalid(
            format!("{gpus} GPUs do not fill whole nodes of {per_node}"),
            Some(format!(
                "use a multiple of {per_node} GPUs or fewer than one node, or give another {{gpus_per_node}}"
            )),
        ));
    }
    Ok(())
}

/// Integer formats store a frozen base for inference or QLoRA; no optimizer trains weights
/// held in them. 4-bit floating point trains full models where the framework has a recipe for
/// it (Transformer Engine's NVFP4 in Megatron-Core; none given: that one is assumed).
pub fn check_training_precision(
    task: Task,
    precision: gpuplan_model::Precision,
    framework: Option<gpuplan_model::Framework>,
) -> Result<(), Error> {
    use gpuplan_model::Precision;
    if !task.is_training() || task == Task::Qlora {
        return Ok(());
    }
    let full = matches!(task, Task::Pretrain | Task::Finetune);
    match precision {
        Precision::Int8 | Precision::Int4 => Err(RequestError::unsuitable(
            Field::Precision,
            precision,
            "does not train weights",
        )
        .with_hint(
            "train in bf16, fp16, fp8 or fp4; int8/int4 serve models, and QLoRA keeps a 4-bit base with {task} qlora",
        )
        .into()),
        Precision::Fp4 if !full => {
            Err(
                RequestError::unsuitable(Field::Precision, precision, "trains whole models only")
                    .with_hint("LoRA adapts a 16-bit or 8-bit base; a 4-bit base is {task} qlora")
                    .into(),
            )
        }
        Precision::Fp4 => match framework {
            Some(f) if !gpuplan_estimate::calibration::framework(f).four_bit_training => Err(RequestError::unsuitable(
                Field::Precision,
                precision,
                format!("is not a training recipe of {f}"),
            )
            .with_hint("NVFP4 training is Transformer Engine's recipe: {framework} megatron, or fp8 with this one")
            .into()),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// The precision a quantised checkpoint is served in when none is given: its weights as
/// stored (`quantization_config`), and the kernel its format implies. `None` when the model
/// is not a quantised checkpoint or the task trains (which quantises its own way).
pub(crate) fn checkpoint_precision(
    transformer: Option<&gpuplan_model::TransformerSpec>,
    task: gpuplan_model::Task,
    defaults: &mut Vec<Defaulted>,
) -> Result<Option<(gpuplan_model::Precision, Option<gpuplan_model::WeightKernel>)>, Error> {
    let Some(q) = transformer.and_then(|t| t.quantization.as_ref()) else {
        return Ok(None);
    };
    if task != gpuplan_model::Task::Inference {
        return Ok(None);
    }
    let Some(precision) = q.precision else {
        return Err(RequestError::missing(
            Field::Precision,
            format!(
                "where the checkpoint stores its weights as `{}`, a format gpuplan does not model",
                q.method
            ),
        )
        .with_hint("give the precision its weights are served in, e.g. {precision} int4 or {precision} fp8")
        .into());
    };
    let shown = match q.kernel {
        Some(kernel) => format!("{precision}:{kernel}"),
        None => precision.to_string(),
    };
    defaults.push(Defaulted::new(
        Field::Precision,
        shown,
        format!(
            "the checkpoint's quantization_config ({}): its weights as stored",
            q.method
        ),
    ));
    Ok(Some((precision, q.kernel)))
}
