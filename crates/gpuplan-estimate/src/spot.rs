//! Running a job on interruptible (spot) capacity: checkpoints, lost work, restarts.
//!
//! The job needs `W` hours of work. It checkpoints every `τ` hours of work, each checkpoint
//! taking `δ` hours; interruptions arrive as a Poisson process of rate `λ` per hour; after one,
//! the job waits `R` hours (new instance, reload) and redoes the work since its last
//! checkpoint. To first order (Daly 2006, "A higher order estimate of the optimum checkpoint
//! interval for restart dumps", FGCS 22(3)), the expected wall time is
//! `W (1 + δ/τ) (1 + λ (R + (τ + δ)/2))`, and the interval that minimises it is Young's
//! `τ* = √(2 δ / λ)` (Young 1974, "A first order approximation to the optimum checkpoint
//! interval", CACM 17(9)). A Monte Carlo mode simulates the process with a fixed seed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// A job on spot capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpotJob {
    /// Hours of useful work.
    pub work_hours: f64,
    /// Interruptions per hour.
    pub interruption_rate: f64,
    /// Hours of work between checkpoints; `None` for Young's optimum.
    pub checkpoint_interval_hours: Option<f64>,
    pub checkpoint_write_hours: f64,
    pub restart_hours: f64,
    /// Price per hour of the capacity.
    pub spot_usd_per_hour: f64,
    /// On-demand price per hour, for the break-even.
    pub on_demand_usd_per_hour: Option<f64>,
}

/// Expected outcome of a spot job.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SpotEstimate {
    pub checkpoint_interval_hours: f64,
    /// Young's optimum interval for these inputs.
    pub optimal_checkpoint_interval_hours: f64,
    pub expected_wall_hours: f64,
    pub expected_interruptions: f64,
    pub expected_cost_usd: f64,
    /// On-demand cost of the same work without checkpoints or interruptions.
    pub on_demand_cost_usd: Option<f64>,
    /// Interruption rate above which on-demand is cheaper (per hour), when it exists.
    pub break_even_interruption_rate: Option<f64>,
}

/// Percentiles of a Monte Carlo run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SpotSimulation {
    pub runs: u32,
    pub seed: u64,
    pub p50_wall_hours: f64,
    pub p90_wall_hours: f64,
    pub p50_cost_usd: f64,
    pub p90_cost_usd: f64,
}

/// Spot input that cannot be simulated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpotError {
    #[error("{0} must be a non-negative number (work and price positive)")]
    Invalid(&'static str),
    #[error("{0}")]
    TooLarge(&'static str),
}

fn validate(job: &SpotJob) -> Result<(), SpotError> {
    let positive = [("work hours", job.work_hours), ("spot price", job.spot_usd_per_hour)];
    for (what, value) in positive {
        if !(value > 0.0 && value.is_finite()) {
            return Err(SpotError::Invalid(what));
        }
    }
    let non_negative = [
        ("interruption rate", job.interruption_rate),
        ("checkpoint write time", job.checkpoint_write_hours),
        ("restart time", job.restart_hours),
    ];
    for (what, value) in non_negative {
        if !(value >= 0.0 && value.is_finite()) {
            return Err(SpotError::Invalid(what));
        }
    }
    if job
        .checkpoint_interval_hours
        .is_some_and(|t| !(t > 0.0 && t.is_finite()))
    {
        return Err(SpotError::Invalid("checkpoint interval"));
    }
    Ok(())
}

/// Young's optimum checkpoint interval, hours of work; the whole job when nothing interrupts.
pub fn optimal_interval(job: &SpotJob) -> f64 {
    if job.interruption_rate <= 0.0 || job.checkpoint_write_hours <= 0.0 {
        return job.work_hours;
    }
    (2.0 * job.checkpoint_write_hours / job.interruption_rate)
        .sqrt()
        .min(job.work_hours)
}

fn expected_wall(job: &SpotJob, interval: f64, rate: f64) -> f64 {
    let checkpoints = if interval >= job.work_hours {
        0.0
    } else {
        job.checkpoint_write_hours / interval
    };
    job.work_hours
        * (1.0 + checkpoints)
        * (1.0 + rate * (job.restart_hours + (interval + job.checkpoint_write_hours) / 2.0))
}

pub fn expected(job: &SpotJob) -> Result<SpotEstimate, SpotError> {
    validate(job)?;
    let optimal = optimal_interval(job);
    let interval = job.checkpoint_interval_hours.unwrap_or(optimal).min(job.work_hours);
    let wall = expected_wall(job, interval, job.interruption_rate);
    let on_demand = job.on_demand_usd_per_hour.map(|price| price * job.work_hours);
    // Wall time grows linearly in the rate: solve spot × wall(rate) = on-demand cost.
    let break_even = on_demand.and_then(|cost| {
        let base = expected_wall(job, interval, 0.0);
        let slope = expected_wall(job, interval, 1.0) - base;
        let rate = (cost / job.spot_usd_per_hour - base) / slope;
        (slope > 0.0 && rate > 0.0).then_some(rate)
    });
    Ok(SpotEstimate {
        checkpoint_interval_hours: interval,
        optimal_checkpoint_interval_hours: optimal,
        expected_wall_hours: wall,
        expected_interruptions: wall * job.interruption_rate,
        expected_cost_usd: wall * job.spot_usd_per_hour,
        on_demand_cost_usd: on_demand,
        break_even_interruption_rate: break_even,
    })
}

/// Segments and interruptions a simulation may step through in all (about a second).
const MAX_SIMULATED_STEPS: f64 = 5e7;

/// Simulates `runs` executions with interruptions drawn from a seeded generator.
pub fn simulate(job: &SpotJob, runs: u32, seed: u64) -> Result<SpotSimulation, SpotError> {
    validate(job)?;
    if runs == 0 {
        return Err(SpotError::Invalid("number of runs"));
    }
    let interval = job
        .checkpoint_interval_hours
        .unwrap_or_else(|| optimal_interval(job))
        .min(job.work_hours);
    // Bounded up front: each run takes a step per checkpoint segment and per interruption.
    let segments = (job.work_hours / interval.max(f64::MIN_POSITIVE)).ceil();
    let interruptions = job.interruption_rate * job.work_hours * 2.0;
    let steps = f64::from(runs) * (segments + interruptions);
    if steps.is_nan() || steps > MAX_SIMULATED_STEPS {
        return Err(SpotError::TooLarge(
            "runs × (checkpoints + interruptions) over 50 million: fewer runs, or a longer checkpoint interval",
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut walls = Vec::with_capacity(runs as usize);
    for _ in 0..runs {
        let mut done = 0.0;
        let mut wall = 0.0;
        while done < job.work_hours {
            let segment = interval.min(job.work_hours - done);
            let write = if done + segment < job.work_hours {
                job.checkpoint_write_hours
            } else {
                0.0
            };
            let needed = segment + write;
            let until_interruption = if job.interruption_rate > 0.0 {
                let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
                -u.ln() / job.interruption_rate
            } else {
                f64::INFINITY
            };
            if until_interruption >= needed {
                wall += needed;
                done += segment;
            } else {
                wall += until_interruption + job.restart_hours;
            }
        }
        walls.push(wall);
    }
    walls.sort_by(f64::total_cmp);
    let percentile = |p: f64| walls[((p * (walls.len() - 1) as f64).round() as usize).min(walls.len() - 1)];
    Ok(SpotSimulation {
        runs,
        seed,
        p50_wall_hours: percentile(0.5),
        p90_wall_hours: percentile(0.9),
        p50_cost_usd: percentile(0.5) * job.spot_usd_per_hour,
        p90_cost_usd: percentile(0.9) * job.spot_usd_per_hour,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn job(rate: f64) -> SpotJob {
        SpotJob {
            work_hours: 500.0,
            interruption_rate: rate,
            checkpoint_interval_hours: Some(10.0 / 60.0),
            checkpoint_write_hours: 2.0 / 60.0,
            restart_hours: 8.0 / 60.0,
            spot_usd_per_hour: 10.0,
            on_demand_usd_per_hour: Some(32.77),
        }
    }

    #[test]
    fn no_interruptions_cost_only_the_checkpoints() {
        let e = expected(&job(0.0)).unwrap();
        assert!((e.expected_wall_hours - 500.0 * 1.2).abs() < 1e-9);
    }

    #[test]
    fn youngs_interval() {
        let j = SpotJob {
            checkpoint_interval_hours: None,
            ..job(0.1)
        };
        assert!((optimal_interval(&j) - (2.0 * (2.0 / 60.0) / 0.1f64).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn the_simulation_is_reproducible_and_near_the_expectation() {
        let j = job(0.1);
        let a = simulate(&j, 400, 7).unwrap();
        assert_eq!(a, simulate(&j, 400, 7).unwrap());
        let mean = expected(&j).unwrap().expected_wall_hours;
        assert!(
            (a.p50_wall_hours - mean).abs() / mean < 0.05,
            "{} vs {mean}",
            a.p50_wall_hours
        );
        assert!(a.p90_wall_hours >= a.p50_wall_hours);
    }

    proptest! {
        #[test]
        fn spot_never_costs_less_than_its_useful_hours(rate in 0.0f64..2.0, interval in 0.05f64..5.0) {
            let j = SpotJob { checkpoint_interval_hours: Some(interval), ..job(rate) };
            let e = expected(&j).unwrap();
            prop_assert!(e.expected_cost_usd >= j.spot_usd_per_hour * j.work_hours - 1e-9);
        }

        #[test]
        fn more_interruptions_never_make_a_job_cheaper(rate in 0.0f64..2.0, extra in 0.0f64..1.0) {
            let cheaper = expected(&job(rate)).unwrap().expected_cost_usd;
            prop_assert!(expected(&job(rate + extra)).unwrap().expected_cost_usd >= cheaper - 1e-9);
        }
    }
}
