//! The domain side of the Redis gate: what to load into Redis from SQL, and the hot-path flow
//! (ask Redis; a "no" answers at once; a "yes" goes on to SQL, which may still refuse).
//!
//! Every function here returns `None` (or does nothing) when the gate is off or Redis failed;
//! the caller then runs on SQL alone and calls [`touched`] for what it changed, so the keys are
//! rebuilt from SQL when Redis comes back.

use crate::domain::MerchantId;
use std::sync::Arc;

use crate::infra::counters::{
    CodeAnswer, Gate, Settle, SlotAnswer, SlotFollow, SlotState, StockAnswer, StockCounts,
    StockRecord, Subject, CODE_REFILL_BATCH,
};
use crate::infra::db::Db;

use crate::domain::kernel::error::DomainResult;

/// The gate of this instance, when configured and not degraded.
pub fn active(db: &Db) -> Option<&Arc<Gate>> {
    db.gate.as_ref().filter(|g| g.on())
}

/// Records that subjects changed in SQL alone (degraded, or Redis failed mid-call).
pub fn touched(db: &Db, subjects: impl IntoIterator<Item = Subject>) {
    if let Some(g) = &db.gate {
        for s in subjects {
            g.touch(s);
        }
    }
}

// ---- stock ---------------------------------------------------------------------------------

/// A SKU's balances as Redis mirrors them, in the order reservations try warehouses.
pub async fn stock_rows(db: &Db, sku_id: i64) -> DomainResult<Vec<(i64, StockCounts)>> {
    let mut conn = db.pool.acquire().await?;
    stock_rows_on(&mut conn, sku_id).await
}

async fn stock_rows_on(
    conn: &mut sqlx::AnyConnection,
    sku_id: i64,
) -> DomainResult<Vec<(i64, StockCounts)>> {
    let rows: Vec<(i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT b.warehouse_id, b.total - b.locked - b.sold - b.frozen, b.locked, b.sold
         FROM stock_balances b JOIN warehouses w ON w.id = b.warehouse_id
         WHERE b.sku_id = $1 ORDER BY w.priority DESC, w.id",
    )
    .bind(sku_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(w, a, l, s)| {
            (
                w,
                StockCounts {
                    available: a,
                    locked: l,
                    sold: s,
                },
            )
        })
        .collect())
}

/// Loads a SKU into Redis from SQL: first the records of its orders, then its counts. The counts
/// alone would forget who holds what: after a flush (or an eviction, or a failover that lost the
/// last writes) a retry of an order accepted before it would look new, and on a SKU sold out
/// since would hear "sold out" instead of its hold, or instead of "confirmed" or "released".
/// Records first, so a retry never finds the counts without its record. The records put back are
/// those the scripts would still keep: every line held, and every line settled whose record
/// (the hold's lifetime and an hour) has not run out: lines whose hold ended less than an hour
/// ago or ends later. So the read grows with the sales of the hold's lifetime and an hour (an
/// hour and a quarter at the default 15 minutes), not with the SKU's history; the index finds
/// both per warehouse and status. The callers of this instance that missed together share one
/// load. False: Redis failed.
async fn load_stock(db: &Db, gate: &Arc<Gate>, sku_id: i64) -> DomainResult<bool> {
    gate.load_once(Subject::Stock(sku_id), || load_stock_now(db, gate, sku_id))
        .await
}

/// How long an order's record lives past its hold (`reservations::reserve::gate_lines`).
pub const RECORD_AFTER_HOLD_S: i64 = 3600;

async fn load_stock_now(db: &Db, gate: &Arc<Gate>, sku_id: i64) -> DomainResult<bool> {
    // The counts and the records from one snapshot: a hold committed between two reads would
    // come back as a record its counts do not include (its release would then free units twice).
    let mut tx = db.pool.begin().await?;
    if db.dialect == crate::infra::db::Dialect::Postgres {
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .execute(&mut *tx)
            .await?;
    }
    let rows = stock_rows_on(&mut tx, sku_id).await?;
    let now = db.now_ms();
    // One read per warehouse (a SKU has few), each two ranges of the index with every column
    // bound, whatever the planner thinks of joins: the held lines, and the settled ones whose
    // record would still live.
    let mut lines: Vec<(String, i64, i64, String, i64)> = Vec::new();
    for (warehouse, _) in &rows {
        let mut of_warehouse = sqlx::query_as(
            "SELECT order_id, warehouse_id, qty, status, expires_at FROM stock_reservations
             WHERE sku_id = $1 AND warehouse_id = $2 AND status = 'RESERVED' AND hold = $3
             UNION ALL
             SELECT order_id, warehouse_id, qty, status, expires_at FROM stock_reservations
             WHERE sku_id = $1 AND warehouse_id = $2
               AND status IN ('CONFIRMED', 'RELEASED', 'EXPIRED') AND expires_at > $4
               AND hold = $3",
        )
        .bind(sku_id)
        .bind(*warehouse)
        .bind(crate::domain::orders::LineHold::Locked.as_str())
        .bind(now - RECORD_AFTER_HOLD_S * 1000)
        .fetch_all(&mut *tx)
        .await?;
        lines.append(&mut of_warehouse);
    }
    tx.commit().await?;
    let records: Vec<StockRecord> = lines
        .into_iter()
        .filter_map(|(order, warehouse, qty, status, expires_at)| {
            stock_record(order, warehouse, qty, &status, expires_at, now)
        })
        .collect();
    Ok(gate.stock_records(sku_id, &records).await.is_ok()
        && gate.stock_load(sku_id, &rows).await.is_ok())
}

/// Seconds an order's Redis record has left: the hold's lifetime and an hour, as the reserve and
/// hold scripts give it (negative once that has run out).
fn record_left_s(expires_at: i64, now: i64) -> i64 {
    (expires_at - now) / 1000 + RECORD_AFTER_HOLD_S
}

/// The record the reserve script would keep for a goods line in this state.
fn stock_record(
    order: String,
    warehouse: i64,
    qty: i64,
    status: &str,
    expires_at: i64,
    now: i64,
) -> Option<StockRecord> {
    use crate::domain::orders::ReservationStatus as S;
    let settled = match S::parse(status)? {
        S::Reserved => None,
        S::Confirmed => Some(Settle::Confirm),
        S::Released | S::Expired => Some(Settle::Release),
    };
    // A record lives as long as the reserve script gives it: the hold's lifetime and an hour. A
    // hold past its time and not yet swept keeps the hour, so the sweep's release still moves it.
    let left = record_left_s(expires_at, now);
    let ttl_s = match settled {
        None => left.max(RECORD_AFTER_HOLD_S),
        Some(_) => left.max(1),
    };
    Some(StockRecord {
        order,
        warehouse,
        qty,
        settled,
        ttl_s,
    })
}

/// Puts back, where none is, the Redis records of an order SQL holds. A hold Redis gave for an
/// order SQL already knew (its twin got there first, or its record had been lost) is undone, and
/// the undo forgets the order in Redis; without its records back, its next retry looked new to
/// Redis and, once the SKU had sold out, heard `insufficient_stock` instead of its order. The
/// counts need nothing: the order's lines were counted when they were held (by Redis, by the
/// twin's mirror, or by the load that follows a degraded spell). One gap: an order held by an
/// instance still degraded is counted only once that instance is back; a settle before then
/// moves units Redis never locked (SQL still refuses what is not there, and that instance's
/// reload or reconciliation puts the counts right).
pub async fn restore_order_records(
    db: &Db,
    merchant_id: MerchantId,
    order: &str,
) -> DomainResult<()> {
    let Some(gate) = active(db) else {
        return Ok(());
    };
    let now = db.now_ms();
    let goods: Vec<(i64, i64, i64, String, i64)> = sqlx::query_as(
        "SELECT sku_id, warehouse_id, qty, status, expires_at FROM stock_reservations
         WHERE merchant_id = $1 AND order_id = $2 AND hold = $3",
    )
    .bind(merchant_id)
    .bind(order)
    .bind(crate::domain::orders::LineHold::Locked.as_str())
    .fetch_all(&db.pool)
    .await?;
    for (sku, warehouse, qty, status, expires_at) in goods {
        let Some(record) =
            stock_record(order.to_string(), warehouse, qty, &status, expires_at, now)
        else {
            continue;
        };
        if gate.stock_records(sku, &[record]).await.is_err() {
            gate.touch(Subject::Stock(sku));
        }
    }
    let codes: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT DISTINCT cr.sku_id, cr.expires_at
         FROM code_reservations cr JOIN reservations r ON r.id = cr.reservation_id
         WHERE r.merchant_id = $1 AND r.order_id = $2",
    )
    .bind(merchant_id)
    .bind(order)
    .fetch_all(&db.pool)
    .await?;
    for (sku, expires_at) in codes {
        let ttl_s = record_left_s(expires_at, now).max(1);
        if gate
            .code_records(sku, &[(order.to_string(), ttl_s)])
            .await
            .is_err()
        {
            gate.touch(Subject::Codes(sku));
        }
    }
    Ok(())
}

/// Asks Redis to hold `qty` of a SKU for an order, loading the SKU first when needed.
/// None: Redis is unavailable; go to SQL.
pub async fn stock_hold(
    db: &Db,
    gate: &Arc<Gate>,
    sku_id: i64,
    order: &str,
    qty: i64,
    warehouse: Option<i64>,
    order_ttl_s: i64,
) -> DomainResult<Option<StockAnswer>> {
    for _ in 0..3 {
        match gate
            .stock_reserve(sku_id, order, qty, warehouse, order_ttl_s)
            .await
        {
            Err(_) => return Ok(None),
            Ok(StockAnswer::Load) => {
                crate::telemetry::count_gate("reserve", "miss");
                if !load_stock(db, gate, sku_id).await? {
                    return Ok(None);
                }
            }
            Ok(a) => return Ok(Some(a)),
        }
    }
    Ok(None)
}

/// Settles order lines in Redis after SQL committed.
pub async fn stock_settle(db: &Db, lines: &[(i64, i64)], order: &str, action: Settle) {
    let Some(gate) = active(db) else {
        touched(db, lines.iter().map(|(sku, _)| Subject::Stock(*sku)));
        return;
    };
    for (sku, wh) in lines {
        if gate.stock_settle(*sku, *wh, order, action).await.is_err() {
            gate.touch(Subject::Stock(*sku));
        }
    }
}

/// Takes in Redis the units SQL held for an order without the gate (lines as SKU, warehouse,
/// qty): available → locked, as the reserve script would have. A failure leaves the SKU for
/// reconciliation's drift repair, like any other Redis error.
pub async fn stock_mirror(db: &Db, lines: &[(i64, i64, i64)]) {
    let Some(gate) = active(db) else {
        touched(db, lines.iter().map(|(sku, _, _)| Subject::Stock(*sku)));
        return;
    };
    for &(sku, wh, qty) in lines {
        let delta = StockCounts {
            available: -qty,
            locked: qty,
            sold: 0,
        };
        if gate.stock_fix(sku, wh, delta).await.is_err() {
            gate.touch(Subject::Stock(sku));
        }
    }
}

// ---- slots ---------------------------------------------------------------------------------

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

// ---- codes ---------------------------------------------------------------------------------

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

/// Warms the keys of recently active SKUs and slots at start-up, so the first buyers of a sale
/// already find them in Redis.
pub async fn warm(db: &Db) -> DomainResult<usize> {
    let Some(gate) = active(db) else {
        return Ok(0);
    };
    // Keys evicted one by one would make Redis forget an order (its retry would take units
    // again) or part of a SKU: the gate wants a Redis that refuses writes rather than evicts.
    for (node, policy) in gate.eviction_policies().await {
        if policy != "noeviction" {
            tracing::warn!(
                node = %node,
                policy = %policy,
                "Redis evicts keys under memory pressure: set maxmemory-policy noeviction for the gate"
            );
        }
    }
    let since = db.now_ms() - 24 * 3600 * 1000;
    let skus: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT sku_id FROM stock_ledger WHERE created_at > $1 ORDER BY sku_id LIMIT 1000",
    )
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    let mut n = 0;
    for sku in skus {
        if !load_stock(db, gate, sku).await? {
            return Ok(n);
        }
        n += 1;
    }
    let slots: Vec<(MerchantId, i64)> = sqlx::query_as(
        "SELECT DISTINCT s.merchant_id, s.id FROM slots s JOIN bookings b ON b.slot_id = s.id
         WHERE b.created_at > $1 AND s.starts_at > $2 LIMIT 1000",
    )
    .bind(since)
    .bind(db.now_ms())
    .fetch_all(&db.pool)
    .await?;
    for (m, s) in slots {
        if let Some(state) = slot_state(db, m, s).await? {
            if gate.slot_load(m.0, s, &state).await.is_err() {
                return Ok(n);
            }
            n += 1;
        }
    }
    Ok(n)
}
