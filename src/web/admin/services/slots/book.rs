//! Staff book for a customer who calls or walks in: the form (`id="staff-book"`) on the slot
//! page, the day list and the week grid posts here. Booked, it goes back where it came from with
//! a notice; refused, it answers with its own page: the fields' errors inline, a confirmation
//! when the slot is inside the service's notice for online bookings, and for a full slot the
//! offer to put the customer on the waiting list. Works without JavaScript.

use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use chrono::Duration;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::slots::booking::{self, BookInput, ByStaff, Channel, NEEDS_CONFIRMATION};
use crate::domain::slots::waitlist::{self, JoinInput};
use crate::domain::slots::{self, Slot, SlotFilter, SlotStatus};
use crate::domain::tenancy::tenants::Store;
use crate::domain::{DomainError, FieldError, Scope};
use crate::messages;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::store::{self, ctx_of_store, visible_slot, writer, StoreCtx};
use crate::web::view::time::{day_start, local_date, monday_of, DATE_FMT};
use crate::web::view::{link, Errs};
use crate::web::AppState;

/// The page a staff booking came from, and goes back to once made.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum From {
    #[default]
    Slot,
    Day,
    Week,
}

impl From {
    pub fn as_str(self) -> &'static str {
        match self {
            From::Slot => "slot",
            From::Day => "day",
            From::Week => "week",
        }
    }

    fn parse(raw: &str) -> From {
        match raw {
            "day" => From::Day,
            "week" => From::Week,
            _ => From::Slot,
        }
    }
}

/// The form as typed (every field a string, so a refusal shows back what was typed).
#[derive(Deserialize, Default, Clone, Debug)]
pub struct BookForm {
    #[serde(default)]
    pub slot_id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub phone: String,
    #[serde(default)]
    pub places: String,
    #[serde(default)]
    pub channel: String,
    /// "1" once staff confirmed booking inside the service's notice.
    #[serde(default)]
    pub confirm: String,
    #[serde(default)]
    pub from: String,
    /// The store of the page it came from (when no slot was chosen).
    #[serde(default)]
    pub store: String,
    /// One key per form shown: a double submit books once.
    #[serde(default)]
    pub key: String,
}

/// A slot staff may pick on the day list or the week grid.
pub struct SlotChoice {
    pub id: i64,
    pub label: String,
    pub full: bool,
}

/// The booking form as a page shows it.
pub struct StaffBook {
    /// The slot, on the slot page; else the slot is picked from `choices`.
    pub slot_id: Option<i64>,
    pub choices: Vec<SlotChoice>,
    pub from: From,
    pub store: String,
    pub name: String,
    pub phone: String,
    pub places: String,
    pub channel: Channel,
    pub key: String,
    /// The slot picked last, on a refused form.
    pub picked: Option<i64>,
    /// The most places one booking may take, when the slot (hence the service) is known.
    pub max_places: Option<i64>,
    /// The fields' refusals, shown beside them.
    pub errors: Errs,
    /// Inside the service's notice for online bookings: the minutes it asks, for the
    /// confirmation the form then carries.
    pub confirm_notice: Option<i64>,
    /// The form names itself (not on its own page, whose title says it already).
    pub heading: bool,
}

impl StaffBook {
    /// An empty form: a new key, the phone channel, one place.
    pub fn new(from: From, store: &StoreCtx) -> StaffBook {
        StaffBook {
            slot_id: None,
            choices: Vec::new(),
            from,
            store: store.value.clone(),
            name: String::new(),
            phone: String::new(),
            places: "1".into(),
            channel: Channel::Phone,
            key: new_key(),
            picked: None,
            max_places: None,
            errors: Errs::default(),
            confirm_notice: None,
            heading: true,
        }
    }

    /// The form for one slot (the slot page).
    pub fn for_slot(slot: &Slot, store: &StoreCtx, max_places: i64) -> StaffBook {
        StaffBook {
            slot_id: Some(slot.id),
            max_places: Some(max_places),
            ..StaffBook::new(From::Slot, store)
        }
    }

    /// Whether the form may book at all: a slot fixed and still bookable, or some to choose.
    pub fn offered(&self) -> bool {
        self.slot_id.is_some() || !self.choices.is_empty()
    }

    /// Whether the form picked this slot last (a refused form shows it picked again).
    pub fn picks(&self, c: &SlotChoice) -> bool {
        self.picked == Some(c.id)
    }

    fn refill(&mut self, f: &BookForm) {
        self.name = f.name.clone();
        self.phone = f.phone.clone();
        self.places = f.places.clone();
        self.channel = channel(&f.channel);
        if !f.key.trim().is_empty() {
            self.key = f.key.trim().to_string();
        }
    }
}

fn new_key() -> String {
    format!(
        "staff-{}{}",
        booking::new_reference(),
        booking::new_reference()
    )
}

fn channel(raw: &str) -> Channel {
    Channel::parse(raw)
        .filter(|c| Channel::STAFF.contains(c))
        .unwrap_or(Channel::Phone)
}

/// The slots of `[from, to)` in the store that staff may still book: open, not started, not
/// frozen. Full ones are listed too (marked), to offer the waiting list.
pub async fn choices(
    state: &AppState,
    store: &Store,
    (from, to): (i64, i64),
    sku_ids: &[i64],
) -> Result<Vec<SlotChoice>, WebError> {
    let filter = SlotFilter {
        store_id: Some(store.id),
        sku_ids: sku_ids.to_vec(),
        from,
        to,
        only_open_future: true,
        ..SlotFilter::default()
    };
    let tz = store.tz();
    Ok(
        slots::list(&state.db, Scope::Merchant(store.merchant_id), &filter)
            .await?
            .into_iter()
            .take(CHOICES_MAX)
            .map(|s| choice(&s, tz))
            .collect(),
    )
}

/// At most this many slots in the form's list (a week of a busy store): the rest are a click
/// away on the grid.
const CHOICES_MAX: usize = 300;

pub fn choice(s: &Slot, tz: Tz) -> SlotChoice {
    let full = s.remaining() == 0;
    let left = if full {
        messages::staff_book_full()
    } else {
        messages::staff_book_left(s.remaining())
    };
    SlotChoice {
        id: s.id,
        label: format!(
            "{} {}{} · {}",
            crate::web::view::time::when(s.starts_at, tz),
            s.sku_name,
            s.staff_name
                .as_deref()
                .map(|n| format!(" · {n}"))
                .unwrap_or_default(),
            left
        ),
        full,
    }
}

/// What the page says about a refusal: its stable code and sentence.
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

#[derive(Template)]
#[template(path = "admin/slots/book.html")]
struct BookPage {
    layout: Layout,
    ctx: StoreCtx,
    /// The slot as people read it, when one was picked.
    slot_label: String,
    book: StaffBook,
    refusal: Option<Refusal>,
    /// The slot is full: offer its waiting list.
    offer_wait: bool,
    back: String,
}

#[derive(Deserialize, Default)]
pub struct NewQuery {
    #[serde(default)]
    slot: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    store: String,
}

/// The form on a page of its own (a link from a full-width phone, or a bookmark).
pub async fn form(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<NewQuery>,
) -> Result<Response, WebError> {
    writer(&cx.user)?;
    let f = BookForm {
        slot_id: q.slot,
        from: q.from,
        store: q.store,
        places: "1".into(),
        ..BookForm::default()
    };
    let page = page_for(&state, &cx, &f).await?;
    cx.whole_as(StatusCode::OK, &page)
}

/// The page for a form as typed: its slot if one was picked and visible, else a list to pick
/// from (the store's next seven days).
async fn page_for(state: &AppState, cx: &PageCtx, f: &BookForm) -> Result<BookPage, WebError> {
    let from = From::parse(&f.from);
    let picked = f.slot_id.trim().parse::<i64>().ok();
    let (slot, store) = match picked {
        Some(id) => {
            let (slot, store) = visible_slot(state, &cx.user, id).await?;
            (Some(slot), store)
        }
        None => {
            let ctx = store::ctx(state, &cx.user, &f.store, Tab::Day, &paths::bookings()).await?;
            let store = ctx.store.ok_or(DomainError::NotFound("store"))?;
            (None, store)
        }
    };
    let ctx = ctx_of_store(state, &cx.user, store.clone(), Tab::Day, &paths::bookings()).await?;
    let mut book = match &slot {
        Some(s) => {
            let max = slots::for_booking(&state.db, s.merchant_id, s.id)
                .await?
                .map_or(1, |b| b.max_places);
            StaffBook::for_slot(s, &ctx, max)
        }
        None => {
            let now = state.db.now_ms();
            let mut b = StaffBook::new(from, &ctx);
            b.choices = choices(state, &store, (now, now + 7 * 86_400_000), &[]).await?;
            b
        }
    };
    book.from = from;
    book.heading = false;
    book.refill(f);
    book.picked = picked;
    let tz = store.tz();
    Ok(BookPage {
        layout: cx.layout().await,
        slot_label: slot
            .as_ref()
            .map(|s| choice(s, tz).label)
            .unwrap_or_default(),
        back: match &slot {
            Some(s) => back(s, &store, &ctx, from),
            None => link(&paths::bookings(), &[("store", &ctx.value)]),
        },
        ctx,
        book,
        refusal: None,
        offer_wait: false,
    })
}

/// Where a booking made from `from` goes back to: the slot, its day, or its week.
fn back(slot: &Slot, store: &Store, ctx: &StoreCtx, from: From) -> String {
    let tz = store.tz();
    let date = local_date(slot.starts_at, tz).unwrap_or_default();
    match from {
        From::Slot => paths::slot(slot.id),
        From::Day => link(
            &paths::bookings(),
            &[
                ("store", &ctx.value),
                ("date", &date.format(DATE_FMT).to_string()),
            ],
        ),
        From::Week => link(
            &paths::slots(),
            &[
                ("store", &ctx.value),
                ("week", &monday_of(date).format(DATE_FMT).to_string()),
            ],
        ),
    }
}

/// The fields that parse without the slot: places as a number; the others are the domain's.
fn places(f: &BookForm) -> Result<i64, FieldError> {
    let raw = f.places.trim();
    if raw.is_empty() {
        return Ok(1);
    }
    crate::domain::kernel::validate::typed_int(raw).ok_or_else(|| {
        FieldError::new(
            "places",
            "invalid_places",
            messages::bad_whole_number(&messages::label("places")),
        )
    })
}

pub async fn create(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(f): Form<BookForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let Some(slot_id) = f.slot_id.trim().parse::<i64>().ok() else {
        let mut page = page_for(&state, &cx, &f).await?;
        page.book.errors = Errs(vec![FieldError::new(
            "slot_id",
            "required",
            messages::staff_book_pick_slot(),
        )]);
        return cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page);
    };
    let (slot, store) = visible_slot(&state, &cx.user, slot_id).await?;
    let places = match places(&f) {
        Ok(p) => p,
        Err(e) => return refused(&state, &cx, &f, DomainError::Invalid(vec![e])).await,
    };
    let input = BookInput {
        slot_id,
        places,
        name: f.name.clone(),
        phone: f.phone.clone(),
        idempotency_key: Some(f.key.clone()).filter(|k| !k.trim().is_empty()),
        region: None,
        public: None,
        staff: Some(ByStaff {
            channel: channel(&f.channel),
            user_id: cx.user.account.id,
            override_notice: f.confirm == "1",
        }),
    };
    let actor = cx.actor(&paths::booking_new());
    match booking::book(&state.db, &actor, merchant_id, input).await {
        Ok(done) => {
            let tz = store.tz();
            let b = &done.booking;
            let notice = messages::staff_booked(
                &b.reference,
                &b.customer_name,
                &crate::web::view::time::when(slot.starts_at, tz),
            );
            went_back(&state, &cx, (&slot, &store), &f.from, notice).await
        }
        Err(e) => refused(&state, &cx, &f, e).await,
    }
}

/// Done: the notice flashed, back to the page the form came from.
async fn went_back(
    state: &AppState,
    cx: &PageCtx,
    (slot, store): (&Slot, &Store),
    from: &str,
    notice: String,
) -> Result<Response, WebError> {
    cx.flash(FlashKind::Success, notice).await;
    let ctx = ctx_of_store(state, &cx.user, store.clone(), Tab::Day, &paths::bookings()).await?;
    Ok(Redirect::to(&back(slot, store, &ctx, From::parse(from))).into_response())
}

/// A refused booking (or waiting-list entry): the page again with what was typed, and why.
async fn refused(
    state: &AppState,
    cx: &PageCtx,
    f: &BookForm,
    e: DomainError,
) -> Result<Response, WebError> {
    let mut page = page_for(state, cx, f).await?;
    match e {
        DomainError::Invalid(errors) => page.book.errors = Errs(errors),
        DomainError::Conflict {
            code,
            message,
            details,
        } => {
            let mut message = message;
            if code == NEEDS_CONFIRMATION {
                let minutes = details.get("notice_minutes").and_then(|v| v.as_i64());
                page.book.confirm_notice = minutes;
                // Said to staff, not the customer's "call the store".
                message = messages::staff_book_inside_notice(minutes.unwrap_or_default());
            }
            page.offer_wait = code == "slot_full";
            page.refusal = Some(Refusal { code, message });
        }
        other => return Err(other.into()),
    }
    cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
}

/// A full slot: staff put the customer on its waiting list. The list books them when a place
/// frees, like any customer waiting.
pub async fn wait(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(f): Form<BookForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let Some(slot_id) = f.slot_id.trim().parse::<i64>().ok() else {
        return Err(DomainError::NotFound("slot").into());
    };
    let (slot, store) = visible_slot(&state, &cx.user, slot_id).await?;
    let places = match places(&f) {
        Ok(p) => p,
        Err(e) => return refused(&state, &cx, &f, DomainError::Invalid(vec![e])).await,
    };
    let actor = cx.actor(&paths::booking_new_wait());
    let input = JoinInput {
        slot_id,
        name: f.name.clone(),
        phone: f.phone.clone(),
        places,
        region: None,
        public: None,
    };
    match waitlist::join(&state.db, &actor, merchant_id, input).await {
        Ok(entry) => {
            let notice = match entry.booking_reference.as_deref() {
                // A place freed meanwhile: the list booked them at once.
                Some(reference) => messages::staff_booked(
                    reference,
                    &entry.customer_name,
                    &crate::web::view::time::when(slot.starts_at, store.tz()),
                ),
                None => messages::staff_waitlisted(&entry.customer_name, entry.position),
            };
            went_back(&state, &cx, (&slot, &store), &f.from, notice).await
        }
        Err(e) => refused(&state, &cx, &f, e).await,
    }
}

/// The slots of one local day of the store, for the day list's form.
pub async fn day_choices(
    state: &AppState,
    store: &Store,
    date: chrono::NaiveDate,
) -> Result<Vec<SlotChoice>, WebError> {
    let tz = store.tz();
    let span = (day_start(tz, date), day_start(tz, date + Duration::days(1)));
    choices(state, store, span, &[]).await
}

/// Whether a slot as the slot page shows it may still be booked by staff.
pub fn bookable(slot: &Slot, now: i64) -> bool {
    slot.status == SlotStatus::Open && !slot.started(now) && slot.frozen_finding_id.is_none()
}
