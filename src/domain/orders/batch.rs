//! Single-line goods orders of one SKU, held in one transaction (see `domain::kernel::groups`).
//!
//! The group writes its headers, audit rows, events and lines in multi-row INSERTs before it
//! touches the balance, then one conditional UPDATE for the sum of its lines, their ledger rows
//! and change events, one COMMIT. An order already known is left out (held alone, its repeat is
//! answered there). When nothing is left anywhere, every order hears so at once, as each would
//! alone; when the sum does not fit while some units remain, those that fit what the warehouse
//! has, in arrival order, are held together once more, and the others hear together that nothing
//! is left when nothing is, else are held alone (`fit_first`); when the SKU is frozen or an order
//! is repeated within the group, every order is held alone by `hold_in_sql`.

use std::collections::{HashMap, HashSet};

use super::reserve::{Hold, LinePlan, ResolvedItem};
use super::LineHold;
use crate::domain::kernel::groups::{Answers, Groups};
use crate::domain::stock;
use crate::domain::trail::audit;
use crate::domain::trail::events::{self, EventType};
use crate::domain::{Actor, MerchantId};
use crate::infra::db::{json_rows, Db};
use serde_json::{json, Value};

/// The balance row a group updates: the SKU, and its warehouse when the gate or the order named
/// one (otherwise the group picks it, as each order alone would).
#[derive(Clone, Copy, Hash, PartialEq, Eq, Debug)]
pub struct HoldKey {
    merchant_id: MerchantId,
    sku_id: i64,
    warehouse: Option<i64>,
}

/// One order of a group: what its transaction writes.
pub struct HoldLine {
    actor: Actor,
    order: String,
    fp: String,
    customer: Option<String>,
    code: String,
    qty: i64,
    now: i64,
    expires_at: i64,
}

/// What a group made of an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grouped {
    /// Held, committed, in this warehouse (id and slug).
    Held(i64, String),
    /// Refused: no warehouse has a unit left (nothing of the order was written).
    SoldOut,
}

impl crate::domain::kernel::groups::Outcome for Grouped {
    fn made(&self) -> bool {
        matches!(self, Grouped::Held(..))
    }
}

/// The groups of holds, by balance row.
pub type HoldGroups = Groups<HoldKey, HoldLine, Grouped>;

/// This instance's groups of holds, kept beside the pool (`infra::ext`).
struct Held(std::sync::Arc<HoldGroups>);

impl Default for Held {
    fn default() -> Held {
        Held(std::sync::Arc::new(Groups::new("stock")))
    }
}

/// This instance's groups of holds.
pub fn hold_groups(db: &Db) -> std::sync::Arc<HoldGroups> {
    db.ext.get::<Held>().0.clone()
}

/// Whether an order's hold may go to its SKU's group: one line of goods that locks its units, no
/// places, and no per-customer limit (that check reads the customer's other orders under their
/// lock). Such an order skips the cheap answers before the transaction: the group gives them.
pub(super) fn groupable(db: &Db, resolved: &[ResolvedItem], places: usize) -> bool {
    match resolved {
        [item] => {
            hold_groups(db).on()
                && places == 0
                && !item.is_code
                && item.hold == LineHold::Locked
                && item.max_per_customer.is_none()
        }
        _ => false,
    }
}

/// Holds a `groupable` order with the others of its SKU that arrive meanwhile. None: the group
/// did not answer for it: hold it alone.
pub(super) async fn hold(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    hold: &Hold<'_>,
) -> Option<Grouped> {
    let [item] = hold.resolved else { return None };
    let planned = match hold.plan.and_then(|p| p.first()) {
        Some(LinePlan::Stock { warehouse }) => Some(*warehouse),
        _ => None,
    };
    let key = HoldKey {
        merchant_id,
        sku_id: item.sku_id,
        warehouse: planned.or(item.warehouse_id),
    };
    let line = HoldLine {
        actor: actor.clone(),
        order: hold.order.to_string(),
        fp: hold.fp.to_string(),
        customer: hold.customer.map(str::to_string),
        code: item.code.clone(),
        qty: item.qty,
        now: hold.now,
        expires_at: hold.expires_at,
    };
    hold_groups(db).join(db, run, key, line).await
}

fn run(db: Db, key: HoldKey, lines: Vec<HoldLine>) -> Answers<Grouped> {
    Box::pin(async move {
        transaction(&db, key, &lines).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, orders = lines.len(), "a group of holds rolled back; each is held alone");
            Vec::new()
        })
    })
}

/// The group's transaction: each order's answer, or None for one to hold alone (every one, when
/// the answer is short).
async fn transaction(
    db: &Db,
    key: HoldKey,
    lines: &[HoldLine],
) -> Result<Vec<Option<Grouped>>, sqlx::Error> {
    // A retry of an order that is also in the group is held alone, after the group.
    let mut seen = HashSet::new();
    if !lines.iter().all(|l| seen.insert(l.order.as_str())) {
        return Ok(Vec::new());
    }
    // Read before any write lock is taken (the cheap answers an order alone reads first): the
    // freeze, and the warehouse each order would have got alone: the named one, or the
    // highest-priority one that covers the smallest line whole. Higher-priority ones cover none
    // of the lines (not even the smallest), so alone every line would have gone here too, if it
    // covers the sum. The transaction's conditional UPDATE then decides.
    let (frozen, warehouse, slug): (Option<i64>, Option<i64>, Option<String>) = sqlx::query_as(
        "SELECT k.frozen_finding_id, c.warehouse_id, c.slug FROM skus k LEFT JOIN (
            SELECT b.sku_id, b.warehouse_id, w.slug FROM stock_balances b JOIN warehouses w ON w.id = b.warehouse_id
            WHERE b.sku_id = $1 AND ($2 IS NULL OR b.warehouse_id = $2)
              AND ($2 IS NOT NULL OR b.total - b.locked - b.sold - b.frozen >= $3)
            ORDER BY w.priority DESC, w.id LIMIT 1) c ON c.sku_id = k.id
         WHERE k.id = $1",
    )
    .bind(key.sku_id)
    .bind(key.warehouse)
    .bind(lines.iter().map(|l| l.qty).min().unwrap_or(1))
    .fetch_one(&db.pool)
    .await?;
    if frozen.is_some() {
        // Alone, each order hears which finding froze it.
        return Ok(Vec::new());
    }
    let all: Vec<&HoldLine> = lines.iter().collect();
    let (Some(warehouse), Some(slug)) = (warehouse, slug) else {
        return nothing_fits(db, key, &all).await;
    };
    match write(db, key, &all, (warehouse, &slug)).await? {
        Tried::Answered(answers) => Ok(answers),
        Tried::Short { written } => fit_first(db, key, &all, &written, (warehouse, &slug)).await,
    }
}

/// How a group's transaction ended.
enum Tried {
    /// Each order's answer (None: hold it alone).
    Answered(Vec<Option<Grouped>>),
    /// The warehouse could not take the group's sum while some units remain: nothing was
    /// written. The orders it would have held (the others are known already), by index.
    Short { written: Vec<usize> },
}

async fn write(
    db: &Db,
    key: HoldKey,
    lines: &[&HoldLine],
    (warehouse, slug): (i64, &str),
) -> Result<Tried, sqlx::Error> {
    match db.dialect {
        crate::infra::db::Dialect::Postgres => {
            transaction_pg(db, key, lines, (warehouse, slug)).await
        }
        crate::infra::db::Dialect::Sqlite => {
            transaction_sqlite(db, key, lines, (warehouse, slug)).await
        }
    }
}

/// After a group's sum did not fit its warehouse: what the warehouse has now decides. Alone, in
/// arrival order, each order this warehouse covers would be held here and each it does not would
/// go on to a later warehouse or be refused; so those that fit are held together once more. The
/// others then hear together that nothing is left, when nothing is (the sell-out moment, where a
/// transaction each would queue them on the row); otherwise they are held alone. When the second
/// try does not fit either (another instance took units meanwhile), every order is held alone.
async fn fit_first(
    db: &Db,
    key: HoldKey,
    lines: &[&HoldLine],
    written: &[usize],
    (warehouse, slug): (i64, &str),
) -> Result<Vec<Option<Grouped>>, sqlx::Error> {
    let now: Option<(i64, Option<i64>)> = sqlx::query_as(
        "SELECT b.total - b.locked - b.sold - b.frozen, k.frozen_finding_id
         FROM stock_balances b JOIN skus k ON k.id = b.sku_id
         WHERE b.sku_id = $1 AND b.warehouse_id = $2",
    )
    .bind(key.sku_id)
    .bind(warehouse)
    .fetch_optional(&db.pool)
    .await?;
    // Frozen since the group read it: alone, each order hears which finding froze it.
    let Some((mut left, None)) = now else {
        return Ok(Vec::new());
    };
    let mut taken = Vec::new();
    for &i in written {
        if lines[i].qty <= left {
            left -= lines[i].qty;
            taken.push(i);
        }
    }
    // None fits (each alone then finds what it would), or all fit now (units came back): the
    // orders go alone rather than loop.
    if taken.is_empty() || taken.len() == written.len() {
        return Ok(Vec::new());
    }
    let subset: Vec<&HoldLine> = taken.iter().map(|&i| lines[i]).collect();
    let Tried::Answered(made) = write(db, key, &subset, (warehouse, slug)).await? else {
        return Ok(Vec::new());
    };
    let mut answers: Vec<Option<Grouped>> = vec![None; lines.len()];
    for (&i, a) in taken.iter().zip(made) {
        answers[i] = a;
    }
    let others: Vec<usize> = written
        .iter()
        .copied()
        .filter(|i| !taken.contains(i))
        .collect();
    if others.is_empty() {
        return Ok(answers);
    }
    let those: Vec<&HoldLine> = others.iter().map(|&i| lines[i]).collect();
    for (&i, a) in others.iter().zip(nothing_fits(db, key, &those).await?) {
        answers[i] = a;
    }
    Ok(answers)
}

/// No warehouse can take even the group's smallest order. Orders already known are left to be
/// answered alone (their repeat); the others hear now what is left, when nothing is; otherwise
/// each is held alone, as it would have been.
async fn nothing_fits(
    db: &Db,
    key: HoldKey,
    lines: &[&HoldLine],
) -> Result<Vec<Option<Grouped>>, sqlx::Error> {
    // What is left first: an order that commits after it is then found known.
    let left: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(total - locked - sold - frozen) FROM stock_balances WHERE sku_id = $1",
    )
    .bind(key.sku_id)
    .fetch_one(&db.pool)
    .await?;
    if left.unwrap_or(0) > 0 {
        return Ok(Vec::new());
    }
    let orders: Vec<&str> = lines.iter().map(|l| l.order.as_str()).collect();
    let known: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT order_id FROM reservations WHERE merchant_id = $1 AND order_id IN (SELECT x.order_id FROM {})",
        json_rows(db.dialect, 2, &[("order_id", "text")])
    ))
    .bind(key.merchant_id)
    .bind(Value::Array(orders.iter().map(|o| json!({ "order_id": o })).collect()).to_string())
    .fetch_all(&db.pool)
    .await?;
    Ok(lines
        .iter()
        .map(|l| (!known.contains(&l.order)).then_some(Grouped::SoldOut))
        .collect())
}

/// The group's transaction on SQLite, a statement per table (there are no concurrent writers to
/// wait there, and no data-modifying WITH).
async fn transaction_sqlite(
    db: &Db,
    key: HoldKey,
    lines: &[&HoldLine],
    (warehouse, slug): (i64, &str),
) -> Result<Tried, sqlx::Error> {
    let rows = |cols: &[(&str, &str)]| json_rows(db.dialect, 2, cols);
    let mut tx = db.begin_write().await?;
    // Everything that does not depend on the balance goes first, as alone: the UPDATE below locks
    // the row until COMMIT, and every statement after it is time the next group waits. Each
    // statement writes every order's row from one JSON array.
    let headers: Vec<Value> = lines
        .iter()
        .map(|l| {
            json!({"order_id": l.order, "fp": l.fp, "expires_at": l.expires_at, "at": l.now,
            "customer": l.customer})
        })
        .collect();
    let ids: HashMap<String, i64> = sqlx::query_as::<_, (i64, String)>(&format!(
        "INSERT INTO reservations (merchant_id, order_id, status, fingerprint, expires_at, created_at, updated_at,
            places, customer_id)
         SELECT $1, x.order_id, 'RESERVED', x.fp, x.expires_at, x.at, x.at, 0, x.customer FROM {} WHERE true
         ON CONFLICT (merchant_id, order_id) DO NOTHING RETURNING id, order_id",
        rows(&[("order_id", "text"), ("fp", "text"), ("expires_at", "bigint"), ("at", "bigint"),
            ("customer", "text")])
    ))
    .bind(key.merchant_id)
    .bind(Value::Array(headers).to_string())
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|(id, order)| (order, id))
    .collect();
    // Orders already known are left out: alone, their repeat is answered from what they hold.
    let all = lines;
    let wrote = Wrote::of(all, |order| ids.contains_key(order));
    let lines = wrote.lines(all);
    if lines.is_empty() {
        return Ok(Tried::Answered(Vec::new()));
    }

    write_lines_sqlite(&mut tx, db, key, &lines, (&ids, warehouse)).await?;

    // The authority: the group's sum, or nothing.
    let sum: i64 = lines.iter().map(|l| l.qty).sum();
    let now = db.now_ms();
    let after: Option<crate::domain::stock::Buckets> =
        sqlx::query_as(&stock::sql::lock_units("$1", "$2", ("$3", "$4")))
            .bind(sum)
            .bind(now)
            .bind(key.sku_id)
            .bind(warehouse)
            .fetch_optional(&mut *tx)
            .await?;
    let Some(after) = after else {
        let tried = short(&mut tx, key, &wrote).await?;
        tx.rollback().await?;
        return Ok(tried);
    };

    // One ledger row per order, as if each had moved alone in the order they arrived, and each
    // row's change event (the outbox: no move without its event).
    ledger_sqlite(&mut tx, db, key, &lines, (warehouse, after, sum, now)).await?;
    tx.commit().await?;
    Ok(wrote.answer(Grouped::Held(warehouse, slug.to_string())))
}

/// The group's rows that do not depend on the balance, on SQLite: each order's audit row, its
/// event and its line, each statement writing every order's row from one JSON array.
async fn write_lines_sqlite(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    db: &Db,
    key: HoldKey,
    lines: &[&HoldLine],
    (ids, warehouse): (&HashMap<String, i64>, i64),
) -> Result<(), sqlx::Error> {
    let rows = |cols: &[(&str, &str)]| json_rows(db.dialect, 2, cols);
    let audit: Vec<Value> = lines
        .iter()
        .map(|l| {
            json!({"actor": l.actor.label, "subject": format!("order:{}", l.order),
            "detail": format!("{} × {}", l.code, l.qty), "source": l.actor.source, "ip": l.actor.ip,
            "at": l.now})
        })
        .collect();
    let audit_row = audit::Row {
        merchant_id: "$1",
        actor: "x.actor",
        action: "'reservation.reserve'",
        subject: "x.subject",
        detail: "x.detail",
        source: "x.source",
        ip: "x.ip",
        at: "x.at",
    };
    sqlx::query(&audit_row.insert(&format!(
        "FROM {}",
        rows(&[
            ("actor", "text"),
            ("subject", "text"),
            ("detail", "text"),
            ("source", "text"),
            ("ip", "text"),
            ("at", "bigint")
        ])
    )))
    .bind(key.merchant_id)
    .bind(Value::Array(audit).to_string())
    .execute(&mut **tx)
    .await?;

    let events: Vec<Value> = lines
        .iter()
        .map(|l| json!({"order_id": l.order, "data": reserved_data(l), "at": l.now}))
        .collect();
    sqlx::query(
        &events::Row::new("$1", "$3", ("'reservation'", "x.order_id"), "x.at")
            .data("x.data")
            .insert(&format!(
                "FROM {}",
                rows(&[("order_id", "text"), ("data", "text"), ("at", "bigint")])
            )),
    )
    .bind(key.merchant_id)
    .bind(Value::Array(events).to_string())
    .bind(EventType::ReservationReserved.as_str())
    .execute(&mut **tx)
    .await?;

    let held: Vec<Value> = lines
        .iter()
        .map(|l| {
            json!({"reservation_id": ids[&l.order], "order_id": l.order, "qty": l.qty,
            "expires_at": l.expires_at, "at": l.now})
        })
        .collect();
    sqlx::query(&format!(
        "INSERT INTO stock_reservations (merchant_id, reservation_id, order_id, sku_id, warehouse_id, qty, status,
            expires_at, created_at, updated_at, hold)
         SELECT $1, x.reservation_id, x.order_id, $3, $4, x.qty, 'RESERVED', x.expires_at, x.at, x.at, $5 FROM {}",
        rows(&[("reservation_id", "bigint"), ("order_id", "text"), ("qty", "bigint"),
            ("expires_at", "bigint"), ("at", "bigint")])
    ))
    .bind(key.merchant_id)
    .bind(Value::Array(held).to_string())
    .bind(key.sku_id)
    .bind(warehouse)
    .bind(LineHold::Locked.as_str())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// One ledger row per order of the group, on SQLite, as if each had moved alone in the order
/// they arrived (`after`: the balance once the group's `sum` is locked), and each row's event.
async fn ledger_sqlite(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    db: &Db,
    key: HoldKey,
    lines: &[&HoldLine],
    (warehouse, after, sum, now): (i64, crate::domain::stock::Buckets, i64, i64),
) -> Result<(), sqlx::Error> {
    let rows = |cols: &[(&str, &str)]| json_rows(db.dialect, 2, cols);
    let ledger = ledger_rows(lines);
    let ledger_ids: Vec<i64> = sqlx::query_scalar(&format!(
        "INSERT INTO stock_ledger (merchant_id, sku_id, warehouse_id, kind, qty, d_total, d_locked, d_sold, d_frozen,
            total_after, locked_after, sold_after, frozen_after, reason, actor, order_id, event_id, created_at,
            reason_code)
         SELECT $1, $3, $4, 'RESERVE', x.qty, 0, x.qty, 0, 0, $5, $9 + x.cum, $6, $7, '', x.actor, x.order_id,
            x.event_id, $8, NULL FROM {}
         RETURNING id",
        rows(&[("qty", "bigint"), ("cum", "bigint"), ("actor", "text"), ("order_id", "text"),
            ("event_id", "text")])
    ))
    .bind(key.merchant_id)
    .bind(Value::Array(ledger).to_string())
    .bind(key.sku_id)
    .bind(warehouse)
    .bind(after.total)
    .bind(after.sold)
    .bind(after.frozen)
    .bind(now)
    .bind(after.locked - sum)
    .fetch_all(&mut **tx)
    .await?;
    // Events in the ledger's order: the sequencer numbers them by id.
    let mut ledger_ids = ledger_ids;
    ledger_ids.sort_unstable();
    let ids_json: Vec<Value> = ledger_ids.iter().map(|id| json!({ "id": id })).collect();
    sqlx::query(
        &events::Row::new("$1", "$3", ("'sku'", "$4"), "$6")
            .sku("$5")
            .ledger("x.id")
            .insert(&format!("FROM {}", rows(&[("id", "bigint")]))),
    )
    .bind(key.merchant_id)
    .bind(Value::Array(ids_json).to_string())
    .bind(
        EventType::of_ledger_kind("RESERVE")
            .unwrap_or(EventType::StockCorrection)
            .as_str(),
    )
    .bind(key.sku_id.to_string())
    .bind(key.sku_id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A numbered group's order events as JSON rows, in the order their headers were written (as the
/// sequencer would have numbered them): `k` is each one's place.
fn numbered_reserved(sorted: &[&HoldLine], held: &HashSet<&str>) -> Vec<Value> {
    sorted
        .iter()
        .filter(|l| held.contains(l.order.as_str()))
        .enumerate()
        .map(|(k, l)| {
            json!({"k": k as i64 + 1, "order_id": l.order, "at": l.now, "data": reserved_data(l)})
        })
        .collect()
}

/// The CTEs of the group's second statement on PostgreSQL that write the events: the ledger
/// rows' events, and for a numbered group the orders' events too, numbered from the counter
/// (`$10` events of each kind) in the order the sequencer would have given.
fn pg_stock_events(dialect: crate::infra::db::Dialect, numbered: bool) -> String {
    if !numbered {
        return format!(
            "ev AS ({})",
            events::Row::new("$1", "$7", ("'sku'", "CAST($5 AS TEXT)"), "$4")
                .sku("$5")
                .ledger("id")
                .insert("FROM led ORDER BY id")
        );
    }
    format!(
        "n AS ({numbers}),
         r AS (SELECT * FROM {r}),
         er AS ({reserved}),
         ev AS ({moved})",
        numbers = events::take_numbers("2 * $10", "EXISTS (SELECT 1 FROM after)"),
        reserved = events::Row::new("$1", "$9", ("'reservation'", "r.order_id"), "r.at")
            .data("r.data")
            .numbered("n.base + r.k")
            .insert("FROM r CROSS JOIN n"),
        moved = events::Row::new("$1", "$7", ("'sku'", "CAST($5 AS TEXT)"), "$4")
            .sku("$5")
            .ledger("led.id")
            .numbered("n.base + $10 + ROW_NUMBER() OVER (ORDER BY led.id)")
            .insert("FROM led CROSS JOIN n"),
        r = json_rows(
            dialect,
            8,
            &[
                ("k", "bigint"),
                ("order_id", "text"),
                ("at", "bigint"),
                ("data", "text")
            ]
        ),
    )
}

/// The smallest group that numbers its events itself. Numbering takes the events' counter row
/// (`event_sequence`) from the group's UPDATE to its COMMIT, so groups of every SKU number one
/// after the other: worth it for a hot SKU's large groups, not for the one or two orders a
/// group of ordinary traffic holds, which the sequencer numbers as before.
pub const NUMBERED_FROM: usize = 8;

/// The group's transaction on PostgreSQL, in four round trips: BEGIN; the headers, audit rows,
/// events and lines in one statement; the balance's UPDATE with the ledger rows and their events
/// in another; COMMIT. The same rows as `transaction_sqlite` writes.
///
/// A group of [`NUMBERED_FROM`] orders or more numbers its events itself:
/// both kinds are written by the second statement, numbered, rather than left for the
/// sequencer, whose UPDATE of each row afterwards cost about a fifth of a hot SKU's rate.
async fn transaction_pg(
    db: &Db,
    key: HoldKey,
    lines: &[&HoldLine],
    (warehouse, slug): (i64, &str),
) -> Result<Tried, sqlx::Error> {
    let rows = |cols: &[(&str, &str)]| json_rows(db.dialect, 2, cols);
    let numbered = lines.len() >= NUMBERED_FROM;
    let mut tx = db.begin_write().await?;
    // Everything that does not depend on the balance, before the UPDATE locks it until COMMIT:
    // the orders already known return no header and write nothing (alone, their repeat is
    // answered from what they hold).
    // Written in the order of their ids: two groups in flight that share an order (a retry) then
    // wait for each other in one order, never in a circle (a deadlock, which PostgreSQL breaks
    // only after a second).
    let mut sorted: Vec<&HoldLine> = lines.to_vec();
    sorted.sort_by(|a, b| a.order.cmp(&b.order));
    let orders: Vec<Value> = sorted
        .iter()
        .map(|l| {
            // A numbered group writes its events in the second statement, with their data.
            let data = (!numbered).then(|| reserved_data(l));
            json!({"order_id": l.order, "fp": l.fp, "expires_at": l.expires_at, "at": l.now,
                "customer": l.customer, "actor": l.actor.label, "source": l.actor.source,
                "ip": l.actor.ip, "detail": format!("{} × {}", l.code, l.qty), "qty": l.qty,
                "data": data})
        })
        .collect();
    let held: Vec<String> = sqlx::query_scalar(&format!(
        "WITH x AS (SELECT * FROM {}),
         h AS (INSERT INTO reservations (merchant_id, order_id, status, fingerprint, expires_at, created_at,
                updated_at, places, customer_id)
            SELECT $1, x.order_id, 'RESERVED', x.fp, x.expires_at, x.at, x.at, 0, x.customer FROM x
            ON CONFLICT (merchant_id, order_id) DO NOTHING RETURNING id, order_id),
         a AS ({audit}),
         {events}
         l AS (INSERT INTO stock_reservations (merchant_id, reservation_id, order_id, sku_id, warehouse_id, qty,
                status, expires_at, created_at, updated_at, hold)
            SELECT $1, h.id, x.order_id, $4, $5, x.qty, 'RESERVED', x.expires_at, x.at, x.at, $6
            FROM x JOIN h USING (order_id))
         SELECT order_id FROM h",
        rows(&[("order_id", "text"), ("fp", "text"), ("expires_at", "bigint"), ("at", "bigint"),
            ("customer", "text"), ("actor", "text"), ("source", "text"), ("ip", "text"),
            ("detail", "text"), ("qty", "bigint"), ("data", "text")]),
        audit = audit::Row {
            merchant_id: "$1",
            actor: "x.actor",
            action: "'reservation.reserve'",
            subject: "'order:' || x.order_id",
            detail: "x.detail",
            source: "x.source",
            ip: "x.ip",
            at: "x.at",
        }
        .insert("FROM x JOIN h USING (order_id)"),
        // Numbered ones are written with the ledger's, after the balance's UPDATE.
        events = if numbered {
            String::new()
        } else {
            format!(
                "e AS ({}),",
                events::Row::new("$1", "$3", ("'reservation'", "x.order_id"), "x.at")
                    .data("x.data")
                    .insert("FROM x JOIN h USING (order_id)")
            )
        }
    ))
    .bind(key.merchant_id)
    .bind(Value::Array(orders).to_string())
    .bind(EventType::ReservationReserved.as_str())
    .bind(key.sku_id)
    .bind(warehouse)
    .bind(LineHold::Locked.as_str())
    .fetch_all(&mut *tx)
    .await?;
    let held: HashSet<&str> = held.iter().map(String::as_str).collect();
    let all = lines;
    let wrote = Wrote::of(all, |order| held.contains(order));
    let lines = wrote.lines(all);
    if lines.is_empty() {
        return Ok(Tried::Answered(Vec::new()));
    }

    // The authority, the group's sum or nothing, with one ledger row per order (as if each had
    // moved alone, in the order they arrived) and each row's change event.
    let sum: i64 = lines.iter().map(|l| l.qty).sum();
    let ledger = ledger_rows(&lines);
    // Numbered: the orders' events, in the order their headers were written (as the sequencer
    // would have numbered them), then the ledger's.
    let reserved: Vec<Value> = if numbered {
        numbered_reserved(&sorted, &held)
    } else {
        Vec::new()
    };
    let m = reserved.len() as i64;
    let stock_events = pg_stock_events(db.dialect, numbered);
    let sql = format!(
        "WITH x AS (SELECT * FROM {}),
         after AS ({lock}),
         led AS (INSERT INTO stock_ledger (merchant_id, sku_id, warehouse_id, kind, qty, d_total, d_locked, d_sold,
                d_frozen, total_after, locked_after, sold_after, frozen_after, reason, actor, order_id, event_id,
                created_at, reason_code)
            SELECT $1, $5, $6, 'RESERVE', x.qty, 0, x.qty, 0, 0, after.total, after.locked - $3 + x.cum,
                after.sold, after.frozen, '', x.actor, x.order_id, x.event_id, $4, NULL
            FROM x CROSS JOIN after ORDER BY x.cum
            RETURNING id),
         {stock_events}
         SELECT locked FROM after",
        rows(&[("qty", "bigint"), ("cum", "bigint"), ("actor", "text"), ("order_id", "text"),
            ("event_id", "text")]),
        lock = stock::sql::lock_units("$3", "$4", ("$5", "$6")),
    );
    let mut moving = sqlx::query_scalar(&sql)
        .bind(key.merchant_id)
        .bind(Value::Array(ledger).to_string())
        .bind(sum)
        .bind(db.now_ms())
        .bind(key.sku_id)
        .bind(warehouse)
        .bind(
            EventType::of_ledger_kind("RESERVE")
                .unwrap_or(EventType::StockCorrection)
                .as_str(),
        );
    if numbered {
        // The group's size is bound, not written into the text: one prepared statement for
        // every size (sqlx keeps a hundred per connection).
        moving = moving
            .bind(Value::Array(reserved).to_string())
            .bind(EventType::ReservationReserved.as_str())
            .bind(m);
    }
    let moved: Option<i64> = moving.fetch_optional(&mut *tx).await?;
    if moved.is_none() {
        let tried = short(&mut tx, key, &wrote).await?;
        tx.rollback().await?;
        return Ok(tried);
    }
    tx.commit().await?;
    Ok(wrote.answer(Grouped::Held(warehouse, slug.to_string())))
}

/// The data of an order's `reservation.reserved` event, as the events table keeps it (text).
fn reserved_data(l: &HoldLine) -> String {
    json!({"before": null, "after": "RESERVED",
        "expires_at": crate::domain::kernel::validate::ms_to_rfc3339(l.expires_at)})
    .to_string()
}

/// Each order's ledger row as JSON, with `cum`, the group's quantity up to and including it: its
/// row's `locked_after` is the balance's before the group plus `cum`.
fn ledger_rows(lines: &[&HoldLine]) -> Vec<Value> {
    let mut cum = 0;
    lines
        .iter()
        .map(|l| {
            cum += l.qty;
            json!({"qty": l.qty, "cum": cum, "actor": l.actor.label, "order_id": l.order,
                "event_id": uuid::Uuid::new_v4().to_string()})
        })
        .collect()
}

/// The group's sum does not fit (the caller rolls its transaction back). When no warehouse has a
/// unit left, every order hears so now, as each would alone; otherwise `fit_first` decides who
/// gets what is left.
async fn short(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    key: HoldKey,
    wrote: &Wrote,
) -> Result<Tried, sqlx::Error> {
    let left: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(total - locked - sold - frozen) FROM stock_balances WHERE sku_id = $1",
    )
    .bind(key.sku_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(if left.unwrap_or(0) <= 0 {
        wrote.answer(Grouped::SoldOut)
    } else {
        Tried::Short {
            written: wrote.written.clone(),
        }
    })
}

/// The orders of a group its INSERT of headers wrote (the others were known already, to be
/// answered alone), by index into the group.
struct Wrote {
    written: Vec<usize>,
    of: usize,
}

impl Wrote {
    fn of(all: &[&HoldLine], wrote: impl Fn(&str) -> bool) -> Wrote {
        Wrote {
            written: (0..all.len()).filter(|&i| wrote(&all[i].order)).collect(),
            of: all.len(),
        }
    }

    fn lines<'a>(&self, all: &[&'a HoldLine]) -> Vec<&'a HoldLine> {
        self.written.iter().map(|&i| all[i]).collect()
    }

    /// `a` for each order written, None (held alone) for the others.
    fn answer(&self, a: Grouped) -> Tried {
        let mut answers = vec![None; self.of];
        for &i in &self.written {
            answers[i] = Some(a.clone());
        }
        Tried::Answered(answers)
    }
}
