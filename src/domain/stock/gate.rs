//! The Redis gate for goods stock: what to load from SQL, the hot-path hold and settle, and the
//! mirror of SQL's changes (see `kernel::gate` for when the gate is on).

use crate::domain::MerchantId;
use std::sync::Arc;

use crate::infra::counters::{Gate, Settle, StockAnswer, StockCounts, StockRecord, Subject};
use crate::infra::db::Db;

use crate::domain::kernel::error::DomainResult;
pub use crate::domain::kernel::gate::{active, touched};
use crate::domain::kernel::gate::{record_left_s, RECORD_AFTER_HOLD_S};

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
        .bind(crate::domain::catalog::LineHold::Locked.as_str())
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

/// The record the reserve script would keep for a goods line in this state.
fn stock_record(
    order: String,
    warehouse: i64,
    qty: i64,
    status: &str,
    expires_at: i64,
    now: i64,
) -> Option<StockRecord> {
    use crate::domain::catalog::ReservationStatus as S;
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
    .bind(crate::domain::catalog::LineHold::Locked.as_str())
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

/// Loads the SKUs with ledger rows since `since` (a thousand at most). Returns how many were
/// loaded, and false when Redis failed on the way.
pub async fn warm_skus(db: &Db, gate: &Arc<Gate>, since: i64) -> DomainResult<(usize, bool)> {
    let skus: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT sku_id FROM stock_ledger WHERE created_at > $1 ORDER BY sku_id LIMIT 1000",
    )
    .bind(since)
    .fetch_all(&db.pool)
    .await?;
    let mut n = 0;
    for sku in skus {
        if !load_stock(db, gate, sku).await? {
            return Ok((n, false));
        }
        n += 1;
    }
    Ok((n, true))
}
