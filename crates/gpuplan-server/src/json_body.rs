//! A JSON body extractor whose refusals are problem+json like every other error.

use crate::error::ApiError;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use gpuplan::ErrorCode;
use serde::de::DeserializeOwned;

/// The request body as `T`.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => Err(refusal(rejection)),
        }
    }
}

/// The refusal in the API's own words, with the decoder's finding (which field, where) kept.
fn refusal(rejection: JsonRejection) -> ApiError {
    let cause = decoder_message(&rejection.body_text());
    let (code, detail) = match &rejection {
        JsonRejection::MissingJsonContentType(_) => (
            ErrorCode::UnsupportedMediaType,
            "the body must be JSON, sent with `Content-Type: application/json`".to_string(),
        ),
        JsonRejection::JsonDataError(_) => (
            ErrorCode::WrongShape,
            format!("the JSON does not fit the request: {cause}"),
        ),
        JsonRejection::JsonSyntaxError(_) => (
            ErrorCode::UnreadableBody,
            format!("the body is not valid JSON: {cause}"),
        ),
        JsonRejection::BytesRejection(_) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => (
            ErrorCode::BodyTooLarge,
            "the body is larger than the server accepts".to_string(),
        ),
        _ => (
            ErrorCode::UnreadableBody,
            format!("the body could not be read: {cause}"),
        ),
    };
    ApiError::unreadable(code, detail)
}

/// The decoder's own message, which names the field at fault where there is one (`seq:
/// invalid type …`), without the web framework's lead-in (`Failed to deserialize …: `).
pub(crate) fn decoder_message(body_text: &str) -> String {
    match body_text.split_once(": ") {
        Some((lead, rest)) if lead.starts_with("Failed to") => rest.to_string(),
        _ => body_text.to_string(),
    }
}
