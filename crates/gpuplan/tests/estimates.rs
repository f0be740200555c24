//! The estimators against the world: parameter counts against published ones, and every
//! estimate kind against published measurements (`tests/validation/measurements.toml`).
//!
//! Run `cargo test -p gpuplan --test integration estimates::validation -- --nocapture` to see the report.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use gpuplan::model::{
    Architecture, Checkpointing, Engine, Framework, ImageSettings, LoraTargets, Offload, Optimizer, Precision,
    SequencePacking, Task,
};
use gpuplan::{ModelSource, WorkloadRequest, estimate_workload};
use serde::Deserialize;
use std::collections::BTreeMap;

use crate::catalog;

mod parameter_counts {
    use super::*;
    use gpuplan::estimator::parameters::count_parameters;

    /// The tolerance a published figure allows: 0.5 % of an exact count (a checkpoint's
    /// safetensors metadata, not a multiple of a million), else half a unit of the rounded
    /// figure's last significant digit, at least 1 % ("1.3B" covers 1.25–1.35B).
    fn tolerance(published: u64) -> f64 {
        if is_exact(published) {
            return 0.005;
        }
        let mut unit = 1u64;
        while published % (unit * 10) == 0 && unit < 1_000_000_000_000 {
            unit *= 10;
        }
        (unit as f64 / 2.0 / published as f64).max(0.01)
    }

    /// Whether a published count is exact rather than a rounded figure from a card or paper.
    fn is_exact(published: u64) -> bool {
        published % 1_000_000 != 0
    }

    #[test]
    fn every_transformer_matches_its_published_count() {
        let mut checked = 0;
        let mut exact = 0;
        let mut failures = Vec::new();
        for model in catalog().models().iter() {
            let (Architecture::Transformer(spec), Some(published)) = (&model.architecture, model.published_parameters)
            else {
                continue;
            };
            let counts = count_parameters(spec);
            let mut computed = counts.total;
            if model.published_counts_output_layer_twice && spec.tied_embeddings {
                computed += spec.vocab * spec.hidden;
            }
            let error = (computed as f64 - published as f64) / published as f64;
            println!(
                "{:<22} computed {computed:>16} published {published:>16} {:+.3} %",
                model.id,
                error * 100.0
            );
            if error.abs() > tolerance(published) {
                failures.push(format!(
                    "{}: computed {computed}, published {published} ({:+.2} %)",
                    model.id,
                    error * 100.0
                ));
            }
            checked += 1;
            exact += usize::from(is_exact(published));
        }
        assert!(checked >= 40, "only {checked} transformers have a published count");
        assert!(exact >= 30, "only {exact} transformers have an exact published count");
        assert!(failures.is_empty(), "{failures:#?}");
    }

    /// Architectures read from their fields, checked against published totals: OLMo 2 7B
    /// (allenai/OLMo-2-1124-7B-Instruct config.json; 7,298,617,344 in its safetensors metadata,
    /// "7B" on the card) and GLM-4-9B-0414 (its config's sizes as quoted from
    /// THUDM/GLM-4-9B-0414/blob/main/config.json; "9.4B"), DeepSeek-V2 and Command R (their
    /// model cards' totals).
    #[test]
    fn newer_architectures_count_what_their_authors_publish() {
        let olmo2 = r#"{"model_type": "olmo2", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
            "vocab_size": 100352, "tie_word_embeddings": false, "attention_bias": false,
            "max_position_embeddings": 4096}"#;
        let glm4 = r#"{"model_type": "glm4", "hidden_size": 4096, "num_hidden_layers": 40,
            "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
            "intermediate_size": 13696, "vocab_size": 151552, "attention_bias": true,
            "tie_word_embeddings": false, "max_position_embeddings": 32768}"#;
        // DeepSeek-V2 (MLA and 160 routed experts, no router bias: "236B total, 21B activated")
        // and Cohere's Command R (a parallel attention-MLP block, tied 256K embeddings: "35B").
        let deepseek_v2 = r#"{"model_type": "deepseek_v2", "hidden_size": 5120, "num_hidden_layers": 60,
            "num_attention_heads": 128, "num_key_value_heads": 128, "intermediate_size": 12288,
            "moe_intermediate_size": 1536, "n_routed_experts": 160, "n_shared_experts": 2,
            "num_experts_per_tok": 6, "first_k_dense_replace": 1, "kv_lora_rank": 512,
            "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "vocab_size": 102400, "tie_word_embeddings": false, "max_position_embeddings": 163840}"#;
        let command_r = r#"{"model_type": "cohere", "hidden_size": 8192, "num_hidden_layers": 40,
            "num_attention_heads": 64, "num_key_value_heads": 64, "intermediate_size": 22528,
            "vocab_size": 256000, "use_qk_norm": false, "tie_word_embeddings": true,
            "max_position_embeddings": 8192}"#;
        // Llama 4 Scout and Maverick (Llama4ForConditionalGeneration: text and vision configs
        // as meta-llama/Llama-4-Scout-17B-16E and -Maverick-17B-128E publish them, quoted in
        // NVIDIA/TensorRT-LLM's Llama 4 tests): "109B total" and "400B total" on the cards.
        // The count is 108,641,793,536 for Scout: 107.77 B in the language model, 0.87 B in the
        // vision encoder, adapter and projector.
        let vision = r#""vision_config": {"hidden_size": 1408, "intermediate_size": 5632, "num_hidden_layers": 34,
            "num_attention_heads": 16, "num_channels": 3, "image_size": 336, "patch_size": 14,
            "pixel_shuffle_ratio": 0.5, "projector_input_dim": 4096, "projector_output_dim": 4096,
            "vision_output_dim": 4096, "multi_modal_projector_bias": false, "model_type": "llama4_vision_model"}"#;
        let llama4 = |experts: u64, step: u64| {
            format!(
                r#"{{"model_type": "llama4", "tie_word_embeddings": false, {vision}, "text_config": {{
                "model_type": "llama4_text", "hidden_size": 5120, "num_hidden_layers": 48,
                "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
                "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_local_experts": {experts},
                "num_experts_per_tok": 1, "interleave_moe_layer_step": {step}, "vocab_size": 202048,
                "attention_chunk_size": 8192, "use_qk_norm": true, "max_position_embeddings": 1048576}}}}"#
            )
        };
        let (scout, maverick) = (llama4(16, 1), llama4(128, 2));
        let scout_spec = gpuplan::catalog::parse_hf_config_text(&scout).unwrap();
        assert_eq!(count_parameters(&scout_spec).total, 108_641_793_536);
        for (name, text, published, within) in [
            ("llama4 scout", scout.as_str(), 109e9, 0.005),
            ("llama4 maverick", maverick.as_str(), 400e9, 0.005),
            ("olmo2", olmo2, 7_298_617_344.0, 1e-6),
            ("glm4", glm4, 9.4e9, 0.006),
            ("deepseek_v2", deepseek_v2, 236e9, 0.005),
            ("cohere", command_r, 35e9, 0.005),
        ] {
            let spec = gpuplan::catalog::parse_hf_config_text(text).unwrap();
            let total = count_parameters(&spec).total as f64;
            assert!((total / published - 1.0).abs() < within, "{name}: {total}");
        }
    }

    #[test]
    fn the_library_has_at_least_40_models() {
        assert!(catalog().models().len() >= 40);
        for id in [
            "resnet-50",
            "sdxl",
            "llama-3.1-405b",
            "deepseek-v3",
            "mixtral-8x22b",
            "whisper-large-v3",
            "t0-3b",
        ] {
            assert!(catalog().models().get(id).is_ok(), "{id}");
        }
    }

    #[test]
    fn rounding_tolerance() {
        assert!((tolerance(1_300_000_000) - 0.05 / 1.3).abs() < 1e-12);
        assert_eq!(tolerance(6_738_415_616), 0.005);
        assert_eq!(tolerance(7_000_000_000), 0.5 / 7.0);
    }
}

mod validation {
    use super::*;

    /// Held-out median error of mixture-of-experts training throughput (Megatron-Bridge's
    /// DeepSeek-V3, Qwen3 and gpt-oss tables, 11.7 % today): a bar against regressions.
    const MOE_TRAINING_BAR: f64 = 0.13;

    #[derive(Deserialize)]
    struct Cases {
        case: Vec<Case>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Case {
        id: String,
        kind: String,
        model: String,
        task: String,
        gpu: String,
        gpus: u32,
        gpus_per_node: Option<u32>,
        precision: String,
        seq: u64,
        batch: u64,
        micro_batch: Option<u64>,
        tp: Option<u32>,
        pp: Option<u32>,
        /// Context-parallel degree, where the source states one above 1.
        cp: Option<u32>,
        vp: Option<u32>,
        /// Expert-parallel degree, where the source states one above 1.
        ep: Option<u32>,
        /// The expert-parallel all-to-alls overlapped, where the run's recipe says so.
        ep_overlap: Option<bool>,
        zero: Option<u8>,
        checkpointing: Option<String>,
        /// The training framework the run used, where gpuplan has a profile for it.
        framework: Option<String>,
        optimizer: Option<String>,
        /// The optimizer stepped inside the backward pass (torchtune's `optimizer_in_bwd`).
        optimizer_in_backward: Option<bool>,
        lora_rank: Option<u64>,
        /// The layers the run adapted, where its framework's default does not say.
        lora_targets: Option<String>,
        /// Training state the run kept in host memory.
        offload: Option<String>,
        /// The training step ran under torch.compile.
        compile: Option<bool>,
        /// Examples padded to `seq`, with this mean real length (unpacked fine-tuning).
        mean_seq: Option<u64>,
        tokens: Option<f64>,
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        engine: Option<String>,
        /// The kernel that ran quantised weights (`bnb-nf4`, `exllamav2`, `marlin` …).
        weight_kernel: Option<String>,
        measured: f64,
        unit: String,
        /// Why this case is not held to its kind's tolerance (it stays in the report). The one
        /// rule: the measured run used a feature gpuplan does not model, named here, or its
        /// source does not document the configuration that produced it.
        outlier: Option<String>,
        layout_source: Option<String>,
        /// `allocated` when the source reports `torch.cuda.max_memory_allocated`.
        memory_metric: Option<String>,
        node_network_gbps: Option<f64>,
        engine_source: Option<String>,
        config_source: Option<String>,
        /// Image models: pixels per side, denoising steps, classifier-free guidance, fused attention.
        resolution: Option<u64>,
        steps: Option<u64>,
        guidance: Option<bool>,
        flash_attention: Option<bool>,
        source: toml::Value,
        note: Option<String>,
    }

    /// Largest error a single case may show, per kind, before the test fails.
    fn case_tolerance(kind: &str) -> f64 {
        match kind {
            "memory" => 0.25,
            "training_throughput" | "mfu" => 0.35,
            "gpu_hours" => 0.45,
            _ => 0.60,
        }
    }

    /// Targets on the held-out medians (cases no constant was set from): memory 8 %,
    /// training throughput 12 %, GPU-hours and inference 15 %. Mixture-of-experts training is
    /// not yet within any target: its bar stands against regressions.
    fn held_out_guard(kind: &str) -> f64 {
        match kind {
            "memory" => 0.08,
            "training throughput" => 0.12,
            "MoE training throughput" => MOE_TRAINING_BAR,
            _ => 0.15,
        }
    }

    /// Targets for the in-sample median absolute error per kind.
    fn median_target(kind: &str) -> f64 {
        match kind {
            "memory" => 0.10,
            "training_throughput" | "mfu" => 0.15,
            "gpu_hours" => 0.20,
            _ => 0.25,
        }
    }

    /// Whether a case trains a mixture of experts, whose error is reported apart.
    fn trains_experts(case: &Case) -> bool {
        case.task != "inference"
            && catalog()
                .models()
                .get(&case.model)
                .ok()
                .and_then(|m| m.transformer())
                .is_some_and(|t| t.moe.is_some())
    }

    /// The report's group of a case: its kind's, with mixture-of-experts training apart.
    fn group_of(case: &Case) -> &'static str {
        match group(&case.kind) {
            "training throughput" if trains_experts(case) => "MoE training throughput",
            "training throughput" => "training throughput",
            "inference" => "inference",
            "GPU-hours" => "GPU-hours",
            "memory" => "memory",
            _ => "other",
        }
    }

    fn group(kind: &str) -> &str {
        match kind {
            "mfu" | "training_throughput" => "training throughput",
            "inference_ttft" | "inference_tpot" | "inference_throughput" | "inference_latency" => "inference",
            "gpu_hours" => "GPU-hours",
            other => other,
        }
    }

    fn engine(text: Option<&str>) -> Option<Engine> {
        match text {
            Some("megatron" | "deepspeed") | None => None,
            Some(other) => Some(other.parse().unwrap()),
        }
    }

    fn predict(case: &Case) -> Result<f64, String> {
        let task: Task = case.task.parse().unwrap();
        let mut request = WorkloadRequest::new(ModelSource::BuiltIn(case.model.clone()), task, &case.gpu);
        request.gpus = Some(case.gpus);
        request.gpus_per_node = case.gpus_per_node;
        request.precision = Some(case.precision.parse::<Precision>().unwrap());
        request.batch = Some(case.batch);
        request.micro_batch = case.micro_batch;
        request.seq = Some(case.input_tokens.unwrap_or(case.seq));
        request.output_tokens = case.output_tokens;
        request.tp = case.tp;
        request.pp = case.pp;
        request.cp = case.cp;
        request.vp = case.vp;
        request.ep = case.ep;
        request.ep_overlap = case.ep_overlap;
        request.zero = case.zero;
        request.checkpointing = case
            .checkpointing
            .as_deref()
            .map(|c| c.parse::<Checkpointing>().unwrap());
        request.optimizer = case.optimizer.as_deref().map(|o| o.parse::<Optimizer>().unwrap());
        request.optimizer_in_backward = case.optimizer_in_backward.unwrap_or(false);
        request.framework = case.framework.as_deref().map(|f| f.parse::<Framework>().unwrap());
        request.lora_rank = case.lora_rank;
        request.lora_targets = case.lora_targets.as_deref().map(|t| t.parse::<LoraTargets>().unwrap());
        request.offload = case.offload.as_deref().map(|o| o.parse::<Offload>().unwrap());
        request.compiled = case.compile.unwrap_or(false);
        request.packing = case
            .mean_seq
            .map_or(SequencePacking::Packed, |mean_tokens| SequencePacking::Padded {
                mean_tokens,
            });
        request.engine = engine(case.engine.as_deref());
        request.weight_kernel = case.weight_kernel.as_deref().map(|k| k.parse().unwrap());
        request.tokens = case.tokens;
        request.node_network_gbps = case.node_network_gbps;
        request.flash_attention = case.flash_attention;
        request.image = ImageSettings {
            resolution: case.resolution,
            denoising_steps: case.steps,
            guidance: case.guidance,
        };
        let answer = estimate_workload(catalog(), &request).map_err(|e| format!("{e} ({:?})", e.hint()))?;
        let estimate = answer.estimate;
        let gpus = f64::from(case.gpus);
        let training = estimate.training;
        let inference = estimate.inference;
        let missing = || format!("no {} estimate", case.kind);
        Ok(match (case.kind.as_str(), case.unit.as_str()) {
            ("memory", unit) => {
                let bytes = match case.memory_metric.as_deref() {
                    Some("allocated") => estimate.memory.allocated(),
                    _ => estimate.memory.per_gpu,
                };
                if unit == "gib" {
                    bytes.as_gib()
                } else {
                    bytes.as_u64() as f64
                }
            }
            (_, "mfu") => training.ok_or_else(missing)?.mfu,
            (_, "tflops_per_gpu") => {
                let training = training.ok_or_else(missing)?;
                let accelerator = catalog().accelerators().get(&case.gpu).unwrap();
                let peak = accelerator
                    .peak(case.precision.parse().unwrap())
                    .or(accelerator.peak(Precision::Fp16))
                    .unwrap();
                training.hfu * peak.as_tflops()
            }
            ("gpu_hours", _) => training.ok_or_else(missing)?.gpu_hours.ok_or_else(missing)?,
            ("training_throughput", "tokens_per_second") => training.ok_or_else(missing)?.tokens_per_second,
            ("training_throughput", "tokens_per_second_per_gpu") => {
                training.ok_or_else(missing)?.tokens_per_second / gpus
            }
            ("training_throughput", "samples_per_second") => training.ok_or_else(missing)?.samples_per_second,
            ("inference_ttft", "milliseconds") => inference.ok_or_else(missing)?.ttft_seconds * 1e3,
            ("inference_tpot", "milliseconds") => inference.ok_or_else(missing)?.tpot_seconds * 1e3,
            ("inference_throughput", "tokens_per_second") => inference.ok_or_else(missing)?.output_tokens_per_second,
            ("inference_throughput", "tokens_per_second_per_gpu") => {
                inference.ok_or_else(missing)?.output_tokens_per_second / gpus
            }
            ("inference_throughput", "samples_per_second") => inference.ok_or_else(missing)?.requests_per_second,
            ("inference_latency", "seconds") => inference.ok_or_else(missing)?.request_latency_seconds,
            ("inference_throughput", "steps_per_second") => {
                1.0 / estimate.image.and_then(|i| i.step_seconds).ok_or_else(missing)?
            }
            (kind, unit) => return Err(format!("no prediction for kind {kind} in {unit}")),
        })
    }

    fn median(values: &mut [f64]) -> f64 {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        }
    }

    /// The tables of published measurements the estimators answer to, the first one held to
    /// per-case tolerances.
    const MEASUREMENT_TABLES: [&str; 5] = [
        include_str!("validation/measurements.toml"),
        include_str!("validation/measurements-training.toml"),
        include_str!("validation/measurements-memory.toml"),
        include_str!("validation/measurements-vision.toml"),
        include_str!("validation/measurements-llamacpp.toml"),
    ];

    #[test]
    fn every_calibration_case_is_in_a_validation_table() {
        let mut ids = std::collections::BTreeSet::new();
        for table in MEASUREMENT_TABLES {
            ids.extend(toml::from_str::<Cases>(table).unwrap().case.into_iter().map(|c| c.id));
        }
        ids.extend(crate::serving_validation::every_case_id());
        for id in gpuplan::estimator::calibration::calibrated_cases() {
            assert!(
                ids.contains(id),
                "calibrated_on names {id}, which no validation table has"
            );
        }
    }

    #[test]
    fn no_case_appears_twice() {
        let mut seen = BTreeMap::new();
        for table in MEASUREMENT_TABLES {
            for case in toml::from_str::<Cases>(table).unwrap().case {
                // The same measured value for the same kind of result on the same GPU and task is
                // one data point, whatever the model is called.
                let key = (
                    case.kind.clone(),
                    case.unit.clone(),
                    case.measured.to_bits(),
                    case.gpu.clone(),
                    case.task.clone(),
                );
                assert!(
                    seen.insert(key, case.id.clone()).is_none(),
                    "{} repeats another case's measurement",
                    case.id
                );
            }
        }
    }

    #[test]
    fn estimates_match_published_measurements() {
        let mut cases: Cases = toml::from_str(MEASUREMENT_TABLES[0]).unwrap();
        // The first table's cases are held to per-case tolerances and the targets; the later
        // files were gathered as held-out evidence and are measured by their medians.
        let first_table = cases.case.len();
        for extra in &MEASUREMENT_TABLES[1..] {
            cases.case.extend(toml::from_str::<Cases>(extra).unwrap().case);
        }
        assert!(cases.case.len() >= 190, "{} cases", cases.case.len());
        let mut report =
            String::from("| case | kind | GPU | measured | predicted | error |\n|---|---|---|---:|---:|---:|\n");
        let mut errors: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        let mut all_errors: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        let mut held_out: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        let mut in_sample: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        let mut failures = Vec::new();
        let mut gpus = std::collections::BTreeSet::new();
        let mut residuals: Vec<intervals::Residual> = Vec::new();
        // In-sample: the cases some constant of the calibration data was set from.
        let calibrated = gpuplan::estimator::calibration::calibrated_cases();
        for (index, case) in cases.case.iter().enumerate() {
            let in_first_table = index < first_table;
            gpus.insert(case.gpu.clone());
            let predicted = match predict(case) {
                Ok(value) => value,
                Err(error) => {
                    failures.push(format!("{}: {error}", case.id));
                    continue;
                }
            };
            let error = (predicted - case.measured) / case.measured;
            let flag = if case.outlier.is_some() { " (outlier)" } else { "" };
            report.push_str(&format!(
                "| {}{flag} | {} | {} | {} | {:.4} | {:+.1} % |\n",
                case.id,
                case.kind,
                case.gpu,
                case.measured,
                predicted,
                error * 100.0
            ));
            if in_first_table {
                all_errors.entry(group_of(case)).or_default().push(error.abs());
            }
            if case.outlier.is_none() {
                if in_first_table {
                    errors.entry(group_of(case)).or_default().push(error.abs());
                }
                if calibrated.contains(case.id.as_str()) {
                    in_sample.entry(group_of(case)).or_default().push(error.abs());
                } else {
                    held_out.entry(group_of(case)).or_default().push(error.abs());
                    residuals.extend(intervals::Residual::of(
                        &case.id,
                        if group_of(case) == "MoE training throughput" {
                            "moe_training"
                        } else {
                            &case.kind
                        },
                        (case.gpus, case.gpus_per_node.unwrap_or(8)),
                        case.measured / predicted,
                    ));
                }
            }
            if in_first_table && case.outlier.is_none() && error.abs() > case_tolerance(&case.kind) {
                failures.push(format!(
                    "{}: predicted {predicted:.4}, measured {} {} ({:+.1} %)",
                    case.id,
                    case.measured,
                    case.unit,
                    error * 100.0
                ));
            }
        }
        report.push_str(
            "\n| kind | first table: cases (outliers) | median absolute error | with outliers | in-sample (cases) | held out (cases) | held-out target |\n|---|---:|---:|---:|---:|---:|---:|\n",
        );
        let mut medians = Vec::new();
        let mut held_medians = Vec::new();
        // Groups with held-out cases only (mixture-of-experts training) are reported too.
        for kind in held_out.keys() {
            errors.entry(kind).or_default();
        }
        for (kind, values) in &mut errors {
            let target = median_target(match *kind {
                "training throughput" | "MoE training throughput" => "mfu",
                "GPU-hours" => "gpu_hours",
                "inference" => "inference",
                other => other,
            });
            let first = (!values.is_empty()).then(|| median(values));
            let value = first.unwrap_or(0.0);
            let all = all_errors.get_mut(kind).map(|v| median(v)).unwrap_or(value);
            let outliers = all_errors.get(kind).map_or(0, Vec::len) - values.len();
            let held = held_out.get_mut(kind);
            let held_cases = held.as_ref().map_or(0, |v| v.len());
            let held_median = held.filter(|v| !v.is_empty()).map(|v| median(v));
            let fitted = in_sample.get_mut(kind);
            let fitted_cases = fitted.as_ref().map_or(0, |v| v.len());
            let fitted_median = fitted.filter(|v| !v.is_empty()).map(|v| median(v));
            let percent = |m: Option<f64>| m.map_or("–".to_string(), |m| format!("{:.1} %", m * 100.0));
            report.push_str(&format!(
                "| {kind} | {} ({outliers}) | {} | {} | {} ({fitted_cases}) | {} ({held_cases}) | {:.0} % |\n",
                values.len() + outliers,
                percent(first),
                percent(first.map(|_| all)),
                percent(fitted_median),
                percent(held_median),
                held_out_guard(kind) * 100.0
            ));
            if first.is_some() {
                medians.push((kind.to_string(), value, target));
            }
            if let Some(held) = held_median {
                held_medians.push((kind.to_string(), held));
            }
        }
        println!("{report}");
        intervals::check(&residuals);
        assert!(gpus.len() >= 5, "{gpus:?}");
        assert!(failures.is_empty(), "{failures:#?}");
        for (kind, held) in held_medians {
            let guard = held_out_guard(&kind);
            assert!(
                held <= guard,
                "held-out median error of {kind} is {:.1} %, above {:.0} %",
                held * 100.0,
                guard * 100.0
            );
        }
        for (kind, value, target) in medians {
            assert!(
                value <= target,
                "median error of {kind} is {:.1} %, target {:.0} %",
                value * 100.0,
                target * 100.0
            );
        }
    }
}

/// The 80 % intervals every estimate states, learned from the held-out residuals (split
/// conformal: quantiles set on one half of the cases, coverage checked on the other).
pub(crate) mod intervals {
    use gpuplan::estimator::calibration::calibration;
    use gpuplan::model::fitted::{IntervalKind, Regime};

    /// One held-out case: what it measures, on how many GPUs, and the measured speed (or
    /// memory) over the estimated one.
    pub struct Residual {
        pub id: String,
        pub kind: IntervalKind,
        pub regime: Regime,
        pub ratio: f64,
    }

    impl Residual {
        pub fn of(id: &str, kind: &str, (gpus, per_node): (u32, u32), ratio: f64) -> Option<Residual> {
            let (kind, ratio) = match kind {
                "memory" => (IntervalKind::Memory, ratio),
                "training_throughput" | "mfu" => (IntervalKind::Training, ratio),
                "moe_training" => (IntervalKind::MoeTraining, ratio),
                "gpu_hours" => (IntervalKind::Training, 1.0 / ratio),
                "inference_throughput" => (IntervalKind::Inference, ratio),
                "inference_ttft" | "inference_tpot" | "inference_latency" => (IntervalKind::Inference, 1.0 / ratio),
                "serving_capacity" => (IntervalKind::ServingCapacity, ratio),
                "moe_serving_capacity" => (IntervalKind::MoeServingCapacity, ratio),
                _ => return None,
            };
            (ratio.is_finite() && ratio > 0.0).then(|| Residual {
                id: id.to_string(),
                kind,
                regime: Regime::of(gpus, per_node),
                ratio,
            })
        }
    }

    /// The split-conformal bounds of a two-sided 80 % interval from `sorted` ratios: the
    /// ⌊0.1 (n + 1)⌋-th and ⌈0.9 (n + 1)⌉-th smallest (Lei et al. 2018), which cover at least
    /// 80 % of new cases from the same distribution, where plain percentiles of a small sample
    /// cover less.
    fn bounds(sorted: &[f64]) -> (f64, f64) {
        let n = sorted.len() as f64;
        let low = ((0.1 * (n + 1.0)).floor() as usize).max(1) - 1;
        let high = ((0.9 * (n + 1.0)).ceil() as usize).min(sorted.len()) - 1;
        (sorted[low], sorted[high])
    }

    /// The chance that a new case falls between the bounds [`bounds`] takes from `n` sorted
    /// ratios: (hi − lo)/(n + 1) for exchangeable cases, where lo and hi are their ranks. The
    /// conservative ranks put it at 80 % or more, most above it for small groups (85.7 % for
    /// 13, 82.6 % for 22).
    fn promised_coverage(n: usize) -> f64 {
        let n = n as f64;
        let low = (0.1 * (n + 1.0)).floor().max(1.0);
        let high = (0.9 * (n + 1.0)).ceil().min(n);
        (high - low) / (n + 1.0)
    }

    /// Every interval in the calibration data of a kind among `residuals` is the 10th–90th
    /// percentile of its fit half, and the intervals cover the other half as the bounds
    /// promise: within two binomial standard deviations of the split-conformal coverage for
    /// these group sizes, and never under 75 %.
    pub fn check(residuals: &[Residual]) {
        let data: Vec<_> = calibration()
            .intervals
            .iter()
            .filter(|d| residuals.iter().any(|r| r.kind == d.kind))
            .collect();
        let mut covered = 0usize;
        let mut checked = 0usize;
        let mut promised = 0.0;
        let mut table = String::new();
        let mut stale = Vec::new();
        for entry in &data {
            // Each case in one group: its regime's own entry, else its kind's.
            let specific = |r: &Residual| data.iter().any(|d| d.kind == r.kind && d.regime == Some(r.regime));
            let mut group: Vec<&Residual> = residuals
                .iter()
                .filter(|r| {
                    r.kind == entry.kind
                        && match entry.regime {
                            Some(regime) => regime == r.regime,
                            None => !specific(r),
                        }
                })
                .collect();
            group.sort_by(|a, b| a.id.cmp(&b.id));
            // Even positions set the bounds, odd ones check them.
            let half = |parity: usize| group.iter().skip(parity).step_by(2).map(|r| r.ratio);
            let held: Vec<f64> = half(1).collect();
            let mut ratios: Vec<f64> = half(0).collect();
            ratios.sort_by(f64::total_cmp);
            assert!(
                ratios.len() >= 8,
                "{:?} {:?}: only {} cases",
                entry.kind,
                entry.regime,
                ratios.len()
            );
            let (low, high) = bounds(&ratios);
            table.push_str(&format!(
                "{:?} {:?}: {:.3}–{:.3} from {} cases (data {:.3}–{:.3})\n",
                entry.kind,
                entry.regime,
                low,
                high,
                ratios.len(),
                entry.low,
                entry.high
            ));
            if (entry.low - low).abs() >= 0.005 || (entry.high - high).abs() >= 0.005 || entry.cases != ratios.len() {
                stale.push(format!("{:?} {:?}", entry.kind, entry.regime));
            }
            checked += held.len();
            covered += held.iter().filter(|r| (entry.low..=entry.high).contains(*r)).count();
            promised += held.len() as f64 * promised_coverage(ratios.len());
        }
        let coverage = covered as f64 / checked as f64;
        let expected = promised / checked as f64;
        let sigma = (expected * (1.0 - expected) / checked as f64).sqrt();
        println!(
            "80 % intervals, held-out residuals:\n{table}coverage on the other half: {:.1} % of {checked} (the bounds promise {:.1} % ± {:.1})",
            coverage * 100.0,
            expected * 100.0,
            2.0 * sigma * 100.0
        );
        assert!(
            stale.is_empty(),
            "the calibration data's intervals are not the residuals' ({stale:?}):\n{table}"
        );
        assert!(
            coverage >= 0.75 && (coverage - expected).abs() <= 2.0 * sigma,
            "coverage {:.1} %, promised {:.1} % ± {:.1}",
            coverage * 100.0,
            expected * 100.0,
            2.0 * sigma * 100.0
        );
    }
}

fn request(model: &str, task: &str, gpu: &str) -> WorkloadRequest {
    WorkloadRequest::new(ModelSource::BuiltIn(model.to_string()), task.parse().unwrap(), gpu)
}

mod formulas {
    use super::*;

    #[test]
    fn llama_2_7b_weights_in_bf16_are_13_5_gb() {
        let mut r = request("llama-2-7b", "inference", "A100-80GB");
        r.precision = Some(Precision::Bf16);
        let answer = estimate_workload(catalog(), &r).unwrap();
        let weights = answer.estimate.memory.weights.as_u64() as f64;
        assert!((weights / 1e9 - 13.48).abs() < 0.01, "{weights}");
    }

    #[test]
    fn int4_weights_are_about_a_quarter_of_bf16() {
        let weights = |precision| {
            let mut r = request("llama-2-70b", "inference", "H100");
            r.precision = Some(precision);
            estimate_workload(catalog(), &r)
                .unwrap()
                .estimate
                .memory
                .weights
                .as_u64() as f64
        };
        let ratio = weights(Precision::Int4) / weights(Precision::Bf16);
        assert!((0.26..0.29).contains(&ratio), "{ratio}");
    }

    #[test]
    fn zero_3_model_state_scales_one_over_n() {
        let state = |gpus: u32| {
            let mut r = request("llama-2-7b", "finetune", "H100");
            r.gpus = Some(gpus);
            r.zero = Some(3);
            r.tp = Some(1);
            r.pp = Some(1);
            r.micro_batch = Some(1);
            r.batch = Some(u64::from(gpus));
            let m = estimate_workload(catalog(), &r).unwrap().estimate.memory;
            (m.optimizer.as_u64() + m.gradients.as_u64()) as f64
        };
        let ratio = state(2) / state(8);
        assert!((ratio - 4.0).abs() < 1e-6, "{ratio}");
    }

    #[test]
    fn kv_cache_of_llama_3_70b_is_gqa_sized() {
        // 80 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes = 327,680 bytes per token.
        let mut r = request("llama-3-70b", "inference", "H100");
        r.gpus = Some(4);
        r.tp = Some(4);
        r.batch = Some(1);
        r.seq = Some(1000);
        r.output_tokens = Some(24);
        let kv = estimate_workload(catalog(), &r)
            .unwrap()
            .estimate
            .memory
            .kv_cache
            .as_u64();
        assert_eq!(kv, 327_680 * 1024 / 4);
    }
    #[test]
    fn an_mi300x_keeps_no_attention_scores_as_an_h100_keeps_none() {
        // FlashAttention-2 has a ROCm build for the MI200 and MI300 series; training at 8K
        // tokens on an MI300X keeps the same activations as on an H100, not a score matrix
        // per head and layer (32 GiB more for an 8B model at micro-batch 1).
        let activations = |gpu: &str| {
            let mut r = request("llama-3.1-8b", "pretrain", gpu);
            r.gpus = Some(8);
            r.seq = Some(8192);
            r.micro_batch = Some(1);
            r.checkpointing = Some(Checkpointing::None);
            let answer = estimate_workload(catalog(), &r).unwrap();
            let chosen = answer
                .defaults
                .iter()
                .any(|d| d.field == gpuplan::Field::FlashAttention && d.value == "true");
            assert!(chosen, "{gpu}: {:?}", answer.defaults);
            answer.estimate.memory.activations.as_u64()
        };
        assert_eq!(activations("MI300X"), activations("H100"));
    }
}

mod parallelism {
    use super::*;

    fn training(model: &str, gpus: u32, cp: Option<u32>, ep: Option<u32>) -> gpuplan::estimator::Estimate {
        let mut r = request(model, "finetune", "H100");
        r.gpus = Some(gpus);
        r.tp = Some(1);
        r.pp = Some(1);
        r.zero = Some(1);
        r.cp = cp;
        r.ep = ep;
        r.seq = Some(8192);
        r.micro_batch = Some(1);
        r.batch = Some(u64::from(gpus / cp.unwrap_or(1)));
        r.checkpointing = Some(Checkpointing::None);
        estimate_workload(catalog(), &r).unwrap().estimate
    }

    #[test]
    fn context_parallelism_splits_the_activations() {
        let whole = training("llama-3.1-8b", 8, None, None).memory.activations.as_u64() as f64;
        let split = training("llama-3.1-8b", 8, Some(4), None).memory.activations.as_u64() as f64;
        assert!((whole / split - 4.0).abs() < 0.01, "{}", whole / split);
    }

    /// Context-parallel ranks hold the same weights as their replica, so ZeRO shards over them
    /// too (Megatron's distributed optimizer over the data-parallel-with-context group): on 8
    /// GPUs the optimizer state is split 8 ways with CP 4 × DP 2 as with DP 8.
    #[test]
    fn zero_shards_over_the_context_parallel_ranks_too() {
        let optimizer = |cp| training("llama-3.1-8b", 8, cp, None).memory.optimizer.as_u64();
        assert_eq!(optimizer(Some(4)), optimizer(None));
    }

    /// Without an offering's network, a Hopper or Blackwell node has one 400 Gb/s NIC a GPU
    /// (DGX: eight; a GB200 NVL72 compute tray: four), so 256 GB200s spread over trays of four
    /// or counted eight to a node reach each other at the same rate, and plain data parallelism
    /// of an 8B model over them spends the same time communicating.
    #[test]
    fn the_default_network_is_a_nic_per_gpu_whatever_the_node_size() {
        let step = |per_node: u32| {
            let mut r = request("llama-3.1-8b", "pretrain", "GB200");
            (r.gpus, r.gpus_per_node, r.tp, r.pp) = (Some(256), Some(per_node), Some(1), Some(1));
            (r.seq, r.batch, r.micro_batch) = (Some(4096), Some(256), Some(1));
            let training = estimate_workload(catalog(), &r).unwrap().estimate.training.unwrap();
            (training.step_seconds, training.communication_seconds)
        };
        let ((four, communication), (eight, _)) = (step(4), step(8));
        assert!(communication > 0.1 * four, "{communication} s of a {four} s step");
        assert!((four / eight - 1.0).abs() < 1e-6, "{four} s against {eight} s");
    }

    /// Expert parallelism takes 7/8 of the experts' weights and gradients off each of 8 GPUs.
    /// Their optimizer states were already sharded 8 ways by ZeRO-1: with EP 8 each GPU keeps
    /// the whole states of its own experts (no other rank holds them) and an eighth of the
    /// rest, so the states per GPU stay as they were, within the rounding of the experts' split.
    #[test]
    fn expert_parallelism_spreads_the_experts() {
        let replicated = training("mixtral-8x7b", 8, None, None).memory;
        let spread = training("mixtral-8x7b", 8, None, Some(8)).memory;
        // 7/8 of the experts' weights (≈ 45B of the 46.7B parameters) leave each GPU.
        assert!(
            spread.weights.as_u64() * 4 < replicated.weights.as_u64(),
            "{:?} vs {:?}",
            spread.weights,
            replicated.weights
        );
        assert!(spread.gradients.as_u64() * 4 < replicated.gradients.as_u64());
        let ratio = spread.optimizer.as_u64() as f64 / replicated.optimizer.as_u64() as f64;
        assert!((ratio - 1.0).abs() < 0.01, "{ratio}");
    }

    /// A routed expert multiplies by a matrix as narrow as its feed-forward on one GPU: split
    /// eight ways, Qwen3-235B's 1,536-wide experts lose two thirds of the rate to their width
    /// and the prompts of a batch take longer than with the experts kept whole (expert
    /// parallelism); Mixtral's 14,336-wide experts lose none, and run at the grouped GEMMs'
    /// own rate.
    #[test]
    fn narrow_experts_multiply_slower_than_wide_ones() {
        let serve = |model: &str, gpus: u32, tp: u32, ep: u32| {
            let mut r = request(model, "inference", "H200");
            r.precision = Some(Precision::Fp8);
            (r.gpus, r.tp, r.ep) = (Some(gpus), Some(tp), Some(ep));
            (r.batch, r.seq) = (Some(8), Some(2048));
            estimate_workload(catalog(), &r).unwrap().estimate
        };
        let note = |e: &gpuplan::estimator::Estimate| {
            e.assumptions
                .iter()
                .find(|a| a.starts_with("routed experts' GEMMs"))
                .cloned()
                .unwrap_or_default()
        };
        let split = serve("qwen3-235b-a22b", 8, 8, 1);
        let whole = serve("qwen3-235b-a22b", 8, 8, 8);
        assert!(
            note(&split).contains("× 36 %") && note(&split).contains("width of 192"),
            "{}",
            note(&split)
        );
        assert!(note(&whole).contains("width of 1536"), "{}", note(&whole));
        let ttft = |e: &gpuplan::estimator::Estimate| e.inference.as_ref().unwrap().ttft_seconds;
        assert!(
            ttft(&split) > 1.25 * ttft(&whole),
            "{} vs {}",
            ttft(&split),
            ttft(&whole)
        );
        let mixtral = note(&serve("mixtral-8x7b", 1, 1, 1));
        assert!(
            mixtral.contains("× 100 %") && mixtral.contains("at 72 % of"),
            "{mixtral}"
        );
    }

    #[test]
    fn expert_parallelism_needs_experts() {
        let mut r = request("llama-2-7b", "finetune", "H100");
        r.gpus = Some(8);
        r.ep = Some(8);
        let error = estimate_workload(catalog(), &r).unwrap_err().to_string();
        assert!(error.contains("no mixture-of-experts layers"), "{error}");
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn training_memory(batch: u64, seq: u64) -> f64 {
        let mut r = request("llama-3.1-8b", "lora", "A100-80GB");
        r.batch = Some(batch);
        r.micro_batch = Some(batch);
        r.seq = Some(seq);
        r.checkpointing = Some(Checkpointing::None);
        estimate_workload(catalog(), &r)
            .unwrap()
            .estimate
            .memory
            .per_gpu
            .as_u64() as f64
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn memory_never_decreases_with_batch_or_sequence(batch in 1u64..16, seq in 64u64..8192) {
            let base = training_memory(batch, seq);
            prop_assert!(training_memory(batch + 1, seq) >= base);
            prop_assert!(training_memory(batch, seq + 64) >= base);
        }

        #[test]
        fn zero_3_model_state_never_grows_with_gpus(power in 0u32..6) {
            let state = |gpus: u32| {
                let mut r = request("llama-2-13b", "finetune", "H100");
                r.gpus = Some(gpus);
                r.zero = Some(3);
                r.tp = Some(1);
                r.pp = Some(1);
                r.micro_batch = Some(1);
                r.batch = Some(u64::from(gpus) * 4);
                let m = estimate_workload(catalog(), &r).unwrap().estimate.memory;
                m.weights.as_u64() + m.gradients.as_u64() + m.optimizer.as_u64()
            };
            let gpus = 2u32.pow(power);
            prop_assert!(state(gpus * 2) <= state(gpus));
        }
    }

    #[test]
    fn time_to_train_falls_as_gpus_are_added_until_communication_dominates() {
        let time = |gpus: u32| {
            let mut r = request("llama-2-7b", "pretrain", "H100");
            r.gpus = Some(gpus);
            r.batch = Some(1024);
            r.seq = Some(4096);
            r.tokens = Some(1e11);
            let training = estimate_workload(catalog(), &r).unwrap().estimate.training.unwrap();
            (training.time_seconds.unwrap(), training.scaling_efficiency)
        };
        let mut previous = f64::INFINITY;
        for gpus in [8, 16, 32, 64, 128, 256] {
            let (seconds, efficiency) = time(gpus);
            assert!(
                seconds < previous || efficiency < 0.5,
                "{gpus} GPUs: {seconds} s after {previous} s"
            );
            previous = seconds;
        }
    }
}

mod bad_input {
    use super::*;

    fn error_of(r: &WorkloadRequest) -> String {
        let error = estimate_workload(catalog(), r).unwrap_err();
        format!("{error} | {}", error.hint().unwrap_or_default())
    }

    #[test]
    fn zero_sizes_are_refused() {
        let mut r = request("llama-2-7b", "finetune", "H100");
        r.seq = Some(0);
        assert!(error_of(&r).contains("--seq must be at least 1"), "{}", error_of(&r));
        let mut r = request("llama-2-7b", "finetune", "H100");
        r.gpus = Some(0);
        assert!(error_of(&r).contains("--gpus must be at least 1"));
    }

    #[test]
    fn a_tensor_parallel_degree_must_divide_the_heads() {
        let mut r = request("llama-2-7b", "inference", "H100");
        r.gpus = Some(3);
        r.tp = Some(3);
        let error = error_of(&r);
        assert!(error.contains("does not divide the 32 attention heads"), "{error}");
        assert!(error.contains("--tp 1 or 2 or 4 or 8 or 16"), "{error}");
    }

    #[test]
    fn a_gpu_count_the_layout_cannot_use_is_refused() {
        let mut r = request("llama-2-7b", "finetune", "H100");
        r.gpus = Some(6);
        r.tp = Some(4);
        assert!(error_of(&r).contains("6 GPUs cannot be split"));
    }

    #[test]
    fn absurd_sizes_are_refused_not_overflowed() {
        let mut r = request("llama-2-7b", "inference", "H100");
        r.seq = Some(u64::MAX / 2);
        assert!(error_of(&r).contains("beyond any real workload"), "{}", error_of(&r));
        let mut r = request("llama-2-7b", "inference", "H100");
        r.batch = Some(u64::MAX);
        assert!(error_of(&r).contains("beyond any real workload"), "{}", error_of(&r));
    }

    #[test]
    fn bf16_training_on_a_gpu_without_bf16_says_so() {
        let mut r = request("llama-2-7b", "finetune", "V100-SXM2-16GB");
        r.precision = Some(Precision::Bf16);
        let error = error_of(&r);
        assert!(
            error.contains("no published bf16 throughput") && error.contains("fp16"),
            "{error}"
        );
    }

    #[test]
    fn an_encoder_cannot_generate() {
        let mut r = request("bert-base-uncased", "inference", "T4");
        r.output_tokens = Some(10);
        assert!(error_of(&r).contains("output-tokens 0"));
    }

    #[test]
    fn unknown_models_get_a_suggestion() {
        let r = request("llama-3.1-8", "inference", "H100");
        let error = error_of(&r);
        assert!(
            error.contains("unknown model") && error.contains("did you mean `llama-3.1-8b`"),
            "{error}"
        );
    }

    #[test]
    fn no_estimate_is_nan() {
        for (model, task, gpu) in [
            ("resnet-50", "pretrain", "A100-80GB"),
            ("bert-base-uncased", "inference", "T4"),
            ("deepseek-v3", "inference", "H200"),
            ("t5-3b", "finetune", "A100-80GB"),
            ("whisper-large-v3", "inference", "L4"),
            ("vit-l-16", "pretrain", "H100"),
            ("mixtral-8x7b", "qlora", "RTX-4090"),
        ] {
            let mut r = request(model, task, gpu);
            r.gpus = Some(if model == "deepseek-v3" { 8 } else { 1 });
            if task == "inference" && model.starts_with("bert") {
                r.output_tokens = Some(0);
            }
            let answer = estimate_workload(catalog(), &r).unwrap_or_else(|e| panic!("{model}: {e}"));
            // JSON would print a NaN as null: walk the numbers themselves.
            assert_eq!(gpuplan::emit::first_non_finite(&answer.estimate), None, "{model}");
            assert!(
                answer.estimate.training.is_some() || answer.estimate.inference.is_some(),
                "{model}: neither a training nor an inference estimate"
            );
        }
    }
}

mod diffusion {
    use super::*;

    fn sdxl(settings: ImageSettings) -> gpuplan::EstimateAnswer {
        let mut r = request("sdxl", "inference", "A100-80GB");
        r.precision = Some(Precision::Fp16);
        r.image = settings;
        estimate_workload(catalog(), &r).unwrap()
    }

    fn latency(answer: &gpuplan::EstimateAnswer) -> f64 {
        answer.estimate.inference.unwrap().request_latency_seconds
    }

    #[test]
    fn sdxl_speed_is_estimated_from_its_layers() {
        let answer = sdxl(ImageSettings::default());
        let image = answer.estimate.image.unwrap();
        assert_eq!(
            (image.resolution, image.denoising_steps, image.guidance),
            (1024, 50, true)
        );
        // 3.38 T multiply-accumulates per pass at 1024×1024, attention included.
        assert!(
            (image.unet_flops_per_pass / 6.76e12 - 1.0).abs() < 0.01,
            "{}",
            image.unet_flops_per_pass
        );
        assert!(
            latency(&answer) > 3.0 && latency(&answer) < 10.0,
            "{}",
            latency(&answer)
        );
    }

    #[test]
    fn fewer_steps_no_guidance_and_smaller_images_are_faster() {
        let reference = latency(&sdxl(ImageSettings::default()));
        let steps = |n| {
            latency(&sdxl(ImageSettings {
                denoising_steps: Some(n),
                ..ImageSettings::default()
            }))
        };
        assert!(steps(25) < reference && steps(25) > reference / 2.5);
        let unguided = latency(&sdxl(ImageSettings {
            guidance: Some(false),
            ..ImageSettings::default()
        }));
        assert!(unguided < reference * 0.7, "{unguided} vs {reference}");
        let small = latency(&sdxl(ImageSettings {
            resolution: Some(512),
            ..ImageSettings::default()
        }));
        // A 4× smaller latent leaves SDXL bound by PyTorch's kernel launches, not compute.
        assert!(small < reference * 0.7, "{small} vs {reference}");
    }

    #[test]
    fn materialised_attention_costs_memory_and_time() {
        let mut r = request("sdxl", "inference", "A100-80GB");
        r.batch = Some(4);
        let fused = estimate_workload(catalog(), &r).unwrap();
        r.flash_attention = Some(false);
        let vanilla = estimate_workload(catalog(), &r).unwrap();
        assert!(vanilla.estimate.memory.activations > fused.estimate.memory.activations);
        assert!(latency(&vanilla) > latency(&fused));
    }

    #[test]
    fn fine_tuning_the_unet_counts_its_gradients_and_optimizer_only() {
        let mut r = request("stable-diffusion-1.5", "finetune", "A100-80GB");
        r.batch = Some(8);
        let answer = estimate_workload(catalog(), &r).unwrap();
        let estimate = answer.estimate;
        assert_eq!(estimate.parameters.trainable, 859_520_964);
        // Mixed-precision AdamW: 12 bytes of optimizer state per trainable parameter.
        let optimizer = estimate.memory.optimizer.as_u64() as f64;
        assert!((optimizer / (12.0 * 859_520_964.0) - 1.0).abs() < 0.01, "{optimizer}");
        assert!(estimate.training.unwrap().samples_per_second > 1.0);
    }

    #[test]
    fn a_resolution_the_vae_cannot_take_is_refused() {
        let mut r = request("sdxl", "inference", "A100-80GB");
        r.image.resolution = Some(1020);
        let error = estimate_workload(catalog(), &r).unwrap_err().to_string();
        assert!(error.contains("resolution") && error.contains("1020"), "{error}");
        r.image.resolution = Some(1024);
        r.image.denoising_steps = Some(0);
        let error = estimate_workload(catalog(), &r).unwrap_err().to_string();
        assert!(error.contains("denoising steps"), "{error}");
    }

    #[test]
    fn every_built_in_diffusion_transformer_walks_to_its_published_count() {
        use gpuplan::estimator::dit_flops::dit_pass;
        let mut checked = 0;
        for model in catalog().models().iter() {
            let gpuplan::model::Architecture::Cited(spec) = &model.architecture else {
                continue;
            };
            let Some(transformer) = &spec.transformer else {
                continue;
            };
            let published = spec
                .components
                .iter()
                .find(|(name, _)| name == "transformer")
                .map(|(_, p)| *p);
            assert_eq!(
                Some(dit_pass(transformer, 128, 128).parameters),
                published,
                "{}",
                model.id
            );
            checked += 1;
        }
        assert!(checked >= 4, "{checked}");
    }

    #[test]
    fn flux_dev_runs_one_pass_a_step_and_sd3_two() {
        // FLUX.1-dev's guidance is an input of the transformer; SD3 runs classifier-free
        // guidance, a batch of two per step. Both default to 28 steps at 1024 px.
        let flux = estimate_workload(catalog(), &request("flux.1-dev", "inference", "H100")).unwrap();
        let sd3 = estimate_workload(catalog(), &request("sd3-medium", "inference", "H100")).unwrap();
        let (f, s) = (flux.estimate.image.unwrap(), sd3.estimate.image.unwrap());
        assert_eq!((f.resolution, f.denoising_steps, f.guidance), (1024, 28, false));
        assert_eq!((s.resolution, s.denoising_steps, s.guidance), (1024, 28, true));
        // FLUX.1-dev's 12 B transformer costs 74 TFLOPs a pass at 1024 px: 59.5 in its linear
        // layers (as diffusers' benchmark counts) and 14.9 in attention over 4,608 tokens.
        assert!(
            (f.unet_flops_per_pass / 74.39e12 - 1.0).abs() < 0.005,
            "{}",
            f.unet_flops_per_pass
        );
        // schnell's 4 steps make it seven times faster than dev's 28.
        let schnell = estimate_workload(catalog(), &request("flux.1-schnell", "inference", "H100")).unwrap();
        let ratio = latency(&flux) / latency(&schnell);
        assert!(ratio > 6.0 && ratio < 7.5, "{ratio}");
    }

    #[test]
    fn flux_dev_in_bf16_needs_a_48_gb_card_and_eager_pytorch_is_slower_than_compiled() {
        // Its 16.9 B parameters (transformer, T5-XXL, CLIP, VAE) take 31.4 GiB in bf16: an
        // experienced engineer knows it does not fit a 24 GB RTX 4090 without offloading or
        // quantising, and does fit a 48 GB L40S.
        let on = |gpu: &str| estimate_workload(catalog(), &request("flux.1-dev", "inference", gpu)).unwrap();
        assert!(!on("RTX-4090").estimate.memory.fits());
        assert!(on("L40S").estimate.memory.fits());
        let weights = on("H100").estimate.memory.weights.as_u64() as f64 / (1u64 << 30) as f64;
        assert!((weights - 31.4).abs() < 0.1, "{weights}");
        // Eager PyTorch runs each norm, modulation and rotary embedding as its own kernel over
        // the whole activation; torch.compile fuses them (diffusers-torchao on an H100: 6.57 s
        // against 4.21 s for 28 steps).
        let mut r = request("flux.1-dev", "inference", "H100");
        let eager = latency(&estimate_workload(catalog(), &r).unwrap());
        r.engine = Some(gpuplan::model::Engine::TorchCompile);
        let compiled = latency(&estimate_workload(catalog(), &r).unwrap());
        assert!(eager / compiled > 1.4 && eager / compiled < 1.8, "{eager} / {compiled}");
    }

    #[test]
    fn a_pasted_diffusion_transformer_config_is_its_denoiser_alone_and_says_so() {
        // FLUX.1-dev's transformer/config.json on its own: the same passes as the built-in
        // pipeline, but only the transformer's 11.9 B weights, and the answer says the text
        // encoders and the VAE are not counted.
        let file: serde_json::Value =
            serde_json::from_str(include_str!("../../gpuplan-catalog/data/models/flux.1-dev.json")).unwrap();
        let pasted = ModelSource::Config {
            name: "transformer/config.json".into(),
            text: file["vision"]["transformer_config"].to_string(),
            checkpoint_index: None,
        };
        let answer = estimate_workload(catalog(), &WorkloadRequest::new(pasted, Task::Inference, "H100")).unwrap();
        let built_in = estimate_workload(catalog(), &request("flux.1-dev", "inference", "H100")).unwrap();
        assert_eq!(answer.estimate.parameters.total, 11_901_408_320);
        assert_eq!(
            answer.estimate.image.unwrap().unet_flops_per_pass,
            built_in.estimate.image.unwrap().unet_flops_per_pass
        );
        let said = answer.estimate.assumptions.join("\n");
        assert!(said.contains("text encoders") && said.contains("not counted"), "{said}");
        assert!(said.contains("no VAE config"), "{said}");
    }

    #[test]
    fn a_diffusion_transformer_needs_a_resolution_its_patches_divide() {
        // 8 pixels a latent pixel, 2 latent pixels a patch: 1,032 px is a multiple of 8, not of 16.
        let mut r = request("flux.1-dev", "inference", "H100");
        r.image.resolution = Some(1032);
        let error = estimate_workload(catalog(), &r).unwrap_err().to_string();
        assert!(error.contains("multiple of 16") && error.contains("1032"), "{error}");
    }
}

mod convnets {
    //! The ResNet layer walk, against what NVIDIA's own recipes and engines show.
    use super::*;

    fn resnet(task: Task, gpu: &str, precision: Precision, batch: u64) -> WorkloadRequest {
        let mut r = WorkloadRequest::new(ModelSource::BuiltIn("resnet-50".into()), task, gpu);
        r.precision = Some(precision);
        r.batch = Some(batch);
        if task.is_training() {
            r.micro_batch = Some(batch);
        }
        r
    }

    /// A detector at batch 1 leaves most of a GPU idle on its small maps; a batch of 32 images
    /// fills it, so each image costs far less, while the parameters stay Ultralytics' count.
    #[test]
    fn a_yolo_detector_serves_a_batch_cheaper_per_image_than_one_image() {
        let at = |batch: u64| {
            let mut r = WorkloadRequest::new(
                ModelSource::BuiltIn("yolov8s".into()),
                Task::Inference,
                "A100-SXM4-40GB",
            );
            r.precision = Some(Precision::Fp16);
            r.engine = Some(gpuplan::model::Engine::Tensorrt);
            r.batch = Some(batch);
            estimate_workload(catalog(), &r).unwrap().estimate
        };
        let (one, batch) = (at(1), at(32));
        assert_eq!(one.parameters.total, 11_166_560);
        let latency = |e: &gpuplan::estimator::Estimate| e.inference.as_ref().unwrap().request_latency_seconds;
        // Ultralytics measures 1.20 ms for one image on an A100 with TensorRT.
        assert!((0.0006..0.0018).contains(&latency(&one)), "{} s", latency(&one));
        assert!(
            latency(&batch) / 32.0 < 0.5 * latency(&one),
            "{} s for 32",
            latency(&batch)
        );
        assert!(
            one.assumptions
                .iter()
                .any(|a| a.contains("SiLU") || a.contains("W/(W +"))
        );
    }

    /// DeepLearningExamples trains ResNet-50 with AMP at batch 256 on a 16 GB V100.
    #[test]
    fn nvidias_recipe_fits_a_16_gb_v100() {
        let answer = estimate_workload(
            catalog(),
            &resnet(Task::Pretrain, "V100-SXM2-16GB", Precision::Fp16, 256),
        )
        .unwrap();
        let memory = answer.estimate.memory;
        assert!(
            memory.per_gpu < memory.capacity,
            "{} of {}",
            memory.per_gpu,
            memory.capacity
        );
        let per_image = memory.activations.as_u64() as f64 / 256.0 / 1e6;
        assert!((30.0..60.0).contains(&per_image), "{per_image} MB per image");
    }

    #[test]
    fn fp32_convolutions_run_as_tf32_on_ampere() {
        let a100 = estimate_workload(
            catalog(),
            &resnet(Task::Pretrain, "A100-SXM4-80GB", Precision::Fp32, 256),
        )
        .unwrap();
        assert!(a100.estimate.assumptions.iter().any(|a| a.contains("TF32")));
        let v100 = estimate_workload(
            catalog(),
            &resnet(Task::Pretrain, "V100-SXM2-16GB", Precision::Fp32, 112),
        )
        .unwrap();
        let speed = |a: &gpuplan::EstimateAnswer| a.estimate.training.unwrap().samples_per_second;
        assert!(speed(&a100) > 2.0 * speed(&v100));
    }

    /// TensorRT folds batch norm into the convolutions and runs them in int8: several times
    /// the images per second of PyTorch eager in fp16 on the same T4 (MLPerf and
    /// DeepLearningExamples tables).
    #[test]
    fn int8_tensorrt_serves_several_times_more_than_eager_fp16() {
        let eager = estimate_workload(catalog(), &resnet(Task::Inference, "T4", Precision::Fp16, 128)).unwrap();
        let mut r = resnet(Task::Inference, "T4", Precision::Int8, 128);
        r.engine = Some(Engine::Tensorrt);
        let tensorrt = estimate_workload(catalog(), &r).unwrap();
        let rate = |a: &gpuplan::EstimateAnswer| a.estimate.inference.unwrap().requests_per_second;
        assert!(
            rate(&tensorrt) > 2.5 * rate(&eager),
            "{} against {}",
            rate(&tensorrt),
            rate(&eager)
        );
    }

    #[test]
    fn twice_the_resolution_costs_about_four_times_as_much() {
        let run = |side| {
            let mut r = resnet(Task::Inference, "A100-SXM4-80GB", Precision::Fp16, 256);
            r.image.resolution = Some(side);
            estimate_workload(catalog(), &r)
                .unwrap()
                .estimate
                .inference
                .unwrap()
                .requests_per_second
        };
        let ratio = run(224) / run(448);
        assert!((3.5..4.5).contains(&ratio), "{ratio}");
    }

    #[test]
    fn an_image_too_small_for_five_halvings_is_refused() {
        let mut r = resnet(Task::Inference, "A100-SXM4-80GB", Precision::Fp16, 1);
        r.image.resolution = Some(16);
        assert!(estimate_workload(catalog(), &r).is_err());
    }
}

/// A quantised checkpoint is served as it is stored: an AWQ Qwen3-8B is estimated in int4
/// (under half its bf16 weights: its 1.2 B embedding and output-head parameters stay in 16
/// bits) and says the precision came from its
/// `quantization_config`; a bitsandbytes 4-bit one also runs bitsandbytes' kernel, which
/// decodes slower than the bf16 model; gpt-oss defaults to its MXFP4; a format gpuplan does
/// not model asks for the precision instead of guessing; a precision given wins.
#[test]
fn quantised_checkpoints_are_estimated_in_their_stored_format() {
    let file: serde_json::Value =
        serde_json::from_str(include_str!("../../gpuplan-catalog/data/models/qwen3-8b.json")).unwrap();
    let with = |quantization: serde_json::Value| {
        let mut config = file["config"].clone();
        config["quantization_config"] = quantization;
        ModelSource::Config {
            name: "qwen3-8b-quantised".into(),
            text: config.to_string(),
            checkpoint_index: None,
        }
    };
    let run = |model: ModelSource, precision: Option<Precision>| {
        let mut r = WorkloadRequest::new(model, Task::Inference, "A100-SXM4-80GB");
        (r.batch, r.seq, r.output_tokens, r.precision) = (Some(1), Some(512), Some(128), precision);
        r.engine = Some(gpuplan::model::Engine::Pytorch);
        estimate_workload(catalog(), &r)
    };
    let bf16 = run(ModelSource::BuiltIn("qwen3-8b".into()), None).unwrap();
    let awq = run(
        with(serde_json::json!({"quant_method": "awq", "bits": 4, "group_size": 128})),
        None,
    )
    .unwrap();
    let weights = |a: &gpuplan::EstimateAnswer| a.estimate.memory.weights.as_gib();
    assert!(
        weights(&awq) < 0.45 * weights(&bf16),
        "{} vs {}",
        weights(&awq),
        weights(&bf16)
    );
    assert!(
        awq.defaults
            .iter()
            .any(|d| d.field == gpuplan::Field::Precision && d.why.contains("quantization_config (awq)")),
        "{:?}",
        awq.defaults
    );
    let nf4 = run(
        with(serde_json::json!({"quant_method": "bitsandbytes", "load_in_4bit": true})),
        None,
    )
    .unwrap();
    let per_token = |a: &gpuplan::EstimateAnswer| a.estimate.inference.as_ref().unwrap().tpot_seconds;
    assert!(
        per_token(&nf4) > per_token(&bf16),
        "bitsandbytes' 4-bit kernel decodes slower than bf16 at batch 1"
    );
    let oss = run(ModelSource::BuiltIn("gpt-oss-20b".into()), None).unwrap();
    assert!(
        oss.defaults
            .iter()
            .any(|d| d.field == gpuplan::Field::Precision && d.value == "fp4")
    );
    let unknown = run(with(serde_json::json!({"quant_method": "hqq"})), None).unwrap_err();
    assert_eq!(unknown.exit_status(), gpuplan::ExitStatus::Error);
    let given = run(
        with(serde_json::json!({"quant_method": "awq", "bits": 4})),
        Some(Precision::Bf16),
    )
    .unwrap();
    assert!((weights(&given) - weights(&bf16)).abs() < 0.01 * weights(&bf16));
}

/// Attention data parallelism on a mixture of experts, as an engineer expects it: each GPU
/// keeps its own sequences' whole KV cache (DeepSeek's MLA cache is repeated on every GPU of a
/// tensor-parallel replica, so this cuts the cache per GPU by the replica's size), pays for the
/// attention weights on every GPU, and so holds more sequences; it does not apply to a dense
/// model or to one GPU, and it places the experts itself.
mod attention_data_parallel {
    use super::*;

    fn deepseek(attention_dp: bool) -> gpuplan::EstimateAnswer {
        let mut r = request("deepseek-v3", "inference", "H200-SXM-141GB");
        r.gpus = Some(8);
        r.precision = Some(Precision::Fp8);
        r.seq = Some(3200);
        r.output_tokens = Some(800);
        r.attention_dp = Some(attention_dp);
        estimate_workload(catalog(), &r).unwrap()
    }

    #[test]
    fn the_cache_is_split_the_attention_weights_are_not_and_more_sequences_fit() {
        let (tp, dp) = (deepseek(false), deepseek(true));
        let kv = |a: &gpuplan::EstimateAnswer| a.estimate.serving_cost.unwrap().kv_bytes_per_token;
        assert!(
            (kv(&tp) / kv(&dp) - 8.0).abs() < 1e-9,
            "MLA cache: {} against {}",
            kv(&tp),
            kv(&dp)
        );
        let weights = |a: &gpuplan::EstimateAnswer| a.estimate.memory.weights.as_u64() as f64;
        assert!(
            weights(&dp) > weights(&tp) * 1.1,
            "the attention weights are whole on every GPU"
        );
        let sequences = |a: &gpuplan::EstimateAnswer| a.estimate.inference.unwrap().max_concurrent_sequences;
        assert!(
            sequences(&dp) > 2 * sequences(&tp),
            "{} against {}",
            sequences(&dp),
            sequences(&tp)
        );
        assert!(
            dp.estimate
                .assumptions
                .iter()
                .any(|a| a.contains("attention data parallel"))
        );
    }

    #[test]
    fn it_applies_to_a_replica_of_experts_only() {
        let mut dense = request("llama-3.1-70b", "inference", "H100-SXM5-80GB");
        dense.gpus = Some(4);
        dense.attention_dp = Some(true);
        let error = estimate_workload(catalog(), &dense).unwrap_err();
        assert!(error.to_string().contains("mixture-of-experts"), "{error}");
        let mut one = request("qwen3-30b-a3b", "inference", "H100-SXM5-80GB");
        one.gpus = Some(1);
        one.attention_dp = Some(true);
        assert!(estimate_workload(catalog(), &one).is_err());
        let mut placed = request("qwen3-30b-a3b", "inference", "H100-SXM5-80GB");
        placed.gpus = Some(4);
        placed.ep = Some(2);
        placed.attention_dp = Some(true);
        let error = estimate_workload(catalog(), &placed).unwrap_err();
        assert!(error.to_string().contains("two ways"), "{error}");
        let mut training = request("qwen3-30b-a3b", "lora", "H100-SXM5-80GB");
        training.gpus = Some(4);
        training.attention_dp = Some(true);
        assert!(estimate_workload(catalog(), &training).is_err());
    }
}

/// A checkpoint's safetensors index says what its weights really hold: Qwen3 8B's config
/// describes 8.19 B parameters; a checkpoint holding 0.4 B more (a vision tower or a
/// prediction head the config's layers do not describe) takes their memory in the estimate, and
/// the answer says where the figure came from. An index that cannot give a count (bytes with no
/// dtype to read them by) is refused, naming the missing field.
#[test]
fn a_checkpoints_safetensors_index_sets_the_weights_it_holds() {
    let file: serde_json::Value =
        serde_json::from_str(include_str!("../../gpuplan-catalog/data/models/qwen3-8b.json")).unwrap();
    let config = file["config"].to_string();
    let run = |index: Option<&str>| {
        let model = ModelSource::Config {
            name: "Org/Model".into(),
            text: config.clone(),
            checkpoint_index: index.map(str::to_string),
        };
        let mut r = WorkloadRequest::new(model, Task::Inference, "H100-SXM5-80GB");
        (r.batch, r.seq, r.output_tokens) = (Some(1), Some(512), Some(128));
        estimate_workload(catalog(), &r)
    };
    let plain = run(None).unwrap();
    let held = 8_590_735_360u64;
    let index =
        format!(r#"{{"metadata": {{"total_parameters": {held}, "total_size": 17181470720}}, "weight_map": {{}}}}"#);
    let with = run(Some(&index)).unwrap();
    assert_eq!(with.estimate.parameters.total, held);
    let extra = (with.estimate.memory.weights.as_u64() - plain.estimate.memory.weights.as_u64()) as f64;
    assert!(
        (0.7e9..0.9e9).contains(&extra),
        "0.4 B more bf16 weights: {extra} bytes"
    );
    assert!(
        with.estimate
            .assumptions
            .iter()
            .any(|a| a.contains("model.safetensors.index.json")),
        "{:?}",
        with.estimate.assumptions
    );
    let bytes_only = r#"{"metadata": {"total_size": 17181470720}}"#;
    let mut no_dtype: serde_json::Value = serde_json::from_str(&config).unwrap();
    no_dtype.as_object_mut().unwrap().remove("torch_dtype");
    let model = ModelSource::Config {
        name: "Org/Model".into(),
        text: no_dtype.to_string(),
        checkpoint_index: Some(bytes_only.to_string()),
    };
    let error = estimate_workload(
        catalog(),
        &WorkloadRequest::new(model, Task::Inference, "H100-SXM5-80GB"),
    )
    .unwrap_err();
    assert!(error.to_string().contains("torch_dtype"), "{error}");
}

/// The output layer's logits are computed only for the tokens that yield an output, and in 16
/// bits in quantised checkpoints.
mod logits {
    use super::*;
    /// Llama 3.1 8B, or the same model with a vocabulary `times` as large.
    pub(super) fn llama_8b_with_vocabulary(times: u64) -> ModelSource {
        let mut config: serde_json::Value =
            serde_json::from_str(include_str!("../../gpuplan-catalog/data/models/llama-3.1-8b.json")).unwrap();
        let mut config = config["config"].take();
        config["vocab_size"] = (128_256 * times).into();
        ModelSource::Config {
            name: "config.json".into(),
            text: config.to_string(),
            checkpoint_index: None,
        }
    }

    fn request(times: u64, precision: Precision, seq: u64, output: u64) -> WorkloadRequest {
        let mut r = WorkloadRequest::new(llama_8b_with_vocabulary(times), Task::Inference, "H100-SXM5-80GB");
        (r.precision, r.seq, r.output_tokens, r.batch) = (Some(precision), Some(seq), Some(output), Some(1));
        r.engine = Some(gpuplan::model::Engine::TensorrtLlm);
        r
    }

    /// An engine computes a prompt's logits for its last token only: four times the vocabulary
    /// (1.6 B more output-layer parameters, a fifth more matmul FLOPs per token) leaves an
    /// 8,192-token prompt's time to first token within a few per cent, where charging every
    /// prompt token for them would add about a fifth.
    #[test]
    fn a_prompt_pays_for_its_logits_once() {
        let ttft = |times| {
            let answer = estimate_workload(catalog(), &request(times, Precision::Bf16, 8192, 1)).unwrap();
            answer.estimate.inference.unwrap().ttft_seconds
        };
        let (base, wide) = (ttft(1), ttft(4));
        assert!(wide > base && wide < 1.03 * base, "{base} {wide}");
    }

    /// Quantised checkpoints keep the output layer in 16 bits, so at fp8 it multiplies at the
    /// 16-bit rate while the layers run at the 8-bit one: in a compute-bound decode step (256
    /// sequences at once) four times the vocabulary adds more to the step in fp8 than in bf16.
    #[test]
    fn the_output_layer_stays_in_sixteen_bits_when_the_layers_are_quantised() {
        let tpot = |times, precision| {
            let mut r = request(times, precision, 128, 128);
            r.batch = Some(256);
            let inference = estimate_workload(catalog(), &r).unwrap().estimate.inference.unwrap();
            assert_eq!(inference.decode_bound, gpuplan::estimator::Bound::Compute);
            inference.tpot_seconds
        };
        let grows = |precision| tpot(4, precision) / tpot(1, precision);
        let (fp8, bf16) = (grows(Precision::Fp8), grows(Precision::Bf16));
        assert!(fp8 > bf16 && bf16 > 1.0, "fp8 grows {fp8:.3}, bf16 {bf16:.3}");
        let said = estimate_workload(catalog(), &request(1, Precision::Fp8, 128, 2048)).unwrap();
        assert!(
            said.estimate
                .assumptions
                .iter()
                .any(|a| a.contains("logits projection") && a.contains("in 16 bits")),
            "{:?}",
            said.estimate.assumptions
        );
    }
}

/// Low-precision training leaves the output layer in 16 bits (Megatron-Core's output layer is
/// not a Transformer Engine module; torchtitan's Float8 skips `output`): four times Llama 3.1
/// 8B's vocabulary lengthens an fp8 step on 8 H100 by clearly more than a bf16 one.
#[test]
fn fp8_training_keeps_the_output_layer_in_sixteen_bits() {
    let step = |times: u64, precision| {
        let model = logits::llama_8b_with_vocabulary(times);
        let mut r = WorkloadRequest::new(model, Task::Pretrain, "H100-SXM5-80GB");
        (r.gpus, r.precision, r.framework) = (Some(8), Some(precision), Some(Framework::Megatron));
        let answer = estimate_workload(catalog(), &r).unwrap();
        answer.estimate.training.unwrap().step_seconds
    };
    let grows = |precision| step(4, precision) / step(1, precision);
    let (fp8, bf16) = (grows(Precision::Fp8), grows(Precision::Bf16));
    // The fp8 step's other parts shrink, so it grows somewhat more whatever the output layer
    // runs at (1.26 against 1.22 with an 8-bit one); a 16-bit one makes it 1.32.
    assert!(fp8 > 1.06 * bf16 && bf16 > 1.0, "fp8 grows {fp8:.3}, bf16 {bf16:.3}");
}

/// Configs of architectures gpuplan does not know by name, read by their structure.
mod pasted_configs {
    use super::*;

    fn pasted(name: &str, config: serde_json::Value) -> Result<gpuplan::EstimateAnswer, gpuplan::Error> {
        let source = ModelSource::Config {
            name: name.into(),
            text: config.to_string(),
            checkpoint_index: None,
        };
        estimate_workload(catalog(), &WorkloadRequest::new(source, Task::Inference, "H100"))
    }

    /// A decoder whose `model_type` gpuplan does not know by name is read by its fields, and the
    /// answer says so: Llama 3.1 8B's fields under another name count exactly as Llama does.
    #[test]
    fn an_unknown_decoder_is_read_by_its_fields_and_says_so() {
        let mut config: serde_json::Value =
            serde_json::from_str(include_str!("../../gpuplan-catalog/data/models/llama-3.1-8b.json")).unwrap();
        let mut config = config["config"].take();
        config["model_type"] = "my_company_lm".into();
        let answer = pasted("config.json", config.clone()).unwrap();
        assert_eq!(answer.estimate.parameters.total, 8_030_261_248);
        let said = answer.estimate.assumptions.join("\n");
        assert!(
            said.contains("`my_company_lm` is not one gpuplan knows by name"),
            "{said}"
        );
        assert!(said.contains("gated three-matrix MLP (silu)"), "{said}");
        // A GELU decoder with LayerNorm and biases (StarCoder 2's block) is not counted as SwiGLU.
        config["hidden_act"] = "gelu_pytorch_tanh".into();
        config["use_bias"] = true.into();
        config["layer_norm_eps"] = 1e-5.into();
        let gelu = pasted("config.json", config.clone()).unwrap();
        assert!(
            gelu.estimate.parameters.total < 7_000_000_000,
            "{}",
            gelu.estimate.parameters.total
        );
        assert!(gelu.estimate.assumptions.join(" ").contains("two-matrix MLP"));
        // Experts cannot be laid out from the fields alone: refused, not guessed.
        config["num_local_experts"] = 8.into();
        let error = pasted("config.json", config).unwrap_err().to_string();
        assert!(error.contains("mixture of experts"), "{error}");
    }

    /// A multimodal wrapper is its text model plus its vision tower: Gemma 3 27B's config
    /// (text_config gemma3_text, a SigLIP vision_config) counts within 1 % of the 27.43 B its
    /// checkpoint holds, and the answer names both readings.
    #[test]
    fn a_multimodal_wrapper_is_its_text_model_and_vision_tower() {
        let config = serde_json::json!({
            "model_type": "gemma3",
            "architectures": ["Gemma3ForConditionalGeneration"],
            "text_config": {
                "model_type": "gemma3_text", "hidden_size": 5376, "intermediate_size": 21504,
                "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 16,
                "head_dim": 128, "vocab_size": 262208, "max_position_embeddings": 131072,
                "sliding_window": 1024, "query_pre_attn_scalar": 168
            },
            "vision_config": {
                "model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
                "num_hidden_layers": 27, "num_attention_heads": 16, "patch_size": 14, "image_size": 896
            }
        });
        let answer = pasted("config.json", config).unwrap();
        let total = answer.estimate.parameters.total as f64;
        assert!((total / 27_432_406_640.0 - 1.0).abs() < 0.01, "{total}");
        let said = answer.estimate.assumptions.join("\n");
        assert!(said.contains("`gemma3` wraps a language model"), "{said}");
        assert!(said.contains("vision tower counted"), "{said}");
    }

    /// GLM-4.5-Air's config (`glm4_moe`: DeepSeek-V3's expert layout on grouped-query
    /// attention) counts the 106 B parameters and 12 B active its card states (active counted
    /// without the embeddings, as the card does).
    #[test]
    fn glm_4_5_air_counts_its_cards_parameters() {
        let config = serde_json::json!({
            "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "attention_bias": true,
            "first_k_dense_replace": 1, "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
            "intermediate_size": 10944, "max_position_embeddings": 131072, "moe_intermediate_size": 1408,
            "n_routed_experts": 128, "n_shared_experts": 1, "num_attention_heads": 96,
            "num_experts_per_tok": 8, "num_hidden_layers": 46, "num_key_value_heads": 8,
            "num_nextn_predict_layers": 1, "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05,
            "tie_word_embeddings": false, "use_qk_norm": false, "vocab_size": 151552
        });
        let answer = pasted("config.json", config).unwrap();
        let counts = answer.estimate.parameters;
        assert!((counts.total as f64 / 106e9 - 1.0).abs() < 0.01, "{}", counts.total);
        let embeddings = 2 * 151_552 * 4096;
        let active = (counts.active - embeddings) as f64;
        assert!((active / 12e9 - 1.0).abs() < 0.03, "{active}");
    }

    /// OLMoE-1B-7B-0924's config (`olmoe`: 64 experts, 8 a token, query and key norms as wide as
    /// the projections) counts the 6.9 B parameters and 1.3 B active its paper states
    /// (Muennighoff et al. 2024, arXiv:2409.02060, table 1).
    #[test]
    fn olmoe_counts_its_papers_parameters() {
        let config = serde_json::json!({
            "architectures": ["OlmoeForCausalLM"], "model_type": "olmoe", "hidden_size": 2048,
            "intermediate_size": 1024, "num_hidden_layers": 16, "num_attention_heads": 16,
            "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8,
            "vocab_size": 50304, "max_position_embeddings": 4096, "tie_word_embeddings": false,
            "clip_qkv": null, "norm_topk_prob": false, "rope_theta": 10000.0
        });
        let counts = pasted("config.json", config).unwrap().estimate.parameters;
        assert!((counts.total as f64 / 6.92e9 - 1.0).abs() < 0.005, "{}", counts.total);
        assert!((counts.active as f64 / 1.28e9 - 1.0).abs() < 0.01, "{}", counts.active);
    }

    /// Phi-3.5-MoE's config (`phimoe`: Mixtral's sixteen experts, two a token, with Phi's
    /// LayerNorms and attention biases) counts the 41.9 B parameters and 6.6 B active its
    /// model card states.
    #[test]
    fn phi_3_5_moe_counts_its_cards_parameters() {
        let config = serde_json::json!({
            "architectures": ["PhiMoEForCausalLM"], "model_type": "phimoe", "attention_bias": true,
            "hidden_size": 4096, "intermediate_size": 6400, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 16,
            "num_experts_per_tok": 2, "vocab_size": 32064, "max_position_embeddings": 131072,
            "sliding_window": 131072, "lm_head_bias": true, "tie_word_embeddings": false
        });
        let answer = pasted("config.json", config).unwrap();
        let counts = answer.estimate.parameters;
        assert!((counts.total as f64 / 41.9e9 - 1.0).abs() < 0.005, "{}", counts.total);
        assert!((counts.active as f64 / 6.6e9 - 1.0).abs() < 0.01, "{}", counts.active);
    }

    /// Granite 3.0 1B-A400M's config (`granitemoe`: 32 experts, 8 a token, tied embeddings)
    /// counts the 1.3 B parameters and 400 M active its model card states (active counted
    /// without the embeddings, which the card rounds into neither).
    #[test]
    fn granite_moe_counts_its_cards_parameters() {
        let config = serde_json::json!({
            "architectures": ["GraniteMoeForCausalLM"], "model_type": "granitemoe", "hidden_size": 1024,
            "intermediate_size": 512, "num_hidden_layers": 24, "num_attention_heads": 16,
            "num_key_value_heads": 8, "num_local_experts": 32, "num_experts_per_tok": 8,
            "vocab_size": 49155, "max_position_embeddings": 4096, "tie_word_embeddings": true,
            "embedding_multiplier": 12.0, "logits_scaling": 6.0, "residual_multiplier": 0.22
        });
        let counts = pasted("config.json", config).unwrap().estimate.parameters;
        assert!((counts.total as f64 / 1.33e9 - 1.0).abs() < 0.01, "{}", counts.total);
        let active = (counts.active - 49_155 * 1024) as f64;
        assert!((active / 400e6 - 1.0).abs() < 0.06, "{active}");
    }

    /// ChatGLM's own config format (GLM-4-9B as THUDM publishes it: `num_layers`,
    /// `ffn_hidden_size`, `multi_query_group_num`, `padded_vocab_size`) counts the 9.4 B its
    /// card states.
    #[test]
    fn a_chatglm_config_counts_its_cards_parameters() {
        let config = serde_json::json!({
            "model_type": "chatglm", "add_bias_linear": false, "add_qkv_bias": true,
            "ffn_hidden_size": 13696, "hidden_size": 4096, "kv_channels": 128,
            "multi_query_attention": true, "multi_query_group_num": 2, "num_attention_heads": 32,
            "num_layers": 40, "padded_vocab_size": 151552, "rmsnorm": true, "seq_length": 131072,
            "tie_word_embeddings": false
        });
        let answer = pasted("config.json", config).unwrap();
        let total = answer.estimate.parameters.total as f64;
        assert!((total / 9.4e9 - 1.0).abs() < 0.005, "{total}");
    }

    /// microsoft/resnet-50's `config.json` (`model_type: resnet`) is walked as the built-in
    /// ResNet-50 is: the same 25.6 M parameters and the same time per image.
    #[test]
    fn a_hugging_face_resnet_config_is_the_built_in_resnet() {
        let config = serde_json::json!({
            "model_type": "resnet", "depths": [3, 4, 6, 3], "hidden_sizes": [256, 512, 1024, 2048],
            "embedding_size": 64, "layer_type": "bottleneck", "num_channels": 3, "num_labels": 1000
        });
        let pasted = pasted("config.json", config).unwrap();
        let built_in = estimate_workload(catalog(), &request("resnet-50", "inference", "H100")).unwrap();
        assert_eq!(pasted.estimate.parameters.total, built_in.estimate.parameters.total);
        assert_eq!(
            format!("{:?}", pasted.estimate.inference),
            format!("{:?}", built_in.estimate.inference)
        );
        let wide = serde_json::json!({"model_type": "resnet", "depths": [3, 4, 6, 3], "hidden_sizes": [512, 1024, 2048, 4096]});
        let error = pasted_error(wide);
        assert!(error.contains("hidden_sizes"), "{error}");
    }

    fn pasted_error(config: serde_json::Value) -> String {
        pasted("config.json", config).unwrap_err().to_string()
    }

    /// Sliding-window layers keep only their window: gpt-oss alternates 128-token windows
    /// with full attention, so at 33,000 tokens its cache is half of full attention's, and the
    /// answer says so; within the window nothing changes.
    #[test]
    fn sliding_window_layers_keep_only_their_window() {
        let mut config: serde_json::Value =
            serde_json::from_str(include_str!("../../gpuplan-catalog/data/models/gpt-oss-120b.json")).unwrap();
        let config = config["config"].take();
        let mut full = config.clone();
        full.as_object_mut().unwrap().remove("layer_types");
        full.as_object_mut().unwrap().remove("sliding_window");
        let kv = |config: &serde_json::Value, seq: u64, output: u64| {
            let source = ModelSource::Config {
                name: "config.json".into(),
                text: config.to_string(),
                checkpoint_index: None,
            };
            let mut r = WorkloadRequest::new(source, Task::Inference, "H200");
            r.gpus = Some(2);
            r.seq = Some(seq);
            r.output_tokens = Some(output);
            let answer = estimate_workload(catalog(), &r).unwrap();
            (
                answer.estimate.memory.kv_cache.as_u64() as f64,
                answer.estimate.assumptions.join("\n"),
            )
        };
        let (windowed, said) = kv(&config, 32_000, 1000);
        let (whole, _) = kv(&full, 32_000, 1000);
        assert!((windowed / whole - 0.5).abs() < 0.01, "{windowed} / {whole}");
        assert!(said.contains("18 of 36 layers keep only the last 128 tokens"), "{said}");
        // A request shorter than the window keeps every token in every layer.
        assert_eq!(kv(&config, 100, 20).0, kv(&full, 100, 20).0);
    }
}
