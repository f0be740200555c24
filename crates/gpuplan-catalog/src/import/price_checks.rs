//! Price sanity checks: a price that is a known placeholder, zero, or implausible for the
//! hardware never reaches a user as a real price.

use super::report::ProviderReport;
use super::sky_row::SkyRow;
use gpuplan_model::UsdPerHour;

/// Highest plausible on-demand price of one accelerator-hour. The dearest list prices in the
/// catalog are about $14 per B200 GPU-hour on hyperscalers; beyond this a price is a
/// placeholder or an error.
const MAX_USD_PER_ACCELERATOR_HOUR: f64 = 60.0;

/// GCP writes this for TPU prices it could not find (skypilot-catalog SOURCE quirks).
const GCP_PLACEHOLDER_PRICE: f64 = 700.0;

pub(crate) struct CheckedPrices {
    pub on_demand: Option<UsdPerHour>,
    pub spot: Option<UsdPerHour>,
    pub notes: Vec<String>,
}

pub(crate) fn check(cloud: &str, row: &SkyRow, count: u32, report: &mut ProviderReport, label: &str) -> CheckedPrices {
    let mut notes = Vec::new();
    let mut on_demand = row.price;
    let mut spot = row.spot;

    if cloud == "mithril" {
        // Every Mithril price is 1.0 or 8.0 per instance: placeholders, not prices.
        if on_demand.is_some() || spot.is_some() {
            report.drop_price(
                "placeholder price (Mithril lists 1.0/8.0 for every type)",
                label.to_string(),
            );
            notes.push("source price is a placeholder; price unknown".to_string());
        }
        on_demand = None;
        spot = None;
    }
    if on_demand == Some(GCP_PLACEHOLDER_PRICE) && cloud == "gcp" {
        report.drop_price("placeholder price 700.0", label.to_string());
        on_demand = None;
    }
    match on_demand {
        Some(price) if price <= 0.0 => {
            report.drop_price("zero on-demand price", label.to_string());
            on_demand = None;
        }
        Some(price) if count > 0 && price / f64::from(count) > MAX_USD_PER_ACCELERATOR_HOUR => {
            report.drop_price("implausible price per accelerator-hour", format!("{label}: {price}"));
            on_demand = None;
        }
        None if row.price.is_none() => {
            report.note_price(
                "no on-demand price (capacity blocks / reservations only, or not listed)",
                label.to_string(),
            );
            notes.push("no on-demand price in the source".to_string());
        }
        _ => {}
    }
    match (spot, on_demand) {
        (Some(price), _) if price <= 0.0 => {
            report.drop_price("zero spot price (marketplace placeholder)", label.to_string());
            spot = None;
        }
        (Some(price), Some(od)) if price >= od => {
            report.drop_price(
                "spot price not below on-demand",
                format!("{label}: spot {price} ≥ {od}"),
            );
            spot = None;
        }
        (Some(price), None) if count > 0 && price / f64::from(count) > MAX_USD_PER_ACCELERATOR_HOUR => {
            report.drop_price(
                "implausible price per accelerator-hour",
                format!("{label}: spot {price}"),
            );
            spot = None;
        }
        _ => {}
    }
    CheckedPrices {
        on_demand: on_demand.map(UsdPerHour),
        spot: spot.map(UsdPerHour),
        notes,
    }
}
