//! Order exceptions: a payment the order could not be fulfilled for ("paid, not held"), recorded
//! so that no payment is lost and open until a merchant admin settles it: refunded (nothing
//! moves), or fulfilled after a restock (the order's lines are taken then, in the same
//! transaction as the resolution). At most one is open per order.

use serde::Serialize;
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, ms_to_rfc3339};
use crate::domain::orders::{self, ReservationStatus, Retaken, Shortfall};
use crate::domain::{Actor, DomainError, FieldError, MerchantId, Scope};
use crate::infra::db::Db;
use crate::messages;

pub const PAGE_SIZE: i64 = 50;

crate::text_enum! {
    /// OPEN until a merchant admin resolves it.
    pub enum ExceptionStatus {
        Open = "OPEN",
        Resolved = "RESOLVED",
    }
}

crate::text_enum! {
    /// How an exception was settled.
    pub enum Resolution {
        /// The payment was given back; nothing moves.
        Refunded = "refunded",
        /// The order's lines were taken after all (a restock): the order is confirmed.
        Fulfilled = "fulfilled",
    }
}

crate::text_enum! {
    pub enum ExceptionKind {
        /// A payment came for an order that no longer held its lines, and they could not be taken.
        PaidNotHeld = "PAID_NOT_HELD",
    }
}

#[derive(Debug, Clone, FromRow)]
struct Row {
    id: i64,
    order_id: String,
    #[sqlx(try_from = "String")]
    kind: ExceptionKind,
    payment_ref: Option<String>,
    #[sqlx(try_from = "String")]
    order_status: ReservationStatus,
    shortfall: String,
    #[sqlx(try_from = "String")]
    status: ExceptionStatus,
    resolution: Option<String>,
    note: String,
    resolved_by: Option<String>,
    resolved_at: Option<i64>,
    created_at: i64,
    merchant_slug: String,
}

/// One exception, as the API and the back office show it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Exception {
    pub id: i64,
    pub order_id: String,
    pub kind: ExceptionKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment_ref: Option<String>,
    /// The order's status when the payment came: EXPIRED or RELEASED.
    pub order_status: ReservationStatus,
    /// The lines that could not be taken (empty for a released order: it was not tried).
    pub shortfall: Vec<Shortfall>,
    pub status: ExceptionStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
    pub created_at: String,
    #[serde(skip)]
    pub created_ms: i64,
    #[serde(skip)]
    pub resolved_ms: Option<i64>,
    #[serde(skip)]
    pub merchant: String,
}

impl From<Row> for Exception {
    fn from(r: Row) -> Exception {
        Exception {
            id: r.id,
            order_id: r.order_id,
            kind: r.kind,
            payment_ref: r.payment_ref,
            order_status: r.order_status,
            shortfall: serde_json::from_str(&r.shortfall).unwrap_or_default(),
            status: r.status,
            resolution: r.resolution.as_deref().and_then(Resolution::parse),
            note: r.note,
            resolved_by: r.resolved_by,
            resolved_at: r.resolved_at.map(ms_to_rfc3339),
            created_at: ms_to_rfc3339(r.created_at),
            created_ms: r.created_at,
            resolved_ms: r.resolved_at,
            merchant: r.merchant_slug,
        }
    }
}

const SELECT: &str =
    "SELECT e.id, e.order_id, e.kind, e.payment_ref, e.order_status, e.shortfall, e.status,
        e.resolution, e.note, e.resolved_by, e.resolved_at, e.created_at, m.slug AS merchant_slug
    FROM order_exceptions e JOIN merchants m ON m.id = e.merchant_id";

/// Records a payment that could not be fulfilled, or finds the one already open for the order
/// (a repeated confirm records nothing twice). Returns its id.
#[allow(clippy::too_many_arguments)]
pub async fn record_paid_not_held(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    reservation_id: i64,
    order: &str,
    payment_ref: Option<&str>,
    order_status: ReservationStatus,
    shortfall: &[Shortfall],
) -> DomainResult<i64> {
    let mut tx = db.begin_write().await?;
    let id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO order_exceptions (merchant_id, reservation_id, order_id, kind, payment_ref, order_status,
            shortfall, status, created_at)
         VALUES ($1, $2, $3, 'PAID_NOT_HELD', $4, $5, $6, 'OPEN', $7)
         ON CONFLICT (reservation_id) WHERE status = 'OPEN' DO NOTHING RETURNING id",
    )
    .bind(merchant_id)
    .bind(reservation_id)
    .bind(order)
    .bind(payment_ref.map(str::to_string))
    .bind(order_status.as_str())
    .bind(serde_json::to_string(shortfall).unwrap_or_else(|_| "[]".into()))
    .bind(db.now_ms())
    .fetch_optional(&mut *tx)
    .await?;
    let Some(id) = id else {
        tx.rollback().await?;
        return open_for(db, merchant_id, reservation_id)
            .await?
            .map(|e| e.id)
            .ok_or_else(|| DomainError::Internal(format!("order {order}: exception vanished")));
    };
    let missing: Vec<String> = shortfall
        .iter()
        .map(|s| format!("{} × {} ({} available)", s.sku, s.qty, s.available))
        .collect();
    let detail = format!(
        "paid, not held ({}){}{}",
        order_status,
        payment_ref
            .map(|p| format!("; payment {p}"))
            .unwrap_or_default(),
        if missing.is_empty() {
            String::new()
        } else {
            format!("; missing {}", missing.join(", "))
        }
    );
    crate::domain::trail::events::record(
        &mut tx,
        db.now_ms(),
        merchant_id,
        crate::domain::trail::events::EventType::ExceptionOpened,
        crate::domain::trail::events::Subject::new("exception", id, None),
        serde_json::json!({"order_id": order, "payment_ref": payment_ref,
            "order_status": order_status.as_str(), "shortfall": shortfall,
            "before": null, "after": {"status": "OPEN"}}),
    )
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "exception.record",
        &format!("order:{order}"),
        &detail,
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// The open exception of an order, if any.
pub async fn open_for(
    db: &Db,
    merchant_id: MerchantId,
    reservation_id: i64,
) -> DomainResult<Option<Exception>> {
    let row: Option<Row> = sqlx::query_as(&format!(
        "{SELECT} WHERE e.merchant_id = $1 AND e.reservation_id = $2 AND e.status = 'OPEN'"
    ))
    .bind(merchant_id)
    .bind(reservation_id)
    .fetch_optional(&db.pool)
    .await?;
    Ok(row.map(Exception::from))
}

/// Every exception of one order, newest first.
pub async fn of_order(
    db: &Db,
    merchant_id: MerchantId,
    reservation_id: i64,
) -> DomainResult<Vec<Exception>> {
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "{SELECT} WHERE e.merchant_id = $1 AND e.reservation_id = $2 ORDER BY e.id DESC"
    ))
    .bind(merchant_id)
    .bind(reservation_id)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.into_iter().map(Exception::from).collect())
}

/// A page of exceptions, newest first, optionally of one status; `before` pages on by id.
pub async fn list(
    db: &Db,
    scope: Scope,
    status: Option<ExceptionStatus>,
    before: Option<i64>,
    limit: i64,
) -> DomainResult<Vec<Exception>> {
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "{SELECT} WHERE {} AND ($2 IS NULL OR e.status = $2) AND ($3 IS NULL OR e.id < $3)
         ORDER BY e.id DESC LIMIT $4",
        scope.filter("e.merchant_id", 1)
    ))
    .bind(scope.bind())
    .bind(status.map(|s| s.as_str().to_string()))
    .bind(before)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.into_iter().map(Exception::from).collect())
}

/// How many are open: the dashboard's count.
pub async fn count_open(db: &Db, scope: Scope) -> DomainResult<i64> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM order_exceptions e WHERE {} AND e.status = 'OPEN'",
        scope.filter("e.merchant_id", 1)
    ))
    .bind(scope.bind())
    .fetch_one(&db.pool)
    .await?)
}

pub async fn get(db: &Db, scope: Scope, id: i64) -> DomainResult<Exception> {
    let row: Option<Row> = sqlx::query_as(&format!(
        "{SELECT} WHERE {} AND e.id = $2",
        scope.filter("e.merchant_id", 1)
    ))
    .bind(scope.bind())
    .bind(id)
    .fetch_optional(&db.pool)
    .await?;
    row.map(Exception::from)
        .ok_or(DomainError::NotFound("exception"))
}

/// A resolution as asked: how, and a note saying what was done (required: the next person to read
/// the order must know what happened to the money).
pub fn resolution(raw: &str, note: &str) -> DomainResult<(Resolution, String)> {
    let mut errs = validate::Errors::default();
    let how = match Resolution::parse(raw.trim()) {
        Some(r) => Some(r),
        None => {
            errs.push(FieldError::new(
                "resolution",
                "invalid_resolution",
                messages::bad_resolution(),
            ));
            None
        }
    };
    let note = errs.take(validate::name("note", note, validate::REASON_MAX));
    match (how, note, errs.is_empty()) {
        (Some(h), Some(n), true) => Ok((h, n)),
        _ => Err(errs.refusal()),
    }
}

/// Settles an open exception. Fulfilled takes the order's lines now (refused with the shortfall
/// when they are still not there, and nothing changes); refunded moves nothing. Merchant admins
/// and API keys of the merchant only.
pub async fn resolve(
    db: &Db,
    actor: &Actor,
    id: i64,
    how: Resolution,
    note: &str,
) -> DomainResult<Exception> {
    let merchant_id = actor.catalog_writer()?;
    let e = get(db, Scope::Merchant(merchant_id), id).await?;
    if e.status == ExceptionStatus::Resolved {
        return Err(DomainError::conflict(
            "exception_resolved",
            messages::exception_resolved(id),
            serde_json::json!({ "exception_id": id, "resolution": e.resolution }),
        ));
    }
    let mut tx = db.begin_write().await?;
    let settled = sqlx::query(
        "UPDATE order_exceptions SET status = 'RESOLVED', resolution = $1, note = $2, resolved_by = $3, resolved_at = $4
         WHERE id = $5 AND merchant_id = $6 AND status = 'OPEN'",
    )
    .bind(how.as_str())
    .bind(note)
    .bind(&actor.label)
    .bind(db.now_ms())
    .bind(id)
    .bind(merchant_id)
    .execute(&mut *tx)
    .await?;
    if settled.rows_affected() != 1 {
        tx.rollback().await?;
        // A racing resolution won: say what it was.
        return Box::pin(resolve(db, actor, id, how, note)).await;
    }
    crate::domain::trail::events::record(
        &mut tx,
        db.now_ms(),
        merchant_id,
        crate::domain::trail::events::EventType::ExceptionResolved,
        crate::domain::trail::events::Subject::new("exception", id, None),
        serde_json::json!({"order_id": e.order_id, "resolution": how.as_str(), "note": note,
            "before": {"status": "OPEN"}, "after": {"status": "RESOLVED"}}),
    )
    .await?;
    let mut subjects = Vec::new();
    if how == Resolution::Fulfilled {
        let reservation_id: i64 =
            sqlx::query_scalar("SELECT reservation_id FROM order_exceptions WHERE id = $1")
                .bind(id)
                .fetch_one(&mut *tx)
                .await?;
        let status: String = sqlx::query_scalar("SELECT status FROM reservations WHERE id = $1")
            .bind(reservation_id)
            .fetch_one(&mut *tx)
            .await?;
        let from = ReservationStatus::parse(&status).unwrap_or(e.order_status);
        match orders::take_again(
            &mut tx,
            db.now_ms(),
            actor,
            merchant_id,
            reservation_id,
            &e.order_id,
            e.payment_ref.as_deref(),
            from,
            "reservation.confirm_late",
        )
        .await?
        {
            Retaken::Done(s) => subjects = s,
            Retaken::Short(shortfall) => {
                tx.rollback().await?;
                return Err(DomainError::conflict(
                    "insufficient_stock",
                    messages::still_short(&e.order_id),
                    serde_json::json!({ "exception_id": id, "order_id": e.order_id, "shortfall": shortfall }),
                ));
            }
            Retaken::Lost => {
                tx.rollback().await?;
                return Err(DomainError::conflict(
                    "order_changed",
                    messages::order_changed(&e.order_id),
                    serde_json::json!({ "exception_id": id, "order_id": e.order_id }),
                ));
            }
        }
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "exception.resolve",
        &format!("order:{}", e.order_id),
        &format!("#{id} {how}: {note}"),
    )
    .await?;
    tx.commit().await?;
    db.forget(subjects).await;
    get(db, Scope::Merchant(merchant_id), id).await
}
