//! Bad input, as a hostile or careless user gives it, to every command (268 cases): each must end
//! with exit 2, a message on standard error naming what was wrong, and no panic. The cases
//! cover every row of the reliability reports that found them (integer wraps, NaN, negative
//! numbers, impossible shapes, flags that do not apply, unreadable files).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// A folder of bad input files, made once.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("gpuplan-bad-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = [
            ("short.csv", "timestamp,value\n2024-01-01,1\n"),
            ("junk.csv", "not,a,history\n"),
            ("requests.csv", "input_tokens,output_tokens\n1000,100\n3000,300\n"),
            ("badcfg.json", "{\"hidden_size\": -5}"),
            ("zero_layers.json", "{\"model_type\":\"llama\",\"hidden_size\":4096,\"num_hidden_layers\":0,\"num_attention_heads\":32,\"intermediate_size\":11008,\"vocab_size\":32000}"),
            ("badprices.toml", "[[price]]\nprovider=\"aws\"\n"),
            ("vocab_max.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":32,\"vocab_size\":18446744073709551615,\"max_position_embeddings\":4096}"),
            ("kv0.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":0,\"vocab_size\":32000,\"max_position_embeddings\":4096}"),
            ("heads_notdiv.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,\"num_attention_heads\":30,\"num_key_value_heads\":32,\"vocab_size\":32000,\"max_position_embeddings\":4096}"),
            ("headdim0.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":32,\"vocab_size\":32000,\"max_position_embeddings\":4096,\"head_dim\":0}"),
            ("layers_huge.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":1000000000000,\"num_attention_heads\":32,\"num_key_value_heads\":32,\"vocab_size\":32000,\"max_position_embeddings\":4096}"),
            ("topk.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"mixtral\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":32,\"vocab_size\":32000,\"max_position_embeddings\":4096,\"num_local_experts\":8,\"num_experts_per_tok\":9}"),
            ("bert_tv.json", "{\"architectures\":[\"BertForMaskedLM\"],\"model_type\":\"bert\",\"hidden_size\":768,\"intermediate_size\":3072,\"num_hidden_layers\":12,\"num_attention_heads\":12,\"vocab_size\":30522,\"max_position_embeddings\":512,\"type_vocab_size\":4611686018427387904}"),
            ("vit_img.json", "{\"architectures\":[\"ViTForImageClassification\"],\"model_type\":\"vit\",\"hidden_size\":768,\"intermediate_size\":3072,\"num_hidden_layers\":12,\"num_attention_heads\":12,\"image_size\":1099511627776,\"patch_size\":16,\"num_channels\":3}"),
            ("vit_patch0.json", "{\"architectures\":[\"ViTForImageClassification\"],\"model_type\":\"vit\",\"hidden_size\":768,\"intermediate_size\":3072,\"num_hidden_layers\":12,\"num_attention_heads\":12,\"image_size\":224,\"patch_size\":0,\"num_channels\":3}"),
            ("nan_tokens.yaml", "model: llama-3.1-8b\ntask: lora\ntokens: .nan\n"),
            ("inf_budget.yaml", "model: llama-3.1-8b\ntask: lora\ntokens: 1e8\nbudget: .inf\n"),
            ("good_lora.yaml", "model: llama-3.1-8b\ntask: lora\ntokens: 1e8\n"),
            ("nested_extra.yaml", "model: llama-3.1-8b\ntask: inference\nqps: 2\nttft: {seconds: 1, extra: 3}\n"),
            ("percentile_150.yaml", "model: llama-3.1-8b\ntask: inference\nqps: 2\nttft: {seconds: 1, percentile: 150}\n"),
            ("util_1000.csv", "timestamp, index, name, uuid, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W]\n2024/05/01 12:00:00.000, 0, NVIDIA A100-SXM4-80GB, GPU-a, 1000 %, 40 %, 100 MiB, 81920 MiB, 300 W\n"),
            ("mem_over.csv", "timestamp, index, name, uuid, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W]\n2024/05/01 12:00:00.000, 0, NVIDIA A100-SXM4-80GB, GPU-a, 50 %, 40 %, 99999 MiB, 81920 MiB, 300 W\n"),
            ("truncated.csv", "timestamp, index, name, uuid, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W]\n2024/05/01 12:00:00.000, 0, NVIDIA A100-SXM4-80GB, GPU-a, 50 %, 40 %, 100 MiB, 81920 MiB, 300 W\n2024/05/01 12:00:05.000, 0, NVIDIA A1\n"),
            ("good_smi.csv", "timestamp, index, name, uuid, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W]\n2024/05/01 12:00:00.000, 0, NVIDIA A100-SXM4-80GB, GPU-a, 50 %, 40 %, 100 MiB, 81920 MiB, 300 W\n"),
            ("heads_30.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,\"num_attention_heads\":30,\"num_key_value_heads\":30,\"vocab_size\":32000}"),
            ("context_0.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,\"num_attention_heads\":32,\"vocab_size\":32000,\"max_position_embeddings\":0}"),
            ("tie_yes.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,\"num_attention_heads\":32,\"vocab_size\":32000,\"tie_word_embeddings\":\"yes\"}"),
            ("t5_no_decoder.json", "{\"architectures\":[\"T5ForConditionalGeneration\"],\"model_type\":\"t5\",\"d_model\":512,\"d_ff\":2048,\"num_layers\":6,\"num_decoder_layers\":0,\"num_heads\":8,\"d_kv\":64,\"vocab_size\":32128}"),
        ];
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        std::fs::write(dir.join("deep.yaml"), format!("model: [{}{}]\n", "[".repeat(5000), "]".repeat(5000))).unwrap();
        let monthly = |years: std::ops::Range<u32>| {
            let mut text = "date,value\n".to_string();
            for (i, year) in years.flat_map(|y| std::iter::repeat_n(y, 12)).enumerate() {
                text.push_str(&format!("{year}-{:02}-01,{}\n", i % 12 + 1, 100 + i));
            }
            text
        };
        std::fs::write(dir.join("late.csv"), monthly(9998..10000)).unwrap();
        std::fs::write(
            dir.join("calibration_negative.json"),
            r#"{"measured_on":"x","method":"y","gpus":[{"gpu":"H100-SXM5-80GB","compute":{"bf16":-1},"compute_other":null,"memory_bandwidth":null,"evidence":[]}]}"#,
        )
        .unwrap();
        let saved = |gpus: u32, serving: &str| {
            format!(
                r#"{{"recommendations":[{{"provider":"aws","instance_type":"p5.48xlarge","region":"us-east-1","gpu":"H100-SXM5-80GB","gpus":{gpus},"gpus_per_node":8,"nodes":1,"interruptible":false,"time_seconds":null,"serving":{serving}}}],"request":null}}"#
            )
        };
        std::fs::write(dir.join("plan_no_gpus.json"), saved(0, "null")).unwrap();
        std::fs::write(
            dir.join("plan_million_nodes.json"),
            saved(8_000_000, "null").replace(r#""nodes":1"#, r#""nodes":1000000"#),
        )
        .unwrap();
        std::fs::write(
            dir.join("plan_upside_down.json"),
            saved(8, r#"{"gpus_per_replica":1,"replicas":8,"min_replicas":10,"max_replicas":1,"requests_per_second_per_replica":1.0}"#),
        )
        .unwrap();
        let measured = include_str!("fixtures/probe/example-8xh100-capped-measured.json");
        std::fs::write(dir.join("probe_zero.json"), measured.replace("\"tflops\": 642.9", "\"tflops\": 0")).unwrap();
        let mut sparse = "date,value\n".to_string();
        for year in [2020, 9020] {
            for day in 1..=10 {
                sparse.push_str(&format!("{year}-01-{day:02},{day}\n"));
            }
        }
        std::fs::write(dir.join("sparse.csv"), sparse).unwrap();
        dir
    })
}

fn expand(text: &str) -> String {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../gpuplan-forecast/tests/fixtures");
    text.replace("{tmp}", scratch().to_str().unwrap())
        .replace("{fixtures}", fixtures)
}

/// Runs every case; collects every failure before failing, so one run shows them all.
fn check(cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (args, expected) in cases {
        let args = expand(args);
        let output = run(&args.split_whitespace().collect::<Vec<_>>());
        let stderr = String::from_utf8_lossy(&output.stderr);
        let code = output.status.code();
        let expected = expand(expected);
        if code != Some(2) || !stderr.contains(&expected) || stderr.contains("panicked") {
            failures.push(format!(
                "gpuplan {args}\n  exit {code:?}, expected 2 and `{expected}`\n  stderr: {stderr}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn gpus() {
    check(&[
        ("gpus --min-memory -1", "unexpected argument '--min-memory' found"),
        ("gpus nosuchgpu", "unknown accelerator `nosuchgpu`"),
        (
            "gpus h100 --format yaml",
            "invalid value 'yaml' for '--format <FORMAT>'",
        ),
    ]);
}

#[test]
fn instances() {
    check(&[
        ("instances --gpu h1OO", "unknown accelerator `h1OO`"),
        ("instances --provider nosuch", "unknown provider `nosuch`"),
        (
            "instances --max-price -2",
            "--max-price must be a positive number, found -2",
        ),
        (
            "instances --max-price nan",
            "--max-price must be a positive number, found NaN",
        ),
        (
            "instances --min-gpus 9 --max-gpus 2",
            "--min-gpus 9 is more than --max-gpus 2",
        ),
        (
            "instances --limit -1",
            "invalid value '-1' for '--limit <LIMIT>': invali",
        ),
        (
            "instances --region",
            "a value is required for '--regions <REGIONS>' but ",
        ),
        (
            "instances --sort nonsense",
            "invalid value 'nonsense' for '--sort <SORT>'",
        ),
        ("instances --family NDv9", "no instance family `NDv9` in the catalog"),
        (
            "catalog --provider vast",
            "no SLA, compliance or region facts for `vast`",
        ),
        (
            "plan --model llama-3.1-8b --task lora --compliance HIPPA",
            "did you mean `HIPAA`?",
        ),
        (
            "plan --model llama-3.1-8b --task lora --countries XX",
            "no region of the catalog is in `XX`",
        ),
        ("plan --model llama-3.1-8b --task lora --sla 120", "--sla"),
    ]);
}

#[test]
fn models() {
    check(&[("models --format nope", "invalid value 'nope' for '--format <FORMAT>'")]);
}

#[test]
fn catalog() {
    check(&[
        ("catalog --check extra", "unrecognized subcommand 'extra'"),
        (
            "catalog refresh --provider nosuch --from .",
            "catalog refresh cannot fetch prices for `nosuch`",
        ),
        (
            "catalog refresh --provider azure --from /nonexistent",
            "--from /nonexistent: No such file or directory (",
        ),
        (
            "catalog refresh --from /nonexistent",
            "--from /nonexistent: no `aws` folder in it",
        ),
        (
            "catalog refresh --provider gcp",
            "catalog refresh --provider gcp needs an API key for the Cloud Billing Catalog API",
        ),
        (
            "catalog refresh --provider lambda",
            "catalog refresh --provider lambda needs an API key for Lambda's Cloud API",
        ),
        (
            "catalog refresh --provider aws --from {fixtures}",
            "not an AWS EC2 offer file",
        ),
    ]);
}

#[test]
fn estimate() {
    check(&[
        (
            "estimate --model nosuch --task pretrain --gpu H100-SXM5-80GB",
            "unknown model `nosuch`",
        ),
        (
            "plan --model llama-3.1-8b --task lroa",
            "unknown task `lroa` (did you mean `lora`?",
        ),
        (
            "estimate --model llama-3.1-8b --task nosuch --gpu H100-SXM5-80GB",
            "--task: unknown task `nosuch` (expected one of: ",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu nosuch",
            "unknown accelerator `nosuch`",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --gpus 0",
            "--gpus must be at least 1",
        ),
        (
            "estimate --model llama-3.1-8b --task lora --gpu Inferentia2",
            "--gpu Inferentia2 cannot run this workload: neuron does not support training here",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu MI300X --engine tensorrt-llm",
            "--gpu MI300X cannot run this workload: tensorrt-llm does not run on rocm",
        ),
        (
            "estimate --model llama-3.1-8b --task lora --gpu GB200 --gpus 6",
            "6 GPUs do not fill whole nodes of 4",
        ),
        (
            "estimate --model llama-3.1-8b --task finetune --gpu H100-SXM5-80GB --seq 2048 --mean-seq 0",
            "--mean-seq must be a positive number, found 0",
        ),
        (
            "estimate --model llama-3.1-8b --task finetune --gpu H100-SXM5-80GB --seq 2048 --mean-seq 4096",
            "--mean-seq 4096 is longer than --seq 2048",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --compile",
            "--compile applies to training tasks",
        ),
        (
            "estimate --model resnet-50 --task pretrain --gpu H100-SXM5-80GB --mean-seq 100",
            "--mean-seq applies to the training of transformers",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --gpus -1",
            "invalid value '-1' for '--gpus <GPUS>': -1 is no",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --gpus 4294967296",
            "invalid value '4294967296' for '--gpus <GPUS>': ",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --gpus 8 --gpus-per-node 0",
            "--gpus-per-node must be at least 1",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --gpus 98 --gpus-per-node 8",
            "98 GPUs do not fill whole nodes of 8",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --micro-batch 0",
            "--micro-batch must be at least 1",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --batch 0",
            "--batch must be at least 1",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --seq 0",
            "--seq must be at least 1",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --seq 99999999999",
            "--seq 99999999999 is beyond any real workload (a",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --tp 3 --gpus 8",
            "8 GPUs cannot be split into tensor parallel grou",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --tp 0",
            "--tp must be at least 1",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --pp 999 --gpus 999",
            "999 GPUs do not fill whole nodes of 8",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --zero 4",
            "ZeRO stage is out of range: 4",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --checkpointing sometimes",
            "--checkpointing: unknown checkpointing mode `som",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --optimizer lion",
            "--optimizer: unknown optimizer `lion` (expected ",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --precision fp12",
            "--precision: unknown precision `fp12` (did you mean `fp16`? expected ",
        ),
        (
            "estimate --model gpt2 --task pretrain --gpu A30 --precision int4",
            "--precision int4 does not train weights",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --framework keras",
            "--framework: unknown framework `keras` (expected o",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --framework torchtitan",
            "--framework applies to training tasks (pretrain,",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --kv-cache-dtype fp8",
            "--kv-cache-dtype applies to --task inference",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --kv-cache-dtype fp4",
            "--kv-cache-dtype: unknown KV-cache type `fp4` (did you mean `fp8`? e",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --gpus 8 --ep-overlap",
            "--ep-overlap applies to training a mixture-of-experts model with expert parallelism (--ep 2",
        ),
        (
            "estimate --model qwen3-30b-a3b --task pretrain --gpu H100-SXM5-80GB --gpus 8 --ep 8 --ep-overlap --framework torchtitan",
            "--ep-overlap and --framework disagree",
        ),
        (
            "estimate --model qwen3-30b-a3b --task pretrain --gpu H100-SXM5-80GB --gpus 16 --pp 2 --ep 8 --ep-overlap",
            "--ep-overlap needs --vp with pipeline stages",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --lora-targets q,v",
            "--lora-targets applies to --task lora or qlora",
        ),
        (
            "estimate --model llama-3.1-8b --task lora --gpu H100-SXM5-80GB --lora-targets everything",
            "--lora-targets: unknown set of LoRA targets `eve",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --offload optimizer",
            "--offload applies to training tasks (pretrain, f",
        ),
        (
            "estimate --model llama-3.1-8b --task finetune --gpu H100-SXM5-80GB --gpus 8 --zero 1 --offload params",
            "--offload params needs sharded parameters (ZeRO-",
        ),
        (
            "estimate --model llama-3.1-8b --task finetune --gpu H100-SXM5-80GB --offload gpu",
            "--offload: unknown offload target `gpu` (expecte",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --tokens -5",
            "invalid value '-5' for '--tokens <TOKENS>': `-5`",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --tokens nan",
            "invalid value 'nan' for '--tokens <TOKENS>': `na",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --tokens 1e400",
            "invalid value '1e400' for '--tokens <TOKENS>': `",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --epochs 2",
            "--epochs needs --dataset-size (samples per epoch",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --memory-margin 0.95",
            "--memory-margin must be between 0 and 0.9",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --memory-margin -0.1",
            "--memory-margin must be between 0 and 0.9",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --engine nosuch",
            "--engine: unknown engine `nosuch` (expected one ",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --qps -1",
            "--qps must be a positive number, found -1",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --ttft fast",
            "invalid value 'fast' for '--ttft <[pNN:]DURATION",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --ttft p101:1s",
            "invalid value 'p101:1s' for '--ttft <[pNN:]DURAT",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100-SXM5-80GB --tpot 0ms",
            "invalid value '0ms' for '--tpot <[pNN:]DURATION>",
        ),
        (
            "estimate --model bert-base-uncased --task inference --gpu H100-SXM5-80GB --output-tokens 10",
            "generation is not available for bert-base-uncase",
        ),
        (
            "estimate --model resnet-50 --task inference --gpu A100-SXM4-80GB --resolution 16",
            "image side for a convolutional network (32–16384 pixels) is out",
        ),
        (
            "estimate --model resnet-50 --task inference --gpu A100-SXM4-80GB --resolution 100000",
            "image side for a convolutional network (32–16384 pixels) is out",
        ),
        (
            "estimate --model resnet-50 --task pretrain --gpu A100-SXM4-80GB --tokens 1e9",
            "--tokens applies to text models, which train on ",
        ),
        (
            "estimate --model sdxl --task inference --gpu A100-SXM4-80GB --steps 0",
            "denoising steps (1 to 10000) is out of range: 0",
        ),
        (
            "estimate --model {tmp}/badcfg.json --task inference --gpu A100-SXM4-80GB",
            "{tmp}/badcfg.json: the config has no `model_t",
        ),
        (
            "estimate --model {tmp}/zero_layers.json --task inference --gpu A100-SXM4-80GB",
            "{tmp}/zero_layers.json: field `num_hidden_lay",
        ),
        (
            "estimate --model {tmp}/nonexistent.json --task inference --gpu A100-SXM4-80GB",
            "{tmp}/nonexistent.json: no such file",
        ),
        (
            "estimate --model /tmp --task inference --gpu A100-SXM4-80GB",
            "unknown model `/tmp`",
        ),
        (
            "estimate --model llama-3.1-8b --gpu H100-SXM5-80GB",
            "the following required arguments were not provid",
        ),
        (
            "estimate --task pretrain --gpu H100-SXM5-80GB",
            "the following required arguments were not provid",
        ),
    ]);
}

#[test]
fn plan() {
    check(&[
        ("plan --model nosuch --task pretrain", "unknown model `nosuch`"),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --seq 1024 --mean-seq 2048",
            "--mean-seq 2048 is longer than --seq 1024",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 1 --mean-seq 100",
            "--mean-seq applies to training tasks",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens -1",
            "invalid value '-1' for '--tokens <TOKENS>': `-1`",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --deadline 0h",
            "invalid value '0h' for '--deadline <DURATION>': ",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --deadline forever",
            "invalid value 'forever' for '--deadline <DURATIO",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --budget -100",
            "--budget must be a positive number, found",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --budget nan",
            "--budget must be a positive number, found",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --max-gpus 0",
            "--max-gpus must be at least 1",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --providers nosuch",
            "unknown provider `nosuch`",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --regions",
            "a value is required for '--regions <REGIONS>' bu",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --precision fp12",
            "--precision: unknown precision `fp12` (did you mean `fp16`? expected ",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --billing sometimes",
            "--billing: unknown billing mode `sometimes`",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --objective beauty",
            "invalid value 'beauty' for '--objective <OBJECTI",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --top 0",
            "--top must be at least 1",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --qps 10",
            "--qps applies to --task inference",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --engine vllm",
            "--engine applies to --task inference",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --kv-cache-dtype fp8",
            "--kv-cache-dtype applies to --task inference",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --framework megatron",
            "--framework applies to training tasks (pretrain,",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --offload optimizer",
            "--offload applies to training tasks (pretrain, f",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --optimizer adamw",
            "--optimizer applies to training tasks (pretrain,",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --checkpointing full",
            "--checkpointing applies to training tasks (pretr",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --lora-targets q,v",
            "--lora-targets applies to --task lora or qlora",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --lora-rank 8",
            "--lora-rank applies to --task lora or qlora",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 0",
            "--qps must be a positive number, found",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps -3",
            "--qps must be a positive number, found",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --peak-qps 5",
            "--peak-qps 5 is below --qps 10",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --headroom 0.95",
            "--headroom 0.95 is outside 0 to 0.9",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --headroom NaN",
            "--headroom NaN is outside 0 to 0.9",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 1e8 --max-hourly-price 0",
            "--max-hourly-price must be a positive number",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 1e8 --tolerance 1.5",
            "--tolerance 1.5 is outside 0 to 1",
        ),
        (
            "plan --workload tabular --rows 1e6 --features 50 --tolerance 0.2",
            "--tolerance applies to a model and task, not --workload tabular",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 1e8 --headroom 0.2",
            "--headroom applies to --task inference",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --concurrency 50",
            "--qps and --concurrency are two ways to state the load",
        ),
        (
            "plan --model llama-3.1-8b --task inference --concurrency 0",
            "--concurrency 0 is not a number of users",
        ),
        (
            "plan --model resnet-50 --task inference --concurrency 10",
            "--concurrency applies to text generation",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --max-num-seqs 0",
            "--max-num-seqs must be at least 1",
        ),
        (
            "estimate --model llama-3.1-8b --task lora --gpu H100 --scheduler-steps 4",
            "--scheduler-steps applies to serving (--task inference)",
        ),
        (
            "estimate --model deepseek-v3 --task inference --gpu H200 --gpus 8 --tp 8 --ep 3 --precision fp8",
            "must divide the tensor-parallel GPUs of a replica and the experts",
        ),
        (
            "estimate --model llama-3.1-8b --task lora --gpu H100 --reserve-full-context false",
            "--reserve-full-context applies to serving (--task inference)",
        ),
        (
            "plan --model resnet-50 --task inference --reserve-full-context true",
            "--reserve-full-context applies to text generation",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --engine vllm --engine-backend tensorrt",
            "--engine-backend applies to TensorRT-LLM (--engine tensorrt-llm)",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --engine tensorrt-llm --engine-backend onnx",
            "unknown TensorRT-LLM backend `onnx`",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --engine vllm@next",
            "`next` is not a release line",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --gpu-memory-fraction 1.5",
            "--gpu-memory-fraction 1.5 is not a share of the GPU's memory above 0 and at most 1",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --engine llama.cpp --gpu-memory-fraction 0.9",
            "--gpu-memory-fraction applies to generative models served by a continuous-batching engine",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --engine pytorch --max-num-seqs 8",
            "--max-num-seqs applies to generative models served by a continuous-batching engine",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --engine vllm --gpu-layers 20",
            "--gpu-layers applies to llama.cpp (--engine llama.cpp)",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --engine llama.cpp --host-bandwidth 90",
            "--host-bandwidth needs --gpu-layers",
        ),
        (
            "estimate --model llama-3.1-8b --task lora --gpu H100 --engine llama.cpp --gpu-layers 20",
            "--gpu-layers applies to serving",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --qps 2 --concurrency 8",
            "--qps and --concurrency are two ways to state the load",
        ),
        (
            "plan -f {tmp}/nan_tokens.yaml",
            "`tokens`: NaN is not a number a job can use",
        ),
        (
            "plan -f {tmp}/inf_budget.yaml",
            "`budget`: inf is not a number a job can use",
        ),
        (
            "plan -f {tmp}/good_lora.yaml --budget NaN",
            "--budget: not a finite number",
        ),
        ("plan -f {tmp}/nested_extra.yaml", "unknown field `extra`"),
        (
            "plan -f {tmp}/percentile_150.yaml",
            "a percentile lies strictly between 0 and 100",
        ),
        ("plan -f {tmp}/deep.yaml", "brackets nested more than 16 deep"),
        (
            "rightsize --nvidia-smi {tmp}/util_1000.csv",
            "utilisation 1000 % is not a share of time",
        ),
        (
            "rightsize --nvidia-smi {tmp}/mem_over.csv",
            "MiB of memory used on a GPU of 81920 MiB",
        ),
        ("rightsize --nvidia-smi {tmp}/truncated.csv", "a truncated row"),
        (
            "rightsize --nvidia-smi {tmp}/good_smi.csv --price NaN",
            "--price must be a positive rate per GPU-hour",
        ),
        ("forecast --history {tmp}/late.csv --horizon 12", "past the year 9999"),
        (
            "forecast --history {tmp}/sparse.csv --horizon 5",
            "too many gaps to fill",
        ),
        (
            "estimate --model {tmp}/heads_30.json --task inference --gpu H100",
            "30 heads do not divide the hidden size 4096",
        ),
        (
            "estimate --model {tmp}/context_0.json --task inference --gpu H100",
            "`max_position_embeddings`: must be positive",
        ),
        (
            "estimate --model {tmp}/tie_yes.json --task inference --gpu H100",
            "expected true or false",
        ),
        (
            "estimate --model {tmp}/t5_no_decoder.json --task inference --gpu H100",
            "`num_decoder_layers`: must be positive",
        ),
        (
            "compat --driver 0.0",
            "older than any driver the compatibility data covers",
        ),
        ("compat --cuda 99.9", "not a release the compatibility data knows"),
        ("energy --gpu H100 --hours 5e8", "--hours 5e8 is more than a century"),
        (
            "cost --instance p5.48xlarge --hours 1 --egress-gb 1e308",
            "--egress-gb 1e308 is beyond any job's traffic",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 1e-320",
            "--qps 1e-320 is outside the loads a service is sized for",
        ),
        (
            "estimate --model llama-3.1-8b --task lora --gpu H100 --calibration {tmp}/calibration_negative.json",
            "the bf16 compute factor ×-1 is not a measurement",
        ),
        (
            "probe --from {tmp}/probe_zero.json --calibration-out {tmp}/never.json",
            "GEMM of 0 TFLOPS is not a measurement",
        ),
        (
            "export --to k8s {tmp}/plan_no_gpus.json",
            "configuration 1: 0 GPUs, 8 per node on 1 nodes",
        ),
        (
            "export --to k8s {tmp}/plan_million_nodes.json",
            "8000000 GPUs, 8 per node on 1000000 nodes",
        ),
        (
            "export --to k8s {tmp}/plan_upside_down.json",
            "an autoscaling range of 10 to 1 replicas",
        ),
        (
            "export --to k8s {tmp}/plan_upside_down.json --format json",
            "--format does not apply to export",
        ),
        ("init {tmp}/never.yaml --format json", "--format does not apply to init"),
        (
            "catalog refresh --provider azure --from {tmp} --into {tmp}/never --format json",
            "--format does not apply to catalog refresh",
        ),
        (
            "rightsize --prometheus http://127.0.0.1:1",
            "cannot connect (within 10 s)",
        ),
        (
            "cost --instance p5.48xlarge --hours 10000 --billing spot --checkpoint-minutes 1 --monte-carlo 1000000",
            "over 50 million",
        ),
        (
            "cost --instance p5.48xlarge --hours 1 --savings-discount NaN",
            "--savings-discount applies with --savings-plan",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --precision int8:bnb-nf4",
            "the bnb-nf4 kernel does not run int8 weights",
        ),
        (
            "estimate --model llama-3.1-8b --task inference --gpu H100 --precision int4:turbo",
            "unknown weight kernel `turbo`",
        ),
        (
            "estimate --model llama-3.1-8b --task lora --gpu H100 --precision int4:marlin",
            "names an inference kernel; lora does not run one",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --ttft p90:-1s",
            "invalid value 'p90:-1s' for '--ttft <[pNN:]DURAT",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --requests {tmp}/nonexistent.csv",
            "--requests {tmp}/nonexistent.csv: cannot be read",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --requests {tmp}/junk.csv",
            "--requests {tmp}/junk.csv, line 1: no request",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --requests {tmp}/requests.csv --output-tokens 0",
            "--output-tokens 0: would scale the request log'",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --prefix-cache-hit 1.5",
            "--prefix-cache-hit: a prefix-cache hit rate lies",
        ),
        (
            "plan --model llama-3.1-8b --task inference --qps 10 --engine pytorch --prefix-cache-hit 0.5",
            "--prefix-cache-hit applies to text generation se",
        ),
        (
            "plan --model llama-3.1-8b --task inference --dataset-size 1000 --qps 5",
            "--qps applies to online serving, not to a batch ",
        ),
        (
            "plan --model llama-3.1-8b --task inference --deadline 5h",
            "--deadline applies to training, or to batch infe",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --min-vcpus-per-gpu nan",
            "--min-vcpus-per-gpu must be zero or more, found ",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --min-host-memory-gib-per-gpu -1",
            "unexpected argument '--min-host-memory-gib-per-g",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --checkpoint-every 0h",
            "invalid value '0h' for '--checkpoint-every <DURA",
        ),
        (
            "plan --model resnet-50 --task pretrain --tokens 1e9",
            "--tokens applies to text models, which train on ",
        ),
        (
            "plan --model resnet-50 --task pretrain --dataset-size 1281167 --epochs 90 --input-pipeline warp",
            "--input-pipeline: unknown pipeline `warp`",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --input-pipeline dali",
            "--input-pipeline applies to training of image mo",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --epochs 2",
            "--epochs needs --dataset-size (samples per epoch",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --stack cobol",
            "--stack: unknown software stack `cobol` (expecte",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --micro-batch 0",
            "--micro-batch must be at least 1",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --micro-batch 9223372036854775808",
            "--micro-batch 9223372036854775808 is beyond any ",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --batch 0",
            "--batch must be at least 1",
        ),
        (
            "plan --model llama-3.1-8b --task pretrain --tokens 1e9 --memory-margin 2",
            "--memory-margin must be between 0 and 0.9",
        ),
    ]);
}

#[test]
fn cost() {
    check(&[
        ("cost", "the following required arguments were not provid"),
        (
            "cost --price -1 --hours 10",
            "--price must be a positive number, found -1",
        ),
        (
            "cost --price 3 --hours -1",
            "--hours must be between 0 and 876000 (a century)",
        ),
        (
            "cost --price 3 --hours 0",
            "--hours must be between 0 and 876000 (a century)",
        ),
        (
            "cost --price 3 --hours 1e308",
            "--hours must be between 0 and 876000 (a century)",
        ),
        (
            "cost --price nan --hours 10",
            "--price must be a positive number, found NaN",
        ),
        (
            "cost --price 3 --hours 10 --billing spot",
            "no billing mode could be priced",
        ),
        (
            "cost --price 3 --hours 10 --billing sometimes",
            "--billing: unknown billing mode `sometimes`",
        ),
        (
            "cost --instance nosuch.xlarge --hours 10",
            "no offering `nosuch.xlarge` in the catalog",
        ),
        (
            "cost --instance p4d.24xlarge --hours 10 --region mars-",
            "`p4d.24xlarge` is not offered in the providers a",
        ),
        (
            "cost --instance p4d.24xlarge --hours 10 --billing spot --monte-carlo 4294967295",
            "--monte-carlo 4294967295: give between 1 and 100",
        ),
        (
            "cost --instance p4d.24xlarge --hours 10 --billing spot --interruption-rate -1",
            "interruption rate must be a non-negative number ",
        ),
        (
            "cost --instance p4d.24xlarge --hours 1000000 --billing spot --checkpoint-minutes 10 --interruption-rate 50",
            "--hours must be between 0 and 876000 (a century)",
        ),
        (
            "cost --price 3 --hours 10 --storage-gb NaN",
            "--storage-gb must be zero or ",
        ),
        (
            "cost --price 3 --hours 10 --storage-gb -5",
            "--storage-gb must be zero or ",
        ),
        (
            "cost --price 3 --hours 10 --egress-gb -1",
            "--egress-gb must be zero or more, found -1",
        ),
        (
            "cost --price 3 --hours 10 --tiers nonsense",
            "invalid value 'nonsense' for '--tiers <TIERS>': ",
        ),
        (
            "cost --price 3 --hours 10 --tiers 100:2",
            "must start at hour 0 with positive price",
        ),
        (
            "cost --price 3 --hours 10 --utilisation 0.5",
            "--utilisation applies to reserved billing",
        ),
        (
            "cost --price 3 --hours 10 --minimum-hours -1",
            "--minimum-hours must be zero or more, found -1",
        ),
        (
            "cost --price 3 --hours 10 --savings-plan -1",
            "--savings-plan must be a positive commitment in ",
        ),
        (
            "cost --price 3 --hours 10 --checkpoint-minutes 10",
            "--checkpoint-minutes, --interruption-rate and --",
        ),
        (
            "cost --price 3 --hours 10 --currency XYZ",
            "--currency XYZ: the catalog has no exchange rate",
        ),
    ]);
}

#[test]
fn energy() {
    check(&[
        (
            "energy --gpu nosuch --gpus 1 --hours 10",
            "unknown accelerator `nosuch`",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 0 --hours 10",
            "--gpus must be at least 1",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 1 --hours -10",
            "--hours must be a positive number, found -10",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 1 --hours 10 --pue 0.5",
            "PUE must be at least 1 (it is total facility pow",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 1 --hours 10 --pue nan",
            "PUE must be at least 1 (it is total facility pow",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 1 --hours 10 --price-kwh -1",
            "--price-kwh must be a positive number, found -1",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 1 --hours 10 --utilization 2",
            "utilization must be between 0 and 1; got 2",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 1 --hours 10 --purchase-price NaN --rent-price 2",
            "--purchase-price must be a positive number, foun",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 1 --hours 10 --purchase-price 30000 --rent-price 0",
            "--rent-price must be a positive number, found 0",
        ),
        (
            "energy --gpu H100-SXM5-80GB --gpus 1 --hours 10 --purchase-price 30000 --rent-price 2 --depreciation-years 0",
            "--depreciation-years must be a positive number, ",
        ),
    ]);
}

#[test]
fn forecast() {
    check(&[
        (
            "forecast --history {tmp}/nonexistent.csv",
            "--history {tmp}/nonexistent.csv: cannot be re",
        ),
        ("forecast --history /tmp", "--history /tmp: is not a file"),
        (
            "forecast --history {tmp}/short.csv",
            "history: 1 observations are too few to forecast ",
        ),
        (
            "forecast --history {tmp}/junk.csv",
            "history: the history has no `timestamp` column",
        ),
        (
            "forecast --history {tmp}/junk.csv --value-column busy",
            "history: the history has no `timestamp` column",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --horizon 0",
            "the horizon must be at least one period",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --period hour",
            "an hourly forecast needs timestamps with a time of day",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --horizon 4294967296",
            "a horizon of 4294967296 periods reaches beyond w",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --horizon 1000000",
            "a horizon of 1000000 periods reaches beyond what",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --level 1.5",
            "the interval level must be between 0 and 1",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --level nan",
            "the interval level must be between 0 and 1",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --term 5y",
            "--term `5y` is not 1y or 3y",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --on-demand-price -1",
            "prices and period length must be positive",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --period fortnight",
            "invalid value 'fortnight' for '--period <PERIOD>",
        ),
        (
            "forecast --history {fixtures}/air-passengers.csv --unit furlongs",
            "invalid value 'furlongs' for '--unit <UNIT>'",
        ),
    ]);
}

#[test]
fn serve() {
    check(&[
        ("serve --addr nowhere", "invalid value 'nowhere' for '--addr <ADDR>'"),
        (
            "serve --addr 127.0.0.1:99999",
            "invalid value '127.0.0.1:99999' for '--addr <ADDR>'",
        ),
        ("--format json serve", "--format does not apply to serve"),
        ("--currency CNY serve", "--currency does not apply to serve"),
    ]);
}

#[test]
fn global_flags_and_commands() {
    check(&[
        (
            "--prices {tmp}/badprices.toml gpus",
            "--prices {tmp}/badprices.toml: line 1: missin",
        ),
        (
            "--prices {tmp}/nonexistent.toml gpus",
            "--prices {tmp}/nonexistent.toml: cannot be re",
        ),
        ("--catalog /tmp/bad gpus", "the catalog could not be loaded"),
        ("--catalog /nonexistent gpus", "the catalog could not be loaded"),
        (
            "--currency ABC gpus",
            "--currency ABC: the catalog has no exchange rate",
        ),
        ("--format nope gpus", "invalid value 'nope' for '--format <FORMAT>'"),
        ("nosuchcommand", "unrecognized subcommand 'nosuchcommand'"),
    ]);
}

#[test]
fn model_configs_and_consistency() {
    check(&[
        (
            "estimate --model {tmp}/vocab_max.json --task inference --gpu A100-SXM4-80GB",
            "field `vocab_size`: 18446744073709551615 is beyond any real model",
        ),
        (
            "estimate --model {tmp}/kv0.json --task inference --gpu A100-SXM4-80GB",
            "field `num_key_value_heads`: must be positive",
        ),
        (
            "estimate --model {tmp}/heads_notdiv.json --task inference --gpu A100-SXM4-80GB",
            "30 heads do not divide the hidden size",
        ),
        (
            "estimate --model {tmp}/headdim0.json --task inference --gpu A100-SXM4-80GB",
            "field `head_dim`: must be positive",
        ),
        (
            "estimate --model {tmp}/layers_huge.json --task inference --gpu A100-SXM4-80GB",
            "field `num_hidden_layers`: 1000000000000 is beyond any real model",
        ),
        (
            "estimate --model {tmp}/topk.json --task inference --gpu A100-SXM4-80GB",
            "field `num_experts_per_tok`: 9 experts per token out of 8",
        ),
        (
            "estimate --model {tmp}/bert_tv.json --task inference --gpu A100-SXM4-80GB",
            "field `type_vocab_size`",
        ),
        (
            "estimate --model {tmp}/vit_img.json --task inference --gpu A100-SXM4-80GB",
            "field `image_size`",
        ),
        (
            "estimate --model {tmp}/vit_patch0.json --task inference --gpu A100-SXM4-80GB",
            "field `patch_size`",
        ),
        (
            "plan --model llama-3.1-8b --task lora --tokens 5e8 --deadline 1e308h",
            "is longer than any job",
        ),
        (
            "plan --model llama-3.1-8b --task lora --seq 0",
            "--seq must be at least 1",
        ),
        (
            "plan --model llama-3.1-8b --task lora --lora-rank 0",
            "--lora-rank must be at least 1",
        ),
        (
            "plan --model sdxl --task pretrain --tokens 1e8",
            "--tokens applies to text models",
        ),
        ("instances --include-cpu --provider nosuch", "unknown provider `nosuch`"),
        (
            "plan --model llama-3.1-8b --task lora --tokens 1e30",
            "is beyond any real workload (at most 1e18)",
        ),
        (
            "cost --price 1e16 --hours 10",
            "--price 1e16 is beyond any rental price",
        ),
        (
            "estimate --model llama-3.1-8b --task pretrain --gpu H100-SXM5-80GB --gpus 4294967295",
            "is more than any cluster holds",
        ),
    ]);
}

/// A pasted 100 kB value is cut in the message, not echoed back whole.
#[test]
fn long_values_are_cut_in_messages() {
    let long = "x".repeat(100_000);
    let output = run(&["cost", "--instance", &long, "--hours", "1"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.len() < 2_000, "{} bytes of message", stderr.len());
    assert!(stderr.contains("xxx"), "{stderr}");
}

/// Runs gpuplan with `args`, away from any catalog or price overlay in the environment.
fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(args)
        .env_remove("GPUPLAN_CATALOG")
        .env_remove("GPUPLAN_PRICES")
        .env_remove("GPUPLAN_GCP_API_KEY")
        .env_remove("GPUPLAN_LAMBDA_API_KEY")
        .env("NO_COLOR", "1")
        .output()
        .expect("the gpuplan binary runs")
}

/// A copy of the built-in catalog in the scratch folder `name`, written as `catalog refresh`
/// writes one (from the recorded Azure pages).
fn copied_catalog(name: &str) -> std::path::PathBuf {
    let copy = scratch().join(name);
    let pages = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../gpuplan-catalog/tests/fixtures/refresh/azure"
    );
    let written = run(&[
        "catalog",
        "refresh",
        "--provider",
        "azure",
        "--from",
        pages,
        "--into",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(
        written.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    copy
}

/// A copy of the built-in data read as `--catalog` knows every model the built-in one knows.
#[test]
fn a_copied_catalog_keeps_its_models() {
    let copy = copied_catalog("catalog-copy");
    let listed = run(&["--catalog", copy.to_str().unwrap(), "models", "--format", "json"]);
    assert_eq!(listed.status.code(), Some(0));
    let models = String::from_utf8_lossy(&listed.stdout);
    assert!(
        models.contains("llama-3.1-8b") && models.contains("resnet-50"),
        "{models}"
    );
}

/// A catalog entry without a memory bandwidth is "unknown", not "infinitely fast": serving
/// on it is refused, naming the missing figure, where decode would otherwise look free.
#[test]
fn a_gpu_without_a_memory_bandwidth_is_not_served_for_free() {
    let copy = copied_catalog("catalog-no-bandwidth");
    let file = copy.join("accelerators/nvidia-workstation-consumer.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let at = text.find("id = \"RTX-4000-ADA\"").unwrap();
    let line = "memory_bandwidth_gb_per_s = 360\n";
    let cut = at + text[at..].find(line).unwrap();
    std::fs::write(&file, format!("{}{}", &text[..cut], &text[cut + line.len()..])).unwrap();
    let refused = run(&[
        "--catalog",
        copy.to_str().unwrap(),
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--task",
        "inference",
        "--gpu",
        "RTX-4000-ADA",
    ]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no memory bandwidth for RTX-4000-ADA"), "{stderr}");
    // Training does not read it, and still answers.
    let training = run(&[
        "--catalog",
        copy.to_str().unwrap(),
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--task",
        "qlora",
        "--gpu",
        "RTX-4000-ADA",
    ]);
    assert_eq!(
        training.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&training.stderr)
    );
}

/// Six observations, the stated minimum, are forecast rather than failing every candidate.
#[test]
fn the_minimum_history_is_forecast() {
    let history = scratch().join("six.csv");
    let rows: String = (1..=6).map(|d| format!("2024-01-0{d},{d}\n")).collect();
    std::fs::write(&history, format!("timestamp,value\n{rows}")).unwrap();
    let output = run(&[
        "forecast",
        "--history",
        history.to_str().unwrap(),
        "--horizon",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
