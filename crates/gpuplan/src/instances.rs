use crate::Error;
use gpuplan_catalog::{Catalog, OfferingQuery, OfferingSort};
use gpuplan_model::{Bytes, UsdPerHour};
use gpuplan_plan::Listing;

/// `instances`: which offerings rent a GPU, in which shape, at what price. Names are as the
/// user typed them; [`find_instances`] resolves and validates them.
#[derive(Debug, Clone, Default)]
pub struct InstancesRequest {
    /// An accelerator id, alias or family name (`H100` matches every H100 variant).
    pub gpu: Option<String>,
    pub providers: Vec<String>,
    pub regions: Vec<String>,
    /// Instance families as guides name them (`NDv4`, `A3 Mega`, `p5`, `gn7i`).
    pub families: Vec<String>,
    pub min_gpus: Option<u32>,
    pub max_gpus: Option<u32>,
    /// Minimum memory per GPU, GiB.
    pub min_gpu_memory_gib: Option<f64>,
    /// Minimum vCPUs per instance.
    pub min_vcpus: Option<f64>,
    /// Minimum host memory per instance, GiB.
    pub min_memory_gib: Option<f64>,
    /// Minimum local disk per instance, GB.
    pub min_disk_gb: Option<f64>,
    /// Minimum CUDA compute capability (`8.0`, `sm_90`).
    pub compute_capability: Option<String>,
    /// Maximum USD per hour (spot price with `spot_only`).
    pub max_price: Option<f64>,
    pub spot_only: bool,
    pub include_cpu_only: bool,
    /// One row per zone where zone prices differ (default: one row per region).
    pub per_zone: bool,
    pub sort: OfferingSort,
    /// Offerings skipped from the top of the sorted list, then kept at most (`None`: all).
    pub offset: usize,
    pub limit: Option<usize>,
}

/// The matching offerings, and what the names were taken to mean.
#[derive(Debug)]
pub struct InstancesAnswer {
    /// The page asked for (all of them without a limit or offset), each with its spot rate.
    pub offerings: Vec<Listing>,
    /// How many offerings matched in all.
    pub total: usize,
    pub notes: Vec<String>,
}

pub fn find_instances(catalog: &Catalog, request: &InstancesRequest) -> Result<InstancesAnswer, Error> {
    let mut notes = Vec::new();
    let mut query = OfferingQuery {
        sort: request.sort,
        spot_only: request.spot_only,
        include_cpu_only: request.include_cpu_only,
        per_zone: request.per_zone,
        regions: request.regions.clone(),
        min_gpus: request.min_gpus,
        max_gpus: request.max_gpus,
        ..OfferingQuery::default()
    };
    if let (Some(min), Some(max)) = (request.min_gpus, request.max_gpus) {
        if min > max {
            return Err(Error::invalid(
                format!("{{min_gpus}} {min} is more than {{max_gpus}} {max}"),
                Some("swap the two values".to_string()),
            ));
        }
    }
    if let Some(gib) = request.min_gpu_memory_gib {
        crate::defaults::require_non_negative(crate::Field::MinGpuMemory, Some(gib))?;
        query.min_gpu_memory = Some(Bytes::from_gib(gib));
    }
    crate::defaults::require_non_negative(crate::Field::MinVcpus, request.min_vcpus)?;
    crate::defaults::require_non_negative(crate::Field::MinMemory, request.min_memory_gib)?;
    query.min_vcpus = request.min_vcpus;
    query.min_memory = request.min_memory_gib.map(Bytes::from_gib);
    crate::defaults::require_non_negative(crate::Field::MinDisk, request.min_disk_gb)?;
    query.min_local_disk = request.min_disk_gb.map(|gb| Bytes((gb * 1e9) as u64));
    query.min_compute_capability = request
        .compute_capability
        .as_deref()
        .map(crate::resolve::compute_capability)
        .transpose()?;
    if let Some(price) = request.max_price {
        crate::defaults::require_positive(crate::Field::MaxPrice, Some(price))?;
        query.max_price = Some(UsdPerHour(price));
    }
    if let Some(name) = &request.gpu {
        let family = catalog.accelerators().resolve_family(name)?;
        if family.len() > 1 || family.first().is_some_and(|a| a.id.as_str() != name.as_str()) {
            let ids: Vec<String> = family.iter().map(|a| a.id.to_string()).collect();
            notes.push(format!("`{name}` matches {}", ids.join(", ")));
        }
        query.accelerators = family.iter().map(|a| a.id.clone()).collect();
    }
    query.providers = crate::resolve::providers(catalog, &request.providers)?;
    query.families = crate::resolve::families(catalog, &request.families)?;
    let matching = query.run(catalog);
    let total = matching.len();
    let offerings = matching
        .into_iter()
        .skip(request.offset)
        .take(request.limit.unwrap_or(usize::MAX))
        .map(|offering| Listing::new(catalog, offering))
        .collect();
    Ok(InstancesAnswer {
        offerings,
        total,
        notes,
    })
}
