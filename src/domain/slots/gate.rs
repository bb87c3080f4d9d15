//! The Redis gate for slots: a slot's counts and state loaded from SQL, the hot-path take and
//! follow, and forgetting slots SQL changed (see `kernel::gate` for when the gate is on).

use crate::domain::MerchantId;
use std::sync::Arc;

use crate::infra::counters::{Gate, SlotAnswer, SlotFollow, SlotState, Subject};
use crate::infra::db::Db;

use crate::domain::kernel::error::DomainResult;
pub use crate::domain::kernel::gate::{active, touched};

/// A slot's counts and state as SQL has them.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SlotRow {
    pub capacity: i64,
    pub booked: i64,
    pub status: String,
    pub closed_reason: Option<String>,
    pub starts_at: i64,
    pub frozen_finding_id: Option<i64>,
}

impl SlotRow {
    /// The status Redis keeps: a slot frozen by reconciliation is refused by SQL, so Redis only
    /// needs to know it is not open.
    pub fn gate_status(&self) -> String {
        if self.frozen_finding_id.is_some() {
            "FROZEN".into()
        } else {
            self.status.clone()
        }
    }
    pub fn remaining(&self) -> i64 {
        (self.capacity - self.booked).max(0)
    }
}

pub async fn slot_row(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
) -> DomainResult<Option<SlotRow>> {
    Ok(sqlx::query_as(
        "SELECT capacity, booked, status, closed_reason, starts_at, frozen_finding_id FROM slots WHERE id = $1 AND merchant_id = $2",
    )
    .bind(slot_id)
    .bind(merchant_id)
    .fetch_optional(&db.pool)
    .await?)
}

async fn slot_state(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
) -> DomainResult<Option<SlotState>> {
    Ok(slot_row(db, merchant_id, slot_id)
        .await?
        .map(|r| SlotState {
            remaining: r.remaining(),
            status: r.gate_status(),
            closed_reason: r.closed_reason.clone().unwrap_or_default(),
            starts_at: r.starts_at,
        }))
}

/// Loads a slot into Redis now unless it is loaded, before a change made in SQL first (a move,
/// a cancel) that Redis then follows. The follow then finds the slot and counts the change.
/// Otherwise a load running meanwhile (a booking's, on another request or instance) could write
/// a count read before the change after the follow found no key and did nothing, or count the
/// change twice (read after it, written before the follow). Once the slot is loaded before the
/// change, a load that comes later writes nothing. Best effort: Redis failing leaves it to the
/// degraded path and reconciliation.
pub async fn slot_ensure_loaded(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
) -> DomainResult<()> {
    let Some(gate) = active(db) else {
        return Ok(());
    };
    if !matches!(gate.slot_read(merchant_id.0, slot_id).await, Ok(None)) {
        return Ok(());
    }
    if let Some(state) = slot_state(db, merchant_id, slot_id).await? {
        let _ = gate.slot_load(merchant_id.0, slot_id, &state).await;
    }
    Ok(())
}

/// Asks Redis for a booking's `places`. None: Redis unavailable, or the slot is unknown to SQL (the SQL
/// path then answers "not found").
pub async fn slot_take(
    db: &Db,
    gate: &Arc<Gate>,
    merchant_id: MerchantId,
    slot_id: i64,
    customer: &str,
    idempotency_key: Option<&str>,
    places: i64,
) -> DomainResult<Option<(SlotAnswer, i64)>> {
    for _ in 0..3 {
        let now = db.now_ms();
        match gate
            .slot_book(
                merchant_id.0,
                slot_id,
                customer,
                idempotency_key,
                now,
                places,
            )
            .await
        {
            Err(_) => return Ok(None),
            Ok((SlotAnswer::Load, _)) => {
                crate::telemetry::count_gate("book", "miss");
                let Some(state) = slot_state(db, merchant_id, slot_id).await? else {
                    return Ok(None);
                };
                if gate
                    .slot_load(merchant_id.0, slot_id, &state)
                    .await
                    .is_err()
                {
                    return Ok(None);
                }
            }
            Ok(a) => return Ok(Some(a)),
        }
    }
    Ok(None)
}

/// When Redis marked the customer (or the key) as booking the slot (ms), if it did. A mark lasts
/// as long as the booking (SQL tells a booking made from one still on its way); its time tells
/// a take just made from an old one. None also when Redis does not answer: SQL then decides at
/// once, as it does without the gate.
pub async fn slot_marked_at(
    gate: &Arc<Gate>,
    merchant_id: MerchantId,
    slot_id: i64,
    customer: &str,
    idempotency_key: Option<&str>,
) -> Option<i64> {
    gate.slot_marked_at(merchant_id.0, slot_id, customer, idempotency_key)
        .await
        .ok()
        .flatten()
}

/// Moves a place in Redis after SQL decided: gives it back (a committed cancel, or undoing a
/// place SQL refused), or takes one SQL booked without the gate (Redis answered "seen" or
/// "closed", or was unavailable), or Redis would go on offering it to buyers SQL then refuses.
/// Redis unavailable: the slot is rebuilt when it is back.
pub async fn slot_follow(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
    customer: &str,
    idempotency_key: Option<&str>,
    give_back: bool,
    places: i64,
) {
    let subject = Subject::Slot {
        merchant: merchant_id.0,
        slot: slot_id,
    };
    let Some(gate) = active(db) else {
        touched(db, [subject]);
        return;
    };
    let follow = if give_back {
        SlotFollow::GiveBack
    } else {
        SlotFollow::Take { at: db.now_ms() }
    };
    if gate
        .slot_follow(
            merchant_id.0,
            slot_id,
            customer,
            idempotency_key,
            follow,
            places,
        )
        .await
        .is_err()
    {
        gate.touch(subject);
    }
}

/// Slot keys of these slots are dropped (after closures, capacity edits, reopening…).
pub async fn forget_slots(db: &Db, merchant_id: MerchantId, slot_ids: &[i64]) {
    let subjects: Vec<Subject> = slot_ids
        .iter()
        .map(|&slot| Subject::Slot {
            merchant: merchant_id.0,
            slot,
        })
        .collect();
    db.forget(subjects).await;
}

/// Loads the upcoming slots booked since `since` (a thousand at most). Returns how many were
/// loaded, and false when Redis failed on the way.
pub async fn warm_slots(db: &Db, gate: &Arc<Gate>, since: i64) -> DomainResult<(usize, bool)> {
    let slots: Vec<(MerchantId, i64)> = sqlx::query_as(
        "SELECT DISTINCT s.merchant_id, s.id FROM slots s JOIN bookings b ON b.slot_id = s.id
         WHERE b.created_at > $1 AND s.starts_at > $2 LIMIT 1000",
    )
    .bind(since)
    .bind(db.now_ms())
    .fetch_all(&db.pool)
    .await?;
    let mut n = 0;
    for (m, s) in slots {
        if let Some(state) = slot_state(db, m, s).await? {
            if gate.slot_load(m.0, s, &state).await.is_err() {
                return Ok((n, false));
            }
            n += 1;
        }
    }
    Ok((n, true))
}
