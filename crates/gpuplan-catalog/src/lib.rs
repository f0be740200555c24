//! The gpuplan catalog: accelerators and cloud offerings, every number with its source and
//! the date it was read.
//!
//! The data are committed files under `data/` (see `data/SCHEMA.md`), embedded into the
//! binary at build time and parsed through private DTOs into validated
//! [`gpuplan_model`] values. [`Catalog::from_files`] reads another catalog with the same
//! layout, which a front end has loaded from disk; this crate itself never touches files.
//!
//! ```
//! use gpuplan_catalog::Catalog;
//!
//! let catalog = Catalog::embedded().unwrap();
//! let h100 = catalog.accelerators().resolve_one("h100").unwrap();
//! assert_eq!(h100.accelerator.id.as_str(), "H100-SXM5-80GB");
//! ```
//!
//! The [`import`] module turns a snapshot of the public SkyPilot catalog into rows of
//! `data/offerings/`, repairing or dropping the rows whose data are known to be wrong and
//! recording why.

mod accelerator_index;
mod catalog;
pub mod compatibility;
mod convnext_config;
mod diffusers_config;
mod error;
mod gguf;
mod hf_config;
mod hf_quantization;
mod model_library;
pub mod neuron_compatibility;
mod offering_query;
mod price_flags;
mod price_overlay;
pub mod published_benchmarks;
mod raw;
mod raw_operations;
pub mod refresh;
mod resnet_config;
pub mod rocm_compatibility;
mod safetensors_index;
mod summary;
mod swin_config;
mod ultralytics_config;
mod vision_config_fields;

pub mod import;

pub use accelerator_index::{AcceleratorIndex, LookupError, Resolved};
pub use catalog::{Catalog, CatalogFile, SCHEMA_VERSION, YourPrices};
pub use convnext_config::{CONVNEXT_MODEL_TYPE, parse_convnext_config};
pub use diffusers_config::{
    CLIP_TEXT_TOKENS, SUPPORTED_DIFFUSERS_CLASSES, parse_transformer_config, parse_unet_config, parse_vae_config,
};
pub use error::CatalogError;
pub use gguf::{GgufError, gguf_config_text};
pub use hf_config::{ModelConfigError, SUPPORTED_MODEL_TYPES, parse_hf_config_text};
pub use model_library::{ModelLibrary, UnknownModel};
pub use offering_query::{OfferingQuery, OfferingSort, fold_zones};
pub use price_flags::{MIN_SPOT_SHARE_OF_ON_DEMAND, flag_prices};
pub use price_overlay::{InstancePrice, OverlayBilling, PriceOverlay, ProviderDiscount};
pub use resnet_config::{RESNET_MODEL_TYPE, parse_resnet_config};
pub use safetensors_index::{CheckpointParameters, IndexError, checkpoint_parameters};
pub use summary::{CatalogSummary, ProviderSummary};
pub use swin_config::{SWIN_MODEL_TYPE, parse_swin_config};
pub use ultralytics_config::{
    ULTRALYTICS_RESOLUTION, is_ultralytics_config, parse_ultralytics_config, ultralytics_scale_from_name,
};
