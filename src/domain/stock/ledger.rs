//! Reading the stock ledger: filtered pages, CSV export, the replay identity, and the stock
//! figures (sell-through, days of cover, time out of stock) derived from it.

use chrono_tz::Tz;
use serde::Serialize;
use sqlx::FromRow;

use crate::domain::catalog::Sku;
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::ms_to_local;
use crate::domain::stock::Buckets;
use crate::domain::Scope;
use crate::infra::db::Db;

pub const PAGE_SIZE: i64 = 50;
pub const EXPORT_MAX: i64 = 100_000;
const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Entry {
    pub id: i64,
    pub warehouse: String,
    pub kind: String,
    pub qty: i64,
    pub d_total: i64,
    pub d_locked: i64,
    pub d_sold: i64,
    pub d_frozen: i64,
    pub total_after: i64,
    pub locked_after: i64,
    pub sold_after: i64,
    pub frozen_after: i64,
    pub reason: String,
    pub actor: String,
    pub order_id: Option<String>,
    pub created_at: i64,
    /// Why, from the fixed list ([`crate::domain::stock::reasons::AdjustReason`]), when the adjustment said.
    pub reason_code: Option<String>,
    /// The warehouse's name, for pages (the API and CSV name it by its slug).
    #[serde(skip)]
    pub warehouse_name: String,
}

impl Entry {
    pub fn available_after(&self) -> i64 {
        self.total_after - self.locked_after - self.sold_after - self.frozen_after
    }
    pub fn available_before(&self) -> i64 {
        self.available_after() - (self.d_total - self.d_locked - self.d_sold - self.d_frozen)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub warehouse_id: Option<i64>,
    pub kind: Option<String>,
    /// Unix ms, inclusive.
    pub from: Option<i64>,
    /// Unix ms, exclusive.
    pub to: Option<i64>,
    pub order_id: Option<String>,
    /// Only adjustments given this reason code.
    pub reason_code: Option<String>,
}

const SELECT: &str = "SELECT l.id, w.slug AS warehouse, l.kind, l.qty, l.d_total, l.d_locked, l.d_sold, l.d_frozen,
        l.total_after, l.locked_after, l.sold_after, l.frozen_after, l.reason, l.actor, l.order_id, l.created_at,
        l.reason_code, w.name AS warehouse_name
    FROM stock_ledger l JOIN warehouses w ON w.id = l.warehouse_id";

const WHERE: &str = "WHERE l.sku_id = $1 AND ($2 IS NULL OR l.warehouse_id = $2) AND ($3 = '' OR l.kind = $3)
      AND ($4 IS NULL OR l.created_at >= $4) AND ($5 IS NULL OR l.created_at < $5) AND ($6 = '' OR l.order_id = $6)
      AND ($7 = '' OR l.reason_code = $7)";

macro_rules! bind_filter {
    ($q:expr, $sku:expr, $f:expr) => {
        $q.bind($sku)
            .bind($f.warehouse_id)
            .bind($f.kind.clone().unwrap_or_default())
            .bind($f.from)
            .bind($f.to)
            .bind($f.order_id.clone().unwrap_or_default())
            .bind($f.reason_code.clone().unwrap_or_default())
    };
}

/// One page of ledger rows, newest first, and the number of pages.
pub async fn page(
    db: &Db,
    sku_id: i64,
    f: &Filter,
    page: i64,
) -> DomainResult<(Vec<Entry>, i64, i64, i64)> {
    let total: i64 = bind_filter!(
        sqlx::query_scalar(&format!("SELECT COUNT(*) FROM stock_ledger l {WHERE}")),
        sku_id,
        f
    )
    .fetch_one(&db.pool)
    .await?;
    let pages = ((total + PAGE_SIZE - 1) / PAGE_SIZE).max(1);
    let page = page.clamp(1, pages);
    let rows = bind_filter!(
        sqlx::query_as(&format!(
            "{SELECT} {WHERE} ORDER BY l.id DESC LIMIT $8 OFFSET $9"
        )),
        sku_id,
        f
    )
    .bind(PAGE_SIZE)
    .bind((page - 1) * PAGE_SIZE)
    .fetch_all(&db.pool)
    .await?;
    Ok((rows, page, pages, total))
}

/// The ledger rows after a cursor (a row id; 0 for the first), oldest first, at most `limit`:
/// a feed an order system resumes from the last id it read.
pub async fn feed(
    db: &Db,
    sku_id: i64,
    f: &Filter,
    after: i64,
    limit: i64,
) -> DomainResult<Vec<Entry>> {
    Ok(bind_filter!(
        sqlx::query_as(&format!(
            "{SELECT} {WHERE} AND l.id > $8 ORDER BY l.id LIMIT $9"
        )),
        sku_id,
        f
    )
    .bind(after)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// The filtered ledger as CSV (oldest first), at most [`EXPORT_MAX`] rows.
pub async fn csv(db: &Db, sku: &Sku, f: &Filter, tz: Tz) -> DomainResult<String> {
    let rows: Vec<Entry> = bind_filter!(
        sqlx::query_as(&format!("{SELECT} {WHERE} ORDER BY l.id LIMIT $8")),
        sku.id,
        f
    )
    .bind(EXPORT_MAX)
    .fetch_all(&db.pool)
    .await?;
    use crate::domain::kernel::export::{Cell, Csv};
    let mut out = Csv::new(&[
        "time",
        "sku",
        "warehouse",
        "kind",
        "qty",
        "total_change",
        "locked_change",
        "sold_change",
        "frozen_change",
        "total",
        "locked",
        "sold",
        "frozen",
        "available_before",
        "available_after",
        "order_id",
        "reason",
        "actor",
        "reason_code",
    ]);
    for r in rows {
        let time = ms_to_local(r.created_at, tz, "%Y-%m-%d %H:%M:%S");
        let order = r.order_id.clone().unwrap_or_default();
        out.row(&[
            Cell::from(&time),
            Cell::from(&sku.code),
            Cell::from(&r.warehouse),
            Cell::from(&r.kind),
            Cell::from(r.qty),
            Cell::from(r.d_total),
            Cell::from(r.d_locked),
            Cell::from(r.d_sold),
            Cell::from(r.d_frozen),
            Cell::from(r.total_after),
            Cell::from(r.locked_after),
            Cell::from(r.sold_after),
            Cell::from(r.frozen_after),
            Cell::from(r.available_before()),
            Cell::from(r.available_after()),
            Cell::from(&order),
            Cell::from(&r.reason),
            Cell::from(&r.actor),
            Cell::from(r.reason_code.as_deref().unwrap_or("")),
        ]);
    }
    Ok(out.finish())
}

/// A balance whose ledger does not add up to it.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayMismatch {
    pub sku_id: i64,
    pub warehouse_id: i64,
    pub balance: Buckets,
    pub ledger: Buckets,
}

/// The ledger identity: for every balance, summing its ledger deltas from zero gives the balance.
pub async fn replay_mismatches(db: &Db, scope: Scope) -> DomainResult<Vec<ReplayMismatch>> {
    replay_mismatches_in(db, scope, None).await
}

/// The same, for the given SKUs only (None: all of them). A SKU's ledger is read through its
/// index, so a few SKUs cost a few of their ledgers, not the whole one.
pub async fn replay_mismatches_in(
    db: &Db,
    scope: Scope,
    skus: Option<&[i64]>,
) -> DomainResult<Vec<ReplayMismatch>> {
    #[derive(FromRow)]
    struct Row {
        sku_id: i64,
        warehouse_id: i64,
        total: i64,
        locked: i64,
        sold: i64,
        frozen: i64,
        l_total: i64,
        l_locked: i64,
        l_sold: i64,
        l_frozen: i64,
    }
    let tenant = scope.filter("b.merchant_id", 1);
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT b.sku_id, b.warehouse_id, b.total, b.locked, b.sold, b.frozen,
            CAST(COALESCE(SUM(l.d_total), 0) AS BIGINT) AS l_total, CAST(COALESCE(SUM(l.d_locked), 0) AS BIGINT) AS l_locked,
            CAST(COALESCE(SUM(l.d_sold), 0) AS BIGINT) AS l_sold, CAST(COALESCE(SUM(l.d_frozen), 0) AS BIGINT) AS l_frozen
         FROM stock_balances b LEFT JOIN stock_ledger l ON l.sku_id = b.sku_id AND l.warehouse_id = b.warehouse_id
         WHERE {tenant}{only}
         GROUP BY b.sku_id, b.warehouse_id, b.total, b.locked, b.sold, b.frozen",
        only = crate::infra::db::and_id_in("b.sku_id", skus),
    ))
    .persistent(skus.is_none())
    .bind(scope.bind())
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let balance = Buckets {
                total: r.total,
                locked: r.locked,
                sold: r.sold,
                frozen: r.frozen,
            };
            let ledger = Buckets {
                total: r.l_total,
                locked: r.l_locked,
                sold: r.l_sold,
                frozen: r.l_frozen,
            };
            (balance != ledger).then_some(ReplayMismatch {
                sku_id: r.sku_id,
                warehouse_id: r.warehouse_id,
                balance,
                ledger,
            })
        })
        .collect())
}

/// Stock figures for a SKU. Goods only: nothing here counts slot places or codes.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub sold_7d: i64,
    pub sold_30d: i64,
    /// Percent of the units on offer over the last 30 days that sold.
    pub sell_through_30d: Option<f64>,
    pub days_of_cover_7d: Option<f64>,
    pub days_of_cover_30d: Option<f64>,
    /// Milliseconds in the last 30 days with nothing available in any warehouse.
    pub out_of_stock_ms_30d: i64,
    /// Available over the chart's window: (time, available) at each change, starting at the
    /// window (or the SKU's creation, when later).
    pub series: Vec<(i64, i64)>,
    /// The receipts, write-offs and counts in the chart's window: (time, ledger kind).
    pub marks: Vec<(i64, String)>,
    /// The SKU never had a unit in any warehouse: no figure says anything yet.
    pub never_stocked: bool,
}

/// The chart's windows a person may pick, in days.
pub const CHART_DAYS: [i64; 3] = [7, 30, 90];

/// Available over a window, replayed from the ledger rows (warehouse, available after, time,
/// kind), oldest first: the series and the milliseconds with nothing available.
fn replay_window(
    rows: &[(i64, i64, i64, String)],
    window_start: i64,
    now: i64,
) -> (Vec<(i64, i64)>, i64) {
    let mut per_wh: std::collections::HashMap<i64, i64> = std::collections::HashMap::new();
    let mut series = Vec::new();
    let mut out_of_stock = 0;
    let mut current = 0;
    let mut current_since = window_start;
    let mut started = false;
    for (wh, avail, at, _) in rows {
        let at = *at;
        if at > window_start && !started {
            series.push((window_start, current));
            started = true;
        }
        if at > window_start {
            if current <= 0 {
                out_of_stock += at - current_since.max(window_start);
            }
            current_since = at;
        }
        per_wh.insert(*wh, *avail);
        current = per_wh.values().sum();
        if at > window_start {
            series.push((at, current));
        }
    }
    if !started {
        series.push((window_start, current));
    }
    if current <= 0 {
        out_of_stock += now - current_since.max(window_start);
    }
    series.push((now, current));
    (series, out_of_stock.max(0))
}

/// The figures, and the chart over the last `chart_days` days (one of [`CHART_DAYS`]).
pub async fn figures(
    db: &Db,
    sku: &Sku,
    available_now: i64,
    chart_days: i64,
) -> DomainResult<Figures> {
    let now = db.now_ms();
    let since_30 = now - 30 * DAY_MS;
    let since_7 = now - 7 * DAY_MS;
    let (sold_7d, sold_30d): (i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(CASE WHEN created_at >= $2 THEN d_sold ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(d_sold), 0) AS BIGINT)
         FROM stock_ledger WHERE sku_id = $1 AND kind = 'CONFIRM' AND created_at >= $3",
    )
    .bind(sku.id)
    .bind(since_7)
    .bind(since_30)
    .fetch_one(&db.pool)
    .await?;
    let cover =
        |sold: i64, days: f64| (sold > 0).then(|| available_now as f64 / (sold as f64 / days));
    let offered = sold_30d + available_now;
    let sell_through_30d = (offered > 0).then(|| 100.0 * sold_30d as f64 / offered as f64);

    // Replay per-warehouse availability in order to know the SKU-wide figure at every change.
    let rows: Vec<(i64, i64, i64, String)> = sqlx::query_as(
        "SELECT warehouse_id, total_after - locked_after - sold_after - frozen_after, created_at, kind
         FROM stock_ledger WHERE sku_id = $1 ORDER BY id",
    )
    .bind(sku.id)
    .fetch_all(&db.pool)
    .await?;
    let stocking = |r: &(i64, i64, i64, String)| {
        r.3 == "RECEIVE" || r.3 == "COUNT" || r.3 == "TRANSFER" || r.3 == "RETURN_RESTOCK"
    };
    let never_stocked = !rows.iter().any(stocking) && available_now <= 0;
    // Out of stock counts from the first stock on: the minutes between creating a SKU and
    // receiving its first units are not time it sold out.
    let first_stocked = rows.iter().find(|r| stocking(r)).map_or(now, |r| r.2);
    let created = sku_created(db, sku.id).await?;
    let (_, out_of_stock) = replay_window(&rows, since_30.max(created).max(first_stocked), now);
    let chart_days = if CHART_DAYS.contains(&chart_days) {
        chart_days
    } else {
        30
    };
    // The whole window, also for a SKU younger than it (none available before it was made): the
    // 7/30/90-day choice always spans what it says.
    let chart_start = now - chart_days * DAY_MS;
    let (series, _) = replay_window(&rows, chart_start, now);
    let marks = rows
        .iter()
        .filter(|r| r.2 > chart_start && matches!(r.3.as_str(), "RECEIVE" | "WRITE_OFF" | "COUNT"))
        .map(|r| (r.2, r.3.clone()))
        .collect();
    Ok(Figures {
        sold_7d,
        sold_30d,
        sell_through_30d,
        days_of_cover_7d: cover(sold_7d, 7.0),
        days_of_cover_30d: cover(sold_30d, 30.0),
        out_of_stock_ms_30d: out_of_stock,
        series,
        marks,
        never_stocked,
    })
}

async fn sku_created(db: &Db, sku_id: i64) -> DomainResult<i64> {
    Ok(
        sqlx::query_scalar("SELECT created_at FROM skus WHERE id = $1")
            .bind(sku_id)
            .fetch_one(&db.pool)
            .await?,
    )
}

/// A ledger row of an order, with the SKU it moved.
#[derive(Debug, Clone, FromRow)]
pub struct OrderEntry {
    pub sku: String,
    #[sqlx(flatten)]
    pub entry: Entry,
}

/// Every ledger row an order produced (reserve, confirm, release or expiry, returns), oldest first.
pub async fn of_order(
    db: &Db,
    merchant_id: crate::domain::MerchantId,
    order_id: &str,
) -> DomainResult<Vec<OrderEntry>> {
    Ok(sqlx::query_as(
        "SELECT s.code AS sku, l.id, w.slug AS warehouse, l.kind, l.qty, l.d_total, l.d_locked, l.d_sold, l.d_frozen,
            l.total_after, l.locked_after, l.sold_after, l.frozen_after, l.reason, l.actor, l.order_id, l.created_at,
            l.reason_code, w.name AS warehouse_name
         FROM stock_ledger l JOIN warehouses w ON w.id = l.warehouse_id JOIN skus s ON s.id = l.sku_id
         WHERE l.merchant_id = $1 AND l.order_id = $2 ORDER BY l.id",
    )
    .bind(merchant_id)
    .bind(order_id)
    .fetch_all(&db.pool)
    .await?)
}
