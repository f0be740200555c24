//! What a provider charges for keeping and moving data: block and object storage per GB-month,
//! and tiered internet egress per GB (or per GiB, where the provider meters in binary units).

use crate::{Date, ProviderId};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The unit a provider meters data transfer in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum DataUnit {
    /// 10⁹ bytes.
    #[default]
    #[serde(rename = "GB")]
    Gb,
    /// 2³⁰ bytes (Google Cloud meters network egress per GiB).
    #[serde(rename = "GiB")]
    Gib,
}

impl DataUnit {
    /// Decimal gigabytes in one of this unit.
    pub fn gigabytes(self) -> f64 {
        match self {
            DataUnit::Gb => 1.0,
            DataUnit::Gib => 1.073_741_824,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DataUnit::Gb => "GB",
            DataUnit::Gib => "GiB",
        }
    }
}

/// One provider's storage and egress list prices, each part optional where nothing was
/// published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoragePricing {
    pub provider: ProviderId,
    /// Network block storage (the default SSD type), USD per GB-month.
    pub block_usd_per_gb_month: Option<f64>,
    pub block_kind: Option<String>,
    /// Object storage (standard class), USD per GB-month.
    pub object_usd_per_gb_month: Option<f64>,
    pub object_kind: Option<String>,
    /// Internet egress per month as published: `(amount up to, USD per unit)` in
    /// `egress_unit`, the last price also applying beyond its bound.
    pub egress_tiers: Option<Vec<(f64, f64)>>,
    /// The unit of `egress_tiers`' bounds and prices.
    #[serde(default)]
    pub egress_unit: DataUnit,
    pub egress_note: Option<String>,
    /// Sources, as `title — url (as of)`.
    pub sources: Vec<String>,
    pub as_of: Date,
}

impl StoragePricing {
    /// The egress tiers in decimal GB and USD per GB, whatever unit they were published in.
    pub fn egress_tiers_per_gb(&self) -> Option<Vec<(f64, f64)>> {
        let gigabytes = self.egress_unit.gigabytes();
        self.egress_tiers.as_ref().map(|tiers| {
            tiers
                .iter()
                .map(|&(upto, usd)| (upto * gigabytes, usd / gigabytes))
                .collect()
        })
    }

    /// The egress tiers in the words and unit the provider publishes them in: `first 100 GB a
    /// month free, $0.087/GB to 10240 GB, $0.083/GB beyond 10240 GB`, or `free`.
    pub fn egress_text(&self) -> Option<String> {
        let unit = self.egress_unit.label();
        let tiers = self.egress_tiers.as_ref()?;
        if tiers.iter().all(|&(_, usd)| usd == 0.0) {
            return Some("free".to_string());
        }
        let mut text = String::new();
        let mut from = 0.0;
        for (index, &(upto, usd)) in tiers.iter().enumerate() {
            let last = index + 1 == tiers.len();
            if index > 0 {
                text.push_str(", ");
            }
            let _ = match (usd == 0.0, last) {
                (true, true) => write!(text, "free"),
                (true, false) => write!(text, "first {upto} {unit} a month free"),
                (false, true) if from > 0.0 => write!(text, "${usd}/{unit} beyond {from} {unit}"),
                (false, true) => write!(text, "${usd}/{unit}"),
                (false, false) => write!(text, "${usd}/{unit} to {upto} {unit}"),
            };
            from = upto;
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priced(tiers: Vec<(f64, f64)>, unit: DataUnit) -> StoragePricing {
        StoragePricing {
            provider: ProviderId::new("gcp"),
            block_usd_per_gb_month: None,
            block_kind: None,
            object_usd_per_gb_month: None,
            object_kind: None,
            egress_tiers: Some(tiers),
            egress_unit: unit,
            egress_note: None,
            sources: Vec::new(),
            as_of: "2026-11-23".parse().unwrap(),
        }
    }

    #[test]
    fn gib_tiers_become_decimal_gb_for_the_bill() {
        let pricing = priced(vec![(1024.0, 0.12), (1e9, 0.08)], DataUnit::Gib);
        let per_gb = pricing.egress_tiers_per_gb().unwrap();
        // 1 TiB is 1,099.5 GB; $0.12 per GiB is $0.1118 per GB.
        assert!((per_gb[0].0 - 1_099.511_627_776).abs() < 1e-6);
        assert!((per_gb[0].1 - 0.111_758_708).abs() < 1e-6);
    }

    #[test]
    fn tiers_are_described_in_their_published_unit() {
        let gib = priced(vec![(1024.0, 0.12), (10240.0, 0.11), (1e9, 0.08)], DataUnit::Gib);
        assert_eq!(
            gib.egress_text().unwrap(),
            "$0.12/GiB to 1024 GiB, $0.11/GiB to 10240 GiB, $0.08/GiB beyond 10240 GiB"
        );
        let gb = priced(vec![(100.0, 0.0), (10240.0, 0.087)], DataUnit::Gb);
        assert_eq!(
            gb.egress_text().unwrap(),
            "first 100 GB a month free, $0.087/GB beyond 100 GB"
        );
    }
}
