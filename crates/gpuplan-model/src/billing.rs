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
