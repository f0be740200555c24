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
    CostAnswer, CostOptions, EnergyAnswer, EnergyOptions, EngineKnobs, EstimateOptions, ForecastAnswer,
    ForecastOptions, PlanOptions, WorkloadOptions,
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
        routes::catalog::summary,
        routes::estimate::estimate,
        routes::plan::plan,
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

/// The document as JSON.
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
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
