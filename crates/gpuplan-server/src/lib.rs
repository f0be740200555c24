//! The gpuplan HTTP API: the facade's answers as the documented JSON (docs/json.md), errors as
//! `application/problem+json` carrying the CLI's exit code and hint.
//!
//! The request bodies are the options both front ends fill ([`gpuplan::EstimateOptions`],
//! [`gpuplan::PlanOptions`]): a JSON field is named after the CLI flag it stands for. The
//! server is stateless apart from the catalog it was started with, so it scales out by running
//! more replicas.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! let catalog = gpuplan::Catalog::embedded().expect("the built-in catalog loads");
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! gpuplan_server::serve(listener, gpuplan_server::AppState::new(catalog)).await
//! # }
//! ```

mod answers;
mod error;
mod json_body;
mod metrics;
pub mod openapi;
mod routes;

pub use answers::{AnswerCache, CACHED_ANSWERS, CatalogReads};
pub use error::{ApiError, ProblemJson};
pub use metrics::Metrics;

use axum::Router;
use gpuplan::Catalog;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};

/// Largest request body taken: a Hugging Face config inline fits many times over.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Time one request may take before it is answered 503.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Requests computed at once; more wait (estimates and plans use a core each).
pub const MAX_CONCURRENT_REQUESTS: usize = 64;

/// What every request shares: the catalog, its listings encoded once, recent answers and the
/// counters.
#[derive(Debug, Clone)]
pub struct AppState {
    pub catalog: Arc<Catalog>,
    pub reads: Arc<CatalogReads>,
    pub answers: Arc<AnswerCache>,
    pub metrics: Arc<Metrics>,
    /// Estimates and plans computed at once: one per core. More would only share the cores,
    /// and every extra computing thread keeps its own memory arena.
    pub computing: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    pub fn new(catalog: Catalog) -> Self {
        AppState {
            reads: Arc::new(CatalogReads::new(&catalog)),
            catalog: Arc::new(catalog),
            answers: Arc::new(AnswerCache::default()),
            metrics: Arc::new(Metrics::default()),
            computing: Arc::new(tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(1, |n| n.get()),
            )),
        }
    }
}

/// The whole API: routes, limits, request ids, tracing and metrics.
pub fn app(state: AppState) -> Router {
    let request_id = axum::http::HeaderName::from_static("x-request-id");
    let layers = ServiceBuilder::new()
        .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|request: &axum::http::Request<_>| {
                    let id = request
                        .headers()
                        .get("x-request-id")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-");
                    tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), id)
                })
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .layer(PropagateRequestIdLayer::new(request_id))
        .layer(axum::middleware::from_fn_with_state(state.clone(), metrics::record))
        .layer(axum::error_handling::HandleErrorLayer::new(error::overloaded))
        .timeout(REQUEST_TIMEOUT)
        // One semaphore for every route: the limit is the server's, not each route's.
        .layer(tower::limit::GlobalConcurrencyLimitLayer::new(MAX_CONCURRENT_REQUESTS))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES));
    routes::router().layer(layers).with_state(state)
}

/// Serves [`app`] on `listener` until SIGTERM or Ctrl-C, then finishes the requests in flight.
pub async fn serve(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown_signal())
        .await
}

async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing the requests in flight");
}
