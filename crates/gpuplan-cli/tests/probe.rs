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
