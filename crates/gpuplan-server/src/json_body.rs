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

fn refusal(rejection: JsonRejection) -> ApiError {
    let code = match &rejection {
        JsonRejection::MissingJsonContentType(_) => ErrorCode::UnsupportedMediaType,
        JsonRejection::JsonDataError(_) => ErrorCode::WrongShape,
        JsonRejection::BytesRejection(_) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ErrorCode::BodyTooLarge
        }
        _ => ErrorCode::UnreadableBody,
    };
    ApiError::unreadable(code, rejection.body_text())
}
