//! The architecture of a model, as far as memory and speed depend on it.

use crate::Source;
use crate::diffusion_spec::{DitSpec, UnetSpec, VaeDecoderSpec};
use crate::resnet_spec::ResnetSpec;
use serde::{Deserialize, Serialize};

/// A model the estimators can reason about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Short id (`llama-3.1-8b`), or the file name for a user's `config.json`.
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub architecture: Architecture,
    /// The parameter count its authors publish, when known.
    pub published_parameters: Option<u64>,
    /// The published total counts a tied output layer as a separate tensor (Falcon).
    #[serde(default)]
    pub published_counts_output_layer_twice: bool,
    /// Parameters the checkpoint holds, where its `model.safetensors.index.json` was read (a
    /// Hugging Face Hub model): what the weights really take, beside the architecture's count.
    #[serde(default)]
    pub checkpoint_parameters: Option<u64>,
    pub sources: Vec<Source>,
}

/// How a model is built. In JSON an object tagged by `kind` (`{"kind": "transformer", …}`);
/// in the catalog's compact binary form, a variant index (formats that are not
/// self-describing cannot read an internal tag).
#[derive(Debug, Clone, PartialEq)]
pub enum Architecture {
    /// A transformer described layer by layer (from a Hugging Face config).
    Transformer(TransformerSpec),
    /// A model described by cited totals: CNNs and diffusion pipelines.
    Cited(CitedSpec),
}

impl ModelSpec {
    /// The layer-by-layer description, where the model has one (not for cited totals).
    pub fn transformer(&self) -> Option<&TransformerSpec> {
        match &self.architecture {
            Architecture::Transformer(spec) => Some(spec),
            Architecture::Cited(_) => None,
        }
    }
}

/// [`Architecture`] as JSON writes it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
enum TaggedArchitecture {
    Transformer(TransformerSpec),
    Cited(CitedSpec),
}

/// [`Architecture`] as compact binary forms write it.
#[derive(Serialize, Deserialize)]
enum IndexedArchitecture {
    Transformer(TransformerSpec),
    Cited(CitedSpec),
}

impl Serialize for Architecture {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let human = serializer.is_human_readable();
        match (self.clone(), human) {
            (Architecture::Transformer(spec), true) => TaggedArchitecture::Transformer(spec).serialize(serializer),
            (Architecture::Cited(spec), true) => TaggedArchitecture::Cited(spec).serialize(serializer),
            (Architecture::Transformer(spec), false) => IndexedArchitecture::Transformer(spec).serialize(serializer),
            (Architecture::Cited(spec), false) => IndexedArchitecture::Cited(spec).serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Architecture {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            Ok(match TaggedArchitecture::deserialize(deserializer)? {
                TaggedArchitecture::Transformer(spec) => Architecture::Transformer(spec),
                TaggedArchitecture::Cited(spec) => Architecture::Cited(spec),
            })
        } else {
            Ok(match IndexedArchitecture::deserialize(deserializer)? {
                IndexedArchitecture::Transformer(spec) => Architecture::Transformer(spec),
                IndexedArchitecture::Cited(spec) => Architecture::Cited(spec),
            })
        }
    }
}

/// Which stacks of layers a transformer has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stacks {
    /// GPT-style: a causal decoder producing tokens.
    DecoderOnly,
    /// BERT / ViT style: a bidirectional encoder, no generation.
    EncoderOnly,
    /// T5 / Whisper style: an encoder and a decoder with cross-attention.
    EncoderDecoder,
}

/// Normalisation layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Norm {
    /// Scale only (`h` parameters).
    RmsNorm,
    /// Scale and bias (`2h` parameters).
    LayerNorm,
}

/// Which attention projections carry biases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionBias {
    None,
    /// Q, K and V only (Qwen2).
    Qkv,
    /// Q, K, V and the output projection (GPT-2, OPT, BLOOM, BERT).
    All,
}

/// A mixture-of-experts feed-forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoeSpec {
    /// Routed experts per MoE layer.
    pub experts: u64,
    /// Routed experts each token visits.
    pub experts_per_token: u64,
    /// Always-active shared experts (DeepSeek, Qwen-MoE).
    pub shared_experts: u64,
    /// Hidden size of one routed expert.
    pub expert_ffn: u64,
    /// Hidden size of the shared expert block (0 when none).
    pub shared_ffn: u64,
    /// Leading layers that keep a dense feed-forward (DeepSeek-V3: 3).
    pub dense_layers: u64,
}

/// Sliding-window attention on some layers (Gemma 2/3, gpt-oss, Mistral 7B v0.1): those
/// layers attend to the last `window` tokens only, so their cache holds no more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlidingWindow {
    pub window: u64,
    /// Layers that attend within the window; the others attend to the whole context.
    pub local_layers: u64,
}

/// Multi-head latent attention (DeepSeek-V2/V3): keys and values through a low-rank latent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MlaSpec {
    /// 0 when queries are not compressed.
    pub q_lora_rank: u64,
    pub kv_lora_rank: u64,
    pub qk_nope_head_dim: u64,
    pub qk_rope_head_dim: u64,
    pub v_head_dim: u64,
}

/// A transformer's shape, normalised across Hugging Face `model_type`s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransformerSpec {
    /// The Hugging Face `model_type` it came from.
    pub model_type: String,
    pub stacks: Stacks,
    pub hidden: u64,
    /// Layers of the main stack: the decoder of a decoder-only model, the encoder otherwise.
    pub layers: u64,
    /// Decoder layers of an encoder-decoder model (0 otherwise).
    pub decoder_layers: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    /// Feed-forward hidden size (dense layers).
    pub ffn: u64,
    /// Gated feed-forward (SwiGLU / GeGLU: three matrices instead of two).
    pub gated_ffn: bool,
    pub vocab: u64,
    pub tied_embeddings: bool,
    /// Rows of learned position embeddings (0 for rotary or ALiBi).
    pub learned_positions: u64,
    pub norm: Norm,
    /// Norm layers per transformer layer (2 usually; 1 for GPT-J and Falcon-7B's parallel block).
    pub norms_per_layer: u64,
    pub attention_bias: AttentionBias,
    pub mlp_bias: bool,
    pub moe: Option<MoeSpec>,
    pub mla: Option<MlaSpec>,
    /// Longest context the model was trained for.
    pub max_context: u64,
    /// Parameters outside the repeated layers that the formulas above do not cover (BERT's
    /// token-type embeddings and pooler, ViT's patch embedding and classifier, Whisper's
    /// convolution stem), counted from the config.
    pub extra_parameters: u64,
    /// Image side in pixels and patch size for vision transformers (sequence = patches + 1).
    pub image: Option<(u64, u64)>,
    /// How the checkpoint stores its weights, where its config says (`quantization_config`).
    #[serde(default)]
    pub quantization: Option<CheckpointQuantization>,
    /// Layers that attend within a sliding window, where the config says so.
    #[serde(default)]
    pub sliding_window: Option<SlidingWindow>,
    /// What the config reader assumed beyond the config's own fields (a `model_type` it does
    /// not know, read by its fields; a wrapper's vision tower counted as a generic ViT), for
    /// the answer's assumptions.
    #[serde(default)]
    pub read_notes: Vec<String>,
}

/// The format a checkpoint keeps its weights in, from its config's `quantization_config`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointQuantization {
    /// The config's `quant_method` (`awq`, `gptq`, `bitsandbytes`, `fp8`, `mxfp4`, …).
    pub method: String,
    /// The precision its weights are stored in; `None` for a method gpuplan does not model.
    pub precision: Option<crate::Precision>,
    /// The kernel the format implies (bitsandbytes runs its own); `None`: the engine's choice.
    pub kernel: Option<crate::WeightKernel>,
    /// Bits a weight the checkpoint holds on average, where its format says (a GGUF file's
    /// mix of block types, the wider embeddings and output layer included).
    #[serde(default)]
    pub bits_per_weight: Option<f64>,
    /// How 4-bit float weights are stored, where the config names it (ModelOpt's `quant_algo`,
    /// the `mxfp4` method, compressed-tensors' group size).
    #[serde(default)]
    pub fp4_format: Option<crate::Fp4Format>,
    /// Whether the checkpoint leaves its attention layers unquantised, in 16 bits, where its
    /// config's list of modules kept out of quantisation names them (gpt-oss's
    /// `modules_to_not_convert`: every `self_attn`, the routers, embeddings and output layer).
    #[serde(default)]
    pub unquantized_attention: bool,
}

impl TransformerSpec {
    /// Width of all query heads together.
    pub fn attention_width(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// Width of the keys (or values) of all KV heads together.
    pub fn kv_width(&self) -> u64 {
        self.kv_heads * self.head_dim
    }

    /// Whether the model generates tokens (has a causal decoder).
    pub fn generates(&self) -> bool {
        !matches!(self.stacks, Stacks::EncoderOnly)
    }
}

/// A model known by cited totals rather than a layer-by-layer config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CitedSpec {
    /// `vision` (CNN) or `diffusion`.
    pub family: String,
    /// Input resolution (pixels per side) the figures are for.
    pub resolution: u64,
    /// Forward FLOPs per sample (per denoising step for diffusion), when a source gives it.
    pub forward_flops_per_sample: Option<f64>,
    /// Activation memory per sample for training in mixed precision, when a source gives it.
    pub activation_bytes_per_sample: Option<u64>,
    /// Denoising steps of the reference pipeline (diffusion only).
    pub denoising_steps: Option<u64>,
    /// Named parts and their parameters (diffusion: UNet, text encoders, VAE).
    pub components: Vec<(String, u64)>,
    /// The denoising UNet's layer shapes, when known: FLOPs are then counted from the
    /// architecture at any resolution instead of taken from `forward_flops_per_sample`.
    pub unet: Option<UnetSpec>,
    /// The denoising transformer's layer shapes (SD3, FLUX), when the denoiser is one.
    #[serde(default)]
    pub transformer: Option<Box<DitSpec>>,
    /// The VAE decoder's layer shapes, when known (its one pass per image is then counted).
    pub vae_decoder: Option<VaeDecoderSpec>,
    /// A residual network's stages, when known: speed and memory are then walked layer by layer.
    pub resnet: Option<ResnetSpec>,
    /// A ConvNeXt's stages (from its Hugging Face config), walked layer by layer the same way.
    #[serde(default)]
    pub convnext: Option<crate::ConvnextSpec>,
    /// A Swin Transformer's stages (from its Hugging Face config), walked layer by layer the
    /// same way.
    #[serde(default)]
    pub swin: Option<Box<crate::SwinSpec>>,
    /// A YOLOv8 detector's scale, walked layer by layer the same way.
    #[serde(default)]
    pub yolo: Option<Box<crate::YoloSpec>>,
}
