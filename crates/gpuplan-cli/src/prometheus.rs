//! A Prometheus server's range queries, for `rightsize --prometheus`: one query per DCGM
//! metric over the window, at a step that keeps every series under the server's point limit.

use gpuplan::Error;
use gpuplan::telemetry::{DCGM_METRICS, Sample, parse_query_ranges};
use std::io::Read as _;
use std::time::Duration;

/// Points Prometheus returns per series at most (its `query.max-samples` aside, a range query
/// is refused above 11,000 points); kept below.
const MAX_POINTS: f64 = 10_000.0;
/// Finest step asked: the DCGM exporter's usual scrape interval is 15–60 s.
const MIN_STEP_SECONDS: f64 = 60.0;
/// Time one query may take, answer included.
const QUERY_TIMEOUT: Duration = Duration::from_secs(60);
/// Time to connect to the server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest answer read.
const MAX_ANSWER_BYTES: u64 = 512 * 1024 * 1024;

/// A request that failed, in words that say which limit ran out, with its causes.
fn failed(url: &str, error: reqwest::Error) -> Error {
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    let what = if error.is_timeout() {
        format!("no answer within {} s (the query timeout)", QUERY_TIMEOUT.as_secs())
    } else if error.is_connect() {
        format!("cannot connect (within {} s)", CONNECT_TIMEOUT.as_secs())
    } else {
        error.without_url().to_string()
    };
    let because = if causes.is_empty() {
        String::new()
    } else {
        format!(": {}", causes.join(": "))
    };
    Error::invalid(
        format!("--prometheus {url}: {what}{because}"),
        Some("check the address (the server's, e.g. http://prometheus:9090) and that it answers".to_string()),
    )
}

/// The DCGM samples matching `selector` from `since_hours` before `until` (seconds) to `until`.
pub fn read(url: &str, selector: &str, since_hours: f64, until: i64) -> Result<Vec<Sample>, Error> {
    let selector = selector.trim();
    let matcher = selector.starts_with('{') && selector.ends_with('}');
    if !(selector.is_empty() || matcher) {
        return Err(Error::invalid(
            format!("--selector `{selector}` is not a label matcher"),
            Some("write it as `{namespace=\"ml\"}`".to_string()),
        ));
    }
    let span = since_hours * 3600.0;
    let start = until as f64 - span;
    let step = (span / MAX_POINTS).max(MIN_STEP_SECONDS).ceil();
    let client = reqwest::blocking::Client::builder()
        .timeout(QUERY_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("gpuplan/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::invalid(format!("cannot start an HTTP client: {e}"), None))?;
    let endpoint = format!("{}/api/v1/query_range", url.trim_end_matches('/'));
    let mut answers = Vec::new();
    for metric in DCGM_METRICS {
        let query = format!("{metric}{selector}");
        let response = client
            .get(&endpoint)
            .query(&[
                ("query", query.as_str()),
                ("start", &format!("{start:.0}")),
                ("end", &until.to_string()),
                ("step", &format!("{step:.0}")),
            ])
            .send()
            .map_err(|e| failed(url, e))?;
        let mut text = String::new();
        response.take(MAX_ANSWER_BYTES).read_to_string(&mut text).map_err(|e| {
            let timeout = e.kind() == std::io::ErrorKind::TimedOut
                || std::error::Error::source(&e).is_some_and(|s| s.to_string().contains("timed out"));
            Error::invalid(
                if timeout {
                    format!(
                        "--prometheus {url}: the answer did not arrive within {} s (the query timeout)",
                        QUERY_TIMEOUT.as_secs()
                    )
                } else {
                    format!("--prometheus {url}: reading the answer: {e}")
                },
                None,
            )
        })?;
        answers.push(text);
    }
    let texts: Vec<&str> = answers.iter().map(String::as_str).collect();
    parse_query_ranges(&texts).map_err(|e| {
        Error::invalid(
            format!("--prometheus {url}: {e}"),
            Some("no DCGM exporter series in the window: check --selector, --since and --until".to_string()),
        )
    })
}
