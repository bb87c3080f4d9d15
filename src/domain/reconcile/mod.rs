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
    fn only(&self, col: &str, pick: fn(&changed::Touched) -> &[i64]) -> String {
        let ids = match self {
            Reach::All => None,
            Reach::Touched(t) => Some(pick(t)),
        };
        crate::infra::db::and_id_in(col, ids)
    }
    fn skus(&self) -> Option<&[i64]> {
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
    kind: FindingKind,
    merchant_id: MerchantId,
    subject: String,
    sku_id: Option<i64>,
    warehouse_id: Option<i64>,
    slot_id: Option<i64>,
    expected: String,
    found: String,
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

/// An order that booked places, and its bookings.
#[derive(sqlx::FromRow)]
struct OrderPlaces {
    merchant_id: MerchantId,
    order_id: String,
    status: String,
    places: i64,
    /// Bookings not cancelled.
    active: i64,
    /// Bookings ever made.
    ever: i64,
    slot: Option<i64>,
    sku: Option<i64>,
}

/// Every SQL identity within reach, each checked by one statement.
async fn sql_identities(db: &Db, reach: &Reach) -> DomainResult<(i64, Vec<Broken>)> {
    let mut out = Vec::new();
    let mut checked = 0i64;
    // A list of ids makes each statement's text new: not worth a prepared statement.
    let persistent = matches!(reach, Reach::All);

    // Stock: locked = what RESERVED order lines hold (lines deducted on payment or of unlimited
    // SKUs lock nothing).
    let rows: Vec<(MerchantId, i64, i64, i64, i64)> = sqlx::query_as(&format!(
        "SELECT b.merchant_id, b.sku_id, b.warehouse_id, b.locked,
            CAST(COALESCE((SELECT SUM(r.qty) FROM stock_reservations r
                WHERE r.sku_id = b.sku_id AND r.warehouse_id = b.warehouse_id AND r.status = 'RESERVED'
                    AND r.hold = 'locked'), 0) AS BIGINT)
         FROM stock_balances b WHERE 1 = 1{}",
        reach.only("b.sku_id", skus_of)
    ))
    .persistent(persistent)
    .fetch_all(&db.pool)
    .await?;
    checked += rows.len() as i64;
    for (m, sku, wh, locked, held) in rows {
        if locked != held {
            out.push(Broken {
                kind: FindingKind::LockedMismatch,
                merchant_id: m,
                subject: format!("sku:{sku} warehouse:{wh}"),
                sku_id: Some(sku),
                warehouse_id: Some(wh),
                slot_id: None,
                expected: format!("locked {held}"),
                found: format!("locked {locked}"),
            });
        }
    }

    // Stock: the ledger replays to the balance.
    for m in crate::domain::stock::ledger::replay_mismatches_in(
        db,
        crate::domain::Scope::All,
        reach.skus(),
    )
    .await?
    {
        let merchant: MerchantId = sqlx::query_scalar("SELECT merchant_id FROM skus WHERE id = $1")
            .bind(m.sku_id)
            .fetch_one(&db.pool)
            .await?;
        out.push(Broken {
            kind: FindingKind::LedgerMismatch,
            merchant_id: merchant,
            subject: format!("sku:{} warehouse:{}", m.sku_id, m.warehouse_id),
            sku_id: Some(m.sku_id),
            warehouse_id: Some(m.warehouse_id),
            slot_id: None,
            expected: buckets_text(&m.ledger),
            found: buckets_text(&m.balance),
        });
    }

    // Slots: booked = active bookings, and never above capacity.
    let rows: Vec<(MerchantId, i64, i64, i64, i64, i64)> = sqlx::query_as(&format!(
        "SELECT s.merchant_id, s.sku_id, s.id, s.booked, s.capacity,
            (SELECT CAST(COALESCE(SUM(b.places), 0) AS BIGINT) FROM bookings b WHERE b.slot_id = s.id AND b.status <> 'CANCELLED')
         FROM slots s WHERE 1 = 1{}",
        reach.only("s.id", slots_of)
    ))
    .persistent(persistent)
    .fetch_all(&db.pool)
    .await?;
    checked += rows.len() as i64;
    for (m, sku, slot, booked, capacity, active) in rows {
        if booked != active {
            out.push(Broken {
                kind: FindingKind::BookedMismatch,
                merchant_id: m,
                subject: format!("slot:{slot}"),
                sku_id: Some(sku),
                warehouse_id: None,
                slot_id: Some(slot),
                expected: format!("booked {active}"),
                found: format!("booked {booked}"),
            });
        }
        if booked > capacity {
            out.push(Broken {
                kind: FindingKind::Overbooked,
                merchant_id: m,
                subject: format!("slot:{slot}"),
                sku_id: Some(sku),
                warehouse_id: None,
                slot_id: Some(slot),
                expected: format!("booked ≤ {capacity}"),
                found: format!("booked {booked}"),
            });
        }
    }

    // Codes: BOOKING has a live reservation; SOLD has a confirmed order.
    let rows: Vec<(MerchantId, i64, i64, String)> = sqlx::query_as(&format!(
        "SELECT c.merchant_id, c.sku_id, c.id, c.status FROM codes c LEFT JOIN reservations r ON r.id = c.reservation_id
         WHERE ((c.status = 'BOOKING' AND (r.id IS NULL OR r.status <> 'RESERVED'))
            OR (c.status = 'SOLD' AND (c.order_id IS NULL OR r.id IS NULL OR r.status <> 'CONFIRMED' OR r.order_id <> c.order_id))){}",
        reach.only("c.sku_id", skus_of)
    ))
    .persistent(persistent)
    .fetch_all(&db.pool)
    .await?;
    for (m, sku, code, status) in rows {
        let kind = if status == "BOOKING" {
            FindingKind::CodeOrphanBooking
        } else {
            FindingKind::CodeSoldWithoutOrder
        };
        out.push(Broken {
            kind,
            merchant_id: m,
            subject: format!("sku:{sku} code:{code}"),
            sku_id: Some(sku),
            warehouse_id: None,
            slot_id: None,
            expected: if status == "BOOKING" {
                "a RESERVED order".into()
            } else {
                "a CONFIRMED order".into()
            },
            found: status,
        });
    }

    // Codes: every order line holds exactly its quantity of codes (no code in two orders, none
    // missing). After sale a code may be redeemed or voided, and each reissue adds one code to
    // the line: the line's codes number its quantity plus its reissues.
    let rows: Vec<(MerchantId, i64, i64, i64, i64)> = sqlx::query_as(&format!(
        "SELECT l.merchant_id, l.sku_id, l.reservation_id, l.qty + l.reissued,
            (SELECT COUNT(*) FROM codes c WHERE c.reservation_id = l.reservation_id AND c.sku_id = l.sku_id
                AND c.status IN ('BOOKING', 'SOLD', 'REDEEMED', 'VOIDED'))
         FROM code_reservations l WHERE l.status IN ('RESERVED', 'CONFIRMED'){}",
        reach.only("l.sku_id", skus_of)
    ))
    .persistent(persistent)
    .fetch_all(&db.pool)
    .await?;
    checked += rows.len() as i64;
    for (m, sku, reservation, qty, held) in rows {
        if qty != held {
            out.push(Broken {
                kind: FindingKind::CodeLineMismatch,
                merchant_id: m,
                subject: format!("sku:{sku} reservation:{reservation}"),
                sku_id: Some(sku),
                warehouse_id: None,
                slot_id: None,
                expected: format!("{qty} codes"),
                found: format!("{held} codes"),
            });
        }
    }
    // Orders with places: no active booking belongs to a released or expired order, and a held
    // order has every place it booked (a paid one booked each at least once: staff may cancel a
    // paid order's booking later, as any other).
    let rows: Vec<OrderPlaces> =
        sqlx::query_as(&format!(
            "SELECT r.merchant_id, r.order_id, r.status, r.places,
                (SELECT COUNT(*) FROM bookings b WHERE b.reservation_id = r.id AND b.status <> 'CANCELLED') AS active,
                (SELECT COUNT(*) FROM bookings b WHERE b.reservation_id = r.id) AS ever,
                (SELECT MIN(b.slot_id) FROM bookings b WHERE b.reservation_id = r.id) AS slot,
                (SELECT MIN(s.sku_id) FROM bookings b JOIN slots s ON s.id = b.slot_id WHERE b.reservation_id = r.id) AS sku
             FROM reservations r
             WHERE (r.places > 0 OR EXISTS (SELECT 1 FROM bookings b WHERE b.reservation_id = r.id)){}",
            reach.only("r.id", reservations_of)
        ))
        .persistent(persistent)
        .fetch_all(&db.pool)
        .await?;
    checked += rows.len() as i64;
    for OrderPlaces {
        merchant_id: m,
        order_id: order,
        status,
        places,
        active,
        ever,
        slot,
        sku,
    } in rows
    {
        let (expected, broken) = match status.as_str() {
            "RELEASED" | "EXPIRED" => (0, active != 0),
            "RESERVED" => (places, active != places),
            _ => (places, ever < places),
        };
        if broken {
            out.push(Broken {
                kind: FindingKind::OrderBookingMismatch,
                merchant_id: m,
                subject: format!("order:{order}"),
                sku_id: sku,
                warehouse_id: None,
                slot_id: slot,
                expected: format!("{expected} active bookings ({status})"),
                found: format!("{active} active bookings"),
            });
        }
    }
    Ok((checked, out))
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

/// Compares every loaded Redis key with SQL; repairs what still differs on a second look.
async fn redis_drift(db: &Db, run_id: i64) -> DomainResult<Vec<Finding>> {
    let Some(g) = gate::active(db) else {
        return Ok(Vec::new());
    };
    let Ok(subjects) = g.loaded_subjects().await else {
        return Ok(Vec::new());
    };
    let mut repaired = Vec::new();
    // Every loaded key, in a changed-only run too: Redis can drift with no SQL change behind it
    // (an instance killed between its Redis hold and its commit leaves a hold no event names).
    // The cost follows the keys loaded (recently active SKUs and slots), not the history.
    for s in subjects {
        let Some(g) = gate::active(db) else { break };
        match s {
            Subject::Stock(sku) => {
                let Some(first) = stock_drift(db, sku).await? else {
                    continue;
                };
                tokio::time::sleep(Duration::from_millis(150)).await;
                let Some(second) = stock_drift(db, sku).await? else {
                    continue;
                };
                for (wh, d) in second {
                    if first.get(&wh) != Some(&d) {
                        continue;
                    }
                    // Warehouse 0: the warehouse list itself differs.
                    let shifted = if wh == 0 {
                        Ok(false)
                    } else {
                        g.stock_fix(sku, wh, d).await
                    };
                    match shifted {
                        // The list differs, or a warehouse's counter is gone (evicted: shifting
                        // a missing key moves nothing): load the SKU afresh.
                        Ok(false) => g.forget(s).await,
                        Ok(true) => {}
                        Err(_) => continue,
                    }
                    let merchant = merchant_of_sku(db, sku).await?;
                    repaired.push(
                        record_drift(
                            db,
                            run_id,
                            merchant,
                            &format!("sku:{sku} warehouse:{wh}"),
                            Some(sku),
                            &format!(
                                "available/locked/sold shifted by {}/{}/{}",
                                d.available, d.locked, d.sold
                            ),
                        )
                        .await?,
                    );
                }
            }
            Subject::Slot { merchant, slot } => {
                let Some(first) = slot_drift(db, MerchantId(merchant), slot).await? else {
                    continue;
                };
                tokio::time::sleep(Duration::from_millis(150)).await;
                let Some(second) = slot_drift(db, MerchantId(merchant), slot).await? else {
                    continue;
                };
                if first != second {
                    continue;
                }
                let (delta, status, reason) = second;
                if g.slot_fix(merchant, slot, delta, &status, &reason)
                    .await
                    .is_err()
                {
                    continue;
                }
                repaired.push(
                    record_drift(
                        db,
                        run_id,
                        MerchantId(merchant),
                        &format!("slot:{slot}"),
                        None,
                        &format!("remaining shifted by {delta}, status {status}"),
                    )
                    .await?,
                );
            }
            Subject::Codes(sku) => {
                let Some((stale1, missing1)) = code_drift(db, sku).await? else {
                    continue;
                };
                tokio::time::sleep(Duration::from_millis(150)).await;
                let Some((stale2, missing2)) = code_drift(db, sku).await? else {
                    continue;
                };
                let stale: Vec<i64> = stale2.into_iter().filter(|i| stale1.contains(i)).collect();
                let missing: Vec<i64> = missing2
                    .into_iter()
                    .filter(|i| missing1.contains(i))
                    .collect();
                if stale.is_empty() && missing.is_empty() {
                    continue;
                }
                // A pool not loaded (or lost) was left for its next load: nothing was repaired.
                if !matches!(g.code_pool_fix(sku, &stale, &missing).await, Ok(true)) {
                    continue;
                }
                let merchant = merchant_of_sku(db, sku).await?;
                repaired.push(
                    record_drift(
                        db,
                        run_id,
                        merchant,
                        &format!("sku:{sku} code pool"),
                        Some(sku),
                        &format!(
                            "{} stale ids removed, {} missing ids added",
                            stale.len(),
                            missing.len()
                        ),
                    )
                    .await?,
                );
            }
        }
    }
    Ok(repaired)
}

async fn merchant_of_sku(db: &Db, sku: i64) -> DomainResult<MerchantId> {
    Ok(
        sqlx::query_scalar("SELECT merchant_id FROM skus WHERE id = $1")
            .bind(sku)
            .fetch_one(&db.pool)
            .await?,
    )
}

/// Per warehouse, SQL minus Redis (only where they differ). Warehouse 0 stands for "the
/// warehouse list differs". None when the SKU is not loaded.
async fn stock_drift(db: &Db, sku: i64) -> DomainResult<Option<BTreeMap<i64, StockCounts>>> {
    let Some(g) = gate::active(db) else {
        return Ok(None);
    };
    let Ok(Some(redis)) = g.stock_counts(sku).await else {
        return Ok(None);
    };
    let sql = gate::stock_rows(db, sku).await?;
    let mut out = BTreeMap::new();
    let redis_whs: Vec<i64> = redis.iter().map(|(w, _)| *w).collect();
    let sql_whs: Vec<i64> = sql.iter().map(|(w, _)| *w).collect();
    if redis_whs != sql_whs {
        out.insert(0, StockCounts::default());
        return Ok(Some(out));
    }
    for ((w, r), (_, s)) in redis.iter().zip(sql.iter()) {
        let d = StockCounts {
            available: s.available - r.available,
            locked: s.locked - r.locked,
            sold: s.sold - r.sold,
        };
        if d != StockCounts::default() {
            out.insert(*w, d);
        }
    }
    Ok(Some(out))
}

/// (remaining delta, SQL status, reason) when Redis and SQL differ for a slot.
async fn slot_drift(
    db: &Db,
    merchant: MerchantId,
    slot: i64,
) -> DomainResult<Option<(i64, String, String)>> {
    let Some(g) = gate::active(db) else {
        return Ok(None);
    };
    let Ok(Some((r, st))) = g.slot_read(merchant.0, slot).await else {
        return Ok(None);
    };
    let Some(row) = gate::slot_row(db, merchant, slot).await? else {
        return Ok(None);
    };
    let (status, remaining) = (row.gate_status(), row.remaining());
    if remaining == r && status == st {
        return Ok(None);
    }
    Ok(Some((
        remaining - r,
        status,
        row.closed_reason.unwrap_or_default(),
    )))
}

/// (ids in the pool SQL cannot sell, sellable ids missing from a pool that claims to hold them all).
async fn code_drift(db: &Db, sku: i64) -> DomainResult<Option<(Vec<i64>, Vec<i64>)>> {
    let Some(g) = gate::active(db) else {
        return Ok(None);
    };
    let Ok(Some((pool, more))) = g.code_pool(sku).await else {
        return Ok(None);
    };
    let cursor = g.code_cursor(sku).await.ok().flatten().unwrap_or(0);
    let sellable: Vec<i64> = sqlx::query_scalar(&format!(
        "SELECT id FROM codes WHERE sku_id = $1 AND {} AND id <= $3 ORDER BY id LIMIT 200000",
        crate::domain::codes::SELLABLE
    ))
    .bind(sku)
    .bind(db.now_ms())
    .bind(if more { cursor } else { i64::MAX })
    .fetch_all(&db.pool)
    .await?;
    let sellable_set: HashSet<i64> = sellable.iter().copied().collect();
    let pool_set: HashSet<i64> = pool.iter().copied().collect();
    let stale: Vec<i64> = pool
        .into_iter()
        .filter(|i| !sellable_set.contains(i))
        .collect();
    let missing: Vec<i64> = sellable
        .into_iter()
        .filter(|i| !pool_set.contains(i))
        .collect();
    Ok(Some((stale, missing)))
}

/// Recounts the codes of every batch by status against the kept counts (`code_counts`), and
/// repairs what differs. The recount is one statement, so a sale committing meanwhile is in both
/// sides or in neither: a difference is real, not a race.
async fn code_count_drift(db: &Db, run_id: i64, reach: &Reach) -> DomainResult<Vec<Finding>> {
    let mut repaired = Vec::new();
    for d in crate::domain::codes::counts::repair_drift(db, reach.skus()).await? {
        let subject = format!("batch:{} status:{}", d.batch_id, d.status);
        let what = format!("kept {}, codes {}", d.kept, d.actual);
        repaired.push(
            record_repair(
                db,
                run_id,
                FindingKind::CodeCountDrift,
                d.merchant_id,
                &subject,
                Some(d.sku_id),
                "kept = codes",
                &what,
            )
            .await?,
        );
    }
    Ok(repaired)
}

/// Holds that do not add up to their frozen units, made to (frozen is the authority: it is
/// what sales subtract). Each pair is checked again inside the transaction that repairs it,
/// after its balance row is locked, so a hold placed meanwhile is no drift.
async fn hold_drift(db: &Db, run_id: i64, reach: &Reach) -> DomainResult<Vec<Finding>> {
    let mut repaired = Vec::new();
    for (sku, wh, _, _) in
        crate::domain::stock::holds::mismatches_in(db, Scope::All, reach.skus()).await?
    {
        let merchant = merchant_of_sku(db, sku).await?;
        let mut tx = db.begin_write().await?;
        crate::domain::stock::lock_balance(&mut tx, sku, wh).await?;
        let settled = crate::domain::stock::holds::settle(
            &mut tx,
            db.now_ms(),
            (merchant, sku, wh),
            "system:reconcile",
        )
        .await?;
        tx.commit().await?;
        if let Some((held, frozen)) = settled {
            tracing::warn!(
                sku,
                warehouse = wh,
                held,
                frozen,
                "reconciliation: holds did not add up to frozen units, repaired"
            );
            repaired.push(
                record_repair(
                    db,
                    run_id,
                    FindingKind::HoldDrift,
                    merchant,
                    &format!("sku:{sku} warehouse:{wh}"),
                    Some(sku),
                    &format!("held {frozen}"),
                    &format!("held {held}"),
                )
                .await?,
            );
        }
    }
    Ok(repaired)
}

async fn record_drift(
    db: &Db,
    run_id: i64,
    merchant: MerchantId,
    subject: &str,
    sku: Option<i64>,
    what: &str,
) -> DomainResult<Finding> {
    let f = record_repair(
        db,
        run_id,
        FindingKind::RedisDrift,
        merchant,
        subject,
        sku,
        "Redis = SQL",
        what,
    )
    .await?;
    tracing::warn!(subject, what, "reconciliation: Redis drift repaired");
    metrics::counter!("sellable_reconcile_drift_total", "result" => "found").increment(1);
    metrics::counter!("sellable_reconcile_drift_total", "result" => "repaired").increment(1);
    Ok(f)
}

/// A drift found and repaired: a finding resolved at once, and its alert.
#[allow(clippy::too_many_arguments)]
async fn record_repair(
    db: &Db,
    run_id: i64,
    kind: FindingKind,
    merchant: MerchantId,
    subject: &str,
    sku: Option<i64>,
    expected: &str,
    what: &str,
) -> DomainResult<Finding> {
    let now = db.now_ms();
    let slot: Option<i64> = subject.strip_prefix("slot:").and_then(|s| s.parse().ok());
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO reconcile_findings (run_id, merchant_id, kind, subject, sku_id, slot_id, expected, found, action, status, created_at, resolved_at, resolved_by, resolution)
         VALUES ($1, $2, $3, $4, $5, $9, $10, $6, 'repaired', 'RESOLVED', $7, $7, 'reconciliation', $8) RETURNING id",
    )
    .bind(run_id)
    .bind(merchant)
    .bind(kind.as_str())
    .bind(subject)
    .bind(sku)
    .bind(what)
    .bind(now)
    .bind(match kind {
        FindingKind::CodeCountDrift => messages::count_repaired(),
        FindingKind::HoldDrift => messages::holds_repaired(),
        _ => messages::drift_repaired(),
    })
    .bind(slot)
    .bind(expected)
    .fetch_one(&mut *tx)
    .await?;
    finding_event(
        &mut tx,
        db.now_ms(),
        merchant,
        match kind {
            FindingKind::CodeCountDrift => {
                crate::domain::trail::events::EventType::ReconcileCountDrift
            }
            FindingKind::HoldDrift => crate::domain::trail::events::EventType::ReconcileHoldDrift,
            _ => crate::domain::trail::events::EventType::ReconcileRedisDrift,
        },
        id,
        sku,
        slot,
        serde_json::json!({"kind": kind.as_str(), "subject": subject,
            "found": what, "action": "repaired"}),
    )
    .await?;
    tx.commit().await?;
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

fn not_correctable(f: &Finding) -> DomainError {
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

async fn refreeze_remaining(db: &Db, f: &Finding) -> DomainResult<()> {
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
