//! The verdict watcher: tells an order system when a SKU turns sellable or stops being sellable
//! (`sku.sellable_changed`), with the reasons before and after.
//!
//! A verdict is not a row that one write changes: it turns when stock runs out, when the last
//! slot fills, when a sale window ends at midnight or a slot starts. So it is watched, not
//! hooked: each pass computes the whole catalog (a fixed number of queries) and compares every
//! SKU's verdict with the last one kept in `sku_verdicts`. A turn is written through an update
//! conditional on the verdict it replaces, in the same transaction as its event, so when several
//! instances watch the same database each turn is told once. A pass that read older facts than
//! the last recorded turn changes nothing (`seen_at`): a slow instance cannot undo a newer
//! verdict.
//!
//! Only blocking reasons count. The gate's state is this instance's own (a warning), and
//! warnings and quantities move with every sale; a SKU seen for the first time is recorded
//! without an event (it did not turn, it appeared).

use std::collections::HashMap;

use serde_json::json;

use super::{Thresholds, Verdict};
use crate::domain::kernel::error::DomainResult;
use crate::domain::trail::events::{self, EventType, Subject};
use crate::infra::db::Db;

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WatchReport {
    /// SKUs whose verdict was computed.
    pub seen: usize,
    /// SKUs recorded for the first time (no event).
    pub first_seen: usize,
    /// SKUs that turned sellable or not sellable: one event each.
    pub turned: usize,
}

/// What is kept of a verdict: whether it sells, and its blocking reasons' codes in order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    sellable: bool,
    reasons: String,
}

impl Kept {
    fn of(v: &Verdict) -> Kept {
        Kept {
            sellable: v.sellable,
            reasons: v
                .blocking()
                .map(|r| r.code.as_str())
                .collect::<Vec<_>>()
                .join(","),
        }
    }
    fn codes(&self) -> Vec<&str> {
        self.reasons.split(',').filter(|c| !c.is_empty()).collect()
    }
}

/// One pass over every merchant's catalog.
pub async fn watch(db: &Db, th: &Thresholds) -> DomainResult<WatchReport> {
    // The facts are read after this instant: a turn recorded later than it is newer than them.
    let read_at = db.now_ms();
    // Kept for pages too (`recent`): they need not judge it again.
    let verdicts = super::recent::judge_for_watch(db, th).await?;
    let kept: HashMap<i64, (Kept, i64)> = sqlx::query_as::<_, (i64, i64, String, i64)>(
        "SELECT sku_id, sellable, reasons, seen_at FROM sku_verdicts",
    )
    .fetch_all(&db.pool)
    .await?
    .into_iter()
    .map(|(id, sellable, reasons, seen_at)| {
        (
            id,
            (
                Kept {
                    sellable: sellable != 0,
                    reasons,
                },
                seen_at,
            ),
        )
    })
    .collect();
    let mut report = WatchReport {
        seen: verdicts.len(),
        ..WatchReport::default()
    };
    let changed: Vec<(&Verdict, Kept, Option<Kept>)> = verdicts
        .iter()
        .map(|v| &**v)
        .filter_map(|v| {
            let now = Kept::of(v);
            match kept.get(&v.meta.sku_id) {
                None => Some((v, now, None)),
                Some((before, seen_at)) if *before != now && *seen_at <= read_at => {
                    Some((v, now, Some(before.clone())))
                }
                Some(_) => None,
            }
        })
        .collect();
    if changed.is_empty() {
        return Ok(report);
    }
    // A few hundred rows per transaction: a first pass over a catalog of 100,000 SKUs held
    // SQLite's one write lock past the 10 s other writers wait for it.
    for chunk in changed.chunks(WRITE_CHUNK) {
        let mut tx = db.begin_write().await?;
        write_chunk(&mut tx, db.now_ms(), chunk, read_at, &mut report).await?;
        tx.commit().await?;
    }
    Ok(report)
}

/// Verdict rows written per transaction.
const WRITE_CHUNK: usize = 500;

async fn write_chunk(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    at: i64,
    chunk: &[(&Verdict, Kept, Option<Kept>)],
    read_at: i64,
    report: &mut WatchReport,
) -> DomainResult<()> {
    for (v, now, before) in chunk {
        let Some(before) = before else {
            let r = sqlx::query(
                "INSERT INTO sku_verdicts (sku_id, sellable, reasons, seen_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (sku_id) DO NOTHING",
            )
            .bind(v.meta.sku_id)
            .bind(i64::from(now.sellable))
            .bind(&now.reasons)
            .bind(read_at)
            .execute(&mut **tx)
            .await?;
            report.first_seen += r.rows_affected() as usize;
            continue;
        };
        // Conditional on the verdict it replaces: of two instances that saw the same turn, one
        // writes it (the other finds the row changed, on PostgreSQL after waiting for its lock).
        let r = sqlx::query(
            "UPDATE sku_verdicts SET sellable = $1, reasons = $2, seen_at = $3
             WHERE sku_id = $4 AND sellable = $5 AND reasons = $6 AND seen_at <= $3",
        )
        .bind(i64::from(now.sellable))
        .bind(&now.reasons)
        .bind(read_at)
        .bind(v.meta.sku_id)
        .bind(i64::from(before.sellable))
        .bind(&before.reasons)
        .execute(&mut **tx)
        .await?;
        if r.rows_affected() == 0 || before.sellable == now.sellable {
            // Someone else wrote it, or only the reasons of a SKU that still does not sell
            // changed: kept for the next turn's `before`, not an event.
            continue;
        }
        let details: Vec<_> = v
            .blocking()
            .map(|r| json!({"code": r.code, "facts": r.facts}))
            .collect();
        events::record(
            tx,
            at,
            v.meta.merchant_id,
            EventType::SkuSellableChanged,
            Subject::new("sku", v.meta.sku_id, Some(v.meta.sku_id)),
            json!({
                "before": {"sellable": before.sellable, "reasons": before.codes()},
                "after": {"sellable": now.sellable, "reasons": now.codes(),
                    "quantity": v.quantity},
                "reasons": details,
            }),
        )
        .await?;
        report.turned += 1;
    }
    Ok(())
}
