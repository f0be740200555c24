//! What a provider publishes beyond its prices: its uptime commitment, its status page, the
//! compliance programmes it states, the country of each region, what moving data between its
//! regions costs and takes, and its dedicated private link.

use crate::{ProviderId, Source};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One provider's published facts; each `None` or empty where no source was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderFacts {
    pub provider: ProviderId,
    /// Monthly uptime committed for a single VM instance, %.
    pub sla_instance_percent: Option<f64>,
    /// Monthly uptime committed for instances spread over availability zones, %.
    pub sla_multi_zone_percent: Option<f64>,
    /// The service credits below the commitment, in words.
    pub sla_credits: Option<String>,
    pub sla_source: Option<Source>,
    pub status_page: Option<String>,
    /// Programmes the provider states it is certified or attested for (`SOC 2`, `HIPAA`).
    pub compliance: Vec<String>,
    pub compliance_source: Option<Source>,
    /// Region id → ISO 3166-1 alpha-2 country code.
    pub countries: BTreeMap<String, String>,
    pub regions_source: Option<Source>,
    /// Data sent between two of the provider's regions on one continent, USD per GB.
    #[serde(default)]
    pub inter_region_usd_per_gb: Option<f64>,
    /// Which regions `inter_region_usd_per_gb` covers where the source narrows it
    /// (`between US regions`); `None`: any two on one continent.
    #[serde(default)]
    pub inter_region_scope: Option<String>,
    /// Data sent between regions on different continents, USD per GB, where stated apart.
    #[serde(default)]
    pub inter_continent_usd_per_gb: Option<f64>,
    #[serde(default)]
    pub inter_region_source: Option<Source>,
    /// The provider's dedicated private link into its regions, in words: the product, its port
    /// speeds and a list price.
    #[serde(default)]
    pub interconnect: Option<String>,
    #[serde(default)]
    pub interconnect_source: Option<Source>,
    /// Round-trip times between pairs of the provider's regions, as the provider publishes them.
    #[serde(default)]
    pub latencies: Vec<RegionLatency>,
    #[serde(default)]
    pub latency_source: Option<Source>,
}

/// A round-trip time the provider publishes between two of its regions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionLatency {
    pub from: String,
    pub to: String,
    pub milliseconds: f64,
}

/// The programmes `compliance` filters know, as providers name them.
pub const COMPLIANCE_PROGRAMMES: [&str; 13] = [
    "SOC 2",
    "ISO 27001",
    "ISO 27017",
    "ISO 27018",
    "PCI DSS",
    "HIPAA",
    "FedRAMP",
    "FedRAMP High",
    "C5",
    "GDPR",
    "IRAP",
    "ISMAP",
    "K-ISMS",
];

/// A programme name compared without case, spaces or punctuation (`soc2` = `SOC 2`).
pub fn programme_key(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl ProviderFacts {
    /// Whether the provider states `programme` (a key): `fedramp` is met by FedRAMP High too.
    pub fn states(&self, programme: &str) -> bool {
        self.compliance
            .iter()
            .any(|stated| programme_key(stated).starts_with(programme))
    }

    /// The country of `region`, where known.
    pub fn country(&self, region: &str) -> Option<&str> {
        self.countries.get(region).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programmes_match_without_spelling_and_fedramp_high_meets_fedramp() {
        let facts = ProviderFacts {
            provider: ProviderId::new("x"),
            sla_instance_percent: None,
            sla_multi_zone_percent: None,
            sla_credits: None,
            sla_source: None,
            status_page: None,
            compliance: vec!["SOC 2".into(), "FedRAMP High".into()],
            compliance_source: None,
            countries: BTreeMap::from([("eu-central-1".to_string(), "DE".to_string())]),
            regions_source: None,
            inter_region_usd_per_gb: None,
            inter_region_scope: None,
            inter_continent_usd_per_gb: None,
            inter_region_source: None,
            interconnect: None,
            interconnect_source: None,
            latencies: Vec::new(),
            latency_source: None,
        };
        assert!(facts.states(&programme_key("soc2")));
        assert!(facts.states(&programme_key("FedRAMP")));
        assert!(!facts.states(&programme_key("HIPAA")));
        assert_eq!(facts.country("eu-central-1"), Some("DE"));
    }
}
