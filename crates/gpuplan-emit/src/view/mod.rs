//! Listings as [`Table`](crate::Table)s of text cells, one function per listing.

mod catalog;
mod estimate;
mod gpu;
mod instance;
mod model;
mod plan;
mod provider;

pub use catalog::{FlaggedPriceJson, catalog_table, price_check_table};
pub use estimate::estimate_report;
pub use gpu::{gpu_detail, gpu_table};
pub use instance::instance_table;
pub use model::{model_table, parameter_count};
pub use plan::{infeasible_report, plan_explanation, plan_table};
pub use provider::provider_facts_text;

/// A number with at most one decimal and no trailing zero; `-` when unknown.
fn cell(value: Option<f64>) -> String {
    match value {
        None => "-".to_string(),
        Some(v) if (v - v.round()).abs() < 0.05 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}
