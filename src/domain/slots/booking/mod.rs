//! Bookings: one domain function behind the public page, the back office and the API. A booking
//! takes a place at once (no reserve step) with a conditional increment of the slot's count.

mod book;
mod by_staff;
mod change;
mod holds;
mod input;
pub mod list;
mod metrics;
mod places;
mod read;
mod together;

pub use book::*;
pub use by_staff::*;
pub use change::*;
pub use holds::*;
pub use input::*;
pub use metrics::*;
pub use places::*;
pub use read::*;
pub use together::*;

use crate::domain::{MerchantId, StoreId};
use rand::Rng;
use serde::Serialize;
use sqlx::FromRow;
use std::sync::Arc;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, REASON_MAX};
use crate::domain::slots::gate;
use crate::domain::slots::{self, Slot, SlotStatus};
use crate::domain::trail::events::EventType;
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::infra::counters::SlotAnswer;
use crate::infra::db::{is_unique_violation, Db};
use crate::messages;

pub const NAME_MAX: usize = 100;

/// Unambiguous characters (no 0/O, 1/I/L): a reference is read out over the phone.
const REF_ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";

const REF_LEN: usize = 10;

#[derive(Debug, Clone, FromRow)]
pub struct Booking {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub slot_id: i64,
    pub reference: String,
    pub customer_name: String,
    pub customer_phone: String,
    pub customer_key: String,
    #[sqlx(try_from = "String")]
    pub status: BookingStatus,
    pub cancel_reason: Option<String>,
    pub created_at: i64,
    /// The order that booked it (a goods-and-slot order), if any.
    pub order_id: Option<String>,
    /// How many places of the slot it takes (a party; 1 for one person).
    pub places: i64,
    /// The slot it was last moved from, if staff moved it.
    pub moved_from_slot_id: Option<i64>,
    /// 1 when the waiting list booked it (a place freed and it was the customer's turn).
    pub from_waitlist: i64,
    /// While set, the place is held for a waiting customer who has not yet accepted it (Unix ms):
    /// it counts against the slot, and lapses (the booking is cancelled) at this instant.
    pub hold_until: Option<i64>,
    /// How it reached the store: the customer, or staff by phone or at the counter.
    #[sqlx(try_from = "String")]
    pub channel: Channel,
    /// For a staff booking: who took it, by name (their e-mail when they gave no name).
    pub taken_by: Option<String>,
}

crate::text_enum! {
    /// A booking's state: BOOKED → CANCELLED (before the start) | ATTENDED | NO_SHOW (after it).
    pub enum BookingStatus {
        Booked = "BOOKED",
        Cancelled = "CANCELLED",
        Attended = "ATTENDED",
        NoShow = "NO_SHOW",
    }
}

impl BookingStatus {
    /// Whether a booking in this state, of a slot starting at `starts_at`, may still be cancelled
    /// at `now`: only a live booking, only before the start. One rule for the back office, the
    /// public page and the API.
    pub fn cancellable(self, starts_at: i64, now: i64) -> bool {
        self == BookingStatus::Booked && starts_at > now
    }
    /// Whether staff may record attended / no-show for it: any booking not cancelled, once the
    /// slot has started.
    pub fn markable(self, starts_at: i64, now: i64) -> bool {
        self != BookingStatus::Cancelled && starts_at <= now
    }
    /// Whether staff may check the customer in (attended): any booking not cancelled, from the
    /// store's check-in time before the start (`check_in_minutes`) on.
    pub fn attendable(self, starts_at: i64, now: i64, check_in_minutes: i64) -> bool {
        self != BookingStatus::Cancelled && starts_at - check_in_minutes * 60_000 <= now
    }
}

const BOOKING_SELECT: &str =
    "SELECT id, merchant_id, slot_id, reference, customer_name, customer_phone, customer_key, status, cancel_reason, created_at,
        (SELECT r.order_id FROM reservations r WHERE r.id = bookings.reservation_id) AS order_id, places, moved_from_slot_id,
        CAST(from_waitlist AS BIGINT) AS from_waitlist, hold_until, channel,
        (SELECT CASE WHEN u.display_name <> '' THEN u.display_name ELSE u.email END FROM users u WHERE u.id = bookings.taken_by) AS taken_by
     FROM bookings";

pub fn new_reference() -> String {
    let mut rng = rand::rng();
    (0..REF_LEN)
        .map(|_| REF_ALPHABET[rng.random_range(0..REF_ALPHABET.len())] as char)
        .collect()
}

pub use crate::domain::kernel::phone::{phone, tel_href};

pub fn customer_name(raw: &str) -> Result<String, FieldError> {
    let v = validate::name("customer_name", raw, NAME_MAX)?;
    if !v.chars().any(|c| c.is_alphabetic()) {
        return Err(FieldError::new(
            "customer_name",
            "invalid_name",
            messages::bad_customer_name(),
        ));
    }
    Ok(v)
}

pub async fn by_reference(db: &Db, scope: Scope, reference: &str) -> DomainResult<Booking> {
    let tenant = scope.filter("merchant_id", 2);
    sqlx::query_as(&format!(
        "{BOOKING_SELECT} WHERE reference = $1 AND {tenant}"
    ))
    .bind(reference.trim().to_uppercase())
    .bind(scope.bind())
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("booking"))
}

#[cfg(test)]
mod status_tests {
    use super::BookingStatus;

    #[test]
    fn only_a_live_booking_before_its_start_may_be_cancelled() {
        for s in ["BOOKED", "CANCELLED", "ATTENDED", "NO_SHOW"] {
            let st = BookingStatus::parse(s).unwrap();
            assert_eq!(st.as_str(), s);
            assert_eq!(st.cancellable(10, 5), st == BookingStatus::Booked);
            assert!(!st.cancellable(5, 5), "{s} at its start");
        }
    }
}
