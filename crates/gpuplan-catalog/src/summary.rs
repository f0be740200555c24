use crate::Catalog;
use gpuplan_model::{Date, ProviderId};
use std::collections::{BTreeMap, BTreeSet};

/// What a catalog holds for one provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSummary {
    pub provider: ProviderId,
    /// Offering rows (one per instance type × region, or × zone where zone prices differ).
    pub offerings: usize,
    pub instance_types: usize,
    pub regions: usize,
    pub accelerators: BTreeSet<String>,
    pub with_on_demand_price: usize,
    pub with_spot_price: usize,
    /// CPU-only shapes (no accelerator).
    pub cpu_shapes: usize,
    /// Which of block storage, object storage and egress have published prices.
    pub storage: Vec<&'static str>,
    /// Commitment terms with a published discount (`1y`, `3y`).
    pub committed: Vec<String>,
    pub oldest: Date,
    pub newest: Date,
}

/// What a catalog holds, per provider.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogSummary {
    pub schema_version: u32,
    pub accelerators: usize,
    pub providers: Vec<ProviderSummary>,
    pub reserved_discounts: usize,
}

impl CatalogSummary {
    pub fn of(catalog: &Catalog) -> CatalogSummary {
        let mut by_provider: BTreeMap<&ProviderId, Vec<_>> = BTreeMap::new();
        for offering in catalog.offerings() {
            by_provider.entry(&offering.provider).or_default().push(offering);
        }
        let providers = by_provider
            .into_iter()
            .filter_map(|(provider, offerings)| {
                let oldest = offerings.iter().map(|o| o.as_of).min()?;
                let newest = offerings.iter().map(|o| o.as_of).max()?;
                Some(ProviderSummary {
                    provider: provider.clone(),
                    offerings: offerings.len(),
                    instance_types: offerings
                        .iter()
                        .map(|o| &o.instance_type)
                        .collect::<BTreeSet<_>>()
                        .len(),
                    regions: offerings
                        .iter()
                        .filter_map(|o| o.region.as_ref())
                        .collect::<BTreeSet<_>>()
                        .len(),
                    accelerators: offerings
                        .iter()
                        .filter_map(|o| o.accelerator.as_ref().map(|a| a.to_string()))
                        .collect(),
                    with_on_demand_price: offerings.iter().filter(|o| o.on_demand.is_some()).count(),
                    with_spot_price: offerings.iter().filter(|o| o.spot.is_some()).count(),
                    cpu_shapes: offerings.iter().filter(|o| o.accelerator.is_none()).count(),
                    storage: catalog.storage_pricing(provider).map_or_else(Vec::new, |s| {
                        [
                            (s.block_usd_per_gb_month.is_some(), "block"),
                            (s.object_usd_per_gb_month.is_some(), "object"),
                            (s.egress_tiers.is_some(), "egress"),
                        ]
                        .into_iter()
                        .filter_map(|(present, name)| present.then_some(name))
                        .collect()
                    }),
                    committed: catalog
                        .reserved_discounts()
                        .iter()
                        .filter(|d| &d.provider == provider)
                        .map(|d| d.term.to_string())
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect(),
                    oldest,
                    newest,
                })
            })
            .collect();
        CatalogSummary {
            schema_version: catalog.schema_version(),
            accelerators: catalog.accelerators().len(),
            providers,
            reserved_discounts: catalog.reserved_discounts().len(),
        }
    }
}
