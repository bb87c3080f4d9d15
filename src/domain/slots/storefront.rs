//! What the public booking page may show: ONLINE services of a store and their open slots.

use chrono::{Duration, NaiveDate, NaiveTime, TimeZone};
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::slots::{self, Slot, SlotFilter};
use crate::domain::tenancy::tenants::Store;
use crate::domain::Scope;
use crate::infra::db::Db;

/// What a customer books: the product ("茶艺课 · Tea ceremony class") and its SKU ("60分钟"), its
/// price in the merchant's currency, what the merchant says about it, and how long its next slot
/// lasts (None when it has none ahead).
#[derive(Debug, Clone, FromRow)]
pub struct Service {
    pub sku_id: i64,
    pub code: String,
    pub sku_name: String,
    pub product_name: String,
    pub description: String,
    pub price: i64,
    pub currency: String,
    pub minutes: Option<i64>,
    /// The most places one booking may take (the party-size picker's top).
    pub max_places: i64,
    /// Customers book at least this many minutes ahead.
    pub min_notice_minutes: i64,
}

const SERVICE_SELECT: &str =
    "SELECT k.id AS sku_id, k.code, k.name AS sku_name, p.name AS product_name,
        p.description, k.price, m.currency, k.max_places, k.min_notice_minutes,
        (SELECT (s.ends_at - s.starts_at) / 60000 FROM slots s
          WHERE s.sku_id = k.id AND s.store_id = $3 AND s.starts_at > $2
          ORDER BY s.starts_at LIMIT 1) AS minutes
     FROM skus k
     JOIN products p ON p.id = k.product_id
     JOIN merchants m ON m.id = k.merchant_id";

/// Services that can be booked in this store now: ONLINE, inside their sale window, priced, with
/// a future slot.
pub async fn services(db: &Db, store: &Store) -> DomainResult<Vec<Service>> {
    let now = db.now_ms();
    Ok(sqlx::query_as(&format!(
        "{SERVICE_SELECT}
         WHERE k.merchant_id = $1 AND k.unit_type = 'slot' AND p.status = 'ONLINE' AND k.priced_at IS NOT NULL
           AND (p.sale_starts_at IS NULL OR p.sale_starts_at <= $2) AND (p.sale_ends_at IS NULL OR p.sale_ends_at > $2)
           AND EXISTS (SELECT 1 FROM slots s WHERE s.sku_id = k.id AND s.store_id = $3 AND s.starts_at > $2)
         ORDER BY p.name, k.code"
    ))
    .bind(store.merchant_id)
    .bind(now)
    .bind(store.id)
    .fetch_all(&db.pool)
    .await?)
}

/// The service a slot or a booking of this store is for, whatever its state now (a booking made
/// before the product went offline still says what was booked).
pub async fn service(db: &Db, store: &Store, sku_id: i64) -> DomainResult<Service> {
    sqlx::query_as(&format!(
        "{SERVICE_SELECT} WHERE k.merchant_id = $1 AND k.id = $4"
    ))
    .bind(store.merchant_id)
    .bind(db.now_ms())
    .bind(store.id)
    .bind(sku_id)
    .fetch_optional(&db.pool)
    .await?
    .ok_or(crate::domain::DomainError::NotFound("service"))
}

/// [start, end) of a local day in UTC milliseconds, daylight-saving safe.
pub fn day_bounds(store: &Store, day: NaiveDate) -> (i64, i64) {
    let tz = store.tz();
    let at = |d: NaiveDate| {
        tz.from_local_datetime(&d.and_time(NaiveTime::MIN))
            .earliest()
            .map(|t| t.timestamp_millis())
    };
    let start = at(day).unwrap_or(0);
    let end = at(day + Duration::days(1)).unwrap_or(start + 86_400_000);
    (start, end)
}

pub fn today(db: &Db, store: &Store) -> NaiveDate {
    db.clock.today(store.tz())
}

/// The slots of one service on one local day that have not started (open, closed and full alike:
/// the page says why a slot cannot be taken).
pub async fn day_slots(
    db: &Db,
    store: &Store,
    sku_id: i64,
    day: NaiveDate,
) -> DomainResult<Vec<Slot>> {
    let (from, to) = day_bounds(store, day);
    let filter = SlotFilter {
        store_id: Some(store.id),
        sku_id: Some(sku_id),
        staff_id: None,
        sku_ids: Vec::new(),
        from: from.max(db.now_ms()),
        to,
        only_open_future: false,
    };
    slots::list(db, Scope::Merchant(store.merchant_id), &filter).await
}

/// The local dates in [from, from + days) on which the service has a time a customer can take
/// now: open, not started, not frozen, with a place left. The month view greys out the others.
pub async fn days_with_room(
    db: &Db,
    store: &Store,
    sku_id: i64,
    from: NaiveDate,
    days: i64,
) -> DomainResult<std::collections::HashSet<NaiveDate>> {
    let (start, _) = day_bounds(store, from);
    let (end, _) = day_bounds(store, from + Duration::days(days));
    let filter = SlotFilter {
        store_id: Some(store.id),
        sku_id: Some(sku_id),
        staff_id: None,
        sku_ids: Vec::new(),
        from: start.max(db.now_ms()),
        to: end,
        only_open_future: true,
    };
    let tz = store.tz();
    Ok(slots::list(db, Scope::Merchant(store.merchant_id), &filter)
        .await?
        .iter()
        .filter(|s| s.remaining() > 0 && s.frozen_finding_id.is_none())
        .filter_map(|s| {
            chrono::DateTime::from_timestamp_millis(s.starts_at)
                .map(|t| t.with_timezone(&tz).date_naive())
        })
        .collect())
}

/// A slot of this store, for the public page (another store's slot is not found).
pub async fn slot(db: &Db, store: &Store, slot_id: i64) -> DomainResult<Slot> {
    let s = slots::get(db, Scope::Merchant(store.merchant_id), slot_id).await?;
    if s.store_id != store.id {
        return Err(crate::domain::DomainError::NotFound("slot"));
    }
    Ok(s)
}
