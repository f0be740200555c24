//! The Azure Retail Prices API (<https://prices.azure.com/api/retail/prices>): public, no
//! account needed, JSON pages of 100 meters with a `NextPageLink`.
//!
//! Each Linux pay-as-you-go virtual-machine meter (`type` = `Consumption`, no `Windows` in the
//! product name) gives the on-demand price of `armSkuName` in `armRegionName`; a meter whose
//! `skuName` ends in `Spot` gives the spot price. `Low Priority` meters (Batch) are skipped.

use super::{PriceQuote, QuoteBilling};
use crate::error::CatalogError;
use serde::Deserialize;

/// The endpoint.
pub const ENDPOINT: &str = "https://prices.azure.com/api/retail/prices";

/// The first page's URL for the virtual-machine meters of `instance_type` (an `armSkuName`).
pub fn query_url(instance_type: &str) -> String {
    format!(
        "{ENDPOINT}?$filter=serviceName%20eq%20%27Virtual%20Machines%27%20and%20priceType%20eq%20%27Consumption%27%20and%20armSkuName%20eq%20%27{instance_type}%27"
    )
}

/// One page of the API's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub quotes: Vec<PriceQuote>,
    /// Meters of a VM's on-demand or spot price left out, and why (a unit other than an hour).
    pub skipped: Vec<super::SkippedQuote>,
    pub next: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RawPage {
    items: Vec<RawItem>,
    next_page_link: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawItem {
    currency_code: String,
    retail_price: f64,
    arm_region_name: String,
    arm_sku_name: String,
    sku_name: String,
    product_name: String,
    unit_of_measure: String,
    #[serde(rename = "type")]
    price_type: String,
}

/// Reads one page; `name` names it in errors.
pub fn parse_page(name: &str, json: &str) -> Result<Page, CatalogError> {
    let raw: RawPage = serde_json::from_str(json)
        .map_err(|e| CatalogError::new(name, format!("not an Azure Retail Prices page: {e}")))?;
    // Windows, Batch low-priority and non-USD meters are other products, left out by design;
    // a Linux VM meter not priced per hour is reported.
    let (hourly, other): (Vec<RawItem>, Vec<RawItem>) = raw
        .items
        .into_iter()
        .filter(|i| {
            i.price_type == "Consumption"
                && i.currency_code == "USD"
                && !i.product_name.contains("Windows")
                && !i.sku_name.contains("Low Priority")
        })
        .partition(|i| i.unit_of_measure == "1 Hour");
    let skipped = other
        .into_iter()
        .map(|i| super::SkippedQuote {
            why: format!("priced per `{}`, not per hour", i.unit_of_measure),
            instance_type: i.arm_sku_name,
            region: i.arm_region_name,
        })
        .collect();
    let quotes = hourly
        .into_iter()
        .map(|i| PriceQuote {
            billing: if i.sku_name.ends_with("Spot") {
                QuoteBilling::Spot
            } else {
                QuoteBilling::OnDemand
            },
            instance_type: i.arm_sku_name,
            region: i.arm_region_name,
            usd_per_hour: i.retail_price,
        })
        .collect();
    Ok(Page {
        quotes,
        skipped,
        next: raw.next_page_link.filter(|l| !l.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_linux_on_demand_and_spot_and_drops_the_rest() {
        let json = r#"{"BillingCurrency":"USD","CustomerEntityId":"Default","CustomerEntityType":"Retail","Items":[
          {"currencyCode":"USD","retailPrice":0.526,"unitPrice":0.526,"armRegionName":"eastus","location":"US East","meterName":"NC4as T4 v3","productName":"Virtual Machines NCasT4_v3 Series","skuName":"NC4as T4 v3","serviceName":"Virtual Machines","unitOfMeasure":"1 Hour","type":"Consumption","armSkuName":"Standard_NC4as_T4_v3"},
          {"currencyCode":"USD","retailPrice":0.0627,"unitPrice":0.0627,"armRegionName":"eastus","location":"US East","meterName":"NC4as T4 v3 Spot","productName":"Virtual Machines NCasT4_v3 Series","skuName":"NC4as T4 v3 Spot","serviceName":"Virtual Machines","unitOfMeasure":"1 Hour","type":"Consumption","armSkuName":"Standard_NC4as_T4_v3"},
          {"currencyCode":"USD","retailPrice":0.71,"unitPrice":0.71,"armRegionName":"eastus","location":"US East","meterName":"NC4as T4 v3","productName":"Virtual Machines NCasT4_v3 Series Windows","skuName":"NC4as T4 v3","serviceName":"Virtual Machines","unitOfMeasure":"1 Hour","type":"Consumption","armSkuName":"Standard_NC4as_T4_v3"},
          {"currencyCode":"USD","retailPrice":0.105,"unitPrice":0.105,"armRegionName":"eastus","location":"US East","meterName":"NC4as T4 v3 Low Priority","productName":"Virtual Machines NCasT4_v3 Series","skuName":"NC4as T4 v3 Low Priority","serviceName":"Virtual Machines","unitOfMeasure":"1 Hour","type":"Consumption","armSkuName":"Standard_NC4as_T4_v3"}
        ],"NextPageLink":null,"Count":4}"#;
        let page = parse_page("page.json", json).unwrap();
        assert_eq!(page.quotes.len(), 2);
        assert_eq!(page.quotes[0].billing, QuoteBilling::OnDemand);
        assert_eq!(page.quotes[1].billing, QuoteBilling::Spot);
        assert!(page.next.is_none());
        assert!(parse_page("page.json", "<html>").is_err());
    }
}
