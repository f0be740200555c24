//! Liveness, readiness and metrics for the orchestrator.

use crate::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

/// The process answers.
pub(crate) async fn healthz() -> &'static str {
    "ok\n"
}

/// The catalog is loaded (it is before the listener opens), so the server can answer.
pub(crate) async fn readyz(State(state): State<AppState>) -> String {
    format!("ready: {} offerings\n", state.catalog.offerings().len())
}

pub(crate) async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
