//! A residual convolutional network as torchvision builds it (He et al. 2016, "Deep Residual
//! Learning for Image Recognition", Table 1; torchvision's v1.5 variant strides in the 3×3
//! convolution of each bottleneck), unrolled into the operations one image goes through.

use serde::{Deserialize, Serialize};

/// The stages of a ResNet: blocks per stage and the block type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResnetSpec {
    /// Residual blocks in each of the stages (ResNet-50: 3, 4, 6, 3).
    pub blocks: Vec<u64>,
    /// Bottleneck blocks (1×1, 3×3, 1×1 with 4× expansion; ResNet-50 and deeper) rather than
    /// basic blocks (two 3×3).
    pub bottleneck: bool,
    /// Output classes of the final fully connected layer.
    #[serde(default = "imagenet_classes")]
    pub classes: u64,
}

fn imagenet_classes() -> u64 {
    1000
}

/// What one operation of the forward pass does to one image.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConvOp {
    /// A convolution (or the final linear layer, as a 1×1 convolution on a 1×1 map).
    Conv {
        /// Multiply-accumulates.
        macs: f64,
        input: f64,
        output: f64,
        weights: f64,
    },
    /// Batch normalisation of `elements` values.
    BatchNorm { elements: f64 },
    /// In-place ReLU.
    Relu { elements: f64 },
    /// The residual addition.
    Add { elements: f64 },
    /// Max or average pooling from `input` to `output` values.
    Pool { input: f64, output: f64 },
    /// Maps joined along the channels into one of `elements` values (a copy, unless the
    /// engine writes the parts in place).
    Concat { elements: f64 },
    /// A memory-bound pass from `input` to `output` values that engines do not fuse into the
    /// convolutions: a nearest-neighbour upsampling, or an attention's softmax over its scores.
    MemoryPass { input: f64, output: f64 },
}

/// The multiply-accumulates of `ops`: their convolutions' and matrix products' (the figure
/// papers publish, which the networks' tests check).
#[cfg(test)]
pub(crate) fn total_macs(ops: &[ConvOp]) -> f64 {
    ops.iter()
        .map(|op| match op {
            ConvOp::Conv { macs, .. } => *macs,
            _ => 0.0,
        })
        .sum()
}

/// Attention's two matrix products over `scores` query–key pairs (all heads together) and the
/// softmax between them: the scores from `(queries and keys read, key width)`, then the
/// weighted values from `(values read, value width)` into `out` values.
pub(crate) fn attention(
    ops: &mut Vec<ConvOp>,
    scores: f64,
    (queries_keys, key_width): (f64, f64),
    (values, value_width): (f64, f64),
    out: f64,
) {
    ops.push(ConvOp::Conv {
        macs: scores * key_width,
        input: queries_keys,
        output: scores,
        weights: 0.0,
    });
    ops.push(ConvOp::MemoryPass {
        input: scores,
        output: scores,
    });
    ops.push(ConvOp::Conv {
        macs: scores * value_width,
        input: scores + values,
        output: out,
        weights: 0.0,
    });
}

/// A convolutional network the estimators walk operation by operation.
pub trait ConvNetwork {
    /// What its normalisations and activations are called, for the notes.
    const NORM: &'static str;
    const ACTIVATION: &'static str;
    /// The forward operations for one image of `resolution`² pixels, and the parameter count.
    fn unroll(&self, resolution: u64) -> (Vec<ConvOp>, u64);
}

/// Width of the first stage and of the stem.
const STEM_CHANNELS: u64 = 64;
/// Channel expansion of a bottleneck block's last convolution.
const BOTTLENECK_EXPANSION: u64 = 4;
/// Input image channels (RGB).
const IMAGE_CHANNELS: u64 = 3;

/// Side of a feature map after a `kernel`×`kernel` window with `stride` and padding kernel/2.
fn after(side: u64, kernel: u64, stride: u64) -> u64 {
    (side + 2 * (kernel / 2)).saturating_sub(kernel) / stride + 1
}

/// Records a convolution from a `side`² map of `input` channels to an `out`² map of `output`
/// channels, over `groups` channel groups, and returns its weights (bias and norm not counted).
pub(crate) fn convolution(
    ops: &mut Vec<ConvOp>,
    (side, out): (u64, u64),
    (input, output): (u64, u64),
    kernel: u64,
    groups: u64,
) -> u64 {
    let weights = kernel * kernel * input / groups.max(1) * output;
    ops.push(ConvOp::Conv {
        macs: (weights * out * out) as f64,
        input: (side * side * input) as f64,
        output: (out * out * output) as f64,
        weights: weights as f64,
    });
    weights
}

struct Builder {
    ops: Vec<ConvOp>,
    parameters: u64,
}

impl Builder {
    /// A bias-free convolution followed by batch normalisation; returns the output side.
    fn conv_bn(&mut self, side: u64, input_channels: u64, channels: u64, kernel: u64, stride: u64) -> u64 {
        let out = after(side, kernel, stride);
        let weights = convolution(&mut self.ops, (side, out), (input_channels, channels), kernel, 1);
        let output = (out * out * channels) as f64;
        self.ops.push(ConvOp::BatchNorm { elements: output });
        self.parameters += weights + 2 * channels;
        out
    }

    fn relu(&mut self, side: u64, channels: u64) {
        self.ops.push(ConvOp::Relu {
            elements: (side * side * channels) as f64,
        });
    }
}

impl ConvNetwork for ResnetSpec {
    const NORM: &'static str = "batch norm";
    const ACTIVATION: &'static str = "ReLU";

    fn unroll(&self, resolution: u64) -> (Vec<ConvOp>, u64) {
        let mut b = Builder {
            ops: Vec::new(),
            parameters: 0,
        };
        let mut side = b.conv_bn(resolution, IMAGE_CHANNELS, STEM_CHANNELS, 7, 2);
        b.relu(side, STEM_CHANNELS);
        let pooled = after(side, 3, 2);
        b.ops.push(ConvOp::Pool {
            input: (side * side * STEM_CHANNELS) as f64,
            output: (pooled * pooled * STEM_CHANNELS) as f64,
        });
        side = pooled;
        let mut channels = STEM_CHANNELS;
        for (stage, &blocks) in self.blocks.iter().enumerate() {
            let planes = STEM_CHANNELS << stage;
            for block in 0..blocks {
                let stride = if stage > 0 && block == 0 { 2 } else { 1 };
                let (out_side, out_channels) = self.block(&mut b, side, channels, planes, stride);
                (side, channels) = (out_side, out_channels);
            }
        }
        b.ops.push(ConvOp::Pool {
            input: (side * side * channels) as f64,
            output: channels as f64,
        });
        b.ops.push(ConvOp::Conv {
            macs: (channels * self.classes) as f64,
            input: channels as f64,
            output: self.classes as f64,
            weights: (channels * self.classes) as f64,
        });
        b.parameters += channels * self.classes + self.classes;
        (b.ops, b.parameters)
    }
}

impl ResnetSpec {
    /// One residual block; returns the output side and channels.
    fn block(&self, b: &mut Builder, side: u64, channels: u64, planes: u64, stride: u64) -> (u64, u64) {
        let (out_side, out_channels) = if self.bottleneck {
            let s = b.conv_bn(side, channels, planes, 1, 1);
            b.relu(s, planes);
            let s = b.conv_bn(s, planes, planes, 3, stride);
            b.relu(s, planes);
            let s = b.conv_bn(s, planes, planes * BOTTLENECK_EXPANSION, 1, 1);
            (s, planes * BOTTLENECK_EXPANSION)
        } else {
            let s = b.conv_bn(side, channels, planes, 3, stride);
            b.relu(s, planes);
            let s = b.conv_bn(s, planes, planes, 3, 1);
            (s, planes)
        };
        if stride != 1 || channels != out_channels {
            b.conv_bn(side, channels, out_channels, 1, stride);
        }
        let elements = (out_side * out_side * out_channels) as f64;
        b.ops.push(ConvOp::Add { elements });
        b.relu(out_side, out_channels);
        (out_side, out_channels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn macs(ops: &[ConvOp]) -> f64 {
        total_macs(ops)
    }

    /// torchvision publishes 25,557,032 parameters and 4.09 GMACs for ResNet-50, 60,192,808
    /// and 11.51 GMACs for ResNet-152, 11,689,512 and 1.81 GMACs for ResNet-18, at 224².
    #[test]
    fn reproduces_torchvisions_parameters_and_macs() {
        for (blocks, bottleneck, parameters, gmacs) in [
            (vec![3, 4, 6, 3], true, 25_557_032, 4.09),
            (vec![3, 8, 36, 3], true, 60_192_808, 11.51),
            (vec![2, 2, 2, 2], false, 11_689_512, 1.81),
        ] {
            let spec = ResnetSpec {
                blocks,
                bottleneck,
                classes: 1000,
            };
            let (ops, counted) = spec.unroll(224);
            assert_eq!(counted, parameters);
            let counted_gmacs = macs(&ops) / 1e9;
            assert!(
                (counted_gmacs - gmacs).abs() / gmacs < 0.01,
                "{counted_gmacs} against {gmacs}"
            );
        }
    }

    #[test]
    fn a_larger_image_costs_quadratically_more() {
        let spec = ResnetSpec {
            blocks: vec![3, 4, 6, 3],
            bottleneck: true,
            classes: 1000,
        };
        let small = macs(&spec.unroll(224).0);
        let large = macs(&spec.unroll(448).0);
        assert!((large / small - 4.0).abs() < 0.05, "{}", large / small);
    }
}
