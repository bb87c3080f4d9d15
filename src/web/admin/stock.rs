//! A goods SKU's stock page: balances per warehouse, the adjustment form (htmx swaps the panel and
//! refreshes the ledger in place), stock figures with a small chart, and the filtered ledger.

use crate::domain::MerchantId;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::catalog::{self, Sku, UnitType};
use crate::domain::ledger::{self, Figures, Filter};
use crate::domain::stock::{self, AdjustInput, AdjustKind, CountPreview, StockSummary};
use crate::domain::{tenants, DomainError, FieldError, Scope};
use crate::messages;
use crate::web::auth::CurrentUser;
use crate::web::error::WebError;
use crate::web::flash::FlashKind;
use crate::web::ids::PathId;
use crate::web::layout::Layout;
use crate::web::page::{PageCtx, Part};
use crate::web::view::frozen::{frozen_banner, FrozenBanner};
use crate::web::view::time::day_bound;
use crate::web::view::{query, verdicts, Errs};
use crate::web::AppState;
// Used by the templates: `fix.link()`.
use crate::web::view::links::FixLink;
// Used by the templates: the reasons offered and their groups.
use crate::domain::stock_reasons::{AdjustReason, ReasonGroup};

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

/// A step line of available over time, in a 600 × 120 box.
fn chart(series: &[(i64, i64)]) -> (String, i64) {
    let (Some(first), Some(last)) = (series.first(), series.last()) else {
        return (String::new(), 0);
    };
    let max = series.iter().map(|p| p.1).max().unwrap_or(0).max(1);
    let span = (last.0 - first.0).max(1) as f64;
    let x = |t: i64| 600.0 * (t - first.0) as f64 / span;
    let y = |v: i64| 110.0 - 100.0 * v.max(0) as f64 / max as f64;
    let mut pts = Vec::new();
    let mut prev: Option<i64> = None;
    for (t, v) in series {
        if let Some(p) = prev {
            pts.push(format!("{:.1},{:.1}", x(*t), y(p)));
        }
        pts.push(format!("{:.1},{:.1}", x(*t), y(*v)));
        prev = Some(*v);
    }
    (pts.join(" "), max)
}

fn figures_view(f: &Figures) -> FiguresView {
    let (chart_points, chart_max) = chart(&f.series);
    FiguresView {
        sold_7d: f.sold_7d,
        sold_30d: f.sold_30d,
        sell_through: f.sell_through_30d.map(|p| format!("{p:.1}%")),
        cover_7d: f.days_of_cover_7d.map(days),
        cover_30d: f.days_of_cover_30d.map(days),
        out_of_stock: duration_label(f.out_of_stock_ms_30d),
        chart_points,
        chart_max,
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

fn entry_view(e: &ledger::Entry, tz: Tz) -> EntryView {
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
        warehouse: e.warehouse.clone(),
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
        actor: e.actor.clone(),
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
    form: AdjustForm,
) -> Result<StockPage, WebError> {
    let user = &cx.user;
    let verdicts = verdicts::of_sku(state, &sku).await?;
    let stock_now = stock::summary(&state.db, &sku).await?;
    let figures = ledger::figures(&state.db, &sku, stock_now.available).await?;
    let filter = ledger_filter(state, sku.merchant_id, &q, tz).await?;
    let (entries, page, pages, total) =
        ledger::page(&state.db, sku.id, &filter, q.page.parse().unwrap_or(1)).await?;
    let product =
        catalog::get_product(&state.db, Scope::Merchant(sku.merchant_id), sku.product_id).await?;
    let warehouses = tenants::warehouses(&state.db, Scope::Merchant(sku.merchant_id)).await?;
    let frozen = frozen_banner(state, user, sku.merchant_id, sku.frozen_finding_id).await?;
    Ok(StockPage {
        layout: cx.layout().await,
        verdicts,
        can_adjust: user.0.is_admin_of(sku.merchant_id),
        product_name: product.product.name,
        stock: stock_now,
        figures: figures_view(&figures),
        warehouses,
        form,
        errors: Errs::default(),
        notice: None,
        preview: None,
        entries: entries.iter().map(|e| entry_view(e, tz)).collect(),
        base_query: query_string(&q),
        filter: q,
        page,
        pages,
        total,
        ledger_oob: false,
        frozen,
        sku,
    })
}

fn default_form(warehouses_first: Option<&str>) -> AdjustForm {
    AdjustForm {
        kind: "RECEIVE".into(),
        warehouse: warehouses_first.unwrap_or("").to_string(),
        ..Default::default()
    }
}

impl StockPage {
    /// The panel for htmx (the adjustment form posts into it), the page otherwise.
    fn answer(&self, cx: &PageCtx, status: StatusCode) -> Result<Response, WebError> {
        cx.answer(status, self, Part::AnyHtmx, |p| p.as_panel().render())
    }
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(q): Query<LedgerQuery>,
) -> Result<Response, WebError> {
    let sku = load_sku(&state, &cx.user, id).await?;
    let mut page = build_page(&state, &cx, sku, q, AdjustForm::default()).await?;
    page.form = default_form(page.warehouses.first().map(|w| w.slug.as_str()));
    // The ledger filters ask htmx for the ledger alone.
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
        return Ok(Redirect::to(&format!("/admin/skus/{}/stock", sku.0.id)).into_response());
    }
    let fresh = AdjustForm {
        kind: form.kind.trim().to_string(),
        warehouse: form.warehouse,
        ..Default::default()
    };
    let mut page = build_page(state, cx, sku, LedgerQuery::default(), fresh).await?;
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
    Form(form): Form<AdjustForm>,
) -> Result<Response, WebError> {
    let (sku, tz) = load_sku(&state, &cx.user, id).await?;
    let merchant_id = sku.merchant_id;
    if !cx.user.0.is_admin_of(merchant_id) {
        return Err(DomainError::Forbidden.into());
    }
    let qty = stock::typed_qty(&form.kind, &form.qty);
    let count = AdjustKind::parse(form.kind.trim()) == Some(AdjustKind::Count);
    // A count is shown before it is booked: on hand now, counted, and the difference.
    if let (true, Ok(counted)) = (count && form.confirm_count != "1", &qty) {
        let preview =
            stock::count_preview(&state.db, merchant_id, sku.id, &form.warehouse, *counted).await?;
        if let Some(preview) = preview {
            let mut page = build_page(&state, &cx, (sku, tz), LedgerQuery::default(), form).await?;
            page.form.expected_on_hand = preview.on_hand.to_string();
            page.preview = Some(preview);
            return page.answer(&cx, StatusCode::OK);
        }
    }
    let result = match qty {
        Ok(q) => {
            let actor = cx.actor(&format!("/admin/skus/{}/stock", sku.id));
            let input = adjust_input(&sku, &form, q);
            stock::adjust(&state.db, &actor, merchant_id, input, None).await
        }
        Err(e) => Err(DomainError::Invalid(vec![e])),
    };
    let errors = match result {
        Ok(_) => {
            let moved = form.qty.trim().parse().unwrap_or(0);
            let notice = messages::stock_adjusted(form.kind.trim(), moved, &sku.code);
            return adjusted(&state, &cx, (sku, tz), form, notice).await;
        }
        Err(DomainError::Invalid(errors)) => errors,
        Err(DomainError::Conflict { code, message, .. }) => {
            vec![FieldError::new("form", code, message)]
        }
        Err(e) => return Err(e.into()),
    };
    let mut page = build_page(&state, &cx, (sku, tz), LedgerQuery::default(), form).await?;
    page.errors = Errs(errors);
    page.answer(&cx, StatusCode::UNPROCESSABLE_ENTITY)
}

pub async fn ledger_csv(
    State(state): State<AppState>,
    user: CurrentUser,
    PathId(id): PathId,
    Query(q): Query<LedgerQuery>,
) -> Result<Response, WebError> {
    let (sku, tz) = load_sku(&state, &user, id).await?;
    let filter = ledger_filter(&state, sku.merchant_id, &q, tz).await?;
    let body = ledger::csv(&state.db, &sku, &filter, tz).await?;
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
fn days(d: f64) -> String {
    if d < 10.0 {
        format!("{d:.1}")
    } else {
        crate::i18n::format::number(crate::i18n::current(), d.round() as i64)
    }
}
