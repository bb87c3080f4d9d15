//! Closures: a staff member on leave or the whole store shut for a period. Creating one closes
//! every slot it covers and lists the bookings to call; staff then cancel those bookings in bulk
//! (freeing the places) or reopen the closure, which reopens its slots.

use crate::web::ids::PathId;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;
use tower_sessions::Session;

use super::slots::{
    check_store, ctx, ctx_of_store, no_store_page, paginate, period, query, writer, Ctx, Opt,
    TIME_FMT,
};
use super::Errs;
use crate::domain::slots::{self, Closure, ClosureInput};
use crate::domain::tenants::{self, Store};
use crate::domain::validate::{self, ms_to_local, REASON_MAX};
use crate::domain::{bookings, schedule, DomainError, FieldError, Scope};
use crate::infra::db::now_ms;
use crate::messages;
use crate::web::auth::{is_htmx, CurrentUser};
use crate::web::error::WebError;
use crate::web::flash;
use crate::web::layout::Layout;
use crate::web::AppState;

const PER_PAGE: usize = 30;
/// Slots listed on a closure's page; the count says how many there are in all.
const SLOTS_SHOWN: usize = 50;

pub struct ClosureRow {
    pub id: i64,
    /// The staff member's name; empty for the whole store.
    pub who: String,
    pub period: String,
    pub reason: String,
    pub created_by: String,
    /// active | ended | reopened
    pub state: &'static str,
    pub reopened_at: String,
}

fn closure_row(c: &Closure, store: &Store, now: i64) -> ClosureRow {
    let tz = store.tz();
    ClosureRow {
        id: c.id,
        who: c.staff_name.clone().unwrap_or_default(),
        period: period(c.starts_at, c.ends_at, tz),
        reason: c.reason.clone(),
        created_by: c.created_by.trim_start_matches("user:").to_string(),
        state: if c.reopened_at.is_some() {
            "reopened"
        } else if c.ends_at <= now {
            "ended"
        } else {
            "active"
        },
        reopened_at: c
            .reopened_at
            .map(|t| ms_to_local(t, tz, super::slots::DATETIME_FMT))
            .unwrap_or_default(),
    }
}

// ---------- list and create ----------

#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    store: String,
    #[serde(default)]
    page: String,
}

#[derive(Deserialize, Default, Clone)]
pub struct ClosureForm {
    #[serde(default)]
    store: String,
    #[serde(default)]
    staff: String,
    #[serde(default)]
    starts_at: String,
    #[serde(default)]
    ends_at: String,
    #[serde(default)]
    reason: String,
    /// What customers read about the closed slots (optional; the reason is for staff only).
    #[serde(default)]
    public_note: String,
}

#[derive(Template)]
#[template(path = "admin/slots/closures.html")]
struct ListPage {
    layout: Layout,
    ctx: Ctx,
    rows: Vec<ClosureRow>,
    page: i64,
    pages: i64,
    total: i64,
    staff: Vec<Opt>,
    form: ClosureForm,
    errors: Errs,
}

async fn list_page(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    ctx: Ctx,
    store: &Store,
    page: &str,
    form: ClosureForm,
) -> Result<ListPage, WebError> {
    let now = now_ms();
    let mut rows: Vec<ClosureRow> = slots::closures(&state.db, store.merchant_id, store.id)
        .await?
        .iter()
        .map(|c| closure_row(c, store, now))
        .collect();
    // Active first, then ended, then reopened; each as the domain orders them (latest first).
    rows.sort_by_key(|r| match r.state {
        "active" => 0,
        "ended" => 1,
        _ => 2,
    });
    let (rows, page, pages, total) = paginate(rows, page, PER_PAGE);
    let staff = schedule::staff_of_store(&state.db, store.merchant_id, store.id)
        .await?
        .into_iter()
        .map(|s| Opt {
            selected: s.id.to_string() == form.staff,
            value: s.id.to_string(),
            label: s.name,
        })
        .collect();
    Ok(ListPage {
        layout: Layout::new(user, session, "/admin/closures").await,
        ctx,
        rows,
        page,
        pages,
        total,
        staff,
        form,
        errors: Errs::default(),
    })
}

pub async fn list(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    Query(q): Query<ListQuery>,
) -> Result<Response, WebError> {
    let ctx = ctx(&state, &user, &q.store, "closures", "/admin/closures").await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&user, &session, ctx).await;
    };
    let form = ClosureForm {
        store: ctx.value.clone(),
        ..Default::default()
    };
    let page = list_page(&state, &user, &session, ctx, &store, &q.page, form).await?;
    Ok(Html(page.render()?).into_response())
}

pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    Form(form): Form<ClosureForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let ctx = ctx(&state, &user, &form.store, "closures", "/admin/closures").await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let tz = store.tz();
    let mut errs = Vec::new();
    let staff = match form.staff.trim() {
        "" => None,
        raw => {
            let found = match raw.parse::<i64>() {
                Ok(id) => match schedule::staff_by_id(&state.db, merchant_id, id).await {
                    Ok(s) if s.store_id == store.id => Some(s),
                    Ok(_) | Err(DomainError::NotFound(_)) => None,
                    Err(e) => return Err(e.into()),
                },
                Err(_) => None,
            };
            if found.is_none() {
                errs.push(FieldError::new(
                    "staff",
                    "unknown_staff",
                    messages::unknown_staff(raw),
                ));
            }
            found
        }
    };
    let mut instant = |field: &str, raw: &str| match validate::local_datetime_opt(field, raw, tz) {
        Ok(Some(t)) => Some(t),
        Ok(None) => {
            errs.push(FieldError::new(
                field,
                "required",
                messages::required(messages::label(field)),
            ));
            None
        }
        Err(e) => {
            errs.push(e);
            None
        }
    };
    let starts_at = instant("starts_at", &form.starts_at);
    let ends_at = instant("ends_at", &form.ends_at);
    let result = match (starts_at, ends_at) {
        (Some(starts_at), Some(ends_at)) if errs.is_empty() => {
            let input = ClosureInput {
                staff,
                starts_at,
                ends_at,
                reason: form.reason.clone(),
                public_note: Some(form.public_note.clone()),
            };
            let actor = user.actor("/admin/closures");
            slots::create_closure(&state.db, &actor, merchant_id, &store, input).await
        }
        _ => Err(DomainError::Invalid(errs)),
    };
    match result {
        Ok((closure, contacts)) => {
            let closed = slots::closure_slots(&state.db, merchant_id, closure.id)
                .await?
                .len();
            flash::push(
                &session,
                "success",
                messages::closure_created(closed, contacts.len()),
            )
            .await;
            Ok(Redirect::to(&format!(
                "/admin/closures/{}?{}",
                closure.id,
                query(&[("store", &ctx.value)])
            ))
            .into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = list_page(&state, &user, &session, ctx, &store, "1", form).await?;
            page.errors = Errs(errors);
            Ok((StatusCode::UNPROCESSABLE_ENTITY, Html(page.render()?)).into_response())
        }
        Err(e) => Err(e.into()),
    }
}

// ---------- one closure ----------

#[derive(Deserialize, Default)]
pub struct StoreQuery {
    #[serde(default)]
    store: String,
}

#[derive(Deserialize, Default, Clone)]
pub struct ReasonForm {
    #[serde(default)]
    reason: String,
}

pub struct SlotLine {
    pub id: i64,
    pub time: String,
    pub sku_code: String,
    pub staff: String,
    pub booked: i64,
    pub capacity: i64,
}

pub struct ContactRow {
    pub reference: String,
    pub name: String,
    pub phone: String,
    pub slot_id: i64,
    pub time: String,
}

#[derive(Template)]
#[template(path = "admin/slots/closure.html", blocks = ["body"])]
struct ClosurePage {
    layout: Layout,
    ctx: Ctx,
    c: ClosureRow,
    slots: Vec<SlotLine>,
    slots_total: usize,
    contacts: Vec<ContactRow>,
    reason: String,
    errors: Errs,
    notice: Option<String>,
}

/// A closure the user may see, with its store. Operators have no merchant of their own: the
/// `store` in the query names it.
async fn visible_closure(
    state: &AppState,
    user: &CurrentUser,
    id: i64,
    store_param: &str,
) -> Result<(Closure, Store), WebError> {
    let merchant_id = match user.0.merchant_id {
        Some(m) => m,
        None => ctx(state, user, store_param, "closures", "/admin/closures")
            .await?
            .store
            .map(|s| s.merchant_id)
            .ok_or(DomainError::NotFound("closure"))?,
    };
    let c = slots::closure(&state.db, merchant_id, id).await?;
    check_store(user, c.store_id, "closure")?;
    let store = tenants::store_by_id(&state.db, Scope::Merchant(merchant_id), c.store_id).await?;
    Ok((c, store))
}

async fn closure_page(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    c: &Closure,
    store: Store,
) -> Result<ClosurePage, WebError> {
    let tz = store.tz();
    let closed = slots::closure_slots(&state.db, store.merchant_id, c.id).await?;
    let contacts = slots::closure_contacts(&state.db, store.merchant_id, c.id).await?;
    let slots_total = closed.len();
    let lines = closed
        .iter()
        .take(SLOTS_SHOWN)
        .map(|s| SlotLine {
            id: s.id,
            time: period(s.starts_at, s.ends_at, tz),
            sku_code: s.sku_code.clone(),
            staff: s.staff_name.clone().unwrap_or_default(),
            booked: s.booked,
            capacity: s.capacity,
        })
        .collect();
    let contacts = contacts
        .into_iter()
        .map(|x| ContactRow {
            time: format!(
                "{} {}",
                ms_to_local(x.starts_at, tz, super::slots::DATE_FMT),
                ms_to_local(x.starts_at, tz, TIME_FMT)
            ),
            reference: x.reference,
            name: x.customer_name,
            phone: x.customer_phone,
            slot_id: x.slot_id,
        })
        .collect();
    Ok(ClosurePage {
        layout: Layout::new(user, session, "/admin/closures").await,
        c: closure_row(c, &store, now_ms()),
        ctx: ctx_of_store(state, user, store, "closures", "/admin/closures").await?,
        slots: lines,
        slots_total,
        contacts,
        reason: String::new(),
        errors: Errs::default(),
        notice: None,
    })
}

fn render_closure(
    page: &ClosurePage,
    headers: &HeaderMap,
    status: StatusCode,
) -> Result<Response, WebError> {
    let html = if is_htmx(headers) {
        page.as_body().render()?
    } else {
        page.render()?
    };
    Ok((status, Html(html)).into_response())
}

pub async fn show(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    PathId(id): PathId,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let (c, store) = visible_closure(&state, &user, id, &q.store).await?;
    let page = closure_page(&state, &user, &session, &c, store).await?;
    render_closure(&page, &headers, StatusCode::OK)
}

async fn closure_done(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    headers: &HeaderMap,
    id: i64,
    notice: String,
) -> Result<Response, WebError> {
    let (c, store) = visible_closure(state, user, id, "").await?;
    if is_htmx(headers) {
        let mut page = closure_page(state, user, session, &c, store).await?;
        page.notice = Some(notice);
        render_closure(&page, headers, StatusCode::OK)
    } else {
        flash::push(session, "success", notice).await;
        let ctx = ctx_of_store(state, user, store, "closures", "/admin/closures").await?;
        Ok(Redirect::to(&format!("/admin/closures/{}?{}", c.id, ctx.q)).into_response())
    }
}

#[derive(Template)]
#[template(path = "admin/slots/closure_confirm.html")]
struct ConfirmPage {
    layout: Layout,
    ctx: Ctx,
    c: ClosureRow,
    /// cancel | reopen
    action: &'static str,
    contacts: usize,
    reason: String,
    errors: Errs,
}

async fn confirm_page(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    id: i64,
    action: &'static str,
    reason: String,
) -> Result<ConfirmPage, WebError> {
    let (c, store) = visible_closure(state, user, id, "").await?;
    let contacts = slots::closure_contacts(&state.db, store.merchant_id, c.id)
        .await?
        .len();
    Ok(ConfirmPage {
        layout: Layout::new(user, session, "/admin/closures").await,
        c: closure_row(&c, &store, now_ms()),
        ctx: ctx_of_store(state, user, store, "closures", "/admin/closures").await?,
        action,
        contacts,
        reason,
        errors: Errs::default(),
    })
}

/// Bulk cancel without JavaScript: a page that says how many bookings go (htmx uses hx-confirm).
pub async fn confirm_cancel_bookings(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    PathId(id): PathId,
    Query(form): Query<ReasonForm>,
) -> Result<Response, WebError> {
    writer(&user)?;
    let page = confirm_page(&state, &user, &session, id, "cancel", form.reason).await?;
    Ok(Html(page.render()?).into_response())
}

pub async fn cancel_bookings(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    PathId(id): PathId,
    Form(form): Form<ReasonForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let (c, store) = visible_closure(&state, &user, id, "").await?;
    // Customers are told why: a bulk cancellation needs its reason.
    let result = match validate::name("reason", &form.reason, REASON_MAX) {
        Ok(reason) => {
            let actor = user.actor(&format!("/admin/closures/{}", c.id));
            bookings::cancel_for_closure(&state.db, &actor, merchant_id, c.id, &reason).await
        }
        Err(e) => Err(DomainError::Invalid(vec![e])),
    };
    match result {
        Ok(n) => {
            let notice = messages::closure_bookings_cancelled(n);
            closure_done(&state, &user, &session, &headers, id, notice).await
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = closure_page(&state, &user, &session, &c, store).await?;
            page.reason = form.reason;
            page.errors = Errs(errors);
            render_closure(&page, &headers, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn confirm_reopen(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    writer(&user)?;
    let page = confirm_page(&state, &user, &session, id, "reopen", String::new()).await?;
    Ok(Html(page.render()?).into_response())
}

pub async fn reopen(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let (c, _) = visible_closure(&state, &user, id, "").await?;
    let actor = user.actor(&format!("/admin/closures/{}", c.id));
    slots::reopen_closure(&state.db, &actor, merchant_id, c.id).await?;
    let notice = messages::closure_reopened();
    closure_done(&state, &user, &session, &headers, id, notice).await
}
