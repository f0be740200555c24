use crate::args::EstimateArgs;
use crate::output;
use gpuplan::emit::wire::EstimateJson;
use gpuplan::emit::{OutputFormat, Table, estimate_report};
use gpuplan::{Catalog, Error, ExitStatus, ModelSource, ServingQuestion, WorkloadRequest, estimate_workload};
use std::path::Path;
use std::str::FromStr;

pub(crate) fn parse<T: FromStr<Err = E>, E: ToString>(flag: &str, value: &Option<String>) -> Result<Option<T>, Error> {
    value
        .as_deref()
        .map(|text| {
            text.parse::<T>().map_err(|e| Error::InvalidInput {
                message: format!("--{flag}: {}", e.to_string()),
                hint: None,
            })
        })
        .transpose()
}

/// A built-in model name, or a config.json read from disk.
pub(crate) fn model_source(model: &str) -> Result<ModelSource, Error> {
    let path = Path::new(model);
    if path.is_file() {
        let text = crate::input_file::read(
            "--model",
            path,
            crate::input_file::MAX_CONFIG_BYTES,
            "give the path of a Hugging Face config.json, or a built-in model id",
        )?;
        return Ok(ModelSource::Config {
            name: model.to_string(),
            text,
        });
    }
    if model.ends_with(".json") {
        return Err(Error::InvalidInput {
            message: format!("{model}: no such file"),
            hint: Some("give the path of a Hugging Face config.json, or a built-in model id".to_string()),
        });
    }
    Ok(ModelSource::BuiltIn(model.to_string()))
}

pub fn run(catalog: &Catalog, args: &EstimateArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    let task = args.task.parse().map_err(|message| Error::InvalidInput {
        message: format!("--task: {message}"),
        hint: None,
    })?;
    let mut request = WorkloadRequest::new(model_source(&args.model)?, task, &args.gpu);
    request.gpus = args.gpus;
    request.gpus_per_node = args.gpus_per_node;
    request.precision = parse("precision", &args.precision)?;
    request.batch = args.batch;
    request.micro_batch = args.micro_batch;
    request.seq = args.seq;
    request.output_tokens = args.output_tokens;
    request.tp = args.tp;
    request.pp = args.pp;
    request.cp = args.cp;
    request.ep = args.ep;
    request.zero = args.zero;
    request.checkpointing = parse("checkpointing", &args.checkpointing)?;
    request.framework = parse("framework", &args.framework)?;
    request.offload = parse("offload", &args.offload)?;
    request.packing = args.step.packing();
    request.compiled = args.step.compile;
    request.kv_cache = parse("kv-cache-dtype", &args.kv_cache_dtype)?;
    request.optimizer = parse("optimizer", &args.optimizer)?;
    request.lora_rank = args.lora_rank;
    request.lora_targets = parse("lora-targets", &args.lora_targets)?;
    request.engine = parse("engine", &args.engine)?;
    request.flash_attention = args.flash_attention;
    request.image = args.image.settings();
    request.tokens = args.tokens;
    request.epochs = args.epochs;
    request.dataset_size = args.dataset_size;
    request.memory_margin = args.memory_margin;
    request.serving = ServingQuestion {
        qps: args.qps,
        ttft: args.ttft,
        tpot: args.tpot,
        requests: args
            .requests
            .as_deref()
            .map(super::plan::read_request_log)
            .transpose()?,
        prefix_cache_hit: args.prefix_cache_hit,
    };

    let answer = estimate_workload(catalog, &request)?;
    for note in &answer.notes {
        output::eprintln_note(note);
    }
    let wire = EstimateJson::new(
        &answer.model,
        &answer.accelerator,
        answer.gpus,
        answer.gpus_per_node,
        &answer.workload,
        &answer.estimate,
        &answer.defaults,
    )
    .with_margin(answer.memory_margin, answer.nearest_fit.clone())
    .with_serving(answer.serving.clone());
    match format {
        OutputFormat::Table => output::text(&estimate_report(&wire)),
        OutputFormat::Json => output::json(&wire)?,
        _ => output::listing(format, &summary_table(&wire), &wire)?,
    }
    // Like `plan`: a workload that does not fit is "nothing feasible".
    Ok(if answer.fits {
        ExitStatus::Success
    } else {
        ExitStatus::Infeasible
    })
}

/// One row of the key figures, for CSV and Markdown.
fn summary_table(e: &EstimateJson) -> Table {
    let mut table = Table::new([
        "model",
        "gpu",
        "gpus",
        "task",
        "memory_per_gpu_gib",
        "capacity_gib",
        "fits",
        "tokens_per_second",
        "mfu",
        "time_seconds",
        "ttft_seconds",
        "tpot_seconds",
    ]);
    let gib = |bytes: u64| format!("{:.2}", bytes as f64 / 1024f64.powi(3));
    let opt = |value: Option<f64>| value.map_or(String::new(), |v| format!("{v:.6}"));
    table.push_row([
        e.model.id.clone(),
        e.gpu.id.clone(),
        e.gpus.to_string(),
        e.workload.task.clone(),
        gib(e.memory.per_gpu_bytes),
        gib(e.memory.capacity_bytes),
        e.memory.fits.to_string(),
        opt(e.training.as_ref().map(|t| t.tokens_per_second)),
        opt(e.training.as_ref().map(|t| t.mfu)),
        opt(e.training.as_ref().and_then(|t| t.time_seconds)),
        opt(e.inference.as_ref().map(|i| i.ttft_seconds)),
        opt(e.inference.as_ref().map(|i| i.tpot_seconds)),
    ]);
    table
}
