//! The Redis gate for codes: the pool of sellable ids refilled from SQL, the hot-path take, and
//! the give-back (see `kernel::gate` for when the gate is on).

use crate::domain::MerchantId;
use std::sync::Arc;

use crate::infra::counters::{CodeAnswer, Gate, Subject, CODE_REFILL_BATCH};
use crate::infra::db::Db;

use crate::domain::kernel::error::DomainResult;
pub use crate::domain::kernel::gate::{active, touched};
use crate::domain::kernel::gate::{record_left_s, RECORD_AFTER_HOLD_S};

/// Reads the next ids past the cursor from SQL into the pool, under the pool's short lock.
pub async fn code_refill(db: &Db, gate: &Arc<Gate>, sku_id: i64, reset: bool) -> DomainResult<()> {
    match gate.code_refill_lock(sku_id).await {
        Ok(true) => {}
        Ok(false) => {
            // Another caller is refilling: give it a moment.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            return Ok(());
        }
        Err(_) => return Ok(()),
    }
    let cursor = if reset {
        0
    } else {
        match gate.code_cursor(sku_id).await {
            Ok(Some(c)) => c,
            Ok(None) => 0,
            Err(_) => return Ok(()),
        }
    };
    let reset = reset || cursor == 0;
    if reset {
        // A pool loaded afresh lost its orders' records with it (a flush, a failover): they come
        // back first, so that no retry of an earlier order is taken for a new buyer.
        if code_records(db, gate, sku_id).await.is_err() {
            return Ok(());
        }
    }
    let ids: Vec<i64> = sqlx::query_scalar(&format!(
        "SELECT id FROM codes WHERE sku_id = $1 AND {} AND id > $3 ORDER BY id LIMIT $4",
        crate::domain::codes::SELLABLE
    ))
    .bind(sku_id)
    .bind(db.now_ms())
    .bind(cursor)
    .bind(CODE_REFILL_BATCH)
    .fetch_all(&db.pool)
    .await?;
    let more = ids.len() as i64 == CODE_REFILL_BATCH;
    let next = ids.last().copied().unwrap_or(cursor);
    let _ = gate.code_refill(sku_id, reset, more, next, &ids).await;
    Ok(())
}

/// Puts back, where none is, the records of the orders that took codes of a SKU and whose record
/// would still live (the hold's lifetime and an hour, as `reserve::gate_lines` gives it), as
/// `load_stock_now` does for goods. Without them, after a flush the retry of a paid or released
/// order on an emptied pool heard `insufficient_stock` instead of its order's answer. The read is
/// one range of the index (sku, expires_at): it grows with the SKU's sales of the last hold and
/// hour, not with its history.
async fn code_records(db: &Db, gate: &Arc<Gate>, sku_id: i64) -> Result<(), ()> {
    let now = db.now_ms();
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT r.order_id, cr.expires_at FROM code_reservations cr
         JOIN reservations r ON r.id = cr.reservation_id
         WHERE cr.sku_id = $1 AND cr.expires_at > $2",
    )
    .bind(sku_id)
    .bind(now - RECORD_AFTER_HOLD_S * 1000)
    .fetch_all(&db.pool)
    .await
    .map_err(|_| ())?;
    let records: Vec<(String, i64)> = rows
        .into_iter()
        .map(|(order, expires_at)| (order, record_left_s(expires_at, now).max(1)))
        .collect();
    gate.code_records(sku_id, &records).await.map_err(|_| ())
}

/// Asks Redis for `qty` code ids for an order. None: go to SQL.
pub async fn code_take(
    db: &Db,
    gate: &Arc<Gate>,
    sku_id: i64,
    order: &str,
    qty: i64,
    order_ttl_s: i64,
) -> DomainResult<Option<CodeAnswer>> {
    // Enough rounds to wait out another caller's refill (5 ms each) before going to SQL alone.
    for _ in 0..40 {
        match gate.code_hold(sku_id, order, qty, order_ttl_s).await {
            Err(_) => return Ok(None),
            Ok(CodeAnswer::Load) => {
                crate::telemetry::count_gate("code_hold", "miss");
                code_refill(db, gate, sku_id, true).await?;
            }
            Ok(CodeAnswer::Refill) => {
                crate::telemetry::count_gate("code_hold", "refill");
                code_refill(db, gate, sku_id, false).await?;
            }
            Ok(CodeAnswer::Held { ids, low }) => {
                if low {
                    let (db, gate) = (db.clone(), Arc::clone(gate));
                    tokio::spawn(async move {
                        let _ = code_refill(&db, &gate, sku_id, false).await;
                    });
                }
                return Ok(Some(CodeAnswer::Held { ids, low }));
            }
            Ok(a) => return Ok(Some(a)),
        }
    }
    Ok(None)
}

/// Removes from the pool the codes an order took through SQL alone (the gate was bypassed: a
/// refill held up by another caller, a load that failed, another line of the order), and records
/// the order as `code_hold` would have. Without
/// the record, the order's retry looked new to Redis and, once the pool had run dry, heard
/// `insufficient_stock` instead of its hold.
pub async fn codes_taken_outside(
    db: &Db,
    merchant_id: MerchantId,
    order: &str,
    sku_id: i64,
) -> DomainResult<()> {
    let Some(gate) = active(db) else {
        return Ok(());
    };
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT c.id, r.expires_at FROM codes c JOIN reservations r ON r.id = c.reservation_id
         WHERE r.merchant_id = $1 AND r.order_id = $2 AND c.sku_id = $3",
    )
    .bind(merchant_id)
    .bind(order)
    .bind(sku_id)
    .fetch_all(&db.pool)
    .await?;
    let ids: Vec<i64> = rows.iter().map(|(id, _)| *id).collect();
    let record = rows.first().map(|&(_, expires_at)| {
        (
            order.to_string(),
            record_left_s(expires_at, db.now_ms()).max(1),
        )
    });
    let fixed = gate.code_pool_fix(sku_id, &ids, &[]).await.is_ok();
    let recorded = match record {
        Some(r) => gate.code_records(sku_id, &[r]).await.is_ok(),
        None => true,
    };
    if !(fixed && recorded) {
        gate.touch(Subject::Codes(sku_id));
    }
    Ok(())
}

/// Puts code ids back in the pool (release, expiry, or undoing a hold SQL refused).
pub async fn code_give_back(db: &Db, sku_id: i64, order: &str, ids: &[i64], undo: bool) {
    let Some(gate) = active(db) else {
        touched(db, [Subject::Codes(sku_id)]);
        return;
    };
    if gate.code_return(sku_id, order, ids, undo).await.is_err() {
        gate.touch(Subject::Codes(sku_id));
    }
}
