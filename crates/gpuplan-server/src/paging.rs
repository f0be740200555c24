//! `offset` and `limit` on the catalog's list routes (`/api/v1/gpus`, `/api/v1/models`), as
//! `/api/v1/instances` takes them: a page of the list and, in `x-total-count`, the length of the
//! whole. Without them the whole list is answered, encoded once with its `ETag`.

use crate::error::ApiError;
use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use axum::response::Response;
use serde::{Deserialize, Serialize};

/// A page of a list; any other query parameter is refused.
#[derive(Debug, Default, Clone, Copy, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct Page {
    /// Items to skip before the page (default 0).
    pub offset: Option<usize>,
    /// Items to return at most after `offset` (default: all).
    pub limit: Option<usize>,
}

impl Page {
    /// The query as given, or a bad request in the API's words.
    pub(crate) fn read(query: Result<Query<Page>, QueryRejection>) -> Result<Page, ApiError> {
        query.map(|Query(page)| page).map_err(|rejection| {
            ApiError::bad_request(
                format!(
                    "the query parameters do not fit a list: {}",
                    crate::json_body::decoder_message(&rejection.body_text())
                ),
                Some("a list takes offset and limit (whole numbers), nothing else".to_string()),
            )
        })
    }

    /// A list route's answer to `query`: the whole list as encoded once (`whole`, with its
    /// `ETag`), or the page asked for of `items`, built only then.
    pub(crate) fn answer<T: Serialize>(
        query: Result<Query<Page>, QueryRejection>,
        whole: &Result<axum::body::Bytes, ApiError>,
        items: impl FnOnce() -> Vec<T>,
    ) -> Result<Response, ApiError> {
        let page = Page::read(query)?;
        if page.is_whole() {
            return whole.clone().map(crate::answers::respond);
        }
        page.respond(&items())
    }

    /// Whether the whole list is asked for.
    pub(crate) fn is_whole(&self) -> bool {
        self.offset.unwrap_or(0) == 0 && self.limit.is_none()
    }

    /// The page of `items`, with the whole list's length in `x-total-count`.
    pub(crate) fn respond<T: Serialize>(&self, items: &[T]) -> Result<Response, ApiError> {
        let start = self.offset.unwrap_or(0).min(items.len());
        let end = self
            .limit
            .map_or(items.len(), |limit| start.saturating_add(limit).min(items.len()));
        let mut response = crate::routes::json(&&items[start..end])?;
        response.headers_mut().insert(
            axum::http::HeaderName::from_static("x-total-count"),
            axum::http::HeaderValue::from(items.len()),
        );
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_past_the_end_is_empty_and_counts_the_whole() {
        let page = Page {
            offset: Some(5),
            limit: Some(10),
        };
        let response = page.respond(&[1, 2, 3]).unwrap();
        assert_eq!(response.headers()["x-total-count"], "3");
        assert!(!page.is_whole());
        assert!(Page::default().is_whole());
    }
}
