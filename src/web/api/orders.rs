//! Orders after the hold: the exceptions a payment left ("paid, not held"), listed and resolved.

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::{ApiCaller, ApiJson, ApiPath, ApiQuery};
use crate::domain::exceptions::{self, ExceptionStatus, PAGE_SIZE};
use crate::domain::{DomainError, FieldError, Scope};
use crate::messages;
use crate::web::error::ApiError;
use crate::web::AppState;

#[derive(Deserialize, Default)]
pub struct ExceptionsQuery {
    /// `open` or `resolved`; absent: both.
    #[serde(default)]
    status: String,
    /// Older than this exception id (the previous page's `next_before`).
    #[serde(default)]
    before: Option<i64>,
}

pub async fn list_exceptions(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiQuery(q): ApiQuery<ExceptionsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let status = match q.status.trim().to_ascii_uppercase().as_str() {
        "" => None,
        s => Some(ExceptionStatus::parse(s).ok_or_else(|| {
            DomainError::Invalid(vec![FieldError::new(
                "status",
                "invalid_status",
                messages::bad_exception_status(),
            )])
        })?),
    };
    let scope = Scope::Merchant(caller.merchant_id);
    let page = exceptions::list(&state.db, scope, status, q.before, PAGE_SIZE + 1).await?;
    let more = page.len() as i64 > PAGE_SIZE;
    let page: Vec<_> = page.into_iter().take(PAGE_SIZE as usize).collect();
    let next_before = if more {
        page.last().map(|e| e.id)
    } else {
        None
    };
    Ok(Json(
        json!({ "exceptions": page, "next_before": next_before }),
    ))
}

#[derive(Deserialize)]
pub struct ResolveBody {
    #[serde(default)]
    resolution: String,
    #[serde(default)]
    note: String,
}

pub async fn resolve_exception(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<ResolveBody>,
) -> Result<impl IntoResponse, ApiError> {
    let (how, note) = exceptions::resolution(&body.resolution, &body.note)?;
    let e = exceptions::resolve(&state.db, &caller.actor(), id, how, &note).await?;
    Ok(Json(e))
}
