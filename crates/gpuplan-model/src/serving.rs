//! What a serving deployment is asked to meet: latency targets at a percentile, and the shape
//! of the requests (prompt and output lengths, fixed or from a log).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Percentile a bare latency target refers to: p90, the usual production SLO (vLLM's and
/// SGLang's benchmark reports and MLPerf's server scenario state tail percentiles).
pub const DEFAULT_TARGET_PERCENTILE: f64 = 90.0;

/// A latency bound on a percentile of requests: `p90:800ms`. Read from a job file or an API
/// body as the same text the command line takes (`"p90:800ms"`, `"1s"`, a bare number of
/// seconds) or as `{"seconds": 0.8, "percentile": 90}`; checked either way.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyTarget {
    pub seconds: f64,
    /// 0 < percentile < 100.
    pub percentile: f64,
}

impl LatencyTarget {
    pub fn new(seconds: f64, percentile: f64) -> Result<LatencyTarget, String> {
        if !(seconds > 0.0 && seconds.is_finite()) {
            return Err(format!("a latency target must be a positive time, found {seconds} s"));
        }
        if !(percentile > 0.0 && percentile < 100.0) {
            return Err(format!(
                "a percentile lies strictly between 0 and 100, found {percentile}"
            ));
        }
        Ok(LatencyTarget { seconds, percentile })
    }

    /// The target at the default percentile.
    pub fn at_default_percentile(seconds: f64) -> Result<LatencyTarget, String> {
        LatencyTarget::new(seconds, DEFAULT_TARGET_PERCENTILE)
    }

    /// Parses `p90:800ms`, `p99:0.06s` or a bare duration (`800ms`, meaning p90) with
    /// `duration` turning the time part into seconds.
    pub fn parse_with(text: &str, duration: impl Fn(&str) -> Result<f64, String>) -> Result<LatencyTarget, String> {
        let text = text.trim();
        match text.split_once(':') {
            Some((p, time)) => {
                let digits = p
                    .trim()
                    .strip_prefix(['p', 'P'])
                    .ok_or_else(|| format!("`{text}`: write the percentile as p50, p90, p99 … before the colon"))?;
                let percentile: f64 = digits
                    .parse()
                    .map_err(|_| format!("`{p}` is not a percentile (p50, p90, p99 …)"))?;
                LatencyTarget::new(duration(time)?, percentile)
            }
            None => LatencyTarget::at_default_percentile(duration(text)?),
        }
    }
}

/// `800ms`, `0.8s`, `1.5` (seconds), `250us`.
pub fn parse_latency(text: &str) -> Result<f64, String> {
    crate::duration::parse_duration(text, 1.0)
}

impl<'de> Deserialize<'de> for LatencyTarget {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        struct Target;
        impl<'de> Visitor<'de> for Target {
            type Value = LatencyTarget;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a latency target: \"p90:800ms\", \"1s\", or {\"seconds\": 0.8, \"percentile\": 90}")
            }
            fn visit_str<E: Error>(self, text: &str) -> Result<LatencyTarget, E> {
                LatencyTarget::parse_with(text, parse_latency).map_err(E::custom)
            }
            fn visit_f64<E: Error>(self, seconds: f64) -> Result<LatencyTarget, E> {
                LatencyTarget::at_default_percentile(seconds).map_err(E::custom)
            }
            fn visit_u64<E: Error>(self, seconds: u64) -> Result<LatencyTarget, E> {
                self.visit_f64(seconds as f64)
            }
            fn visit_i64<E: Error>(self, seconds: i64) -> Result<LatencyTarget, E> {
                self.visit_f64(seconds as f64)
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<LatencyTarget, M::Error> {
                let (mut seconds, mut percentile) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "seconds" => seconds = Some(map.next_value::<f64>()?),
                        "percentile" => percentile = Some(map.next_value::<f64>()?),
                        other => {
                            return Err(M::Error::unknown_field(other, &["seconds", "percentile"]));
                        }
                    }
                }
                let seconds = seconds.ok_or_else(|| M::Error::missing_field("seconds"))?;
                LatencyTarget::new(seconds, percentile.unwrap_or(DEFAULT_TARGET_PERCENTILE)).map_err(M::Error::custom)
            }
        }
        deserializer.deserialize_any(Target)
    }
}

impl fmt::Display for LatencyTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p{} ≤ {:.0} ms", self.percentile, self.seconds * 1e3)
    }
}

/// One request's token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestShape {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Order statistics a mix keeps of its prompt lengths: enough for every percentile to within
/// 0.025 % of the requests, and small enough to copy into every candidate a plan weighs (a
/// log of millions of requests would otherwise be copied thousands of times).
const KEPT_QUANTILES: usize = 4097;

/// Evenly spaced order statistics of the sorted `values`, at most [`KEPT_QUANTILES`].
fn quantile_sketch(values: Vec<u64>) -> Vec<u64> {
    if values.len() <= KEPT_QUANTILES {
        return values;
    }
    let last = (values.len() - 1) as f64;
    (0..KEPT_QUANTILES)
        .map(|j| values[(j as f64 * last / (KEPT_QUANTILES - 1) as f64).round() as usize])
        .collect()
}

/// The prompt and output lengths of the traffic: one fixed shape, or many from a log. Its
/// statistics are computed once, when it is built: the serving model asks for them at every
/// step of its searches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestMix {
    /// Prompt lengths, sorted (for quantiles): every request's, or evenly spaced order
    /// statistics of a large log's.
    #[serde(skip)]
    inputs: Vec<u64>,
    /// Output lengths, sorted, kept the same way.
    #[serde(skip)]
    outputs: Vec<u64>,
    mean_input: f64,
    mean_output: f64,
    #[serde(skip)]
    mean_input_squared: f64,
    /// Mean of output length squared and of prompt × output length: what the KV cache of the
    /// sequences in flight holds depends on them (a long request stays long in the batch).
    #[serde(skip)]
    mean_output_squared: f64,
    #[serde(skip)]
    mean_input_output: f64,
    max_context: u64,
    /// Requests the mix describes.
    pub requests: usize,
    /// Where the shapes came from, for the assumptions (`fixed`, a file name).
    pub origin: String,
    /// Share of prompt tokens found in the engine's prefix cache (a shared system prompt,
    /// multi-turn history), which are not computed again; 0 without prefix caching.
    pub prefix_cache_hit: f64,
    /// How a log's lengths were scaled to the means given beside it, in words; `None` as read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<String>,
    /// The requests no other one outgrows in both prompt and output: the longest context
    /// after any scaling of the two is one of theirs.
    #[serde(skip)]
    frontier: Vec<(u64, u64)>,
}

/// The requests not outgrown in both prompt and output by another (the Pareto front of the
/// shapes): a positive combination of the two lengths is largest at one of them.
fn longest_frontier(shapes: &[RequestShape]) -> Vec<(u64, u64)> {
    let mut by_prompt: Vec<(u64, u64)> = shapes.iter().map(|s| (s.input_tokens, s.output_tokens)).collect();
    by_prompt.sort_unstable_by(|a, b| b.cmp(a));
    let mut frontier: Vec<(u64, u64)> = Vec::new();
    for shape in by_prompt {
        if frontier.last().is_none_or(|last| shape.1 > last.1) {
            frontier.push(shape);
        }
    }
    frontier
}

impl RequestMix {
    /// Every request alike.
    pub fn fixed(input_tokens: u64, output_tokens: u64) -> RequestMix {
        RequestMix {
            inputs: vec![input_tokens],
            outputs: vec![output_tokens],
            mean_input: input_tokens as f64,
            mean_output: output_tokens as f64,
            mean_input_squared: (input_tokens as f64).powi(2),
            mean_output_squared: (output_tokens as f64).powi(2),
            mean_input_output: input_tokens as f64 * output_tokens as f64,
            max_context: input_tokens + output_tokens,
            requests: 1,
            origin: "fixed".to_string(),
            prefix_cache_hit: 0.0,
            scaling: None,
            frontier: vec![(input_tokens, output_tokens)],
        }
    }

    /// The shapes of a request log; `None` when it holds none.
    pub fn from_shapes(shapes: Vec<RequestShape>, origin: impl Into<String>) -> Option<RequestMix> {
        if shapes.is_empty() {
            return None;
        }
        let n = shapes.len() as f64;
        let mean = |f: fn(&RequestShape) -> f64| shapes.iter().map(f).sum::<f64>() / n;
        let sorted = |f: fn(&RequestShape) -> u64| {
            let mut values: Vec<u64> = shapes.iter().map(f).collect();
            values.sort_unstable();
            quantile_sketch(values)
        };
        Some(RequestMix {
            inputs: sorted(|s| s.input_tokens),
            outputs: sorted(|s| s.output_tokens),
            mean_input: mean(|s| s.input_tokens as f64),
            mean_output: mean(|s| s.output_tokens as f64),
            mean_input_squared: mean(|s| (s.input_tokens as f64).powi(2)),
            mean_output_squared: mean(|s| (s.output_tokens as f64).powi(2)),
            mean_input_output: mean(|s| s.input_tokens as f64 * s.output_tokens as f64),
            max_context: shapes
                .iter()
                .map(|s| s.input_tokens + s.output_tokens)
                .max()
                .unwrap_or(0),
            requests: shapes.len(),
            origin: origin.into(),
            prefix_cache_hit: 0.0,
            scaling: None,
            frontier: longest_frontier(&shapes),
        })
    }

    /// The same requests with their prompts scaled to a mean of `input` tokens and their
    /// outputs to a mean of `output` (each where given): a log's spread of lengths at another
    /// size, as a benchmark that keeps a dataset's prompts but caps or stretches its outputs
    /// runs. Every length is scaled by one factor, rounded, and kept at one token or more.
    /// `scaling` says how.
    pub fn scaled_to(&self, input: Option<u64>, output: Option<u64>) -> RequestMix {
        // A mean given and not already the log's: the tokens it asks for and the factor.
        let factor = |given: Option<u64>, mean: f64| {
            given
                .filter(|&tokens| mean > 0.0 && (tokens as f64 - mean).abs() >= 0.5)
                .map(|tokens| (tokens, tokens as f64 / mean))
        };
        let (prompts, answers) = (factor(input, self.mean_input), factor(output, self.mean_output));
        if prompts.is_none() && answers.is_none() {
            return self.clone();
        }
        let (a, b) = (prompts.map_or(1.0, |p| p.1), answers.map_or(1.0, |o| o.1));
        let length = |tokens: u64, by: f64| ((tokens as f64 * by).round() as u64).max(1);
        let scale = |values: &[u64], by: f64| -> Vec<u64> { values.iter().map(|&v| length(v, by)).collect() };
        let (inputs, outputs) = (scale(&self.inputs, a), scale(&self.outputs, b));
        let frontier: Vec<(u64, u64)> = self
            .frontier
            .iter()
            .map(|&(i, o)| (length(i, a), length(o, b)))
            .collect();
        let mut said = Vec::new();
        if let Some((tokens, by)) = prompts {
            said.push(format!("prompts ×{by:.3} to a mean of {tokens}"));
        }
        if let Some((tokens, by)) = answers {
            said.push(format!("outputs ×{by:.3} to a mean of {tokens}"));
        }
        RequestMix {
            inputs,
            outputs,
            mean_input: self.mean_input * a,
            mean_output: self.mean_output * b,
            mean_input_squared: self.mean_input_squared * a * a,
            mean_output_squared: self.mean_output_squared * b * b,
            mean_input_output: self.mean_input_output * a * b,
            max_context: frontier.iter().map(|(i, o)| i + o).max().unwrap_or(0),
            requests: self.requests,
            origin: self.origin.clone(),
            prefix_cache_hit: self.prefix_cache_hit,
            scaling: Some(said.join(" and ")),
            frontier,
        }
    }

    pub fn len(&self) -> usize {
        self.requests
    }

    pub fn is_empty(&self) -> bool {
        self.requests == 0
    }

    pub fn is_fixed(&self) -> bool {
        self.requests == 1
    }

    pub fn mean_input(&self) -> f64 {
        self.mean_input
    }

    pub fn mean_output(&self) -> f64 {
        self.mean_output
    }

    /// Mean of the squared prompt length (for the variance of prefill work).
    pub fn mean_input_squared(&self) -> f64 {
        self.mean_input_squared
    }

    /// The prompt length of the request an average prompt token belongs to, E[I²]/E[I]: long
    /// prompts hold a larger share of the tokens than of the requests (the size-biased mean;
    /// the mean itself when every prompt is alike). An iteration's prompt tokens attend to half
    /// of it on average, and arrive in units of it.
    pub fn size_biased_input(&self) -> f64 {
        if self.mean_input > 0.0 {
            self.mean_input_squared / self.mean_input
        } else {
            0.0
        }
    }

    /// The same traffic with `hit` of its prompt tokens served from a prefix cache.
    pub fn with_prefix_cache_hit(mut self, hit: f64) -> Result<RequestMix, String> {
        if !(0.0..1.0).contains(&hit) {
            return Err(format!("a prefix-cache hit rate lies in [0, 1), found {hit}"));
        }
        self.prefix_cache_hit = hit;
        Ok(self)
    }

    /// Prompt tokens computed per request on average (those not in the prefix cache).
    pub fn mean_prefill(&self) -> f64 {
        self.mean_input * (1.0 - self.prefix_cache_hit)
    }

    /// Mean of the squared computed prompt length.
    pub fn mean_prefill_squared(&self) -> f64 {
        self.mean_input_squared * (1.0 - self.prefix_cache_hit).powi(2)
    }

    /// Computed prompt tokens at quantile `q` of the requests.
    pub fn prefill_quantile(&self, q: f64) -> f64 {
        self.input_quantile(q) * (1.0 - self.prefix_cache_hit)
    }

    /// The longest context a request reaches.
    pub fn max_context(&self) -> u64 {
        self.max_context
    }

    /// The prompt length at quantile `q` (0–1) of the requests.
    pub fn input_quantile(&self, q: f64) -> f64 {
        sketch_quantile(&self.inputs, q)
    }

    /// The output length at quantile `q` (0–1) of the requests.
    pub fn output_quantile(&self, q: f64) -> f64 {
        sketch_quantile(&self.outputs, q)
    }

    /// Squared coefficient of variation of the output lengths (0 when every request is alike).
    pub fn output_variation(&self) -> f64 {
        let mean = self.mean_output.max(1.0);
        (self.mean_output_squared / (mean * mean) - 1.0).max(0.0)
    }

    /// Whether every request generates the same number of tokens.
    pub fn outputs_alike(&self) -> bool {
        self.outputs.first() == self.outputs.last()
    }

    /// Mean context (prompt and tokens generated so far) of a sequence in flight. Sequences are
    /// in the batch for as many iterations as they generate tokens, so a long request weighs in
    /// proportion to its output: E[I·O]/E[O] + E[O²]/(2·E[O]), which is I + O/2 when every
    /// request is alike and more when outputs vary.
    pub fn mean_context_in_flight(&self) -> f64 {
        let output = self.mean_output.max(1.0);
        (self.mean_input_output + self.mean_output_squared / 2.0) / output
    }

    /// KV-cache tokens a sequence in flight holds on average: its context so far, or, where
    /// the engine reserves each request's whole length when it admits it, prompt and output.
    pub fn kv_tokens_in_flight(&self, reserves_full_context: bool) -> f64 {
        if reserves_full_context {
            (self.mean_input_output + self.mean_output_squared) / self.mean_output.max(1.0)
        } else {
            self.mean_context_in_flight()
        }
    }
}

/// The value at quantile `q` (0–1) of sorted order statistics.
fn sketch_quantile(sorted: &[u64], q: f64) -> f64 {
    let last = sorted.len().saturating_sub(1);
    let index = ((q.clamp(0.0, 1.0) * last as f64).round() as usize).min(last);
    sorted.get(index).copied().unwrap_or(0) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_token_belongs_to_a_longer_prompt_than_the_mean_one() {
        let shape = |input_tokens| RequestShape {
            input_tokens,
            output_tokens: 100,
        };
        // One prompt of 1,000 tokens and one of 3,000: three quarters of the tokens are the
        // long one's, so a token's prompt is 2,500 long on average, not 2,000.
        let log = RequestMix::from_shapes(vec![shape(1_000), shape(3_000)], "two").unwrap();
        assert_eq!(log.mean_input(), 2_000.0);
        assert_eq!(log.size_biased_input(), 2_500.0);
        assert_eq!(RequestMix::fixed(2_000, 100).size_biased_input(), 2_000.0);
    }

    #[test]
    fn a_log_scaled_to_given_means_keeps_its_spread() {
        let shapes = (1..=10)
            .map(|j| RequestShape {
                input_tokens: 100 * j,
                output_tokens: 20 * j,
            })
            .collect();
        let log = RequestMix::from_shapes(shapes, "log.csv").unwrap();
        assert_eq!((log.mean_input(), log.mean_output()), (550.0, 110.0));
        let scaled = log.scaled_to(None, Some(220));
        assert_eq!(scaled.mean_input(), 550.0);
        assert!((scaled.mean_output() - 220.0).abs() < 1e-9);
        assert_eq!(scaled.output_quantile(1.0), 400.0);
        assert_eq!(scaled.output_quantile(0.0), 40.0);
        // The spread relative to the mean is the log's.
        assert!((scaled.output_variation() - log.output_variation()).abs() < 1e-9);
        assert_eq!(scaled.max_context(), 1000 + 400);
        assert_eq!(scaled.scaling.as_deref(), Some("outputs ×2.000 to a mean of 220"));
        // Means already as given: the log itself.
        assert_eq!(log.scaled_to(Some(550), Some(110)), log);
        // Prompts shrunk: every length stays at a token or more.
        let tiny = log.scaled_to(Some(1), None);
        assert_eq!(tiny.input_quantile(0.0), 1.0);
        // The longest prompt and the longest output are different requests': the longest
        // context is still one request's.
        let apart = RequestMix::from_shapes(
            vec![
                RequestShape {
                    input_tokens: 1000,
                    output_tokens: 10,
                },
                RequestShape {
                    input_tokens: 500,
                    output_tokens: 500,
                },
                RequestShape {
                    input_tokens: 10,
                    output_tokens: 990,
                },
            ],
            "apart",
        )
        .unwrap();
        assert_eq!(apart.max_context(), 1010);
        let doubled = apart.scaled_to(None, Some(1000));
        assert_eq!(doubled.max_context(), 10 + 1980);
    }

    #[test]
    fn a_target_reads_as_text_or_fields_and_is_checked() {
        let read = |json: &str| serde_json::from_str::<LatencyTarget>(json);
        assert_eq!(read(r#""p99:60ms""#).unwrap(), LatencyTarget::new(0.06, 99.0).unwrap());
        assert_eq!(read(r#""1s""#).unwrap(), LatencyTarget::new(1.0, 90.0).unwrap());
        assert_eq!(read("0.5").unwrap(), LatencyTarget::new(0.5, 90.0).unwrap());
        assert_eq!(
            read(r#"{"seconds": 2}"#).unwrap(),
            LatencyTarget::new(2.0, 90.0).unwrap()
        );
        for bad in [
            r#"{"seconds": 1, "percentile": 0}"#,
            r#"{"seconds": 1, "percentile": 150}"#,
            r#"{"seconds": 1, "extra": 3}"#,
            r#""p90:-1s""#,
            r#""soon""#,
            "-2",
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }

    fn ms(text: &str) -> Result<f64, String> {
        text.trim_end_matches("ms")
            .parse::<f64>()
            .map(|v| v / 1e3)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn parses_percentiles_and_bare_values() {
        assert_eq!(
            LatencyTarget::parse_with("p99:60ms", ms).unwrap(),
            LatencyTarget {
                seconds: 0.06,
                percentile: 99.0
            }
        );
        assert_eq!(LatencyTarget::parse_with("800ms", ms).unwrap().percentile, 90.0);
        assert!(LatencyTarget::parse_with("q90:1ms", ms).is_err());
        assert!(LatencyTarget::parse_with("p100:1ms", ms).is_err());
        assert!(LatencyTarget::parse_with("p90:-1ms", ms).is_err());
    }

    #[test]
    fn a_log_gives_means_and_quantiles() {
        let shapes = (1..=100)
            .map(|i| RequestShape {
                input_tokens: i * 10,
                output_tokens: 100,
            })
            .collect();
        let mix = RequestMix::from_shapes(shapes, "log").unwrap();
        assert_eq!(mix.mean_input(), 505.0);
        assert_eq!(mix.input_quantile(0.9), 900.0);
        assert_eq!(mix.max_context(), 1100);
        assert!(RequestMix::from_shapes(Vec::new(), "empty").is_none());
    }

    #[test]
    fn long_outputs_weigh_more_in_the_kv_cache_of_the_sequences_in_flight() {
        let fixed = RequestMix::fixed(200, 300);
        assert_eq!(fixed.mean_context_in_flight(), 350.0);
        assert_eq!(fixed.kv_tokens_in_flight(true), 500.0);
        assert!(fixed.outputs_alike());
        // Half the requests generate 100 tokens, half 500: the same mean output (300), but a
        // 500-token request stays five times as long in the batch.
        let shapes = [100, 500]
            .iter()
            .map(|&o| RequestShape {
                input_tokens: 200,
                output_tokens: o,
            })
            .collect();
        let varied = RequestMix::from_shapes(shapes, "log").unwrap();
        assert_eq!(varied.mean_output(), 300.0);
        assert!(!varied.outputs_alike());
        // 200 + E[O²]/(2·E[O]) = 200 + 130,000/600.
        assert!((varied.mean_context_in_flight() - (200.0 + 130_000.0 / 600.0)).abs() < 1e-9);
        assert!(varied.kv_tokens_in_flight(true) > fixed.kv_tokens_in_flight(true));
        assert_eq!(varied.output_quantile(0.0), 100.0);
        assert_eq!(varied.output_quantile(1.0), 500.0);
    }
}
