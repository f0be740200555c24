//! gpuplan: which cloud GPU server to rent for an ML job, how many, under which billing mode,
//! and what it will cost.
//!
//! This crate is the facade the command line and the HTTP server both call. Each use case is
//! a plain function from a validated request and a [`Catalog`] to an answer; rendering the
//! answer is the caller's business (see [`gpuplan_emit`]).
//!
//! ```
//! use gpuplan::{Catalog, InstancesRequest, find_instances};
//!
//! let catalog = gpuplan::builtin_catalog().unwrap();
//! let request = InstancesRequest { gpu: Some("T4".into()), providers: vec!["aws".into()], ..Default::default() };
//! let answer = find_instances(&catalog, &request).unwrap();
//! assert!(answer.offerings.iter().any(|o| o.offering.instance_type == "g4dn.xlarge"));
//! ```

mod applicability;
mod calibrate;
mod compat;
mod compat_neuron;
mod compat_rocm;
mod cost_job;
mod cost_options;
mod defaults;
mod engine_knobs;
mod error;
mod estimate_workload;
mod expert_placement;
mod export_options;
mod export_plan;

mod forecast_options;
mod forecast_usage;
mod generic_model;
mod gpus;
mod instances;
mod job_file;
mod model_request;
mod options;
mod plan_workload;
mod poc;
mod precision_kernel;
mod probe_check;
mod provider_scope;
mod request_error;
mod request_log;
mod resolve;
mod rightsize;
mod software_fit;
mod ultralytics_file;

pub use calibrate::calibrate;
pub use compat::{CompatAnswer, CompatCheck, CompatQuery, FeatureSupport, compat};
pub use cost_job::{
    ASSUMED_SPOT_INTERRUPTIONS_PER_HOUR, CostAnswer, CostLine, CostQuery, EnergyAnswer, EnergyQuery, SpotSettings,
    cost_job, energy_of,
};
pub use cost_options::{CostOptions, EnergyOptions, PriceTier};
pub use engine_knobs::EngineKnobs;
pub use error::{Error, ErrorCode, ExitStatus, in_key_terms};
pub use estimate_workload::{EstimateAnswer, ModelSource, ServingQuestion, WorkloadRequest, estimate_workload};
pub use export_options::{ExportOptions, export_request};
pub use export_plan::{ExportSettings, ExportTarget, SavedPlan, export_plan, read_saved_plan};
pub use forecast_options::{ForecastOptions, UsageHistory};
pub use forecast_usage::{ForecastAnswer, ForecastQuery, UsagePoint, UsageUnit, forecast_chart, forecast_usage};
pub use gpuplan_catalog::{Catalog, CatalogError, CatalogFile, CatalogSummary, OfferingSort};
pub use gpuplan_forecast::history::Period as ForecastPeriod;
pub use gpuplan_model::field::{Defaulted, Field, Naming, Phrase, Spelling};
pub use gpuplan_plan as planner;
pub use gpuplan_telemetry as telemetry;
pub use gpus::{GpuAnswer, show_gpus};
pub use instances::{InstancesAnswer, InstancesRequest, find_instances};
pub use job_file::{EXAMPLE_SERVING_JOB, EXAMPLE_TRAINING_JOB, JobFormat, job_schema, option_names, parse_job};
pub use model_request::{ModelRequest, read_model};
pub use options::{EstimateOptions, InstancesOptions, PlanOptions, WorkloadOptions, billing_mode, billing_modes};
pub use plan_workload::{
    InfeasiblePlan, PlanAnswer, PlanQuery, TabularAnswer, TabularQuery, plan_tabular_workload, plan_workload,
};
pub use poc::{PocAnswer, PocComparison, PocFigure, PocRequest, compare_poc, poc_shape};
pub use probe_check::{DeviceCheck, ProbeAnswer, check_probe};
pub use provider_scope::{ProviderReport, ProviderScope, provider_facts};
pub use request_error::{RequestError, RequestProblem};
pub use request_log::parse_request_log;
pub use rightsize::{Finding, GpuUse, JobUse, RightsizeAnswer, RightsizeQuery, rightsize};
pub use ultralytics_file::ultralytics_model_config;

pub use gpuplan_catalog as catalog;
pub use gpuplan_emit as emit;
pub use gpuplan_estimate as estimator;
pub use gpuplan_model as model;

/// The built-in catalog, parsed and validated when gpuplan was built and read here from its
/// compact binary form (the same catalog as [`Catalog::embedded`], which parses the text files
/// each time).
pub fn builtin_catalog() -> Result<Catalog, Error> {
    static COMPACT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/catalog.postcard"));
    Ok(Catalog::from_compact(COMPACT)?)
}

/// What the catalog holds, per provider.
/// Runs `work` with the catalog's fitted constants as the ones every estimator reads (the
/// catalog folder's own `calibration.toml`, or the built-in one).
pub(crate) fn with_fitted<R>(catalog: &Catalog, work: impl FnOnce() -> R) -> R {
    gpuplan_estimate::calibration::in_force(catalog.fitted(), work)
}

pub fn summarize_catalog(catalog: &Catalog) -> CatalogSummary {
    CatalogSummary::of(catalog)
}

/// The OpenAPI schema of a duration field: a number in the unit the field states, or a string
/// with a unit (`"24h"`, `"90m"`, `"200ms"`), read by [`model::duration`].
pub(crate) fn duration_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
    let one_of = OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::Number))
        .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(
            r"^\s*[0-9.eE+-]+\s*(us|µs|ms|s|sec|m|min|h|hr|hours|d|days|w|weeks)?\s*$",
        )))
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .build();
    Schema::OneOf(one_of)
}

#[cfg(test)]
mod tests {
    /// The compact form the build writes is the catalog the text files give, field for field
    /// and offering for offering.
    #[test]
    fn the_compact_catalog_is_the_text_catalog() {
        let compact = super::builtin_catalog().unwrap();
        let text = super::Catalog::embedded().unwrap();
        assert_eq!(compact.offerings().len(), text.offerings().len());
        assert!(compact == text, "the compact catalog differs from the text one");
    }
}
