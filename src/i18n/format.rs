//! Dates and times as people of each language write them, by ICU4X from CLDR's data (compiled
//! in): "12月1日周二" / "Tue 1 Dec", "2026年12月1日星期二" / "Tuesday, 1 December 2026", "16:00".
//! English follows British usage (day before month, 24-hour clock), which is how the product's
//! English-reading users in China and Europe write dates.

use std::sync::LazyLock;

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use icu_datetime::fieldsets::{MDE, T, YMDE, YMDET};
use icu_datetime::input::{Date, DateTime, Time};
use icu_datetime::options::TimePrecision;
use icu_datetime::{DateTimeFormatter, DateTimeFormatterPreferences};
use icu_locale_core::locale;

use super::Lang;

fn prefs(lang: Lang) -> DateTimeFormatterPreferences {
    match lang {
        Lang::ZhCn => locale!("zh-CN").into(),
        Lang::En => locale!("en-GB").into(),
    }
}

/// One formatter per language and field set, built once (building loads and selects patterns);
/// `icu_provider`'s `sync` feature makes them shareable between the server's threads.
macro_rules! per_lang {
    ($name:ident: $fset:ty = $fields:expr) => {
        static $name: LazyLock<[DateTimeFormatter<$fset>; 2]> = LazyLock::new(|| {
            Lang::ALL.map(|lang| {
                DateTimeFormatter::try_new(prefs(lang), $fields)
                    .expect("the compiled CLDR data has zh-CN and en-GB")
            })
        });
    };
}

per_lang!(DAY_SHORT: MDE = MDE::medium());
per_lang!(DAY_LONG: YMDE = YMDE::long());
per_lang!(TIME: T = T::hm());
per_lang!(DATE_TIME: YMDET = YMDET::medium().with_time_precision(TimePrecision::Minute));

/// The formatter of `lang` in a `per_lang!` table (ordered as `Lang::ALL`).
fn of<F>(table: &[F; 2], lang: Lang) -> &F {
    &table[Lang::ALL.iter().position(|l| *l == lang).unwrap_or(0)]
}

fn date(d: NaiveDate) -> Date<icu_calendar::Iso> {
    // chrono's dates are proleptic Gregorian (ISO) with months 1–12 and days 1–31: always valid.
    Date::try_new_iso(d.year(), d.month() as u8, d.day() as u8).expect("a chrono date")
}

fn time(t: NaiveTime) -> Time {
    Time::try_new(t.hour() as u8, t.minute() as u8, 0, 0).expect("a chrono time")
}

/// A day in a list of days: "12月1日周二" / "Tue 1 Dec".
pub fn day_short(lang: Lang, d: NaiveDate) -> String {
    of(&DAY_SHORT, lang).format(&date(d)).to_string()
}

/// A day written out: "2026年12月1日星期二" / "Tuesday, 1 December 2026".
pub fn day_long(lang: Lang, d: NaiveDate) -> String {
    of(&DAY_LONG, lang).format(&date(d)).to_string()
}

/// A time of day, to the minute: "16:00".
pub fn clock(lang: Lang, t: NaiveTime) -> String {
    of(&TIME, lang).format(&time(t)).to_string()
}

/// A day and time: "2026年12月1日周二 16:00" / "Tue, 1 Dec 2026, 16:00".
pub fn date_time(lang: Lang, dt: NaiveDateTime) -> String {
    let v = DateTime {
        date: date(dt.date()),
        time: time(dt.time()),
    };
    of(&DATE_TIME, lang).format(&v).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_times_are_written_the_way_each_language_writes_them() {
        let d = NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        let t = NaiveTime::from_hms_opt(16, 0, 0).unwrap();
        assert_eq!(day_short(Lang::ZhCn, d), "12月1日周二");
        assert_eq!(day_short(Lang::En, d), "Tue 1 Dec");
        assert_eq!(day_long(Lang::ZhCn, d), "2026年12月1日星期二");
        assert_eq!(day_long(Lang::En, d), "Tuesday, 1 December 2026");
        assert_eq!(clock(Lang::ZhCn, t), "16:00");
        assert_eq!(clock(Lang::En, t), "16:00");
        assert_eq!(
            date_time(Lang::ZhCn, d.and_time(t)),
            "2026年12月1日周二 16:00"
        );
        assert_eq!(date_time(Lang::En, d.and_time(t)), "Tue, 1 Dec 2026, 16:00");
    }
}
