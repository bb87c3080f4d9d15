//! Bookings staff take for a customer: a caller on the phone or a walk-in at the counter. They go
//! through the same `book` as every other booking (the slot's count, its gate, its ledger rows);
//! what differs is who is asked what. The public caps (per phone, per address) do not apply:
//! staff see the customer. The service's notice for online bookings applies unless staff confirm
//! they mean to book inside it.

#[allow(unused_imports)]
use super::*;

crate::text_enum! {
    /// How a booking reached the store.
    pub enum Channel {
        /// The customer booked: the public page, their order system, or the waiting list.
        Customer = "CUSTOMER",
        /// Staff took it from a caller.
        Phone = "PHONE",
        /// Staff took it at the counter.
        WalkIn = "WALK_IN",
    }
}

impl Channel {
    /// The channels staff choose from on the booking form.
    pub const STAFF: &'static [Channel] = &[Channel::Phone, Channel::WalkIn];
}

/// A booking staff take: how the customer reached them, who they are, and whether they confirmed
/// booking inside the service's notice for online bookings.
#[derive(Debug, Clone)]
pub struct ByStaff {
    pub channel: Channel,
    /// The person who took it (`users.id`).
    pub user_id: i64,
    /// Staff saw the notice and book anyway.
    pub override_notice: bool,
}

/// The refusal's code when a staff booking falls inside the service's notice for online
/// bookings and staff have not yet confirmed it: the form asks, then books.
pub const NEEDS_CONFIRMATION: &str = "too_late_to_book";
