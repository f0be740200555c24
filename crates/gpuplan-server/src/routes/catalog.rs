//! `GET /api/v1/catalog` and `/api/v1/models`: `gpuplan catalog` and `gpuplan models`.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::State;
use axum::response::Response;
use gpuplan::emit::wire::{CatalogSummaryJson, ModelSummaryJson};

pub(crate) async fn summary(State(state): State<AppState>) -> Result<Response, ApiError> {
    super::json(&CatalogSummaryJson::from(&gpuplan::summarize_catalog(&state.catalog)))
}

pub(crate) async fn models(State(state): State<AppState>) -> Result<Response, ApiError> {
    let models: Vec<ModelSummaryJson> = state.catalog.models().iter().map(ModelSummaryJson::from).collect();
    super::json(&models)
}
