//! The Google Cloud Billing Catalog API
//! (<https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list>): the SKUs of
//! Compute Engine, in pages of up to 5,000 with a `nextPageToken`; an API key is required.
//!
//! Compute Engine has no price per machine type. A VM is billed per vCPU-hour and per
//! GiB-hour of memory at its machine family's rates (`N1 Predefined Instance Core`,
//! `A2 Instance Ram` …), plus each attached or bundled GPU at its own rate (`Nvidia Tesla T4
//! GPU`); spot VMs have their own SKUs (`usageType` `Preemptible`). A catalog offering's price
//! is put together from those rates and its vCPUs, memory and GPUs, in each region the SKUs
//! list under `serviceRegions`. Committed-use SKUs are skipped.

use super::{PriceQuote, QuoteBilling};
use crate::error::CatalogError;
use gpuplan_model::Offering;
use serde::Deserialize;
use std::collections::HashMap;

/// Compute Engine's SKUs.
pub const ENDPOINT: &str = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus";

/// SKUs per page asked for: the API's largest.
const PAGE_SIZE: u32 = 5000;

/// The URL of the page after `page_token` (the first page without one).
pub fn page_url(api_key: &str, page_token: Option<&str>) -> String {
    let mut url = format!("{ENDPOINT}?key={api_key}&pageSize={PAGE_SIZE}&currencyCode=USD");
    if let Some(token) = page_token {
        url.push_str("&pageToken=");
        url.push_str(token);
    }
    url
}

/// What a rate is charged for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// A vCPU of a machine family (`n1`, `a2`, `g2`, `a3` …), per hour.
    Core(String),
    /// A GiB of a machine family's memory, per hour.
    Ram(String),
    /// One GPU, by the name the SKU gives it (`Nvidia Tesla T4`), per hour.
    Gpu(String),
}

/// One hourly rate read from a SKU, in every region it lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub resource: Resource,
    pub billing: QuoteBilling,
    pub regions: Vec<String>,
    pub usd_per_hour: f64,
}

/// One page of the API's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub rates: Vec<Rate>,
    pub next: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPage {
    #[serde(default)]
    skus: Vec<RawSku>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSku {
    description: String,
    category: Category,
    #[serde(default)]
    service_regions: Vec<String>,
    #[serde(default)]
    pricing_info: Vec<PricingInfo>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Category {
    #[serde(default)]
    usage_type: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PricingInfo {
    pricing_expression: PricingExpression,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PricingExpression {
    usage_unit: String,
    #[serde(default)]
    tiered_rates: Vec<TieredRate>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TieredRate {
    #[serde(default)]
    start_usage_amount: f64,
    unit_price: Money,
}

/// Google's money: whole `units` (a decimal string) and `nanos`.
#[derive(Deserialize)]
struct Money {
    #[serde(rename = "currencyCode")]
    currency_code: String,
    #[serde(default)]
    units: String,
    #[serde(default)]
    nanos: i64,
}

impl Money {
    fn usd(&self) -> Option<f64> {
        const NANOS: i64 = 1_000_000_000;
        let units: i64 = if self.units.is_empty() {
            0
        } else {
            self.units.parse().ok()?
        };
        // In whole nanos first, so that 2 units and 933,908,000 nanos is exactly 2.933908.
        let nanos = units.checked_mul(NANOS)?.checked_add(self.nanos)?;
        (self.currency_code == "USD").then_some(nanos as f64 / NANOS as f64)
    }
}

/// What a SKU's description says it charges for: `[Spot Preemptible ]<what> running in
/// <geography>`, where `<what>` is `<FAMILY>[ Predefined] Instance Core|Ram` or `<name> GPU`
/// (spot GPUs: `<name> GPU attached to Spot Preemptible VMs`).
fn resource(description: &str) -> Option<Resource> {
    let what = description.strip_prefix("Spot Preemptible ").unwrap_or(description);
    let what = what.split(" running in ").next()?;
    if let Some(name) = what.split(" GPU").next().filter(|_| what.contains(" GPU")) {
        return Some(Resource::Gpu(name.to_string()));
    }
    let family = || what.split(' ').next().map(str::to_lowercase);
    let plain = |suffix: &str| {
        what.strip_suffix(suffix)
            .is_some_and(|head| !head.contains("Custom") && !head.contains("Sole Tenancy"))
    };
    if plain(" Instance Core") {
        family().map(Resource::Core)
    } else if plain(" Instance Ram") {
        family().map(Resource::Ram)
    } else {
        None
    }
}

/// Reads one page; `name` names it in errors.
pub fn parse_page(name: &str, json: &str) -> Result<Page, CatalogError> {
    let raw: RawPage = serde_json::from_str(json)
        .map_err(|e| CatalogError::new(name, format!("not a Cloud Billing Catalog SKU page: {e}")))?;
    let rates = raw.skus.into_iter().filter_map(rate).collect();
    Ok(Page {
        rates,
        next: raw.next_page_token.filter(|t| !t.is_empty()),
    })
}

fn rate(sku: RawSku) -> Option<Rate> {
    let billing = match sku.category.usage_type.as_str() {
        "OnDemand" => QuoteBilling::OnDemand,
        "Preemptible" => QuoteBilling::Spot,
        _ => return None,
    };
    let resource = resource(&sku.description)?;
    let expression = &sku.pricing_info.first()?.pricing_expression;
    let unit_is_hourly = match resource {
        Resource::Ram(_) => expression.usage_unit == "GiBy.h",
        _ => expression.usage_unit == "h",
    };
    // The last tier is the rate beyond any free allowance.
    let tier = expression
        .tiered_rates
        .iter()
        .max_by(|a, b| a.start_usage_amount.total_cmp(&b.start_usage_amount))?;
    let usd = tier.unit_price.usd()?;
    (unit_is_hourly && usd.is_finite() && usd > 0.0).then_some(Rate {
        resource,
        billing,
        regions: sku.service_regions,
        usd_per_hour: usd,
    })
}

/// The name Google's GPU SKUs give an accelerator of the catalog, on a machine type.
fn gpu_name(instance_type: &str, accelerator: &str) -> Option<&'static str> {
    if instance_type.starts_with("a3-mega") {
        return Some("Nvidia H100 80GB Mega");
    }
    Some(match accelerator {
        "T4" => "Nvidia Tesla T4",
        "P4" => "Nvidia Tesla P4",
        "P100-PCIE-16GB" => "Nvidia Tesla P100",
        "V100-SXM2-16GB" => "Nvidia Tesla V100",
        "A100-SXM4-40GB" => "Nvidia Tesla A100",
        "A100-SXM4-80GB" => "Nvidia Tesla A100 80GB",
        "L4" => "Nvidia L4",
        "H100-SXM5-80GB" => "Nvidia H100 80GB",
        _ => return None,
    })
}

/// The machine family of an instance type: `n1` of `n1-standard-8+T4x1`.
fn family(instance_type: &str) -> Option<&str> {
    instance_type.split('-').next().filter(|f| !f.is_empty())
}

/// Prices of the GCP `offerings`, put together from `rates`: vCPUs and memory at the machine
/// family's rates plus the GPUs at theirs, on demand and spot. An offering some rate is
/// missing for gets no quote.
pub fn quotes(rates: &[Rate], offerings: &[Offering]) -> Vec<PriceQuote> {
    let mut table: HashMap<(&Resource, QuoteBilling, &str), f64> = HashMap::new();
    for rate in rates {
        for region in &rate.regions {
            table
                .entry((&rate.resource, rate.billing, region))
                .or_insert(rate.usd_per_hour);
        }
    }
    let mut quotes = Vec::new();
    for offering in offerings.iter().filter(|o| o.provider.as_str() == "gcp") {
        let (Some(region), Some(family)) = (offering.region.as_deref(), family(&offering.instance_type)) else {
            continue;
        };
        for billing in [QuoteBilling::OnDemand, QuoteBilling::Spot] {
            let price = |resource: Resource| table.get(&(&resource, billing, region)).copied();
            let cores = price(Resource::Core(family.to_string())).map(|p| p * offering.vcpus);
            let memory = price(Resource::Ram(family.to_string())).map(|p| p * offering.memory.as_gib());
            let gpus = match offering.accelerator.as_ref() {
                None => Some(0.0),
                Some(accelerator) => gpu_name(&offering.instance_type, accelerator.as_str())
                    .and_then(|name| price(Resource::Gpu(name.to_string())))
                    .map(|p| p * f64::from(offering.accelerator_count)),
            };
            if let (Some(cores), Some(memory), Some(gpus)) = (cores, memory, gpus) {
                quotes.push(PriceQuote {
                    instance_type: offering.instance_type.clone(),
                    region: region.to_string(),
                    billing,
                    usd_per_hour: ((cores + memory + gpus) * 1e6).round() / 1e6,
                });
            }
        }
    }
    quotes.sort_by(|a, b| (&a.instance_type, &a.region, a.billing).cmp(&(&b.instance_type, &b.region, b.billing)));
    quotes.dedup();
    quotes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_name_what_they_charge_for() {
        let core = |f: &str| Some(Resource::Core(f.into()));
        assert_eq!(resource("N1 Predefined Instance Core running in Americas"), core("n1"));
        assert_eq!(
            resource("Spot Preemptible A2 Instance Core running in Belgium"),
            core("a2")
        );
        assert_eq!(
            resource("G2 Instance Ram running in Americas"),
            Some(Resource::Ram("g2".into()))
        );
        assert_eq!(
            resource("Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas"),
            Some(Resource::Gpu("Nvidia Tesla T4".into()))
        );
        assert_eq!(resource("Custom Instance Core running in Americas"), None);
        assert_eq!(resource("N1 Sole Tenancy Instance Core running in Americas"), None);
        assert_eq!(resource("Storage PD Capacity"), None);
    }

    #[test]
    fn money_is_units_and_nanos() {
        let money = Money {
            currency_code: "USD".into(),
            units: "2".into(),
            nanos: 933_908_000,
        };
        assert_eq!(money.usd(), Some(2.933908));
        assert!(parse_page("x.json", "<html>").is_err());
    }
}
