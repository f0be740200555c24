//! Answers computed once and served many times. The catalog never changes while the server
//! runs, so its listings are encoded at start-up, and an estimate or a plan is a pure function
//! of its options: the last few hundred are kept, keyed by their options, so a shared link
//! opened by a whole team is planned once.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use gpuplan::Catalog;
use gpuplan::emit::wire::{CatalogSummaryJson, GpuJson, ModelSummaryJson};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Answers kept (a plan's JSON is a few tens of kilobytes).
pub const CACHED_ANSWERS: usize = 256;

/// `value` as JSON bytes; an error when a number in it is not finite, which JSON would print
/// as `null` (the CLI's rule).
pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Bytes, ApiError> {
    if let Some(path) = gpuplan::emit::first_non_finite(value) {
        return Err(gpuplan::Error::NotANumber { path }.into());
    }
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal(format!("the answer could not be encoded: {e}")))
}

/// JSON bytes as a response.
pub(crate) fn respond(bytes: Bytes) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

/// The catalog's listings, encoded once.
#[derive(Debug)]
pub struct CatalogReads {
    pub gpus: Result<Bytes, ApiError>,
    pub models: Result<Bytes, ApiError>,
    pub summary: Result<Bytes, ApiError>,
}

impl CatalogReads {
    pub fn new(catalog: &Catalog) -> Self {
        let gpus: Vec<GpuJson> = catalog.accelerators().iter().map(GpuJson::from).collect();
        let models: Vec<ModelSummaryJson> = catalog.models().iter().map(ModelSummaryJson::from).collect();
        CatalogReads {
            gpus: encode(&gpus),
            models: encode(&models),
            summary: encode(&CatalogSummaryJson::from(&gpuplan::summarize_catalog(catalog))),
        }
    }
}

/// The last [`CACHED_ANSWERS`] answers by request (oldest out first).
#[derive(Debug, Default)]
pub struct AnswerCache {
    entries: Mutex<(HashMap<String, Bytes>, VecDeque<String>)>,
}

impl AnswerCache {
    pub fn get(&self, key: &str) -> Option<Bytes> {
        self.entries.lock().ok()?.0.get(key).cloned()
    }

    pub fn put(&self, key: String, answer: Bytes) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let (map, order) = &mut *entries;
        if map.insert(key.clone(), answer).is_none() {
            order.push_back(key);
        }
        while order.len() > CACHED_ANSWERS {
            if let Some(oldest) = order.pop_front() {
                map.remove(&oldest);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.0.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_answer_leaves_first() {
        let cache = AnswerCache::default();
        for i in 0..=CACHED_ANSWERS {
            cache.put(i.to_string(), Bytes::from(i.to_string()));
        }
        assert_eq!(cache.len(), CACHED_ANSWERS);
        assert!(cache.get("0").is_none());
        assert_eq!(cache.get("1").unwrap(), Bytes::from("1"));
    }
}
