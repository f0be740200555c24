//! Parameters, multiply-accumulates and activation sizes of a diffusion transformer (Stable
//! Diffusion 3's MMDiT, FLUX.1), counted layer by layer from its diffusers config.
//!
//! The walk follows the modules diffusers builds (`transformer_sd3.py`, `transformer_flux.py`,
//! `attention.py`'s `JointTransformerBlock`; Esser et al. 2024, "Scaling Rectified Flow
//! Transformers for High-Resolution Image Synthesis", §4 and Figure 2):
//! - a joint block keeps separate weights for the image and the text tokens: an adaptive
//!   norm whose six modulations come from the timestep-and-text embedding, query/key/value and
//!   output projections for each stream, one attention over both streams together, and a
//!   GELU feed-forward of four times the width for each stream. SD3's last joint block reads
//!   the text without updating it (no text output projection or feed-forward);
//! - SD3.5 Medium's first blocks add a second self-attention over the image tokens alone;
//! - a FLUX single block runs attention and a 4× MLP in parallel over the concatenated text
//!   and image tokens, with one output projection over both (width 5×).
//!
//! Linear layers cost tokens × inputs × outputs; the modulation layers run once per image
//! (on the conditioning vector), not per token. Attention costs 2 × queries × keys × width
//! (QKᵀ and AV). The parameter count of the same walk equals the published one exactly (tests
//! below), which checks the shapes the MACs are computed from.

use crate::diffusion_flops::PassCount;
use gpuplan_model::{DitFamily, DitSpec};

/// Width multiplier of the feed-forward (and of FLUX's parallel MLP).
const MLP_RATIO: u64 = 4;
/// Width of the sinusoidal timestep (and guidance) projection the embedders read.
const TIMESTEP_PROJECTION: u64 = 256;
/// Modulations of an adaptive norm: shift, scale and gate for attention and for the
/// feed-forward (6), SD3.5's dual-attention variant adds three for the second attention (9),
/// a single block has one set (3), a final norm shift and scale (2).
const JOINT_MODULATIONS: u64 = 6;
const DUAL_MODULATIONS: u64 = 9;
const SINGLE_MODULATIONS: u64 = 3;
const FINAL_MODULATIONS: u64 = 2;
/// GPU operators one block launches in eager PyTorch with a fused attention kernel (its
/// linear layers, norms, modulations, RoPE or QK norms, attention, activations, residual
/// additions and the concatenations around the joint attention), read from the forward code.
const JOINT_BLOCK_OPERATORS: f64 = 40.0;
const SINGLE_BLOCK_OPERATORS: f64 = 20.0;
/// Operators outside the blocks (embedders, final norm and projection).
const OUTER_OPERATORS: f64 = 20.0;
/// Elementwise traffic of eager PyTorch per token, in model widths read plus written (a
/// 16-bit width counts 1, an fp32 one 2), from the diffusers forward code:
/// - a LayerNorm 2; an adaptive modulation `x · (1 + scale) + shift` 4 (two kernels); a gate
///   times a branch 2 and the residual addition 3; a concatenation or a copy 2 per width;
///   the tanh GELU over the 4× hidden layer 8;
/// - an RMS norm of queries or keys 17 (`to(float32)` 3, `pow` 4, `mean` 2, the product with
///   `rsqrt` 3, back to 16 bits 3, the weight 2);
/// - a rotary embedding of queries or keys 27 (`apply_rotary_emb`: the rotated copy 4, two
///   upcasts 6, two products 8, the sum 6, back to 16 bits 3).
///
/// A joint block: both streams' norms and modulations 6, the query and key norms 34 (when
/// present), concatenating queries, keys and values 6, rotary embeddings 54 (FLUX), the
/// attention output's reshape 2 and split copies 2 (FLUX), gates and residuals 10, the second
/// norm and modulation 6, the GELU 8. A single block: concatenating the streams 2, norm and
/// modulation 6, the GELU 8, query and key norms 34, rotary embeddings 54, the attention
/// output's reshape 2, concatenating attention and MLP outputs 10, gate and residual 5.
const JOINT_ELEMENTWISE: f64 = 38.0;
const QK_NORM_ELEMENTWISE: f64 = 34.0;
const ROTARY_ELEMENTWISE: f64 = 54.0;
const FLUX_SPLIT_ELEMENTWISE: f64 = 2.0;
const SINGLE_ELEMENTWISE: f64 = 33.0;
/// The final norm and modulation over the image tokens.
const OUTER_ELEMENTWISE: f64 = 6.0;
/// Widths (in multiples of the model width, per token) alive at once inside a block in
/// inference: the block input, the normed input, queries, keys and values, the attention
/// output and the feed-forward's 4× hidden layer.
const WORKING_WIDTHS: f64 = 11.0;
/// Widths a training step keeps per token per block for the backward pass: the inputs of
/// the projections and norms (3), queries, keys, values and the attention output (4), the
/// feed-forward's input, its hidden layer before and after the GELU (1 + 4 + 4), per stream.
const SAVED_WIDTHS: f64 = 16.0;

/// A linear layer's parameters (weights and bias).
fn linear(inputs: u64, outputs: u64) -> u64 {
    inputs * outputs + outputs
}

#[derive(Default)]
struct Tally(PassCount);

impl Tally {
    /// A linear layer applied to `tokens` tokens.
    fn linear(&mut self, tokens: u64, inputs: u64, outputs: u64) {
        self.0.parameters += linear(inputs, outputs);
        self.0.layer_macs += (tokens * inputs * outputs) as f64;
    }

    /// Attention of `queries` over `keys` at `width`, with `heads` score matrices.
    fn attention(&mut self, queries: u64, keys: u64, width: u64, heads: u64) {
        self.0.attention_macs += 2.0 * (queries * keys * width) as f64;
        let scores = (heads * queries * keys) as f64;
        self.0.attention_scores += 2.0 * scores;
        self.0.largest_scores = self.0.largest_scores.max(2.0 * scores);
    }

    /// RMS norms on the queries and keys of `streams` streams (a weight per head channel each).
    fn qk_norms(&mut self, spec: &DitSpec, streams: u64) {
        if spec.qk_norm {
            self.0.parameters += 2 * streams * spec.head_dim;
        }
    }

    /// Activations of a block over `tokens` tokens, and its eager elementwise traffic in model
    /// widths per token.
    fn block(&mut self, tokens: u64, width: u64, model_width: u64, elementwise: f64, operators: f64) {
        self.0.elementwise += elementwise * (tokens * model_width) as f64;
        let elements = (tokens * width) as f64;
        self.0.saved += SAVED_WIDTHS * elements;
        self.0.working = self.0.working.max(WORKING_WIDTHS * elements);
        self.0.operators += operators;
        self.0.blocks += 1;
    }
}

/// One forward pass over one image of `latent_height` × `latent_width` latent pixels.
pub fn dit_pass(spec: &DitSpec, latent_height: u64, latent_width: u64) -> PassCount {
    let d = spec.width();
    let image = latent_height.div_ceil(spec.latent_patch) * latent_width.div_ceil(spec.latent_patch);
    let text = spec.text_tokens;
    let tokens = image + text;
    let mut t = Tally::default();
    // Embedders: image tokens in, text states in, timestep (and guidance) and pooled text.
    t.linear(image, spec.token_channels, d);
    t.linear(text, spec.joint_attention_dim, d);
    let conditionings = 1 + u64::from(spec.guidance_embeds);
    for _ in 0..conditionings {
        t.linear(1, TIMESTEP_PROJECTION, d);
        t.linear(1, d, d);
    }
    t.linear(1, spec.pooled_projection_dim, d);
    t.linear(1, d, d);
    for index in 0..spec.joint_blocks {
        let last = spec.family == DitFamily::StableDiffusion3 && index + 1 == spec.joint_blocks;
        let dual = index < spec.dual_attention_blocks;
        joint_block(&mut t, spec, image, text, last, dual);
    }
    for _ in 0..spec.single_blocks {
        t.linear(1, d, SINGLE_MODULATIONS * d);
        t.linear(tokens, d, 3 * d);
        t.linear(tokens, d, MLP_RATIO * d);
        t.linear(tokens, (1 + MLP_RATIO) * d, d);
        t.qk_norms(spec, 1);
        t.attention(tokens, tokens, d, spec.heads);
        let elementwise =
            SINGLE_ELEMENTWISE + QK_NORM_ELEMENTWISE * f64::from(u8::from(spec.qk_norm)) + ROTARY_ELEMENTWISE;
        t.block(tokens, (1 + MLP_RATIO) * d, d, elementwise, SINGLE_BLOCK_OPERATORS);
    }
    t.linear(1, d, FINAL_MODULATIONS * d);
    t.linear(image, d, spec.token_channels);
    t.0.operators += OUTER_OPERATORS;
    t.0.elementwise += OUTER_ELEMENTWISE * (image * d) as f64;
    t.0
}

/// One joint block: separate weights for the image and text streams, one attention over both.
fn joint_block(t: &mut Tally, spec: &DitSpec, image: u64, text: u64, text_read_only: bool, dual: bool) {
    let d = spec.width();
    let tokens = image + text;
    t.linear(1, d, if dual { DUAL_MODULATIONS } else { JOINT_MODULATIONS } * d);
    // The text stream's norm: a full modulation set, or the final shift and scale where the
    // block does not update the text.
    t.linear(
        1,
        d,
        if text_read_only {
            FINAL_MODULATIONS
        } else {
            JOINT_MODULATIONS
        } * d,
    );
    for _ in 0..3 {
        t.linear(image, d, d);
        t.linear(text, d, d);
    }
    t.linear(image, d, d);
    t.linear(image, d, MLP_RATIO * d);
    t.linear(image, MLP_RATIO * d, d);
    if !text_read_only {
        t.linear(text, d, d);
        t.linear(text, d, MLP_RATIO * d);
        t.linear(text, MLP_RATIO * d, d);
    }
    t.qk_norms(spec, 2);
    t.attention(tokens, tokens, d, spec.heads);
    if dual {
        for _ in 0..4 {
            t.linear(image, d, d);
        }
        t.qk_norms(spec, 1);
        t.attention(image, image, d, spec.heads);
    }
    let flux = spec.family == DitFamily::Flux;
    let elementwise = JOINT_ELEMENTWISE
        + QK_NORM_ELEMENTWISE * f64::from(u8::from(spec.qk_norm))
        + if flux {
            ROTARY_ELEMENTWISE + FLUX_SPLIT_ELEMENTWISE
        } else {
            0.0
        };
    t.block(tokens, MLP_RATIO * d, d, elementwise, JOINT_BLOCK_OPERATORS);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sd3(heads: u64, layers: u64, dual: u64, qk_norm: bool) -> DitSpec {
        DitSpec {
            family: DitFamily::StableDiffusion3,
            heads,
            head_dim: 64,
            joint_blocks: layers,
            single_blocks: 0,
            dual_attention_blocks: dual,
            latent_patch: 2,
            token_channels: 64,
            joint_attention_dim: 4096,
            pooled_projection_dim: 2048,
            guidance_embeds: false,
            qk_norm,
            text_tokens: 333,
        }
    }

    fn flux(guidance_embeds: bool) -> DitSpec {
        DitSpec {
            family: DitFamily::Flux,
            heads: 24,
            head_dim: 128,
            joint_blocks: 19,
            single_blocks: 38,
            dual_attention_blocks: 0,
            latent_patch: 2,
            token_channels: 64,
            joint_attention_dim: 4096,
            pooled_projection_dim: 768,
            guidance_embeds,
            qk_norm: true,
            text_tokens: 512,
        }
    }

    #[test]
    fn the_walk_counts_the_published_parameters() {
        // SD3 Medium: 2,028,328,000 (the transformer's count in NVIDIA's aitune inspection of
        // stable-diffusion-3-medium-diffusers); FLUX.1-dev: 11,901,408,320 (diffusers'
        // benchmark table, 11901.41 M, and MLCommons' "11.9B").
        assert_eq!(dit_pass(&sd3(24, 24, 0, false), 128, 128).parameters, 2_028_328_000);
        assert_eq!(dit_pass(&flux(true), 128, 128).parameters, 11_901_408_320);
        // schnell has no guidance embedder (two linear layers of the width).
        assert_eq!(dit_pass(&flux(false), 128, 128).parameters, 11_901_408_320 - 10_229_760);
        // SD3.5 Large (38 × 64 heads, RMS QK norms): 8.06 B, marketed as "8B".
        let large = dit_pass(&sd3(38, 38, 0, true), 128, 128).parameters;
        assert_eq!(large, 8_056_627_520);
        // SD3.5 Medium, dual attention in its first 13 blocks: 2.24 B (2.5 B with the fixed
        // position table its checkpoint stores).
        assert_eq!(dit_pass(&sd3(24, 24, 13, true), 128, 128).parameters, 2_243_171_520);
    }

    #[test]
    fn flux_at_1024_pixels_costs_what_the_diffusers_benchmark_counts() {
        // 4,096 image tokens and 512 text tokens: the linear layers come to 59.5 TFLOPs
        // (diffusers' benchmark table: flops_G 59523 for one FLUX.1-dev forward at 1024²);
        // the attention over 4,608 tokens in 57 blocks adds 14.9.
        let pass = dit_pass(&flux(true), 128, 128);
        let linear = 2.0 * pass.layer_macs / 1e12;
        assert!((linear - 59.52).abs() < 0.05, "{linear}");
        let attention = 2.0 * pass.attention_macs / 1e12;
        assert!((attention - 14.87).abs() < 0.05, "{attention}");
        // Doubling the side quadruples the linear work and more than that the attention.
        let big = dit_pass(&flux(true), 256, 256);
        assert!(big.layer_macs > 3.5 * pass.layer_macs && big.attention_macs > 10.0 * pass.attention_macs);
    }
}
