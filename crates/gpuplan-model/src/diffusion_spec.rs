//! The layer-by-layer shape of a latent-diffusion pipeline's two heavy parts: the denoiser
//! (a diffusers `UNet2DConditionModel`, or a diffusion transformer: `SD3Transformer2DModel`,
//! `FluxTransformer2DModel`) and the VAE decoder (diffusers `AutoencoderKL`), as their
//! `config.json` files describe them.

use serde::{Deserialize, Serialize};

/// One resolution level of a UNet: plain residual blocks, or residual blocks each followed by
/// a spatial transformer (self-attention, cross-attention to the text, feed-forward).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnetBlockKind {
    /// `DownBlock2D` / `UpBlock2D`.
    Residual,
    /// `CrossAttnDownBlock2D` / `CrossAttnUpBlock2D`.
    CrossAttention,
}

/// A diffusers `UNet2DConditionModel` config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnetSpec {
    /// Latent channels in (`in_channels`).
    pub in_channels: u64,
    /// Latent channels out (`out_channels`).
    pub out_channels: u64,
    /// Channels of each resolution level, highest resolution first (`block_out_channels`).
    pub block_out_channels: Vec<u64>,
    /// Residual blocks per down level; up levels have one more (`layers_per_block`).
    pub layers_per_block: u64,
    /// Kind of each down level, highest resolution first (`down_block_types`).
    pub down_blocks: Vec<UnetBlockKind>,
    /// Kind of each up level, lowest resolution first (`up_block_types`).
    pub up_blocks: Vec<UnetBlockKind>,
    /// Transformer blocks per spatial transformer at each down level (`transformer_layers_per_block`);
    /// the up levels use the same depths in reverse and the middle block the deepest level's.
    pub transformer_layers_per_block: Vec<u64>,
    /// Attention heads at each down level. diffusers reads them from `num_attention_heads`, or
    /// else from `attention_head_dim`, which in the Stable Diffusion configs counts heads.
    pub attention_heads: Vec<u64>,
    /// Width of the text-encoder states the cross-attention reads (`cross_attention_dim`).
    pub cross_attention_dim: u64,
    /// Input width of the extra conditioning embedding (`projection_class_embeddings_input_dim`
    /// with `addition_embed_type: text_time`, SDXL), if any.
    pub addition_embedding_input_dim: Option<u64>,
    /// Text tokens the cross-attention attends to (77 for CLIP tokenisers).
    pub text_tokens: u64,
}

impl UnetSpec {
    /// Width of the timestep embedding: four times the first level's channels, as diffusers builds it.
    pub fn time_embedding_dim(&self) -> u64 {
        self.block_out_channels.first().copied().unwrap_or(0) * 4
    }

    /// Transformer depth of the middle block: that of the deepest level.
    pub fn middle_transformer_layers(&self) -> u64 {
        self.transformer_layers_per_block.last().copied().unwrap_or(1)
    }
}

/// The decoder half of a diffusers `AutoencoderKL` config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VaeDecoderSpec {
    /// Channels of the latent (`latent_channels`).
    pub latent_channels: u64,
    /// Image channels out (`out_channels`).
    pub out_channels: u64,
    /// Channels of each level as the encoder lists them, highest resolution first
    /// (`block_out_channels`); the decoder walks them in reverse.
    pub block_out_channels: Vec<u64>,
    /// Residual blocks per encoder level; the decoder has one more (`layers_per_block`).
    pub layers_per_block: u64,
    /// Whether pipelines decode in fp32 when the rest runs in fp16, because this VAE
    /// overflows in fp16 (`force_upcast`, set for SDXL's).
    pub force_upcast: bool,
}

impl VaeDecoderSpec {
    /// Pixels per latent element along each side: 2^(levels − 1) (8 for Stable Diffusion).
    pub fn downscale_factor(&self) -> u64 {
        1 << self.block_out_channels.len().saturating_sub(1)
    }
}

/// The two diffusion-transformer designs diffusers ships for text-to-image (Esser et al. 2024,
/// "Scaling Rectified Flow Transformers for High-Resolution Image Synthesis", the MMDiT of
/// Stable Diffusion 3; Black Forest Labs' FLUX.1, which adds single-stream blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DitFamily {
    /// `SD3Transformer2DModel`: joint blocks only, the last one reading the text without
    /// updating it; the latent patchified by a strided convolution; classifier-free guidance.
    StableDiffusion3,
    /// `FluxTransformer2DModel`: joint ("double-stream") blocks, then single-stream blocks over
    /// text and image together; the pipeline packs 2×2 latent patches; guidance distilled into
    /// an embedding (FLUX.1-dev) or absent (schnell).
    Flux,
}

/// A diffusion transformer's config (`transformer/config.json` of the pipeline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DitSpec {
    pub family: DitFamily,
    /// Attention heads (`num_attention_heads`) and their width (`attention_head_dim`); the
    /// model width is their product.
    pub heads: u64,
    pub head_dim: u64,
    /// Joint blocks, attending over text and image with separate weights for each
    /// (`num_layers`).
    pub joint_blocks: u64,
    /// Single-stream blocks (FLUX's `num_single_layers`; none in SD3).
    pub single_blocks: u64,
    /// Joint blocks with a second self-attention over the image tokens (SD3.5 Medium's
    /// `dual_attention_layers`).
    pub dual_attention_blocks: u64,
    /// Latent pixels per token along each side (SD3's `patch_size`; FLUX's packing of 2×2
    /// latent pixels).
    pub latent_patch: u64,
    /// Features per image token going in (latent channels × patch area) and coming out.
    pub token_channels: u64,
    /// Width of the text encoder's states (`joint_attention_dim`, T5-XXL's 4096) and of the
    /// pooled text embedding (`pooled_projection_dim`).
    pub joint_attention_dim: u64,
    pub pooled_projection_dim: u64,
    /// FLUX.1-dev's guidance embedding (`guidance_embeds`).
    pub guidance_embeds: bool,
    /// RMS norms on queries and keys (`qk_norm: rms_norm`, and always in FLUX).
    pub qk_norm: bool,
    /// Text tokens the pipeline feeds (its T5 `max_sequence_length`, plus SD3's 77 CLIP ones).
    pub text_tokens: u64,
}

impl DitSpec {
    /// The model width: heads × head width.
    pub fn width(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// Whether the pipeline runs classifier-free guidance by default (two passes a step):
    /// SD3's does; FLUX's guidance is an input of one pass.
    pub fn guided_by_default(&self) -> bool {
        self.family == DitFamily::StableDiffusion3
    }
}
