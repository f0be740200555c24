//! `compat`: will this GPU, driver, CUDA release and framework build run together? Each check
//! answers OK or what breaks, with the fix and the source.

use crate::Error;
use gpuplan_catalog::Catalog;
use gpuplan_catalog::compatibility::{Compatibility, FrameworkBuild, NgcContainer, Version};
use serde::Serialize;

/// What is asked; any part may be left out.
#[derive(Debug, Clone, Default)]
pub struct CompatQuery {
    pub gpu: Option<String>,
    /// `pytorch`, or `pytorch==2.5`.
    pub framework: Option<String>,
    pub cuda: Option<String>,
    /// The ROCm release (`7.1`), for AMD GPUs.
    pub rocm: Option<String>,
    /// The AWS Neuron SDK release (`2.30`), for Inferentia and Trainium.
    pub neuron: Option<String>,
    /// The driver: NVIDIA's (`535.104.05`), the amdgpu driver (`30.10.1`, or the kernel
    /// driver `6.4` of ROCm up to 6.4) or `aws-neuronx-dkms` (`2.28.0.0`).
    pub driver: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompatCheck {
    pub check: String,
    pub ok: bool,
    pub detail: String,
    pub fix: Option<String>,
    pub source: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FeatureSupport {
    pub feature: String,
    pub supported: bool,
    pub note: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompatAnswer {
    pub gpu: Option<String>,
    pub compute_capability: Option<String>,
    /// An AMD GPU's LLVM target (`gfx942`) or a Neuron device family (`trn1`).
    pub gpu_target: Option<String>,
    pub checks: Vec<CompatCheck>,
    pub features: Vec<FeatureSupport>,
    /// NGC containers matching the framework, CUDA release and driver asked, newest first.
    pub containers: Vec<String>,
    /// Every check passed.
    pub ok: bool,
}

/// Containers listed at most.
const CONTAINERS_SHOWN: usize = 3;

pub(crate) fn version(flag: &str, text: &str) -> Result<Version, Error> {
    text.parse()
        .map_err(|e: String| Error::invalid(format!("{flag}: {e}"), None))
}

pub(crate) fn check(check: &str, ok: bool, detail: String, fix: Option<String>, source: Option<&str>) -> CompatCheck {
    CompatCheck {
        check: check.to_string(),
        ok,
        detail,
        fix: if ok { None } else { fix },
        source: source.map(str::to_string),
    }
}

/// `11.0 to 13.1`: the CUDA releases the data covers.
fn known_cuda_range(facts: &Compatibility) -> String {
    let versions = facts.cuda_driver.iter().map(|d| d.cuda.truncated(2));
    match (versions.clone().min(), versions.max()) {
        (Some(low), Some(high)) => format!("the data covers {low} to {high}"),
        _ => "the data covers none".to_string(),
    }
}

pub fn compat(catalog: &Catalog, query: &CompatQuery) -> Result<CompatAnswer, Error> {
    let facts = catalog.compatibility();
    match Stack::of(catalog, query)? {
        Stack::Cuda => {}
        Stack::Rocm(gpu) => return rocm_answer(facts, query, gpu),
        Stack::Neuron(gpu) => return neuron_answer(facts, query, gpu),
    }
    let asked = Asked::parse(catalog, query)?;
    asked.check_known(facts)?;
    let mut checks = Vec::new();
    if let (Some(driver), Some(cc)) = (&asked.driver, &asked.capability) {
        checks.extend(gpu_driver_check(facts, driver, cc));
    }
    if let Some(cuda) = &asked.cuda {
        checks.extend(cuda_checks(
            facts,
            cuda,
            asked.driver.as_ref(),
            asked.capability.as_ref(),
        ));
    } else if let Some(driver) = &asked.driver {
        checks.extend(newest_cuda_check(facts, driver));
    }
    if let Some(name) = &asked.framework {
        checks.extend(framework_checks(
            facts,
            name,
            asked.framework_version.as_ref(),
            asked.cuda.as_ref(),
            asked.driver.as_ref(),
            asked.capability.as_ref(),
        )?);
    }
    let features = features_of(facts, asked.accelerator, asked.capability.as_ref());
    let containers = containers(
        facts,
        asked.framework.as_deref(),
        asked.framework_version.as_ref(),
        asked.cuda.as_ref(),
        asked.driver.as_ref(),
        asked.capability.as_ref(),
    );
    let ok = checks.iter().all(|c| c.ok);
    Ok(CompatAnswer {
        gpu: asked.accelerator.map(|a| a.id.to_string()),
        compute_capability: asked.capability.map(|c| c.to_string()),
        gpu_target: None,
        checks,
        features,
        containers,
        ok,
    })
}

/// Whose software a question is about: the GPU's vendor, else the release flag given.
enum Stack<'a> {
    Cuda,
    Rocm(Option<&'a gpuplan_model::Accelerator>),
    Neuron(Option<&'a gpuplan_model::Accelerator>),
}

/// What to say to a release flag of the wrong stack.
const OWN_STACK_HINT: &str = "give the release of the GPU's own stack: --cuda (NVIDIA), --rocm (AMD) or --neuron (AWS)";

impl<'a> Stack<'a> {
    /// The release flag of this stack.
    fn flag(&self) -> &'static str {
        match self {
            Stack::Cuda => "--cuda",
            Stack::Rocm(_) => "--rocm",
            Stack::Neuron(_) => "--neuron",
        }
    }

    fn of(catalog: &'a Catalog, query: &CompatQuery) -> Result<Stack<'a>, Error> {
        let facts = catalog.compatibility();
        let given = [
            ("--cuda", query.cuda.is_some()),
            ("--rocm", query.rocm.is_some()),
            ("--neuron", query.neuron.is_some()),
        ];
        let releases: Vec<&str> = given.iter().filter(|(_, on)| *on).map(|(flag, _)| *flag).collect();
        if releases.len() > 1 {
            return Err(Error::invalid(
                format!("{} name releases of different stacks", releases.join(" and ")),
                Some(OWN_STACK_HINT.to_string()),
            ));
        }
        let Some(accelerator) = query.gpu.as_deref().map(|g| gpu(catalog, g)).transpose()? else {
            // No GPU: the release flag given says which stack.
            return Ok(match releases.first() {
                Some(&"--rocm") => Stack::Rocm(None),
                Some(&"--neuron") => Stack::Neuron(None),
                _ => Stack::Cuda,
            });
        };
        let id = accelerator.id.as_str();
        let stack = if accelerator.compute_capability.is_some() {
            Stack::Cuda
        } else if facts.amd_gpu.iter().any(|g| g.gpu == id) {
            Stack::Rocm(Some(accelerator))
        } else if facts.neuron_device.iter().any(|d| d.gpu == id) {
            Stack::Neuron(Some(accelerator))
        } else {
            return Err(Error::invalid(
                format!("{id}: the compatibility data holds nothing for it"),
                Some("compat covers NVIDIA GPUs (CUDA), AMD Instinct GPUs (ROCm) and AWS Inferentia and Trainium (Neuron)".to_string()),
            ));
        };
        match releases.first() {
            Some(flag) if *flag != stack.flag() => Err(Error::invalid(
                format!("{flag} does not apply to {id}"),
                Some(OWN_STACK_HINT.to_string()),
            )),
            _ => Ok(stack),
        }
    }
}

/// `pytorch==2.10` as the name and version a ROCm or Neuron check takes: only PyTorch's builds
/// for those stacks are in the data.
fn pytorch_version(framework: Option<&str>, stack: &str) -> Result<Option<Version>, Error> {
    let Some(text) = framework else {
        return Ok(None);
    };
    let (name, v) = text.split_once("==").map_or((text, None), |(n, v)| (n, Some(v)));
    if !name.trim().eq_ignore_ascii_case("pytorch") {
        return Err(Error::invalid(
            format!("--framework {text}: the compatibility data holds only PyTorch's {stack} builds"),
            Some("give --framework pytorch==VERSION".to_string()),
        ));
    }
    match v {
        Some(v) => Ok(Some(version("--framework", v)?)),
        None => Err(Error::invalid(
            format!("--framework {text}: which release?"),
            Some("give --framework pytorch==VERSION".to_string()),
        )),
    }
}

fn rocm_answer(
    facts: &Compatibility,
    query: &CompatQuery,
    accelerator: Option<&gpuplan_model::Accelerator>,
) -> Result<CompatAnswer, Error> {
    let gpu = accelerator
        .map(|a| crate::compat_rocm::target(facts, a.id.as_str()))
        .transpose()?;
    let asked = crate::compat_rocm::RocmAsked {
        gpu,
        rocm: query.rocm.as_deref().map(|r| version("--rocm", r)).transpose()?,
        pytorch: pytorch_version(query.framework.as_deref(), "ROCm")?,
        driver: query.driver.as_deref().map(|d| version("--driver", d)).transpose()?,
    };
    let checks = crate::compat_rocm::checks(facts, &asked)?;
    Ok(stack_answer(accelerator, gpu.map(|g| g.target.clone()), checks))
}

fn neuron_answer(
    facts: &Compatibility,
    query: &CompatQuery,
    accelerator: Option<&gpuplan_model::Accelerator>,
) -> Result<CompatAnswer, Error> {
    let device = accelerator
        .map(|a| crate::compat_neuron::device(facts, a.id.as_str()))
        .transpose()?;
    let asked = crate::compat_neuron::NeuronAsked {
        device,
        sdk: query.neuron.as_deref().map(|r| version("--neuron", r)).transpose()?,
        pytorch: pytorch_version(query.framework.as_deref(), "Neuron")?,
        driver: query.driver.as_deref().map(|d| version("--driver", d)).transpose()?,
    };
    let checks = crate::compat_neuron::checks(facts, &asked)?;
    Ok(stack_answer(accelerator, device.map(|d| d.device.clone()), checks))
}

fn stack_answer(
    accelerator: Option<&gpuplan_model::Accelerator>,
    target: Option<String>,
    checks: Vec<CompatCheck>,
) -> CompatAnswer {
    CompatAnswer {
        gpu: accelerator.map(|a| a.id.to_string()),
        compute_capability: None,
        gpu_target: target,
        ok: checks.iter().all(|c| c.ok),
        checks,
        features: Vec::new(),
        containers: Vec::new(),
    }
}

/// A compat question with its names and versions parsed.
struct Asked<'a> {
    accelerator: Option<&'a gpuplan_model::Accelerator>,
    capability: Option<Version>,
    cuda: Option<Version>,
    driver: Option<Version>,
    framework: Option<String>,
    framework_version: Option<Version>,
}

impl<'a> Asked<'a> {
    fn parse(catalog: &'a Catalog, query: &CompatQuery) -> Result<Asked<'a>, Error> {
        if query.gpu.is_none() && query.framework.is_none() && query.cuda.is_none() && query.driver.is_none() {
            return Err(Error::invalid(
                "nothing to check",
                Some("give --gpu, --framework, --cuda or --driver (e.g. --gpu T4 --framework pytorch==2.5 --cuda 12.4 --driver 535.104)".to_string()),
            ));
        }
        let accelerator = query.gpu.as_deref().map(|g| gpu(catalog, g)).transpose()?;
        let capability = accelerator
            .and_then(|a| a.compute_capability.as_deref())
            .map(|cc| version("--gpu", cc))
            .transpose()?;
        if accelerator.is_some() && capability.is_none() {
            return Err(Error::invalid(
                format!(
                    "{} is not a CUDA GPU (no compute capability)",
                    accelerator.map_or("", |a| a.id.as_str())
                ),
                Some("compat checks NVIDIA GPUs".to_string()),
            ));
        }
        let (framework, framework_version) = match query.framework.as_deref() {
            None => (None, None),
            Some(text) => {
                let (name, v) = text.split_once("==").map_or((text, None), |(n, v)| (n, Some(v)));
                (
                    Some(name.trim().to_lowercase()),
                    v.map(|v| version("--framework", v)).transpose()?,
                )
            }
        };
        Ok(Asked {
            accelerator,
            capability,
            cuda: query.cuda.as_deref().map(|c| version("--cuda", c)).transpose()?,
            driver: query.driver.as_deref().map(|d| version("--driver", d)).transpose()?,
            framework,
            framework_version,
        })
    }

    /// Unknown is not broken: a release or driver the data does not cover is a question we
    /// cannot answer (exit 2), never a failed check.
    fn check_known(&self, facts: &Compatibility) -> Result<(), Error> {
        if let Some(cuda) = self.cuda.as_ref().filter(|c| facts.driver_for(c).is_none()) {
            let known = known_cuda_range(facts);
            return Err(Error::invalid(
                format!("--cuda {cuda}: not a release the compatibility data knows"),
                Some(format!("give a released CUDA version ({known})")),
            ));
        }
        let oldest = facts
            .cuda_driver
            .iter()
            .flat_map(|d| std::iter::once(&d.min_driver).chain(d.minor_compat_min_driver.as_ref()))
            .min();
        if let (Some(driver), Some(oldest)) = (&self.driver, oldest) {
            if driver < oldest {
                return Err(Error::invalid(
                    format!("--driver {driver}: older than any driver the compatibility data covers (from {oldest})"),
                    Some("give the version nvidia-smi prints, e.g. 535.104.05".to_string()),
                ));
            }
        }
        Ok(())
    }
}

/// The newest CUDA release `driver` runs, natively or through minor-version compatibility.
fn newest_cuda_check(facts: &Compatibility, driver: &Version) -> Option<CompatCheck> {
    let newest = facts.newest_runnable_cuda(driver)?;
    let native = facts.newest_cuda_for(driver).map(|n| n.cuda.truncated(2));
    let through_minor = match &native {
        Some(native) if *native == newest.cuda.truncated(2) => String::new(),
        Some(native) => format!(" (natively up to {native}, beyond it through minor-version compatibility)"),
        None => " (through minor-version compatibility)".to_string(),
    };
    Some(check(
        "driver",
        true,
        format!(
            "driver {driver} runs CUDA up to {}{through_minor}",
            newest.cuda.truncated(2)
        ),
        None,
        Some(&newest.source),
    ))
}

/// The features the GPU's compute capability supports (none without a GPU).
fn features_of(
    facts: &Compatibility,
    accelerator: Option<&gpuplan_model::Accelerator>,
    capability: Option<&Version>,
) -> Vec<FeatureSupport> {
    let Some(cc) = capability else {
        return Vec::new();
    };
    facts
        .feature
        .iter()
        .map(|f| FeatureSupport {
            feature: f.feature.clone(),
            supported: f.min_compute_capability <= *cc
                && f.max_compute_capability.as_ref().is_none_or(|max| cc <= max)
                && (f.gpus.is_empty()
                    || accelerator.is_some_and(|a| {
                        f.gpus
                            .iter()
                            .any(|g| a.id.as_str().starts_with(g.as_str()) || a.aliases.contains(g))
                    })),
            note: f.note.clone(),
            source: f.source.clone(),
        })
        .collect()
}

/// The NGC containers that match what was asked — the framework (and version) inside, the
/// CUDA release, a driver that runs them, the GPU's compute capability — newest first; none
/// when nothing was asked of them.
fn containers(
    facts: &Compatibility,
    framework: Option<&str>,
    framework_version: Option<&Version>,
    cuda: Option<&Version>,
    driver: Option<&Version>,
    capability: Option<&Version>,
) -> Vec<String> {
    if framework.is_none() && cuda.is_none() && driver.is_none() {
        return Vec::new();
    }
    let mut matching: Vec<&NgcContainer> = facts
        .ngc_container
        .iter()
        .filter(|c| framework.is_none_or(|name| c.ships(name, framework_version)))
        .filter(|c| cuda.is_none_or(|wanted| c.cuda.same_release(wanted, 2)))
        // A driver runs a container its notes (or its CUDA release) say it runs; where neither
        // is known the container is not offered.
        .filter(|c| {
            driver
                .is_none_or(|d| container_driver(facts, c).is_some_and(|min| min <= d) || facts.driver_runs(d, &c.cuda))
        })
        .filter(|c| capability.is_none_or(|cc| facts.container_runs_on(c, cc)))
        .collect();
    // Newest release (the `YY.MM` tag) first.
    let tag = |c: &NgcContainer| c.image.rsplit(':').next().unwrap_or_default().to_string();
    matching.sort_by(|a, b| tag(b).cmp(&tag(a)).then_with(|| a.image.cmp(&b.image)));
    matching
        .iter()
        .take(CONTAINERS_SHOWN)
        .map(|c| {
            let inside: Vec<String> = c.frameworks.iter().map(|(name, v)| format!("{name} {v}")).collect();
            format!(
                "{} (CUDA {}{}{})",
                c.image,
                c.cuda,
                container_driver(facts, c).map_or(String::new(), |d| format!(", driver ≥ {d}")),
                if inside.is_empty() {
                    String::new()
                } else {
                    format!(", {}", inside.join(", "))
                }
            )
        })
        .collect()
}

/// The driver a container needs: as its release notes state, else its CUDA release's.
fn container_driver<'a>(facts: &'a Compatibility, container: &'a NgcContainer) -> Option<&'a Version> {
    container
        .min_driver
        .as_ref()
        .or_else(|| facts.driver_for(&container.cuda).map(|row| &row.min_driver))
}

/// The GPU named: one accelerator, or a family whose members share a compute capability
/// (`V100` is three cards, all 7.0).
fn gpu<'a>(catalog: &'a Catalog, name: &str) -> Result<&'a gpuplan_model::Accelerator, Error> {
    match catalog.accelerators().resolve_one(name) {
        Ok(resolved) => Ok(resolved.accelerator),
        Err(error) => {
            let family: Vec<&gpuplan_model::Accelerator> = catalog
                .accelerators()
                .iter()
                .filter(|a| a.id.as_str().to_lowercase().starts_with(&name.to_lowercase()))
                .collect();
            let capabilities: std::collections::BTreeSet<Option<&String>> =
                family.iter().map(|a| a.compute_capability.as_ref()).collect();
            match (family.first(), capabilities.len()) {
                (Some(first), 1) => Ok(first),
                _ => Err(error.into()),
            }
        }
    }
}

/// For a build whose architectures the data does not state: whether one of its CUDA builds
/// compiles for the GPU (the wheels follow their toolkit). Unknown, and so no check, where the
/// data has none of its toolkits' ranges.
fn framework_gpu_by_cuda(
    facts: &Compatibility,
    build: &FrameworkBuild,
    label: &str,
    cc: &Version,
) -> Option<CompatCheck> {
    let ranges: Vec<_> = build.cuda.iter().filter_map(|c| facts.compute_range(c)).collect();
    if ranges.is_empty() {
        return None;
    }
    let ok = ranges.iter().any(|r| r.builds_for(cc));
    let cudas: Vec<String> = build.cuda.iter().map(Version::to_string).collect();
    let fix = match facts.cuda_releases_for(cc).first() {
        Some(first) => format!("use a {} release built for CUDA {first} or later", build.name),
        None => format!("no {} release in the data runs on compute capability {cc}", build.name),
    };
    Some(check(
        "framework-gpu",
        ok,
        format!(
            "{label}'s CUDA {} builds {} compute capability {cc}",
            cudas.join(", "),
            if ok { "compile for" } else { "do not compile for" }
        ),
        Some(fix),
        Some(&build.source),
    ))
}

/// Whether the driver knows the GPU at all: each architecture needs the driver branch that
/// first supported it (derived: the first toolkit that compiles for it ships that driver).
fn gpu_driver_check(facts: &Compatibility, driver: &Version, cc: &Version) -> Option<CompatCheck> {
    let (first, cuda) = facts.first_driver_for(cc)?;
    Some(check(
        "gpu-driver",
        driver >= first,
        format!(
            "compute capability {cc} is supported from driver {first} (the first toolkit that compiles for it, CUDA {}, ships it); this one is {driver}",
            cuda.truncated(2)
        ),
        Some(format!("upgrade the driver to ≥ {first}")),
        facts.driver_for(cuda).map(|row| row.source.as_str()),
    ))
}

fn cuda_checks(
    facts: &Compatibility,
    cuda: &Version,
    driver: Option<&Version>,
    capability: Option<&Version>,
) -> Vec<CompatCheck> {
    let mut checks = Vec::new();
    match (facts.driver_for(cuda), driver) {
        (None, _) => checks.push(check(
            "cuda",
            false,
            format!("CUDA {cuda} is not a release the catalog knows"),
            Some("give a released version, e.g. 12.4".to_string()),
            None,
        )),
        (Some(row), Some(driver)) => {
            let native = *driver >= row.min_driver;
            let minor = !native && facts.driver_runs(driver, cuda);
            let detail = if native {
                format!("driver {driver} runs CUDA {cuda} (needs ≥ {})", row.min_driver)
            } else if minor {
                format!(
                    "driver {driver} is below CUDA {cuda}'s {} but runs it through minor-version compatibility (no PTX JIT of newer code; features of newer drivers unavailable)",
                    row.min_driver
                )
            } else {
                format!(
                    "driver {driver} is too old for CUDA {cuda} (needs ≥ {})",
                    row.min_driver
                )
            };
            let newest = facts
                .newest_runnable_cuda(driver)
                .map(|n| n.cuda.truncated(2).to_string());
            checks.push(check(
                "driver",
                native || minor,
                detail,
                Some(format!(
                    "upgrade the driver to ≥ {}{}{}",
                    row.minor_compat_min_driver.as_ref().unwrap_or(&row.min_driver),
                    row.minor_compat_min_driver
                        .as_ref()
                        .map_or(String::new(), |_| format!(" (≥ {} runs it natively)", row.min_driver)),
                    newest.map_or(String::new(), |n| format!(", or use CUDA ≤ {n}"))
                )),
                Some(&row.source),
            ));
        }
        (Some(_), None) => {}
    }
    if let (Some(cc), Some(range)) = (capability, facts.compute_range(cuda)) {
        let ok = range.builds_for(cc);
        let span = format!(
            "{}{}",
            range.min_compute_capability,
            range
                .max_compute_capability
                .as_ref()
                .map_or("+".to_string(), |m| format!("–{m}"))
        );
        checks.push(check(
            "gpu",
            ok,
            format!("CUDA {cuda} builds for compute capability {span}; the GPU is {cc}"),
            Some({
                let releases = facts.cuda_releases_for(cc);
                match (releases.first(), releases.last()) {
                    (Some(_), Some(last)) if *cc < range.min_compute_capability => {
                        format!("use CUDA {last} or earlier, or a newer GPU")
                    }
                    (Some(first), Some(_)) => format!("use CUDA {first} or later"),
                    _ => "no CUDA release in the data builds for this GPU".to_string(),
                }
            }),
            Some(&range.source),
        ));
    }
    checks
}

fn framework_checks(
    facts: &Compatibility,
    name: &str,
    wanted: Option<&Version>,
    cuda: Option<&Version>,
    driver: Option<&Version>,
    capability: Option<&Version>,
) -> Result<Vec<CompatCheck>, Error> {
    let builds = facts.builds(name, wanted);
    let Some(build) = builds.iter().max_by(|a, b| a.version.cmp(&b.version)) else {
        let known: std::collections::BTreeSet<&str> = facts.framework.iter().map(|f| f.name.as_str()).collect();
        return Err(Error::invalid(
            format!(
                "--framework {name}{}: not in the compatibility data",
                wanted.map_or(String::new(), |v| format!("=={v}"))
            ),
            Some(format!("known: {}", known.into_iter().collect::<Vec<_>>().join(", "))),
        ));
    };
    let label = format!("{} {}", build.name, build.version);
    let mut checks = Vec::new();
    if let Some(cuda) = cuda {
        checks.push(framework_cuda_check(build, &label, cuda));
    }
    if let (Some(cc), None, false) = (capability, &build.min_compute_capability, build.cuda.is_empty()) {
        checks.extend(framework_gpu_by_cuda(facts, build, &label, cc));
    }
    if let (Some(cc), Some(min)) = (capability, &build.min_compute_capability) {
        checks.push(framework_gpu_check(facts, build, &label, cc, min));
    }
    if let (Some(driver), None, false) = (driver, &build.min_driver, build.cuda.is_empty()) {
        checks.push(framework_driver_by_cuda(facts, build, &label, driver));
    }
    if let (Some(driver), Some(min)) = (driver, &build.min_driver) {
        checks.push(check(
            "framework-driver",
            driver >= min,
            format!("{label} needs driver ≥ {min}; this one is {driver}"),
            Some(format!("upgrade the driver to ≥ {min}")),
            Some(&build.source),
        ));
    }
    if let Some(note) = &build.note {
        checks.push(check(
            "framework-note",
            true,
            format!("{label}: {note}"),
            None,
            Some(&build.source),
        ));
    }
    Ok(checks)
}

/// Whether `build` is built for CUDA `cuda`.
fn framework_cuda_check(build: &FrameworkBuild, label: &str, cuda: &Version) -> CompatCheck {
    let ok = build.built_for(cuda);
    let builds: Vec<String> = build.cuda.iter().map(Version::to_string).collect();
    check(
        "framework-cuda",
        ok,
        format!(
            "{label} is built for CUDA {}",
            if builds.is_empty() {
                "(not stated)".to_string()
            } else {
                builds.join(", ")
            }
        ),
        Some(format!(
            "install the {label} build for CUDA {}, or another version",
            builds.last().cloned().unwrap_or_default()
        )),
        Some(&build.source),
    )
}

/// Whether `build`, whose compute-capability range the data states, runs on `cc`; the
/// nearest release that does where it does not.
fn framework_gpu_check(
    facts: &Compatibility,
    build: &FrameworkBuild,
    label: &str,
    cc: &Version,
    min: &Version,
) -> CompatCheck {
    let runs = |b: &FrameworkBuild| b.runs_on(cc);
    let ok = runs(build);
    let range = format!(
        "{min}{}",
        build
            .max_compute_capability
            .as_ref()
            .map_or("+".to_string(), |m| format!("–{m}"))
    );
    // The nearest release of the same framework known to run on this GPU (one whose
    // range the data states).
    let mut others: Vec<&FrameworkBuild> = facts
        .builds(&build.name, None)
        .into_iter()
        .filter(|b| b.min_compute_capability.is_some() && runs(b))
        .collect();
    others.sort_by(|a, b| a.version.cmp(&b.version));
    let fix = if *cc > *min {
        others
            .iter()
            .find(|b| b.version > build.version)
            .map(|b| format!("use {} {} or later", b.name, b.version))
    } else {
        others
            .iter()
            .rev()
            .find(|b| b.version < build.version)
            .map(|b| format!("use {} {} or earlier", b.name, b.version))
    };
    check(
        "framework-gpu",
        ok,
        format!("{label} runs on compute capability {range}; the GPU is {cc}"),
        Some(fix.unwrap_or_else(|| format!("no {} release in the data runs on compute capability {cc}", build.name))),
        Some(&build.source),
    )
}

/// Whether `driver` runs one of `build`'s CUDA builds (natively or through minor-version
/// compatibility).
fn framework_driver_by_cuda(
    facts: &Compatibility,
    build: &FrameworkBuild,
    label: &str,
    driver: &Version,
) -> CompatCheck {
    let runnable: Vec<String> = build
        .cuda
        .iter()
        .filter(|c| facts.driver_runs(driver, c))
        .map(Version::to_string)
        .collect();
    // The oldest driver that runs one of the builds (through minor-version compatibility
    // where the major allows it).
    let floor = |row: &gpuplan_catalog::compatibility::CudaDriver| {
        row.minor_compat_min_driver
            .clone()
            .unwrap_or_else(|| row.min_driver.clone())
    };
    let newest = build
        .cuda
        .iter()
        .filter_map(|c| facts.driver_for(c))
        .min_by(|a, b| floor(a).cmp(&floor(b)));
    check(
        "framework-driver",
        !runnable.is_empty(),
        if runnable.is_empty() {
            format!("driver {driver} runs none of {label}'s CUDA builds")
        } else {
            format!(
                "driver {driver} runs {label}'s CUDA {} build{}",
                runnable.join(", "),
                if runnable.len() == 1 { "" } else { "s" }
            )
        },
        Some(newest.map_or("upgrade the driver".to_string(), |row| {
            format!(
                "upgrade the driver to ≥ {} (the CUDA {} build; ≥ {} runs it natively)",
                floor(row),
                row.cuda,
                row.min_driver
            )
        })),
        newest.map(|row| row.source.as_str()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `X` in a fix "upgrade the driver to ≥ X …".
    fn fixed_driver(fix: &str) -> Option<Version> {
        let rest = fix.strip_prefix("upgrade the driver to ≥ ")?;
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        version("--driver", &rest[..end]).ok()
    }

    /// No fix contradicts the check it fixes: for every CUDA release and framework build in the
    /// data, every GPU architecture and every driver the data names, a driver the answer
    /// refuses is never newer than the driver it then asks for, and asking again with that
    /// driver passes the same check.
    #[test]
    fn no_driver_fix_contradicts_its_check() {
        let catalog = Catalog::embedded().unwrap();
        let facts = catalog.compatibility();
        let mut drivers: Vec<String> = facts
            .cuda_driver
            .iter()
            .flat_map(|d| {
                std::iter::once(d.min_driver.to_string())
                    .chain(d.minor_compat_min_driver.as_ref().map(ToString::to_string))
            })
            .collect();
        drivers.sort();
        drivers.dedup();
        // Each CUDA release alone and each framework build alone (with the answers' own
        // containers and features, a cross product would take minutes).
        let asks: Vec<(Option<String>, Option<String>)> = facts
            .cuda_driver
            .iter()
            .map(|d| (Some(d.cuda.to_string()), None))
            .chain(
                facts
                    .framework
                    .iter()
                    .map(|f| (None, Some(format!("{}=={}", f.name, f.version)))),
            )
            .chain(std::iter::once((None, None)))
            .collect();
        let mut refused = 0;
        for gpu in [None, Some("V100"), Some("H100"), Some("B200")] {
            for (cuda, framework) in &asks {
                for driver in &drivers {
                    let ask = |driver: &str| CompatQuery {
                        gpu: gpu.map(str::to_string),
                        framework: framework.clone(),
                        cuda: cuda.clone(),
                        driver: Some(driver.to_string()),
                        ..CompatQuery::default()
                    };
                    let Ok(answer) = compat(&catalog, &ask(driver)) else {
                        continue;
                    };
                    for failed in answer.checks.iter().filter(|c| !c.ok) {
                        let Some(wanted) = failed.fix.as_deref().and_then(fixed_driver) else {
                            continue;
                        };
                        refused += 1;
                        let given = version("--driver", driver).unwrap();
                        assert!(wanted > given, "{gpu:?} {cuda:?} {framework:?} {driver}: {failed:?}");
                        let again = compat(&catalog, &ask(&wanted.to_string())).unwrap();
                        assert!(
                            again.checks.iter().filter(|c| c.check == failed.check).all(|c| c.ok),
                            "{gpu:?} {cuda:?} {framework:?} {driver} → {wanted}: {:?}",
                            again.checks
                        );
                    }
                }
            }
        }
        assert!(refused > 50, "{refused}");
    }
}
