//! AWS Neuron compatibility facts (`[[neuron_release]]` and `[[neuron_device]]` in
//! `compat/compatibility.toml`), each with its source: for each Neuron SDK release, the driver
//! it ships, the PyTorch versions torch-neuronx builds for and the instance families it
//! supports.

use crate::compatibility::Version;
use serde::{Deserialize, Serialize};

/// One Neuron SDK release line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeuronRelease {
    /// `major.minor` (`2.30`).
    pub sdk: Version,
    /// The `aws-neuronx-dkms` driver it ships (its first patch release's).
    pub driver: Version,
    /// PyTorch versions (major.minor) torch-neuronx is built for; empty where the release
    /// ships none.
    pub pytorch: Vec<Version>,
    /// Instance families (`inf2`, `trn1`, `trn2`, `trn3`) its runtime supports.
    pub devices: Vec<String>,
    pub source: String,
}

/// A catalog accelerator and the Neuron device family it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeuronDevice {
    pub gpu: String,
    pub device: String,
}

/// The Neuron facts of the compatibility data.
pub trait NeuronFacts {
    fn neuron_release(&self, sdk: &Version) -> Option<&NeuronRelease>;
    fn neuron_device(&self, gpu: &str) -> Option<&NeuronDevice>;
}

impl NeuronFacts for crate::compatibility::Compatibility {
    /// The release line of `sdk` (`2.30.0` → 2.30).
    fn neuron_release(&self, sdk: &Version) -> Option<&NeuronRelease> {
        self.neuron_release.iter().find(|r| r.sdk.same_release(sdk, 2))
    }

    fn neuron_device(&self, gpu: &str) -> Option<&NeuronDevice> {
        self.neuron_device.iter().find(|d| d.gpu == gpu)
    }
}
