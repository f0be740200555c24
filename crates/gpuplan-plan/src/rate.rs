//! An offering's price per hour under one billing mode: the one rule `plan`, `plan --workload
//! tabular` and `cost` all price with. On-demand and spot are the catalog's prices; a reserved
//! price is derived from the on-demand one and the provider's published discount for the term,
//! and says so.

use crate::OfferingSource;
use gpuplan_model::{BillingMode, Offering, ReservedDiscount};

/// The price per instance-hour under one billing mode, and how it was reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub billing: BillingMode,
    pub usd_per_hour: f64,
    /// For a reserved mode: the published discount the price was derived with.
    pub discount: Option<ReservedDiscount>,
}

impl Rate {
    /// How a derived rate was reached (`on-demand less AWS's published 37 % 1y discount (…)`);
    /// `None` for a catalog price.
    pub fn derivation(&self) -> Option<String> {
        self.discount.as_ref().map(|d| {
            format!(
                "on-demand less {}'s published {:.0} % {} discount ({})",
                d.provider.display_name(),
                d.discount * 100.0,
                d.term,
                d.applies_to
            )
        })
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
        None if billing == BillingMode::Spot => offering.spot?.0,
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
        discount: None,
    })
}

/// The reserved rate `discount` gives off an `on_demand` rate.
pub fn reserved_rate(on_demand: f64, discount: &ReservedDiscount) -> Rate {
    Rate {
        billing: BillingMode::reserved(discount.term),
        usd_per_hour: on_demand * (1.0 - discount.discount),
        discount: Some(discount.clone()),
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
        let discount = negotiated.discount.as_ref().unwrap().discount;
        assert!((negotiated.usd_per_hour - 10.0 * (1.0 - discount)).abs() < 1e-9);
        let three_years = rate(&catalog, offering, BillingMode::Reserved3y, None).unwrap();
        assert!(three_years.usd_per_hour < reserved.usd_per_hour);
    }
}
