//! Cloud TPU slices as GKE runs them: a slice of `v5litepod-N` is one node (N ≤ 8 chips on a
//! `ct5lp-hightpu-1t`, `-4t` or `-8t` VM) or N/4 nodes of four chips (`ct5lp-hightpu-4t`), all
//! labelled with the slice's accelerator and topology, which is how a pod selects them
//! (`cloud.google.com/gke-tpu-accelerator`, `cloud.google.com/gke-tpu-topology`).
//!
//! Sources: Google's "Cloud TPU v5e" page (the 2D slice shapes 1x1 … 16x16 and the 1-, 4- and
//! 8-chip VM types, as read on 2026-11-28), and GoogleCloudPlatform/kubernetes-engine-samples
//! `ai-ml/llm-multihost-tpus-saxml/sax-model-server-set.yaml` (a 4x8 v5e slice as 8 pods of
//! `google.com/tpu: 4` selecting `tpu-v5-lite-podslice` and `4x8`). GKE's webhook gives each pod
//! of an indexed Job with a subdomain `TPU_WORKER_ID` and `TPU_WORKER_HOSTNAMES`, which
//! PyTorch/XLA and JAX read to find the other hosts.

/// A TPU slice as the nodes GKE makes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TpuSlice {
    /// `cloud.google.com/gke-tpu-accelerator`.
    pub accelerator_label: &'static str,
    /// `cloud.google.com/gke-tpu-topology`.
    pub topology: &'static str,
    /// GKE's machine type for each node of the slice.
    pub machine_type: &'static str,
    pub hosts: u32,
    pub chips_per_host: u32,
}

/// v5e (`TPU-v5e`): chips → topology, machine type and chips per node.
const V5E: [(u32, &str, &str, u32); 8] = [
    (1, "1x1", "ct5lp-hightpu-1t", 1),
    (4, "2x2", "ct5lp-hightpu-4t", 4),
    (8, "2x4", "ct5lp-hightpu-8t", 8),
    (16, "4x4", "ct5lp-hightpu-4t", 4),
    (32, "4x8", "ct5lp-hightpu-4t", 4),
    (64, "8x8", "ct5lp-hightpu-4t", 4),
    (128, "8x16", "ct5lp-hightpu-4t", 4),
    (256, "16x16", "ct5lp-hightpu-4t", 4),
];

/// The slice of `chips` chips of the accelerator `gpu` (a catalog id), where GKE's shape for
/// it is known.
pub fn tpu_slice(gpu: &str, chips: u32) -> Option<TpuSlice> {
    if gpu != "TPU-v5e" {
        return None;
    }
    let (_, topology, machine_type, per_host) = V5E.iter().find(|(n, ..)| *n == chips)?;
    Some(TpuSlice {
        accelerator_label: "tpu-v5-lite-podslice",
        topology,
        machine_type,
        hosts: chips / per_host,
        chips_per_host: *per_host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_slices_are_one_node_and_large_ones_four_chips_a_node() {
        let eight = tpu_slice("TPU-v5e", 8).unwrap();
        assert_eq!((eight.hosts, eight.chips_per_host, eight.topology), (1, 8, "2x4"));
        let sixty_four = tpu_slice("TPU-v5e", 64).unwrap();
        assert_eq!(
            (sixty_four.hosts, sixty_four.chips_per_host, sixty_four.topology),
            (16, 4, "8x8")
        );
        assert!(tpu_slice("TPU-v5e", 12).is_none());
        assert!(tpu_slice("H100-SXM5-80GB", 8).is_none());
    }
}
