//! What a serving engine is told beyond its name: the release it is (`vllm@0.6`), the
//! runtime it runs on, and the scheduler knobs that change its answers. Unset knobs keep the
//! release's defaults.

use crate::Engine;
use crate::named_enum::named_enum;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

named_enum!(
    /// The runtime TensorRT-LLM executes a model with.
    EngineBackend, "TensorRT-LLM backend" {
        /// The PyTorch backend (`trtllm-serve` and `trtllm-bench` default from 1.0): the model
        /// in PyTorch with TensorRT-LLM's kernels, scheduled from Python.
        Pytorch => "pytorch" | "torch",
        /// Prebuilt TensorRT engines run by the C++ executor (the default before 1.0, and the
        /// path NVIDIA's MLPerf harness runs).
        Tensorrt => "tensorrt" | "trt" | "engine",
    }
);

named_enum!(
    /// How the engine picks each next token, as far as it costs an iteration.
    Sampling, "sampling" {
        /// The most likely token, or a draw at a temperature: no sort of the vocabulary.
        Greedy => "greedy" | "argmax" | "temperature",
        /// Top-p or top-k sampling (chat models' generation configs, which vLLM applies by
        /// default): each sequence's logits are sorted over the vocabulary every step.
        TopP => "top-p" | "top_p" | "top-k" | "top_k" | "nucleus",
    }
);

/// A serving engine's release line, `major.minor` (`0.6`, `1.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EngineRelease {
    pub major: u16,
    pub minor: u16,
}

impl EngineRelease {
    pub const fn new(major: u16, minor: u16) -> EngineRelease {
        EngineRelease { major, minor }
    }

    /// `0.6`, `0.6.3` (the patch is not a scheduling change and is dropped) or `3`.
    pub fn parse(text: &str) -> Option<EngineRelease> {
        let mut parts = text.trim().trim_start_matches('v').split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = match parts.next() {
            Some(minor) => minor.parse().ok()?,
            None => 0,
        };
        match parts.next() {
            Some(patch) if !patch.chars().all(|c| c.is_ascii_alphanumeric()) => None,
            _ => Some(EngineRelease { major, minor }),
        }
    }
}

impl fmt::Display for EngineRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The scheduler knobs of a continuous-batching engine; `None` keeps the release's default.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct EngineSettings {
    /// The engine release whose defaults and host overheads apply; `None`: the current one.
    #[serde(default)]
    pub release: Option<EngineRelease>,
    /// TensorRT-LLM's runtime; `None`: the release's default.
    #[serde(default)]
    pub backend: Option<EngineBackend>,
    /// Sequences running at once at most (vLLM `--max-num-seqs`, SGLang
    /// `--max-running-requests`, TensorRT-LLM `max_batch_size`, TGI
    /// `--max-concurrent-requests`).
    #[serde(default)]
    pub max_num_seqs: Option<u32>,
    /// Tokens one iteration processes at most (vLLM `--max-num-batched-tokens`, SGLang
    /// `--chunked-prefill-size`, TensorRT-LLM `max_num_tokens`, TGI
    /// `--max-batch-prefill-tokens`).
    #[serde(default)]
    pub max_num_batched_tokens: Option<u32>,
    /// Iterations scheduled at once (vLLM 0.5–0.7 `--num-scheduler-steps`).
    #[serde(default)]
    pub scheduler_steps: Option<u32>,
    /// Whether prompt chunks share iterations with decoding (`--enable-chunked-prefill`,
    /// SGLang `--enable-mixed-chunk`, TensorRT-LLM `enable_chunked_context`).
    #[serde(default)]
    pub chunked_prefill: Option<bool>,
    /// Whether a request's KV cache is reserved for its whole length when it is admitted
    /// (TensorRT-LLM's GUARANTEED_NO_EVICT) rather than grown as it generates
    /// (MAX_UTILIZATION, vLLM, SGLang, TGI).
    #[serde(default)]
    pub reserve_full_context: Option<bool>,
    /// How requests sample their tokens; `None`: greedy (no per-sequence sort).
    #[serde(default)]
    pub sampling: Option<Sampling>,
    /// Whether the engine runs without CUDA/HIP graphs (vLLM --enforce-eager, SGLang
    /// --disable-cuda-graph), so each iteration waits for the host to launch its kernels;
    /// `None`: graphs captured, the engines' default.
    #[serde(default)]
    pub enforce_eager: Option<bool>,
    /// Whether TensorRT-LLM's PyTorch backend replays piecewise CUDA graphs for the iterations
    /// that carry prompt tokens (`torch_compile_config.enable_piecewise_cuda_graph`, with
    /// `capture_num_tokens` up to `max_num_tokens`) rather than launching their kernels from
    /// Python; `None`: the release's default, decode-only graphs.
    #[serde(default)]
    pub piecewise_cuda_graphs: Option<bool>,
    /// The engine's share of GPU memory: of the whole GPU for vLLM
    /// (`--gpu-memory-utilization`), SGLang (`--mem-fraction-static`) and TGI
    /// (`--cuda-memory-fraction`), of the memory the weights leave free for TensorRT-LLM
    /// (`free_gpu_memory_fraction`). `None`: the engine's default.
    #[serde(default)]
    pub gpu_memory_fraction: Option<f64>,
    /// llama.cpp's layers kept on the GPU (`-ngl`, `--n-gpu-layers`); the others run on the
    /// host's CPU from its memory. `None`: every layer on the GPU.
    #[serde(default)]
    pub gpu_layers: Option<u32>,
    /// The host memory bandwidth llama.cpp's CPU-held layers are read at, GB/s; `None`: the
    /// catalog's assumption.
    #[serde(default)]
    pub host_bandwidth_gb_per_s: Option<f64>,
}

/// The first release whose TensorRT-LLM serves with the PyTorch backend by default.
const PYTORCH_BACKEND_FROM: EngineRelease = EngineRelease::new(1, 0);

impl EngineSettings {
    /// Whether any scheduler knob or release was given (llama.cpp's placement knobs aside).
    pub fn any(&self) -> bool {
        self.first_given().is_some()
    }

    /// The runtime `engine` runs with: the one given, else the release's default (TensorRT
    /// engines before TensorRT-LLM 1.0, the PyTorch backend since). Only TensorRT-LLM has a
    /// choice.
    pub fn backend_of(&self, engine: Engine) -> Option<EngineBackend> {
        if engine != Engine::TensorrtLlm {
            return None;
        }
        self.backend.or(Some(match self.release {
            Some(release) if release < PYTORCH_BACKEND_FROM => EngineBackend::Tensorrt,
            _ => EngineBackend::Pytorch,
        }))
    }

    /// The first of llama.cpp's placement knobs given (layers on the GPU, the host's
    /// bandwidth), which the continuous-batching model does not read.
    pub fn first_offload_given(&self) -> Option<crate::field::Field> {
        use crate::field::Field;
        [
            (Field::GpuLayers, self.gpu_layers.is_some()),
            (Field::HostBandwidth, self.host_bandwidth_gb_per_s.is_some()),
        ]
        .into_iter()
        .find_map(|(field, given)| given.then_some(field))
    }

    /// The first scheduler knob given, in the order the flags are documented (a release counts
    /// as `engine`).
    pub fn first_given(&self) -> Option<crate::field::Field> {
        use crate::field::Field;
        [
            (Field::MaxNumSeqs, self.max_num_seqs.is_some()),
            (Field::MaxNumBatchedTokens, self.max_num_batched_tokens.is_some()),
            (Field::SchedulerSteps, self.scheduler_steps.is_some()),
            (Field::ChunkedPrefill, self.chunked_prefill.is_some()),
            (Field::ReserveFullContext, self.reserve_full_context.is_some()),
            (Field::Sampling, self.sampling.is_some()),
            (Field::EnforceEager, self.enforce_eager.is_some()),
            (Field::PiecewiseCudaGraphs, self.piecewise_cuda_graphs.is_some()),
            (Field::GpuMemoryFraction, self.gpu_memory_fraction.is_some()),
            (Field::EngineBackend, self.backend.is_some()),
            (Field::Engine, self.release.is_some()),
        ]
        .into_iter()
        .find_map(|(field, given)| given.then_some(field))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_to_their_line() {
        assert_eq!(EngineRelease::parse("0.6"), Some(EngineRelease::new(0, 6)));
        assert_eq!(EngineRelease::parse("0.6.3"), Some(EngineRelease::new(0, 6)));
        assert_eq!(EngineRelease::parse("v1.0"), Some(EngineRelease::new(1, 0)));
        assert_eq!(EngineRelease::parse("3"), Some(EngineRelease::new(3, 0)));
        assert_eq!(EngineRelease::parse("latest"), None);
        assert_eq!(EngineRelease::parse("0.x"), None);
        assert!(EngineRelease::new(0, 6) < EngineRelease::new(0, 10));
        assert_eq!(EngineRelease::new(0, 10).to_string(), "0.10");
    }

    #[test]
    fn tensorrt_llm_runs_engines_before_1_0_and_pytorch_since() {
        let at = |release: Option<EngineRelease>| EngineSettings {
            release,
            ..EngineSettings::default()
        };
        let trtllm = Engine::TensorrtLlm;
        assert_eq!(
            at(Some(EngineRelease::new(0, 18))).backend_of(trtllm),
            Some(EngineBackend::Tensorrt)
        );
        assert_eq!(
            at(Some(EngineRelease::new(1, 0))).backend_of(trtllm),
            Some(EngineBackend::Pytorch)
        );
        assert_eq!(at(None).backend_of(trtllm), Some(EngineBackend::Pytorch));
        let engines = EngineSettings {
            backend: Some(EngineBackend::Tensorrt),
            ..at(Some(EngineRelease::new(1, 0)))
        };
        assert_eq!(engines.backend_of(trtllm), Some(EngineBackend::Tensorrt));
        assert_eq!(engines.backend_of(Engine::Vllm), None);
        assert_eq!(engines.first_given(), Some(crate::field::Field::EngineBackend));
    }
}
