//! Alerts: what a merchant must deal with. Each is an event like the others (so a webhook can
//! route it: `reconcile.frozen`, `reconcile.redis_drift`, `exception.opened`, `code_batch.failed`,
//! `gate.degraded`) and shows on the dashboard until it is dealt with. Most are written by the
//! change that causes them; the Redis gate's state is watched here.

use serde_json::json;

use super::error::DomainResult;
use super::events::{self, EventType, Subject};
use super::MerchantId;
use crate::infra::db::{now_ms, Db};

/// The gate must be off this long before it is an alert (a blip is not).
pub const GATE_DEGRADED_AFTER_MS: i64 = 60_000;
const GATE: &str = "gate_degraded";

/// Since when the Redis gate has been off, as an open alert (any instance's), if it is.
pub async fn gate_degraded_since(db: &Db) -> DomainResult<Option<i64>> {
    Ok(
        sqlx::query_scalar("SELECT since FROM alerts_open WHERE name = $1")
            .bind(GATE)
            .fetch_optional(&db.pool)
            .await?,
    )
}

/// Opens the gate alert once this instance's gate has been off for a minute, and closes it once
/// it is back; each writes `gate.degraded` / `gate.recovered` for every merchant (the gate serves
/// them all). Of several instances, the first to see a change writes it, once (the row's key).
pub async fn watch_gate(db: &Db, now: i64) -> DomainResult<()> {
    let Some(gate) = &db.gate else { return Ok(()) };
    let mut tx = db.begin_write().await?;
    let (ty, data) = match gate.degraded_since() {
        Some(since) if now - since >= GATE_DEGRADED_AFTER_MS => {
            let opened = sqlx::query(
                "INSERT INTO alerts_open (name, since) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            )
            .bind(GATE)
            .bind(since)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if opened == 0 {
                return Ok(());
            }
            let since = super::validate::ms_to_rfc3339(since);
            (
                EventType::GateDegraded,
                json!({"since": since, "before": {"gate": "on"}, "after": {"gate": "sql_only"}}),
            )
        }
        Some(_) => return Ok(()),
        None => {
            let Some(since): Option<i64> =
                sqlx::query_scalar("DELETE FROM alerts_open WHERE name = $1 RETURNING since")
                    .bind(GATE)
                    .fetch_optional(&mut *tx)
                    .await?
            else {
                return Ok(());
            };
            (
                EventType::GateRecovered,
                json!({"since": super::validate::ms_to_rfc3339(since),
                       "until": super::validate::ms_to_rfc3339(now),
                       "before": {"gate": "sql_only"}, "after": {"gate": "on"}}),
            )
        }
    };
    let merchants: Vec<i64> = sqlx::query_scalar("SELECT id FROM merchants")
        .fetch_all(&mut *tx)
        .await?;
    for m in merchants {
        events::record(
            &mut tx,
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
    .bind(now_ms() - 24 * 3_600_000)
    .fetch_one(&db.pool)
    .await?)
}
