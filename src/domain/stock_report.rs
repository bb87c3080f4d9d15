//! The merchant-wide stock report: every goods SKU with what is on hand, available, committed to
//! orders and held back, what sold over 7 and 30 days, days of cover, its low-stock line and its
//! value at cost. Read from the balances (the ledger's running total, which reconciliation keeps
//! equal to its replay) and the ledger's sales, in two grouped queries whatever the catalog's size.

use std::collections::HashMap;

use serde::Serialize;

use super::error::DomainResult;
use super::MerchantId;
use crate::infra::db::{now_ms, Db};

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
    /// SKUs out of stock and low.
    pub out_of_stock: i64,
    pub low: i64,
}

/// Every goods SKU of the merchant, filtered, in code order. `default_low` is the global
/// low-stock line; `today` the merchant's date (YYYY-MM-DD) for holds due.
pub async fn rows(
    db: &Db,
    merchant_id: MerchantId,
    f: &Filter,
    default_low: i64,
    today: &str,
) -> DomainResult<Vec<StockReportRow>> {
    #[derive(sqlx::FromRow)]
    struct Base {
        sku_id: i64,
        product_id: i64,
        code: String,
        name: String,
        product: String,
        stock_policy: String,
        low_stock_threshold: Option<i64>,
        unit_cost: Option<i64>,
        total: i64,
        locked: i64,
        sold: i64,
        frozen: i64,
    }
    let base: Vec<Base> = sqlx::query_as(
        "SELECT s.id AS sku_id, s.product_id, s.code, s.name, p.name AS product, s.stock_policy,
            s.low_stock_threshold, s.unit_cost,
            CAST(COALESCE(SUM(b.total), 0) AS BIGINT) AS total, CAST(COALESCE(SUM(b.locked), 0) AS BIGINT) AS locked,
            CAST(COALESCE(SUM(b.sold), 0) AS BIGINT) AS sold, CAST(COALESCE(SUM(b.frozen), 0) AS BIGINT) AS frozen
         FROM skus s JOIN products p ON p.id = s.product_id
         LEFT JOIN stock_balances b ON b.sku_id = s.id AND ($2 IS NULL OR b.warehouse_id = $2)
         WHERE s.merchant_id = $1 AND s.unit_type = 'quantity'
         GROUP BY s.id, s.product_id, s.code, s.name, p.name, s.stock_policy, s.low_stock_threshold, s.unit_cost
         ORDER BY s.code",
    )
    .bind(merchant_id)
    .bind(f.warehouse_id)
    .fetch_all(&db.pool)
    .await?;
    let now = now_ms();
    let sales: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT sku_id, CAST(COALESCE(SUM(CASE WHEN created_at >= $3 THEN d_sold ELSE 0 END), 0) AS BIGINT),
            CAST(COALESCE(SUM(d_sold), 0) AS BIGINT)
         FROM stock_ledger WHERE merchant_id = $1 AND kind = 'CONFIRM' AND created_at >= $4
            AND ($2 IS NULL OR warehouse_id = $2)
         GROUP BY sku_id",
    )
    .bind(merchant_id)
    .bind(f.warehouse_id)
    .bind(now - 7 * DAY_MS)
    .bind(now - 30 * DAY_MS)
    .fetch_all(&db.pool)
    .await?;
    let sales: HashMap<i64, (i64, i64)> = sales.into_iter().map(|(s, a, b)| (s, (a, b))).collect();
    let due: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT sku_id, COUNT(*) FROM stock_holds
         WHERE merchant_id = $1 AND remaining > 0 AND release_on IS NOT NULL AND release_on <= $2
            AND ($3 IS NULL OR warehouse_id = $3)
         GROUP BY sku_id",
    )
    .bind(merchant_id)
    .bind(today)
    .bind(f.warehouse_id)
    .fetch_all(&db.pool)
    .await?;
    let due: HashMap<i64, i64> = due.into_iter().collect();
    let search = f.search.trim().to_lowercase();
    Ok(base
        .into_iter()
        .map(|b| {
            let (sold_7d, sold_30d) = sales.get(&b.sku_id).copied().unwrap_or((0, 0));
            let available = b.total - b.locked - b.sold - b.frozen;
            let on_hand = b.total - b.sold;
            let threshold = b.low_stock_threshold.unwrap_or(default_low);
            let status = if b.stock_policy == "unlimited" {
                StockStatus::Unlimited
            } else if available <= 0 {
                StockStatus::OutOfStock
            } else if available < threshold {
                StockStatus::Low
            } else {
                StockStatus::Ok
            };
            StockReportRow {
                sku_id: b.sku_id,
                product_id: b.product_id,
                days_of_cover: (sold_30d > 0).then(|| available as f64 / (sold_30d as f64 / 30.0)),
                value_at_cost: b.unit_cost.map(|c| c.saturating_mul(on_hand)),
                unit_cost: b.unit_cost,
                sku: b.code,
                name: b.name,
                product: b.product,
                on_hand,
                available,
                committed: b.locked,
                unavailable: b.frozen,
                sold_7d,
                sold_30d,
                low_stock_threshold: threshold,
                status,
                holds_due: due.get(&b.sku_id).copied().unwrap_or(0),
            }
        })
        .filter(|r| f.status.is_none_or(|s| s == r.status))
        .filter(|r| {
            search.is_empty()
                || r.sku.to_lowercase().contains(&search)
                || r.name.to_lowercase().contains(&search)
                || r.product.to_lowercase().contains(&search)
        })
        .collect())
}

/// Sorts the rows by a column; ties (and missing values, last) by code.
pub fn sort(rows: &mut [StockReportRow], key: SortKey, desc: bool) {
    use std::cmp::Ordering;
    let num = |r: &StockReportRow| -> Option<f64> {
        Some(match key {
            SortKey::OnHand => r.on_hand as f64,
            SortKey::Available => r.available as f64,
            SortKey::Committed => r.committed as f64,
            SortKey::Unavailable => r.unavailable as f64,
            SortKey::Sold7d => r.sold_7d as f64,
            SortKey::Sold30d => r.sold_30d as f64,
            SortKey::DaysOfCover => r.days_of_cover?,
            SortKey::ValueAtCost => r.value_at_cost? as f64,
            SortKey::Sku | SortKey::Name => return None,
        })
    };
    rows.sort_by(|a, b| {
        let by = match key {
            SortKey::Sku => a.sku.cmp(&b.sku),
            SortKey::Name => a.name.to_lowercase().cmp(&b.name.to_lowercase()),
            _ => match (num(a), num(b)) {
                (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
                // Missing values go last whichever the direction.
                (Some(_), None) => return Ordering::Less,
                (None, Some(_)) => return Ordering::Greater,
                (None, None) => Ordering::Equal,
            },
        };
        let by = if desc { by.reverse() } else { by };
        by.then_with(|| a.sku.cmp(&b.sku))
    });
}

pub fn totals(rows: &[StockReportRow]) -> StockTotals {
    let mut t = StockTotals::default();
    for r in rows {
        t.skus += 1;
        t.on_hand += r.on_hand;
        t.available += r.available;
        t.committed += r.committed;
        t.unavailable += r.unavailable;
        t.sold_30d += r.sold_30d;
        t.value_at_cost += r.value_at_cost.unwrap_or(0);
        match r.status {
            StockStatus::OutOfStock => t.out_of_stock += 1,
            StockStatus::Low => t.low += 1,
            _ => {}
        }
    }
    t
}

/// The rows as CSV, through the one export writer (its spreadsheet guard and quoting): numbers
/// as numbers, money in major units with two decimals, a byte-order mark first so that
/// spreadsheet programs read Chinese names.
/// `costs`: whether the reader may see what things cost (admins and operators); without it the
/// cost columns stay empty.
pub fn csv(rows: &[StockReportRow], costs: bool) -> String {
    use super::export::{Cell, Csv};
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
    let money = |m: Option<i64>| m.map(super::validate::format_price).unwrap_or_default();
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
