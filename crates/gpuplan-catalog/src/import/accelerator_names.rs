//! SkyPilot accelerator names → gpuplan accelerator ids.
//!
//! SkyPilot names a family (`A100`, `H100`, `V100`) where the hardware differs by form
//! factor and memory. The variant is read from the row itself where it says (instance type,
//! `GpuInfo` name, per-GPU memory) and otherwise from what the provider documents for that
//! instance family; a variant that is assumed is noted on the row.

use super::sky_row::SkyRow;
use crate::AcceleratorIndex;
use gpuplan_model::{AcceleratorId, Bytes};

pub(crate) struct Mapped {
    pub id: AcceleratorId,
    /// Set when the variant was not stated by the row and had to be assumed.
    pub assumption: Option<&'static str>,
}

fn mapped(id: &str) -> Result<Mapped, String> {
    Ok(Mapped {
        id: AcceleratorId::new(id),
        assumption: None,
    })
}

fn assumed(id: &str, why: &'static str) -> Result<Mapped, String> {
    Ok(Mapped {
        id: AcceleratorId::new(id),
        assumption: Some(why),
    })
}

pub(crate) fn map(
    cloud: &str,
    name: &str,
    row: &SkyRow,
    count: u32,
    accelerators: &AcceleratorIndex,
) -> Result<Mapped, String> {
    let hints = format!("{} {}", row.instance_type, row.gpu_info_name()).to_lowercase();
    let has = |word: &str| hints.contains(word);
    let per_gpu = row.claimed_memory_per_gpu(cloud, count);
    let at_least = |gib: f64| per_gpu.is_some_and(|m| m >= Bytes::from_gib(gib));
    match name {
        "A100" => {
            let large = at_least(60.0);
            match (
                has("pcie") || has("-pci_") || is_pcie_a100(cloud, &row.instance_type, count),
                large,
            ) {
                (true, true) => mapped("A100-PCIE-80GB"),
                (true, false) => mapped("A100-PCIE-40GB"),
                (false, true) => mapped("A100-SXM4-80GB"),
                (false, false) => mapped("A100-SXM4-40GB"),
            }
        }
        "A100-80GB" => {
            if has("pcie") || (cloud == "azure" && row.instance_type.starts_with("Standard_NC")) {
                mapped("A100-PCIE-80GB")
            } else {
                mapped("A100-SXM4-80GB")
            }
        }
        "A100-80GB-SXM" => mapped("A100-SXM4-80GB"),
        "H100" | "H100-SXM" | "H100-MEGA" | "H100-NVLINK" => {
            if has("nvl") && !has("nvlink") {
                mapped("H100-NVL-94GB")
            } else if has("pcie") {
                mapped("H100-PCIE-80GB")
            } else if cloud == "azure" && row.instance_type.starts_with("Standard_NC") {
                // Azure's NC H100 v5 series carries H100 NVL cards.
                assumed("H100-NVL-94GB", "NC H100 v5 carries H100 NVL (Azure documentation)")
            } else if has("sxm")
                || has("hbm3")
                || has("nvlink")
                || matches!(cloud, "aws" | "gcp" | "oci" | "azure" | "nebius")
            {
                mapped("H100-SXM5-80GB")
            } else {
                assumed(
                    "H100-SXM5-80GB",
                    "H100 form factor not stated by the source; SXM5 assumed",
                )
            }
        }
        "H100-NVL" => mapped("H100-NVL-94GB"),
        "H200" | "H200-SXM" => {
            if has("nvl") {
                mapped("H200-NVL-141GB")
            } else {
                mapped("H200-SXM-141GB")
            }
        }
        "V100" => {
            if has("pcie") || cloud == "ibm" || (cloud == "azure" && row.instance_type.starts_with("Standard_NC")) {
                mapped("V100-PCIE-16GB")
            } else if matches!(cloud, "aws" | "gcp" | "oci" | "lambda") {
                mapped("V100-SXM2-16GB")
            } else {
                assumed(
                    "V100-SXM2-16GB",
                    "V100 form factor not stated by the source; SXM2 16 GB assumed",
                )
            }
        }
        "V100-32GB" => mapped("V100-SXM2-32GB"),
        "GH200" => mapped(if at_least(120.0) { "GH200-144GB" } else { "GH200-96GB" }),
        "RTXPRO6000-WK" | "RTXPRO6000WS" => {
            assumed("RTX-PRO-6000", "Workstation edition; figures of the RTX PRO 6000 used")
        }
        other => match accelerators.resolve_one(other) {
            Ok(resolved) => mapped(resolved.accelerator.id.as_str()),
            Err(_) => Err(format!("accelerator `{other}` not in the catalog")),
        },
    }
}

/// Lambda rents A100 40 GB as PCIe cards in its 1/2/4-GPU types (`gpu_1x_a100`) and as SXM4
/// in the 8-GPU and `_sxm4` types.
fn is_pcie_a100(cloud: &str, instance_type: &str, count: u32) -> bool {
    cloud == "lambda" && !instance_type.contains("sxm") && count < 8
}
