//! Services: the pages of places (slots), their schedules, staff leave and closures, the bookings
//! of a slot and the counter where staff book for callers and walk-ins.

pub mod closures;
pub mod counter;
pub mod places;
pub mod schedule;
pub mod slots;
