//! The audit trail: who changed what, when, and from where. Written inside the same transaction
//! as the change it describes, so the two never disagree.

use sqlx::{Any, Transaction};

use super::Actor;
use crate::store::db::now_ms;

pub async fn record(
    tx: &mut Transaction<'_, Any>,
    actor: &Actor,
    merchant_id: Option<i64>,
    action: &str,
    subject: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO audit_log (merchant_id, actor, action, subject, detail, source, at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(merchant_id)
    .bind(&actor.label)
    .bind(action)
    .bind(subject)
    .bind(detail)
    .bind(&actor.source)
    .bind(now_ms())
    .execute(&mut **tx)
    .await?;
    Ok(())
}
