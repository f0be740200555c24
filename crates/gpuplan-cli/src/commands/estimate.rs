use crate::args::EstimateArgs;
use crate::output;
use gpuplan::emit::wire::EstimateJson;
use gpuplan::emit::{OutputFormat, Table, estimate_report};
use gpuplan::{Catalog, Error, EstimateOptions, ExitStatus, estimate_workload};
use std::path::Path;

/// A model as the command line and job files name it: its name, its config.json's text (for
/// a file or a Hub id) and its checkpoint's safetensors index (for a Hub id whose repository
/// has one, or a config.json with one beside it).
pub(crate) struct ModelFiles {
    pub name: String,
    pub config: Option<serde_json::Value>,
    pub checkpoint_index: Option<String>,
}

impl ModelFiles {
    fn named(name: &str) -> ModelFiles {
        ModelFiles {
            name: name.to_string(),
            config: None,
            checkpoint_index: None,
        }
    }
}

/// A built-in model name, a config.json read from disk, or a Hugging Face Hub id whose
/// config.json is fetched (or read from the Hub's cache).
pub(crate) fn model_files(catalog: &Catalog, model: &str) -> Result<ModelFiles, Error> {
    let path = Path::new(model);
    if path.is_file() && model.to_ascii_lowercase().ends_with(".gguf") {
        let (name, config) = gguf_config(model, path)?;
        return Ok(ModelFiles {
            config,
            ..ModelFiles::named(&name)
        });
    }
    let lower = model.to_ascii_lowercase();
    if path.is_file() && (lower.ends_with(".yaml") || lower.ends_with(".yml")) {
        let text = crate::input_file::read(
            "--model",
            path,
            crate::input_file::MAX_CONFIG_BYTES,
            "give an Ultralytics model YAML, a Hugging Face config.json, or a built-in model id",
        )?;
        let stem = path.file_stem().map_or(model.into(), |s| s.to_string_lossy());
        return Ok(ModelFiles {
            config: Some(gpuplan::ultralytics_model_config(&text, &stem)?),
            ..ModelFiles::named(&stem)
        });
    }
    if path.is_file() {
        let text = crate::input_file::read(
            "--model",
            path,
            crate::input_file::MAX_CONFIG_BYTES,
            "give the path of a Hugging Face config.json, or a built-in model id",
        )?;
        let beside = path.with_file_name("model.safetensors.index.json");
        let checkpoint_index = beside
            .is_file()
            .then(|| {
                crate::input_file::read(
                    "--model",
                    &beside,
                    crate::input_file::MAX_CONFIG_BYTES,
                    "a safetensors index as transformers writes it",
                )
            })
            .transpose()?;
        return Ok(ModelFiles {
            config: Some(serde_json::Value::String(text)),
            checkpoint_index,
            ..ModelFiles::named(model)
        });
    }
    if model.ends_with(".json") {
        return Err(Error::invalid(
            format!("{model}: no such file"),
            Some("give the path of a Hugging Face config.json, or a built-in model id".to_string()),
        ));
    }
    if catalog.models().get(model).is_err() {
        if let Some(id) = crate::hub::HubId::parse(model) {
            let (text, checkpoint_index) = crate::hub::files(&id, crate::hub::Asker::COMMAND_LINE)?;
            return Ok(ModelFiles {
                config: Some(serde_json::Value::String(text)),
                checkpoint_index,
                ..ModelFiles::named(&id.repo)
            });
        }
    }
    Ok(ModelFiles::named(model))
}

/// A llama.cpp GGUF file: its header (metadata precedes the tensors, so the first 64 MiB hold
/// it) read into the config it stands for.
fn gguf_config(model: &str, path: &Path) -> Result<(String, Option<serde_json::Value>), Error> {
    use std::io::Read;
    let refuse = |why: String| {
        Error::invalid(
            format!("--model {model}: {why}"),
            Some(
                "give a GGUF file as llama.cpp's converter writes it, a config.json, or a built-in model id"
                    .to_string(),
            ),
        )
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(64 * 1024 * 1024).read_to_end(&mut bytes))
        .map_err(|e| refuse(format!("cannot be read: {e}")))?;
    let text = gpuplan::catalog::gguf_config_text(&bytes).map_err(|e| refuse(e.to_string()))?;
    let name = path
        .file_stem()
        .map_or(model.to_string(), |s| s.to_string_lossy().into_owned());
    Ok((name, Some(serde_json::Value::String(text))))
}

/// The flags as the options every front end fills.
fn options(catalog: &Catalog, args: &EstimateArgs) -> Result<EstimateOptions, Error> {
    Ok(EstimateOptions {
        workload: super::workload_options(catalog, &args.workload, &args.model, &args.task)?,
        knobs: args.workload.knobs,
        unknown: Default::default(),
        gpu: args.gpu.clone(),
        gpus: args.gpus,
        gpus_per_node: args.gpus_per_node,
        precision: args.precision.clone(),
        tp: args.tp,
        pp: args.pp,
        cp: args.cp,
        ep: args.ep,
        vp: args.vp,
        attention_dp: args.attention_dp.then_some(true),
        ep_overlap: args.ep_overlap.then_some(true),
        zero: args.zero,
        flash_attention: args.flash_attention,
    })
}

pub fn run(catalog: &Catalog, args: &EstimateArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    let request = options(catalog, args)?.request()?;
    let answer = estimate_workload(catalog, &request)?;
    for note in &answer.notes {
        output::eprintln_note(note);
    }
    let wire = answer.wire(gpuplan::Naming::Flags);
    match format {
        OutputFormat::Table => output::report(&estimate_report(&wire)),
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
