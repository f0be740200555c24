//! The OpenAPI 3.1 document, generated from the request and response types and the routes'
//! annotations, served at `/openapi.json`; and a reference page for it at `/docs`, embedded
//! (no CDN).

use crate::error::ProblemJson;
use crate::routes;
use axum::Json;
use axum::response::Html;
use gpuplan::emit::wire::{
    CatalogSummaryJson, EstimateJson, GpuJson, InfeasibleJson, InstanceJson, ModelSummaryJson, PlanJson,
};
use gpuplan::{
    CostAnswer, CostOptions, EnergyAnswer, EnergyOptions, EngineKnobs, EstimateOptions, ExportOptions, ForecastAnswer,
    ForecastOptions, ModelRequest, PlanOptions, WorkloadOptions,
};
use utoipa::OpenApi;

#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "gpuplan",
        description = "Which cloud GPU server to rent for an ML job, how many, and at what cost. \
                       Request bodies are the CLI's options, each field named after its flag in \
                       snake_case; answers are the CLI's `--format json` (docs/json.md). Errors \
                       are application/problem+json with the CLI's exit code and a hint."
    ),
    paths(
        routes::health::healthz,
        routes::health::readyz,
        routes::health::metrics,
        routes::gpus::list,
        routes::gpus::one,
        routes::instances::list,
        routes::catalog::models,
        routes::model::read,
        routes::catalog::summary,
        routes::estimate::estimate,
        routes::plan::plan,
        routes::export::export,
        routes::cost::cost,
        routes::cost::energy,
        routes::forecast::forecast,
    ),
    components(schemas(
        EstimateOptions,
        PlanOptions,
        WorkloadOptions,
        EngineKnobs,
        CostOptions,
        EnergyOptions,
        ForecastOptions,
        ExportOptions,
        ModelRequest,
        routes::export::ExportJson,
        routes::export::ExportFileJson,
        CostAnswer,
        EnergyAnswer,
        ForecastAnswer,
        EstimateJson,
        PlanJson,
        InfeasibleJson,
        GpuJson,
        InstanceJson,
        ModelSummaryJson,
        CatalogSummaryJson,
        ProblemJson
    ))
)]
pub struct ApiDoc;

/// The document as JSON: the routes' own answers, and on every operation the problems any
/// request can meet (the code table's rows a route does not name itself).
pub fn document() -> utoipa::openapi::OpenApi {
    let mut document = ApiDoc::openapi();
    for item in document.paths.paths.values_mut() {
        if let Some(operation) = item.get.as_mut() {
            add_problems(operation, &[500, 503]);
        }
        if let Some(operation) = item.post.as_mut() {
            add_problems(operation, &[400, 413, 415, 422, 500, 503]);
        }
    }
    document
}

/// Adds a problem+json answer for each of `statuses` the operation does not list yet, described
/// by the codes of the table that answer with it.
fn add_problems(operation: &mut utoipa::openapi::path::Operation, statuses: &[u16]) {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    for status in statuses {
        let key = status.to_string();
        if operation.responses.responses.contains_key(&key) {
            continue;
        }
        let codes: Vec<String> = gpuplan::ErrorCode::ALL
            .iter()
            .filter(|c| c.http_status() == *status)
            .map(|c| format!("`{c}` ({})", c.title()))
            .collect();
        let response = ResponseBuilder::new()
            .description(codes.join("; "))
            .content(
                "application/problem+json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ProblemJson")))
                    .build(),
            )
            .build();
        operation.responses.responses.insert(key, response.into());
    }
}

pub(crate) async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(document())
}

pub(crate) async fn reference_page() -> impl axum::response::IntoResponse {
    static PAGE: &str = include_str!("../assets/api.html");
    static POLICY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| crate::security::page_policy(PAGE));
    (
        [(axum::http::header::CONTENT_SECURITY_POLICY, POLICY.as_str())],
        Html(PAGE),
    )
}
