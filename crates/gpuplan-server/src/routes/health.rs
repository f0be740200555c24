//! Liveness, readiness and metrics for the orchestrator.

use crate::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

/// The process answers.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "alive", body = String, content_type = "text/plain")))]
pub(crate) async fn healthz() -> &'static str {
    "ok\n"
}

/// The catalog is loaded (it is before the listener opens), so the server can answer.
#[utoipa::path(get, path = "/readyz", tag = "operations", responses((status = 200, description = "ready, with the catalog's size", body = String, content_type = "text/plain")))]
pub(crate) async fn readyz(State(state): State<AppState>) -> String {
    format!("ready: {} offerings\n", state.catalog.offerings().len())
}

/// Requests and latencies by route and status, in the Prometheus text format.
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "Prometheus text format 0.0.4", body = String, content_type = "text/plain")))]
pub(crate) async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
