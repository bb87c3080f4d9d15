//! What happened: the audit log and the change events, and the sequencer that numbers them.
//! The target is one hand for `audit_log`, `events` and `event_sequence`; the hot paths that still
//! write them in their own statement (the grouped holds and bookings, a stock move, a code
//! batch's event) are listed in `tests/api/house.rs` as owed.

pub mod audit;
pub mod events;
