//! What a decoding request sees of the iterations it rides in: most are decode-only steps, and
//! some are lengthened by a prompt chunk (or preceded by a prefill-only iteration). A request of
//! `o` output tokens meets a Poisson number of them during its life, which spreads its time per
//! output token (TPOT) over requests; the inter-token latency (ITL) spreads over iterations.
//! The same picture holds for an open loop at a Poisson rate and for a closed loop of `N`
//! sequences, whose finished sequences are replaced by prompts at `N / O` per iteration.
//!
//! References: Agrawal et al. 2024 (Sarathi-Serve, generation stalls from prefills); vLLM's
//! `benchmark_serving` definitions of TPOT (per request, excluding the first token) and ITL
//! (per token gap).

use crate::serving::Percentiles;
use gpuplan_model::RequestMix;

/// Output lengths kept to mix the TPOT of requests of varied lengths.
const OUTPUT_POINTS: usize = 32;

/// The iterations of a replica in steady state, as its decoding requests see them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecodeIterations {
    /// The mean iteration, prompt work included.
    pub step_seconds: f64,
    /// An iteration that only decodes.
    pub decode_step_seconds: f64,
    mean_output: f64,
    /// Share of decode iterations that carry (or wait for) a prefill.
    prefill_share: f64,
    /// Prompts joining an iteration, on average, where each fits in one iteration: the count
    /// an iteration carries is then Poisson (requests end and arrive independently), and the
    /// iterations with two or more are the long ones. `None` when a prompt spans several.
    arrivals: Option<f64>,
    /// Prefills that stall a request during its generation, on average (Poisson), and the
    /// time each adds.
    stalls_per_request: f64,
    stall_seconds: f64,
    /// Output lengths at evenly spaced quantiles of the requests, where they vary: a short
    /// request spreads the prefills that stall it over few tokens.
    outputs: Option<[f64; OUTPUT_POINTS]>,
}

impl DecodeIterations {
    /// Prompt chunks ride inside the decode iterations: `prefill_share` of them carry one, and
    /// each of the `sequences` prompts that replace a request's companions during its life
    /// lengthens its steps. A prompt longer than the iteration's token budget is prefilled in
    /// consecutive iterations (the scheduler gives the prompt in progress the budget the decodes
    /// leave until it is done), so its chunks stall a request together: the stalls come in
    /// bursts of one prompt each, not one chunk at a time. `arrivals` is the mean count of
    /// prompts an iteration carries where each fits in one.
    pub(crate) fn mixed(
        step: f64,
        decode_step: f64,
        prefill_share: f64,
        arrivals: Option<f64>,
        sequences: f64,
        mix: &RequestMix,
    ) -> DecodeIterations {
        let output = mix.mean_output().max(1.0);
        let stall = if sequences > 0.0 {
            (step - decode_step).max(0.0) * output / sequences
        } else {
            0.0
        };
        DecodeIterations {
            arrivals: arrivals.filter(|&a| a > 0.0),
            ..DecodeIterations::new(step, decode_step, prefill_share, sequences, stall, mix)
        }
    }

    /// Prompts run in prefill-only iterations, which precede `prefill_share` of the decode
    /// iterations and last `prefill_step` each.
    pub(crate) fn separate(
        step: f64,
        decode_step: f64,
        prefill_share: f64,
        prefill_step: f64,
        mix: &RequestMix,
    ) -> DecodeIterations {
        let output = mix.mean_output().max(1.0);
        DecodeIterations::new(
            step,
            decode_step,
            prefill_share,
            output * prefill_share,
            prefill_step,
            mix,
        )
    }

    fn new(
        step: f64,
        decode_step: f64,
        prefill_share: f64,
        stalls: f64,
        stall: f64,
        mix: &RequestMix,
    ) -> DecodeIterations {
        DecodeIterations {
            step_seconds: step,
            decode_step_seconds: decode_step.min(step),
            mean_output: mix.mean_output().max(1.0),
            prefill_share,
            arrivals: None,
            stalls_per_request: stalls,
            stall_seconds: stall,
            outputs: (!mix.outputs_alike()).then(|| {
                std::array::from_fn(|j| mix.output_quantile((j as f64 + 0.5) / OUTPUT_POINTS as f64).max(1.0))
            }),
        }
    }

    /// Time per output token at quantile `q` over requests: the decode-only step plus the
    /// prefills that stall it during its life (a Poisson count).
    pub fn tpot_at(&self, q: f64) -> f64 {
        self.tpot_at_with(q, &mut Vec::new())
    }

    /// [`Self::tpot_at`], with the shares of slower requests already worked out at the times
    /// in `seen`, and those it works out added: the searches for several quantiles start from
    /// the same bracket and share their first steps.
    fn tpot_at_with(&self, q: f64, seen: &mut Vec<(f64, f64)>) -> f64 {
        if self.stalls_per_request <= 0.0 {
            return self.step_seconds;
        }
        match &self.outputs {
            None => {
                self.decode_step_seconds
                    + self.stall_seconds * poisson_quantile(self.stalls_per_request, q) / self.mean_output
            }
            Some(outputs) => self.mixed_tpot_at(outputs, q, seen),
        }
    }

    /// TPOT at quantile `q` over requests of varied output lengths: a request of `o` tokens
    /// meets a Poisson count of stalls of mean `stalls · o / mean output` and spreads them over
    /// its `o` tokens; the quantile of the mixture over the kept output lengths.
    fn mixed_tpot_at(&self, outputs: &[f64; OUTPUT_POINTS], q: f64, seen: &mut Vec<(f64, f64)>) -> f64 {
        let decode = self.decode_step_seconds;
        let high = outputs
            .iter()
            .map(|&o| {
                let m = self.stalls_per_request * o / self.mean_output;
                decode + self.stall_seconds.max(1e-12) * (m + 12.0 * m.sqrt() + 12.0) / o
            })
            .fold(decode, f64::max);
        crate::serving::bisect(decode, high, crate::serving::STEP_TOLERANCE, |t| {
            let share = match seen.iter().find(|(at, _)| *at == t) {
                Some(&(_, share)) => share,
                None => {
                    let share = self.share_above(outputs, t);
                    seen.push((t, share));
                    share
                }
            };
            share > 1.0 - q
        })
        .1
    }

    /// Share of requests of the kept output lengths whose time per output token exceeds `t`.
    fn share_above(&self, outputs: &[f64; OUTPUT_POINTS], t: f64) -> f64 {
        let (decode, stall) = (self.decode_step_seconds, self.stall_seconds.max(1e-12));
        let share: f64 = outputs
            .iter()
            .map(|&o| poisson_above(self.stalls_per_request * o / self.mean_output, (t - decode) * o / stall))
            .sum();
        share / OUTPUT_POINTS as f64
    }

    /// Whether the time per output token at quantile `q` is at most `seconds`: what
    /// `tpot_at(q) <= seconds` answers, without searching for the quantile where the output
    /// lengths vary (a goodput search asks this at every load it tries).
    pub fn tpot_within(&self, q: f64, seconds: f64) -> bool {
        match &self.outputs {
            Some(outputs) if self.stalls_per_request > 0.0 => {
                seconds >= self.decode_step_seconds && self.share_above(outputs, seconds) <= 1.0 - q
            }
            _ => self.tpot_at(q) <= seconds,
        }
    }

    /// Mean time per output token: the mean iteration.
    pub fn tpot_mean(&self) -> f64 {
        self.step_seconds
    }

    /// Inter-token latency at quantile `q` over iterations: a decode-only step, or one that
    /// carries a prompt chunk; where prompts fit in one iteration, one that carries the
    /// Poisson count of them at that quantile.
    pub fn itl_at(&self, q: f64) -> f64 {
        if let Some(arrivals) = self.arrivals {
            let per_prompt = (self.step_seconds - self.decode_step_seconds) / arrivals;
            return self.decode_step_seconds + poisson_quantile(arrivals, q) * per_prompt;
        }
        if self.prefill_share <= 0.0 || q <= 1.0 - self.prefill_share {
            self.decode_step_seconds
        } else {
            self.decode_step_seconds + (self.step_seconds - self.decode_step_seconds) / self.prefill_share
        }
    }

    pub fn tpot(&self) -> Percentiles {
        let mut seen = Vec::new();
        Percentiles {
            mean: self.tpot_mean(),
            p50: self.tpot_at_with(0.5, &mut seen),
            p90: self.tpot_at_with(0.9, &mut seen),
            p99: self.tpot_at_with(0.99, &mut seen),
        }
    }
}

/// The `q` quantile of a Poisson count of mean `mean` (exact sum below 500, normal above).
fn poisson_quantile(mean: f64, q: f64) -> f64 {
    if mean > 500.0 {
        return (mean + normal_quantile(q) * mean.sqrt()).max(0.0);
    }
    let mut probability = (-mean).exp();
    let mut cumulative = probability;
    let mut k = 0.0;
    while cumulative < q && k < 10_000.0 {
        k += 1.0;
        probability *= mean / k;
        cumulative += probability;
    }
    k
}

/// P(K > k) for K Poisson of mean `mean` (exact below a mean of 50, normal with a continuity
/// correction above).
fn poisson_above(mean: f64, k: f64) -> f64 {
    if k < 0.0 {
        return 1.0;
    }
    if mean > 50.0 {
        return 0.5 * libm::erfc((k.floor() + 0.5 - mean) / (2.0 * mean).sqrt());
    }
    let mut probability = (-mean).exp();
    let mut cumulative = probability;
    let mut j = 0.0;
    while j < k.floor() {
        j += 1.0;
        probability *= mean / j;
        cumulative += probability;
        if probability < 1e-15 && j > mean {
            break;
        }
    }
    (1.0 - cumulative).max(0.0)
}

/// Standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9).
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_and_poisson_quantiles_are_right() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.5)).abs() < 1e-9);
        // Poisson(3): P(X ≤ 2) = 0.4232, P(X ≤ 3) = 0.6472.
        assert_eq!(poisson_quantile(3.0, 0.5), 3.0);
        assert_eq!(poisson_quantile(3.0, 0.4), 2.0);
    }

    #[test]
    fn a_prompts_chunks_stall_a_request_together_and_widen_its_tail() {
        // Llama-3.1-405B-like traffic: 9,400-token prompts prefilled in six chunks, so the 20
        // prompts that join during a request's life stall it in 20 bursts, not 120 single
        // chunks. The mean is the mean iteration either way; the bursts spread the requests.
        let mix = RequestMix::fixed(9_400, 650);
        let bursts = DecodeIterations::mixed(0.05, 0.03, 0.5, None, 20.0, &mix);
        let singles = DecodeIterations::mixed(0.05, 0.03, 0.5, None, 120.0, &mix);
        assert_eq!(bursts.tpot_mean(), singles.tpot_mean());
        assert!((bursts.tpot_at(0.5) - 0.05).abs() < 0.005, "{}", bursts.tpot_at(0.5));
        assert!(bursts.tpot_at(0.99) > singles.tpot_at(0.99) + 0.004);
        assert!(bursts.tpot_at(0.99) > 0.06, "{}", bursts.tpot_at(0.99));
    }

    #[test]
    fn prompts_that_fit_one_iteration_arrive_as_a_poisson_count() {
        // 0.62 prompts an iteration (256 sequences of ~410-token answers): e^-0.62 = 54 % of
        // the iterations carry none, so the median gap between tokens is a decode-only step;
        // the mean and the tail still pay for every prompt.
        let mix = RequestMix::fixed(250, 410);
        let poisson = DecodeIterations::mixed(0.05, 0.035, 0.62, Some(0.62), 256.0, &mix);
        let one_each = DecodeIterations::mixed(0.05, 0.035, 0.62, None, 256.0, &mix);
        assert_eq!(poisson.itl_at(0.5), 0.035);
        assert!(one_each.itl_at(0.5) > 0.055, "{}", one_each.itl_at(0.5));
        // Two prompts in one iteration at the 90th percentile (P(K ≤ 1) = 0.87).
        let per_prompt = 0.015 / 0.62;
        assert!((poisson.itl_at(0.9) - (0.035 + 2.0 * per_prompt)).abs() < 1e-12);
        assert_eq!(poisson.tpot_mean(), one_each.tpot_mean());
    }

    proptest::proptest! {
        /// The goodput search's direct check answers as the quantile does, a little above it
        /// and a little below (beyond the bisection's relative 1e-5), for fixed outputs and a
        /// log's varied ones.
        #[test]
        fn the_direct_check_agrees_with_the_quantile(
            stalls in 0.1f64..200.0,
            share in 0.05f64..0.95,
            q in 0.5f64..0.995,
            varied in proptest::bool::ANY,
        ) {
            let mix = if varied {
                let shapes = (1..=400u64)
                    .map(|i| gpuplan_model::RequestShape { input_tokens: 300, output_tokens: 1 + (i * i) % 900 })
                    .collect();
                RequestMix::from_shapes(shapes, "test").unwrap()
            } else {
                RequestMix::fixed(300, 400)
            };
            let iterations = DecodeIterations::mixed(0.05, 0.03, share, None, stalls, &mix);
            let tpot = iterations.tpot_at(q);
            proptest::prop_assert!(iterations.tpot_within(q, tpot * (1.0 + 1e-4)));
            proptest::prop_assert!(!iterations.tpot_within(q, tpot * (1.0 - 1e-4)));
        }
    }

    #[test]
    fn the_poisson_tail_matches_its_quantile() {
        // Poisson(3): P(X > 2) = 0.5768, P(X > 3) = 0.3528.
        assert!((poisson_above(3.0, 2.0) - 0.5768).abs() < 1e-4);
        assert!((poisson_above(3.0, 3.0) - 0.3528).abs() < 1e-4);
        assert_eq!(poisson_above(3.0, -1.0), 1.0);
        // Normal approximation above a mean of 50: P(X > mean) is about a half.
        assert!((poisson_above(400.0, 400.0) - 0.5).abs() < 0.02);
    }
}
