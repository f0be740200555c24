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

#[test]
fn serving_stacks_that_dropped_old_gpus_say_which_release_still_runs() {
    // vLLM's CUDA 13 wheels (0.20 on) start at Turing: a V100 needs 0.11 or earlier.
    let (code, stdout, _) = gpuplan(&["compat", "--gpu", "V100", "--framework", "vllm==0.20"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("FAIL framework-gpu"), "{stdout}");
    assert!(stdout.contains("use vllm 0.11 or earlier"), "{stdout}");
    // TensorRT-LLM supports Ampere and newer from 0.18: not a T4.
    let (code, stdout, _) = gpuplan(&["compat", "--gpu", "T4", "--framework", "tensorrt-llm==1.0"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("runs on compute capability 8.0+; the GPU is 7.5"),
        "{stdout}"
    );
    let (code, stdout, _) = gpuplan(&["compat", "--gpu", "L4", "--framework", "tensorrt-llm==1.0"]);
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn a_build_listed_for_a_cuda_major_covers_its_minors() {
    // ONNX Runtime 1.20 ships one CUDA 12.x package.
    let (code, stdout, _) = gpuplan(&["compat", "--framework", "onnxruntime==1.20", "--cuda", "12.4"]);
    assert_eq!(code, 0, "{stdout}");
    let (code, stdout, _) = gpuplan(&["compat", "--framework", "onnxruntime==1.20", "--cuda", "13.0"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("FAIL framework-cuda"), "{stdout}");
}

#[test]
fn containers_are_those_that_ship_the_framework_asked_and_run_on_the_driver() {
    let (code, stdout, _) = gpuplan(&["compat", "--framework", "tensorrt-llm==1.1", "--format", "json"]);
    assert_eq!(code, 0, "{stdout}");
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let containers: Vec<&str> = answer["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(containers.len(), 1, "{containers:?}");
    assert!(
        containers[0].starts_with("nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3"),
        "{containers:?}"
    );
    // PyTorch 2.5 shipped in the 24.08 to 24.10 PyTorch containers, newest first.
    let (_, stdout, _) = gpuplan(&["compat", "--framework", "pytorch==2.5", "--format", "json"]);
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let first = answer["containers"][0].as_str().unwrap();
    assert!(
        first.starts_with("nvcr.io/nvidia/pytorch:24.10-py3 (CUDA 12.6.2"),
        "{first}"
    );
    // A 535 driver is too old for that container's CUDA 13.0: no container is offered.
    let (_, stdout, _) = gpuplan(&[
        "compat",
        "--framework",
        "tensorrt-llm==1.1",
        "--driver",
        "535.104.05",
        "--format",
        "json",
    ]);
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["containers"].as_array().map(Vec::len), Some(0), "{stdout}");
}

#[test]
fn an_estimate_on_a_gpu_its_engine_build_does_not_run_on_is_refused() {
    let args = [
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--task",
        "inference",
        "--framework",
        "tensorrt-llm==1.0",
    ];
    let (code, _, stderr) = gpuplan(&[&args[..], &["--gpu", "T4"]].concat());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("tensorrt-llm==1.0 does not run on T4"), "{stderr}");
    assert!(
        stderr.contains("gpuplan compat --gpu T4 --framework tensorrt-llm==1.0"),
        "{stderr}"
    );
    let (code, _, stderr) = gpuplan(&[&args[..], &["--gpu", "L4"]].concat());
    assert_eq!(code, 0, "{stderr}");
}

/// NVIDIA's own rules, as a user checks them against the CUDA compatibility guide: an 11.x
/// application runs on any driver from 450.80.02 (minor-version compatibility), Hopper needs
/// the driver branch that first supported it (R520, with CUDA 11.8), CUDA 11.7 builds for an
/// A100 but not for an H100 (sm_90 came with 11.8), and the releases the guides name are known.
#[test]
fn compat_follows_nvidias_compatibility_rules() {
    let (code, stdout, _) = gpuplan(&["compat", "--cuda", "11.8", "--driver", "470.82.01"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("minor-version compatibility"), "{stdout}");
    let (code, stdout, _) = gpuplan(&["compat", "--framework", "pytorch==2.1", "--driver", "470.82.01"]);
    assert_eq!(code, 0, "{stdout}");
    let (code, stdout, _) = gpuplan(&["compat", "--gpu", "H100", "--driver", "470.82.01"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("FAIL gpu-driver") && stdout.contains("≥ 520.61.05"),
        "{stdout}"
    );
    let (code, stdout, _) = gpuplan(&["compat", "--gpu", "A100-SXM4-80GB", "--cuda", "11.7"]);
    assert_eq!(code, 0, "{stdout}");
    let (code, stdout, _) = gpuplan(&["compat", "--gpu", "H100", "--cuda", "11.7"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("fix: use CUDA 11.8 or later"), "{stdout}");
    // Patch releases, as `pip freeze` writes them, are their minor release's builds.
    for framework in [
        "pytorch==2.0",
        "tensorflow==2.12",
        "tensorflow==2.14",
        "pytorch==2.0.1",
        "tensorflow==2.14.1",
    ] {
        let (code, stdout, stderr) = gpuplan(&["compat", "--framework", framework, "--gpu", "A100-SXM4-80GB"]);
        assert_eq!(code, 0, "{framework}: {stdout}{stderr}");
    }
    let (code, stdout, _) = gpuplan(&["compat", "--framework", "pytorch==2.0", "--gpu", "B200"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("do not compile for compute capability 10.0"),
        "{stdout}"
    );
}

/// The README's table of the compatibility guides' own questions answers as it says: each
/// row's command exits with the row's code.
#[test]
fn the_readmes_compat_examples_hold() {
    let readme = include_str!("../../../README.md");
    let rows: Vec<(Vec<&str>, i32)> = readme
        .lines()
        .filter_map(|line| {
            let command = line.strip_prefix("| `gpuplan compat ")?;
            let (args, rest) = command.split_once("` |")?;
            let exit = rest
                .trim_end()
                .trim_end_matches('|')
                .rsplit('|')
                .next()?
                .trim()
                .parse()
                .ok()?;
            Some((std::iter::once("compat").chain(args.split(' ')).collect(), exit))
        })
        .collect();
    assert!(rows.len() >= 8, "the README's compat table: {} rows", rows.len());
    for (args, exit) in rows {
        let (code, stdout, stderr) = gpuplan(&args);
        assert_eq!(code, exit, "{args:?}: {stdout}{stderr}");
    }
}
