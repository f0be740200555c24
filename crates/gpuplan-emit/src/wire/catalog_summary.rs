use gpuplan_catalog::{CatalogSummary, ProviderSummary};
use serde::Serialize;

/// What the catalog holds, as `gpuplan catalog --format json` prints it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CatalogSummaryJson {
    pub schema_version: u32,
    pub accelerators: usize,
    pub offerings: usize,
    pub reserved_discounts: usize,
    pub providers: Vec<ProviderSummaryJson>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ProviderSummaryJson {
    pub provider: String,
    pub offerings: usize,
    pub instance_types: usize,
    pub regions: usize,
    pub accelerators: Vec<String>,
    pub with_on_demand_price: usize,
    pub with_spot_price: usize,
    pub cpu_shapes: usize,
    /// Published storage and egress prices: any of "block", "object", "egress".
    pub storage: Vec<String>,
    /// Commitment terms with a published discount.
    pub committed: Vec<String>,
    pub oldest_as_of: String,
    pub newest_as_of: String,
}

impl From<&ProviderSummary> for ProviderSummaryJson {
    fn from(p: &ProviderSummary) -> Self {
        ProviderSummaryJson {
            provider: p.provider.to_string(),
            offerings: p.offerings,
            instance_types: p.instance_types,
            regions: p.regions,
            accelerators: p.accelerators.iter().cloned().collect(),
            with_on_demand_price: p.with_on_demand_price,
            with_spot_price: p.with_spot_price,
            cpu_shapes: p.cpu_shapes,
            storage: p.storage.iter().map(|s| s.to_string()).collect(),
            committed: p.committed.clone(),
            oldest_as_of: p.oldest.to_string(),
            newest_as_of: p.newest.to_string(),
        }
    }
}

impl From<&CatalogSummary> for CatalogSummaryJson {
    fn from(s: &CatalogSummary) -> Self {
        CatalogSummaryJson {
            schema_version: s.schema_version,
            accelerators: s.accelerators,
            offerings: s.providers.iter().map(|p| p.offerings).sum(),
            reserved_discounts: s.reserved_discounts,
            providers: s.providers.iter().map(ProviderSummaryJson::from).collect(),
        }
    }
}
