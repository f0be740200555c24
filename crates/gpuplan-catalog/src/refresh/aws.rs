//! The AWS Price List Bulk API: public offer files, no account needed.
//!
//! `region_index.json` lists one EC2 offer file per region. An offer file is one JSON object:
//! `products` keyed by SKU, each with `productFamily` and string `attributes`, and `terms`,
//! whose `OnDemand` section maps each SKU to its offer terms and their `priceDimensions` (a
//! `unit` and a `pricePerUnit` per currency). The files run to gigabytes, so they are read as
//! a stream: only the products of the instance types asked for, and their on-demand hourly
//! prices, are kept.
//!
//! A product is a plain Linux on-demand instance when `productFamily` is `Compute Instance`
//! (or its bare-metal variant), `operatingSystem` is `Linux`, `tenancy` is `Shared`,
//! `preInstalledSw` is `NA`, `licenseModel` is `No License required` and `capacitystatus` is
//! `Used` (the other values are capacity-reservation rows that repeat the price). The offer
//! files carry no spot prices.

use super::{PriceQuote, QuoteBilling};
use crate::error::CatalogError;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io::Read;

/// Where the offer files live, for every region.
pub const HOST: &str = "https://pricing.us-east-1.amazonaws.com";

/// The EC2 region index.
pub const REGION_INDEX_URL: &str =
    "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/region_index.json";

/// The offer file's URL for each region code, from the region index.
pub fn parse_region_index(name: &str, json: &str) -> Result<BTreeMap<String, String>, CatalogError> {
    #[derive(Deserialize)]
    struct Index {
        regions: BTreeMap<String, Region>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Region {
        current_version_url: String,
    }
    let index: Index = serde_json::from_str(json)
        .map_err(|e| CatalogError::new(name, format!("not an AWS Price List region index: {e}")))?;
    Ok(index
        .regions
        .into_iter()
        .map(|(region, r)| (region, format!("{HOST}{}", r.current_version_url)))
        .collect())
}

/// Reads an EC2 offer file from `reader` and returns the on-demand hourly price of each
/// plain Linux instance of `instance_types` in it; `name` names the file in errors.
pub fn read_offer_file(
    name: &str,
    reader: impl Read,
    instance_types: &BTreeSet<String>,
) -> Result<Vec<PriceQuote>, CatalogError> {
    let mut deserializer = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    let offer = OfferSeed { instance_types }
        .deserialize(&mut deserializer)
        .map_err(|e| CatalogError::new(name, format!("not an AWS EC2 offer file: {e}")))?;
    let mut quotes: Vec<PriceQuote> = offer
        .products
        .into_iter()
        .filter_map(|(sku, (instance_type, region))| {
            let price = *offer.on_demand.get(&sku)?;
            Some(PriceQuote {
                instance_type,
                region,
                billing: QuoteBilling::OnDemand,
                usd_per_hour: price,
            })
        })
        .collect();
    quotes.sort_by(|a, b| (&a.instance_type, &a.region).cmp(&(&b.instance_type, &b.region)));
    Ok(quotes)
}

/// What is kept of an offer file: plain Linux products by SKU (instance type, region) and the
/// hourly on-demand price by SKU.
#[derive(Default)]
struct Offer {
    products: HashMap<String, (String, String)>,
    on_demand: HashMap<String, f64>,
}

struct OfferSeed<'a> {
    instance_types: &'a BTreeSet<String>,
}

impl<'de> DeserializeSeed<'de> for OfferSeed<'_> {
    type Value = Offer;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Offer, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OfferSeed<'_> {
    type Value = Offer;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an offer file object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Offer, A::Error> {
        let mut offer = Offer::default();
        let (mut seen_products, mut seen_terms) = (false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "offerCode" => {
                    let code: String = map.next_value()?;
                    if code != "AmazonEC2" {
                        return Err(A::Error::custom(format!("offerCode is {code}, not AmazonEC2")));
                    }
                }
                "products" => {
                    offer.products = map.next_value_seed(ProductsSeed(self.instance_types))?;
                    seen_products = true;
                }
                "terms" => {
                    // Products come first in AWS's files; where they do not, every hourly
                    // price is kept until they are known.
                    let keep = seen_products.then_some(&offer.products);
                    offer.on_demand = map.next_value_seed(TermsSeed(keep))?;
                    seen_terms = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !(seen_products && seen_terms) {
            return Err(A::Error::custom("no `products` and `terms`"));
        }
        Ok(offer)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Product {
    #[serde(default)]
    product_family: String,
    #[serde(default)]
    attributes: HashMap<String, String>,
}

impl Product {
    fn plain_linux(&self) -> bool {
        let is = |key: &str, value: &str| self.attributes.get(key).is_some_and(|v| v == value);
        matches!(
            self.product_family.as_str(),
            "Compute Instance" | "Compute Instance (bare metal)"
        ) && is("operatingSystem", "Linux")
            && is("tenancy", "Shared")
            && is("preInstalledSw", "NA")
            && is("licenseModel", "No License required")
            && is("capacitystatus", "Used")
    }
}

struct ProductsSeed<'a>(&'a BTreeSet<String>);

impl<'de> DeserializeSeed<'de> for ProductsSeed<'_> {
    type Value = HashMap<String, (String, String)>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ProductsSeed<'_> {
    type Value = HashMap<String, (String, String)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("products keyed by SKU")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut kept = HashMap::new();
        while let Some(sku) = map.next_key::<String>()? {
            let product: Product = map.next_value()?;
            let wanted = product
                .attributes
                .get("instanceType")
                .is_some_and(|t| self.0.contains(t));
            if wanted && product.plain_linux() {
                let (Some(instance_type), Some(region)) = (
                    product.attributes.get("instanceType"),
                    product.attributes.get("regionCode"),
                ) else {
                    continue;
                };
                kept.insert(sku, (instance_type.clone(), region.clone()));
            }
        }
        Ok(kept)
    }
}

/// The `terms` object: its `OnDemand` section read, the reserved terms skipped.
struct TermsSeed<'a>(Option<&'a HashMap<String, (String, String)>>);

impl<'de> DeserializeSeed<'de> for TermsSeed<'_> {
    type Value = HashMap<String, f64>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TermsSeed<'_> {
    type Value = HashMap<String, f64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the terms object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut prices = HashMap::new();
        while let Some(section) = map.next_key::<String>()? {
            if section == "OnDemand" {
                prices = map.next_value_seed(OnDemandSeed(self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(prices)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Term {
    price_dimensions: HashMap<String, Dimension>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Dimension {
    unit: String,
    price_per_unit: HashMap<String, String>,
}

/// The hourly USD price of a SKU's on-demand terms, where it has one above zero.
fn hourly_usd(terms: &HashMap<String, Term>) -> Option<f64> {
    terms
        .values()
        .flat_map(|term| term.price_dimensions.values())
        .filter(|d| d.unit == "Hrs")
        .filter_map(|d| d.price_per_unit.get("USD")?.parse::<f64>().ok())
        .find(|price| price.is_finite() && *price > 0.0)
}

struct OnDemandSeed<'a>(Option<&'a HashMap<String, (String, String)>>);

impl<'de> DeserializeSeed<'de> for OnDemandSeed<'_> {
    type Value = HashMap<String, f64>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OnDemandSeed<'_> {
    type Value = HashMap<String, f64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("on-demand terms keyed by SKU")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut prices = HashMap::new();
        while let Some(sku) = map.next_key::<String>()? {
            if self.0.is_some_and(|kept| !kept.contains_key(&sku)) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let terms: HashMap<String, Term> = map.next_value()?;
            if let Some(price) = hourly_usd(&terms) {
                prices.insert(sku, price);
            }
        }
        Ok(prices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRODUCTS: &str = r#""products":{
        "SKU1":{"sku":"SKU1","productFamily":"Compute Instance","attributes":{"regionCode":"us-east-1","instanceType":"p4d.24xlarge","operatingSystem":"Linux","tenancy":"Shared","preInstalledSw":"NA","capacitystatus":"Used","licenseModel":"No License required"}},
        "SKU2":{"sku":"SKU2","productFamily":"Compute Instance","attributes":{"regionCode":"us-east-1","instanceType":"p4d.24xlarge","operatingSystem":"Linux","tenancy":"Shared","preInstalledSw":"NA","capacitystatus":"UnusedCapacityReservation","licenseModel":"No License required"}},
        "SKU3":{"sku":"SKU3","productFamily":"Compute Instance","attributes":{"regionCode":"us-east-1","instanceType":"p4d.24xlarge","operatingSystem":"Windows","tenancy":"Shared","preInstalledSw":"NA","capacitystatus":"Used","licenseModel":"No License required"}},
        "SKU4":{"sku":"SKU4","productFamily":"Compute Instance","attributes":{"regionCode":"us-east-1","instanceType":"m5.large","operatingSystem":"Linux","tenancy":"Shared","preInstalledSw":"NA","capacitystatus":"Used","licenseModel":"No License required"}},
        "SKU5":{"sku":"SKU5","productFamily":"Storage","attributes":{"regionCode":"us-east-1"}}}"#;

    const TERMS: &str = r#""terms":{
        "OnDemand":{
          "SKU1":{"SKU1.JRTCKXETXF":{"offerTermCode":"JRTCKXETXF","priceDimensions":{"SKU1.JRTCKXETXF.6YS6EN2CT7":{"unit":"Hrs","pricePerUnit":{"USD":"21.9576000000"},"beginRange":"0","endRange":"Inf"}},"termAttributes":{}}},
          "SKU2":{"SKU2.JRTCKXETXF":{"priceDimensions":{"x":{"unit":"Hrs","pricePerUnit":{"USD":"0.0000000000"}}}}},
          "SKU3":{"SKU3.JRTCKXETXF":{"priceDimensions":{"x":{"unit":"Hrs","pricePerUnit":{"USD":"25.9"}}}}},
          "SKU4":{"SKU4.JRTCKXETXF":{"priceDimensions":{"x":{"unit":"Hrs","pricePerUnit":{"USD":"0.096"}}}}}},
        "Reserved":{"SKU1":{"SKU1.6QCMYABX3D":{"priceDimensions":{"y":{"unit":"Quantity","pricePerUnit":{"USD":"115000"}}}}}}}"#;

    fn offer(first: &str, second: &str) -> String {
        format!(r#"{{"formatVersion":"v1.0","offerCode":"AmazonEC2",{first},{second},"attributesList":{{}}}}"#)
    }

    #[test]
    fn keeps_the_plain_linux_on_demand_price_of_the_types_asked() {
        let types = BTreeSet::from(["p4d.24xlarge".to_string()]);
        let quotes = read_offer_file("us-east-1.json", offer(PRODUCTS, TERMS).as_bytes(), &types).unwrap();
        assert_eq!(quotes.len(), 1, "{quotes:?}");
        assert_eq!(quotes[0].instance_type, "p4d.24xlarge");
        assert_eq!(quotes[0].region, "us-east-1");
        assert_eq!(quotes[0].usd_per_hour, 21.9576);
    }

    #[test]
    fn terms_before_products_give_the_same_prices() {
        let reordered = offer(TERMS, PRODUCTS);
        let types = BTreeSet::from(["p4d.24xlarge".to_string(), "m5.large".to_string()]);
        let quotes = read_offer_file("reordered.json", reordered.as_bytes(), &types).unwrap();
        assert_eq!(quotes.len(), 2);
        assert_eq!(quotes[0].instance_type, "m5.large");
    }

    #[test]
    fn a_region_index_gives_absolute_urls_and_junk_is_refused() {
        let index = r#"{"formatVersion":"v1.0","regions":{"us-east-1":{"regionCode":"us-east-1","currentVersionUrl":"/offers/v1.0/aws/AmazonEC2/20250101000000/us-east-1/index.json"}}}"#;
        let urls = parse_region_index("region_index.json", index).unwrap();
        assert_eq!(
            urls["us-east-1"],
            "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/20250101000000/us-east-1/index.json"
        );
        assert!(parse_region_index("x.json", "[]").is_err());
        assert!(read_offer_file("x.json", "<html>".as_bytes(), &BTreeSet::new()).is_err());
        assert!(read_offer_file("x.json", r#"{"series":[1,2]}"#.as_bytes(), &BTreeSet::new()).is_err());
        let s3 = r#"{"offerCode":"AmazonS3","products":{},"terms":{}}"#;
        assert!(read_offer_file("x.json", s3.as_bytes(), &BTreeSet::new()).is_err());
    }
}
