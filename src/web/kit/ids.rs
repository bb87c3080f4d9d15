//! Typed ids in paths: `/admin/slots/{id}` hands its handler an `i64` or answers "not found" (a
//! page), never a string for the handler to parse. The API has its own, answering JSON.

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use crate::domain::DomainError;
use crate::web::kit::error::{ApiError, WebError};

/// The one numeric id of a back-office path; anything else is a 404 page.
pub struct PathId(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = WebError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, WebError> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(WebError::from)?;
        raw.parse()
            .map(PathId)
            .map_err(|_| DomainError::NotFound("page").into())
    }
}

/// The one numeric id of an API path; anything else is a JSON `not_found`.
pub struct ApiId(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for ApiId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(ApiError::from)?;
        raw.parse()
            .map(ApiId)
            .map_err(|_| DomainError::NotFound("resource").into())
    }
}
