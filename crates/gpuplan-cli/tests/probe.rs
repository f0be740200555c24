//! `gpuplan probe` as a user runs it: on a machine without an NVIDIA driver it fails cleanly
//! (exit 2, what to install); a report read back with `--from` is checked against the catalog.
//! (`tests/fixtures/probe/example-8xh100.json` is an example in the format `probe --out` writes,
//! not a measurement: one GPU is power-capped to show the check.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::process::Command;

fn gpuplan(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(args)
        .env_remove("GPUPLAN_CATALOG")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn without_a_driver_the_probe_says_what_to_install() {
    let (code, stdout, stderr) = gpuplan(&["probe"]);
    if code == 0 {
        // A machine with a GPU: the probe read it.
        assert!(stdout.contains("driver "), "{stdout}");
        return;
    }
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no NVIDIA driver found"), "{stderr}");
    assert!(stderr.contains("nvidia-driver"), "{stderr}");
}

#[test]
fn a_report_is_checked_against_the_catalog() {
    let report = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/probe/example-8xh100.json");
    let (code, stdout, stderr) = gpuplan(&["probe", "--from", report, "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    let devices = answer["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 8);
    assert!(devices.iter().all(|d| d["accelerator"] == "H100-SXM5-80GB"));
    let capped: Vec<&Value> = devices
        .iter()
        .filter(|d| !d["notes"].as_array().unwrap().is_empty())
        .collect();
    assert_eq!(capped.len(), 1);
    assert!(
        capped[0]["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("power capped at 500 W")
    );
    let (code, _, stderr) = gpuplan(&["probe", "--from", "Cargo.toml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("probe --out"), "{stderr}");
}

/// The example machine with every GPU capped at 500 W (an example, not a measurement).
const CAPPED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/probe/example-8xh100-capped-measured.json"
);

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gpuplan-probe-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Writes the capped example machine's calibration to a temporary `name`; its path and what
/// `probe` printed.
fn calibrate_capped(name: &str) -> (std::path::PathBuf, String) {
    let calibration = temp(name);
    let (code, stdout, stderr) = gpuplan(&[
        "probe",
        "--from",
        CAPPED,
        "--calibration-out",
        calibration.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    (calibration, stdout)
}

fn training_seconds(extra: &[&str]) -> f64 {
    let args = [
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--task",
        "lora",
        "--gpu",
        "H100-SXM5-80GB",
        "--tokens",
        "1e8",
        "--format",
        "json",
    ];
    let (code, stdout, stderr) = gpuplan(&[&args[..], extra].concat());
    assert_eq!(code, 0, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    answer["training"]["time_seconds"].as_f64().unwrap()
}

#[test]
fn measurements_give_a_calibration_that_slows_the_estimates_of_a_slow_machine() {
    let (calibration, stdout) = calibrate_capped("capped.calibration.json");
    // Measured 631 TFLOPS bf16 against the published 796 of a 700 W H100 SXM.
    assert!(
        stdout.contains("bf16 GEMM 631 TFLOPS measured (median of 8 GPUs); published 796 (median of 2 runs) → ×0.79"),
        "{stdout}"
    );
    assert!(
        stdout.contains("all-reduce across 8 GPUs: bus bandwidth 352 GB/s"),
        "{stdout}"
    );
    // Against the 360 GB/s the estimates assume for 8 H100s on NVLink (450 GB/s a direction × 0.8).
    assert!(
        stdout.contains("the estimates assume 360 on NVLink → ×0.98"),
        "{stdout}"
    );
    let profile: Value = serde_json::from_str(&std::fs::read_to_string(&calibration).unwrap()).unwrap();
    let bf16 = profile["gpus"][0]["compute"]["bf16"].as_f64().unwrap();
    assert!((bf16 - 0.79).abs() < 0.01, "{bf16}");
    assert!(!profile["gpus"][0]["sources"].as_array().unwrap().is_empty());

    // A compute-bound LoRA run takes 1/0.79 as long on the capped machine.
    let datasheet = training_seconds(&[]);
    let calibrated = training_seconds(&["--calibration", calibration.to_str().unwrap()]);
    assert!(
        (datasheet / calibrated - bf16).abs() < 0.01,
        "{datasheet} → {calibrated}"
    );
    // Another GPU is not touched.
    let (_, a100, _) = gpuplan(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--task",
        "lora",
        "--gpu",
        "A100-SXM4-80GB",
    ]);
    let (_, a100_calibrated, _) = gpuplan(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--task",
        "lora",
        "--gpu",
        "A100-SXM4-80GB",
        "--calibration",
        calibration.to_str().unwrap(),
    ]);
    assert_eq!(a100, a100_calibrated);
    // The plan says it is calibrated.
    let (code, stdout, stderr) = gpuplan(&[
        "plan",
        "--model",
        "llama-3.1-8b",
        "--task",
        "lora",
        "--tokens",
        "1e8",
        "--gpu",
        "H100-SXM5-80GB",
        "--calibration",
        calibration.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("calibrated on driver 550.54.15, 8× NVIDIA H100 80GB HBM3"),
        "{stdout}"
    );
}

#[test]
fn a_calibration_needs_measurements_and_a_readable_file() {
    let facts_only = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/probe/example-8xh100.json");
    let out = temp("none.calibration.json");
    let (code, _, stderr) = gpuplan(&[
        "probe",
        "--from",
        facts_only,
        "--calibration-out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("the report has no measurements"), "{stderr}");
    let (code, _, stderr) = gpuplan(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--task",
        "lora",
        "--gpu",
        "H100",
        "--calibration",
        "Cargo.toml",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--calibration") && stderr.contains("probe --calibration-out"),
        "{stderr}"
    );
    let (code, _, stderr) = gpuplan(&["probe", "--from", facts_only, "--facts-only"]);
    assert_eq!(code, 2, "{stderr}");
}

const POC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/probe/example-poc-llama-3.1-8b-lora.json"
);

#[test]
fn a_proof_of_concept_is_compared_with_the_estimates_and_the_calibration_moves_them_toward_it() {
    let (calibration, _) = calibrate_capped("poc.calibration.json");
    let (code, stdout, stderr) = gpuplan(&[
        "probe",
        "--poc",
        "--from",
        POC,
        "--calibration",
        calibration.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    let runs = answer["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        let throughput = run["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["what"] == "training throughput")
            .unwrap();
        let measured = throughput["measured"].as_f64().unwrap();
        let estimated = throughput["estimated"].as_f64().unwrap();
        let calibrated = throughput["calibrated"].as_f64().unwrap();
        assert!(
            (measured - calibrated).abs() < (measured - estimated).abs(),
            "{} GPUs: measured {measured}, datasheet {estimated}, calibrated {calibrated}",
            run["gpus"]
        );
    }
    let decode = runs[0]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["what"] == "decode time per token (batch 1)")
        .unwrap();
    assert_eq!(decode["unit"], "ms");
    let (measured, estimated) = (
        answer["scaling_efficiency"][0].as_f64().unwrap(),
        answer["scaling_efficiency"][1].as_f64().unwrap(),
    );
    assert!((measured - 60681.0 / 8.0 / 8192.0).abs() < 1e-9, "{measured}");
    assert!(estimated > 0.5 && estimated <= 1.0, "{estimated}");
}

#[test]
fn a_proof_of_concept_says_what_it_cannot_run() {
    let (code, _, stderr) = gpuplan(&["probe", "--poc", "--model", "mixtral-8x7b", "--gpus", "1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("mixture-of-experts"), "{stderr}");
    let (code, _, stderr) = gpuplan(&[
        "probe",
        "--poc",
        "--model",
        "llama-3.1-8b",
        "--gpus",
        "1",
        "--python",
        "gpuplan-no-such-python",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`gpuplan-no-such-python` not found") && stderr.contains("PyTorch"),
        "{stderr}"
    );
    // Its flags need --poc.
    let (code, _, stderr) = gpuplan(&["probe", "--model", "llama-3.1-8b"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--poc"), "{stderr}");
    let (code, _, stderr) = gpuplan(&["probe", "--poc", "--gpus", "1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--poc needs --model"), "{stderr}");
}
