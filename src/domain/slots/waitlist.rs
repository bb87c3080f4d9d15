//! The waiting list of a full slot. A customer (on the public page, or by staff, or through the
//! API) waits in order; when places free (a cancel, a move away, an order released, more
//! capacity, a slot reopened) the first waiting customer whose party fits is booked at once. The
//! entry moves WAITING → BOOKED by an update conditional on WAITING, in the booking's own
//! transaction, so two cancels at the same moment give a waiting customer one booking, never two.
//! Nobody waits for a slot that has started: such entries expire.
//!
//! A store may instead offer the place and hold it (`stores.waitlist_hold_minutes`): the entry
//! moves WAITING → OFFERED and the places are taken by a booking with `hold_until`, so nobody else
//! can have them. The customer accepts (OFFERED → BOOKED, the hold cleared) or declines
//! (→ DECLINED); a hold nobody answered lapses (→ EXPIRED) within the 30 s sweep. Declined and
//! lapsed holds cancel their booking in the same transaction, and the places go to the next in
//! line. Accepting and lapsing are conditional updates of the same booking row, so exactly one
//! of them wins.

use serde::Serialize;
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::slots::booking;
use crate::domain::slots::{self, SlotStatus};
use crate::domain::{slots::gate, Actor, DomainError, MerchantId, Scope};
use crate::infra::db::{is_unique_violation, Db};
use crate::messages;

/// The refusal's code when a customer is at the waiting list's cap: a public page offers the
/// store's phone with it.
pub const TOO_MANY_WAITS: &str = "too_many_waits";

crate::text_enum! {
    /// A waiting entry: WAITING → BOOKED (a place freed) | CANCELLED | EXPIRED (the slot
    /// started); where the store holds offers, WAITING → OFFERED → BOOKED | DECLINED | EXPIRED.
    pub enum WaitStatus {
        Waiting = "WAITING",
        Offered = "OFFERED",
        Booked = "BOOKED",
        Declined = "DECLINED",
        Cancelled = "CANCELLED",
        Expired = "EXPIRED",
    }
}

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Entry {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub slot_id: i64,
    pub customer_name: String,
    pub customer_phone: String,
    pub places: i64,
    #[sqlx(try_from = "String")]
    pub status: WaitStatus,
    /// The booking it became, once BOOKED.
    pub booking_reference: Option<String>,
    pub created_at: i64,
    /// Its place in the queue (1 = next), while WAITING; 0 otherwise.
    pub position: i64,
    /// The customer's own page for this wait (never shown to anyone else).
    pub token: String,
    /// While OFFERED: until when the place is held (Unix ms).
    pub hold_until: Option<i64>,
}

const ENTRY_SELECT: &str = "SELECT w.id, w.merchant_id, w.slot_id, w.customer_name, w.customer_phone, w.places, w.status,
        (SELECT b.reference FROM bookings b WHERE b.id = w.booking_id) AS booking_reference, w.created_at,
        CASE WHEN w.status = 'WAITING' THEN
            (SELECT COUNT(*) FROM waitlist x WHERE x.slot_id = w.slot_id AND x.status = 'WAITING' AND x.id <= w.id)
        ELSE 0 END AS position, w.token,
        CASE WHEN w.status = 'OFFERED' THEN (SELECT b.hold_until FROM bookings b WHERE b.id = w.booking_id) END AS hold_until
     FROM waitlist w";

/// Who wants to wait, as typed.
#[derive(Debug, Clone)]
pub struct JoinInput {
    pub slot_id: i64,
    pub name: String,
    pub phone: String,
    pub places: i64,
    /// Where a phone number without a country code belongs; None: the slot's store decides.
    pub region: Option<phonenumber::country::Id>,
    /// On the public page: the caps the customer books under. Joining counts against them (open
    /// entries per phone and per address, each at most the booking cap, and the upcoming
    /// bookings), and so does the booking the list makes later. None for staff and the API.
    pub public: Option<booking::PublicCaps>,
}

/// Puts a customer on a full slot's waiting list. Refusals: the fields (`invalid_name`,
/// `invalid_phone`, `invalid_places`), `slot_has_room` (places are free: book instead),
/// `slot_started`, `slot_closed`, `already_booked`, `already_waiting` (with the entry's id and
/// position). If places freed meanwhile, the new entry is booked at once.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn join(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    input: JoinInput,
) -> DomainResult<Entry> {
    let scope = Scope::Merchant(merchant_id);
    let slot = slots::get(db, scope, input.slot_id).await?;
    let mut errs = crate::domain::kernel::validate::Errors::default();
    let name = errs.take(booking::customer_name(&input.name));
    let region = match input.region {
        Some(r) => Some(r),
        None if input.phone.trim_start().starts_with('+') => None,
        None => slots::phone_region(db, merchant_id, slot.id).await?,
    };
    let phone = errs.take(booking::phone(&input.phone, region));
    let max: i64 = sqlx::query_scalar("SELECT max_places FROM skus WHERE id = $1")
        .bind(slot.sku_id)
        .fetch_one(&db.pool)
        .await?;
    let places = errs.take(booking::party_size(input.places, max));
    let (Some(name), Some((phone_shown, customer_key)), Some(places), true) =
        (name, phone, places, errs.is_empty())
    else {
        return Err(errs.refusal());
    };
    let now = db.now_ms();
    let details = || serde_json::json!({ "slot_id": slot.id, "remaining": slot.remaining() });
    if slot.started(now) {
        return Err(DomainError::conflict(
            "slot_started",
            messages::slot_started(),
            details(),
        ));
    }
    if slot.status == SlotStatus::Closed {
        return Err(DomainError::conflict(
            "slot_closed",
            messages::waitlist_slot_closed(),
            details(),
        ));
    }
    if slot.remaining() >= places {
        return Err(DomainError::conflict(
            "slot_has_room",
            messages::waitlist_has_room(slot.remaining()),
            details(),
        ));
    }
    let booked: Option<String> = sqlx::query_scalar(
        "SELECT reference FROM bookings WHERE slot_id = $1 AND customer_key = $2 AND status <> 'CANCELLED'",
    )
    .bind(slot.id)
    .bind(&customer_key)
    .fetch_optional(&db.pool)
    .await?;
    if let Some(reference) = booked {
        return Err(DomainError::conflict(
            "already_booked",
            messages::already_booked(&reference),
            serde_json::json!({ "reference": reference, "slot_id": slot.id }),
        ));
    }
    let mut tx = db.begin_write().await?;
    if let Some(caps) = &input.public {
        // The booking caps' lock rows, then the open entries, in the same transaction: joins
        // at once from one phone or address wait for each other and count each other.
        if let Err(e) = within_wait_caps(&mut tx, caps, &customer_key, now).await {
            tx.rollback().await?;
            return Err(e);
        }
    }
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO waitlist (merchant_id, slot_id, customer_name, customer_phone, customer_key, places, status, source, created_at, updated_at, token,
            client_ip, cap_per_phone, cap_per_address)
         VALUES ($1, $2, $3, $4, $5, $6, 'WAITING', $7, $8, $8, $9, $10, $11, $12) RETURNING id",
    )
    .bind(merchant_id)
    .bind(slot.id)
    .bind(&name)
    .bind(&phone_shown)
    .bind(&customer_key)
    .bind(places)
    .bind(&actor.source)
    .bind(now)
    .bind(uuid::Uuid::new_v4().simple().to_string())
    .bind(input.public.as_ref().map(|c| c.client_ip.clone()))
    .bind(input.public.as_ref().map(|c| c.per_phone))
    .bind(input.public.as_ref().map(|c| c.per_address))
    .fetch_one(&mut *tx)
    .await;
    let id = match inserted {
        Ok(id) => id,
        Err(e) if is_unique_violation(&e) => {
            tx.rollback().await?;
            let existing: Entry = sqlx::query_as(&format!(
                "{ENTRY_SELECT} WHERE w.slot_id = $1 AND w.customer_key = $2 AND w.status = 'WAITING'"
            ))
            .bind(slot.id)
            .bind(&customer_key)
            .fetch_one(&db.pool)
            .await?;
            return Err(DomainError::conflict(
                "already_waiting",
                messages::already_waiting(existing.position),
                serde_json::json!({ "id": existing.id, "position": existing.position }),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "waitlist.join",
        &format!("slot:{}", slot.id),
        &format!("waitlist:{id} places {places}"),
    )
    .await?;
    tx.commit().await?;
    // A place that freed between the read above and this entry: it goes to the list now.
    fill(db, merchant_id, slot.id).await?;
    entry(db, merchant_id, id).await
}

/// Refuses a public join past the caps: the customer's upcoming bookings (as a booking would
/// be, since the list may book them) and their open entries in this store, each by phone and by
/// address, at most the booking caps. Takes the booking caps' lock rows first.
async fn within_wait_caps(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    caps: &booking::PublicCaps,
    customer_key: &str,
    now: i64,
) -> DomainResult<()> {
    booking::within_caps(tx, caps, customer_key, now).await?;
    let (by_phone, by_ip): (i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(CASE WHEN w.customer_key = $2 THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN w.client_ip = $3 THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM waitlist w JOIN slots s ON s.id = w.slot_id
         WHERE s.store_id = $1 AND w.status IN ('WAITING', 'OFFERED') AND s.starts_at > $4
           AND (w.customer_key = $2 OR w.client_ip = $3)",
    )
    .bind(caps.store_id)
    .bind(customer_key)
    .bind(&caps.client_ip)
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    if by_phone >= caps.per_phone || by_ip >= caps.per_address {
        let limit = if by_phone >= caps.per_phone {
            caps.per_phone
        } else {
            caps.per_address
        };
        return Err(DomainError::conflict(
            TOO_MANY_WAITS,
            messages::too_many_waits(limit),
            serde_json::json!({ "limit": limit }),
        ));
    }
    Ok(())
}

/// One entry of a merchant.
pub async fn entry(db: &Db, merchant_id: MerchantId, id: i64) -> DomainResult<Entry> {
    sqlx::query_as(&format!(
        "{ENTRY_SELECT} WHERE w.id = $1 AND w.merchant_id = $2"
    ))
    .bind(id)
    .bind(merchant_id)
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("waitlist entry"))
}

/// A wait by its customer's token (the public page), whatever the merchant.
pub async fn by_token(db: &Db, token: &str) -> DomainResult<Entry> {
    sqlx::query_as(&format!("{ENTRY_SELECT} WHERE w.token = $1"))
        .bind(token.trim())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("waitlist entry"))
}

/// A slot's waiting list, in order (every state: staff see who was booked from it).
pub async fn of_slot(db: &Db, merchant_id: MerchantId, slot_id: i64) -> DomainResult<Vec<Entry>> {
    Ok(sqlx::query_as(&format!(
        "{ENTRY_SELECT} WHERE w.merchant_id = $1 AND w.slot_id = $2 ORDER BY w.id"
    ))
    .bind(merchant_id)
    .bind(slot_id)
    .fetch_all(&db.pool)
    .await?)
}

/// Gives a slot's free places to its waiting customers, first come first served among those
/// whose party fits. Called after anything that frees places; cheap when nobody waits. Returns
/// the references booked.
pub async fn fill(db: &Db, merchant_id: MerchantId, slot_id: i64) -> DomainResult<Vec<String>> {
    let mut booked = Vec::new();
    // Entries passed over in this round because their customer is at a cap: they keep their
    // place in the line for a later round.
    let mut passed: Vec<i64> = Vec::new();
    // Each round books one customer or ends; the bound only guards against a loop gone wrong.
    for _ in 0..200 {
        let skip = if passed.is_empty() {
            String::new()
        } else {
            let ids: Vec<String> = passed.iter().map(i64::to_string).collect();
            format!("AND w.id NOT IN ({})", ids.join(","))
        };
        let next: Option<WaitingRow> = sqlx::query_as(&format!(
            "SELECT w.id, w.customer_name, w.customer_phone, w.customer_key, w.places,
                    w.client_ip, w.cap_per_phone, w.cap_per_address, s.store_id
             FROM waitlist w JOIN slots s ON s.id = w.slot_id
             WHERE w.slot_id = $1 AND w.merchant_id = $2 AND w.status = 'WAITING'
               AND s.status = 'OPEN' AND s.starts_at > $3 AND w.places <= s.capacity - s.booked
               {skip}
             ORDER BY w.id LIMIT 1"
        ))
        .bind(slot_id)
        .bind(merchant_id)
        .bind(db.now_ms())
        .fetch_optional(&db.pool)
        .await?;
        let Some(row) = next else {
            break;
        };
        match book_entry(db, merchant_id, slot_id, &row).await? {
            Filled::Booked(reference) => booked.push(reference),
            // Someone else booked this entry, or the places went meanwhile: read again.
            Filled::Lost => {}
            Filled::AtCap => passed.push(row.id),
        }
    }
    Ok(booked)
}

/// A waiting entry as the list reads it to book it.
#[derive(sqlx::FromRow)]
struct WaitingRow {
    id: i64,
    customer_name: String,
    customer_phone: String,
    customer_key: String,
    places: i64,
    /// Made on the public page: the address and the caps it was made under.
    client_ip: Option<String>,
    cap_per_phone: Option<i64>,
    cap_per_address: Option<i64>,
    store_id: i64,
}

impl WaitingRow {
    fn caps(&self) -> Option<booking::PublicCaps> {
        Some(booking::PublicCaps {
            store_id: crate::domain::StoreId(self.store_id),
            client_ip: self.client_ip.clone()?,
            per_phone: self.cap_per_phone?,
            per_address: self.cap_per_address?,
        })
    }
}

enum Filled {
    Booked(String),
    Lost,
    /// The customer is at a booking cap (by phone or address): passed over, still waiting.
    AtCap,
}

/// Books one waiting entry in one transaction: the entry (conditional on WAITING), the booking,
/// the slot's conditional update. Any "no" rolls back all three.
async fn book_entry(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
    row: &WaitingRow,
) -> DomainResult<Filled> {
    let (id, places) = (row.id, row.places);
    let (name, phone, customer_key) = (
        row.customer_name.as_str(),
        row.customer_phone.as_str(),
        row.customer_key.as_str(),
    );
    let now = db.now_ms();
    let actor = Actor::system("waitlist");
    let hold_until = hold_until(db, slot_id, now).await?;
    let next = if hold_until.is_some() {
        WaitStatus::Offered
    } else {
        WaitStatus::Booked
    };
    // Redis takes the place after the commit: the slot loaded before it, as for a cancel
    // (`gate::slot_ensure_loaded` says why).
    gate::slot_ensure_loaded(db, merchant_id, slot_id).await?;
    let mut tx = db.begin_write().await?;
    let claimed = sqlx::query(
        "UPDATE waitlist SET status = $3, updated_at = $1 WHERE id = $2 AND status = 'WAITING'",
    )
    .bind(now)
    .bind(id)
    .bind(next.as_str())
    .execute(&mut *tx)
    .await?;
    if claimed.rows_affected() != 1 {
        tx.rollback().await?;
        return Ok(Filled::Lost);
    }
    // A place the list hands out counts toward the caps the customer joined under, as their own
    // booking would: someone else's phone put on many lists is not booked past its cap.
    if let Some(caps) = row.caps() {
        if booking::within_caps(&mut tx, &caps, customer_key, now)
            .await
            .is_err()
        {
            tx.rollback().await?;
            return Ok(Filled::AtCap);
        }
    }
    let place = booking::OrderPlace {
        slot_id,
        places,
        name: name.to_string(),
        phone_shown: phone.to_string(),
        customer_key: customer_key.to_string(),
    };
    match booking::book_from_waitlist(&mut tx, &actor, merchant_id, &place, now, hold_until).await?
    {
        Ok((booking_id, reference)) => {
            sqlx::query("UPDATE waitlist SET booking_id = $1 WHERE id = $2")
                .bind(booking_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            gate::slot_follow(db, merchant_id, slot_id, customer_key, None, false, places).await;
            Ok(Filled::Booked(reference))
        }
        Err(booking::PlaceRefused::AlreadyBooked) => {
            // The customer booked the slot themselves meanwhile: they wait no more.
            tx.rollback().await?;
            sqlx::query(
                "UPDATE waitlist SET status = 'CANCELLED', updated_at = $1 WHERE id = $2 AND status = 'WAITING'",
            )
            .bind(now)
            .bind(id)
            .execute(&db.pool)
            .await?;
            Ok(Filled::Lost)
        }
        Err(booking::PlaceRefused::Unavailable) => {
            tx.rollback().await?;
            Ok(Filled::Lost)
        }
    }
}

/// Until when a place freed now in this slot is held for the waiting customer it is offered to:
/// None where the store books outright. A hold never runs past the slot's start.
async fn hold_until(db: &Db, slot_id: i64, now: i64) -> DomainResult<Option<i64>> {
    let row: Option<(Option<i64>, i64)> = sqlx::query_as(
        "SELECT st.waitlist_hold_minutes, s.starts_at FROM slots s JOIN stores st ON st.id = s.store_id WHERE s.id = $1",
    )
    .bind(slot_id)
    .fetch_optional(&db.pool)
    .await?;
    Ok(match row {
        Some((Some(minutes), starts_at)) => Some((now + minutes * 60_000).min(starts_at)),
        _ => None,
    })
}

/// The customer takes the place offered to them (the entry found by their wait's token, or by
/// its id for the API): the hold is cleared and the entry is BOOKED, in one transaction. Refused
/// with `offer_ended` when the offer is no longer open (it lapsed, was declined, or was never
/// made); accepting twice answers the booking.
pub async fn accept(db: &Db, actor: &Actor, e: Entry) -> DomainResult<Entry> {
    if e.status == WaitStatus::Booked {
        return Ok(e);
    }
    let booking_id = offered_booking(db, &e).await?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let taken = booking::take_hold(&mut tx, booking_id, now).await?
        && sqlx::query(
            "UPDATE waitlist SET status = 'BOOKED', updated_at = $1 WHERE id = $2 AND status = 'OFFERED'",
        )
        .bind(now)
        .bind(e.id)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
    if !taken {
        tx.rollback().await?;
        return Err(offer_ended(&e));
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(e.merchant_id),
        "waitlist.accept",
        &format!("slot:{}", e.slot_id),
        &format!("waitlist:{}", e.id),
    )
    .await?;
    tx.commit().await?;
    entry(db, e.merchant_id, e.id).await
}

/// The customer gives the offered place back: the held booking is cancelled and the entry is
/// DECLINED in one transaction, and the place goes to the next in line. Refused with
/// `offer_ended` when the offer is no longer open.
pub async fn decline(db: &Db, actor: &Actor, e: Entry) -> DomainResult<Entry> {
    if e.status == WaitStatus::Declined {
        return Ok(e);
    }
    let booking_id = offered_booking(db, &e).await?;
    let ended = end_offer(db, actor, e.id, booking_id, booking::HoldEnd::Declined).await?;
    if !ended {
        return Err(offer_ended(&e));
    }
    entry(db, e.merchant_id, e.id).await
}

/// Ends every hold whose time has passed: the entries become EXPIRED and their places go to the
/// next in line. Also closes the offers whose booking staff cancelled by hand. Returns how many
/// holds lapsed.
pub async fn end_lapsed_offers(db: &Db) -> DomainResult<usize> {
    let now = db.now_ms();
    let actor = Actor::system("waitlist");
    let mut lapsed = 0;
    for booking_id in booking::lapsed_holds(db, now).await? {
        let entry_id: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM waitlist WHERE booking_id = $1 AND status = 'OFFERED'",
        )
        .bind(booking_id)
        .fetch_optional(&db.pool)
        .await?;
        // A hold without an offered entry cannot be made by this module; end it all the same.
        // One that fails is logged and left for the next sweep; the others still end.
        let entry_id = entry_id.unwrap_or(0);
        match end_offer(db, &actor, entry_id, booking_id, booking::HoldEnd::Lapsed).await {
            Ok(true) => lapsed += 1,
            Ok(false) => {}
            Err(e) => tracing::warn!(booking_id, error = %e, "ending a lapsed offer failed"),
        }
    }
    sqlx::query(
        "UPDATE waitlist SET status = 'CANCELLED', updated_at = $1
         WHERE status = 'OFFERED' AND booking_id IN (SELECT id FROM bookings WHERE status = 'CANCELLED')",
    )
    .bind(now)
    .execute(&db.pool)
    .await?;
    Ok(lapsed)
}

/// Cancels an offer's held booking and moves its entry (DECLINED or EXPIRED) in one transaction;
/// false when the hold had already ended (accepted, declined or lapsed a moment earlier).
async fn end_offer(
    db: &Db,
    actor: &Actor,
    entry_id: i64,
    booking_id: i64,
    end: booking::HoldEnd,
) -> DomainResult<bool> {
    // Redis gives the place back after the commit: the slot loaded before it, as for a cancel
    // (`gate::slot_ensure_loaded` says why).
    if gate::active(db).is_some() {
        let slot: Option<(MerchantId, i64)> =
            sqlx::query_as("SELECT merchant_id, slot_id FROM bookings WHERE id = $1")
                .bind(booking_id)
                .fetch_optional(&db.pool)
                .await?;
        if let Some((merchant_id, slot_id)) = slot {
            gate::slot_ensure_loaded(db, merchant_id, slot_id).await?;
        }
    }
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let Some(freed) = booking::end_hold(&mut tx, actor, booking_id, end, now).await? else {
        tx.rollback().await?;
        return Ok(false);
    };
    let status = match end {
        booking::HoldEnd::Declined => WaitStatus::Declined,
        booking::HoldEnd::Lapsed => WaitStatus::Expired,
    };
    sqlx::query(
        "UPDATE waitlist SET status = $1, updated_at = $2 WHERE id = $3 AND status = 'OFFERED'",
    )
    .bind(status.as_str())
    .bind(now)
    .bind(entry_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    booking::after_freed(db, &freed).await;
    Ok(true)
}

/// The booking an OFFERED entry holds, or `offer_ended`.
async fn offered_booking(db: &Db, e: &Entry) -> DomainResult<i64> {
    if e.status != WaitStatus::Offered {
        return Err(offer_ended(e));
    }
    let id: Option<i64> = sqlx::query_scalar("SELECT booking_id FROM waitlist WHERE id = $1")
        .bind(e.id)
        .fetch_one(&db.pool)
        .await?;
    id.ok_or_else(|| offer_ended(e))
}

fn offer_ended(e: &Entry) -> DomainError {
    DomainError::conflict(
        "offer_ended",
        messages::waitlist_offer_ended(),
        serde_json::json!({ "id": e.id, "status": e.status.as_str() }),
    )
}

/// Every slot with a waiting customer whose party fits now: the sweep that catches what no mark
/// said (a change on another instance, an instance killed before its job ran).
pub async fn fillable(db: &Db) -> DomainResult<Vec<(MerchantId, i64)>> {
    Ok(sqlx::query_as(
        "SELECT DISTINCT w.merchant_id, w.slot_id FROM waitlist w JOIN slots s ON s.id = w.slot_id
         WHERE w.status = 'WAITING' AND s.status = 'OPEN' AND s.starts_at > $1 AND w.places <= s.capacity - s.booked",
    )
    .bind(db.now_ms())
    .fetch_all(&db.pool)
    .await?)
}

/// Entries of slots that have started wait no more.
pub async fn expire_started(db: &Db) -> DomainResult<u64> {
    let now = db.now_ms();
    Ok(sqlx::query(
        "UPDATE waitlist SET status = 'EXPIRED', updated_at = $1
         WHERE status = 'WAITING' AND slot_id IN (SELECT id FROM slots WHERE starts_at <= $1)",
    )
    .bind(now)
    .execute(&db.pool)
    .await?
    .rows_affected())
}

/// Staff or the API take an entry off the list (the customer no longer wants to wait).
pub async fn cancel(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
) -> DomainResult<Entry> {
    let e = entry(db, merchant_id, id).await?;
    let mut tx = db.begin_write().await?;
    let done = sqlx::query(
        "UPDATE waitlist SET status = 'CANCELLED', updated_at = $1 WHERE id = $2 AND status = 'WAITING'",
    )
    .bind(db.now_ms())
    .bind(id)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 1 {
        crate::domain::trail::audit::record(
            &mut tx,
            db.now_ms(),
            actor,
            Some(merchant_id),
            "waitlist.cancel",
            &format!("slot:{}", e.slot_id),
            &format!("waitlist:{id}"),
        )
        .await?;
    }
    tx.commit().await?;
    entry(db, merchant_id, id).await
}
