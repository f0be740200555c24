//! Software compatibility facts (`data/compat/compatibility.toml`), each with its source:
//! the driver each CUDA release needs, the compute capabilities each CUDA release builds for,
//! what framework builds exist for which CUDA and GPUs, features by compute capability, and
//! NGC containers with the driver they need.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// A dotted version (`12.4`, `550.54.14`, `2.5`), compared number by number, missing parts 0,
/// and shown as written (`580.82.07`).
#[derive(Debug, Clone)]
pub struct Version(pub Vec<u32>, String);

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl Version {
    /// The first `parts` numbers (`12.4.1` → `12.4` for 2).
    pub fn truncated(&self, parts: usize) -> Version {
        let kept: Vec<u32> = self.0.iter().copied().take(parts).collect();
        let text = self.1.split('.').take(parts).collect::<Vec<_>>().join(".");
        Version(kept, text)
    }

    /// Whether the first `parts` numbers agree (`12.4.1` and `12.4` for 2; a missing number
    /// counts as 0, as in the ordering): `truncated(parts) ==` without building either.
    pub fn same_release(&self, other: &Version, parts: usize) -> bool {
        (0..parts).all(|i| self.0.get(i).unwrap_or(&0) == other.0.get(i).unwrap_or(&0))
    }

    pub fn major(&self) -> u32 {
        self.0.first().copied().unwrap_or(0)
    }

    /// Whether this CUDA release, as a build lists it, covers `cuda`: the same major.minor, or
    /// the same major when the build names only a major (`12` for any 12.x).
    pub fn covers_cuda(&self, cuda: &Version) -> bool {
        if self.0.len() == 1 {
            self.major() == cuda.major()
        } else {
            self.same_release(cuda, 2)
        }
    }
}

impl std::str::FromStr for Version {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let trimmed = text.trim().trim_start_matches(['v', 'V']);
        let parts: Result<Vec<u32>, _> = trimmed.split('.').map(str::parse).collect();
        match parts {
            Ok(parts) if !parts.is_empty() => Ok(Version(parts, trimmed.to_string())),
            _ => Err(format!(
                "`{text}` is not a version (numbers separated by dots, e.g. 12.4)"
            )),
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let length = self.0.len().max(other.0.len());
        (0..length)
            .map(|i| self.0.get(i).unwrap_or(&0).cmp(other.0.get(i).unwrap_or(&0)))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.1)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudaDriver {
    pub cuda: Version,
    pub min_driver: Version,
    pub minor_compat_min_driver: Option<Version>,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudaCompute {
    pub cuda_from: Version,
    pub cuda_to: Option<Version>,
    pub min_compute_capability: Version,
    pub max_compute_capability: Option<Version>,
    pub note: Option<String>,
    pub source: String,
}

impl CudaCompute {
    /// Whether the toolkits of this range compile for compute capability `cc`.
    pub fn builds_for(&self, cc: &Version) -> bool {
        self.min_compute_capability <= *cc && self.max_compute_capability.as_ref().is_none_or(|max| cc <= max)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameworkBuild {
    pub name: String,
    pub version: Version,
    #[serde(default)]
    pub cuda: Vec<Version>,
    pub min_compute_capability: Option<Version>,
    pub max_compute_capability: Option<Version>,
    pub min_driver: Option<Version>,
    pub note: Option<String>,
    pub source: String,
}

impl FrameworkBuild {
    /// Whether the build runs on a GPU of compute capability `cc`.
    pub fn runs_on(&self, cc: &Version) -> bool {
        self.min_compute_capability.as_ref().is_none_or(|min| min <= cc)
            && self.max_compute_capability.as_ref().is_none_or(|max| cc <= max)
    }

    /// Whether it is built for CUDA `cuda` (major.minor); builds that state none are taken to.
    pub fn built_for(&self, cuda: &Version) -> bool {
        self.cuda.is_empty() || self.cuda.iter().any(|c| c.covers_cuda(cuda))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feature {
    pub feature: String,
    pub min_compute_capability: Version,
    pub max_compute_capability: Option<Version>,
    #[serde(default)]
    pub gpus: Vec<String>,
    pub note: Option<String>,
    pub source: String,
}

/// An NGC container release: its CUDA, the driver it needs, and the framework versions inside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NgcContainer {
    pub image: String,
    pub cuda: Version,
    pub min_driver: Option<Version>,
    /// The oldest GPU the release supports, where its notes say (25.01 on: 7.5).
    #[serde(default)]
    pub min_compute_capability: Option<Version>,
    /// Framework name (as in `framework` rows) → the version inside (`2.5.0a0`).
    #[serde(default)]
    pub frameworks: std::collections::BTreeMap<String, String>,
    pub note: Option<String>,
    pub source: String,
}

impl NgcContainer {
    /// Whether it ships `name` at a version starting with `version`'s parts (`2.5` matches
    /// `2.5.0a0`).
    pub fn ships(&self, name: &str, version: Option<&Version>) -> bool {
        self.frameworks
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .is_some_and(|(_, inside)| {
                version.is_none_or(|wanted| {
                    let numeric: String = inside
                        .split('.')
                        .take(wanted.0.len())
                        .map(|part| part.chars().take_while(char::is_ascii_digit).collect::<String>())
                        .collect::<Vec<_>>()
                        .join(".");
                    numeric.parse::<Version>().is_ok_and(|v| v == *wanted)
                })
            })
    }
}

/// Every compatibility fact the catalog keeps (`compat/compatibility.toml`; empty where a
/// catalog folder has no such file, and then every check says it does not know).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Compatibility {
    #[serde(default)]
    pub cuda_driver: Vec<CudaDriver>,
    #[serde(default)]
    pub cuda_compute: Vec<CudaCompute>,
    #[serde(default)]
    pub framework: Vec<FrameworkBuild>,
    #[serde(default)]
    pub feature: Vec<Feature>,
    #[serde(default)]
    pub ngc_container: Vec<NgcContainer>,
    #[serde(default)]
    pub rocm_release: Vec<crate::rocm_compatibility::RocmRelease>,
    #[serde(default)]
    pub rocm_pytorch: Vec<crate::rocm_compatibility::RocmPytorch>,
    #[serde(default)]
    pub amdgpu_driver: Vec<crate::rocm_compatibility::AmdgpuDriver>,
    #[serde(default)]
    pub amd_gpu: Vec<crate::rocm_compatibility::AmdGpu>,
    #[serde(default)]
    pub neuron_release: Vec<crate::neuron_compatibility::NeuronRelease>,
    #[serde(default)]
    pub neuron_device: Vec<crate::neuron_compatibility::NeuronDevice>,
}

impl Compatibility {
    /// The facts of a catalog's `compat/compatibility.toml`.
    pub(crate) fn parse(file: &str, text: &str) -> Result<Compatibility, crate::CatalogError> {
        crate::raw::parse_toml(file, text)
    }

    /// The driver a CUDA release needs (by major.minor), and the minor-version-compatibility
    /// floor of its major.
    pub fn driver_for(&self, cuda: &Version) -> Option<&CudaDriver> {
        self.cuda_driver
            .iter()
            .filter(|d| d.cuda.same_release(cuda, 2))
            .min_by(|a, b| a.min_driver.cmp(&b.min_driver))
    }

    /// The newest CUDA release `driver` runs natively.
    pub fn newest_cuda_for(&self, driver: &Version) -> Option<&CudaDriver> {
        self.cuda_driver
            .iter()
            .filter(|d| d.min_driver <= *driver)
            .max_by(|a, b| a.cuda.cmp(&b.cuda))
    }

    /// Whether `driver` runs CUDA `cuda`: natively (at or above the toolkit's driver), or
    /// through the minor-version compatibility of its major (at or above the major's floor:
    /// any 11.x application on a driver from 450.80.02, NVIDIA's CUDA compatibility guide).
    pub fn driver_runs(&self, driver: &Version, cuda: &Version) -> bool {
        self.driver_for(cuda).is_some_and(|row| {
            *driver >= row.min_driver
                || row
                    .minor_compat_min_driver
                    .as_ref()
                    .is_some_and(|floor| driver >= floor)
        })
    }

    /// The newest CUDA release `driver` runs, natively or through minor-version compatibility.
    pub fn newest_runnable_cuda(&self, driver: &Version) -> Option<&CudaDriver> {
        self.cuda_driver
            .iter()
            .filter(|d| self.driver_runs(driver, &d.cuda))
            .max_by(|a, b| a.cuda.cmp(&b.cuda))
    }

    /// The first driver that supports GPUs of compute capability `cc`, derived from the data:
    /// the driver of the first toolkit that compiles for it (Hopper: CUDA 11.8, 520.61.05), and
    /// that toolkit. `None` where the oldest toolkit in the data already compiles for it (the
    /// architecture is older than the data, so every driver it lists supports it).
    pub fn first_driver_for(&self, cc: &Version) -> Option<(&Version, &Version)> {
        let mut rows: Vec<&CudaDriver> = self.cuda_driver.iter().collect();
        rows.sort_by(|a, b| a.cuda.cmp(&b.cuda));
        let builds = |row: &&CudaDriver| self.compute_range(&row.cuda).is_some_and(|r| r.builds_for(cc));
        let first = rows.iter().position(builds)?;
        (first > 0).then(|| (&rows[first].min_driver, &rows[first].cuda))
    }

    /// The CUDA releases (major.minor) whose builds include compute capability `cc`.
    pub fn cuda_releases_for(&self, cc: &Version) -> Vec<Version> {
        let mut releases: Vec<Version> = self
            .cuda_driver
            .iter()
            .map(|d| d.cuda.truncated(2))
            .filter(|cuda| self.compute_range(cuda).is_some_and(|r| r.builds_for(cc)))
            .collect();
        releases.sort();
        releases.dedup();
        releases
    }

    /// Whether `container` runs on a GPU of compute capability `cc`: its release supports the
    /// GPU and its CUDA builds for it.
    pub fn container_runs_on(&self, container: &NgcContainer, cc: &Version) -> bool {
        container.min_compute_capability.as_ref().is_none_or(|min| min <= cc)
            && self
                .compute_range(&container.cuda)
                .is_none_or(|range| range.builds_for(cc))
    }

    /// The oldest compute capability `container` runs on: its release's floor, else its CUDA's.
    pub fn container_floor<'a>(&'a self, container: &'a NgcContainer) -> Option<&'a Version> {
        container
            .min_compute_capability
            .as_ref()
            .or_else(|| self.compute_range(&container.cuda).map(|r| &r.min_compute_capability))
    }

    /// The newest release of `repository` (`nvcr.io/nvidia/pytorch`) that runs on compute
    /// capability `cc`.
    pub fn newest_container_on(&self, repository: &str, cc: &Version) -> Option<&NgcContainer> {
        self.ngc_container
            .iter()
            .filter(|c| c.image.rsplit_once(':').is_some_and(|(repo, _)| repo == repository))
            .filter(|c| self.container_runs_on(c, cc))
            .max_by_key(|c| c.image.rsplit(':').next())
    }

    /// The container `image` names, where the data knows it.
    pub fn container(&self, image: &str) -> Option<&NgcContainer> {
        self.ngc_container.iter().find(|c| c.image == image)
    }

    /// The compute capabilities `cuda` builds for.
    pub fn compute_range(&self, cuda: &Version) -> Option<&CudaCompute> {
        self.cuda_compute
            .iter()
            .filter(|c| c.cuda_from <= *cuda && c.cuda_to.as_ref().is_none_or(|to| cuda <= to))
            .max_by(|a, b| a.cuda_from.cmp(&b.cuda_from))
    }

    /// Whether `name` is a framework the data describes builds of (`pytorch`, `vllm`).
    pub fn knows_framework(&self, name: &str) -> bool {
        self.framework.iter().any(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// The framework names the data describes, sorted.
    pub fn framework_names(&self) -> Vec<&str> {
        let names: std::collections::BTreeSet<&str> = self.framework.iter().map(|f| f.name.as_str()).collect();
        names.into_iter().collect()
    }

    /// The builds of `name` (case-insensitive), `version` matched on the parts it gives: `2`
    /// names every 2.x release the data holds. A patch release the data does not list
    /// (`2.0.1`) is its minor release's build (`2.0`): patch releases keep their minor
    /// release's CUDA builds.
    pub fn builds(&self, name: &str, version: Option<&Version>) -> Vec<&FrameworkBuild> {
        let named = || self.framework.iter().filter(|f| f.name.eq_ignore_ascii_case(name));
        let Some(version) = version else {
            return named().collect();
        };
        let given = named()
            .filter(|f| f.version.same_release(version, version.0.len()))
            .collect::<Vec<_>>();
        if !given.is_empty() {
            return given;
        }
        named()
            .filter(|f| version.same_release(&f.version, f.version.0.len()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        text.parse().unwrap()
    }

    #[test]
    fn versions_compare_number_by_number() {
        assert!(v("550.54.14") > v("535.104.05"));
        assert!(v("12.10") > v("12.9"));
        assert_eq!(v("12.4").cmp(&v("12.4.0")), Ordering::Equal);
        assert!("12.x".parse::<Version>().is_err());
    }

    fn embedded() -> Compatibility {
        crate::Catalog::embedded().unwrap().compatibility().clone()
    }

    #[test]
    fn a_patch_release_is_its_minor_releases_build() {
        let facts = embedded();
        let minor = facts.builds("pytorch", Some(&v("2.0")));
        assert!(!minor.is_empty());
        assert_eq!(facts.builds("pytorch", Some(&v("2.0.1"))), minor);
        assert_eq!(
            facts.builds("tensorflow", Some(&v("2.14.1"))),
            facts.builds("tensorflow", Some(&v("2.14")))
        );
        // A release the data does not hold at all stays unknown.
        assert!(facts.builds("pytorch", Some(&v("0.9.1"))).is_empty());
    }

    #[test]
    fn the_embedded_facts_load_and_answer() {
        let facts = embedded();
        assert!(!facts.cuda_driver.is_empty() && !facts.framework.is_empty());
        let twelve_four = facts.driver_for(&v("12.4")).unwrap();
        assert_eq!(twelve_four.min_driver, v("550.54.14"));
        assert!(facts.newest_cuda_for(&v("535.104.05")).unwrap().cuda.truncated(2) == v("12.2"));
        for row in &facts.cuda_driver {
            assert!(row.source.starts_with("https://"), "{}", row.cuda);
        }
    }

    #[test]
    fn every_fact_names_its_source_and_every_container_what_it_ships() {
        let facts = embedded();
        let sources = facts
            .cuda_driver
            .iter()
            .map(|r| &r.source)
            .chain(facts.cuda_compute.iter().map(|r| &r.source))
            .chain(facts.framework.iter().map(|r| &r.source))
            .chain(facts.feature.iter().map(|r| &r.source))
            .chain(facts.ngc_container.iter().map(|r| &r.source))
            .chain(facts.rocm_release.iter().map(|r| &r.source))
            .chain(facts.rocm_pytorch.iter().map(|r| &r.source))
            .chain(facts.amdgpu_driver.iter().map(|r| &r.source))
            .chain(facts.amd_gpu.iter().map(|r| &r.source))
            .chain(facts.neuron_release.iter().map(|r| &r.source));
        for source in sources {
            assert!(source.starts_with("https://"), "{source}");
        }
        assert!(facts.ngc_container.len() >= 40);
        // The ROCm and Neuron facts name accelerators the catalog has.
        let catalog = crate::Catalog::embedded().unwrap();
        let names = facts
            .amd_gpu
            .iter()
            .map(|g| &g.gpu)
            .chain(facts.neuron_device.iter().map(|d| &d.gpu));
        for name in names {
            assert!(catalog.accelerators().resolve_one(name).is_ok(), "{name}");
        }
        assert!(facts.rocm_release.iter().all(|r| !r.gpu_targets.is_empty()));
        assert!(facts.neuron_release.iter().all(|r| !r.devices.is_empty()));
        for container in &facts.ngc_container {
            assert!(container.image.starts_with("nvcr.io/nvidia/"), "{}", container.image);
            assert!(
                !container.frameworks.is_empty() || container.image.contains("tritonserver"),
                "{}",
                container.image
            );
        }
        for name in [
            "pytorch",
            "tensorflow",
            "jax",
            "vllm",
            "tensorrt",
            "tensorrt-llm",
            "onnxruntime",
        ] {
            assert!(facts.knows_framework(name), "{name}");
        }
    }
}
