//! What an instance family is built from beyond the catalog columns: the GPU interconnect,
//! the network between nodes and its bandwidth, and how the provider meters time.
//!
//! References:
//! - AWS accelerated computing instance specifications,
//!   <https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html> (network, NVLink/NVSwitch, EFA).
//! - AWS on-demand and spot Linux instances are billed per second with a 60-second minimum,
//!   <https://aws.amazon.com/ec2/pricing/on-demand/>.
//! - Google Cloud GPU machine types, <https://cloud.google.com/compute/docs/gpus>, and
//!   per-second billing with a one-minute minimum,
//!   <https://cloud.google.com/compute/vm-instance-pricing>.
//! - Azure ND-series sizes (InfiniBand, NVLink), <https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/>.

use gpuplan_model::{BillingGranularity, GigabitsPerSecond, GpuInterconnect, NodeNetwork};

#[derive(Debug, Default)]
pub(crate) struct Traits {
    pub gpu_interconnect: Option<GpuInterconnect>,
    pub node_network: Option<NodeNetwork>,
    pub network: Option<GigabitsPerSecond>,
    pub billing: Option<BillingGranularity>,
}

/// Accelerator counts the snapshot has wrong, with the documented value.
pub(crate) fn corrected_count(cloud: &str, instance_type: &str) -> Option<u32> {
    match (cloud, instance_type) {
        // The v6 Azure file lists 12; the ND H100 v5 VM has 8 H100 GPUs.
        ("azure", "Standard_ND96isr_H100_v5") => Some(8),
        _ => None,
    }
}

/// Network bandwidth of AWS GPU instance types, Gbit/s (maximum for "up to" sizes).
const AWS_NETWORK_GBPS: &[(&str, f64)] = &[
    ("p6-b300.48xlarge", 6400.0),
    ("p6-b200.48xlarge", 3200.0),
    ("p5en.48xlarge", 3200.0),
    ("p5e.48xlarge", 3200.0),
    ("p5.48xlarge", 3200.0),
    ("p5.4xlarge", 100.0),
    ("p4de.24xlarge", 400.0),
    ("p4d.24xlarge", 400.0),
    ("p3dn.24xlarge", 100.0),
    ("p3.16xlarge", 25.0),
    ("p3.8xlarge", 10.0),
    ("p3.2xlarge", 10.0),
    ("g6e.48xlarge", 400.0),
    ("g6e.24xlarge", 200.0),
    ("g6e.12xlarge", 100.0),
    ("g5.48xlarge", 100.0),
    ("g5.24xlarge", 50.0),
    ("g5.12xlarge", 40.0),
    ("g4dn.metal", 100.0),
    ("g4dn.16xlarge", 50.0),
    ("g4dn.12xlarge", 50.0),
    ("g4dn.8xlarge", 50.0),
    ("trn1n.32xlarge", 1600.0),
    ("trn1.32xlarge", 800.0),
    ("trn2.48xlarge", 3200.0),
];

pub(crate) fn traits(cloud: &str, instance_type: &str, accelerator: Option<&str>, count: u32) -> Traits {
    let Some(accelerator) = accelerator else {
        return Traits {
            gpu_interconnect: None,
            billing: billing(cloud),
            ..Traits::default()
        };
    };
    let sxm_like = [
        "SXM",
        "H100-SXM5",
        "H200-SXM",
        "B200",
        "B300",
        "GB200",
        "MI300X",
        "MI325X",
    ]
    .iter()
    .any(|marker| accelerator.contains(marker));
    let gpu_interconnect = if count <= 1 {
        GpuInterconnect::None
    } else if accelerator.starts_with("Trainium") {
        GpuInterconnect::Neuronlink
    } else if sxm_like && count >= 8 {
        GpuInterconnect::Nvswitch
    } else if sxm_like || accelerator.starts_with("V100-SXM2") {
        GpuInterconnect::Nvlink
    } else {
        GpuInterconnect::Pcie
    };
    let node_network = match cloud {
        "aws"
            if [
                "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p3dn", "trn1", "trn1n", "trn2",
            ]
            .iter()
            .any(|family| instance_type.starts_with(&format!("{family}.")))
                && count >= 8 =>
        {
            Some(NodeNetwork::Efa)
        }
        "azure" if instance_type.starts_with("Standard_ND") && instance_type.contains('r') => {
            Some(NodeNetwork::Infiniband)
        }
        "aws" | "gcp" | "azure" => Some(NodeNetwork::Ethernet),
        _ => None,
    };
    let network = match cloud {
        "aws" => AWS_NETWORK_GBPS
            .iter()
            .find(|(name, _)| *name == instance_type)
            .map(|(_, gbps)| GigabitsPerSecond(*gbps)),
        _ => None,
    };
    Traits {
        gpu_interconnect: Some(gpu_interconnect),
        node_network,
        network,
        billing: billing(cloud),
    }
}

fn billing(cloud: &str) -> Option<BillingGranularity> {
    match cloud {
        "aws" | "gcp" => Some(BillingGranularity::Second),
        _ => None,
    }
}
