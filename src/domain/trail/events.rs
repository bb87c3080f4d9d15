//! Change events, through a transactional outbox: every change of a quantity or a state writes
//! its event row in the transaction that makes the change (so an event exists exactly when its
//! change committed), and a feed and webhooks hand them out.
//!
//! Rows are written unnumbered. The sequencer numbers committed rows in the order it finds them
//! (`seq`, the event's public id): a transaction that commits late gets a later number, so a
//! reader that walks `seq` upwards never passes over an event that was still in flight, which
//! a plain auto-increment id would allow (ids are handed out at insert, not at commit).
//!
//! One writer numbers its own: a hot SKU's large group of holds on PostgreSQL
//! (`reservations::batch`) takes its numbers from `event_sequence` in its last statement and
//! keeps that row locked until it commits, so its numbers too follow the order of commits, and
//! none is visible before its event. Renumbering each of its rows afterwards (a second write of
//! every event) was about a fifth of a hot SKU's rate.

use serde::Serialize;
use serde_json::{json, Value};
use sqlx::{Any, FromRow, Transaction};

use crate::domain::kernel::error::DomainResult;
use crate::domain::MerchantId;
use crate::infra::db::Db;

crate::text_enum! {
    /// The stable list of event types. Stock moves are `stock.<ledger kind>`.
    pub enum EventType {
        StockReceive = "stock.receive",
        StockWriteOff = "stock.write_off",
        StockCount = "stock.count",
        StockFreeze = "stock.freeze",
        StockUnfreeze = "stock.unfreeze",
        StockTransfer = "stock.transfer",
        StockReserve = "stock.reserve",
        StockConfirm = "stock.confirm",
        StockRelease = "stock.release",
        StockExpire = "stock.expire",
        StockReturnRestock = "stock.return_restock",
        StockReturnDamaged = "stock.return_damaged",
        StockCorrection = "stock.correction",
        ReservationReserved = "reservation.reserved",
        ReservationConfirmed = "reservation.confirmed",
        ReservationReleased = "reservation.released",
        ReservationExpired = "reservation.expired",
        BookingBooked = "booking.booked",
        BookingCancelled = "booking.cancelled",
        BookingAttended = "booking.attended",
        BookingNoShow = "booking.no_show",
        /// Staff moved a booking to another slot (`data.before`/`after` are the slot ids).
        BookingMoved = "booking.moved",
        /// A SKU turned sellable or stopped being sellable; `before` and `after` name the
        /// blocking reasons' codes, `reasons` their facts.
        SkuSellableChanged = "sku.sellable_changed",
        /// A SKU's settings were edited (name, price, limits, policies: `data.changed` is
        /// `sku`), its product's (name, status, sale window: `product`), or the weekly schedule of
        /// the service in one store (`schedule`, with `store`), or the staff member of a closure
        /// over its coming slots was renamed (`staff`, with the new name); one event per SKU.
        /// The new values are the SKU's (`GET /api/v1/skus/{code}`).
        SkuUpdated = "sku.updated",
        /// A SKU was added to the catalog (with its product, or to one already there): `data`
        /// has its `sku` code and `product_id`. One event per SKU.
        SkuCreated = "sku.created",
        /// A slot made by hand or by a schedule (its staff, times and capacity in `after`).
        SlotCreated = "slot.created",
        SlotClosed = "slot.closed",
        SlotOpened = "slot.opened",
        SlotCapacityChanged = "slot.capacity_changed",
        /// A schedule save took away a slot nobody had booked: it no longer exists.
        SlotRemoved = "slot.removed",
        ClosureCreated = "closure.created",
        ClosureReopened = "closure.reopened",
        /// A batch of codes was uploaded or generated: it is importing (`data.after` is
        /// `CREATING`), and `code_batch.ready`, `.partial` or `.failed` follows.
        CodeBatchCreated = "code_batch.created",
        CodeBatchReady = "code_batch.ready",
        CodeBatchPartial = "code_batch.partial",
        CodeBatchFailed = "code_batch.failed",
        CodeStateChanged = "code.state_changed",
        /// Staff locked, unlocked or invalidated a batch's codes at once: one event for the
        /// batch (`data`: `action`, `before`, `after`, and `codes`, how many moved).
        CodeBatchStateChanged = "code_batch.state_changed",
        /// Reconciliation found a broken identity and froze the SKU or slot (an alert).
        ReconcileFrozen = "reconcile.frozen",
        /// The finding was dealt with: the SKU or slot sells again.
        ReconcileUnfrozen = "reconcile.unfrozen",
        /// Redis differed from SQL and was repaired (an alert).
        ReconcileRedisDrift = "reconcile.redis_drift",
        /// A kept count of codes differed from the codes and was repaired (an alert: a bug).
        ReconcileCountDrift = "reconcile.count_drift",
        /// The held units listed on a SKU's page differed from its frozen units and were
        /// made to match (an alert: a write path that moved one without the other).
        ReconcileHoldDrift = "reconcile.hold_drift",
        /// The Redis gate has been off for over a minute: sales go through SQL alone (an alert).
        GateDegraded = "gate.degraded",
        GateRecovered = "gate.recovered",
        /// A payment arrived for an order whose hold had gone, and the goods could not be
        /// taken again: someone must settle it (an alert).
        ExceptionOpened = "exception.opened",
        ExceptionResolved = "exception.resolved",
        /// The webhook sender's circuit breaker paused an endpoint that kept failing (an alert).
        WebhookPaused = "webhook.paused",
    }
}

impl EventType {
    /// The event of a stock move of this ledger kind.
    pub fn of_ledger_kind(kind: &str) -> Option<EventType> {
        EventType::parse(&format!("stock.{}", kind.to_ascii_lowercase()))
    }
}

/// What an event is about.
pub struct Subject {
    /// `sku`, `reservation`, `booking`, `slot`, `closure`, `code_batch`, `code`.
    pub kind: &'static str,
    pub id: String,
    /// The SKU it concerns, when one does (the feed names it by its code).
    pub sku_id: Option<i64>,
}

impl Subject {
    pub fn new(kind: &'static str, id: impl ToString, sku_id: Option<i64>) -> Self {
        Subject {
            kind,
            id: id.to_string(),
            sku_id,
        }
    }
}

/// One event row as SQL expressions, for a writer whose change and event must be one statement (a
/// hot path's CTE, a group's rows read from JSON, a row read from the table it is about). The
/// column list and its values are paired here and nowhere else: a writer names what goes in each
/// column, never the table (the house test, `tests/api/house.rs`, finds `INSERT INTO events`
/// written anywhere outside `trail`).
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub merchant_id: &'a str,
    pub ty: &'a str,
    pub subject_kind: &'a str,
    pub subject_id: &'a str,
    pub sku_id: Option<&'a str>,
    pub ledger_id: Option<&'a str>,
    pub data: &'a str,
    pub occurred_at: &'a str,
    /// The public number, only for the one writer that numbers its own (see the module's head).
    pub seq: Option<&'a str>,
}

impl<'a> Row<'a> {
    /// A row with the required columns and empty data; `sku`, `ledger`, `data` and `numbered`
    /// add the others.
    pub fn new(
        merchant_id: &'a str,
        ty: &'a str,
        subject: (&'a str, &'a str),
        occurred_at: &'a str,
    ) -> Self {
        Row {
            merchant_id,
            ty,
            subject_kind: subject.0,
            subject_id: subject.1,
            sku_id: None,
            ledger_id: None,
            data: "'{}'",
            occurred_at,
            seq: None,
        }
    }
    pub fn sku(self, sku_id: &'a str) -> Self {
        Row {
            sku_id: Some(sku_id),
            ..self
        }
    }
    pub fn ledger(self, ledger_id: &'a str) -> Self {
        Row {
            ledger_id: Some(ledger_id),
            ..self
        }
    }
    pub fn data(self, data: &'a str) -> Self {
        Row { data, ..self }
    }
    pub fn numbered(self, seq: &'a str) -> Self {
        Row {
            seq: Some(seq),
            ..self
        }
    }

    /// `INSERT INTO events (…) SELECT …` followed by `rest` (its `FROM`, `WHERE`, `ORDER BY`;
    /// empty for one row of bound values).
    pub fn insert(&self, rest: &str) -> String {
        let mut cols = vec!["merchant_id", "type", "subject_kind", "subject_id"];
        let mut vals = vec![
            self.merchant_id,
            self.ty,
            self.subject_kind,
            self.subject_id,
        ];
        for (col, val) in [("sku_id", self.sku_id), ("ledger_id", self.ledger_id)] {
            if let Some(v) = val {
                cols.push(col);
                vals.push(v);
            }
        }
        cols.extend(["data", "occurred_at"]);
        vals.extend([self.data, self.occurred_at]);
        if let Some(seq) = self.seq {
            cols.push("seq");
            vals.push(seq);
        }
        format!(
            "INSERT INTO events ({}) SELECT {} {rest}",
            cols.join(", "),
            vals.join(", ")
        )
    }
}

/// Writes an event in the change's transaction.
pub async fn record(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    ty: EventType,
    subject: Subject,
    data: Value,
) -> Result<(), sqlx::Error> {
    let sql = Row::new("$1", "$2", ("$3", "$4"), "$7")
        .sku("$5")
        .data("$6")
        .insert("");
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(ty.as_str())
        .bind(subject.kind)
        .bind(&subject.id)
        .bind(subject.sku_id)
        .bind(data.to_string())
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Writes the event of a stock move: about the SKU, pointing at the move's ledger row, whose
/// figures it reports.
pub async fn record_stock_move(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    ty: EventType,
    sku_id: i64,
    ledger_id: i64,
) -> Result<(), sqlx::Error> {
    let sql = Row::new("$1", "$2", ("'sku'", "$3"), "$6")
        .sku("$4")
        .ledger("$5")
        .insert("");
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(ty.as_str())
        .bind(sku_id.to_string())
        .bind(sku_id)
        .bind(ledger_id)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Writes an event about something of a slot (the slot, a booking in it): its SKU is the slot's.
// The transaction's time stamp came as an eighth argument when the app got its own clock (issue
// 51); the others are what the row says.
#[allow(clippy::too_many_arguments)]
pub async fn record_in_slot(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    ty: EventType,
    subject_kind: &'static str,
    subject_id: &str,
    slot_id: i64,
    data: Value,
) -> Result<(), sqlx::Error> {
    let sql = Row::new("$1", "$2", ("$3", "$4"), "$6")
        .sku("sku_id")
        .data("$5")
        .insert("FROM slots WHERE id = $7");
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(ty.as_str())
        .bind(subject_kind)
        .bind(subject_id)
        .bind(data.to_string())
        .bind(now)
        .bind(slot_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Writes the same event about each of many slots (a closure or a schedule save changes many at
/// once), one row per slot with the slot's own SKU. The ids are integers, so they are written
/// into the statement, a few hundred at a time, rather than bound one by one.
pub async fn record_per_slot(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    ty: EventType,
    slot_ids: &[i64],
    data: Value,
) -> Result<(), sqlx::Error> {
    let data = data.to_string();
    for chunk in slot_ids.chunks(500) {
        let ids = chunk
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let sql = Row::new("merchant_id", "$1", ("'slot'", "CAST(id AS TEXT)"), "$3")
            .sku("sku_id")
            .data("$2")
            .insert(&format!("FROM slots WHERE id IN ({ids}) ORDER BY id"));
        sqlx::query(&sql)
            .bind(ty.as_str())
            .bind(&data)
            .bind(now)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Writes a code batch's change event, its merchant and SKU read from the batch.
pub async fn record_for_batch(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    batch_id: i64,
    ty: EventType,
    data: Value,
) -> Result<(), sqlx::Error> {
    let sql = Row::new(
        "merchant_id",
        "$1",
        ("'code_batch'", "CAST(id AS TEXT)"),
        "$3",
    )
    .sku("sku_id")
    .data("$2")
    .insert("FROM code_batches WHERE id = $4");
    sqlx::query(&sql)
        .bind(ty.as_str())
        .bind(data.to_string())
        .bind(now)
        .bind(batch_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The CTE body that takes `count` public numbers for events a statement writes itself, when
/// `condition` holds; its one row's `base` is the number before the first. The counter's row
/// stays locked until COMMIT, so numbers follow the order of commits (see the module's head).
pub fn take_numbers(count: &str, condition: &str) -> String {
    format!(
        "UPDATE event_sequence SET last_seq = last_seq + {count}
         WHERE id = 1 AND {condition} RETURNING last_seq - {count} AS base"
    )
}

/// Takes the event counter's row lock until the transaction ends, without numbering anything:
/// a job that must run on one instance at a time (and writes events) waits here for the other.
pub async fn lock_counter(tx: &mut Transaction<'_, Any>) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE event_sequence SET last_seq = last_seq WHERE id = 1")
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The most rows one sequencer pass numbers.
const SEQUENCE_BATCH: i64 = 5000;

/// Numbers the committed events that have no number yet, oldest row first; returns how many.
/// One sequencer at a time (the `event_sequence` row's lock), on any instance.
pub async fn sequence(db: &Db) -> DomainResult<u64> {
    let mut total = 0;
    loop {
        let mut tx = db.begin_write().await?;
        // Taking the counter's row lock first: a second sequencer waits here, then finds the
        // rows numbered.
        let last: i64 = sqlx::query_scalar(
            "UPDATE event_sequence SET last_seq = last_seq WHERE id = 1 RETURNING last_seq",
        )
        .fetch_one(&mut *tx)
        .await?;
        let numbered = sqlx::query(
            "UPDATE events SET seq = $1 + r.n
             FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM events
                   WHERE seq IS NULL ORDER BY id LIMIT $2) AS r
             WHERE events.id = r.id",
        )
        .bind(last)
        .bind(SEQUENCE_BATCH)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if numbered == 0 {
            tx.rollback().await?;
            return Ok(total);
        }
        sqlx::query("UPDATE event_sequence SET last_seq = $1 WHERE id = 1")
            .bind(last + numbered as i64)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        total += numbered;
        if (numbered as i64) < SEQUENCE_BATCH {
            return Ok(total);
        }
    }
}

/// The last number the sequencer handed out (without numbering anything): every event at or
/// below it committed before this read.
pub async fn last_numbered(db: &Db) -> DomainResult<i64> {
    Ok(
        sqlx::query_scalar("SELECT last_seq FROM event_sequence WHERE id = 1")
            .fetch_one(&db.pool)
            .await?,
    )
}

/// An event as the feed and webhooks give it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Event {
    /// Unique, and increasing per merchant in the order the changes committed.
    pub id: i64,
    #[serde(rename = "type")]
    pub ty: EventType,
    /// The merchant's slug.
    pub merchant: String,
    pub occurred_at: String,
    pub subject: EventSubject,
    /// What changed: `before` and `after` where a state or quantity moved, and the rest of the
    /// change's facts.
    #[schema(value_type = Object)]
    pub data: Value,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct EventSubject {
    pub kind: String,
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
}

#[derive(FromRow)]
struct FeedRow {
    seq: i64,
    #[sqlx(rename = "type")]
    ty: String,
    merchant: String,
    occurred_at: i64,
    subject_kind: String,
    subject_id: String,
    sku: Option<String>,
    data: String,
    warehouse: Option<String>,
    l_kind: Option<String>,
    l_qty: Option<i64>,
    d_total: Option<i64>,
    d_locked: Option<i64>,
    d_sold: Option<i64>,
    d_frozen: Option<i64>,
    total_after: Option<i64>,
    locked_after: Option<i64>,
    sold_after: Option<i64>,
    frozen_after: Option<i64>,
    l_reason: Option<String>,
    l_order: Option<String>,
}

fn figures(total: i64, locked: i64, sold: i64, frozen: i64) -> Value {
    json!({"total": total, "locked": locked, "sold": sold, "frozen": frozen,
           "available": total - locked - sold - frozen})
}

impl FeedRow {
    fn into_event(self) -> Option<Event> {
        let ty = EventType::parse(&self.ty)?;
        let mut data: Value = serde_json::from_str(&self.data).unwrap_or(Value::Null);
        // A stock move's figures come from its ledger row, written in the same statement.
        if let (Some(ta), Some(la), Some(sa), Some(fa)) = (
            self.total_after,
            self.locked_after,
            self.sold_after,
            self.frozen_after,
        ) {
            let (dt, dl, ds, df) = (
                self.d_total.unwrap_or(0),
                self.d_locked.unwrap_or(0),
                self.d_sold.unwrap_or(0),
                self.d_frozen.unwrap_or(0),
            );
            if !data.is_object() {
                data = json!({});
            }
            data["warehouse"] = self.warehouse.into();
            data["kind"] = self.l_kind.into();
            data["qty"] = self.l_qty.into();
            data["reason"] = self.l_reason.into();
            data["order_id"] = self.l_order.into();
            data["before"] = figures(ta - dt, la - dl, sa - ds, fa - df);
            data["after"] = figures(ta, la, sa, fa);
        }
        Some(Event {
            id: self.seq,
            ty,
            merchant: self.merchant,
            occurred_at: crate::domain::kernel::validate::ms_to_rfc3339(self.occurred_at),
            subject: EventSubject {
                // A SKU is named by its code, as everywhere in the API.
                id: match (&*self.subject_kind, &self.sku) {
                    ("sku", Some(code)) => code.clone(),
                    _ => self.subject_id,
                },
                kind: self.subject_kind,
                sku: self.sku,
            },
            data,
        })
    }
}

/// Which types a feed asks for: exact types, or a family (`stock.*`).
#[derive(Debug, Clone, Default)]
pub struct TypeFilter {
    pub exact: Vec<EventType>,
    pub families: Vec<String>,
}

impl TypeFilter {
    /// Parses `stock.*,booking.cancelled`; `Err(word)` names the first that is no type or family.
    pub fn parse(raw: &str) -> Result<TypeFilter, String> {
        let mut f = TypeFilter::default();
        for word in raw.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if let Some(family) = word.strip_suffix(".*") {
                let prefix = format!("{family}.");
                if !EventType::NAMES.iter().any(|n| n.starts_with(&prefix)) {
                    return Err(word.to_string());
                }
                f.families.push(prefix);
            } else if word == "*" {
                return Ok(TypeFilter::default());
            } else {
                f.exact
                    .push(EventType::parse(word).ok_or_else(|| word.to_string())?);
            }
        }
        Ok(f)
    }

    /// Whether an event of this type passes (an empty filter passes all).
    pub fn admits(&self, ty: EventType) -> bool {
        (self.exact.is_empty() && self.families.is_empty())
            || self.exact.contains(&ty)
            || self.families.iter().any(|p| ty.as_str().starts_with(p))
    }

    /// The types it admits, for the query.
    pub fn types(&self) -> Vec<&'static str> {
        EventType::ALL
            .iter()
            .filter(|t| self.admits(**t))
            .map(|t| t.as_str())
            .collect()
    }
}

/// An event as the feed gives it: the stock move's figures from its ledger row.
const SELECT: &str = "SELECT e.seq, e.type, m.slug AS merchant, e.occurred_at, e.subject_kind,
        e.subject_id, s.code AS sku, e.data, w.slug AS warehouse, l.kind AS l_kind, l.qty AS l_qty,
        l.d_total, l.d_locked, l.d_sold, l.d_frozen, l.total_after, l.locked_after,
        l.sold_after, l.frozen_after, l.reason AS l_reason, l.order_id AS l_order
    FROM events e
    JOIN merchants m ON m.id = e.merchant_id
    LEFT JOIN skus s ON s.id = e.sku_id
    LEFT JOIN stock_ledger l ON l.id = e.ledger_id
    LEFT JOIN warehouses w ON w.id = l.warehouse_id";

/// A merchant's events by id (`seq`), for webhooks to send.
pub async fn by_ids(db: &Db, merchant_id: MerchantId, ids: &[i64]) -> DomainResult<Vec<Event>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "{SELECT} WHERE e.merchant_id = $1 AND e.seq IN ({})",
        placeholders.join(", ")
    );
    let mut q = sqlx::query_as::<_, FeedRow>(&sql).bind(merchant_id);
    for id in ids {
        q = q.bind(*id);
    }
    Ok(q.fetch_all(&db.pool)
        .await?
        .into_iter()
        .filter_map(FeedRow::into_event)
        .collect())
}

/// A merchant's events after `after` (a `seq`), oldest first. Sequences what has committed
/// first, so that a read sees every change committed before it.
pub async fn feed(
    db: &Db,
    merchant_id: MerchantId,
    after: i64,
    types: &TypeFilter,
    limit: i64,
) -> DomainResult<Vec<Event>> {
    sequence(db).await?;
    let admitted = types.types();
    let placeholders: Vec<String> = (0..admitted.len()).map(|i| format!("${}", i + 4)).collect();
    let sql = format!(
        "{SELECT} WHERE e.merchant_id = $1 AND e.seq > $2 AND e.type IN ({})
         ORDER BY e.seq LIMIT $3",
        placeholders.join(", ")
    );
    let mut q = sqlx::query_as::<_, FeedRow>(&sql)
        .bind(merchant_id)
        .bind(after)
        .bind(limit);
    for t in &admitted {
        q = q.bind(*t);
    }
    Ok(q.fetch_all(&db.pool)
        .await?
        .into_iter()
        .filter_map(FeedRow::into_event)
        .collect())
}
