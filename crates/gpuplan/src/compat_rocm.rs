//! `compat` on AMD GPUs: whether a ROCm release supports the GPU's LLVM target, which ROCm
//! releases a PyTorch release ships wheels for, and which ROCm user space an amdgpu driver
//! line runs. A release whose documented GPU list is partial answers "not in the data" for a
//! target it does not name, never "unsupported".

use crate::Error;
use crate::compat::{CompatCheck, check};
use gpuplan_catalog::compatibility::{Compatibility, Version};
use gpuplan_catalog::rocm_compatibility::{AmdGpu, RocmFacts};

/// What a ROCm question asks, parsed.
pub(crate) struct RocmAsked<'a> {
    pub gpu: Option<&'a AmdGpu>,
    pub rocm: Option<Version>,
    pub pytorch: Option<Version>,
    pub driver: Option<Version>,
}

fn lines(versions: &[&Version]) -> String {
    versions
        .iter()
        .map(|v| v.truncated(2).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `rocm` (by major.minor) is one of `lines`.
fn among(lines: &[Version], rocm: &Version) -> bool {
    lines.iter().any(|v| v.same_release(rocm, 2))
}

fn known_range<'a>(versions: impl Iterator<Item = &'a Version>) -> String {
    let all: Vec<&Version> = versions.collect();
    match (all.iter().min(), all.iter().max()) {
        (Some(low), Some(high)) => format!("{} to {}", low.truncated(2), high.truncated(2)),
        _ => "none".to_string(),
    }
}

/// The GPU's LLVM target, or an error naming the AMD GPUs the data knows.
pub(crate) fn target<'a>(facts: &'a Compatibility, gpu: &str) -> Result<&'a AmdGpu, Error> {
    facts.amd_target(gpu).ok_or_else(|| {
        let known: Vec<&str> = facts.amd_gpu.iter().map(|g| g.gpu.as_str()).collect();
        Error::invalid(
            format!("{gpu}: the compatibility data holds no LLVM target for it"),
            Some(format!("AMD GPUs the data knows: {}", known.join(", "))),
        )
    })
}

pub(crate) fn checks(facts: &Compatibility, asked: &RocmAsked) -> Result<Vec<CompatCheck>, Error> {
    let mut checks = Vec::new();
    if let Some(rocm) = &asked.rocm {
        let release = facts.rocm_release(rocm).ok_or_else(|| {
            Error::invalid(
                format!("--rocm {rocm}: not a release line the compatibility data knows"),
                Some(format!(
                    "give a ROCm release (the data covers {})",
                    known_range(facts.rocm_release.iter().map(|r| &r.rocm))
                )),
            )
        })?;
        match asked.gpu {
            Some(gpu) => checks.push(gpu_check(facts, release, gpu)?),
            None => checks.push(check(
                "release",
                true,
                format!(
                    "ROCm {} supports {}{}",
                    release.rocm,
                    release.gpu_targets.join(", "),
                    if release.complete {
                        ""
                    } else {
                        " (as AMD's pages found name them; others may be supported)"
                    }
                ),
                None,
                Some(&release.source),
            )),
        }
    } else if let Some(gpu) = asked.gpu {
        // No release asked: the releases the data says support the GPU.
        let listing: Vec<&Version> = facts
            .rocm_release
            .iter()
            .filter(|r| r.gpu_targets.contains(&gpu.target))
            .map(|r| &r.rocm)
            .collect();
        checks.push(check(
            "gpu",
            !listing.is_empty(),
            format!(
                "ROCm releases documented to support {} ({}): {}",
                gpu.gpu,
                gpu.target,
                lines(&listing)
            ),
            Some(format!("no ROCm release in the data names {}", gpu.target)),
            Some(&gpu.source),
        ));
    }
    if let Some(pytorch) = &asked.pytorch {
        checks.push(wheels_check(facts, pytorch, asked.rocm.as_ref())?);
    }
    if let Some(driver) = &asked.driver {
        checks.push(driver_check(facts, driver, asked.rocm.as_ref())?);
    }
    Ok(checks)
}

fn gpu_check(
    facts: &Compatibility,
    release: &gpuplan_catalog::rocm_compatibility::RocmRelease,
    gpu: &AmdGpu,
) -> Result<CompatCheck, Error> {
    let rocm = release.rocm.truncated(2);
    let listing: Vec<&Version> = facts
        .rocm_release
        .iter()
        .filter(|r| r.gpu_targets.contains(&gpu.target))
        .map(|r| &r.rocm)
        .collect();
    let supported = release.gpu_targets.contains(&gpu.target);
    if !supported && !release.complete {
        return Err(Error::invalid(
            format!(
                "whether ROCm {rocm} supports {} ({}) is not in the compatibility data: the AMD documentation found for {rocm} names {}",
                gpu.gpu,
                gpu.target,
                release.gpu_targets.join(", ")
            ),
            Some(format!(
                "releases the data says support {}: {}",
                gpu.target,
                lines(&listing)
            )),
        ));
    }
    Ok(check(
        "gpu",
        supported,
        format!(
            "ROCm {rocm} {} {} ({})",
            if supported { "supports" } else { "does not support" },
            gpu.gpu,
            gpu.target
        ),
        Some(format!("use ROCm {}", lines(&listing))),
        Some(&release.source),
    ))
}

fn wheels_check(facts: &Compatibility, pytorch: &Version, rocm: Option<&Version>) -> Result<CompatCheck, Error> {
    let wheels = facts.rocm_wheels(pytorch).ok_or_else(|| {
        Error::invalid(
            format!("--framework pytorch=={pytorch}: no ROCm wheels of it in the compatibility data"),
            Some(format!(
                "give a PyTorch release with ROCm wheels (the data covers {})",
                known_range(facts.rocm_pytorch.iter().map(|p| &p.pytorch))
            )),
        )
    })?;
    let shipped: Vec<&Version> = wheels.rocm.iter().collect();
    let ok = rocm.is_none_or(|r| among(&wheels.rocm, r));
    let fix = rocm.map(|r| {
        let with: Vec<&Version> = facts
            .rocm_pytorch
            .iter()
            .filter(|p| among(&p.rocm, r))
            .map(|p| &p.pytorch)
            .collect();
        let own_build = format!(
            "a build of PyTorch {} for ROCm {} (AMD's rocm/pytorch and rocm/vllm images build their own)",
            pytorch.truncated(2),
            r.truncated(2)
        );
        if with.is_empty() {
            format!("use ROCm {}, or {own_build}", lines(&shipped))
        } else {
            format!(
                "use ROCm {}, PyTorch {} for ROCm {}, or {own_build}",
                lines(&shipped),
                lines(&with),
                r.truncated(2)
            )
        }
    });
    Ok(check(
        "framework-rocm",
        ok,
        format!(
            "pytorch {}'s official wheels are built for ROCm {}",
            pytorch.truncated(2),
            lines(&shipped)
        ),
        fix,
        Some(&wheels.source),
    ))
}

fn driver_check(facts: &Compatibility, driver: &Version, rocm: Option<&Version>) -> Result<CompatCheck, Error> {
    let line = facts.amdgpu_driver(driver).ok_or_else(|| {
        let known: Vec<&Version> = facts.amdgpu_driver.iter().map(|d| &d.driver).collect();
        Error::invalid(
            format!("--driver {driver}: not an amdgpu driver line the compatibility data knows"),
            Some(format!(
                "give the AMD GPU Driver (30.x, ROCm 7) or kernel driver (6.x) version; the data knows {}",
                lines(&known)
            )),
        )
    })?;
    let runs: Vec<&Version> = line.rocm.iter().collect();
    let ok = rocm.is_none_or(|r| among(&line.rocm, r));
    let fix = rocm.map(|r| {
        let drivers: Vec<&Version> = facts
            .amdgpu_driver
            .iter()
            .filter(|d| among(&d.rocm, r))
            .map(|d| &d.driver)
            .collect();
        format!(
            "install an amdgpu driver that runs ROCm {}: {}",
            r.truncated(2),
            lines(&drivers)
        )
    });
    Ok(check(
        "driver",
        ok,
        format!("amdgpu driver {driver} runs ROCm user space {}", lines(&runs)),
        fix,
        Some(&line.source),
    ))
}
