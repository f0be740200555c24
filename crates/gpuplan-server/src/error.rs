//! One error type for the API, written as `application/problem+json` (RFC 9457). Its status,
//! title, exit code and machine-readable `code` all come from the facade's one code table
//! ([`gpuplan::ErrorCode`]), which the CLI's JSON errors read too. Messages are put in the
//! API's words: a knob is named by its JSON field (`hours`), not by its command-line flag.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use gpuplan::{ErrorCode, Naming};
use serde::Serialize;

/// A refused or failed request.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub detail: String,
    pub hint: Option<String>,
    /// The request's field at fault, by its key, where one is.
    pub field: Option<&'static str>,
    /// Extra members (an infeasible plan's report).
    pub extension: Option<serde_json::Value>,
}

/// An `application/problem+json` body (RFC 9457) with gpuplan's extensions.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ProblemJson {
    /// Always `about:blank`: the title says what kind of problem it is.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// What went wrong, for machines: `invalid_input`, `unknown_accelerator`, `infeasible`,
    /// `not_found`, `method_not_allowed`, `body_too_large`, `unsupported_media_type`,
    /// `unreadable_body`, `wrong_shape`, `timed_out`, `unavailable`, `internal` … (the CLI's `--format json`
    /// errors carry the same codes).
    pub code: String,
    /// The request field at fault (`lora_rank`), for the codes about one field:
    /// `out_of_range`, `not_applicable`, `conflicting_fields`, `missing_field`, `invalid_value`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What to do instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// What the CLI exits with for the same request: 1 nothing feasible, 2 bad input.
    pub exit_code: u8,
    /// For a plan nothing satisfies: which constraint removed what, and the nearest misses.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub report: Option<serde_json::Value>,
}

impl ApiError {
    pub fn new(code: ErrorCode, detail: impl Into<String>, hint: Option<String>) -> Self {
        ApiError {
            code,
            detail: detail.into(),
            hint,
            field: None,
            extension: None,
        }
    }

    /// Input that cannot be used (the CLI's exit 2).
    pub fn bad_request(detail: impl Into<String>, hint: Option<String>) -> Self {
        ApiError::new(ErrorCode::InvalidInput, detail, hint)
    }

    /// A body the server will not read: too large, not JSON, or not the JSON expected.
    pub fn unreadable(code: ErrorCode, detail: impl Into<String>) -> Self {
        ApiError::new(
            code,
            detail,
            Some("send a JSON object whose fields are the command's flags in snake_case".to_string()),
        )
    }

    /// A valid request nothing satisfies (the CLI's exit 1), with the report of why.
    pub fn infeasible(detail: impl Into<String>, report: serde_json::Value) -> Self {
        ApiError {
            extension: Some(report),
            ..ApiError::new(ErrorCode::Infeasible, detail, None)
        }
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        ApiError::new(
            ErrorCode::NotFound,
            detail,
            Some("GET /openapi.json lists the routes".to_string()),
        )
    }

    pub fn method_not_allowed() -> Self {
        ApiError::new(
            ErrorCode::MethodNotAllowed,
            "this route does not take that method",
            Some("GET /openapi.json lists each route's methods".to_string()),
        )
    }

    /// The server's own failure (never the request's).
    pub fn internal(detail: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::Internal, detail, None)
    }

    fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
}

impl From<gpuplan::Error> for ApiError {
    fn from(error: gpuplan::Error) -> Self {
        let mut api = ApiError::new(error.code(), error.message(Naming::Keys), error.hint_in(Naming::Keys));
        api.field = error.field().map(|f| f.key());
        api
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let problem = ProblemJson {
            kind: "about:blank".to_string(),
            title: self.code.title().to_string(),
            status: status.as_u16(),
            detail: self.detail,
            code: self.code.as_str().to_string(),
            field: self.field.map(str::to_string),
            hint: self.hint,
            exit_code: self.code.exit_status() as u8,
            report: self.extension,
        };
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        (status, [(header::CONTENT_TYPE, "application/problem+json")], body).into_response()
    }
}

/// A request the server could not take in time, or while at its concurrency limit.
pub(crate) async fn overloaded(error: tower::BoxError) -> ApiError {
    if error.is::<tower::timeout::error::Elapsed>() {
        ApiError::new(
            ErrorCode::TimedOut,
            format!("the request took longer than {} s", crate::REQUEST_TIMEOUT.as_secs()),
            Some("narrow the request (fewer providers, a smaller `max_gpus`)".to_string()),
        )
    } else {
        ApiError::new(ErrorCode::Unavailable, error.to_string(), Some("retry".to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_carries_its_code_and_status() {
        for code in ErrorCode::ALL {
            let error = ApiError::new(code, "d", None);
            assert_eq!(error.status().as_u16(), code.http_status());
        }
    }
}
