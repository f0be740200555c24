use crate::args::CatalogArgs;
use crate::output;
use gpuplan::emit::wire::CatalogSummaryJson;
use gpuplan::emit::{FlaggedPriceJson, OutputFormat, catalog_table, price_check_table, provider_facts_text};
use gpuplan::{Catalog, Error, ExitStatus, summarize_catalog};

pub fn run(catalog: &Catalog, args: &CatalogArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    if args.check {
        let flagged = FlaggedPriceJson::list(catalog.offerings());
        output::listing(format, &price_check_table(&flagged), &flagged)?;
        return Ok(ExitStatus::Success);
    }
    if let Some(name) = &args.provider {
        let report = gpuplan::provider_facts(catalog, name)?;
        match format {
            OutputFormat::Json => output::json(&report)?,
            OutputFormat::Table => {
                output::report(&provider_facts_text(report.facts, report.spot_share, report.storage))
            }
            other => {
                return Err(Error::invalid(
                    format!("--provider is shown as text or JSON, not {other:?}"),
                    Some("use --format table or --format json".to_string()),
                ));
            }
        }
        return Ok(ExitStatus::Success);
    }
    let summary = summarize_catalog(catalog);
    output::listing(format, &catalog_table(&summary), &CatalogSummaryJson::from(&summary))?;
    Ok(ExitStatus::Success)
}
