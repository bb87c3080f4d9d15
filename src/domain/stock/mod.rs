//! Stock of goods: balances per SKU × warehouse with four buckets, staff adjustments, and the
//! ledger. Every change is one conditional UPDATE plus its ledger row in one transaction; the
//! UPDATE's WHERE clause is the only place that decides whether units are there.

pub mod gate;
pub mod holds;
pub mod import;
pub mod ledger;
pub mod reasons;
pub mod report;
pub mod sql;

use crate::domain::MerchantId;
use serde::{Deserialize, Serialize};
use sqlx::{Any, FromRow, Transaction};

use crate::domain::catalog::{self, Sku};
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, Errors};
use crate::domain::stock::reasons::AdjustReason;
use crate::domain::trail::events::{self, EventType, Row};
use crate::domain::{Actor, DomainError, FieldError};
use crate::infra::counters::Subject;
use crate::infra::db::Db;
use crate::messages;
use holds::NewHold;

/// Above this a quantity is a typo, not stock.
pub const QTY_MAX: i64 = 1_000_000_000;
pub use crate::domain::kernel::validate::REASON_MAX;
pub const ADJUST_KINDS: [&str; 6] = [
    "RECEIVE",
    "WRITE_OFF",
    "COUNT",
    "FREEZE",
    "UNFREEZE",
    "TRANSFER",
];
pub const LEDGER_KINDS: [&str; 12] = [
    "RECEIVE",
    "WRITE_OFF",
    "COUNT",
    "FREEZE",
    "UNFREEZE",
    "TRANSFER",
    "RESERVE",
    "CONFIRM",
    "RELEASE",
    "EXPIRE",
    "RETURN_RESTOCK",
    "RETURN_DAMAGED",
];

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, FromRow)]
pub struct Buckets {
    pub total: i64,
    pub locked: i64,
    pub sold: i64,
    pub frozen: i64,
}

impl Buckets {
    pub fn available(&self) -> i64 {
        self.total - self.locked - self.sold - self.frozen
    }
    /// Units physically in the warehouse: everything not yet sold (held and frozen included).
    pub fn on_hand(&self) -> i64 {
        self.total - self.sold
    }
}

/// One warehouse's figures as the API and pages show them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct WarehouseStock {
    pub warehouse: String,
    pub warehouse_name: String,
    pub priority: i64,
    pub total: i64,
    pub locked: i64,
    pub sold: i64,
    pub frozen: i64,
    pub available: i64,
}

/// A SKU's stock over all its warehouses. Serialised as-is by the API.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct StockSummary {
    pub sku: String,
    pub total: i64,
    pub locked: i64,
    pub sold: i64,
    pub frozen: i64,
    pub available: i64,
    pub warehouses: Vec<WarehouseStock>,
}

/// Which condition the UPDATE must meet for the move to happen.
#[derive(Debug, Clone, Copy)]
pub enum Guard {
    None,
    /// available ≥ n
    Available(i64),
    /// locked ≥ n
    Locked(i64),
    /// frozen ≥ n
    Frozen(i64),
    /// total − sold = n: a count confirmed against what the counter saw.
    OnHand(i64),
}

/// One change to one balance, as written to the ledger.
#[derive(Debug, Clone)]
pub struct Move<'a> {
    pub kind: &'static str,
    pub qty: i64,
    pub delta: Buckets,
    pub reason: &'a str,
    pub actor: &'a str,
    pub order_id: Option<&'a str>,
    /// Why, from the fixed list (a staff adjustment that said); None for orders' moves.
    pub reason_code: Option<&'a str>,
}

/// Makes sure the balance row exists (zeros) so that receiving into a new warehouse works.
pub async fn ensure_balance(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    sku_id: i64,
    warehouse_id: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO stock_balances (merchant_id, sku_id, warehouse_id, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (sku_id, warehouse_id) DO NOTHING",
    )
    .bind(merchant_id)
    .bind(sku_id)
    .bind(warehouse_id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Applies a move if its guard holds, and writes the ledger row. Returns the buckets after the
/// move, or None when the guard refused (nothing written).
pub async fn apply(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    sku_id: i64,
    warehouse_id: i64,
    guard: Guard,
    mv: &Move<'_>,
) -> Result<Option<Buckets>, sqlx::Error> {
    let (condition, bound) = match guard {
        Guard::None => ("$7 = $7", 0),
        Guard::Available(n) => ("total - locked - sold - frozen >= $7", n),
        Guard::Locked(n) => ("locked >= $7", n),
        Guard::Frozen(n) => ("frozen >= $7", n),
        Guard::OnHand(n) => ("total - sold = $7", n),
    };
    let update = format!(
        "UPDATE stock_balances SET total = total + $1, locked = locked + $2, sold = sold + $3, frozen = frozen + $4,
            version = version + 1, updated_at = $8
         WHERE sku_id = $5 AND warehouse_id = $6 AND {condition}
         RETURNING total, locked, sold, frozen"
    );
    let d = mv.delta;
    if tx.backend_name() == "PostgreSQL" {
        // One statement for the move and its ledger row: the UPDATE locks the balance row until
        // COMMIT, and on a hot SKU (a flash sale) every round trip made while holding it is a
        // round trip every other buyer of that SKU waits for.
        // The change event goes in the same statement too (the outbox: no move without its
        // event); its figures are read from the ledger row it points at.
        let sql = format!(
            "WITH after AS ({update}),
             led AS (INSERT INTO stock_ledger (merchant_id, sku_id, warehouse_id, kind, qty, d_total, d_locked,
                d_sold, d_frozen, total_after, locked_after, sold_after, frozen_after, reason, actor, order_id,
                event_id, created_at, reason_code)
             SELECT $9, $5, $6, $10, $11, $1, $2, $3, $4, total, locked, sold, frozen, $12, $13, $14, $15, $8, $17
             FROM after
             RETURNING id, total_after, locked_after, sold_after, frozen_after),
             ev AS ({event})
             SELECT total_after AS total, locked_after AS locked, sold_after AS sold, frozen_after AS frozen
             FROM led",
            event = Row::new("$9", "$16", ("'sku'", "CAST($5 AS TEXT)"), "$8")
                .sku("$5")
                .ledger("id")
                .insert("FROM led")
        );
        return bind_move(sqlx::query_as(&sql), d, sku_id, warehouse_id, (bound, now))
            .bind(merchant_id)
            .bind(mv.kind)
            .bind(mv.qty)
            .bind(mv.reason)
            .bind(mv.actor)
            .bind(mv.order_id)
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(stock_event(mv.kind).as_str())
            .bind(mv.reason_code)
            .fetch_optional(&mut **tx)
            .await;
    }
    let after: Option<Buckets> = bind_move(
        sqlx::query_as(&update),
        d,
        sku_id,
        warehouse_id,
        (bound, now),
    )
    .fetch_optional(&mut **tx)
    .await?;
    let Some(after) = after else { return Ok(None) };
    ledger_row(tx, now, merchant_id, sku_id, warehouse_id, mv, after).await?;
    Ok(Some(after))
}

/// Binds `apply`'s UPDATE parameters, `$1` to `$8`, in both of its forms.
fn bind_move<'q>(
    q: sqlx::query::QueryAs<'q, Any, Buckets, sqlx::any::AnyArguments<'q>>,
    d: Buckets,
    sku_id: i64,
    warehouse_id: i64,
    (bound, now): (i64, i64),
) -> sqlx::query::QueryAs<'q, Any, Buckets, sqlx::any::AnyArguments<'q>> {
    q.bind(d.total)
        .bind(d.locked)
        .bind(d.sold)
        .bind(d.frozen)
        .bind(sku_id)
        .bind(warehouse_id)
        .bind(bound)
        .bind(now)
}

/// The event type of a stock move of this ledger kind.
pub fn stock_event(kind: &str) -> EventType {
    EventType::of_ledger_kind(kind).unwrap_or(EventType::StockCorrection)
}

/// Appends one ledger row and its change event: the move and the buckets after it. Only `apply`
/// and reconciliation's corrections (which record a change made outside the ledger) call this.
pub async fn ledger_row(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    sku_id: i64,
    warehouse_id: i64,
    mv: &Move<'_>,
    after: Buckets,
) -> Result<(), sqlx::Error> {
    let d = mv.delta;
    let ledger_id: i64 = sqlx::query_scalar(
        "INSERT INTO stock_ledger (merchant_id, sku_id, warehouse_id, kind, qty, d_total, d_locked, d_sold, d_frozen,
            total_after, locked_after, sold_after, frozen_after, reason, actor, order_id, event_id, created_at, reason_code)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
         RETURNING id",
    )
    .bind(merchant_id)
    .bind(sku_id)
    .bind(warehouse_id)
    .bind(mv.kind)
    .bind(mv.qty)
    .bind(d.total)
    .bind(d.locked)
    .bind(d.sold)
    .bind(d.frozen)
    .bind(after.total)
    .bind(after.locked)
    .bind(after.sold)
    .bind(after.frozen)
    .bind(mv.reason)
    .bind(mv.actor)
    .bind(mv.order_id)
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(now)
    .bind(mv.reason_code)
    .fetch_one(&mut **tx)
    .await?;
    events::record_stock_move(
        tx,
        now,
        merchant_id,
        stock_event(mv.kind),
        sku_id,
        ledger_id,
    )
    .await
}

/// Locks a balance row until the transaction ends and returns its buckets (`None`: no such row).
/// Every move of a balance updates its row, so until COMMIT none can land between what a caller
/// reads next and what it writes (PostgreSQL's READ COMMITTED would let one in; SQLite's BEGIN
/// IMMEDIATE already serialises writers).
pub async fn lock_balance(
    tx: &mut Transaction<'_, Any>,
    sku_id: i64,
    warehouse_id: i64,
) -> Result<Option<Buckets>, sqlx::Error> {
    sqlx::query_as(
        "UPDATE stock_balances SET version = version + 1 WHERE sku_id = $1 AND warehouse_id = $2
         RETURNING total, locked, sold, frozen",
    )
    .bind(sku_id)
    .bind(warehouse_id)
    .fetch_optional(&mut **tx)
    .await
}

/// Reconciliation's correction: moves a balance (locked by [`lock_balance`]) by `delta`, whatever
/// it holds, with its `CORRECTION` ledger row and event, and returns the buckets after it. Only
/// a person resolving a finding gets here: every sale goes through [`apply`]'s condition.
pub async fn correct(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    (merchant_id, sku_id, warehouse_id): (MerchantId, i64, i64),
    delta: Buckets,
    (reason, actor): (&str, &str),
) -> Result<Buckets, sqlx::Error> {
    let after: Buckets = sqlx::query_as(
        "UPDATE stock_balances SET total = total + $1, locked = locked + $2, sold = sold + $3, frozen = frozen + $4,
            version = version + 1, updated_at = $5
         WHERE sku_id = $6 AND warehouse_id = $7
         RETURNING total, locked, sold, frozen",
    )
    .bind(delta.total)
    .bind(delta.locked)
    .bind(delta.sold)
    .bind(delta.frozen)
    .bind(now)
    .bind(sku_id)
    .bind(warehouse_id)
    .fetch_one(&mut **tx)
    .await?;
    record_correction(
        tx,
        now,
        (merchant_id, sku_id, warehouse_id),
        (delta, after),
        (reason, actor),
    )
    .await?;
    Ok(after)
}

/// The `CORRECTION` ledger row (and event) of a change already in the balance: one made outside
/// the ledger that reconciliation writes down, or [`correct`]'s own.
pub async fn record_correction(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    (merchant_id, sku_id, warehouse_id): (MerchantId, i64, i64),
    (delta, after): (Buckets, Buckets),
    (reason, actor): (&str, &str),
) -> Result<(), sqlx::Error> {
    let d = delta;
    let mv = Move {
        kind: "CORRECTION",
        qty: d.total.abs() + d.locked.abs() + d.sold.abs() + d.frozen.abs(),
        delta: d,
        reason,
        actor,
        order_id: None,
        reason_code: None,
    };
    ledger_row(tx, now, merchant_id, sku_id, warehouse_id, &mv, after).await
}

#[derive(Debug, Clone, FromRow)]
pub struct WarehouseRef {
    pub id: i64,
    pub slug: String,
    pub name: String,
    pub priority: i64,
}

pub async fn warehouse_by_slug(
    db: &Db,
    merchant_id: MerchantId,
    slug: &str,
) -> DomainResult<Option<WarehouseRef>> {
    Ok(sqlx::query_as(
        "SELECT id, slug, name, priority FROM warehouses WHERE merchant_id = $1 AND slug = $2",
    )
    .bind(merchant_id)
    .bind(slug.trim())
    .fetch_optional(&db.pool)
    .await?)
}

/// A goods SKU by code, or an error that names what the SKU is instead.
pub async fn goods_sku(
    db: &Db,
    merchant_id: MerchantId,
    code: &str,
    field: &str,
) -> DomainResult<Sku> {
    catalog::sku_of_unit(db, merchant_id, code, field, catalog::UnitType::Quantity).await
}

pub async fn summary(db: &Db, sku: &Sku) -> DomainResult<StockSummary> {
    summary_with(&db.pool, sku).await
}

async fn summary_with<'e, E: sqlx::Executor<'e, Database = Any>>(
    ex: E,
    sku: &Sku,
) -> DomainResult<StockSummary> {
    #[derive(FromRow)]
    struct Row {
        slug: String,
        name: String,
        priority: i64,
        total: i64,
        locked: i64,
        sold: i64,
        frozen: i64,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT w.slug, w.name, w.priority, b.total, b.locked, b.sold, b.frozen
         FROM stock_balances b JOIN warehouses w ON w.id = b.warehouse_id
         WHERE b.sku_id = $1 ORDER BY w.priority DESC, w.id",
    )
    .bind(sku.id)
    .fetch_all(ex)
    .await?;
    let mut s = StockSummary {
        sku: sku.code.clone(),
        total: 0,
        locked: 0,
        sold: 0,
        frozen: 0,
        available: 0,
        warehouses: Vec::new(),
    };
    for r in rows {
        let b = Buckets {
            total: r.total,
            locked: r.locked,
            sold: r.sold,
            frozen: r.frozen,
        };
        s.total += b.total;
        s.locked += b.locked;
        s.sold += b.sold;
        s.frozen += b.frozen;
        s.available += b.available();
        s.warehouses.push(WarehouseStock {
            warehouse: r.slug,
            warehouse_name: r.name,
            priority: r.priority,
            total: b.total,
            locked: b.locked,
            sold: b.sold,
            frozen: b.frozen,
            available: b.available(),
        });
    }
    Ok(s)
}

pub async fn buckets(db: &Db, sku_id: i64, warehouse_id: i64) -> DomainResult<Buckets> {
    Ok(sqlx::query_as("SELECT total, locked, sold, frozen FROM stock_balances WHERE sku_id = $1 AND warehouse_id = $2")
        .bind(sku_id)
        .bind(warehouse_id)
        .fetch_optional(&db.pool)
        .await?
        .unwrap_or_default())
}

/// A quantity from a JSON number: a whole number from 1 to [`QTY_MAX`].
pub fn qty_json(field: &str, v: &serde_json::Value) -> Result<i64, FieldError> {
    let bad = || FieldError::new(field, "invalid_qty", messages::bad_qty(QTY_MAX));
    match v {
        serde_json::Value::Number(n) => n.as_i64().ok_or_else(bad).and_then(|q| qty(field, q)),
        serde_json::Value::Null => Err(FieldError::new(
            field,
            "required",
            messages::required(&messages::label("qty")),
        )),
        _ => Err(bad()),
    }
}

pub fn qty(field: &str, q: i64) -> Result<i64, FieldError> {
    if (1..=QTY_MAX).contains(&q) {
        Ok(q)
    } else {
        Err(FieldError::new(
            field,
            "invalid_qty",
            messages::bad_qty(QTY_MAX),
        ))
    }
}

/// A quantity typed into a form.
pub fn qty_text(field: &str, raw: &str) -> Result<i64, FieldError> {
    validate::typed_int(raw)
        .ok_or_else(|| FieldError::new(field, "invalid_qty", messages::bad_qty(QTY_MAX)))
        .and_then(|q| qty(field, q))
}

/// A counted quantity may be zero (the shelf is empty).
pub fn counted(field: &str, q: i64) -> Result<i64, FieldError> {
    if (0..=QTY_MAX).contains(&q) {
        Ok(q)
    } else {
        Err(FieldError::new(
            field,
            "invalid_qty",
            messages::bad_count(QTY_MAX),
        ))
    }
}

crate::text_enum! {
    /// What a staff adjustment does to a warehouse's buckets.
    pub enum AdjustKind {
        Receive = "RECEIVE",
        WriteOff = "WRITE_OFF",
        /// Sets on hand to what was counted; the difference is booked.
        Count = "COUNT",
        Freeze = "FREEZE",
        Unfreeze = "UNFREEZE",
        Transfer = "TRANSFER",
    }
}

/// The quantity of an adjustment as typed into a form: for a count the quantity counted on hand
/// (zero allowed: the shelf is empty), for the others how many units move.
pub fn typed_qty(kind: &str, raw: &str) -> Result<i64, FieldError> {
    if AdjustKind::parse(kind.trim()) == Some(AdjustKind::Count) {
        validate::typed_int(raw)
            .ok_or_else(|| FieldError::new("qty", "invalid_qty", messages::bad_count(QTY_MAX)))
            .and_then(|q| counted("qty", q))
    } else {
        qty_text("qty", raw)
    }
}

/// What a count would book, shown before it is booked: on hand now, counted, and the difference.
#[derive(Debug, Clone)]
pub struct CountPreview {
    pub warehouse: String,
    pub on_hand: i64,
    pub counted: i64,
    pub diff: i64,
}

/// The preview of counting `counted` units of a SKU in a warehouse; None when the merchant has
/// no such warehouse (the count itself then refuses with the field's error).
pub async fn count_preview(
    db: &Db,
    merchant_id: MerchantId,
    sku_id: i64,
    warehouse: &str,
    counted: i64,
) -> DomainResult<Option<CountPreview>> {
    let Some(w) = warehouse_by_slug(db, merchant_id, warehouse).await? else {
        return Ok(None);
    };
    let on_hand = buckets(db, sku_id, w.id).await?.on_hand();
    Ok(Some(CountPreview {
        warehouse: w.name,
        on_hand,
        counted,
        diff: counted - on_hand,
    }))
}

#[derive(Debug, Clone, Default)]
pub struct AdjustInput {
    pub sku: String,
    pub warehouse: String,
    pub kind: String,
    /// For COUNT: the counted quantity on hand; for the others: how many units move.
    pub qty: i64,
    /// The note: free text. Required unless a reason code says why (and for `other`).
    pub reason: String,
    /// Why, from the fixed list ([`AdjustReason`]); empty: none given.
    pub reason_code: String,
    pub to_warehouse: Option<String>,
    /// For COUNT from the back office: the on-hand figure the person saw when confirming. When
    /// stock moved since, the count is refused rather than booked against a different figure.
    pub expected_on_hand: Option<i64>,
    /// For FREEZE: the day (YYYY-MM-DD) the hold is due for release; empty: none.
    pub release_on: String,
    /// For UNFREEZE: the hold to release from; None: the oldest holds first.
    pub hold_id: Option<i64>,
}

fn fingerprint(i: &AdjustInput) -> String {
    let base = format!(
        "{}|{}|{}|{}|{}|{}",
        i.sku.trim(),
        i.warehouse.trim(),
        i.kind.trim(),
        i.qty,
        i.to_warehouse.as_deref().unwrap_or("").trim(),
        i.reason.trim()
    );
    // Keys stored before reason codes (and holds) keep matching a request without them.
    let mut fp = match i.reason_code.trim() {
        "" => base,
        code => format!("{base}|{code}"),
    };
    if !i.release_on.trim().is_empty() || i.hold_id.is_some() {
        fp.push_str(&format!(
            "|hold:{}:{}",
            i.release_on.trim(),
            i.hold_id.unwrap_or(0)
        ));
    }
    fp
}

/// The reason code and the note of an adjustment, checked together: a known code that fits the
/// kind (`invalid_reason_code`, `reason_code_mismatch`), and a note unless a code other than
/// `other` says why (`required`). Both errors land in `errs`; None for the note when refused.
fn reason_and_code(
    errs: &mut Errors,
    kind: Option<AdjustKind>,
    note: &str,
    code: &str,
) -> (Option<String>, Option<AdjustReason>) {
    // A code was given (even a refused one): the note is then optional, so that a refused code
    // is the one error shown, not a second "reason required" beside it.
    let coded = !code.trim().is_empty();
    let code = match code.trim() {
        "" => None,
        raw => match AdjustReason::parse(&raw.to_ascii_lowercase()) {
            Some(c) if kind.is_none_or(|k| c.fits(k)) => Some(c),
            Some(c) => {
                errs.push(FieldError::new(
                    "reason_code",
                    "reason_code_mismatch",
                    messages::reason_code_mismatch(
                        c.as_str(),
                        &kind
                            .map(|k| {
                                AdjustReason::for_kind(k)
                                    .iter()
                                    .map(|r| r.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            })
                            .unwrap_or_default(),
                    ),
                ));
                None
            }
            None => {
                errs.push(FieldError::new(
                    "reason_code",
                    "invalid_reason_code",
                    messages::bad_reason_code(),
                ));
                None
            }
        },
    };
    let note = if note.trim().is_empty() && coded && code != Some(AdjustReason::Other) {
        Some(String::new())
    } else {
        errs.take(validate::name("reason", note, REASON_MAX))
    };
    (note, code)
}

/// An adjustment whose every field was checked: what [`book`] applies.
#[derive(Debug, Clone)]
pub struct Checked {
    kind: AdjustKind,
    sku: Sku,
    from: WarehouseRef,
    to: Option<WarehouseRef>,
    qty: i64,
    reason: String,
    reason_code: Option<AdjustReason>,
    release_on: Option<String>,
    hold_id: Option<i64>,
    expected_on_hand: Option<i64>,
}

impl Checked {
    pub fn sku(&self) -> &Sku {
        &self.sku
    }
    pub fn warehouse(&self) -> &WarehouseRef {
        &self.from
    }
}

/// Applies a staff adjustment. With an idempotency key, a repeat returns the first answer and
/// changes nothing; the same key with a different request is refused.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn adjust(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    input: AdjustInput,
    idem_key: Option<&str>,
) -> DomainResult<StockSummary> {
    let mut errs = Errors::default();
    if let Some(key) = idem_key {
        errs.take(idempotency_key(key));
    }
    let checked = match check(db, merchant_id, &input).await {
        Ok(c) if errs.is_empty() => c,
        Ok(_) => return Err(DomainError::Invalid(errs.0)),
        Err(DomainError::Invalid(mut more)) => {
            // The key's error after the fields', as before the split.
            more.append(&mut errs.0);
            return Err(DomainError::Invalid(more));
        }
        Err(e) => return Err(e),
    };
    let mut tx = db.begin_write().await?;
    if let Some(key) = idem_key {
        if let Some(replay) = claim_key(
            &mut tx,
            db.now_ms(),
            merchant_id,
            "stock_adjustment",
            key,
            &fingerprint(&input),
        )
        .await?
        {
            tx.rollback().await?;
            return replay_answer(
                db,
                merchant_id,
                "stock_adjustment",
                key,
                &fingerprint(&input),
                replay,
            )
            .await;
        }
    }
    if let Err(e) = book(&mut tx, db.now_ms(), actor, merchant_id, &checked).await {
        tx.rollback().await?;
        return Err(with_figures(db, &checked, e).await?);
    }
    let result = summary_with(&mut *tx, &checked.sku).await?;
    if let Some(key) = idem_key {
        store_answer(&mut tx, merchant_id, "stock_adjustment", key, &result).await?;
    }
    tx.commit().await?;
    // Changed outside the gate: Redis reloads this SKU from SQL on its next use.
    db.forget([Subject::Stock(checked.sku.id)]).await;
    Ok(result)
}

/// A refusal of [`book`] with the balance's figures as they are after the rollback.
async fn with_figures(db: &Db, c: &Checked, e: DomainError) -> DomainResult<DomainError> {
    let code = match &e {
        DomainError::Conflict { code, .. }
            if *code == "insufficient_stock" || *code == "insufficient_frozen" =>
        {
            *code
        }
        _ => return Ok(e),
    };
    let b = buckets(db, c.sku.id, c.from.id).await?;
    let details = serde_json::json!({ "sku": c.sku.code, "warehouse": c.from.slug, "available": b.available(), "frozen": b.frozen });
    let message = if code == "insufficient_frozen" {
        messages::not_enough_frozen(c.qty, b.frozen)
    } else {
        messages::not_enough_available(c.kind.as_str(), c.qty, b.available())
    };
    Ok(DomainError::conflict(code, message, details))
}

/// Checks an adjustment's fields against the merchant's catalog and warehouses, writing nothing:
/// every refused field at once.
pub async fn check(db: &Db, merchant_id: MerchantId, input: &AdjustInput) -> DomainResult<Checked> {
    let mut errs = Errors::default();
    let kind = errs
        .take(validate::choice("kind", &input.kind, &ADJUST_KINDS))
        .and_then(AdjustKind::parse);
    let (reason, reason_code) = reason_and_code(&mut errs, kind, &input.reason, &input.reason_code);
    if kind == Some(AdjustKind::Count) {
        errs.take(counted("qty", input.qty));
    } else {
        errs.take(qty("qty", input.qty));
    }
    let release_on = if kind == Some(AdjustKind::Freeze) {
        let today = db
            .clock
            .now()
            .with_timezone(
                &crate::domain::tenancy::tenants::merchant(db, merchant_id)
                    .await?
                    .tz(),
            )
            .date_naive();
        holds::release_on(&input.release_on, today, &mut errs)
    } else {
        None
    };
    let sku = errs.take(
        goods_sku(db, merchant_id, &input.sku, "sku")
            .await
            .map_err(first_field),
    );
    let from = match warehouse_by_slug(db, merchant_id, &input.warehouse).await? {
        Some(w) => Some(w),
        None => {
            errs.push(FieldError::new(
                "warehouse",
                "unknown_warehouse",
                messages::unknown_warehouse(input.warehouse.trim()),
            ));
            None
        }
    };
    let to = if kind == Some(AdjustKind::Transfer) {
        let slug = input.to_warehouse.clone().unwrap_or_default();
        match warehouse_by_slug(db, merchant_id, &slug).await? {
            Some(w) if Some(w.id) == from.as_ref().map(|f| f.id) => {
                errs.push(FieldError::new(
                    "to_warehouse",
                    "same_warehouse",
                    messages::transfer_same_warehouse(),
                ));
                None
            }
            Some(w) => Some(w),
            None if slug.trim().is_empty() => {
                errs.push(FieldError::new(
                    "to_warehouse",
                    "required",
                    messages::required(&messages::label("to_warehouse")),
                ));
                None
            }
            None => {
                errs.push(FieldError::new(
                    "to_warehouse",
                    "unknown_warehouse",
                    messages::unknown_warehouse(slug.trim()),
                ));
                None
            }
        }
    } else {
        None
    };
    // Every field that failed left its error and a None: the adjustment goes on only when all
    // of them parsed.
    let (Some(kind), Some(reason), Some(sku), Some(from), true) =
        (kind, reason, sku, from, errs.0.is_empty())
    else {
        return Err(DomainError::Invalid(errs.0));
    };

    Ok(Checked {
        kind,
        sku,
        from,
        to,
        qty: input.qty,
        reason,
        reason_code,
        release_on,
        hold_id: input.hold_id,
        expected_on_hand: input.expected_on_hand,
    })
}

/// Books a checked adjustment inside `tx`: its moves, their ledger rows, its hold and its audit
/// entry. A refusal (`insufficient_stock`, `insufficient_frozen`, `insufficient_held`,
/// `count_below_held`, `stock_changed`) leaves the transaction for the caller to roll back.
pub async fn book(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    actor: &Actor,
    merchant_id: MerchantId,
    c: &Checked,
) -> DomainResult<()> {
    let Checked {
        kind,
        sku,
        from,
        to,
        reason,
        reason_code,
        release_on,
        ..
    } = c;
    let (kind, reason_code) = (*kind, *reason_code);
    let q = c.qty;
    let who = actor.label.as_str();
    let mv = |kind: &'static str, qty: i64, delta: Buckets| Move {
        kind,
        qty,
        delta,
        reason,
        actor: who,
        order_id: None,
        reason_code: reason_code.map(AdjustReason::as_str),
    };
    let only = |f: fn(&mut Buckets, i64), n: i64| {
        let mut b = Buckets::default();
        f(&mut b, n);
        b
    };
    // Each simple kind is one guarded move on the source warehouse; a transfer adds the inbound
    // move; a count books the difference it finds.
    let (guard, delta) = match kind {
        AdjustKind::Receive => (Guard::None, only(|b, n| b.total = n, q)),
        AdjustKind::WriteOff | AdjustKind::Transfer => {
            (Guard::Available(q), only(|b, n| b.total = -n, q))
        }
        AdjustKind::Freeze => (Guard::Available(q), only(|b, n| b.frozen = n, q)),
        AdjustKind::Unfreeze => (Guard::Frozen(q), only(|b, n| b.frozen = -n, q)),
        AdjustKind::Count => (Guard::None, Buckets::default()),
    };
    let held = NewHold {
        reason_code: reason_code.map(AdjustReason::as_str),
        reason,
        release_on: release_on.as_deref(),
        actor: who,
    };
    if kind == AdjustKind::Count {
        ensure_balance(tx, now, merchant_id, sku.id, from.id).await?;
        let counted = Counted {
            qty: q,
            expected_on_hand: c.expected_on_hand,
        };
        let why = (reason.as_str(), reason_code.map(AdjustReason::as_str));
        count(tx, now, (merchant_id, sku, from), counted, why, who).await?;
    } else {
        if kind == AdjustKind::Receive {
            ensure_balance(tx, now, merchant_id, sku.id, from.id).await?;
        }
        let ledger_qty = if kind == AdjustKind::Transfer { -q } else { q };
        if apply(
            tx,
            now,
            merchant_id,
            sku.id,
            from.id,
            guard,
            &mv(kind.as_str(), ledger_qty, delta),
        )
        .await?
        .is_none()
        {
            // The figures in the message are filled in after the rollback (`with_figures`).
            let code = if kind == AdjustKind::Unfreeze {
                "insufficient_frozen"
            } else {
                "insufficient_stock"
            };
            return Err(DomainError::conflict(
                code,
                String::new(),
                serde_json::json!({}),
            ));
        }
        // The frozen bucket moved: its holds move with it, in the same transaction.
        if kind == AdjustKind::Freeze {
            holds::record(tx, now, (merchant_id, sku.id, from.id), q, &held).await?;
        }
        if kind == AdjustKind::Unfreeze
            && holds::release(tx, now, (sku.id, from.id), q, c.hold_id)
                .await?
                .is_none()
        {
            return Err(DomainError::conflict(
                "insufficient_held",
                messages::hold_too_small(q),
                serde_json::json!({ "sku": sku.code, "warehouse": from.slug, "hold_id": c.hold_id }),
            ));
        }
        if let (Some(to), AdjustKind::Transfer) = (&to, kind) {
            ensure_balance(tx, now, merchant_id, sku.id, to.id).await?;
            apply(
                tx,
                now,
                merchant_id,
                sku.id,
                to.id,
                Guard::None,
                &mv("TRANSFER", q, only(|b, n| b.total = n, q)),
            )
            .await?;
        }
    }
    crate::domain::trail::audit::record(
        tx,
        now,
        actor,
        Some(merchant_id),
        &format!("stock.{}", kind.as_str().to_lowercase()),
        &format!("sku:{}", sku.code),
        &format!("{q} @ {} — {reason}", from.slug),
    )
    .await?;
    Ok(())
}

/// A stock count: the counted quantity becomes the on-hand quantity; the difference is booked.
/// Refused when fewer were counted than orders hold and staff froze (those units must exist).
/// What a count found: the quantity on hand, and the on-hand figure the person saw when they
/// confirmed it (from the back office; the API sends none).
struct Counted {
    qty: i64,
    expected_on_hand: Option<i64>,
}

async fn count(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    (merchant_id, sku, wh): (MerchantId, &Sku, &WarehouseRef),
    Counted {
        qty: counted_qty,
        expected_on_hand,
    }: Counted,
    (reason, reason_code): (&str, Option<&str>),
    actor: &str,
) -> DomainResult<()> {
    // Optimistic: read the on-hand figure, then book the difference only if it is still the same.
    for _ in 0..20 {
        let current: Buckets = sqlx::query_as("SELECT total, locked, sold, frozen FROM stock_balances WHERE sku_id = $1 AND warehouse_id = $2")
            .bind(sku.id)
            .bind(wh.id)
            .fetch_one(&mut **tx)
            .await?;
        if let Some(expected) = expected_on_hand {
            if expected != current.on_hand() {
                return Err(DomainError::conflict(
                    "stock_changed",
                    messages::count_stale(expected, current.on_hand()),
                    serde_json::json!({ "sku": sku.code, "warehouse": wh.slug, "on_hand": current.on_hand() }),
                ));
            }
        }
        if counted_qty < current.locked + current.frozen {
            return Err(DomainError::conflict(
                "count_below_held",
                messages::count_below_held(counted_qty, current.locked, current.frozen),
                serde_json::json!({ "sku": sku.code, "warehouse": wh.slug, "locked": current.locked, "frozen": current.frozen }),
            ));
        }
        let diff = counted_qty - current.on_hand();
        let mv = Move {
            kind: "COUNT",
            qty: diff,
            delta: Buckets {
                total: diff,
                ..Default::default()
            },
            reason,
            reason_code,
            actor,
            order_id: None,
        };
        if apply(
            tx,
            now,
            merchant_id,
            sku.id,
            wh.id,
            Guard::OnHand(current.on_hand()),
            &mv,
        )
        .await?
        .is_some()
        {
            return Ok(());
        }
    }
    Err(DomainError::Internal(
        "stock count kept racing with other changes".into(),
    ))
}

fn first_field(e: DomainError) -> FieldError {
    match e {
        DomainError::Invalid(mut v) if !v.is_empty() => v.remove(0),
        other => FieldError::new("sku", other.code(), other.message()),
    }
}

pub use crate::domain::kernel::validate::{idempotency_key, IDEMPOTENCY_KEY_MAX};

/// Claims an idempotency key inside the transaction. Returns None when this request is the
/// first (go ahead), or Some(()) when the key was already used (replay the stored answer).
pub async fn claim_key(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    scope: &str,
    key: &str,
    fingerprint: &str,
) -> Result<Option<()>, sqlx::Error> {
    let claimed: Option<i64> = sqlx::query_scalar(
        "INSERT INTO idempotent_requests (merchant_id, scope, idem_key, fingerprint, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (merchant_id, scope, idem_key) DO NOTHING RETURNING id",
    )
    .bind(merchant_id)
    .bind(scope)
    .bind(key.trim())
    .bind(fingerprint)
    .bind(now)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(if claimed.is_some() { None } else { Some(()) })
}

pub async fn store_answer<T: Serialize>(
    tx: &mut Transaction<'_, Any>,
    merchant_id: MerchantId,
    scope: &str,
    key: &str,
    answer: &T,
) -> DomainResult<()> {
    let json = serde_json::to_string(answer).map_err(|e| DomainError::Internal(e.to_string()))?;
    sqlx::query("UPDATE idempotent_requests SET response = $1 WHERE merchant_id = $2 AND scope = $3 AND idem_key = $4")
        .bind(json)
        .bind(merchant_id)
        .bind(scope)
        .bind(key.trim())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The stored first answer for a key, or a conflict when the key was used for something else.
pub async fn replay_answer<T: for<'de> Deserialize<'de>>(
    db: &Db,
    merchant_id: MerchantId,
    scope: &str,
    key: &str,
    fingerprint: &str,
    _: (),
) -> DomainResult<T> {
    let (stored_fp, response): (String, String) =
        sqlx::query_as("SELECT fingerprint, response FROM idempotent_requests WHERE merchant_id = $1 AND scope = $2 AND idem_key = $3")
            .bind(merchant_id)
            .bind(scope)
            .bind(key.trim())
            .fetch_one(&db.pool)
            .await?;
    if stored_fp != fingerprint {
        return Err(DomainError::conflict(
            "idempotency_conflict",
            messages::idempotency_conflict(key.trim()),
            serde_json::json!({ "idempotency_key": key.trim() }),
        ));
    }
    serde_json::from_str(&response)
        .map_err(|e| DomainError::Internal(format!("stored answer: {e}")))
}
