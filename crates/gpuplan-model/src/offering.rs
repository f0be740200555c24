use crate::{AcceleratorId, BillingGranularity, Bytes, Date, GigabitsPerSecond, ProviderId, UsdPerHour};
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
}

impl Offering {
    /// The lowest price this offering is sold at, spot included.
    pub fn cheapest_price(&self) -> Option<UsdPerHour> {
        match (self.on_demand, self.spot) {
            (Some(on_demand), Some(spot)) => Some(if spot.0 < on_demand.0 { spot } else { on_demand }),
            (price, None) | (None, price) => price,
        }
    }
}
