//! A ConvNeXt as Hugging Face's `ConvNextModel` and timm build it (Liu et al. 2022, "A ConvNet
//! for the 2020s", Fig. 4 and Table 9): a 4×4 patchify stem, stages of blocks (7×7 depthwise
//! convolution, LayerNorm, a 4× pointwise MLP with GELU, layer scale, residual), 2×2 strided
//! downsampling between stages, and a LayerNorm and linear head — unrolled into the
//! operations one image goes through.

use crate::resnet_spec::{ConvNetwork, ConvOp, convolution};
use serde::{Deserialize, Serialize};

/// The stages of a ConvNeXt: blocks and channels per stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvnextSpec {
    /// Blocks in each stage (ConvNeXt-T: 3, 3, 9, 3; `depths`).
    pub depths: Vec<u64>,
    /// Channels of each stage (ConvNeXt-T: 96, 192, 384, 768; `hidden_sizes`).
    pub hidden_sizes: Vec<u64>,
    /// Side of the stem's patches (`patch_size`, 4).
    pub patch_size: u64,
    /// Input image channels (`num_channels`).
    pub image_channels: u64,
    /// Output classes of the head.
    pub classes: u64,
}

/// Side of the depthwise convolution's window.
const DEPTHWISE_KERNEL: u64 = 7;
/// Width of a block's MLP over its channels.
const MLP_EXPANSION: u64 = 4;

struct Builder {
    ops: Vec<ConvOp>,
    parameters: u64,
}

impl Builder {
    /// A convolution with bias over a `side`² map of `input` channels into `output` channels,
    /// `groups` apart (`input` for a depthwise one); returns the output side.
    fn conv(&mut self, side: u64, input: u64, output: u64, kernel: u64, stride: u64, groups: u64) -> u64 {
        let out = if stride == 1 { side } else { side / stride };
        let weights = convolution(&mut self.ops, (side, out), (input, output), kernel, groups);
        self.parameters += weights + output;
        out
    }

    /// A LayerNorm over the channels of every position (its weight and bias).
    fn layer_norm(&mut self, elements: u64, channels: u64) {
        self.ops.push(ConvOp::BatchNorm {
            elements: elements as f64,
        });
        self.parameters += 2 * channels;
    }

    /// One block at `side`² × `channels`.
    fn block(&mut self, side: u64, channels: u64) {
        let elements = side * side * channels;
        self.conv(side, channels, channels, DEPTHWISE_KERNEL, 1, channels);
        self.layer_norm(elements, channels);
        self.conv(side, channels, channels * MLP_EXPANSION, 1, 1, 1);
        self.ops.push(ConvOp::Relu {
            elements: (elements * MLP_EXPANSION) as f64,
        });
        self.conv(side, channels * MLP_EXPANSION, channels, 1, 1, 1);
        // Layer scale (one weight per channel) and the residual addition.
        self.parameters += channels;
        self.ops.push(ConvOp::Add {
            elements: elements as f64,
        });
        self.ops.push(ConvOp::Add {
            elements: elements as f64,
        });
    }
}

impl ConvNetwork for ConvnextSpec {
    const NORM: &'static str = "LayerNorm";
    const ACTIVATION: &'static str = "GELU";

    fn unroll(&self, resolution: u64) -> (Vec<ConvOp>, u64) {
        let mut b = Builder {
            ops: Vec::new(),
            parameters: 0,
        };
        let first = self.hidden_sizes.first().copied().unwrap_or(1);
        let patch = self.patch_size.max(1);
        let mut side = b.conv(resolution, self.image_channels, first, patch, patch, 1);
        b.layer_norm(side * side * first, first);
        let mut channels = first;
        for (stage, (&depth, &width)) in self.depths.iter().zip(&self.hidden_sizes).enumerate() {
            if stage > 0 {
                b.layer_norm(side * side * channels, channels);
                side = b.conv(side, channels, width, 2, 2, 1);
                channels = width;
            }
            for _ in 0..depth {
                b.block(side, channels);
            }
        }
        b.ops.push(ConvOp::Pool {
            input: (side * side * channels) as f64,
            output: channels as f64,
        });
        b.layer_norm(channels, channels);
        b.conv(1, channels, self.classes, 1, 1, 1);
        (b.ops, b.parameters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> ConvnextSpec {
        ConvnextSpec {
            depths: vec![3, 3, 9, 3],
            hidden_sizes: vec![96, 192, 384, 768],
            patch_size: 4,
            image_channels: 3,
            classes: 1000,
        }
    }

    /// timm's convnext_tiny holds 28,589,128 parameters and the paper gives 4.5 GFLOPs
    /// (multiply-accumulates) at 224² for ConvNeXt-T; ConvNeXt-B (3, 3, 27, 3 × 128…1024)
    /// 88.6 M and 15.4 G.
    #[test]
    fn reproduces_the_published_parameters_and_macs() {
        let (ops, parameters) = tiny().unroll(224);
        assert_eq!(parameters, 28_589_128);
        let macs = crate::resnet_spec::total_macs(&ops);
        assert!((macs / 1e9 - 4.47).abs() < 0.05, "{} GMACs", macs / 1e9);
        let base = ConvnextSpec {
            depths: vec![3, 3, 27, 3],
            hidden_sizes: vec![128, 256, 512, 1024],
            ..tiny()
        };
        let (_, parameters) = base.unroll(224);
        assert!((parameters as f64 / 88.6e6 - 1.0).abs() < 0.005, "{parameters}");
    }
}
