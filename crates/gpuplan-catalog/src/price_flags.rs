//! Load-time checks of the prices the catalog keeps: a price that looks like a placeholder or
//! a data error is flagged on its row, so the planner leaves it out unless the user trusts it
//! and `catalog --check` can list it.

use gpuplan_model::{Offering, PriceFlag};
use std::collections::{BTreeMap, BTreeSet};

/// Spot below this share of on-demand is flagged. The deepest published spot discounts for
/// GPU instances are about 70–80 % (AWS "up to 90 %" is a ceiling for all instance types;
/// GCP spot GPUs list 60–91 % off but their A3/A2 rows sit at 60–70 %): a spot price under
/// a tenth of on-demand is more often a stale or mistyped row than a bargain.
pub const MIN_SPOT_SHARE_OF_ON_DEMAND: f64 = 0.10;

/// Relative margin on that share: a spot price within 1 % of a tenth of on-demand is flagged
/// too. Prices carry four decimals, and the offerings tables hold a cluster of AWS spot rows at
/// exactly a tenth of on-demand up to that rounding (p6-b200.48xlarge, trn1, inf2, g4dn/g5/g6
/// in several regions: a floor or placeholder, not a market price), with the next rows from
/// 10.25 % up.
pub const SPOT_SHARE_MARGIN: f64 = 0.01;

/// Regions an instance type must be sold in before one price everywhere looks suspicious.
pub const MIN_REGIONS_FOR_UNIFORM_CHECK: usize = 4;

/// Share of a provider's multi-region GPU shapes whose on-demand price varies by region above
/// which the provider is taken to price per region (AWS, GCP, Azure do; Lambda does not).
pub const REGIONAL_PRICING_SHARE: f64 = 0.5;

/// Sets `price_flags` on every offering.
pub fn flag_prices(offerings: &mut [Offering]) {
    for offering in offerings.iter_mut() {
        offering.price_flags.clear();
        if let (Some(on_demand), Some(spot)) = (offering.on_demand, offering.spot) {
            if spot.0 <= on_demand.0 * MIN_SPOT_SHARE_OF_ON_DEMAND * (1.0 + SPOT_SHARE_MARGIN) {
                offering.price_flags.push(PriceFlag::SpotImplausiblyLow);
            }
        }
    }
    for (provider, instance_type) in uniform_across_regions(offerings) {
        for offering in offerings
            .iter_mut()
            .filter(|o| o.provider.as_str() == provider && o.instance_type == instance_type)
        {
            offering.price_flags.push(PriceFlag::SameInEveryRegion);
        }
    }
}

/// GPU shapes sold in many regions at one on-demand price, by providers that otherwise price
/// per region.
fn uniform_across_regions(offerings: &[Offering]) -> Vec<(String, String)> {
    // (provider, instance type) → the distinct prices (as bits) and regions.
    let mut shapes: BTreeMap<(String, String), (BTreeSet<u64>, BTreeSet<String>)> = BTreeMap::new();
    for offering in offerings.iter().filter(|o| o.accelerator.is_some()) {
        let (Some(price), Some(region)) = (offering.on_demand, &offering.region) else {
            continue;
        };
        let entry = shapes
            .entry((offering.provider.as_str().to_string(), offering.instance_type.clone()))
            .or_default();
        entry.0.insert(price.0.to_bits());
        entry.1.insert(region.clone());
    }
    let mut per_provider: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for ((provider, _), (prices, regions)) in &shapes {
        if regions.len() >= MIN_REGIONS_FOR_UNIFORM_CHECK {
            let counts = per_provider.entry(provider.as_str()).or_default();
            counts.0 += 1;
            counts.1 += usize::from(prices.len() > 1);
        }
    }
    let regional = |provider: &str| {
        per_provider
            .get(provider)
            .is_some_and(|(shapes, varying)| *varying as f64 > *shapes as f64 * REGIONAL_PRICING_SHARE)
    };
    shapes
        .iter()
        .filter(|((provider, _), (prices, regions))| {
            regions.len() >= MIN_REGIONS_FOR_UNIFORM_CHECK && prices.len() == 1 && regional(provider)
        })
        .map(|(key, _)| key.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_model::{AcceleratorId, Bytes, ProviderId, UsdPerHour};

    fn offering(provider: &str, instance: &str, region: &str, on_demand: f64, spot: Option<f64>) -> Offering {
        Offering {
            provider: ProviderId::new(provider),
            instance_type: instance.to_string(),
            region: Some(region.to_string()),
            zone: None,
            accelerator: Some(AcceleratorId::new("T4")),
            accelerator_count: 1,
            accelerator_memory: None,
            vcpus: 4.0,
            memory: Bytes::from_gib(16.0),
            local_disk: None,
            network: None,
            gpu_interconnect: None,
            node_network: None,
            on_demand: Some(UsdPerHour(on_demand)),
            spot: spot.map(UsdPerHour),
            billing_granularity: None,
            source: "test".to_string(),
            as_of: "2026-11-23".parse().unwrap(),
            notes: None,
            fabric: None,
            native: None,
            list_on_demand: None,
            list_spot: None,
            price_flags: Vec::new(),
        }
    }

    #[test]
    fn a_spot_price_under_a_tenth_of_on_demand_is_flagged() {
        let mut rows = vec![
            offering("aws", "p6", "us-east-1", 100.0, Some(9.0)),
            offering("aws", "g6", "us-east-1", 1.0, Some(0.4)),
            // A tenth up to the fourth decimal is the same tenth, not a pass by a hair.
            offering("aws", "p6-b200", "us-east-2", 113.9328, Some(11.3933)),
            offering("aws", "g5", "us-east-1", 5.03653, Some(0.5037)),
            offering("aws", "g6e", "us-east-1", 1.0, Some(0.1025)),
        ];
        flag_prices(&mut rows);
        assert_eq!(rows[0].price_flags, vec![PriceFlag::SpotImplausiblyLow]);
        assert!(rows[1].price_flags.is_empty());
        assert_eq!(rows[2].price_flags, vec![PriceFlag::SpotImplausiblyLow]);
        assert_eq!(rows[3].price_flags, vec![PriceFlag::SpotImplausiblyLow]);
        assert!(rows[4].price_flags.is_empty());
    }

    #[test]
    fn one_price_everywhere_is_flagged_only_where_the_provider_prices_per_region() {
        let regions = ["r1", "r2", "r3", "r4"];
        let mut rows = Vec::new();
        for (i, region) in regions.iter().enumerate() {
            rows.push(offering("aws", "varies-a", region, 1.0 + i as f64, None));
            rows.push(offering("aws", "varies-b", region, 2.0 + i as f64, None));
            rows.push(offering("aws", "uniform", region, 3.0, None));
            rows.push(offering("lambda", "gpu_1x", region, 1.5, None));
        }
        flag_prices(&mut rows);
        let flagged: BTreeSet<&str> = rows
            .iter()
            .filter(|o| o.price_flags.contains(&PriceFlag::SameInEveryRegion))
            .map(|o| o.instance_type.as_str())
            .collect();
        assert_eq!(flagged, BTreeSet::from(["uniform"]));
    }
}
