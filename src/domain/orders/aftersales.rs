//! After-sales for codes. A SOLD code never goes back to sale: it ends VOIDED (refunded, or
//! leaked) or REDEEMED (used at the counter). A reissue voids one code of an order and hands the
//! same order line a new one, in one transaction. Codes are named by their text (typed or
//! scanned), found by their keyed hash after `codes::lookup`'s normalisation, and their text is
//! never written to a log, an audit row or an error.

use serde::Serialize;
use sqlx::{Any, Transaction};

use crate::domain::codes::{self, CodeRow, CodeStatus};
use crate::domain::kernel::code_keys::CodeKeys;
use crate::domain::kernel::error::DomainResult;
use crate::domain::orders::{self, ReservationStatus, ReservationView};
use crate::domain::{Actor, DomainError, MerchantId, StoreId};
use crate::infra::counters::Subject;
use crate::infra::db::Db;
use crate::messages;

pub use crate::domain::codes::history::{history, record, CodeEvent, HistoryRow};

/// The code an order was sold, by its text; 404 when the order does not have it.
async fn code_of_order(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    order: &str,
    typed: &str,
) -> DomainResult<(i64, CodeRow)> {
    let header: Option<(i64, String)> = sqlx::query_as(
        "SELECT id, status FROM reservations WHERE merchant_id = $1 AND order_id = $2",
    )
    .bind(merchant_id)
    .bind(order.trim())
    .fetch_optional(&db.pool)
    .await?;
    let (header_id, status) = header.ok_or(DomainError::NotFound("reservation"))?;
    if ReservationStatus::parse(&status) != Some(ReservationStatus::Confirmed) {
        return Err(DomainError::conflict(
            "order_not_confirmed",
            messages::order_not_confirmed(order.trim()),
            serde_json::json!({ "order_id": order.trim(), "status": status }),
        ));
    }
    let code = codes::lookup(db, keys, merchant_id, typed)
        .await?
        .filter(|c| c.order_id.as_deref() == Some(order.trim()))
        .ok_or(DomainError::NotFound("code"))?;
    Ok((header_id, code))
}

/// A refusal for a code that is not SOLD, by the state it is in.
fn not_sold(code: &CodeRow, store: Option<String>) -> DomainError {
    match code.status {
        CodeStatus::Redeemed => DomainError::conflict(
            "code_already_redeemed",
            messages::code_already_redeemed(),
            serde_json::json!({
                "code_id": code.id,
                "redeemed_at": code.redeemed_at.map(crate::domain::kernel::validate::ms_to_rfc3339),
                "store": store,
            }),
        ),
        CodeStatus::Voided => DomainError::conflict(
            "code_voided",
            messages::code_voided(),
            serde_json::json!({ "code_id": code.id }),
        ),
        other => DomainError::conflict(
            "code_not_sold",
            messages::code_not_sold(other.as_str()),
            serde_json::json!({ "code_id": code.id, "status": other }),
        ),
    }
}

/// SOLD → VOIDED inside a transaction, or the refusal for the state the code is in.
async fn void_in(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    code: &CodeRow,
    merchant_id: MerchantId,
) -> DomainResult<()> {
    if codes::code::void_sold(tx, now, merchant_id, code.id).await? {
        Ok(())
    } else {
        Err(not_sold(code, None))
    }
}

/// Voids a code an order was sold (a refund, or a leak). The order keeps its other codes.
pub async fn void(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    order: &str,
    typed: &str,
    reason: &str,
) -> DomainResult<ReservationView> {
    let (_, code) = code_of_order(db, keys, merchant_id, order, typed).await?;
    let mut tx = db.begin_write().await?;
    if let Err(e) = void_in(&mut tx, db.now_ms(), &code, merchant_id).await {
        tx.rollback().await?;
        // The state may have moved since it was read: say what it is now.
        let now = codes::code(db, merchant_id, code.id).await?;
        return Err(match now.status {
            CodeStatus::Sold => e,
            _ => not_sold(&now, redeemed_store(db, &now).await?),
        });
    }
    record(
        &mut tx,
        db.now_ms(),
        actor,
        merchant_id,
        code.id,
        Some(order.trim()),
        CodeEvent::Voided,
        reason,
        None,
    )
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "code.void",
        &format!("order:{}", order.trim()),
        &format!("code {}: {reason}", code.id),
    )
    .await?;
    tx.commit().await?;
    orders::view(db, keys, merchant_id, order).await
}

/// Voids a code of an order and hands the same line a new one of the same SKU, in one
/// transaction; refused with `insufficient_stock` (nothing voided) when no code is left to give.
pub async fn reissue(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    order: &str,
    typed: &str,
    reason: &str,
) -> DomainResult<ReservationView> {
    let (header_id, code) = code_of_order(db, keys, merchant_id, order, typed).await?;
    let order = order.trim();
    let mut tx = db.begin_write().await?;
    if let Err(e) = void_in(&mut tx, db.now_ms(), &code, merchant_id).await {
        tx.rollback().await?;
        return Err(e);
    }
    let now = db.now_ms();
    let new_id = orders::take_one_code(&mut tx, header_id, order, code.sku_id, now).await?;
    let Some(new_id) = new_id else {
        tx.rollback().await?;
        let sku: String = sqlx::query_scalar("SELECT code FROM skus WHERE id = $1")
            .bind(code.sku_id)
            .fetch_one(&db.pool)
            .await?;
        return Err(DomainError::conflict(
            "insufficient_stock",
            messages::insufficient_stock(&sku, 1, 0),
            serde_json::json!({ "sku": sku, "requested": 1, "available": 0 }),
        ));
    };
    sqlx::query("UPDATE code_reservations SET reissued = reissued + 1 WHERE reservation_id = $1 AND sku_id = $2")
        .bind(header_id)
        .bind(code.sku_id)
        .execute(&mut *tx)
        .await?;
    record(
        &mut tx,
        db.now_ms(),
        actor,
        merchant_id,
        code.id,
        Some(order),
        CodeEvent::Reissued,
        reason,
        None,
    )
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "code.reissue",
        &format!("order:{order}"),
        &format!("code {} → code {new_id}: {reason}", code.id),
    )
    .await?;
    tx.commit().await?;
    // The new code left the pool outside the gate.
    db.forget([Subject::Codes(code.sku_id)]).await;
    orders::view(db, keys, merchant_id, order).await
}

/// What the counter reads about a code: never its text.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Redeemed {
    pub code_id: i64,
    pub sku: String,
    pub product: String,
    pub status: CodeStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redeemed_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// The visits the code is still good for: 0 once used up (a plain voucher is a pass of one).
    pub uses_left: i64,
    /// The visits it was good for.
    pub uses: i64,
}

async fn redeemed_store(db: &Db, code: &CodeRow) -> DomainResult<Option<String>> {
    let Some(store) = code.redeemed_store_id else {
        return Ok(None);
    };
    Ok(sqlx::query_scalar("SELECT slug FROM stores WHERE id = $1")
        .bind(store)
        .fetch_optional(&db.pool)
        .await?)
}

/// A code as the counter shows it: state and product, by its text; 404 when unknown.
pub async fn at_counter(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    typed: &str,
) -> DomainResult<Redeemed> {
    let code = codes::lookup(db, keys, merchant_id, typed)
        .await?
        .ok_or(DomainError::NotFound("code"))?;
    said(db, &code).await
}

async fn said(db: &Db, code: &CodeRow) -> DomainResult<Redeemed> {
    let (sku, product, uses, taken): (String, String, i64, i64) = sqlx::query_as(
        "SELECT s.code, p.name, s.uses, c.uses_taken FROM codes c JOIN skus s ON s.id = c.sku_id
            JOIN products p ON p.id = s.product_id WHERE c.id = $1",
    )
    .bind(code.id)
    .fetch_one(&db.pool)
    .await?;
    Ok(Redeemed {
        code_id: code.id,
        sku,
        product,
        status: code.status,
        order_id: code.order_id.clone(),
        redeemed_at: code
            .redeemed_at
            .map(crate::domain::kernel::validate::ms_to_rfc3339),
        store: redeemed_store(db, code).await?,
        uses_left: match code.status {
            CodeStatus::Sold | CodeStatus::Redeemed => (uses - taken).max(0),
            _ => 0,
        },
        uses,
    })
}

/// Undoes the last redemption of a code (撤销核销), within `window_minutes` of it, with why:
/// the code is SOLD again with that use back; its history keeps both. Refusals: `required` (no
/// reason), `code_not_redeemed`, `undo_window_passed`.
pub async fn unredeem(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    code_id: i64,
    reason: &str,
    window_minutes: i64,
) -> DomainResult<Redeemed> {
    use crate::domain::kernel::validate;
    let reason = validate::name("reason", reason, validate::REASON_MAX)
        .map_err(|e| DomainError::Invalid(vec![e]))?;
    let code = codes::code(db, merchant_id, code_id).await?;
    let now = db.now_ms();
    let since = now - window_minutes.max(0) * 60_000;
    let mut tx = db.begin_write().await?;
    if window_minutes <= 0
        || !codes::code::unredeem_last(&mut tx, now, merchant_id, code.id, since).await?
    {
        tx.rollback().await?;
        let code = codes::code(db, merchant_id, code.id).await?;
        return Err(match code.redeemed_at {
            None => DomainError::conflict(
                "code_not_redeemed",
                messages::code_not_redeemed(),
                serde_json::json!({ "code_id": code.id, "status": code.status }),
            ),
            Some(at) => DomainError::conflict(
                "undo_window_passed",
                messages::undo_window_passed(window_minutes),
                serde_json::json!({
                    "code_id": code.id,
                    "redeemed_at": crate::domain::kernel::validate::ms_to_rfc3339(at),
                    "window_minutes": window_minutes,
                }),
            ),
        });
    }
    record(
        &mut tx,
        now,
        actor,
        merchant_id,
        code.id,
        code.order_id.as_deref(),
        CodeEvent::Unredeemed,
        &reason,
        code.redeemed_store_id,
    )
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        now,
        actor,
        Some(merchant_id),
        "code.unredeem",
        &format!("code:{}", code.id),
        &reason,
    )
    .await?;
    tx.commit().await?;
    let now = codes::code(db, merchant_id, code.id).await?;
    said(db, &now).await
}

/// SOLD → REDEEMED, once: a second redemption (at another counter, at the same moment) is
/// refused with when and where the first one was.
pub async fn redeem(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    typed: &str,
    store: Option<StoreId>,
) -> DomainResult<Redeemed> {
    let code = codes::lookup(db, keys, merchant_id, typed)
        .await?
        .ok_or(DomainError::NotFound("code"))?;
    let mut tx = db.begin_write().await?;
    if !codes::code::redeem_sold(&mut tx, db.now_ms(), merchant_id, code.id, store).await? {
        tx.rollback().await?;
        let now = codes::code(db, merchant_id, code.id).await?;
        return Err(not_sold(&now, redeemed_store(db, &now).await?));
    }
    record(
        &mut tx,
        db.now_ms(),
        actor,
        merchant_id,
        code.id,
        code.order_id.as_deref(),
        CodeEvent::Redeemed,
        "",
        store,
    )
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "code.redeem",
        &format!("code:{}", code.id),
        code.order_id.as_deref().unwrap_or(""),
    )
    .await?;
    tx.commit().await?;
    let now = codes::code(db, merchant_id, code.id).await?;
    said(db, &now).await
}
