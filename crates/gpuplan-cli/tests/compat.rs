//! `gpuplan compat` as a user runs it: exit 0 when everything runs together, 1 when something
//! breaks (with the fix), 2 for a question it cannot read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

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
fn compat_answers_ok_or_what_breaks_with_the_fix() {
    let (code, stdout, _) = gpuplan(&[
        "compat",
        "--gpu",
        "T4",
        "--framework",
        "pytorch==2.5",
        "--cuda",
        "12.4",
        "--driver",
        "535.104.05",
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.ends_with("compatible\n"), "{stdout}");
    assert!(stdout.contains("lacks: bf16"), "{stdout}");
    let (code, stdout, _) = gpuplan(&["compat", "--gpu", "V100", "--cuda", "13.0"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("FAIL gpu") && stdout.contains("fix: use CUDA 12.9 or earlier"),
        "{stdout}"
    );
    let (code, _, stderr) = gpuplan(&["compat", "--driver", "five-fifty"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--driver"), "{stderr}");
    let (code, stdout, _) = gpuplan(&["compat", "--gpu", "H100", "--format", "json"]);
    assert_eq!(code, 0);
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["compute_capability"], "9.0");
}
