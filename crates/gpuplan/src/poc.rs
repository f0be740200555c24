//! `probe --poc`: the guides' proof of concept. The shape of a catalog model and the settings
//! its training and decode benchmark runs with, and the runs' measurements against the
//! estimates of the same settings (on the datasheet, and calibrated when a calibration is
//! given): training throughput, memory and decode latency on one GPU, and the scaling
//! efficiency on several.

use crate::Error;
use crate::estimate_workload::{ModelSource, WorkloadRequest, estimate_workload};
use gpuplan_catalog::Catalog;
use gpuplan_model::{
    Architecture, CalibrationProfile, Checkpointing, Engine, LoraTargets, Optimizer, Precision, Task, TransformerSpec,
};
use gpuplan_telemetry::{PocReport, PocRun, PocShape, scaling_efficiency};
use serde::Serialize;

/// Sequence length when none is given (the estimators' default for training).
const DEFAULT_SEQ: u64 = 2048;
/// Timed steps and tokens: enough to average out launch jitter in seconds of GPU time.
const DEFAULT_STEPS: u64 = 10;
const WARMUP_STEPS: u64 = 3;
const PROMPT_TOKENS: u64 = 512;
const DECODE_TOKENS: u64 = 64;
/// LoRA's rank when none is given (PEFT's examples and the estimators' default).
const DEFAULT_LORA_RANK: u64 = 16;

/// What to run.
#[derive(Debug, Clone)]
pub struct PocRequest {
    pub model: String,
    pub task: Task,
    pub seq: Option<u64>,
    pub micro_batch: Option<u64>,
    pub lora_rank: Option<u64>,
    pub checkpointing: bool,
    pub steps: Option<u64>,
}

fn dense_decoder(catalog: &Catalog, model: &str) -> Result<TransformerSpec, Error> {
    let spec = crate::resolve::model(catalog, &ModelSource::BuiltIn(model.to_string()))?;
    let refuse = |why: &str| {
        Error::invalid(
            format!("--poc --model {model}: {why}"),
            Some("the proof of concept runs dense decoder-only transformers (Llama, Mistral, Qwen, …)".to_string()),
        )
    };
    match spec.architecture {
        Architecture::Transformer(t) if t.moe.is_some() || t.mla.is_some() => {
            Err(refuse("mixture-of-experts and latent attention are not built"))
        }
        Architecture::Transformer(t) if t.generates() && t.decoder_layers == 0 && t.image.is_none() => Ok(t),
        _ => Err(refuse("not a decoder-only text transformer")),
    }
}

/// The shape and settings the benchmark runs for `request`.
pub fn poc_shape(catalog: &Catalog, request: &PocRequest) -> Result<PocShape, Error> {
    crate::with_fitted(catalog, || poc_shape_in(catalog, request))
}

fn poc_shape_in(catalog: &Catalog, request: &PocRequest) -> Result<PocShape, Error> {
    let t = dense_decoder(catalog, &request.model)?;
    let task = match request.task {
        Task::Lora => "lora",
        Task::Pretrain | Task::Finetune => "full",
        other => {
            return Err(Error::invalid(
                format!("--poc --task {other}: the proof of concept trains with pretrain, finetune or lora"),
                Some("decode is measured with every task".to_string()),
            ));
        }
    };
    let seq = request.seq.unwrap_or(DEFAULT_SEQ.min(t.max_context.max(1)));
    let mut linear = vec!["q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj"];
    if t.gated_ffn {
        linear.push("gate_proj");
    }
    Ok(PocShape {
        hidden: t.hidden,
        layers: t.layers,
        heads: t.heads,
        kv_heads: t.kv_heads,
        head_dim: t.head_dim,
        ffn: t.ffn,
        gated_ffn: t.gated_ffn,
        vocab: t.vocab,
        task: task.to_string(),
        lora_targets: linear.into_iter().map(String::from).collect(),
        lora_rank: request.lora_rank.unwrap_or(DEFAULT_LORA_RANK),
        precision: "bf16".to_string(),
        micro_batch: request.micro_batch.unwrap_or(1),
        seq,
        checkpointing: request.checkpointing,
        warmup_steps: WARMUP_STEPS,
        steps: request.steps.unwrap_or(DEFAULT_STEPS),
        prompt_tokens: PROMPT_TOKENS,
        decode_tokens: DECODE_TOKENS,
        device: "cuda".to_string(),
    })
}

/// One measured figure against its estimates.
#[derive(Debug, Clone, Serialize)]
pub struct PocFigure {
    pub what: String,
    pub measured: f64,
    pub estimated: f64,
    /// The estimate on the calibrated GPU, when a calibration was given.
    pub calibrated: Option<f64>,
    pub unit: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PocComparison {
    pub gpus: u32,
    /// The catalog GPU the run's device is.
    pub gpu: String,
    pub oom: bool,
    /// Whether the estimate expected it to fit.
    pub estimated_fit: bool,
    pub figures: Vec<PocFigure>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PocAnswer {
    pub report: PocReport,
    pub runs: Vec<PocComparison>,
    /// Several GPUs' throughput over the GPU count times one GPU's: measured, estimated.
    pub scaling_efficiency: Option<(f64, f64)>,
    /// What the comparison rests on.
    pub notes: Vec<String>,
}

/// The estimate of `shape` on `gpus` of `gpu` (`task` is the catalog's).
fn estimate(
    catalog: &Catalog,
    report: &PocReport,
    gpu: &str,
    gpus: u32,
    task: Task,
    calibration: Option<&CalibrationProfile>,
) -> Result<crate::EstimateAnswer, Error> {
    let shape = &report.shape;
    let mut request = WorkloadRequest::new(ModelSource::BuiltIn(report.model.clone()), task, gpu);
    request.gpus = Some(gpus);
    request.precision = Some(Precision::Bf16);
    request.calibration = calibration.cloned();
    if task == Task::Inference {
        // The benchmark decodes in eager PyTorch: a kernel launch per operation, no CUDA graphs.
        request.engine = Some(Engine::Pytorch);
        request.batch = Some(1);
        request.seq = Some(shape.prompt_tokens);
        request.output_tokens = Some(shape.decode_tokens);
    } else {
        request.seq = Some(shape.seq);
        request.micro_batch = Some(shape.micro_batch);
        request.batch = Some(shape.micro_batch * u64::from(gpus));
        request.zero = Some(0);
        request.optimizer = Some(Optimizer::AdamW);
        request.checkpointing = Some(if shape.checkpointing {
            Checkpointing::Full
        } else {
            Checkpointing::None
        });
        if task == Task::Lora {
            request.lora_rank = Some(shape.lora_rank);
            request.lora_targets = Some(LoraTargets::AllLinear);
        }
    }
    estimate_workload(catalog, &request)
}

fn figure(what: &str, unit: &str, measured: Option<f64>, estimated: f64, calibrated: Option<f64>) -> Option<PocFigure> {
    Some(PocFigure {
        what: what.to_string(),
        measured: measured?,
        estimated,
        calibrated,
        unit: unit.to_string(),
    })
}

fn compare_run(
    catalog: &Catalog,
    report: &PocReport,
    run: &PocRun,
    task: Task,
    calibration: Option<&CalibrationProfile>,
) -> Result<(PocComparison, Option<f64>), Error> {
    let gpu = catalog
        .accelerators()
        .resolve_one(&run.device_name)
        .map_err(|e| Error::invalid(format!("the proof of concept ran on {e}"), e.hint()))?
        .accelerator
        .id
        .to_string();
    let training = estimate(catalog, report, &gpu, run.gpus, task, None)?;
    let calibrated = calibration
        .map(|c| estimate(catalog, report, &gpu, run.gpus, task, Some(c)))
        .transpose()?;
    let trained = |answer: &crate::EstimateAnswer| answer.estimate.training.as_ref().map(|t| t.tokens_per_second);
    let mut figures = Vec::new();
    if let Some(estimated) = trained(&training) {
        figures.extend(figure(
            "training throughput",
            "tokens/s",
            run.tokens_per_second,
            estimated,
            calibrated.as_ref().and_then(trained),
        ));
    }
    figures.extend(figure(
        "training memory allocated (peak)",
        "GiB",
        run.training_peak_memory_bytes.map(|b| b as f64 / GIB),
        training.estimate.memory.allocated().0 as f64 / GIB,
        None,
    ));
    if run.gpus == 1 {
        let decode = estimate(catalog, report, &gpu, 1, Task::Inference, None)?;
        let calibrated_decode = calibration
            .map(|c| estimate(catalog, report, &gpu, 1, Task::Inference, Some(c)))
            .transpose()?;
        let per_token = |a: &crate::EstimateAnswer| a.estimate.inference.as_ref().map(|i| i.tpot_seconds * MS);
        if let Some(estimated) = per_token(&decode) {
            figures.extend(figure(
                "decode time per token (batch 1)",
                "ms",
                run.decode_seconds_per_token.map(|s| s * MS),
                estimated,
                calibrated_decode.as_ref().and_then(per_token),
            ));
        }
    }
    Ok((
        PocComparison {
            gpus: run.gpus,
            gpu,
            oom: run.oom,
            estimated_fit: training.fits,
            figures,
        },
        trained(&training),
    ))
}

const GIB: f64 = (1u64 << 30) as f64;
const MS: f64 = 1e3;

/// The runs of `report` against the estimates of the same settings.
pub fn compare_poc(
    catalog: &Catalog,
    report: PocReport,
    calibration: Option<&CalibrationProfile>,
) -> Result<PocAnswer, Error> {
    let task: Task = report
        .task
        .parse()
        .map_err(|_| Error::invalid(format!("the report's task `{}` is not a task", report.task), None))?;
    let mut runs = Vec::new();
    let mut estimated_rates = Vec::new();
    for run in &report.runs {
        let (comparison, rate) = compare_run(catalog, &report, run, task, calibration)?;
        runs.push(comparison);
        estimated_rates.push((run.gpus, rate));
    }
    let one = report.runs.iter().position(|r| r.gpus == 1);
    let many = report.runs.iter().position(|r| r.gpus > 1);
    let scaling = one.zip(many).and_then(|(i, j)| {
        let measured = scaling_efficiency(&report.runs[i], &report.runs[j])?;
        let (gpus, many_rate) = estimated_rates[j];
        let estimated = many_rate? / (f64::from(gpus) * estimated_rates[i].1?);
        Some((measured, estimated))
    });
    let notes = vec![
        format!(
            "the benchmark is a PyTorch decoder of the model's shape (random weights, scaled_dot_product_attention, \
             AdamW{}), not the framework you will train with; measured memory is torch.cuda.max_memory_allocated, \
             compared with the estimate's weights, gradients, optimizer and activations",
            if report.shape.task == "lora" {
                ", LoRA on all linear layers"
            } else {
                ", fp32 weights with bf16 autocast"
            }
        ),
        format!(
            "micro-batch {} × {} tokens, no gradient accumulation; data parallel (DDP) on several GPUs",
            report.shape.micro_batch, report.shape.seq
        ),
    ];
    Ok(PocAnswer {
        report,
        runs,
        scaling_efficiency: scaling,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(model: &str, task: Task) -> PocRequest {
        PocRequest {
            model: model.to_string(),
            task,
            seq: None,
            micro_batch: None,
            lora_rank: None,
            checkpointing: false,
            steps: None,
        }
    }

    #[test]
    fn a_llama_shape_is_read_from_the_catalog() {
        let catalog = Catalog::embedded().unwrap();
        let shape = poc_shape(&catalog, &request("llama-3.1-8b", Task::Lora)).unwrap();
        assert_eq!(
            (shape.hidden, shape.layers, shape.heads, shape.kv_heads),
            (4096, 32, 32, 8)
        );
        assert_eq!((shape.ffn, shape.vocab, shape.seq), (14336, 128_256, 2048));
        assert!(shape.gated_ffn && shape.lora_targets.contains(&"gate_proj".to_string()));
        assert_eq!(shape.task, "lora");
    }

    #[test]
    fn what_the_benchmark_cannot_build_is_refused() {
        let catalog = Catalog::embedded().unwrap();
        let error = poc_shape(&catalog, &request("llama-3.1-8b", Task::Inference)).unwrap_err();
        assert!(error.to_string().contains("pretrain, finetune or lora"), "{error}");
        let error = poc_shape(&catalog, &request("mixtral-8x7b", Task::Lora)).unwrap_err();
        assert!(error.to_string().contains("mixture-of-experts"), "{error}");
    }
}
