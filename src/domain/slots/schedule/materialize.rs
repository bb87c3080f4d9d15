//! A schedule's slots made real: the slots the rules call for in a window, made idempotently, and
//! with `prune` the rule-made slots the rules no longer call for removed when nobody booked them
//! (closed and listed when something still refers to them, never deleted).

use std::collections::HashSet;

use chrono::{Duration, NaiveDate};
use serde_json::json;
use sqlx::{Any, Transaction};

use super::SLOT_UNREFERENCED;
use super::{local_ms, overrides, plan, rules_of, KeptSlot, MaterializeReport, Planned};
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::ms_to_rfc3339;
use crate::domain::tenancy::tenants::Store;
use crate::domain::trail::events::{self, EventType, Subject};
use crate::domain::Actor;
use crate::infra::db::Db;
use crate::messages;

/// Creates the slots the rules call for in [from, from + days), idempotently. With `prune`,
/// future rule-made slots the rules no longer call for are removed when nobody booked them, and
/// reported when somebody did (never deleted).
#[tracing::instrument(skip_all, fields(sku_id = ?sku_id))]
pub async fn materialize(
    db: &Db,
    sku_id: i64,
    store: &Store,
    from: NaiveDate,
    days: i64,
    prune: bool,
    audit_as: Option<&Actor>,
) -> DomainResult<MaterializeReport> {
    let rules = rules_of(db, sku_id, store.id).await?;
    let dated = overrides::by_date(db, sku_id, store.id, from).await?;
    let now = db.now_ms();
    let planned = plan(&rules, &dated, store.tz(), from, days, now);
    let mut run = Run {
        db,
        sku_id,
        store,
        now,
        report: MaterializeReport::default(),
        created_ids: Vec::new(),
        blocked_keys: HashSet::new(),
    };
    let mut tx = db.begin_write().await?;
    for p in &planned {
        run.place(&mut tx, p, prune).await?;
    }
    if prune {
        let window_end = local_ms(store.tz(), from + Duration::days(days), 0).unwrap_or(i64::MAX);
        run.prune(&mut tx, &planned, window_end).await?;
    }
    // Slots born inside an active closure start closed; the report says how many, so that a
    // save that "created" slots nobody can book does not read as a success only.
    crate::domain::slots::apply_closures(&mut tx, store.id, now).await?;
    run.count_created_closed(&mut tx).await?;
    if let Some(actor) = audit_as {
        run.audit(&mut tx, actor).await?;
    }
    tx.commit().await?;
    if prune {
        // Capacities may have changed and slots closed: the gate reloads them from SQL.
        crate::domain::slots::forget_between(db, store.merchant_id, store.id, now, i64::MAX)
            .await?;
    }
    Ok(run.report)
}

/// One materialisation's facts and what it found so far.
struct Run<'a> {
    db: &'a Db,
    sku_id: i64,
    store: &'a Store,
    now: i64,
    report: MaterializeReport,
    created_ids: Vec<i64>,
    /// The planned slots not made because a slot that stays is in their way, by (person, start).
    blocked_keys: HashSet<(i64, i64)>,
}

/// A rule-made slot in the window, as `prune` reads it: id, person, start, booked, status,
/// closure and closing reason.
type Existing = (i64, i64, i64, i64, String, Option<i64>, Option<String>);

impl Run<'_> {
    /// Writes the event of a change to a slot.
    async fn event(
        &self,
        tx: &mut Transaction<'_, Any>,
        ty: EventType,
        slot_id: i64,
        data: serde_json::Value,
    ) -> Result<(), sqlx::Error> {
        events::record(
            tx,
            self.db.now_ms(),
            self.store.merchant_id,
            ty,
            Subject::new("slot", slot_id, Some(self.sku_id)),
            data,
        )
        .await
    }

    /// One planned slot: made, unless a slot that stays is in its way; with `prune`, a slot
    /// already there takes the planned length and capacity (`refit`).
    async fn place(
        &mut self,
        tx: &mut Transaction<'_, Any>,
        p: &Planned,
        prune: bool,
    ) -> DomainResult<()> {
        // A slot that stays whatever the rules say (places booked in it, or staff made it by
        // hand) and covers part of this time for the same person: the planned slot is not made.
        // The preview takes the same decision from the same two facts.
        let in_the_way: Option<(i64, i64)> = sqlx::query_as(
            "SELECT id, booked FROM slots
             WHERE sku_id = $1 AND store_id = $2 AND staff_key = $3 AND starts_at <> $4
               AND starts_at < $5 AND ends_at > $4
               AND (booked > 0 OR source <> 'RULE')
             ORDER BY starts_at LIMIT 1",
        )
        .bind(self.sku_id)
        .bind(self.store.id)
        .bind(p.staff_id.unwrap_or(0))
        .bind(p.starts_at)
        .bind(p.ends_at)
        .fetch_optional(&mut **tx)
        .await?;
        if let Some((blocking, booked)) = in_the_way {
            self.blocked_keys
                .insert((p.staff_id.unwrap_or(0), p.starts_at));
            self.report.blocked.push(KeptSlot {
                slot_id: blocking,
                starts_at: ms_to_rfc3339(p.starts_at),
                booked,
            });
            return Ok(());
        }
        let created: Option<i64> = sqlx::query_scalar(
            "INSERT INTO slots (merchant_id, sku_id, store_id, staff_id, staff_key, starts_at, ends_at, capacity, source, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'RULE', $9, $9)
             ON CONFLICT (sku_id, store_id, staff_key, starts_at) DO NOTHING RETURNING id",
        )
        .bind(self.store.merchant_id)
        .bind(self.sku_id)
        .bind(self.store.id)
        .bind(p.staff_id)
        .bind(p.staff_id.unwrap_or(0))
        .bind(p.starts_at)
        .bind(p.ends_at)
        .bind(p.capacity)
        .bind(self.now)
        .fetch_optional(&mut **tx)
        .await?;
        if let Some(id) = created {
            self.report.created += 1;
            self.created_ids.push(id);
            let data = json!({"after": {"status": "OPEN", "capacity": p.capacity,
                "starts_at": ms_to_rfc3339(p.starts_at), "ends_at": ms_to_rfc3339(p.ends_at)},
                "source": "RULE"});
            self.event(tx, EventType::SlotCreated, id, data).await?;
        } else if prune {
            self.refit(tx, p).await?;
        }
        Ok(())
    }

    /// A slot already at a planned time: it takes the planned length when nobody booked it,
    /// and the planned capacity unless staff set one by hand or more are booked; what is kept
    /// is listed.
    async fn refit(&mut self, tx: &mut Transaction<'_, Any>, p: &Planned) -> DomainResult<()> {
        let existing: Option<(i64, i64, i64, i64, String, i64)> = sqlx::query_as(
            "SELECT id, capacity, booked, CAST(capacity_edited AS BIGINT), source, ends_at FROM slots
             WHERE sku_id = $1 AND store_id = $2 AND staff_key = $3 AND starts_at = $4",
        )
        .bind(self.sku_id)
        .bind(self.store.id)
        .bind(p.staff_id.unwrap_or(0))
        .bind(p.starts_at)
        .fetch_optional(&mut **tx)
        .await?;
        let Some((slot_id, capacity, booked, edited, source, ends_at)) = existing else {
            return Ok(());
        };
        let kept = || KeptSlot {
            slot_id,
            starts_at: ms_to_rfc3339(p.starts_at),
            booked,
        };
        if ends_at != p.ends_at && source == "RULE" {
            // A new slot length: a slot nobody booked takes it; one with bookings keeps the
            // time its customers booked, and is listed.
            let resized = sqlx::query(
                "UPDATE slots SET ends_at = $1, updated_at = $2
                 WHERE id = $3 AND booked = 0",
            )
            .bind(p.ends_at)
            .bind(self.now)
            .bind(slot_id)
            .execute(&mut **tx)
            .await?;
            if resized.rows_affected() == 1 {
                self.report.length_changed += 1;
            } else {
                self.report.kept_with_bookings.push(kept());
            }
        }
        if capacity == p.capacity {
            return Ok(());
        }
        if edited != 0 {
            // A capacity staff set by hand on that slot is kept, and reported so the save
            // says so.
            self.report.kept_edited.push(kept());
            return Ok(());
        }
        if source != "RULE" {
            return Ok(());
        }
        // A rule change may change capacity, never below what is booked. Conditional on
        // what was read: a booking or a hand edit that lands meanwhile wins.
        let changed = sqlx::query(
            "UPDATE slots SET capacity = $1, updated_at = $2
             WHERE id = $3 AND capacity = $4 AND booked <= $1 AND capacity_edited = 0",
        )
        .bind(p.capacity)
        .bind(self.now)
        .bind(slot_id)
        .bind(capacity)
        .execute(&mut **tx)
        .await?;
        if changed.rows_affected() == 0 && booked > p.capacity {
            self.report.kept_full.push(kept());
        }
        if changed.rows_affected() == 1 {
            self.report.capacity_changed += 1;
            let data = json!({"before": {"capacity": capacity}, "after": {"capacity": p.capacity},
                "booked": booked});
            self.event(tx, EventType::SlotCapacityChanged, slot_id, data)
                .await?;
        }
        Ok(())
    }

    /// The future rule-made slots of the window that the plan no longer calls for.
    async fn prune(
        &mut self,
        tx: &mut Transaction<'_, Any>,
        planned: &[Planned],
        window_end: i64,
    ) -> DomainResult<()> {
        let existing: Vec<Existing> = sqlx::query_as(
            "SELECT id, staff_key, starts_at, booked, status, closure_id, closed_reason FROM slots
             WHERE sku_id = $1 AND store_id = $2 AND source = 'RULE' AND starts_at > $3 AND starts_at < $4",
        )
        .bind(self.sku_id)
        .bind(self.store.id)
        .bind(self.now)
        .bind(window_end)
        .fetch_all(&mut **tx)
        .await?;
        // A planned slot that was not made (something stays in its way) is not wanted either:
        // an unbooked slot left at that time by an earlier schedule goes.
        let wanted: HashSet<(i64, i64)> = planned
            .iter()
            .map(|p| (p.staff_id.unwrap_or(0), p.starts_at))
            .filter(|key| !self.blocked_keys.contains(key))
            .collect();
        for slot in existing {
            if !wanted.contains(&(slot.1, slot.2)) {
                self.take_away(tx, slot).await?;
            }
        }
        Ok(())
    }

    /// A slot no longer planned: deleted when nothing refers to it; closed and listed when only
    /// history does; listed when places are booked in it.
    async fn take_away(
        &mut self,
        tx: &mut Transaction<'_, Any>,
        (id, _, starts_at, booked, status, closure_id, closed_reason): Existing,
    ) -> DomainResult<()> {
        // Conditional: a booking that lands meanwhile keeps the slot alive.
        let gone = sqlx::query(&format!(
            "DELETE FROM slots WHERE id = $1 AND booked = 0 AND {SLOT_UNREFERENCED}"
        ))
        .bind(id)
        .execute(&mut **tx)
        .await?;
        if gone.rows_affected() == 1 {
            self.report.removed += 1;
            let data = json!({"before": {"status": status, "starts_at": ms_to_rfc3339(starts_at)},
                "after": null});
            self.event(tx, EventType::SlotRemoved, id, data).await?;
            return Ok(());
        }
        let kept = KeptSlot {
            slot_id: id,
            starts_at: ms_to_rfc3339(starts_at),
            booked,
        };
        // Only history points at it (cancelled or moved bookings, a waiting list, a finding):
        // keep the row for that history, closed, and say so in the report.
        let reason = messages::removed_from_schedule();
        let closed = sqlx::query("UPDATE slots SET status = 'CLOSED', closed_reason = $1, closure_id = NULL, updated_at = $2 WHERE id = $3 AND booked = 0")
            .bind(&reason)
            .bind(self.now)
            .bind(id)
            .execute(&mut **tx)
            .await?;
        if closed.rows_affected() != 1 {
            self.report.kept_with_bookings.push(kept);
            return Ok(());
        }
        self.report.removed += 1;
        self.report.kept_closed.push(kept);
        // Told when it changed: closed now, or closed before by a closure or for another
        // reason (a verdict quotes a closed slot's closure or reason).
        if status != "CLOSED" || closure_id.is_some() || closed_reason.as_deref() != Some(&reason) {
            let data = json!({"before": status, "after": "CLOSED", "reason": reason,
                "removed_from_schedule": true});
            self.event(tx, EventType::SlotClosed, id, data).await?;
        }
        Ok(())
    }

    /// How many of the slots made were born closed (inside an active closure).
    async fn count_created_closed(&mut self, tx: &mut Transaction<'_, Any>) -> DomainResult<()> {
        for chunk in self.created_ids.chunks(500) {
            let list: Vec<String> = chunk.iter().map(i64::to_string).collect();
            let closed: i64 = sqlx::query_scalar(&format!(
                "SELECT CAST(COUNT(*) AS BIGINT) FROM slots WHERE status = 'CLOSED' AND id IN ({})",
                list.join(",")
            ))
            .fetch_one(&mut **tx)
            .await?;
            self.report.created_closed += closed as usize;
        }
        Ok(())
    }

    /// Whatever a save changed is on the record, not only that the rules were replaced.
    async fn audit(&self, tx: &mut Transaction<'_, Any>, actor: &Actor) -> DomainResult<()> {
        let r = &self.report;
        crate::domain::trail::audit::record(
            tx,
            self.db.now_ms(),
            actor,
            Some(self.store.merchant_id),
            "schedule.apply",
            &format!("sku_id:{}", self.sku_id),
            &format!(
                "{} created, {} removed, {} capacity changed, {} kept with bookings, {} hand-edited capacities kept",
                r.created,
                r.removed,
                r.capacity_changed,
                r.kept_with_bookings.len(),
                r.kept_edited.len()
            ),
        )
        .await?;
        Ok(())
    }
}
