//! The merchant's audit log for its own systems, filtered and paged like the back office's.

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;

use crate::domain::kernel::validate::{self, ms_to_rfc3339};
use crate::domain::trail::audit::{self, Cursor, Filter};
use crate::domain::{FieldError, Scope};
use crate::web::api::{ApiCaller, ApiQuery};
use crate::web::kit::error::ApiError;
use crate::web::AppState;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Part of who acted (a person's sign-in, `apikey:…`).
    actor: Option<String>,
    /// An action (`stock.adjust`, `slot.close`, …), or the start of one.
    action: Option<String>,
    /// Part of what it was done to.
    subject: Option<String>,
    /// An RFC 3339 time or a date (the start of that day).
    from: Option<String>,
    /// An RFC 3339 time or a date (the end of that day).
    to: Option<String>,
    /// Rows older than this id (the `older` of a previous answer).
    before: Option<String>,
    /// Rows newer than this id (the `newer` of a previous answer).
    after: Option<String>,
}

/// One entry of the audit log.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct AuditEntryJson {
    id: i64,
    actor: String,
    action: String,
    subject: String,
    detail: String,
    /// Where it came from (`api POST /api/v1/…`, a page).
    source: String,
    ip: String,
    at: String,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct AuditJson {
    entries: Vec<AuditEntryJson>,
    /// The `before=` of the next older page; `null` at the oldest.
    older: Option<String>,
    /// The `after=` of the next newer page; `null` at the newest.
    newer: Option<String>,
}

/// `GET /api/v1/audit`: newest first, a page at a time; `older` and `newer` are the cursors.
#[utoipa::path(get, path = "/api/v1/audit", tag = "audit", operation_id = "list_audit",
    params(AuditQuery),
    responses(
        (status = 200, description = "A page", body = AuditJson),
        (status = 422, description = "`invalid_number`, `invalid_time`, `invalid_cursor`, `too_long`: a filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let tz = crate::domain::tenancy::tenants::merchant(&state.db, caller.merchant_id)
        .await?
        .tz();
    let mut errs = validate::Errors::default();
    let (from, to) = crate::web::api::period(&mut errs, q.from.as_deref(), q.to.as_deref(), tz);
    let before = errs
        .take(validate::query_int("before", q.before.as_deref(), 1))
        .flatten();
    let after = errs
        .take(validate::query_int("after", q.after.as_deref(), 0))
        .flatten();
    if before.is_some() && after.is_some() {
        errs.push(FieldError::new(
            "after",
            "invalid_cursor",
            crate::messages::one_cursor(),
        ));
    }
    // Free text is matched as typed; what it may not hold is refused like any field.
    for (field, v) in [
        ("actor", &q.actor),
        ("action", &q.action),
        ("subject", &q.subject),
    ] {
        if let Some(Err(e)) = v
            .as_deref()
            .map(|v| validate::optional_text(field, v, validate::NAME_MAX))
        {
            errs.push(e);
        }
    }
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let filter = Filter {
        merchant_id: None,
        actor: q.actor.unwrap_or_default(),
        action: q.action.unwrap_or_default(),
        subject: q.subject.unwrap_or_default(),
        from,
        to,
    };
    let cursor = match (before, after) {
        (Some(b), _) => Cursor::Before(b),
        (_, Some(a)) => Cursor::After(a),
        _ => Cursor::Newest,
    };
    let page = audit::page(
        &state.db,
        Scope::Merchant(caller.merchant_id),
        &filter,
        cursor,
    )
    .await?;
    let entries = page
        .entries
        .into_iter()
        .map(|e| AuditEntryJson {
            at: ms_to_rfc3339(e.at),
            id: e.id,
            actor: e.actor,
            action: e.action,
            subject: e.subject,
            detail: e.detail,
            source: e.source,
            ip: e.ip,
        })
        .collect();
    Ok(Json(AuditJson {
        entries,
        older: page.older.map(|i| i.to_string()),
        newer: page.newer.map(|i| i.to_string()),
    }))
}
