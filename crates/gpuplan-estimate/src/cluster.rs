//! The machines a workload runs on: how many accelerators, how they are grouped into nodes,
//! and how fast they talk.

use crate::efficiency::{collective_bandwidth_fraction, default_node_network_gbps, pcie_bandwidth_gb_per_s};
use gpuplan_model::{Accelerator, BytesPerSecond, GpuInterconnect};

/// Accelerators and links, as the communication model sees them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cluster {
    pub gpus: u32,
    pub gpus_per_node: u32,
    /// GPUs joined by the scale-up link (NVLink, Infinity Fabric): the node, or more where
    /// the system's domain spans several nodes (72 GPUs over the 18 trays of a GB200 NVL72).
    pub scale_up_domain: u32,
    /// Achievable per-GPU collective bandwidth inside a node, one direction.
    pub intra_node: BytesPerSecond,
    /// Achievable per-GPU collective bandwidth between nodes, one direction.
    pub inter_node: BytesPerSecond,
    /// Whether the intra-node figure is NVLink's (else PCIe).
    pub scale_up_linked: bool,
    /// GPUs one NVLink bridge joins on PCIe cards (the pairs of H100 NVL); 1 where none does.
    /// Groups within a bridge talk at `bridge`, the rest of the node over PCIe.
    pub bridged_gpus: u32,
    /// Achievable per-GPU collective bandwidth over the bridge, one direction.
    pub bridge: BytesPerSecond,
    /// Achievable copy bandwidth between one GPU and host memory, one direction (PCIe).
    pub host_link: BytesPerSecond,
}

impl Cluster {
    /// A cluster of `gpus` accelerators, `gpus_per_node` to a node. `interconnect` says how the
    /// GPUs of a node are linked where an offering states it; `node_network_gbps` is the
    /// node's network bandwidth.
    pub fn new(
        accelerator: &Accelerator,
        gpus: u32,
        gpus_per_node: u32,
        interconnect: Option<GpuInterconnect>,
        node_network_gbps: Option<f64>,
    ) -> Cluster {
        let gpus_per_node = gpus_per_node.clamp(1, gpus.max(1));
        // NVLink only: AMD's Infinity Fabric is a faster link than PCIe on paper, but the
        // serving engines' all-reduces over RCCL did not run at its speed on the held-out
        // MI300X runs (tensor-parallel 405B serving came out 2–4× too fast with it), so those
        // parts keep the PCIe figure until an RCCL measurement says otherwise.
        let link = accelerator.nvlink.map(|link| link.bandwidth);
        let linked = match interconnect {
            Some(GpuInterconnect::Nvlink | GpuInterconnect::Nvswitch) => link.is_some(),
            Some(_) => false,
            // Without an offering, SXM parts and superchips are assumed on their NVLink board.
            None => accelerator.on_nvlink_board(),
        };
        // NVLink's figure is its line rate, of which ring collectives reach a fraction; PCIe's
        // is already what nccl-tests reach over it.
        let fraction = collective_bandwidth_fraction();
        let pcie = pcie_bandwidth_gb_per_s(accelerator.pcie_generation);
        let intra_gb = match link {
            Some(link) if linked => link.as_gb_per_s() / 2.0 * fraction,
            _ => pcie,
        };
        let scale_up_domain = match accelerator.scale_up_domain {
            Some(domain) if linked => domain.max(gpus_per_node),
            _ => gpus_per_node,
        };
        // PCIe cards sold bridged (H100 NVL pairs): the catalog's domain is the bridge.
        let bridged_gpus = match (link, accelerator.scale_up_domain) {
            (Some(_), Some(domain)) if !linked => domain.clamp(1, gpus_per_node),
            _ => 1,
        };
        let bridge_gb = link.map_or(intra_gb, |link| link.as_gb_per_s() / 2.0 * fraction);
        let network_gb =
            node_network_gbps.unwrap_or_else(|| default_node_network_gbps(accelerator, gpus_per_node)) / 8.0;
        Cluster {
            gpus: gpus.max(1),
            gpus_per_node,
            scale_up_domain,
            intra_node: BytesPerSecond::from_gb_per_s(intra_gb),
            inter_node: BytesPerSecond::from_gb_per_s(network_gb / f64::from(gpus_per_node) * fraction),
            scale_up_linked: linked,
            bridged_gpus,
            bridge: BytesPerSecond::from_gb_per_s(bridge_gb),
            host_link: BytesPerSecond::from_gb_per_s(pcie),
        }
    }

    pub fn nodes(&self) -> u32 {
        self.gpus.div_ceil(self.gpus_per_node)
    }

    /// Bandwidth of a collective over `group` GPUs laid out `stride` apart: the scale-up
    /// link's when the group fits in one scale-up domain (a node, or a rack such as GB200
    /// NVL72), else limited by the network; on bridged PCIe cards, the bridge's when the group
    /// is one bridged set.
    pub fn group_bandwidth(&self, group: u32, stride: u32) -> BytesPerSecond {
        if group > 1 && group.saturating_mul(stride) <= self.bridged_gpus {
            self.bridge
        } else if group.saturating_mul(stride) <= self.scale_up_domain {
            self.intra_node
        } else {
            self.inter_node
        }
    }

    /// Seconds for an all-to-all in which each GPU of a `group` laid out `stride` apart sends
    /// `bytes` spread evenly over the group (its own share stays): the peers in its scale-up
    /// domain are reached over the scale-up link, the rest over the network, both at once.
    pub fn all_to_all_seconds(&self, bytes: f64, group: u32, stride: u32) -> f64 {
        let group = group.max(1);
        let local = (self.scale_up_domain / stride.max(1)).clamp(1, group);
        let n = f64::from(group);
        let over_link = bytes * f64::from(local - 1) / n / self.intra_node.0;
        let over_network = bytes * f64::from(group - local) / n / self.inter_node.0;
        over_link.max(over_network)
    }
}
