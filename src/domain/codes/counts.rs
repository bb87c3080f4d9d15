//! Codes counted by batch and status, kept by triggers (migration 0030) so that a page or a
//! verdict reads a few rows, not a million codes. On PostgreSQL the triggers append deltas and
//! [`fold`] moves them into `code_counts`; on SQLite they update `code_counts` in place. Every
//! reader adds both in one statement. Reconciliation recounts them ([`drift`]) and repairs any
//! difference ([`repair`]).

use std::collections::{BTreeMap, HashMap};

use sqlx::FromRow;

use crate::domain::codes::{BatchStatus, CodeStatus, PENDING};
use crate::domain::kernel::error::DomainResult;
use crate::domain::MerchantId;
use crate::infra::db::Db;

/// The kept counts, folded and not, under the alias `k` (columns batch_id, merchant_id, sku_id,
/// status, n).
const KEPT: &str = "(SELECT batch_id, merchant_id, sku_id, status, n FROM code_counts
    UNION ALL SELECT batch_id, merchant_id, sku_id, status, n FROM code_count_deltas) k";

/// One batch's codes in one status, and the state of the batch.
#[derive(Debug, Clone, FromRow)]
pub struct Count {
    pub batch_id: i64,
    pub sku_id: i64,
    /// The batch's status: its AVAILABLE codes are PENDING while it is CREATING.
    pub batch_status: String,
    pub status: String,
    pub n: i64,
}

/// The counts matching `filter`, a condition on `k` that names `$1` (bound to `bind`).
/// `persistent`: whether the statement is worth keeping prepared (not when `filter` carries a
/// list of ids, new text each time).
pub async fn counts(
    db: &Db,
    filter: &str,
    bind: Option<i64>,
    persistent: bool,
) -> DomainResult<Vec<Count>> {
    Ok(sqlx::query_as(&format!(
        "SELECT k.batch_id, k.sku_id, b.status AS batch_status, k.status, CAST(SUM(k.n) AS BIGINT) AS n
         FROM {KEPT} JOIN code_batches b ON b.id = k.batch_id
         WHERE {filter} GROUP BY k.batch_id, k.sku_id, b.status, k.status"
    ))
    .persistent(persistent)
    .bind(bind)
    .fetch_all(&db.pool)
    .await?)
}

/// Counts of one batch by status.
pub async fn of_batch(db: &Db, merchant_id: MerchantId, batch_id: i64) -> DomainResult<Vec<Count>> {
    Ok(sqlx::query_as(&format!(
        "SELECT k.batch_id, k.sku_id, b.status AS batch_status, k.status, CAST(SUM(k.n) AS BIGINT) AS n
         FROM {KEPT} JOIN code_batches b ON b.id = k.batch_id
         WHERE k.batch_id = $1 AND k.merchant_id = $2 GROUP BY k.batch_id, k.sku_id, b.status, k.status"
    ))
    .bind(batch_id)
    .bind(merchant_id)
    .fetch_all(&db.pool)
    .await?)
}

/// AVAILABLE codes already past their expiry, by batch, among those of SKUs matching `filter` (a
/// condition on `+c.sku_id` naming `$1`: the unary plus keeps the planner off the SKU's index).
/// The expiry job turns them EXPIRED within a minute, so there are few, and the partial index
/// `codes_available_expiry` finds them without reading the others. `persistent` as in [`counts`].
pub async fn past_expiry(
    db: &Db,
    filter: &str,
    bind: Option<i64>,
    now: i64,
    persistent: bool,
) -> DomainResult<Vec<(i64, i64, i64)>> {
    Ok(sqlx::query_as(&format!(
        "SELECT c.sku_id, c.batch_id, COUNT(*) FROM codes c
         WHERE c.status = 'AVAILABLE' AND c.expires_at IS NOT NULL AND c.expires_at <= $2 AND {filter}
         GROUP BY c.sku_id, c.batch_id"
    ))
    .persistent(persistent)
    .bind(bind)
    .bind(now)
    .fetch_all(&db.pool)
    .await?)
}

/// Codes of one SKU as people read them.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// By status; PENDING: the codes of a batch still importing.
    pub counts: BTreeMap<String, i64>,
    /// AVAILABLE, not past expiry, of a batch not importing: what can be sold now.
    pub sellable: i64,
}

/// The kept counts and the codes past expiry (as [`past_expiry`] gives them), by SKU.
pub fn by_sku(kept: Vec<Count>, past_expiry: &[(i64, i64, i64)]) -> HashMap<i64, Tally> {
    let expired: HashMap<i64, i64> = past_expiry.iter().map(|&(_, b, n)| (b, n)).collect();
    let mut out: HashMap<i64, Tally> = HashMap::new();
    for r in kept {
        let t = out.entry(r.sku_id).or_default();
        let creating = r.batch_status == BatchStatus::Creating.as_str();
        let status = if creating { PENDING } else { r.status.as_str() };
        *t.counts.entry(status.to_string()).or_insert(0) += r.n;
        if !creating && r.status == CodeStatus::Available.as_str() {
            t.sellable += r.n - expired.get(&r.batch_id).copied().unwrap_or(0);
        }
    }
    out
}

/// Folds up to `limit` deltas into `code_counts`; returns how many it folded. Safe on every
/// instance at once: a delta is folded by the one transaction that deletes it, and the counts
/// are updated in key order, so two folds never wait on each other in a circle.
pub async fn fold(db: &Db, limit: i64) -> DomainResult<u64> {
    let mut tx = db.begin_write().await?;
    let rows: Vec<(i64, i64, i64, String, i64)> = sqlx::query_as(
        "DELETE FROM code_count_deltas WHERE id IN (SELECT id FROM code_count_deltas ORDER BY id LIMIT $1)
         RETURNING batch_id, merchant_id, sku_id, status, n",
    )
    .bind(limit)
    .fetch_all(&mut *tx)
    .await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let folded = rows.len() as u64;
    let mut sums: BTreeMap<(i64, String), (i64, i64, i64)> = BTreeMap::new();
    for (batch, merchant, sku, status, n) in rows {
        sums.entry((batch, status)).or_insert((merchant, sku, 0)).2 += n;
    }
    for ((batch, status), (merchant, sku, n)) in sums {
        sqlx::query(
            "INSERT INTO code_counts (batch_id, merchant_id, sku_id, status, n) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (batch_id, status) DO UPDATE SET n = code_counts.n + excluded.n",
        )
        .bind(batch)
        .bind(merchant)
        .bind(sku)
        .bind(status)
        .bind(n)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(folded)
}

/// A kept count that differs from the codes.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct Drift {
    pub batch_id: i64,
    pub merchant_id: MerchantId,
    pub sku_id: i64,
    pub status: String,
    /// What the codes say.
    pub actual: i64,
    /// What the counts said.
    pub kept: i64,
}

/// The recount of the given SKUs' batches (None: every batch) against their kept counts.
fn drift_sql(skus: Option<&[i64]>) -> String {
    let only = crate::infra::db::and_id_in("sku_id", skus);
    format!(
        "SELECT x.batch_id, MIN(x.merchant_id) AS merchant_id, MIN(x.sku_id) AS sku_id, x.status,
            CAST(SUM(x.actual) AS BIGINT) AS actual, CAST(SUM(x.kept) AS BIGINT) AS kept
         FROM (SELECT batch_id, merchant_id, sku_id, status, COUNT(*) AS actual, 0 AS kept FROM codes
                 WHERE 1 = 1{only} GROUP BY batch_id, merchant_id, sku_id, status
               UNION ALL SELECT batch_id, merchant_id, sku_id, status, 0, n FROM code_counts WHERE 1 = 1{only}
               UNION ALL SELECT batch_id, merchant_id, sku_id, status, 0, n FROM code_count_deltas WHERE 1 = 1{only}) x
         GROUP BY x.batch_id, x.status HAVING SUM(x.actual) <> SUM(x.kept)
         ORDER BY x.batch_id, x.status"
    )
}

/// Recounts every batch's codes and compares them with the kept counts, in one statement: one
/// snapshot, so a sale committing meanwhile is in both sides or in neither.
pub async fn drift(db: &Db) -> DomainResult<Vec<Drift>> {
    Ok(sqlx::query_as(&drift_sql(None)).fetch_all(&db.pool).await?)
}

/// Recounts and repairs what differs, by adding each difference as a delta; returns what it
/// repaired. The difference is measured in one snapshot and every later change adds its own
/// delta, so the sum comes out right without locking the codes. Two reconciliations at once
/// (every instance runs one) take turns, so that the second measures after the first's repair
/// rather than adding the same difference again.
pub async fn repair_drift(db: &Db, skus: Option<&[i64]>) -> DomainResult<Vec<Drift>> {
    let mut tx = db.begin_write().await?;
    if db.dialect == crate::infra::db::Dialect::Postgres {
        // SQLite's write transaction already excludes the other.
        sqlx::query("SELECT pg_advisory_xact_lock(7720020001)")
            .execute(&mut *tx)
            .await?;
    }
    let found: Vec<Drift> = sqlx::query_as(&drift_sql(skus))
        .persistent(skus.is_none())
        .fetch_all(&mut *tx)
        .await?;
    for d in &found {
        sqlx::query(
            "INSERT INTO code_count_deltas (batch_id, merchant_id, sku_id, status, n) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(d.batch_id)
        .bind(d.merchant_id)
        .bind(d.sku_id)
        .bind(&d.status)
        .bind(d.actual - d.kept)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(found)
}
