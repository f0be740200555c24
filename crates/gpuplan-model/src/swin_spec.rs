//! A Swin Transformer as Hugging Face's `SwinModel` and timm build it (Liu et al. 2021, "Swin
//! Transformer: Hierarchical Vision Transformer using Shifted Windows", Fig. 3 and §3): a
//! patchify stem with a LayerNorm, stages of blocks (LayerNorm, multi-head self-attention
//! within non-overlapping windows with a relative position bias, LayerNorm, an MLP with GELU,
//! two residuals), patch merging between stages (2×2 neighbours concatenated, a LayerNorm and
//! a linear halving the channels), and a LayerNorm, average pooling and linear head — unrolled
//! into the operations one image goes through. The shifted windows of every other block move
//! the same data and are not counted apart.

use crate::resnet_spec::{ConvNetwork, ConvOp, attention};
use serde::{Deserialize, Serialize};

/// The stages of a Swin Transformer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwinSpec {
    /// Channels of the first stage, doubled at each merge (Swin-T: 96; `embed_dim`).
    pub embed_dim: u64,
    /// Blocks in each stage (Swin-T: 2, 2, 6, 2; `depths`).
    pub depths: Vec<u64>,
    /// Attention heads in each stage (Swin-T: 3, 6, 12, 24; `num_heads`).
    pub heads: Vec<u64>,
    /// Side of an attention window, in patches (`window_size`, 7).
    pub window_size: u64,
    /// Width of a block's MLP over its channels (`mlp_ratio`, 4.0).
    pub mlp_ratio: f64,
    /// Side of the stem's patches (`patch_size`, 4).
    pub patch_size: u64,
    /// Input image channels (`num_channels`).
    pub image_channels: u64,
    /// Output classes of the head.
    pub classes: u64,
}

struct Builder {
    ops: Vec<ConvOp>,
    parameters: u64,
}

impl Builder {
    /// A linear layer over `positions` tokens, with or without bias.
    fn linear(&mut self, positions: u64, input: u64, output: u64, bias: bool) {
        let weights = input * output;
        self.ops.push(ConvOp::Conv {
            macs: (weights * positions) as f64,
            input: (positions * input) as f64,
            output: (positions * output) as f64,
            weights: weights as f64,
        });
        self.parameters += weights + if bias { output } else { 0 };
    }

    /// A LayerNorm over the channels of every position (its weight and bias).
    fn layer_norm(&mut self, positions: u64, channels: u64) {
        self.ops.push(ConvOp::BatchNorm {
            elements: (positions * channels) as f64,
        });
        self.parameters += 2 * channels;
    }

    fn add(&mut self, elements: u64) {
        self.ops.push(ConvOp::Add {
            elements: elements as f64,
        });
    }

    /// One block over a `side`² map of `channels`, attention in windows of `window`² patches.
    fn block(&mut self, side: u64, channels: u64, heads: u64, window: u64, mlp: u64) {
        let positions = side * side;
        let elements = positions * channels;
        self.layer_norm(positions, channels);
        self.linear(positions, channels, 3 * channels, true);
        // Each position attends to the `window`² positions of its window: the scores (queries
        // × keys, all heads together as wide as the channels), their softmax, the weighted values.
        let scores = (heads * positions * window * window) as f64;
        let head = (channels / heads.max(1)) as f64;
        let values = elements as f64;
        attention(&mut self.ops, scores, (2.0 * values, head), (values, head), values);
        // The relative position bias: one learned value per head and offset within a window.
        self.parameters += (2 * window - 1).pow(2) * heads;
        self.linear(positions, channels, channels, true);
        self.add(elements);
        self.layer_norm(positions, channels);
        self.linear(positions, channels, mlp, true);
        self.ops.push(ConvOp::Relu {
            elements: (positions * mlp) as f64,
        });
        self.linear(positions, mlp, channels, true);
        self.add(elements);
    }
}

impl ConvNetwork for SwinSpec {
    const NORM: &'static str = "LayerNorm";
    const ACTIVATION: &'static str = "GELU";

    fn unroll(&self, resolution: u64) -> (Vec<ConvOp>, u64) {
        let mut b = Builder {
            ops: Vec::new(),
            parameters: 0,
        };
        let patch = self.patch_size.max(1);
        let mut side = (resolution / patch).max(1);
        let mut channels = self.embed_dim.max(1);
        // The stem: a `patch`×`patch` convolution of stride `patch`, as a linear over the
        // patches, and its LayerNorm.
        b.linear(side * side, self.image_channels * patch * patch, channels, true);
        b.layer_norm(side * side, channels);
        let stages = self.depths.len();
        for (stage, (&depth, &heads)) in self.depths.iter().zip(&self.heads).enumerate() {
            // A map smaller than the window is one window (Swin's own rule).
            let window = self.window_size.max(1).min(side);
            let mlp = (channels as f64 * self.mlp_ratio).round() as u64;
            for _ in 0..depth {
                b.block(side, channels, heads, window, mlp);
            }
            if stage + 1 < stages {
                side = (side / 2).max(1);
                b.ops.push(ConvOp::Concat {
                    elements: (side * side * 4 * channels) as f64,
                });
                b.layer_norm(side * side, 4 * channels);
                b.linear(side * side, 4 * channels, 2 * channels, false);
                channels *= 2;
            }
        }
        b.layer_norm(side * side, channels);
        b.ops.push(ConvOp::Pool {
            input: (side * side * channels) as f64,
            output: channels as f64,
        });
        b.linear(1, channels, self.classes, true);
        (b.ops, b.parameters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> SwinSpec {
        SwinSpec {
            embed_dim: 96,
            depths: vec![2, 2, 6, 2],
            heads: vec![3, 6, 12, 24],
            window_size: 7,
            mlp_ratio: 4.0,
            patch_size: 4,
            image_channels: 3,
            classes: 1000,
        }
    }

    fn macs(ops: &[ConvOp]) -> f64 {
        crate::resnet_spec::total_macs(ops)
    }

    /// timm's swin_tiny_patch4_window7_224 holds 28,288,354 parameters, swin_small 49,606,258,
    /// swin_base 87,768,224 and swin_large (window 7, 224²) 196,532,476; the paper's Table 1
    /// gives 4.5, 8.7 and 15.4 GFLOPs (multiply-accumulates) at 224² for Swin-T, S and B.
    #[test]
    fn reproduces_the_published_parameters_and_macs() {
        let (ops, parameters) = tiny().unroll(224);
        assert_eq!(parameters, 28_288_354);
        assert!((macs(&ops) / 1e9 - 4.5).abs() < 0.1, "{} GMACs", macs(&ops) / 1e9);
        let small = SwinSpec {
            depths: vec![2, 2, 18, 2],
            ..tiny()
        };
        let (ops, parameters) = small.unroll(224);
        assert_eq!(parameters, 49_606_258);
        assert!((macs(&ops) / 1e9 - 8.7).abs() < 0.15, "{} GMACs", macs(&ops) / 1e9);
        let base = SwinSpec {
            embed_dim: 128,
            heads: vec![4, 8, 16, 32],
            ..small.clone()
        };
        let (ops, parameters) = base.unroll(224);
        assert_eq!(parameters, 87_768_224);
        assert!((macs(&ops) / 1e9 - 15.4).abs() < 0.25, "{} GMACs", macs(&ops) / 1e9);
        let large = SwinSpec {
            embed_dim: 192,
            heads: vec![6, 12, 24, 48],
            ..small
        };
        assert_eq!(large.unroll(224).1, 196_532_476);
    }

    #[test]
    fn a_larger_image_costs_more_per_image_and_the_same_weights() {
        let (small, parameters) = tiny().unroll(224);
        let (large, same) = tiny().unroll(448);
        assert_eq!(parameters, same);
        assert!(macs(&large) > 3.5 * macs(&small));
    }
}
