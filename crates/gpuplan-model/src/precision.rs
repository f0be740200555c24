use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A numeric format an accelerator computes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Fp64,
    Fp32,
    Tf32,
    Fp16,
    Bf16,
    Fp8,
    Fp6,
    Fp4,
    Int8,
    Int4,
}

impl Precision {
    pub const ALL: [Precision; 10] = [
        Precision::Fp64,
        Precision::Fp32,
        Precision::Tf32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Fp8,
        Precision::Fp6,
        Precision::Fp4,
        Precision::Int8,
        Precision::Int4,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp64 => "fp64",
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Fp6 => "fp6",
            Precision::Fp4 => "fp4",
            Precision::Int8 => "int8",
            Precision::Int4 => "int4",
        }
    }

    /// Storage size of one value in bits.
    pub fn bits(self) -> u32 {
        match self {
            Precision::Fp64 => 64,
            Precision::Fp32 | Precision::Tf32 => 32,
            Precision::Fp16 | Precision::Bf16 => 16,
            Precision::Fp8 | Precision::Int8 => 8,
            Precision::Fp6 => 6,
            Precision::Fp4 | Precision::Int4 => 4,
        }
    }

    /// Integer formats are counted in TOPS rather than TFLOPS.
    pub fn is_integer(self) -> bool {
        matches!(self, Precision::Int8 | Precision::Int4)
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A precision name that is none of [`Precision::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown precision `{0}` ({near}expected one of fp64, fp32, tf32, fp16, bf16, fp8, fp6, fp4, int8, int4)",
    near = near_precision(.0)
)]
pub struct UnknownPrecision(pub String);

/// "did you mean `bf16`? " for a near miss of a precision's name, else nothing.
fn near_precision(typed: &str) -> String {
    crate::suggestion::did_you_mean(typed, Precision::ALL.iter().map(|p| p.name()))
        .map_or(String::new(), |near| format!("did you mean `{near}`? "))
}

impl FromStr for Precision {
    type Err = UnknownPrecision;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let folded = crate::normalize_name(text);
        Precision::ALL
            .into_iter()
            .find(|precision| precision.name() == folded)
            .ok_or_else(|| UnknownPrecision(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_any_case() {
        assert_eq!("BF16".parse::<Precision>(), Ok(Precision::Bf16));
        assert_eq!("int4".parse::<Precision>(), Ok(Precision::Int4));
        assert!("fp12".parse::<Precision>().is_err());
        let typo = "bf61".parse::<Precision>().unwrap_err().to_string();
        assert!(typo.contains("did you mean `bf16`?"), "{typo}");
    }

    #[test]
    fn names_round_trip() {
        for precision in Precision::ALL {
            assert_eq!(precision.name().parse::<Precision>(), Ok(precision));
        }
    }
}
