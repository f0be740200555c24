//! `GET /api/v1/gpus` and `/api/v1/gpus/{name}`: `gpuplan gpus [NAME] --format json`.

use crate::AppState;
use crate::error::ApiError;
use crate::paging::Page;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use gpuplan::GpuAnswer;
use gpuplan::emit::wire::GpuJson;

/// Every accelerator with its specifications (`gpuplan gpus --format json`), or a page of them.
#[utoipa::path(get, path = "/api/v1/gpus", operation_id = "list_gpus", tag = "catalog", params(Page),
    responses((status = 200, body = Vec<GpuJson>, headers(("x-total-count" = usize, description = "accelerators in all, where a page was asked for"))),
              (status = 400, description = "a query parameter other than offset and limit", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn list(
    State(state): State<AppState>,
    query: Result<Query<Page>, QueryRejection>,
) -> Result<Response, ApiError> {
    Page::answer(query, &state.reads.gpus, || {
        state.catalog.accelerators().iter().map(GpuJson::from).collect()
    })
}

/// One accelerator by id or alias, or the ones a family name matches (`gpuplan gpus H100`).
#[utoipa::path(get, path = "/api/v1/gpus/{name}", operation_id = "get_gpu", tag = "catalog",
    params(("name" = String, Path, description = "an id or alias: H100, A100-80GB, rtx-4090")),
    responses((status = 200, body = GpuJson), (status = 404, description = "no accelerator of that name (`not_found`)", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn one(State(state): State<AppState>, Path(name): Path<String>) -> Result<Response, ApiError> {
    // A resource the path names and the catalog lacks is not found (in a request body, an
    // unknown GPU stays bad input).
    let answer = gpuplan::show_gpus(&state.catalog, Some(&name)).map_err(|error| {
        let not_found = error.code() == gpuplan::ErrorCode::UnknownAccelerator;
        let api = ApiError::from(error);
        if not_found {
            ApiError::new(gpuplan::ErrorCode::NotFound, api.detail, api.hint)
        } else {
            api
        }
    })?;
    match answer {
        GpuAnswer::One { accelerator, .. } => super::json(&GpuJson::from(accelerator)),
        GpuAnswer::List { accelerators, .. } => {
            let wire: Vec<GpuJson> = accelerators.iter().map(|a| GpuJson::from(*a)).collect();
            super::json(&wire)
        }
    }
}
