//! A booking as a calendar file (`.ics`, RFC 5545) for the customer's phone or computer, built
//! with the `icalendar` crate rather than by hand: it folds long lines and escapes the commas,
//! semicolons and newlines that names and addresses contain.

use chrono::{TimeZone, Utc};
use icalendar::{Calendar, Component, Event, EventLike, EventStatus};

/// What the calendar entry says.
pub struct CalendarBooking<'a> {
    pub reference: &'a str,
    pub cancelled: bool,
    pub starts_at: i64,
    pub ends_at: i64,
    pub summary: &'a str,
    pub location: &'a str,
    pub description: &'a str,
    pub store_name: &'a str,
}

/// The booking's calendar file. The UID is the reference, so a cancelled booking downloaded
/// again replaces the entry (STATUS:CANCELLED) instead of adding a second one.
pub fn booking_ics(b: &CalendarBooking<'_>) -> String {
    let at = |ms: i64| Utc.timestamp_millis_opt(ms).single().unwrap_or_default();
    let mut event = Event::new();
    event
        .uid(&format!("{}@sellable", b.reference))
        .summary(b.summary)
        .location(b.location)
        .description(b.description)
        .starts(at(b.starts_at))
        .ends(at(b.ends_at))
        .status(if b.cancelled {
            EventStatus::Cancelled
        } else {
            EventStatus::Confirmed
        });
    let mut cal = Calendar::new();
    cal.name(b.store_name).push(event.done());
    cal.done().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_booking_is_one_event_in_utc_with_its_reference_as_uid_and_escaped_text() {
        let ics = booking_ics(&CalendarBooking {
            reference: "ABC234",
            cancelled: false,
            starts_at: 1_764_576_000_000,
            ends_at: 1_764_579_600_000,
            summary: "茶艺课; 60 min",
            location: "南京东路 1号, 上海",
            description: "Reference ABC234",
            store_name: "清和茶馆",
        });
        assert!(ics.starts_with("BEGIN:VCALENDAR"), "{ics}");
        assert_eq!(ics.matches("BEGIN:VEVENT").count(), 1);
        assert!(ics.contains("UID:ABC234@sellable"), "{ics}");
        assert!(ics.contains("DTSTART:20251201T080000Z"), "{ics}");
        assert!(ics.contains("DTEND:20251201T090000Z"), "{ics}");
        assert!(ics.contains("SUMMARY:茶艺课\\; 60 min"), "{ics}");
        assert!(ics.contains("LOCATION:南京东路 1号\\, 上海"), "{ics}");
        assert!(ics.contains("STATUS:CONFIRMED"), "{ics}");
    }
}
