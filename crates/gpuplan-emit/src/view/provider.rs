//! What a provider publishes beyond prices, for people (`gpuplan catalog --provider X`).

use gpuplan_model::{ProviderFacts, Source, SpotShare, StoragePricing};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The provider's SLA, status page, compliance programmes, region countries, what data costs
/// and takes between its regions and to the internet, its dedicated private link, and its spot
/// price where it states one only as a share of pay-as-you-go, each with where it was read; a
/// fact not found says so.
pub fn provider_facts_text(
    facts: &ProviderFacts,
    spot: Option<&SpotShare>,
    storage: Option<&StoragePricing>,
) -> String {
    let mut text = format!("{}\n", facts.provider);
    let mut line = |label: &str, value: String| {
        let _ = writeln!(text, "  {label:<20} {value}");
    };
    let percent = |p: Option<f64>| p.map_or("unknown (no source found)".to_string(), |p| format!("{p} %"));
    line("SLA, one VM", percent(facts.sla_instance_percent));
    line("SLA, across zones", percent(facts.sla_multi_zone_percent));
    if let Some(credits) = &facts.sla_credits {
        line("SLA credits", credits.clone());
    }
    line(
        "status page",
        facts.status_page.clone().unwrap_or_else(|| "not found".to_string()),
    );
    line(
        "compliance",
        if facts.compliance.is_empty() {
            "none found".to_string()
        } else {
            facts.compliance.join(", ")
        },
    );
    line("countries", countries(&facts.countries));
    line("between regions", inter_region(facts));
    line(
        "to the internet",
        storage
            .and_then(StoragePricing::egress_text)
            .unwrap_or_else(|| "not found".to_string()),
    );
    for latency in &facts.latencies {
        line(
            "round trip",
            format!("{} – {}: {} ms", latency.from, latency.to, latency.milliseconds),
        );
    }
    if facts.latencies.is_empty() {
        line("round trip", "not in the data (see its source)".to_string());
    }
    line(
        "interconnect",
        facts.interconnect.clone().unwrap_or_else(|| "not found".to_string()),
    );
    if let Some(share) = spot {
        line("spot price", spot_share(share));
    }
    let spot_source = spot.map(|s| s.source.clone());
    let sources = [
        ("SLA", &facts.sla_source),
        ("compliance", &facts.compliance_source),
        ("regions", &facts.regions_source),
        ("between regions", &facts.inter_region_source),
        ("round trips", &facts.latency_source),
        ("interconnect", &facts.interconnect_source),
        ("spot", &spot_source),
    ];
    let _ = writeln!(text, "sources");
    for (what, source) in sources {
        if let Some(source) = source {
            let _ = writeln!(text, "  {what}: {}", cite(source));
        }
    }
    for source in storage.map(|s| s.sources.as_slice()).unwrap_or_default() {
        let _ = writeln!(text, "  storage and egress: {source}");
    }
    text
}

/// `3–20 % of pay-as-you-go (…); planned at 20 %`: the stated range and what is priced from it.
fn spot_share(share: &SpotShare) -> String {
    let planned = if share.typical {
        format!("planned at {:.0} %", share.highest * 100.0)
    } else {
        "not priced: give --spot-price".to_string()
    };
    format!("{} ({planned})", share.stated)
}

/// `$0.02/GB on one continent, $0.05/GB between continents`, `free`, or that no price was
/// found.
fn inter_region(facts: &ProviderFacts) -> String {
    let per_gb = |usd: f64| {
        if usd == 0.0 {
            "free".to_string()
        } else {
            format!("${usd}/GB")
        }
    };
    let scope = facts.inter_region_scope.as_deref().unwrap_or("on one continent");
    match (facts.inter_region_usd_per_gb, facts.inter_continent_usd_per_gb) {
        (None, None) => "not found".to_string(),
        (Some(0.0), None) => "free".to_string(),
        (Some(near), None) => format!("{} {scope}", per_gb(near)),
        (None, Some(far)) => format!("{} between continents", per_gb(far)),
        (Some(near), Some(far)) => format!("{} {scope}, {} between continents", per_gb(near), per_gb(far)),
    }
}

/// `US (4 regions), DE (1)`: each country with how many of the catalog's regions are in it.
fn countries(map: &BTreeMap<String, String>) -> String {
    if map.is_empty() {
        return "not found".to_string();
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for country in map.values() {
        *counts.entry(country).or_default() += 1;
    }
    counts
        .iter()
        .map(|(country, n)| format!("{country} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cite(source: &Source) -> String {
    let note = source.note.as_ref().map(|n| format!("; {n}")).unwrap_or_default();
    format!("{} <{}>, read {}{note}", source.title, source.url, source.as_of)
}
