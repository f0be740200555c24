use crate::output;
use gpuplan::emit::wire::ModelSummaryJson;
use gpuplan::emit::{OutputFormat, model_table};
use gpuplan::{Catalog, Error, ExitStatus};

pub fn run(catalog: &Catalog, format: OutputFormat) -> Result<ExitStatus, Error> {
    let models: Vec<ModelSummaryJson> = catalog.models().iter().map(ModelSummaryJson::from).collect();
    output::listing(format, &model_table(&models), &models)?;
    Ok(ExitStatus::Success)
}
