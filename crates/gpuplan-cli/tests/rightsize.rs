//! `gpuplan rightsize` on recorded-format telemetry (`crates/gpuplan-telemetry/tests/fixtures`,
//! written by its `make_fixtures.py`): what an experienced engineer would flag is flagged, the
//! hourly history feeds `forecast`, and damaged files are refused with their line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuplan-telemetry/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

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

fn kinds(answer: &Value, subject_part: &str) -> Vec<String> {
    answer["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["subject"].as_str().unwrap().contains(subject_part))
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Four A100s: two train in working hours, one serves a small model at 15 % busy in 12 GB,
/// one was left idle. The idle one is to be released (and not also resized); the small service
/// fits a smaller GPU or a MIG slice; the trainers, idle at night only, are left alone.
#[test]
fn an_idle_gpu_and_an_oversized_service_are_found_in_nvidia_smi_logs() {
    let history = std::env::temp_dir().join(format!("gpuplan-rightsize-{}.csv", std::process::id()));
    let (code, stdout, stderr) = gpuplan(&[
        "rightsize",
        "--nvidia-smi",
        &fixture("nvidia-smi.csv"),
        "--provider",
        "aws,gcp,azure",
        "--history",
        &history.display().to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["gpus"].as_array().unwrap().len(), 4);
    assert_eq!(kinds(&answer, "GPU-a100-0003"), ["idle"]);
    let service = kinds(&answer, "GPU-a100-0002");
    assert!(
        service.contains(&"smaller-gpu".to_string()) && service.contains(&"mig".to_string()),
        "{service:?}"
    );
    assert!(
        kinds(&answer, "GPU-a100-0000").is_empty(),
        "a trainer busy by day is not waste"
    );
    assert!(answer["savings_usd_per_month"].as_f64().unwrap() > 0.0);
    // The smaller GPU runs the same software and keeps the memory bandwidth the service used:
    // no Inferentia for a CUDA service, no L4 (300 GB/s) for 22 % of an A100's 2 TB/s.
    let findings = answer["findings"].as_array().unwrap();
    let smaller = findings.iter().find(|f| f["kind"] == "smaller-gpu").unwrap()["what"]
        .as_str()
        .unwrap();
    for wrong in ["Inferentia", "Trainium", "TPU", "fit a L4 "] {
        assert!(!smaller.contains(wrong), "{smaller}");
    }
    // The hourly history is what forecast reads.
    let text = std::fs::read_to_string(&history).unwrap();
    assert!(text.starts_with("timestamp,value\n2024-05-01T00:00,"), "{text}");
    assert_eq!(text.lines().count(), 1 + 72);
    let (code, _, stderr) = gpuplan(&[
        "forecast",
        "--history",
        &history.display().to_string(),
        "--period",
        "hour",
        "--horizon",
        "6",
    ]);
    assert_eq!(code, 0, "{stderr}");
}

/// On Kubernetes, DCGM names the pods: the training pod keeps its tensor cores idle while
/// busy, and the service spread over four GPUs at 15 % would run on one.
#[test]
fn dcgm_scrapes_find_idle_tensor_cores_and_a_spread_out_service() {
    let (code, stdout, stderr) = gpuplan(&["rightsize", "--dcgm", &fixture("dcgm.prom"), "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert!(kinds(&answer, "GPU-h100-0000").contains(&"low-tensor-activity".to_string()));
    assert_eq!(kinds(&answer, "ml/serve-0"), ["fewer-gpus"]);
    let jobs = answer["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    let serve = jobs.iter().find(|j| j["job"] == "ml/serve-0").unwrap();
    assert_eq!(serve["gpus"], 4);
}

#[test]
fn damaged_telemetry_is_refused_with_its_line() {
    let dir = std::env::temp_dir().join(format!("gpuplan-rightsize-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let truncated = dir.join("truncated.csv");
    let full = std::fs::read_to_string(fixture("nvidia-smi.csv")).unwrap();
    std::fs::write(&truncated, format!("{}, 0, NVIDIA A100", &full[..2000])).unwrap();
    let (code, _, stderr) = gpuplan(&["rightsize", "--nvidia-smi", &truncated.display().to_string()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("truncated.csv: line "), "{stderr}");
    let broken = dir.join("broken.prom");
    std::fs::write(&broken, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\" 50\n").unwrap();
    let (code, _, stderr) = gpuplan(&["rightsize", "--dcgm", &broken.display().to_string()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("broken.prom: line 1"), "{stderr}");
    let (code, _, stderr) = gpuplan(&["rightsize"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--nvidia-smi"), "{stderr}");
}

/// `nvidia-smi -q -x` snapshots are read as well as CSV logs: an L4 idle but for one burst.
#[test]
fn nvidia_smi_xml_snapshots_are_read_too() {
    let (code, stdout, stderr) = gpuplan(&[
        "rightsize",
        "--nvidia-smi",
        &fixture("nvidia-smi-q.xml"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["gpus"][0]["accelerator"], "L4");
    assert_eq!(answer["gpus"][0]["samples"], 6);
    assert_eq!(kinds(&answer, "GPU-l4-0000"), ["idle"]);
}
