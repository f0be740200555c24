//! `GET /api/v1/instances?gpu=H100&provider=aws,gcp&max_price=40`: `gpuplan instances --format
//! json`, the flags as query parameters.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Response;
use gpuplan::InstancesOptions;
use gpuplan::emit::wire::InstanceJson;

/// Cloud offerings: who rents a GPU, in which shape, at what price.
#[utoipa::path(get, path = "/api/v1/instances", operation_id = "list_instances", tag = "catalog", params(InstancesOptions),
    responses((status = 200, body = Vec<InstanceJson>, headers(("x-total-count" = usize, description = "offerings that matched in all, before `offset` and `limit`"))),
              (status = 400, description = "bad input (the CLI's exit 2)", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn list(
    State(state): State<AppState>,
    query: Result<Query<InstancesOptions>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(options) = query.map_err(|rejection| {
        ApiError::bad_request(
            format!(
                "the query parameters do not fit the request: {}",
                crate::json_body::decoder_message(&rejection.body_text())
            ),
            Some("parameters are the command's flags in snake_case; lists are comma-separated".to_string()),
        )
    })?;
    let request = options.request()?;
    let answer = gpuplan::find_instances(&state.catalog, &request)?;
    let wire: Vec<InstanceJson> = answer.offerings.iter().map(InstanceJson::from).collect();
    let mut response = super::json(&wire)?;
    response.headers_mut().insert(
        axum::http::HeaderName::from_static("x-total-count"),
        axum::http::HeaderValue::from(answer.total),
    );
    Ok(response)
}
