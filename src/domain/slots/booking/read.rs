//! Reading bookings: a slot's, a day's, the feed an order system resumes, the free places near a
//! time, today's count.

#[allow(unused_imports)]
use super::*;

/// Every booking of one slot (cancelled ones too), oldest first, for the slot's page.
pub async fn of_slot(db: &Db, merchant_id: MerchantId, slot_id: i64) -> DomainResult<Vec<Booking>> {
    Ok(sqlx::query_as(&format!(
        "{BOOKING_SELECT} WHERE merchant_id = $1 AND slot_id = $2 ORDER BY id"
    ))
    .bind(merchant_id)
    .bind(slot_id)
    .fetch_all(&db.pool)
    .await?)
}

/// Bookings of a store on one local day, for the day list.
#[derive(Debug, Clone, FromRow)]
pub struct DayBooking {
    pub reference: String,
    pub customer_name: String,
    pub customer_phone: String,
    #[sqlx(try_from = "String")]
    pub status: BookingStatus,
    pub slot_id: i64,
    pub starts_at: i64,
    pub sku_code: String,
    pub staff_name: Option<String>,
    pub places: i64,
    /// The slot's status: a booking in a closed slot is one to call.
    #[sqlx(try_from = "String")]
    pub slot_status: crate::domain::slots::SlotStatus,
    /// Who marked it attended or no-show, by name (`auto`: the automatic no-show job).
    pub marked_by: Option<String>,
    /// When staff reached the customer about a closed slot (the to-call list).
    pub contacted_at: Option<i64>,
    /// A place held for a waiting customer, not yet accepted: until then.
    pub hold_until: Option<i64>,
    /// How it reached the store; for a staff booking, who took it (by name).
    #[sqlx(try_from = "String")]
    pub channel: super::Channel,
    pub taken_by: Option<String>,
}

/// A staff booking's taker by name (their e-mail when they gave none), for a booking `b`.
const TAKEN_BY: &str = "(SELECT CASE WHEN u.display_name <> '' THEN u.display_name ELSE u.email END FROM users u WHERE u.id = b.taken_by) AS taken_by";

pub async fn day_list(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
    from: i64,
    to: i64,
) -> DomainResult<Vec<DayBooking>> {
    Ok(sqlx::query_as(&format!(
        "SELECT b.reference, b.customer_name, b.customer_phone, b.status, b.slot_id, s.starts_at, k.code AS sku_code, st.name AS staff_name, b.places, s.status AS slot_status, COALESCE((SELECT CASE WHEN u.display_name <> '' THEN u.display_name ELSE u.email END FROM users u WHERE 'user:' || u.email = b.marked_by), b.marked_by) AS marked_by, b.contacted_at, b.hold_until, b.channel,
                {TAKEN_BY}
         FROM bookings b JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id LEFT JOIN staff st ON st.id = s.staff_id
         WHERE b.merchant_id = $1 AND s.store_id = $2 AND s.starts_at >= $3 AND s.starts_at < $4
         ORDER BY s.starts_at, b.id"
    ))
    .bind(merchant_id)
    .bind(store_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await?)
}

/// The nearest open slots of the same service and store with room for `places`, for a refusal
/// page.
pub async fn nearest_free(
    db: &Db,
    slot: &Slot,
    places: i64,
    limit: i64,
) -> DomainResult<Vec<Slot>> {
    free_near(db, slot, places, limit, None).await
}

/// Like [`nearest_free`], only slots starting within `[from, to)` (one day the clerk picked).
pub async fn free_between(
    db: &Db,
    slot: &Slot,
    places: i64,
    limit: i64,
    (from, to): (i64, i64),
) -> DomainResult<Vec<Slot>> {
    free_near(db, slot, places, limit, Some((from, to))).await
}

pub(super) async fn free_near(
    db: &Db,
    slot: &Slot,
    places: i64,
    limit: i64,
    within: Option<(i64, i64)>,
) -> DomainResult<Vec<Slot>> {
    let (from, to) = within.unwrap_or((i64::MIN, i64::MAX));
    let sql = format!(
        "{} WHERE sl.sku_id = $1 AND sl.store_id = $2 AND sl.status = 'OPEN' AND sl.frozen_finding_id IS NULL AND sl.booked + $7 <= sl.capacity AND sl.starts_at > $3 AND sl.id <> $4
           AND sl.starts_at >= $8 AND sl.starts_at < $9
         ORDER BY ABS(sl.starts_at - $5), sl.starts_at LIMIT $6",
        slots::SLOT_SELECT
    );
    Ok(sqlx::query_as(&sql)
        .bind(slot.sku_id)
        .bind(slot.store_id)
        .bind(db.now_ms())
        .bind(slot.id)
        .bind(slot.starts_at)
        .bind(limit)
        .bind(places)
        .bind(from)
        .bind(to)
        .fetch_all(&db.pool)
        .await?)
}

/// Bookings (not cancelled) in slots starting today, each store's day in its own timezone.
pub async fn today_count(db: &Db, scope: Scope) -> DomainResult<i64> {
    let mut n = 0;
    for store in crate::domain::tenancy::tenants::stores(db, scope).await? {
        let (from, to) = crate::domain::slots::storefront::day_bounds(
            &store,
            crate::domain::slots::storefront::today(db, &store),
        );
        n += sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM bookings b JOIN slots sl ON sl.id = b.slot_id
             WHERE sl.store_id = $1 AND sl.starts_at >= $2 AND sl.starts_at < $3 AND b.status <> 'CANCELLED'",
        )
        .bind(store.id)
        .bind(from)
        .bind(to)
        .fetch_one(&db.pool)
        .await?;
    }
    Ok(n)
}

/// Which bookings a listing shows. `None` means any.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub store_id: Option<StoreId>,
    pub slot_id: Option<i64>,
    pub status: Option<BookingStatus>,
    /// Slots starting at or after this instant (Unix ms).
    pub from: Option<i64>,
    /// Slots starting before this instant (Unix ms).
    pub to: Option<i64>,
}

/// A booking with its slot's service and times, as listings show it.
#[derive(Debug, Clone, FromRow)]
pub struct Listed {
    #[sqlx(flatten)]
    pub booking: Booking,
    pub sku_code: String,
    pub starts_at: i64,
    pub ends_at: i64,
}

/// A merchant's bookings after a cursor (a booking id; 0 for the first), in the order they were
/// made, at most `limit`: a feed an order system resumes from the last id it read.
pub async fn list(
    db: &Db,
    merchant_id: MerchantId,
    f: &ListFilter,
    after: i64,
    limit: i64,
) -> DomainResult<Vec<Listed>> {
    Ok(sqlx::query_as(&format!(
        "SELECT b.id, b.merchant_id, b.slot_id, b.reference, b.customer_name, b.customer_phone, b.customer_key,
            b.status, b.cancel_reason, b.created_at,
            (SELECT r.order_id FROM reservations r WHERE r.id = b.reservation_id) AS order_id, b.places, b.moved_from_slot_id,
            CAST(b.from_waitlist AS BIGINT) AS from_waitlist, b.hold_until, b.channel,
            {TAKEN_BY},
            k.code AS sku_code, s.starts_at, s.ends_at
         FROM bookings b JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id
         WHERE b.merchant_id = $1 AND ($2 IS NULL OR s.store_id = $2) AND ($3 IS NULL OR b.slot_id = $3)
           AND ($4 = '' OR b.status = $4) AND ($5 IS NULL OR s.starts_at >= $5) AND ($6 IS NULL OR s.starts_at < $6)
           AND b.id > $7
         ORDER BY b.id LIMIT $8"
    ))
    .bind(merchant_id)
    .bind(f.store_id.map(|s| s.0))
    .bind(f.slot_id)
    .bind(f.status.map_or("", |s| s.as_str()))
    .bind(f.from)
    .bind(f.to)
    .bind(after)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}
