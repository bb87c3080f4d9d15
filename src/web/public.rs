//! The public booking page: customers pick a service, a day and a slot, leave a name and a phone
//! number, get a reference, and can cancel with it. No login, works without JavaScript (htmx only
//! swaps the pickers), rate-limited per client address.

use crate::web::flash::FlashKind;
use std::time::Duration;

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use chrono::NaiveDate;
use serde::Deserialize;
use tower_governor::governor::GovernorConfigBuilder;
use tower_governor::GovernorLayer;
use tower_sessions::Session;

use super::error::WebError;
use super::flash::{self, Flash};
use super::lang::{for_store, Lang};
use super::middleware::ClientIp;
use super::page::{answer_to, Part};
use super::view::time::{clock, local};
use super::AppState;
use crate::domain::slots::booking::{self, BookInput};
use crate::domain::slots::storefront::{self, Service};
use crate::domain::slots::{Slot, SlotStatus};
use crate::domain::tenancy::tenants::{self, Store};
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::i18n::{current, format};
use crate::messages;

pub fn routes(rate_per_minute: u32) -> Router<AppState> {
    let rate = rate_per_minute.max(1);
    let governor = GovernorConfigBuilder::default()
        .key_extractor(super::client_addr::ClientKey)
        .period(Duration::from_millis(60_000 / u64::from(rate)))
        .burst_size((rate / 4).max(5))
        .finish()
        .map(|conf| {
            GovernorLayer::new(conf).error_handler(|_| {
                public_error_page(
                    StatusCode::TOO_MANY_REQUESTS,
                    messages::too_many_requests(),
                    None,
                )
            })
        });
    let router = Router::new()
        .route("/book/{store}", get(store_page))
        .route("/book/{store}/slots/{id}", get(slot_page).post(book))
        .route("/booking/{reference}", get(booking_page))
        .route("/booking/{reference}/calendar.ics", get(booking_calendar))
        .route(
            "/booking/{reference}/reschedule",
            get(reschedule_page).post(reschedule),
        )
        .route("/booking/{reference}/cancel", get(cancel_page).post(cancel))
        .route("/book/{store}/slots/{id}/waitlist", post(join_waitlist))
        .route("/waitlist/{token}", get(waitlist_page))
        .route("/waitlist/{token}/accept", post(accept_offer))
        .route(
            "/waitlist/{token}/decline",
            get(decline_page).post(decline_offer),
        )
        .route("/waitlist/{token}/leave", get(leave_page).post(leave_list))
        // A customer's every change here is a booking's (booked, moved, cancelled, a waiting
        // list's place taken or given back: each writes its event, naming the service) or a
        // waiting list's entry, which no verdict reads: the kept catalogs catch up, so a public
        // page busy with bookings does not make the next "Not sellable" judge everything again.
        .layer(axum::middleware::map_response(
            super::middleware::Evented::layer,
        ));
    match governor {
        Some(layer) => router.layer(layer),
        None => router,
    }
}

/// A refusal on the booking pages, answered in the store's own look rather than the back
/// office's: a customer who follows a stale link sees the store and a way back to its page.
pub struct PublicError {
    error: WebError,
    store: Option<Store>,
}

impl PublicError {
    /// The error, on a page of this store.
    fn at(store: &Store) -> impl FnOnce(DomainError) -> PublicError + '_ {
        |e| PublicError {
            error: e.into(),
            store: Some(store.clone()),
        }
    }
}

impl From<WebError> for PublicError {
    fn from(error: WebError) -> Self {
        PublicError { error, store: None }
    }
}

impl From<DomainError> for PublicError {
    fn from(e: DomainError) -> Self {
        WebError::from(e).into()
    }
}

impl From<askama::Error> for PublicError {
    fn from(e: askama::Error) -> Self {
        WebError::from(e).into()
    }
}

#[derive(Template)]
#[template(path = "public/error.html")]
struct PublicErrorPage {
    lang: Lang,
    store: Option<Store>,
    status: u16,
    title: String,
    message: String,
}

impl IntoResponse for PublicError {
    fn into_response(self) -> Response {
        let status = self.error.status();
        // What a customer can do about a missing page is not what staff can: say which link
        // was wrong and what to check.
        let message = match &self.error {
            WebError::Domain(DomainError::NotFound(thing)) => messages::public_not_found(thing),
            WebError::Domain(DomainError::Conflict { code, message, .. }) => {
                public_notice(code, message.clone())
            }
            other => other.message(),
        };
        public_error_page(status, message, self.store)
    }
}

/// A refusal in the booking pages' look, in the visitor's language.
fn public_error_page(status: StatusCode, message: String, store: Option<Store>) -> Response {
    let lang = current();
    let page = PublicErrorPage {
        title: lang.t1("error-title", "status", i64::from(status.as_u16())),
        status: status.as_u16(),
        lang,
        store,
        message,
    };
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(_) => (status, page.message).into_response(),
    }
}

fn actor(store: &Store, path: &str, ip: ClientIp) -> Actor {
    Actor {
        label: "customer".into(),
        role: None,
        merchant_id: Some(store.merchant_id),
        store_id: Some(store.id),
        source: format!("public {path}"),
        ip: ip.0,
    }
}

pub struct SlotView {
    pub id: i64,
    pub time: String,
    pub end: String,
    pub remaining: i64,
    pub staff: String,
    pub bookable: bool,
    pub closed_note: String,
    pub full: bool,
}

fn slot_view(s: &Slot, store: &Store, now: i64) -> SlotView {
    let tz = store.tz();
    SlotView {
        id: s.id,
        time: clock(s.starts_at, tz),
        end: clock(s.ends_at, tz),
        remaining: s.remaining(),
        staff: s.staff_name.clone().unwrap_or_default(),
        // A slot frozen by reconciliation refuses bookings: it shows as not available (the
        // finding is for staff, not customers).
        bookable: s.status == SlotStatus::Open
            && s.frozen_finding_id.is_none()
            && s.remaining() > 0
            && s.starts_at > now,
        // Staff's reason ("Mei – hospital") is never published; only the closure's note for
        // customers, when it has one.
        closed_note: if s.status == SlotStatus::Closed {
            s.public_note.clone().unwrap_or_default()
        } else {
            String::new()
        },
        full: s.status == SlotStatus::Open && s.remaining() == 0,
    }
}

/// A day of the month view: its number, its full name (for screen readers and the tooltip),
/// whether it has a time with room (the others are greyed out but still open, to see why and to
/// join a waiting list), and the month's name on the first day shown of each month.
pub struct DayView {
    pub date: String,
    pub label: String,
    pub number: u32,
    pub selected: bool,
    pub has_room: bool,
    pub month: String,
}

/// The times of one start on the day list: each once, with every staff member's slot at it.
pub struct TimeGroup {
    pub time: String,
    pub end: String,
    pub slots: Vec<SlotView>,
}

/// Slots in time order, grouped by start and end: "14:00 Mei, 6 places left · Jun, closed".
fn group_by_time(slots: Vec<SlotView>) -> Vec<TimeGroup> {
    let mut out: Vec<TimeGroup> = Vec::new();
    for s in slots {
        match out.last_mut() {
            Some(g) if g.time == s.time && g.end == s.end => g.slots.push(s),
            _ => out.push(TimeGroup {
                time: s.time.clone(),
                end: s.end.clone(),
                slots: vec![s],
            }),
        }
    }
    out
}

/// The store a booking page is about. Its language is settled here, before anything else is
/// done, so that a refusal from the domain speaks it as the page does.
async fn store_at(state: &AppState, public_slug: &str) -> Result<Store, WebError> {
    let store = tenants::store_by_public_slug(&state.db, public_slug).await?;
    for_store(store.language);
    Ok(store)
}

#[derive(Template)]
#[template(path = "public/store.html", blocks = ["picker"])]
struct StorePage {
    /// The visitor's language (see `lang`).
    lang: Lang,
    /// The picker alone was asked for: the language switcher comes along out of band, so that
    /// its links keep the newly chosen day.
    switch_oob: bool,
    store: Store,
    services: Vec<Service>,
    service: String,
    days: Vec<DayView>,
    /// Empty cells before the first day, so that days sit under their weekday (Monday first).
    pad: Vec<()>,
    weekdays: [&'static str; 7],
    /// The months the window spans, as its heading: "2026年12月 – 2027年1月".
    months: String,
    day: String,
    day_label: String,
    times: Vec<TimeGroup>,
}

#[derive(Deserialize, Default)]
pub struct PickQuery {
    #[serde(default)]
    service: String,
    #[serde(default)]
    day: String,
}

async fn store_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(store): Path<String>,
    Query(q): Query<PickQuery>,
) -> Result<Response, PublicError> {
    let store = store_at(&state, &store).await?;
    let services = storefront::services(&state.db, &store).await?;
    let today = storefront::today(&state.db, &store);
    // The days offered are the window the schedule makes slots for.
    let window = state.config.serve.slot_window_days.max(1);
    let service = services
        .iter()
        .find(|s| s.code == q.service)
        .or(services.first())
        .cloned();
    let room = match &service {
        Some(s) => storefront::days_with_room(&state.db, &store, s.sku_id, today, window).await?,
        None => Default::default(),
    };
    // The day asked for; without one, the first day with a free time (today may have none left).
    let day = NaiveDate::parse_from_str(q.day.trim(), "%Y-%m-%d")
        .ok()
        .filter(|d| *d >= today && *d < today + chrono::Duration::days(window))
        .or_else(|| room.iter().min().copied())
        .unwrap_or(today);
    let now = state.db.now_ms();
    let slots = match &service {
        Some(s) => storefront::day_slots(&state.db, &store, s.sku_id, day)
            .await?
            .iter()
            .map(|x| slot_view(x, &store, now))
            .collect(),
        None => Vec::new(),
    };
    let days = (0..window)
        .map(|i| {
            let d = today + chrono::Duration::days(i);
            DayView {
                date: d.format("%Y-%m-%d").to_string(),
                label: format::day_short(current(), d),
                number: chrono::Datelike::day(&d),
                selected: d == day,
                has_room: room.contains(&d),
                month: if i == 0 || chrono::Datelike::day(&d) == 1 {
                    format::month(current(), d)
                } else {
                    String::new()
                },
            }
        })
        .collect();
    let pad = vec![(); chrono::Datelike::weekday(&today).num_days_from_monday() as usize];
    let last = today + chrono::Duration::days(window - 1);
    let ym = |d: NaiveDate| (chrono::Datelike::year(&d), chrono::Datelike::month(&d));
    let months = if ym(last) == ym(today) {
        format::month(current(), today)
    } else {
        format!(
            "{} – {}",
            format::month(current(), today),
            format::month(current(), last)
        )
    };
    let page = StorePage {
        lang: for_store(store.language),
        switch_oob: super::page::is_htmx(&headers)
            && headers.get("HX-Target").is_some_and(|t| t == "picker"),
        services,
        service: service.map(|s| s.code).unwrap_or_default(),
        days,
        pad,
        months,
        weekdays: crate::domain::slots::schedule::WEEKDAYS,
        day: day.format("%Y-%m-%d").to_string(),
        day_label: format::day_long(current(), day),
        times: group_by_time(slots),
        store,
    };
    Ok(answer_to(&headers, &page, Part::Target("picker"), |p| {
        p.as_picker().render()
    })?)
}

#[derive(Template)]
#[template(path = "public/slot.html")]
struct SlotPage {
    /// The visitor's language (see `lang`).
    lang: Lang,
    store: Store,
    slot: SlotView,
    service: Service,
    /// The slot's length ("60分钟"): what the customer books, whatever the service's usual one.
    duration: String,
    date: String,
    /// The slot's local day (`YYYY-MM-DD`): "all times" goes back to it.
    day: String,
    name: String,
    phone: String,
    /// The party size chosen, and the choices offered (1 up to the service's party size or the
    /// places left, whichever is smaller).
    places: i64,
    party: Vec<i64>,
    idempotency_key: String,
    errors: super::view::Errs,
    /// Why the slot cannot be taken, when it cannot.
    refusal: Option<String>,
    /// Why the last submit was refused although the slot may still be open (already booked,
    /// too many bookings, a used form), and its stable code.
    notice: Option<String>,
    refusal_code: Option<&'static str>,
    alternatives: Vec<(String, SlotView)>,
    /// A full slot ahead: its waiting list takes parties of these sizes.
    wait_party: Vec<i64>,
}

async fn slot_page_for(state: &AppState, store: Store, slot: Slot) -> Result<SlotPage, WebError> {
    let now = state.db.now_ms();
    let tz = store.tz();
    let view = slot_view(&slot, &store, now);
    let refusal = if view.bookable {
        None
    } else if slot.status == SlotStatus::Closed {
        Some(messages::slot_not_available(
            slot.public_note.as_deref().unwrap_or(""),
        ))
    } else if slot.starts_at <= now {
        Some(messages::slot_started())
    } else {
        Some(messages::slot_full())
    };
    let service = storefront::service(&state.db, &store, slot.sku_id).await?;
    // Too soon for the service's notice: no form, and the nearest times that are not.
    let notice = service.min_notice_minutes;
    let refusal = refusal.or_else(|| {
        (notice > 0 && slot.starts_at - now < notice * 60_000)
            .then(|| messages::too_late_to_book(notice))
    });
    let alternatives = if refusal.is_some() {
        booking::nearest_free(&state.db, &slot, 1, 5)
            .await?
            .iter()
            .filter(|s| s.starts_at - now >= notice * 60_000)
            .map(|s| {
                (
                    format::day_short(current(), local(s.starts_at, tz).date()),
                    slot_view(s, &store, now),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let party = (1..=service
        .max_places
        .min(slot.remaining())
        .clamp(1, PARTY_CHOICES))
        .collect();
    // Full (not closed, not started): the customer may wait for a place instead.
    let full = slot.status == SlotStatus::Open && slot.remaining() == 0 && slot.starts_at > now;
    let wait_party = if full {
        (1..=service.max_places.clamp(1, PARTY_CHOICES)).collect()
    } else {
        Vec::new()
    };
    Ok(SlotPage {
        lang: for_store(store.language),
        slot: view,
        service,
        duration: format::minutes(current(), (slot.ends_at - slot.starts_at) / 60_000),
        date: format::day_long(current(), local(slot.starts_at, tz).date()),
        day: local(slot.starts_at, tz)
            .date()
            .format("%Y-%m-%d")
            .to_string(),
        name: String::new(),
        phone: String::new(),
        places: 1,
        party,
        idempotency_key: form_token(state, slot.id),
        errors: super::view::Errs::default(),
        refusal,
        notice: None,
        refusal_code: None,
        alternatives,
        wait_party,
        store,
    })
}

/// The most party sizes the picker lists; a service taking larger parties is booked by staff.
const PARTY_CHOICES: i64 = 20;

async fn slot_page(
    State(state): State<AppState>,
    Path((store, id)): Path<(String, String)>,
) -> Result<Response, PublicError> {
    let store = store_at(&state, &store).await?;
    let slot = slot_of(&state, &store, &id).await?;
    Ok(Html(slot_page_for(&state, store, slot).await?.render()?).into_response())
}

/// A slot of this store by the id in its address; a bad or foreign id is "not found" on the
/// store's page.
async fn slot_of(state: &AppState, store: &Store, id: &str) -> Result<Slot, PublicError> {
    let id: i64 = id
        .parse()
        .map_err(|_| PublicError::at(store)(DomainError::NotFound("slot")))?;
    storefront::slot(&state.db, store, id)
        .await
        .map_err(PublicError::at(store))
}

/// The booking form's token: issued by the server for one slot, signed, and used once. It becomes
/// the booking's idempotency key (so a double submit books once), in a space of its own: a client
/// can neither choose a key nor send another customer's (which handed out their booking).
fn form_token(state: &AppState, slot_id: i64) -> String {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let mac = hex::encode(state.codes.sign_form(&format!("book:{slot_id}:{nonce}")));
    format!("{nonce}.{mac}")
}

/// The nonce of a token issued for this slot (the booking's key, in the public key space), or
/// None for one we did not issue.
fn token_key(state: &AppState, slot_id: i64, token: &str) -> Option<String> {
    let (nonce, mac) = token.trim().split_once('.')?;
    let same = state
        .codes
        .form_signed(&format!("book:{slot_id}:{nonce}"), mac);
    same.then(|| nonce.to_string())
}

/// The session remembers the keys of the forms it sent, so that only the browser that booked
/// sees the booking again on a repeated submit.
const SENT_FORMS: &str = "sent_booking_forms";

#[derive(Deserialize)]
pub struct BookForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    phone: String,
    /// The party size; left out (an old form) books one place.
    #[serde(default)]
    places: String,
    #[serde(default)]
    idempotency_key: String,
}

impl BookForm {
    /// The party size as chosen: empty is one place; anything not a number is 0, which the
    /// domain refuses beside the field.
    fn places(&self) -> i64 {
        match self.places.trim() {
            "" => 1,
            p => p.parse().unwrap_or(0),
        }
    }
}

/// The booking key a submitted form may use: a token we issued for this slot and not already
/// used by another browser. None: a forged, foreign or used token.
async fn usable_key(
    state: &AppState,
    store: &Store,
    slot_id: i64,
    token: &str,
    sent: &[String],
) -> Result<Option<String>, WebError> {
    let Some(key) = token_key(state, slot_id, token) else {
        return Ok(None);
    };
    let elsewhere = !sent.contains(&key)
        && booking::key_used(&state.db, store.merchant_id, &booking::public_key(&key)).await?;
    Ok((!elsewhere).then_some(key))
}

/// The slot page again with what the customer typed and why nothing was booked.
async fn refused(
    state: &AppState,
    store: Store,
    slot: Slot,
    form: BookForm,
    why: Refused,
) -> Result<Response, WebError> {
    let mut page = slot_page_for(state, store, slot).await?;
    page.places = form.places();
    page.name = form.name;
    page.phone = form.phone;
    let status = match why {
        Refused::Fields(errors) => {
            page.idempotency_key = form.idempotency_key;
            page.errors = super::view::Errs(rename_fields(errors));
            StatusCode::UNPROCESSABLE_ENTITY
        }
        Refused::Conflict { code, notice } => {
            page.refusal_code = Some(code);
            page.notice = Some(notice);
            StatusCode::CONFLICT
        }
    };
    Ok((status, Html(page.render()?)).into_response())
}

enum Refused {
    Fields(Vec<FieldError>),
    Conflict { code: &'static str, notice: String },
}

/// What a visitor reads about a refusal: every refusal a public page shows (a form's notice or a
/// flash) goes through here. They are never shown a booking they did not just make: "already
/// booked" says so without the reference, which only the confirmation carries (the domain's
/// sentence names it, and a reschedule into another customer's slot with the same phone would
/// hand it out). Nor staff's reason for closing a slot, a finding that froze it, or a product
/// taken off sale: each reads as "not available".
fn public_notice(code: &str, message: String) -> String {
    match code {
        "already_booked" => messages::already_booked_public(),
        "slot_closed" | "slot_frozen" | "not_on_sale" => messages::slot_not_available(""),
        _ => message,
    }
}

/// A public booking: the form's fields, its key, and the store's caps per phone and address.
fn book_input(
    state: &AppState,
    store: &Store,
    slot_id: i64,
    form: &BookForm,
    key: &str,
    ip: &ClientIp,
) -> BookInput {
    BookInput {
        slot_id,
        places: form.places(),
        name: form.name.clone(),
        phone: form.phone.clone(),
        idempotency_key: Some(key.to_string()),
        region: store.phone_region(),
        public: Some(public_caps(state, store, ip)),
    }
}

/// The caps a customer on the public pages books and waits under: per phone number and per
/// client address (an IPv6 client by its /64), in this store.
fn public_caps(state: &AppState, store: &Store, ip: &ClientIp) -> booking::PublicCaps {
    booking::PublicCaps {
        store_id: store.id,
        client_ip: crate::domain::kernel::scope::address_key(&ip.0),
        per_phone: state.config.serve.max_bookings_per_phone,
        per_address: state.config.serve.max_bookings_per_address,
    }
}

async fn book(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path((store_slug, id)): Path<(String, String)>,
    Form(form): Form<BookForm>,
) -> Result<Response, PublicError> {
    let store = store_at(&state, &store_slug).await?;
    let slot = slot_of(&state, &store, &id).await?;
    let mut sent: Vec<String> = session
        .get(SENT_FORMS)
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    let Some(key) = usable_key(&state, &store, slot.id, &form.idempotency_key, &sent).await? else {
        // Nothing booked, nothing shown: a fresh form.
        let why = Refused::Conflict {
            code: "form_used",
            notice: messages::form_used(),
        };
        return Ok(refused(&state, store, slot, form, why).await?);
    };
    let input = book_input(&state, &store, slot.id, &form, &key, &ip);
    let actor = actor(&store, &format!("/book/{store_slug}"), ip);
    match booking::book(&state.db, &actor, store.merchant_id, input).await {
        Ok(b) => {
            if !sent.contains(&key) {
                sent.push(key);
            }
            // The last few are enough for a double submit.
            let keep = sent.len().saturating_sub(20);
            let _ = session.insert(SENT_FORMS, &sent[keep..]).await;
            let reference = b.booking.reference;
            let notice = messages::booking_confirmed(&reference);
            flash::push(&session, FlashKind::Success, notice).await;
            Ok(Redirect::to(&format!("/booking/{reference}")).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            Ok(refused(&state, store, slot, form, Refused::Fields(errors)).await?)
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            let fresh = storefront::slot(&state.db, &store, slot.id).await?;
            let notice = public_notice(code, message);
            let why = Refused::Conflict { code, notice };
            Ok(refused(&state, store, fresh, form, why).await?)
        }
        Err(e) => Err(e.into()),
    }
}

/// "茶艺课 · 60分钟": the product, and the SKU when it says more than the product.
fn service_name(s: &Service) -> String {
    if s.sku_name.trim().is_empty() || s.sku_name == s.product_name {
        s.product_name.clone()
    } else {
        format!("{} · {}", s.product_name, s.sku_name)
    }
}

fn rename_fields(errors: Vec<FieldError>) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut e| {
            if e.field == "customer_name" {
                e.field = "name".into();
            }
            e
        })
        .collect()
}

#[derive(Template)]
#[template(path = "public/booking.html")]
struct BookingPage {
    /// The visitor's language (see `lang`).
    lang: Lang,
    store: Store,
    reference: String,
    status: String,
    service: Service,
    service_name: String,
    duration: String,
    /// "in 2 days" / "2天后" while the slot is ahead, else empty.
    starts_in: String,
    date: String,
    time: String,
    end: String,
    staff: String,
    name: String,
    /// The places booked (a party).
    places: i64,
    /// The customer may still cancel or reschedule: before the service's change cutoff.
    can_cancel: bool,
    /// Until when ("12月3日 周四", "13:00"), in the store's timezone.
    change_until: (String, String),
    flashes: Vec<Flash>,
}

async fn booking_view(state: &AppState, reference: &str) -> Result<(BookingPage, Store), WebError> {
    let b = booking::by_reference(&state.db, Scope::All, reference).await?;
    let slot =
        crate::domain::slots::get(&state.db, Scope::Merchant(b.merchant_id), b.slot_id).await?;
    let store =
        tenants::store_by_id(&state.db, Scope::Merchant(b.merchant_id), slot.store_id).await?;
    for_store(store.language);
    let tz = store.tz();
    let service = storefront::service(&state.db, &store, slot.sku_id).await?;
    let deadline = booking::change_deadline(&state.db, &b).await?;
    let page = BookingPage {
        lang: for_store(store.language),
        reference: b.reference.clone(),
        status: b.status.to_string(),
        service_name: service_name(&service),
        places: b.places,
        service,
        starts_in: {
            let ahead = slot.starts_at - state.db.now_ms();
            if ahead > 0 {
                format::from_now(current(), ahead)
            } else {
                String::new()
            }
        },
        duration: format::minutes(current(), (slot.ends_at - slot.starts_at) / 60_000),
        date: format::day_long(current(), local(slot.starts_at, tz).date()),
        time: clock(slot.starts_at, tz),
        end: clock(slot.ends_at, tz),
        staff: slot.staff_name.clone().unwrap_or_default(),
        name: b.customer_name.clone(),
        can_cancel: b.status.cancellable(deadline, state.db.now_ms()),
        change_until: (
            format::day_long(current(), local(deadline, tz).date()),
            clock(deadline, tz),
        ),
        flashes: Vec::new(),
        store: store.clone(),
    };
    Ok((page, store))
}

/// The booking as a calendar file, for the customer's phone.
async fn booking_calendar(
    State(state): State<AppState>,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let b = booking::by_reference(&state.db, Scope::All, &reference).await?;
    let slot =
        crate::domain::slots::get(&state.db, Scope::Merchant(b.merchant_id), b.slot_id).await?;
    let store =
        tenants::store_by_id(&state.db, Scope::Merchant(b.merchant_id), slot.store_id).await?;
    let lang = for_store(store.language);
    let service = storefront::service(&state.db, &store, slot.sku_id).await?;
    let location = [store.name.as_str(), store.address.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let mut description = lang.t1("public-booking-title", "reference", b.reference.as_str());
    if b.places > 1 {
        description.push_str(" · ");
        description.push_str(&lang.t1("public-party-option", "n", b.places));
    }
    if !store.phone.is_empty() {
        description.push_str(" · ");
        description.push_str(&store.phone);
    }
    let ics =
        crate::web::view::calendar::booking_ics(&crate::web::view::calendar::CalendarBooking {
            reference: &b.reference,
            cancelled: b.status == booking::BookingStatus::Cancelled,
            starts_at: slot.starts_at,
            ends_at: slot.ends_at,
            summary: &service_name(&service),
            location: &location,
            description: &description,
            store_name: &store.name,
        });
    let disposition = format!("attachment; filename=\"booking-{}.ics\"", b.reference);
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/calendar; charset=utf-8".to_string(),
            ),
            (axum::http::header::CONTENT_DISPOSITION, disposition),
        ],
        ics,
    )
        .into_response())
}

async fn booking_page(
    State(state): State<AppState>,
    session: Session,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let (mut page, _) = booking_view(&state, &reference).await?;
    page.flashes = flash::take(&session).await;
    Ok(Html(page.render()?).into_response())
}

#[derive(Template)]
#[template(path = "public/cancel.html")]
struct CancelPage {
    /// The visitor's language (see `lang`).
    lang: Lang,
    store: Store,
    reference: String,
    service_name: String,
    date: String,
    time: String,
}

async fn cancel_page(
    State(state): State<AppState>,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let (b, store) = booking_view(&state, &reference).await?;
    if !b.can_cancel {
        return Ok(Redirect::to(&format!("/booking/{}", b.reference)).into_response());
    }
    let page = CancelPage {
        lang: for_store(store.language),
        store,
        reference: b.reference,
        service_name: b.service_name,
        date: b.date,
        time: b.time,
    };
    Ok(Html(page.render()?).into_response())
}

/// Past the service's change cutoff a customer's own cancel or reschedule goes back to the
/// booking's page with why; None while they may still change it.
async fn too_late_to_change(
    state: &AppState,
    session: &Session,
    reference: &str,
) -> Result<Option<Response>, WebError> {
    let booking = booking::by_reference(&state.db, Scope::All, reference).await?;
    match booking::customer_may_change(&state.db, &booking).await {
        Ok(()) => Ok(None),
        Err(DomainError::Conflict { code, message, .. }) => {
            flash::push(session, FlashKind::Error, public_notice(code, message)).await;
            Ok(Some(
                Redirect::to(&format!("/booking/{reference}")).into_response(),
            ))
        }
        Err(e) => Err(e.into()),
    }
}

async fn cancel(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let (b, store) = booking_view(&state, &reference).await?;
    let actor = actor(&store, "/booking/cancel", ip);
    if let Some(back) = too_late_to_change(&state, &session, &b.reference).await? {
        return Ok(back);
    }
    match booking::cancel(
        &state.db,
        &actor,
        Scope::Merchant(store.merchant_id),
        &b.reference,
        None,
    )
    .await
    {
        Ok(_) => {
            flash::push(
                &session,
                FlashKind::Success,
                messages::booking_cancelled_by_customer(),
            )
            .await
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            flash::push(&session, FlashKind::Error, public_notice(code, message)).await
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Redirect::to(&format!("/booking/{}", b.reference)).into_response())
}

/// A customer joins a full slot's waiting list from its page: their own page for the wait
/// follows, which shows the booking once a place freed for them.
async fn join_waitlist(
    State(state): State<AppState>,
    ip: ClientIp,
    Path((store_slug, id)): Path<(String, String)>,
    Form(form): Form<BookForm>,
) -> Result<Response, PublicError> {
    let store = store_at(&state, &store_slug).await?;
    let slot = slot_of(&state, &store, &id).await?;
    let input = crate::domain::slots::waitlist::JoinInput {
        slot_id: slot.id,
        name: form.name.clone(),
        phone: form.phone.clone(),
        places: form.places(),
        region: store.phone_region(),
        public: Some(public_caps(&state, &store, &ip)),
    };
    let actor = actor(&store, &format!("/book/{store_slug}"), ip);
    match crate::domain::slots::waitlist::join(&state.db, &actor, store.merchant_id, input).await {
        Ok(e) => Ok(Redirect::to(&format!("/waitlist/{}", e.token)).into_response()),
        Err(DomainError::Invalid(errors)) => {
            Ok(refused(&state, store, slot, form, Refused::Fields(errors)).await?)
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            let fresh = storefront::slot(&state.db, &store, slot.id).await?;
            let why = Refused::Conflict {
                code,
                notice: public_notice(code, message),
            };
            Ok(refused(&state, store, fresh, form, why).await?)
        }
        Err(e) => Err(PublicError::at(&store)(e)),
    }
}

#[derive(Template)]
#[template(path = "public/waitlist.html")]
struct WaitPage {
    /// The visitor's language (see `lang`).
    lang: Lang,
    store: Store,
    token: String,
    service_name: String,
    date: String,
    time: String,
    status: String,
    position: i64,
    places: i64,
    /// The booking a freed place became.
    booking: Option<String>,
    /// While a place is offered: until when it is held (the store's clock).
    held_until: String,
    /// The page asks "give the place back?" before declining.
    confirm_decline: bool,
    /// The page asks "leave the waiting list?" before taking the customer off it.
    confirm_leave: bool,
    flashes: Vec<Flash>,
}

/// The customer's page for their wait: their position, the place offered to them, or the booking
/// a freed place became.
async fn waitlist_page(
    State(state): State<AppState>,
    session: Session,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    let page = wait_page(&state, &token, false, flash::take(&session).await).await?;
    Ok(Html(page.render()?).into_response())
}

/// "Leave the waiting list?", before a waiting customer gives up their turn.
async fn leave_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    let mut page = wait_page(&state, &token, false, Vec::new()).await?;
    page.confirm_leave = true;
    Ok(Html(page.render()?).into_response())
}

/// A waiting customer leaves the list; their page then says so.
async fn leave_list(
    State(state): State<AppState>,
    ip: ClientIp,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    let (e, _, store) = wait_and_store(&state, &token).await?;
    let actor = actor(&store, "/waitlist/leave", ip);
    let token = e.token.clone();
    crate::domain::slots::waitlist::cancel(&state.db, &actor, e.merchant_id, e.id)
        .await
        .map_err(PublicError::at(&store))?;
    Ok(Redirect::to(&format!("/waitlist/{token}")).into_response())
}

/// "Give the place back?", before declining an offer (works without JavaScript).
async fn decline_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    let page = wait_page(&state, &token, true, Vec::new()).await?;
    Ok(Html(page.render()?).into_response())
}

async fn wait_page(
    state: &AppState,
    token: &str,
    confirm_decline: bool,
    flashes: Vec<Flash>,
) -> Result<WaitPage, PublicError> {
    let (e, slot, store) = wait_and_store(state, token).await?;
    let lang = for_store(store.language);
    let tz = store.tz();
    let service = storefront::service(&state.db, &store, slot.sku_id).await?;
    Ok(WaitPage {
        lang,
        token: e.token,
        service_name: service_name(&service),
        date: format::day_long(current(), local(slot.starts_at, tz).date()),
        time: clock(slot.starts_at, tz),
        status: e.status.to_string(),
        position: e.position,
        places: e.places,
        booking: e.booking_reference,
        held_until: e.hold_until.map(|ms| clock(ms, tz)).unwrap_or_default(),
        confirm_decline,
        confirm_leave: false,
        flashes,
        store,
    })
}

/// The customer takes the place held for them: on to their booking's page.
async fn accept_offer(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    answer_offer(&state, ip, &session, &token, true).await
}

/// The customer gives the held place back: it goes to the next in line.
async fn decline_offer(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    answer_offer(&state, ip, &session, &token, false).await
}

/// Accepts (on to the booking, with a word of success) or declines (back to the wait's page,
/// which says it) a held offer; a refusal goes back to the wait's page with why.
async fn answer_offer(
    state: &AppState,
    ip: ClientIp,
    session: &Session,
    token: &str,
    accept: bool,
) -> Result<Response, PublicError> {
    use crate::domain::slots::waitlist;
    let (e, _, store) = wait_and_store(state, token).await?;
    let path = if accept {
        "/waitlist/accept"
    } else {
        "/waitlist/decline"
    };
    let actor = actor(&store, path, ip);
    let back = format!("/waitlist/{}", e.token);
    let answered = if accept {
        waitlist::accept(&state.db, &actor, e).await
    } else {
        waitlist::decline(&state.db, &actor, e).await
    };
    match answered {
        Ok(done) if accept => {
            flash::push(
                session,
                FlashKind::Success,
                messages::waitlist_offer_accepted(),
            )
            .await;
            let to = done
                .booking_reference
                .map_or(back, |r| format!("/booking/{r}"));
            Ok(Redirect::to(&to).into_response())
        }
        Ok(_) => Ok(Redirect::to(&back).into_response()),
        Err(DomainError::Conflict { code, message, .. }) => {
            flash::push(session, FlashKind::Error, public_notice(code, message)).await;
            Ok(Redirect::to(&back).into_response())
        }
        Err(e) => Err(PublicError::at(&store)(e)),
    }
}

/// A wait by its token, with its slot and store.
async fn wait_and_store(
    state: &AppState,
    token: &str,
) -> Result<
    (
        crate::domain::slots::waitlist::Entry,
        crate::domain::slots::Slot,
        Store,
    ),
    PublicError,
> {
    let e = crate::domain::slots::waitlist::by_token(&state.db, token).await?;
    let slot =
        crate::domain::slots::get(&state.db, Scope::Merchant(e.merchant_id), e.slot_id).await?;
    let store =
        tenants::store_by_id(&state.db, Scope::Merchant(e.merchant_id), slot.store_id).await?;
    Ok((e, slot, store))
}

/// The customer's reschedule page: the nearest times of the same service with room for their
/// party, each a button.
#[derive(Template)]
#[template(path = "public/reschedule.html")]
struct ReschedulePage {
    /// The visitor's language (see `lang`).
    lang: Lang,
    store: Store,
    reference: String,
    service_name: String,
    date: String,
    time: String,
    /// (day, time) of each slot it can move to.
    choices: Vec<(String, SlotView)>,
    /// Why the last choice was refused (it filled meanwhile).
    flashes: Vec<Flash>,
}

/// The most times the reschedule page offers.
const RESCHEDULE_CHOICES: i64 = 12;

async fn reschedule_page(
    State(state): State<AppState>,
    session: Session,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let (b, store) = booking_view(&state, &reference).await?;
    if !b.can_cancel {
        return Ok(Redirect::to(&format!("/booking/{}", b.reference)).into_response());
    }
    let booking = booking::by_reference(&state.db, Scope::All, &b.reference).await?;
    let slot = crate::domain::slots::get(
        &state.db,
        Scope::Merchant(store.merchant_id),
        booking.slot_id,
    )
    .await?;
    let tz = store.tz();
    let now = state.db.now_ms();
    let mut near =
        booking::nearest_free(&state.db, &slot, booking.places, RESCHEDULE_CHOICES).await?;
    // Times inside the service's minimum notice are not offered: the move would be refused.
    let notice = crate::domain::catalog::sku_by_id(
        &state.db,
        Scope::Merchant(store.merchant_id),
        slot.sku_id,
    )
    .await?
    .min_notice_minutes;
    near.retain(|s| notice <= 0 || s.starts_at - now >= notice * 60_000);
    near.sort_by_key(|s| (s.starts_at, s.id));
    let choices = near
        .iter()
        .map(|s| {
            (
                format::day_short(current(), local(s.starts_at, tz).date()),
                slot_view(s, &store, now),
            )
        })
        .collect();
    let page = ReschedulePage {
        lang: for_store(store.language),
        store,
        reference: b.reference,
        service_name: b.service_name,
        date: b.date,
        time: b.time,
        choices,
        flashes: flash::take(&session).await,
    };
    Ok(Html(page.render()?).into_response())
}

#[derive(Deserialize)]
pub struct RescheduleForm {
    #[serde(default)]
    slot_id: String,
}

/// Moves the customer's booking to the time they chose: the new place is taken before the old one
/// is freed, and the reference stays. A time that filled meanwhile leaves the booking as it was.
async fn reschedule(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path(reference): Path<String>,
    Form(form): Form<RescheduleForm>,
) -> Result<Response, PublicError> {
    let (b, store) = booking_view(&state, &reference).await?;
    let actor = actor(&store, "/booking/reschedule", ip);
    let target = form.slot_id.trim().parse::<i64>().unwrap_or(0);
    if let Some(back) = too_late_to_change(&state, &session, &b.reference).await? {
        return Ok(back);
    }
    match booking::move_booking(
        &state.db,
        &actor,
        Scope::Merchant(store.merchant_id),
        &b.reference,
        target,
        booking::MoveBy::Customer,
    )
    .await
    {
        Ok(_) => {
            flash::push(
                &session,
                FlashKind::Success,
                messages::booking_rescheduled(),
            )
            .await
        }
        Err(e @ (DomainError::Conflict { .. } | DomainError::Invalid(_))) => {
            let said = match e {
                DomainError::Conflict { code, message, .. } => public_notice(code, message),
                e => e.message(),
            };
            flash::push(&session, FlashKind::Error, said).await;
            return Ok(
                Redirect::to(&format!("/booking/{}/reschedule", b.reference)).into_response(),
            );
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Redirect::to(&format!("/booking/{}", b.reference)).into_response())
}
