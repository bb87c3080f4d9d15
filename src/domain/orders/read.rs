//! Orders as the back office reads them: every reservation with its lines, open holds first,
//! filtered and paged; and one order with what it produced (its timeline from the audit log, its
//! ledger rows, its bookings, its exceptions). Reading only: holds move in `reservations`.

use sqlx::FromRow;

use crate::bind_args;
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::filters::{Arg, Where};
use crate::domain::orders::exceptions::{self, Exception};
use crate::domain::orders::ReservationStatus;
use crate::domain::stock::ledger::{self, OrderEntry};
use crate::domain::{DomainError, MerchantId, Scope, StoreId};
use crate::infra::db::Db;

pub const PAGE_SIZE: i64 = 50;

/// Who reads: a merchant's people (or every merchant, for operators), and for store staff the
/// store whose bookings they may see (an order is theirs to read when it booked a place there).
#[derive(Debug, Clone, Copy)]
pub struct Reader {
    pub scope: Scope,
    pub store: Option<StoreId>,
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<ReservationStatus>,
    /// A SKU's code: orders with a line of it.
    pub sku: String,
    /// The order id, exactly.
    pub order_id: String,
    /// Created at or after (Unix ms).
    pub from: Option<i64>,
    /// Created before (Unix ms).
    pub to: Option<i64>,
    /// Operators: one merchant.
    pub merchant_id: Option<MerchantId>,
    /// A column to sort by; None: open holds first, soonest to expire, then newest first.
    pub sort: Option<OrderSort>,
    pub desc: bool,
}

crate::text_enum! {
    /// The columns the orders list sorts by.
    pub enum OrderSort {
        Order = "order",
        Status = "status",
        Created = "created",
        Expires = "expires",
    }
}

impl OrderSort {
    /// The ORDER BY of this column (the id breaks ties, in the same direction).
    fn order_by(self, desc: bool) -> String {
        let dir = if desc { "DESC" } else { "ASC" };
        let column = match self {
            OrderSort::Order => "r.order_id",
            OrderSort::Status => "r.status",
            OrderSort::Created => "r.created_at",
            OrderSort::Expires => "r.expires_at",
        };
        format!("{column} {dir}, r.id {dir}")
    }
}

/// One line of an order.
#[derive(Debug, Clone, FromRow)]
pub struct Line {
    pub reservation_id: i64,
    pub sku_id: i64,
    pub sku: String,
    pub qty: i64,
    /// Goods: the warehouse (its name) where it is (or was) held. Codes and places: none.
    pub warehouse: Option<String>,
    /// 1 for a line of codes.
    pub codes: i64,
    #[sqlx(try_from = "String")]
    pub status: ReservationStatus,
    /// How a goods line holds its units (codes: `locked`, as BOOKING).
    #[sqlx(try_from = "String")]
    pub hold: crate::domain::orders::LineHold,
    /// A booking in the order: its slot's start (its places are `qty`).
    pub slot_starts_at: Option<i64>,
}

impl Line {
    pub fn is_codes(&self) -> bool {
        self.codes != 0
    }
}

#[derive(Debug, Clone, FromRow)]
struct Head {
    id: i64,
    merchant_id: MerchantId,
    merchant_slug: String,
    order_id: String,
    #[sqlx(try_from = "String")]
    status: ReservationStatus,
    payment_ref: Option<String>,
    late_payment: i64,
    release_reason: String,
    expires_at: i64,
    created_at: i64,
    updated_at: i64,
    open_exception: Option<i64>,
}

/// An order in the list and at the top of its page.
#[derive(Debug, Clone)]
pub struct Order {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub merchant: String,
    pub order_id: String,
    pub status: ReservationStatus,
    pub payment_ref: Option<String>,
    pub late_payment: bool,
    pub release_reason: String,
    pub expires_at: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// An exception still to settle.
    pub open_exception: Option<i64>,
    pub lines: Vec<Line>,
}

impl Order {
    /// Still holding, and the hold still running: what "Release hold" applies to.
    pub fn is_open(&self) -> bool {
        self.status == ReservationStatus::Reserved
    }
}

const SELECT: &str = "SELECT r.id, r.merchant_id, m.slug AS merchant_slug, r.order_id, r.status, r.payment_ref,
        CAST(r.late_payment AS BIGINT) AS late_payment, r.release_reason, r.expires_at, r.created_at, r.updated_at,
        (SELECT MIN(e.id) FROM order_exceptions e WHERE e.reservation_id = r.id AND e.status = 'OPEN') AS open_exception
    FROM reservations r JOIN merchants m ON m.id = r.merchant_id";

fn where_of(reader: Reader, f: &Filter) -> Where {
    let mut w = Where::default();
    if let Scope::Merchant(m) = reader.scope {
        w.push("r.merchant_id =", Arg::Int(m.0));
    }
    if let Some(m) = f.merchant_id {
        w.push("r.merchant_id =", Arg::Int(m.0));
    }
    if let Some(store) = reader.store {
        w.clause(
            "EXISTS (SELECT 1 FROM bookings b JOIN slots s ON s.id = b.slot_id
                WHERE b.reservation_id = r.id AND s.store_id = $?)",
            Arg::Int(store.0),
        );
    }
    if let Some(s) = f.status {
        w.push("r.status =", Arg::Text(s.as_str().to_string()));
    }
    if !f.sku.trim().is_empty() {
        w.clause(
            "(EXISTS (SELECT 1 FROM stock_reservations l JOIN skus s ON s.id = l.sku_id
                 WHERE l.reservation_id = r.id AND s.code = $?)
              OR EXISTS (SELECT 1 FROM code_reservations l JOIN skus s ON s.id = l.sku_id
                 WHERE l.reservation_id = r.id AND s.code = $?)
              OR EXISTS (SELECT 1 FROM bookings b JOIN slots t ON t.id = b.slot_id JOIN skus s ON s.id = t.sku_id
                 WHERE b.reservation_id = r.id AND s.code = $?))",
            Arg::Text(f.sku.trim().to_string()),
        );
    }
    if !f.order_id.trim().is_empty() {
        w.push("r.order_id =", Arg::Text(f.order_id.trim().to_string()));
    }
    if let Some(from) = f.from {
        w.push("r.created_at >=", Arg::Int(from));
    }
    if let Some(to) = f.to {
        w.push("r.created_at <", Arg::Int(to));
    }
    w
}

/// One page of orders: open holds first (soonest to expire first), then the rest newest first.
/// Returns the orders, the page shown, the page count and the total.
pub async fn page(
    db: &Db,
    reader: Reader,
    f: &Filter,
    page: i64,
) -> DomainResult<(Vec<Order>, i64, i64, i64)> {
    let w = where_of(reader, f);
    let count_sql = format!("SELECT COUNT(*) FROM reservations r {}", w.sql());
    let total: i64 = bind_args!(sqlx::query_scalar(&count_sql), &w.args)
        .fetch_one(&db.pool)
        .await?;
    let pages = ((total + PAGE_SIZE - 1) / PAGE_SIZE).max(1);
    let page = page.clamp(1, pages);
    let order = match f.sort {
        Some(s) => s.order_by(f.desc),
        None => "CASE WHEN r.status = 'RESERVED' THEN 0 ELSE 1 END,
            CASE WHEN r.status = 'RESERVED' THEN r.expires_at ELSE -r.created_at END, r.id DESC"
            .to_string(),
    };
    let sql = format!(
        "{SELECT} {} ORDER BY {order} LIMIT {PAGE_SIZE} OFFSET {}",
        w.sql(),
        (page - 1) * PAGE_SIZE
    );
    let heads: Vec<Head> = bind_args!(sqlx::query_as(&sql), &w.args)
        .fetch_all(&db.pool)
        .await?;
    Ok((with_lines(db, heads).await?, page, pages, total))
}

async fn with_lines(db: &Db, heads: Vec<Head>) -> DomainResult<Vec<Order>> {
    if heads.is_empty() {
        return Ok(Vec::new());
    }
    // Ids are integers read from the database: safe to write into the statement.
    let ids: Vec<String> = heads.iter().map(|h| h.id.to_string()).collect();
    let ids = ids.join(",");
    let lines: Vec<Line> = sqlx::query_as(&format!(
        "SELECT l.reservation_id, l.sku_id, s.code AS sku, l.qty, w.name AS warehouse, CAST(0 AS BIGINT) AS codes, l.status,
            l.hold, CAST(NULL AS BIGINT) AS slot_starts_at
         FROM stock_reservations l JOIN skus s ON s.id = l.sku_id JOIN warehouses w ON w.id = l.warehouse_id
         WHERE l.reservation_id IN ({ids})
         UNION ALL
         SELECT l.reservation_id, l.sku_id, s.code AS sku, l.qty, NULL AS warehouse, CAST(1 AS BIGINT) AS codes, l.status,
            'locked' AS hold, CAST(NULL AS BIGINT) AS slot_starts_at
         FROM code_reservations l JOIN skus s ON s.id = l.sku_id
         WHERE l.reservation_id IN ({ids})
         UNION ALL
         SELECT b.reservation_id, t.sku_id, s.code AS sku, b.places AS qty, NULL AS warehouse, CAST(0 AS BIGINT) AS codes,
            r.status, 'locked' AS hold, t.starts_at AS slot_starts_at
         FROM bookings b JOIN slots t ON t.id = b.slot_id JOIN skus s ON s.id = t.sku_id
            JOIN reservations r ON r.id = b.reservation_id
         WHERE b.reservation_id IN ({ids})
         ORDER BY 1, 3"
    ))
    .fetch_all(&db.pool)
    .await?;
    Ok(heads
        .into_iter()
        .map(|h| Order {
            lines: lines
                .iter()
                .filter(|l| l.reservation_id == h.id)
                .cloned()
                .collect(),
            id: h.id,
            merchant_id: h.merchant_id,
            merchant: h.merchant_slug,
            order_id: h.order_id,
            status: h.status,
            payment_ref: h.payment_ref,
            late_payment: h.late_payment != 0,
            release_reason: h.release_reason,
            expires_at: h.expires_at,
            created_at: h.created_at,
            updated_at: h.updated_at,
            open_exception: h.open_exception,
        })
        .collect())
}

/// One thing that happened to an order, from its audit rows.
#[derive(Debug, Clone, FromRow)]
pub struct Event {
    pub action: String,
    pub actor: String,
    pub detail: String,
    pub source: String,
    pub at: i64,
}

/// A booking an order made.
#[derive(Debug, Clone, FromRow)]
pub struct BookingLine {
    pub reference: String,
    pub status: String,
    pub starts_at: i64,
    pub sku: String,
    pub store_id: StoreId,
}

/// An order with everything it produced.
#[derive(Debug, Clone)]
pub struct Detail {
    pub order: Order,
    pub timeline: Vec<Event>,
    pub ledger: Vec<OrderEntry>,
    pub bookings: Vec<BookingLine>,
    pub exceptions: Vec<Exception>,
    /// Codes of the order by their state now (SOLD, REDEEMED, VOIDED, BOOKING), never their text.
    pub codes: Vec<(String, String, i64)>,
}

/// One order by its header id, if the reader may see it.
pub async fn detail(db: &Db, reader: Reader, id: i64) -> DomainResult<Detail> {
    let mut w = where_of(reader, &Filter::default());
    w.push("r.id =", Arg::Int(id));
    let sql = format!("{SELECT} {}", w.sql());
    let heads: Vec<Head> = bind_args!(sqlx::query_as(&sql), &w.args)
        .fetch_all(&db.pool)
        .await?;
    let order = with_lines(db, heads)
        .await?
        .pop()
        .ok_or(DomainError::NotFound("order"))?;
    let m = order.merchant_id;
    let timeline: Vec<Event> = sqlx::query_as(
        "SELECT action, actor, detail, source, at FROM audit_log WHERE merchant_id = $1 AND subject = $2 ORDER BY id",
    )
    .bind(m)
    .bind(format!("order:{}", order.order_id))
    .fetch_all(&db.pool)
    .await?;
    let ledger = ledger::of_order(db, m, &order.order_id).await?;
    let bookings: Vec<BookingLine> = sqlx::query_as(
        "SELECT b.reference, b.status, s.starts_at, k.code AS sku, s.store_id FROM bookings b
         JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id
         WHERE b.reservation_id = $1 ORDER BY s.starts_at, b.id",
    )
    .bind(order.id)
    .fetch_all(&db.pool)
    .await?;
    let exceptions = exceptions::of_order(db, m, order.id).await?;
    let codes: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT s.code, c.status, COUNT(*) FROM codes c JOIN skus s ON s.id = c.sku_id
         WHERE c.reservation_id = $1 GROUP BY s.code, c.status ORDER BY s.code, c.status",
    )
    .bind(order.id)
    .fetch_all(&db.pool)
    .await?;
    Ok(Detail {
        order,
        timeline,
        ledger,
        bookings,
        exceptions,
        codes,
    })
}

/// The header id of an order id, for links from places that know only the order id.
pub async fn id_of(db: &Db, merchant_id: MerchantId, order_id: &str) -> DomainResult<i64> {
    sqlx::query_scalar("SELECT id FROM reservations WHERE merchant_id = $1 AND order_id = $2")
        .bind(merchant_id)
        .bind(order_id.trim())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("order"))
}
