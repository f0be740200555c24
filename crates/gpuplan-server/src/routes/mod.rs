//! One file per resource; each answers with the JSON its CLI command prints.

pub(crate) mod catalog;
pub(crate) mod cost;
pub(crate) mod estimate;
pub(crate) mod export;
pub(crate) mod forecast;
pub(crate) mod gpus;
pub(crate) mod health;
pub(crate) mod instances;
pub(crate) mod model;
pub(crate) mod plan;

use crate::AppState;
use crate::error::ApiError;
use axum::Router;
use axum::response::Response;
use axum::routing::{get, post};
use serde::Serialize;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(page))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics))
        .route("/api/v1/gpus", get(gpus::list))
        .route("/api/v1/gpus/{name}", get(gpus::one))
        .route("/api/v1/models", get(catalog::models))
        .route("/api/v1/model", post(model::read))
        .route("/api/v1/instances", get(instances::list))
        .route("/api/v1/catalog", get(catalog::summary))
        .route("/api/v1/estimate", post(estimate::estimate))
        .route("/api/v1/plan", post(plan::plan))
        .route("/api/v1/export", post(export::export))
        .route("/api/v1/cost", post(cost::cost))
        .route("/api/v1/energy", post(cost::energy))
        .route("/api/v1/forecast", post(forecast::forecast))
        .route("/openapi.json", get(crate::openapi::openapi_json))
        .route("/docs", get(crate::openapi::reference_page))
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
}

/// The page: forms for a plan, its ranked table and charts, all drawn from the API's answers.
/// Embedded; it loads nothing from elsewhere.
async fn page() -> impl axum::response::IntoResponse {
    static PAGE: &str = include_str!("../../assets/index.html");
    static POLICY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| crate::security::page_policy(PAGE));
    (
        [(axum::http::header::CONTENT_SECURITY_POLICY, POLICY.as_str())],
        axum::response::Html(PAGE),
    )
}

/// `value` as JSON; an error when a number in it is not finite, which JSON would print as
/// `null` (the same rule as the CLI's).
pub(crate) fn json<T: Serialize>(value: &T) -> Result<Response, ApiError> {
    crate::answers::encode(value).map(crate::answers::respond)
}

/// The answer kept under `key` from an earlier identical request, or else `work` computed
/// (see [`blocking`]), encoded, kept and returned.
pub(crate) async fn computed<T: Serialize + Send + 'static>(
    state: &AppState,
    key: Option<String>,
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<Response, ApiError> {
    if let Some(answer) = key.as_deref().and_then(|k| state.answers.get(k)) {
        state.metrics.answer_cache(true);
        return Ok(crate::answers::respond(answer));
    }
    if key.is_some() {
        state.metrics.answer_cache(false);
    }
    let answer = crate::answers::encode(&blocking(state, work).await?)?;
    if let Some(key) = key {
        state.answers.put(key, answer.clone());
    }
    Ok(crate::answers::respond(answer))
}

/// A `model` the catalog does not know, named by its Hugging Face Hub id, read as the CLI's
/// `--model` reads it: its config.json (and safetensors index) become `model_config` (and
/// `checkpoint_index`). Nothing changes for a built-in model, a pasted config, or a server
/// that may not read the Hub. Runs on a blocking thread: the Hub is read synchronously.
pub(crate) fn read_hub_model(
    hub: Option<&crate::HubFiles>,
    catalog: &gpuplan::Catalog,
    (model, model_config, checkpoint_index): (&str, &mut Option<serde_json::Value>, &mut Option<String>),
) -> Result<(), ApiError> {
    let Some(hub) = hub else { return Ok(()) };
    if model_config.is_some() || catalog.models().get(model).is_ok() {
        return Ok(());
    }
    if let Some(files) = (hub.0)(model) {
        let (config, index) = files?;
        *model_config = Some(serde_json::Value::String(config));
        if checkpoint_index.is_none() {
            *checkpoint_index = index;
        }
    }
    Ok(())
}

/// [`read_hub_model`] for the model of a request's workload.
pub(crate) fn read_hub_workload(
    hub: Option<&crate::HubFiles>,
    catalog: &gpuplan::Catalog,
    w: &mut gpuplan::WorkloadOptions,
) -> Result<(), ApiError> {
    read_hub_model(hub, catalog, (&w.model, &mut w.model_config, &mut w.checkpoint_index))
}

/// The key an answer is kept under: the route and its options as JSON (fields in declaration
/// order, so equal options give equal keys). Requests with fields no option claims are not
/// kept: they are refused.
pub(crate) fn cache_key<T: Serialize>(route: &str, options: &T) -> Option<String> {
    serde_json::to_string(options)
        .ok()
        .map(|json| format!("{route} {json}"))
}

/// Runs a computation off the async workers (estimates and plans take milliseconds of CPU),
/// at most one per core at a time.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let permit = state.computing.clone().acquire_owned().await.map_err(|e| {
        ApiError::new(
            gpuplan::ErrorCode::Unavailable,
            format!("the server is shutting down: {e}"),
            Some("retry".to_string()),
        )
    })?;
    // The permit goes with the work: a request cut off at its time limit keeps its core until
    // the computation ends, so the cores are never shared by more computations than they hold.
    tokio::task::spawn_blocking(move || {
        let answer = work();
        drop(permit);
        answer
    })
    .await
    .map_err(|e| ApiError::internal(format!("the computation did not finish: {e}")))?
}
