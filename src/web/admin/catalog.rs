//! Catalog pages: list with search and pagination, create, show/edit, status changes, SKUs.

use crate::domain::catalog::{Deduct, ProductKind, ProductStatus, StockPolicy, UnitType};
use crate::domain::MerchantId;
use crate::web::edge::middleware::Evented;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::catalog::{
    self, Page, Product, ProductDetail, ProductFilter, ProductInput, ProductPatch, SkuInput,
};
use crate::domain::kernel::validate::{self, format_price, ms_to_local};
use crate::domain::{tenancy::tenants, DomainError, FieldError, Scope};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::{query, verdicts, Errs};
use crate::web::AppState;
// Used by the templates: `fix.link()`.
use crate::web::view::links::FixLink;

const INPUT_FMT: &str = "%Y-%m-%dT%H:%M";

/// A product row as the pages show it.
pub struct ProductView {
    pub id: i64,
    pub merchant_name: String,
    pub name: String,
    pub kind: ProductKind,
    pub status: ProductStatus,
    pub sale_window: String,
    pub sku_count: i64,
    /// An online product outside its sale window: `ended` or `not_started` (its badge says so
    /// rather than a plain green ONLINE).
    pub sale_phase: &'static str,
    /// The first SKUs' verdicts (the list), and how many more the product page shows.
    pub verdicts: Vec<SkuVerdict>,
    pub more_skus: i64,
}

/// One SKU's verdict in a list row: sellable and how many, or the first reason why not.
pub struct SkuVerdict {
    pub code: String,
    pub sellable: bool,
    /// "12 available" when sellable, else the first blocking reason.
    pub said: String,
    /// The reason's code when not sellable (a stable hook).
    pub reason: String,
}

/// SKUs whose verdicts a products list row shows; the product page has the others.
const VERDICTS_PER_ROW: usize = 3;

impl SkuVerdict {
    fn of(v: &crate::domain::sellable::Verdict) -> SkuVerdict {
        let first = v.blocking().next();
        SkuVerdict {
            code: v.sku.clone(),
            sellable: v.sellable,
            said: match (v.sellable, first) {
                (true, _) | (false, None) => v.quantity_label(),
                (false, Some(r)) => r.message.clone(),
            },
            reason: first
                .map(|r| r.code.as_str().to_string())
                .unwrap_or_default(),
        }
    }
}

pub struct SkuView {
    pub id: i64,
    pub code: String,
    pub name: String,
    pub price: String,
    /// `set`, `free` or `unset`: a hook for the price cell.
    pub price_state: &'static str,
    pub unit_type: UnitType,
}

fn window_label(p: &Product, tz: Tz) -> String {
    match (p.sale_starts_at, p.sale_ends_at) {
        (None, None) => String::new(),
        (Some(s), None) => format!("{} →", crate::web::view::time::when(s, tz)),
        (None, Some(e)) => format!("→ {}", crate::web::view::time::when(e, tz)),
        (Some(s), Some(e)) => format!(
            "{} → {}",
            crate::web::view::time::when(s, tz),
            crate::web::view::time::when(e, tz)
        ),
    }
}

fn product_view(p: &Product, tz: Tz, now: i64) -> ProductView {
    ProductView {
        id: p.id,
        merchant_name: p.merchant_name.clone(),
        name: p.name.clone(),
        kind: p.kind,
        status: p.status,
        sale_window: window_label(p, tz),
        sku_count: p.sku_count,
        sale_phase: sale_phase(p, now),
        verdicts: Vec::new(),
        more_skus: 0,
    }
}

/// The verdicts of the SKUs the list rows show (the first few of each product, by code), read
/// together: a product of a hundred SKUs costs its row three verdicts, a page a fixed number of
/// queries.
async fn attach_verdicts(state: &AppState, rows: &mut [ProductView]) -> Result<(), WebError> {
    let th = state.config.sellable_thresholds();
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let shown = catalog::first_skus(&state.db, &ids, VERDICTS_PER_ROW as i64).await?;
    let sku_ids: Vec<i64> = shown.iter().map(|s| s.id).collect();
    let mut found: std::collections::HashMap<i64, crate::domain::sellable::Verdict> =
        crate::domain::sellable::of_skus(&state.db, &th, &sku_ids)
            .await?
            .into_iter()
            .map(|v| (v.meta.sku_id, v))
            .collect();
    let mut by_product: std::collections::HashMap<i64, Vec<SkuVerdict>> = Default::default();
    // In the order `first_skus` gives (by product, then code).
    for sku in &shown {
        if let Some(v) = found.remove(&sku.id) {
            by_product
                .entry(sku.product_id)
                .or_default()
                .push(SkuVerdict::of(&v));
        }
    }
    for row in rows.iter_mut() {
        row.verdicts = by_product.remove(&row.id).unwrap_or_default();
        row.more_skus = (row.sku_count - row.verdicts.len() as i64).max(0);
    }
    Ok(())
}

/// Where an online product stands against its sale window now.
fn sale_phase(p: &Product, now: i64) -> &'static str {
    if p.status != catalog::ProductStatus::Online {
        return "";
    }
    match (p.sale_starts_at, p.sale_ends_at) {
        (_, Some(e)) if e <= now => "ended",
        (Some(s), _) if s > now => "not_started",
        _ => "",
    }
}

fn can_edit(user: &CurrentUser) -> bool {
    user.account.admin_merchant().is_some()
}

// ---------- list ----------

#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    merchant: String,
    #[serde(default)]
    page: String,
    /// A column to sort by; "1" in `desc` for the other way round.
    #[serde(default)]
    sort: String,
    #[serde(default)]
    desc: String,
}

#[derive(Template)]
#[template(path = "admin/products/list.html", blocks = ["table"])]
struct ListPage {
    layout: Layout,
    q: String,
    status: String,
    kind: String,
    merchant: String,
    merchants: Vec<tenants::Merchant>,
    show_merchant: bool,
    can_edit: bool,
    rows: Vec<ProductView>,
    total: i64,
    /// The query string without the page number, for the CSV link.
    base_query: String,
    sort: String,
    desc: bool,
    pager: crate::web::view::pager::Pager,
}

impl ListPage {
    fn sorting(&self) -> crate::web::view::sort::Sorting {
        crate::web::view::sort::Sorting {
            path: paths::products(),
            filters: query(&[
                ("q", &self.q),
                ("status", &self.status),
                ("kind", &self.kind),
                ("merchant", &self.merchant),
            ]),
            key: self.sort.clone(),
            desc: self.desc,
        }
    }

    /// A column header's link: sorts by it, the other way round when it already does.
    fn sort_href(&self, key: &str) -> String {
        self.sorting().href(key)
    }

    fn aria_sort(&self, key: &str) -> &'static str {
        self.sorting().aria(key)
    }
}

pub async fn list(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<ListQuery>,
) -> Result<Response, WebError> {
    let user = &cx.user;
    let scope = user.actor("").scope();
    let merchants = if scope == Scope::All {
        tenants::merchants(&state.db, scope).await?
    } else {
        Vec::new()
    };
    let merchant_id = merchants
        .iter()
        .find(|m| m.slug == q.merchant)
        .map(|m| m.id);
    let filter = ProductFilter {
        q: q.q.clone(),
        status: q.status.clone(),
        kind: q.kind.clone(),
        merchant_id,
        page: q.page.parse().unwrap_or(1),
        sort: q.sort.clone(),
        desc: q.desc == "1",
    };
    let Page {
        items,
        page,
        pages,
        total,
    } = catalog::list_products(&state.db, scope, &filter).await?;
    let tz = merchant_tz(&state, user).await?;
    let zones = merchant_zones(&state, user).await?;
    let now = state.db.now_ms();
    let mut rows: Vec<ProductView> = items
        .iter()
        .map(|p| product_view(p, zones.get(&p.merchant_id).copied().unwrap_or(tz), now))
        .collect();
    attach_verdicts(&state, &mut rows).await?;
    let base_query = query(&[
        ("q", &q.q),
        ("status", &q.status),
        ("kind", &q.kind),
        ("merchant", &q.merchant),
    ]);
    let pager = crate::web::view::pager::Pager {
        path: paths::products(),
        query: query(&[
            ("q", &q.q),
            ("status", &q.status),
            ("kind", &q.kind),
            ("merchant", &q.merchant),
            ("sort", &q.sort),
            ("desc", &q.desc),
        ]),
        page,
        pages,
        target: "product-table",
    };
    let page = ListPage {
        layout: cx.layout().await,
        q: q.q,
        status: q.status,
        kind: q.kind,
        merchant: q.merchant,
        show_merchant: scope == Scope::All,
        merchants,
        can_edit: can_edit(user),
        rows,
        total,
        base_query,
        desc: q.desc == "1",
        sort: q.sort,
        pager,
    };
    // The search box swaps only the table; anything else gets the whole page.
    cx.answer(StatusCode::OK, &page, Part::Target("product-table"), |p| {
        p.as_table().render()
    })
}

/// The products the list's filters find, one line per SKU, as CSV (every page).
pub async fn csv(
    State(state): State<AppState>,
    user: CurrentUser,
    Query(q): Query<ListQuery>,
) -> Result<Response, WebError> {
    use crate::domain::kernel::export::{Cell, Csv};
    let scope = user.actor("").scope();
    let merchant_id = if scope == Scope::All {
        tenants::merchants(&state.db, scope)
            .await?
            .into_iter()
            .find(|m| m.slug == q.merchant)
            .map(|m| m.id)
    } else {
        None
    };
    let filter = ProductFilter {
        q: q.q.clone(),
        status: q.status.clone(),
        kind: q.kind.clone(),
        merchant_id,
        page: 1,
        sort: String::new(),
        desc: false,
    };
    let rows = catalog::export_rows(&state.db, scope, &filter).await?;
    let tz = merchant_tz(&state, &user).await?;
    let zones = merchant_zones(&state, &user).await?;
    // Costs are for the merchant's admins (and operators), as on the stock report.
    let costs = user.account.merchant_id.is_none() || can_edit(&user);
    let mut out = Csv::new(&[
        "merchant",
        "product_id",
        "product",
        "kind",
        "status",
        "sale_starts_at",
        "sale_ends_at",
        "sku",
        "sku_name",
        "price",
        "unit_cost",
        "stock_policy",
        "low_stock_threshold",
        "max_per_order",
    ]);
    let limit = |n: Option<i64>| n.map(|n| n.to_string()).unwrap_or_default();
    for r in &rows {
        // In the product's merchant's time (an operator's CSV holds several merchants).
        let zone = zones.get(&r.merchant_id).copied().unwrap_or(tz);
        let when = |ms: Option<i64>| {
            ms.map(|m| validate::ms_to_local(m, zone, "%Y-%m-%d %H:%M"))
                .unwrap_or_default()
        };
        let (starts, ends) = (when(r.sale_starts_at), when(r.sale_ends_at));
        let price = r
            .priced_at
            .map(|_| format_price(r.price))
            .unwrap_or_default();
        let cost = match (costs, r.unit_cost) {
            (true, Some(c)) => format_price(c),
            _ => String::new(),
        };
        let (low, max) = (limit(r.low_stock_threshold), limit(r.max_per_order));
        out.row(&[
            Cell::from(&r.merchant),
            Cell::from(r.product_id),
            Cell::from(&r.product),
            Cell::from(&r.kind),
            Cell::from(&r.status),
            Cell::Text(&starts),
            Cell::Text(&ends),
            Cell::from(&r.sku),
            Cell::from(&r.sku_name),
            Cell::Text(&price),
            Cell::Text(&cost),
            Cell::from(&r.stock_policy),
            Cell::Text(&low),
            Cell::Text(&max),
        ]);
    }
    let day = state.db.clock.now().with_timezone(&tz).format("%Y-%m-%d");
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/csv; charset=utf-8".to_string(),
            ),
            (
                axum::http::header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"products-{day}.csv\""),
            ),
        ],
        format!("\u{feff}{}", out.finish()),
    )
        .into_response())
}

/// For an operator, who lists every merchant's products, each merchant's time zone (times are
/// written in their merchant's time); for others nothing (their own is [`merchant_tz`]).
async fn merchant_zones(
    state: &AppState,
    user: &CurrentUser,
) -> Result<std::collections::HashMap<crate::domain::MerchantId, Tz>, WebError> {
    if user.account.merchant_id.is_some() {
        return Ok(Default::default());
    }
    Ok(tenants::merchants(&state.db, crate::domain::Scope::All)
        .await?
        .into_iter()
        .map(|m| (m.id, m.tz()))
        .collect())
}

async fn merchant_tz(state: &AppState, user: &CurrentUser) -> Result<Tz, WebError> {
    Ok(match user.account.merchant_id {
        Some(m) => tenants::merchant(&state.db, m).await?.tz(),
        None => chrono_tz::UTC,
    })
}

// ---------- create ----------

#[derive(Deserialize, Default, Clone)]
pub struct NewProductForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    sale_starts_at: String,
    #[serde(default)]
    sale_ends_at: String,
    #[serde(default)]
    sku_code: String,
    #[serde(default)]
    sku_name: String,
    #[serde(default)]
    sku_price: String,
}

#[derive(Template)]
#[template(path = "admin/products/new.html")]
struct NewPage {
    layout: Layout,
    form: NewProductForm,
    errors: Errs,
    tz_name: String,
    currency: String,
}

fn require_editor(user: &CurrentUser) -> Result<MerchantId, WebError> {
    Ok(user.account.require_admin()?)
}

pub async fn new_form(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    let merchant = tenants::merchant(&state.db, require_editor(&cx.user)?).await?;
    let form = NewProductForm {
        kind: "goods".into(),
        status: "DRAFT".into(),
        ..Default::default()
    };
    let page = NewPage {
        layout: cx.layout().await,
        form,
        errors: Errs::default(),
        tz_name: merchant.timezone.clone(),
        currency: merchant.currency,
    };
    cx.whole(&page)
}

/// A sale window typed in the merchant's timezone: each end, or its error (None: left empty or
/// refused).
fn sale_window(
    errs: &mut validate::Errors,
    starts: &str,
    ends: &str,
    tz: Tz,
) -> (Option<Option<i64>>, Option<Option<i64>>) {
    (
        errs.take(validate::local_datetime_opt("sale_starts_at", starts, tz)),
        errs.take(validate::local_datetime_opt("sale_ends_at", ends, tz)),
    )
}

/// The new product as the domain takes it, and what did not parse (times, the price).
fn new_product(form: &NewProductForm, tz: Tz) -> (ProductInput, validate::Errors) {
    let mut errs = validate::Errors::default();
    let (starts, ends) = sale_window(&mut errs, &form.sale_starts_at, &form.sale_ends_at, tz);
    // Left empty: no price yet (not on sale until one is set); 0 is a free item.
    let price = errs.take(validate::price_major_opt("skus[0].price", &form.sku_price));
    let input = ProductInput {
        name: form.name.clone(),
        description: form.description.clone(),
        kind: form.kind.clone(),
        status: form.status.clone(),
        sale_starts_at: starts.flatten(),
        sale_ends_at: ends.flatten(),
        skus: vec![SkuInput {
            code: form.sku_code.clone(),
            name: form.sku_name.clone(),
            price: price.flatten(),
        }],
    };
    (input, errs)
}

pub async fn create(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<NewProductForm>,
) -> Result<Response, WebError> {
    let merchant = tenants::merchant(&state.db, require_editor(&cx.user)?).await?;
    let (input, errs) = new_product(&form, merchant.tz());
    let result = if errs.0.is_empty() {
        catalog::create_product(&state.db, &cx.actor(&paths::products_new()), input).await
    } else {
        Err(catalog::refused(&input, errs))
    };
    match result {
        Ok(detail) => {
            let notice = messages::product_created(&detail.product.name);
            cx.flash(FlashKind::Success, notice).await;
            Ok(Redirect::to(&paths::product(detail.product.id)).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let page = NewPage {
                layout: cx.layout().await,
                form,
                errors: Errs(errors),
                tz_name: merchant.timezone.clone(),
                currency: merchant.currency,
            };
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

// ---------- show / edit ----------

#[derive(Deserialize, Default, Clone)]
pub struct EditProductForm {
    #[serde(default)]
    name: String,
    /// None: the form did not carry it, so it stays as it is.
    description: Option<String>,
    #[serde(default)]
    status: String,
    /// The status the form was opened with. The status buttons above it change the status in
    /// place and leave this form as it was: saving it then must not put the old status back.
    /// The status changes only when the person changed the choice.
    #[serde(default)]
    status_was: String,
    #[serde(default)]
    sale_starts_at: String,
    #[serde(default)]
    sale_ends_at: String,
}

#[derive(Deserialize, Default, Clone)]
pub struct SkuForm {
    #[serde(default)]
    code: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    price: String,
    /// The SKU's limits (edit form only): empty for none.
    #[serde(default)]
    max_per_order: String,
    #[serde(default)]
    max_per_customer: String,
    #[serde(default)]
    low_stock_threshold: String,
    /// Goods only (edit form): what one unit cost, in the merchant's currency; empty for none.
    #[serde(default)]
    unit_cost: String,
    /// Goods only (edit form): `tracked` or `unlimited`; empty leaves it.
    #[serde(default)]
    stock_policy: String,
    /// Goods only (edit form): `on_order` or `on_payment`; empty leaves it.
    #[serde(default)]
    deduct: String,
    /// Services only (edit form): places one booking may take; empty leaves it.
    #[serde(default)]
    max_places: String,
    /// Services only (edit form): minutes of notice and of change cutoff; empty leaves them.
    #[serde(default)]
    min_notice_minutes: String,
    #[serde(default)]
    change_cutoff_minutes: String,
    /// Vouchers only (edit form): the visits one code is good for; empty leaves it.
    #[serde(default)]
    uses: String,
}

impl SkuForm {
    /// The limits as typed: empty removes one; anything else must read as a whole number.
    fn policy(&self) -> Result<catalog::PolicyInput, Vec<crate::domain::FieldError>> {
        let mut errs = Vec::new();
        let mut read = |field: &str, raw: &str| {
            if raw.trim().is_empty() {
                return Some(None);
            }
            match validate::typed_int(raw) {
                Some(n) => Some(Some(n)),
                None => {
                    errs.push(crate::domain::FieldError::new(
                        field,
                        "invalid_limit",
                        messages::bad_limit(0, catalog::LIMIT_MAX),
                    ));
                    None
                }
            }
        };
        let mut input = catalog::PolicyInput {
            max_per_order: read("max_per_order", &self.max_per_order),
            max_per_customer: read("max_per_customer", &self.max_per_customer),
            low_stock_threshold: read("low_stock_threshold", &self.low_stock_threshold),
            ..Default::default()
        };
        let mut choose = |field: &str, raw: &str, names: &[&'static str]| {
            if raw.trim().is_empty() {
                return None;
            }
            validate::choice(field, raw, names)
                .map_err(|e| errs.push(e))
                .ok()
        };
        input.stock_policy = choose(
            "stock_policy",
            &self.stock_policy,
            catalog::StockPolicy::NAMES,
        )
        .and_then(catalog::StockPolicy::parse);
        input.deduct =
            choose("deduct", &self.deduct, catalog::Deduct::NAMES).and_then(catalog::Deduct::parse);
        for (field, raw, slot) in [
            (
                "min_notice_minutes",
                &self.min_notice_minutes,
                &mut input.min_notice_minutes,
            ),
            (
                "change_cutoff_minutes",
                &self.change_cutoff_minutes,
                &mut input.change_cutoff_minutes,
            ),
        ] {
            if raw.trim().is_empty() {
                continue;
            }
            match validate::typed_int(raw) {
                Some(n) => *slot = Some(n),
                None => errs.push(crate::domain::FieldError::new(
                    field,
                    "invalid_limit",
                    messages::bad_minutes(catalog::NOTICE_MAX_MINUTES),
                )),
            }
        }
        // The cost is typed like a price ("12.50"); empty removes it.
        match validate::price_major_opt("unit_cost", &self.unit_cost) {
            Ok(cost) => input.unit_cost = Some(cost),
            // Said of the cost, not of a price.
            Err(e) => errs.push(crate::domain::FieldError::new(
                "unit_cost",
                e.code,
                messages::bad_unit_cost(),
            )),
        }
        if !self.max_places.trim().is_empty() {
            match validate::typed_int(&self.max_places) {
                Some(n) => input.max_places = Some(n),
                None => errs.push(crate::domain::FieldError::new(
                    "max_places",
                    "invalid_limit",
                    messages::bad_max_places(crate::domain::slots::CAPACITY_MAX),
                )),
            }
        }
        if !self.uses.trim().is_empty() {
            match validate::typed_int(&self.uses) {
                Some(n) => input.uses = Some(n),
                None => errs.push(crate::domain::FieldError::new(
                    "uses",
                    "invalid_limit",
                    messages::bad_limit(1, catalog::USES_MAX),
                )),
            }
        }
        if errs.is_empty() {
            Ok(input)
        } else {
            Err(errs)
        }
    }
}

#[derive(Template)]
#[template(path = "admin/products/show.html", blocks = ["status_panel"])]
struct ShowPage {
    layout: Layout,
    /// Whether each SKU can be sold now, and why not.
    verdicts: Vec<crate::domain::sellable::Verdict>,
    product: ProductView,
    skus: Vec<SkuView>,
    can_edit: bool,
    edit: EditProductForm,
    edit_errors: Errs,
    sku_form: SkuForm,
    sku_errors: Errs,
    tz_name: String,
    currency: String,
}

struct ShowState {
    edit: EditProductForm,
    edit_errors: Errs,
    sku_form: SkuForm,
    sku_errors: Errs,
}

async fn product_tz_currency(
    state: &AppState,
    merchant_id: MerchantId,
) -> Result<(Tz, String, String), WebError> {
    let m = tenants::merchant(&state.db, merchant_id).await?;
    Ok((m.tz(), m.timezone.clone(), m.currency))
}

async fn show_page(
    state: &AppState,
    cx: &PageCtx,
    detail: ProductDetail,
    forms: Option<ShowState>,
) -> Result<ShowPage, WebError> {
    let (tz, tz_name, currency) = product_tz_currency(state, detail.product.merchant_id).await?;
    let p = &detail.product;
    let forms = forms.unwrap_or_else(|| ShowState {
        edit: EditProductForm {
            name: p.name.clone(),
            description: Some(p.description.clone()),
            status: p.status.to_string(),
            status_was: p.status.to_string(),
            sale_starts_at: p
                .sale_starts_at
                .map(|t| ms_to_local(t, tz, INPUT_FMT))
                .unwrap_or_default(),
            sale_ends_at: p
                .sale_ends_at
                .map(|t| ms_to_local(t, tz, INPUT_FMT))
                .unwrap_or_default(),
        },
        edit_errors: Errs::default(),
        sku_form: SkuForm::default(),
        sku_errors: Errs::default(),
    });
    let user = &cx.user;
    Ok(ShowPage {
        layout: cx.layout().await,
        verdicts: verdicts::of_product(state, p.id).await?,
        product: product_view(p, tz, state.db.now_ms()),
        skus: detail
            .skus
            .iter()
            .map(|s| SkuView {
                id: s.id,
                code: s.code.clone(),
                name: s.name.clone(),
                price_state: match (s.priced(), s.price) {
                    (false, _) => "unset",
                    (true, 0) => "free",
                    (true, _) => "set",
                },
                price: match (s.priced(), s.price) {
                    (false, _) => crate::i18n::current().t("prod-no-price"),
                    (true, 0) => crate::i18n::current().t("prod-free"),
                    (true, p) => crate::i18n::format::money(crate::i18n::current(), p, &currency),
                },
                unit_type: s.unit_type,
            })
            .collect(),
        can_edit: can_edit(user) && user.account.merchant_id == Some(p.merchant_id),
        edit: forms.edit,
        edit_errors: forms.edit_errors,
        sku_form: forms.sku_form,
        sku_errors: forms.sku_errors,
        tz_name,
        currency,
    })
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let detail = catalog::get_product(&state.db, cx.user.actor("").scope(), id).await?;
    cx.whole(&show_page(&state, &cx, detail, None).await?)
}

pub async fn update(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<EditProductForm>,
) -> Result<Response, WebError> {
    let merchant_id = require_editor(&cx.user)?;
    let (tz, _, _) = product_tz_currency(&state, merchant_id).await?;
    let mut errs = validate::Errors::default();
    let (starts, ends) = sale_window(&mut errs, &form.sale_starts_at, &form.sale_ends_at, tz);
    let result = if errs.0.is_empty() {
        let patch = ProductPatch {
            name: Some(form.name.clone()),
            description: form.description.clone(),
            // Unchanged in the form: whatever it is now (a status button may have changed it).
            status: (form.status_was.is_empty() || form.status != form.status_was)
                .then(|| form.status.clone()),
            sale_starts_at: starts,
            sale_ends_at: ends,
        };
        catalog::update_product(&state.db, &cx.actor(&paths::product(id)), id, patch).await
    } else {
        Err(DomainError::Invalid(errs.0))
    };
    match result {
        Ok(detail) => {
            cx.flash(
                FlashKind::Success,
                messages::product_saved(&detail.product.name),
            )
            .await;
            Ok(Evented::mark(
                Redirect::to(&paths::product(id)).into_response(),
            ))
        }
        Err(DomainError::Invalid(errors)) => {
            let detail = catalog::get_product(&state.db, Scope::Merchant(merchant_id), id).await?;
            let forms = ShowState {
                edit: form,
                edit_errors: Errs(errors),
                sku_form: SkuForm::default(),
                sku_errors: Errs::default(),
            };
            let page = show_page(&state, &cx, detail, Some(forms)).await?;
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
pub struct StatusForm {
    #[serde(default)]
    status: String,
}

/// The status buttons: htmx swaps the status panel in place; without JavaScript, back to the page.
pub async fn set_status(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<StatusForm>,
) -> Result<Response, WebError> {
    require_editor(&cx.user)?;
    let patch = ProductPatch {
        status: Some(form.status),
        ..Default::default()
    };
    let detail =
        catalog::update_product(&state.db, &cx.actor(&paths::product(id)), id, patch).await?;
    let answer = if cx.htmx {
        let page = show_page(&state, &cx, detail, None).await?;
        cx.answer(StatusCode::OK, &page, Part::AnyHtmx, |p| {
            p.as_status_panel().render()
        })?
    } else {
        cx.flash(
            FlashKind::Success,
            messages::status_changed(&detail.product.name, detail.product.status.as_str()),
        )
        .await;
        Redirect::to(&paths::product(id)).into_response()
    };
    Ok(Evented::mark(answer))
}

pub async fn add_sku(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<SkuForm>,
) -> Result<Response, WebError> {
    let merchant_id = require_editor(&cx.user)?;
    let result = match validate::price_major_opt("price", &form.price) {
        Ok(price) => {
            let input = SkuInput {
                code: form.code.clone(),
                name: form.name.clone(),
                price,
            };
            catalog::add_sku(&state.db, &cx.actor(&paths::product(id)), id, input).await
        }
        Err(e) => Err(DomainError::Invalid(vec![e])),
    };
    match result {
        Ok(sku) => {
            cx.flash(FlashKind::Success, messages::sku_added(&sku.code))
                .await;
            Ok(Redirect::to(&format!("{}#skus", paths::product(id))).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let errors = sku_form_errors(errors);
            let detail = catalog::get_product(&state.db, Scope::Merchant(merchant_id), id).await?;
            let edit = None::<ShowState>;
            let mut page = show_page(&state, &cx, detail, edit).await?;
            page.sku_form = form;
            page.sku_errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

/// Domain errors name SKU fields `skus[0].x`; the SKU forms' fields are plain.
fn sku_form_errors(errors: Vec<FieldError>) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut e| {
            e.field = e.field.trim_start_matches("skus[0].").to_string();
            e
        })
        .collect()
}

#[derive(Template)]
#[template(path = "admin/products/sku_edit.html")]
struct SkuEditPage {
    layout: Layout,
    sku_id: i64,
    product_id: i64,
    code: String,
    form: SkuForm,
    errors: Errs,
    currency: String,
    /// Goods: the stock policy and deduction mode can be chosen.
    goods: bool,
    /// A service: its party size can be set.
    service: bool,
    /// A voucher: the visits one code is good for can be set.
    voucher: bool,
    /// A price was set once: the field may not be emptied again.
    priced: bool,
}

/// A limit as the form shows it: empty for none.
fn limit_text(v: Option<i64>) -> String {
    v.map(|n| n.to_string()).unwrap_or_default()
}

pub async fn edit_sku_form(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = require_editor(&cx.user)?;
    let sku = catalog::sku_by_id(&state.db, Scope::Merchant(merchant_id), id).await?;
    let (_, _, currency) = product_tz_currency(&state, merchant_id).await?;
    let (goods, priced) = (sku.unit_type == catalog::UnitType::Quantity, sku.priced());
    let page = SkuEditPage {
        layout: cx.layout().await,
        sku_id: sku.id,
        product_id: sku.product_id,
        code: sku.code.clone(),
        form: SkuForm {
            code: sku.code,
            name: sku.name,
            price: if priced {
                format_price(sku.price)
            } else {
                String::new()
            },
            max_per_order: limit_text(sku.max_per_order),
            max_per_customer: limit_text(sku.max_per_customer),
            low_stock_threshold: limit_text(sku.low_stock_threshold),
            unit_cost: sku.unit_cost.map(format_price).unwrap_or_default(),
            stock_policy: sku.stock_policy.to_string(),
            deduct: sku.deduct.to_string(),
            max_places: sku.max_places.to_string(),
            min_notice_minutes: sku.min_notice_minutes.to_string(),
            change_cutoff_minutes: sku.change_cutoff_minutes.to_string(),
            uses: sku.uses.to_string(),
        },
        errors: Errs::default(),
        currency,
        goods,
        service: sku.unit_type == catalog::UnitType::Slot,
        voucher: sku.unit_type == catalog::UnitType::Code,
        priced,
    };
    cx.whole(&page)
}

pub async fn update_sku(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<SkuForm>,
) -> Result<Response, WebError> {
    let merchant_id = require_editor(&cx.user)?;
    let sku = catalog::sku_by_id(&state.db, Scope::Merchant(merchant_id), id).await?;
    let actor = cx.actor(&paths::sku(sku.id));
    // Every field is checked before anything is saved: a bad limit leaves the price as it was.
    let mut errs = Vec::new();
    // A SKU never priced may stay so (empty); once priced, a price is required (0 is free).
    let price = if sku.priced() {
        validate::price_major("price", &form.price).map(Some)
    } else {
        validate::price_major_opt("price", &form.price)
    }
    .map_err(|e| errs.push(e))
    .ok();
    if let Err(e) = validate::name("name", &form.name, validate::NAME_MAX) {
        errs.push(e);
    }
    let policy = match form.policy() {
        Ok(p) => match catalog::check_policy(sku.unit_type, &p) {
            Ok(()) => Some(p),
            Err(DomainError::Invalid(mut v)) => {
                errs.append(&mut v);
                None
            }
            Err(e) => return Err(e.into()),
        },
        Err(mut v) => {
            errs.append(&mut v);
            None
        }
    };
    let result = match (price, policy, errs.is_empty()) {
        (Some(price), Some(policy), true) => {
            catalog::edit_sku(&state.db, &actor, sku.id, &form.name, price, &policy).await
        }
        _ => Err(DomainError::Invalid(errs)),
    };
    match result {
        Ok(saved) => {
            cx.flash(FlashKind::Success, messages::sku_saved(&saved.code))
                .await;
            Ok(Evented::mark(
                // The page's top, where the confirmation is (a jump to the SKU table hid it).
                Redirect::to(&paths::product(saved.product_id)).into_response(),
            ))
        }
        Err(DomainError::Invalid(errors)) => {
            let errors = sku_form_errors(errors);
            let (_, _, currency) = product_tz_currency(&state, merchant_id).await?;
            let page = SkuEditPage {
                layout: cx.layout().await,
                sku_id: sku.id,
                product_id: sku.product_id,
                goods: sku.unit_type == catalog::UnitType::Quantity,
                service: sku.unit_type == catalog::UnitType::Slot,
                voucher: sku.unit_type == catalog::UnitType::Code,
                priced: sku.priced(),
                code: sku.code,
                form,
                errors: Errs(errors),
                currency,
            };
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}
