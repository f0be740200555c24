//! An offering's price per hour under one billing mode: the one rule `plan`, `plan --workload
//! tabular` and `cost` all price with. On-demand and spot are the catalog's prices; a reserved
//! price is derived from the on-demand one and the provider's published discount for the term,
//! and a spot price from the on-demand one and the share of it the provider says spot typically
//! costs at most, where it publishes no spot price per type; each derived price says so.

use crate::OfferingSource;
use gpuplan_model::{BillingMode, Offering, ReservedDiscount, SpotShare};

/// The price per instance-hour under one billing mode, and how it was reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub billing: BillingMode,
    pub usd_per_hour: f64,
    /// What the price was derived from; `None` for a catalog price.
    pub derived_from: Option<Derivation>,
}

/// The published figure a rate was derived from the on-demand price with.
#[derive(Debug, Clone, PartialEq)]
pub enum Derivation {
    /// A reserved mode: the provider's published discount for the term.
    Discount(ReservedDiscount),
    /// Spot without a catalog price: the provider's published share of pay-as-you-go.
    SpotShare(SpotShare),
}

impl Rate {
    /// How a derived rate was reached (`on-demand less AWS's published 37 % 1y discount (…)`);
    /// `None` for a catalog price.
    pub fn derivation(&self) -> Option<String> {
        Some(match self.derived_from.as_ref()? {
            Derivation::Discount(d) => format!(
                "on-demand less {}'s published {:.0} % {} discount ({})",
                d.provider.display_name(),
                d.discount * 100.0,
                d.term,
                d.applies_to
            ),
            Derivation::SpotShare(s) => format!(
                "{:.0} % of on-demand, the top of the spot range {} publishes instead of a price per type ({:.0}–{:.0} %, {})",
                s.highest * 100.0,
                s.provider.display_name(),
                s.lowest * 100.0,
                s.highest * 100.0,
                s.source.as_of
            ),
        })
    }

    /// The published discount a reserved rate was derived with.
    pub fn discount(&self) -> Option<&ReservedDiscount> {
        match &self.derived_from {
            Some(Derivation::Discount(d)) => Some(d),
            _ => None,
        }
    }
}

/// `offering`'s rate under `billing`, with `on_demand` standing in for its on-demand price
/// where given (a negotiated rate). `None` where the catalog has no such price, or no
/// discount for the provider and term.
pub fn rate(
    source: &impl OfferingSource,
    offering: &Offering,
    billing: BillingMode,
    on_demand: Option<f64>,
) -> Option<Rate> {
    let on_demand = on_demand.or(offering.on_demand.map(|p| p.0));
    let usd_per_hour = match billing.commitment() {
        None if billing == BillingMode::Spot => return spot_rate(source, offering, on_demand),
        None => on_demand?,
        Some(term) => {
            return Some(reserved_rate(
                on_demand?,
                source.reserved_discount(&offering.provider, term)?,
            ));
        }
    };
    Some(Rate {
        billing,
        usd_per_hour,
        derived_from: None,
    })
}

/// Spot: the catalog's price, or the share of `on_demand` the offering's provider says spot
/// typically costs at most, where it publishes that rather than prices.
fn spot_rate(source: &impl OfferingSource, offering: &Offering, on_demand: Option<f64>) -> Option<Rate> {
    let spot = source.operations().spot_price(offering, on_demand)?;
    Some(Rate {
        billing: BillingMode::Spot,
        usd_per_hour: spot.usd_per_hour,
        derived_from: spot.share.cloned().map(Derivation::SpotShare),
    })
}

/// The reserved rate `discount` gives off an `on_demand` rate.
pub fn reserved_rate(on_demand: f64, discount: &ReservedDiscount) -> Rate {
    Rate {
        billing: BillingMode::reserved(discount.term),
        usd_per_hour: on_demand * (1.0 - discount.discount),
        derived_from: Some(Derivation::Discount(discount.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_catalog::Catalog;

    #[test]
    fn reserved_rates_are_derived_from_on_demand_and_say_so() {
        let catalog = Catalog::embedded().unwrap();
        let offering = catalog
            .offerings()
            .iter()
            .find(|o| o.instance_type == "p5.48xlarge" && o.on_demand.is_some())
            .unwrap();
        let on_demand = rate(&catalog, offering, BillingMode::OnDemand, None).unwrap();
        assert_eq!(on_demand.usd_per_hour, offering.on_demand.unwrap().0);
        assert!(on_demand.derivation().is_none());
        let reserved = rate(&catalog, offering, BillingMode::Reserved1y, None).unwrap();
        assert!(reserved.usd_per_hour < on_demand.usd_per_hour);
        assert!(
            reserved
                .derivation()
                .unwrap()
                .starts_with("on-demand less AWS's published")
        );
        // A negotiated on-demand rate is the base the discount applies to.
        let negotiated = rate(&catalog, offering, BillingMode::Reserved1y, Some(10.0)).unwrap();
        let discount = negotiated.discount().unwrap().discount;
        assert!((negotiated.usd_per_hour - 10.0 * (1.0 - discount)).abs() < 1e-9);
        let three_years = rate(&catalog, offering, BillingMode::Reserved3y, None).unwrap();
        assert!(three_years.usd_per_hour < reserved.usd_per_hour);
    }

    #[test]
    fn spot_published_only_as_a_share_is_priced_at_its_typical_top_and_says_so() {
        let catalog = Catalog::embedded().unwrap();
        let unpriced = |provider: &str| {
            catalog
                .offerings()
                .iter()
                .find(|o| o.provider.as_str() == provider && o.spot.is_none() && o.on_demand.is_some())
                .unwrap()
        };
        // Tencent: 3–20 % of pay-as-you-go in the vast majority of cases; planned at 20 %.
        let tencent = unpriced("tencent");
        let spot = rate(&catalog, tencent, BillingMode::Spot, None).unwrap();
        assert!((spot.usd_per_hour - 0.2 * tencent.on_demand.unwrap().0).abs() < 1e-9);
        let how = spot.derivation().unwrap();
        assert!(how.starts_with("20 % of on-demand") && how.contains("3–20 %"), "{how}");
        // A negotiated on-demand rate is the base the share applies to.
        let negotiated = rate(&catalog, tencent, BillingMode::Spot, Some(10.0)).unwrap();
        assert!((negotiated.usd_per_hour - 2.0).abs() < 1e-9);
        // Alibaba states only a floor in its marketing and the pay-as-you-go ceiling: no price.
        assert!(rate(&catalog, unpriced("alibaba"), BillingMode::Spot, None).is_none());
    }
}
