//! Orders holding stock: reserve → confirm | release | expire, idempotent by order id, plus
//! returns. The order header's conditional status change decides every race: whoever moves it
//! out of RESERVED owns the lines' moves.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use sqlx::{Any, FromRow, Transaction};

use super::catalog::UnitType;
use super::code_keys::CodeKeys;
use super::error::DomainResult;
use super::gate;
use super::stock::{self, Buckets, Guard, Move};
use super::validate::ms_to_rfc3339;
use super::{Actor, DomainError, FieldError};
use crate::infra::counters::{CodeAnswer, Settle, StockAnswer, Subject};
use crate::infra::db::{now_ms, Db};
use crate::messages;

pub const ORDER_ID_MAX: usize = 128;
pub const MAX_LINES: usize = 100;
pub const DEFAULT_TTL_SECONDS: i64 = 15 * 60;

#[derive(Debug, Clone)]
pub struct ItemInput {
    pub sku: String,
    pub qty: i64,
    pub warehouse: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ReserveInput {
    pub order_id: String,
    pub items: Vec<ItemInput>,
    pub ttl_seconds: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ItemView {
    pub sku: String,
    pub qty: i64,
    /// Goods: the warehouse holding the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse: Option<String>,
    /// Vouchers of a paid order: the codes themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codes: Option<Vec<String>>,
}

/// An order's reservation as the API answers it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReservationView {
    pub order_id: String,
    pub status: ReservationStatus,
    pub expires_at: String,
    pub items: Vec<ItemView>,
}

#[derive(Debug, Clone, FromRow)]
struct Header {
    id: i64,
    #[sqlx(try_from = "String")]
    status: ReservationStatus,
    fingerprint: String,
    expires_at: i64,
}

#[derive(Debug, Clone, FromRow)]
struct Line {
    id: i64,
    sku_id: i64,
    warehouse_id: i64,
    qty: i64,
}

pub fn order_id(raw: &str) -> Result<String, FieldError> {
    let v = raw.trim();
    if v.is_empty() || v.len() > ORDER_ID_MAX || v.chars().any(|c| c.is_control()) {
        return Err(FieldError::new(
            "order_id",
            "invalid_order_id",
            messages::bad_order_id(ORDER_ID_MAX),
        ));
    }
    Ok(v.to_string())
}

pub fn ttl(raw: Option<i64>, max: i64) -> Result<i64, FieldError> {
    match raw {
        None => Ok(DEFAULT_TTL_SECONDS.min(max)),
        Some(t) if (1..=max).contains(&t) => Ok(t),
        Some(_) => Err(FieldError::new(
            "ttl_seconds",
            "invalid_ttl",
            messages::bad_ttl(max),
        )),
    }
}

/// The request's items in a canonical order, so a retry with lines shuffled is the same request.
fn fingerprint(items: &[ItemInput]) -> String {
    let mut parts: Vec<String> = items
        .iter()
        .map(|i| {
            format!(
                "{}:{}:{}",
                i.sku.trim(),
                i.qty,
                i.warehouse.as_deref().unwrap_or("").trim()
            )
        })
        .collect();
    parts.sort();
    parts.join(",")
}

struct ResolvedItem {
    sku_id: i64,
    code: String,
    qty: i64,
    warehouse_id: Option<i64>,
    /// Sold as codes (a voucher) rather than from stock.
    is_code: bool,
}

/// A SKU an order can hold: goods (stock) or a voucher (codes). Services are booked, not reserved.
async fn orderable_sku(
    db: &Db,
    merchant_id: i64,
    code: &str,
    field: &str,
) -> DomainResult<super::catalog::Sku> {
    match super::catalog::sku_by_code(db, merchant_id, code).await {
        Ok(s) if s.unit_type == UnitType::Code => Ok(s),
        Ok(s) => super::catalog::of_unit(s, field, UnitType::Quantity),
        Err(DomainError::NotFound(_)) => Err(DomainError::field(
            field,
            "unknown_sku",
            messages::unknown_sku(code.trim()),
        )),
        Err(e) => Err(e),
    }
}

/// Holds every item or none. Without a warehouse, a line goes to the highest-priority warehouse
/// that can cover it whole.
pub async fn reserve(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: i64,
    input: ReserveInput,
    max_ttl: i64,
) -> DomainResult<ReservationView> {
    let started = std::time::Instant::now();
    let r = reserve_inner(db, keys, actor, merchant_id, input, max_ttl).await;
    crate::telemetry::observe_op("reserve", started, super::error::outcome(&r));
    r
}

async fn reserve_inner(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: i64,
    input: ReserveInput,
    max_ttl: i64,
) -> DomainResult<ReservationView> {
    let mut errs = super::validate::Errors::default();
    let order = errs.take(order_id(&input.order_id));
    let ttl = errs.take(ttl(input.ttl_seconds, max_ttl));
    if input.items.is_empty() {
        errs.push(FieldError::new(
            "items",
            "required",
            messages::required("items"),
        ));
    }
    if input.items.len() > MAX_LINES {
        errs.push(FieldError::new(
            "items",
            "too_many",
            messages::too_many_lines(MAX_LINES),
        ));
    }
    let mut seen = HashSet::new();
    let mut resolved = Vec::new();
    for (i, item) in input.items.iter().enumerate() {
        // A line's field path is only formatted for an error: most lines have none.
        let field = |f: &str| format!("items[{i}].{f}");
        let at = |mut e: FieldError, f: &str| {
            e.field = field(f);
            e
        };
        if let Err(e) = stock::qty("qty", item.qty) {
            errs.push(at(e, "qty"));
        }
        if !seen.insert(item.sku.trim().to_string()) {
            errs.push(FieldError::new(
                &field("sku"),
                "duplicate_sku",
                messages::duplicate_line(item.sku.trim()),
            ));
            continue;
        }
        let sku = match orderable_sku(db, merchant_id, &item.sku, "sku").await {
            Ok(s) => s,
            Err(DomainError::Invalid(v)) => {
                errs.append(&mut v.into_iter().map(|e| at(e, "sku")).collect());
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some(finding) = sku.frozen_finding_id {
            errs.push(FieldError::new(
                &field("sku"),
                "sku_frozen",
                messages::sku_frozen(&sku.code, finding),
            ));
            continue;
        }
        // Draft, offline, outside its sale window or unpriced: the same rules as its verdict.
        if let Some(why) = super::sellable::not_on_sale(db, &sku).await? {
            errs.push(FieldError::new(
                &field("sku"),
                "not_on_sale",
                messages::not_on_sale(&sku.code, &why.message),
            ));
            continue;
        }
        let is_code = sku.unit_type == UnitType::Code;
        let warehouse_id = match item
            .warehouse
            .as_deref()
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            None => None,
            Some(_) if is_code => {
                errs.push(FieldError::new(
                    &field("warehouse"),
                    "warehouse_not_applicable",
                    messages::warehouse_not_applicable(&sku.code),
                ));
                continue;
            }
            Some(slug) => match stock::warehouse_by_slug(db, merchant_id, slug).await? {
                Some(w) => Some(w.id),
                None => {
                    errs.push(FieldError::new(
                        &field("warehouse"),
                        "unknown_warehouse",
                        messages::unknown_warehouse(slug),
                    ));
                    continue;
                }
            },
        };
        resolved.push(ResolvedItem {
            sku_id: sku.id,
            code: sku.code,
            qty: item.qty,
            warehouse_id,
            is_code,
        });
    }
    // Every field that failed left its error and a None: go on only when all parsed.
    let (Some(order), Some(ttl), true) = (order, ttl, errs.is_empty()) else {
        return Err(errs.refusal());
    };
    // The Redis gate first, when on: a "no" from it answers without touching SQL.
    let plan = match gate_lines(db, &order, &resolved, ttl).await? {
        Gated::Refused(e) => return Err(e),
        Gated::Held(plan) => (Some(plan), false),
        Gated::Bypass => (None, false),
        Gated::Seen => (None, true),
    };
    let (plan, seen) = plan;
    let via_gate = plan.is_some();
    let fp = fingerprint(&input.items);

    // Cheap answers next, without taking a write lock: a retry of a known order replays its
    // answer, and a line no single warehouse can cover is refused. Without the gate, almost every
    // request of a sold-out flash sale ends here. The conditional UPDATE below stays the authority.
    if !via_gate {
        if let Some(h) = header(db, merchant_id, &order).await? {
            if h.fingerprint != fp {
                return Err(DomainError::conflict(
                    "order_conflict",
                    messages::order_conflict(&order),
                    serde_json::json!({ "order_id": order }),
                ));
            }
            return Box::pin(view(db, keys, merchant_id, &order)).await;
        }
        for item in &resolved {
            let available = if item.is_code {
                super::codes::sellable_count(db, item.sku_id).await?
            } else {
                best_available(db, item.sku_id, item.warehouse_id).await?
            };
            if available < item.qty {
                return Err(insufficient(item, available));
            }
        }
    }

    let now = now_ms();
    let expires_at = now + ttl * 1000;

    // Boxed, like the replies below: their futures are large, and held inline they would make
    // every request's future as large, to be allocated and copied even when Redis says no.
    let hold = Hold {
        order: &order,
        fp: &fp,
        resolved: &resolved,
        plan: plan.as_deref(),
        now,
        expires_at,
    };
    let outcome = Box::pin(hold_in_sql(db, actor, merchant_id, hold)).await;
    match outcome {
        Ok(SqlHold::Held(stock_lines)) => {
            if seen {
                // Redis recorded this order for a twin still on its way to SQL, and this request
                // won there without Redis counting it: the twin will find the order known and give
                // its Redis hold back, so Redis takes these units now, where SQL put them.
                gate::stock_mirror(db, &stock_lines).await;
            }
            if !via_gate {
                if !seen {
                    gate::touched(db, resolved.iter().map(ResolvedItem::subject));
                }
                // Codes taken without the pool must leave it, or it would offer them again.
                for item in resolved.iter().filter(|i| i.is_code) {
                    gate::codes_taken_outside(db, merchant_id, &order, item.sku_id).await?;
                }
            }
            Box::pin(view(db, keys, merchant_id, &order)).await
        }
        Ok(SqlHold::Known) => {
            // The order was seen before: the same request gets the same answer, another is a conflict.
            if let Some(plan) = &plan {
                undo(db, &order, &resolved, plan).await;
            }
            let header = header(db, merchant_id, &order)
                .await?
                .ok_or(DomainError::NotFound("reservation"))?;
            if header.fingerprint != fp {
                return Err(DomainError::conflict(
                    "order_conflict",
                    messages::order_conflict(&order),
                    serde_json::json!({ "order_id": order }),
                ));
            }
            Box::pin(view(db, keys, merchant_id, &order)).await
        }
        Ok(SqlHold::Short(i, stale)) => {
            if let Some(plan) = &plan {
                undo_except(db, &order, &resolved, plan, &stale).await;
            }
            let item = &resolved[i];
            let available = if item.is_code {
                super::codes::sellable_count(db, item.sku_id).await?
            } else {
                best_available(db, item.sku_id, item.warehouse_id).await?
            };
            Err(insufficient(item, available))
        }
        Err(e) => {
            if let Some(plan) = &plan {
                undo(db, &order, &resolved, plan).await;
            }
            Err(e)
        }
    }
}

/// What SQL made of a hold.
enum SqlHold {
    /// Held; the stock lines as (SKU, warehouse, qty).
    Held(Vec<(i64, i64, i64)>),
    /// The order already exists.
    Known,
    /// Line `i` could not be covered; the code ids SQL found already taken (stale in Redis).
    Short(usize, Vec<i64>),
}

/// One line's hold granted by the gate.
#[derive(Debug, Clone)]
enum LinePlan {
    Stock { warehouse: i64 },
    Codes { ids: Vec<i64> },
}

enum Gated {
    Refused(DomainError),
    Held(Vec<LinePlan>),
    /// Redis is unavailable: SQL alone.
    Bypass,
    /// Redis already holds for this order (a twin of this request, or its first try, in flight):
    /// SQL alone, which replays the order's answer or, when this request gets there first, holds.
    Seen,
}

impl ResolvedItem {
    fn subject(&self) -> Subject {
        if self.is_code {
            Subject::Codes(self.sku_id)
        } else {
            Subject::Stock(self.sku_id)
        }
    }
}

/// Asks the gate for every line; a refusal undoes the lines already held.
async fn gate_lines(
    db: &Db,
    order: &str,
    resolved: &[ResolvedItem],
    ttl: i64,
) -> DomainResult<Gated> {
    let Some(gate) = gate::active(db) else {
        return Ok(Gated::Bypass);
    };
    // Order records outlive the hold so that a late retry is still recognised.
    let record_ttl = ttl + 3600;
    let mut plan = Vec::with_capacity(resolved.len());
    for item in resolved {
        let step = if item.is_code {
            match gate::code_take(db, gate, item.sku_id, order, item.qty, record_ttl).await? {
                Some(CodeAnswer::Held { ids, .. }) => Ok(LinePlan::Codes { ids }),
                Some(CodeAnswer::No(n)) => Err(Gated::Refused(insufficient(item, n))),
                // A twin that holds codes in Redis gives back its own ids when SQL finds the
                // order known; codes this request takes in SQL leave the pool: nothing to mirror.
                _ => Err(Gated::Bypass),
            }
        } else {
            match gate::stock_hold(
                db,
                gate,
                item.sku_id,
                order,
                item.qty,
                item.warehouse_id,
                record_ttl,
            )
            .await?
            {
                Some(StockAnswer::Held(warehouse)) => Ok(LinePlan::Stock { warehouse }),
                Some(StockAnswer::No(n)) => Err(Gated::Refused(insufficient(item, n))),
                Some(StockAnswer::Seen) => Err(Gated::Seen),
                _ => Err(Gated::Bypass),
            }
        };
        match step {
            Ok(p) => plan.push(p),
            Err(stop) => {
                undo(db, order, &resolved[..plan.len()], &plan).await;
                crate::telemetry::count_gate(
                    "reserve",
                    match stop {
                        Gated::Refused(_) => "no",
                        Gated::Seen => "seen",
                        _ => "bypass",
                    },
                );
                return Ok(stop);
            }
        }
    }
    crate::telemetry::count_gate("reserve", "yes");
    Ok(Gated::Held(plan))
}

/// Gives back in Redis what the gate held for lines SQL did not take.
async fn undo(db: &Db, order: &str, resolved: &[ResolvedItem], plan: &[LinePlan]) {
    undo_except(db, order, resolved, plan, &[]).await
}

async fn undo_except(
    db: &Db,
    order: &str,
    resolved: &[ResolvedItem],
    plan: &[LinePlan],
    stale: &[i64],
) {
    for (item, p) in resolved.iter().zip(plan) {
        match p {
            LinePlan::Stock { warehouse } => {
                gate::stock_settle(db, &[(item.sku_id, *warehouse)], order, Settle::Undo).await
            }
            LinePlan::Codes { ids } => {
                let back: Vec<i64> = ids.iter().copied().filter(|i| !stale.contains(i)).collect();
                gate::code_give_back(db, item.sku_id, order, &back, true).await
            }
        }
    }
}

/// An order as the SQL transaction writes it: its id and fingerprint, its lines, the plan Redis
/// made for them (when it did), and when it was made and expires.
struct Hold<'a> {
    order: &'a str,
    fp: &'a str,
    resolved: &'a [ResolvedItem],
    plan: Option<&'a [LinePlan]>,
    now: i64,
    expires_at: i64,
}

/// The SQL transaction of a reservation: the header, then every line, or nothing.
async fn hold_in_sql(
    db: &Db,
    actor: &Actor,
    merchant_id: i64,
    hold: Hold<'_>,
) -> DomainResult<SqlHold> {
    let Hold {
        order,
        fp,
        resolved,
        plan,
        now,
        expires_at,
    } = hold;
    let mut tx = db.begin_write().await?;
    let header_id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO reservations (merchant_id, order_id, status, fingerprint, expires_at, created_at, updated_at)
         VALUES ($1, $2, 'RESERVED', $3, $4, $5, $5)
         ON CONFLICT (merchant_id, order_id) DO NOTHING RETURNING id",
    )
    .bind(merchant_id)
    .bind(order)
    .bind(fp)
    .bind(expires_at)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(header_id) = header_id else {
        tx.rollback().await?;
        return Ok(SqlHold::Known);
    };

    // Everything that does not depend on the balances is written before the first balance UPDATE:
    // that UPDATE locks the row until COMMIT, and on a hot SKU every statement after it is time all
    // the other buyers of that SKU wait.
    let lines: Vec<String> = resolved
        .iter()
        .map(|i| format!("{} × {}", i.code, i.qty))
        .collect();
    super::audit::record(
        &mut tx,
        actor,
        Some(merchant_id),
        "reservation.reserve",
        &format!("order:{order}"),
        &lines.join(", "),
    )
    .await?;

    let mut stock_lines = Vec::new();
    for (i, item) in resolved.iter().enumerate() {
        // The authority on freezes: the gate's SKU cache may be up to two seconds old.
        let frozen: Option<i64> =
            sqlx::query_scalar("SELECT frozen_finding_id FROM skus WHERE id = $1")
                .bind(item.sku_id)
                .fetch_one(&mut *tx)
                .await?;
        if let Some(finding) = frozen {
            tx.rollback().await?;
            return Err(DomainError::field(
                &format!("items[{i}].sku"),
                "sku_frozen",
                messages::sku_frozen(&item.code, finding),
            ));
        }
        let planned = plan.and_then(|p| p.get(i));
        if item.is_code {
            let preferred = match planned {
                Some(LinePlan::Codes { ids }) => ids.as_slice(),
                _ => &[],
            };
            let stale =
                hold_codes(&mut tx, merchant_id, header_id, order, item, now, preferred).await?;
            if let Some(stale) = stale {
                tx.rollback().await?;
                return Ok(SqlHold::Short(i, stale));
            }
            continue;
        }
        let candidates: Vec<i64> = match (planned, item.warehouse_id) {
            (Some(LinePlan::Stock { warehouse }), _) => vec![*warehouse],
            (_, Some(w)) => vec![w],
            (_, None) => sqlx::query_scalar(
                "SELECT b.warehouse_id FROM stock_balances b JOIN warehouses w ON w.id = b.warehouse_id
                 WHERE b.sku_id = $1 AND b.total - b.locked - b.sold - b.frozen >= $2
                 ORDER BY w.priority DESC, w.id",
            )
            .bind(item.sku_id)
            .bind(item.qty)
            .fetch_all(&mut *tx)
            .await?,
        };
        // With one candidate (the gate's plan, or the order's warehouse) the line row goes in
        // first, for the same reason; if the balance then refuses, the transaction rolls back.
        let line_first = candidates.len() == 1;
        let line = StockLine {
            merchant_id,
            header_id,
            order,
            item,
            now,
            expires_at,
        };
        let mut held = false;
        for wh in candidates {
            if line_first {
                line.insert(&mut tx, wh).await?;
            }
            let mv = Move {
                kind: "RESERVE",
                qty: item.qty,
                delta: Buckets {
                    locked: item.qty,
                    ..Default::default()
                },
                reason: "",
                actor: &actor.label,
                order_id: Some(order),
            };
            if stock::apply(
                &mut tx,
                merchant_id,
                item.sku_id,
                wh,
                Guard::Available(item.qty),
                &mv,
            )
            .await?
            .is_some()
            {
                if !line_first {
                    line.insert(&mut tx, wh).await?;
                }
                stock_lines.push((item.sku_id, wh, item.qty));
                held = true;
                break;
            }
        }
        if !held {
            tx.rollback().await?;
            return Ok(SqlHold::Short(i, Vec::new()));
        }
    }
    tx.commit().await?;
    Ok(SqlHold::Held(stock_lines))
}

/// One reservation line of goods: `qty` of a SKU held until `expires_at`, in the warehouse
/// given to `insert`.
struct StockLine<'a> {
    merchant_id: i64,
    header_id: i64,
    order: &'a str,
    item: &'a ResolvedItem,
    now: i64,
    expires_at: i64,
}

impl StockLine<'_> {
    async fn insert(
        &self,
        tx: &mut Transaction<'_, Any>,
        warehouse_id: i64,
    ) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO stock_reservations (merchant_id, reservation_id, order_id, sku_id, warehouse_id, qty, status,
                expires_at, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, 'RESERVED', $7, $8, $8)",
        )
        .bind(self.merchant_id)
        .bind(self.header_id)
        .bind(self.order)
        .bind(self.item.sku_id)
        .bind(warehouse_id)
        .bind(self.item.qty)
        .bind(self.expires_at)
        .bind(self.now)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}

/// Holds `qty` specific codes: each is a conditional move AVAILABLE → BOOKING, and a code lost to
/// a concurrent order just means trying the next one. The gate's ids (`preferred`) are tried
/// first; SQL candidates are shuffled so that racing orders do not all fight over the lowest id.
/// Returns None when held, or Some(ids the gate offered that SQL found already taken).
async fn hold_codes(
    tx: &mut Transaction<'_, Any>,
    merchant_id: i64,
    header_id: i64,
    order: &str,
    item: &ResolvedItem,
    now: i64,
    preferred: &[i64],
) -> DomainResult<Option<Vec<i64>>> {
    use rand::seq::SliceRandom;
    let mut held = 0;
    let mut stale = Vec::new();
    let take_sql = format!(
        "UPDATE codes SET status = 'BOOKING', reservation_id = $1, order_id = $3, version = version + 1, updated_at = $2
         WHERE id = $4 AND sku_id = $5 AND {}",
        super::codes::SELLABLE
    );
    let take = |id: i64| {
        sqlx::query(&take_sql)
            .bind(header_id)
            .bind(now)
            .bind(order.to_string())
            .bind(id)
            .bind(item.sku_id)
    };
    for &id in preferred {
        let took = take(id).execute(&mut **tx).await?.rows_affected() as i64;
        if took == 0 {
            stale.push(id);
        }
        held += took;
    }
    for _round in 0..5 {
        if held >= item.qty {
            break;
        }
        let limit = (item.qty - held) * 4 + 16;
        let mut candidates: Vec<i64> = sqlx::query_scalar(&format!(
            "SELECT id FROM codes WHERE sku_id = $1 AND {} ORDER BY id LIMIT $3",
            super::codes::SELLABLE
        ))
        .bind(item.sku_id)
        .bind(now)
        .bind(limit)
        .fetch_all(&mut **tx)
        .await?;
        let exhausted = (candidates.len() as i64) < limit;
        candidates.shuffle(&mut rand::rng());
        for id in candidates {
            if held == item.qty {
                break;
            }
            held += take(id).execute(&mut **tx).await?.rows_affected() as i64;
        }
        if exhausted {
            break;
        }
    }
    if held < item.qty {
        return Ok(Some(stale));
    }
    sqlx::query("INSERT INTO code_reservations (merchant_id, reservation_id, sku_id, qty, status, created_at) VALUES ($1, $2, $3, $4, 'RESERVED', $5)")
        .bind(merchant_id)
        .bind(header_id)
        .bind(item.sku_id)
        .bind(item.qty)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(None)
}

fn insufficient(item: &ResolvedItem, available: i64) -> DomainError {
    DomainError::conflict(
        "insufficient_stock",
        messages::insufficient_stock(&item.code, item.qty, available),
        serde_json::json!({ "sku": item.code, "requested": item.qty, "available": available }),
    )
}

/// What one line could get: the given warehouse's available, or the best single warehouse's.
async fn best_available(db: &Db, sku_id: i64, warehouse_id: Option<i64>) -> DomainResult<i64> {
    let v: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(total - locked - sold - frozen) FROM stock_balances WHERE sku_id = $1 AND ($2 = 0 OR warehouse_id = $2)",
    )
    .bind(sku_id)
    .bind(warehouse_id.unwrap_or(0))
    .fetch_one(&db.pool)
    .await?;
    Ok(v.unwrap_or(0).max(0))
}

async fn header(db: &Db, merchant_id: i64, order: &str) -> DomainResult<Option<Header>> {
    Ok(sqlx::query_as("SELECT id, status, fingerprint, expires_at FROM reservations WHERE merchant_id = $1 AND order_id = $2")
        .bind(merchant_id)
        .bind(order.trim())
        .fetch_optional(&db.pool)
        .await?)
}

pub async fn view(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: i64,
    order: &str,
) -> DomainResult<ReservationView> {
    let h = header(db, merchant_id, order)
        .await?
        .ok_or(DomainError::NotFound("reservation"))?;
    let items: Vec<(String, i64, String)> = sqlx::query_as(
        "SELECT s.code, l.qty, w.slug FROM stock_reservations l
         JOIN skus s ON s.id = l.sku_id JOIN warehouses w ON w.id = l.warehouse_id
         WHERE l.reservation_id = $1 ORDER BY l.id",
    )
    .bind(h.id)
    .fetch_all(&db.pool)
    .await?;
    let mut items: Vec<ItemView> = items
        .into_iter()
        .map(|(sku, qty, warehouse)| ItemView {
            sku,
            qty,
            warehouse: Some(warehouse),
            codes: None,
        })
        .collect();
    let code_lines: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT l.sku_id, s.code, l.qty FROM code_reservations l JOIN skus s ON s.id = l.sku_id WHERE l.reservation_id = $1 ORDER BY l.id",
    )
    .bind(h.id)
    .fetch_all(&db.pool)
    .await?;
    for (sku_id, sku, qty) in code_lines {
        // Codes are handed over once paid, and again on every read of a paid order.
        let codes = if h.status == ReservationStatus::Confirmed {
            Some(super::codes::codes_of_reservation(db, keys, merchant_id, h.id, sku_id).await?)
        } else {
            None
        };
        items.push(ItemView {
            sku,
            qty,
            warehouse: None,
            codes,
        });
    }
    Ok(ReservationView {
        order_id: order.trim().to_string(),
        status: h.status,
        expires_at: ms_to_rfc3339(h.expires_at),
        items,
    })
}

async fn lines(tx: &mut Transaction<'_, Any>, header_id: i64) -> Result<Vec<Line>, sqlx::Error> {
    sqlx::query_as("SELECT id, sku_id, warehouse_id, qty FROM stock_reservations WHERE reservation_id = $1 AND status = 'RESERVED' ORDER BY id")
        .bind(header_id)
        .fetch_all(&mut **tx)
        .await
}

/// Moves every RESERVED line of a header whose status this transaction just changed.
async fn settle_lines(
    tx: &mut Transaction<'_, Any>,
    merchant_id: i64,
    header_id: i64,
    order: &str,
    to_status: &str,
    kind: &'static str,
    actor: &str,
) -> DomainResult<Settled> {
    let now = now_ms();
    let mut settled = Settled::default();
    if kind == "CONFIRM" {
        sqlx::query("UPDATE codes SET status = 'SOLD', sold_at = $1, version = version + 1, updated_at = $1 WHERE reservation_id = $2 AND status = 'BOOKING'")
            .bind(now)
            .bind(header_id)
            .execute(&mut **tx)
            .await?;
    } else {
        // Held codes go back to the pool; a SOLD code never does.
        let back: Vec<(i64, i64)> = sqlx::query_as(
            "UPDATE codes SET status = 'AVAILABLE', reservation_id = NULL, order_id = NULL, version = version + 1, updated_at = $1
             WHERE reservation_id = $2 AND status = 'BOOKING' RETURNING sku_id, id",
        )
        .bind(now)
        .bind(header_id)
        .fetch_all(&mut **tx)
        .await?;
        for (sku, id) in back {
            match settled.codes.iter_mut().find(|(s, _)| *s == sku) {
                Some((_, ids)) => ids.push(id),
                None => settled.codes.push((sku, vec![id])),
            }
        }
    }
    sqlx::query("UPDATE code_reservations SET status = $1 WHERE reservation_id = $2 AND status = 'RESERVED'")
        .bind(to_status)
        .bind(header_id)
        .execute(&mut **tx)
        .await?;
    for line in lines(tx, header_id).await? {
        let moved = sqlx::query("UPDATE stock_reservations SET status = $1, updated_at = $2 WHERE id = $3 AND status = 'RESERVED'")
            .bind(to_status)
            .bind(now_ms())
            .bind(line.id)
            .execute(&mut **tx)
            .await?;
        if moved.rows_affected() != 1 {
            continue;
        }
        let delta = if kind == "CONFIRM" {
            Buckets {
                locked: -line.qty,
                sold: line.qty,
                ..Default::default()
            }
        } else {
            Buckets {
                locked: -line.qty,
                ..Default::default()
            }
        };
        let mv = Move {
            kind,
            qty: line.qty,
            delta,
            reason: "",
            actor,
            order_id: Some(order),
        };
        if stock::apply(
            tx,
            merchant_id,
            line.sku_id,
            line.warehouse_id,
            Guard::Locked(line.qty),
            &mv,
        )
        .await?
        .is_none()
        {
            // The balance holds fewer locked units than this line: the books disagree. Refuse
            // rather than invent units; reconciliation will flag it.
            return Err(DomainError::Internal(format!(
                "order {order}: locked units missing for line {}",
                line.id
            )));
        }
        settled.stock.push((line.sku_id, line.warehouse_id));
    }
    Ok(settled)
}

crate::text_enum! {
    /// An order's hold: RESERVED until it is paid (CONFIRMED), cancelled (RELEASED) or runs out
    /// of time (EXPIRED).
    pub enum ReservationStatus {
        Reserved = "RESERVED",
        Confirmed = "CONFIRMED",
        Released = "RELEASED",
        Expired = "EXPIRED",
    }
}

/// What a settlement moved, for Redis to follow once SQL committed.
#[derive(Debug, Default)]
struct Settled {
    stock: Vec<(i64, i64)>,
    codes: Vec<(i64, Vec<i64>)>,
}

impl Settled {
    /// Mirrors the committed settlement in Redis: held units sold, or back to available (and
    /// held codes back to the pool).
    async fn follow(&self, db: &Db, order: &str, action: Settle) {
        gate::stock_settle(db, &self.stock, order, action).await;
        if action != Settle::Confirm {
            for (sku, ids) in &self.codes {
                gate::code_give_back(db, *sku, order, ids, false).await;
            }
        }
    }
}

/// How a RESERVED order settles. The three share one transition: the header's conditional
/// update, every line in the ledger, the audit row, one commit, then Redis follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settlement {
    /// Paid, while the hold lasts.
    Confirm,
    /// Cancelled by the order system, whenever it is still held.
    Release,
    /// The hold ran out (the expiry job, or a late payment finding it past its time).
    Expire,
}

impl Settlement {
    fn to(self) -> ReservationStatus {
        match self {
            Settlement::Confirm => ReservationStatus::Confirmed,
            Settlement::Release => ReservationStatus::Released,
            Settlement::Expire => ReservationStatus::Expired,
        }
    }
    /// The ledger rows' kind.
    fn ledger_kind(self) -> &'static str {
        match self {
            Settlement::Confirm => "CONFIRM",
            Settlement::Release => "RELEASE",
            Settlement::Expire => "EXPIRE",
        }
    }
    fn audit_action(self) -> &'static str {
        match self {
            Settlement::Confirm => "reservation.confirm",
            Settlement::Release => "reservation.release",
            Settlement::Expire => "reservation.expire",
        }
    }
    /// The header's condition besides being RESERVED (`$1` is now).
    fn when(self) -> &'static str {
        match self {
            Settlement::Confirm => "AND expires_at > $1",
            Settlement::Release => "",
            Settlement::Expire => "AND expires_at <= $1",
        }
    }
    fn redis(self) -> Settle {
        match self {
            Settlement::Confirm => Settle::Confirm,
            Settlement::Release | Settlement::Expire => Settle::Release,
        }
    }
}

/// Which order a settlement is about: by its id (from the API) or its header (from the sweep).
enum Which<'a> {
    Order(&'a str),
    Header(i64),
}

/// Settles a RESERVED order, or does nothing and answers None when it is not (any more) held
/// under the settlement's condition. Safe to race: the header's update decides.
async fn settle(
    db: &Db,
    actor: &Actor,
    merchant_id: i64,
    which: Which<'_>,
    s: Settlement,
) -> DomainResult<Option<String>> {
    let now = now_ms();
    let mut tx = db.begin_write().await?;
    let (column, to, when) = match which {
        Which::Order(_) => ("order_id", s.to(), s.when()),
        Which::Header(_) => ("id", s.to(), s.when()),
    };
    let sql = format!(
        "UPDATE reservations SET status = '{to}', updated_at = $1
         WHERE merchant_id = $2 AND {column} = $3 AND status = 'RESERVED' {when} RETURNING id, order_id"
    );
    let q = sqlx::query_as::<_, (i64, String)>(&sql)
        .bind(now)
        .bind(merchant_id);
    let q = match which {
        Which::Order(order) => q.bind(order.to_string()),
        Which::Header(id) => q.bind(id),
    };
    let Some((id, order)) = q.fetch_optional(&mut *tx).await? else {
        tx.rollback().await?;
        return Ok(None);
    };
    let settled = settle_lines(
        &mut tx,
        merchant_id,
        id,
        &order,
        to.as_str(),
        s.ledger_kind(),
        &actor.label,
    )
    .await?;
    let subject = format!("order:{order}");
    super::audit::record(
        &mut tx,
        actor,
        Some(merchant_id),
        s.audit_action(),
        &subject,
        "",
    )
    .await?;
    tx.commit().await?;
    settled.follow(db, &order, s.redis()).await;
    Ok(Some(order))
}

/// Payment arrived: locked → sold. Refused once the hold is gone, even if the expiry job has
/// not run yet, so a late payment never turns an expired hold into a sale.
pub async fn confirm(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: i64,
    order: &str,
) -> DomainResult<ReservationView> {
    let started = std::time::Instant::now();
    let r = confirm_inner(db, keys, actor, merchant_id, order).await;
    crate::telemetry::observe_op("confirm", started, super::error::outcome(&r));
    r
}

async fn confirm_inner(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: i64,
    order: &str,
) -> DomainResult<ReservationView> {
    let order = order.trim();
    let which = Which::Order(order);
    if settle(db, actor, merchant_id, which, Settlement::Confirm)
        .await?
        .is_some()
    {
        return view(db, keys, merchant_id, order).await;
    }
    let h = header(db, merchant_id, order)
        .await?
        .ok_or(DomainError::NotFound("reservation"))?;
    match h.status {
        ReservationStatus::Confirmed => view(db, keys, merchant_id, order).await,
        ReservationStatus::Reserved => {
            // Past its expiry but not yet swept: expire it now, then refuse.
            expire_one(db, merchant_id, h.id).await?;
            let status = header(db, merchant_id, order)
                .await?
                .map(|h| h.status.as_str())
                .unwrap_or_default();
            Err(released(order, status))
        }
        status => Err(released(order, status.as_str())),
    }
}

fn released(order: &str, status: &str) -> DomainError {
    DomainError::conflict(
        "reservation_released",
        messages::reservation_released(order, status),
        serde_json::json!({ "order_id": order, "status": status }),
    )
}

/// Order cancelled: locked → available. After payment this is refused (returns are their own flow).
pub async fn release(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: i64,
    order: &str,
) -> DomainResult<ReservationView> {
    let started = std::time::Instant::now();
    let r = release_inner(db, keys, actor, merchant_id, order).await;
    crate::telemetry::observe_op("release", started, super::error::outcome(&r));
    r
}

async fn release_inner(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: i64,
    order: &str,
) -> DomainResult<ReservationView> {
    let order = order.trim();
    let which = Which::Order(order);
    if settle(db, actor, merchant_id, which, Settlement::Release)
        .await?
        .is_some()
    {
        return view(db, keys, merchant_id, order).await;
    }
    let h = header(db, merchant_id, order)
        .await?
        .ok_or(DomainError::NotFound("reservation"))?;
    match h.status {
        ReservationStatus::Confirmed => Err(DomainError::conflict(
            "reservation_confirmed",
            messages::reservation_confirmed(order),
            serde_json::json!({ "order_id": order, "status": "CONFIRMED" }),
        )),
        // Already released or expired: the hold is gone either way; say so again.
        _ => view(db, keys, merchant_id, order).await,
    }
}

const EXPIRY_ACTOR: &str = "system:expiry";

/// Expires one reservation if it is still RESERVED and past its time. Safe to race.
pub async fn expire_one(db: &Db, merchant_id: i64, header_id: i64) -> DomainResult<bool> {
    let actor = Actor::job(EXPIRY_ACTOR);
    let which = Which::Header(header_id);
    Ok(settle(db, &actor, merchant_id, which, Settlement::Expire)
        .await?
        .is_some())
}

/// The expiry sweep: releases holds past their time. Returns how many it expired.
pub async fn expire_due(db: &Db, limit: i64) -> DomainResult<usize> {
    let due: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT id, merchant_id FROM reservations WHERE status = 'RESERVED' AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
    )
    .bind(now_ms())
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let mut n = 0;
    for (id, merchant_id) in due {
        if expire_one(db, merchant_id, id).await? {
            n += 1;
        }
    }
    Ok(n)
}

#[derive(Debug, Clone)]
pub struct ReturnInput {
    pub return_id: String,
    pub order_id: String,
    pub sku: String,
    pub qty: i64,
    pub condition: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReturnView {
    pub return_id: String,
    pub order_id: String,
    pub sku: String,
    pub qty: i64,
    pub condition: String,
    pub warehouse: String,
}

pub const CONDITIONS: [&str; 2] = ["RESELLABLE", "DAMAGED"];

/// Goods came back. RESELLABLE units return to total (sold stays, so sales figures stay true);
/// DAMAGED ones are recorded and make nothing sellable. Idempotent by return id.
pub async fn record_return(
    db: &Db,
    actor: &Actor,
    merchant_id: i64,
    input: ReturnInput,
) -> DomainResult<ReturnView> {
    let mut errs = super::validate::Errors::default();
    let return_id = stock::idempotency_key(&input.return_id)
        .map(str::to_string)
        .map_err(|mut e| {
            e.field = "return_id".into();
            errs.push(e)
        })
        .ok();
    let order = errs.take(order_id(&input.order_id));
    if let Err(e) = stock::qty("qty", input.qty) {
        errs.push(e);
    }
    let condition = errs.take(super::validate::choice(
        "condition",
        &input.condition,
        &CONDITIONS,
    ));
    let sku = match super::catalog::sku_by_code(db, merchant_id, &input.sku).await {
        Ok(s) if s.unit_type == UnitType::Code => {
            errs.push(FieldError::new(
                "sku",
                "code_not_returnable",
                messages::code_not_returnable(&s.code),
            ));
            None
        }
        _ => match stock::goods_sku(db, merchant_id, &input.sku, "sku").await {
            Ok(s) => Some(s),
            Err(DomainError::Invalid(mut v)) => {
                errs.append(&mut v);
                None
            }
            Err(e) => return Err(e),
        },
    };
    // Every field that failed left its error and a None: go on only when all parsed.
    let (Some(return_id), Some(order), Some(condition), Some(sku), true) =
        (return_id, order, condition, sku, errs.is_empty())
    else {
        return Err(errs.refusal());
    };
    let fp = format!("{order}|{}|{}|{condition}", sku.code, input.qty);
    let q = input.qty;

    let mut tx = db.begin_write().await?;
    if stock::claim_key(&mut tx, merchant_id, "return", &return_id, &fp)
        .await?
        .is_some()
    {
        tx.rollback().await?;
        return stock::replay_answer(db, merchant_id, "return", &return_id, &fp, ())
            .await
            .map_err(|e| match e {
                DomainError::Conflict {
                    code: "idempotency_conflict",
                    ..
                } => DomainError::conflict(
                    "return_conflict",
                    messages::return_conflict(&return_id),
                    serde_json::json!({ "return_id": return_id }),
                ),
                other => other,
            });
    }
    let line: Option<(i64, i64, String, String)> = sqlx::query_as(
        "SELECT l.id, l.warehouse_id, w.slug, r.status FROM reservations r
         JOIN stock_reservations l ON l.reservation_id = r.id JOIN warehouses w ON w.id = l.warehouse_id
         WHERE r.merchant_id = $1 AND r.order_id = $2 AND l.sku_id = $3",
    )
    .bind(merchant_id)
    .bind(&order)
    .bind(sku.id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((line_id, warehouse_id, warehouse, status)) = line else {
        tx.rollback().await?;
        return match header(db, merchant_id, &order).await? {
            None => Err(DomainError::NotFound("order")),
            Some(_) => Err(DomainError::conflict(
                "sku_not_in_order",
                messages::sku_not_in_order(&sku.code, &order),
                serde_json::json!({ "order_id": order, "sku": sku.code }),
            )),
        };
    };
    if ReservationStatus::parse(&status) != Some(ReservationStatus::Confirmed) {
        tx.rollback().await?;
        return Err(DomainError::conflict(
            "order_not_confirmed",
            messages::order_not_confirmed(&order),
            serde_json::json!({ "order_id": order, "status": status }),
        ));
    }
    let counted = sqlx::query("UPDATE stock_reservations SET returned = returned + $1, updated_at = $2 WHERE id = $3 AND returned + $1 <= qty")
        .bind(q)
        .bind(now_ms())
        .bind(line_id)
        .execute(&mut *tx)
        .await?;
    if counted.rows_affected() != 1 {
        tx.rollback().await?;
        let (bought, returned): (i64, i64) =
            sqlx::query_as("SELECT qty, returned FROM stock_reservations WHERE id = $1")
                .bind(line_id)
                .fetch_one(&db.pool)
                .await?;
        return Err(DomainError::conflict(
            "return_exceeds_order",
            messages::return_exceeds_order(bought - returned),
            serde_json::json!({ "order_id": order, "sku": sku.code, "returnable": bought - returned }),
        ));
    }
    let (kind, delta) = if condition == "RESELLABLE" {
        (
            "RETURN_RESTOCK",
            Buckets {
                total: q,
                ..Default::default()
            },
        )
    } else {
        ("RETURN_DAMAGED", Buckets::default())
    };
    let reason = format!("return {return_id}");
    let mv = Move {
        kind,
        qty: q,
        delta,
        reason: &reason,
        actor: &actor.label,
        order_id: Some(&order),
    };
    stock::apply(&mut tx, merchant_id, sku.id, warehouse_id, Guard::None, &mv).await?;
    let sku_id_of_return = sku.id;
    let answer = ReturnView {
        return_id: return_id.clone(),
        order_id: order,
        sku: sku.code,
        qty: q,
        condition: condition.to_string(),
        warehouse,
    };
    stock::store_answer(&mut tx, merchant_id, "return", &return_id, &answer).await?;
    super::audit::record(
        &mut tx,
        actor,
        Some(merchant_id),
        "stock.return",
        &format!("sku:{}", answer.sku),
        &format!(
            "{q} {condition} @ {} — order {} ({reason})",
            answer.warehouse, answer.order_id
        ),
    )
    .await?;
    tx.commit().await?;
    db.forget([Subject::Stock(sku_id_of_return)]).await;
    Ok(answer)
}
