//! Orders in the back office: every reservation (open holds first), one order's page with its
//! timeline, and the two things a merchant admin does to one: release a hold, and settle a payment
//! that could not be fulfilled. Operators and store staff read (staff: orders that booked a place
//! in their store).

use crate::domain::orders::exceptions::Resolution;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::kernel::scope::Role;
use crate::domain::orders::exceptions::{self, Exception};
use crate::domain::orders::read::{self, Detail, Filter, Order, OrderSort, Reader};
use crate::domain::orders::{self, ReservationStatus};
use crate::domain::{kernel::validate, tenancy::tenants, DomainError, MerchantId, Scope};
use crate::i18n::format::from_now;
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::pager::Pager;
use crate::web::view::sort::Sorting;
use crate::web::view::time::{day_bound, when, when_s};
use crate::web::view::{query, Errs};
use crate::web::AppState;

/// Who reads, from the signed-in user.
fn reader(user: &CurrentUser) -> Result<Reader, WebError> {
    let u = &user.account;
    match (u.role(), u.merchant_id) {
        (Role::Operator, _) => Ok(Reader {
            scope: Scope::All,
            store: None,
        }),
        (Role::MerchantAdmin, Some(m)) => Ok(Reader {
            scope: Scope::Merchant(m),
            store: None,
        }),
        (Role::StoreStaff, Some(m)) => Ok(Reader {
            scope: Scope::Merchant(m),
            store: Some(u.store_id.ok_or(DomainError::Forbidden)?),
        }),
        _ => Err(DomainError::Forbidden.into()),
    }
}

/// The timezone orders are shown in: the merchant's, or UTC for operators across merchants.
async fn tz_of(state: &AppState, scope: Scope) -> Result<Tz, WebError> {
    Ok(match scope {
        Scope::All => chrono_tz::UTC,
        Scope::Merchant(m) => tenants::merchant(&state.db, m).await?.tz(),
    })
}

#[derive(Deserialize, Default, Clone)]
pub struct OrdersQuery {
    #[serde(default)]
    status: String,
    #[serde(default)]
    sku: String,
    #[serde(default)]
    order: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    merchant: String,
    #[serde(default)]
    page: String,
    /// A column to sort by ("1" in `desc` for the other way round).
    #[serde(default)]
    sort: String,
    #[serde(default)]
    desc: String,
}

impl OrdersQuery {
    fn filters(&self) -> String {
        query(&[
            ("status", self.status.trim()),
            ("sku", self.sku.trim()),
            ("order", self.order.trim()),
            ("from", self.from.trim()),
            ("to", self.to.trim()),
            ("merchant", self.merchant.trim()),
        ])
    }
}

/// One line as a row shows it.
pub struct LineView {
    pub sku: String,
    pub qty: i64,
    pub warehouse: String,
    pub codes: bool,
    /// `checked` (deducted on payment) or `unlimited`; empty for a line that locks its units.
    pub hold: &'static str,
    /// A booking's slot start; empty for goods and codes.
    pub starts: String,
}

pub struct OrderView {
    pub id: i64,
    pub order_id: String,
    pub merchant: String,
    pub status: &'static str,
    pub open: bool,
    pub lines: Vec<LineView>,
    pub created: String,
    pub age: String,
    pub expires: String,
    /// "in 12 minutes" while the hold runs.
    pub expires_in: String,
    pub updated: String,
    pub payment_ref: String,
    pub late_payment: bool,
    pub release_reason: String,
    pub open_exception: Option<i64>,
}

fn order_view(o: &Order, tz: Tz, now: i64) -> OrderView {
    let lang = crate::i18n::current();
    let open = o.is_open() && o.expires_at > now;
    OrderView {
        id: o.id,
        order_id: o.order_id.clone(),
        merchant: o.merchant.clone(),
        status: o.status.as_str(),
        open: o.is_open(),
        lines: o
            .lines
            .iter()
            .map(|l| LineView {
                sku: l.sku.clone(),
                qty: l.qty,
                warehouse: l.warehouse.clone().unwrap_or_default(),
                codes: l.is_codes(),
                hold: match l.hold {
                    crate::domain::orders::LineHold::Locked => "",
                    h => h.as_str(),
                },
                starts: l.slot_starts_at.map(|t| when(t, tz)).unwrap_or_default(),
            })
            .collect(),
        created: when(o.created_at, tz),
        age: from_now(lang, o.created_at - now),
        expires: when(o.expires_at, tz),
        expires_in: if open {
            from_now(lang, o.expires_at - now)
        } else {
            String::new()
        },
        updated: when(o.updated_at, tz),
        payment_ref: o.payment_ref.clone().unwrap_or_default(),
        late_payment: o.late_payment,
        release_reason: o.release_reason.clone(),
        open_exception: o.open_exception,
    }
}

pub struct ExceptionView {
    pub id: i64,
    pub order_id: String,
    pub order_page: Option<i64>,
    pub payment_ref: String,
    pub order_status: &'static str,
    /// "TEA × 4 (2 available)"-like parts, said by the template.
    pub shortfall: Vec<(String, i64, i64)>,
    pub open: bool,
    pub resolution: String,
    pub note: String,
    pub resolved_by: String,
    pub created: String,
    pub resolved: String,
}

fn exception_view(e: &Exception, order_page: Option<i64>, tz: Tz) -> ExceptionView {
    ExceptionView {
        id: e.id,
        order_id: e.order_id.clone(),
        order_page,
        payment_ref: e.payment_ref.clone().unwrap_or_default(),
        order_status: e.order_status.as_str(),
        shortfall: e
            .shortfall
            .iter()
            .map(|s| (s.sku.clone(), s.qty, s.available))
            .collect(),
        open: e.status == exceptions::ExceptionStatus::Open,
        resolution: e
            .resolution
            .map(|r| r.as_str().to_string())
            .unwrap_or_default(),
        note: e.note.clone(),
        resolved_by: e.resolved_by.clone().unwrap_or_default(),
        created: when(e.created_ms, tz),
        resolved: e.resolved_ms.map(|t| when(t, tz)).unwrap_or_default(),
    }
}

#[derive(Template)]
#[template(path = "admin/orders/list.html", blocks = ["table"])]
struct ListPage {
    layout: Layout,
    filter: OrdersQuery,
    statuses: &'static [&'static str],
    show_merchant: bool,
    merchants: Vec<tenants::Merchant>,
    rows: Vec<OrderView>,
    exceptions: Vec<ExceptionView>,
    open_exceptions: i64,
    total: i64,
    base_query: String,
    tz_name: String,
    sorting: Sorting,
    pager: Pager,
}

pub async fn list(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<OrdersQuery>,
) -> Result<Response, WebError> {
    let r = reader(&cx.user)?;
    let merchants = match r.scope {
        Scope::All => tenants::merchants(&state.db, r.scope).await?,
        Scope::Merchant(_) => Vec::new(),
    };
    let merchant_id = (!merchants.is_empty() && !q.merchant.trim().is_empty()).then(|| {
        merchants
            .iter()
            .find(|m| m.slug == q.merchant.trim())
            .map(|m| m.id)
            .unwrap_or(MerchantId(-1))
    });
    let tz = tz_of(&state, r.scope).await?;
    let f = Filter {
        status: ReservationStatus::parse(q.status.trim()),
        sku: q.sku.clone(),
        order_id: q.order.clone(),
        from: day_bound(&q.from, tz, false),
        to: day_bound(&q.to, tz, true),
        merchant_id,
        sort: OrderSort::parse(q.sort.trim()),
        desc: q.desc == "1",
    };
    let (rows, page, pages, total) =
        read::page(&state.db, r, &f, q.page.trim().parse().unwrap_or(1)).await?;
    // Payments to settle head the page for the people who settle or oversee them.
    let (exceptions, open_exceptions) = if r.store.is_none() {
        let scope = r.scope.narrowed(merchant_id);
        let open = exceptions::list(
            &state.db,
            scope,
            Some(exceptions::ExceptionStatus::Open),
            None,
            exceptions::PAGE_SIZE,
        )
        .await?;
        let count = exceptions::count_open(&state.db, scope).await?;
        let mut views = Vec::new();
        for e in &open {
            let m = merchant_of(&state, e).await?;
            let page = read::id_of(&state.db, m, &e.order_id).await.ok();
            views.push(exception_view(e, page, tz));
        }
        (views, count)
    } else {
        (Vec::new(), 0)
    };
    // One instant for the whole page: every row is open or not as of the same moment.
    let now = state.db.now_ms();
    let t = ListPage {
        layout: cx.layout().await,
        statuses: ReservationStatus::NAMES,
        show_merchant: r.scope == Scope::All,
        merchants,
        rows: rows.iter().map(|o| order_view(o, tz, now)).collect(),
        exceptions,
        open_exceptions,
        total,
        base_query: q.filters(),
        pager: Pager {
            path: paths::orders(),
            query: sorting_of(&f, &q).query(),
            page,
            pages,
            target: "orders-table",
        },
        sorting: sorting_of(&f, &q),
        tz_name: tz.name().to_string(),
        filter: q,
    };
    cx.answer(StatusCode::OK, &t, Part::Target("orders-table"), |p| {
        p.as_table().render()
    })
}

/// The orders list's sort, with its filters for the header links.
fn sorting_of(f: &Filter, q: &OrdersQuery) -> Sorting {
    Sorting {
        path: paths::orders(),
        filters: q.filters(),
        key: f.sort.map(|s| s.as_str().to_string()).unwrap_or_default(),
        desc: f.sort.is_some() && f.desc,
    }
}

/// The merchant an exception belongs to (operators read across merchants).
async fn merchant_of(state: &AppState, e: &Exception) -> Result<MerchantId, WebError> {
    Ok(tenants::merchant_id_by_slug(&state.db, &e.merchant).await?)
}

#[derive(Template)]
#[template(path = "admin/orders/show.html")]
struct ShowPage {
    layout: Layout,
    o: OrderView,
    show_merchant: bool,
    may_change: bool,
    timeline: Vec<EventView>,
    ledger: Vec<LedgerView>,
    bookings: Vec<BookingView>,
    codes: Vec<(String, String, i64)>,
    exceptions: Vec<ExceptionView>,
    errors: Errs,
    resolve_form: ResolveForm,
    tz_name: String,
}

pub struct EventView {
    pub action: String,
    /// The action as a catalogue variant (`reservation.confirm_late` → `reservation-confirm-late`).
    pub key: String,
    pub actor: String,
    pub detail: String,
    pub at: String,
}

pub struct LedgerView {
    pub sku: String,
    pub warehouse: String,
    pub kind: String,
    pub qty: i64,
    pub reason: String,
    pub at: String,
}

pub struct BookingView {
    pub reference: String,
    pub status: String,
    pub sku: String,
    pub starts: String,
}

async fn show_page(
    state: &AppState,
    cx: &PageCtx,
    id: i64,
    errors: Errs,
    resolve_form: ResolveForm,
) -> Result<ShowPage, WebError> {
    let r = reader(&cx.user)?;
    let d: Detail = read::detail(&state.db, r, id).await?;
    let tz = tz_of(state, Scope::Merchant(d.order.merchant_id)).await?;
    let people =
        crate::web::view::actor::People::of_merchant(&state.db, d.order.merchant_id).await?;
    Ok(ShowPage {
        layout: cx.layout().await,
        o: order_view(&d.order, tz, state.db.now_ms()),
        show_merchant: r.scope == Scope::All,
        may_change: cx.user.account.admin_merchant() == Some(d.order.merchant_id),
        timeline: d
            .timeline
            .into_iter()
            .map(|e| EventView {
                key: e.action.replace(['.', '_'], "-"),
                action: e.action,
                actor: people.say(&e.actor),
                detail: e.detail,
                at: when_s(e.at, tz),
            })
            .collect(),
        ledger: d
            .ledger
            .into_iter()
            .map(|l| LedgerView {
                sku: l.sku,
                warehouse: l.entry.warehouse,
                kind: l.entry.kind,
                qty: l.entry.qty,
                reason: l.entry.reason,
                at: when_s(l.entry.created_at, tz),
            })
            .collect(),
        bookings: d
            .bookings
            .into_iter()
            .map(|b| BookingView {
                reference: b.reference,
                status: b.status,
                sku: b.sku,
                starts: when(b.starts_at, tz),
            })
            .collect(),
        codes: d.codes,
        exceptions: d
            .exceptions
            .iter()
            .map(|e| exception_view(e, None, tz))
            .collect(),
        errors,
        resolve_form,
        tz_name: tz.name().to_string(),
    })
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let page = show_page(&state, &cx, id, Errs::default(), ResolveForm::default()).await?;
    cx.whole(&page)
}

#[derive(Template)]
#[template(path = "admin/orders/release.html")]
struct ReleasePage {
    layout: Layout,
    o: OrderView,
    reason: String,
    errors: Errs,
    reason_max: usize,
}

#[derive(Deserialize, Default)]
pub struct ReleaseForm {
    #[serde(default)]
    reason: String,
}

/// The order a merchant admin may change, read as they see it.
async fn own_order(state: &AppState, cx: &PageCtx, id: i64) -> Result<Order, WebError> {
    let m = cx.user.account.require_admin()?;
    let r = Reader {
        scope: Scope::Merchant(m),
        store: None,
    };
    Ok(read::detail(&state.db, r, id).await?.order)
}

pub async fn confirm_release(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let o = own_order(&state, &cx, id).await?;
    if !o.is_open() {
        return Ok(Redirect::to(&paths::order(id)).into_response());
    }
    let tz = tz_of(&state, Scope::Merchant(o.merchant_id)).await?;
    let page = ReleasePage {
        layout: cx.layout().await,
        o: order_view(&o, tz, state.db.now_ms()),
        reason: String::new(),
        errors: Errs::default(),
        reason_max: validate::REASON_MAX,
    };
    cx.whole(&page)
}

pub async fn release(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<ReleaseForm>,
) -> Result<Response, WebError> {
    let o = own_order(&state, &cx, id).await?;
    let path = paths::order(id);
    // People say why; the order system may not (its API call takes the reason as optional).
    let reason = match validate::name("reason", &form.reason, validate::REASON_MAX) {
        Ok(r) => r,
        Err(e) => {
            let tz = tz_of(&state, Scope::Merchant(o.merchant_id)).await?;
            let page = ReleasePage {
                layout: cx.layout().await,
                o: order_view(&o, tz, state.db.now_ms()),
                reason: form.reason,
                errors: Errs(vec![e]),
                reason_max: validate::REASON_MAX,
            };
            return cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page);
        }
    };
    let actor = cx.actor(&format!("{path}/release"));
    match orders::release(
        &state.db,
        &state.codes,
        &actor,
        o.merchant_id,
        &o.order_id,
        &reason,
    )
    .await
    {
        Ok(v) if v.status == ReservationStatus::Released => {
            cx.flash(FlashKind::Success, messages::hold_released(&o.order_id))
                .await;
        }
        // Paid or expired meanwhile: the order page says what it is now.
        Ok(_) | Err(DomainError::Conflict { .. }) => {
            cx.flash(FlashKind::Error, messages::hold_not_released(&o.order_id))
                .await;
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Redirect::to(&path).into_response())
}

#[derive(Deserialize, Default)]
pub struct ResolveForm {
    #[serde(default)]
    pub resolution: String,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub exception: i64,
}

pub async fn resolve(
    State(state): State<AppState>,
    cx: PageCtx,
    Path((id, exception)): Path<(i64, i64)>,
    Form(mut form): Form<ResolveForm>,
) -> Result<Response, WebError> {
    let o = own_order(&state, &cx, id).await?;
    let path = paths::order(id);
    form.exception = exception;
    let (how, note) = match exceptions::resolution(&form.resolution, &form.note) {
        Ok(v) => v,
        Err(DomainError::Invalid(errs)) => {
            let page = show_page(&state, &cx, id, Errs(errs), form).await?;
            return cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page);
        }
        Err(e) => return Err(e.into()),
    };
    // The exception must be this order's.
    let e = exceptions::get(&state.db, Scope::Merchant(o.merchant_id), exception).await?;
    if e.order_id != o.order_id {
        return Err(DomainError::NotFound("exception").into());
    }
    let actor = cx.actor(&format!("{path}/exceptions/{exception}/resolve"));
    match exceptions::resolve(&state.db, &actor, exception, how, &note).await {
        Ok(_) => {
            cx.flash(
                FlashKind::Success,
                messages::exception_settled(exception, how.as_str()),
            )
            .await;
        }
        Err(DomainError::Conflict { message, .. }) => {
            cx.flash(FlashKind::Error, message).await;
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Redirect::to(&path).into_response())
}
