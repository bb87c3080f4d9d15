//! Alerts: what a merchant must deal with. Each is an event like the others (so a webhook can
//! route it: `reconcile.frozen`, `reconcile.redis_drift`, `exception.opened`, `code_batch.failed`,
//! `gate.degraded`) and shows on the dashboard until it is dealt with. Most are written by the
//! change that causes them; the Redis gate's state is watched here.

use serde_json::json;

use crate::domain::kernel::error::DomainResult;
use crate::domain::trail::events::{self, EventType, Subject};
use crate::domain::MerchantId;
use crate::infra::db::Db;

/// The gate must be off this long before it is an alert (a blip is not).
pub const GATE_DEGRADED_AFTER_MS: i64 = 60_000;
/// An instance's "still degraded" row not renewed for this long is dropped (the instance died,
/// or runs without Redis now).
const STALE_AFTER_MS: i64 = 60_000;
const GATE: &str = "gate_degraded:";

/// This process, among the instances sharing the database.
fn instance() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
}

/// Since when the Redis gate has been off on some instance (over a minute), if it is.
pub async fn gate_degraded_since(db: &Db) -> DomainResult<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT MIN(since) FROM alerts_open WHERE name LIKE 'gate_degraded:%' AND seen_at >= $1",
    )
    .bind(db.now_ms() - STALE_AFTER_MS)
    .fetch_one(&db.pool)
    .await?)
}

/// Keeps this instance's row while its gate has been off for a minute (and drops it otherwise),
/// drops the rows no instance renews, and writes `gate.degraded` when the first row appears and
/// `gate.recovered` when the last goes, for every merchant (the gate serves them all). One
/// instance at a time (the event counter's row lock), so a change is written once.
pub async fn watch_gate(db: &Db, now: i64) -> DomainResult<()> {
    let mut tx = db.begin_write().await?;
    crate::domain::trail::events::lock_counter(&mut tx).await?;
    let count = "SELECT COUNT(*) FROM alerts_open WHERE name LIKE 'gate_degraded:%'";
    let before: i64 = sqlx::query_scalar(count).fetch_one(&mut *tx).await?;
    sqlx::query("DELETE FROM alerts_open WHERE name LIKE 'gate_degraded:%' AND seen_at < $1")
        .bind(now - STALE_AFTER_MS)
        .execute(&mut *tx)
        .await?;
    let mine = format!("{GATE}{}", instance());
    match db.gate.as_ref().and_then(|g| g.degraded_since()) {
        Some(since) if now - since >= GATE_DEGRADED_AFTER_MS => {
            sqlx::query(
                "INSERT INTO alerts_open (name, since, seen_at) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET seen_at = excluded.seen_at",
            )
            .bind(&mine)
            .bind(since)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        // Degraded for less than a minute: neither a new alert nor the end of one.
        Some(_) => {}
        None => {
            sqlx::query("DELETE FROM alerts_open WHERE name = $1")
                .bind(&mine)
                .execute(&mut *tx)
                .await?;
        }
    }
    let after: i64 = sqlx::query_scalar(count).fetch_one(&mut *tx).await?;
    let rfc = crate::domain::kernel::validate::ms_to_rfc3339;
    let (ty, data) = match (before > 0, after > 0) {
        (false, true) => {
            let since: i64 = sqlx::query_scalar(
                "SELECT MIN(since) FROM alerts_open WHERE name LIKE 'gate_degraded:%'",
            )
            .fetch_one(&mut *tx)
            .await?;
            (
                EventType::GateDegraded,
                json!({"since": rfc(since), "before": {"gate": "on"}, "after": {"gate": "sql_only"}}),
            )
        }
        (true, false) => (
            EventType::GateRecovered,
            json!({"until": rfc(now), "before": {"gate": "sql_only"}, "after": {"gate": "on"}}),
        ),
        _ => {
            tx.commit().await?;
            return Ok(());
        }
    };
    let merchants: Vec<i64> = sqlx::query_scalar("SELECT id FROM merchants")
        .fetch_all(&mut *tx)
        .await?;
    for m in merchants {
        events::record(
            &mut tx,
            db.now_ms(),
            MerchantId(m),
            ty,
            Subject::new("gate", "redis", None),
            data.clone(),
        )
        .await?;
    }
    tx.commit().await?;
    tracing::warn!(alert = ty.as_str(), "Redis gate alert");
    Ok(())
}

/// Code imports of the merchant that failed in the last day (the dashboard's alert).
pub async fn failed_imports(db: &Db, merchant_id: MerchantId) -> DomainResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM code_batches WHERE merchant_id = $1 AND status = 'FAILED'
           AND created_at >= $2",
    )
    .bind(merchant_id)
    .bind(db.now_ms() - 24 * 3_600_000)
    .fetch_one(&db.pool)
    .await?)
}
