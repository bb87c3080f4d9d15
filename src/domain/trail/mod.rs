//! What happened, written by one hand: the only writers of `audit_log`, `events` and
//! `event_sequence`.

pub mod audit;
pub mod events;
