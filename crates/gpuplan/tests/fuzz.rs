//! Fuzzing every parser that reads user input, on stable Rust with proptest: arbitrary text and
//! mutations of valid inputs go in; the parser must answer `Ok` or a typed error — never panic,
//! never hang — and what parses must estimate or forecast without panicking either.
//!
//! CI runs a short pass with a fixed seed (`PROPTEST_CASES`, 64 by default here). The long run is
//! `cargo xtask fuzz --minutes N`, which repeats this file with fresh seeds for N minutes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan::catalog::PriceOverlay;
use gpuplan::catalog::refresh::{aws, azure};
use gpuplan::model::Task;
use gpuplan::{Catalog, CatalogFile, ModelSource, WorkloadRequest, estimate_workload, parse_request_log};
use gpuplan_forecast::history::{HistoryOptions, Period, parse_csv, parse_json};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use crate::catalog;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// A fixed seed unless `PROPTEST_RNG_SEED` gives one: CI runs the same inputs every time;
/// `cargo xtask fuzz` varies the seed per round.
fn seed() -> RngSeed {
    RngSeed::Fixed(
        std::env::var("PROPTEST_RNG_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0x6770_7570),
    )
}

/// Edits of a valid input: characters replaced, inserted or deleted, digits grown into huge,
/// negative or non-finite numbers.
fn mutated(seed: &'static str) -> impl Strategy<Value = String> {
    let edits = prop::collection::vec(
        (
            0usize..seed.len().max(1),
            prop_oneof![
                Just("".to_string()),
                Just("0".to_string()),
                Just("-1".to_string()),
                Just("1e308".to_string()),
                Just("18446744073709551615".to_string()),
                Just("NaN".to_string()),
                Just("\"".to_string()),
                Just(",".to_string()),
                Just("\n".to_string()),
                "[ -~]{0,4}".prop_map(|s| s),
            ],
            0usize..4,
        ),
        0..6,
    );
    edits.prop_map(move |edits| {
        let mut text: Vec<char> = seed.chars().collect();
        for (at, insert, remove) in edits {
            let at = at.min(text.len());
            let end = (at + remove).min(text.len());
            text.splice(at..end, insert.chars());
        }
        text.into_iter().collect()
    })
}

/// A small Llama GGUF header as llama.cpp's converter lays it out (GGUF v3).
fn gguf_header() -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    let entries: [(&str, Option<&str>, u32); 8] = [
        ("general.architecture", Some("llama"), 0),
        ("general.file_type", None, 15),
        ("llama.block_count", None, 22),
        ("llama.embedding_length", None, 2048),
        ("llama.feed_forward_length", None, 5632),
        ("llama.attention.head_count", None, 32),
        ("llama.attention.head_count_kv", None, 4),
        ("llama.vocab_size", None, 32000),
    ];
    out.extend((entries.len() as u64).to_le_bytes());
    for (key, text, number) in entries {
        out.extend((key.len() as u64).to_le_bytes());
        out.extend(key.as_bytes());
        match text {
            Some(text) => {
                out.extend(8u32.to_le_bytes());
                out.extend((text.len() as u64).to_le_bytes());
                out.extend(text.as_bytes());
            }
            None => {
                out.extend(4u32.to_le_bytes());
                out.extend(number.to_le_bytes());
            }
        }
    }
    out
}

const LLAMA_CONFIG: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":2048,"intermediate_size":5632,"num_hidden_layers":22,"num_attention_heads":32,"num_key_value_heads":4,"vocab_size":32000,"max_position_embeddings":2048,"tie_word_embeddings":false}"#;
const HISTORY_CSV: &str = "timestamp,value\n2024-01-01,10\n2024-01-02,12\n2024-01-03T05:00:00Z,11\n2024-01-04,13\n2024-01-05,12\n2024-01-06,14\n2024-01-07,15\n";
const HISTORY_JSON: &str = r#"[{"timestamp":"2024-01-01","value":1},{"timestamp":"2024-02-01","value":2},{"timestamp":"2024-03-01","value":3},{"timestamp":"2024-04-01","value":2},{"timestamp":"2024-05-01","value":4},{"timestamp":"2024-06-01","value":5}]"#;
const REQUEST_LOG: &str = "input_tokens,output_tokens\n512,128\n1024,256\n2048,64\n";
const PRICES_TOML: &str = "[[price]]\nprovider = \"aws\"\ninstance_type = \"p5.48xlarge\"\nusd_per_hour = 40.0\n\n[[discount]]\nprovider = \"gcp\"\npercent = 20\n";
const PRICES_CSV: &str =
    "provider,instance_type,region,billing,usd_per_hour,discount_percent\naws,p5.48xlarge,,on-demand,31,\ngcp,,,,,20\n";
const AWS_OFFER: &str = include_str!("../../gpuplan-catalog/tests/fixtures/refresh/aws/us-east-1.json");
const AZURE_PAGE: &str = r#"{"Items":[{"currencyCode":"USD","retailPrice":0.5,"armRegionName":"eastus","armSkuName":"Standard_NC4as_T4_v3","skuName":"NC4as T4 v3","productName":"Virtual Machines NCasT4_v3 Series","unitOfMeasure":"1 Hour","type":"Consumption"}],"NextPageLink":null}"#;
const SDXL: &str = include_str!("../../gpuplan-catalog/data/models/sdxl.json");
const FLUX: &str = include_str!("../../gpuplan-catalog/data/models/flux.1-dev.json");
const JOB_YAML: &str = "model: llama-3.1-8b\ntask: inference\nqps: 4\nttft: p90:800ms\ntpot: {seconds: 0.05, percentile: 90}\nproviders: [aws, gcp]\nheadroom: 0.1\nmax_num_seqs: 128\n";
const JOB_TOML: &str =
    "model = \"llama-3.1-8b\"\ntask = \"lora\"\ntokens = 1e8\nbudget = 500.0\nproviders = [\"aws\"]\n";
const NVIDIA_SMI: &str = "timestamp, index, name, uuid, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W]\n2024/05/01 12:00:00.000, 0, NVIDIA A100-SXM4-80GB, GPU-a, 87 %, 40 %, 61440 MiB, 81920 MiB, 312.50 W\n2024/05/01 12:00:05.000, 0, NVIDIA A100-SXM4-80GB, GPU-a, 0 %, 0 %, 4 MiB, 81920 MiB, [N/A]\n";
const DCGM: &str = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\"} 87 1714564800000\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\"} 70000 1714564800000\nDCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\"} 11000 1714564800000\n";
const CALIBRATION: &str = r#"{"measured_on":"driver 550.54.15, 8× NVIDIA H100 80GB HBM3","method":"m","gpus":[{"gpu":"H100-SXM5-80GB","compute":{"bf16":0.81,"fp16":0.8},"compute_other":0.81,"memory_bandwidth":0.9,"interconnect":0.95,"evidence":[]}]}"#;
const SAVED_PLAN: &str = r#"{"recommendations":[{"provider":"aws","instance_type":"p5.48xlarge","region":"us-east-1","gpu":"H100-SXM5-80GB","gpus":8,"gpus_per_node":8,"nodes":1,"interruptible":false,"time_seconds":3600.0,"serving":{"gpus_per_replica":1,"replicas":8,"min_replicas":2,"max_replicas":8,"requests_per_second_per_replica":3.5}}],"request":{"model":"llama-3.1-8b","task":"inference","qps":20}}"#;
const OFFERING_ROW: &str =
    "aws,g4dn.xlarge,us-east-1,,T4,1,16,4,16,125,25,none,ethernet,0.526,0.2,second,test,2026-11-22,";

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), rng_seed: seed(), ..ProptestConfig::default() })]

    /// A config.json that parses must be estimated or refused, whatever its numbers.
    #[test]
    fn hf_configs_parse_and_estimate_without_panicking(text in mutated(LLAMA_CONFIG)) {
        if gpuplan::catalog::parse_hf_config_text(&text).is_ok() {
            for task in [Task::Pretrain, Task::Inference] {
                let mut r = WorkloadRequest::new(
                    ModelSource::Config { name: "fuzz.json".into(), text: text.clone(), checkpoint_index: None },
                    task,
                    "H100-SXM5-80GB",
                );
                r.gpus = Some(8);
                let _ = estimate_workload(catalog(), &r);
            }
        }
    }

    /// A GGUF header with its bytes flipped, cut or extended is read or refused, and what it
    /// reads parses or is refused too; arbitrary bytes after the magic the same.
    #[test]
    fn gguf_headers_are_read_or_refused(
        flips in proptest::collection::vec((0usize..400, any::<u8>()), 0..8),
        cut in 0usize..420,
        tail in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut bytes = gguf_header();
        for (at, byte) in flips {
            if let Some(b) = bytes.get_mut(at) {
                *b = byte;
            }
        }
        bytes.truncate(cut.max(4));
        bytes.extend(tail);
        if let Ok(text) = gpuplan::catalog::gguf_config_text(&bytes) {
            let _ = gpuplan::catalog::parse_hf_config_text(&text);
        }
    }

    #[test]
    fn arbitrary_text_is_never_a_panic(text in "\\PC{0,200}") {
        let _ = gpuplan::catalog::parse_hf_config_text(&text);
        let _ = parse_csv(&text, &HistoryOptions::default());
        let _ = parse_json(&text, &HistoryOptions::default());
        let _ = parse_request_log(&text, "fuzz.csv");
        let _ = PriceOverlay::parse("fuzz.toml", &text);
        let _ = PriceOverlay::parse("fuzz.csv", &text);
        let _ = azure::parse_page("fuzz.json", &text);
        let _ = aws::read_offer_file("fuzz.json", text.as_bytes(), &Default::default());
    }

    #[test]
    fn histories_parse_and_forecast_without_panicking(
        csv in mutated(HISTORY_CSV),
        json in mutated(HISTORY_JSON),
        period in proptest::option::of(proptest::sample::select(&[Period::Hour, Period::Day, Period::Week, Period::Month][..])),
    ) {
        let options = HistoryOptions { period, ..HistoryOptions::default() };
        let parsed = [parse_csv(&csv, &options), parse_json(&json, &options)];
        for series in parsed.into_iter().flatten() {
            let _ = gpuplan_forecast::forecast(&series, 6, 0.9);
        }
    }

    #[test]
    fn request_logs_and_price_files_never_panic(
        log in mutated(REQUEST_LOG),
        toml in mutated(PRICES_TOML),
        csv in mutated(PRICES_CSV),
        page in mutated(AZURE_PAGE),
        offer in mutated(AWS_OFFER),
    ) {
        let _ = parse_request_log(&log, "fuzz.csv");
        for (name, text) in [("fuzz.toml", &toml), ("fuzz.csv", &csv)] {
            if let Ok(overlay) = PriceOverlay::parse(name, text) {
                let _ = catalog().clone().with_prices(name, &overlay);
            }
        }
        let _ = azure::parse_page("fuzz.json", &page);
        let types = ["p4d.24xlarge".to_string()].into();
        let _ = aws::read_offer_file("fuzz.json", offer.as_bytes(), &types);
    }

    /// Diffusers UNet and VAE configs (mutations of SDXL's model file) parse or are refused.
    #[test]
    fn diffusers_configs_never_panic(text in mutated(SDXL)) {
        if let Ok(serde_json::Value::Object(model)) = serde_json::from_str::<serde_json::Value>(&text) {
            if let Some(serde_json::Value::Object(vision)) = model.get("vision") {
                if let Some(serde_json::Value::Object(unet)) = vision.get("unet_config") {
                    let _ = gpuplan::catalog::parse_unet_config(unet);
                }
                if let Some(serde_json::Value::Object(vae)) = vision.get("vae_config") {
                    let _ = gpuplan::catalog::parse_vae_config(vae);
                }
            }
        }
    }

    /// Diffusion-transformer configs (mutations of FLUX.1-dev's model file) parse or are
    /// refused, and what parses is walked without overflow at the largest resolution.
    #[test]
    fn diffusion_transformer_configs_never_panic(text in mutated(FLUX)) {
        if let Ok(serde_json::Value::Object(model)) = serde_json::from_str::<serde_json::Value>(&text) {
            if let Some(serde_json::Value::Object(vision)) = model.get("vision") {
                if let Some(serde_json::Value::Object(config)) = vision.get("transformer_config") {
                    if let Ok(spec) = gpuplan::catalog::parse_transformer_config(config, None) {
                        let pass = gpuplan::estimator::dit_flops::dit_pass(&spec, 2048, 2048);
                        prop_assert!(pass.forward_flops().is_finite());
                    }
                }
            }
        }
    }

    /// Job files in YAML and TOML, mutated: read into options or refused with the line, and
    /// what reads is resolved or refused, never a panic or a silently dropped value.
    #[test]
    fn job_files_are_read_or_refused(yaml in mutated(JOB_YAML), toml in mutated(JOB_TOML)) {
        for (text, format) in [(yaml, gpuplan::JobFormat::Yaml), (toml, gpuplan::JobFormat::Toml)] {
            if let Ok(map) = gpuplan::parse_job(&text, format, "job") {
                if let Ok(options) = serde_json::from_value::<gpuplan::PlanOptions>(serde_json::Value::Object(map)) {
                    let _ = options.query();
                }
            }
        }
    }

    /// GPU telemetry (nvidia-smi CSV and XML, DCGM text), mutated: samples or a typed error, and
    /// samples that are read are possible ones.
    #[test]
    fn telemetry_is_read_or_refused(smi in mutated(NVIDIA_SMI), dcgm in mutated(DCGM), xml in "\\PC{0,300}") {
        let read = [
            gpuplan::telemetry::parse_nvidia_smi_csv(&smi),
            gpuplan::telemetry::parse_dcgm(&dcgm, 1_714_564_800),
            gpuplan::telemetry::parse_nvidia_smi_xml(&xml),
        ];
        for samples in read.into_iter().flatten() {
            if gpuplan::telemetry::check_samples(&samples).is_ok() {
                let _ = gpuplan::telemetry::summarise(&samples);
            }
        }
    }

    /// Calibration files, mutated: a profile whose factors pass the check applies to an
    /// estimate; the others are refused.
    #[test]
    fn calibrations_are_checked(text in mutated(CALIBRATION)) {
        if let Ok(profile) = serde_json::from_str::<gpuplan::model::CalibrationProfile>(&text) {
            if profile.check().is_ok() {
                let mut r = WorkloadRequest::new(ModelSource::BuiltIn("llama-3.1-8b".into()), Task::Lora, "H100-SXM5-80GB");
                r.calibration = Some(profile);
                if let Ok(answer) = estimate_workload(catalog(), &r) {
                    if let Some(training) = answer.estimate.training {
                        prop_assert!(training.mfu.is_finite() && training.mfu > 0.0 && training.mfu < 1.0);
                    }
                }
            }
        }
    }

    /// Saved plans, mutated: read and checked, or refused; what is read exports or is refused.
    #[test]
    fn saved_plans_are_checked_before_export(text in mutated(SAVED_PLAN)) {
        if let Ok(plan) = gpuplan::read_saved_plan(&text, "plan.json") {
            for target in [gpuplan::ExportTarget::Kubernetes, gpuplan::ExportTarget::SkyPilot] {
                let settings = gpuplan::ExportSettings {
                    pick: 1,
                    flavour: gpuplan::emit::manifest::TrainingFlavour::IndexedJob,
                    image: None,
                    storage_class: None,
                    name: None,
                    namespace: "default".to_string(),
                };
                let _ = gpuplan::export_plan(catalog(), &plan, target, &settings);
            }
        }
    }
}

// Each case here parses the whole catalog again (about 0.4 s unoptimised), so it runs a quarter
// of the cases the others do; `cargo xtask fuzz` raises them all together.
proptest! {
    #![proptest_config(ProptestConfig { cases: cases().div_ceil(4), rng_seed: seed(), ..ProptestConfig::default() })]

    /// A catalog whose offerings file was damaged loads or is refused with its file named.
    #[test]
    fn damaged_catalog_files_are_refused_not_panicked(row in mutated(OFFERING_ROW)) {
        let mut files = Catalog::embedded_files();
        files.push(CatalogFile {
            path: "offerings/fuzz.csv".into(),
            text: format!(
                "provider,instance_type,region,zone,accelerator,accelerator_count,accelerator_memory_gib,vcpus,memory_gib,local_disk_gb,network_gbps,gpu_interconnect,node_network,on_demand_usd_per_hour,spot_usd_per_hour,billing_granularity,source,as_of,notes\n{row}\n"
            ),
        });
        if let Err(error) = Catalog::from_files(&files) {
            prop_assert!(!error.file.is_empty());
        }
    }
}
