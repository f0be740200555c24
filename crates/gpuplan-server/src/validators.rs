//! Cache validators for the catalog's reads: every `GET` answer that depends only on the
//! catalog the server started with (GPUs, models, the summary, offerings) carries an `ETag`
//! (the catalog's fingerprint with the path and query) and `Cache-Control`, and a request
//! whose `If-None-Match` names the current tag is answered `304 Not Modified` without a body.

use crate::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::hash::{Hash, Hasher};

/// The reads whose answers change only with the catalog.
const CATALOG_READS: [&str; 4] = ["/api/v1/gpus", "/api/v1/models", "/api/v1/catalog", "/api/v1/instances"];

/// How long a client or proxy may reuse an answer without asking again (300 s): a catalog
/// changes with a release or a refresh, and a stale listing for minutes costs nothing.
const CACHE_CONTROL: &str = "public, max-age=300";

/// A fingerprint of everything the catalog reads are computed from.
pub fn fingerprint(parts: &[&[u8]]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for part in parts {
        part.hash(&mut hasher);
    }
    hasher.finish()
}

pub(crate) async fn validators(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if request.method() != Method::GET || !CATALOG_READS.contains(&path) {
        return next.run(request).await;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (state.catalog_fingerprint, path, request.uri().query().unwrap_or("")).hash(&mut hasher);
    let Ok(tag) = HeaderValue::from_str(&format!("\"{:016x}\"", hasher.finish())) else {
        return next.run(request).await;
    };
    let cache = HeaderValue::from_static(CACHE_CONTROL);
    let matches = request
        .headers()
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|candidate| {
            let candidate = candidate.trim().trim_start_matches("W/");
            candidate == "*" || candidate.as_bytes() == tag.as_bytes()
        });
    if matches {
        return (
            StatusCode::NOT_MODIFIED,
            [(header::ETAG, tag), (header::CACHE_CONTROL, cache)],
        )
            .into_response();
    }
    let mut response = next.run(request).await;
    if response.status() == StatusCode::OK {
        response.headers_mut().insert(header::ETAG, tag);
        response.headers_mut().insert(header::CACHE_CONTROL, cache);
    }
    response
}
