//! Cloud TPU slices as GKE runs them: a v5e or v6e slice is one node (up to 8 chips on a 1-, 4-
//! or 8-chip VM) or nodes of four chips, a v5p or v4 slice nodes of four chips, all labelled
//! with the slice's accelerator and topology, which is how a pod selects them
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

/// One TPU generation as GKE labels and hosts it: chips → topology, machine type and chips
/// per node, for the slice sizes the catalog prices.
struct Generation {
    /// The catalog's accelerator id.
    accelerator: &'static str,
    /// `cloud.google.com/gke-tpu-accelerator`.
    label: &'static str,
    shapes: &'static [(u32, &'static str, &'static str, u32)],
}

/// The generations, from Google's TPU pages (v5e, v6e, v5p, v4: configurations and host VM
/// types) and AI-Hypercomputer/xpk `src/xpk/core/system_characteristics.py` @ 02b0c09 (GKE
/// accelerator labels, topologies and machine types).
const GENERATIONS: [Generation; 4] = [
    Generation {
        accelerator: "TPU-v5e",
        label: "tpu-v5-lite-podslice",
        shapes: &[
            (1, "1x1", "ct5lp-hightpu-1t", 1),
            (4, "2x2", "ct5lp-hightpu-4t", 4),
            (8, "2x4", "ct5lp-hightpu-8t", 8),
            (16, "4x4", "ct5lp-hightpu-4t", 4),
            (32, "4x8", "ct5lp-hightpu-4t", 4),
            (64, "8x8", "ct5lp-hightpu-4t", 4),
            (128, "8x16", "ct5lp-hightpu-4t", 4),
            (256, "16x16", "ct5lp-hightpu-4t", 4),
        ],
    },
    Generation {
        accelerator: "TPU-v6e",
        label: "tpu-v6e-slice",
        shapes: &[
            (1, "1x1", "ct6e-standard-1t", 1),
            (4, "2x2", "ct6e-standard-4t", 4),
            (8, "2x4", "ct6e-standard-8t", 8),
            (16, "4x4", "ct6e-standard-4t", 4),
            (32, "4x8", "ct6e-standard-4t", 4),
            (64, "8x8", "ct6e-standard-4t", 4),
            (128, "8x16", "ct6e-standard-4t", 4),
            (256, "16x16", "ct6e-standard-4t", 4),
        ],
    },
    Generation {
        accelerator: "TPU-v5p",
        label: "tpu-v5p-slice",
        shapes: &[
            (4, "2x2x1", "ct5p-hightpu-4t", 4),
            (8, "2x2x2", "ct5p-hightpu-4t", 4),
            (16, "2x2x4", "ct5p-hightpu-4t", 4),
            (32, "2x4x4", "ct5p-hightpu-4t", 4),
            (64, "4x4x4", "ct5p-hightpu-4t", 4),
            (128, "4x4x8", "ct5p-hightpu-4t", 4),
            (256, "4x8x8", "ct5p-hightpu-4t", 4),
            (512, "8x8x8", "ct5p-hightpu-4t", 4),
            (1024, "8x8x16", "ct5p-hightpu-4t", 4),
            (2048, "8x16x16", "ct5p-hightpu-4t", 4),
            (4096, "16x16x16", "ct5p-hightpu-4t", 4),
            (6144, "16x16x24", "ct5p-hightpu-4t", 4),
        ],
    },
    Generation {
        accelerator: "TPU-v4",
        label: "tpu-v4-podslice",
        shapes: &[
            (4, "2x2x1", "ct4p-hightpu-4t", 4),
            (8, "2x2x2", "ct4p-hightpu-4t", 4),
            (16, "2x2x4", "ct4p-hightpu-4t", 4),
            (32, "2x4x4", "ct4p-hightpu-4t", 4),
            (64, "4x4x4", "ct4p-hightpu-4t", 4),
            (128, "4x4x8", "ct4p-hightpu-4t", 4),
            (256, "4x8x8", "ct4p-hightpu-4t", 4),
            (512, "8x8x8", "ct4p-hightpu-4t", 4),
            (768, "8x8x12", "ct4p-hightpu-4t", 4),
            (1024, "8x8x16", "ct4p-hightpu-4t", 4),
            (2048, "8x16x16", "ct4p-hightpu-4t", 4),
        ],
    },
];

/// The slice of `chips` chips of the accelerator `gpu` (a catalog id), where GKE's shape for
/// it is known.
pub fn tpu_slice(gpu: &str, chips: u32) -> Option<TpuSlice> {
    let generation = GENERATIONS.iter().find(|g| g.accelerator == gpu)?;
    let (_, topology, machine_type, per_host) = generation.shapes.iter().find(|(n, ..)| *n == chips)?;
    Some(TpuSlice {
        accelerator_label: generation.label,
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
        // v5p and v4 slices are three-dimensional, four chips a host.
        let v5p = tpu_slice("TPU-v5p", 64).unwrap();
        assert_eq!(
            (v5p.accelerator_label, v5p.topology, v5p.hosts),
            ("tpu-v5p-slice", "4x4x4", 16)
        );
        let v6e = tpu_slice("TPU-v6e", 8).unwrap();
        assert_eq!((v6e.machine_type, v6e.hosts), ("ct6e-standard-8t", 1));
        assert!(tpu_slice("H100-SXM5-80GB", 8).is_none());
    }
}
