//! Changing a booking: cancelling it (customer, staff, a closure), moving it to another slot,
//! marking it attended or a no-show, and when a customer may still do so.

#[allow(unused_imports)]
use super::*;

/// Until when a customer may cancel or reschedule this booking themselves: its slot's start less
/// the service's change cutoff (staff can cancel until the start). Unix ms.
pub async fn change_deadline(db: &Db, b: &Booking) -> DomainResult<i64> {
    let (starts_at, cutoff): (i64, i64) = sqlx::query_as(
        "SELECT s.starts_at, k.change_cutoff_minutes FROM slots s JOIN skus k ON k.id = s.sku_id WHERE s.id = $1",
    )
    .bind(b.slot_id)
    .fetch_one(&db.pool)
    .await?;
    Ok(starts_at - cutoff * 60_000)
}

/// Refuses a customer's own change (cancel, reschedule) past the deadline (`change_closed`).
/// A booking no longer live is left to the change itself (a repeated cancel is harmless).
pub async fn customer_may_change(db: &Db, b: &Booking) -> DomainResult<()> {
    if b.status != BookingStatus::Booked || db.now_ms() < change_deadline(db, b).await? {
        return Ok(());
    }
    Err(DomainError::conflict(
        "change_closed",
        messages::change_closed(),
        serde_json::json!({ "reference": b.reference }),
    ))
}

/// Cancels before the slot starts and frees the place in the same transaction. Cancelling twice
/// is harmless; after the start it is refused (staff record attended or no-show instead).
#[tracing::instrument(skip_all)]
pub async fn cancel(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    reference: &str,
    reason: Option<&str>,
) -> DomainResult<Booking> {
    crate::domain::kernel::error::observed(
        "cancel",
        cancel_inner(db, actor, scope, reference, reason),
    )
    .await
}

pub(super) async fn cancel_inner(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    reference: &str,
    reason: Option<&str>,
) -> DomainResult<Booking> {
    let b = by_reference(db, scope, reference).await?;
    let reason = match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => Some(
            validate::name("reason", r, REASON_MAX).map_err(|e| DomainError::Invalid(vec![e]))?,
        ),
        None => None,
    };
    // Redis gives the place back after the commit: the slot loaded before it.
    gate::slot_ensure_loaded(db, b.merchant_id, b.slot_id).await?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let done: Option<(String, Option<String>, i64)> = sqlx::query_as(
        "UPDATE bookings SET status = 'CANCELLED', cancel_reason = $1, updated_at = $2, hold_until = NULL
         WHERE id = $3 AND status = 'BOOKED' AND (SELECT s.starts_at FROM slots s WHERE s.id = bookings.slot_id) > $2
         RETURNING customer_key, idempotency_key, places",
    )
    .bind(reason.as_deref())
    .bind(now)
    .bind(b.id)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some((customer_key, idem, places)) = done {
        free_places(&mut tx, b.slot_id, places, now).await?;
        if b.hold_until.is_some() {
            // A place held for a waiting customer, withdrawn by staff: the offer ends with it,
            // in the same commit, so the customer's page never shows an offer that is gone.
            // (The waiting list is a table of its own; this is the one write bookings makes to
            // it, to keep the two in one transaction.)
            sqlx::query(
                "UPDATE waitlist SET status = 'CANCELLED', updated_at = $1 WHERE booking_id = $2 AND status = 'OFFERED'",
            )
            .bind(now)
            .bind(b.id)
            .execute(&mut *tx)
            .await?;
        }
        crate::domain::trail::audit::record(
            &mut tx,
            db.now_ms(),
            actor,
            Some(b.merchant_id),
            "booking.cancel",
            &format!("booking:{}", b.reference),
            reason.as_deref().unwrap_or(""),
        )
        .await?;
        booking_event(
            &mut tx,
            db.now_ms(),
            b.merchant_id,
            EventType::BookingCancelled,
            &b.reference,
            b.slot_id,
            (Some("BOOKED"), "CANCELLED"),
            places,
        )
        .await?;
        tx.commit().await?;
        gate::slot_follow(
            db,
            b.merchant_id,
            b.slot_id,
            &customer_key,
            idem.as_deref(),
            true,
            places,
        )
        .await;
        crate::domain::slots::cache::freed(db, b.merchant_id, b.slot_id);
        return by_reference(db, scope, &b.reference).await;
    }
    tx.rollback().await?;
    let b = by_reference(db, scope, &b.reference).await?;
    match b.status.as_str() {
        "CANCELLED" => Ok(b),
        _ => {
            let slot = slots::get(db, Scope::Merchant(b.merchant_id), b.slot_id).await?;
            Err(refusal(
                "slot_started",
                messages::cancel_after_start(),
                &slot,
            ))
        }
    }
}

/// The refusal of an action (move, attendance) on a place still held for a waiting customer.
pub(super) fn held(b: &Booking) -> DomainError {
    DomainError::conflict(
        "booking_held",
        messages::booking_held(),
        serde_json::json!({ "reference": b.reference }),
    )
}

/// Who moves a booking: the customer on the public page keeps to the service's minimum notice;
/// staff and the order system may override it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveBy {
    Customer,
    Staff,
}

/// Moves a live booking to another slot of the same service and store, keeping its reference:
/// the new places are taken before the old ones are freed, in one transaction, so a full target
/// refuses and nothing changes. A repeat (the booking already in that slot) answers the booking.
/// Refusals: `booking_cancelled`, `booking_not_movable` (attended or no-show), `slot_started`
/// (the booking's own slot has begun), the target's `slot_full`, `slot_closed`, `slot_started`,
/// `slot_frozen`, `not_on_sale`, `already_booked` (the customer holds a place there),
/// `booking_changed` (moved elsewhere meanwhile), `too_late_to_book` (`MoveBy::Customer` only,
/// inside the service's notice); the field errors `unknown_slot` and
/// `different_service`.
#[tracing::instrument(skip_all)]
pub async fn move_booking(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    reference: &str,
    target_id: i64,
    by: MoveBy,
) -> DomainResult<Booking> {
    let b = by_reference(db, scope, reference).await?;
    let merchant = Scope::Merchant(b.merchant_id);
    if b.slot_id == target_id {
        return Ok(b);
    }
    let (from, target) = move_slots(db, &b, target_id).await?;
    let now = db.now_ms();
    movable(&b)?;
    if from.started(now) {
        return Err(refusal("slot_started", messages::move_after_start(), &from));
    }
    // A customer moving online gives the service its notice, as a booking does
    // (`too_late_to_book`); staff and the order system may move closer in.
    if by == MoveBy::Customer {
        if let Some(e) = within_notice(db, b.merchant_id, target.id).await? {
            return Err(e);
        }
    }
    // Redis follows the move after the commit: both slots loaded before it.
    gate::slot_ensure_loaded(db, b.merchant_id, target.id).await?;
    gate::slot_ensure_loaded(db, b.merchant_id, from.id).await?;
    if let Some(already) = write_move(db, actor, &b, (&from, &target), now).await? {
        return Ok(already);
    }
    follow_move(db, &b, from.id, target.id).await?;
    by_reference(db, merchant, &b.reference).await
}

/// The booking's slot and the target, which must exist and be of the same service and store.
async fn move_slots(db: &Db, b: &Booking, target_id: i64) -> DomainResult<(Slot, Slot)> {
    let merchant = Scope::Merchant(b.merchant_id);
    let target = match slots::get(db, merchant, target_id).await {
        Err(DomainError::NotFound(_)) => {
            return Err(DomainError::field(
                "slot_id",
                "unknown_slot",
                messages::unknown_slot(target_id),
            ))
        }
        r => r?,
    };
    let from = slots::get(db, merchant, b.slot_id).await?;
    if target.sku_id != from.sku_id || target.store_id != from.store_id {
        return Err(DomainError::field(
            "slot_id",
            "different_service",
            messages::move_other_service(),
        ));
    }
    Ok((from, target))
}

/// Only a live booking that holds no offered place moves.
fn movable(b: &Booking) -> DomainResult<()> {
    match b.status {
        BookingStatus::Booked => {}
        BookingStatus::Cancelled => return Err(cancelled(b)),
        _ => {
            return Err(DomainError::conflict(
                "booking_not_movable",
                messages::booking_not_movable(),
                serde_json::json!({ "reference": b.reference, "status": b.status.as_str() }),
            ))
        }
    }
    if b.hold_until.is_some() {
        return Err(held(b));
    }
    Ok(())
}

fn cancelled(b: &Booking) -> DomainError {
    DomainError::conflict(
        "booking_cancelled",
        messages::booking_cancelled(&b.reference),
        serde_json::json!({ "reference": b.reference }),
    )
}

/// The move's transaction: the target's places first (a full, closed or started target ends it
/// there), the booking's row, the old slot's places, the audit row and the event. `Some` when
/// the booking turned out to be in the target already (moved there meanwhile).
async fn write_move(
    db: &Db,
    actor: &Actor,
    b: &Booking,
    (from, target): (&Slot, &Slot),
    now: i64,
) -> DomainResult<Option<Booking>> {
    let merchant = Scope::Merchant(b.merchant_id);
    let mut tx = db.begin_write().await?;
    if !take_places(&mut tx, b.merchant_id, target.id, b.places, now).await? {
        tx.rollback().await?;
        let target = slots::get(db, merchant, target.id).await?;
        return Err(refused(db, b.merchant_id, &target, now, b.places).await?);
    }
    // Conditional on the booking as read: a cancel or another move meanwhile wins. The unique
    // index of one active booking per customer per slot refuses a customer already there.
    let moved = sqlx::query(
        "UPDATE bookings SET slot_id = $1, moved_from_slot_id = $2, updated_at = $3
         WHERE id = $4 AND slot_id = $2 AND status = 'BOOKED' AND hold_until IS NULL",
    )
    .bind(target.id)
    .bind(from.id)
    .bind(now)
    .bind(b.id)
    .execute(&mut *tx)
    .await;
    let moved = match moved {
        Ok(r) => r.rows_affected() == 1,
        Err(e) if is_unique_violation(&e) => {
            tx.rollback().await?;
            return match active_for_customer(db, target.id, &b.customer_key).await? {
                Some(existing) => Err(already_booked(&existing)),
                None => Err(DomainError::Internal(
                    "booking move conflicted with nothing".into(),
                )),
            };
        }
        Err(e) => return Err(e.into()),
    };
    if !moved {
        tx.rollback().await?;
        // Cancelled or moved by someone else meanwhile: the booking as it is now says which.
        let now_b = by_reference(db, merchant, &b.reference).await?;
        return if now_b.slot_id == target.id {
            Ok(Some(now_b))
        } else if now_b.status == BookingStatus::Cancelled {
            Err(cancelled(b))
        } else {
            Err(DomainError::conflict(
                "booking_changed",
                messages::booking_changed(),
                serde_json::json!({ "reference": b.reference, "slot_id": now_b.slot_id }),
            ))
        };
    }
    free_places(&mut tx, from.id, b.places, now).await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(b.merchant_id),
        "booking.move",
        &format!("booking:{}", b.reference),
        &format!("slot:{} -> slot:{}", from.id, target.id),
    )
    .await?;
    crate::domain::trail::events::record_in_slot(
        &mut tx,
        db.now_ms(),
        b.merchant_id,
        EventType::BookingMoved,
        "booking",
        &b.reference,
        target.id,
        serde_json::json!({"before": {"slot_id": from.id}, "after": {"slot_id": target.id},
            "places": b.places}),
    )
    .await?;
    tx.commit().await?;
    Ok(None)
}

/// After a move's commit: Redis takes the target's places and gives the old slot's back, and
/// the old slot's freed places go to its waiting list.
async fn follow_move(db: &Db, b: &Booking, from: i64, target: i64) -> DomainResult<()> {
    gate::slot_follow(
        db,
        b.merchant_id,
        target,
        &b.customer_key,
        None,
        false,
        b.places,
    )
    .await;
    let idem: Option<String> =
        sqlx::query_scalar("SELECT idempotency_key FROM bookings WHERE id = $1")
            .bind(b.id)
            .fetch_one(&db.pool)
            .await?;
    gate::slot_follow(
        db,
        b.merchant_id,
        from,
        &b.customer_key,
        idem.as_deref(),
        true,
        b.places,
    )
    .await;
    crate::domain::slots::cache::freed(db, b.merchant_id, from);
    Ok(())
}

/// The customer came (ATTENDED: from the store's check-in time before the start) or did not
/// (NO_SHOW: after the start). Both keep the place counted.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn mark(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    reference: &str,
    status: BookingStatus,
) -> DomainResult<Booking> {
    let status = status.as_str();
    let b = by_reference(db, Scope::Merchant(merchant_id), reference).await?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    // Checked in from the store's check-in time before the start; a no-show only after it.
    let early_ms: i64 = if status == BookingStatus::Attended.as_str() {
        sqlx::query_scalar(
            "SELECT st.check_in_minutes * 60000 FROM slots s JOIN stores st ON st.id = s.store_id WHERE s.id = $1",
        )
        .bind(b.slot_id)
        .fetch_one(&db.pool)
        .await?
    } else {
        0
    };
    let done = sqlx::query(
        "UPDATE bookings SET status = $1, updated_at = $2, marked_by = $4, marked_at = $2
         WHERE id = $3 AND status IN ('BOOKED', 'ATTENDED', 'NO_SHOW') AND hold_until IS NULL
           AND (SELECT s.starts_at FROM slots s WHERE s.id = bookings.slot_id) <= $2 + $5",
    )
    .bind(status)
    .bind(now)
    .bind(b.id)
    .bind(&actor.label)
    .bind(early_ms)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        tx.rollback().await?;
        let slot = slots::get(db, Scope::Merchant(merchant_id), b.slot_id).await?;
        return Err(if b.status == BookingStatus::Cancelled {
            DomainError::conflict(
                "booking_cancelled",
                messages::booking_cancelled(&b.reference),
                serde_json::json!({ "reference": b.reference }),
            )
        } else if b.hold_until.is_some() {
            held(&b)
        } else {
            refusal("slot_not_started", messages::slot_not_started(), &slot)
        });
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "booking.mark",
        &format!("booking:{}", b.reference),
        status,
    )
    .await?;
    let ty = if status == BookingStatus::Attended.as_str() {
        EventType::BookingAttended
    } else {
        EventType::BookingNoShow
    };
    booking_event(
        &mut tx,
        db.now_ms(),
        merchant_id,
        ty,
        &b.reference,
        b.slot_id,
        (Some(b.status.as_str()), status),
        b.places,
    )
    .await?;
    tx.commit().await?;
    by_reference(db, Scope::Merchant(merchant_id), &b.reference).await
}

/// Cancels every active booking in a closure's slots (staff called the customers).
pub async fn cancel_for_closure(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    closure_id: i64,
    reason: &str,
) -> DomainResult<usize> {
    let contacts =
        crate::domain::slots::closures::closure_contacts(db, merchant_id, closure_id).await?;
    let mut n = 0;
    for c in contacts {
        match cancel(
            db,
            actor,
            Scope::Merchant(merchant_id),
            &c.reference,
            Some(reason),
        )
        .await
        {
            Ok(b) if b.status == BookingStatus::Cancelled => n += 1,
            Ok(_) | Err(DomainError::Conflict { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
