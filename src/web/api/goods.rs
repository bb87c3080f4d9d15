//! Stock and reservations for order systems.

use crate::web::kit::lagging::Lagging;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::orders::{self, ItemInput, ReserveInput, ReturnInput};
use crate::domain::stock::report;
use crate::domain::stock::{self, AdjustInput};
use crate::domain::FieldError;
use crate::web::api::{ApiCaller, ApiJson, ApiPath, OptionalJson};
use crate::web::kit::error::ApiError;
use crate::web::AppState;

/// A goods SKU's stock, in all and per warehouse.
#[utoipa::path(get, path = "/api/v1/skus/{code}/stock", tag = "stock",
    params(("code" = String, Path, description = "The SKU's code")),
    responses(
        (status = 200, description = "Its figures", body = stock::StockSummary),
        (status = 422, description = "`wrong_sku_kind`: the SKU is not goods", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn sku_stock(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = stock::goods_sku(&state.db, caller.merchant_id, &code, "sku")
        .await
        .map_err(crate::web::api::unknown_sku_is_404("SKU"))?;
    Ok(Json(stock::summary(&state.db, &sku).await?))
}

/// The units a goods SKU holds back from sale, one hold at a time (oldest first): why, by whom,
/// and the day each is due for release. Their `remaining` add up to the SKU's `frozen` units.
#[utoipa::path(get, path = "/api/v1/skus/{code}/holds", tag = "stock",
    params(("code" = String, Path, description = "The SKU's code")),
    responses(
        (status = 200, description = "Its open holds", body = Vec<crate::domain::stock::holds::Hold>),
        (status = 422, description = "`wrong_sku_kind`: the SKU is not goods", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn sku_holds(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = stock::goods_sku(&state.db, caller.merchant_id, &code, "sku")
        .await
        .map_err(crate::web::api::unknown_sku_is_404("SKU"))?;
    Ok(Json(
        crate::domain::stock::holds::open(&state.db, sku.id).await?,
    ))
}

/// Integers arrive as JSON numbers; anything else is a field error, not a parse failure of the
/// whole body, so the client learns which field is wrong.
fn int(
    field: &str,
    v: &Value,
    errs: &mut crate::domain::kernel::validate::Errors,
    parse: fn(&str, &Value) -> Result<i64, FieldError>,
) -> i64 {
    errs.take(parse(field, v)).unwrap_or(0)
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"sku": "TEA-250G", "warehouse": "main", "kind": "RECEIVE", "qty": 40,
    "reason": "delivery 1182", "idempotency_key": "delivery-1182"}))]
pub struct AdjustBody {
    #[serde(default)]
    sku: String,
    /// The warehouse's slug.
    #[serde(default)]
    warehouse: String,
    /// `RECEIVE`, `WRITE_OFF`, `FREEZE`, `UNFREEZE`, `COUNT` or `TRANSFER`.
    #[serde(default)]
    kind: String,
    /// Units (for `COUNT`, the units counted on hand).
    #[serde(default)]
    #[schema(value_type = i64)]
    qty: Value,
    /// The note: free text. Required unless `reason_code` says why (and for `other`).
    #[serde(default)]
    reason: String,
    /// Why, from the fixed list: `received`, `return_restock`, `correction`, `count`, `damaged`,
    /// `theft_loss`, `promotion_donation`, `qc_hold` or `other`; it must fit the kind
    /// (`damaged` writes off or holds, it does not receive).
    #[serde(default)]
    #[schema(value_type = Option<crate::domain::stock::reasons::AdjustReason>)]
    reason_code: String,
    #[serde(default)]
    idempotency_key: String,
    to_warehouse: Option<String>,
    /// `FREEZE`: the day (YYYY-MM-DD, the merchant's calendar, today or later) the hold is due
    /// for release; a reminder on the stock page and report, not an automatic release.
    #[serde(default)]
    release_on: String,
    /// `UNFREEZE`: the hold to release from (`GET /api/v1/skus/{code}/holds`); without it the
    /// oldest holds of the warehouse are released first.
    hold_id: Option<i64>,
}

fn count_json(field: &str, v: &Value) -> Result<i64, FieldError> {
    match v.as_i64() {
        Some(q) => stock::counted(field, q),
        None => stock::qty_json(field, v),
    }
}

/// Changes a SKU's stock in one warehouse (or moves it to another), with its ledger row.
/// Idempotent by `idempotency_key`: a repeat answers what the first call did.
#[utoipa::path(post, path = "/api/v1/stock/adjustments", tag = "stock",
    request_body = AdjustBody,
    responses(
        (status = 201, description = "The SKU's stock after the change", body = stock::StockSummary),
        (status = 409, description = "`insufficient_stock`, `insufficient_frozen`, `insufficient_held`, `count_below_held`, `stock_changed`, `idempotency_conflict`: the stock does not allow it, or the key was used for another change", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_qty`, `invalid_choice`, `unknown_sku`, `unknown_warehouse`, `wrong_sku_kind`, `invalid_idempotency_key`, `too_long`, `same_warehouse`, `invalid_reason_code`, `reason_code_mismatch`, `invalid_date`, `period_in_past`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn adjust(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<AdjustBody>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
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
        reason_code: body.reason_code,
        to_warehouse: body.to_warehouse,
        expected_on_hand: None,
        release_on: body.release_on,
        hold_id: body.hold_id,
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

#[derive(Deserialize, utoipa::ToSchema)]
pub struct ItemBody {
    #[serde(default)]
    sku: String,
    /// Goods and vouchers: how many.
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    qty: Value,
    /// Goods: hold in this warehouse (its slug) rather than the first by priority with the units.
    warehouse: Option<String>,
    /// A place line: the slot to book, how many places, and who comes.
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    slot_id: Value,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    places: Value,
    #[serde(default)]
    customer: Option<CustomerBody>,
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
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
    errs: &mut crate::domain::kernel::validate::Errors,
) -> Option<orders::PlaceInput> {
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
    Some(orders::PlaceInput {
        slot_id,
        places,
        name: customer.map(|c| c.name.clone()).unwrap_or_default(),
        phone: customer.map(|c| c.phone.clone()).unwrap_or_default(),
    })
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"order_id": "SO-20261201-0042", "ttl_seconds": 900,
    "items": [{"sku": "TEA-250G", "qty": 2}]}))]
pub struct ReserveBody {
    /// The order system's id; a repeat with the same lines answers the same hold.
    #[serde(default)]
    order_id: String,
    #[serde(default)]
    items: Vec<ItemBody>,
    /// How long the hold lasts before it expires back.
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    ttl_seconds: Value,
    /// The order system's customer, for per-customer limits.
    #[serde(default)]
    customer_id: Option<String>,
}

/// Holds an order's lines, all or none: goods lock units, vouchers hold codes, places book.
#[utoipa::path(post, path = "/api/v1/reservations", tag = "orders",
    request_body = ReserveBody,
    responses(
        (status = 201, description = "The hold (a repeat of the same order answers it again)", body = orders::ReservationView),
        (status = 409, description = "`insufficient_stock` (with `sku`, `available`), `slot_full`, `slot_closed`, `slot_started`, `slot_frozen`, `already_booked`, `order_conflict`, `reservation_expired`, `reservation_released`, `reservation_confirmed`, `limit_exceeded`, `not_on_sale`: nothing is held", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_qty`, `invalid_ttl`, `invalid_order_id`, `invalid_customer_id`, `unknown_sku`, `unknown_warehouse`, `warehouse_not_applicable`, `unknown_slot`, `invalid_slot`, `slot_not_of_sku`, `invalid_places`, `duplicate_sku`, `duplicate_slot`, `too_many`, `sku_frozen`, `wrong_sku_kind`, `not_on_sale`, `invalid_name`, `invalid_phone`, `too_long`: a line or field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn reserve(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<ReserveBody>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
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
    let max_ttl = state.config.serve.max_ttl_seconds;
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
    let view = orders::reserve(
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

/// An order's hold, with the codes of a paid voucher order.
#[utoipa::path(get, path = "/api/v1/reservations/{order_id}", tag = "orders",
    params(("order_id" = String, Path, description = "The order system's id")),
    responses((status = 200, description = "The hold", body = orders::ReservationView)))]
pub async fn get_reservation(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(order_id): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    Ok((
        NO_STORE,
        Json(orders::view(&state.db, &state.codes, caller.merchant_id, &order_id).await?),
    ))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({"payment_ref": "wx-4200001234"}))]
pub struct ConfirmBody {
    #[serde(default)]
    payment_ref: Option<String>,
}

/// The order is paid: its held lines are sold (a body is optional). After expiry every line is
/// taken again, or the payment becomes a "paid, not held" exception.
#[utoipa::path(post, path = "/api/v1/reservations/{order_id}/confirm", tag = "orders",
    params(("order_id" = String, Path, description = "The order system's id")),
    request_body(content = Option<ConfirmBody>, description = "Optional"),
    responses(
        (status = 200, description = "The order, CONFIRMED", body = orders::ReservationView),
        (status = 409, description = "`reservation_released`, `reservation_expired` (with `exception_id`: paid, not held), `insufficient_stock` (with `exception_id`, `shortfall`), `payment_conflict`: not confirmed", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`invalid_payment_ref`, `too_long`: the payment reference is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn confirm(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(order_id): ApiPath<String>,
    OptionalJson(body): OptionalJson<ConfirmBody>,
) -> Result<impl IntoResponse, ApiError> {
    let payment_ref = orders::payment_ref(body.payment_ref.as_deref())
        .map_err(|e| crate::domain::DomainError::Invalid(vec![e]))?;
    let actor = caller.actor();
    Ok((
        NO_STORE,
        Json(
            orders::confirm(
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

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({"reason": "customer cancelled"}))]
pub struct ReleaseBody {
    #[serde(default)]
    reason: String,
}

/// The order is cancelled: its held lines go back on sale (a body is optional).
#[utoipa::path(post, path = "/api/v1/reservations/{order_id}/release", tag = "orders",
    params(("order_id" = String, Path, description = "The order system's id")),
    request_body(content = Option<ReleaseBody>, description = "Optional"),
    responses(
        (status = 200, description = "The order, RELEASED (or as it already was)", body = orders::ReservationView),
        (status = 409, description = "`reservation_confirmed`: a paid order is not released (returns are their own call)", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`too_long`: the reason is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn release(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(order_id): ApiPath<String>,
    OptionalJson(body): OptionalJson<ReleaseBody>,
) -> Result<impl IntoResponse, ApiError> {
    let reason = crate::domain::kernel::validate::optional_text(
        "reason",
        &body.reason,
        crate::domain::kernel::validate::REASON_MAX,
    )
    .map_err(|e| crate::domain::DomainError::Invalid(vec![e]))?;
    let actor = caller.actor();
    Ok(Json(
        orders::release(
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

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"return_id": "RT-77", "order_id": "SO-20261201-0042", "sku": "TEA-250G",
    "qty": 1, "condition": "RESELLABLE"}))]
pub struct ReturnBody {
    /// Idempotency: a repeat answers the first.
    #[serde(default)]
    return_id: String,
    #[serde(default)]
    order_id: String,
    #[serde(default)]
    sku: String,
    #[serde(default)]
    #[schema(value_type = i64)]
    qty: Value,
    /// `RESELLABLE` (back into stock) or `DAMAGED` (recorded only).
    #[serde(default)]
    condition: String,
}

/// Goods of a paid order came back.
#[utoipa::path(post, path = "/api/v1/returns", tag = "orders",
    request_body = ReturnBody,
    responses(
        (status = 201, description = "The return", body = orders::ReturnView),
        (status = 409, description = "`order_not_confirmed`, `return_exceeds_order`, `return_conflict`, `idempotency_conflict`, `code_not_returnable`: not recorded", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_qty`, `invalid_choice`, `sku_not_in_order`, `code_not_returnable`, `too_long`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn record_return(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<ReturnBody>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
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
    let view = orders::record_return(&state.db, &caller.actor(), caller.merchant_id, input).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `GET /api/v1/skus/{code}/ledger`: the SKU's ledger, oldest first, after a cursor.
#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LedgerQuery {
    /// The `next` of the previous page; left out: from the first row.
    after: Option<String>,
    /// Rows per page, at most 500 (100 when left out).
    limit: Option<String>,
    /// A warehouse's slug.
    warehouse: Option<String>,
    /// A ledger kind (`RECEIVE`, `RESERVE`, `CONFIRM`, …).
    kind: Option<String>,
    /// An RFC 3339 time or a date (the start of that day).
    from: Option<String>,
    /// An RFC 3339 time or a date (the end of that day).
    to: Option<String>,
    order_id: Option<String>,
    /// Only adjustments given this reason code (`damaged`, `qc_hold`, …).
    reason_code: Option<String>,
}

/// A ledger row: one change to one warehouse's balance, with the figures after it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct LedgerEntryJson {
    id: i64,
    warehouse: String,
    kind: String,
    qty: i64,
    d_total: i64,
    d_locked: i64,
    d_sold: i64,
    d_frozen: i64,
    total_after: i64,
    locked_after: i64,
    sold_after: i64,
    frozen_after: i64,
    available_after: i64,
    reason: String,
    actor: String,
    order_id: Option<String>,
    at: String,
    /// Why, from the fixed list, when the adjustment said.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason_code: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct LedgerJson {
    sku: String,
    entries: Vec<LedgerEntryJson>,
    /// Where the next page starts (`after=`); `null` at the end.
    next: Option<String>,
}

/// The most rows one ledger call answers, and the default.
pub const LEDGER_LIMIT_MAX: i64 = 500;
const LEDGER_LIMIT: i64 = 100;

/// A goods SKU's ledger, oldest first, a page at a time.
#[utoipa::path(get, path = "/api/v1/skus/{code}/ledger", tag = "stock",
    params(("code" = String, Path, description = "The SKU's code"), LedgerQuery),
    responses(
        (status = 200, description = "A page of rows", body = LedgerJson),
        (status = 422, description = "`wrong_sku_kind`, `invalid_number`, `invalid_choice`, `invalid_time`, `unknown_warehouse`: a filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn ledger(
    State(state): State<AppState>,
    lagging: Lagging,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
    crate::web::api::ApiQuery(q): crate::web::api::ApiQuery<LedgerQuery>,
) -> Result<impl IntoResponse, ApiError> {
    use crate::domain::kernel::validate;
    let sku = stock::goods_sku(&state.db, caller.merchant_id, &code, "sku")
        .await
        .map_err(crate::web::api::unknown_sku_is_404("SKU"))?;
    let tz = crate::domain::tenancy::tenants::merchant(&state.db, caller.merchant_id)
        .await?
        .tz();
    let mut errs = validate::Errors::default();
    let (after, limit) = crate::web::api::feed_page(
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
    let (from, to) = crate::web::api::period(&mut errs, q.from.as_deref(), q.to.as_deref(), tz);
    let reason_code = match q
        .reason_code
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        None => None,
        Some(c) => errs
            .take(validate::choice(
                "reason_code",
                c,
                crate::domain::stock::reasons::AdjustReason::NAMES,
            ))
            .map(str::to_string),
    };
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
    let filter = crate::domain::stock::ledger::Filter {
        warehouse_id,
        kind,
        from,
        to,
        order_id: q
            .order_id
            .map(|o| o.trim().to_string())
            .filter(|o| !o.is_empty()),
        reason_code,
    };
    // The ledger may be a moment behind: the read replica's, when there is one.
    let rows = crate::lagging_read!(lagging, |db| {
        crate::domain::stock::ledger::feed(db, sku.id, &filter, after, limit).await
    })?;
    // A full page may have more after it: the last id is where the next call starts.
    let next = (rows.len() as i64 == limit)
        .then(|| rows.last().map(|r| r.id.to_string()))
        .flatten();
    let entries = rows
        .into_iter()
        .map(|r| LedgerEntryJson {
            available_after: r.available_after(),
            at: crate::domain::kernel::validate::ms_to_rfc3339(r.created_at),
            id: r.id,
            warehouse: r.warehouse,
            kind: r.kind,
            qty: r.qty,
            d_total: r.d_total,
            d_locked: r.d_locked,
            d_sold: r.d_sold,
            d_frozen: r.d_frozen,
            total_after: r.total_after,
            locked_after: r.locked_after,
            sold_after: r.sold_after,
            frozen_after: r.frozen_after,
            reason: r.reason,
            actor: r.actor,
            order_id: r.order_id,
            reason_code: r.reason_code,
        })
        .collect();
    Ok(Json(LedgerJson {
        sku: sku.code,
        entries,
        next,
    }))
}

/// `GET /api/v1/stock/report`: the merchant-wide stock report's filters and order.
#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    /// Only this warehouse's stock and sales (its slug).
    warehouse: Option<String>,
    /// `out_of_stock`, `low`, `ok` or `unlimited`.
    status: Option<String>,
    /// A piece of the SKU's code or name, or of its product's name.
    q: Option<String>,
    /// `sku` (the default), `name`, `on_hand`, `available`, `committed`, `unavailable`,
    /// `sold_7d`, `sold_30d`, `days_of_cover` or `value_at_cost`.
    sort: Option<String>,
    /// `asc` (the default) or `desc`.
    order: Option<String>,
}

/// The stock report: every goods SKU's line, and the sums over them.
#[derive(Serialize, utoipa::ToSchema)]
pub struct StockReportJson {
    rows: Vec<report::StockReportRow>,
    totals: report::StockTotals,
}

/// Every goods SKU of the merchant with on hand, available, committed, unavailable, sold over 7
/// and 30 days, days of cover, its low-stock line, its status and its value at cost: the back
/// office's stock report, unpaginated.
#[utoipa::path(get, path = "/api/v1/stock/report", tag = "stock",
    params(ReportQuery),
    responses(
        (status = 200, description = "The report", body = StockReportJson),
        (status = 422, description = "`invalid_choice`, `unknown_warehouse`: a filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn report(
    State(state): State<AppState>,
    lagging: Lagging,
    caller: ApiCaller,
    crate::web::api::ApiQuery(q): crate::web::api::ApiQuery<ReportQuery>,
) -> Result<impl IntoResponse, ApiError> {
    use crate::domain::kernel::validate;
    let mut errs = validate::Errors::default();
    let given = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let warehouse_id = match given(&q.warehouse) {
        None => None,
        Some(slug) => match stock::warehouse_by_slug(&state.db, caller.merchant_id, &slug).await? {
            Some(w) => Some(w.id),
            None => {
                errs.push(FieldError::new(
                    "warehouse",
                    "unknown_warehouse",
                    crate::messages::unknown_warehouse(&slug),
                ));
                None
            }
        },
    };
    let status = given(&q.status).and_then(|s| {
        errs.take(validate::choice("status", &s, report::StockStatus::NAMES))
            .and_then(report::StockStatus::parse)
    });
    let sort = given(&q.sort)
        .and_then(|s| {
            errs.take(validate::choice("sort", &s, report::SortKey::NAMES))
                .and_then(report::SortKey::parse)
        })
        .unwrap_or(report::SortKey::Sku);
    let desc = given(&q.order)
        .and_then(|o| errs.take(validate::choice("order", &o, &["asc", "desc"])))
        == Some("desc");
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let merchant = crate::domain::tenancy::tenants::merchant(&state.db, caller.merchant_id).await?;
    let today = state
        .db
        .clock
        .now()
        .with_timezone(&merchant.tz())
        .format("%Y-%m-%d")
        .to_string();
    let filter = report::Filter {
        warehouse_id,
        status,
        search: q.q.unwrap_or_default(),
    };
    let selection = report::Selection {
        merchant_id: caller.merchant_id,
        filter: &filter,
        default_low: state.config.sellable_thresholds().low_stock,
        today: &today,
        now: state.db.now_ms(),
    };
    // A report may be a moment behind: the read replica's, when there is one.
    let order = report::Order { key: sort, desc };
    let (totals, rows) = crate::lagging_read!(lagging, |db| {
        async {
            let totals = report::totals(db, &selection).await?;
            let rows = report::rows(db, &selection, order, None).await?;
            Ok::<_, crate::domain::DomainError>((totals, rows))
        }
        .await
    })?;
    Ok(Json(StockReportJson { rows, totals }))
}
