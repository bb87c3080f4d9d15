//! Slots: capacity, booked count and status of one service at one time. Closing and reopening,
//! capacity edits (never below booked), one-off slots, closures for leave, and listings.

pub mod booking;
pub mod cache;
pub mod closures;
pub mod gate;
pub mod no_show;
pub mod schedule;
pub mod staff;
pub mod storefront;
pub mod to_call;
pub mod today;
pub mod waitlist;

use crate::domain::{MerchantId, StoreId};
use serde::Serialize;
use sqlx::{Any, FromRow, Transaction};

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, ms_to_rfc3339, REASON_MAX};
use crate::domain::slots::staff::Staff;
use crate::domain::tenancy::tenants::Store;
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::infra::db::Db;
use crate::messages;

pub use crate::domain::catalog::CAPACITY_MAX;

/// A slot's (or a schedule rule's) capacity: 1 to [`CAPACITY_MAX`] places.
pub fn capacity(field: &str, c: i64) -> Result<i64, FieldError> {
    if (1..=CAPACITY_MAX).contains(&c) {
        Ok(c)
    } else {
        Err(FieldError::new(
            field,
            "invalid_capacity",
            messages::bad_capacity(CAPACITY_MAX),
        ))
    }
}

crate::text_enum! {
    /// A slot is bookable while OPEN (and before it starts); staff or a closure close it.
    pub enum SlotStatus { Open = "OPEN", Closed = "CLOSED" }
}

#[derive(Debug, Clone, FromRow)]
pub struct Slot {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub sku_id: i64,
    pub sku_code: String,
    pub sku_name: String,
    pub store_id: StoreId,
    pub staff_id: Option<i64>,
    pub staff_name: Option<String>,
    pub starts_at: i64,
    pub ends_at: i64,
    pub capacity: i64,
    pub booked: i64,
    #[sqlx(try_from = "String")]
    pub status: SlotStatus,
    pub closed_reason: Option<String>,
    pub closure_id: Option<i64>,
    /// What customers may read about the closure that closed the slot (never its reason).
    pub public_note: Option<String>,
    /// Set while reconciliation has frozen the slot: the finding that says why.
    pub frozen_finding_id: Option<i64>,
}

impl Slot {
    pub fn remaining(&self) -> i64 {
        (self.capacity - self.booked).max(0)
    }
    pub fn started(&self, now: i64) -> bool {
        self.starts_at <= now
    }
    /// How full the slot is at `now`.
    pub fn fill(&self, now: i64) -> Fill {
        if self.status == SlotStatus::Closed {
            Fill::Closed
        } else if self.started(now) {
            Fill::Past
        } else if self.booked >= self.capacity {
            Fill::Full
        } else if self.booked * 4 >= self.capacity * 3 {
            Fill::NearlyFull
        } else {
            Fill::Free
        }
    }
}

/// How full a slot is: the week grid colours by it. Its name (`nearly_full`) is what pages
/// show it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    Free,
    /// Three quarters booked or more.
    NearlyFull,
    Full,
    Closed,
    /// Started or over: no longer bookable, whatever its count.
    Past,
}

impl std::fmt::Display for Fill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fill::Free => "free",
            Fill::NearlyFull => "nearly_full",
            Fill::Full => "full",
            Fill::Closed => "closed",
            Fill::Past => "past",
        })
    }
}

pub const SLOT_SELECT: &str = "SELECT sl.id, sl.merchant_id, sl.sku_id, k.code AS sku_code, k.name AS sku_name, sl.store_id, sl.staff_id,
        st.name AS staff_name, sl.starts_at, sl.ends_at, sl.capacity, sl.booked, sl.status, sl.closed_reason, sl.closure_id,
        sl.frozen_finding_id, cl.public_note
    FROM slots sl JOIN skus k ON k.id = sl.sku_id LEFT JOIN staff st ON st.id = sl.staff_id
    LEFT JOIN closures cl ON cl.id = sl.closure_id";

/// A slot as a booking needs it before it books: the slot, the phone region of its store and its
/// service's party size, in one read (a booking on a hot slot pays for every read it makes).
#[derive(Debug, Clone, FromRow)]
pub struct BookingSlot {
    #[sqlx(flatten)]
    pub slot: Slot,
    store_country: Option<String>,
    store_timezone: String,
    /// The most places one booking of the service may take.
    pub max_places: i64,
}

impl BookingSlot {
    /// Where the store's phone numbers belong (see `Store::phone_region`).
    pub fn phone_region(&self) -> Option<phonenumber::country::Id> {
        crate::domain::tenancy::tenants::phone_region_of(
            self.store_country.as_deref(),
            &self.store_timezone,
        )
    }
}

/// One of the merchant's slots, read for a booking; None for an unknown slot.
pub async fn for_booking(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
) -> DomainResult<Option<BookingSlot>> {
    Ok(sqlx::query_as(&format!(
        "SELECT b.*, so.country AS store_country, so.timezone AS store_timezone, k.max_places
         FROM ({SLOT_SELECT} WHERE sl.id = $1 AND sl.merchant_id = $2) b
         JOIN stores so ON so.id = b.store_id JOIN skus k ON k.id = b.sku_id"
    ))
    .bind(slot_id)
    .bind(merchant_id)
    .fetch_optional(&db.pool)
    .await?)
}

/// The phone region of the store a slot is in (see `Store::phone_region`); None for an unknown
/// slot, which the booking then reports as not found.
pub async fn phone_region(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
) -> DomainResult<Option<phonenumber::country::Id>> {
    let row: Option<(Option<String>, String)> = sqlx::query_as(
        "SELECT st.country, st.timezone FROM slots s JOIN stores st ON st.id = s.store_id
         WHERE s.id = $1 AND s.merchant_id = $2",
    )
    .bind(slot_id)
    .bind(merchant_id)
    .fetch_optional(&db.pool)
    .await?;
    Ok(row.and_then(|(country, timezone)| {
        crate::domain::tenancy::tenants::phone_region_of(country.as_deref(), &timezone)
    }))
}

pub async fn get(db: &Db, scope: Scope, id: i64) -> DomainResult<Slot> {
    let tenant = scope.filter("sl.merchant_id", 2);
    sqlx::query_as(&format!("{SLOT_SELECT} WHERE sl.id = $1 AND {tenant}"))
        .bind(id)
        .bind(scope.bind())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("slot"))
}

#[derive(Debug, Clone, Default)]
pub struct SlotFilter {
    pub store_id: Option<StoreId>,
    pub sku_id: Option<i64>,
    /// Only these services (empty: any), for a page of a store's services.
    pub sku_ids: Vec<i64>,
    pub staff_id: Option<i64>,
    pub from: i64,
    pub to: i64,
    pub only_open_future: bool,
}

pub async fn list(db: &Db, scope: Scope, f: &SlotFilter) -> DomainResult<Vec<Slot>> {
    let tenant = scope.filter("sl.merchant_id", 1);
    // The ids are numbers, written into the text (a page lists a few dozen at most).
    let services = match f.sku_ids.as_slice() {
        [] => String::new(),
        ids => format!(
            "AND sl.sku_id IN ({})",
            ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        ),
    };
    let sql = format!(
        "{SLOT_SELECT} WHERE {tenant} AND ($2 IS NULL OR sl.store_id = $2) AND ($3 IS NULL OR sl.sku_id = $3)
           AND ($4 IS NULL OR sl.staff_key = $4) AND sl.starts_at >= $5 AND sl.starts_at < $6
           AND ($7 = 0 OR (sl.status = 'OPEN' AND sl.frozen_finding_id IS NULL AND sl.starts_at > $8))
           {services}
         ORDER BY sl.starts_at, k.code, sl.staff_key LIMIT 5000"
    );
    Ok(sqlx::query_as(&sql)
        .bind(scope.bind())
        .bind(f.store_id)
        .bind(f.sku_id)
        .bind(f.staff_id)
        .bind(f.from)
        .bind(f.to)
        .bind(if f.only_open_future { 1i64 } else { 0 })
        .bind(db.now_ms())
        .fetch_all(&db.pool)
        .await?)
}

/// A booking to call when its slot closes.
#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Contact {
    pub reference: String,
    pub customer_name: String,
    pub customer_phone: String,
    pub slot_id: i64,
    pub starts_at: i64,
    pub status: String,
}

/// The live bookings of these slots, to call. A place still only held for a waiting customer is
/// none: they never accepted it, and in a closed slot it can only lapse.
pub async fn active_bookings(db: &Db, slot_ids: &[i64]) -> DomainResult<Vec<Contact>> {
    let mut out = Vec::new();
    for chunk in slot_ids.chunks(200) {
        let placeholders: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT b.reference, b.customer_name, b.customer_phone, b.slot_id, s.starts_at, b.status FROM bookings b
             JOIN slots s ON s.id = b.slot_id WHERE b.status = 'BOOKED' AND b.hold_until IS NULL AND b.slot_id IN ({}) ORDER BY s.starts_at, b.id",
            placeholders.join(",")
        );
        let mut q = sqlx::query_as::<_, Contact>(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        out.extend(q.fetch_all(&db.pool).await?);
    }
    Ok(out)
}

/// Changes how many a slot takes. Never below what is booked: the refusal says how many are.
pub async fn set_capacity(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    slot_id: i64,
    capacity: i64,
) -> DomainResult<Slot> {
    self::capacity("capacity", capacity).map_err(|e| DomainError::Invalid(vec![e]))?;
    let slot = get(db, Scope::Merchant(merchant_id), slot_id).await?;
    let mut tx = db.begin_write().await?;
    // Marked as edited by hand: a later change of the schedule rules keeps this capacity.
    let r = sqlx::query("UPDATE slots SET capacity = $1, capacity_edited = 1, updated_at = $2 WHERE id = $3 AND merchant_id = $4 AND booked <= $1")
        .bind(capacity)
        .bind(db.now_ms())
        .bind(slot_id)
        .bind(merchant_id)
        .execute(&mut *tx)
        .await?;
    if r.rows_affected() != 1 {
        tx.rollback().await?;
        let booked = get(db, Scope::Merchant(merchant_id), slot_id).await?.booked;
        return Err(DomainError::Invalid(vec![FieldError::new(
            "capacity",
            "capacity_below_booked",
            messages::capacity_below_booked(capacity, booked),
        )]));
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "slot.capacity",
        &format!("slot:{slot_id}"),
        &format!("{} → {capacity}", slot.capacity),
    )
    .await?;
    crate::domain::trail::events::record_in_slot(
        &mut tx,
        db.now_ms(),
        merchant_id,
        crate::domain::trail::events::EventType::SlotCapacityChanged,
        "slot",
        &slot_id.to_string(),
        slot_id,
        serde_json::json!({"before": {"capacity": slot.capacity}, "after": {"capacity": capacity},
            "booked": slot.booked}),
    )
    .await?;
    tx.commit().await?;
    gate::forget_slots(db, merchant_id, &[slot_id]).await;
    // More capacity, or the slot open again: waiting customers may fit now.
    crate::domain::slots::cache::freed(db, merchant_id, slot_id);
    get(db, Scope::Merchant(merchant_id), slot_id).await
}

/// Closes one slot with a reason. Its active bookings are returned so staff can call them.
pub async fn close(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    slot_id: i64,
    reason: &str,
) -> DomainResult<(Slot, Vec<Contact>)> {
    let reason =
        validate::name("reason", reason, REASON_MAX).map_err(|e| DomainError::Invalid(vec![e]))?;
    let before = get(db, Scope::Merchant(merchant_id), slot_id).await?;
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE slots SET status = 'CLOSED', closed_reason = $1, closure_id = NULL, updated_at = $2 WHERE id = $3 AND merchant_id = $4")
        .bind(&reason)
        .bind(db.now_ms())
        .bind(slot_id)
        .bind(merchant_id)
        .execute(&mut *tx)
        .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "slot.close",
        &format!("slot:{slot_id}"),
        &reason,
    )
    .await?;
    crate::domain::trail::events::record_in_slot(
        &mut tx,
        db.now_ms(),
        merchant_id,
        crate::domain::trail::events::EventType::SlotClosed,
        "slot",
        &slot_id.to_string(),
        slot_id,
        serde_json::json!({"before": before.status.as_str(), "after": "CLOSED", "reason": reason}),
    )
    .await?;
    tx.commit().await?;
    gate::forget_slots(db, merchant_id, &[slot_id]).await;
    let slot = get(db, Scope::Merchant(merchant_id), slot_id).await?;
    let contacts = active_bookings(db, &[slot_id]).await?;
    Ok((slot, contacts))
}

pub async fn open(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    slot_id: i64,
) -> DomainResult<Slot> {
    let before = get(db, Scope::Merchant(merchant_id), slot_id).await?;
    let mut tx = db.begin_write().await?;
    crate::domain::trail::events::record_in_slot(
        &mut tx,
        db.now_ms(),
        merchant_id,
        crate::domain::trail::events::EventType::SlotOpened,
        "slot",
        &slot_id.to_string(),
        slot_id,
        serde_json::json!({"before": before.status.as_str(), "after": "OPEN"}),
    )
    .await?;
    sqlx::query("UPDATE slots SET status = 'OPEN', closed_reason = NULL, closure_id = NULL, updated_at = $1 WHERE id = $2 AND merchant_id = $3")
        .bind(db.now_ms())
        .bind(slot_id)
        .bind(merchant_id)
        .execute(&mut *tx)
        .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "slot.open",
        &format!("slot:{slot_id}"),
        "",
    )
    .await?;
    tx.commit().await?;
    gate::forget_slots(db, merchant_id, &[slot_id]).await;
    // More capacity, or the slot open again: waiting customers may fit now.
    crate::domain::slots::cache::freed(db, merchant_id, slot_id);
    get(db, Scope::Merchant(merchant_id), slot_id).await
}

#[derive(Debug, Clone)]
pub struct OneOffInput {
    pub starts_at: i64,
    pub ends_at: i64,
    pub capacity: i64,
    pub staff: Option<Staff>,
}

/// A slot outside the weekly rules (a special session). Refused when it overlaps another slot
/// of the same staff member.
pub async fn create_one_off(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    sku_id: i64,
    store: &Store,
    input: OneOffInput,
) -> DomainResult<Slot> {
    let mut errs = validate::Errors::default();
    let now = db.now_ms();
    if input.ends_at <= input.starts_at {
        errs.push(FieldError::new(
            "ends_at",
            "invalid_period",
            messages::ends_before_starts(),
        ));
    }
    if input.starts_at <= now {
        errs.push(FieldError::new(
            "starts_at",
            "slot_in_past",
            messages::slot_in_past(),
        ));
    }
    if input.ends_at - input.starts_at > 24 * 3_600_000 {
        errs.push(FieldError::new(
            "ends_at",
            "invalid_period",
            messages::slot_too_long(),
        ));
    }
    if let Err(e) = capacity("capacity", input.capacity) {
        errs.push(e);
    }
    if !errs.is_empty() {
        return Err(errs.refusal());
    }
    let staff_id = input.staff.as_ref().map(|s| s.id);
    let mut tx = db.begin_write().await?;
    if let Some(staff_id) = staff_id {
        // Touching the staff row serialises one-off slot creation per person on PostgreSQL (SQLite
        // already serialises writers), so two overlapping requests cannot both pass the check,
        // nor can an archive that counts this person's slots.
        if !crate::domain::slots::staff::lock_active(&mut tx, staff_id).await? {
            tx.rollback().await?;
            let name = input.staff.as_ref().map(|s| s.name.as_str()).unwrap_or("");
            return Err(crate::domain::slots::staff::archived_meanwhile(name));
        }
        let clash: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM slots WHERE staff_id = $1 AND starts_at < $2 AND ends_at > $3 AND status = 'OPEN' LIMIT 1",
        )
        .bind(staff_id)
        .bind(input.ends_at)
        .bind(input.starts_at)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(other) = clash {
            tx.rollback().await?;
            return Err(DomainError::conflict(
                "slot_overlap",
                messages::slot_overlap(input.staff.as_ref().map(|s| s.name.as_str()).unwrap_or("")),
                serde_json::json!({ "overlapping_slot_id": other }),
            ));
        }
    }
    let id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO slots (merchant_id, sku_id, store_id, staff_id, staff_key, starts_at, ends_at, capacity, source, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'ONE_OFF', $9, $9)
         ON CONFLICT (sku_id, store_id, staff_key, starts_at) DO NOTHING RETURNING id",
    )
    .bind(merchant_id)
    .bind(sku_id)
    .bind(store.id)
    .bind(staff_id)
    .bind(staff_id.unwrap_or(0))
    .bind(input.starts_at)
    .bind(input.ends_at)
    .bind(input.capacity)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(id) = id else {
        tx.rollback().await?;
        return Err(DomainError::conflict(
            "slot_exists",
            messages::slot_exists(),
            serde_json::json!({}),
        ));
    };
    crate::domain::trail::events::record_per_slot(
        &mut tx,
        db.now_ms(),
        crate::domain::trail::events::EventType::SlotCreated,
        &[id],
        serde_json::json!({"after": {"status": "OPEN", "capacity": input.capacity,
            "starts_at": ms_to_rfc3339(input.starts_at), "ends_at": ms_to_rfc3339(input.ends_at)},
            "source": "ONE_OFF"}),
    )
    .await?;
    apply_closures(&mut tx, store.id, now).await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "slot.create",
        &format!("slot:{id}"),
        &ms_to_rfc3339(input.starts_at),
    )
    .await?;
    tx.commit().await?;
    get(db, Scope::Merchant(merchant_id), id).await
}

/// Drops the Redis keys of a store's slots overlapping [from, to) after a change to them.
pub async fn forget_between(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
    from: i64,
    to: i64,
) -> DomainResult<()> {
    if db.gate.is_none() {
        return Ok(());
    }
    let ids: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM slots WHERE store_id = $1 AND merchant_id = $2 AND starts_at < $3 AND ends_at > $4",
    )
    .bind(store_id)
    .bind(merchant_id)
    .bind(to)
    .bind(from)
    .fetch_all(&db.pool)
    .await?;
    gate::forget_slots(db, merchant_id, &ids).await;
    Ok(())
}

/// The reconciliation finding that froze a slot, if any.
pub async fn frozen_by(db: &Db, slot_id: i64) -> DomainResult<Option<i64>> {
    Ok(
        sqlx::query_scalar::<_, Option<i64>>("SELECT frozen_finding_id FROM slots WHERE id = $1")
            .bind(slot_id)
            .fetch_optional(&db.pool)
            .await?
            .flatten(),
    )
}

/// Closes every OPEN slot an active closure covers (slots closed for another reason keep it).
/// Idempotent; run after creating slots and after reopening a closure.
pub async fn apply_closures(
    tx: &mut Transaction<'_, Any>,
    store_id: StoreId,
    now: i64,
) -> Result<u64, sqlx::Error> {
    let closures: Vec<(i64, Option<i64>, i64, i64, String)> = sqlx::query_as(
        "SELECT id, staff_id, starts_at, ends_at, reason FROM closures WHERE store_id = $1 AND reopened_at IS NULL AND ends_at > $2",
    )
    .bind(store_id)
    .bind(now)
    .fetch_all(&mut **tx)
    .await?;
    let mut n = 0;
    for (id, staff_id, starts, ends, reason) in closures {
        let closed: Vec<i64> = sqlx::query_scalar(
            "UPDATE slots SET status = 'CLOSED', closed_reason = $1, closure_id = $2, updated_at = $3
             WHERE store_id = $4 AND status = 'OPEN' AND starts_at < $5 AND ends_at > $6 AND ($7 IS NULL OR staff_id = $7)
             RETURNING id",
        )
        .bind(&reason)
        .bind(id)
        .bind(now)
        .bind(store_id)
        .bind(ends)
        .bind(starts)
        .bind(staff_id)
        .fetch_all(&mut **tx)
        .await?;
        // Each slot says so itself: a consumer following slots needs no closure logic.
        crate::domain::trail::events::record_per_slot(
            tx,
            now,
            crate::domain::trail::events::EventType::SlotClosed,
            &closed,
            serde_json::json!({"before": "OPEN", "after": "CLOSED", "reason": reason, "closure_id": id}),
        )
        .await?;
        n += closed.len() as u64;
    }
    Ok(n)
}
