//! An NVIDIA GPU's CUDA compute capability (`8.0`, `8.6`, `9.0`, `10.0`), ordered so that a
//! filter can ask for "at least" one.

use std::fmt;

/// `major.minor` of a CUDA compute capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    /// `8.6`, `9.0`, `9` (minor 0) or `sm_90` / `sm90` (the compiler's spelling); `None` for
    /// anything else.
    pub fn parse(text: &str) -> Option<ComputeCapability> {
        let text = text.trim().to_ascii_lowercase();
        let at = |major: &str, minor: &str| {
            Some(ComputeCapability {
                major: major.parse().ok()?,
                minor: minor.parse().ok()?,
            })
        };
        // The compiler's `sm_90` is 9.0 and `sm_100` 10.0: the last digit is the minor.
        if let Some(digits) = text.strip_prefix("sm_").or_else(|| text.strip_prefix("sm")) {
            if digits.len() < 2 || !digits.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let (major, minor) = digits.split_at(digits.len() - 1);
            return at(major, minor);
        }
        match text.split_once('.') {
            Some((major, minor)) => at(major, minor),
            None => at(&text, "0"),
        }
    }

    /// 32-bit FMA lanes of an SM per exponential its special-function units return a clock
    /// (`exp2f`, which softmax runs on), where the capability is known: the CUDA C++
    /// Programming Guide's arithmetic-instruction throughput table gives 64 or 128 FMA results
    /// and 16 (32 on 6.1) exponentials a clock per SM, so 4 on Pascal, Volta, Turing and A100,
    /// 8 from 8.6 (Ampere's GeForce and workstation parts, Ada, Hopper, Blackwell); Blackwell
    /// Ultra (10.3) doubles the special-function units' exponentials (NVIDIA's Blackwell Ultra
    /// technical brief: 2× attention-layer acceleration), so 4 again.
    pub fn fp32_lanes_per_exponential(&self) -> Option<f64> {
        match (self.major, self.minor) {
            (6, _) | (7, _) | (8, 0) | (10, 3) => Some(4.0),
            (8, _) | (9, 0) | (10, _) | (12, _) => Some(8.0),
            _ => None,
        }
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spellings_guides_use_parse_and_order() {
        let cc = |major, minor| Some(ComputeCapability { major, minor });
        assert_eq!(ComputeCapability::parse("8.6"), cc(8, 6));
        assert_eq!(ComputeCapability::parse("sm_90"), cc(9, 0));
        assert_eq!(ComputeCapability::parse("sm_100"), cc(10, 0));
        assert_eq!(ComputeCapability::parse("sm86"), cc(8, 6));
        assert_eq!(ComputeCapability::parse("12.0"), cc(12, 0));
        assert_eq!(ComputeCapability::parse("hopper"), None);
        assert_eq!(ComputeCapability::parse("8.x"), None);
        assert!(ComputeCapability::parse("8.6") < ComputeCapability::parse("8.9"));
        assert!(ComputeCapability::parse("9.0") < ComputeCapability::parse("10.0"));
    }

    #[test]
    fn special_function_units_keep_up_with_fewer_lanes_from_ampere_geforce_on() {
        let lanes = |text| ComputeCapability::parse(text).and_then(|cc| cc.fp32_lanes_per_exponential());
        assert_eq!(lanes("8.0"), Some(4.0));
        assert_eq!(lanes("8.6"), Some(8.0));
        assert_eq!(lanes("9.0"), Some(8.0));
        assert_eq!(lanes("10.0"), Some(8.0));
        assert_eq!(lanes("10.3"), Some(4.0));
        assert_eq!(lanes("12.0"), Some(8.0));
        assert_eq!(lanes("5.2"), None);
    }
}
