//! Units as types. Each wraps one number in one base unit; conversions are named.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, Mul};

const KIB: f64 = 1024.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const ZERO: Bytes = Bytes(0);

    /// Binary gigabytes (2^30 bytes), rounded to the nearest byte.
    pub fn from_gib(gib: f64) -> Bytes {
        Bytes((gib * GIB).round().max(0.0) as u64)
    }

    /// Binary megabytes (2^20 bytes).
    pub fn from_mib(mib: u64) -> Bytes {
        Bytes(mib.saturating_mul(1024 * 1024))
    }

    /// Decimal gigabytes (10^9 bytes), as disks are sold.
    pub fn from_gb(gb: f64) -> Bytes {
        Bytes((gb * 1e9).round().max(0.0) as u64)
    }

    pub fn as_u64(self) -> u64 {
        self.0
    }

    pub fn as_gib(self) -> f64 {
        self.0 as f64 / GIB
    }

    pub fn as_gb(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl Add for Bytes {
    type Output = Bytes;
    fn add(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_add(other.0))
    }
}

impl Mul<u32> for Bytes {
    type Output = Bytes;
    fn mul(self, count: u32) -> Bytes {
        Bytes(self.0.saturating_mul(u64::from(count)))
    }
}

impl fmt::Display for Bytes {
    /// Binary units with up to one decimal, the way `nvidia-smi` users read memory.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0 as f64;
        let (value, unit) = if bytes >= GIB * KIB {
            (bytes / (GIB * KIB), "TiB")
        } else if bytes >= GIB {
            (bytes / GIB, "GiB")
        } else if bytes >= KIB * KIB {
            (bytes / (KIB * KIB), "MiB")
        } else if bytes >= KIB {
            (bytes / KIB, "KiB")
        } else {
            return write!(f, "{} B", self.0);
        };
        write!(f, "{} {unit}", trim_decimal(value, 1))
    }
}

/// A data rate in bytes per second (memory bandwidth, NVLink).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BytesPerSecond(pub f64);

impl BytesPerSecond {
    /// Decimal gigabytes per second, the unit of every datasheet.
    pub fn from_gb_per_s(gb_per_s: f64) -> Self {
        BytesPerSecond(gb_per_s * 1e9)
    }

    pub fn as_gb_per_s(self) -> f64 {
        self.0 / 1e9
    }
}

impl fmt::Display for BytesPerSecond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gb = self.as_gb_per_s();
        if gb >= 1000.0 {
            write!(f, "{} TB/s", trim_decimal(gb / 1000.0, 2))
        } else {
            write!(f, "{} GB/s", trim_decimal(gb, 1))
        }
    }
}

/// A network rate in gigabits per second, as clouds sell it.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GigabitsPerSecond(pub f64);

impl GigabitsPerSecond {
    pub fn as_bytes_per_second(self) -> BytesPerSecond {
        BytesPerSecond(self.0 * 1e9 / 8.0)
    }
}

impl fmt::Display for GigabitsPerSecond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} Gbps", trim_decimal(self.0, 1))
    }
}

/// Arithmetic throughput in floating-point (or integer) operations per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FlopsPerSecond(pub f64);

impl FlopsPerSecond {
    pub fn from_tflops(tflops: f64) -> Self {
        FlopsPerSecond(tflops * 1e12)
    }

    pub fn as_tflops(self) -> f64 {
        self.0 / 1e12
    }
}

impl fmt::Display for FlopsPerSecond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} TFLOPS", trim_decimal(self.as_tflops(), 1))
    }
}

/// Electrical power in watts.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Watts(pub f64);

impl fmt::Display for Watts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} W", trim_decimal(self.0, 0))
    }
}

/// A price rate in US dollars per hour.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UsdPerHour(pub f64);

impl UsdPerHour {
    pub fn as_f64(self) -> f64 {
        self.0
    }

    /// The same rate spread over `count` units (e.g. the price of one GPU of an instance).
    pub fn per(self, count: u32) -> UsdPerHour {
        UsdPerHour(self.0 / f64::from(count.max(1)))
    }
}

impl fmt::Display for UsdPerHour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 100.0 {
            write!(f, "${:.2}/h", self.0)
        } else {
            write!(f, "${:.3}/h", self.0)
        }
    }
}

/// Formats with at most `decimals` decimals and no trailing zeros: 80.0 → "80", 13.50 → "13.5".
fn trim_decimal(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_display_in_binary_units() {
        assert_eq!(Bytes::from_gib(80.0).to_string(), "80 GiB");
        assert_eq!(Bytes::from_gib(13.5).to_string(), "13.5 GiB");
        assert_eq!(Bytes::from_mib(512).to_string(), "512 MiB");
        assert_eq!(Bytes(12).to_string(), "12 B");
        assert_eq!(Bytes::from_gib(1536.0).to_string(), "1.5 TiB");
    }

    #[test]
    fn conversions_round_trip() {
        assert_eq!(Bytes::from_mib(81_920), Bytes::from_gib(80.0));
        assert!((BytesPerSecond::from_gb_per_s(3350.0).as_gb_per_s() - 3350.0).abs() < 1e-9);
        assert_eq!(BytesPerSecond::from_gb_per_s(3350.0).to_string(), "3.35 TB/s");
        assert_eq!(FlopsPerSecond::from_tflops(989.4).to_string(), "989.4 TFLOPS");
        assert_eq!(GigabitsPerSecond(100.0).as_bytes_per_second(), BytesPerSecond(12.5e9));
    }

    #[test]
    fn price_per_unit() {
        assert_eq!(UsdPerHour(32.0).per(8), UsdPerHour(4.0));
        assert_eq!(UsdPerHour(0.526).to_string(), "$0.526/h");
        assert_eq!(UsdPerHour(98.32).to_string(), "$98.320/h");
    }
}
