//! A proof of concept's input and output: the model shape and settings `probe --poc` runs in
//! PyTorch, and what each run (on one GPU, then on several) measured.

use serde::{Deserialize, Serialize};

/// What the benchmark script builds and runs (its one JSON argument).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PocShape {
    pub hidden: u64,
    pub layers: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    pub ffn: u64,
    pub gated_ffn: bool,
    pub vocab: u64,
    /// `full` (fp32 weights, bf16 autocast, AdamW) or `lora` (frozen bf16 weights).
    pub task: String,
    /// The linear layers LoRA adapts (`q_proj`, …, `down_proj`).
    pub lora_targets: Vec<String>,
    pub lora_rank: u64,
    /// `bf16` or `fp16`.
    pub precision: String,
    pub micro_batch: u64,
    pub seq: u64,
    /// Recompute each layer in the backward pass.
    pub checkpointing: bool,
    pub warmup_steps: u64,
    pub steps: u64,
    /// Decode: the prompt before generating, and the tokens timed.
    pub prompt_tokens: u64,
    pub decode_tokens: u64,
    /// `cuda`; `cpu` only to check the script itself.
    pub device: String,
}

/// One run: on one GPU, or data parallel on several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PocRun {
    pub gpus: u32,
    pub device_name: String,
    /// PyTorch's version.
    pub torch: String,
    /// Training ran out of GPU memory.
    pub oom: bool,
    #[serde(default)]
    pub step_seconds: Option<f64>,
    /// Over all the GPUs.
    #[serde(default)]
    pub tokens_per_second: Option<f64>,
    /// `torch.cuda.max_memory_allocated` during training, bytes (one GPU's).
    #[serde(default)]
    pub training_peak_memory_bytes: Option<u64>,
    #[serde(default)]
    pub decode_seconds_per_token: Option<f64>,
    #[serde(default)]
    pub decode_oom: bool,
}

/// A proof of concept: the model, its shape and the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PocReport {
    /// The catalog model (`llama-3.1-8b`).
    pub model: String,
    /// The catalog task the runs stand for (`lora`, `finetune`, `pretrain`).
    pub task: String,
    pub shape: PocShape,
    pub runs: Vec<PocRun>,
}

/// Measured throughput on `n` GPUs against `n` times one GPU's.
pub fn scaling_efficiency(one: &PocRun, many: &PocRun) -> Option<f64> {
    Some(many.tokens_per_second? / (f64::from(many.gpus) * one.tokens_per_second?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(gpus: u32, tokens_per_second: f64) -> PocRun {
        PocRun {
            gpus,
            device_name: "x".into(),
            torch: "2.5".into(),
            oom: false,
            step_seconds: None,
            tokens_per_second: Some(tokens_per_second),
            training_peak_memory_bytes: None,
            decode_seconds_per_token: None,
            decode_oom: false,
        }
    }

    #[test]
    fn eight_gpus_at_seven_times_one_are_87_percent_efficient() {
        let efficiency = scaling_efficiency(&run(1, 1000.0), &run(8, 7000.0)).unwrap();
        assert!((efficiency - 0.875).abs() < 1e-12);
    }

    #[test]
    fn a_run_reads_the_scripts_output_line() {
        let line = r#"{"gpus": 1, "device_name": "NVIDIA H100 80GB HBM3", "torch": "2.5.1", "oom": false,
            "step_seconds": 0.5, "tokens_per_second": 4096.0, "training_peak_memory_bytes": 30000000000,
            "decode_seconds_per_token": 0.009}"#;
        let run: PocRun = serde_json::from_str(line).unwrap();
        assert_eq!(run.tokens_per_second, Some(4096.0));
        assert!(!run.decode_oom);
    }
}
