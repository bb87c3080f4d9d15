//! The merchant's audit log for its own systems, filtered and paged like the back office's.

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;

use super::{ApiCaller, ApiQuery};
use crate::domain::audit::{self, Cursor, Filter};
use crate::domain::validate::{self, ms_to_rfc3339};
use crate::domain::{FieldError, Scope};
use crate::web::error::ApiError;
use crate::web::AppState;

#[derive(Deserialize, Default)]
pub struct AuditQuery {
    actor: Option<String>,
    action: Option<String>,
    subject: Option<String>,
    from: Option<String>,
    to: Option<String>,
    /// Rows older than this id (the `older` of a previous answer).
    before: Option<String>,
    /// Rows newer than this id (the `newer` of a previous answer).
    after: Option<String>,
}

/// `GET /api/v1/audit`: newest first, a page at a time; `older` and `newer` are the cursors.
pub async fn list(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let tz = crate::domain::tenants::merchant(&state.db, caller.merchant_id)
        .await?
        .tz();
    let mut errs = validate::Errors::default();
    let (from, to) = super::period(&mut errs, q.from.as_deref(), q.to.as_deref(), tz);
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
    let entries: Vec<serde_json::Value> = page
        .entries
        .iter()
        .map(|e| {
            serde_json::json!({
                "id": e.id, "actor": e.actor, "action": e.action, "subject": e.subject,
                "detail": e.detail, "source": e.source, "ip": e.ip, "at": ms_to_rfc3339(e.at),
            })
        })
        .collect();
    Ok(Json(serde_json::json!({
        "entries": entries, "older": page.older.map(|i| i.to_string()),
        "newer": page.newer.map(|i| i.to_string()),
    })))
}
