//! An offering as a listing shows it: the catalog's record with its spot rate, listed or
//! derived by the rule `plan` and `cost` price spot with.

use crate::{OfferingSource, Rate, rate};
use gpuplan_model::{BillingMode, Offering};

/// One row of `instances`: an offering and its spot rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub offering: Offering,
    /// The catalog's spot price, or one derived from the provider's published share of
    /// pay-as-you-go ([`Rate::derivation`] says how); `None` where there is neither.
    pub spot: Option<Rate>,
}

impl Listing {
    pub fn new(source: &impl OfferingSource, offering: Offering) -> Listing {
        let spot = rate(source, &offering, BillingMode::Spot, None);
        Listing { offering, spot }
    }

    /// The spot price per hour, listed or derived.
    pub fn spot_usd_per_hour(&self) -> Option<f64> {
        self.spot.as_ref().map(|rate| rate.usd_per_hour)
    }

    /// How the spot price was derived; `None` for a listed price or none at all.
    pub fn spot_derivation(&self) -> Option<String> {
        self.spot.as_ref().and_then(Rate::derivation)
    }
}
