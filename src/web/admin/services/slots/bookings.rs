//! The day list of a store's bookings, and what staff do to one booking: cancel it on the
//! customer's behalf (before the start, after a confirmation) or record attended / no-show (after
//! the start). The actions answer the page they came from: the slot page or the day list.

use crate::domain::slots::no_show::AUTO;
use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use chrono::{Duration, NaiveDate};
use serde::Deserialize;

use crate::domain::slots::booking::{self, Booking, BookingStatus};
use crate::domain::slots::Slot;
use crate::domain::tenancy::tenants::Store;
use crate::domain::{DomainError, Scope};
use crate::messages;
use crate::web::admin::services::slots::book::{self as staff_book, StaffBook};
use crate::web::admin::services::slots::slot::{slot_page, Taken};
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::store::{self, ctx_of_store, no_store_page, visible_slot, writer, StoreCtx};
use crate::web::view::time::{day_start, local_date, parse_day, period, DATE_FMT};
use crate::web::view::{link, paginate, Errs};
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
    /// The places the booking takes (a party).
    pub places: i64,
    pub phone: String,
    pub status: BookingStatus,
    pub can_cancel: bool,
    /// No-show may be recorded (after the start).
    pub can_mark: bool,
    /// The customer may be checked in (from the store's check-in time before the start).
    pub can_attend: bool,
    /// An active booking in a closed slot: the customer is to be called.
    pub to_call: bool,
    /// Who marked it attended or no-show: a person, `auto`, or empty.
    pub marked_by: String,
    /// A place held for a waiting customer who has not accepted it: until when, else empty.
    pub held_until: String,
    pub error: Option<String>,
    /// Staff took it (by phone, at the counter): how and who.
    pub taken: Option<Taken>,
}

#[derive(Template)]
#[template(path = "admin/slots/day.html", blocks = ["list"])]
struct DayPage {
    layout: Layout,
    ctx: StoreCtx,
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
    /// Staff book a caller or a walk-in into one of the day's slots.
    book: StaffBook,
}

impl DayPage {
    fn answer(&self, cx: &PageCtx, status: StatusCode) -> Result<Response, WebError> {
        cx.answer(status, self, Part::AnyHtmx, |p| p.as_list().render())
    }
}

async fn day_page(
    state: &AppState,
    cx: &PageCtx,
    ctx: StoreCtx,
    store: &Store,
    date: NaiveDate,
    page: &str,
) -> Result<DayPage, WebError> {
    let tz = store.tz();
    let (from, to) = (day_start(tz, date), day_start(tz, date + Duration::days(1)));
    let list = booking::day_list(&state.db, store.merchant_id, store.id, from, to).await?;
    let now = state.db.now_ms();
    let rows = list
        .into_iter()
        .map(|b| DayRow {
            time: crate::web::view::time::clock(b.starts_at, tz),
            slot_id: b.slot_id,
            sku_code: b.sku_code,
            staff: b.staff_name.unwrap_or_default(),
            can_cancel: b.status.cancellable(b.starts_at, now),
            can_mark: b.status.markable(b.starts_at, now),
            can_attend: b.hold_until.is_none()
                && b.status
                    .attendable(b.starts_at, now, store.check_in_minutes),
            to_call: b.slot_status == crate::domain::slots::SlotStatus::Closed
                && b.status == BookingStatus::Booked
                && b.contacted_at.is_none(),
            marked_by: b
                .marked_by
                .as_deref()
                .map(|m| m.trim_start_matches("user:").to_string())
                .unwrap_or_default(),
            held_until: b
                .hold_until
                .filter(|_| b.status == BookingStatus::Booked)
                .map(|ms| crate::web::view::time::clock(ms, tz))
                .unwrap_or_default(),
            taken: Taken::of(b.channel, b.taken_by.as_deref()),
            reference: b.reference,
            places: b.places,
            name: b.customer_name,
            phone: b.customer_phone,
            status: b.status,
            error: None,
        })
        .collect();
    let (rows, page, pages, total) = paginate(rows, page, PER_PAGE);
    let mut book = StaffBook::new(staff_book::From::Day, &ctx);
    if ctx.can_edit {
        book.choices = staff_book::day_choices(state, store, date).await?;
    }
    Ok(DayPage {
        book,
        layout: cx.layout().await,
        ctx,
        date: date.format(DATE_FMT).to_string(),
        date_label: crate::i18n::format::day_long(cx.lang, date),
        prev: (date - Duration::days(1)).format(DATE_FMT).to_string(),
        next: (date + Duration::days(1)).format(DATE_FMT).to_string(),
        today: state.db.clock.today(tz).format(DATE_FMT).to_string(),
        rows,
        page,
        pages,
        total,
        notice: None,
    })
}

pub async fn day(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<DayQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(&state, &cx.user, &q.store, Tab::Day, &paths::bookings()).await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let date = parse_day(&q.date).unwrap_or_else(|| state.db.clock.today(store.tz()));
    let page = day_page(&state, &cx, ctx, &store, date, &q.page).await?;
    page.answer(&cx, StatusCode::OK)
}

// ---------- actions on one booking ----------

#[derive(Deserialize, Default, Clone)]
pub struct ActionForm {
    #[serde(default)]
    reason: String,
    /// "day" when the action comes from the day list, "to-call" from the to-call list; anything
    /// else means the slot page.
    #[serde(default)]
    from: String,
    #[serde(default)]
    page: String,
    /// The move page: the day whose times to list (`YYYY-MM-DD`); empty: the nearest times.
    #[serde(default)]
    day: String,
}

/// The booking an action is about, the slot and store it belongs to, and the form that came:
/// which page the action answers with.
struct Target {
    booking: Booking,
    slot: Slot,
    store: Store,
    form: ActionForm,
}

impl Target {
    /// A booking the user may see (merchant-scoped, store-scoped for store staff).
    async fn find(
        state: &AppState,
        cx: &PageCtx,
        reference: &str,
        form: ActionForm,
    ) -> Result<Target, WebError> {
        let booking =
            booking::by_reference(&state.db, cx.user.actor("").scope(), reference).await?;
        let (slot, store) = visible_slot(state, &cx.user, booking.slot_id).await?;
        Ok(Target {
            booking,
            slot,
            store,
            form,
        })
    }

    fn came_from_day(&self) -> bool {
        self.form.from == "day"
    }

    fn came_from_to_call(&self) -> bool {
        self.form.from == "to-call"
    }

    fn date(&self) -> NaiveDate {
        let tz = self.store.tz();
        // An instant always has a local date.
        local_date(self.slot.starts_at, tz).unwrap_or_default()
    }

    async fn day_ctx(&self, state: &AppState, cx: &PageCtx) -> Result<StoreCtx, WebError> {
        ctx_of_store(
            state,
            &cx.user,
            self.store.clone(),
            Tab::Day,
            &paths::bookings(),
        )
        .await
    }

    /// The page the action came from, as a link.
    async fn back(&self, state: &AppState, cx: &PageCtx) -> Result<String, WebError> {
        if self.came_from_to_call() {
            let ctx = self.day_ctx(state, cx).await?;
            return Ok(link(&paths::to_call(), &[("store", &ctx.value)]));
        }
        if !self.came_from_day() {
            return Ok(paths::slot(self.slot.id));
        }
        let ctx = self.day_ctx(state, cx).await?;
        let date = self.date().format(DATE_FMT).to_string();
        Ok(link(
            &paths::bookings(),
            &[
                ("store", &ctx.value),
                ("date", &date),
                ("page", &self.form.page),
            ],
        ))
    }

    /// Done: htmx gets the page's block back with a notice; a plain form goes back to the page.
    async fn done(
        self,
        state: &AppState,
        cx: &PageCtx,
        notice: String,
    ) -> Result<Response, WebError> {
        if !cx.htmx {
            cx.flash(FlashKind::Success, notice).await;
            return Ok(Redirect::to(&self.back(state, cx).await?).into_response());
        }
        if self.came_from_day() {
            let ctx = self.day_ctx(state, cx).await?;
            let mut page =
                day_page(state, cx, ctx, &self.store, self.date(), &self.form.page).await?;
            page.notice = Some(notice);
            page.answer(cx, StatusCode::OK)
        } else {
            let (slot, store) = visible_slot(state, &cx.user, self.slot.id).await?;
            let mut page = slot_page(state, cx, slot, store).await?;
            page.notice = Some(notice);
            page.answer(cx, StatusCode::OK)
        }
    }

    /// Refused: the page it came from, with the message beside the booking, and nothing changed.
    async fn refused(
        self,
        state: &AppState,
        cx: &PageCtx,
        message: String,
    ) -> Result<Response, WebError> {
        let reference = self.booking.reference.clone();
        if self.came_from_day() {
            let ctx = self.day_ctx(state, cx).await?;
            let mut page =
                day_page(state, cx, ctx, &self.store, self.date(), &self.form.page).await?;
            if let Some(row) = page.rows.iter_mut().find(|r| r.reference == reference) {
                row.error = Some(message);
            }
            page.answer(cx, StatusCode::UNPROCESSABLE_ENTITY)
        } else {
            let mut page = slot_page(state, cx, self.slot, self.store).await?;
            page.booking_error(&reference, message);
            page.answer(cx, StatusCode::UNPROCESSABLE_ENTITY)
        }
    }
}

#[derive(Template)]
#[template(path = "admin/slots/booking_cancel.html")]
struct CancelPage {
    layout: Layout,
    ctx: StoreCtx,
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
    /// The slot is closed: cancelling frees nothing anyone can book (the page says so).
    slot_closed: bool,
}

async fn cancel_page(state: &AppState, cx: &PageCtx, t: Target) -> Result<CancelPage, WebError> {
    let ctx = t.day_ctx(state, cx).await?;
    let back = t.back(state, cx).await?;
    let b = &t.booking;
    let refusal = if b.status != BookingStatus::Booked {
        Some(messages::booking_not_active(
            &b.reference,
            b.status.as_str(),
        ))
    } else if t.slot.started(state.db.now_ms()) {
        Some(messages::cancel_after_start())
    } else {
        None
    };
    Ok(CancelPage {
        layout: cx.layout().await,
        ctx,
        reference: b.reference.clone(),
        name: b.customer_name.clone(),
        phone: b.customer_phone.clone(),
        sku_code: t.slot.sku_code.clone(),
        when: period(t.slot.starts_at, t.slot.ends_at, t.store.tz()),
        form: t.form,
        back,
        refusal,
        errors: Errs::default(),
        slot_closed: t.slot.status == crate::domain::slots::SlotStatus::Closed,
    })
}

/// The confirmation step of a cancellation when JavaScript is off (htmx asks with hx-confirm).
pub async fn confirm_cancel(
    State(state): State<AppState>,
    cx: PageCtx,
    Path(reference): Path<String>,
    Query(form): Query<ActionForm>,
) -> Result<Response, WebError> {
    let t = Target::find(&state, &cx, &reference, form).await?;
    let page = cancel_page(&state, &cx, t).await?;
    cx.whole(&page)
}

pub async fn cancel(
    State(state): State<AppState>,
    cx: PageCtx,
    Path(reference): Path<String>,
    Form(form): Form<ActionForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let t = Target::find(&state, &cx, &reference, form).await?;
    let r = &t.booking.reference;
    let actor = cx.actor(&paths::booking_cancel(r));
    let reason = Some(t.form.reason.as_str());
    let result = booking::cancel(&state.db, &actor, Scope::Merchant(merchant_id), r, reason).await;
    match result {
        Ok(_) => {
            let notice = messages::booking_cancelled_by_staff(r);
            t.done(&state, &cx, notice).await
        }
        Err(DomainError::Invalid(errors)) if !cx.htmx => {
            let mut page = cancel_page(&state, &cx, t).await?;
            page.errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e @ (DomainError::Invalid(_) | DomainError::Conflict { .. })) => {
            t.refused(&state, &cx, e.message()).await
        }
        Err(e) => Err(e.into()),
    }
}

async fn mark(
    state: AppState,
    cx: PageCtx,
    reference: String,
    form: ActionForm,
    status: BookingStatus,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let t = Target::find(&state, &cx, &reference, form).await?;
    let actor = cx.actor(&format!("{}/{}", paths::bookings(), t.booking.reference));
    match booking::mark(&state.db, &actor, merchant_id, &t.booking.reference, status).await {
        Ok(saved) => {
            let notice = messages::booking_marked(&saved.reference, saved.status.as_str());
            t.done(&state, &cx, notice).await
        }
        Err(e @ (DomainError::Invalid(_) | DomainError::Conflict { .. })) => {
            t.refused(&state, &cx, e.message()).await
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn attended(
    State(state): State<AppState>,
    cx: PageCtx,
    Path(reference): Path<String>,
    Form(form): Form<ActionForm>,
) -> Result<Response, WebError> {
    mark(state, cx, reference, form, BookingStatus::Attended).await
}

pub async fn no_show(
    State(state): State<AppState>,
    cx: PageCtx,
    Path(reference): Path<String>,
    Form(form): Form<ActionForm>,
) -> Result<Response, WebError> {
    mark(state, cx, reference, form, BookingStatus::NoShow).await
}

// ---------- moving a booking ----------

#[derive(Deserialize, Default, Clone)]
pub struct MoveForm {
    /// The slot to move to (a button per candidate slot).
    #[serde(default)]
    slot_id: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    page: String,
}

/// A slot a booking can move to: its time, staff and places left.
pub struct MoveChoice {
    pub id: i64,
    pub when: String,
    pub staff: String,
    pub remaining: i64,
}

#[derive(Template)]
#[template(path = "admin/slots/booking_move.html")]
struct MovePage {
    layout: Layout,
    ctx: StoreCtx,
    reference: String,
    name: String,
    phone: String,
    places: i64,
    sku_code: String,
    when: String,
    form: MoveForm,
    back: String,
    /// Why the booking cannot move (not active, or its slot started).
    refusal: Option<String>,
    /// Why the last move was refused (the target filled meanwhile…); nothing changed.
    error: Option<String>,
    choices: Vec<MoveChoice>,
    /// The day picked to list its times (ISO), or empty for the nearest times.
    day: String,
    /// Today in the store (ISO): the earliest day the picker offers.
    today: String,
}

/// The most slots the move page offers, nearest first.
const MOVE_CHOICES: i64 = 12;
/// The most times of one picked day.
const MOVE_DAY_CHOICES: i64 = 200;

async fn move_page(state: &AppState, cx: &PageCtx, t: Target) -> Result<MovePage, WebError> {
    let ctx = t.day_ctx(state, cx).await?;
    let back = t.back(state, cx).await?;
    let b = &t.booking;
    let tz = t.store.tz();
    let refusal = if b.status != BookingStatus::Booked {
        Some(messages::booking_not_active(
            &b.reference,
            b.status.as_str(),
        ))
    } else if t.slot.started(state.db.now_ms()) {
        Some(messages::move_after_start())
    } else {
        None
    };
    let choices = if refusal.is_none() {
        // The nearest slots with room, shown in time order: a clerk reads a list of times.
        // A day at the edge of the calendar has no next day: it lists the nearest times.
        let picked =
            crate::web::view::time::parse_day(&t.form.day).and_then(|d| Some((d, d.succ_opt()?)));
        let mut near = match picked {
            Some((d, next)) => {
                let bounds = (
                    crate::web::view::time::day_start(tz, d),
                    crate::web::view::time::day_start(tz, next),
                );
                booking::free_between(&state.db, &t.slot, b.places, MOVE_DAY_CHOICES, bounds)
                    .await?
            }
            None => booking::nearest_free(&state.db, &t.slot, b.places, MOVE_CHOICES).await?,
        };
        near.sort_by_key(|s| (s.starts_at, s.id));
        near.into_iter()
            .map(|s| MoveChoice {
                id: s.id,
                when: period(s.starts_at, s.ends_at, tz),
                staff: s.staff_name.clone().unwrap_or_default(),
                remaining: s.remaining(),
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(MovePage {
        layout: cx.layout().await,
        ctx,
        reference: b.reference.clone(),
        name: b.customer_name.clone(),
        phone: b.customer_phone.clone(),
        places: b.places,
        sku_code: t.slot.sku_code.clone(),
        when: period(t.slot.starts_at, t.slot.ends_at, tz),
        form: MoveForm {
            slot_id: String::new(),
            from: t.form.from.clone(),
            page: t.form.page.clone(),
        },
        back,
        refusal,
        error: None,
        choices,
        day: crate::web::view::time::parse_day(&t.form.day)
            .map(|d| d.to_string())
            .unwrap_or_default(),
        today: state.db.clock.today(tz).to_string(),
    })
}

/// The move page: the nearest slots of the same service with room for the booking's places.
pub async fn confirm_move(
    State(state): State<AppState>,
    cx: PageCtx,
    Path(reference): Path<String>,
    Query(form): Query<ActionForm>,
) -> Result<Response, WebError> {
    writer(&cx.user)?;
    let t = Target::find(&state, &cx, &reference, form).await?;
    let page = move_page(&state, &cx, t).await?;
    cx.whole(&page)
}

/// Moves the booking; on success the page it came from says where to, on a refusal the move page
/// again with why (nothing changed).
pub async fn move_booking(
    State(state): State<AppState>,
    cx: PageCtx,
    Path(reference): Path<String>,
    Form(form): Form<MoveForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let action = ActionForm {
        reason: String::new(),
        from: form.from.clone(),
        page: form.page.clone(),
        day: String::new(),
    };
    let t = Target::find(&state, &cx, &reference, action).await?;
    let r = t.booking.reference.clone();
    let actor = cx.actor(&paths::booking_move(&r));
    let target = form.slot_id.trim().parse::<i64>().unwrap_or(0);
    let result = booking::move_booking(
        &state.db,
        &actor,
        Scope::Merchant(merchant_id),
        &r,
        target,
        booking::MoveBy::Staff,
    )
    .await;
    match result {
        Ok(moved) => {
            let (slot, store) = visible_slot(&state, &cx.user, moved.slot_id).await?;
            let notice =
                messages::booking_moved(&r, &period(slot.starts_at, slot.ends_at, store.tz()));
            cx.flash(FlashKind::Success, notice).await;
            let back = if t.came_from_day() || t.came_from_to_call() {
                t.back(&state, &cx).await?
            } else {
                paths::slot(moved.slot_id)
            };
            Ok(Redirect::to(&back).into_response())
        }
        Err(e @ (DomainError::Invalid(_) | DomainError::Conflict { .. })) => {
            let mut page = move_page(&state, &cx, t).await?;
            page.error = Some(e.message());
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}
