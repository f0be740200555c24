use crate::Table;
use gpuplan_catalog::CatalogSummary;

/// The per-provider summary of `gpuplan catalog`.
pub fn catalog_table(summary: &CatalogSummary) -> Table {
    let mut table = Table::new([
        "provider",
        "offerings",
        "instance types",
        "regions",
        "accelerators",
        "priced",
        "spot",
        "CPU shapes",
        "storage / egress",
        "committed",
        "as of (oldest … newest)",
    ])
    .right_aligned(&["offerings", "instance types", "regions", "priced", "spot", "CPU shapes"]);
    for p in &summary.providers {
        let accelerators = p.accelerators.len();
        table.push_row([
            p.provider.display_name().to_string(),
            p.offerings.to_string(),
            p.instance_types.to_string(),
            p.regions.to_string(),
            format!("{accelerators} types"),
            p.with_on_demand_price.to_string(),
            p.with_spot_price.to_string(),
            p.cpu_shapes.to_string(),
            if p.storage.is_empty() {
                "-".to_string()
            } else {
                p.storage.join(", ")
            },
            if p.committed.is_empty() {
                "-".to_string()
            } else {
                p.committed.join(", ")
            },
            if p.oldest == p.newest {
                p.oldest.to_string()
            } else {
                format!("{} … {}", p.oldest, p.newest)
            },
        ]);
    }
    let offerings: usize = summary.providers.iter().map(|p| p.offerings).sum();
    table.footer.push(format!(
        "Catalog schema version {}: {} accelerators, {offerings} offerings from {} providers, {} reserved-price discounts.",
        summary.schema_version,
        summary.accelerators,
        summary.providers.len(),
        summary.reserved_discounts
    ));
    table
}

/// One offering whose price failed a load-time check (`gpuplan catalog --check`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct FlaggedPriceJson {
    pub provider: String,
    pub instance_type: String,
    pub region: Option<String>,
    pub zone: Option<String>,
    pub on_demand_usd_per_hour: Option<f64>,
    pub spot_usd_per_hour: Option<f64>,
    /// The billing mode whose price is in doubt.
    pub billing: String,
    pub flag: gpuplan_model::PriceFlag,
    pub reason: String,
}

impl FlaggedPriceJson {
    /// Every flagged price of `offerings`, one row per flag.
    pub fn list(offerings: &[gpuplan_model::Offering]) -> Vec<FlaggedPriceJson> {
        offerings
            .iter()
            .flat_map(|o| {
                o.price_flags.iter().map(move |flag| FlaggedPriceJson {
                    provider: o.provider.to_string(),
                    instance_type: o.instance_type.clone(),
                    region: o.region.clone(),
                    zone: o.zone.clone(),
                    on_demand_usd_per_hour: o.on_demand.map(|p| p.0),
                    spot_usd_per_hour: o.spot.map(|p| p.0),
                    billing: flag.billing().to_string(),
                    flag: *flag,
                    reason: flag.describe().to_string(),
                })
            })
            .collect()
    }
}

/// The prices `gpuplan catalog --check` flags.
pub fn price_check_table(rows: &[FlaggedPriceJson]) -> Table {
    let mut table = Table::new(["provider", "instance", "region", "zone", "on-demand", "spot", "flag"])
        .right_aligned(&["on-demand", "spot"]);
    let price = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.4}"));
    for r in rows {
        table.push_row([
            r.provider.clone(),
            r.instance_type.clone(),
            r.region.clone().unwrap_or_else(|| "-".to_string()),
            r.zone.clone().unwrap_or_else(|| "-".to_string()),
            price(r.on_demand_usd_per_hour),
            price(r.spot_usd_per_hour),
            r.reason.clone(),
        ]);
    }
    table.footer.push(format!(
        "{} flagged prices: left out of plans unless --trust-prices.",
        rows.len()
    ));
    table
}
