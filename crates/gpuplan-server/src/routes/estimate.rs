//! `POST /api/v1/estimate`: `gpuplan estimate --format json`, the flags as the body.

use crate::AppState;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use axum::extract::State;
use axum::response::Response;
use gpuplan::EstimateOptions;
use gpuplan::emit::wire::EstimateJson;

/// Memory per GPU and speed of a workload on a GPU type (`gpuplan estimate --format json`).
#[utoipa::path(post, path = "/api/v1/estimate", tag = "planning", request_body = EstimateOptions,
    responses((status = 200, body = EstimateJson),
              (status = 400, description = "bad input (the CLI's exit 2)", body = crate::error::ProblemJson, content_type = "application/problem+json"),
              (status = 422, description = "a body of the wrong shape", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn estimate(
    State(state): State<AppState>,
    JsonBody(options): JsonBody<EstimateOptions>,
) -> Result<Response, ApiError> {
    options.check_fields()?;
    let key = super::cache_key("estimate", &options);
    let catalog = state.catalog.clone();
    let hub = state.hub.clone();
    let mut options = options;
    super::computed(&state, key, move || {
        super::read_hub_workload(hub.as_ref(), &catalog, &mut options.workload)?;
        let answer = gpuplan::estimate_workload(&catalog, &options.request()?)?;
        Ok(answer.wire(gpuplan::Naming::Keys))
    })
    .await
}
