//! Places booked for something else: an order's service line, a waiting list's turn; and the
//! refusals such a place gets.

#[allow(unused_imports)]
use super::*;

/// A place an order books (a goods-and-slot order): its slot and its customer, checked.
#[derive(Debug, Clone)]
pub struct OrderPlace {
    pub slot_id: i64,
    /// The places it takes (a party).
    pub places: i64,
    pub name: String,
    pub phone_shown: String,
    pub customer_key: String,
}

/// Why an order's place could not be booked; the caller rolls back, then asks `place_refusal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceRefused {
    /// The customer already holds a place in that slot.
    AlreadyBooked,
    /// Full, closed, started, frozen or off sale.
    Unavailable,
}

/// Books an order's place inside the order's transaction: the booking (carrying the order) and the
/// slot's conditional update, or a refusal after which the transaction must be rolled back (on
/// PostgreSQL a refused insert has already aborted it). Returns the booking's reference.
pub async fn book_for_order(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    merchant_id: MerchantId,
    reservation_id: i64,
    place: &OrderPlace,
    now: i64,
) -> DomainResult<Result<String, PlaceRefused>> {
    let origin = Origin::Order(reservation_id);
    Ok(book_place(tx, actor, merchant_id, place, now, origin)
        .await?
        .map(|(_, reference)| reference))
}

/// Books a waiting customer's places inside the waiting list's transaction, like an order's place:
/// the booking says it came from the list. With `hold_until` the places are only held for the
/// customer until then (an offer they accept or let lapse). Returns the booking's id and reference.
pub async fn book_from_waitlist(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    merchant_id: MerchantId,
    place: &OrderPlace,
    now: i64,
    hold_until: Option<i64>,
) -> DomainResult<Result<(i64, String), PlaceRefused>> {
    book_place(
        tx,
        actor,
        merchant_id,
        place,
        now,
        Origin::Waitlist { hold_until },
    )
    .await
}

/// Where a booking made inside another change's transaction comes from.
#[derive(Clone, Copy)]
pub(super) enum Origin {
    /// An order's place line (the reservation's id).
    Order(i64),
    /// The waiting list, booking outright (None) or holding the places until an instant.
    Waitlist { hold_until: Option<i64> },
}

pub(super) async fn book_place(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    merchant_id: MerchantId,
    place: &OrderPlace,
    now: i64,
    origin: Origin,
) -> DomainResult<Result<(i64, String), PlaceRefused>> {
    let (reservation_id, from_waitlist, hold_until) = match origin {
        Origin::Order(id) => (Some(id), 0, None),
        Origin::Waitlist { hold_until } => (None, 1, hold_until),
    };
    let reference = new_reference();
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO bookings (merchant_id, slot_id, reference, customer_name, customer_phone, customer_key, status,
            source, created_at, updated_at, reservation_id, places, from_waitlist, hold_until)
         VALUES ($1, $2, $3, $4, $5, $6, 'BOOKED', $7, $8, $8, $9, $10, $11, $12) RETURNING id",
    )
    .bind(merchant_id)
    .bind(place.slot_id)
    .bind(&reference)
    .bind(&place.name)
    .bind(&place.phone_shown)
    .bind(&place.customer_key)
    .bind(&actor.source)
    .bind(now)
    .bind(reservation_id)
    .bind(place.places)
    .bind(from_waitlist)
    .bind(hold_until)
    .fetch_one(&mut **tx)
    .await;
    let booking_id = match inserted {
        Ok(id) => id,
        Err(e) if is_unique_violation(&e) => return Ok(Err(PlaceRefused::AlreadyBooked)),
        Err(e) => return Err(e.into()),
    };
    if !take_places(tx, merchant_id, place.slot_id, place.places, now).await? {
        return Ok(Err(PlaceRefused::Unavailable));
    }
    crate::domain::trail::audit::record(
        tx,
        now,
        actor,
        Some(merchant_id),
        "booking.create",
        &format!("booking:{reference}"),
        &match origin {
            Origin::Order(_) => format!("slot:{} order", place.slot_id),
            Origin::Waitlist { hold_until: None } => format!("slot:{} waiting list", place.slot_id),
            Origin::Waitlist {
                hold_until: Some(_),
            } => {
                format!("slot:{} waiting list, held", place.slot_id)
            }
        },
    )
    .await?;
    booking_event(
        tx,
        now,
        merchant_id,
        EventType::BookingBooked,
        &reference,
        place.slot_id,
        (None, "BOOKED"),
        place.places,
    )
    .await?;
    Ok(Ok((booking_id, reference)))
}

/// The refusal of an order's place, read after the rollback: the same codes a booking alone gets
/// (`already_booked`, `slot_full`, `slot_closed`, `slot_started` …), naming the line's SKU.
/// An order's place the Redis gate refused (full or started), named by its line like
/// [`place_refusal`], answered without touching SQL. None for any other answer.
pub fn gate_refusal(
    place: &OrderPlace,
    sku: &str,
    answer: &SlotAnswer,
    remaining: i64,
) -> Option<DomainError> {
    let mut e = match answer {
        SlotAnswer::Full => refusal_of(
            "slot_full",
            full_message(remaining, place.places),
            place.slot_id,
            remaining,
            "OPEN",
        ),
        SlotAnswer::Started => refusal_of(
            "slot_started",
            messages::slot_started(),
            place.slot_id,
            remaining,
            "OPEN",
        ),
        _ => return None,
    };
    if let DomainError::Conflict { details, .. } = &mut e {
        details["sku"] = sku.into();
    }
    Some(e)
}

pub async fn place_refusal(
    db: &Db,
    merchant_id: MerchantId,
    place: &OrderPlace,
    sku: &str,
    why: PlaceRefused,
) -> DomainResult<DomainError> {
    let e = match why {
        PlaceRefused::AlreadyBooked => {
            match active_for_customer(db, place.slot_id, &place.customer_key).await? {
                Some(existing) => already_booked(&existing),
                None => slot_refusal(db, merchant_id, place).await?,
            }
        }
        PlaceRefused::Unavailable => slot_refusal(db, merchant_id, place).await?,
    };
    Ok(of_place(e, place, sku))
}

/// The refusal of an order's place on a slot that cannot give it, as [`place_refusal`] asks it
/// (the customer's booking first), or None when that booking is this order's own: the order is
/// being repeated and is answered as it was.
pub async fn order_place_refusal(
    db: &Db,
    merchant_id: MerchantId,
    order: &str,
    place: &OrderPlace,
    sku: &str,
) -> DomainResult<Option<DomainError>> {
    let e = match active_for_customer(db, place.slot_id, &place.customer_key).await? {
        Some(existing) if existing.order_id.as_deref() == Some(order.trim()) => return Ok(None),
        Some(existing) => already_booked(&existing),
        None => slot_refusal(db, merchant_id, place).await?,
    };
    Ok(Some(of_place(e, place, sku)))
}

/// Why a slot cannot give a place, read now.
pub(super) async fn slot_refusal(
    db: &Db,
    merchant_id: MerchantId,
    place: &OrderPlace,
) -> DomainResult<DomainError> {
    let slot = slots::get(db, Scope::Merchant(merchant_id), place.slot_id).await?;
    refused(db, merchant_id, &slot, db.now_ms(), place.places).await
}

/// A place's refusal names its SKU and slot.
pub(super) fn of_place(e: DomainError, place: &OrderPlace, sku: &str) -> DomainError {
    match e {
        DomainError::Conflict {
            code,
            message,
            mut details,
        } => {
            details["sku"] = sku.into();
            details["slot_id"] = place.slot_id.into();
            DomainError::Conflict {
                code,
                message,
                details,
            }
        }
        other => other,
    }
}

/// A booking's change event, in the change's transaction.
// The transaction's time stamp came as an eighth argument when the app got its own clock (issue
// 51); the others are what the row says.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn booking_event(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    now: i64,
    merchant_id: MerchantId,
    ty: EventType,
    reference: &str,
    slot_id: i64,
    (before, after): (Option<&str>, &str),
    places: i64,
) -> Result<(), sqlx::Error> {
    crate::domain::trail::events::record_in_slot(
        tx,
        now,
        merchant_id,
        ty,
        "booking",
        reference,
        slot_id,
        serde_json::json!({"before": before, "after": after, "slot_id": slot_id, "places": places}),
    )
    .await
}

/// Cancels the bookings an order made, when the order is released or expires (`reason`: "order
/// released" / "order expired"), inside the order's transaction; each frees its place in the slot
/// count. Returns (slot, customer key, places) of each, for Redis to follow once committed.
pub async fn cancel_for_order(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    reservation_id: i64,
    reason: &str,
    now: i64,
) -> DomainResult<Vec<(i64, String, i64)>> {
    let cancelled: Vec<(i64, String, String, MerchantId, i64)> = sqlx::query_as(
        "UPDATE bookings SET status = 'CANCELLED', cancel_reason = $1, updated_at = $2
         WHERE reservation_id = $3 AND status = 'BOOKED' RETURNING slot_id, customer_key, reference, merchant_id, places",
    )
    .bind(reason)
    .bind(now)
    .bind(reservation_id)
    .fetch_all(&mut **tx)
    .await?;
    for (slot, _, reference, merchant_id, places) in &cancelled {
        booking_event(
            tx,
            now,
            *merchant_id,
            EventType::BookingCancelled,
            reference,
            *slot,
            (Some("BOOKED"), "CANCELLED"),
            *places,
        )
        .await?;
    }
    let cancelled: Vec<(i64, String, i64)> = cancelled
        .into_iter()
        .map(|(s, k, _, _, p)| (s, k, p))
        .collect();
    for (slot, _, places) in &cancelled {
        free_places(tx, *slot, *places, now).await?;
    }
    Ok(cancelled)
}
