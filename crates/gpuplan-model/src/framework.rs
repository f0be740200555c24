//! The training framework a job runs under, whose defaults and kernels change memory and speed.

use crate::named_enum::named_enum;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

named_enum!(
    /// A training framework with documented defaults (see the calibration data for each
    /// profile's sources).
    Framework, "framework" {
        /// Hugging Face Transformers `Trainer` (and TRL's trainers built on it).
        HfTrainer => "hf-trainer" | "transformers" | "trl" | "hf",
        Torchtune => "torchtune",
        Litgpt => "litgpt",
        Torchtitan => "torchtitan",
        /// Megatron-LM / Megatron-Core with Transformer Engine, as NeMo and Megatron-Bridge run it.
        Megatron => "megatron" | "megatron-lm" | "megatron-core" | "nemo" | "megatron-bridge",
        Deepspeed => "deepspeed",
        /// MosaicML llm-foundry on Composer.
        LlmFoundry => "llm-foundry" | "composer",
        Axolotl => "axolotl",
    }
);
