use crate::output;
use gpuplan::emit::wire::CatalogSummaryJson;
use gpuplan::emit::{OutputFormat, catalog_table};
use gpuplan::{Catalog, Error, ExitStatus, summarize_catalog};

pub fn run(catalog: &Catalog, format: OutputFormat) -> Result<ExitStatus, Error> {
    let summary = summarize_catalog(catalog);
    output::listing(format, &catalog_table(&summary), &CatalogSummaryJson::from(&summary));
    Ok(ExitStatus::Success)
}
