//! A service so lightly loaded that one replica idles: keep it warm, or let the autoscaler
//! take it to zero after an idle spell and pay a cold start when the next request comes.
//!
//! With Poisson arrivals at `λ` and an idle timeout `τ`, the replica is up whenever a request
//! came within the last `τ` (a share `1 − e^(−λτ)` of the time) and while it boots after a
//! request that found it down (those arrive at `λ·e^(−λτ)` and each waits the cold start `s`,
//! billed). So a month bills `730 h × min(1, 1 − e^(−λτ) + λ·e^(−λτ)·s)` of the instance, and a
//! share `e^(−λτ)` of requests waits a cold start.

use super::*;
use gpuplan_model::LatencyTarget;
use serde::Serialize;

/// Seconds without requests before the replica is taken to zero: KEDA's `cooldownPeriod`
/// default ("The period to wait after the last trigger reported active before scaling the
/// resource back to 0. By default, it's 5 minutes (300 seconds)", KEDA docs, ScaledObject
/// specification), which the exported ScaledObject also uses.
pub const SCALE_TO_ZERO_IDLE_SECONDS: f64 = 300.0;

/// What scaling a one-replica service to zero would do.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScaleToZero {
    pub idle_seconds: f64,
    /// Share of the month the instance is up (billed).
    pub up_share: f64,
    pub usd_per_month: f64,
    pub cold_starts_per_month: f64,
    /// What a request that finds the replica down waits before its first token, seconds.
    pub cold_start_seconds: f64,
    /// Share of requests that wait a cold start.
    pub cold_request_share: f64,
    /// Whether it is cheaper by more than the plan's tolerance and the latency target (at its
    /// percentile) survives the cold starts.
    pub wins: bool,
}

pub(super) fn scale_to_zero(
    rate: f64,
    hourly: f64,
    cold_start_seconds: f64,
    ttft: Option<LatencyTarget>,
    tolerance: f64,
) -> ScaleToZero {
    let idle = SCALE_TO_ZERO_IDLE_SECONDS;
    let cold_share = (-rate * idle).exp();
    let up_share = (1.0 - cold_share + rate * cold_share * cold_start_seconds).min(1.0);
    let usd_per_month = hourly * HOURS_PER_MONTH * up_share;
    let target_holds = ttft.is_none_or(|t| cold_start_seconds <= t.seconds || cold_share <= 1.0 - t.percentile / 100.0);
    ScaleToZero {
        idle_seconds: idle,
        up_share,
        usd_per_month,
        cold_starts_per_month: rate * cold_share * 3600.0 * HOURS_PER_MONTH,
        cold_start_seconds,
        cold_request_share: cold_share,
        wins: target_holds && usd_per_month * (1.0 + tolerance) < hourly * HOURS_PER_MONTH,
    }
}

impl ScaleToZero {
    pub(super) fn explain(&self) -> String {
        let saving = format!(
            "scale to zero after {:.0} min idle: up {:.0} % of the month, ${:.0}/month, {:.0} cold starts a month ({:.0} % of requests) each waiting {:.0} s",
            self.idle_seconds / 60.0,
            self.up_share * 100.0,
            self.usd_per_month,
            self.cold_starts_per_month,
            self.cold_request_share * 100.0,
            self.cold_start_seconds
        );
        if self.wins {
            format!(
                "{saving}: cheaper than keeping it warm (the SkyServe export scales to zero; on Kubernetes a replica at zero exposes no metrics, so waking it needs a request-counting proxy such as the KEDA HTTP add-on)"
            )
        } else if self.up_share > 0.95 {
            format!("{saving}: requests come too often for it to save anything; keep it warm")
        } else {
            format!("{saving}: the cold starts break the latency target or save too little; keep it warm")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_every_twenty_seconds_keeps_the_replica_up() {
        let s = scale_to_zero(0.05, 0.8, 240.0, None, 0.1);
        assert!(s.up_share > 0.999);
        assert!(!s.wins);
    }

    #[test]
    fn a_few_requests_a_day_scale_to_zero() {
        // 24 requests a day: up about 2 h a day (5 min after each, plus its boot).
        let rate = 24.0 / 86_400.0;
        let s = scale_to_zero(rate, 0.8, 240.0, None, 0.1);
        assert!(s.up_share < 0.2, "{}", s.up_share);
        assert!(s.wins);
        // 730 requests a month; the 8 % that follow another within 5 minutes find it up.
        let expected = rate * 3600.0 * HOURS_PER_MONTH * (-rate * 300.0).exp();
        assert!(
            (s.cold_starts_per_month - expected).abs() < 1e-6,
            "{}",
            s.cold_starts_per_month
        );
        assert!((650.0..700.0).contains(&s.cold_starts_per_month));
        // A 2 s p99 time to first token cannot wait a 4-minute boot for most requests.
        let strict = scale_to_zero(rate, 0.8, 240.0, Some(LatencyTarget::new(2.0, 99.0).unwrap()), 0.1);
        assert!(!strict.wins);
    }
}
