//! The serving engine's scheduler knobs and closed-loop load, declared once: the same struct
//! is the command line's flags (`--max-num-seqs`), a job file's keys and the API's JSON fields
//! (`max_num_seqs`). Unset knobs keep the engine release's defaults, and the answer says which
//! were in force.

use crate::{Error, Field, RequestError};
use gpuplan_model::{Engine, EngineBackend, EngineRelease, EngineSettings, Sampling};
use serde::{Deserialize, Serialize};

/// Scheduler knobs of a continuous-batching engine, and a closed-loop load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct EngineKnobs {
    /// Sequences the engine runs at once at most (vLLM --max-num-seqs, SGLang
    /// --max-running-requests, TensorRT-LLM max_batch_size, TGI --max-concurrent-requests).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine"))]
    pub max_num_seqs: Option<u32>,
    /// Tokens one engine iteration processes at most (vLLM --max-num-batched-tokens, SGLang
    /// --chunked-prefill-size, TensorRT-LLM max_num_tokens, TGI --max-batch-prefill-tokens).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine"))]
    pub max_num_batched_tokens: Option<u32>,
    /// Iterations the engine schedules at once (vLLM 0.5–0.7 --num-scheduler-steps): new
    /// prompts join only between such runs.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine"))]
    pub scheduler_steps: Option<u32>,
    /// Whether prompt chunks share iterations with decoding (true) or run in prefill-only
    /// iterations every decoding sequence waits for (false). TensorRT-LLM's in-flight batching
    /// runs prompts beside the decodes either way: false there (its default) only keeps each
    /// prompt whole (enable_chunked_context).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine"))]
    pub chunked_prefill: Option<bool>,
    /// Whether each request's KV cache is reserved for its whole length on admission
    /// (TensorRT-LLM's default capacity policy, GUARANTEED_NO_EVICT) or grown as it generates
    /// (false: MAX_UTILIZATION, and how vLLM, SGLang and TGI work).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine"))]
    pub reserve_full_context: Option<bool>,
    /// TensorRT-LLM's runtime: pytorch (the PyTorch backend, `trtllm-serve`'s default from
    /// 1.0) or tensorrt (prebuilt TensorRT engines: the default before 1.0, and what NVIDIA's
    /// MLPerf harness runs). Default: the release's.
    #[serde(default, deserialize_with = "by_name")]
    #[schema(value_type = Option<String>, example = "tensorrt")]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine", value_name = "BACKEND"))]
    pub engine_backend: Option<EngineBackend>,
    /// How requests sample their tokens: greedy (the default: argmax, or a plain temperature
    /// draw) or top-p (top-p/top-k, as chat models' generation configs ask and vLLM applies
    /// unless the request says otherwise), whose per-sequence sort of the logits vLLM and TGI
    /// pay every step.
    #[serde(default, deserialize_with = "by_name")]
    #[schema(value_type = Option<String>, example = "top-p")]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine", value_name = "HOW"))]
    pub sampling: Option<Sampling>,
    /// Whether the engine runs without CUDA/HIP graphs (vLLM --enforce-eager, SGLang
    /// --disable-cuda-graph): each iteration then waits for the host to launch its kernels, which
    /// sets the pace of small batches. Default: graphs captured (false).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine"))]
    pub enforce_eager: Option<bool>,
    /// TensorRT-LLM's PyTorch backend: whether the iterations that carry prompt tokens replay
    /// piecewise CUDA graphs (torch_compile_config.enable_piecewise_cuda_graph, capturing up to
    /// max_num_tokens) instead of launching their kernels one by one from Python. Default: the
    /// release's (false: graphs of decode-only iterations).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine"))]
    pub piecewise_cuda_graphs: Option<bool>,
    /// The engine's share of GPU memory for weights, activations and KV cache: of the whole
    /// GPU for vLLM (--gpu-memory-utilization, default 0.9), SGLang (--mem-fraction-static) and
    /// TGI (--cuda-memory-fraction); of the memory left free after the weights for
    /// TensorRT-LLM (free_gpu_memory_fraction, default 0.9). More of it is more KV cache.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine", value_name = "FRACTION"))]
    pub gpu_memory_fraction: Option<f64>,
    /// llama.cpp: the transformer layers kept on the GPU (`-ngl`); the others run on the
    /// host's CPU, reading their weights from its memory at --host-bandwidth. Default: all.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine", value_name = "LAYERS"))]
    pub gpu_layers: Option<u32>,
    /// llama.cpp with --gpu-layers: the host memory bandwidth the CPU's layers are read at,
    /// GB/s (a STREAM-like figure of the machine). Default: the catalog's assumption, stated.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine", value_name = "GB_PER_S"))]
    pub host_bandwidth: Option<f64>,
    /// Closed-loop load: this many users, each sending its next request when the last one
    /// ends (as `vllm bench serve --max-concurrency` and genai-perf do), instead of a Poisson
    /// `qps`. `plan` sizes replicas for this many users in total.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, help_heading = "Serving engine"))]
    pub concurrency: Option<f64>,
}

/// A name read as the command line reads it (aliases included), so a job file or a JSON body
/// takes what the flag takes.
fn by_name<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    Option::<String>::deserialize(deserializer)?
        .map(|text| text.parse().map_err(serde::de::Error::custom))
        .transpose()
}

/// The release in `vllm@0.6`, if any, with the engine name alone.
pub(crate) fn split_release(text: &Option<String>) -> Result<(Option<String>, Option<EngineRelease>), Error> {
    let Some(text) = text else {
        return Ok((None, None));
    };
    let Some((name, release)) = text.split_once('@') else {
        return Ok((Some(text.clone()), None));
    };
    let parsed = EngineRelease::parse(release).ok_or_else(|| {
        Error::from(
            RequestError::invalid(Field::Engine, text, format!("`{release}` is not a release line"))
                .with_hint("give the engine's release as MAJOR.MINOR, e.g. {engine} vllm@0.6"),
        )
    })?;
    Ok((Some(name.to_string()), Some(parsed)))
}

impl EngineKnobs {
    /// The knobs as the estimator takes them, checked against `engine` (`None`: the default
    /// engine); `release` from `--engine NAME@RELEASE`.
    pub(crate) fn settings(
        &self,
        engine: Option<Engine>,
        release: Option<EngineRelease>,
    ) -> Result<EngineSettings, Error> {
        if self.engine_backend.is_some() && engine != Some(Engine::TensorrtLlm) {
            return Err(
                RequestError::not_applicable(Field::EngineBackend, "TensorRT-LLM ({engine} tensorrt-llm)")
                    .with_hint("drop it, or add {engine} tensorrt-llm")
                    .into(),
            );
        }
        if self.enforce_eager.is_some() && !matches!(engine, None | Some(Engine::Vllm | Engine::Sglang)) {
            return Err(RequestError::not_applicable(
                Field::EnforceEager,
                "vLLM and SGLang, the engines whose CUDA graphs can be switched off",
            )
            .with_hint("drop it, or add {engine} vllm")
            .into());
        }
        self.check_piecewise(engine, release)?;
        self.check_offload(engine)?;
        for (field, value) in [
            (Field::MaxNumSeqs, self.max_num_seqs),
            (Field::MaxNumBatchedTokens, self.max_num_batched_tokens),
            (Field::SchedulerSteps, self.scheduler_steps),
        ] {
            if value == Some(0) {
                return Err(crate::defaults::at_least_one(field, 0));
            }
        }
        if let Some(fraction) = self.gpu_memory_fraction.filter(|f| !(*f > 0.0 && *f <= 1.0)) {
            return Err(RequestError::beyond(
                Field::GpuMemoryFraction,
                fraction,
                "not a share of the GPU's memory above 0 and at most 1",
            )
            .into());
        }
        if let Some(users) = self.concurrency {
            if !(1.0..=1e7).contains(&users) {
                return Err(RequestError::beyond(
                    Field::Concurrency,
                    users,
                    "not a number of users from 1 to 10 million",
                )
                .into());
            }
        }
        Ok(self.as_settings(release))
    }

    /// Piecewise CUDA graphs are a knob of TensorRT-LLM's PyTorch backend; its TensorRT engines
    /// capture whole iterations.
    fn check_piecewise(&self, engine: Option<Engine>, release: Option<EngineRelease>) -> Result<(), Error> {
        if self.piecewise_cuda_graphs.is_none() {
            return Ok(());
        }
        let backend = (engine == Some(Engine::TensorrtLlm))
            .then(|| self.as_settings(release).backend_of(Engine::TensorrtLlm))
            .flatten();
        if backend == Some(EngineBackend::Pytorch) {
            return Ok(());
        }
        Err(RequestError::not_applicable(
            Field::PiecewiseCudaGraphs,
            "TensorRT-LLM's PyTorch backend ({engine} tensorrt-llm, {engine_backend} pytorch)",
        )
        .with_hint("drop it, or add {engine} tensorrt-llm")
        .into())
    }

    /// Layers on the host are llama.cpp's, and a host bandwidth needs them.
    fn check_offload(&self, engine: Option<Engine>) -> Result<(), Error> {
        let given = self.as_settings(None).first_offload_given();
        if let (Some(field), false) = (given, engine == Some(Engine::LlamaCpp)) {
            return Err(RequestError::not_applicable(
                field,
                "llama.cpp ({engine} llama.cpp), which splits layers between GPU and CPU",
            )
            .with_hint("drop it, or add {engine} llama.cpp")
            .into());
        }
        if self.host_bandwidth.is_some() && self.gpu_layers.is_none() {
            return Err(RequestError::needs(
                Field::HostBandwidth,
                Field::GpuLayers,
                ": with every layer on the GPU no weight is read from the host",
            )
            .into());
        }
        if let Some(bandwidth) = self.host_bandwidth.filter(|b| !(1.0..=10_000.0).contains(b)) {
            return Err(RequestError::beyond(
                Field::HostBandwidth,
                bandwidth,
                "not a memory bandwidth from 1 to 10,000 GB/s",
            )
            .into());
        }
        Ok(())
    }

    /// The knobs as the estimator takes them, unchecked.
    fn as_settings(&self, release: Option<EngineRelease>) -> EngineSettings {
        EngineSettings {
            release,
            backend: self.engine_backend,
            max_num_seqs: self.max_num_seqs,
            max_num_batched_tokens: self.max_num_batched_tokens,
            scheduler_steps: self.scheduler_steps,
            chunked_prefill: self.chunked_prefill,
            reserve_full_context: self.reserve_full_context,
            sampling: self.sampling,
            enforce_eager: self.enforce_eager,
            piecewise_cuda_graphs: self.piecewise_cuda_graphs,
            gpu_memory_fraction: self.gpu_memory_fraction,
            gpu_layers: self.gpu_layers,
            host_bandwidth_gb_per_s: self.host_bandwidth,
        }
    }

    /// Knobs of a serving engine mean nothing to training.
    pub(crate) fn check_task(&self, task: gpuplan_model::Task) -> Result<(), Error> {
        let settings = self.as_settings(None);
        let given = settings
            .first_given()
            .or_else(|| settings.first_offload_given())
            .or_else(|| self.concurrency.map(|_| Field::Concurrency));
        match given {
            Some(field) if task.is_training() => Err(RequestError::not_applicable(
                field,
                format!("serving ({{task}} inference), not {task}"),
            )
            .with_hint("drop it, or ask about inference")
            .into()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_split_from_the_engine_and_checked() {
        let (name, release) = split_release(&Some("vllm@0.6.3".into())).unwrap();
        assert_eq!(name.as_deref(), Some("vllm"));
        assert_eq!(release, Some(EngineRelease::new(0, 6)));
        assert_eq!(split_release(&Some("sglang".into())).unwrap().1, None);
        assert!(split_release(&Some("vllm@latest".into())).is_err());
    }

    #[test]
    fn zero_and_impossible_knobs_are_refused() {
        let knobs = EngineKnobs {
            max_num_seqs: Some(0),
            ..EngineKnobs::default()
        };
        assert!(knobs.settings(None, None).is_err());
        for users in [0.0, f64::NAN, f64::INFINITY, 1e9] {
            let knobs = EngineKnobs {
                concurrency: Some(users),
                ..EngineKnobs::default()
            };
            assert!(knobs.settings(None, None).is_err(), "{users}");
        }
        let given = EngineKnobs {
            scheduler_steps: Some(10),
            ..EngineKnobs::default()
        };
        assert_eq!(given.settings(None, None).unwrap().scheduler_steps, Some(10));
        assert!(given.check_task(gpuplan_model::Task::Lora).is_err());
        let engines = EngineKnobs {
            engine_backend: Some(EngineBackend::Tensorrt),
            ..EngineKnobs::default()
        };
        let read: EngineKnobs = serde_json::from_str(r#"{"engine_backend": "trt"}"#).unwrap();
        assert_eq!(read.engine_backend, Some(EngineBackend::Tensorrt));
        assert!(serde_json::from_str::<EngineKnobs>(r#"{"engine_backend": "onnx"}"#).is_err());
        let on = |engine| engines.settings(engine, None);
        assert_eq!(
            on(Some(Engine::TensorrtLlm)).unwrap().backend,
            Some(EngineBackend::Tensorrt)
        );
        for engine in [None, Some(Engine::Vllm)] {
            let error = on(engine).unwrap_err();
            assert_eq!(error.field(), Some(Field::EngineBackend), "{engine:?}");
        }
        assert!(given.check_task(gpuplan_model::Task::Inference).is_ok());
    }

    #[test]
    fn eager_mode_reads_from_a_file_and_json_and_only_vllm_and_sglang_take_it() {
        let read: EngineKnobs = serde_json::from_str(r#"{"enforce_eager": true}"#).unwrap();
        assert_eq!(read.settings(None, None).unwrap().enforce_eager, Some(true));
        let file: EngineKnobs = toml::from_str("enforce_eager = false").unwrap();
        assert_eq!(
            file.settings(Some(Engine::Sglang), None).unwrap().enforce_eager,
            Some(false)
        );
        let refused = read.settings(Some(Engine::TensorrtLlm), None).unwrap_err();
        assert!(format!("{refused:?}").contains("EnforceEager"), "{refused:?}");
        assert!(read.check_task(gpuplan_model::Task::Pretrain).is_err());
    }

    #[test]
    fn piecewise_graphs_are_a_knob_of_tensorrt_llm_s_pytorch_backend_alone() {
        let read: EngineKnobs = serde_json::from_str(r#"{"piecewise_cuda_graphs": true}"#).unwrap();
        let on = |engine, release| read.settings(engine, release);
        assert_eq!(
            on(Some(Engine::TensorrtLlm), None).unwrap().piecewise_cuda_graphs,
            Some(true)
        );
        let file: EngineKnobs = toml::from_str("piecewise_cuda_graphs = false").unwrap();
        assert_eq!(file.piecewise_cuda_graphs, Some(false));
        // Other engines, TensorRT engines, and releases whose default runtime is the engines.
        let engines = EngineKnobs {
            engine_backend: Some(EngineBackend::Tensorrt),
            ..read
        };
        for refused in [
            on(None, None),
            on(Some(Engine::Vllm), None),
            on(Some(Engine::TensorrtLlm), EngineRelease::parse("0.12")),
            engines.settings(Some(Engine::TensorrtLlm), None),
        ] {
            assert_eq!(refused.unwrap_err().field(), Some(Field::PiecewiseCudaGraphs));
        }
        assert!(read.check_task(gpuplan_model::Task::Pretrain).is_err());
    }

    #[test]
    fn sampling_reads_the_same_from_a_flag_a_file_and_json() {
        let read: EngineKnobs = serde_json::from_str(r#"{"sampling": "top_k"}"#).unwrap();
        assert_eq!(read.sampling, Some(Sampling::TopP));
        let greedy: EngineKnobs = toml::from_str(r#"sampling = "argmax""#).unwrap();
        assert_eq!(greedy.settings(None, None).unwrap().sampling, Some(Sampling::Greedy));
        let wrong = serde_json::from_str::<EngineKnobs>(r#"{"sampling": "top-q"}"#).unwrap_err();
        assert!(wrong.to_string().contains("top-p"), "{wrong}");
        assert!(read.check_task(gpuplan_model::Task::Finetune).is_err());
    }
}
