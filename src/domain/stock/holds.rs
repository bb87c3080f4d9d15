//! Units held back from sale, one hold at a time: the frozen bucket of a SKU × warehouse, split
//! into the holds that made it, each with its reason, its note, who held it and the day it is due
//! for release. A hold is recorded and released only inside the transaction that moves the frozen
//! bucket, after the balance row's UPDATE (which serialises them), so the open holds of a SKU ×
//! warehouse always add up to its frozen units.

use chrono::NaiveDate;
use serde::Serialize;
use sqlx::{Any, FromRow, Transaction};

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::Errors;
use crate::domain::{FieldError, MerchantId, Scope};
use crate::infra::db::Db;
use crate::messages;

/// One hold as the stock page and the API show it.
#[derive(Debug, Clone, FromRow, Serialize, utoipa::ToSchema)]
pub struct Hold {
    pub id: i64,
    /// The warehouse's slug.
    pub warehouse: String,
    #[serde(skip)]
    pub warehouse_name: String,
    /// Units held at first.
    pub qty: i64,
    /// Units still held.
    pub remaining: i64,
    pub reason_code: Option<String>,
    /// The note.
    pub reason: String,
    /// The day (YYYY-MM-DD, the merchant's calendar) it is due for release: a reminder only.
    pub release_on: Option<String>,
    /// Who held it (`user:…`, `apikey:…`; `migration` for units held before holds were listed).
    pub actor: String,
    /// Unix ms.
    pub created_at: i64,
}

impl Hold {
    /// Due for release: its day has come (in the merchant's calendar, `today`).
    pub fn due(&self, today: NaiveDate) -> bool {
        self.release_on
            .as_deref()
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
            .is_some_and(|d| d <= today)
    }
}

/// The open holds of a SKU, oldest first.
pub async fn open(db: &Db, sku_id: i64) -> DomainResult<Vec<Hold>> {
    Ok(sqlx::query_as(
        "SELECT h.id, w.slug AS warehouse, w.name AS warehouse_name, h.qty, h.remaining, h.reason_code,
            h.reason, h.release_on, h.actor, h.created_at
         FROM stock_holds h JOIN warehouses w ON w.id = h.warehouse_id
         WHERE h.sku_id = $1 AND h.remaining > 0 ORDER BY h.id",
    )
    .bind(sku_id)
    .fetch_all(&db.pool)
    .await?)
}

/// An open hold of this SKU by id.
pub async fn open_by_id(db: &Db, sku_id: i64, id: i64) -> DomainResult<Option<Hold>> {
    Ok(open(db, sku_id).await?.into_iter().find(|h| h.id == id))
}

/// The "release on" day typed or sent: empty (no reminder) or YYYY-MM-DD, today or later.
pub fn release_on(raw: &str, today: NaiveDate, errs: &mut Errors) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    match NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        Ok(d) if d >= today => Some(d.format("%Y-%m-%d").to_string()),
        Ok(_) => {
            errs.push(FieldError::new(
                "release_on",
                "period_in_past",
                messages::release_on_in_past(),
            ));
            None
        }
        Err(_) => {
            errs.push(FieldError::new(
                "release_on",
                "invalid_date",
                messages::bad_time_or_date(&messages::label("release_on")),
            ));
            None
        }
    }
}

/// What a new hold records besides its place and size.
pub struct NewHold<'a> {
    pub reason_code: Option<&'a str>,
    pub reason: &'a str,
    pub release_on: Option<&'a str>,
    pub actor: &'a str,
}

/// Records a hold of `qty` units, in the transaction that froze them.
pub async fn record(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    (merchant_id, sku_id, warehouse_id): (MerchantId, i64, i64),
    qty: i64,
    h: &NewHold<'_>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO stock_holds (merchant_id, sku_id, warehouse_id, qty, remaining, reason_code, reason,
            release_on, actor, created_at)
         VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(merchant_id)
    .bind(sku_id)
    .bind(warehouse_id)
    .bind(qty)
    .bind(h.reason_code)
    .bind(h.reason)
    .bind(h.release_on)
    .bind(h.actor)
    .bind(now)
    .fetch_one(&mut **tx)
    .await
}

/// Releases `qty` units, in the transaction that unfroze them: from the hold named (None when it
/// holds fewer, or is not of this SKU × warehouse), or else from the oldest holds first.
pub async fn release(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    (sku_id, warehouse_id): (i64, i64),
    qty: i64,
    hold_id: Option<i64>,
) -> Result<Option<()>, sqlx::Error> {
    let take = "UPDATE stock_holds SET remaining = remaining - $1,
            released_at = CASE WHEN remaining = $1 THEN $2 ELSE released_at END
         WHERE id = $3 AND sku_id = $4 AND warehouse_id = $5 AND remaining >= $1";
    if let Some(id) = hold_id {
        let done = sqlx::query(take)
            .bind(qty)
            .bind(now)
            .bind(id)
            .bind(sku_id)
            .bind(warehouse_id)
            .execute(&mut **tx)
            .await?;
        return Ok((done.rows_affected() == 1).then_some(()));
    }
    let open: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT id, remaining FROM stock_holds WHERE sku_id = $1 AND warehouse_id = $2 AND remaining > 0 ORDER BY id",
    )
    .bind(sku_id)
    .bind(warehouse_id)
    .fetch_all(&mut **tx)
    .await?;
    let mut left = qty;
    for (id, remaining) in open {
        if left == 0 {
            break;
        }
        let n = remaining.min(left);
        sqlx::query(take)
            .bind(n)
            .bind(now)
            .bind(id)
            .bind(sku_id)
            .bind(warehouse_id)
            .execute(&mut **tx)
            .await?;
        left -= n;
    }
    // Units frozen without a hold cannot exist (the migration gave the old ones theirs); were
    // some found, the frozen bucket's own guard has already decided and the release stands.
    Ok(Some(()))
}

/// Makes the open holds of a SKU × warehouse add up to its frozen units again, in a transaction
/// that has already written (so locked) the balance row: units frozen without a hold get one
/// (no reason, by `actor`), holds of units no longer frozen are released, oldest first. Used
/// where frozen moves without a hold (a reconciliation correction) and to repair drift.
/// Returns (held before, frozen) when they differed.
pub async fn settle(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    (merchant_id, sku_id, warehouse_id): (MerchantId, i64, i64),
    actor: &str,
) -> Result<Option<(i64, i64)>, sqlx::Error> {
    let (frozen, held): (i64, i64) = sqlx::query_as(
        "SELECT b.frozen, CAST(COALESCE((SELECT SUM(h.remaining) FROM stock_holds h
                WHERE h.sku_id = b.sku_id AND h.warehouse_id = b.warehouse_id), 0) AS BIGINT)
         FROM stock_balances b WHERE b.sku_id = $1 AND b.warehouse_id = $2",
    )
    .bind(sku_id)
    .bind(warehouse_id)
    .fetch_optional(&mut **tx)
    .await?
    .unwrap_or((0, 0));
    if held < frozen {
        let h = NewHold {
            reason_code: None,
            reason: "",
            release_on: None,
            actor,
        };
        record(
            tx,
            now,
            (merchant_id, sku_id, warehouse_id),
            frozen - held,
            &h,
        )
        .await?;
    } else if held > frozen {
        release(tx, now, (sku_id, warehouse_id), held - frozen, None).await?;
    } else {
        return Ok(None);
    }
    Ok(Some((held, frozen)))
}

/// SKU × warehouse pairs whose open holds do not add up to their frozen units:
/// (sku_id, warehouse_id, frozen, held).
pub async fn mismatches(db: &Db, scope: Scope) -> DomainResult<Vec<(i64, i64, i64, i64)>> {
    mismatches_in(db, scope, None).await
}

/// The same, for the given SKUs only (None: all of them).
pub async fn mismatches_in(
    db: &Db,
    scope: Scope,
    skus: Option<&[i64]>,
) -> DomainResult<Vec<(i64, i64, i64, i64)>> {
    let merchant = scope.merchant();
    Ok(sqlx::query_as(&format!(
        "SELECT b.sku_id, b.warehouse_id, b.frozen,
            CAST(COALESCE((SELECT SUM(h.remaining) FROM stock_holds h
                WHERE h.sku_id = b.sku_id AND h.warehouse_id = b.warehouse_id), 0) AS BIGINT) AS held
         FROM stock_balances b WHERE ($1 IS NULL OR b.merchant_id = $1){}
            AND b.frozen <> CAST(COALESCE((SELECT SUM(h.remaining) FROM stock_holds h
                WHERE h.sku_id = b.sku_id AND h.warehouse_id = b.warehouse_id), 0) AS BIGINT)",
        crate::infra::db::and_id_in("b.sku_id", skus)
    ))
    .persistent(skus.is_none())
    .bind(merchant)
    .fetch_all(&db.pool)
    .await?)
}
