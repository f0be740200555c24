//! A load just past a replica's estimated capacity. The capacity is an estimate with an error
//! the validation tables measure (the `serving_capacity` interval in the calibration data:
//! measured over estimated capacity and MLPerf goodput, held-out runs). A load above the
//! estimate but under the top of that range may well hold on the real system, close to its
//! limit; calling it saturated would state a difference smaller than the model's own error.
//! Such a load is reported as near capacity, with the bound the model reaches first; only a
//! load beyond the range is reported as saturated.

use crate::serving::Saturation;
use gpuplan_model::fitted::{IntervalKind, Regime};
use serde::Serialize;

/// A load past the estimated capacity but within the capacity's 80 % range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NearCapacity {
    /// What the load exhausts in the model.
    pub bound: Saturation,
    /// The load over the estimated capacity (1.04: 4 % above it).
    pub load_over_capacity: f64,
    /// The top of the capacity's 80 % range, requests/s: nine measured capacities in ten lie
    /// under it.
    pub capacity_high_requests_per_second: f64,
}

/// A load at `rate` that the model finds exhausting `bound`, against the estimated `capacity`
/// (requests/s) of a replica of kind `of`: near capacity where it lies within the capacity's
/// 80 % range, else saturated (also where the calibration data holds no measured range).
pub fn classify(bound: Saturation, rate: f64, capacity: f64, of: MeasuredOn) -> Result<NearCapacity, Saturation> {
    split(bound, rate, capacity, capacity_interval(of).map(|range| range.high))
}

/// The capacity's 80 % range for one replica, as multiples of its estimate, and the runs it
/// was measured on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CapacityInterval {
    pub low: f64,
    pub high: f64,
    pub measured_on: MeasuredOn,
}

/// The held-out MLPerf runs a capacity range comes from, by the kind of replica they ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MeasuredOn {
    /// Dense models: Llama-2-70B, Llama-3.1-405B and 8B.
    DenseModels,
    /// Mixtures of experts: Mixtral-8x7B on one GPU a replica, DeepSeek-R1 with attention data
    /// parallelism over eight or more.
    MixturesOfExperts,
}

impl MeasuredOn {
    /// The kind of a replica with or without routed experts.
    pub fn of(routed_experts: bool) -> MeasuredOn {
        if routed_experts {
            MeasuredOn::MixturesOfExperts
        } else {
            MeasuredOn::DenseModels
        }
    }

    fn kind(self) -> IntervalKind {
        match self {
            MeasuredOn::DenseModels => IntervalKind::ServingCapacity,
            MeasuredOn::MixturesOfExperts => IntervalKind::MoeServingCapacity,
        }
    }

    /// The runs in words, for the answer.
    pub fn describe(self) -> &'static str {
        match self {
            MeasuredOn::DenseModels => "dense models (Llama-2-70B, Llama-3.1-405B and 8B)",
            MeasuredOn::MixturesOfExperts => "mixtures of experts (Mixtral-8x7B, DeepSeek-R1)",
        }
    }
}

/// The capacity's 80 % range as multiples of the estimate (measured over estimated) for
/// replicas of kind `of`, with the runs it was measured on; `None` where the calibration data
/// holds none.
pub fn capacity_interval(of: MeasuredOn) -> Option<CapacityInterval> {
    // The range is one for every GPU count; the regime only selects among entries of a kind.
    crate::calibration::calibration()
        .interval(of.kind(), Regime::OneNode)
        .map(|i| CapacityInterval {
            low: i.low,
            high: i.high,
            measured_on: of,
        })
}

fn split(bound: Saturation, rate: f64, capacity: f64, high: Option<f64>) -> Result<NearCapacity, Saturation> {
    match high {
        Some(high) if capacity > 0.0 && rate <= capacity * high => Ok(NearCapacity {
            bound,
            load_over_capacity: rate / capacity,
            capacity_high_requests_per_second: capacity * high,
        }),
        _ => Err(bound),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_load_beyond_the_capacitys_range_saturates() {
        let throughput = Saturation::Throughput;
        // 4 % over an estimated 100 requests/s whose range reaches 115: near capacity.
        let near = split(throughput, 104.0, 100.0, Some(1.15)).unwrap();
        assert_eq!(near.bound, Saturation::Throughput);
        assert!((near.load_over_capacity - 1.04).abs() < 1e-12);
        assert!((near.capacity_high_requests_per_second - 115.0).abs() < 1e-9);
        // Beyond the range, or with no measured range: saturated.
        assert_eq!(split(throughput, 120.0, 100.0, Some(1.15)), Err(throughput));
        assert_eq!(split(throughput, 104.0, 100.0, None), Err(throughput));
    }
}
