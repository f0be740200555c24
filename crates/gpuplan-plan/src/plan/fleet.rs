//! How a service's instances are billed when spot is allowed: a floor of reserved or
//! on-demand instances for the minimum replicas (SkyServe's `base_ondemand_fallback_replicas`,
//! Karpenter's on-demand capacity type beside spot), the rest on spot, with the expected
//! cost of reclaims in the price: each reclaimed instance is replaced, and the replacement
//! is billed while it boots and loads the model without serving.

use super::*;
use crate::recommendation::Fleet;

/// The spot instances a reclaim costs: instance-hours billed while a replacement starts, per
/// hour of each spot instance.
fn reclaim_overhead(reclaims_per_hour: f64, replacement_seconds: f64) -> f64 {
    reclaims_per_hour * replacement_seconds / 3600.0
}

/// The fleet of `instances` a spot row stands for: its floor on the cheapest other mode
/// allowed (none: all spot) sized for `min_replicas`, and the hourly price of the whole.
pub(super) fn spot_fleet(
    priced: &[Priced],
    spot_price: f64,
    instances: u32,
    floor_instances: u32,
    reclaims_per_hour: f64,
    replacement_seconds: f64,
) -> Fleet {
    let floor = priced
        .iter()
        .filter(|(billing, _, _)| *billing != BillingMode::Spot)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(billing, price, _)| (*billing, *price));
    let floor_instances = if floor.is_some() {
        floor_instances.min(instances)
    } else {
        0
    };
    let spot_instances = instances - floor_instances;
    let overhead = reclaim_overhead(reclaims_per_hour, replacement_seconds);
    Fleet {
        floor_billing: floor.map(|(billing, _)| billing),
        floor_instances,
        spot_instances,
        reclaims_per_hour,
        replacement_seconds,
        floor_usd_per_hour: floor.map_or(0.0, |(_, price)| price * f64::from(floor_instances)),
        spot_usd_per_hour: spot_price * f64::from(spot_instances) * (1.0 + overhead),
    }
}

impl Fleet {
    pub(super) fn usd_per_hour(&self) -> f64 {
        self.floor_usd_per_hour + self.spot_usd_per_hour
    }

    /// What the plan says of the fleet.
    pub(super) fn explain(&self, min_replicas: u32, source: &str) -> String {
        let reclaims = self.reclaims_per_hour * f64::from(self.spot_instances) * HOURS_PER_MONTH;
        let spot = format!(
            "{} on spot: {reclaims:.0} reclaims a month expected ({:.3}/h per instance, {source}), each replaced in {:.0} min billed without serving (+{:.1} %)",
            self.spot_instances,
            self.reclaims_per_hour,
            self.replacement_seconds / 60.0,
            reclaim_overhead(self.reclaims_per_hour, self.replacement_seconds) * 100.0
        );
        match self.floor_billing {
            Some(floor) => format!(
                "mixed fleet: {} carry the minimum {} whatever spot does; {spot}",
                gpuplan_model::counted(
                    self.floor_instances,
                    &format!("{floor} instance"),
                    &format!("{floor} instances")
                ),
                gpuplan_model::counted(min_replicas, "replica", "replicas"),
            ),
            None => format!(
                "all on spot (no other billing mode allowed): a reclaim wave can take the whole service down; {spot}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priced() -> Vec<Priced> {
        vec![
            (BillingMode::OnDemand, 4.0, None),
            (BillingMode::Spot, 1.5, None),
            (BillingMode::Reserved1y, 2.6, None),
        ]
    }

    #[test]
    fn the_floor_goes_on_the_cheapest_committed_mode_and_the_rest_on_spot() {
        let fleet = spot_fleet(&priced(), 1.5, 10, 3, 0.05, 600.0);
        assert_eq!(fleet.floor_billing, Some(BillingMode::Reserved1y));
        assert_eq!((fleet.floor_instances, fleet.spot_instances), (3, 7));
        // 7 spot instances at $1.50, each reclaimed 0.05 times an hour and replaced in 10 min.
        let spot = 7.0 * 1.5 * (1.0 + 0.05 / 6.0);
        assert!((fleet.usd_per_hour() - (3.0 * 2.6 + spot)).abs() < 1e-9);
    }

    #[test]
    fn spot_alone_is_all_spot_and_still_pays_for_its_reclaims() {
        let only = vec![(BillingMode::Spot, 1.5, None)];
        let fleet = spot_fleet(&only, 1.5, 4, 1, 0.05, 600.0);
        assert_eq!(fleet.floor_billing, None);
        assert_eq!(fleet.spot_instances, 4);
        assert!(fleet.usd_per_hour() > 4.0 * 1.5);
        assert!(fleet.explain(1, "test").contains("all on spot"));
    }
}
