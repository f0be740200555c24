use crate::Catalog;
use gpuplan_model::{AcceleratorId, Bytes, ComputeCapability, Offering, ProviderId, UsdPerHour};
use std::cmp::Ordering;

/// The order of an offerings listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OfferingSort {
    /// Cheapest on-demand price first; unknown prices last.
    #[default]
    Price,
    /// Cheapest on-demand price per accelerator first.
    PricePerGpu,
    /// Most accelerators first.
    Gpus,
    /// Most accelerator memory first.
    Memory,
    /// Provider, then instance type, then region.
    Provider,
}

/// A filter over a catalog's offerings. Every field left empty matches everything.
#[derive(Debug, Clone, Default)]
pub struct OfferingQuery {
    /// Accelerator ids to keep (already resolved from user names).
    pub accelerators: Vec<AcceleratorId>,
    pub providers: Vec<ProviderId>,
    /// Region names or prefixes (`us-east` matches `us-east-1`).
    pub regions: Vec<String>,
    /// Instance families, as [`gpuplan_model::family_key`]s (`ndv4`, `a3mega`).
    pub families: Vec<String>,
    pub min_gpus: Option<u32>,
    pub max_gpus: Option<u32>,
    /// Minimum memory per accelerator.
    pub min_gpu_memory: Option<Bytes>,
    /// Minimum vCPUs and host memory per instance.
    pub min_vcpus: Option<f64>,
    pub min_memory: Option<Bytes>,
    /// Minimum local disk per instance; offerings whose disk is not known are left out.
    pub min_local_disk: Option<Bytes>,
    /// Minimum CUDA compute capability of the accelerator (NVIDIA parts only).
    pub min_compute_capability: Option<ComputeCapability>,
    /// Maximum price: on-demand, or spot when `spot_only`.
    pub max_price: Option<UsdPerHour>,
    pub spot_only: bool,
    /// Keep CPU-only instances too (off by default: gpuplan lists accelerator offerings).
    pub include_cpu_only: bool,
    /// One row per zone where zone prices differ; by default zones are folded into one row
    /// per region showing the lowest spot price of its zones.
    pub per_zone: bool,
    pub sort: OfferingSort,
}

impl OfferingQuery {
    pub fn matches(&self, catalog: &Catalog, offering: &Offering) -> bool {
        // Provider, region and host filters hold for CPU shapes as for GPU ones.
        if !self.providers.is_empty() && !self.providers.contains(&offering.provider) {
            return false;
        }
        if !self.families.is_empty() && !self.in_families(offering) {
            return false;
        }
        if self.min_vcpus.is_some_and(|min| offering.vcpus < min)
            || self.min_memory.is_some_and(|min| offering.memory < min)
            || self
                .min_local_disk
                .is_some_and(|min| offering.local_disk.is_none_or(|disk| disk < min))
        {
            return false;
        }
        let Some(accelerator) = &offering.accelerator else {
            return self.include_cpu_only
                && self.accelerators.is_empty()
                && self.min_gpus.unwrap_or(0) == 0
                && self.in_regions(offering)
                && self.within_price(catalog, offering);
        };
        if !self.accelerators.is_empty() && !self.accelerators.contains(accelerator) {
            return false;
        }
        if !self.in_regions(offering) {
            return false;
        }
        if self.min_gpus.is_some_and(|min| offering.accelerator_count < min)
            || self.max_gpus.is_some_and(|max| offering.accelerator_count > max)
        {
            return false;
        }
        if let Some(min) = self.min_compute_capability {
            let capability = catalog
                .accelerators()
                .get(accelerator.as_str())
                .and_then(|a| a.cuda_capability());
            if capability.is_none_or(|c| c < min) {
                return false;
            }
        }
        if let Some(min) = self.min_gpu_memory {
            let per_gpu = catalog.accelerators().get(accelerator.as_str()).map(|a| a.memory);
            if per_gpu.is_none_or(|memory| memory < min) {
                return false;
            }
        }
        self.within_price(catalog, offering)
    }

    /// Whether the offering belongs to one of the families asked for.
    fn in_families(&self, offering: &Offering) -> bool {
        gpuplan_model::instance_families(offering.provider.as_str(), &offering.instance_type)
            .iter()
            .any(|name| self.families.contains(&gpuplan_model::family_key(name)))
    }

    /// Whether the offering's region starts with one of the regions asked for (any when none).
    fn in_regions(&self, offering: &Offering) -> bool {
        let region = offering.region.as_deref().unwrap_or("").to_lowercase();
        self.regions.is_empty()
            || self
                .regions
                .iter()
                .any(|wanted| region.starts_with(&wanted.to_lowercase()))
    }

    /// Whether the price asked about (spot or on-demand) exists where required and is under
    /// the cap.
    fn within_price(&self, catalog: &Catalog, offering: &Offering) -> bool {
        let price = self.price(catalog, offering);
        if self.spot_only && price.is_none() {
            return false;
        }
        self.max_price
            .is_none_or(|max| price.is_some_and(|price| price.0 <= max.0))
    }

    /// The price asked about: on-demand, or with `spot_only` the spot price, listed or
    /// derived from the provider's published share of pay-as-you-go.
    fn price(&self, catalog: &Catalog, offering: &Offering) -> Option<UsdPerHour> {
        if self.spot_only {
            catalog
                .operations()
                .spot_price(offering, None)
                .map(|spot| UsdPerHour(spot.usd_per_hour))
        } else {
            offering.on_demand
        }
    }

    /// The matching offerings of `catalog`, in the requested order.
    pub fn run(&self, catalog: &Catalog) -> Vec<Offering> {
        let matching = catalog.offerings().iter().filter(|o| self.matches(catalog, o));
        let mut found: Vec<Offering> = if self.per_zone {
            matching.cloned().collect()
        } else {
            fold_zones(matching)
        };
        let price = |o: &Offering| self.price(catalog, o);
        let by_price = |a: Option<UsdPerHour>, b: Option<UsdPerHour>| match (a, b) {
            (Some(a), Some(b)) => a.0.total_cmp(&b.0),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        let by_name = |a: &Offering, b: &Offering| {
            (&a.provider, &a.instance_type, &a.region, &a.zone).cmp(&(
                &b.provider,
                &b.instance_type,
                &b.region,
                &b.zone,
            ))
        };
        found.sort_by(|a: &Offering, b: &Offering| {
            let primary = match self.sort {
                OfferingSort::Price => by_price(price(a), price(b)),
                OfferingSort::PricePerGpu => by_price(
                    price(a).map(|p| p.per(a.accelerator_count)),
                    price(b).map(|p| p.per(b.accelerator_count)),
                ),
                OfferingSort::Gpus => b.accelerator_count.cmp(&a.accelerator_count),
                OfferingSort::Memory => b.accelerator_memory.cmp(&a.accelerator_memory),
                OfferingSort::Provider => Ordering::Equal,
            };
            primary.then_with(|| by_name(a, b))
        });
        found
    }
}

/// Folds the zone rows of each `(provider, instance type, region)` into one row: the
/// on-demand price is regional, the spot price the lowest of the zones.
pub fn fold_zones<'a>(offerings: impl Iterator<Item = &'a Offering>) -> Vec<Offering> {
    let mut folded: Vec<Offering> = Vec::new();
    let mut index: std::collections::HashMap<(&str, &str, Option<&str>), usize> = std::collections::HashMap::new();
    for offering in offerings {
        let key = (
            offering.provider.as_str(),
            offering.instance_type.as_str(),
            offering.region.as_deref(),
        );
        match index.get(&key) {
            Some(&at) => {
                let kept = &mut folded[at];
                kept.spot = match (kept.spot, offering.spot) {
                    (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
                    (a, b) => a.or(b),
                };
                if kept.on_demand.is_none() {
                    kept.on_demand = offering.on_demand;
                }
            }
            None => {
                index.insert(key, folded.len());
                let mut row = offering.clone();
                row.zone = None;
                folded.push(row);
            }
        }
    }
    folded
}
