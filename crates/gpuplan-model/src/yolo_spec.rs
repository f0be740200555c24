//! A YOLOv8 detector as Ultralytics builds it from `yolov8.yaml` (its `parse_model`): a CSP
//! backbone of strided convolutions and C2f blocks, an SPPF block, a path-aggregation neck that
//! upsamples and concatenates the P3–P5 maps, and a decoupled detection head with distribution
//! focal loss (DFL) box regression, unrolled into the operations one image goes through.
//!
//! Every `Conv` is a bias-free convolution, a batch norm and a SiLU. A scale (n, s, m, l, x)
//! sets the repeats (`depth`: `max(round(n·depth), 1)`) and the channels (`width`:
//! `ceil(min(c, max_channels)·width / 8)·8`).

use crate::resnet_spec::{ConvNetwork, ConvOp};
use serde::{Deserialize, Serialize};

/// The scale of a YOLOv8 detector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Yolov8Spec {
    /// Repeats multiple (`depth_multiple`: n and s 0.33, m 0.67, l and x 1.0).
    pub depth: f64,
    /// Channels multiple (`width_multiple`: 0.25, 0.5, 0.75, 1.0, 1.25).
    pub width: f64,
    /// Channels before the multiple are capped at this (1024, 1024, 768, 512, 512).
    pub max_channels: u64,
    /// Classes the head predicts (COCO: 80).
    pub classes: u64,
}

/// Input image channels (RGB).
const IMAGE_CHANNELS: u64 = 3;
/// Bins of the distribution focal loss per box side (`reg_max`).
const DFL_BINS: u64 = 16;

struct Builder {
    ops: Vec<ConvOp>,
    parameters: u64,
}

impl Builder {
    /// A convolution at `side`² (halved with stride 2), with batch norm and SiLU (`norm`) or
    /// with a bias and nothing after it; returns the output side.
    fn conv(&mut self, side: u64, input: u64, output: u64, kernel: u64, stride: u64, norm: bool) -> u64 {
        let out = side.div_ceil(stride);
        let weights = kernel * kernel * input * output;
        let elements = (out * out * output) as f64;
        self.ops.push(ConvOp::Conv {
            macs: (weights * out * out) as f64,
            input: (side * side * input) as f64,
            output: elements,
            weights: weights as f64,
        });
        if norm {
            self.ops.push(ConvOp::BatchNorm { elements });
            self.ops.push(ConvOp::Relu { elements });
            self.parameters += weights + 2 * output;
        } else {
            self.parameters += weights + output;
        }
        out
    }

    /// Ultralytics' `Conv`: convolution, batch norm, SiLU.
    fn cbs(&mut self, side: u64, input: u64, output: u64, kernel: u64, stride: u64) -> u64 {
        self.conv(side, input, output, kernel, stride, true)
    }

    /// `C2f`: a 1×1 convolution split in two halves, `n` bottlenecks (two 3×3 convolutions,
    /// with a residual addition where `shortcut`) each feeding the next, and a 1×1 convolution
    /// over the concatenation of both halves and every bottleneck's output.
    fn c2f(&mut self, side: u64, input: u64, output: u64, n: u64, shortcut: bool) {
        let hidden = output / 2;
        let map = side * side;
        self.cbs(side, input, 2 * hidden, 1, 1);
        for _ in 0..n {
            self.cbs(side, hidden, hidden, 3, 1);
            self.cbs(side, hidden, hidden, 3, 1);
            if shortcut {
                self.ops.push(ConvOp::Add {
                    elements: (map * hidden) as f64,
                });
            }
        }
        let joined = (2 + n) * hidden;
        self.ops.push(ConvOp::Concat {
            elements: (map * joined) as f64,
        });
        self.cbs(side, joined, output, 1, 1);
    }

    /// `SPPF`: a 1×1 convolution to half the channels, three chained 5×5 max poolings, and a
    /// 1×1 convolution over the four maps concatenated.
    fn sppf(&mut self, side: u64, input: u64, output: u64) {
        let hidden = input / 2;
        let map = (side * side * hidden) as f64;
        self.cbs(side, input, hidden, 1, 1);
        for _ in 0..3 {
            self.ops.push(ConvOp::Pool {
                input: map,
                output: map,
            });
        }
        self.ops.push(ConvOp::Concat { elements: 4.0 * map });
        self.cbs(side, 4 * hidden, output, 1, 1);
    }

    /// Nearest-neighbour 2× upsampling of a `side`² map, concatenated with a skip map of
    /// `skip` channels at twice the side; returns the channels joined.
    fn upsample_join(&mut self, side: u64, channels: u64, skip: u64) -> u64 {
        let small = (side * side * channels) as f64;
        self.ops.push(ConvOp::Resize {
            input: small,
            output: 4.0 * small,
        });
        let joined = channels + skip;
        self.ops.push(ConvOp::Concat {
            elements: (4 * side * side * joined) as f64,
        });
        joined
    }

    /// A strided 3×3 convolution from a `side`² map, concatenated with a skip map at half the
    /// side; returns the channels joined.
    fn downsample_join(&mut self, side: u64, channels: u64, skip: u64) -> u64 {
        let out = self.cbs(side, channels, channels, 3, 2);
        let joined = channels + skip;
        self.ops.push(ConvOp::Concat {
            elements: (out * out * joined) as f64,
        });
        joined
    }
}

impl Yolov8Spec {
    /// Channels of a layer that `yolov8.yaml` gives as `c`.
    fn channels(&self, c: u64) -> u64 {
        let scaled = c.min(self.max_channels) as f64 * self.width;
        ((scaled / 8.0).ceil() as u64) * 8
    }

    /// Repeats of a block that `yolov8.yaml` gives as `n`.
    fn repeats(&self, n: u64) -> u64 {
        if n > 1 {
            ((n as f64 * self.depth).round() as u64).max(1)
        } else {
            n
        }
    }

    /// The decoupled head at one level: a box branch (two 3×3 convolutions and a 1×1 to
    /// 4·16 DFL bins) and a class branch (two 3×3 and a 1×1 to the classes).
    fn head(&self, b: &mut Builder, side: u64, input: u64, first: u64) {
        let box_channels = (first / 4).max(DFL_BINS).max(4 * DFL_BINS);
        let class_channels = first.max(self.classes.min(100));
        for (hidden, out) in [(box_channels, 4 * DFL_BINS), (class_channels, self.classes)] {
            b.cbs(side, input, hidden, 3, 1);
            b.cbs(side, hidden, hidden, 3, 1);
            b.conv(side, hidden, out, 1, 1, false);
        }
    }
}

impl ConvNetwork for Yolov8Spec {
    const NORM: &'static str = "batch norm";
    const ACTIVATION: &'static str = "SiLU";

    fn unroll(&self, resolution: u64) -> (Vec<ConvOp>, u64) {
        let mut b = Builder {
            ops: Vec::new(),
            parameters: 0,
        };
        let c = |n: u64| self.channels(n);
        let (c64, c128, c256, c512, c1024) = (c(64), c(128), c(256), c(512), c(1024));
        // Backbone: P1/2 … P5/32.
        let mut side = b.cbs(resolution, IMAGE_CHANNELS, c64, 3, 2);
        side = b.cbs(side, c64, c128, 3, 2);
        b.c2f(side, c128, c128, self.repeats(3), true);
        side = b.cbs(side, c128, c256, 3, 2);
        b.c2f(side, c256, c256, self.repeats(6), true);
        let p3 = side;
        side = b.cbs(side, c256, c512, 3, 2);
        b.c2f(side, c512, c512, self.repeats(6), true);
        let p4 = side;
        side = b.cbs(side, c512, c1024, 3, 2);
        b.c2f(side, c1024, c1024, self.repeats(3), true);
        b.sppf(side, c1024, c1024);
        let p5 = side;
        // Neck: top-down, then bottom-up.
        let n3 = self.repeats(3);
        let joined = b.upsample_join(p5, c1024, c512);
        b.c2f(p4, joined, c512, n3, false);
        let joined = b.upsample_join(p4, c512, c256);
        b.c2f(p3, joined, c256, n3, false);
        let joined = b.downsample_join(p3, c256, c512);
        b.c2f(p4, joined, c512, n3, false);
        let joined = b.downsample_join(p4, c512, c1024);
        b.c2f(p5, joined, c1024, n3, false);
        // Head on P3, P4 and P5, and the DFL's fixed 1×1 convolution over the bins.
        for (level_side, channels) in [(p3, c256), (p4, c512), (p5, c1024)] {
            self.head(&mut b, level_side, channels, c256);
        }
        b.parameters += DFL_BINS;
        (b.ops, b.parameters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scale(depth: f64, width: f64, max_channels: u64) -> Yolov8Spec {
        Yolov8Spec {
            depth,
            width,
            max_channels,
            classes: 80,
        }
    }

    /// Ultralytics' model summaries give 3,157,200, 11,166,560, 25,902,640, 43,691,520 and
    /// 68,229,648 parameters for YOLOv8 n/s/m/l/x, and its docs 8.7, 28.6, 78.9, 165.2 and
    /// 257.8 GFLOPs (twice the multiply-accumulates) at 640².
    #[test]
    fn reproduces_ultralytics_parameters_and_flops() {
        for (spec, parameters, gflops) in [
            (scale(0.33, 0.25, 1024), 3_157_200, 8.7),
            (scale(0.33, 0.5, 1024), 11_166_560, 28.6),
            (scale(0.67, 0.75, 768), 25_902_640, 78.9),
            (scale(1.0, 1.0, 512), 43_691_520, 165.2),
            (scale(1.0, 1.25, 512), 68_229_648, 257.8),
        ] {
            let (ops, counted) = spec.unroll(640);
            assert_eq!(counted, parameters);
            let macs: f64 = ops
                .iter()
                .map(|op| match op {
                    ConvOp::Conv { macs, .. } => *macs,
                    _ => 0.0,
                })
                .sum();
            let counted_gflops = 2.0 * macs / 1e9;
            assert!(
                (counted_gflops - gflops).abs() < 0.06,
                "{counted_gflops} against {gflops}"
            );
        }
    }
}
