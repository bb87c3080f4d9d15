//! Services, slots, closures and bookings for the merchant's systems.

use crate::domain::{MerchantId, StoreId};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::kernel::validate::{self, ms_to_rfc3339};
use crate::domain::slots::booking::{self, BookInput, Booking, BookingStatus};
use crate::domain::slots::closures::{self, ClosureInput};
use crate::domain::slots::schedule::{self, RuleInput};
use crate::domain::slots::{self, Contact, OneOffInput, Slot, SlotFilter, SlotStatus};
use crate::domain::{slots::staff, DomainError, FieldError, Scope};
use crate::web::api::{ApiCaller, ApiJson, ApiPath, ApiQuery};
use crate::web::kit::error::ApiError;
use crate::web::kit::ids::ApiId;
use crate::web::AppState;

mod bookings;
mod hours;
mod leave;
mod waiting;

#[allow(unused_imports)]
pub use bookings::*;
#[allow(unused_imports)]
pub use hours::*;
#[allow(unused_imports)]
pub use leave::*;
#[allow(unused_imports)]
pub use waiting::*;

/// A slot as the API lists it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SlotJson {
    pub id: i64,
    pub sku: String,
    pub starts_at: String,
    pub ends_at: String,
    pub capacity: i64,
    pub booked: i64,
    pub remaining: i64,
    pub status: SlotStatus,
    pub closed_reason: Option<String>,
    pub staff: Option<String>,
}

impl SlotJson {
    /// The slot as the API shows it at `now`.
    pub(super) fn of(s: &Slot, now: i64) -> Self {
        SlotJson {
            id: s.id,
            sku: s.sku_code.clone(),
            starts_at: ms_to_rfc3339(s.starts_at),
            ends_at: ms_to_rfc3339(s.ends_at),
            capacity: s.capacity,
            booked: s.booked,
            // Places of a slot that has started cannot be booked: none remain to sell.
            remaining: if s.started(now) { 0 } else { s.remaining() },
            status: s.status,
            closed_reason: s.closed_reason.clone(),
            staff: s.staff_name.clone(),
        }
    }
}

/// A booking as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BookingJson {
    pub reference: String,
    pub status: BookingStatus,
    pub slot_id: i64,
    pub sku: String,
    pub starts_at: String,
    pub ends_at: String,
    pub name: String,
    pub phone: String,
    pub cancel_reason: Option<String>,
    /// The order that booked it, for a place booked with goods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    /// The places it takes of its slot (a party).
    pub places: i64,
    /// The slot it was last moved from, when staff moved it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_from_slot_id: Option<i64>,
    /// Booked by the waiting list: a place freed and it was this customer's turn.
    pub from_waitlist: bool,
    /// A place held for a waiting customer who has not accepted it yet: until when. It lapses
    /// (the booking is cancelled) then unless accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_until: Option<String>,
    /// How it reached the store: `CUSTOMER` (the public page, an order system, the waiting
    /// list), or staff by `PHONE` or as a `WALK_IN`.
    pub channel: crate::domain::slots::booking::Channel,
    /// For a staff booking: who took it, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken_by: Option<String>,
}

/// A booking with its slot's service and times.
async fn booking_json(state: &AppState, b: &Booking) -> Result<Json<BookingJson>, ApiError> {
    let slot = slots::get(&state.db, Scope::Merchant(b.merchant_id), b.slot_id).await?;
    Ok(Json(booking_json_of(
        b,
        slot.sku_code,
        slot.starts_at,
        slot.ends_at,
    )))
}

fn booking_json_of(b: &Booking, sku: String, starts_at: i64, ends_at: i64) -> BookingJson {
    BookingJson {
        reference: b.reference.clone(),
        status: b.status,
        slot_id: b.slot_id,
        sku,
        starts_at: ms_to_rfc3339(starts_at),
        ends_at: ms_to_rfc3339(ends_at),
        name: b.customer_name.clone(),
        phone: b.customer_phone.clone(),
        cancel_reason: b.cancel_reason.clone(),
        order_id: b.order_id.clone(),
        places: b.places,
        moved_from_slot_id: b.moved_from_slot_id,
        from_waitlist: b.from_waitlist != 0,
        held_until: b.hold_until.map(ms_to_rfc3339),
        channel: b.channel,
        taken_by: b.taken_by.clone(),
    }
}

/// A booking to call about a closure.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ContactJson {
    pub(super) reference: String,
    pub(super) name: String,
    pub(super) phone: String,
    pub(super) slot_id: i64,
    pub(super) starts_at: String,
}

fn contacts_json(c: Vec<Contact>) -> Vec<ContactJson> {
    c.into_iter()
        .map(|c| ContactJson {
            reference: c.reference,
            name: c.customer_name,
            phone: c.customer_phone,
            slot_id: c.slot_id,
            starts_at: ms_to_rfc3339(c.starts_at),
        })
        .collect()
}

fn time_field(field: &str, raw: &str, errs: &mut validate::Errors) -> i64 {
    match validate::rfc3339_opt(field, Some(raw)) {
        Ok(Some(t)) => t,
        Ok(None) => {
            errs.push(FieldError::new(
                field,
                "required",
                crate::messages::required(&crate::messages::label(field)),
            ));
            0
        }
        Err(e) => {
            errs.push(e);
            0
        }
    }
}

fn int_field(
    field: &str,
    v: &Value,
    errs: &mut validate::Errors,
    check: fn(&str, i64) -> Result<i64, FieldError>,
) -> i64 {
    match v.as_i64() {
        Some(n) => errs.take(check(field, n)).unwrap_or(0),
        None => {
            errs.push(check(field, -1).err().unwrap_or_else(|| {
                FieldError::new(field, "invalid_number", crate::messages::required(field))
            }));
            0
        }
    }
}
