use crate::args::{ObjectiveArg, PlanArgs};
use crate::output;
use gpuplan::emit::Money;
use gpuplan::emit::wire::{InfeasibleJson, PlanJson};
use gpuplan::emit::{OutputFormat, infeasible_report, plan_explanation, plan_table};
use gpuplan::model::{RequestMix, Task};
use gpuplan::{Catalog, Error, ExitStatus, PlanOptions, TabularQuery, plan_tabular_workload, plan_workload};

fn run_tabular(
    catalog: &Catalog,
    args: &PlanArgs,
    query: &TabularQuery,
    format: OutputFormat,
    money: &Money,
) -> Result<ExitStatus, Error> {
    let (rows, features) = (query.rows, query.features);
    let answer = plan_tabular_workload(catalog, query)?;
    let (options, defaults, assumptions) = (&answer.options, &answer.defaults, &answer.assumptions);
    if let Some(shortfall) = &answer.shortfall {
        let wire = InfeasibleJson {
            feasible: false,
            candidates_evaluated: 0,
            rejected_counts: Default::default(),
            nearest: Vec::new(),
            suggestion: Some(shortfall.clone()),
        };
        match format {
            OutputFormat::Json => output::json(&wire)?,
            _ => output::report(&infeasible_report(&wire)),
        }
        return Ok(ExitStatus::Infeasible);
    }
    let wire = PlanJson::from_tabular(options, args.top, defaults, gpuplan::Naming::Flags, assumptions);
    match format {
        OutputFormat::Json => output::json(&wire)?,
        OutputFormat::Table => {
            let objective = if query.by_time { "time" } else { "cost" };
            let header = format!("tabular · {rows:.0} rows × {features:.0} features · best by {objective}\n");
            let body = crate::output::terminal().export_table(&plan_table(&wire, false, money));
            output::report(&format!(
                "{header}{body}{}",
                plan_explanation(&wire, args.explain, money)
            ));
        }
        _ => output::listing(format, &plan_table(&wire, false, money), &wire)?,
    }
    Ok(ExitStatus::Success)
}

/// The flags as the options every front end fills.
fn options(catalog: &Catalog, args: &PlanArgs, model: &str, task: &str) -> Result<PlanOptions, Error> {
    let operations = &args.operations;
    Ok(PlanOptions {
        workload: super::workload_options(catalog, &args.workload, model, task)?,
        knobs: args.workload.knobs,
        unknown: Default::default(),
        precision: args.precision.clone(),
        deadline: args.deadline,
        budget: args.budget,
        max_hourly_price: args.max_hourly_price,
        peak_qps: args.peak_qps,
        headroom: args.headroom,
        providers: args.providers.clone(),
        regions: args.regions.clone(),
        family: args.family.clone(),
        sla: args.sla,
        compliance: args.compliance.clone(),
        countries: args.countries.clone(),
        gpu: args.gpu.clone(),
        exclude_gpu: args.exclude_gpu.clone(),
        billing: args.billing.clone(),
        spot: args.spot,
        max_gpus: args.max_gpus,
        max_nodes: args.max_nodes,
        min_vcpus_per_gpu: args.min_vcpus_per_gpu,
        min_host_memory_per_gpu: args.min_host_memory_per_gpu,
        min_vcpus: args.min_vcpus,
        min_memory: args.min_memory,
        min_disk: args.min_disk,
        compute_capability: args.compute_capability.clone(),
        objective: match args.objective {
            ObjectiveArg::Cost => "cost",
            ObjectiveArg::Time => "time",
            ObjectiveArg::Balanced => "balanced",
        }
        .to_string(),
        top: args.top,
        tolerance: args.tolerance,
        stack: operations.stack.clone(),
        trust_prices: operations.trust_prices,
        utilisation: operations.utilisation,
        interruption_rate: operations.interruption_rate,
        provision_time: operations.provision_time,
        image_size: operations.image_size,
        storage_gbps: operations.storage_gbps,
        input_pipeline: operations.input_pipeline.clone(),
        stream_dataset: operations.stream_dataset,
        checkpoint_every: operations.checkpoint_every,
        cuda: args.cuda.clone(),
        kind: args.workload_kind.clone(),
        rows: args.rows,
        features: args.features,
        rounds: args.rounds,
    })
}

pub fn run(catalog: &Catalog, args: &PlanArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    let options = plan_options(catalog, args)?;
    if let Some(tabular) = options.tabular_query()? {
        return run_tabular(catalog, args, &tabular, format, money);
    }
    if args.export.is_some() && (format != OutputFormat::Table || args.explain) {
        return Err(Error::invalid(
            "--export writes YAML: --format and --explain do not apply",
            Some("save the plan with --format json and export it with `gpuplan export plan.json --to …`".to_string()),
        ));
    }
    const EXPORT_ONLY: [&str; 7] = ["pick", "out", "flavour", "image", "storage_class", "name", "namespace"];
    if let Some(flag) = EXPORT_ONLY
        .iter()
        .find(|f| args.export.is_none() && args.given.iter().any(|g| g == *f))
    {
        return Err(Error::invalid(
            format!("--{flag} applies to --export only"),
            Some("add --export k8s, skypilot or skyserve, or drop it".to_string()),
        ));
    }
    // A field the job file set (and no flag overrode) is named as the file names it.
    let from_file = |error: Error| match (&args.file, error.field()) {
        (Some(path), Some(field)) if !args.given.iter().any(|g| g == field.key()) => {
            error.in_file(path.display().to_string())
        }
        _ => error,
    };
    let query = options.query().map_err(from_file)?;
    let task = query.task;

    // A batch of requests is a job with a time and a total, like training.
    let online_serving = task == Task::Inference && options.workload.dataset_size.is_none();
    match plan_workload(catalog, &query).map_err(from_file)? {
        Ok(answer) => {
            let mut wire = answer.wire(gpuplan::Naming::Flags);
            wire.request = serde_json::to_value(&options).ok();
            if let Some(target) = args.export {
                return super::export::write(catalog, &wire, target, &args.export_settings);
            }
            match format {
                OutputFormat::Json => output::json(&wire)?,
                OutputFormat::Table => {
                    let serving = online_serving;
                    let table = plan_table(&wire, serving, money);
                    let header = format!(
                        "{} · {} · {} configurations, best by {}\n",
                        answer.model.id,
                        task,
                        wire.recommendations.len(),
                        query.objective
                    );
                    let body = crate::output::terminal().export_table(&table);
                    output::report(&format!(
                        "{header}{body}{}",
                        plan_explanation(&wire, args.explain, money)
                    ));
                }
                _ => output::listing(format, &plan_table(&wire, online_serving, money), &wire)?,
            }
            Ok(ExitStatus::Success)
        }
        Err(infeasible) => {
            let wire = InfeasibleJson::new(infeasible.as_ref(), gpuplan::Naming::Flags);
            match format {
                OutputFormat::Json => output::json(&wire)?,
                _ => output::report(&infeasible_report(&wire)),
            }
            Ok(ExitStatus::Infeasible)
        }
    }
}

/// The plan's options: the job file's (`-f`), with every flag given on the command line in
/// place of the file's value; without a file, the flags.
fn plan_options(catalog: &Catalog, args: &PlanArgs) -> Result<PlanOptions, Error> {
    let Some(path) = &args.file else {
        return options(
            catalog,
            args,
            args.model.as_deref().unwrap_or_default(),
            args.task.as_deref().unwrap_or_default(),
        );
    };
    let mut merged = read_job_file(catalog, path)?;
    let from_flags = options(
        catalog,
        args,
        args.model.as_deref().unwrap_or_default(),
        args.task.as_deref().unwrap_or_default(),
    )?;
    let flags = serde_json::to_value(&from_flags).map_err(|e| Error::invalid(format!("the flags: {e}"), None))?;
    for id in &args.given {
        // A given number that JSON cannot hold (NaN, infinity) serialises to null: refused
        // here as it is without a file, never dropped.
        if flags.get(id.as_str()).is_some_and(serde_json::Value::is_null) && id != "model" {
            return Err(Error::invalid(
                format!("--{}: not a finite number", id.replace('_', "-")),
                Some("give a finite number".to_string()),
            ));
        }
        let keys: &[&str] = if id == "model" {
            &["model", "model_config", "checkpoint_index"]
        } else {
            &[id.as_str()]
        };
        for key in keys {
            if let Some(value) = flags.get(key) {
                merged.insert(key.to_string(), value.clone());
            }
        }
    }
    let tabular = merged.contains_key("workload");
    for required in ["model", "task"] {
        if !tabular && !merged.contains_key(required) {
            return Err(Error::invalid(
                format!("{}: no `{required}`", path.display()),
                Some(format!("add `{required}: …` to the file, or give --{required}")),
            ));
        }
    }
    let mut options: PlanOptions = serde_json::from_value(serde_json::Value::Object(merged))
        .map_err(|e| Error::invalid(format!("{}: {e}", path.display()), None))?;
    if from_flags.workload.requests.is_some() {
        options.workload.requests = from_flags.workload.requests;
    }
    Ok(options)
}

/// A job file's options, its model's config read when `model` names a file (relative to the
/// job file).
fn read_job_file(
    catalog: &Catalog,
    path: &std::path::Path,
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    // `-f -` reads the job from standard input (YAML, which also reads JSON).
    let (text, name) = if path == std::path::Path::new("-") {
        (read_stdin_job()?, "<stdin>".to_string())
    } else {
        let text = crate::input_file::read(
            "--file",
            path,
            crate::input_file::MAX_CONFIG_BYTES,
            "give a YAML or TOML job file (`gpuplan init` writes an example)",
        )?;
        (text, path.display().to_string())
    };
    let mut map = gpuplan::parse_job(&text, gpuplan::JobFormat::detect(&name, &text), &name)?;
    if let Some(serde_json::Value::String(model)) = map.get("model").cloned() {
        // A config.json beside the job file, or a Hub id (`Qwen/Qwen3-32B`) as on the command
        // line.
        let beside = path.parent().unwrap_or(std::path::Path::new(".")).join(&model);
        let files = if beside.is_file() || model.ends_with(".json") {
            super::estimate::model_files(catalog, &beside.to_string_lossy())?
        } else {
            super::estimate::model_files(catalog, &model)?
        };
        if let Some(config) = files.config {
            map.insert("model".to_string(), serde_json::Value::String(files.name));
            map.insert("model_config".to_string(), config);
            if let Some(index) = files.checkpoint_index {
                map.insert("checkpoint_index".to_string(), serde_json::Value::String(index));
            }
        }
    }
    if let Some(serde_json::Value::String(file)) = map.get("calibration").cloned() {
        let beside = path.parent().unwrap_or(std::path::Path::new(".")).join(file);
        let profile = super::probe::read_calibration(&beside)?;
        let value = serde_json::to_value(profile).map_err(|e| Error::invalid(format!("{name}: {e}"), None))?;
        map.insert("calibration".to_string(), value);
    }
    Ok(map)
}

/// A job file piped in, at most as large as one on disk.
fn read_stdin_job() -> Result<String, Error> {
    use std::io::Read;
    let mut text = String::new();
    let limit = crate::input_file::MAX_CONFIG_BYTES;
    std::io::stdin()
        .take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::invalid(format!("--file -: standard input could not be read: {e}"), None))?;
    if text.len() as u64 > limit {
        return Err(Error::invalid(
            format!("--file -: more than {limit} bytes on standard input"),
            Some("a job file is a short YAML or TOML mapping".to_string()),
        ));
    }
    Ok(text)
}

/// Reads a request log (CSV or JSON Lines of input and output token counts).
pub(crate) fn read_request_log(path: &std::path::Path) -> Result<RequestMix, Error> {
    let text = crate::input_file::read(
        "--requests",
        path,
        crate::input_file::MAX_REQUEST_LOG_BYTES,
        "give a CSV or JSON Lines file of input and output token counts",
    )?;
    gpuplan::parse_request_log(&text, &path.display().to_string())
}
