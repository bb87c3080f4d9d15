//! Dates and times as a store's staff read them: in the store's timezone, one format each.

use chrono::{Datelike, Duration, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

use crate::i18n::{current, format};

pub const DATE_FMT: &str = "%Y-%m-%d";
pub const TIME_FMT: &str = "%H:%M";
pub const DATETIME_FMT: &str = "%Y-%m-%d %H:%M";

/// An instant as a wall-clock time in `tz`.
pub fn local(ms: i64, tz: Tz) -> chrono::NaiveDateTime {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .with_timezone(&tz)
        .naive_local()
}

/// An instant in `tz` as the page's language writes it: "2026年12月1日周二 16:00" / "Tue, 1 Dec
/// 2026, 16:00". Form fields keep ISO (`DATETIME_FMT`), which is what date pickers take.
pub fn when(ms: i64, tz: Tz) -> String {
    format::date_time(current(), local(ms, tz))
}

/// The same to the second (the audit log, the stock ledger).
pub fn when_s(ms: i64, tz: Tz) -> String {
    format::date_time_s(current(), local(ms, tz))
}

/// The time of day of an instant in `tz`: "16:00".
pub fn clock(ms: i64, tz: Tz) -> String {
    format::clock(current(), local(ms, tz).time())
}

/// The first instant of a local day. Where midnight falls in a daylight-saving gap, the day
/// starts at the first local time that exists.
pub fn day_start(tz: Tz, date: NaiveDate) -> i64 {
    (0..=4)
        .filter_map(|h| date.and_hms_opt(h, 0, 0))
        .find_map(|t| tz.from_local_datetime(&t).earliest())
        .map(|t| t.timestamp_millis())
        .unwrap_or_else(|| {
            Utc.from_utc_datetime(&date.and_time(chrono::NaiveTime::MIN))
                .timestamp_millis()
        })
}

pub fn local_date(ms: i64, tz: Tz) -> Option<NaiveDate> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.with_timezone(&tz).date_naive())
}

pub fn monday_of(d: NaiveDate) -> NaiveDate {
    d - Duration::days(d.weekday().num_days_from_monday() as i64)
}

/// A `YYYY-MM-DD` form or query value.
pub fn parse_day(raw: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(raw.trim(), DATE_FMT).ok()
}

/// A `from`/`to` date filter as an instant: the start of the day named, or with `through` the
/// start of the day after (so `to=2026-03-01` includes all of that day).
pub fn day_bound(raw: &str, tz: Tz, through: bool) -> Option<i64> {
    let d = parse_day(raw)?;
    let d = if through { d.succ_opt()? } else { d };
    Some(day_start(tz, d))
}

/// A slot's or closure's time span: `Mon, 2 Mar 2026, 10:00–11:00` within a day, with both dates
/// when it runs past midnight.
pub fn period(start: i64, end: i64, tz: Tz) -> String {
    let (sd, ed) = (local_date(start, tz), local_date(end, tz));
    if sd == ed {
        format!("{}–{}", when(start, tz), clock(end, tz))
    } else {
        format!("{} → {}", when(start, tz), when(end, tz))
    }
}

/// A closure's span: whole days when it runs from one local midnight to another ("Mon, 7 Dec
/// 2026 – Tue, 8 Dec 2026, whole days", the last day included, as staff entered it), else as
/// [`period`].
pub fn closure_period(start: i64, end: i64, tz: Tz) -> String {
    let (s, e) = (local(start, tz), local(end, tz));
    let midnight = chrono::NaiveTime::MIN;
    if s.time() != midnight || e.time() != midnight || e.date() <= s.date() {
        return period(start, end, tz);
    }
    let last = e.date() - Duration::days(1);
    let lang = current();
    if last == s.date() {
        crate::messages::whole_day(&format::day_long(lang, last))
    } else {
        crate::messages::whole_days(
            &format::day_long(lang, s.date()),
            &format::day_long(lang, last),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        parse_day(s).unwrap()
    }

    #[test]
    fn leave_from_midnight_to_midnight_reads_as_whole_days_with_the_last_day_included() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let (mon, tue, wed) = (d("2026-12-07"), d("2026-12-08"), d("2026-12-09"));
        let lang = current();
        let two = closure_period(day_start(tz, mon), day_start(tz, wed), tz);
        assert!(two.contains(&format::day_long(lang, mon)), "{two}");
        assert!(two.contains(&format::day_long(lang, tue)), "{two}");
        assert!(!two.contains(&format::day_long(lang, wed)), "{two}");
        let one = closure_period(day_start(tz, mon), day_start(tz, tue), tz);
        assert!(
            one.contains(&format::day_long(lang, mon)) && !one.contains("00:00"),
            "{one}"
        );
        // Not from midnight: the times are said.
        let start = day_start(tz, mon) + 9 * 3_600_000;
        assert_eq!(
            closure_period(start, day_start(tz, tue), tz),
            period(start, day_start(tz, tue), tz)
        );
    }

    #[test]
    fn a_day_starts_at_local_midnight() {
        let shanghai: Tz = "Asia/Shanghai".parse().unwrap();
        // 2026-03-02 00:00 in Shanghai is 2026-03-01 16:00 UTC.
        assert_eq!(day_start(shanghai, d("2026-03-02")), 1_772_380_800_000);
    }

    #[test]
    fn a_day_whose_midnight_does_not_exist_starts_at_the_first_local_time_that_does() {
        // Santiago springs forward at midnight: 2026-09-06 00:00 does not exist, 01:00 does.
        let santiago: Tz = "America/Santiago".parse().unwrap();
        let start = day_start(santiago, d("2026-09-06"));
        let local = Utc
            .timestamp_millis_opt(start)
            .unwrap()
            .with_timezone(&santiago);
        assert_eq!(local.date_naive(), d("2026-09-06"));
        assert_eq!(local.format("%H:%M").to_string(), "01:00");
    }

    proptest::proptest! {
        /// Every day of every zone starts on that local day, in its first four hours (midnight,
        /// or the first hour that exists after a daylight-saving jump). Zones that once skipped a
        /// whole day (Pacific/Apia, 2011-12-30) are left out: such a day has no start.
        #[test]
        fn a_day_starts_on_its_own_local_day(
            days in 0i64..(200 * 365),
            zone in proptest::sample::select(vec![
                "Asia/Shanghai", "America/Santiago", "America/Havana", "Europe/London",
                "Asia/Tehran", "Australia/Lord_Howe", "UTC",
            ]),
        ) {
            let tz: Tz = zone.parse().unwrap();
            let date = NaiveDate::from_ymd_opt(1950, 1, 1).unwrap() + Duration::days(days);
            let local = Utc.timestamp_millis_opt(day_start(tz, date)).unwrap().with_timezone(&tz);
            proptest::prop_assert_eq!(local.date_naive(), date);
            proptest::prop_assert!(chrono::Timelike::hour(&local) < 4);
        }
    }

    #[test]
    fn a_through_bound_is_the_start_of_the_next_day() {
        let utc = chrono_tz::UTC;
        assert_eq!(
            day_bound("2026-03-01", utc, true),
            Some(day_start(utc, d("2026-03-02")))
        );
        assert_eq!(day_bound("2026-13-01", utc, false), None);
    }

    #[test]
    fn monday_of_a_sunday_is_six_days_before() {
        assert_eq!(monday_of(d("2026-03-08")), d("2026-03-02"));
        assert_eq!(monday_of(d("2026-03-02")), d("2026-03-02"));
    }

    /// Runs `f` as a request in `lang` would.
    fn tokio_test_scope<T>(lang: crate::i18n::Lang, f: impl FnOnce() -> T) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(crate::i18n::scope(lang, async { f() }))
    }

    #[test]
    fn a_period_within_a_day_names_the_date_once() {
        let utc = chrono_tz::UTC;
        let start = day_start(utc, d("2026-03-02")) + 10 * 3_600_000;
        assert_eq!(
            period(start, start + 3_600_000, utc),
            "Mon, 2 Mar 2026, 10:00–11:00"
        );
        assert_eq!(
            period(start, start + 24 * 3_600_000, utc),
            "Mon, 2 Mar 2026, 10:00 → Tue, 3 Mar 2026, 10:00"
        );
        let zh = crate::i18n::Lang::ZhCn;
        let chinese = tokio_test_scope(zh, || period(start, start + 3_600_000, utc));
        assert_eq!(chinese, "2026年3月2日周一 10:00–11:00");
    }
}
