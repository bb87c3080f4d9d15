//! Stock and reservations for order systems.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::Value;

use super::{ApiCaller, ApiJson, ApiPath, OptionalJson};
use crate::domain::reservations::{self, ItemInput, ReserveInput, ReturnInput};
use crate::domain::stock::{self, AdjustInput};
use crate::domain::FieldError;
use crate::web::error::ApiError;
use crate::web::AppState;

pub async fn sku_stock(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = stock::goods_sku(&state.db, caller.merchant_id, &code, "sku")
        .await
        .map_err(super::unknown_sku_is_404("SKU"))?;
    Ok(Json(stock::summary(&state.db, &sku).await?))
}

/// Integers arrive as JSON numbers; anything else is a field error, not a parse failure of the
/// whole body, so the client learns which field is wrong.
fn int(
    field: &str,
    v: &Value,
    errs: &mut crate::domain::validate::Errors,
    parse: fn(&str, &Value) -> Result<i64, FieldError>,
) -> i64 {
    errs.take(parse(field, v)).unwrap_or(0)
}

#[derive(Deserialize)]
pub struct AdjustBody {
    #[serde(default)]
    sku: String,
    #[serde(default)]
    warehouse: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    qty: Value,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    idempotency_key: String,
    to_warehouse: Option<String>,
}

fn count_json(field: &str, v: &Value) -> Result<i64, FieldError> {
    match v.as_i64() {
        Some(q) => stock::counted(field, q),
        None => stock::qty_json(field, v),
    }
}

pub async fn adjust(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<AdjustBody>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = crate::domain::validate::Errors::default();
    let qty = if stock::AdjustKind::parse(body.kind.trim()) == Some(stock::AdjustKind::Count) {
        int("qty", &body.qty, &mut errs, count_json)
    } else {
        int("qty", &body.qty, &mut errs, stock::qty_json)
    };
    if let Err(e) = stock::idempotency_key(&body.idempotency_key) {
        errs.push(e);
    }
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let input = AdjustInput {
        sku: body.sku,
        warehouse: body.warehouse,
        kind: body.kind,
        qty,
        reason: body.reason,
        to_warehouse: body.to_warehouse,
        expected_on_hand: None,
    };
    let actor = caller.actor();
    let summary = stock::adjust(
        &state.db,
        &actor,
        caller.merchant_id,
        input,
        Some(&body.idempotency_key),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(summary)))
}

#[derive(Deserialize)]
pub struct ItemBody {
    #[serde(default)]
    sku: String,
    #[serde(default)]
    qty: Value,
    warehouse: Option<String>,
    /// A place line: the slot to book, how many places, and who comes.
    #[serde(default)]
    slot_id: Value,
    #[serde(default)]
    places: Value,
    #[serde(default)]
    customer: Option<CustomerBody>,
}

#[derive(Deserialize, Default)]
pub struct CustomerBody {
    #[serde(default)]
    name: String,
    #[serde(default)]
    phone: String,
}

/// The place a line books, when it names a slot; its numbers checked (the rest by the domain).
fn place_of(
    i: usize,
    it: &ItemBody,
    errs: &mut crate::domain::validate::Errors,
) -> Option<reservations::PlaceInput> {
    if it.slot_id.is_null() {
        return None;
    }
    let slot_id = match it.slot_id.as_i64() {
        Some(id) => id,
        None => {
            errs.push(FieldError::new(
                &format!("items[{i}].slot_id"),
                "invalid_slot",
                crate::messages::unknown_slot(0),
            ));
            0
        }
    };
    let places = match &it.places {
        Value::Null => 1,
        v => v.as_i64().unwrap_or(0),
    };
    let customer = it.customer.as_ref();
    Some(reservations::PlaceInput {
        slot_id,
        places,
        name: customer.map(|c| c.name.clone()).unwrap_or_default(),
        phone: customer.map(|c| c.phone.clone()).unwrap_or_default(),
    })
}

#[derive(Deserialize)]
pub struct ReserveBody {
    #[serde(default)]
    order_id: String,
    #[serde(default)]
    items: Vec<ItemBody>,
    #[serde(default)]
    ttl_seconds: Value,
    /// The order system's customer, for per-customer limits.
    #[serde(default)]
    customer_id: Option<String>,
}

pub async fn reserve(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<ReserveBody>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = crate::domain::validate::Errors::default();
    let items = body
        .items
        .iter()
        .enumerate()
        .map(|(i, it)| ItemInput {
            sku: it.sku.clone(),
            // The field's path is only formatted for an error.
            // A place line has no quantity of its own: its places say how many.
            qty: if it.slot_id.is_null() {
                stock::qty_json("qty", &it.qty)
                    .map_err(|mut e| {
                        e.field = format!("items[{i}].qty");
                        errs.push(e)
                    })
                    .unwrap_or(0)
            } else {
                1
            },
            warehouse: it.warehouse.clone(),
            place: place_of(i, it, &mut errs),
        })
        .collect();
    let max_ttl = state.config.max_ttl_seconds;
    let ttl_seconds = match &body.ttl_seconds {
        Value::Null => None,
        v => match v.as_i64() {
            Some(t) => Some(t),
            None => {
                errs.push(FieldError::new(
                    "ttl_seconds",
                    "invalid_ttl",
                    crate::messages::bad_ttl(max_ttl),
                ));
                None
            }
        },
    };
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let input = ReserveInput {
        order_id: body.order_id,
        items,
        ttl_seconds,
        customer_id: body.customer_id,
    };
    let view = reservations::reserve(
        &state.db,
        &state.codes,
        &caller.actor(),
        caller.merchant_id,
        input,
        max_ttl,
    )
    .await?;
    Ok((StatusCode::CREATED, NO_STORE, Json(view)))
}

/// Reservations of code SKUs carry the codes' text: no cache (a proxy's, a browser's) may keep it.
const NO_STORE: [(axum::http::HeaderName, &str); 1] =
    [(axum::http::header::CACHE_CONTROL, "no-store")];

pub async fn get_reservation(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(order_id): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    Ok((
        NO_STORE,
        Json(reservations::view(&state.db, &state.codes, caller.merchant_id, &order_id).await?),
    ))
}

#[derive(Deserialize, Default)]
pub struct ConfirmBody {
    #[serde(default)]
    payment_ref: Option<String>,
}

pub async fn confirm(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(order_id): ApiPath<String>,
    OptionalJson(body): OptionalJson<ConfirmBody>,
) -> Result<impl IntoResponse, ApiError> {
    let payment_ref = reservations::payment_ref(body.payment_ref.as_deref())
        .map_err(|e| crate::domain::DomainError::Invalid(vec![e]))?;
    let actor = caller.actor();
    Ok((
        NO_STORE,
        Json(
            reservations::confirm(
                &state.db,
                &state.codes,
                &actor,
                caller.merchant_id,
                &order_id,
                payment_ref.as_deref(),
            )
            .await?,
        ),
    ))
}

#[derive(Deserialize, Default)]
pub struct ReleaseBody {
    #[serde(default)]
    reason: String,
}

pub async fn release(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(order_id): ApiPath<String>,
    OptionalJson(body): OptionalJson<ReleaseBody>,
) -> Result<impl IntoResponse, ApiError> {
    let reason = crate::domain::validate::optional_text(
        "reason",
        &body.reason,
        crate::domain::validate::REASON_MAX,
    )
    .map_err(|e| crate::domain::DomainError::Invalid(vec![e]))?;
    let actor = caller.actor();
    Ok(Json(
        reservations::release(
            &state.db,
            &state.codes,
            &actor,
            caller.merchant_id,
            &order_id,
            &reason,
        )
        .await?,
    ))
}

#[derive(Deserialize)]
pub struct ReturnBody {
    #[serde(default)]
    return_id: String,
    #[serde(default)]
    order_id: String,
    #[serde(default)]
    sku: String,
    #[serde(default)]
    qty: Value,
    #[serde(default)]
    condition: String,
}

pub async fn record_return(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<ReturnBody>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = crate::domain::validate::Errors::default();
    let qty = int("qty", &body.qty, &mut errs, stock::qty_json);
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let input = ReturnInput {
        return_id: body.return_id,
        order_id: body.order_id,
        sku: body.sku,
        qty,
        condition: body.condition,
    };
    let view =
        reservations::record_return(&state.db, &caller.actor(), caller.merchant_id, input).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `GET /api/v1/skus/{code}/ledger`: the SKU's ledger, oldest first, after a cursor.
#[derive(Deserialize, Default)]
pub struct LedgerQuery {
    after: Option<String>,
    limit: Option<String>,
    warehouse: Option<String>,
    kind: Option<String>,
    from: Option<String>,
    to: Option<String>,
    order_id: Option<String>,
}

/// The most rows one ledger call answers, and the default.
pub const LEDGER_LIMIT_MAX: i64 = 500;
const LEDGER_LIMIT: i64 = 100;

pub async fn ledger(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
    super::ApiQuery(q): super::ApiQuery<LedgerQuery>,
) -> Result<impl IntoResponse, ApiError> {
    use crate::domain::validate;
    let sku = stock::goods_sku(&state.db, caller.merchant_id, &code, "sku")
        .await
        .map_err(super::unknown_sku_is_404("SKU"))?;
    let tz = crate::domain::tenants::merchant(&state.db, caller.merchant_id)
        .await?
        .tz();
    let mut errs = validate::Errors::default();
    let (after, limit) = super::feed_page(
        &mut errs,
        q.after.as_deref(),
        q.limit.as_deref(),
        LEDGER_LIMIT,
        LEDGER_LIMIT_MAX,
    );
    let kind = match q.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        None => None,
        Some(k) => errs
            .take(validate::choice("kind", k, &stock::LEDGER_KINDS))
            .map(str::to_string),
    };
    let (from, to) = super::period(&mut errs, q.from.as_deref(), q.to.as_deref(), tz);
    let warehouse_id = match q
        .warehouse
        .as_deref()
        .map(str::trim)
        .filter(|w| !w.is_empty())
    {
        None => None,
        Some(slug) => match stock::warehouse_by_slug(&state.db, caller.merchant_id, slug).await? {
            Some(w) => Some(w.id),
            None => {
                errs.push(FieldError::new(
                    "warehouse",
                    "unknown_warehouse",
                    crate::messages::unknown_warehouse(slug),
                ));
                None
            }
        },
    };
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let filter = crate::domain::ledger::Filter {
        warehouse_id,
        kind,
        from,
        to,
        order_id: q
            .order_id
            .map(|o| o.trim().to_string())
            .filter(|o| !o.is_empty()),
    };
    let rows = crate::domain::ledger::feed(&state.db, sku.id, &filter, after, limit).await?;
    // A full page may have more after it: the last id is where the next call starts.
    let next = (rows.len() as i64 == limit)
        .then(|| rows.last().map(|r| r.id.to_string()))
        .flatten();
    let entries: Vec<Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id, "warehouse": r.warehouse, "kind": r.kind, "qty": r.qty,
                "d_total": r.d_total, "d_locked": r.d_locked, "d_sold": r.d_sold, "d_frozen": r.d_frozen,
                "total_after": r.total_after, "locked_after": r.locked_after, "sold_after": r.sold_after,
                "frozen_after": r.frozen_after, "available_after": r.available_after(),
                "reason": r.reason, "actor": r.actor, "order_id": r.order_id,
                "at": crate::domain::validate::ms_to_rfc3339(r.created_at),
            })
        })
        .collect();
    Ok(Json(
        serde_json::json!({ "sku": sku.code, "entries": entries, "next": next }),
    ))
}
