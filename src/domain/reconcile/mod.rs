//! Reconciliation: checks the identities SQL must keep, and the Redis projection against SQL.
//!
//! A broken SQL identity is never fixed silently: it freezes its SKU or slot (nothing more is
//! sold from it) and stays an open finding until an operator corrects it and unfreezes. Redis
//! drift is different: Redis is only a projection, so a key that still disagrees with SQL after a
//! second look (requests in flight settle in between) is shifted back to SQL and the repair
//! recorded.
//!
//! Every check is one SQL statement, so it reads one consistent snapshot: a reservation
//! committing halfway through a check cannot look like a broken identity.
//!
//! A run checks everything (a full sweep) or only what changed since the last run finished
//! ([`changed`]): the SKUs, slots and orders the change events name. The scheduled job runs
//! changed-only runs and a full sweep on a slower schedule ([`run_scheduled`]), so its cost
//! follows the rate of change, not the size of the history.

pub mod changed;
mod correct;
mod drift;
mod identities;

pub use correct::*;
use drift::*;
use identities::*;

use crate::domain::MerchantId;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use serde::Serialize;
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::orders::gate;
use crate::domain::stock::Buckets;
use crate::domain::{Actor, DomainError, Scope};
use crate::infra::counters::{StockCounts, Subject};
use crate::infra::db::Db;
use crate::messages;

crate::text_enum! {
    /// Kinds of finding. All but the last two are broken SQL identities (they freeze); the last
    /// two are drift of what is kept beside SQL (Redis keys, code counts), repaired on sight.
    pub enum FindingKind {
        LockedMismatch = "locked_mismatch",
        LedgerMismatch = "ledger_mismatch",
        BookedMismatch = "booked_mismatch",
        Overbooked = "overbooked",
        CodeOrphanBooking = "code_booking_without_reservation",
        CodeSoldWithoutOrder = "code_sold_without_order",
        CodeLineMismatch = "code_line_mismatch",
        OrderBookingMismatch = "order_booking_mismatch",
        RedisDrift = "redis_drift",
        /// The kept count of a batch's codes in one status differed from the codes (repaired).
        CodeCountDrift = "code_count_drift",
        /// A SKU × warehouse's open holds did not add up to its frozen units (repaired).
        HoldDrift = "hold_drift",
    }
}

pub const PAGE_SIZE: i64 = 50;

crate::text_enum! {
    /// What a run looked at: everything, or what changed since the last finished run.
    pub enum RunScope { Full = "full", Changed = "changed" }
}

/// What one run checks.
#[derive(Debug, Clone)]
enum Reach {
    All,
    Touched(changed::Touched),
}

impl Reach {
    /// ` AND <col in the ids the list picks>`, or nothing when everything is checked.
    pub(super) fn only(&self, col: &str, pick: fn(&changed::Touched) -> &[i64]) -> String {
        let ids = match self {
            Reach::All => None,
            Reach::Touched(t) => Some(pick(t)),
        };
        crate::infra::db::and_id_in(col, ids)
    }
    pub(super) fn skus(&self) -> Option<&[i64]> {
        match self {
            Reach::All => None,
            Reach::Touched(t) => Some(&t.skus),
        }
    }
}

fn skus_of(t: &changed::Touched) -> &[i64] {
    &t.skus
}

fn slots_of(t: &changed::Touched) -> &[i64] {
    &t.slots
}

fn reservations_of(t: &changed::Touched) -> &[i64] {
    &t.reservations
}

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Run {
    pub id: i64,
    pub trigger: String,
    pub actor: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub checked: i64,
    pub broken: i64,
    pub drift_found: i64,
    pub drift_repaired: i64,
    pub redis: String,
    pub error: Option<String>,
    #[sqlx(try_from = "String")]
    pub scope: RunScope,
    /// A changed-only run looked at the events numbered in (seq_after, seq_upto].
    pub seq_after: Option<i64>,
    /// Every event at or below it was checked once the run finished.
    pub seq_upto: Option<i64>,
}

crate::text_enum! {
    /// A finding is OPEN until someone resolves it (or a later run sees it repaired).
    pub enum FindingStatus { Open = "OPEN", Resolved = "RESOLVED" }
}

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Finding {
    pub id: i64,
    pub run_id: i64,
    pub merchant_id: Option<MerchantId>,
    #[sqlx(try_from = "String")]
    pub kind: FindingKind,
    pub subject: String,
    pub sku_id: Option<i64>,
    pub warehouse_id: Option<i64>,
    pub slot_id: Option<i64>,
    pub expected: String,
    pub found: String,
    pub action: String,
    #[sqlx(try_from = "String")]
    pub status: FindingStatus,
    pub created_at: i64,
    pub resolved_at: Option<i64>,
    pub resolved_by: Option<String>,
    pub resolution: Option<String>,
}

impl Finding {
    /// The sentence an operator reads.
    pub fn explain(&self) -> String {
        messages::finding(
            self.kind.as_str(),
            &self.subject,
            &self.expected,
            &self.found,
        )
    }
    pub fn is_stock(&self) -> bool {
        self.kind == FindingKind::LockedMismatch || self.kind == FindingKind::LedgerMismatch
    }
    pub fn is_slot(&self) -> bool {
        self.kind == FindingKind::BookedMismatch || self.kind == FindingKind::Overbooked
    }
}

/// What one run did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub run: Run,
    /// Broken identities seen in this run (new and still open).
    pub broken: Vec<Finding>,
    /// Redis keys repaired in this run.
    pub repaired: Vec<Finding>,
}

/// A broken identity as a check sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Broken {
    pub(super) kind: FindingKind,
    pub(super) merchant_id: MerchantId,
    pub(super) subject: String,
    pub(super) sku_id: Option<i64>,
    pub(super) warehouse_id: Option<i64>,
    pub(super) slot_id: Option<i64>,
    pub(super) expected: String,
    pub(super) found: String,
}

/// What a broken identity is about: the finding's subject (its text, which a finding is matched
/// on from run to run) and the SKU, warehouse and slot it points at, written in one place.
enum About {
    Balance {
        sku: i64,
        warehouse: i64,
    },
    Slot {
        sku: i64,
        slot: i64,
    },
    Code {
        sku: i64,
        code: i64,
    },
    CodeLine {
        sku: i64,
        reservation: i64,
    },
    Order {
        order: String,
        sku: Option<i64>,
        slot: Option<i64>,
    },
}

impl Broken {
    fn new(
        kind: FindingKind,
        merchant_id: MerchantId,
        about: About,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Broken {
        let (subject, sku_id, warehouse_id, slot_id) = match about {
            About::Balance { sku, warehouse } => (
                format!("sku:{sku} warehouse:{warehouse}"),
                Some(sku),
                Some(warehouse),
                None,
            ),
            About::Slot { sku, slot } => (format!("slot:{slot}"), Some(sku), None, Some(slot)),
            About::Code { sku, code } => (format!("sku:{sku} code:{code}"), Some(sku), None, None),
            About::CodeLine { sku, reservation } => (
                format!("sku:{sku} reservation:{reservation}"),
                Some(sku),
                None,
                None,
            ),
            About::Order { order, sku, slot } => (format!("order:{order}"), sku, None, slot),
        };
        Broken {
            kind,
            merchant_id,
            subject,
            sku_id,
            warehouse_id,
            slot_id,
            expected: expected.into(),
            found: found.into(),
        }
    }
}

fn buckets_text(b: &Buckets) -> String {
    format!(
        "total {} locked {} sold {} frozen {}",
        b.total, b.locked, b.sold, b.frozen
    )
}

/// Runs every check once, over everything. `trigger` is job, cli or operator.
#[tracing::instrument(skip_all)]
pub async fn run(db: &Db, trigger: &str, actor: &Actor) -> DomainResult<Report> {
    let upto = changed::watermark(db).await?;
    run_reach(db, trigger, actor, (None, upto), Reach::All).await
}

/// Checks what changed since the last run finished: the SKUs, slots and orders named by the
/// events numbered since. With no run before it, or more changes than a list is worth, it checks
/// everything (and says so in the run's scope).
#[tracing::instrument(skip_all)]
pub async fn run_changed(db: &Db, trigger: &str, actor: &Actor) -> DomainResult<Report> {
    let upto = changed::watermark(db).await?;
    let Some(after) = changed::last_checked(db).await? else {
        return run_reach(db, trigger, actor, (None, upto), Reach::All).await;
    };
    let touched = changed::touched(db, after, upto).await?;
    if touched.len() > changed::MOST_TOUCHED {
        return run_reach(db, trigger, actor, (None, upto), Reach::All).await;
    }
    run_reach(
        db,
        trigger,
        actor,
        (Some(after), upto),
        Reach::Touched(touched),
    )
    .await
}

/// The job's run: a full sweep when none finished within `full_every` (on any instance),
/// otherwise what changed since the last run. A zero `full_every` makes every run full.
pub async fn run_scheduled(db: &Db, actor: &Actor, full_every: Duration) -> DomainResult<Report> {
    let due = match changed::last_full(db).await? {
        None => true,
        Some(at) => db.now_ms() - at >= full_every.as_millis() as i64,
    };
    if due {
        run(db, "job", actor).await
    } else {
        run_changed(db, "job", actor).await
    }
}

async fn run_reach(
    db: &Db,
    trigger: &str,
    actor: &Actor,
    (after, upto): (Option<i64>, i64),
    reach: Reach,
) -> DomainResult<Report> {
    let started = db.now_ms();
    let redis = match &db.gate {
        None => "off",
        Some(g) if g.is_degraded() => "degraded",
        Some(_) => "on",
    };
    let scope = match reach {
        Reach::All => RunScope::Full,
        Reach::Touched(_) => RunScope::Changed,
    };
    let run_id: i64 = sqlx::query_scalar(
        "INSERT INTO reconcile_runs (trigger, actor, started_at, redis, scope, seq_after, seq_upto)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(trigger)
    .bind(&actor.label)
    .bind(started)
    .bind(redis)
    .bind(scope.as_str())
    .bind(after)
    .bind(upto)
    .fetch_one(&db.pool)
    .await?;
    let outcome = run_checks(db, run_id, actor, &reach).await;
    let (checked, broken, repaired, error) = match outcome {
        Ok((checked, broken, repaired)) => (checked, broken, repaired, None),
        Err(e) => (0, Vec::new(), Vec::new(), Some(e.to_string())),
    };
    sqlx::query(
        "UPDATE reconcile_runs SET finished_at = $1, checked = $2, broken = $3, drift_found = $4, drift_repaired = $5, error = $6 WHERE id = $7",
    )
    .bind(db.now_ms())
    .bind(checked)
    .bind(broken.len() as i64)
    .bind(repaired.len() as i64)
    .bind(repaired.len() as i64)
    .bind(error.as_deref())
    .bind(run_id)
    .execute(&db.pool)
    .await?;
    let run = run_by_id(db, run_id).await?;
    metrics::counter!("sellable_reconcile_runs_total", "scope" => scope.as_str()).increment(1);
    Ok(Report {
        run,
        broken,
        repaired,
    })
}

async fn run_checks(
    db: &Db,
    run_id: i64,
    actor: &Actor,
    reach: &Reach,
) -> DomainResult<(i64, Vec<Finding>, Vec<Finding>)> {
    // Twice, a moment apart: only what both passes see counts.
    let (checked, first) = sql_identities(db, reach).await?;
    let mut broken = Vec::new();
    if !first.is_empty() {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (_, second) = sql_identities(db, reach).await?;
        let second: HashSet<Broken> = second.into_iter().collect();
        for b in first.into_iter().filter(|b| second.contains(b)) {
            broken.push(record_broken(db, run_id, actor, &b).await?);
        }
    }
    let mut repaired = Vec::new();
    if gate::active(db).is_some() {
        repaired = redis_drift(db, run_id).await?;
    }
    repaired.extend(code_count_drift(db, run_id, reach).await?);
    repaired.extend(hold_drift(db, run_id, reach).await?);
    Ok((checked, broken, repaired))
}

/// Records a broken identity (once while it stays open) and freezes what it concerns.
async fn record_broken(db: &Db, run_id: i64, actor: &Actor, b: &Broken) -> DomainResult<Finding> {
    let open: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM reconcile_findings WHERE kind = $1 AND subject = $2 AND status = 'OPEN'",
    )
    .bind(b.kind.as_str())
    .bind(&b.subject)
    .fetch_optional(&db.pool)
    .await?;
    if let Some(id) = open {
        return finding(db, Scope::All, id).await;
    }
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO reconcile_findings (run_id, merchant_id, kind, subject, sku_id, warehouse_id, slot_id, expected, found, action, status, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'frozen', 'OPEN', $10) RETURNING id",
    )
    .bind(run_id)
    .bind(b.merchant_id)
    .bind(b.kind.as_str())
    .bind(&b.subject)
    .bind(b.sku_id)
    .bind(b.warehouse_id)
    .bind(b.slot_id)
    .bind(&b.expected)
    .bind(&b.found)
    .bind(db.now_ms())
    .fetch_one(&mut *tx)
    .await?;
    if let Some(slot) = b.slot_id {
        sqlx::query(
            "UPDATE slots SET frozen_finding_id = $1 WHERE id = $2 AND frozen_finding_id IS NULL",
        )
        .bind(id)
        .bind(slot)
        .execute(&mut *tx)
        .await?;
    } else if let Some(sku) = b.sku_id {
        sqlx::query(
            "UPDATE skus SET frozen_finding_id = $1 WHERE id = $2 AND frozen_finding_id IS NULL",
        )
        .bind(id)
        .bind(sku)
        .execute(&mut *tx)
        .await?;
    }
    finding_event(
        &mut tx,
        db.now_ms(),
        b.merchant_id,
        crate::domain::trail::events::EventType::ReconcileFrozen,
        id,
        b.sku_id,
        b.slot_id,
        serde_json::json!({"kind": b.kind.as_str(), "subject": b.subject, "expected": b.expected,
            "found": b.found, "before": {"frozen": false}, "after": {"frozen": true}}),
    )
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(b.merchant_id),
        "reconcile.freeze",
        &b.subject,
        &format!("{}: expected {}, found {}", b.kind, b.expected, b.found),
    )
    .await?;
    tx.commit().await?;
    tracing::error!(kind = b.kind.as_str(), subject = %b.subject, expected = %b.expected, found = %b.found, "reconciliation: identity broken, frozen");
    metrics::counter!("sellable_reconcile_broken_total", "kind" => b.kind.as_str()).increment(1);
    if let Some(slot) = b.slot_id {
        gate::forget_slots(db, b.merchant_id, &[slot]).await;
    }
    if let Some(sku) = b.sku_id {
        // This instance's cache forgets at once; others within its two seconds, and SQL refuses
        // a frozen SKU inside the reservation transaction anyway.
        crate::domain::catalog::forget_sku(db, b.merchant_id, sku).await?;
    }
    finding(db, Scope::All, id).await
}

/// A finding's event (an alert), about the slot or SKU it concerns, in the finding's transaction.
#[allow(clippy::too_many_arguments)]
async fn finding_event(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    now: i64,
    merchant: MerchantId,
    ty: crate::domain::trail::events::EventType,
    finding_id: i64,
    sku: Option<i64>,
    slot: Option<i64>,
    mut data: serde_json::Value,
) -> Result<(), sqlx::Error> {
    use crate::domain::trail::events::{self, Subject};
    data["finding"] = finding_id.into();
    match (slot, sku) {
        (Some(slot), _) => {
            events::record_in_slot(tx, now, merchant, ty, "slot", &slot.to_string(), slot, data)
                .await
        }
        (None, Some(sku)) => {
            events::record(
                tx,
                now,
                merchant,
                ty,
                Subject::new("sku", sku, Some(sku)),
                data,
            )
            .await
        }
        (None, None) => {
            events::record(
                tx,
                now,
                merchant,
                ty,
                Subject::new("finding", finding_id, None),
                data,
            )
            .await
        }
    }
}

// ---- reading -------------------------------------------------------------------------------

const FINDING_SELECT: &str = "SELECT id, run_id, merchant_id, kind, subject, sku_id, warehouse_id, slot_id, expected, found, action, status, created_at, resolved_at, resolved_by, resolution FROM reconcile_findings";

pub async fn finding(db: &Db, scope: Scope, id: i64) -> DomainResult<Finding> {
    let tenant = scope.filter("merchant_id", 2);
    sqlx::query_as(&format!("{FINDING_SELECT} WHERE id = $1 AND {tenant}"))
        .bind(id)
        .bind(scope.bind())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("finding"))
}

/// Findings in scope: open ones first, newest first. `status` is OPEN, RESOLVED or empty for all.
pub async fn findings(
    db: &Db,
    scope: Scope,
    status: &str,
    page: i64,
) -> DomainResult<Vec<Finding>> {
    let tenant = scope.filter("merchant_id", 1);
    Ok(sqlx::query_as(&format!(
        "{FINDING_SELECT} WHERE {tenant} AND ($2 = '' OR status = $2)
         ORDER BY CASE WHEN status = 'OPEN' THEN 0 ELSE 1 END, id DESC LIMIT $3 OFFSET $4"
    ))
    .bind(scope.bind())
    .bind(status)
    .bind(PAGE_SIZE + 1)
    .bind(page.max(0) * PAGE_SIZE)
    .fetch_all(&db.pool)
    .await?)
}

/// How many broken identities wait for an operator.
pub async fn open_count(db: &Db, scope: Scope) -> DomainResult<i64> {
    let tenant = scope.filter("merchant_id", 1);
    Ok(sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM reconcile_findings WHERE status = 'OPEN' AND {tenant}"
    ))
    .bind(scope.bind())
    .fetch_one(&db.pool)
    .await?)
}

pub async fn run_by_id(db: &Db, id: i64) -> DomainResult<Run> {
    sqlx::query_as("SELECT id, trigger, actor, started_at, finished_at, checked, broken, drift_found, drift_repaired, redis, error, scope, seq_after, seq_upto FROM reconcile_runs WHERE id = $1")
        .bind(id)
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("run"))
}

pub async fn runs(db: &Db, page: i64) -> DomainResult<Vec<Run>> {
    Ok(sqlx::query_as("SELECT id, trigger, actor, started_at, finished_at, checked, broken, drift_found, drift_repaired, redis, error, scope, seq_after, seq_upto FROM reconcile_runs ORDER BY id DESC LIMIT $1 OFFSET $2")
        .bind(PAGE_SIZE + 1)
        .bind(page.max(0) * PAGE_SIZE)
        .fetch_all(&db.pool)
        .await?)
}

// ---- an operator's corrections -------------------------------------------------------------
