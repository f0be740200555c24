use super::estimate::{model_source, parse};
use crate::args::{ObjectiveArg, OperationsArgs, PlanArgs};
use crate::output;
use gpuplan::emit::Money;
use gpuplan::emit::wire::{InfeasibleJson, PlanJson};
use gpuplan::emit::{OutputFormat, infeasible_report, plan_explanation, plan_table};
use gpuplan::model::{BillingMode, Precision, RequestMix, SoftwareStack, Task};
use gpuplan::planner::{InputSettings, Objective, Operational, ServingTargets, StartupOverrides};
use gpuplan::{Catalog, Error, ExitStatus, PlanQuery, TabularQuery, plan_tabular_workload, plan_workload};

pub(crate) fn billing(text: &str) -> Result<BillingMode, Error> {
    match text.trim().to_lowercase().as_str() {
        "on-demand" | "ondemand" | "od" => Ok(BillingMode::OnDemand),
        "spot" | "preemptible" => Ok(BillingMode::Spot),
        "reserved-1y" | "1y" | "reserved" => Ok(BillingMode::Reserved1y),
        "reserved-3y" | "3y" => Ok(BillingMode::Reserved3y),
        other => Err(Error::InvalidInput {
            message: format!("--billing: unknown billing mode `{other}`"),
            hint: Some("use on-demand, spot, reserved-1y or reserved-3y".to_string()),
        }),
    }
}

fn billing_modes(args: &PlanArgs) -> Result<Vec<BillingMode>, Error> {
    let mut modes: Vec<BillingMode> = args.billing.iter().map(|b| billing(b)).collect::<Result<_, _>>()?;
    if args.spot && !modes.contains(&BillingMode::Spot) {
        modes.push(BillingMode::Spot);
    }
    Ok(modes)
}

fn run_tabular(catalog: &Catalog, args: &PlanArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    let (Some(rows), Some(features)) = (args.rows, args.features) else {
        return Err(Error::InvalidInput {
            message: "--workload tabular needs --rows and --features".to_string(),
            hint: Some("e.g. --workload tabular --rows 5e6 --features 200".to_string()),
        });
    };
    let query = TabularQuery {
        rows,
        features,
        rounds: args.rounds,
        providers: args.providers.clone(),
        regions: args.regions.clone(),
        billing: billing_modes(args)?,
        deadline_hours: args.deadline,
        budget_usd: args.budget,
        by_time: args.objective == ObjectiveArg::Time,
    };
    let (options, defaults, assumptions) = plan_tabular_workload(catalog, &query)?;
    if options.is_empty() {
        let wire = InfeasibleJson {
            feasible: false,
            candidates_evaluated: 0,
            rejected_counts: Default::default(),
            nearest: Vec::new(),
            suggestion: Some("relax the deadline or budget, or allow more providers".to_string()),
        };
        match format {
            OutputFormat::Json => output::json(&wire)?,
            _ => output::text(&infeasible_report(&wire)),
        }
        return Ok(ExitStatus::Infeasible);
    }
    let wire = PlanJson::from_tabular(&options, args.top, &defaults, &assumptions);
    match format {
        OutputFormat::Json => output::json(&wire)?,
        OutputFormat::Table => {
            let objective = if args.objective == ObjectiveArg::Time {
                "time"
            } else {
                "cost"
            };
            let header = format!("tabular · {rows:.0} rows × {features:.0} features · best by {objective}\n");
            let body = gpuplan::emit::TerminalExporter.export_table(&plan_table(&wire, false, money));
            output::text(&format!(
                "{header}{body}{}",
                plan_explanation(&wire, args.explain, money)
            ));
        }
        _ => output::listing(format, &plan_table(&wire, false, money), &wire)?,
    }
    Ok(ExitStatus::Success)
}

fn non_negative(flag: &str, value: Option<f64>) -> Result<Option<f64>, Error> {
    match value {
        Some(v) if !(v >= 0.0 && v.is_finite()) => Err(Error::InvalidInput {
            message: format!("{flag} must be zero or more, found {v}"),
            hint: None,
        }),
        other => Ok(other),
    }
}

fn positive(flag: &str, value: Option<f64>) -> Result<Option<f64>, Error> {
    match value {
        Some(v) if !(v > 0.0 && v.is_finite()) => Err(Error::InvalidInput {
            message: format!("{flag} must be a positive number, found {v}"),
            hint: None,
        }),
        other => Ok(other),
    }
}

fn operational(args: &OperationsArgs) -> Result<Operational, Error> {
    let stacks = args
        .stack
        .iter()
        .map(|s| {
            s.parse::<SoftwareStack>().map_err(|message| Error::InvalidInput {
                message: format!("--stack: {message}"),
                hint: None,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Operational {
        startup: StartupOverrides {
            provision_seconds: args.provision_time,
            image_gb: non_negative("--image-size", args.image_size)?,
            storage_gbps: positive("--storage-gbps", args.storage_gbps)?,
            checkpoint_interval_hours: args.checkpoint_every,
            dataset_bytes: None,
        },
        interruption_rate: args.interruption_rate,
        utilisation: args.utilisation,
        trust_prices: args.trust_prices,
        stacks,
        batch_requests: None,
        input: InputSettings {
            pipeline: args.input_pipeline.clone(),
            stream_dataset: args.stream_dataset,
            image_bytes: None,
        },
    })
}

pub fn run(catalog: &Catalog, args: &PlanArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    if args.workload.is_some() {
        return run_tabular(catalog, args, format, money);
    }
    let (Some(model), Some(task)) = (&args.model, &args.task) else {
        return Err(Error::InvalidInput {
            message: "--model and --task are required".to_string(),
            hint: None,
        });
    };
    let task: Task = task.parse().map_err(|message| Error::InvalidInput {
        message: format!("--task: {message}"),
        hint: None,
    })?;
    let mut query = PlanQuery::new(model_source(model)?, task);
    query.precisions = args
        .precision
        .iter()
        .map(|p| {
            p.parse::<Precision>().map_err(|e| Error::InvalidInput {
                message: format!("--precision: {e}"),
                hint: None,
            })
        })
        .collect::<Result<_, _>>()?;
    query.batch = args.batch;
    query.micro_batch = args.micro_batch;
    query.seq = args.seq;
    query.output_tokens = args.output_tokens;
    query.checkpointing = parse("checkpointing", &args.checkpointing)?;
    query.framework = parse("framework", &args.framework)?;
    query.offload = parse("offload", &args.offload)?;
    query.packing = args.step.packing();
    query.compiled = args.step.compile;
    query.kv_cache = parse("kv-cache-dtype", &args.kv_cache_dtype)?;
    query.optimizer = parse("optimizer", &args.optimizer)?;
    query.lora_rank = args.lora_rank;
    query.lora_targets = parse("lora-targets", &args.lora_targets)?;
    query.engine = parse("engine", &args.engine)?;
    query.image = args.image.settings();
    query.tokens = args.tokens;
    query.epochs = args.epochs;
    query.dataset_size = args.dataset_size;
    query.deadline_hours = args.deadline;
    query.budget_usd = args.budget;
    query.serving = ServingTargets {
        qps: args.qps,
        peak_qps: args.peak_qps,
        ttft: args.ttft,
        tpot: args.tpot,
        requests: args.requests.as_deref().map(read_request_log).transpose()?,
    };
    query.prefix_cache_hit = args.prefix_cache_hit;
    query.providers = args.providers.clone();
    query.regions = args.regions.clone();
    query.gpus = args.gpu.clone();
    query.exclude_gpus = args.exclude_gpu.clone();
    query.billing = billing_modes(args)?;
    query.max_gpus = args.max_gpus;
    query.max_nodes = args.max_nodes;
    query.memory_margin = args.memory_margin;
    query.min_vcpus_per_gpu = args.min_vcpus_per_gpu;
    query.min_host_memory_gib_per_gpu = args.min_host_memory_per_gpu;
    query.objective = match args.objective {
        ObjectiveArg::Cost => Objective::Cost,
        ObjectiveArg::Time => Objective::Time,
        ObjectiveArg::Balanced => Objective::Balanced,
    };
    query.top = args.top;
    query.operational = operational(&args.operations)?;

    // A batch of requests is a job with a time and a total, like training.
    let online_serving = task == Task::Inference && args.dataset_size.is_none();
    match plan_workload(catalog, &query)? {
        Ok(answer) => {
            let wire = PlanJson::new(&answer.plan, &answer.defaults);
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
                    let body = gpuplan::emit::TerminalExporter.export_table(&table);
                    output::text(&format!(
                        "{header}{body}{}",
                        plan_explanation(&wire, args.explain, money)
                    ));
                }
                _ => output::listing(format, &plan_table(&wire, online_serving, money), &wire)?,
            }
            Ok(ExitStatus::Success)
        }
        Err(infeasible) => {
            let wire = InfeasibleJson::from(infeasible.as_ref());
            match format {
                OutputFormat::Json => output::json(&wire)?,
                _ => output::text(&infeasible_report(&wire)),
            }
            Ok(ExitStatus::Infeasible)
        }
    }
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
