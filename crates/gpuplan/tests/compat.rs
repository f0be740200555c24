//! The compatibility questions the guides end with, asked as an engineer asks them, with what
//! an experienced one answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan::{Catalog, CompatAnswer, CompatQuery, compat};

fn ask(gpu: Option<&str>, framework: Option<&str>, cuda: Option<&str>, driver: Option<&str>) -> CompatAnswer {
    let catalog = Catalog::embedded().unwrap();
    compat(
        &catalog,
        &CompatQuery {
            gpu: gpu.map(str::to_string),
            framework: framework.map(str::to_string),
            cuda: cuda.map(str::to_string),
            driver: driver.map(str::to_string),
        },
    )
    .unwrap()
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
    let catalog = Catalog::embedded().unwrap();
    let query = |framework: &str| CompatQuery {
        framework: Some(framework.to_string()),
        ..CompatQuery::default()
    };
    let error = compat(&catalog, &query("caffe")).unwrap_err();
    assert!(error.hint().unwrap().contains("pytorch"), "{error}");
    assert!(compat(&catalog, &CompatQuery::default()).is_err());
    let bad = CompatQuery {
        cuda: Some("twelve".to_string()),
        ..CompatQuery::default()
    };
    assert!(compat(&catalog, &bad).unwrap_err().to_string().starts_with("--cuda"));
}

/// A job built with CUDA 13 is never planned on a V100 (CUDA 13 dropped Volta) or on an
/// accelerator without CUDA; one built with CUDA 12.4 cannot be asked onto a B200.
#[test]
fn a_plan_for_a_cuda_release_leaves_out_what_it_does_not_compile_for() {
    let catalog = Catalog::embedded().unwrap();
    let options: gpuplan::PlanOptions = serde_json::from_str(
        r#"{"model": "llama-3.1-8b", "task": "lora", "tokens": 2e8, "cuda": "13.0", "gpu": ["V100", "T4", "A100-80GB"], "top": 20}"#,
    )
    .unwrap();
    let answer = gpuplan::plan_workload(&catalog, &options.query().unwrap())
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
    let error = gpuplan::plan_workload(&catalog, &b200.query().unwrap()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the job's software runs on none of the GPUs asked"),
        "{error}"
    );
}

#[test]
fn a_serving_plan_leaves_out_the_gpus_its_engine_build_does_not_run_on() {
    let catalog = gpuplan::Catalog::embedded().unwrap();
    let options: gpuplan::PlanOptions = serde_json::from_str(
        r#"{"model": "llama-3.1-8b", "task": "inference", "qps": 5, "framework": "tensorrt-llm==1.0",
            "gpu": ["T4", "V100", "L4", "A10G", "L40S"], "top": 30}"#,
    )
    .unwrap();
    let answer = gpuplan::plan_workload(&catalog, &options.query().unwrap())
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
