//! `POST /api/v1/cost` and `/api/v1/energy`: `gpuplan cost` and `gpuplan energy --format json`,
//! the flags as the body.

use crate::AppState;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use axum::extract::State;
use axum::response::Response;
use gpuplan::{CostAnswer, CostOptions, EnergyAnswer, EnergyOptions};

/// What an offering (or a negotiated rate) costs for some hours under each billing mode, with
/// spot interruptions, storage and egress (`gpuplan cost --format json`).
#[utoipa::path(post, path = "/api/v1/cost", tag = "cost", request_body = CostOptions,
    responses((status = 200, body = CostAnswer),
              (status = 400, description = "bad input (the CLI's exit 2)", body = crate::error::ProblemJson, content_type = "application/problem+json"),
              (status = 422, description = "a body of the wrong shape", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn cost(
    State(state): State<AppState>,
    JsonBody(options): JsonBody<CostOptions>,
) -> Result<Response, ApiError> {
    let key = super::cache_key("cost", &options);
    let catalog = state.catalog.clone();
    super::computed(&state, key, move || Ok(gpuplan::cost_job(&catalog, &options.query()?)?)).await
}

/// Electricity for GPUs running some hours, and rent against buy
/// (`gpuplan energy --format json`).
#[utoipa::path(post, path = "/api/v1/energy", tag = "cost", request_body = EnergyOptions,
    responses((status = 200, body = EnergyAnswer),
              (status = 400, description = "bad input (the CLI's exit 2)", body = crate::error::ProblemJson, content_type = "application/problem+json"),
              (status = 422, description = "a body of the wrong shape", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn energy(
    State(state): State<AppState>,
    JsonBody(options): JsonBody<EnergyOptions>,
) -> Result<Response, ApiError> {
    super::json(&gpuplan::energy_of(&state.catalog, &options.query())?)
}
