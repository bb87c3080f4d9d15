//! The web layer's error type. Domain errors map to status codes here; internal errors are logged
//! once (inside the request's trace span) and shown as a plain message.

use crate::web::kit::paths;
use std::any::Any;

use askama::Template;
use axum::extract::rejection::{FormRejection, JsonRejection, PathRejection, QueryRejection};
use axum::http::{StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;

use crate::domain::{DomainError, FieldError};
use crate::messages;
use crate::web::kit::layout::Layout;

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    layout: Layout,
    status: u16,
    title: String,
    message: String,
}

/// An error answered with an HTML page (back office and public pages).
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("payload too large")]
    PayloadTooLarge,
    #[error("template: {0}")]
    Render(#[from] askama::Error),
}

impl WebError {
    pub fn status(&self) -> StatusCode {
        match self {
            WebError::Domain(d) => domain_status(d),
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            WebError::Render(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

fn domain_status(d: &DomainError) -> StatusCode {
    match d {
        DomainError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        DomainError::NotFound(_) => StatusCode::NOT_FOUND,
        DomainError::Forbidden => StatusCode::FORBIDDEN,
        DomainError::Throttled { .. } | DomainError::TooFast { .. } => {
            StatusCode::TOO_MANY_REQUESTS
        }
        DomainError::BadCredentials => StatusCode::UNAUTHORIZED,
        DomainError::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
        DomainError::Conflict { .. } => StatusCode::CONFLICT,
        DomainError::BadText(_) => StatusCode::BAD_REQUEST,
        DomainError::Db(_) | DomainError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub fn error_page(status: StatusCode, message: String) -> Response {
    let layout = Layout::bare();
    let page = ErrorPage {
        status: status.as_u16(),
        title: layout
            .lang
            .t1("error-title", "status", i64::from(status.as_u16())),
        layout,
        message,
    };
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(_) => (status, page.message).into_response(),
    }
}

impl WebError {
    /// What the person reads; a server error is logged here, once.
    pub fn message(&self) -> String {
        if self.status().is_server_error() {
            tracing::error!(error = %self, "request failed");
        }
        match self {
            WebError::Domain(d) => d.message(),
            WebError::BadRequest(m) => m.clone(),
            WebError::PayloadTooLarge => messages::body_too_large(),
            WebError::Render(_) => messages::internal_error(),
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        error_page(self.status(), self.message())
    }
}

impl From<FormRejection> for WebError {
    fn from(r: FormRejection) -> Self {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            WebError::PayloadTooLarge
        } else {
            WebError::BadRequest(r.body_text())
        }
    }
}

impl From<QueryRejection> for WebError {
    fn from(r: QueryRejection) -> Self {
        WebError::BadRequest(r.body_text())
    }
}

impl From<PathRejection> for WebError {
    fn from(_: PathRejection) -> Self {
        WebError::Domain(DomainError::NotFound("page"))
    }
}

/// An error answered with `{"error": code, "message": text}` (the JSON API).
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    pub fields: Vec<FieldError>,
    /// Extra top-level fields, e.g. `"sku"` and `"available"` on insufficient_stock.
    pub details: serde_json::Value,
    /// Seconds for a `Retry-After` header (a rate limit, a busy server).
    pub retry_after: Option<u32>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: String) -> Self {
        ApiError {
            status,
            code: code.to_string(),
            message,
            fields: Vec::new(),
            details: serde_json::Value::Null,
            retry_after: None,
        }
    }

    /// With a `Retry-After` of this many seconds.
    pub fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }
}

impl From<DomainError> for ApiError {
    fn from(d: DomainError) -> Self {
        if matches!(d, DomainError::Db(_) | DomainError::Internal(_)) {
            tracing::error!(error = %d, "api request failed");
        }
        let status = domain_status(&d);
        let code = d.code().to_string();
        let retry_after = match &d {
            DomainError::Busy { retry_after } | DomainError::TooFast { retry_after } => {
                Some((*retry_after).min(3600) as u32)
            }
            _ => None,
        };
        // Moved out rather than cloned: a sold-out flood turns one of these into a response per
        // request.
        let (message, fields, details) = match d {
            DomainError::Conflict {
                message, details, ..
            } => (message, Vec::new(), details),
            DomainError::Invalid(fields) => {
                let message = DomainError::invalid_message(&fields);
                (message, fields, serde_json::Value::Null)
            }
            other => (other.message(), Vec::new(), serde_json::Value::Null),
        };
        ApiError {
            status,
            code,
            message,
            fields,
            details,
            retry_after,
        }
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::MissingJsonContentType(_) => ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                messages::bad_content_type(),
            ),
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                messages::body_too_large(),
            ),
            other => ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_json",
                messages::bad_json(&other.body_text()),
            ),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(_: PathRejection) -> Self {
        ApiError::from(DomainError::NotFound("resource"))
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", r.body_text())
    }
}

/// The JSON body of an API error: `error` and `message`, then the details' fields at the top level,
/// then `fields` when there are any. Serialised straight from the parts rather than through a
/// `serde_json::Value` tree, which allocated a map node per key on every refusal.
#[derive(serde::Serialize)]
struct ApiErrorBody<'a> {
    error: &'a str,
    message: &'a str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    details: Option<&'a serde_json::Map<String, serde_json::Value>>,
    #[serde(skip_serializing_if = "<[FieldError]>::is_empty")]
    fields: &'a [FieldError],
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ApiErrorBody {
            error: &self.code,
            message: &self.message,
            details: self.details.as_object(),
            fields: &self.fields,
        };
        let mut r = (self.status, Json(body)).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, s.into());
        }
        r
    }
}

/// Unknown routes: JSON under /api, a page elsewhere.
pub async fn not_found(uri: Uri) -> Response {
    if uri.path().starts_with("/api/") {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            messages::page_not_found(),
        )
        .into_response()
    } else {
        error_page(StatusCode::NOT_FOUND, messages::page_not_found())
    }
}

pub fn panic_response(err: Box<dyn Any + Send + 'static>) -> Response {
    let detail = err
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| err.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    tracing::error!(panic = detail, "handler panicked");
    error_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        messages::internal_error(),
    )
}

pub fn csrf_rejected(_: tower_http::csrf::ProtectionError) -> Response {
    error_page(StatusCode::FORBIDDEN, messages::csrf_rejected())
}
