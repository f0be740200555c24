use crate::{Date, ProviderId};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How often a provider meters usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BillingGranularity {
    Second,
    Minute,
    Hour,
}

impl FromStr for BillingGranularity {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_lowercase().as_str() {
            "second" | "per-second" => Ok(BillingGranularity::Second),
            "minute" | "per-minute" => Ok(BillingGranularity::Minute),
            "hour" | "per-hour" => Ok(BillingGranularity::Hour),
            other => Err(format!(
                "unknown billing granularity `{other}` (expected second, minute or hour)"
            )),
        }
    }
}

impl fmt::Display for BillingGranularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BillingGranularity::Second => "second",
            BillingGranularity::Minute => "minute",
            BillingGranularity::Hour => "hour",
        })
    }
}

/// How one offering's usage becomes billed time: metered in steps of its granularity (whole
/// hours when unknown, the conservative reading) with at least a minimum charge.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct BillingMeter {
    pub granularity: Option<BillingGranularity>,
    /// The shortest time billed once the instance starts, seconds (0: none stated).
    pub minimum_seconds: f64,
}

impl BillingMeter {
    /// Hours billed for `hours` of use.
    pub fn billed_hours(&self, hours: f64) -> f64 {
        let hours = hours.max(0.0);
        let metered = match self.granularity {
            Some(BillingGranularity::Second) => (hours * 3600.0).ceil() / 3600.0,
            Some(BillingGranularity::Minute) => (hours * 60.0).ceil() / 60.0,
            Some(BillingGranularity::Hour) | None => hours.ceil().max(1.0),
        };
        metered.max(self.minimum_seconds / 3600.0)
    }

    /// "per second, at least 60 s", in words.
    pub fn describe(&self) -> String {
        let step = match self.granularity {
            Some(g) => format!("per {g}"),
            None => "in whole hours (granularity not published)".to_string(),
        };
        match self.minimum_seconds {
            m if m >= 3600.0 && m % 3600.0 == 0.0 => format!("{step}, at least {:.0} h", m / 3600.0),
            m if m >= 60.0 && m % 60.0 == 0.0 => format!("{step}, at least {:.0} min", m / 60.0),
            m if m > 1.0 => format!("{step}, at least {m:.0} s"),
            _ => step,
        }
    }
}

/// The length of a committed-use contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum CommitmentTerm {
    #[serde(rename = "1y")]
    OneYear,
    #[serde(rename = "3y")]
    ThreeYears,
}

impl CommitmentTerm {
    /// Hours billed over the term (365-day years, as providers bill reserved capacity).
    pub fn hours(self) -> f64 {
        match self {
            CommitmentTerm::OneYear => 8760.0,
            CommitmentTerm::ThreeYears => 3.0 * 8760.0,
        }
    }
}

impl fmt::Display for CommitmentTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommitmentTerm::OneYear => "1y",
            CommitmentTerm::ThreeYears => "3y",
        })
    }
}

/// How an instance is paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BillingMode {
    OnDemand,
    Spot,
    #[serde(rename = "reserved-1y")]
    Reserved1y,
    #[serde(rename = "reserved-3y")]
    Reserved3y,
}

impl BillingMode {
    /// The reserved mode of `term`.
    pub fn reserved(term: CommitmentTerm) -> BillingMode {
        match term {
            CommitmentTerm::OneYear => BillingMode::Reserved1y,
            CommitmentTerm::ThreeYears => BillingMode::Reserved3y,
        }
    }

    /// The term a reserved mode commits to; `None` for pay-as-you-go modes.
    pub fn commitment(self) -> Option<CommitmentTerm> {
        match self {
            BillingMode::Reserved1y => Some(CommitmentTerm::OneYear),
            BillingMode::Reserved3y => Some(CommitmentTerm::ThreeYears),
            BillingMode::OnDemand | BillingMode::Spot => None,
        }
    }
}

impl fmt::Display for BillingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BillingMode::OnDemand => "on-demand",
            BillingMode::Spot => "spot",
            BillingMode::Reserved1y => "reserved-1y",
            BillingMode::Reserved3y => "reserved-3y",
        })
    }
}

/// A provider's discount for committing to a term, used where the catalog has no reserved
/// price of its own. Derived prices are always labelled as such.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReservedDiscount {
    pub provider: ProviderId,
    pub term: CommitmentTerm,
    pub payment: String,
    /// Fraction off the on-demand rate, 0..1.
    pub discount: f64,
    pub applies_to: String,
    pub title: String,
    pub url: String,
    pub as_of: Date,
    pub note: Option<String>,
}

#[cfg(test)]
mod meter_tests {
    use super::*;

    fn meter(granularity: Option<BillingGranularity>, minimum_seconds: f64) -> BillingMeter {
        BillingMeter {
            granularity,
            minimum_seconds,
        }
    }

    #[test]
    fn usage_rounds_up_to_the_step_and_the_minimum() {
        assert_eq!(meter(Some(BillingGranularity::Hour), 0.0).billed_hours(0.5), 1.0);
        assert_eq!(meter(None, 0.0).billed_hours(0.25), 1.0);
        assert_eq!(
            meter(Some(BillingGranularity::Second), 60.0).billed_hours(10.0 / 3600.0),
            60.0 / 3600.0
        );
        assert_eq!(
            meter(Some(BillingGranularity::Second), 0.0).billed_hours(10.0 / 3600.0),
            10.0 / 3600.0
        );
        assert_eq!(
            meter(Some(BillingGranularity::Minute), 0.0).billed_hours(61.5 / 60.0),
            62.0 / 60.0
        );
        // Per second with a one-hour minimum (bare metal at Oracle): 15 minutes bill an hour.
        assert_eq!(meter(Some(BillingGranularity::Second), 3600.0).billed_hours(0.25), 1.0);
        assert_eq!(meter(Some(BillingGranularity::Minute), 0.0).billed_hours(0.25), 0.25);
    }

    #[test]
    fn the_terms_read_as_words() {
        assert_eq!(
            meter(Some(BillingGranularity::Second), 60.0).describe(),
            "per second, at least 1 min"
        );
        assert_eq!(
            meter(Some(BillingGranularity::Second), 3600.0).describe(),
            "per second, at least 1 h"
        );
        assert_eq!(meter(Some(BillingGranularity::Minute), 0.0).describe(), "per minute");
        assert_eq!(
            meter(None, 0.0).describe(),
            "in whole hours (granularity not published)"
        );
    }
}
