//! A code's history: every change after its import besides the sale (voided, redeemed,
//! reissued, locked, unlocked, invalidated), with who, why and where, and its change event. The
//! code's text is never written here.

use serde::Serialize;
use sqlx::{Any, Transaction};

use crate::domain::kernel::error::DomainResult;
use crate::domain::{Actor, MerchantId, StoreId};
use crate::infra::db::Db;

crate::text_enum! {
    /// What happened to a code after it was imported, besides being sold.
    pub enum CodeEvent {
        Voided = "VOIDED",
        Redeemed = "REDEEMED",
        /// A redemption taken back (by mistake at the counter), with the reason.
        Unredeemed = "UNREDEEMED",
        Reissued = "REISSUED",
        Locked = "LOCKED",
        Unlocked = "UNLOCKED",
        Invalidated = "INVALIDATED",
    }
}

/// Writes one row of a code's history.
#[allow(clippy::too_many_arguments)]
pub async fn record(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    actor: &Actor,
    merchant_id: MerchantId,
    code_id: i64,
    order_id: Option<&str>,
    event: CodeEvent,
    reason: &str,
    store: Option<StoreId>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO code_events (merchant_id, code_id, order_id, action, reason, store_id, actor, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(merchant_id)
    .bind(code_id)
    .bind(order_id.map(str::to_string))
    .bind(event.as_str())
    .bind(reason)
    .bind(store)
    .bind(&actor.label)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    // Its change event: the code's id and states, never its text.
    let (after, sku_id): (String, i64) =
        sqlx::query_as("SELECT status, sku_id FROM codes WHERE id = $1")
            .bind(code_id)
            .fetch_one(&mut **tx)
            .await?;
    let before = match event {
        CodeEvent::Voided | CodeEvent::Redeemed | CodeEvent::Reissued => Some("SOLD"),
        CodeEvent::Locked => Some("AVAILABLE"),
        CodeEvent::Unlocked => Some("LOCKED"),
        // From several states, or from SOLD to SOLD (a use of a pass given back): the event says
        // where it ended.
        CodeEvent::Invalidated | CodeEvent::Unredeemed => None,
    };
    crate::domain::trail::events::record(
        tx,
        now,
        merchant_id,
        crate::domain::trail::events::EventType::CodeStateChanged,
        crate::domain::trail::events::Subject::new("code", code_id, Some(sku_id)),
        serde_json::json!({"action": event.as_str(), "before": before, "after": after,
            "order_id": order_id}),
    )
    .await?;
    Ok(())
}

/// One row of a code's history, as its page lists it.
#[derive(Debug, Clone, sqlx::FromRow, Serialize)]
pub struct HistoryRow {
    #[sqlx(try_from = "String")]
    pub action: CodeEvent,
    pub order_id: Option<String>,
    pub reason: String,
    pub store: Option<String>,
    pub actor: String,
    pub created_at: i64,
}

pub async fn history(
    db: &Db,
    merchant_id: MerchantId,
    code_id: i64,
) -> DomainResult<Vec<HistoryRow>> {
    Ok(sqlx::query_as(
        "SELECT e.action, e.order_id, e.reason, s.name AS store, e.actor, e.created_at
         FROM code_events e LEFT JOIN stores s ON s.id = e.store_id
         WHERE e.merchant_id = $1 AND e.code_id = $2 ORDER BY e.id",
    )
    .bind(merchant_id)
    .bind(code_id)
    .fetch_all(&db.pool)
    .await?)
}
