//! The day list of a store's bookings, and what staff do to one booking: cancel it on the
//! customer's behalf (before the start, after a confirmation) or record attended / no-show (after
//! the start). The actions answer the page they came from: the slot page or the day list.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use chrono::{Duration, NaiveDate};
use serde::Deserialize;
use tower_sessions::Session;

use super::slots::{
    ctx, ctx_of_store, day_start, local_date, no_store_page, paginate, parse_date, period, query,
    render_slot, slot_page, today, visible_slot, writer, Ctx, DATE_FMT, TIME_FMT,
};
use super::Errs;
use crate::domain::bookings::{self, Booking};
use crate::domain::slots::Slot;
use crate::domain::tenants::Store;
use crate::domain::validate::ms_to_local;
use crate::domain::{DomainError, Scope};
use crate::infra::db::now_ms;
use crate::messages;
use crate::web::auth::{is_htmx, CurrentUser};
use crate::web::error::WebError;
use crate::web::flash;
use crate::web::layout::Layout;
use crate::web::AppState;

const PER_PAGE: usize = 50;

// ---------- the day list ----------

#[derive(Deserialize, Default)]
pub struct DayQuery {
    #[serde(default)]
    store: String,
    #[serde(default)]
    date: String,
    #[serde(default)]
    page: String,
}

pub struct DayRow {
    pub time: String,
    pub slot_id: i64,
    pub sku_code: String,
    pub staff: String,
    pub reference: String,
    pub name: String,
    pub phone: String,
    pub status: String,
    pub can_cancel: bool,
    pub can_mark: bool,
    pub error: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/slots/day.html", blocks = ["list"])]
struct DayPage {
    layout: Layout,
    ctx: Ctx,
    date: String,
    date_label: String,
    prev: String,
    next: String,
    today: String,
    rows: Vec<DayRow>,
    page: i64,
    pages: i64,
    total: i64,
    notice: Option<String>,
}

async fn day_page(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    ctx: Ctx,
    store: &Store,
    date: NaiveDate,
    page: &str,
) -> Result<DayPage, WebError> {
    let tz = store.tz();
    let (from, to) = (day_start(tz, date), day_start(tz, date + Duration::days(1)));
    let list = bookings::day_list(&state.db, store.merchant_id, store.id, from, to).await?;
    let now = now_ms();
    let rows = list
        .into_iter()
        .map(|b| DayRow {
            time: ms_to_local(b.starts_at, tz, TIME_FMT),
            slot_id: b.slot_id,
            sku_code: b.sku_code,
            staff: b.staff_name.unwrap_or_default(),
            can_cancel: crate::domain::bookings::cancellable(&b.status, b.starts_at, now),
            can_mark: b.status != "CANCELLED" && b.starts_at <= now,
            reference: b.reference,
            name: b.customer_name,
            phone: b.customer_phone,
            status: b.status,
            error: None,
        })
        .collect();
    let (rows, page, pages, total) = paginate(rows, page, PER_PAGE);
    Ok(DayPage {
        layout: Layout::new(user, session, "/admin/bookings").await,
        ctx,
        date: date.format(DATE_FMT).to_string(),
        date_label: date.format("%A %-d %B %Y").to_string(),
        prev: (date - Duration::days(1)).format(DATE_FMT).to_string(),
        next: (date + Duration::days(1)).format(DATE_FMT).to_string(),
        today: today(tz).format(DATE_FMT).to_string(),
        rows,
        page,
        pages,
        total,
        notice: None,
    })
}

fn render_day(
    page: &DayPage,
    headers: &HeaderMap,
    status: StatusCode,
) -> Result<Response, WebError> {
    let html = if is_htmx(headers) {
        page.as_list().render()?
    } else {
        page.render()?
    };
    Ok((status, Html(html)).into_response())
}

pub async fn day(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    Query(q): Query<DayQuery>,
) -> Result<Response, WebError> {
    let ctx = ctx(&state, &user, &q.store, "day", "/admin/bookings").await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&user, &session, ctx).await;
    };
    let date = parse_date(&q.date).unwrap_or_else(|| today(store.tz()));
    let page = day_page(&state, &user, &session, ctx, &store, date, &q.page).await?;
    render_day(&page, &headers, StatusCode::OK)
}

// ---------- actions on one booking ----------

#[derive(Deserialize, Default, Clone)]
pub struct ActionForm {
    #[serde(default)]
    reason: String,
    /// "day" when the action comes from the day list; anything else means the slot page.
    #[serde(default)]
    from: String,
    #[serde(default)]
    page: String,
}

/// A booking the user may see, with its slot and store.
async fn visible_booking(
    state: &AppState,
    user: &CurrentUser,
    reference: &str,
) -> Result<(Booking, Slot, Store), WebError> {
    let b = bookings::by_reference(&state.db, user.actor("").scope(), reference).await?;
    let (slot, store) = visible_slot(state, user, b.slot_id).await?;
    Ok((b, slot, store))
}

fn slot_date(slot: &Slot, store: &Store) -> NaiveDate {
    local_date(slot.starts_at, store.tz()).unwrap_or_else(|| today(store.tz()))
}

async fn day_ctx(state: &AppState, user: &CurrentUser, store: &Store) -> Result<Ctx, WebError> {
    ctx_of_store(state, user, store.clone(), "day", "/admin/bookings").await
}

/// Done: htmx gets the page's block back with a notice; a plain form goes back to the page.
#[allow(clippy::too_many_arguments)]
async fn done(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    headers: &HeaderMap,
    form: &ActionForm,
    slot: &Slot,
    store: &Store,
    notice: String,
) -> Result<Response, WebError> {
    let from_day = form.from == "day";
    if !is_htmx(headers) {
        flash::push(session, "success", notice).await;
        let to = if from_day {
            let ctx = day_ctx(state, user, store).await?;
            let date = slot_date(slot, store).format(DATE_FMT).to_string();
            format!(
                "/admin/bookings?{}",
                query(&[("store", &ctx.value), ("date", &date), ("page", &form.page)])
            )
        } else {
            format!("/admin/slots/{}", slot.id)
        };
        return Ok(Redirect::to(&to).into_response());
    }
    if from_day {
        let ctx = day_ctx(state, user, store).await?;
        let date = slot_date(slot, store);
        let mut page = day_page(state, user, session, ctx, store, date, &form.page).await?;
        page.notice = Some(notice);
        render_day(&page, headers, StatusCode::OK)
    } else {
        let (slot, store) = visible_slot(state, user, slot.id).await?;
        let mut page = slot_page(state, user, session, slot, store).await?;
        page.notice = Some(notice);
        render_slot(&page, headers, StatusCode::OK)
    }
}

/// Refused: the page it came from, with the message beside the booking, and nothing changed.
#[allow(clippy::too_many_arguments)]
async fn refused(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    headers: &HeaderMap,
    form: &ActionForm,
    slot: Slot,
    store: Store,
    reference: &str,
    message: String,
) -> Result<Response, WebError> {
    if form.from == "day" {
        let ctx = day_ctx(state, user, &store).await?;
        let date = slot_date(&slot, &store);
        let mut page = day_page(state, user, session, ctx, &store, date, &form.page).await?;
        if let Some(row) = page.rows.iter_mut().find(|r| r.reference == reference) {
            row.error = Some(message);
        }
        render_day(&page, headers, StatusCode::UNPROCESSABLE_ENTITY)
    } else {
        let mut page = slot_page(state, user, session, slot, store).await?;
        page.booking_error(reference, message);
        render_slot(&page, headers, StatusCode::UNPROCESSABLE_ENTITY)
    }
}

#[derive(Template)]
#[template(path = "admin/slots/booking_cancel.html")]
struct CancelPage {
    layout: Layout,
    ctx: Ctx,
    reference: String,
    name: String,
    phone: String,
    sku_code: String,
    when: String,
    form: ActionForm,
    back: String,
    /// Why the booking cannot be cancelled any more (the slot started, or it is not active).
    refusal: Option<String>,
    errors: Errs,
}

async fn cancel_page(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    b: &Booking,
    slot: &Slot,
    store: &Store,
    form: ActionForm,
) -> Result<CancelPage, WebError> {
    let ctx = day_ctx(state, user, store).await?;
    let back = if form.from == "day" {
        let date = slot_date(slot, store).format(DATE_FMT).to_string();
        format!(
            "/admin/bookings?{}",
            query(&[("store", &ctx.value), ("date", &date), ("page", &form.page)])
        )
    } else {
        format!("/admin/slots/{}", slot.id)
    };
    let refusal = if b.status != "BOOKED" {
        Some(messages::booking_not_active(&b.reference, &b.status))
    } else if slot.started(now_ms()) {
        Some(messages::cancel_after_start())
    } else {
        None
    };
    Ok(CancelPage {
        layout: Layout::new(user, session, "/admin/bookings").await,
        ctx,
        reference: b.reference.clone(),
        name: b.customer_name.clone(),
        phone: b.customer_phone.clone(),
        sku_code: slot.sku_code.clone(),
        when: period(slot.starts_at, slot.ends_at, store.tz()),
        form,
        back,
        refusal,
        errors: Errs::default(),
    })
}

/// The confirmation step of a cancellation when JavaScript is off (htmx asks with hx-confirm).
pub async fn confirm_cancel(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    Path(reference): Path<String>,
    Query(form): Query<ActionForm>,
) -> Result<Response, WebError> {
    let (b, slot, store) = visible_booking(&state, &user, &reference).await?;
    let page = cancel_page(&state, &user, &session, &b, &slot, &store, form).await?;
    Ok(Html(page.render()?).into_response())
}

pub async fn cancel(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    Path(reference): Path<String>,
    Form(form): Form<ActionForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let (b, slot, store) = visible_booking(&state, &user, &reference).await?;
    let actor = user.actor(&format!("/admin/bookings/{}/cancel", b.reference));
    let result = bookings::cancel(
        &state.db,
        &actor,
        Scope::Merchant(merchant_id),
        &b.reference,
        Some(&form.reason),
    )
    .await;
    match result {
        Ok(_) => {
            let notice = messages::booking_cancelled_by_staff(&b.reference);
            done(
                &state, &user, &session, &headers, &form, &slot, &store, notice,
            )
            .await
        }
        Err(DomainError::Invalid(errors)) if !is_htmx(&headers) => {
            let mut page = cancel_page(&state, &user, &session, &b, &slot, &store, form).await?;
            page.errors = Errs(errors);
            Ok((StatusCode::UNPROCESSABLE_ENTITY, Html(page.render()?)).into_response())
        }
        Err(e @ (DomainError::Invalid(_) | DomainError::Conflict { .. })) => {
            let message = e.message();
            refused(
                &state,
                &user,
                &session,
                &headers,
                &form,
                slot,
                store,
                &b.reference,
                message,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

async fn mark(
    state: AppState,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    reference: String,
    form: ActionForm,
    status: &'static str,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let (b, slot, store) = visible_booking(&state, &user, &reference).await?;
    let actor = user.actor(&format!("/admin/bookings/{}", b.reference));
    match bookings::mark(&state.db, &actor, merchant_id, &b.reference, status).await {
        Ok(saved) => {
            let notice = messages::booking_marked(&saved.reference, &saved.status);
            done(
                &state, &user, &session, &headers, &form, &slot, &store, notice,
            )
            .await
        }
        Err(e @ (DomainError::Invalid(_) | DomainError::Conflict { .. })) => {
            let message = e.message();
            refused(
                &state,
                &user,
                &session,
                &headers,
                &form,
                slot,
                store,
                &b.reference,
                message,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn attended(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    Path(reference): Path<String>,
    Form(form): Form<ActionForm>,
) -> Result<Response, WebError> {
    mark(state, user, session, headers, reference, form, "ATTENDED").await
}

pub async fn no_show(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    Path(reference): Path<String>,
    Form(form): Form<ActionForm>,
) -> Result<Response, WebError> {
    mark(state, user, session, headers, reference, form, "NO_SHOW").await
}
