//! The merchant-wide stock report: every goods SKU with what is on hand, available, committed to
//! orders and held back, what sold over 7 and 30 days, days of cover, its low-stock line and its
//! value at cost. Read from the balances (the ledger's running total, which reconciliation keeps
//! equal to its replay) and the ledger's sales, in one statement for the sums and one for the
//! rows shown, whatever the catalog's size.

use serde::Serialize;

use crate::domain::kernel::error::DomainResult;
use crate::domain::MerchantId;
use crate::infra::db::{Db, Dialect};

const DAY_MS: i64 = 86_400_000;

crate::text_enum! {
    /// Where a SKU's stock stands.
    pub enum StockStatus {
        /// Nothing available.
        OutOfStock = "out_of_stock",
        /// Fewer available than its low-stock line.
        Low = "low",
        Ok = "ok",
        /// Not counted (`stock_policy = unlimited`).
        Unlimited = "unlimited",
    }
}

crate::text_enum! {
    /// The columns the report sorts by.
    pub enum SortKey {
        Sku = "sku",
        Name = "name",
        OnHand = "on_hand",
        Available = "available",
        Committed = "committed",
        Unavailable = "unavailable",
        Sold7d = "sold_7d",
        Sold30d = "sold_30d",
        DaysOfCover = "days_of_cover",
        ValueAtCost = "value_at_cost",
    }
}

/// One goods SKU's line of the report. Serialised as-is by the API.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct StockReportRow {
    #[serde(skip)]
    pub sku_id: i64,
    #[serde(skip)]
    pub product_id: i64,
    /// The SKU's code.
    pub sku: String,
    pub name: String,
    pub product: String,
    /// Units not yet sold: available + committed + unavailable.
    pub on_hand: i64,
    /// Units a new order can take.
    pub available: i64,
    /// Units held by unpaid orders.
    pub committed: i64,
    /// Units held back from sale (quality control, damage awaiting a decision).
    pub unavailable: i64,
    pub sold_7d: i64,
    pub sold_30d: i64,
    /// Days the available units last at the last 30 days' rate; null without sales.
    pub days_of_cover: Option<f64>,
    /// Below this many available the SKU is low (its own line, else the global one).
    pub low_stock_threshold: i64,
    pub status: StockStatus,
    /// What one unit cost, in minor units; null when not set.
    pub unit_cost: Option<i64>,
    /// on_hand × unit_cost, in minor units; null when no cost is set.
    pub value_at_cost: Option<i64>,
    /// Holds whose release day has come.
    pub holds_due: i64,
}

/// What the report is narrowed to.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this warehouse's stock and sales (its id).
    pub warehouse_id: Option<i64>,
    pub status: Option<StockStatus>,
    /// A piece of the SKU's code or name, or the product's name.
    pub search: String,
}

/// The report's sums over the rows it shows.
#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct StockTotals {
    pub skus: i64,
    pub on_hand: i64,
    pub available: i64,
    pub committed: i64,
    pub unavailable: i64,
    pub sold_30d: i64,
    /// In minor units, over the SKUs with a cost.
    pub value_at_cost: i64,
    /// SKUs with a cost (the value column is shown only when there are some).
    #[serde(skip)]
    pub costed: i64,
    /// SKUs out of stock and low.
    pub out_of_stock: i64,
    pub low: i64,
}

/// The report's shared part: every goods SKU of the merchant with its figures and status, as the
/// table `report`, narrowed by the warehouse and the search. Counting, filtering by status,
/// sorting and paging all happen in the database, so a page of 50 reads 50 rows out of it, not
/// the whole catalog (6,000 rows through the driver took most of the page's 100 ms on SQLite).
///
/// Arguments: $1 merchant, $2 warehouse id or NULL, $3 and $4 the start of the last 7 and 30
/// days, $5 today (YYYY-MM-DD), $6 the global low-stock line, $7 a LIKE pattern or '' and $8 a
/// status or ''.
const REPORT: &str = r"
WITH bal AS (
    SELECT sku_id, SUM(total) AS total, SUM(locked) AS locked, SUM(sold) AS sold, SUM(frozen) AS frozen
    FROM stock_balances WHERE merchant_id = $1 AND ($2 IS NULL OR warehouse_id = $2)
    GROUP BY sku_id
), sales AS (
    SELECT sku_id, SUM(CASE WHEN created_at >= $3 THEN d_sold ELSE 0 END) AS sold_7d, SUM(d_sold) AS sold_30d
    FROM stock_ledger
    WHERE merchant_id = $1 AND kind = 'CONFIRM' AND created_at >= $4 AND ($2 IS NULL OR warehouse_id = $2)
    GROUP BY sku_id
), due AS (
    SELECT sku_id, COUNT(*) AS holds_due FROM stock_holds
    WHERE merchant_id = $1 AND remaining > 0 AND release_on IS NOT NULL AND release_on <= $5
        AND ($2 IS NULL OR warehouse_id = $2)
    GROUP BY sku_id
), base AS (
    SELECT s.id AS sku_id, s.product_id, s.code AS sku, s.name, p.name AS product, s.stock_policy,
        CAST(COALESCE(s.low_stock_threshold, $6) AS BIGINT) AS low_stock_threshold, s.unit_cost,
        CAST(COALESCE(b.total, 0) - COALESCE(b.sold, 0) AS BIGINT) AS on_hand,
        CAST(COALESCE(b.total, 0) - COALESCE(b.locked, 0) - COALESCE(b.sold, 0) - COALESCE(b.frozen, 0) AS BIGINT)
            AS available,
        CAST(COALESCE(b.locked, 0) AS BIGINT) AS committed, CAST(COALESCE(b.frozen, 0) AS BIGINT) AS unavailable,
        CAST(COALESCE(l.sold_7d, 0) AS BIGINT) AS sold_7d, CAST(COALESCE(l.sold_30d, 0) AS BIGINT) AS sold_30d,
        CAST(COALESCE(h.holds_due, 0) AS BIGINT) AS holds_due
    FROM skus s JOIN products p ON p.id = s.product_id
    LEFT JOIN bal b ON b.sku_id = s.id
    LEFT JOIN sales l ON l.sku_id = s.id
    LEFT JOIN due h ON h.sku_id = s.id
    WHERE s.merchant_id = $1 AND s.unit_type = 'quantity'
        AND ($7 = '' OR LOWER(s.code) LIKE $7 ESCAPE '\' OR LOWER(s.name) LIKE $7 ESCAPE '\'
            OR LOWER(p.name) LIKE $7 ESCAPE '\')
), report AS (
    SELECT base.*,
        CASE WHEN stock_policy = 'unlimited' THEN 'unlimited'
            WHEN available <= 0 THEN 'out_of_stock'
            WHEN available < low_stock_threshold THEN 'low'
            ELSE 'ok' END AS status
    FROM base
)";

/// What a read of the report is narrowed to and how it is ordered.
pub struct Selection<'a> {
    pub merchant_id: MerchantId,
    pub filter: &'a Filter,
    /// The global low-stock line, for SKUs without their own.
    pub default_low: i64,
    /// The merchant's date (YYYY-MM-DD), for holds due.
    pub today: &'a str,
    /// Now (ms), for the recent-movement columns.
    pub now: i64,
}

impl Selection<'_> {
    /// Binds $1 … $8 of [`REPORT`].
    fn bind<'q, O>(
        &self,
        q: sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>>,
    ) -> sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>> {
        let now = self.now;
        let search = self.filter.search.trim().to_lowercase();
        let pattern = if search.is_empty() {
            String::new()
        } else {
            crate::domain::kernel::filters::like_pattern(&search)
        };
        q.bind(self.merchant_id)
            .bind(self.filter.warehouse_id)
            .bind(now - 7 * DAY_MS)
            .bind(now - 30 * DAY_MS)
            .bind(self.today.to_string())
            .bind(self.default_low)
            .bind(pattern)
            .bind(self.filter.status.map(|s| s.as_str()).unwrap_or(""))
    }
}

/// The sums over every row the filter keeps (not one page's).
pub async fn totals(db: &Db, q: &Selection<'_>) -> DomainResult<StockTotals> {
    #[derive(sqlx::FromRow)]
    struct Sums {
        skus: i64,
        on_hand: i64,
        available: i64,
        committed: i64,
        unavailable: i64,
        sold_30d: i64,
        // A double: on hand × cost can pass what a BIGINT holds, and SQLite's SUM fails rather
        // than overflow.
        value_at_cost: f64,
        costed: i64,
        out_of_stock: i64,
        low: i64,
    }
    let sql = format!(
        "{REPORT}
        SELECT COUNT(*) AS skus,
            CAST(COALESCE(SUM(on_hand), 0) AS BIGINT) AS on_hand,
            CAST(COALESCE(SUM(available), 0) AS BIGINT) AS available,
            CAST(COALESCE(SUM(committed), 0) AS BIGINT) AS committed,
            CAST(COALESCE(SUM(unavailable), 0) AS BIGINT) AS unavailable,
            CAST(COALESCE(SUM(sold_30d), 0) AS BIGINT) AS sold_30d,
            CAST(COALESCE(SUM(CAST(unit_cost AS DOUBLE PRECISION) * on_hand), 0) AS DOUBLE PRECISION)
                AS value_at_cost,
            CAST(COALESCE(SUM(CASE WHEN unit_cost IS NULL THEN 0 ELSE 1 END), 0) AS BIGINT) AS costed,
            CAST(COALESCE(SUM(CASE WHEN status = 'out_of_stock' THEN 1 ELSE 0 END), 0) AS BIGINT) AS out_of_stock,
            CAST(COALESCE(SUM(CASE WHEN status = 'low' THEN 1 ELSE 0 END), 0) AS BIGINT) AS low
        FROM report WHERE ($8 = '' OR status = $8)"
    );
    let s: Sums = q.bind(sqlx::query_as(&sql)).fetch_one(&db.pool).await?;
    Ok(StockTotals {
        skus: s.skus,
        on_hand: s.on_hand,
        available: s.available,
        committed: s.committed,
        unavailable: s.unavailable,
        sold_30d: s.sold_30d,
        // `as` saturates: past i64 (10^19 minor units) there is nothing truer to say.
        value_at_cost: s.value_at_cost.round() as i64,
        costed: s.costed,
        out_of_stock: s.out_of_stock,
        low: s.low,
    })
}

/// How the rows are ordered: by a column, either way; ties (and missing values, last whichever
/// the way) by code.
#[derive(Debug, Clone, Copy)]
pub struct Order {
    pub key: SortKey,
    pub desc: bool,
}

impl Order {
    /// The ORDER BY, from fixed text only. Codes and names compare byte by byte on both
    /// databases (PostgreSQL's default collation would sort "TEA-1" and "TEA1" by its locale).
    fn sql(self, dialect: Dialect) -> String {
        let c = match dialect {
            Dialect::Postgres => " COLLATE \"C\"",
            Dialect::Sqlite => "",
        };
        let dir = if self.desc { "DESC" } else { "ASC" };
        let value = match self.key {
            SortKey::Sku => return format!("sku{c} {dir}"),
            SortKey::Name => return format!("LOWER(name){c} {dir}, sku{c}"),
            SortKey::OnHand => "on_hand",
            SortKey::Available => "available",
            SortKey::Committed => "committed",
            SortKey::Unavailable => "unavailable",
            SortKey::Sold7d => "sold_7d",
            SortKey::Sold30d => "sold_30d",
            SortKey::DaysOfCover => {
                "(CASE WHEN sold_30d > 0 THEN CAST(available AS DOUBLE PRECISION) * 30 / sold_30d END)"
            }
            SortKey::ValueAtCost => "(CAST(unit_cost AS DOUBLE PRECISION) * on_hand)",
        };
        format!("{value} IS NULL, {value} {dir}, sku{c}")
    }
}

/// The rows the filter keeps, in `order`; `window` is (offset, limit) for one page, `None` for
/// all of them (the CSV and the API).
pub async fn rows(
    db: &Db,
    q: &Selection<'_>,
    order: Order,
    window: Option<(i64, i64)>,
) -> DomainResult<Vec<StockReportRow>> {
    #[derive(sqlx::FromRow)]
    struct Line {
        sku_id: i64,
        product_id: i64,
        sku: String,
        name: String,
        product: String,
        low_stock_threshold: i64,
        unit_cost: Option<i64>,
        on_hand: i64,
        available: i64,
        committed: i64,
        unavailable: i64,
        sold_7d: i64,
        sold_30d: i64,
        holds_due: i64,
        status: String,
    }
    let (offset, limit) = window.unwrap_or((0, i64::MAX));
    let sql = format!(
        "{REPORT}
        SELECT sku_id, product_id, sku, name, product, low_stock_threshold, unit_cost, on_hand,
            available, committed, unavailable, sold_7d, sold_30d, holds_due, status
        FROM report WHERE ($8 = '' OR status = $8)
        ORDER BY {} LIMIT $9 OFFSET $10",
        order.sql(db.dialect)
    );
    let lines: Vec<Line> = q
        .bind(sqlx::query_as(&sql))
        .bind(limit)
        .bind(offset.max(0))
        .fetch_all(&db.pool)
        .await?;
    Ok(lines
        .into_iter()
        .map(|l| StockReportRow {
            sku_id: l.sku_id,
            product_id: l.product_id,
            days_of_cover: (l.sold_30d > 0)
                .then(|| l.available as f64 / (l.sold_30d as f64 / 30.0)),
            value_at_cost: l.unit_cost.map(|c| c.saturating_mul(l.on_hand)),
            unit_cost: l.unit_cost,
            sku: l.sku,
            name: l.name,
            product: l.product,
            on_hand: l.on_hand,
            available: l.available,
            committed: l.committed,
            unavailable: l.unavailable,
            sold_7d: l.sold_7d,
            sold_30d: l.sold_30d,
            low_stock_threshold: l.low_stock_threshold,
            // The statement says one of the four; nothing else can come back.
            status: StockStatus::parse(&l.status).unwrap_or(StockStatus::Ok),
            holds_due: l.holds_due,
        })
        .collect())
}

/// The rows as CSV, through the one export writer (its spreadsheet guard and quoting): numbers
/// as numbers, money in major units with two decimals, a byte-order mark first so that
/// spreadsheet programs read Chinese names.
/// `costs`: whether the reader may see what things cost (admins and operators); without it the
/// cost columns stay empty.
pub fn csv(rows: &[StockReportRow], costs: bool) -> String {
    use crate::domain::kernel::export::{Cell, Csv};
    let mut out = Csv::new(&[
        "sku",
        "name",
        "product",
        "on_hand",
        "available",
        "committed",
        "unavailable",
        "sold_7d",
        "sold_30d",
        "days_of_cover",
        "low_stock_threshold",
        "status",
        "unit_cost",
        "value_at_cost",
        "holds_due",
    ]);
    let money = |m: Option<i64>| {
        m.map(crate::domain::kernel::validate::format_price)
            .unwrap_or_default()
    };
    for r in rows {
        let cover = r
            .days_of_cover
            .map(|d| format!("{d:.1}"))
            .unwrap_or_default();
        let (cost, value) = if costs {
            (money(r.unit_cost), money(r.value_at_cost))
        } else {
            (String::new(), String::new())
        };
        out.row(&[
            Cell::from(&r.sku),
            Cell::from(&r.name),
            Cell::from(&r.product),
            Cell::from(r.on_hand),
            Cell::from(r.available),
            Cell::from(r.committed),
            Cell::from(r.unavailable),
            Cell::from(r.sold_7d),
            Cell::from(r.sold_30d),
            Cell::Text(&cover),
            Cell::from(r.low_stock_threshold),
            Cell::Text(r.status.as_str()),
            Cell::Text(&cost),
            Cell::Text(&value),
            Cell::from(r.holds_due),
        ]);
    }
    format!("\u{feff}{}", out.finish())
}
