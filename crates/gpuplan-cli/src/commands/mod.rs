/// The workload flags `estimate` and `plan` share as the options every front end fills;
/// `model` is an id or a config file's path.
pub(crate) fn workload_options(
    catalog: &gpuplan::Catalog,
    args: &crate::args::WorkloadArgs,
    model: &str,
    task: &str,
) -> Result<gpuplan::WorkloadOptions, Error> {
    let files = estimate::model_files(catalog, model)?;
    Ok(gpuplan::WorkloadOptions {
        model: files.name,
        model_config: files.config,
        checkpoint_index: files.checkpoint_index,
        task: task.to_string(),
        batch: args.batch,
        micro_batch: args.micro_batch,
        seq: args.seq,
        output_tokens: args.output_tokens,
        checkpointing: args.checkpointing.clone(),
        framework: args.framework.clone(),
        offload: args.offload.clone(),
        compile: args.step.compile,
        mean_seq: args.step.mean_seq,
        kv_cache_dtype: args.kv_cache_dtype.clone(),
        optimizer: args.optimizer.clone(),
        optimizer_in_backward: args.optimizer_in_backward,
        lora_rank: args.lora_rank,
        lora_targets: args.lora_targets.clone(),
        engine: args.engine.clone(),
        resolution: args.image.resolution,
        steps: args.image.steps,
        no_guidance: args.image.no_guidance,
        tokens: args.tokens,
        epochs: args.epochs,
        dataset_size: args.dataset_size,
        memory_margin: args.memory_margin,
        qps: args.qps,
        ttft: args.ttft,
        tpot: args.tpot,
        prefix_cache_hit: args.prefix_cache_hit,
        requests: args.requests.as_deref().map(plan::read_request_log).transpose()?,
        calibration: args.calibration.as_deref().map(probe::read_calibration).transpose()?,
    })
}

mod catalog;
mod compat;
mod completions;
mod cost;
mod diff;
mod energy;
mod estimate;
mod export;
mod forecast;
mod gpus;
mod init;
mod instances;
mod man;
mod models;
mod plan;
mod probe;
mod refresh;
mod rightsize;
mod serve;

use crate::args::{Cli, Command};
use crate::catalog_source;
use gpuplan::{Error, ExitStatus};

/// `serve` answers JSON in USD, whatever the terminal flags say; giving them is a mistake.
fn refuse_output_flags(cli: &Cli, command: &str, hint: &str) -> Result<(), Error> {
    let given = if cli.format != crate::args::Format::Table {
        Some("--format")
    } else if !cli.currency.eq_ignore_ascii_case("USD") {
        Some("--currency")
    } else {
        None
    };
    match given {
        Some(flag) => Err(Error::invalid(
            format!("{flag} does not apply to {command}"),
            Some(hint.to_string()),
        )),
        None => Ok(()),
    }
}

/// Runs one command to completion; the answer is printed, the status returned.
pub fn run(cli: Cli) -> Result<ExitStatus, Error> {
    if let Command::Catalog(args) = &cli.command {
        if let Some(crate::args::CatalogAction::Refresh(refresh)) = &args.action {
            refuse_output_flags(
                &cli,
                "catalog refresh",
                "it writes a catalog folder and reports the changes as text; drop the flag",
            )?;
            let base = catalog_source::files(cli.catalog.as_deref())?;
            return refresh::run(base, refresh);
        }
    }
    if let Command::Init(args) = &cli.command {
        refuse_output_flags(&cli, "init", "it writes an example job file; drop the flag")?;
        return init::run(args);
    }
    if let Command::Export(_) = &cli.command {
        refuse_output_flags(
            &cli,
            "export",
            "it writes Kubernetes or SkyPilot YAML, to --out DIR or as one stream; drop the flag",
        )?;
    }
    if let Command::Completions(args) = &cli.command {
        refuse_output_flags(&cli, "completions", "it prints a shell script; drop the flag")?;
        return completions::run(args);
    }
    if let Command::Man(args) = &cli.command {
        refuse_output_flags(&cli, "man", "it writes manual pages in roff; drop the flag")?;
        return man::run(args);
    }
    if let Command::Diff(args) = &cli.command {
        return diff::run(args, cli.output_format());
    }
    if let Command::Serve(_) = &cli.command {
        refuse_output_flags(
            &cli,
            "serve",
            "the API always answers JSON with amounts in USD; drop the flag",
        )?;
    }
    let catalog = catalog_source::load(cli.catalog.as_deref())?;
    // Never freed: the process ends with the command, and releasing the catalog's ten
    // thousand allocations one by one would cost a sixth of a short command's time.
    let catalog = std::mem::ManuallyDrop::new(catalog_source::with_prices(catalog, cli.prices.as_deref())?);
    catalog_source::warn_if_stale(&catalog, cli.catalog.as_deref());
    let money = catalog_source::money(&catalog, &cli.currency)?;
    let format = cli.output_format();
    match cli.command {
        Command::Gpus(args) => gpus::run(&catalog, &args, format),
        Command::Instances(args) => instances::run(&catalog, &args, format, &money),
        Command::Catalog(args) => catalog::run(&catalog, &args, format),
        Command::Models => models::run(&catalog, format),
        Command::Estimate(args) => estimate::run(&catalog, &args, format),
        Command::Plan(args) => plan::run(&catalog, &args, format, &money),
        Command::Cost(args) => cost::run(&catalog, &args, format, &money),
        Command::Energy(args) => energy::run(&catalog, &args, format, &money),
        Command::Forecast(args) => forecast::run(&catalog, &args, format, &money),
        Command::Serve(args) => serve::run(std::mem::ManuallyDrop::into_inner(catalog), &args),
        Command::Export(args) => export::run(&catalog, &args),
        Command::Init(args) => init::run(&args),
        Command::Diff(args) => diff::run(&args, format),
        Command::Rightsize(args) => rightsize::run(&catalog, &args, format, &money),
        Command::Probe(args) => probe::run(&catalog, &args, format),
        Command::Compat(args) => compat::run(&catalog, &args, format),
        Command::Completions(args) => completions::run(&args),
        Command::Man(args) => man::run(&args),
    }
}
