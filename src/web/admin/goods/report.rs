//! The merchant-wide stock page: every goods SKU's figures, sortable by each column, filtered by
//! warehouse, status and a search, paginated, and exported as CSV with the same filters.

use crate::web::kit::lagging::Lagging;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::domain::stock::report::{
    self, Filter, Order, Selection, SortKey, StockReportRow, StockStatus, StockTotals,
};
use crate::domain::{stock, tenancy::tenants, DomainError, MerchantId, Scope};
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::pager::Pager;
use crate::web::view::query;
use crate::web::AppState;

pub const PAGE_SIZE: i64 = 50;

#[derive(Deserialize, Default, Clone)]
pub struct ReportQuery {
    /// Operators: whose stock (a merchant's slug); others see their own.
    #[serde(default)]
    merchant: String,
    #[serde(default)]
    warehouse: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    sort: String,
    /// "1": largest first.
    #[serde(default)]
    desc: String,
    #[serde(default)]
    page: String,
}

pub struct RowView {
    pub row: StockReportRow,
    pub cover: String,
    pub unit_cost: String,
    pub value: String,
}

#[derive(Template)]
#[template(path = "admin/stock/report.html", blocks = ["table"])]
struct ReportPage {
    layout: Layout,
    q: ReportQuery,
    merchants: Vec<tenants::Merchant>,
    merchant_slug: String,
    warehouses: Vec<tenants::Warehouse>,
    rows: Vec<RowView>,
    totals: StockTotals,
    total_value: String,
    /// Whether any SKU has a cost (the value column shows only then).
    costed: bool,
    sort: SortKey,
    desc: bool,
    pager: Pager,
    /// The filters as a query string (for the CSV link and the sort links).
    filters: String,
    /// The merchant has no goods SKU at all.
    no_goods: bool,
}

impl ReportPage {
    fn sorting(&self) -> crate::web::view::sort::Sorting {
        crate::web::view::sort::Sorting {
            path: paths::stock(),
            filters: self.filters.clone(),
            key: self.sort.as_str().to_string(),
            desc: self.desc,
        }
    }

    /// The link a column's header sorts by: this column, the other way round when it already
    /// sorts by it.
    fn sort_href(&self, key: &str) -> String {
        self.sorting().href(key)
    }

    /// The CSV of what the page shows: the same filters and order, every page.
    fn csv_href(&self) -> String {
        self.pager
            .href(1)
            .replacen("/admin/stock?", "/admin/stock/report.csv?", 1)
    }

    /// `aria-sort` of a column's header.
    fn aria_sort(&self, key: &str) -> &'static str {
        self.sorting().aria(key)
    }
}

/// The merchant whose stock is shown: the user's own, or for operators the one asked for (else
/// the first).
async fn merchant_of(
    state: &AppState,
    user: &CurrentUser,
    slug: &str,
) -> Result<(tenants::Merchant, Vec<tenants::Merchant>), WebError> {
    if let Some(m) = user.account.merchant_id {
        return Ok((tenants::merchant(&state.db, m).await?, Vec::new()));
    }
    let all = tenants::merchants(&state.db, Scope::All).await?;
    let chosen = all
        .iter()
        .find(|m| m.slug == slug.trim())
        .or(all.first())
        .cloned()
        .ok_or(DomainError::NotFound("merchant"))?;
    Ok((chosen, all))
}

/// The report's filter from the query: an unknown warehouse or status matches nothing rather
/// than everything.
async fn filter_of(
    state: &AppState,
    merchant_id: MerchantId,
    q: &ReportQuery,
) -> Result<Filter, WebError> {
    let warehouse_id = match q.warehouse.trim() {
        "" => None,
        slug => Some(
            stock::warehouse_by_slug(&state.db, merchant_id, slug)
                .await?
                .map_or(-1, |w| w.id),
        ),
    };
    Ok(Filter {
        warehouse_id,
        status: StockStatus::parse(q.status.trim()),
        search: q.q.clone(),
    })
}

/// Whether this user may see what things cost: the merchant's admins and operators, not staff.
fn sees_costs(user: &CurrentUser) -> bool {
    user.account.merchant_id.is_none() || user.account.admin_merchant().is_some()
}

/// What the report reads for a query.
struct Read {
    merchant_id: MerchantId,
    filter: Filter,
    today: String,
    now: i64,
    low: i64,
    order: Order,
}

impl Read {
    fn selection(&self) -> Selection<'_> {
        Selection {
            merchant_id: self.merchant_id,
            filter: &self.filter,
            default_low: self.low,
            today: &self.today,
            now: self.now,
        }
    }
}

/// The read a query asks for, or `None` when it names a status that does not exist (which
/// matches nothing rather than everything).
async fn read_of(
    state: &AppState,
    merchant: &tenants::Merchant,
    q: &ReportQuery,
    costs: bool,
) -> Result<Option<Read>, WebError> {
    if !q.status.trim().is_empty() && StockStatus::parse(q.status.trim()).is_none() {
        return Ok(None);
    }
    // Sorting by cost would rank what staff may not see.
    let key = match SortKey::parse(q.sort.trim()) {
        Some(SortKey::ValueAtCost) if !costs => SortKey::Sku,
        Some(k) => k,
        None => SortKey::Sku,
    };
    Ok(Some(Read {
        merchant_id: merchant.id,
        filter: filter_of(state, merchant.id, q).await?,
        today: state
            .db
            .clock
            .today(merchant.tz())
            .format("%Y-%m-%d")
            .to_string(),
        now: state.db.now_ms(),
        low: state.config.sellable_thresholds().low_stock,
        order: Order {
            key,
            desc: q.desc == "1",
        },
    }))
}

fn filters_query(q: &ReportQuery, merchant_slug: &str, operator: bool) -> String {
    query(&[
        ("merchant", if operator { merchant_slug } else { "" }),
        ("warehouse", q.warehouse.trim()),
        ("status", q.status.trim()),
        ("q", q.q.trim()),
    ])
}

pub async fn show(
    State(state): State<AppState>,
    lagging: Lagging,
    cx: PageCtx,
    Query(q): Query<ReportQuery>,
) -> Result<Response, WebError> {
    let (merchant, merchants) = merchant_of(&state, &cx.user, &q.merchant).await?;
    let costs = sees_costs(&cx.user);
    let read = read_of(&state, &merchant, &q, costs).await?;
    let totals = match &read {
        // A report may be a moment behind: the read replica's, when there is one.
        Some(r) => crate::lagging_read!(lagging, |db| report::totals(db, &r.selection()).await)?,
        None => StockTotals::default(),
    };
    let unfiltered = [&q.warehouse, &q.status, &q.q]
        .iter()
        .all(|v| v.trim().is_empty());
    let no_goods = totals.skus == 0 && unfiltered;
    // What things cost is the merchant's business: its admins (and operators) see it, staff do not.
    let costed = totals.costed > 0 && costs;
    let pages = Pager::pages(totals.skus, PAGE_SIZE);
    let page = q.page.trim().parse::<i64>().unwrap_or(1).clamp(1, pages);
    // Only the page's rows come out of the database.
    let rows = match &read {
        Some(r) => {
            let window = ((page - 1) * PAGE_SIZE, PAGE_SIZE);
            crate::lagging_read!(lagging, |db| {
                report::rows(db, &r.selection(), r.order, Some(window)).await
            })?
        }
        None => Vec::new(),
    };
    let lang = cx.lang;
    let money = |m: i64| crate::i18n::format::money(lang, m, &merchant.currency);
    let shown = rows
        .into_iter()
        .map(|row| RowView {
            cover: row
                .days_of_cover
                .map(|d| {
                    if d < 10.0 {
                        format!("{d:.1}")
                    } else {
                        crate::i18n::format::number(lang, d.round() as i64)
                    }
                })
                .unwrap_or_default(),
            unit_cost: row.unit_cost.map(money).unwrap_or_default(),
            value: row.value_at_cost.map(money).unwrap_or_default(),
            row,
        })
        .collect();
    let operator = cx.user.account.merchant_id.is_none();
    let filters = filters_query(&q, &merchant.slug, operator);
    let sort = SortKey::parse(q.sort.trim()).unwrap_or(SortKey::Sku);
    let pager_query = format!(
        "{filters}{}{}",
        if filters.is_empty() { "" } else { "&" },
        query(&[("sort", sort.as_str()), ("desc", q.desc.trim())])
    );
    let page_view = ReportPage {
        layout: cx.layout().await,
        warehouses: tenants::warehouses(&state.db, Scope::Merchant(merchant.id)).await?,
        merchant_slug: merchant.slug.clone(),
        merchants,
        rows: shown,
        total_value: money(totals.value_at_cost),
        totals,
        costed,
        desc: q.desc == "1",
        sort,
        pager: Pager {
            path: paths::stock(),
            query: pager_query,
            page,
            pages,
            target: "stock-report",
        },
        filters,
        no_goods,
        q,
    };
    cx.answer(
        StatusCode::OK,
        &page_view,
        Part::Target("stock-report"),
        |p| p.as_table().render(),
    )
}

pub async fn csv(
    State(state): State<AppState>,
    lagging: Lagging,
    user: CurrentUser,
    Query(q): Query<ReportQuery>,
) -> Result<Response, WebError> {
    let (merchant, _) = merchant_of(&state, &user, &q.merchant).await?;
    let costs = sees_costs(&user);
    let rows = match read_of(&state, &merchant, &q, costs).await? {
        Some(r) => crate::lagging_read!(lagging, |db| {
            report::rows(db, &r.selection(), r.order, None).await
        })?,
        None => Vec::new(),
    };
    let day = state.db.clock.today(merchant.tz()).format("%Y-%m-%d");
    let disposition = format!("attachment; filename=\"stock-{}-{day}.csv\"", merchant.slug);
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        report::csv(&rows, costs),
    )
        .into_response())
}
