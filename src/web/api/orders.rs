//! Orders after the hold: the exceptions a payment left ("paid, not held"), listed and resolved.

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::domain::orders::exceptions::{self, ExceptionStatus, PAGE_SIZE};
use crate::domain::{DomainError, FieldError, Scope};
use crate::messages;
use crate::web::api::{ApiCaller, ApiJson, ApiPath, ApiQuery};
use crate::web::kit::error::ApiError;
use crate::web::AppState;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExceptionsQuery {
    /// `open` or `resolved`; absent: both.
    #[serde(default)]
    status: String,
    /// Older than this exception id (the previous page's `next_before`).
    #[serde(default)]
    before: Option<i64>,
}

/// Payments that found nothing held ("paid, not held"), newest first.
#[utoipa::path(get, path = "/api/v1/exceptions", tag = "orders",
    params(ExceptionsQuery),
    responses(
        (status = 200, description = "A page", body = ExceptionsJson),
        (status = 422, description = "`invalid_status`: the status filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
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
    Ok(Json(ExceptionsJson {
        exceptions: page,
        next_before,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ExceptionsJson {
    exceptions: Vec<exceptions::Exception>,
    /// The `before=` of the next (older) page; `null` at the end.
    next_before: Option<i64>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"resolution": "REFUNDED", "note": "refund 8812 sent"}))]
pub struct ResolveBody {
    /// How it was settled: `REFUNDED`, `FULFILLED` (goods found after all) or `DISMISSED`.
    #[serde(default)]
    resolution: String,
    #[serde(default)]
    note: String,
}

/// Settles an exception.
#[utoipa::path(post, path = "/api/v1/exceptions/{id}/resolve", tag = "orders",
    params(("id" = i64, Path, description = "The exception's id")),
    request_body = ResolveBody,
    responses(
        (status = 200, description = "The exception, RESOLVED", body = exceptions::Exception),
        (status = 409, description = "`exception_resolved`, `order_changed`, `insufficient_stock`: already resolved, or the goods are still not there to fulfil", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_resolution`, `too_long`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
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
