//! Why a SKU can or cannot be sold: one SKU's verdict, or the whole catalog's.

use crate::web::kit::lagging::Lagging;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};

use crate::domain::sellable::{self, ListFilter, NextSlot, Reason, Verdict};
use crate::domain::{catalog, kernel::validate, DomainError};
use crate::web::api::{ApiCaller, ApiPath};
use crate::web::kit::error::ApiError;
use crate::web::view::links::FixLink;
use crate::web::AppState;

/// A reason as the API answers it: the domain's, with where it is fixed as a back-office link.
#[derive(Serialize, utoipa::ToSchema)]
struct ReasonJson<'a> {
    code: sellable::ReasonCode,
    message: &'a str,
    /// The figures behind it (`{"available": 0}`, …).
    #[schema(value_type = Object)]
    facts: &'a serde_json::Value,
    /// The back-office page where it is fixed (empty when nothing there fixes it).
    fix_url: String,
    blocking: bool,
}

/// A verdict as the API answers it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct VerdictJson<'a> {
    sku: &'a str,
    #[schema(value_type = catalog::ProductKind)]
    kind: &'a str,
    sellable: bool,
    quantity: i64,
    /// Goods whose stock is not counted: `quantity` is then a ceiling, not a count.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unlimited: bool,
    /// Services: the next open slots with places.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<NextSlot>>)]
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

/// Whether a SKU can be sold now, how many, and every reason it cannot.
#[utoipa::path(get, path = "/api/v1/skus/{code}/sellable", tag = "sellable",
    params(("code" = String, Path, description = "The SKU's code")),
    responses((status = 200, description = "The verdict", body = VerdictJson)))]
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

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// `all` (the default), `blocked` or `sellable`.
    status: Option<String>,
    /// A reason code: only SKUs it blocks or warns.
    reason: Option<String>,
    /// From 1.
    page: Option<String>,
    per_page: Option<String>,
    /// `true`: every SKU judged now, not the catalog as kept (which follows the change events
    /// and is at most twice `SELLABLE_VERDICT_WATCH_SECONDS` old for what writes none). Costs
    /// a judgement of the whole catalog (seconds for 100,000 SKUs); `false` is the default.
    fresh: Option<String>,
}

/// A page of verdicts, with the whole catalog's figures.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ListingJson<'a> {
    status: String,
    total: i64,
    page: i64,
    pages: i64,
    per_page: i64,
    #[schema(value_type = sellable::Totals)]
    counts: &'a sellable::Totals,
    items: Vec<VerdictJson<'a>>,
}

const STATUSES: [&str; 3] = ["all", "blocked", "sellable"];

fn whole(field: &str, raw: Option<&str>, errs: &mut validate::Errors) -> i64 {
    errs.take(validate::query_int(field, raw, 1))
        .flatten()
        .unwrap_or(0)
}

/// Every SKU's verdict, blocked ones first, a page at a time.
#[utoipa::path(get, path = "/api/v1/sellable", tag = "sellable", operation_id = "list_sellable",
    params(ListQuery),
    responses(
        (status = 200, description = "A page", body = ListingJson),
        (status = 422, description = "`invalid_choice`, `invalid_number`: a filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    lagging: Lagging,
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
    let fresh = q.fresh.as_deref().unwrap_or("false").trim();
    if let Err(e) = validate::choice("fresh", fresh, &["true", "false"]) {
        errs.push(e);
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
        fresh: fresh == "true",
    };
    let th = state.config.sellable_thresholds();
    // A listing may be a moment behind: the read replica's, when there is one.
    let scope = caller.scope();
    let l = crate::lagging_read!(lagging, |db| {
        sellable::listing(&state.db, db, &th, scope, &filter).await
    })?;
    let body = serde_json::to_vec(&ListingJson {
        status,
        total: l.total,
        page: l.page,
        pages: l.pages,
        per_page: l.per_page,
        counts: &l.totals,
        items: l.items.iter().map(VerdictJson::from).collect(),
    })
    .map_err(|e| DomainError::Internal(format!("listing json: {e}")))?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    ))
}
