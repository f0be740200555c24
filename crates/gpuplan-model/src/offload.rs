//! What training moves to host memory: DeepSpeed ZeRO-Offload and ZeRO-Infinity
//! (`offload_optimizer`, `offload_param`), PyTorch FSDP's `CPUOffload(offload_params=True)`,
//! and torchtune's activation offloading.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// The parts of training state kept in host memory instead of on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Offload {
    /// Optimizer states, the fp32 master weights and the gradients after reduction; the
    /// optimizer steps on the CPU.
    pub optimizer: bool,
    /// The (sharded) parameters, fetched before each use; implies `optimizer`.
    pub parameters: bool,
    /// The activations saved for the backward pass, copied out and back on a side stream.
    pub activations: bool,
}

impl Offload {
    pub const NONE: Offload = Offload {
        optimizer: false,
        parameters: false,
        activations: false,
    };

    pub fn any(self) -> bool {
        self.optimizer || self.parameters || self.activations
    }
}

impl FromStr for Offload {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let mut offload = Offload::NONE;
        for part in text.split(',').map(|p| p.trim().to_lowercase()) {
            match part.as_str() {
                "none" | "off" | "" => {}
                "optimizer" | "optimiser" | "optimizer-states" => offload.optimizer = true,
                "params" | "parameters" | "param" => {
                    offload.parameters = true;
                    offload.optimizer = true;
                }
                "activations" | "activation" => offload.activations = true,
                other => {
                    return Err(format!(
                        "unknown offload target `{other}` (expected a comma list of optimizer, params, activations, or none)"
                    ));
                }
            }
        }
        Ok(offload)
    }
}

impl fmt::Display for Offload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&str> = [
            (self.optimizer && !self.parameters, "optimizer"),
            (self.parameters, "params"),
            (self.activations, "activations"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

impl Serialize for Offload {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Offload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_take_the_optimizer_with_them() {
        let offload: Offload = "params".parse().unwrap();
        assert!(offload.optimizer && offload.parameters && !offload.activations);
        assert_eq!(offload.to_string(), "params");
        assert_eq!(
            "optimizer,activations".parse::<Offload>().unwrap().to_string(),
            "optimizer,activations"
        );
        assert_eq!("none".parse::<Offload>().unwrap(), Offload::NONE);
        assert!("gpu".parse::<Offload>().is_err());
    }
}
