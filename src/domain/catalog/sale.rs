//! The catalog rules, shared with reserve and book: product online, inside its sale window, priced.

use chrono_tz::Tz;
use serde_json::json;

use super::why::{Fix, Reason, ReasonCode};
use super::{ProductStatus, Sku};
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{ms_to_local, ms_to_rfc3339};
use crate::infra::db::Db;
use crate::messages;

/// How local times are written in reasons.
pub const LOCAL_FMT: &str = "%Y-%m-%d %H:%M";

/// What decides whether a product is on sale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaleState {
    pub status: ProductStatus,
    pub sale_starts_at: Option<i64>,
    pub sale_ends_at: Option<i64>,
    /// The merchant's timezone: sale windows are entered and shown in it.
    pub timezone: String,
}

pub fn tz_of(name: &str) -> Tz {
    name.parse().unwrap_or(chrono_tz::UTC)
}

pub fn local(ms: i64, tz: &str) -> String {
    ms_to_local(ms, tz_of(tz), LOCAL_FMT)
}

/// The catalog's reasons a SKU cannot be sold: product DRAFT or OFFLINE, outside its sale window,
/// no price. Empty when the catalog lets it be sold.
pub fn catalog_reasons(
    state: &SaleState,
    sku_id: i64,
    product_id: i64,
    price: Option<i64>,
    now: i64,
) -> Vec<Reason> {
    // Formatted only for a reason: the hot paths ask this of every SKU they sell, which has none.
    let product_url = || Fix::Product { product_id };
    let mut out = Vec::new();
    match state.status {
        ProductStatus::Online => {}
        ProductStatus::Offline => out.push(Reason::new(
            ReasonCode::ProductOffline,
            messages::why_product_offline(),
            json!({ "status": state.status }),
            product_url(),
        )),
        ProductStatus::Draft => out.push(Reason::new(
            ReasonCode::ProductDraft,
            messages::why_product_draft(),
            json!({ "status": state.status }),
            product_url(),
        )),
    }
    if let Some(starts) = state.sale_starts_at.filter(|s| *s > now) {
        let at = local(starts, &state.timezone);
        out.push(Reason::new(
            ReasonCode::SaleNotStarted,
            messages::why_sale_not_started(&at, &state.timezone),
            json!({ "sale_starts_at": ms_to_rfc3339(starts), "sale_starts_at_local": at, "timezone": state.timezone }),
            product_url(),
        ));
    }
    if let Some(ends) = state.sale_ends_at.filter(|e| *e <= now) {
        let at = local(ends, &state.timezone);
        out.push(Reason::new(
            ReasonCode::SaleEnded,
            messages::why_sale_ended(&at, &state.timezone),
            json!({ "sale_ends_at": ms_to_rfc3339(ends), "sale_ends_at_local": at, "timezone": state.timezone }),
            product_url(),
        ));
    }
    // A price of 0 set on purpose is a free item; only a price never set blocks.
    if price.is_none() {
        out.push(Reason::new(
            ReasonCode::NoPrice,
            messages::why_no_price(),
            json!({ "price": price }),
            Fix::SkuEdit { sku_id },
        ));
    }
    out
}

/// The same rules as a SQL condition on a SKU id column and a `now` parameter, for conditional
/// updates that must refuse what is not on sale (a booking takes its place with it).
pub fn on_sale_sql(sku_col: &str, now_param: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM skus ok JOIN products op ON op.id = ok.product_id WHERE ok.id = {sku_col}
           AND ok.priced_at IS NOT NULL AND op.status = 'ONLINE'
           AND (op.sale_starts_at IS NULL OR op.sale_starts_at <= {now_param})
           AND (op.sale_ends_at IS NULL OR op.sale_ends_at > {now_param}))"
    )
}

pub(crate) async fn sale_state_sql(db: &Db, product_id: i64) -> DomainResult<SaleState> {
    let row: Option<(String, Option<i64>, Option<i64>, String)> = sqlx::query_as(
        "SELECT p.status, p.sale_starts_at, p.sale_ends_at, m.timezone FROM products p
         JOIN merchants m ON m.id = p.merchant_id WHERE p.id = $1",
    )
    .bind(product_id)
    .fetch_optional(&db.pool)
    .await?;
    let (status, sale_starts_at, sale_ends_at, timezone) =
        row.ok_or(crate::domain::DomainError::NotFound("product"))?;
    let status = ProductStatus::try_from(status)
        .map_err(|e| crate::domain::DomainError::Internal(e.to_string()))?;
    Ok(SaleState {
        status,
        sale_starts_at,
        sale_ends_at,
        timezone,
    })
}

/// A product's sale state, kept two seconds like SKUs (`catalog::cache`), so that a flood of
/// refusals reads nothing from SQL; a change on this instance shows at once.
pub async fn sale_state(db: &Db, product_id: i64) -> DomainResult<SaleState> {
    if let Some(s) = crate::domain::catalog::cache::of(db)
        .products
        .get(&product_id)
    {
        return Ok(s);
    }
    let s = sale_state_sql(db, product_id).await?;
    crate::domain::catalog::cache::of(db)
        .products
        .put(product_id, s.clone());
    Ok(s)
}

/// The first catalog reason of a SKU in a sale state, if any.
fn first_reason(state: &SaleState, now: i64, sku: &Sku) -> Option<Reason> {
    catalog_reasons(
        state,
        sku.id,
        sku.product_id,
        sku.priced().then_some(sku.price),
        now,
    )
    .into_iter()
    .next()
}

/// The first catalog reason this SKU cannot be sold now, if any: what reserve refuses with.
pub async fn not_on_sale(db: &Db, sku: &Sku) -> DomainResult<Option<Reason>> {
    Ok(first_reason(
        &sale_state(db, sku.product_id).await?,
        db.now_ms(),
        sku,
    ))
}

/// Like [`not_on_sale`] but read from SQL now (no cache): to explain a refusal SQL just made.
pub async fn not_on_sale_now(db: &Db, sku: &Sku) -> DomainResult<Option<Reason>> {
    Ok(first_reason(
        &sale_state_sql(db, sku.product_id).await?,
        db.now_ms(),
        sku,
    ))
}
