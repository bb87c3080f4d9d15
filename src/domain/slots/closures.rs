//! Closures: a staff member on leave, or the whole store shut, for a period. Creating one closes
//! every slot it covers (and lists the bookings to call); reopening it reopens them. Capacity is
//! never touched: a closure closes slots, it does not shrink them.

use crate::domain::{MerchantId, StoreId};
use serde::Serialize;
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, REASON_MAX};
use crate::domain::slots::staff::{self, Staff};
use crate::domain::slots::{
    active_bookings, apply_closures, forget_between, Contact, Slot, SLOT_SELECT,
};
use crate::domain::tenancy::tenants::Store;
use crate::domain::{Actor, DomainError, FieldError};
use crate::infra::db::Db;
use crate::messages;

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Closure {
    pub id: i64,
    pub store_id: StoreId,
    pub staff_id: Option<i64>,
    pub staff_name: Option<String>,
    pub starts_at: i64,
    pub ends_at: i64,
    pub reason: String,
    pub created_by: String,
    pub reopened_at: Option<i64>,
}

const CLOSURE_SELECT: &str = "SELECT c.id, c.store_id, c.staff_id, st.name AS staff_name, c.starts_at, c.ends_at, c.reason, c.created_by, c.reopened_at
    FROM closures c LEFT JOIN staff st ON st.id = c.staff_id";

#[derive(Debug, Clone)]
pub struct ClosureInput {
    pub staff: Option<Staff>,
    pub starts_at: i64,
    pub ends_at: i64,
    pub reason: String,
    /// Optional: what the public booking page says about the closed slots.
    pub public_note: Option<String>,
}

/// A closure as the back office's form gives it: a staff id (empty for the whole store) and
/// local times in the store's timezone.
pub struct ClosureForm<'a> {
    pub staff: &'a str,
    pub starts_at: &'a str,
    pub ends_at: &'a str,
    pub reason: &'a str,
    pub public_note: &'a str,
}

impl ClosureForm<'_> {
    /// The closure's input, or every field's error at once. A staff member of another store is
    /// as unknown as one that does not exist.
    pub async fn parse(
        &self,
        db: &Db,
        merchant_id: MerchantId,
        store: &Store,
    ) -> DomainResult<ClosureInput> {
        let mut errs = validate::Errors::default();
        let staff = match self.staff.trim() {
            "" => None,
            raw => {
                let found = match raw.parse::<i64>() {
                    Ok(id) => match staff::staff_by_id(db, merchant_id, id).await {
                        Ok(s) if s.store_id == store.id => Some(s),
                        Ok(_) | Err(DomainError::NotFound(_)) => None,
                        Err(e) => return Err(e),
                    },
                    Err(_) => None,
                };
                if found.is_none() {
                    errs.push(FieldError::new(
                        "staff",
                        "unknown_staff",
                        messages::unknown_staff(raw),
                    ));
                }
                found
            }
        };
        let tz = store.tz();
        let starts_at = errs.take(validate::local_datetime("starts_at", self.starts_at, tz));
        let ends_at = errs.take(validate::local_datetime("ends_at", self.ends_at, tz));
        match (starts_at, ends_at) {
            (Some(starts_at), Some(ends_at)) if errs.0.is_empty() => Ok(ClosureInput {
                staff,
                starts_at,
                ends_at,
                reason: self.reason.to_string(),
                public_note: Some(self.public_note.to_string()),
            }),
            _ => Err(DomainError::Invalid(errs.0)),
        }
    }
}

/// Closes a staff member or the whole store for a period. Every affected slot closes; the
/// bookings in them are returned with contact details.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn create_closure(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    store: &Store,
    input: ClosureInput,
) -> DomainResult<(Closure, Vec<Contact>)> {
    let mut errs = validate::Errors::default();
    let reason = errs.take(validate::name("reason", &input.reason, REASON_MAX));
    let public_note = match input.public_note.as_deref().map(str::trim) {
        Some(n) if !n.is_empty() => errs.take(validate::name("public_note", n, REASON_MAX)),
        _ => None,
    };
    if input.ends_at <= input.starts_at {
        errs.push(FieldError::new(
            "ends_at",
            "invalid_period",
            messages::ends_before_starts(),
        ));
    }
    // Leave that is over closes nothing and would only sit in the list: refused, not recorded.
    if input.ends_at > input.starts_at && input.ends_at <= db.now_ms() {
        errs.push(FieldError::new(
            "ends_at",
            "period_in_past",
            messages::closure_in_past(),
        ));
    }
    if input.ends_at - input.starts_at > 366 * 86_400_000 {
        errs.push(FieldError::new(
            "ends_at",
            "invalid_period",
            messages::closure_too_long(),
        ));
    }
    if !errs.is_empty() {
        return Err(errs.refusal());
    }
    let reason = reason.unwrap_or_default();
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO closures (merchant_id, store_id, staff_id, starts_at, ends_at, reason, created_by, created_at, public_note)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(merchant_id)
    .bind(store.id)
    .bind(input.staff.as_ref().map(|s| s.id))
    .bind(input.starts_at)
    .bind(input.ends_at)
    .bind(&reason)
    .bind(&actor.label)
    .bind(now)
    .bind(public_note.as_deref())
    .fetch_one(&mut *tx)
    .await?;
    let closed = apply_closures(&mut tx, store.id, now).await?;
    crate::domain::trail::events::record(
        &mut tx,
        db.now_ms(),
        merchant_id,
        crate::domain::trail::events::EventType::ClosureCreated,
        crate::domain::trail::events::Subject::new("closure", id, None),
        serde_json::json!({"store": store.slug, "staff": input.staff.as_ref().map(|s| s.name.clone()),
            "starts_at": crate::domain::kernel::validate::ms_to_rfc3339(input.starts_at),
            "ends_at": crate::domain::kernel::validate::ms_to_rfc3339(input.ends_at),
            "reason": reason, "slots_closed": closed}),
    )
    .await?;
    let who = input
        .staff
        .as_ref()
        .map(|s| s.name.clone())
        .unwrap_or_else(|| store.slug.clone());
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "closure.create",
        &format!("closure:{id}"),
        &format!("{who}: {reason}"),
    )
    .await?;
    tx.commit().await?;
    forget_between(db, merchant_id, store.id, input.starts_at, input.ends_at).await?;
    let closure = closure(db, merchant_id, id).await?;
    let contacts = closure_contacts(db, merchant_id, id).await?;
    Ok((closure, contacts))
}

pub async fn closure(db: &Db, merchant_id: MerchantId, id: i64) -> DomainResult<Closure> {
    sqlx::query_as(&format!(
        "{CLOSURE_SELECT} WHERE c.id = $1 AND c.merchant_id = $2"
    ))
    .bind(id)
    .bind(merchant_id)
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("closure"))
}

pub async fn closures(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
) -> DomainResult<Vec<Closure>> {
    Ok(sqlx::query_as(&format!("{CLOSURE_SELECT} WHERE c.merchant_id = $1 AND c.store_id = $2 ORDER BY c.reopened_at IS NOT NULL, c.starts_at DESC LIMIT 200"))
        .bind(merchant_id)
        .bind(store_id)
        .fetch_all(&db.pool)
        .await?)
}

/// Active bookings in the slots a closure closed.
pub async fn closure_contacts(
    db: &Db,
    merchant_id: MerchantId,
    closure_id: i64,
) -> DomainResult<Vec<Contact>> {
    let ids: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM slots WHERE closure_id = $1 AND merchant_id = $2")
            .bind(closure_id)
            .bind(merchant_id)
            .fetch_all(&db.pool)
            .await?;
    active_bookings(db, &ids).await
}

/// The slots a closure holds closed, in time order.
pub async fn closure_slots(
    db: &Db,
    merchant_id: MerchantId,
    closure_id: i64,
) -> DomainResult<Vec<Slot>> {
    Ok(sqlx::query_as(&format!("{SLOT_SELECT} WHERE sl.closure_id = $1 AND sl.merchant_id = $2 ORDER BY sl.starts_at, k.code LIMIT 5000"))
        .bind(closure_id)
        .bind(merchant_id)
        .fetch_all(&db.pool)
        .await?)
}

/// Ends a closure early (or undoes one made by mistake): its slots reopen unless another active
/// closure still covers them.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn reopen_closure(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    closure_id: i64,
) -> DomainResult<Closure> {
    let c = closure(db, merchant_id, closure_id).await?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let r = sqlx::query("UPDATE closures SET reopened_at = $1 WHERE id = $2 AND merchant_id = $3 AND reopened_at IS NULL")
        .bind(now)
        .bind(closure_id)
        .bind(merchant_id)
        .execute(&mut *tx)
        .await?;
    let mut reopened = Vec::new();
    if r.rows_affected() == 1 {
        let opened: Vec<i64> = sqlx::query_scalar("UPDATE slots SET status = 'OPEN', closed_reason = NULL, closure_id = NULL, updated_at = $1 WHERE closure_id = $2 AND status = 'CLOSED' RETURNING id")
            .bind(now)
            .bind(closure_id)
            .fetch_all(&mut *tx)
            .await?;
        crate::domain::trail::events::record_per_slot(
            &mut tx,
            db.now_ms(),
            crate::domain::trail::events::EventType::SlotOpened,
            &opened,
            serde_json::json!({"before": "CLOSED", "after": "OPEN", "closure_id": closure_id}),
        )
        .await?;
        reopened.clone_from(&opened);
        let opened = opened.len();
        crate::domain::trail::events::record(
            &mut tx,
            db.now_ms(),
            merchant_id,
            crate::domain::trail::events::EventType::ClosureReopened,
            crate::domain::trail::events::Subject::new("closure", closure_id, None),
            serde_json::json!({"before": "ACTIVE", "after": "REOPENED", "slots_opened": opened}),
        )
        .await?;
        apply_closures(&mut tx, c.store_id, now).await?;
        crate::domain::trail::audit::record(
            &mut tx,
            db.now_ms(),
            actor,
            Some(merchant_id),
            "closure.reopen",
            &format!("closure:{closure_id}"),
            &c.reason,
        )
        .await?;
    }
    tx.commit().await?;
    forget_between(db, merchant_id, c.store_id, c.starts_at, c.ends_at).await?;
    for slot in reopened {
        crate::domain::slots::cache::freed(db, merchant_id, slot);
    }
    closure(db, merchant_id, closure_id).await
}

/// Per closure of a store: how many bookings it touched (in its slots when it closed them,
/// moved out of them or cancelled since), and how many of those are still to call (active, in
/// a closed slot not over, nobody reached the customer). Reopened closures no longer hold slots.
pub async fn booking_counts(
    db: &Db,
    store_id: StoreId,
) -> DomainResult<std::collections::HashMap<i64, (i64, i64)>> {
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT s.closure_id, CAST(COUNT(DISTINCT b.id) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN b.slot_id = s.id AND b.status = 'BOOKED' AND b.hold_until IS NULL AND s.status = 'CLOSED'
                                        AND s.ends_at > $2 AND b.contacted_at IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM slots s
         JOIN closures c ON c.id = s.closure_id
         JOIN bookings b ON (b.slot_id = s.id OR b.moved_from_slot_id = s.id)
         WHERE s.store_id = $1 AND (b.status <> 'CANCELLED' OR b.updated_at >= c.created_at)
         GROUP BY s.closure_id",
    )
    .bind(store_id)
    .bind(db.now_ms())
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.into_iter().map(|(id, a, t)| (id, (a, t))).collect())
}
