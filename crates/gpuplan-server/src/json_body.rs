//! A JSON body extractor whose refusals are problem+json like every other error.

use crate::error::ApiError;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
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
    let status = match &rejection {
        JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        JsonRejection::JsonDataError(_) => StatusCode::UNPROCESSABLE_ENTITY,
        JsonRejection::BytesRejection(_) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            StatusCode::PAYLOAD_TOO_LARGE
        }
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::unreadable(status, rejection.body_text())
}
