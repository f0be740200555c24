mod catalog;
mod cost;
mod energy;
mod estimate;
mod forecast;
mod gpus;
mod instances;
mod models;
mod plan;
mod refresh;

use crate::args::{Cli, Command};
use crate::catalog_source;
use gpuplan::{Error, ExitStatus};

/// Runs one command to completion; the answer is printed, the status returned.
pub fn run(cli: Cli) -> Result<ExitStatus, Error> {
    if let Command::Catalog(args) = &cli.command {
        if let Some(crate::args::CatalogAction::Refresh(refresh)) = &args.action {
            let base = catalog_source::files(cli.catalog.as_deref())?;
            return refresh::run(base, refresh);
        }
    }
    let catalog = catalog_source::load(cli.catalog.as_deref())?;
    let catalog = catalog_source::with_prices(catalog, cli.prices.as_deref())?;
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
    }
}
