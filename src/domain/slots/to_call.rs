//! Bookings to call: every active booking in a closed slot that is not over yet. Staff close
//! slots for leave or a power cut; the customers who booked them have to hear about it. The list
//! is not stored: a booking leaves it by itself when it is moved to an open slot, cancelled, or
//! its slot reopens or ends. What is stored is the call: who marked the customer reached, when,
//! and a note of what was said.

use serde::Serialize;
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate;
use crate::domain::{Actor, DomainError, MerchantId, StoreId};
use crate::infra::db::Db;

/// A note about a call: at most this many characters.
pub const NOTE_MAX: usize = 500;

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct ToCall {
    pub reference: String,
    pub customer_name: String,
    pub customer_phone: String,
    pub places: i64,
    pub slot_id: i64,
    pub starts_at: i64,
    pub ends_at: i64,
    pub sku_code: String,
    pub staff_name: Option<String>,
    pub closed_reason: Option<String>,
    pub closure_id: Option<i64>,
    pub contacted_at: Option<i64>,
    pub contacted_by: Option<String>,
    pub contact_note: Option<String>,
}

const TO_CALL_FROM: &str = "FROM bookings b JOIN slots s ON s.id = b.slot_id
     WHERE s.store_id = $1 AND s.status = 'CLOSED' AND b.status = 'BOOKED' AND b.hold_until IS NULL AND s.ends_at > $2";

/// The store's bookings to call, soonest first; with `all`, those already reached too.
pub async fn list(db: &Db, store_id: StoreId, all: bool) -> DomainResult<Vec<ToCall>> {
    let which = if all {
        ""
    } else {
        " AND b.contacted_at IS NULL"
    };
    Ok(sqlx::query_as(&format!(
        "SELECT b.reference, b.customer_name, b.customer_phone, b.places, b.slot_id, s.starts_at, s.ends_at,
                k.code AS sku_code, st.name AS staff_name, s.closed_reason, s.closure_id,
                b.contacted_at, b.contacted_by, b.contact_note
         FROM bookings b JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id
         LEFT JOIN staff st ON st.id = s.staff_id
         WHERE s.store_id = $1 AND s.status = 'CLOSED' AND b.status = 'BOOKED' AND b.hold_until IS NULL AND s.ends_at > $2{which}
         ORDER BY s.starts_at, b.id"
    ))
    .bind(store_id)
    .bind(db.now_ms())
    .fetch_all(&db.pool)
    .await?)
}

/// How many of a store's bookings in closed slots nobody has reached yet, and how many there
/// are in all.
pub async fn counts(db: &Db, store_id: StoreId) -> DomainResult<(i64, i64)> {
    let (waiting, all): (i64, i64) = sqlx::query_as(&format!(
        "SELECT CAST(COALESCE(SUM(CASE WHEN b.contacted_at IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COUNT(*) AS BIGINT) {TO_CALL_FROM}"
    ))
    .bind(store_id)
    .bind(db.now_ms())
    .fetch_one(&db.pool)
    .await?;
    Ok((waiting, all))
}

/// Per slot of the store: its bookings nobody has reached yet (the week grid's marks).
pub async fn per_slot(
    db: &Db,
    store_id: StoreId,
) -> DomainResult<std::collections::HashMap<i64, i64>> {
    let rows: Vec<(i64, i64)> = sqlx::query_as(&format!(
        "SELECT b.slot_id, CAST(COUNT(*) AS BIGINT) {TO_CALL_FROM} AND b.contacted_at IS NULL GROUP BY b.slot_id"
    ))
    .bind(store_id)
    .bind(db.now_ms())
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Marks a booking's customer reached (`Some(true)`), or not yet (`Some(false)`, to undo a
/// mistaken mark), or leaves the mark as it is (`None`: "no answer, try again"), with a note.
/// Only a booking of the store; the note may be empty.
pub async fn mark(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    store_id: StoreId,
    reference: &str,
    contacted: Option<bool>,
    note: &str,
) -> DomainResult<()> {
    let note = validate::optional_text("note", note, NOTE_MAX)
        .map_err(|e| DomainError::Invalid(vec![e]))?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    // $8 = 1 keeps the mark as it is and changes the note only.
    let changed = sqlx::query(
        "UPDATE bookings SET contacted_at = CASE WHEN $8 = 1 THEN contacted_at ELSE $1 END,
                contacted_by = CASE WHEN $8 = 1 THEN contacted_by ELSE $2 END,
                contact_note = $3, updated_at = $4
         WHERE reference = $5 AND merchant_id = $6
           AND slot_id IN (SELECT id FROM slots WHERE store_id = $7)",
    )
    .bind((contacted == Some(true)).then_some(now))
    .bind((contacted == Some(true)).then(|| actor.label.clone()))
    .bind(Some(note.clone()).filter(|n| !n.is_empty()))
    .bind(now)
    .bind(reference)
    .bind(merchant_id)
    .bind(store_id)
    .bind(i64::from(contacted.is_none()))
    .execute(&mut *tx)
    .await?;
    if changed.rows_affected() == 0 {
        tx.rollback().await?;
        return Err(DomainError::NotFound("booking"));
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        match contacted {
            Some(true) => "booking.contacted",
            Some(false) => "booking.contact_undone",
            None => "booking.contact_note",
        },
        &format!("booking:{reference}"),
        &note,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
