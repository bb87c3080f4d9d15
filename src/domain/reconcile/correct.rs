//! An operator's corrections: a stock finding restored or accepted, a slot's count set to its
//! bookings, and the unfreeze that lets a SKU or slot sell again.

#[allow(unused_imports)]
use super::*;

/// How an operator corrects a stock finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Correction {
    /// Put the balance back to what the ledger and the open orders say.
    Restore,
    /// Keep the balance as it is and book the unexplained difference in the ledger.
    Accept,
}

/// Corrects the balance of a stock finding, in one transaction with its ledger rows. The change
/// that happened outside the ledger is booked first (so the ledger shows it), then, for Restore,
/// the way back. The SKU stays frozen until [`unfreeze`].
#[tracing::instrument(skip_all, fields(finding_id = ?finding_id))]
pub async fn correct_stock(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    finding_id: i64,
    mode: Correction,
    reason: &str,
) -> DomainResult<Finding> {
    if !actor.may_resolve_findings() {
        return Err(DomainError::Forbidden);
    }
    let reason = crate::domain::kernel::validate::name(
        "reason",
        reason,
        crate::domain::kernel::validate::REASON_MAX,
    )
    .map_err(|e| DomainError::Invalid(vec![e]))?;
    let f = finding(db, scope, finding_id).await?;
    let (Some(sku), Some(wh)) = (f.sku_id, f.warehouse_id) else {
        return Err(not_correctable(&f));
    };
    if !f.is_stock() || f.status != FindingStatus::Open {
        return Err(not_correctable(&f));
    }
    let merchant = f.merchant_id.ok_or_else(|| not_correctable(&f))?;
    let mut tx = db.begin_write().await?;
    // The balance row is locked before anything is read: every move of this balance (reserve,
    // confirm, release, expiry) updates the row, so until COMMIT none can land between the reads
    // below and the write. Without it PostgreSQL (READ COMMITTED) let a confirm commit in between
    // and the correction wrote its stale numbers over it. (SQLite's BEGIN IMMEDIATE already
    // serialises writers.)
    let balance = crate::domain::stock::lock_balance(&mut tx, sku, wh)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    let ledger: Buckets = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(d_total), 0) AS BIGINT) AS total, CAST(COALESCE(SUM(d_locked), 0) AS BIGINT) AS locked,
            CAST(COALESCE(SUM(d_sold), 0) AS BIGINT) AS sold, CAST(COALESCE(SUM(d_frozen), 0) AS BIGINT) AS frozen
         FROM stock_ledger WHERE sku_id = $1 AND warehouse_id = $2",
    )
    .bind(sku)
    .bind(wh)
    .fetch_one(&mut *tx)
    .await?;
    let held: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(qty), 0) AS BIGINT) FROM stock_reservations WHERE sku_id = $1 AND warehouse_id = $2 AND status = 'RESERVED' AND hold = 'locked'",
    )
    .bind(sku)
    .bind(wh)
    .fetch_one(&mut *tx)
    .await?;
    let target = match mode {
        Correction::Restore => Buckets {
            locked: held,
            ..ledger
        },
        Correction::Accept => {
            if balance.locked != held {
                tx.rollback().await?;
                return Err(DomainError::conflict(
                    "locked_must_match_orders",
                    messages::accept_needs_locked(held, balance.locked),
                    serde_json::json!({ "finding": f.id, "held": held, "locked": balance.locked }),
                ));
            }
            balance
        }
    };
    let valid = target.total >= 0
        && target.locked >= 0
        && target.sold >= 0
        && target.frozen >= 0
        && target.locked + target.sold + target.frozen <= target.total;
    if !valid {
        tx.rollback().await?;
        return Err(DomainError::conflict(
            "correction_impossible",
            messages::correction_impossible(&buckets_text(&target)),
            serde_json::json!({ "finding": f.id }),
        ));
    }
    let unexplained = Buckets {
        total: balance.total - ledger.total,
        locked: balance.locked - ledger.locked,
        sold: balance.sold - ledger.sold,
        frozen: balance.frozen - ledger.frozen,
    };
    if unexplained != Buckets::default() {
        crate::domain::stock::record_correction(
            &mut tx,
            db.now_ms(),
            (merchant, sku, wh),
            (unexplained, balance),
            (&messages::unexplained_change(f.id), &actor.label),
        )
        .await?;
    }
    let back = Buckets {
        total: target.total - balance.total,
        locked: target.locked - balance.locked,
        sold: target.sold - balance.sold,
        frozen: target.frozen - balance.frozen,
    };
    if back != Buckets::default() {
        // A delta, not absolute values: it moves the balance by what the ledger row records.
        crate::domain::stock::correct(
            &mut tx,
            db.now_ms(),
            (merchant, sku, wh),
            back,
            (&reason, &actor.label),
        )
        .await?;
        // Frozen moved without a hold: the listed holds follow it.
        if back.frozen != 0 {
            crate::domain::stock::holds::settle(
                &mut tx,
                db.now_ms(),
                (merchant, sku, wh),
                &actor.label,
            )
            .await?;
        }
    }
    let how = match mode {
        Correction::Restore => "restore",
        Correction::Accept => "accept",
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant),
        &format!("reconcile.correct.{how}"),
        &f.subject,
        &reason,
    )
    .await?;
    tx.commit().await?;
    db.forget([Subject::Stock(sku)]).await;
    finding(db, scope, finding_id).await
}

/// Sets a slot's booked count to its active bookings (the slot stays frozen until unfrozen).
#[tracing::instrument(skip_all, fields(finding_id = ?finding_id))]
pub async fn correct_slot(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    finding_id: i64,
    reason: &str,
) -> DomainResult<Finding> {
    if !actor.may_resolve_findings() {
        return Err(DomainError::Forbidden);
    }
    let reason = crate::domain::kernel::validate::name(
        "reason",
        reason,
        crate::domain::kernel::validate::REASON_MAX,
    )
    .map_err(|e| DomainError::Invalid(vec![e]))?;
    let f = finding(db, scope, finding_id).await?;
    let Some(slot) = f
        .slot_id
        .filter(|_| f.kind == FindingKind::BookedMismatch && f.status == FindingStatus::Open)
    else {
        return Err(not_correctable(&f));
    };
    let mut tx = db.begin_write().await?;
    let r = sqlx::query(
        "UPDATE slots SET booked = (SELECT CAST(COALESCE(SUM(b.places), 0) AS BIGINT) FROM bookings b WHERE b.slot_id = slots.id AND b.status <> 'CANCELLED'), updated_at = $1
         WHERE id = $2 AND (SELECT CAST(COALESCE(SUM(b.places), 0) AS BIGINT) FROM bookings b WHERE b.slot_id = slots.id AND b.status <> 'CANCELLED') <= capacity",
    )
    .bind(db.now_ms())
    .bind(slot)
    .execute(&mut *tx)
    .await?;
    if r.rows_affected() != 1 {
        tx.rollback().await?;
        return Err(DomainError::conflict(
            "correction_impossible",
            messages::correction_impossible(&f.expected),
            serde_json::json!({ "finding": f.id }),
        ));
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        f.merchant_id,
        "reconcile.correct.slot",
        &f.subject,
        &reason,
    )
    .await?;
    tx.commit().await?;
    if let Some(m) = f.merchant_id {
        gate::forget_slots(db, m, &[slot]).await;
    }
    finding(db, scope, finding_id).await
}

pub(super) fn not_correctable(f: &Finding) -> DomainError {
    DomainError::conflict(
        "not_correctable",
        messages::finding_not_correctable(),
        serde_json::json!({ "finding": f.id, "kind": f.kind, "status": f.status }),
    )
}

/// Resolves a finding and unfreezes its SKU or slot, after checking that the identity holds
/// again. Refused (with what is still wrong) otherwise.
#[tracing::instrument(skip_all, fields(finding_id = ?finding_id))]
pub async fn unfreeze(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    finding_id: i64,
    note: &str,
) -> DomainResult<Finding> {
    if !actor.may_resolve_findings() {
        return Err(DomainError::Forbidden);
    }
    let note = crate::domain::kernel::validate::name(
        "note",
        note,
        crate::domain::kernel::validate::REASON_MAX,
    )
    .map_err(|e| DomainError::Invalid(vec![e]))?;
    let f = finding(db, scope, finding_id).await?;
    if f.status != FindingStatus::Open {
        return Ok(f);
    }
    let (_, broken) = sql_identities(db, &Reach::All).await?;
    if let Some(still) = broken
        .iter()
        .find(|b| b.kind == f.kind && b.subject == f.subject)
    {
        return Err(DomainError::conflict(
            "identity_still_broken",
            messages::identity_still_broken(&still.expected, &still.found),
            serde_json::json!({ "finding": f.id, "expected": still.expected, "found": still.found }),
        ));
    }
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "UPDATE reconcile_findings SET status = 'RESOLVED', resolved_at = $1, resolved_by = $2, resolution = $3 WHERE id = $4 AND status = 'OPEN'",
    )
    .bind(now)
    .bind(&actor.label)
    .bind(&note)
    .bind(f.id)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE skus SET frozen_finding_id = NULL WHERE frozen_finding_id = $1")
        .bind(f.id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE slots SET frozen_finding_id = NULL WHERE frozen_finding_id = $1")
        .bind(f.id)
        .execute(&mut *tx)
        .await?;
    if let Some(m) = f.merchant_id {
        finding_event(
            &mut tx,
            db.now_ms(),
            m,
            crate::domain::trail::events::EventType::ReconcileUnfrozen,
            f.id,
            f.sku_id,
            f.slot_id,
            serde_json::json!({"kind": f.kind.as_str(), "subject": f.subject, "note": note,
                "before": {"frozen": true}, "after": {"frozen": false}}),
        )
        .await?;
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        f.merchant_id,
        "reconcile.unfreeze",
        &f.subject,
        &note,
    )
    .await?;
    tx.commit().await?;
    // Another open finding may still freeze the same SKU or slot: point it there.
    refreeze_remaining(db, &f).await?;
    if let (Some(m), Some(slot)) = (f.merchant_id, f.slot_id) {
        gate::forget_slots(db, m, &[slot]).await;
    }
    if let (Some(m), Some(sku)) = (f.merchant_id, f.sku_id) {
        crate::domain::catalog::forget_sku(db, m, sku).await?;
    }
    finding(db, scope, finding_id).await
}

pub(super) async fn refreeze_remaining(db: &Db, f: &Finding) -> DomainResult<()> {
    let other: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM reconcile_findings WHERE status = 'OPEN' AND id <> $1 AND ((slot_id IS NOT NULL AND slot_id = $2) OR (slot_id IS NULL AND sku_id = $3)) ORDER BY id LIMIT 1",
    )
    .bind(f.id)
    .bind(f.slot_id.unwrap_or(-1))
    .bind(f.sku_id.unwrap_or(-1))
    .fetch_optional(&db.pool)
    .await?;
    if let Some(id) = other {
        if f.slot_id.is_some() {
            sqlx::query("UPDATE slots SET frozen_finding_id = $1 WHERE id = $2 AND frozen_finding_id IS NULL")
                .bind(id)
                .bind(f.slot_id)
                .execute(&db.pool)
                .await?;
        } else {
            sqlx::query("UPDATE skus SET frozen_finding_id = $1 WHERE id = $2 AND frozen_finding_id IS NULL")
                .bind(id)
                .bind(f.sku_id)
                .execute(&db.pool)
                .await?;
        }
    }
    Ok(())
}
