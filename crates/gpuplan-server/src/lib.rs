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
//! let catalog = gpuplan::builtin_catalog().expect("the built-in catalog loads");
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! gpuplan_server::serve(listener, gpuplan_server::AppState::new(catalog)).await
//! # }
//! ```

mod answers;
mod error;
mod json_body;
mod metrics;
pub mod openapi;
mod paging;
mod routes;
mod security;
mod validators;

pub use answers::{AnswerCache, CACHED_ANSWERS, CatalogReads};
pub use error::{ApiError, ProblemJson};
pub use metrics::Metrics;

use axum::Router;
use gpuplan::Catalog;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

/// Largest request body taken: a Hugging Face config inline fits many times over.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Time one request may take before it is answered 503.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Requests computed at once; more wait (estimates and plans use a core each).
pub const MAX_CONCURRENT_REQUESTS: usize = 64;

/// Reads a model named by its Hugging Face Hub id (`ORG/NAME[@REVISION]`): the text of its
/// config.json and, where the repository has one, of its safetensors index; `None` for a name
/// that is not a Hub id. The front end that starts the server gives it (the CLI's `serve`
/// reads the Hub as `--model` does, with its cache and `HF_*` variables); without one, a
/// `model` the catalog does not know is refused as unknown.
#[derive(Clone)]
pub struct HubFiles(pub Arc<ReadHub>);

/// What reads the Hub: a model's name in, its config.json and (where there is one) its
/// safetensors index out as text, or `None` for a name that is not a Hub id.
pub type ReadHub = dyn Fn(&str) -> Option<Result<(String, Option<String>), gpuplan::Error>> + Send + Sync;

impl std::fmt::Debug for HubFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HubFiles")
    }
}

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
    /// What the catalog's reads are computed from, hashed: their `ETag`s.
    pub catalog_fingerprint: u64,
    /// Web origins whose pages may call the API (CORS); empty: only pages the server serves.
    pub cors_origins: Arc<Vec<axum::http::HeaderValue>>,
    /// How models named by their Hub id are read, where the server may read the Hub.
    pub hub: Option<HubFiles>,
}

impl AppState {
    pub fn new(catalog: Catalog) -> Self {
        let reads = CatalogReads::new(&catalog);
        fn bytes(read: &Result<axum::body::Bytes, ApiError>) -> &[u8] {
            read.as_ref().map_or(&[], |b| &b[..])
        }
        let catalog_fingerprint = validators::fingerprint(&[
            bytes(&reads.gpus),
            bytes(&reads.models),
            bytes(&reads.summary),
            format!("{} offerings", catalog.offerings().len()).as_bytes(),
        ]);
        AppState {
            reads: Arc::new(reads),
            catalog_fingerprint,
            cors_origins: Arc::new(Vec::new()),
            hub: None,
            catalog: Arc::new(catalog),
            answers: Arc::new(AnswerCache::default()),
            metrics: Arc::new(Metrics::default()),
            computing: Arc::new(tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(1, |n| n.get()),
            )),
        }
    }

    /// The same state, with the web origins whose pages may call the API.
    pub fn with_cors_origins(mut self, origins: Vec<axum::http::HeaderValue>) -> Self {
        self.cors_origins = Arc::new(origins);
        self
    }

    /// The same state, reading models named by their Hub id with `hub`.
    pub fn with_hub(mut self, hub: HubFiles) -> Self {
        self.hub = Some(hub);
        self
    }
}

/// The whole API: routes, limits, request ids, tracing and metrics.
pub fn app(state: AppState) -> Router {
    app_with(state, REQUEST_TIMEOUT)
}

/// [`app`] with another time limit per request.
pub fn app_with(state: AppState, request_timeout: Duration) -> Router {
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
                .on_response(log_response),
        )
        .layer(PropagateRequestIdLayer::new(request_id))
        .layer(axum::middleware::from_fn(security::headers))
        .layer(axum::middleware::from_fn_with_state(state.clone(), metrics::record))
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            validators::validators,
        ))
        .layer(axum::error_handling::HandleErrorLayer::new(error::overloaded))
        .timeout(request_timeout)
        // One semaphore for every route: the limit is the server's, not each route's.
        .layer(tower::limit::GlobalConcurrencyLimitLayer::new(MAX_CONCURRENT_REQUESTS))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(BODY_READ_TIMEOUT));
    let router = routes::router().layer(layers);
    let router = match cors(&state.cors_origins) {
        Some(cors) => router.layer(cors),
        None => router,
    };
    router.with_state(state)
}

/// Web origins as a CORS policy takes them: `*`, or a scheme and host (and port) without a
/// path, as browsers send `Origin`; the first that is not one, with why.
pub fn cors_origins(list: &[String]) -> Result<Vec<axum::http::HeaderValue>, (String, String)> {
    list.iter()
        .map(|origin| {
            let origin = origin.trim().trim_end_matches('/');
            let host = origin
                .strip_prefix("https://")
                .or_else(|| origin.strip_prefix("http://"))
                .filter(|rest| !rest.is_empty() && !rest.contains('/'));
            if origin != "*" && host.is_none() {
                return Err((origin.to_string(), "not an origin".to_string()));
            }
            axum::http::HeaderValue::from_str(origin).map_err(|e| (origin.to_string(), e.to_string()))
        })
        .collect()
}

/// The CORS policy for `origins`: their pages may read answers and send JSON bodies; `*`
/// opens the API to every page. `None` without origins: browsers then keep it to the page the
/// server serves itself.
fn cors(origins: &[axum::http::HeaderValue]) -> Option<tower_http::cors::CorsLayer> {
    use tower_http::cors::{AllowOrigin, CorsLayer};
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().cloned())
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([axum::http::Method::GET, axum::http::Method::POST])
            .allow_headers([axum::http::header::CONTENT_TYPE])
            .expose_headers([
                axum::http::header::ETAG,
                axum::http::HeaderName::from_static("x-request-id"),
                axum::http::HeaderName::from_static("x-total-count"),
            ]),
    )
}

/// A request that took longer than this is logged at info level.
const SLOW: Duration = Duration::from_secs(1);

/// One line per answer: at debug level for the ordinary ones (at thousands of requests a second
/// info-level lines would fill a disk in a day), at info for client errors and slow answers,
/// at warn for server errors.
fn log_response(response: &axum::http::Response<axum::body::Body>, latency: Duration, _span: &tracing::Span) {
    let status = response.status().as_u16();
    let ms = latency.as_secs_f64() * 1e3;
    if status >= 500 {
        tracing::warn!(status, latency_ms = ms, "answered");
    } else if status >= 400 || latency >= SLOW {
        tracing::info!(status, latency_ms = ms, "answered");
    } else {
        tracing::debug!(status, latency_ms = ms, "answered");
    }
}

/// Connections served at once; one more is closed as soon as it is accepted.
pub const MAX_CONNECTIONS: usize = 1024;

/// Time a client has to send a request's headers, whatever it sends meanwhile (slow senders
/// that drip a header byte at a time hold nothing longer).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Time a request's body may take to arrive.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// After SIGTERM, the time the requests in flight are given before the server exits anyway.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What one server holds to: open connections, the time for a request's headers, and the
/// grace after SIGTERM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub connections: usize,
    pub request_timeout: Duration,
    pub header_read_timeout: Duration,
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: MAX_CONNECTIONS,
            request_timeout: REQUEST_TIMEOUT,
            header_read_timeout: HEADER_READ_TIMEOUT,
            shutdown_grace: SHUTDOWN_GRACE,
        }
    }
}

/// Serves [`app`] on `listener` until SIGTERM or Ctrl-C, then finishes the requests in flight
/// for at most [`SHUTDOWN_GRACE`].
pub async fn serve(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    serve_with(listener, state, Limits::default(), shutdown_signal()).await
}

/// [`serve`] with other limits, until `shutdown` completes.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    state: AppState,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let app = app_with(state, limits.request_timeout);
    let connections = Arc::new(tokio::sync::Semaphore::new(limits.connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors, say: wait a moment rather than spin.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            tracing::info!("connection refused: {} already open", limits.connections);
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_grace) => {
            tracing::warn!("requests still in flight after {} s: exiting", limits.shutdown_grace.as_secs());
        }
    }
    Ok(())
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
