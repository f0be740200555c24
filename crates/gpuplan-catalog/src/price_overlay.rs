//! The prices a user actually pays: negotiated rates for instance types, or a percentage off a
//! provider's list prices, read from a TOML or CSV file and applied over the catalog. List
//! prices stay beside them, so that every command can show both.
//!
//! TOML:
//! ```toml
//! [[price]]                      # one instance type, in one region or all of them
//! provider = "aws"
//! instance_type = "p5.48xlarge"
//! region = "us-east-1"           # optional
//! billing = "on-demand"          # or "spot"; default on-demand
//! usd_per_hour = 40.0
//!
//! [[discount]]                   # a percentage off every list price of a provider
//! provider = "gcp"
//! percent = 20
//! billing = "on-demand"          # optional
//! ```
//! CSV: `provider,instance_type,region,billing,usd_per_hour,discount_percent`, one of the last
//! two per row; a row without an instance type is a provider-wide discount.

use crate::error::CatalogError;
use gpuplan_model::{Offering, ProviderId, UsdPerHour, did_you_mean};
use serde::Deserialize;

/// Which list price a rule replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverlayBilling {
    OnDemand,
    Spot,
}

impl OverlayBilling {
    fn parse(text: &str) -> Option<OverlayBilling> {
        match text.trim().to_lowercase().as_str() {
            "" | "on-demand" | "ondemand" | "on_demand" => Some(OverlayBilling::OnDemand),
            "spot" | "preemptible" => Some(OverlayBilling::Spot),
            _ => None,
        }
    }
}

fn on_demand() -> OverlayBilling {
    OverlayBilling::OnDemand
}

/// A negotiated hourly price for one instance type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstancePrice {
    pub provider: String,
    pub instance_type: String,
    #[serde(default)]
    pub region: Option<String>,
    #[serde(default = "on_demand")]
    pub billing: OverlayBilling,
    pub usd_per_hour: f64,
}

/// A percentage off all of a provider's list prices.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderDiscount {
    pub provider: String,
    pub percent: f64,
    #[serde(default = "on_demand")]
    pub billing: OverlayBilling,
}

/// The user's prices, as read from one file.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceOverlay {
    #[serde(default)]
    pub price: Vec<InstancePrice>,
    #[serde(default)]
    pub discount: Vec<ProviderDiscount>,
}

/// Most rules an overlay file may hold.
const MAX_RULES: usize = 100_000;

impl PriceOverlay {
    /// Reads `text`, TOML or CSV by the file name's extension.
    pub fn parse(name: &str, text: &str) -> Result<PriceOverlay, CatalogError> {
        let overlay = if name.to_lowercase().ends_with(".csv") {
            parse_csv(name, text)?
        } else {
            toml::from_str(text).map_err(|e| {
                CatalogError::new(name, e.message().to_string()).at_line(e.span().map(|s| line_of(text, s.start)))
            })?
        };
        if overlay.price.len() + overlay.discount.len() > MAX_RULES {
            return Err(CatalogError::new(name, format!("holds more than {MAX_RULES} prices")));
        }
        overlay.check(name)?;
        Ok(overlay)
    }

    fn check(&self, name: &str) -> Result<(), CatalogError> {
        for (index, price) in self.price.iter().enumerate() {
            if !(price.usd_per_hour.is_finite() && price.usd_per_hour > 0.0 && price.usd_per_hour < 1e5) {
                return Err(CatalogError::new(
                    name,
                    format!(
                        "price {} ({} {}): usd_per_hour {} is not a price between 0 and 100,000",
                        index + 1,
                        price.provider,
                        price.instance_type,
                        price.usd_per_hour
                    ),
                ));
            }
        }
        for discount in &self.discount {
            if !(discount.percent.is_finite() && discount.percent > 0.0 && discount.percent < 100.0) {
                return Err(CatalogError::new(
                    name,
                    format!(
                        "discount for {}: percent {} must be between 0 and 100",
                        discount.provider, discount.percent
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.price.is_empty() && self.discount.is_empty()
    }

    /// Applies the overlay to `offerings`: instance prices win over provider discounts. Every
    /// rule must match something, so that a misspelt instance type is an error rather than a
    /// price silently not applied. Returns how many offerings changed.
    pub fn apply(&self, name: &str, offerings: &mut [Offering]) -> Result<usize, CatalogError> {
        for discount in &self.discount {
            let provider = known_provider(name, &discount.provider, offerings)?;
            let factor = 1.0 - discount.percent / 100.0;
            for offering in offerings.iter_mut().filter(|o| o.provider == provider) {
                set(offering, discount.billing, Rule::Factor(factor));
            }
        }
        for price in &self.price {
            let provider = known_provider(name, &price.provider, offerings)?;
            let matches = |o: &Offering| {
                o.provider == provider
                    && o.instance_type.eq_ignore_ascii_case(&price.instance_type)
                    && price
                        .region
                        .as_ref()
                        .is_none_or(|r| o.region.as_deref() == Some(r.as_str()))
            };
            if !offerings.iter().any(matches) {
                let types: Vec<&str> = offerings
                    .iter()
                    .filter(|o| o.provider == provider)
                    .map(|o| o.instance_type.as_str())
                    .collect();
                let hint = did_you_mean(&price.instance_type, types.iter().copied())
                    .map_or(String::new(), |m| format!("; did you mean `{m}`?"));
                return Err(CatalogError::new(
                    name,
                    format!(
                        "{} {}{} is not in the catalog{hint}",
                        price.provider,
                        price.instance_type,
                        price.region.as_ref().map_or(String::new(), |r| format!(" in {r}"))
                    ),
                ));
            }
            for offering in offerings.iter_mut().filter(|o| matches(o)) {
                set(offering, price.billing, Rule::Fixed(price.usd_per_hour));
            }
        }
        Ok(offerings
            .iter()
            .filter(|o| o.list_on_demand.is_some() || o.list_spot.is_some())
            .count())
    }
}

/// What a rule does to a list price.
#[derive(Clone, Copy)]
enum Rule {
    /// A negotiated price, whatever the list says.
    Fixed(f64),
    /// A share of the list price.
    Factor(f64),
}

/// Replaces one billing mode's price, keeping the list price the first time.
fn set(offering: &mut Offering, billing: OverlayBilling, rule: Rule) {
    let (current, list) = match billing {
        OverlayBilling::OnDemand => (&mut offering.on_demand, &mut offering.list_on_demand),
        OverlayBilling::Spot => (&mut offering.spot, &mut offering.list_spot),
    };
    let base = list.or(*current);
    let price = match (rule, base) {
        (Rule::Fixed(usd), _) => usd,
        (Rule::Factor(factor), Some(base)) => base.0 * factor,
        // A discount off a price the catalog does not list changes nothing.
        (Rule::Factor(_), None) => return,
    };
    if list.is_none() {
        *list = *current;
    }
    *current = Some(UsdPerHour(price));
}

fn known_provider(name: &str, provider: &str, offerings: &[Offering]) -> Result<ProviderId, CatalogError> {
    let id = ProviderId::new(provider);
    if offerings.iter().any(|o| o.provider == id) {
        return Ok(id);
    }
    let mut known: Vec<&str> = offerings.iter().map(|o| o.provider.as_str()).collect();
    known.sort_unstable();
    known.dedup();
    let hint =
        did_you_mean(provider, known.iter().copied()).map_or(String::new(), |m| format!("; did you mean `{m}`?"));
    Err(CatalogError::new(
        name,
        format!("provider `{provider}` is not in the catalog{hint}"),
    ))
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[derive(Deserialize)]
struct CsvRow {
    provider: String,
    #[serde(default)]
    instance_type: Option<String>,
    #[serde(default)]
    region: Option<String>,
    #[serde(default)]
    billing: Option<String>,
    #[serde(default)]
    usd_per_hour: Option<f64>,
    #[serde(default)]
    discount_percent: Option<f64>,
}

fn parse_csv(name: &str, text: &str) -> Result<PriceOverlay, CatalogError> {
    let mut overlay = PriceOverlay::default();
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    for (index, row) in reader.deserialize::<CsvRow>().enumerate() {
        let line = index + 2;
        let row = row.map_err(|e| CatalogError::new(name, e.to_string()).at_line(Some(line)))?;
        let billing = match row.billing.as_deref() {
            None => OverlayBilling::OnDemand,
            Some(text) => OverlayBilling::parse(text).ok_or_else(|| {
                CatalogError::new(name, format!("billing `{text}` is not on-demand or spot")).at_line(Some(line))
            })?,
        };
        let instance = row.instance_type.filter(|t| !t.is_empty());
        match (instance, row.usd_per_hour, row.discount_percent) {
            (Some(instance_type), Some(usd_per_hour), None) => overlay.price.push(InstancePrice {
                provider: row.provider,
                instance_type,
                region: row.region.filter(|r| !r.is_empty()),
                billing,
                usd_per_hour,
            }),
            (None, None, Some(percent)) => overlay.discount.push(ProviderDiscount {
                provider: row.provider,
                percent,
                billing,
            }),
            _ => {
                return Err(CatalogError::new(
                    name,
                    "each row is either an instance type with usd_per_hour or a provider with discount_percent",
                )
                .at_line(Some(line)));
            }
        }
    }
    Ok(overlay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_and_csv_say_the_same() {
        let toml = PriceOverlay::parse(
            "p.toml",
            "[[price]]\nprovider = \"aws\"\ninstance_type = \"p5.48xlarge\"\nusd_per_hour = 40.0\n\n[[discount]]\nprovider = \"gcp\"\npercent = 20\n",
        )
        .unwrap();
        let csv = PriceOverlay::parse(
            "p.csv",
            "provider,instance_type,region,billing,usd_per_hour,discount_percent\naws,p5.48xlarge,,on-demand,40,\ngcp,,,,,20\n",
        )
        .unwrap();
        assert_eq!(toml, csv);
    }

    #[test]
    fn impossible_numbers_are_refused() {
        for text in [
            "[[price]]\nprovider = \"aws\"\ninstance_type = \"x\"\nusd_per_hour = -1.0\n",
            "[[discount]]\nprovider = \"aws\"\npercent = 120\n",
            "[[discount]]\nprovider = \"aws\"\npercent = nan\n",
        ] {
            assert!(PriceOverlay::parse("p.toml", text).is_err(), "{text}");
        }
        assert!(
            PriceOverlay::parse(
                "p.csv",
                "provider,instance_type,usd_per_hour,discount_percent\naws,p5,10,5\n"
            )
            .is_err()
        );
    }
}
