//! One error type for the API and one table from what went wrong to an HTTP status, written as
//! `application/problem+json` (RFC 9457) with the CLI's exit code and hint as extensions.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A refused or failed request.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    /// A short, fixed title per kind of problem.
    pub title: &'static str,
    pub detail: String,
    pub hint: Option<String>,
    /// What the CLI would exit with: 1 nothing feasible, 2 bad input.
    pub exit_code: u8,
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
    /// Input that cannot be used (the CLI's exit 2).
    pub fn bad_request(detail: impl Into<String>, hint: Option<String>) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            title: "bad input",
            detail: detail.into(),
            hint,
            exit_code: 2,
            extension: None,
        }
    }

    /// A body the server will not read: too large, not JSON, or not the JSON expected.
    pub fn unreadable(status: StatusCode, detail: impl Into<String>) -> Self {
        ApiError {
            status,
            title: "unreadable request body",
            detail: detail.into(),
            hint: Some("send a JSON object whose fields are the command's flags in snake_case".to_string()),
            exit_code: 2,
            extension: None,
        }
    }

    /// A valid request nothing satisfies (the CLI's exit 1), with the report of why.
    pub fn infeasible(detail: impl Into<String>, report: serde_json::Value) -> Self {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            title: "nothing feasible",
            detail: detail.into(),
            hint: None,
            exit_code: 1,
            extension: Some(report),
        }
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::NOT_FOUND,
            title: "not found",
            detail: detail.into(),
            hint: Some("GET /openapi.json lists the routes".to_string()),
            exit_code: 2,
            extension: None,
        }
    }
}

impl From<gpuplan::Error> for ApiError {
    fn from(error: gpuplan::Error) -> Self {
        let hint = error.hint();
        match error {
            gpuplan::Error::NotANumber { .. } => ApiError {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                title: "not a number",
                detail: error.to_string(),
                hint,
                exit_code: 2,
                extension: None,
            },
            // The catalog was loaded when the server started; a lookup miss or bad value is
            // the request's.
            other => ApiError::bad_request(other.to_string(), hint),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let problem = ProblemJson {
            kind: "about:blank".to_string(),
            title: self.title.to_string(),
            status: self.status.as_u16(),
            detail: self.detail,
            hint: self.hint,
            exit_code: self.exit_code,
            report: self.extension,
        };
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        (self.status, [(header::CONTENT_TYPE, "application/problem+json")], body).into_response()
    }
}

/// A request the server could not take in time, or while at its concurrency limit.
pub(crate) async fn overloaded(error: tower::BoxError) -> ApiError {
    if error.is::<tower::timeout::error::Elapsed>() {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            title: "timed out",
            detail: format!("the request took longer than {} s", crate::REQUEST_TIMEOUT.as_secs()),
            hint: Some("narrow the request (fewer providers, a smaller --max-gpus)".to_string()),
            exit_code: 2,
            extension: None,
        }
    } else {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            title: "unavailable",
            detail: error.to_string(),
            hint: Some("retry".to_string()),
            exit_code: 2,
            extension: None,
        }
    }
}
