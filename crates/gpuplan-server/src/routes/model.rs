//! `POST /api/v1/model`: a model read back before anything is planned (what `gpuplan models`
//! lists for a built-in one): its kind, architecture and parameter count, from a built-in id, a
//! Hugging Face Hub id where the server reads the Hub, or a pasted config.

use crate::AppState;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use axum::extract::State;
use axum::response::Response;
use gpuplan::ModelRequest;
use gpuplan::emit::wire::ModelSummaryJson;

/// The model a request names, as a plan or an estimate would count it.
#[utoipa::path(post, path = "/api/v1/model", tag = "catalog", request_body = ModelRequest,
    responses((status = 200, body = ModelSummaryJson),
              (status = 400, description = "bad input (the CLI's exit 2): an unknown model, a config that lacks a field", body = crate::error::ProblemJson, content_type = "application/problem+json"),
              (status = 422, description = "a body of the wrong shape", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn read(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<ModelRequest>,
) -> Result<Response, ApiError> {
    let catalog = state.catalog.clone();
    let hub = state.hub.clone();
    let mut request = request;
    let summary = super::blocking(&state, move || {
        let r = &mut request;
        super::read_hub_model(
            hub.as_ref(),
            &catalog,
            (&r.model, &mut r.model_config, &mut r.checkpoint_index),
        )?;
        let model = gpuplan::read_model(&catalog, &request)?;
        Ok(ModelSummaryJson::from(&model))
    })
    .await?;
    super::json(&summary)
}
