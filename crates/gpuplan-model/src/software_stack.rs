//! The software an accelerator runs models with, and what for: a training stack on NVIDIA is
//! not a training stack on Inferentia.

use crate::{AcceleratorId, Date, Engine, Task};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A vendor software stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SoftwareStack {
    /// NVIDIA CUDA: PyTorch, JAX, TensorRT, vLLM, SGLang.
    Cuda,
    /// AMD ROCm: PyTorch, JAX, vLLM.
    Rocm,
    /// AWS Neuron SDK: torch-neuronx, NxD Training/Inference, vLLM-Neuron.
    Neuron,
    /// XLA on TPUs: JAX, PyTorch/XLA, vLLM-TPU.
    Xla,
}

impl SoftwareStack {
    pub const ALL: [SoftwareStack; 4] = [
        SoftwareStack::Cuda,
        SoftwareStack::Rocm,
        SoftwareStack::Neuron,
        SoftwareStack::Xla,
    ];
}

impl FromStr for SoftwareStack {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_lowercase().as_str() {
            "cuda" => Ok(SoftwareStack::Cuda),
            "rocm" => Ok(SoftwareStack::Rocm),
            "neuron" => Ok(SoftwareStack::Neuron),
            "xla" | "tpu" | "jax" => Ok(SoftwareStack::Xla),
            other => Err(format!(
                "unknown software stack `{other}` (expected cuda, rocm, neuron or xla)"
            )),
        }
    }
}

impl fmt::Display for SoftwareStack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SoftwareStack::Cuda => "cuda",
            SoftwareStack::Rocm => "rocm",
            SoftwareStack::Neuron => "neuron",
            SoftwareStack::Xla => "xla",
        })
    }
}

/// Which accelerators a support entry covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StackTarget {
    /// Every accelerator of these vendors.
    Vendors(Vec<String>),
    /// These accelerators only.
    Accelerators(Vec<AcceleratorId>),
}

/// What one stack runs on some accelerators: training, inference, which model families and
/// which serving engines, with the documentation that says so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackSupport {
    pub stack: SoftwareStack,
    pub target: StackTarget,
    pub training: bool,
    pub inference: bool,
    /// Hugging Face `model_type`s the stack supports; `None`: any model the frameworks run.
    pub model_types: Option<Vec<String>>,
    /// Engines available on the stack.
    pub engines: Vec<Engine>,
    pub title: String,
    pub url: String,
    pub as_of: Date,
    pub note: Option<String>,
}

impl StackSupport {
    /// Whether the entry covers an accelerator of `vendor` with id `id`.
    pub fn covers(&self, vendor: &str, id: &AcceleratorId) -> bool {
        match &self.target {
            StackTarget::Vendors(vendors) => vendors.iter().any(|v| v.eq_ignore_ascii_case(vendor)),
            StackTarget::Accelerators(ids) => ids.contains(id),
        }
    }

    /// What the stack runs, in words: "neuron: inference; engines pytorch, vllm; models
    /// llama, mistral".
    pub fn summary(&self) -> String {
        let purposes = match (self.training, self.inference) {
            (true, true) => "training and inference",
            (true, false) => "training",
            (false, true) => "inference",
            (false, false) => "nothing recorded",
        };
        let engines: Vec<String> = self.engines.iter().map(ToString::to_string).collect();
        let models = self
            .model_types
            .as_ref()
            .map(|types| format!("; models {}", types.join(", ")))
            .unwrap_or_default();
        format!("{}: {purposes}; engines {}{models}", self.stack, engines.join(", "))
    }

    /// Whether the stack runs `task` for a model of `model_type` (`None`: not a transformer
    /// from a config, such as a CNN or a diffusion pipeline) with `engine`. The reason when
    /// it does not.
    pub fn runs(&self, task: Task, model_type: Option<&str>, engine: Engine) -> Result<(), String> {
        let purpose_ok = if task.is_training() {
            self.training
        } else {
            self.inference
        };
        if !purpose_ok {
            let purpose = if task.is_training() { "training" } else { "inference" };
            return Err(format!("{} does not support {purpose} here", self.stack));
        }
        if let Some(types) = &self.model_types {
            let supported = model_type.is_some_and(|t| types.iter().any(|s| s.eq_ignore_ascii_case(t)));
            if !supported {
                return Err(format!("{} supports only {} models here", self.stack, types.join(", ")));
            }
        }
        // Training runs in the framework itself; the engine matters for serving.
        if !task.is_training() && !self.engines.contains(&engine) {
            return Err(format!("{engine} does not run on {}", self.stack));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_what_the_stack_runs() {
        assert_eq!(
            inferentia().summary(),
            "neuron: inference; engines vllm, pytorch; models llama, mistral"
        );
    }

    fn inferentia() -> StackSupport {
        StackSupport {
            stack: SoftwareStack::Neuron,
            target: StackTarget::Accelerators(vec![AcceleratorId::new("Inferentia2")]),
            training: false,
            inference: true,
            model_types: Some(vec!["llama".into(), "mistral".into()]),
            engines: vec![Engine::Vllm, Engine::Pytorch],
            title: "t".into(),
            url: "u".into(),
            as_of: "2026-11-23".parse().unwrap(),
            note: None,
        }
    }

    #[test]
    fn an_inference_chip_does_not_train() {
        let support = inferentia();
        assert!(support.runs(Task::Finetune, Some("llama"), Engine::Pytorch).is_err());
        assert!(support.runs(Task::Inference, Some("llama"), Engine::Vllm).is_ok());
    }

    #[test]
    fn model_families_and_engines_are_checked() {
        let support = inferentia();
        assert!(support.runs(Task::Inference, Some("gpt_neox"), Engine::Vllm).is_err());
        assert!(support.runs(Task::Inference, None, Engine::Vllm).is_err());
        assert!(
            support
                .runs(Task::Inference, Some("llama"), Engine::TensorrtLlm)
                .is_err()
        );
    }
}

/// What a container image is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageRole {
    Training,
    Serving,
}

/// A container image that runs a stack's training, or its serving with one engine, as its
/// publisher documents it, with the device-plugin resource that hands the accelerators to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackImage {
    pub stack: SoftwareStack,
    pub role: ImageRole,
    /// Serving images: the engine inside.
    pub engine: Option<Engine>,
    /// A pinned reference (`registry/repository:tag`).
    pub image: String,
    /// The Kubernetes resource the vendor's device plugin advertises (`amd.com/gpu`).
    pub device_resource: String,
    /// The node-to-node fabric the image is for (`efa`: libfabric and the fabric's NCCL plugin
    /// inside), where it is not the stack's general image; `{region}` in `image` stands for
    /// the configuration's region (a registry per region).
    #[serde(default)]
    pub fabric: Option<String>,
    /// The oldest GPU (compute capability, `7.5`) the image's CUDA builds for, where the
    /// compatibility data has no entry for the image itself.
    #[serde(default)]
    pub min_compute_capability: Option<String>,
    pub source: crate::Source,
}

impl StackImage {
    /// The reference to pull in `region`; `None` where the image needs a region and none is
    /// known.
    pub fn reference_in(&self, region: Option<&str>) -> Option<String> {
        if !self.image.contains("{region}") {
            return Some(self.image.clone());
        }
        region.map(|region| self.image.replace("{region}", region))
    }
}
