use crate::{
    AcceleratorId, BillingGranularity, BillingMode, Bytes, Date, FabricKind, GigabitsPerSecond, NodeFabric, ProviderId,
    UsdPerHour,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the accelerators inside one instance talk to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuInterconnect {
    None,
    Pcie,
    Nvlink,
    Nvswitch,
    Ici,
    Neuronlink,
}

/// The network between instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeNetwork {
    Ethernet,
    Efa,
    Infiniband,
    Rocev2,
}

macro_rules! text_enum {
    ($type:ty, $what:literal, $($text:literal => $variant:expr),+ $(,)?) => {
        impl FromStr for $type {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                match text.trim().to_lowercase().as_str() {
                    $($text => Ok($variant),)+
                    other => Err(format!(
                        concat!("unknown ", $what, " `{}` (expected one of: {})"),
                        other,
                        [$($text),+].join(", ")
                    )),
                }
            }
        }

        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                $(if *self == $variant { return f.write_str($text); })+
                Ok(())
            }
        }
    };
}

text_enum!(GpuInterconnect, "GPU interconnect",
    "none" => GpuInterconnect::None,
    "pcie" => GpuInterconnect::Pcie,
    "nvlink" => GpuInterconnect::Nvlink,
    "nvswitch" => GpuInterconnect::Nvswitch,
    "ici" => GpuInterconnect::Ici,
    "neuronlink" => GpuInterconnect::Neuronlink,
);

text_enum!(NodeNetwork, "node network",
    "ethernet" => NodeNetwork::Ethernet,
    "efa" => NodeNetwork::Efa,
    "infiniband" => NodeNetwork::Infiniband,
    "rocev2" => NodeNetwork::Rocev2,
);

/// One rentable shape at one price point: a provider's instance type in a region (and zone,
/// where zone prices differ).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Offering {
    pub provider: ProviderId,
    pub instance_type: String,
    pub region: Option<String>,
    pub zone: Option<String>,
    /// `None` for CPU-only instances.
    pub accelerator: Option<AcceleratorId>,
    pub accelerator_count: u32,
    /// Total accelerator memory of the instance.
    pub accelerator_memory: Option<Bytes>,
    pub vcpus: f64,
    pub memory: Bytes,
    pub local_disk: Option<Bytes>,
    pub network: Option<GigabitsPerSecond>,
    pub gpu_interconnect: Option<GpuInterconnect>,
    pub node_network: Option<NodeNetwork>,
    pub on_demand: Option<UsdPerHour>,
    pub spot: Option<UsdPerHour>,
    pub billing_granularity: Option<BillingGranularity>,
    pub source: String,
    pub as_of: Date,
    pub notes: Option<String>,
    /// The node-to-node network of this shape from the catalog's fabric table; `None` where
    /// the table does not describe it (see [`Offering::node_fabric`]).
    #[serde(default)]
    pub fabric: Option<NodeFabric>,
    /// The price as the provider publishes it, where that is not USD; `on_demand` and `spot`
    /// are then converted at the catalog's exchange rate for the currency.
    #[serde(default)]
    pub native: Option<NativePrice>,
    /// The list prices, where the user's own prices (`--prices`) replaced them.
    #[serde(default)]
    pub list_on_demand: Option<UsdPerHour>,
    #[serde(default)]
    pub list_spot: Option<UsdPerHour>,
    /// Checks this row's prices failed when the catalog was loaded.
    #[serde(default)]
    pub price_flags: Vec<PriceFlag>,
}

/// A price in the currency the provider publishes it in (per hour).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NativePrice {
    /// ISO 4217 code, e.g. `CNY`.
    pub currency: String,
    pub on_demand: Option<f64>,
    pub spot: Option<f64>,
}

/// How many units of a currency one US dollar buys, as of a date, from a named source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExchangeRate {
    pub currency: String,
    pub per_usd: f64,
    pub as_of: Date,
    pub title: String,
    pub url: String,
}

/// A price that looks wrong: kept in the catalog, listed by `catalog --check`, and not used
/// for recommendations unless the user trusts it. (Zero prices and spot at or above
/// on-demand are refused when the catalog loads and dropped by the importer.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PriceFlag {
    /// A spot price at or under 10 % of on-demand (within 1 %): deeper than any provider's published spot
    /// discount for GPUs.
    SpotImplausiblyLow,
    /// The same on-demand price in every one of many regions, where the provider prices its
    /// other shapes per region: a placeholder copied across regions.
    SameInEveryRegion,
}

impl PriceFlag {
    /// The billing mode whose price the flag puts in doubt.
    pub fn billing(self) -> BillingMode {
        match self {
            PriceFlag::SpotImplausiblyLow => BillingMode::Spot,
            PriceFlag::SameInEveryRegion => BillingMode::OnDemand,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            PriceFlag::SpotImplausiblyLow => "spot price at or under 10 % of on-demand",
            PriceFlag::SameInEveryRegion => "one on-demand price repeated across every region",
        }
    }
}

/// Bandwidth assumed between nodes where neither the fabric table nor the offering states
/// one, Gbit/s: the low end of what cloud GPU VMs publish (AWS g4dn/g5 small sizes "up to 25
/// Gbps"). Used in the computation and in the message alike.
pub const UNKNOWN_NODE_NETWORK_GBPS: f64 = 25.0;

impl Offering {
    /// The network between nodes: the fabric table's entry, else what the row's own
    /// `node_network` and `network_gbps` columns say (an RDMA column counts as a cluster
    /// fabric with placement; Ethernet or nothing does not).
    pub fn node_fabric(&self) -> NodeFabric {
        if let Some(fabric) = &self.fabric {
            return fabric.clone();
        }
        let kind = match self.node_network {
            Some(NodeNetwork::Efa) => FabricKind::Efa,
            Some(NodeNetwork::Infiniband) => FabricKind::Infiniband,
            Some(NodeNetwork::Rocev2) => FabricKind::Rocev2,
            Some(NodeNetwork::Ethernet) | None => FabricKind::Ethernet,
        };
        NodeFabric {
            kind,
            bandwidth: self.network,
            cluster_placement: kind.is_cluster_fabric(),
            cluster_product: None,
            devices: None,
            source: None,
        }
    }

    /// Node-to-node bandwidth used for training traffic, and whether it is the conservative
    /// default because nothing states one.
    pub fn node_bandwidth_gbps(&self) -> (f64, bool) {
        let table = self.fabric.as_ref().and_then(|f| f.bandwidth);
        match table.or(self.network) {
            Some(gbps) => (gbps.0, false),
            None => (UNKNOWN_NODE_NETWORK_GBPS, true),
        }
    }

    /// Whether the price of `billing` failed a load-time check.
    pub fn price_flagged(&self, billing: BillingMode) -> Option<PriceFlag> {
        self.price_flags.iter().copied().find(|flag| flag.billing() == billing)
    }

    /// The lowest price this offering is sold at, spot included.
    pub fn cheapest_price(&self) -> Option<UsdPerHour> {
        match (self.on_demand, self.spot) {
            (Some(on_demand), Some(spot)) => Some(if spot.0 < on_demand.0 { spot } else { on_demand }),
            (price, None) | (None, price) => price,
        }
    }
}
