use serde::{Deserialize, Serialize};
use std::fmt;

/// A cloud provider id in its normal form: lower case, no spaces (`aws`, `gcp`, `lambda`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProviderId(String);

impl ProviderId {
    /// Normalises what a user or a data file wrote: `"AWS"`, `" Aws "` → `aws`.
    pub fn new(name: &str) -> Self {
        ProviderId(name.trim().to_lowercase().replace([' ', '_'], "-"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name people write in prose.
    pub fn display_name(&self) -> &str {
        match self.0.as_str() {
            "aws" => "AWS",
            "gcp" => "GCP",
            "azure" => "Azure",
            "oci" => "OCI",
            "ibm" => "IBM Cloud",
            "lambda" => "Lambda",
            "runpod" => "RunPod",
            "alibaba" => "Alibaba Cloud",
            "tencent" => "Tencent Cloud",
            "cudo" => "Cudo Compute",
            "fluidstack" => "Fluidstack",
            "nebius" => "Nebius",
            "seeweb" => "Seeweb",
            "vast" => "Vast.ai",
            "verda" => "Verda",
            "hyperbolic" => "Hyperbolic",
            "mithril" => "Mithril",
            other => other,
        }
    }
}

impl fmt::Display for ProviderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises() {
        assert_eq!(ProviderId::new(" AWS ").as_str(), "aws");
        assert_eq!(ProviderId::new("gcp").display_name(), "GCP");
    }
}
