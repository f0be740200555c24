//! The queue prompts form before their prefill: M/G/1, first come first served, over prompts,
//! each served in its share of the iterations' prompt-token budget. The mean wait is
//! Pollaczek–Khinchine's. Its tail is the
//! Cramér–Lundberg approximation `P(W > t) ≈ C·e^(−θt)`, with `θ` the positive root of
//! `λ(E[e^(θS)] − 1) = θ` and `C = (1 − ρ)/(λ·E[S·e^(θS)] − 1)` (Asmussen, *Applied Probability
//! and Queues*, 2nd ed. 2003, XIII.5): for prompts of similar lengths it falls off faster than
//! the exponential tail of an M/M/1 with the same mean.

use gpuplan_model::RequestMix;

/// Prompt lengths kept to evaluate the service time's moment generating function.
const SERVICE_POINTS: usize = 16;

/// The prompt queue of one replica at one load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PromptQueue {
    /// The queue's utilisation ρ: the rate times the mean service.
    pub utilisation: f64,
    /// Mean wait before a prompt's prefill starts, seconds.
    pub mean_wait: f64,
    /// `C` and `1/θ` of the wait's tail, `P(W > t) ≈ C·e^(−t/tail_mean)`.
    tail_probability: f64,
    tail_mean: f64,
}

impl PromptQueue {
    /// Prompts of `mix` arriving at `rate` per second, each token served in
    /// `seconds_per_token`; `None` when they arrive faster than they are served.
    pub(crate) fn new(rate: f64, seconds_per_token: f64, mix: &RequestMix) -> Option<PromptQueue> {
        let service = mix.mean_prefill() * seconds_per_token;
        let utilisation = rate * service;
        if utilisation >= 1.0 {
            return None;
        }
        if utilisation <= 0.0 {
            return Some(PromptQueue::idle());
        }
        let second_moment = mix.mean_prefill_squared() * seconds_per_token.powi(2);
        let mean_wait = rate * second_moment / (2.0 * (1.0 - utilisation));
        let services: [f64; SERVICE_POINTS] =
            std::array::from_fn(|j| mix.prefill_quantile((j as f64 + 0.5) / SERVICE_POINTS as f64) * seconds_per_token);
        // Prompts all of one length (a fixed request): one point says it all.
        let services = if services.iter().all(|&s| s == services[0]) {
            &services[..1]
        } else {
            &services[..]
        };
        let exponential_mean = mean_wait / utilisation;
        let (tail_probability, tail_mean) = match lundberg_decay(rate, services, 1.0 / exponential_mean) {
            Some(decay) => {
                let slope = rate * mean_of(services, |s| s * (decay * s).exp()) - 1.0;
                (((1.0 - utilisation) / slope).clamp(0.0, utilisation), 1.0 / decay)
            }
            // Service times too alike to resolve a root: the exponential tail of the same mean.
            None => (utilisation, exponential_mean),
        };
        Some(PromptQueue {
            utilisation,
            mean_wait,
            tail_probability,
            tail_mean,
        })
    }

    /// No prompts waiting.
    pub(crate) fn idle() -> PromptQueue {
        PromptQueue {
            utilisation: 0.0,
            mean_wait: 0.0,
            tail_probability: 0.0,
            tail_mean: 0.0,
        }
    }

    /// The probability that a prompt waits at most `t` seconds, the running iteration (of
    /// `step` seconds) included: that residual is uniform over the step, the queue's wait as
    /// above.
    fn wait_cdf(&self, step: f64, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        let (c, m) = (self.tail_probability, self.tail_mean);
        let u = t.min(step);
        let waited = if m > 0.0 {
            c * m * ((-(t - u) / m).exp() - (-t / m).exp())
        } else {
            0.0
        };
        (u - waited) / step
    }

    /// The wait at quantile `q` of a prompt that also waits for the running iteration (of
    /// `step` seconds) to end.
    pub(crate) fn wait_quantile(&self, step: f64, q: f64) -> f64 {
        crate::serving::bisect(0.0, self.wait_above(step, q), crate::serving::STEP_TOLERANCE, |t| {
            self.wait_cdf(step, t) < q
        })
        .1
    }

    /// A wait no shorter than the one at quantile `q`: the exponential tail's estimate, doubled
    /// until it is.
    fn wait_above(&self, step: f64, q: f64) -> f64 {
        let (c, m) = (self.tail_probability, self.tail_mean);
        let mut high = step + m * (c / (1.0 - q).max(1e-9)).max(1.0).ln() + step;
        while self.wait_cdf(step, high) < q && high < 1e6 {
            high *= 2.0;
        }
        high
    }

    /// The time from arrival to the end of its prefill at quantile `q`: the wait above plus
    /// the prompt's own prefill, `own` at the [`OWN_SHARES`] of prompt lengths. Prompts are
    /// served first come, first served, so a prompt's wait does not depend on its own length
    /// and the two are summed as independent variables (the quantile of the sum, not the sum
    /// of the quantiles, which errs long where both spread).
    pub(crate) fn sojourn_quantile(&self, step: f64, own: &[f64; OWN_POINTS], q: f64) -> f64 {
        // Prompts all of one length (a fixed request): the wait shifted by their prefill.
        if own.iter().all(|&s| s == own[0]) {
            return self.wait_quantile(step, q) + own[0];
        }
        // Every prompt has waited its `q` quantile by then and finished its own prefill too, so
        // the sum's quantile lies below.
        let longest = own.iter().copied().fold(0.0, f64::max);
        let high = self.wait_above(step, q) + longest;
        crate::serving::bisect(0.0, high, crate::serving::STEP_TOLERANCE, |t| {
            self.sojourn_cdf(step, own, t) < q
        })
        .1
    }

    /// Whether the time from arrival to the end of its prefill at quantile `q` is at most
    /// `seconds`: what `sojourn_quantile(step, own, q) <= seconds` answers, without searching
    /// for the quantile (a goodput search asks this at every load it tries).
    pub(crate) fn sojourn_within(&self, step: f64, own: &[f64; OWN_POINTS], q: f64, seconds: f64) -> bool {
        seconds >= 0.0 && self.sojourn_cdf(step, own, seconds) >= q
    }

    /// Share of prompts done with their prefill `t` seconds after arriving.
    fn sojourn_cdf(&self, step: f64, own: &[f64; OWN_POINTS], t: f64) -> f64 {
        if own.iter().all(|&s| s == own[0]) {
            return self.wait_cdf(step, t - own[0]);
        }
        OWN_SHARES
            .iter()
            .zip(own)
            .map(|(&(_, weight), &s)| weight * self.wait_cdf(step, t - s))
            .sum::<f64>()
    }
}

/// Points of the prompt-length distribution a prompt's own prefill is known at: each a
/// quantile (the middle of its band of requests) and the band's share of the requests, finer
/// towards the tail that the 90th and 99th percentiles read.
pub(crate) const OWN_POINTS: usize = 17;
pub(crate) const OWN_SHARES: [(f64, f64); OWN_POINTS] = {
    const EDGES: [f64; OWN_POINTS + 1] = [
        0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.925, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999, 1.0,
    ];
    let mut shares = [(0.0, 0.0); OWN_POINTS];
    let mut j = 0;
    while j < OWN_POINTS {
        shares[j] = ((EDGES[j] + EDGES[j + 1]) / 2.0, EDGES[j + 1] - EDGES[j]);
        j += 1;
    }
    shares
};

fn mean_of(points: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    points.iter().map(|&s| f(s)).sum::<f64>() / points.len() as f64
}

/// The positive root `θ` of `λ(E[e^(θS)] − 1) = θ` over the service times `services`, by
/// Newton's method from above (the left side less `θ` is convex, zero at 0 and falling there
/// while ρ < 1, so iterates from a point where it is positive fall monotonically to the root).
/// `guess` is a decay near the root (an exponential tail's). `None` where the points load the
/// queue fully (λ·E[S] ≥ 1 over them, which a few quantile points of a mix just under full
/// load can): the excess then rises from 0 and has no positive root, only the trivial one.
fn lundberg_decay(rate: f64, services: &[f64], guess: f64) -> Option<f64> {
    let longest = services.iter().copied().fold(0.0, f64::max);
    if longest <= 0.0 || guess.is_nan() || guess <= 0.0 || rate * mean_of(services, |s| s) >= 1.0 {
        return None;
    }
    // The excess λ(E[e^(θS)] − 1) − θ and its slope λE[S·e^(θS)] − 1, in one pass.
    let excess_and_slope = |theta: f64| {
        let (mut moment, mut weighted) = (0.0, 0.0);
        for &s in services {
            let e = (theta * s).exp();
            moment += e;
            weighted += s * e;
        }
        let n = services.len() as f64;
        (rate * (moment / n - 1.0) - theta, rate * weighted / n - 1.0)
    };
    let mut theta = 2.0 * guess;
    let (mut excess, mut slope) = excess_and_slope(theta);
    while excess <= 0.0 {
        theta *= 2.0;
        if theta * longest > 700.0 {
            return None;
        }
        (excess, slope) = excess_and_slope(theta);
    }
    for _ in 0..50 {
        let step = excess / slope;
        theta -= step;
        if step.abs() <= 1e-4 * theta {
            break;
        }
        (excess, slope) = excess_and_slope(theta);
    }
    (theta > 0.0 && theta.is_finite()).then_some(theta)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` requests whose prompts are `step`, 2·`step`, … tokens long.
    fn prompts(step: u64, count: u64) -> RequestMix {
        let shapes = (1..=count)
            .map(|j| gpuplan_model::RequestShape {
                input_tokens: step * j,
                output_tokens: 100,
            })
            .collect();
        RequestMix::from_shapes(shapes, "test").unwrap()
    }

    #[test]
    fn exponential_services_give_the_m_m_1_tail() {
        // Many points of an exponential service (mean 1 s) at ρ = 0.5: θ = μ − λ = 0.5 and
        // C = ρ, the M/M/1's P(W > t) = ρ·e^(−(μ−λ)t).
        let services: Vec<f64> = (0..20_000).map(|j| -(1.0 - (j as f64 + 0.5) / 20_000.0).ln()).collect();
        let decay = lundberg_decay(0.5, &services, 0.3).unwrap();
        assert!((decay - 0.5).abs() < 0.02, "{decay}");
    }

    #[test]
    fn points_that_load_the_queue_fully_have_no_decay() {
        // Two service points of 1 s and 3 s at λ = 0.5: λ·E[S] = 1, no positive root. A load
        // a little lighter has one.
        assert_eq!(lundberg_decay(0.5, &[1.0, 3.0], 0.1), None);
        assert!(lundberg_decay(0.45, &[1.0, 3.0], 0.1).is_some_and(|decay| decay > 0.01));
    }

    #[test]
    fn alike_prompts_wait_less_at_the_tail_than_an_exponential_guess() {
        // Prompts of one length at ρ = 0.7: the M/D/1 tail decays faster than the exponential
        // of the same mean wait, so its 99th percentile is shorter.
        let mix = RequestMix::fixed(9_400, 650);
        let queue = PromptQueue::new(0.7 / 0.94, 1e-4, &mix).unwrap();
        assert!((queue.utilisation - 0.7).abs() < 1e-9);
        let exponential = queue.mean_wait / queue.utilisation;
        assert!(
            queue.tail_mean < 0.95 * exponential,
            "{} against {exponential}",
            queue.tail_mean
        );
        assert!(queue.tail_probability <= queue.utilisation);
        let p99 = queue.wait_quantile(0.05, 0.99);
        let guess = exponential * (queue.utilisation / 0.01).ln();
        assert!(p99 < guess, "{p99} against {guess}");
        assert!(p99 > queue.mean_wait);
    }

    #[test]
    fn waiting_grows_with_utilisation() {
        let mix = prompts(20, 100);
        let light = PromptQueue::new(0.3 / 1.01, 1e-3, &mix).unwrap();
        let heavy = PromptQueue::new(0.9 / 1.01, 1e-3, &mix).unwrap();
        let (light, heavy) = (light.wait_quantile(0.02, 0.99), heavy.wait_quantile(0.02, 0.99));
        assert!(heavy > light * 5.0, "{light} {heavy}");
    }

    #[test]
    fn the_sojourn_is_the_quantile_of_the_sum_not_the_sum_of_the_quantiles() {
        let mix = prompts(200, 100);
        let seconds_per_token = 1e-4;
        let queue = PromptQueue::new(0.6 / (mix.mean_prefill() * seconds_per_token), seconds_per_token, &mix).unwrap();
        let own = OWN_SHARES.map(|(q, _)| mix.prefill_quantile(q) * seconds_per_token);
        let step = 0.05;
        let sojourn = queue.sojourn_quantile(step, &own, 0.99);
        let own_p99 = own[OWN_SHARES.iter().position(|&(q, _)| q > 0.99).unwrap()];
        let added = queue.wait_quantile(step, 0.99) + own_p99;
        // Longer than either part alone, shorter than both parts' 99th percentiles added.
        assert!(
            sojourn > queue.wait_quantile(step, 0.99) && sojourn > own_p99,
            "{sojourn}"
        );
        assert!(sojourn < 0.95 * added, "{sojourn} against {added}");
        // Prompts of (nearly) one length: the sum is the wait shifted by it, as the shortcut
        // for a single length takes it.
        let mut alike = [1.0; OWN_POINTS];
        alike[0] = 1.0 - 1e-9;
        let shifted = queue.sojourn_quantile(step, &alike, 0.9);
        assert!(
            (shifted - 1.0 - queue.wait_quantile(step, 0.9)).abs() < 1e-3,
            "{shifted}"
        );
    }

    proptest::proptest! {
        /// Whatever the load and the spread of prompt lengths, the sum's quantile lies between
        /// the wait's quantile plus the shortest prefill and the wait's plus the longest, and
        /// never falls as the quantile rises.
        #[test]
        fn the_sojourn_lies_between_its_parts_and_rises_with_the_quantile(
            utilisation in 0.05f64..0.95,
            longest in 1u64..40,
            q in 0.5f64..0.995,
        ) {
            let mix = prompts(250, longest);
            let seconds_per_token = 2e-4;
            let rate = utilisation / (mix.mean_prefill() * seconds_per_token);
            let queue = PromptQueue::new(rate, seconds_per_token, &mix).unwrap();
            let own = OWN_SHARES.map(|(p, _)| mix.prefill_quantile(p) * seconds_per_token);
            let (shortest, longest) = (own[0], own[OWN_POINTS - 1]);
            let step = 0.03;
            let wait = queue.wait_quantile(step, q);
            let sojourn = queue.sojourn_quantile(step, &own, q);
            // Both quantiles are found by bisection to a relative 1e-5.
            let slack = 1e-4 * (1.0 + sojourn);
            proptest::prop_assert!(sojourn >= wait + shortest - slack, "{sojourn} {wait} {shortest}");
            proptest::prop_assert!(sojourn <= wait + longest + slack, "{sojourn} {wait} {longest}");
            let higher = queue.sojourn_quantile(step, &own, (q + 0.004).min(0.999));
            proptest::prop_assert!(higher >= sojourn - slack, "{higher} {sojourn}");
        }

        /// The goodput search's direct check answers as the quantile does, a little above it
        /// and a little below (beyond the bisection's relative 1e-5).
        #[test]
        fn the_direct_check_agrees_with_the_quantile(
            utilisation in 0.05f64..0.95,
            longest in 1u64..40,
            q in 0.5f64..0.995,
            alike in proptest::bool::ANY,
        ) {
            let mix = prompts(250, longest);
            let seconds_per_token = 2e-4;
            let rate = utilisation / (mix.mean_prefill() * seconds_per_token);
            let queue = PromptQueue::new(rate, seconds_per_token, &mix).unwrap();
            let own = if alike {
                [0.02; OWN_POINTS]
            } else {
                OWN_SHARES.map(|(p, _)| mix.prefill_quantile(p) * seconds_per_token)
            };
            let step = 0.03;
            let sojourn = queue.sojourn_quantile(step, &own, q);
            proptest::prop_assert!(queue.sojourn_within(step, &own, q, sojourn * (1.0 + 1e-4)));
            proptest::prop_assert!(!queue.sojourn_within(step, &own, q, sojourn * (1.0 - 1e-4)));
        }
    }

    #[test]
    fn the_own_prefill_points_cover_every_request_once() {
        let total: f64 = OWN_SHARES.iter().map(|&(_, w)| w).sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert!(OWN_SHARES.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn a_saturated_queue_is_refused_and_an_empty_one_waits_for_the_step_only() {
        let mix = RequestMix::fixed(1_000, 100);
        assert!(PromptQueue::new(2.0, 1e-3, &mix).is_none());
        let idle = PromptQueue::new(0.0, 1e-3, &mix).unwrap();
        assert!((idle.wait_quantile(0.02, 0.5) - 0.01).abs() < 1e-6);
    }
}
