//! One slot's page: its figures, its bookings with their actions, and the capacity, close and
//! reopen forms. htmx swaps the panel; without JavaScript every form posts and comes back here.

use crate::domain::slots::waitlist::WaitStatus;
use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::kernel::validate::{self};
use crate::domain::slots::booking::{self, Booking, BookingStatus, Channel};
use crate::domain::slots::{self, Fill, Slot, SlotStatus};
use crate::domain::tenancy::tenants::Store;
use crate::domain::{DomainError, FieldError};
use crate::messages;
use crate::web::admin::services::slots::book::{bookable, StaffBook};
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::frozen::{frozen_banner, FrozenBanner};
use crate::web::view::store::{ctx_of_store, visible_slot, writer, StoreCtx};
use crate::web::view::time::{local_date, monday_of, period, DATE_FMT};
use crate::web::view::Errs;
use crate::web::AppState;

pub struct SlotView {
    pub id: i64,
    pub date: String,
    /// The day and its week's Monday as people read them (`date`/`week` are for links).
    pub date_label: String,
    pub week: String,
    pub week_label: String,
    pub time: String,
    pub sku_code: String,
    pub sku_name: String,
    pub staff: String,
    pub capacity: i64,
    pub booked: i64,
    pub remaining: i64,
    pub status: SlotStatus,
    pub fill: Fill,
    pub reason: String,
}

pub struct BookingRow {
    pub reference: String,
    pub name: String,
    /// The places the booking takes (a party).
    pub places: i64,
    pub phone: String,
    pub status: BookingStatus,
    pub cancel_reason: String,
    pub booked_at: String,
    pub can_cancel: bool,
    /// No-show may be recorded (after the start).
    pub can_mark: bool,
    /// The customer may be checked in (from the store's check-in time before the start).
    pub can_attend: bool,
    pub error: Option<String>,
    /// A place held for a waiting customer who has not accepted it: until when, else empty.
    pub held_until: String,
    /// Staff took it (by phone, at the counter): how and who.
    pub taken: Option<Taken>,
}

/// A booking staff took for a customer, as its row says it.
pub struct Taken {
    pub channel: Channel,
    pub who: String,
}

impl Taken {
    pub fn of(channel: Channel, who: Option<&str>) -> Option<Taken> {
        (channel != Channel::Customer).then(|| Taken {
            channel,
            who: who.unwrap_or_default().to_string(),
        })
    }
}

#[derive(Deserialize, Default, Clone)]
pub struct CapacityForm {
    #[serde(default)]
    capacity: String,
}

#[derive(Deserialize, Default, Clone)]
pub struct ReasonForm {
    #[serde(default)]
    reason: String,
}

#[derive(Template)]
#[template(path = "admin/slots/slot.html", blocks = ["panel"])]
pub(crate) struct SlotPage {
    layout: Layout,
    ctx: StoreCtx,
    slot: SlotView,
    started: bool,
    bookings: Vec<BookingRow>,
    /// Active bookings of a closed slot: the people to call.
    contacts: Vec<BookingRow>,
    capacity: String,
    close_reason: String,
    errors: Errs,
    pub(crate) notice: Option<String>,
    /// Set while reconciliation has frozen the slot.
    frozen: Option<FrozenBanner>,
    /// The slot's waiting list, in order.
    waiting: Vec<WaitRow>,
    /// The store holds freed places for waiting customers instead of booking them outright.
    holds_offers: bool,
    /// Staff book a caller or a walk-in into this slot (offered while it may be booked).
    book: StaffBook,
}

/// A customer on the slot's waiting list, as staff see it.
pub struct WaitRow {
    pub position: i64,
    pub name: String,
    pub phone: String,
    pub places: i64,
    pub status: WaitStatus,
    pub booking: String,
    pub since: String,
    /// While an offer is held: until when (the store's clock), else empty.
    pub held_until: String,
    /// An offer that ran out unanswered (EXPIRED with a held booking), not a slot that started.
    pub lapsed: bool,
}

impl SlotPage {
    /// Shows a refusal beside the booking it concerns.
    pub(crate) fn booking_error(&mut self, reference: &str, message: String) {
        if let Some(row) = self.bookings.iter_mut().find(|b| b.reference == reference) {
            row.error = Some(message);
        }
    }
}

pub(crate) fn booking_row(b: &Booking, starts_at: i64, now: i64, store: &Store) -> BookingRow {
    let tz = store.tz();
    BookingRow {
        reference: b.reference.clone(),
        name: b.customer_name.clone(),
        places: b.places,
        phone: b.customer_phone.clone(),
        status: b.status,
        cancel_reason: b.cancel_reason.clone().unwrap_or_default(),
        booked_at: crate::web::view::time::when(b.created_at, tz),
        can_cancel: b.status.cancellable(starts_at, now),
        can_mark: b.status.markable(starts_at, now),
        can_attend: b.hold_until.is_none()
            && b.status.attendable(starts_at, now, store.check_in_minutes),
        error: None,
        taken: Taken::of(b.channel, b.taken_by.as_deref()),
        held_until: b
            .hold_until
            .filter(|_| b.status == crate::domain::slots::booking::BookingStatus::Booked)
            .map(|ms| crate::web::view::time::clock(ms, tz))
            .unwrap_or_default(),
    }
}

pub(crate) async fn slot_page(
    state: &AppState,
    cx: &PageCtx,
    slot: Slot,
    store: Store,
) -> Result<SlotPage, WebError> {
    let user = &cx.user;
    let tz = store.tz();
    let now = state.db.now_ms();
    let list = booking::of_slot(&state.db, slot.merchant_id, slot.id).await?;
    let rows: Vec<BookingRow> = list
        .iter()
        .map(|b| booking_row(b, slot.starts_at, now, &store))
        .collect();
    let contacts = if slot.status == SlotStatus::Closed {
        list.iter()
            .filter(|b| b.status == BookingStatus::Booked)
            .map(|b| booking_row(b, slot.starts_at, now, &store))
            .collect()
    } else {
        Vec::new()
    };
    let date = local_date(slot.starts_at, tz).unwrap_or_else(|| state.db.clock.today(tz));
    let view = SlotView {
        id: slot.id,
        date: date.format(DATE_FMT).to_string(),
        date_label: crate::i18n::format::day_short(crate::i18n::current(), date),
        week: monday_of(date).format(DATE_FMT).to_string(),
        week_label: crate::i18n::format::day_short(crate::i18n::current(), monday_of(date)),
        time: period(slot.starts_at, slot.ends_at, tz),
        sku_code: slot.sku_code.clone(),
        sku_name: slot.sku_name.clone(),
        staff: slot.staff_name.clone().unwrap_or_default(),
        capacity: slot.capacity,
        booked: slot.booked,
        remaining: slot.remaining(),
        status: slot.status,
        fill: slot.fill(now),
        reason: slot.closed_reason.clone().unwrap_or_default(),
    };
    let frozen = frozen_banner(state, user, slot.merchant_id, slot.frozen_finding_id).await?;
    let store_holds_offers = store.waitlist_hold_minutes.is_some();
    let waiting = crate::domain::slots::waitlist::of_slot(&state.db, slot.merchant_id, slot.id)
        .await?
        .into_iter()
        .map(|e| WaitRow {
            position: e.position,
            name: e.customer_name,
            phone: e.customer_phone,
            places: e.places,
            status: e.status,
            booking: e.booking_reference.clone().unwrap_or_default(),
            since: crate::web::view::time::when(e.created_at, tz),
            lapsed: e.status == crate::domain::slots::waitlist::WaitStatus::Expired
                && e.booking_reference.is_some(),
            held_until: e
                .hold_until
                .map(|ms| crate::web::view::time::clock(ms, tz))
                .unwrap_or_default(),
        })
        .collect();
    let ctx = ctx_of_store(state, user, store, Tab::Week, &paths::slots()).await?;
    let book = if ctx.can_edit && bookable(&slot, now) {
        let max = slots::for_booking(&state.db, slot.merchant_id, slot.id)
            .await?
            .map_or(1, |b| b.max_places);
        StaffBook::for_slot(&slot, &ctx, max)
    } else {
        StaffBook::new(crate::web::admin::services::slots::book::From::Slot, &ctx)
    };
    Ok(SlotPage {
        frozen,
        waiting,
        holds_offers: store_holds_offers,
        layout: cx.layout().await,
        ctx,
        book,
        started: slot.started(now),
        capacity: slot.capacity.to_string(),
        slot: view,
        bookings: rows,
        contacts,
        close_reason: String::new(),
        errors: Errs::default(),
        notice: None,
    })
}

impl SlotPage {
    /// The slot page, or its panel for htmx, with a status (422 for a refusal, so htmx swaps it).
    pub(crate) fn answer(&self, cx: &PageCtx, status: StatusCode) -> Result<Response, WebError> {
        cx.answer(status, self, Part::AnyHtmx, |p| p.as_panel().render())
    }
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let (slot, store) = visible_slot(&state, &cx.user, id).await?;
    let page = slot_page(&state, &cx, slot, store).await?;
    page.answer(&cx, StatusCode::OK)
}

/// After a change: htmx gets the panel with a notice; a plain form goes back to the page.
async fn slot_done(
    state: &AppState,
    cx: &PageCtx,
    slot_id: i64,
    notice: String,
) -> Result<Response, WebError> {
    if cx.htmx {
        let (slot, store) = visible_slot(state, &cx.user, slot_id).await?;
        let mut page = slot_page(state, cx, slot, store).await?;
        page.notice = Some(notice);
        page.answer(cx, StatusCode::OK)
    } else {
        cx.flash(FlashKind::Success, notice).await;
        Ok(Redirect::to(&paths::slot(slot_id)).into_response())
    }
}

pub async fn set_capacity(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<CapacityForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (slot, store) = visible_slot(&state, &cx.user, id).await?;
    let result = match validate::typed_int(&form.capacity) {
        Some(c) => {
            let actor = cx.actor(&paths::slot(slot.id));
            slots::set_capacity(&state.db, &actor, merchant_id, slot.id, c).await
        }
        None => Err(DomainError::Invalid(vec![FieldError::new(
            "capacity",
            "invalid_capacity",
            messages::bad_capacity(slots::CAPACITY_MAX),
        )])),
    };
    match result {
        Ok(saved) => {
            let notice = messages::slot_capacity_saved(saved.capacity);
            slot_done(&state, &cx, slot.id, notice).await
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = slot_page(&state, &cx, slot, store).await?;
            page.capacity = form.capacity;
            page.errors = Errs(errors);
            page.answer(&cx, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn close(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<ReasonForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (slot, store) = visible_slot(&state, &cx.user, id).await?;
    let actor = cx.actor(&paths::slot(slot.id));
    match slots::close(&state.db, &actor, merchant_id, slot.id, &form.reason).await {
        Ok((_, contacts)) => {
            let notice = messages::slot_closed_by_staff(contacts.len());
            slot_done(&state, &cx, slot.id, notice).await
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = slot_page(&state, &cx, slot, store).await?;
            page.close_reason = form.reason;
            page.errors = Errs(errors);
            page.answer(&cx, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn open(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (slot, _) = visible_slot(&state, &cx.user, id).await?;
    let actor = cx.actor(&paths::slot(slot.id));
    slots::open(&state.db, &actor, merchant_id, slot.id).await?;
    let notice = messages::slot_reopened();
    slot_done(&state, &cx, slot.id, notice).await
}
