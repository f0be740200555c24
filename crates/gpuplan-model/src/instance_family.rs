//! Instance families: the names guides and provider pages give a group of sizes (`NDv4`,
//! `A3 Mega`, `p5`, `gn7i`, `GN10Xp`), read from each provider's own naming convention for its
//! instance types, so that every size the catalog lists answers to its family.

/// The family names `instance_type` of `provider` answers to, the provider's own name first;
/// none where the provider's names carry no family (marketplaces' pod types).
pub fn instance_families(provider: &str, instance_type: &str) -> Vec<String> {
    let head = |separator: char| instance_type.split(separator).next().unwrap_or("").to_string();
    let names = match provider {
        // p5.48xlarge → p5; GN10Xp.2XLARGE40 → GN10Xp.
        "aws" | "tencent" => vec![head('.')],
        "gcp" => gcp(instance_type),
        "azure" => azure(instance_type),
        // ecs.gn7i-c8g1.2xlarge → gn7i.
        "alibaba" => {
            let name = instance_type.strip_prefix("ecs.").unwrap_or(instance_type);
            vec![name.split(['-', '.']).next().unwrap_or("").to_string()]
        }
        // BM.GPU.H100.8 → BM.GPU.H100.
        "oci" => vec![
            instance_type
                .rsplit_once('.')
                .map_or("", |(family, _)| family)
                .to_string(),
        ],
        _ => Vec::new(),
    };
    names
        .into_iter()
        .filter(|n| !n.is_empty() && n != instance_type)
        .collect()
}

/// a3-megagpu-8g → `a3`, `a3 mega`; g2-standard-4 → `g2`, `g2 standard`.
fn gcp(instance_type: &str) -> Vec<String> {
    let mut parts = instance_type.split('-');
    let (Some(series), Some(kind), Some(_size)) = (parts.next(), parts.next(), parts.next()) else {
        return Vec::new();
    };
    let kind = kind.strip_suffix("gpu").unwrap_or(kind);
    vec![series.to_string(), format!("{series} {kind}")]
}

/// Standard_ND96isr_H100_v5 → `ND H100 v5`, `NDisr H100 v5`; Standard_ND96asr_v4 → `NDv4`,
/// `NDasr v4`: the series letters, the GPU where the name carries it, the version (Azure's
/// "ND H100 v5-series", "NDv4").
fn azure(instance_type: &str) -> Vec<String> {
    let name = instance_type.strip_prefix("Standard_").unwrap_or(instance_type);
    let parts: Vec<&str> = name.split('_').collect();
    let (Some(first), Some(version)) = (parts.first(), parts.last()) else {
        return Vec::new();
    };
    if parts.len() < 2 || !version.starts_with('v') {
        return Vec::new();
    }
    let letters: String = first.chars().take_while(char::is_ascii_uppercase).collect();
    let features: String = first
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .skip_while(char::is_ascii_digit)
        .collect();
    match &parts[1..parts.len() - 1] {
        [] => vec![format!("{letters}{version}"), format!("{letters}{features} {version}")],
        tags => {
            let gpu = tags.join(" ");
            vec![
                format!("{letters} {gpu} {version}"),
                format!("{letters}{features} {gpu} {version}"),
            ]
        }
    }
}

/// A family name as typed or listed, compared without case, spaces, punctuation or a trailing
/// "series"/"family" (`ND A100 v4-series` = `nda100v4`).
pub fn family_key(name: &str) -> String {
    let key: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    ["series", "family", "instances"].iter().fold(key, |key, word| {
        key.strip_suffix(word).map_or(key.clone(), str::to_string)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_follow_each_providers_naming() {
        assert_eq!(instance_families("aws", "p4d.24xlarge"), ["p4d"]);
        assert_eq!(instance_families("gcp", "a3-megagpu-8g"), ["a3", "a3 mega"]);
        assert_eq!(instance_families("gcp", "g2-standard-4"), ["g2", "g2 standard"]);
        assert_eq!(instance_families("azure", "Standard_ND96asr_v4"), ["NDv4", "NDasr v4"]);
        assert_eq!(
            instance_families("azure", "Standard_ND96isr_H100_v5"),
            ["ND H100 v5", "NDisr H100 v5"]
        );
        assert_eq!(instance_families("alibaba", "ecs.gn7i-c8g1.2xlarge"), ["gn7i"]);
        assert_eq!(instance_families("tencent", "GN10Xp.2XLARGE40"), ["GN10Xp"]);
        assert_eq!(instance_families("oci", "BM.GPU.H100.8"), ["BM.GPU.H100"]);
        assert!(instance_families("runpod", "1x_H100_SECURE").is_empty());
    }

    #[test]
    fn keys_ignore_case_spacing_and_the_word_series() {
        assert_eq!(family_key("ND A100 v4-series"), family_key("nda100v4"));
        assert_eq!(family_key("A3 Mega"), family_key("a3 mega"));
        assert_ne!(family_key("GN10X"), family_key("GN10Xp"));
    }
}
