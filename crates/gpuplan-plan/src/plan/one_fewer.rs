//! The plan with one instance fewer. Replicas come whole: a load 14 % above one replica's
//! estimated goodput takes two, and with eight GPUs to a replica that doubles the bill. The
//! goodput is itself an estimate, whose error the validation tables measure (the
//! `serving_capacity` range: the measured goodput of held-out MLPerf runs over the estimate).
//! So each serving plan of more than one instance also says what the last instance buys: the
//! load each replica would carry without it, as a multiple of its estimated goodput, beside
//! that range. A multiple inside the range is a plan a load test may well pass.

use gpuplan_estimate::serving_near_capacity::{MeasuredOn, capacity_interval};
use serde::Serialize;

/// The same offering with one instance fewer, at the same load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OneFewer {
    pub instances: u32,
    pub replicas: u32,
    /// Requests/s each replica would carry.
    pub load_per_replica: f64,
    /// That load over the replica's estimated goodput (1.14: 14 % above it).
    pub load_over_goodput: f64,
    /// The 80 % range of measured goodput over estimated goodput (held-out MLPerf runs);
    /// `None` where the calibration data holds none.
    pub goodput_range: Option<[f64; 2]>,
    /// `load_over_goodput` read against `goodput_range`.
    pub reading: OneFewerReading,
}

/// What one instance fewer would mean, read against the goodput's measured range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OneFewerReading {
    /// At most the estimated goodput: only the headroom asks for the last instance.
    HeadroomOnly,
    /// Above the goodput but within the top of its range: it may hold; a load test decides.
    WithinRange,
    /// Past the top of the range: the last instance is needed.
    BeyondRange,
    /// Above the goodput, and no measured range to read it against.
    Unmeasured,
}

/// One instance fewer for a load of `rate` requests/s spread over replicas of `goodput`
/// requests/s each, `replicas_per_instance` to an instance, read against the range measured on
/// replicas like these (`of`); `None` for a single instance.
pub(super) fn one_fewer(
    instances: u32,
    replicas_per_instance: u32,
    rate: f64,
    goodput: f64,
    of: MeasuredOn,
) -> Option<OneFewer> {
    let instances = instances.checked_sub(1).filter(|n| *n > 0)?;
    let replicas = instances * replicas_per_instance;
    if replicas == 0 || goodput <= 0.0 {
        return None;
    }
    let load_per_replica = rate / f64::from(replicas);
    Some(OneFewer::new(
        instances,
        replicas,
        load_per_replica,
        load_per_replica / goodput,
        capacity_interval(of).map(|range| [range.low, range.high]),
    ))
}

impl OneFewer {
    /// The figures, with their reading.
    pub fn new(
        instances: u32,
        replicas: u32,
        load_per_replica: f64,
        load_over_goodput: f64,
        goodput_range: Option<[f64; 2]>,
    ) -> OneFewer {
        let reading = match goodput_range {
            _ if load_over_goodput <= 1.0 => OneFewerReading::HeadroomOnly,
            Some([_, high]) if load_over_goodput <= high => OneFewerReading::WithinRange,
            Some(_) => OneFewerReading::BeyondRange,
            None => OneFewerReading::Unmeasured,
        };
        OneFewer {
            instances,
            replicas,
            load_per_replica,
            load_over_goodput,
            goodput_range,
            reading,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_instance_fewer_spreads_the_load_over_the_replicas_left() {
        // 0.45 req/s on two instances of one replica of goodput 0.395: one would carry it all.
        let fewer = one_fewer(2, 1, 0.45, 0.395, MeasuredOn::DenseModels).unwrap();
        assert_eq!((fewer.instances, fewer.replicas), (1, 1));
        assert!((fewer.load_over_goodput - 0.45 / 0.395).abs() < 1e-12);
        // Four replicas to an instance, three instances: two would hold eight replicas.
        let fewer = one_fewer(3, 4, 10.0, 1.0, MeasuredOn::DenseModels).unwrap();
        assert_eq!(fewer.replicas, 8);
        assert!((fewer.load_per_replica - 1.25).abs() < 1e-12);
        // A single instance has nothing to drop.
        assert_eq!(one_fewer(1, 8, 10.0, 1.0, MeasuredOn::DenseModels), None);
    }

    #[test]
    fn a_load_past_the_top_of_the_range_is_not_within_it() {
        let at = |load_over_goodput| OneFewer::new(1, 1, 1.0, load_over_goodput, Some([0.8, 1.12]));
        assert_eq!(at(1.1).reading, OneFewerReading::WithinRange);
        assert_eq!(at(1.2).reading, OneFewerReading::BeyondRange);
        assert_eq!(at(1.0).reading, OneFewerReading::HeadroomOnly);
        assert_eq!(
            OneFewer::new(1, 1, 1.0, 1.05, None).reading,
            OneFewerReading::Unmeasured
        );
    }
}
