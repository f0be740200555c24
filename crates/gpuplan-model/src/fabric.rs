//! The network between the nodes of a cluster: what carries collective traffic, how fast, and
//! whether the provider places several instances of a shape close enough to train across them.

use crate::{Date, GigabitsPerSecond, ProviderId};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The technology between nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FabricKind {
    /// AWS Elastic Fabric Adapter (SRD, GPUDirect RDMA).
    Efa,
    Infiniband,
    /// RDMA over Converged Ethernet.
    Rocev2,
    /// Google's GPUDirect-TCPX (A3 High).
    GpudirectTcpx,
    /// Google's GPUDirect-TCPXO (A3 Mega).
    GpudirectTcpxo,
    /// Google TPU inter-chip interconnect inside a slice.
    Ici,
    /// Plain TCP over the instance's Ethernet.
    Ethernet,
}

impl FabricKind {
    /// Whether GPU collectives bypass the host's TCP stack (RDMA or an offload of its kind).
    pub fn is_cluster_fabric(self) -> bool {
        !matches!(self, FabricKind::Ethernet)
    }
}

impl FromStr for FabricKind {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Ok(match text.trim().to_lowercase().as_str() {
            "efa" => FabricKind::Efa,
            "infiniband" => FabricKind::Infiniband,
            "rocev2" | "roce" => FabricKind::Rocev2,
            "gpudirect-tcpx" => FabricKind::GpudirectTcpx,
            "gpudirect-tcpxo" => FabricKind::GpudirectTcpxo,
            "ici" => FabricKind::Ici,
            "ethernet" => FabricKind::Ethernet,
            other => {
                return Err(format!(
                    "unknown fabric `{other}` (expected efa, infiniband, rocev2, gpudirect-tcpx, gpudirect-tcpxo, ici or ethernet)"
                ));
            }
        })
    }
}

impl fmt::Display for FabricKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FabricKind::Efa => "EFA",
            FabricKind::Infiniband => "InfiniBand",
            FabricKind::Rocev2 => "RoCEv2",
            FabricKind::GpudirectTcpx => "GPUDirect-TCPX",
            FabricKind::GpudirectTcpxo => "GPUDirect-TCPXO",
            FabricKind::Ici => "ICI",
            FabricKind::Ethernet => "Ethernet",
        })
    }
}

/// Where a fabric description comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FabricSource {
    pub title: String,
    pub url: String,
    pub as_of: Date,
}

/// The node-to-node network of one instance shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFabric {
    pub kind: FabricKind,
    /// Aggregate node-to-node bandwidth available to collectives; `None` where unpublished.
    pub bandwidth: Option<GigabitsPerSecond>,
    /// The provider places several of these instances for multi-node training (placement
    /// groups, compact placement, a cluster product).
    pub cluster_placement: bool,
    /// What the user asks the provider for, where it is a product of its own.
    pub cluster_product: Option<String>,
    /// Fabric devices one instance attaches (EFA interfaces), which a pod that uses the fabric
    /// requests from the device plugin; `None` where the source does not say.
    #[serde(default)]
    pub devices: Option<u32>,
    /// `None` when derived from the offering's own columns.
    pub source: Option<FabricSource>,
}

/// One entry of the fabric table: the instance types of a provider it describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FabricRule {
    pub provider: ProviderId,
    /// Exact instance type names, or prefixes written with a trailing `*`.
    pub instance_types: Vec<String>,
    pub fabric: NodeFabric,
}

impl FabricRule {
    /// Whether this rule describes `instance_type` of `provider`.
    pub fn matches(&self, provider: &ProviderId, instance_type: &str) -> bool {
        &self.provider == provider
            && self
                .instance_types
                .iter()
                .any(|pattern| match pattern.strip_suffix('*') {
                    Some(prefix) => instance_type.starts_with(prefix),
                    None => pattern == instance_type,
                })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_exact_names_and_prefixes() {
        let rule = FabricRule {
            provider: ProviderId::new("aws"),
            instance_types: vec!["p5.48xlarge".into(), "p4d*".into()],
            fabric: NodeFabric {
                kind: FabricKind::Efa,
                bandwidth: Some(GigabitsPerSecond(3200.0)),
                cluster_placement: true,
                cluster_product: None,
                devices: Some(32),
                source: None,
            },
        };
        let aws = ProviderId::new("aws");
        assert!(rule.matches(&aws, "p5.48xlarge"));
        assert!(rule.matches(&aws, "p4de.24xlarge"));
        assert!(!rule.matches(&aws, "p5.4xlarge"));
        assert!(!rule.matches(&ProviderId::new("gcp"), "p5.48xlarge"));
    }

    #[test]
    fn only_ethernet_is_not_a_cluster_fabric() {
        assert!(FabricKind::Efa.is_cluster_fabric());
        assert!(!FabricKind::Ethernet.is_cluster_fabric());
        assert_eq!("RoCE".parse::<FabricKind>(), Ok(FabricKind::Rocev2));
    }
}
