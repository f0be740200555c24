//! Requests, errors and latency per route, in the Prometheus text format
//! (<https://prometheus.io/docs/instrumenting/exposition_formats/>).

use crate::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Instant;

/// Upper bounds of the latency histogram's buckets, seconds.
const BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

#[derive(Debug, Default, Clone)]
struct RouteFigures {
    /// Requests by status code.
    by_status: BTreeMap<u16, u64>,
    /// Requests at or under each bucket's bound.
    buckets: [u64; BUCKETS.len()],
    seconds_sum: f64,
    count: u64,
}

/// Counters shared by every request; a fixed set of routes keeps them bounded.
#[derive(Debug, Default)]
pub struct Metrics {
    routes: Mutex<BTreeMap<String, RouteFigures>>,
    /// Computations stopped because nobody waited for them any more.
    cancelled: std::sync::atomic::AtomicU64,
    /// Estimates and plans answered from the recent answers, and computed afresh.
    cache_hits: std::sync::atomic::AtomicU64,
    cache_misses: std::sync::atomic::AtomicU64,
}

impl Metrics {
    /// One more computation stopped for want of a client.
    pub fn cancelled(&self) {
        self.cancelled.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// One estimate or plan answered from the recent answers (`hit`) or computed (`miss`).
    pub fn answer_cache(&self, hit: bool) {
        let counter = if hit { &self.cache_hits } else { &self.cache_misses };
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn observe(&self, route: &str, status: u16, seconds: f64) {
        let Ok(mut routes) = self.routes.lock() else {
            return;
        };
        let figures = routes.entry(route.to_string()).or_default();
        *figures.by_status.entry(status).or_default() += 1;
        for (bucket, bound) in figures.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
        figures.seconds_sum += seconds;
        figures.count += 1;
    }

    /// The figures in the Prometheus text format.
    pub fn render(&self) -> String {
        let routes = self.routes.lock().map(|r| r.clone()).unwrap_or_default();
        let mut text = String::new();
        text.push_str("# HELP gpuplan_cancelled_computations_total Plans stopped because their request was cut off or its client left.\n");
        text.push_str("# TYPE gpuplan_cancelled_computations_total counter\n");
        let _ = writeln!(
            text,
            "gpuplan_cancelled_computations_total {}",
            self.cancelled.load(std::sync::atomic::Ordering::Relaxed)
        );
        text.push_str(
            "# HELP gpuplan_answer_cache_total Estimates and plans answered from the recent answers (hit) or computed (miss).\n",
        );
        text.push_str("# TYPE gpuplan_answer_cache_total counter\n");
        for (result, counter) in [("hit", &self.cache_hits), ("miss", &self.cache_misses)] {
            let _ = writeln!(
                text,
                "gpuplan_answer_cache_total{{result=\"{result}\"}} {}",
                counter.load(std::sync::atomic::Ordering::Relaxed)
            );
        }
        text.push_str("# HELP gpuplan_http_requests_total Requests answered, by route and status.\n");
        text.push_str("# TYPE gpuplan_http_requests_total counter\n");
        for (route, figures) in &routes {
            for (status, count) in &figures.by_status {
                let _ = writeln!(
                    text,
                    "gpuplan_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {count}"
                );
            }
        }
        text.push_str("# HELP gpuplan_http_request_duration_seconds Time to answer, by route.\n");
        text.push_str("# TYPE gpuplan_http_request_duration_seconds histogram\n");
        for (route, figures) in &routes {
            for (count, bound) in figures.buckets.iter().zip(BUCKETS) {
                let _ = writeln!(
                    text,
                    "gpuplan_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                text,
                "gpuplan_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                figures.count
            );
            let _ = writeln!(
                text,
                "gpuplan_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                figures.seconds_sum
            );
            let _ = writeln!(
                text,
                "gpuplan_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                figures.count
            );
        }
        text
    }
}

/// Times each request and counts it under its route's pattern (never the raw path, so a scan
/// of random URLs cannot grow the table).
pub(crate) async fn record(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    state
        .metrics
        .observe(&route, response.status().as_u16(), started.elapsed().as_secs_f64());
    response
}
