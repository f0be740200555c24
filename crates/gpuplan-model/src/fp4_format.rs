//! How a 4-bit floating-point weight is stored: NVIDIA's NVFP4 or the OCP MXFP4, which differ
//! in their block scales and so in their bytes.

use crate::{Accelerator, TransformerSpec};
use serde::{Deserialize, Serialize};

/// Bytes of one NVFP4 weight, NVIDIA's 4-bit format on Blackwell and what TensorRT-LLM and
/// ModelOpt checkpoints store: an E2M1 value with one FP8 (E4M3) scale per block of 16 and an
/// FP32 scale per tensor, 4 + 8/16 bits ("Introducing NVFP4 for Efficient and Accurate
/// Low-Precision Inference", NVIDIA technical blog, June 2025; NeMo AutoModel's NVFP4 packing:
/// "0.5625 bytes per parameter plus 4 bytes per row").
pub const NVFP4_BYTES_PER_PARAMETER: f64 = (4.0 + 8.0 / 16.0) / 8.0;

/// Bytes of one MXFP4 weight (OCP Microscaling Formats (MX) Specification v1.0, 2023): an E2M1
/// value with one 8-bit power-of-two (E8M0) scale per block of 32, 4 + 8/32 bits. gpt-oss ships
/// its experts in it, and it is the 4-bit format of AMD's CDNA 4 (MI350 series) matrix cores.
pub const MXFP4_BYTES_PER_PARAMETER: f64 = (4.0 + 8.0 / 32.0) / 8.0;

/// How a 4-bit floating-point weight is stored, which sets its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fp4Format {
    Nvfp4,
    Mxfp4,
}

impl Fp4Format {
    /// The format the checkpoint's config names; without one, MXFP4 where the accelerator's
    /// own 4-bit format is MX (AMD) and NVFP4 otherwise.
    pub fn of(spec: &TransformerSpec, accelerator: &Accelerator) -> Fp4Format {
        if let Some(format) = spec.quantization.as_ref().and_then(|q| q.fp4_format) {
            return format;
        }
        if accelerator.vendor == "AMD" {
            Fp4Format::Mxfp4
        } else {
            Fp4Format::Nvfp4
        }
    }

    /// Whether an engine multiplies weights of this format by 8-bit activations on
    /// `accelerator`, at its 8-bit rate, rather than by 4-bit ones at its 4-bit rate: MXFP4 on
    /// NVIDIA's parts, whose engines quantise the activations to MXFP8 (TensorRT-LLM's gpt-oss
    /// support matrix: mxfp8 activations by mxfp4 weights on Blackwell's 8-bit MMA, UTCQMMA, or
    /// bf16 ones; vLLM's FlashInfer MXFP4 MoE likewise). NVFP4 checkpoints quantise the
    /// activations to NVFP4 too, and AMD's CDNA 4 multiplies MX formats natively.
    pub fn multiplies_eight_bit_activations(self, accelerator: &Accelerator) -> bool {
        self == Fp4Format::Mxfp4 && accelerator.vendor == "NVIDIA"
    }

    pub fn bytes_per_parameter(self) -> f64 {
        match self {
            Fp4Format::Nvfp4 => NVFP4_BYTES_PER_PARAMETER,
            Fp4Format::Mxfp4 => MXFP4_BYTES_PER_PARAMETER,
        }
    }

    /// The format in words, for the estimate's assumptions.
    pub fn describe(self) -> &'static str {
        match self {
            Fp4Format::Nvfp4 => "NVFP4 (4.5 bits a weight: one FP8 scale per 16)",
            Fp4Format::Mxfp4 => "MXFP4 (4.25 bits a weight: one 8-bit scale per 32)",
        }
    }
}
