//! llama.cpp's split of a model between the GPU and the host (`-ngl N`): N of the transformer
//! layers (the last N), with their KV cache, live on the GPU; the others and (unless N exceeds
//! the layer count) the output layer live in host memory and run on the CPU, and the input
//! embedding table always stays there (one row of it is read a token). A token passes the
//! layers in order, so a generated token takes the GPU's time for its layers plus the CPU's
//! for the rest, which reads their weights and cache from host memory. A prompt of 32 tokens
//! or more is multiplied on the GPU even for the host's layers: llama.cpp copies their weights
//! over PCIe for each micro-batch (`--ubatch-size`, 512) and computes there; a shorter one runs
//! on the CPU.
//!
//! References: llama.cpp `src/llama-model.cpp` (layer placement by `n_gpu_layers`, the output
//! layer counted as one more), `ggml/src/ggml-backend.cpp` (the scheduler's offload of large
//! batches, `op_offload`), `common/arg.cpp` (defaults).

use crate::memory::MemoryEstimate;
use crate::parameters::ParameterCount;
use crate::precision_bytes::embedding_bytes;
use gpuplan_model::{TransformerSpec, Workload};

/// Prompt tokens from which llama.cpp multiplies host-held weights on the GPU.
const GPU_PROMPT_MIN_TOKENS: f64 = 32.0;
/// Tokens of one micro-batch (`--ubatch-size` default): the host's weights cross PCIe once
/// per micro-batch of a prompt.
const MICRO_BATCH_TOKENS: f64 = 512.0;

/// What runs on the host when some layers stay there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostOffload {
    /// Transformer layers on the GPU, of `layers`.
    pub gpu_layers: u64,
    pub layers: u64,
    /// Weight bytes in host memory (the host's layers, the embeddings, the output layer).
    pub weight_bytes: f64,
    /// Weight bytes the CPU reads for each generated token (its layers and the output layer).
    pub read_bytes_per_token: f64,
    /// KV-cache bytes per token of context the host's layers keep.
    pub kv_bytes_per_token: f64,
    /// Host memory bandwidth the CPU reads at, bytes/s.
    pub bandwidth: f64,
    /// GPU ↔ host link, bytes/s.
    pub link: f64,
}

impl HostOffload {
    /// Places llama.cpp's weights for `workload`: the input embedding table stays in host
    /// memory (llama.cpp reads one row of it a token), so it leaves `memory`'s GPU weights
    /// where the output layer has its own; with fewer GPU layers than the model has, the
    /// others, the output layer and their share of the KV cache leave too, and the answer is
    /// what the host then runs. `kv_bytes_per_token` is the whole cache's per token. Any other
    /// engine keeps everything on the GPU.
    pub fn place(
        spec: &TransformerSpec,
        counts: &ParameterCount,
        workload: &Workload,
        memory: &mut MemoryEstimate,
        kv_bytes_per_token: f64,
        (bandwidth, link): (f64, f64),
    ) -> Option<HostOffload> {
        if workload.engine != gpuplan_model::Engine::LlamaCpp {
            return None;
        }
        let edge = crate::precision_bytes::served_file_bytes(spec, workload)
            .unwrap_or_else(|| embedding_bytes(gpuplan_model::Task::Inference, workload.precision));
        let all = memory.weights.as_u64() as f64;
        let input_bytes = if counts.output_head > 0 {
            counts.embedding as f64 * edge
        } else {
            0.0
        };
        let output_bytes = (spec.vocab * spec.hidden) as f64 * edge;
        let layer_bytes = (all - (counts.embedding + counts.output_head) as f64 * edge).max(0.0);
        let layers = spec.layers + spec.decoder_layers;
        let gpu_layers = workload.engine_settings.gpu_layers.map_or(u64::MAX, u64::from);
        let gpu_share = (gpu_layers.min(layers) as f64 / layers.max(1) as f64).min(1.0);
        let on_host = gpu_layers <= layers;
        let gpu_weights = layer_bytes * gpu_share + if on_host { 0.0 } else { output_bytes };
        let kv_host = memory.kv_cache.as_u64() as f64 * (1.0 - gpu_share);
        memory.weights = gpuplan_model::Bytes(gpu_weights.max(0.0) as u64);
        memory.kv_cache = gpuplan_model::Bytes((memory.kv_cache.as_u64() as f64 - kv_host) as u64);
        memory.per_gpu = memory.allocated() + memory.overhead;
        on_host.then_some(HostOffload {
            gpu_layers,
            layers,
            weight_bytes: layer_bytes * (1.0 - gpu_share) + output_bytes + input_bytes,
            read_bytes_per_token: layer_bytes * (1.0 - gpu_share) + output_bytes,
            kv_bytes_per_token: kv_bytes_per_token * (1.0 - gpu_share),
            bandwidth,
            link,
        })
    }

    /// Host memory held: the weights and the host layers' cache for `tokens` of context.
    pub fn resident_bytes(&self, tokens: f64) -> f64 {
        self.weight_bytes + self.kv_bytes_per_token * tokens
    }

    /// The CPU's share of one decode step of `batch` sequences at `context` tokens.
    pub fn decode_seconds(&self, batch: f64, context: f64) -> f64 {
        (self.read_bytes_per_token + batch * context * self.kv_bytes_per_token) / self.bandwidth
    }

    /// What the host's layers add to a prompt of `tokens`: their weights over the link once
    /// per micro-batch where the GPU multiplies them, else one read on the CPU.
    pub fn prefill_seconds(&self, tokens: f64) -> f64 {
        if tokens >= GPU_PROMPT_MIN_TOKENS {
            (tokens / MICRO_BATCH_TOKENS).ceil() * self.read_bytes_per_token / self.link
        } else {
            self.read_bytes_per_token / self.bandwidth
        }
    }
}

/// The host bandwidth for `workload`: the one given, else the catalog's assumption.
pub fn host_bandwidth_bytes_per_second(workload: &Workload) -> f64 {
    workload
        .engine_settings
        .host_bandwidth_gb_per_s
        .unwrap_or_else(crate::efficiency::host_memory_bandwidth_gb_per_s)
        * 1e9
}

/// The assumption an answer states for a split model.
pub fn note(host: &HostOffload, workload: &Workload) -> String {
    let given = workload.engine_settings.host_bandwidth_gb_per_s.is_some();
    format!(
        "llama.cpp with {} of {} layers on the GPU: the other {} stay in host memory and run on the CPU ({:.1} GB of host memory with the embeddings, the output layer and their share of the KV cache), which reads {:.1} GB a generated token at {:.0} GB/s{}; prompts of 32 tokens or more are multiplied on the GPU, the host's weights crossing PCIe once per 512-token micro-batch; replicas on one machine share its memory bandwidth, which this does not divide",
        host.gpu_layers,
        host.layers,
        host.layers - host.gpu_layers,
        host.resident_bytes((workload.batch * (workload.seq + workload.output_tokens)) as f64) / 1e9,
        host.read_bytes_per_token / 1e9,
        host.bandwidth / 1e9,
        if given {
            " (given)"
        } else {
            " (assumed; give --host-bandwidth for the machine's)"
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offload(gpu_layers: u64, layers: u64) -> HostOffload {
        HostOffload {
            gpu_layers,
            layers,
            weight_bytes: 20e9,
            read_bytes_per_token: 19e9,
            kv_bytes_per_token: 1e5,
            bandwidth: 50e9,
            link: 20e9,
        }
    }

    #[test]
    fn the_cpu_reads_its_layers_every_token_and_ships_them_for_long_prompts() {
        let host = offload(40, 80);
        // 19 GB of weights and 2,000 tokens of cache at 50 GB/s.
        assert!((host.decode_seconds(1.0, 2_000.0) - (19e9 + 2e8) / 50e9).abs() < 1e-12);
        // A 1,000-token prompt: two micro-batches, the weights over PCIe each time.
        assert!((host.prefill_seconds(1_000.0) - 2.0 * 19e9 / 20e9).abs() < 1e-12);
        // A 10-token prompt runs on the CPU: one read of its weights.
        assert!((host.prefill_seconds(10.0) - 19e9 / 50e9).abs() < 1e-12);
        assert_eq!(host.resident_bytes(1_000.0), 20e9 + 1e8);
    }
}
