//! Lambda's Cloud API (<https://docs.lambda.ai/api/cloud>): `GET /api/v1/instance-types`,
//! with an API key, lists every instance type with its price in whole cents per instance-hour
//! (`price_cents_per_hour`), the same in every region, and the regions with capacity now.
//! A type with no capacity is still listed and priced.

use super::{PriceQuote, QuoteBilling};
use crate::error::CatalogError;
use gpuplan_model::Offering;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The endpoint.
pub const ENDPOINT: &str = "https://cloud.lambdalabs.com/api/v1/instance-types";

#[derive(Deserialize)]
struct Response {
    data: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
struct Entry {
    instance_type: InstanceType,
}

#[derive(Deserialize)]
struct InstanceType {
    name: String,
    price_cents_per_hour: u64,
}

/// The hourly price of each instance type in the answer, USD.
pub fn parse(name: &str, json: &str) -> Result<BTreeMap<String, f64>, CatalogError> {
    let response: Response = serde_json::from_str(json)
        .map_err(|e| CatalogError::new(name, format!("not a Lambda instance-types answer: {e}")))?;
    Ok(response
        .data
        .into_values()
        .filter(|e| e.instance_type.price_cents_per_hour > 0)
        .map(|e| {
            (
                e.instance_type.name,
                e.instance_type.price_cents_per_hour as f64 / 100.0,
            )
        })
        .collect())
}

/// One on-demand quote for each Lambda offering of the catalog whose type is priced: Lambda
/// charges the same in every region.
pub fn quotes(prices: &BTreeMap<String, f64>, offerings: &[Offering]) -> Vec<PriceQuote> {
    let mut quotes: Vec<PriceQuote> = offerings
        .iter()
        .filter(|o| o.provider.as_str() == "lambda")
        .filter_map(|o| {
            Some(PriceQuote {
                instance_type: o.instance_type.clone(),
                region: o.region.clone()?,
                billing: QuoteBilling::OnDemand,
                usd_per_hour: *prices.get(&o.instance_type)?,
            })
        })
        .collect();
    quotes.sort_by(|a, b| (&a.instance_type, &a.region).cmp(&(&b.instance_type, &b.region)));
    quotes.dedup();
    quotes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_whole_cents_per_instance() {
        let json = r#"{"data":{
          "gpu_1x_a100":{"instance_type":{"name":"gpu_1x_a100","description":"1x A100 (40 GB PCIe)","price_cents_per_hour":129,"specs":{"vcpus":30,"memory_gib":200,"storage_gib":512,"gpus":1}},"regions_with_capacity_available":[{"name":"us-east-1","description":"Virginia, USA"}]},
          "gpu_8x_h100_sxm5":{"instance_type":{"name":"gpu_8x_h100_sxm5","description":"8x H100 (80 GB SXM5)","price_cents_per_hour":2392,"specs":{"vcpus":208,"memory_gib":1800,"storage_gib":22528,"gpus":8}},"regions_with_capacity_available":[]}}}"#;
        let prices = parse("instance-types.json", json).unwrap();
        assert_eq!(prices["gpu_1x_a100"], 1.29);
        assert_eq!(
            prices["gpu_8x_h100_sxm5"], 23.92,
            "listed without capacity, still priced"
        );
        assert!(parse("x.json", r#"{"error":{"code":"global/invalid-api-key"}}"#).is_err());
    }
}
