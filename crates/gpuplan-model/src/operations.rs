//! What happens around the computation: starting machines, what a provider rents without
//! asking, how often spot capacity is reclaimed, how fast a host decodes images. Each figure
//! carries its source; a catalog without these tables gets the conservative values of
//! [`Operations::conservative`], stated as assumptions.

use crate::{AcceleratorId, BillingGranularity, BillingMeter, Offering, ProviderId, Source};
use serde::{Deserialize, Serialize};

/// Start-up of one class of provider: from "rent" to the first useful step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartupProfile {
    /// `hyperscaler`, `gpu-cloud` or `marketplace`.
    pub class: String,
    pub providers: Vec<ProviderId>,
    /// Request to a running node with its drivers up.
    pub provision_seconds: f64,
    /// Container image pull, Gbit/s per node (decompression included).
    pub image_pull_gbps: f64,
    /// Object storage reads per node (weights, data), Gbit/s.
    pub storage_read_gbps: f64,
    /// Object storage writes per node (checkpoints), Gbit/s.
    pub checkpoint_write_gbps: f64,
    pub sources: Vec<Source>,
}

/// How a provider meters an instance: the step it bills in and the shortest time it bills once
/// the instance starts, for all its instances or for those whose type starts with `instances`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BillingTerms {
    pub provider: ProviderId,
    /// Instance-type prefix these terms are for (`BM.` for bare metal); `None`: every instance.
    pub instances: Option<String>,
    pub granularity: BillingGranularity,
    pub minimum_seconds: f64,
    /// Pay-as-you-go prices that fall with the hours an instance has run, where the provider
    /// has such a scheme.
    #[serde(default)]
    pub usage_tiers: Option<UsageTiers>,
    pub source: Source,
}

/// Pay-as-you-go prices that fall as one instance keeps running (Tencent Cloud's three tiers):
/// from each step's hour on, the list price times its fraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageTiers {
    /// `(from hour, fraction of the list price)`, ascending.
    pub steps: Vec<(f64, f64)>,
    /// Whether every instance type is billed so; `false` where the provider says "some types"
    /// and names them only elsewhere (a purchase page).
    pub every_type: bool,
}

#[cfg(test)]
mod usage_tier_tests {
    use super::UsageTiers;

    #[test]
    fn each_hour_pays_the_tier_it_falls_in() {
        let tencent = UsageTiers {
            steps: vec![(96.0, 0.5), (360.0, 0.34)],
            every_type: false,
        };
        assert_eq!(tencent.cost(50.0, 2.0), 100.0);
        assert_eq!(tencent.cost(200.0, 2.0), 2.0 * (96.0 + 104.0 * 0.5));
        assert!((tencent.cost(1000.0, 1.0) - (96.0 + 132.0 + 640.0 * 0.34)).abs() < 1e-9);
    }
}

impl UsageTiers {
    /// The compute cost of one instance running `hours` at a list price of `usd_per_hour`.
    pub fn cost(&self, hours: f64, usd_per_hour: f64) -> f64 {
        let mut cost = 0.0;
        let mut fraction = 1.0;
        let mut from = 0.0;
        for &(next, next_fraction) in &self.steps {
            cost += (hours.min(next) - from).max(0.0) * fraction;
            (from, fraction) = (next, next_fraction);
        }
        (cost + (hours - from).max(0.0) * fraction) * usd_per_hour
    }
}

/// How many GPUs of some accelerators a provider typically rents on demand without a quota
/// increase or a reservation, and what to ask for beyond.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityLimit {
    pub provider: ProviderId,
    pub accelerators: Vec<AcceleratorId>,
    pub on_demand_gpus: u32,
    /// The quota family the limit belongs to (`P instances`, `G and VT instances` …).
    pub family: Option<String>,
    pub beyond: String,
    pub source: Source,
}

/// A provider's default spot (preemptible) interruption rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptionRate {
    pub provider: ProviderId,
    /// Instance-type prefix the rate is for (`p5.`), where the provider publishes bands per
    /// type; `None`: the provider's default.
    #[serde(default)]
    pub instances: Option<String>,
    /// `spot`, or `preemptible` where a provider sells both (GCP).
    pub offering: String,
    pub per_hour: f64,
    pub band: Option<String>,
    pub notice_seconds: Option<f64>,
    /// Capacity stopped after this long whatever happens (GCP preemptible VMs: 24 h).
    pub max_runtime_hours: Option<f64>,
    pub source: Source,
}

/// A provider's spot price stated only as a share of its pay-as-you-go price (it publishes
/// no spot price per instance type): the range it states, and whether the top of the range is
/// a price to plan with or only a ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpotShare {
    pub provider: ProviderId,
    /// The least share the provider says its spot price falls to.
    pub lowest: f64,
    /// The most a spot hour costs as a share of pay-as-you-go, as stated.
    pub highest: f64,
    /// Whether `highest` is what the provider says spot typically costs at most (a price to
    /// plan with), rather than only the ceiling every spot price sits under.
    pub typical: bool,
    /// The provider's own wording of the range.
    pub stated: String,
    pub source: Source,
}

impl SpotShare {
    /// The spot rate planned with for an `on_demand` rate: the top of a typical range; `None`
    /// where the range is only bounded by the on-demand price.
    pub fn planned_rate(&self, on_demand: f64) -> Option<f64> {
        self.typical.then_some(on_demand * self.highest)
    }
}

/// A spot price per hour, and the published share it was derived with where the catalog lists
/// none for the type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpotPrice<'a> {
    pub usd_per_hour: f64,
    /// `None`: the catalog's price for the type.
    pub share: Option<&'a SpotShare>,
}

/// Images a training input pipeline decodes and augments per second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecodeRate {
    /// `cpu-pil`, `cpu-pillow-simd`, `dali-gpu` …
    pub pipeline: String,
    /// The accelerators a per-GPU rate applies to; `None`: any.
    pub accelerators: Option<Vec<AcceleratorId>>,
    pub images_per_second_per_vcpu: Option<f64>,
    pub images_per_second_per_gpu: Option<f64>,
    pub source: Source,
}

/// The operations tables of a catalog.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Operations {
    /// Size of a typical training or serving container image, GB.
    pub image_gb: Option<f64>,
    pub image_source: Option<Source>,
    pub startup: Vec<StartupProfile>,
    pub billing: Vec<BillingTerms>,
    pub capacity: Vec<CapacityLimit>,
    pub interruptions: Vec<InterruptionRate>,
    /// Spot prices published only as a share of pay-as-you-go, per provider.
    #[serde(default)]
    pub spot_shares: Vec<SpotShare>,
    pub decode: Vec<DecodeRate>,
    /// Mean size of an ImageNet training JPEG, KB.
    pub image_file_kb: Option<f64>,
    /// SLA, status page, compliance and region countries per provider.
    pub providers: Vec<crate::ProviderFacts>,
    /// Shared-file StorageClasses per provider, for volumes every node mounts.
    pub shared_storage: Vec<crate::SharedStorage>,
}

impl Operations {
    /// What `provider` publishes beyond prices, where the tables have it.
    pub fn provider_facts(&self, provider: &ProviderId) -> Option<&crate::ProviderFacts> {
        self.providers.iter().find(|f| &f.provider == provider)
    }

    /// The shared-file StorageClass of `provider`'s managed Kubernetes, if the tables name one.
    pub fn shared_storage(&self, provider: &ProviderId) -> Option<&crate::SharedStorage> {
        self.shared_storage.iter().find(|s| &s.provider == provider)
    }

    /// The shared-file class named `class` of `provider`, where the tables describe it.
    pub fn shared_storage_class(&self, provider: &ProviderId, class: &str) -> Option<&crate::SharedStorage> {
        self.shared_storage
            .iter()
            .find(|s| &s.provider == provider && s.storage_class == class)
    }

    /// The start-up profile of `provider`'s class, if the tables name it.
    pub fn startup(&self, provider: &ProviderId) -> Option<&StartupProfile> {
        self.startup.iter().find(|p| p.providers.contains(provider))
    }

    /// The billing terms of `provider`'s `instance_type`: those for the longest matching
    /// instance prefix, else the provider's.
    pub fn billing_terms(&self, provider: &ProviderId, instance_type: &str) -> Option<&BillingTerms> {
        self.billing
            .iter()
            .filter(|t| &t.provider == provider)
            .filter(|t| {
                t.instances
                    .as_deref()
                    .is_none_or(|prefix| instance_type.starts_with(prefix))
            })
            .max_by_key(|t| t.instances.as_deref().map_or(0, str::len))
    }

    /// How `offering` is metered: its own granularity where its row states one, else its
    /// provider's terms; the minimum from the terms.
    pub fn meter(&self, offering: &Offering) -> BillingMeter {
        let terms = self.billing_terms(&offering.provider, &offering.instance_type);
        BillingMeter {
            granularity: offering.billing_granularity.or(terms.map(|t| t.granularity)),
            minimum_seconds: terms.map_or(0.0, |t| t.minimum_seconds),
        }
    }

    pub fn capacity(&self, provider: &ProviderId, accelerator: &AcceleratorId) -> Option<&CapacityLimit> {
        self.capacity
            .iter()
            .find(|c| &c.provider == provider && c.accelerators.contains(accelerator))
    }

    /// The spot rate of `provider` (its `spot` entry before any other).
    pub fn interruption(&self, provider: &ProviderId) -> Option<&InterruptionRate> {
        let of_provider = || {
            self.interruptions
                .iter()
                .filter(|r| &r.provider == provider && r.instances.is_none())
        };
        of_provider()
            .find(|r| r.offering == "spot")
            .or_else(|| of_provider().next())
    }

    /// The spot interruption rate of `provider`'s `instance_type`: the band published for its
    /// type (longest matching prefix) where there is one, else the provider's default.
    pub fn interruption_of(&self, provider: &ProviderId, instance_type: &str) -> Option<&InterruptionRate> {
        self.interruptions
            .iter()
            .filter(|r| &r.provider == provider && r.offering == "spot")
            .filter_map(|r| match r.instances.as_deref() {
                Some(prefix) if instance_type.starts_with(prefix) => Some((prefix.len(), r)),
                Some(_) => None,
                None => Some((0, r)),
            })
            .max_by_key(|(len, _)| *len)
            .map(|(_, r)| r)
            .or_else(|| self.interruption(provider))
    }

    /// The published spot share of `provider`, where it states spot prices only so.
    pub fn spot_share(&self, provider: &ProviderId) -> Option<&SpotShare> {
        self.spot_shares.iter().find(|s| &s.provider == provider)
    }

    /// `offering`'s spot price per hour: the catalog's where it lists one; otherwise, where the
    /// provider publishes only a typical share of pay-as-you-go, that share of `on_demand` (the
    /// offering's own on-demand price unless given). The one rule every listing, plan and bill
    /// prices spot with.
    pub fn spot_price(&self, offering: &Offering, on_demand: Option<f64>) -> Option<SpotPrice<'_>> {
        if let Some(listed) = offering.spot {
            return Some(SpotPrice {
                usd_per_hour: listed.0,
                share: None,
            });
        }
        let share = self.spot_share(&offering.provider)?;
        Some(SpotPrice {
            usd_per_hour: share.planned_rate(on_demand.or(offering.on_demand.map(|p| p.0))?)?,
            share: Some(share),
        })
    }

    /// The decode rate of `pipeline` that applies to `accelerator`.
    pub fn decode(&self, pipeline: &str, accelerator: &AcceleratorId) -> Option<&DecodeRate> {
        self.decode
            .iter()
            .find(|d| d.pipeline == pipeline && d.accelerators.as_ref().is_none_or(|ids| ids.contains(accelerator)))
    }
}
