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
        "as of (oldest … newest)",
    ])
    .right_aligned(&["offerings", "instance types", "regions", "priced", "spot"]);
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
