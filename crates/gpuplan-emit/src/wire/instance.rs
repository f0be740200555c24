use gpuplan_plan::Listing;
use serde::Serialize;

/// One offering, as `gpuplan instances --format json` lists it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct InstanceJson {
    pub provider: String,
    pub instance_type: String,
    pub region: Option<String>,
    pub zone: Option<String>,
    /// Accelerator id; `null` for CPU-only instances.
    pub gpu: Option<String>,
    pub gpu_count: u32,
    pub gpu_memory_bytes: Option<u64>,
    pub vcpus: f64,
    pub memory_bytes: u64,
    pub local_disk_bytes: Option<u64>,
    pub network_gbps: Option<f64>,
    pub gpu_interconnect: Option<String>,
    pub node_network: Option<String>,
    pub on_demand_usd_per_hour: Option<f64>,
    /// The catalog's spot price, or one derived from the provider's published share of
    /// pay-as-you-go where it lists none per type (`spot_derivation` says so).
    pub spot_usd_per_hour: Option<f64>,
    /// How a derived spot price was reached; `null` for the catalog's own price.
    pub spot_derivation: Option<String>,
    /// The list prices, where your prices (`--prices`) replaced them.
    pub list_on_demand_usd_per_hour: Option<f64>,
    pub list_spot_usd_per_hour: Option<f64>,
    pub billing_granularity: Option<String>,
    pub source: String,
    pub as_of: String,
    pub notes: Option<String>,
}

impl From<&Listing> for InstanceJson {
    fn from(listing: &Listing) -> Self {
        let o = &listing.offering;
        InstanceJson {
            provider: o.provider.to_string(),
            instance_type: o.instance_type.clone(),
            region: o.region.clone(),
            zone: o.zone.clone(),
            gpu: o.accelerator.as_ref().map(|a| a.to_string()),
            gpu_count: o.accelerator_count,
            gpu_memory_bytes: o.accelerator_memory.map(|m| m.as_u64()),
            vcpus: o.vcpus,
            memory_bytes: o.memory.as_u64(),
            local_disk_bytes: o.local_disk.map(|d| d.as_u64()),
            network_gbps: o.network.map(|n| n.0),
            gpu_interconnect: o.gpu_interconnect.map(|i| i.to_string()),
            node_network: o.node_network.map(|n| n.to_string()),
            on_demand_usd_per_hour: o.on_demand.map(|p| p.0),
            spot_usd_per_hour: listing.spot_usd_per_hour(),
            spot_derivation: listing.spot_derivation(),
            list_on_demand_usd_per_hour: o.list_on_demand.map(|p| p.0),
            list_spot_usd_per_hour: o.list_spot.map(|p| p.0),
            billing_granularity: o.billing_granularity.map(|b| b.to_string()),
            source: o.source.clone(),
            as_of: o.as_of.to_string(),
            notes: o.notes.clone(),
        }
    }
}
