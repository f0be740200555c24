//! Parameters, multiply-accumulates and activation sizes of a latent-diffusion UNet and VAE
//! decoder, counted layer by layer from their diffusers configs.
//!
//! The walk follows the module structure diffusers builds for `UNet2DConditionModel` and the
//! `Decoder` of `AutoencoderKL` (Rombach et al. 2022, "High-Resolution Image Synthesis with
//! Latent Diffusion Models", §3 and Appendix; Podell et al. 2023, "SDXL", §2.1): residual blocks
//! of two 3×3 convolutions with group norms, spatial transformers of self-attention,
//! cross-attention to the text and a GEGLU feed-forward of four times the width, 3×3 strided
//! convolutions to go down a level, nearest-neighbour upsampling and a 3×3 convolution to come
//! up, and skip connections concatenated into the up path.
//!
//! What is counted: every convolution and linear layer (kernel × input channels × output
//! channels × output positions), and the attention matmuls (QKᵀ and AV: 2 × queries × keys ×
//! width). Norms, activations, softmax and additions are elementwise and not counted: they
//! cost well under 1 % of the MACs, though not of the time (the efficiency factors carry that).
//! The parameter count of the same walk equals the published one exactly (tests below), which
//! checks the shapes the MACs are computed from.
//!
//! Activations are counted in elements per image per pass:
//! - `saved`: what a training step keeps for the backward pass, the input of every layer
//!   that needs it (as in Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
//!   Transformer Models", §4.1, applied to these layers), attention scores excluded;
//! - `attention_scores`: the score and softmax matrices, kept in training and alive in
//!   inference, unless a fused attention kernel (FlashAttention, PyTorch SDPA) never builds them;
//! - `skips` and `working`: for inference, the skip tensors held across the UNet and the largest
//!   set of tensors alive at once inside one block.

use gpuplan_model::{UnetBlockKind, UnetSpec, VaeDecoderSpec};

/// Width multiplier of the GEGLU feed-forward inside the UNet's transformer blocks.
const FEED_FORWARD_MULT: u64 = 4;

/// Counts of one forward pass over one image.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PassCount {
    pub parameters: u64,
    /// Multiply-accumulates of convolutions and linear layers.
    pub layer_macs: f64,
    /// Multiply-accumulates of the attention matmuls (QKᵀ, AV).
    pub attention_macs: f64,
    /// Elements a training step saves for the backward pass (scores excluded).
    pub saved: f64,
    /// Elements of attention scores and softmax outputs, summed over layers (training) —
    /// and `largest_scores` the largest single layer's (inference).
    pub attention_scores: f64,
    pub largest_scores: f64,
    /// Elements of the skip tensors the UNet holds between its down and up halves.
    pub skips: f64,
    /// Largest set of elements alive inside one block at once (inference).
    pub working: f64,
    /// GPU operators (kernels) one pass launches with a fused attention kernel, elementwise
    /// ones included: what an eager framework pays host time for.
    pub operators: f64,
    /// Residual blocks and transformer blocks.
    pub blocks: u64,
    /// Elements the elementwise kernels of an eager pass read and write (norms, modulations,
    /// rotary embeddings, activations, residual additions, concatenations), in 16-bit
    /// widths: what an engine that does not fuse them pays in memory traffic. Counted for
    /// diffusion transformers; a UNet's fraction of peak, set on measured runs, carries its own.
    pub elementwise: f64,
}

impl PassCount {
    /// FLOPs of the pass: two per multiply-accumulate.
    pub fn forward_flops(&self) -> f64 {
        2.0 * (self.layer_macs + self.attention_macs)
    }

    /// Peak elements alive during an inference pass, with or without a fused attention kernel.
    pub fn inference_peak(&self, fused_attention: bool) -> f64 {
        let scores = if fused_attention { 0.0 } else { self.largest_scores };
        self.skips + self.working + scores
    }

    /// Elements a training step keeps per image, with or without a fused attention kernel.
    pub fn training_saved(&self, fused_attention: bool) -> f64 {
        let scores = if fused_attention { 0.0 } else { self.attention_scores };
        self.saved + scores
    }
}

/// A feature map: channels × height × width.
#[derive(Debug, Clone, Copy)]
struct Map {
    channels: u64,
    height: u64,
    width: u64,
}

impl Map {
    fn positions(self) -> u64 {
        self.height * self.width
    }

    fn elements(self) -> f64 {
        (self.channels * self.positions()) as f64
    }

    fn with_channels(self, channels: u64) -> Map {
        Map { channels, ..self }
    }

    fn halved(self) -> Map {
        Map {
            height: self.height.div_ceil(2),
            width: self.width.div_ceil(2),
            ..self
        }
    }

    fn doubled(self) -> Map {
        Map {
            height: self.height * 2,
            width: self.width * 2,
            ..self
        }
    }
}

#[derive(Default)]
struct Tally(PassCount);

impl Tally {
    fn conv(&mut self, input: Map, out_channels: u64, kernel: u64, output: Map) {
        let weights = input.channels * out_channels * kernel * kernel;
        self.0.parameters += weights + out_channels;
        self.0.layer_macs += (weights * output.positions()) as f64;
        self.0.saved += input.elements();
        self.0.operators += 1.0;
    }

    fn linear(&mut self, tokens: u64, inputs: u64, outputs: u64, bias: bool) {
        self.0.parameters += inputs * outputs + if bias { outputs } else { 0 };
        self.0.layer_macs += (tokens * inputs * outputs) as f64;
        self.0.saved += (tokens * inputs) as f64;
        self.0.operators += 1.0;
    }

    fn norm(&mut self, elements: f64, channels: u64) {
        self.0.parameters += 2 * channels;
        self.0.saved += elements;
        self.0.operators += 1.0;
    }

    fn working(&mut self, elements: f64) {
        self.0.working = self.0.working.max(elements);
    }

    /// Attention matmuls of `heads` heads over `queries` × `keys` with `width` in all.
    fn attention(&mut self, queries: u64, keys: u64, width: u64, heads: u64) {
        self.0.attention_macs += (2 * queries * keys * width) as f64;
        // The scores and their softmax are both kept for the backward pass.
        let scores = (heads * queries * keys) as f64;
        self.0.attention_scores += 2.0 * scores;
        self.0.largest_scores = self.0.largest_scores.max(scores);
        // Q, K, V and the attention output feed matmuls and are saved.
        self.0.saved += (queries * width * 2 + keys * width * 2) as f64;
        // The fused kernel, and the head split and merge of Q, K, V and the output.
        self.0.operators += 5.0;
    }

    /// diffusers `ResnetBlock2D`: norm, SiLU, 3×3 conv, + time embedding, norm, SiLU, 3×3 conv,
    /// with a 1×1 shortcut when the channels change.
    fn resnet(&mut self, input: Map, out_channels: u64, time_embedding: Option<u64>) -> Map {
        let output = input.with_channels(out_channels);
        self.norm(input.elements(), input.channels);
        self.0.saved += input.elements(); // SiLU input
        self.conv(input, out_channels, 3, output);
        if let Some(width) = time_embedding {
            self.linear(1, width, out_channels, true);
        }
        self.norm(output.elements(), out_channels);
        self.0.saved += output.elements(); // SiLU input
        self.conv(output, out_channels, 3, output);
        if input.channels != out_channels {
            self.conv(input, out_channels, 1, output);
        }
        // Input, its normalised copy, the conv output and the shortcut live together.
        self.working(2.0 * input.elements() + 2.0 * output.elements());
        // Two SiLUs, the time-embedding add and the residual add.
        self.0.operators += 4.0;
        self.0.blocks += 1;
        output
    }

    /// diffusers `Transformer2DModel`: group norm, projection in, `depth` basic transformer
    /// blocks (self-attention, cross-attention, GEGLU feed-forward, each after a layer norm),
    /// projection out.
    fn spatial_transformer(&mut self, input: Map, depth: u64, heads: u64, text_tokens: u64, text_width: u64) {
        let tokens = input.positions();
        let width = input.channels;
        let hidden = (tokens * width) as f64;
        self.norm(input.elements(), width);
        self.linear(tokens, width, width, true);
        for _ in 0..depth {
            self.norm(hidden, width);
            for _ in 0..3 {
                self.linear(tokens, width, width, false);
            }
            self.attention(tokens, tokens, width, heads);
            self.linear(tokens, width, width, true);
            self.norm(hidden, width);
            self.linear(tokens, width, width, false);
            self.linear(text_tokens, text_width, width, false);
            self.linear(text_tokens, text_width, width, false);
            self.attention(tokens, text_tokens, width, heads);
            self.linear(tokens, width, width, true);
            self.norm(hidden, width);
            let inner = FEED_FORWARD_MULT * width;
            self.linear(tokens, width, 2 * inner, true);
            self.0.saved += (tokens * 2 * inner) as f64; // GELU input and gate
            self.linear(tokens, inner, width, true);
            // Residual stream, the GEGLU projection and its gated half live together.
            self.working(2.0 * hidden + (tokens * 3 * inner) as f64);
            // Three residual adds, the GEGLU split, GELU and product.
            self.0.operators += 6.0;
            self.0.blocks += 1;
        }
        self.linear(tokens, width, width, true);
        // Flatten and unflatten the feature map, and the residual add.
        self.0.operators += 3.0;
    }
}

/// One pass of a diffusers `UNet2DConditionModel` over a latent of the given size.
pub fn unet_pass(spec: &UnetSpec, latent_height: u64, latent_width: u64) -> PassCount {
    let mut tally = Tally::default();
    let channels = &spec.block_out_channels;
    let levels = channels.len();
    let first = channels.first().copied().unwrap_or(0);
    let time = spec.time_embedding_dim();
    let heads = |level: usize| spec.attention_heads.get(level).copied().unwrap_or(1).max(1);
    let depth = |level: usize| spec.transformer_layers_per_block.get(level).copied().unwrap_or(1);
    let text = (spec.text_tokens, spec.cross_attention_dim);

    tally.linear(1, first, time, true);
    tally.linear(1, time, time, true);
    if let Some(inputs) = spec.addition_embedding_input_dim {
        tally.linear(1, inputs, time, true);
        tally.linear(1, time, time, true);
    }
    let latent = Map {
        channels: spec.in_channels,
        height: latent_height,
        width: latent_width,
    };
    let mut x = latent.with_channels(first);
    tally.conv(latent, first, 3, x);
    let mut skips = vec![x];
    for (level, kind) in spec.down_blocks.iter().enumerate().take(levels) {
        for _ in 0..spec.layers_per_block {
            x = tally.resnet(x, channels[level], Some(time));
            if *kind == UnetBlockKind::CrossAttention {
                tally.spatial_transformer(x, depth(level), heads(level), text.0, text.1);
            }
            skips.push(x);
        }
        if level + 1 < levels {
            let down = x.halved();
            tally.conv(x, x.channels, 3, down);
            x = down;
            skips.push(x);
        }
    }
    tally.0.skips = skips.iter().map(|map| map.elements()).sum();

    let deepest = levels.saturating_sub(1);
    x = tally.resnet(x, x.channels, Some(time));
    tally.spatial_transformer(x, spec.middle_transformer_layers(), heads(deepest), text.0, text.1);
    x = tally.resnet(x, x.channels, Some(time));

    for (step, kind) in spec.up_blocks.iter().enumerate().take(levels) {
        let level = levels - 1 - step;
        for _ in 0..=spec.layers_per_block {
            let skip = skips.pop().unwrap_or(x.with_channels(0));
            x = tally.resnet(x.with_channels(x.channels + skip.channels), channels[level], Some(time));
            if *kind == UnetBlockKind::CrossAttention {
                tally.spatial_transformer(x, depth(level), heads(level), text.0, text.1);
            }
        }
        if level > 0 {
            let up = x.doubled();
            tally.conv(up, x.channels, 3, up);
            x = up;
        }
    }
    tally.norm(x.elements(), x.channels);
    tally.conv(x, spec.out_channels, 3, x.with_channels(spec.out_channels));
    tally.0
}

/// One pass of the decoder of a diffusers `AutoencoderKL` (with its `post_quant_conv`) over a
/// latent of the given size; the image is `downscale_factor` times larger on each side.
pub fn vae_decoder_pass(spec: &VaeDecoderSpec, latent_height: u64, latent_width: u64) -> PassCount {
    let mut tally = Tally::default();
    let levels = spec.block_out_channels.len();
    let latent = Map {
        channels: spec.latent_channels,
        height: latent_height,
        width: latent_width,
    };
    tally.conv(latent, spec.latent_channels, 1, latent);
    let deepest = spec.block_out_channels.last().copied().unwrap_or(0);
    let mut x = latent.with_channels(deepest);
    tally.conv(latent, deepest, 3, x);

    x = tally.resnet(x, deepest, None);
    // One single-head self-attention over all positions, after a group norm.
    let tokens = x.positions();
    tally.norm(x.elements(), deepest);
    for _ in 0..4 {
        tally.linear(tokens, deepest, deepest, true);
    }
    tally.attention(tokens, tokens, deepest, 1);
    x = tally.resnet(x, deepest, None);

    for step in 0..levels {
        let level = levels - 1 - step;
        for _ in 0..=spec.layers_per_block {
            x = tally.resnet(x, spec.block_out_channels[level], None);
        }
        if level > 0 {
            let up = x.doubled();
            tally.conv(up, x.channels, 3, up);
            tally.working(up.elements() * 2.0);
            x = up;
        }
    }
    tally.norm(x.elements(), x.channels);
    tally.conv(x, spec.out_channels, 3, x.with_channels(spec.out_channels));
    tally.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use UnetBlockKind::{CrossAttention, Residual};

    /// `stable-diffusion-v1-5/stable-diffusion-v1-5` `unet/config.json`.
    fn sd15() -> UnetSpec {
        UnetSpec {
            in_channels: 4,
            out_channels: 4,
            block_out_channels: vec![320, 640, 1280, 1280],
            layers_per_block: 2,
            down_blocks: vec![CrossAttention, CrossAttention, CrossAttention, Residual],
            up_blocks: vec![Residual, CrossAttention, CrossAttention, CrossAttention],
            transformer_layers_per_block: vec![1, 1, 1, 1],
            attention_heads: vec![8, 8, 8, 8],
            cross_attention_dim: 768,
            addition_embedding_input_dim: None,
            text_tokens: 77,
        }
    }

    /// `stabilityai/stable-diffusion-xl-base-1.0` `unet/config.json`.
    fn sdxl() -> UnetSpec {
        UnetSpec {
            in_channels: 4,
            out_channels: 4,
            block_out_channels: vec![320, 640, 1280],
            layers_per_block: 2,
            down_blocks: vec![Residual, CrossAttention, CrossAttention],
            up_blocks: vec![CrossAttention, CrossAttention, Residual],
            transformer_layers_per_block: vec![1, 2, 10],
            attention_heads: vec![5, 10, 20],
            cross_attention_dim: 2048,
            addition_embedding_input_dim: Some(2816),
            text_tokens: 77,
        }
    }

    fn vae() -> VaeDecoderSpec {
        VaeDecoderSpec {
            latent_channels: 4,
            out_channels: 3,
            block_out_channels: vec![128, 256, 512, 512],
            layers_per_block: 2,
            force_upcast: false,
        }
    }

    #[test]
    fn the_walk_reproduces_the_published_unet_parameter_counts_exactly() {
        // SD 1.x UNet: 859,520,964 (fast.ai forum count of the diffusers pipeline, and the
        // BK-SDM maintainers' thop output); SDXL base UNet: 2,567,463,684.
        assert_eq!(unet_pass(&sd15(), 64, 64).parameters, 859_520_964);
        assert_eq!(unet_pass(&sdxl(), 128, 128).parameters, 2_567_463_684);
    }

    fn assert_close(counted: f64, published: f64, tolerance: f64, what: &str) {
        let error = counted / published - 1.0;
        assert!(
            error.abs() < tolerance,
            "{what}: counted {counted:.4e}, published {published:.4e} ({error:+.4})"
        );
    }

    #[test]
    fn layer_macs_match_published_counts_that_leave_attention_out() {
        // thop and calflops count Conv2d and Linear modules, not the functional attention matmuls.
        // BK-SDM maintainers, github.com/Nota-NetsPresso/BK-SDM/issues/53 (thop, SD 1.4, 512×512,
        // batch 1): "[U-Net] MACs: 338.7G = 338749194240", "[Img Dec] MACs: 1240.1G = 1240079532032".
        assert_close(
            unet_pass(&sd15(), 64, 64).layer_macs,
            338_749_194_240.0,
            0.002,
            "SD 1.x UNet",
        );
        assert_close(
            vae_decoder_pass(&vae(), 64, 64).layer_macs,
            1_240_079_532_032.0,
            0.002,
            "VAE decoder",
        );
        // T-GATE README (github.com/HaozheLiu-ST/T-GATE, calflops): SD-XL "149.438T" MACs for 25
        // steps with guidance (50 passes) and LCM (SD-XL) "11.955T" for 4 unguided steps, both
        // 2.989T per pass at 1024×1024.
        assert_close(
            unet_pass(&sdxl(), 128, 128).layer_macs,
            149.438e12 / 50.0,
            0.002,
            "SDXL UNet",
        );
        // SIGE's SDXL port (github.com/lwag212/sdxl-sige, sdxl/README.md, torchprofile, which has
        // no handler for fused attention): UNet "3015.82" G MACs for a guided pass (batch 2) at
        // 512×1024 (runner defaults --H 512 with the README's --W 1024); decoder "2481.99".
        assert_close(
            unet_pass(&sdxl(), 64, 128).layer_macs,
            3015.82e9 / 2.0,
            0.005,
            "SDXL UNet 512×1024",
        );
        assert_close(
            vae_decoder_pass(&vae(), 64, 128).layer_macs,
            2481.99e9,
            0.002,
            "VAE decoder 512×1024",
        );
    }

    #[test]
    fn total_macs_match_a_published_count_that_includes_attention() {
        // SIGE (github.com/lmxyy/sige, stable_diffusion/README.md, torchprofile with the attention
        // bmm counted), SD 1.4 at 512×1024: UNet "1854.8" G MACs per guided pass (batch 2) and
        // decoder "2550.8".
        let unet = unet_pass(&sd15(), 64, 128);
        assert_close(
            unet.layer_macs + unet.attention_macs,
            1854.8e9 / 2.0,
            0.01,
            "SD 1.4 UNet 512×1024",
        );
        let decoder = vae_decoder_pass(&vae(), 64, 128);
        assert_close(
            decoder.layer_macs + decoder.attention_macs,
            2550.8e9,
            0.005,
            "decoder 512×1024",
        );
    }

    #[test]
    fn sdxl_costs_about_eight_times_sd_1_x_per_pass_at_native_resolution() {
        let ratio = unet_pass(&sdxl(), 128, 128).forward_flops() / unet_pass(&sd15(), 64, 64).forward_flops();
        assert!((6.0..9.0).contains(&ratio), "{ratio}");
    }

    #[test]
    fn attention_grows_faster_than_the_convolutions_with_resolution() {
        let small = unet_pass(&sd15(), 64, 64);
        let large = unet_pass(&sd15(), 128, 128);
        assert!((large.layer_macs / small.layer_macs - 4.0).abs() < 0.05);
        assert!(large.attention_macs / small.attention_macs > 14.0);
        assert_eq!(vae().downscale_factor(), 8);
    }

    #[test]
    fn fused_attention_removes_the_score_matrices() {
        let pass = unet_pass(&sdxl(), 128, 128);
        assert!(pass.inference_peak(true) < pass.inference_peak(false));
        assert!(pass.training_saved(true) < pass.training_saved(false));
        assert!(pass.skips > 0.0 && pass.working > 0.0);
    }
}
