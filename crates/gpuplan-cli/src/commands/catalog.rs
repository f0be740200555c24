use crate::args::CatalogArgs;
use crate::output;
use gpuplan::emit::wire::CatalogSummaryJson;
use gpuplan::emit::{FlaggedPriceJson, OutputFormat, catalog_table, price_check_table};
use gpuplan::{Catalog, Error, ExitStatus, summarize_catalog};

pub fn run(catalog: &Catalog, args: &CatalogArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    if args.check {
        let flagged = FlaggedPriceJson::list(catalog.offerings());
        output::listing(format, &price_check_table(&flagged), &flagged)?;
        return Ok(ExitStatus::Success);
    }
    let summary = summarize_catalog(catalog);
    output::listing(format, &catalog_table(&summary), &CatalogSummaryJson::from(&summary))?;
    Ok(ExitStatus::Success)
}
