//! A YOLOv8 or YOLO11 detector as Ultralytics builds it from `yolov8.yaml` or `yolo11.yaml` (its
//! `parse_model`): a backbone of strided convolutions and CSP blocks (C2f; C3k2 and a C2PSA
//! attention block in YOLO11), an SPPF block, a path-aggregation neck that upsamples and
//! concatenates the P3–P5 maps, and a decoupled detection head with distribution focal loss
//! (DFL) box regression, unrolled into the operations one image goes through.
//!
//! Every `Conv` is a bias-free convolution, a batch norm and a SiLU. A scale (n, s, m, l, x)
//! sets the repeats (`depth`: `max(round(n·depth), 1)`) and the channels (`width`:
//! `ceil(min(c, max_channels)·width / 8)·8`).

use crate::resnet_spec::{ConvNetwork, ConvOp, convolution};
use serde::{Deserialize, Serialize};

/// The generation and scale of a YOLO detector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct YoloSpec {
    /// The Ultralytics generation: 8 (YOLOv8) or 11 (YOLO11).
    pub version: u64,
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
        self.layer(side, (input, output), kernel, stride, 1, norm)
    }

    /// A depthwise convolution (one group per channel), with batch norm and SiLU.
    fn depthwise(&mut self, side: u64, channels: u64, kernel: u64) -> u64 {
        self.layer(side, (channels, channels), kernel, 1, channels, true)
    }

    /// A convolution over `groups` channel groups, from `input` to `output` channels.
    fn layer(
        &mut self,
        side: u64,
        (input, output): (u64, u64),
        kernel: u64,
        stride: u64,
        groups: u64,
        norm: bool,
    ) -> u64 {
        let out = side.div_ceil(stride);
        let weights = convolution(&mut self.ops, (side, out), (input, output), kernel, groups);
        let elements = (out * out * output) as f64;
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
        self.split_join(side, (input, output), output / 2, n, |b, hidden| {
            b.cbs(side, hidden, hidden, 3, 1);
            b.cbs(side, hidden, hidden, 3, 1);
            if shortcut {
                b.ops.push(ConvOp::Add {
                    elements: (side * side * hidden) as f64,
                });
            }
        });
    }

    /// The C2f skeleton: a 1×1 convolution to two halves of `hidden` channels, `n` blocks each
    /// feeding the next, and a 1×1 convolution over both halves and every block's output.
    fn split_join(
        &mut self,
        side: u64,
        (input, output): (u64, u64),
        hidden: u64,
        n: u64,
        mut block: impl FnMut(&mut Builder, u64),
    ) {
        self.cbs(side, input, 2 * hidden, 1, 1);
        for _ in 0..n {
            block(self, hidden);
        }
        let joined = (2 + n) * hidden;
        self.ops.push(ConvOp::Concat {
            elements: (side * side * joined) as f64,
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
        self.ops.push(ConvOp::MemoryPass {
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

/// YOLO11's blocks.
impl Builder {
    /// A residual bottleneck: two 3×3 convolutions through `hidden` channels, and the
    /// addition.
    fn bottleneck(&mut self, side: u64, channels: u64, hidden: u64) {
        self.cbs(side, channels, hidden, 3, 1);
        self.cbs(side, hidden, channels, 3, 1);
        self.ops.push(ConvOp::Add {
            elements: (side * side * channels) as f64,
        });
    }

    /// `C3k`: two 1×1 convolutions to half the channels, two bottlenecks on one of them, and
    /// a 1×1 convolution over both.
    fn c3k(&mut self, side: u64, channels: u64) {
        let hidden = channels / 2;
        self.cbs(side, channels, hidden, 1, 1);
        self.cbs(side, channels, hidden, 1, 1);
        for _ in 0..2 {
            self.bottleneck(side, hidden, hidden);
        }
        self.ops.push(ConvOp::Concat {
            elements: (side * side * 2 * hidden) as f64,
        });
        self.cbs(side, 2 * hidden, channels, 1, 1);
    }

    /// `C3k2`: a C2f whose blocks are C3k blocks (`c3k`) or bottlenecks through half their
    /// channels, with hidden channels `output · expansion`.
    fn c3k2(&mut self, side: u64, input: u64, output: u64, n: u64, c3k: bool, expansion: f64) {
        let hidden = (output as f64 * expansion) as u64;
        self.split_join(side, (input, output), hidden, n, |b, hidden| {
            if c3k {
                b.c3k(side, hidden);
            } else {
                b.bottleneck(side, hidden, hidden / 2);
            }
        });
    }

    /// `C2PSA`: a 1×1 convolution split in two, `n` position-sensitive attention blocks on one
    /// half (multi-head self-attention over the map's positions, 64 channels a head, keys half
    /// a head wide, a depthwise 3×3 positional term, and a 2× feed-forward), and a 1×1 out.
    fn c2psa(&mut self, side: u64, channels: u64, n: u64) {
        let hidden = channels / 2;
        let positions = side * side;
        self.cbs(side, channels, 2 * hidden, 1, 1);
        for _ in 0..n {
            let heads = (hidden / 64).max(1);
            let head = hidden / heads;
            let key = head / 2;
            self.conv(side, hidden, hidden + 2 * key * heads, 1, 1, true);
            // Scores (queries × keys) and their softmax, then the weighted values.
            let scores = (heads * positions * positions) as f64;
            let values = (hidden * positions) as f64;
            crate::resnet_spec::attention(
                &mut self.ops,
                scores,
                ((2 * key * heads * positions) as f64, key as f64),
                (values, head as f64),
                values,
            );
            self.depthwise(side, hidden, 3);
            self.conv(side, hidden, hidden, 1, 1, true);
            self.ops.push(ConvOp::Add {
                elements: (positions * hidden) as f64,
            });
            self.cbs(side, hidden, 2 * hidden, 1, 1);
            self.cbs(side, 2 * hidden, hidden, 1, 1);
            self.ops.push(ConvOp::Add {
                elements: (positions * hidden) as f64,
            });
        }
        self.ops.push(ConvOp::Concat {
            elements: (positions * 2 * hidden) as f64,
        });
        self.cbs(side, 2 * hidden, channels, 1, 1);
    }
}

impl YoloSpec {
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
        b.cbs(side, input, box_channels, 3, 1);
        b.cbs(side, box_channels, box_channels, 3, 1);
        b.conv(side, box_channels, 4 * DFL_BINS, 1, 1, false);
        if self.version == 11 {
            // YOLO11's class branch: depthwise 3×3 then pointwise, twice.
            b.depthwise(side, input, 3);
            b.cbs(side, input, class_channels, 1, 1);
            b.depthwise(side, class_channels, 3);
            b.cbs(side, class_channels, class_channels, 1, 1);
        } else {
            b.cbs(side, input, class_channels, 3, 1);
            b.cbs(side, class_channels, class_channels, 3, 1);
        }
        b.conv(side, class_channels, self.classes, 1, 1, false);
    }
}

impl ConvNetwork for YoloSpec {
    const NORM: &'static str = "batch norm";
    const ACTIVATION: &'static str = "SiLU";

    fn unroll(&self, resolution: u64) -> (Vec<ConvOp>, u64) {
        let mut b = Builder {
            ops: Vec::new(),
            parameters: 0,
        };
        let (p3, p4, p5) = if self.version == 11 {
            self.yolo11(&mut b, resolution)
        } else {
            self.yolov8(&mut b, resolution)
        };
        let c = |n: u64| self.channels(n);
        // Head on P3, P4 and P5, and the DFL's fixed 1×1 convolution over the bins.
        for (level_side, channels) in [(p3, c(256)), (p4, c(512)), (p5, c(1024))] {
            self.head(&mut b, level_side, channels, c(256));
        }
        b.parameters += DFL_BINS;
        (b.ops, b.parameters)
    }
}

impl YoloSpec {
    /// `yolov8.yaml`'s backbone and neck; returns the sides of P3, P4 and P5.
    fn yolov8(&self, b: &mut Builder, resolution: u64) -> (u64, u64, u64) {
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
        (p3, p4, p5)
    }

    /// `yolo11.yaml`'s backbone and neck; returns the sides of P3, P4 and P5. The m, l and x
    /// scales run every C3k2 with C3k blocks (`parse_model`).
    fn yolo11(&self, b: &mut Builder, resolution: u64) -> (u64, u64, u64) {
        let c = |n: u64| self.channels(n);
        let (c64, c128, c256, c512, c1024) = (c(64), c(128), c(256), c(512), c(1024));
        // The m, l and x scales are those of width 1 and more.
        let large = self.width >= 1.0;
        let n2 = self.repeats(2);
        let mut side = b.cbs(resolution, IMAGE_CHANNELS, c64, 3, 2);
        side = b.cbs(side, c64, c128, 3, 2);
        b.c3k2(side, c128, c256, n2, large, 0.25);
        side = b.cbs(side, c256, c256, 3, 2);
        b.c3k2(side, c256, c512, n2, large, 0.25);
        let p3 = side;
        side = b.cbs(side, c512, c512, 3, 2);
        b.c3k2(side, c512, c512, n2, true, 0.5);
        let p4 = side;
        side = b.cbs(side, c512, c1024, 3, 2);
        b.c3k2(side, c1024, c1024, n2, true, 0.5);
        b.sppf(side, c1024, c1024);
        b.c2psa(side, c1024, n2);
        let p5 = side;
        let joined = b.upsample_join(p5, c1024, c512);
        b.c3k2(p4, joined, c512, n2, large, 0.5);
        let joined = b.upsample_join(p4, c512, c512);
        b.c3k2(p3, joined, c256, n2, large, 0.5);
        let joined = b.downsample_join(p3, c256, c512);
        b.c3k2(p4, joined, c512, n2, large, 0.5);
        let joined = b.downsample_join(p4, c512, c1024);
        b.c3k2(p5, joined, c1024, n2, true, 0.5);
        (p3, p4, p5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twice the multiply-accumulates of the convolutions (the FLOPs Ultralytics counts), in G.
    fn flops_of(ops: &[ConvOp]) -> f64 {
        2.0 * crate::resnet_spec::total_macs(ops) / 1e9
    }

    fn scale(depth: f64, width: f64, max_channels: u64) -> YoloSpec {
        YoloSpec {
            version: 8,
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
            let counted_gflops = flops_of(&ops);
            assert!(
                (counted_gflops - gflops).abs() < 0.06,
                "{counted_gflops} against {gflops}"
            );
        }
    }

    /// Ultralytics' model summaries give 2,624,080, 9,458,752, 20,114,688, 25,372,160 and
    /// 56,966,176 parameters for YOLO11 n/s/m/l/x, and its docs 6.5, 21.5, 68.0, 86.9 and
    /// 194.9 GFLOPs at 640² (which leave out the attention's matrix products, counted here).
    #[test]
    fn reproduces_yolo11s_parameters_and_flops() {
        for ((depth, width, max_channels), parameters, gflops) in [
            ((0.5, 0.25, 1024), 2_624_080, 6.5),
            ((0.5, 0.5, 1024), 9_458_752, 21.5),
            ((0.5, 1.0, 512), 20_114_688, 68.0),
            ((1.0, 1.0, 512), 25_372_160, 86.9),
            ((1.0, 1.5, 512), 56_966_176, 194.9),
        ] {
            let spec = YoloSpec {
                version: 11,
                ..scale(depth, width, max_channels)
            };
            let (ops, counted) = spec.unroll(640);
            assert_eq!(counted, parameters);
            let counted_gflops = flops_of(&ops);
            assert!(
                (counted_gflops / gflops - 1.0).abs() < 0.007,
                "{counted_gflops} against {gflops}"
            );
        }
    }
}
