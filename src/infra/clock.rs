//! The application's clock: what "now" and "today" are for every business rule (a slot has
//! started, a hold expired, the 28-day schedule window, this week's no-shows).
//!
//! Production reads the system's clock. A test says which day it runs on (`Clock::starting_at`):
//! the clock is then the system's plus a fixed offset, so time still moves at the real pace and
//! expiries, timeouts and retries behave as they do in production, while the calendar is the
//! one the test chose. The offset is shared by every clone (the pool's handle, jobs, handlers),
//! so one app has one "now".
//!
//! What must agree with other machines' clocks stays on `wall_ms`: session expiry (stamped by
//! tower-sessions from the system clock), a replica's lag, webhook signature stamps that a
//! receiver checks against its own clock. (The gate's degraded-since is the app's: the alert
//! compares it with the app's now.)

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

#[derive(Debug, Clone, Default)]
pub struct Clock {
    /// Added to the system's clock, in milliseconds; 0 in production.
    offset_ms: Arc<AtomicI64>,
}

impl Clock {
    /// The system's clock.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// The system's clock shifted by `offset_ms` (SELLABLE_CLOCK_OFFSET_MS).
    pub fn offset_by(offset_ms: i64) -> Clock {
        let clock = Clock::default();
        clock.offset_ms.store(offset_ms, Ordering::Relaxed);
        clock
    }

    /// How far this clock is from the system's, in milliseconds: what another process of the
    /// same app is given (SELLABLE_CLOCK_OFFSET_MS) to share its day.
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::Relaxed)
    }

    /// A clock that reads `at_ms` (milliseconds since the epoch) now, and moves on from there.
    pub fn starting_at(at_ms: i64) -> Clock {
        let clock = Clock::default();
        clock.set(at_ms);
        clock
    }

    /// From now on the clock reads `at_ms`, moving on from there.
    pub fn set(&self, at_ms: i64) {
        self.offset_ms.store(at_ms - wall_ms(), Ordering::Relaxed);
    }

    /// Moves the clock forward (or back, with a negative amount).
    pub fn advance(&self, ms: i64) {
        self.offset_ms.fetch_add(ms, Ordering::Relaxed);
    }

    /// Milliseconds since the epoch: the one time representation in every table.
    pub fn now_ms(&self) -> i64 {
        wall_ms() + self.offset_ms.load(Ordering::Relaxed)
    }

    pub fn now(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.now_ms()).unwrap_or_default()
    }

    /// The system's time at the app's instant `app_ms`: for an absolute time another machine
    /// keeps (a Redis key's EXPIREAT), which counts by its own clock.
    pub fn to_wall_ms(&self, app_ms: i64) -> i64 {
        app_ms - self.offset_ms.load(Ordering::Relaxed)
    }

    /// Today's date in `tz`.
    pub fn today(&self, tz: Tz) -> NaiveDate {
        self.now().with_timezone(&tz).date_naive()
    }
}

/// The system's clock, for what must agree with other machines (see the module's comment).
pub fn wall_ms() -> i64 {
    Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_set_to_a_day_reads_that_day_and_moves_on_with_every_clone() {
        let at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2027, 1, 31, 15, 30, 0)
            .unwrap()
            .timestamp_millis();
        let clock = Clock::starting_at(at);
        let twin = clock.clone();
        assert!((clock.now_ms() - at).abs() < 1_000);
        assert_eq!(
            twin.today(chrono_tz::Asia::Shanghai),
            NaiveDate::from_ymd_opt(2027, 1, 31).unwrap()
        );
        clock.advance(9 * 3_600_000);
        assert_eq!(
            twin.today(chrono_tz::Asia::Shanghai),
            NaiveDate::from_ymd_opt(2027, 2, 1).unwrap()
        );
        assert!((Clock::system().now_ms() - wall_ms()).abs() < 1_000);
    }
}
