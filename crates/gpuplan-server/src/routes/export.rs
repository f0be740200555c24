//! `POST /api/v1/export`: `gpuplan export`, the plan and the flags in the body. The files are
//! answered as JSON: each with its name, and all of them as the one YAML stream
//! `gpuplan export` prints (the page offers it as a download).

use crate::AppState;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use axum::extract::State;
use axum::response::Response;
use gpuplan::ExportOptions;
use serde::Serialize;

/// The files of an export.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ExportJson {
    /// Each file as `gpuplan export --out DIR` writes it.
    pub files: Vec<ExportFileJson>,
    /// The files to apply, as one YAML stream (`kubectl apply -f -`; for SkyPilot, the task).
    pub stream: String,
}

/// One exported file.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ExportFileJson {
    pub name: String,
    /// An alternative to other files (an HPA where KEDA is not installed): written into
    /// `alternatives/`, left out of the stream.
    pub alternative: bool,
    pub yaml: String,
}

/// Deployment files for one configuration of a plan (`gpuplan export`): Kubernetes manifests,
/// a SkyPilot task or a SkyServe service.
#[utoipa::path(post, path = "/api/v1/export", tag = "planning", request_body = ExportOptions,
    responses((status = 200, body = ExportJson),
              (status = 400, description = "bad input (the CLI's exit 2): an unknown target, a configuration the plan lacks", body = crate::error::ProblemJson, content_type = "application/problem+json"),
              (status = 422, description = "a body of the wrong shape", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn export(
    State(state): State<AppState>,
    JsonBody(options): JsonBody<ExportOptions>,
) -> Result<Response, ApiError> {
    let catalog = state.catalog.clone();
    let answer = super::blocking(&state, move || {
        let files = gpuplan::export_request(&catalog, &options)?;
        Ok(ExportJson {
            stream: gpuplan::emit::manifest::yaml_stream(&files),
            files: files
                .into_iter()
                .map(|f| ExportFileJson {
                    name: f.name,
                    alternative: f.alternative,
                    yaml: f.yaml,
                })
                .collect(),
        })
    })
    .await?;
    super::json(&answer)
}
