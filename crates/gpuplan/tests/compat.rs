//! The compatibility questions the guides end with, asked as an engineer asks them, with what
//! an experienced one answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan::{CompatAnswer, CompatQuery, compat};

fn ask(gpu: Option<&str>, framework: Option<&str>, cuda: Option<&str>, driver: Option<&str>) -> CompatAnswer {
    let catalog = crate::catalog();
    compat(
        catalog,
        &CompatQuery {
            gpu: gpu.map(str::to_string),
            framework: framework.map(str::to_string),
            cuda: cuda.map(str::to_string),
            driver: driver.map(str::to_string),
            ..CompatQuery::default()
        },
    )
    .unwrap()
}

/// A ROCm or Neuron question: GPU, framework, release of the stack, driver.
fn ask_stack(gpu: &str, framework: Option<&str>, release: &str, driver: Option<&str>) -> Result<CompatAnswer, String> {
    let catalog = crate::catalog();
    let amd = gpu.starts_with("MI");
    compat(
        catalog,
        &CompatQuery {
            gpu: Some(gpu.to_string()),
            framework: framework.map(str::to_string),
            rocm: amd.then(|| release.to_string()),
            neuron: (!amd).then(|| release.to_string()),
            driver: driver.map(str::to_string),
            ..CompatQuery::default()
        },
    )
    .map_err(|e| e.to_string())
}

fn failed(answer: &CompatAnswer) -> Vec<&str> {
    answer
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.check.as_str())
        .collect()
}

/// A T4 with PyTorch 2.5's CUDA 12.4 wheel on a 535 driver runs (12.x minor-version
/// compatibility), but the T4 has no bf16 and no FlashAttention-2.
#[test]
fn a_t4_runs_pytorch_2_5_on_cuda_12_4_with_a_535_driver_but_without_bf16() {
    let answer = ask(Some("T4"), Some("pytorch==2.5"), Some("12.4"), Some("535.104.05"));
    assert!(answer.ok, "{:#?}", answer.checks);
    assert!(
        answer.checks[0].detail.contains("minor-version compatibility"),
        "{}",
        answer.checks[0].detail
    );
    let supported = |f: &str| answer.features.iter().find(|x| x.feature == f).unwrap().supported;
    assert!(!supported("bf16") && !supported("flash-attention-2") && !supported("fp8"));
}

/// CUDA 13 dropped Volta: a V100 needs CUDA 12.x.
#[test]
fn a_v100_cannot_use_cuda_13() {
    let answer = ask(Some("V100"), None, Some("13.0"), Some("580.82.07"));
    assert!(!answer.ok);
    assert_eq!(failed(&answer), ["gpu"]);
    let fix = answer
        .checks
        .iter()
        .find(|c| c.check == "gpu")
        .unwrap()
        .fix
        .clone()
        .unwrap();
    assert_eq!(fix, "use CUDA 12.9 or earlier, or a newer GPU");
    // No container it cannot run is offered beside the failure.
    assert!(answer.containers.is_empty(), "{:?}", answer.containers);
    let pytorch = ask(Some("V100"), Some("pytorch"), None, None);
    assert!(
        pytorch
            .containers
            .iter()
            .all(|c| c.contains("CUDA 12.") || c.contains("CUDA 11.")),
        "{:?}",
        pytorch.containers
    );
    assert!(
        pytorch
            .containers
            .iter()
            .any(|c| c.starts_with("nvcr.io/nvidia/pytorch:24.12-py3")),
        "{:?}",
        pytorch.containers
    );
}

/// An old driver is offered only the containers it runs: an R470 driver runs CUDA 11.x, older
/// than every NGC release in the data (23.10 on, CUDA 12.2 and later), so none is listed; an
/// R535 driver runs the CUDA 12 releases (minor-version compatibility) and none of CUDA 13.
#[test]
fn an_old_driver_is_offered_only_containers_it_runs() {
    let r470 = ask(None, Some("pytorch"), None, Some("470.82.01"));
    assert!(r470.containers.is_empty(), "{:?}", r470.containers);
    let r535 = ask(None, Some("pytorch"), None, Some("535.104.05"));
    assert!(!r535.containers.is_empty());
    assert!(
        r535.containers.iter().all(|c| c.contains("CUDA 12.")),
        "{:?}",
        r535.containers
    );
}

/// Blackwell needs CUDA 12.8 and a PyTorch wheel built with it (2.7 and later).
#[test]
fn a_b200_needs_cuda_12_8_and_pytorch_2_7() {
    let answer = ask(Some("B200"), Some("pytorch==2.6"), Some("12.4"), None);
    assert_eq!(failed(&answer), ["gpu", "framework-gpu"]);
    let fixes: Vec<String> = answer.checks.iter().filter_map(|c| c.fix.clone()).collect();
    assert!(fixes.contains(&"use CUDA 12.8 or later".to_string()), "{fixes:?}");
    assert!(fixes.contains(&"use pytorch 2.7 or later".to_string()), "{fixes:?}");
    assert!(ask(Some("B200"), Some("pytorch==2.7"), Some("12.8"), Some("570.26")).ok);
}

/// FP8 and FlashAttention-3 are Hopper's; an L4 has FP8 but not FlashAttention-3.
#[test]
fn features_follow_the_compute_capability() {
    let h100 = ask(Some("H100"), None, None, None);
    let l4 = ask(Some("L4"), None, None, None);
    let has = |a: &CompatAnswer, f: &str| a.features.iter().any(|x| x.feature == f && x.supported);
    assert!(has(&h100, "fp8") && has(&h100, "flash-attention-3") && has(&h100, "mig"));
    assert!(has(&l4, "fp8") && !has(&l4, "flash-attention-3") && !has(&l4, "mig"));
}

#[test]
fn an_old_driver_is_told_which_driver_to_install() {
    // R470 predates Hopper, and pytorch 2.9's oldest CUDA build (12.6) needs the 12.x floor.
    let answer = ask(Some("H100"), Some("pytorch==2.9"), None, Some("470.82.01"));
    assert_eq!(failed(&answer), ["gpu-driver", "framework-driver"]);
    let fix = |check: &str| {
        answer
            .checks
            .iter()
            .find(|c| c.check == check)
            .unwrap()
            .fix
            .clone()
            .unwrap()
    };
    assert!(
        fix("gpu-driver").starts_with("upgrade the driver to ≥ 520.61.05"),
        "{}",
        fix("gpu-driver")
    );
    assert!(
        fix("framework-driver").starts_with("upgrade the driver to ≥ 525.60.13"),
        "{}",
        fix("framework-driver")
    );
}

#[test]
fn what_is_not_known_is_refused() {
    let catalog = crate::catalog();
    let query = |framework: &str| CompatQuery {
        framework: Some(framework.to_string()),
        ..CompatQuery::default()
    };
    let error = compat(catalog, &query("caffe")).unwrap_err();
    assert!(error.hint().unwrap().contains("pytorch"), "{error}");
    assert!(compat(catalog, &CompatQuery::default()).is_err());
    let bad = CompatQuery {
        cuda: Some("twelve".to_string()),
        ..CompatQuery::default()
    };
    assert!(compat(catalog, &bad).unwrap_err().to_string().starts_with("--cuda"));
}

/// A job built with CUDA 13 is never planned on a V100 (CUDA 13 dropped Volta) or on an
/// accelerator without CUDA; one built with CUDA 12.4 cannot be asked onto a B200.
#[test]
fn a_plan_for_a_cuda_release_leaves_out_what_it_does_not_compile_for() {
    let catalog = crate::catalog();
    let options: gpuplan::PlanOptions = serde_json::from_str(
        r#"{"model": "llama-3.1-8b", "task": "lora", "tokens": 2e8, "cuda": "13.0", "gpu": ["V100", "T4", "A100-80GB"], "top": 20}"#,
    )
    .unwrap();
    let answer = gpuplan::plan_workload(catalog, &options.query().unwrap())
        .unwrap()
        .unwrap();
    assert!(!answer.plan.recommendations.is_empty());
    for r in &answer.plan.recommendations {
        let id = r.offering.accelerator.as_ref().unwrap().as_str();
        assert!(!id.starts_with("V100"), "{id}");
    }
    assert!(
        answer
            .plan
            .assumptions
            .iter()
            .any(|d| d.starts_with("--cuda 13.0 compiles for compute capability 7.5"))
    );
    let b200: gpuplan::PlanOptions = serde_json::from_str(
        r#"{"model": "llama-3.1-8b", "task": "lora", "tokens": 2e8, "cuda": "12.4", "gpu": ["B200"]}"#,
    )
    .unwrap();
    let error = gpuplan::plan_workload(catalog, &b200.query().unwrap()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the job's software runs on none of the GPUs asked"),
        "{error}"
    );
}

#[test]
fn a_serving_plan_leaves_out_the_gpus_its_engine_build_does_not_run_on() {
    let catalog = crate::catalog();
    let options: gpuplan::PlanOptions = serde_json::from_str(
        r#"{"model": "llama-3.1-8b", "task": "inference", "qps": 5, "framework": "tensorrt-llm==1.0",
            "gpu": ["T4", "V100", "L4", "A10G", "L40S"], "top": 30}"#,
    )
    .unwrap();
    let answer = gpuplan::plan_workload(catalog, &options.query().unwrap())
        .unwrap()
        .unwrap();
    assert!(!answer.plan.recommendations.is_empty());
    for r in &answer.plan.recommendations {
        let id = r.offering.accelerator.as_ref().unwrap().as_str();
        assert!(!id.starts_with("V100") && !id.starts_with("T4"), "{id}");
    }
    assert!(
        answer
            .plan
            .assumptions
            .iter()
            .any(|d| d.starts_with("tensorrt-llm==1.0 runs on compute capability 8.0+")),
        "{:?}",
        answer.plan.assumptions
    );
}

/// An MI300X with ROCm 7.1, PyTorch 2.10's ROCm wheels and the amdgpu 30.30 driver runs: the
/// combination the ROCm PyTorch image the exports pin (rocm7.1.1, pytorch 2.10) needs.
#[test]
fn an_mi300x_runs_rocm_7_1_with_pytorch_2_10_on_amdgpu_30_30() {
    let answer = ask_stack("MI300X", Some("pytorch==2.10"), "7.1", Some("30.30.3")).unwrap();
    assert!(answer.ok, "{:#?}", answer.checks);
    assert_eq!(answer.gpu_target.as_deref(), Some("gfx942"));
    // PyTorch 2.9 ships only ROCm 6.4 wheels, and says which PyTorch to take for 7.1.
    let old = ask_stack("MI300X", Some("pytorch==2.9"), "7.1", None).unwrap();
    assert_eq!(failed(&old), ["framework-rocm"]);
    let fix = old.checks.iter().find(|c| !c.ok).unwrap().fix.clone().unwrap();
    assert!(fix.contains("PyTorch 2.10"), "{fix}");
    // The 30.10 driver runs ROCm up to 7.0.
    let driver = ask_stack("MI300X", None, "7.2", Some("30.10.1")).unwrap();
    assert_eq!(failed(&driver), ["driver"]);
}

/// The MI355X (gfx950) arrived with ROCm 7.0: on 6.3 it fails, with the releases that
/// support it. Where AMD's pages found for a release do not name it (7.1), the answer is that
/// the data does not say, not that it breaks.
#[test]
fn an_mi355x_needs_rocm_7_and_an_undocumented_release_is_unknown_not_broken() {
    let answer = ask_stack("MI355X", None, "6.3", None).unwrap();
    assert_eq!(failed(&answer), ["gpu"]);
    assert!(answer.checks[0].fix.as_deref().unwrap().contains("7.0"));
    let unknown = ask_stack("MI355X", None, "7.1", None).unwrap_err();
    assert!(unknown.contains("not in the compatibility data"), "{unknown}");
    let release = ask_stack("MI300X", None, "5.2", None).unwrap_err();
    assert!(release.contains("not a release line"), "{release}");
}

/// Neuron SDK 2.30's runtime needs its own driver (AWS: upgrade the host driver first; the
/// runtime does not run on driver 2.26), builds torch-neuronx for PyTorch 2.9, and SDK 2.32
/// ships no torch-neuronx at all.
#[test]
fn a_trn1_on_neuron_2_30_needs_its_driver_and_pytorch_2_9() {
    let answer = ask_stack("trn1", Some("pytorch==2.9"), "2.30", Some("2.28.0.0")).unwrap();
    assert!(answer.ok, "{:#?}", answer.checks);
    assert_eq!(answer.gpu_target.as_deref(), Some("trn1"));
    let old_driver = ask_stack("trn1", Some("pytorch==2.9"), "2.30", Some("2.26.5.0")).unwrap();
    assert_eq!(failed(&old_driver), ["driver"]);
    let latest = ask_stack("inf2", Some("pytorch==2.9"), "2.32", None).unwrap();
    assert_eq!(failed(&latest), ["framework-neuron"]);
    // Trainium2 arrived with SDK 2.21.
    let trn2 = ask_stack("Trainium2", None, "2.20", None).unwrap();
    assert_eq!(failed(&trn2), ["device"]);
}

/// A release flag of another vendor's stack is refused, never ignored.
#[test]
fn a_release_of_another_stack_is_refused() {
    let catalog = crate::catalog();
    let ask = |gpu: &str, cuda: Option<&str>, rocm: Option<&str>| {
        compat(
            catalog,
            &CompatQuery {
                gpu: Some(gpu.to_string()),
                cuda: cuda.map(str::to_string),
                rocm: rocm.map(str::to_string),
                ..CompatQuery::default()
            },
        )
        .map_err(|e| e.to_string())
    };
    assert!(
        ask("MI300X", Some("12.4"), None)
            .unwrap_err()
            .contains("--cuda does not apply")
    );
    assert!(
        ask("H100", None, Some("7.1"))
            .unwrap_err()
            .contains("--rocm does not apply")
    );
}

/// The ROCm and Neuron images the exports pin are ones compat agrees with, on every
/// accelerator their stack targets.
#[test]
fn the_pinned_rocm_and_neuron_images_pass_compat() {
    let stacks: toml::Table = toml::from_str(include_str!("../../gpuplan-catalog/data/stacks.toml")).unwrap();
    let mut checked = 0;
    for image in stacks
        .values()
        .filter_map(toml::Value::as_array)
        .flatten()
        .filter_map(|e| e.get("image"))
    {
        let image = image.as_str().unwrap();
        // rocm/pytorch:rocm7.1.1_ubuntu24.04_py3.12_pytorch_release_2.10.0
        if let Some(tag) = image.strip_prefix("rocm/pytorch:rocm") {
            let rocm = tag.split('_').next().unwrap();
            let pytorch = tag.rsplit('_').next().unwrap();
            for gpu in ["MI300X", "MI325X"] {
                let answer = ask_stack(gpu, Some(&format!("pytorch=={pytorch}")), rocm, None).unwrap();
                assert!(answer.ok, "{image} on {gpu}: {:#?}", answer.checks);
                checked += 1;
            }
        }
        // public.ecr.aws/neuron/pytorch-training-neuronx:2.9.0-neuronx-py312-sdk2.30.0-ubuntu24.04
        if let Some(tag) = image.strip_prefix("public.ecr.aws/neuron/pytorch-training-neuronx:") {
            let pytorch = tag.split('-').next().unwrap();
            let sdk = tag.split("-sdk").nth(1).unwrap().split('-').next().unwrap();
            for gpu in ["Trainium", "Trainium2"] {
                let answer = ask_stack(gpu, Some(&format!("pytorch=={pytorch}")), sdk, None).unwrap();
                assert!(answer.ok, "{image} on {gpu}: {:#?}", answer.checks);
                checked += 1;
            }
        }
    }
    assert!(checked >= 4, "{checked}");
}
