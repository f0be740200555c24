//! The JSON wire format shared by the CLI (`--format json`) and the HTTP API.
//!
//! These structs are the documented contract of `docs/json.md`: fields may be added, never
//! renamed or removed. Sizes are bytes, rates bytes per second, prices USD per hour, dates
//! `YYYY-MM-DD`; an unknown value is `null`, never `0`.

mod catalog_summary;
mod defaulted;
mod estimate;
mod gpu;
mod instance;
mod model;
mod plan;

pub use catalog_summary::{CatalogSummaryJson, ProviderSummaryJson};
pub use defaulted::DefaultedJson;
pub use estimate::{EstimateJson, LayoutJson};
pub use gpu::{GpuJson, NvLinkJson};
pub use instance::InstanceJson;
pub use model::ModelSummaryJson;
pub use plan::{InfeasibleJson, PlanJson, RecommendationJson, RejectionJson};
