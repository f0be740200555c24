//! ROCm compatibility facts (`[[rocm_release]]`, `[[rocm_pytorch]]`, `[[amdgpu_driver]]` and
//! `[[amd_gpu]]` in `compat/compatibility.toml`), each with its source: which Instinct GPU
//! targets a ROCm release supports, which ROCm releases PyTorch ships wheels for, and which
//! ROCm user space an amdgpu kernel driver runs.

use crate::compatibility::Version;
use serde::{Deserialize, Serialize};

/// A ROCm release line and the GPU targets AMD's documentation lists for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RocmRelease {
    /// `major.minor`.
    pub rocm: Version,
    /// LLVM targets (`gfx942`) the documentation lists as supported.
    pub gpu_targets: Vec<String>,
    /// Whether the list is the release's whole compatibility matrix; otherwise it is what
    /// the documentation found names, and a target not in it is unknown, not unsupported.
    pub complete: bool,
    pub source: String,
}

/// The ROCm release lines one PyTorch release ships official wheels for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RocmPytorch {
    pub pytorch: Version,
    pub rocm: Vec<Version>,
    pub source: String,
}

/// A kernel driver line (the amdgpu KMD shipped with ROCm up to 6.4; the separately versioned
/// AMD GPU Driver from 30.10, with ROCm 7.0) and the ROCm user-space lines AMD supports on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmdgpuDriver {
    pub driver: Version,
    pub rocm: Vec<Version>,
    pub source: String,
}

/// An AMD accelerator's LLVM target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmdGpu {
    /// Catalog accelerator id.
    pub gpu: String,
    pub target: String,
    pub source: String,
}

/// The ROCm facts of the compatibility data.
pub trait RocmFacts {
    fn rocm_release(&self, rocm: &Version) -> Option<&RocmRelease>;
    fn rocm_wheels(&self, pytorch: &Version) -> Option<&RocmPytorch>;
    fn amdgpu_driver(&self, driver: &Version) -> Option<&AmdgpuDriver>;
    fn amd_target(&self, gpu: &str) -> Option<&AmdGpu>;
}

impl RocmFacts for crate::compatibility::Compatibility {
    /// The release line of `rocm` (`7.1.1` → the 7.1 line).
    fn rocm_release(&self, rocm: &Version) -> Option<&RocmRelease> {
        self.rocm_release.iter().find(|r| r.rocm.same_release(rocm, 2))
    }

    fn rocm_wheels(&self, pytorch: &Version) -> Option<&RocmPytorch> {
        self.rocm_pytorch.iter().find(|p| p.pytorch.same_release(pytorch, 2))
    }

    /// The driver line of `driver` (`30.10.1` → 30.10, `6.4.3` → 6.4).
    fn amdgpu_driver(&self, driver: &Version) -> Option<&AmdgpuDriver> {
        self.amdgpu_driver.iter().find(|d| d.driver.same_release(driver, 2))
    }

    fn amd_target(&self, gpu: &str) -> Option<&AmdGpu> {
        self.amd_gpu.iter().find(|g| g.gpu == gpu)
    }
}
