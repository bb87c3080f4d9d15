//! Why a SKU can or cannot be sold: one SKU's verdict, or the whole catalog's.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{ApiCaller, ApiPath};
use crate::domain::sellable::{self, ListFilter, NextSlot, Reason, Verdict};
use crate::domain::{catalog, validate, DomainError};
use crate::web::error::ApiError;
use crate::web::view::links::FixLink;
use crate::web::AppState;

/// A reason as the API answers it: the domain's, with where it is fixed as a back-office link.
#[derive(Serialize)]
struct ReasonJson<'a> {
    code: sellable::ReasonCode,
    message: &'a str,
    facts: &'a serde_json::Value,
    /// The back-office page where it is fixed (empty when nothing there fixes it).
    fix_url: String,
    blocking: bool,
}

/// A verdict as the API answers it.
#[derive(Serialize)]
pub struct VerdictJson<'a> {
    sku: &'a str,
    kind: &'a str,
    sellable: bool,
    quantity: i64,
    /// Goods whose stock is not counted: `quantity` is then a ceiling, not a count.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unlimited: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_slots: Option<&'a Vec<NextSlot>>,
    reasons: Vec<ReasonJson<'a>>,
    warnings: Vec<ReasonJson<'a>>,
}

impl<'a> From<&'a Verdict> for VerdictJson<'a> {
    fn from(v: &'a Verdict) -> Self {
        let reasons = |rs: &'a [Reason]| {
            rs.iter()
                .map(|r| ReasonJson {
                    code: r.code,
                    message: &r.message,
                    facts: &r.facts,
                    fix_url: r.fix.link(),
                    blocking: r.blocking,
                })
                .collect()
        };
        VerdictJson {
            sku: &v.sku,
            kind: &v.kind,
            sellable: v.sellable,
            quantity: v.quantity,
            unlimited: v.has(crate::domain::sellable::ReasonCode::StockUnlimited),
            next_slots: v.next_slots.as_ref(),
            reasons: reasons(&v.reasons),
            warnings: reasons(&v.warnings),
        }
    }
}

pub async fn sku_verdict(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = catalog::sku_by_code(&state.db, caller.merchant_id, &code).await?;
    let th = state.config.sellable_thresholds();
    let v = sellable::verdict(&state.db, &th, &sku).await?;
    // Written as the struct lays it out (a `Value` would sort the keys).
    let body = serde_json::to_vec(&VerdictJson::from(&v))
        .map_err(|e| DomainError::Internal(format!("verdict json: {e}")))?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    ))
}

#[derive(Deserialize, Default)]
pub struct ListQuery {
    status: Option<String>,
    reason: Option<String>,
    page: Option<String>,
    per_page: Option<String>,
}

const STATUSES: [&str; 3] = ["all", "blocked", "sellable"];

fn whole(field: &str, raw: Option<&str>, errs: &mut validate::Errors) -> i64 {
    errs.take(validate::query_int(field, raw, 1))
        .flatten()
        .unwrap_or(0)
}

pub async fn list(
    State(state): State<AppState>,
    caller: ApiCaller,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let Query(q) = q?;
    let mut errs = validate::Errors::default();
    let status = q.status.as_deref().unwrap_or("all").trim().to_string();
    if let Err(e) = validate::choice("status", &status, &STATUSES) {
        errs.push(e);
    }
    let reason = q.reason.as_deref().unwrap_or("").trim().to_string();
    if !reason.is_empty() {
        if let Err(e) = validate::choice("reason", &reason, sellable::ReasonCode::NAMES) {
            errs.push(e);
        }
    }
    let page = whole("page", q.page.as_deref(), &mut errs);
    let per_page = whole("per_page", q.per_page.as_deref(), &mut errs);
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let filter = ListFilter {
        status: status.clone(),
        merchant_id: None,
        reason,
        page: page.max(1),
        per_page,
    };
    let th = state.config.sellable_thresholds();
    let l = sellable::listing(&state.db, &th, caller.scope(), &filter).await?;
    Ok(Json(json!({
        "status": status,
        "total": l.total,
        "page": l.page,
        "pages": l.pages,
        "per_page": l.per_page,
        "counts": l.totals,
        "items": l.items.iter().map(VerdictJson::from).collect::<Vec<_>>(),
    })))
}
