//! `compat` on AWS Inferentia and Trainium: whether a Neuron SDK release supports the
//! instance family, which PyTorch versions its torch-neuronx builds for, and whether the host
//! driver is new enough (AWS: a newer driver runs older runtimes; upgrade the driver first).

use crate::Error;
use crate::compat::{CompatCheck, check};
use gpuplan_catalog::compatibility::{Compatibility, Version};
use gpuplan_catalog::neuron_compatibility::{NeuronDevice, NeuronFacts, NeuronRelease};

/// What a Neuron question asks, parsed.
pub(crate) struct NeuronAsked<'a> {
    pub device: Option<&'a NeuronDevice>,
    pub sdk: Option<Version>,
    pub pytorch: Option<Version>,
    pub driver: Option<Version>,
}

fn sdks(releases: &[&NeuronRelease]) -> String {
    releases
        .iter()
        .map(|r| r.sdk.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The device family of a catalog accelerator, or an error naming those the data knows.
pub(crate) fn device<'a>(facts: &'a Compatibility, gpu: &str) -> Result<&'a NeuronDevice, Error> {
    facts.neuron_device(gpu).ok_or_else(|| {
        let known: Vec<&str> = facts.neuron_device.iter().map(|d| d.gpu.as_str()).collect();
        Error::invalid(
            format!("{gpu}: the compatibility data holds no Neuron device family for it"),
            Some(format!("Neuron accelerators the data knows: {}", known.join(", "))),
        )
    })
}

pub(crate) fn checks(facts: &Compatibility, asked: &NeuronAsked) -> Result<Vec<CompatCheck>, Error> {
    let release = asked
        .sdk
        .as_ref()
        .map(|sdk| {
            facts.neuron_release(sdk).ok_or_else(|| {
                let all: Vec<&NeuronRelease> = facts.neuron_release.iter().collect();
                Error::invalid(
                    format!("--neuron {sdk}: not a Neuron SDK release the compatibility data knows"),
                    Some(format!("give a release the data covers: {}", sdks(&all))),
                )
            })
        })
        .transpose()?;
    let mut checks = Vec::new();
    if let (Some(release), None) = (release, asked.device) {
        checks.push(check(
            "release",
            true,
            format!(
                "Neuron SDK {} ships driver {} and supports {}",
                release.sdk,
                release.driver,
                release.devices.join(", ")
            ),
            None,
            Some(&release.source),
        ));
    }
    let supporting = |device: &NeuronDevice| -> Vec<&NeuronRelease> {
        facts
            .neuron_release
            .iter()
            .filter(|r| r.devices.contains(&device.device))
            .collect()
    };
    if let (Some(release), Some(device)) = (release, asked.device) {
        let ok = release.devices.contains(&device.device);
        let with = supporting(device);
        checks.push(check(
            "device",
            ok,
            format!(
                "Neuron SDK {} {} {} ({})",
                release.sdk,
                if ok { "supports" } else { "does not support" },
                device.gpu,
                device.device
            ),
            Some(format!("use Neuron SDK {}", sdks(&with))),
            Some(&release.source),
        ));
    }
    if let (None, Some(device)) = (release, asked.device) {
        let with = supporting(device);
        checks.push(check(
            "device",
            !with.is_empty(),
            format!(
                "Neuron SDK releases supporting {} ({}): {}",
                device.gpu,
                device.device,
                sdks(&with)
            ),
            Some(format!("no Neuron SDK in the data supports {}", device.device)),
            facts.neuron_release.first().map(|r| r.source.as_str()),
        ));
    }
    if let Some(pytorch) = &asked.pytorch {
        checks.push(pytorch_check(facts, pytorch, release));
    }
    if let (Some(driver), Some(release)) = (&asked.driver, release) {
        checks.push(check(
            "driver",
            *driver >= release.driver,
            format!(
                "Neuron SDK {} ships driver {}; the host runs {driver} (a newer driver runs older runtimes, not the reverse)",
                release.sdk, release.driver
            ),
            Some(format!(
                "upgrade the host's aws-neuronx-dkms to ≥ {} before running this release",
                release.driver
            )),
            Some(&release.source),
        ));
    }
    Ok(checks)
}

fn pytorch_check(facts: &Compatibility, pytorch: &Version, release: Option<&NeuronRelease>) -> CompatCheck {
    let wanted = pytorch.truncated(2);
    let with: Vec<&NeuronRelease> = facts
        .neuron_release
        .iter()
        .filter(|r| r.pytorch.iter().any(|p| p.truncated(2) == wanted))
        .collect();
    let fix = if with.is_empty() {
        format!("no Neuron SDK in the data builds torch-neuronx for PyTorch {wanted}")
    } else {
        format!("use Neuron SDK {}", sdks(&with))
    };
    match release {
        Some(release) => {
            let built: Vec<String> = release.pytorch.iter().map(Version::to_string).collect();
            check(
                "framework-neuron",
                release.pytorch.iter().any(|p| p.truncated(2) == wanted),
                if built.is_empty() {
                    format!("Neuron SDK {} ships no torch-neuronx", release.sdk)
                } else {
                    format!(
                        "Neuron SDK {}'s torch-neuronx is built for PyTorch {}",
                        release.sdk,
                        built.join(", ")
                    )
                },
                Some(fix),
                Some(&release.source),
            )
        }
        None => check(
            "framework-neuron",
            !with.is_empty(),
            format!(
                "torch-neuronx is built for PyTorch {wanted} in Neuron SDK {}",
                sdks(&with)
            ),
            Some(fix),
            facts.neuron_release.first().map(|r| r.source.as_str()),
        ),
    }
}
