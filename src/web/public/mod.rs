//! The public booking page: customers pick a service, a day and a slot, leave a name and a phone
//! number, get a reference, and can cancel with it. No login, works without JavaScript (htmx only
//! swaps the pickers), rate-limited per client address.

use crate::web::kit::flash::FlashKind;
use crate::web::kit::paths;
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

use crate::domain::slots::booking::{self, BookInput};
use crate::domain::slots::storefront::{self, Service};
use crate::domain::slots::{Slot, SlotStatus};
use crate::domain::tenancy::tenants::{self, Store};
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::i18n::{current, format};
use crate::messages;
use crate::web::kit::client_addr::ClientIp;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::{self, Flash};
use crate::web::kit::lang::{for_store, Lang};
use crate::web::kit::page::{answer_to, Part};
use crate::web::view::time::{clock, local};
use crate::web::AppState;

mod booked;
mod store;
mod waiting;

#[allow(unused_imports)]
pub use booked::*;
#[allow(unused_imports)]
pub use store::*;
#[allow(unused_imports)]
pub use waiting::*;

pub fn routes(rate_per_minute: u32) -> Router<AppState> {
    let rate = rate_per_minute.max(1);
    let governor = GovernorConfigBuilder::default()
        .key_extractor(crate::web::kit::client_addr::ClientKey)
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
            crate::web::edge::middleware::Evented::layer,
        ));
    match governor {
        Some(layer) => router.layer(layer),
        None => router,
    }
}

/// A refusal on the booking pages, answered in the store's own look rather than the back
/// office's: a customer who follows a stale link sees the store and a way back to its page.
pub struct PublicError {
    pub(super) error: WebError,
    pub(super) store: Option<Store>,
}

impl PublicError {
    /// The error, on a page of this store.
    pub(super) fn at(store: &Store) -> impl FnOnce(DomainError) -> PublicError + '_ {
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
    pub(super) lang: Lang,
    pub(super) store: Option<Store>,
    pub(super) status: u16,
    pub(super) title: String,
    pub(super) message: String,
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
            page.errors = crate::web::view::Errs(rename_fields(errors));
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
