//! `GET /api/v1/catalog` and `/api/v1/models`: `gpuplan catalog` and `gpuplan models`.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::State;
use axum::response::Response;
use gpuplan::emit::wire::{CatalogSummaryJson, ModelSummaryJson};

/// What the catalog holds per provider, with as-of dates (`gpuplan catalog --format json`).
#[utoipa::path(get, path = "/api/v1/catalog", tag = "catalog", responses((status = 200, body = CatalogSummaryJson)))]
pub(crate) async fn summary(State(state): State<AppState>) -> Result<Response, ApiError> {
    state.reads.summary.clone().map(crate::answers::respond)
}

/// The built-in models (`gpuplan models --format json`).
#[utoipa::path(get, path = "/api/v1/models", tag = "catalog", responses((status = 200, body = Vec<ModelSummaryJson>)))]
pub(crate) async fn models(State(state): State<AppState>) -> Result<Response, ApiError> {
    state.reads.models.clone().map(crate::answers::respond)
}
