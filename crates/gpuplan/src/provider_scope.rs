//! Where a plan may rent by what providers publish beyond prices: a single-VM uptime SLA at
//! least `--sla`, every `--compliance` programme stated, a region in one of `--countries`.

use crate::{Error, Field, RequestError};
use gpuplan_catalog::Catalog;
use gpuplan_model::{COMPLIANCE_PROGRAMMES, ProviderId, did_you_mean, programme_key};
use serde::Serialize;
use std::collections::BTreeSet;

/// The facts filters of a request, as typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderScope {
    /// Single-instance uptime SLA at least this, %.
    pub sla: Option<f64>,
    pub compliance: Vec<String>,
    /// ISO 3166-1 alpha-2 codes.
    pub countries: Vec<String>,
}

impl ProviderScope {
    fn any(&self) -> bool {
        self.sla.is_some() || !self.compliance.is_empty() || !self.countries.is_empty()
    }
}

/// The `(provider, region)` pairs the filters allow (`None`: no filter given), and a note
/// naming the providers they leave out for want of a published fact.
pub fn allowed_locations(
    catalog: &Catalog,
    scope: &ProviderScope,
    notes: &mut Vec<String>,
) -> Result<Option<BTreeSet<(ProviderId, String)>>, Error> {
    if !scope.any() {
        return Ok(None);
    }
    if let Some(sla) = scope.sla {
        if !(sla > 0.0 && sla <= 100.0) {
            return Err(
                RequestError::invalid(Field::Sla, sla.to_string(), "an uptime percentage")
                    .with_hint("e.g. 99.9")
                    .into(),
            );
        }
    }
    let programmes = scope
        .compliance
        .iter()
        .map(|name| programme(name))
        .collect::<Result<Vec<_>, _>>()?;
    let countries = countries(catalog, &scope.countries)?;
    let operations = catalog.operations();
    let mut unknown = BTreeSet::new();
    let mut below = std::collections::BTreeMap::new();
    let mut allowed = BTreeSet::new();
    for offering in catalog.offerings() {
        let Some(facts) = operations.provider_facts(&offering.provider) else {
            unknown.insert(offering.provider.as_str().to_string());
            continue;
        };
        let region = offering.region.clone().unwrap_or_default();
        let sla = scope
            .sla
            .is_none_or(|min| facts.sla_instance_percent.is_some_and(|p| p >= min));
        let stated = programmes.iter().all(|p| facts.states(p));
        let country = countries.is_empty() || facts.country(&region).is_some_and(|c| countries.contains(c));
        match (scope.sla, facts.sla_instance_percent) {
            (Some(_), None) => {
                unknown.insert(offering.provider.as_str().to_string());
            }
            (Some(min), Some(published)) if published < min => {
                below.insert(offering.provider.as_str().to_string(), published);
            }
            _ => {}
        }
        if sla && stated && country {
            allowed.insert((offering.provider.clone(), region));
        }
    }
    if !unknown.is_empty() {
        notes.push(format!(
            "left out for want of a published fact the filters need: {}",
            unknown.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if let (Some(min), false) = (scope.sla, below.is_empty()) {
        let named: Vec<String> = below
            .into_iter()
            .map(|(provider, published)| format!("{provider} ({published} %)"))
            .collect();
        notes.push(format!(
            "left out for a single-VM SLA below {min} %: {}",
            named.join(", ")
        ));
    }
    Ok(Some(allowed))
}

/// What a provider publishes beyond prices (`catalog --provider`): its SLA, compliance,
/// region and network facts, its spot price where it states one only as a share of
/// pay-as-you-go, and its storage and internet egress prices.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderReport<'a> {
    #[serde(flatten)]
    pub facts: &'a gpuplan_model::ProviderFacts,
    pub spot_share: Option<&'a gpuplan_model::SpotShare>,
    pub storage: Option<&'a gpuplan_model::StoragePricing>,
}

/// What `name` (a provider id) publishes beyond prices; a provider the catalog has no facts
/// for says which ones it has.
pub fn provider_facts<'a>(catalog: &'a Catalog, name: &str) -> Result<ProviderReport<'a>, Error> {
    let provider = crate::resolve::providers(catalog, &[name.to_string()])?
        .into_iter()
        .next()
        .unwrap_or_else(|| ProviderId::new(name));
    let operations = catalog.operations();
    let report = |facts| ProviderReport {
        facts,
        spot_share: operations.spot_share(&provider),
        storage: catalog.storage_pricing(&provider),
    };
    operations.provider_facts(&provider).map(report).ok_or_else(|| {
        let known: Vec<&str> = catalog
            .operations()
            .providers
            .iter()
            .map(|f| f.provider.as_str())
            .collect();
        Error::invalid(
            format!("the catalog records no SLA, compliance or region facts for `{name}`"),
            Some(format!("it has them for {}", known.join(", "))),
        )
    })
}

/// A programme as typed, to its key; one not among those the catalog records is refused.
fn programme(name: &str) -> Result<String, Error> {
    let key = programme_key(name);
    if COMPLIANCE_PROGRAMMES.iter().any(|p| programme_key(p) == key) {
        return Ok(key);
    }
    let hint = did_you_mean(name, COMPLIANCE_PROGRAMMES)
        .map(|near| format!("did you mean `{near}`?"))
        .unwrap_or_else(|| format!("the catalog records {}", COMPLIANCE_PROGRAMMES.join(", ")));
    Err(RequestError::invalid(
        Field::Compliance,
        name,
        format!("no compliance programme `{name}` in the catalog"),
    )
    .with_hint(hint)
    .into())
}

/// Country codes as typed, upper-cased; a code no region of the catalog is in is refused.
fn countries(catalog: &Catalog, names: &[String]) -> Result<BTreeSet<String>, Error> {
    let known: BTreeSet<&str> = catalog
        .operations()
        .providers
        .iter()
        .flat_map(|f| f.countries.values().map(String::as_str))
        .collect();
    names
        .iter()
        .map(|name| {
            let code = name.trim().to_ascii_uppercase();
            if known.contains(code.as_str()) {
                Ok(code)
            } else {
                Err(RequestError::invalid(
                    Field::Countries,
                    name,
                    format!("no region of the catalog is in `{name}`"),
                )
                .with_hint(format!(
                    "give ISO 3166-1 alpha-2 codes; the catalog has regions in {}",
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                ))
                .into())
            }
        })
        .collect()
}
