//! `GET /api/v1/catalog` and `/api/v1/models`: `gpuplan catalog` and `gpuplan models`.

use crate::AppState;
use crate::error::ApiError;
use crate::paging::Page;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Response;
use gpuplan::emit::wire::{CatalogSummaryJson, ModelSummaryJson};

/// What the catalog holds per provider, with as-of dates (`gpuplan catalog --format json`).
#[utoipa::path(get, path = "/api/v1/catalog", tag = "catalog", responses((status = 200, body = CatalogSummaryJson)))]
pub(crate) async fn summary(State(state): State<AppState>) -> Result<Response, ApiError> {
    state.reads.summary.clone().map(crate::answers::respond)
}

/// The built-in models (`gpuplan models --format json`), or a page of them.
#[utoipa::path(get, path = "/api/v1/models", tag = "catalog", params(Page),
    responses((status = 200, body = Vec<ModelSummaryJson>, headers(("x-total-count" = usize, description = "models in all, where a page was asked for"))),
              (status = 400, description = "a query parameter other than offset and limit", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn models(
    State(state): State<AppState>,
    query: Result<Query<Page>, QueryRejection>,
) -> Result<Response, ApiError> {
    Page::answer(query, &state.reads.models, || {
        state.catalog.models().iter().map(ModelSummaryJson::from).collect()
    })
}
