//! A place held for a waiting customer: taking it, ending it (accepted, declined, lapsed) and what
//! follows a freed place.

#[allow(unused_imports)]
use super::*;

/// How a place held for a waiting customer ends without them taking it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldEnd {
    /// The customer said no, while it was still held.
    Declined,
    /// The hold's time passed (whether or not the slot has started since: an offer nobody took
    /// is no booking).
    Lapsed,
}

/// Places a cancel gave back, for what follows the commit ([`after_freed`]).
#[derive(Debug, Clone)]
pub struct Freed {
    pub merchant_id: MerchantId,
    pub slot_id: i64,
    pub customer_key: String,
    pub idempotency_key: Option<String>,
    pub places: i64,
}

/// Cancels a held booking inside the caller's transaction (the waiting list's, which moves its
/// entry in the same commit), conditional on the hold still being there: a hold accepted a moment
/// earlier is left alone (None). The cancel, its freed places, audit and event are the ordinary
/// cancel's; the caller commits, then calls [`after_freed`].
pub async fn end_hold(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    booking_id: i64,
    end: HoldEnd,
    now: i64,
) -> DomainResult<Option<Freed>> {
    let (condition, reason) = match end {
        HoldEnd::Declined => ("hold_until > $2", "declined"),
        HoldEnd::Lapsed => ("hold_until <= $2", "lapsed"),
    };
    let done: Option<(MerchantId, i64, String, String, Option<String>, i64)> =
        sqlx::query_as(&format!(
            "UPDATE bookings SET status = 'CANCELLED', cancel_reason = NULL, hold_until = NULL, updated_at = $2
             WHERE id = $1 AND status = 'BOOKED' AND hold_until IS NOT NULL AND {condition}
             RETURNING merchant_id, slot_id, reference, customer_key, idempotency_key, places"
        ))
        .bind(booking_id)
        .bind(now)
        .fetch_optional(&mut **tx)
        .await?;
    let Some((merchant_id, slot_id, reference, customer_key, idempotency_key, places)) = done
    else {
        return Ok(None);
    };
    free_places(tx, slot_id, places, now).await?;
    crate::domain::trail::audit::record(
        tx,
        now,
        actor,
        Some(merchant_id),
        "booking.cancel",
        &format!("booking:{reference}"),
        &format!("waiting-list offer {reason}"),
    )
    .await?;
    booking_event(
        tx,
        now,
        merchant_id,
        EventType::BookingCancelled,
        &reference,
        slot_id,
        (Some("BOOKED"), "CANCELLED"),
        places,
    )
    .await?;
    Ok(Some(Freed {
        merchant_id,
        slot_id,
        customer_key,
        idempotency_key,
        places,
    }))
}

/// After a commit that freed places: the Redis gate follows, and the waiting list hears of it.
pub async fn after_freed(db: &Db, f: &Freed) {
    gate::slot_follow(
        db,
        f.merchant_id,
        f.slot_id,
        &f.customer_key,
        f.idempotency_key.as_deref(),
        true,
        f.places,
    )
    .await;
    crate::domain::slots::cache::freed(db, f.merchant_id, f.slot_id);
}

/// The customer takes a held place, inside the caller's transaction: the hold is cleared if it
/// is still running and its slot still open (false: it lapsed or ended meanwhile, or staff closed
/// the slot, and nothing changed; a hold in a closed slot lapses like any other).
pub async fn take_hold(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    booking_id: i64,
    now: i64,
) -> DomainResult<bool> {
    let done = sqlx::query(
        "UPDATE bookings SET hold_until = NULL, updated_at = $2
         WHERE id = $1 AND status = 'BOOKED' AND hold_until > $2
           AND (SELECT s.status FROM slots s WHERE s.id = bookings.slot_id) = 'OPEN'",
    )
    .bind(booking_id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Held bookings whose hold has passed (ids), for the waiting list's sweep.
pub async fn lapsed_holds(db: &Db, now: i64) -> DomainResult<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM bookings WHERE hold_until IS NOT NULL AND hold_until <= $1 AND status = 'BOOKED' ORDER BY hold_until LIMIT 500",
    )
    .bind(now)
    .fetch_all(&db.pool)
    .await?)
}
