//! A goods SKU's stock page: balances per warehouse, the adjustment form (htmx swaps the panel and
//! refreshes the ledger in place), stock figures with a small chart, and the filtered ledger.

pub mod import;
pub mod report;

use crate::domain::MerchantId;
use crate::web::kit::lagging::Lagging;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::catalog::{self, Sku, UnitType};
use crate::domain::stock::holds;
use crate::domain::stock::ledger::{self, Figures, Filter};
use crate::domain::stock::{self, AdjustInput, AdjustKind, CountPreview, StockSummary};
use crate::domain::{tenancy::tenants, DomainError, FieldError, Scope};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::actor::People;
use crate::web::view::frozen::{frozen_banner, FrozenBanner};
use crate::web::view::time::day_bound;
use crate::web::view::{query, verdicts, Errs};
use crate::web::AppState;
// Used by the templates: `fix.link()`.
use crate::web::view::links::FixLink;
// Used by the templates: the reasons offered.
use crate::domain::stock::reasons::AdjustReason;

#[derive(Deserialize, Default, Clone)]
pub struct LedgerQuery {
    #[serde(default)]
    warehouse: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    order_id: String,
    /// Only adjustments given this reason ([`AdjustReason`]).
    #[serde(default)]
    reason_code: String,
    #[serde(default)]
    page: String,
}

#[derive(Deserialize, Default, Clone)]
pub struct AdjustForm {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    warehouse: String,
    #[serde(default)]
    to_warehouse: String,
    #[serde(default)]
    qty: String,
    #[serde(default)]
    reason: String,
    /// Why, from the fixed list; empty: only the note says.
    #[serde(default)]
    reason_code: String,
    /// "1" once the person has seen the count's difference and confirms it.
    #[serde(default)]
    confirm_count: String,
    #[serde(default)]
    expected_on_hand: String,
    /// What the confirmed preview was of (`warehouse:counted`): a count changed after its
    /// preview is previewed again, never booked unseen.
    #[serde(default)]
    preview_of: String,
    /// A hold: the day it is due for release (YYYY-MM-DD), empty for none.
    #[serde(default)]
    release_on: String,
    /// A release: the hold it takes from.
    #[serde(default)]
    hold_id: String,
}

/// What the panel shows besides the stock: the task whose form is open, the hold a release
/// starts from, and the chart's window in days.
#[derive(Deserialize, Default, Clone)]
pub struct PanelQuery {
    #[serde(default)]
    task: String,
    #[serde(default)]
    hold: String,
    #[serde(default)]
    days: String,
}

/// The tasks of the stock page, in the order people reach for them; each opens its own form.
pub const TASKS: [AdjustKind; 6] = [
    AdjustKind::Receive,
    AdjustKind::WriteOff,
    AdjustKind::Transfer,
    AdjustKind::Freeze,
    AdjustKind::Unfreeze,
    AdjustKind::Count,
];

/// The reason a task's form starts with, where one reason is the usual one; None: the person
/// chooses (a write-off's reason is the point of reporting on it).
fn default_reason(kind: AdjustKind) -> &'static str {
    match kind {
        AdjustKind::Receive => "received",
        AdjustKind::Count => "count",
        AdjustKind::Freeze | AdjustKind::Unfreeze => "qc_hold",
        AdjustKind::WriteOff | AdjustKind::Transfer => "",
    }
}

pub struct HoldView {
    pub id: i64,
    pub warehouse: String,
    pub warehouse_name: String,
    pub qty: i64,
    pub remaining: i64,
    pub reason_code: String,
    pub reason: String,
    pub since: String,
    pub by: String,
    pub release_on: String,
    /// Its release day has come.
    pub due: bool,
}

/// A receipt, write-off or count on the chart: where along the time axis, and which.
pub struct MarkView {
    pub x: String,
    pub kind: String,
    pub label: String,
}

pub struct EntryView {
    pub time: String,
    pub warehouse: String,
    pub kind: String,
    pub qty: i64,
    pub change: String,
    pub available_before: i64,
    pub available_after: i64,
    pub buckets: String,
    pub order_id: String,
    pub reason: String,
    pub actor: String,
    /// The reason's code (empty when none was given).
    pub reason_code: String,
}

pub struct FiguresView {
    pub sold_7d: i64,
    pub sold_30d: i64,
    pub sell_through: Option<String>,
    pub cover_7d: Option<String>,
    pub cover_30d: Option<String>,
    pub out_of_stock: Option<String>,
    pub chart_points: String,
    pub chart_max: i64,
    /// The chart's window in days (7, 30 or 90).
    pub days: i64,
    /// Dates under the time axis, evenly spaced from the window's start to now.
    pub axis: Vec<String>,
    pub marks: Vec<MarkView>,
    pub never_stocked: bool,
}

#[derive(Template)]
#[template(path = "admin/stock/sku.html", blocks = ["panel", "ledger"])]
struct StockPage {
    layout: Layout,
    /// Whether the SKU can be sold now, and why not.
    verdicts: Vec<crate::domain::sellable::Verdict>,
    sku: Sku,
    product_name: String,
    can_adjust: bool,
    stock: StockSummary,
    figures: FiguresView,
    warehouses: Vec<tenants::Warehouse>,
    form: AdjustForm,
    errors: Errs,
    notice: Option<String>,
    preview: Option<CountPreview>,
    entries: Vec<EntryView>,
    filter: LedgerQuery,
    page: i64,
    pages: i64,
    total: i64,
    base_query: String,
    ledger_oob: bool,
    /// Set while reconciliation has frozen the SKU.
    frozen: Option<FrozenBanner>,
    /// The task whose form is open.
    task: AdjustKind,
    /// The reasons that fit the open task.
    reasons: Vec<AdjustReason>,
    holds: Vec<HoldView>,
    /// On hand: every unit not yet sold (held and committed included).
    on_hand: i64,
}

/// How long the SKU was out of stock, in the request's language ("2 d 3 h", "< 1 min").
fn duration_label(ms: i64) -> Option<String> {
    if ms <= 0 {
        return None;
    }
    let lang = crate::i18n::current();
    if ms < 60_000 {
        return Some(lang.t("stock-dur-under-minute"));
    }
    let minutes = ms / 60_000;
    let (d, h, m) = (minutes / 1440, (minutes % 1440) / 60, minutes % 60);
    Some(if d > 0 {
        lang.t2("stock-dur-days-hours", ("d", d.into()), ("h", h.into()))
    } else if h > 0 {
        lang.t2("stock-dur-hours-minutes", ("h", h.into()), ("m", m.into()))
    } else {
        lang.t1("stock-dur-minutes", "m", m)
    })
}

/// A step line of available over time, in a 600 × 120 box, from `start` to `end`.
fn chart(series: &[(i64, i64)], (start, end): (i64, i64)) -> (String, i64) {
    if series.is_empty() {
        return (String::new(), 0);
    }
    let max = series.iter().map(|p| p.1).max().unwrap_or(0).max(1);
    let y = |v: i64| 110.0 - 100.0 * v.max(0) as f64 / max as f64;
    let mut pts = Vec::new();
    let mut prev: Option<i64> = None;
    for (t, v) in series {
        if let Some(p) = prev {
            pts.push(format!("{:.1},{:.1}", x_of(*t, start, end), y(p)));
        }
        pts.push(format!("{:.1},{:.1}", x_of(*t, start, end), y(*v)));
        prev = Some(*v);
    }
    (pts.join(" "), max)
}

/// Where a moment falls on the chart's 600-wide time axis.
fn x_of(t: i64, start: i64, end: i64) -> f64 {
    600.0 * (t - start) as f64 / (end - start).max(1) as f64
}

fn figures_view(f: &Figures, days: i64, tz: Tz) -> FiguresView {
    let lang = crate::i18n::current();
    let start = f.series.first().map_or(0, |p| p.0);
    let end = f.series.last().map_or(0, |p| p.0);
    let (chart_points, chart_max) = chart(&f.series, (start, end));
    // Four moments under the axis: the window's start, two between, and now. Dates, unless
    // that would say one day twice (a SKU made today charts from its creation): then clock
    // times, each with its date where the day changes.
    use crate::web::view::time::{clock, local_date};
    let ticks: Vec<i64> = (0..4).map(|i| start + (end - start) * i / 3).collect();
    let dates: Vec<Option<chrono::NaiveDate>> = ticks.iter().map(|t| local_date(*t, tz)).collect();
    let day = |d: Option<chrono::NaiveDate>| {
        d.map(|d| crate::i18n::format::day_short(lang, d))
            .unwrap_or_default()
    };
    let axis: Vec<String> = if dates.windows(2).all(|w| w[0] != w[1]) {
        dates.iter().map(|d| day(*d)).collect()
    } else {
        ticks
            .iter()
            .zip(&dates)
            .enumerate()
            .map(|(i, (t, d))| {
                if i == 0 || dates[i - 1] != *d {
                    format!("{} {}", day(*d), clock(*t, tz))
                } else {
                    clock(*t, tz)
                }
            })
            .collect()
    };
    // Minutes apart, even clock times repeat: a label said once, the others left blank (the
    // spans keep their places along the axis).
    let mut said = String::new();
    let axis = axis
        .into_iter()
        .map(|a| {
            if a == said {
                String::new()
            } else {
                said.clone_from(&a);
                a
            }
        })
        .collect();
    let marks = f
        .marks
        .iter()
        .map(|(t, kind)| MarkView {
            x: format!("{:.1}", x_of(*t, start, end)),
            label: format!(
                "{} · {}",
                lang.t1("stock-kind", "kind", kind.as_str()),
                crate::web::view::time::when(*t, tz)
            ),
            kind: kind.clone(),
        })
        .collect();
    FiguresView {
        sold_7d: f.sold_7d,
        sold_30d: f.sold_30d,
        sell_through: f
            .sell_through_30d
            .map(|p| crate::i18n::format::percent(lang, p)),
        cover_7d: f.days_of_cover_7d.map(days_label),
        cover_30d: f.days_of_cover_30d.map(days_label),
        out_of_stock: duration_label(f.out_of_stock_ms_30d),
        chart_points,
        chart_max,
        days,
        axis,
        marks,
        never_stocked: f.never_stocked,
    }
}

async fn ledger_filter(
    state: &AppState,
    merchant_id: MerchantId,
    q: &LedgerQuery,
    tz: Tz,
) -> Result<Filter, WebError> {
    let warehouse_id = if q.warehouse.trim().is_empty() {
        None
    } else {
        // An unknown warehouse matches nothing rather than everything.
        Some(
            stock::warehouse_by_slug(&state.db, merchant_id, &q.warehouse)
                .await?
                .map(|w| w.id)
                .unwrap_or(-1),
        )
    };
    Ok(Filter {
        warehouse_id,
        kind: stock::LEDGER_KINDS
            .contains(&q.kind.as_str())
            .then(|| q.kind.clone()),
        from: day_bound(&q.from, tz, false),
        to: day_bound(&q.to, tz, true),
        order_id: Some(q.order_id.trim().to_string()).filter(|s| !s.is_empty()),
        // An unknown code matches nothing rather than everything.
        reason_code: match q.reason_code.trim() {
            "" => None,
            raw => Some(
                AdjustReason::parse(raw)
                    .map(|c| c.as_str().to_string())
                    .unwrap_or_else(|| "?".to_string()),
            ),
        },
    })
}

fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

fn entry_view(e: &ledger::Entry, tz: Tz, people: &People) -> EntryView {
    let lang = crate::i18n::current();
    let mut change = Vec::new();
    for (bucket, d) in [
        ("total", e.d_total),
        ("locked", e.d_locked),
        ("sold", e.d_sold),
        ("frozen", e.d_frozen),
    ] {
        if d != 0 {
            change.push(lang.t2(
                "stock-change-of",
                ("bucket", bucket.into()),
                ("change", signed(d).into()),
            ));
        }
    }
    EntryView {
        time: crate::web::view::time::when_s(e.created_at, tz),
        warehouse: e.warehouse_name.clone(),
        kind: e.kind.clone(),
        qty: e.qty,
        change: change.join(&lang.t("stock-change-sep")),
        available_before: e.available_before(),
        available_after: e.available_after(),
        buckets: format!(
            "{} / {} / {} / {}",
            e.total_after, e.locked_after, e.sold_after, e.frozen_after
        ),
        order_id: e.order_id.clone().unwrap_or_default(),
        reason: e.reason.clone(),
        actor: people.say(&e.actor),
        reason_code: e.reason_code.clone().unwrap_or_default(),
    }
}

/// The ledger filters as a query string, for the pagination links and the CSV export.
fn query_string(q: &LedgerQuery) -> String {
    query(&[
        ("warehouse", q.warehouse.trim()),
        ("kind", q.kind.trim()),
        ("from", q.from.trim()),
        ("to", q.to.trim()),
        ("order_id", q.order_id.trim()),
        ("reason_code", q.reason_code.trim()),
    ])
}

/// The SKU (goods only) in the caller's scope, with its merchant's timezone.
async fn load_sku(state: &AppState, user: &CurrentUser, id: i64) -> Result<(Sku, Tz), WebError> {
    let sku = catalog::sku_by_id(&state.db, user.actor("").scope(), id).await?;
    if sku.unit_type != UnitType::Quantity {
        return Err(DomainError::NotFound("stock page").into());
    }
    let tz = tenants::merchant(&state.db, sku.merchant_id).await?.tz();
    Ok((sku, tz))
}

async fn build_page(
    state: &AppState,
    cx: &PageCtx,
    (sku, tz): (Sku, Tz),
    q: LedgerQuery,
    (panel, form): (&PanelQuery, AdjustForm),
) -> Result<StockPage, WebError> {
    let user = &cx.user;
    let verdicts = verdicts::of_sku(state, &sku).await?;
    let stock_now = stock::summary(&state.db, &sku).await?;
    // A window other than 7, 30 or 90 days is 30.
    let days = panel
        .days
        .parse()
        .ok()
        .filter(|d| ledger::CHART_DAYS.contains(d))
        .unwrap_or(30);
    let figures = ledger::figures(&state.db, &sku, stock_now.available, days).await?;
    let filter = ledger_filter(state, sku.merchant_id, &q, tz).await?;
    let (entries, page, pages, total) =
        ledger::page(&state.db, sku.id, &filter, q.page.parse().unwrap_or(1)).await?;
    let product =
        catalog::get_product(&state.db, Scope::Merchant(sku.merchant_id), sku.product_id).await?;
    let warehouses = tenants::warehouses(&state.db, Scope::Merchant(sku.merchant_id)).await?;
    let frozen = frozen_banner(state, user, sku.merchant_id, sku.frozen_finding_id).await?;
    let people = People::of_merchant(&state.db, sku.merchant_id).await?;
    let today = state.db.clock.today(tz);
    let holds = holds::open(&state.db, sku.id)
        .await?
        .into_iter()
        .map(|h| HoldView {
            due: h.due(today),
            id: h.id,
            warehouse: h.warehouse,
            warehouse_name: h.warehouse_name,
            qty: h.qty,
            remaining: h.remaining,
            reason_code: h.reason_code.unwrap_or_default(),
            reason: h.reason,
            since: crate::web::view::time::when(h.created_at, tz),
            by: people.say(&h.actor),
            release_on: h
                .release_on
                .as_deref()
                .and_then(crate::web::view::time::parse_day)
                .map(|d| crate::i18n::format::day_short(cx.lang, d))
                .unwrap_or_default(),
        })
        .collect();
    let task = AdjustKind::parse(form.kind.trim()).unwrap_or(AdjustKind::Receive);
    Ok(StockPage {
        layout: cx.layout().await,
        verdicts,
        can_adjust: user.account.is_admin_of(sku.merchant_id),
        product_name: product.product.name,
        on_hand: stock_now.total - stock_now.sold,
        stock: stock_now,
        figures: figures_view(&figures, days, tz),
        warehouses,
        form,
        errors: Errs::default(),
        notice: None,
        preview: None,
        entries: entries.iter().map(|e| entry_view(e, tz, &people)).collect(),
        base_query: query_string(&q),
        filter: q,
        page,
        pages,
        total,
        ledger_oob: false,
        frozen,
        reasons: AdjustReason::for_kind(task),
        task,
        holds,
        sku,
    })
}

/// The form of a task as it opens: the first warehouse (for a release, the hold asked for, else
/// the oldest), and the task's usual reason.
fn task_form(panel: &PanelQuery, warehouses_first: Option<&str>) -> AdjustForm {
    let kind = AdjustKind::parse(panel.task.trim()).unwrap_or(AdjustKind::Receive);
    AdjustForm {
        kind: kind.as_str().into(),
        warehouse: warehouses_first.unwrap_or("").to_string(),
        reason_code: default_reason(kind).into(),
        hold_id: panel.hold.trim().to_string(),
        ..Default::default()
    }
}

impl StockPage {
    /// The ledger's pages, keeping its filters.
    fn pager(&self) -> crate::web::view::pager::Pager {
        crate::web::view::pager::Pager {
            path: paths::sku_stock(self.sku.id),
            query: self.base_query.clone(),
            page: self.page,
            pages: self.pages,
            target: "",
        }
    }

    /// The panel for htmx (the adjustment form posts into it), the page otherwise.
    fn answer(&self, cx: &PageCtx, status: StatusCode) -> Result<Response, WebError> {
        cx.answer(status, self, Part::AnyHtmx, |p| p.as_panel().render())
    }

    /// The hold a release form takes from: the one asked for, else the oldest.
    fn chosen_hold(&self) -> Option<&HoldView> {
        self.holds
            .iter()
            .find(|h| h.id.to_string() == self.form.hold_id.trim())
            .or(self.holds.first())
    }

    /// The quantity box: as typed; for a release asked from the holds list (and not yet typed),
    /// what that hold holds.
    fn qty_value(&self) -> String {
        if !self.form.qty.is_empty() || self.task != AdjustKind::Unfreeze || self.notice.is_some() {
            return self.form.qty.clone();
        }
        self.holds
            .iter()
            .find(|h| h.id.to_string() == self.form.hold_id.trim())
            .map(|h| h.remaining.to_string())
            .unwrap_or_default()
    }

    fn chosen_hold_id(&self) -> i64 {
        self.chosen_hold().map_or(0, |h| h.id)
    }

    /// The query string of the panel's own links (a task, the chart's window) kept with the
    /// other's value.
    fn panel_link(&self, task: &str, days: impl std::borrow::Borrow<i64>) -> String {
        let days = *days.borrow();
        query(&[("task", task), ("days", &days.to_string())])
    }
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(q): Query<LedgerQuery>,
    Query(panel): Query<PanelQuery>,
) -> Result<Response, WebError> {
    let sku = load_sku(&state, &cx.user, id).await?;
    let first = tenants::warehouses(&state.db, Scope::Merchant(sku.0.merchant_id))
        .await?
        .first()
        .map(|w| w.slug.clone());
    let form = task_form(&panel, first.as_deref());
    let page = build_page(&state, &cx, sku, q, (&panel, form)).await?;
    // A task or the chart's window asks htmx for the panel; the ledger filters for the ledger.
    if cx.wants(Part::Target("stock-panel")) {
        return Ok(Html(page.as_panel().render()?).into_response());
    }
    cx.answer(StatusCode::OK, &page, Part::Target("ledger"), |p| {
        p.as_ledger().render()
    })
}

/// The adjustment as the domain takes it, from the form and its parsed quantity.
fn adjust_input(sku: &Sku, form: &AdjustForm, qty: i64) -> AdjustInput {
    let count = AdjustKind::parse(form.kind.trim()) == Some(AdjustKind::Count);
    AdjustInput {
        sku: sku.code.clone(),
        warehouse: form.warehouse.clone(),
        kind: form.kind.trim().to_string(),
        qty,
        reason: form.reason.clone(),
        reason_code: form.reason_code.clone(),
        to_warehouse: Some(form.to_warehouse.clone()).filter(|s| !s.trim().is_empty()),
        expected_on_hand: count
            .then(|| form.expected_on_hand.trim().parse().ok())
            .flatten(),
        release_on: form.release_on.clone(),
        hold_id: form.hold_id.trim().parse().ok(),
    }
}

/// Booked: htmx gets the panel (a fresh form of the same kind and warehouse) and the ledger out of
/// band; a plain form goes back to the page.
async fn adjusted(
    state: &AppState,
    cx: &PageCtx,
    sku: (Sku, Tz),
    form: AdjustForm,
    notice: String,
) -> Result<Response, WebError> {
    if !cx.htmx {
        cx.flash(FlashKind::Success, notice).await;
        return Ok(Redirect::to(&paths::sku_stock(sku.0.id)).into_response());
    }
    let kind = AdjustKind::parse(form.kind.trim()).unwrap_or(AdjustKind::Receive);
    let fresh = AdjustForm {
        kind: kind.as_str().to_string(),
        warehouse: form.warehouse,
        reason_code: default_reason(kind).into(),
        // A release keeps to its hold (while it holds any); the quantity is typed again.
        hold_id: form.hold_id,
        ..Default::default()
    };
    let panel = PanelQuery::default();
    let mut page = build_page(state, cx, sku, LedgerQuery::default(), (&panel, fresh)).await?;
    page.notice = Some(notice);
    page.ledger_oob = true;
    let html = format!(
        "{}{}",
        page.as_panel().render()?,
        page.as_ledger().render()?
    );
    Ok(Html(html).into_response())
}

pub async fn adjust(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(mut form): Form<AdjustForm>,
) -> Result<Response, WebError> {
    let (sku, tz) = load_sku(&state, &cx.user, id).await?;
    let merchant_id = sku.merchant_id;
    if !cx.user.account.is_admin_of(merchant_id) {
        return Err(DomainError::Forbidden.into());
    }
    let panel = PanelQuery::default();
    let kind = AdjustKind::parse(form.kind.trim());
    // A release takes from the hold chosen, in that hold's warehouse.
    if kind == Some(AdjustKind::Unfreeze) {
        let hold = match form.hold_id.trim().parse() {
            Ok(h) => holds::open_by_id(&state.db, sku.id, h).await?,
            Err(_) => None,
        };
        match hold {
            // More than this hold holds: said at the quantity, with what it holds.
            Some(h)
                if form
                    .qty
                    .trim()
                    .parse::<i64>()
                    .is_ok_and(|q| q > h.remaining) =>
            {
                let e = FieldError::new(
                    "qty",
                    "insufficient_held",
                    messages::hold_holds_only(h.remaining),
                );
                return sent_back(&state, &cx, (sku, tz), form, e).await;
            }
            Some(h) => form.warehouse = h.warehouse,
            None => {
                let e = FieldError::new("hold_id", "insufficient_held", messages::hold_gone());
                return sent_back(&state, &cx, (sku, tz), form, e).await;
            }
        }
    }
    let qty = stock::typed_qty(&form.kind, &form.qty);
    let count = AdjustKind::parse(form.kind.trim()) == Some(AdjustKind::Count);
    // A count is shown before it is booked: on hand now, counted, and the difference.
    let previewed = form.confirm_count == "1"
        && form.preview_of == format!("{}:{}", form.warehouse.trim(), form.qty.trim());
    if let (true, Ok(counted)) = (count && !previewed, &qty) {
        let preview =
            stock::count_preview(&state.db, merchant_id, sku.id, &form.warehouse, *counted).await?;
        if let Some(preview) = preview {
            let mut page = build_page(
                &state,
                &cx,
                (sku, tz),
                LedgerQuery::default(),
                (&panel, form),
            )
            .await?;
            page.form.expected_on_hand = preview.on_hand.to_string();
            page.form.preview_of =
                format!("{}:{}", page.form.warehouse.trim(), page.form.qty.trim());
            page.preview = Some(preview);
            return page.answer(&cx, StatusCode::OK);
        }
    }
    let result = match qty {
        Ok(q) => {
            let actor = cx.actor(&paths::sku_stock(sku.id));
            let input = adjust_input(&sku, &form, q);
            stock::adjust(&state.db, &actor, merchant_id, input, None).await
        }
        Err(e) => Err(DomainError::Invalid(vec![e])),
    };
    let errors = match result {
        Ok(_) => {
            let notice = notice(&state, merchant_id, &form).await?;
            return adjusted(&state, &cx, (sku, tz), form, notice).await;
        }
        Err(DomainError::Invalid(errors)) => errors,
        // Too few units for the quantity asked: said at the quantity.
        Err(DomainError::Conflict { code, message, .. })
            if matches!(
                code,
                "insufficient_stock" | "insufficient_frozen" | "insufficient_held"
            ) =>
        {
            vec![FieldError::new("qty", code, message)]
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            vec![FieldError::new("form", code, message)]
        }
        Err(e) => return Err(e.into()),
    };
    let mut page = build_page(
        &state,
        &cx,
        (sku, tz),
        LedgerQuery::default(),
        (&panel, form),
    )
    .await?;
    page.errors = Errs(errors);
    page.answer(&cx, StatusCode::UNPROCESSABLE_ENTITY)
}

/// The form sent back with one refusal, 422, nothing booked.
async fn sent_back(
    state: &AppState,
    cx: &PageCtx,
    sku: (Sku, Tz),
    form: AdjustForm,
    error: FieldError,
) -> Result<Response, WebError> {
    let panel = PanelQuery::default();
    let mut page = build_page(state, cx, sku, LedgerQuery::default(), (&panel, form)).await?;
    page.errors = Errs(vec![error]);
    page.answer(cx, StatusCode::UNPROCESSABLE_ENTITY)
}

/// What a booked adjustment did, in the merchant's words: the units, the warehouses by name,
/// and why (the note, else the reason's name).
async fn notice(
    state: &AppState,
    merchant_id: MerchantId,
    form: &AdjustForm,
) -> Result<String, WebError> {
    let name = |slug: &str| {
        let slug = slug.trim().to_string();
        async move {
            Ok::<_, WebError>(
                stock::warehouse_by_slug(&state.db, merchant_id, &slug)
                    .await?
                    .map_or(slug, |w| w.name),
            )
        }
    };
    let lang = crate::i18n::current();
    let why = match (form.reason.trim(), form.reason_code.trim()) {
        ("", "") => String::new(),
        ("", code) => lang.t1("stock-reason-code", "code", code),
        (note, _) => note.to_string(),
    };
    let qty = form.qty.trim().parse().unwrap_or(0);
    Ok(messages::stock_adjusted(
        form.kind.trim(),
        qty,
        &name(&form.warehouse).await?,
        &name(&form.to_warehouse).await?,
        &why,
    ))
}

pub async fn ledger_csv(
    State(state): State<AppState>,
    lagging: Lagging,
    user: CurrentUser,
    PathId(id): PathId,
    Query(q): Query<LedgerQuery>,
) -> Result<Response, WebError> {
    let (sku, tz) = load_sku(&state, &user, id).await?;
    let filter = ledger_filter(&state, sku.merchant_id, &q, tz).await?;
    // The ledger may be a moment behind: the read replica's, when there is one.
    let body = crate::lagging_read!(lagging, |db| ledger::csv(db, &sku, &filter, tz).await)?;
    let disposition = format!("attachment; filename=\"ledger-{}.csv\"", sku.code);
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

/// Days of cover as people read them: tenths below ten days ("2.5"), whole grouped days above
/// ("2,130"), where a tenth says nothing.
fn days_label(d: f64) -> String {
    if d < 10.0 {
        format!("{d:.1}")
    } else {
        crate::i18n::format::number(crate::i18n::current(), d.round() as i64)
    }
}
