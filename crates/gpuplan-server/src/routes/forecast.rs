//! `POST /api/v1/forecast`: `gpuplan forecast --format json`, the history in the body.

use crate::AppState;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use axum::extract::State;
use axum::response::Response;
use gpuplan::{ForecastAnswer, ForecastOptions};

/// A usage history forecast with its backtest, and the reserved commitment with the lowest
/// expected cost when `on_demand_price` is given (`gpuplan forecast --format json`).
#[utoipa::path(post, path = "/api/v1/forecast", tag = "cost", request_body = ForecastOptions,
    responses((status = 200, body = ForecastAnswer),
              (status = 400, description = "bad input (the CLI's exit 2)", body = crate::error::ProblemJson, content_type = "application/problem+json"),
              (status = 422, description = "a body of the wrong shape", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn forecast(
    State(state): State<AppState>,
    JsonBody(options): JsonBody<ForecastOptions>,
) -> Result<Response, ApiError> {
    let key = super::cache_key("forecast", &options);
    let catalog = state.catalog.clone();
    super::computed(&state, key, move || {
        Ok(gpuplan::forecast_usage(&catalog, &options.query()?)?)
    })
    .await
}
