//! Dates and times as people of each language write them, by ICU4X from CLDR's data (compiled
//! in): "12月1日周二" / "Tue 1 Dec", "2026年12月1日星期二" / "Tuesday, 1 December 2026", "16:00".
//! English follows British usage (day before month, 24-hour clock), which is how the product's
//! English-reading users in China and Europe write dates. Numbers, money, durations and "in 5
//! minutes" come from the same data: "900,000", "¥1,288.50" / "CN¥1,288.50", "60分钟" / "60 minutes".

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use icu_datetime::fieldsets::zone::GenericLong;
use icu_datetime::fieldsets::{MDE, T, YM, YMDE, YMDET};
use icu_datetime::input::{Date, DateTime, Time};
use icu_datetime::options::TimePrecision;
use icu_datetime::{DateTimeFormatter, DateTimeFormatterPreferences, NoCalendarFormatter};
use icu_decimal::DecimalFormatter;
use icu_experimental::dimension::currency::formatter::CurrencyFormatter;
use icu_experimental::dimension::currency::CurrencyType;
use icu_experimental::duration::options::{BaseStyle, DurationFormatterOptions};
use icu_experimental::duration::{Duration, DurationFormatter, ValidatedDurationFormatterOptions};
use icu_experimental::relativetime::{RelativeTimeFormatter, RelativeTimeFormatterOptions};
use icu_locale_core::{locale, Locale};

use super::Lang;

fn locale_of(lang: Lang) -> Locale {
    match lang {
        Lang::ZhCn => locale!("zh-CN"),
        Lang::En => locale!("en-GB"),
    }
}

fn prefs(lang: Lang) -> DateTimeFormatterPreferences {
    locale_of(lang).into()
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
per_lang!(MONTH: YM = YM::long());
per_lang!(TIME: T = T::hm());
per_lang!(DATE_TIME: YMDET = YMDET::medium().with_time_precision(TimePrecision::Minute));
per_lang!(DATE_TIME_S: YMDET = YMDET::medium().with_time_precision(TimePrecision::Second));

/// The formatter of `lang` in a `per_lang!` table (ordered as `Lang::ALL`).
fn of<F>(table: &[F; 2], lang: Lang) -> &F {
    &table[Lang::ALL.iter().position(|l| *l == lang).unwrap_or(0)]
}

fn date(d: NaiveDate) -> Date<icu_calendar::Iso> {
    // chrono's dates are proleptic Gregorian (ISO) with months 1–12 and days 1–31: always valid.
    Date::try_new_iso(d.year(), d.month() as u8, d.day() as u8).expect("a chrono date")
}

fn time(t: NaiveTime) -> Time {
    Time::try_new(
        t.hour() as u8,
        t.minute() as u8,
        t.second().min(59) as u8,
        0,
    )
    .expect("a chrono time")
}

/// A day in a list of days: "12月1日周二" / "Tue 1 Dec".
pub fn day_short(lang: Lang, d: NaiveDate) -> String {
    of(&DAY_SHORT, lang).format(&date(d)).to_string()
}

/// A day written out: "2026年12月1日星期二" / "Tuesday, 1 December 2026".
pub fn day_long(lang: Lang, d: NaiveDate) -> String {
    of(&DAY_LONG, lang).format(&date(d)).to_string()
}

/// A month of a year, as a month view's heading: "2026年12月" / "December 2026".
pub fn month(lang: Lang, d: NaiveDate) -> String {
    of(&MONTH, lang).format(&date(d)).to_string()
}

/// A time of day, to the minute: "16:00".
pub fn clock(lang: Lang, t: NaiveTime) -> String {
    of(&TIME, lang).format(&time(t)).to_string()
}

/// A day and time: "2026年12月1日周二 16:00" / "Tue, 1 Dec 2026, 16:00".
pub fn date_time(lang: Lang, dt: NaiveDateTime) -> String {
    of(&DATE_TIME, lang).format(&date_and_time(dt)).to_string()
}

/// A day and time to the second, for logs people read: "2026年12月1日周二 16:00:05".
pub fn date_time_s(lang: Lang, dt: NaiveDateTime) -> String {
    of(&DATE_TIME_S, lang)
        .format(&date_and_time(dt))
        .to_string()
}

fn date_and_time(dt: NaiveDateTime) -> DateTime<icu_calendar::Iso> {
    DateTime {
        date: date(dt.date()),
        time: time(dt.time()),
    }
}

static ZONE: LazyLock<[NoCalendarFormatter<GenericLong>; 2]> = LazyLock::new(|| {
    Lang::ALL.map(|lang| {
        NoCalendarFormatter::try_new(locale_of(lang).into(), GenericLong)
            .expect("the compiled CLDR data has zh-CN and en-GB")
    })
});

/// The name people give the time zone a store's times are in, now: "中国时间" / "China Time" for
/// Asia/Shanghai, "中欧时间" / "Central European Time" for Europe/Berlin. An id CLDR does not know
/// is written as it is.
pub fn zone(lang: Lang, iana: &str) -> String {
    use chrono::Offset;
    let Ok(tz) = iana.parse::<chrono_tz::Tz>() else {
        return iana.to_string();
    };
    // Operators' times are in UTC, and everyone writes that "UTC".
    if tz == chrono_tz::UTC || tz == chrono_tz::Etc::UTC {
        return "UTC".into();
    }
    let now = chrono::Utc::now();
    let seconds = now.with_timezone(&tz).offset().fix().local_minus_utc();
    let info = icu_time::TimeZone::from_iana_id(iana)
        .with_offset(icu_time::zone::UtcOffset::try_from_seconds(seconds).ok())
        .with_zone_name_timestamp(icu_time::zone::ZoneNameTimestamp::from_epoch_seconds(
            now.timestamp(),
        ));
    let name = of(&ZONE, lang).format(&info).to_string();
    if name.is_empty() {
        iana.to_string()
    } else {
        name
    }
}

static NUMBER: LazyLock<[DecimalFormatter; 2]> = LazyLock::new(|| {
    Lang::ALL.map(|lang| {
        DecimalFormatter::try_new(locale_of(lang).into(), Default::default())
            .expect("the compiled CLDR data has zh-CN and en-GB")
    })
});

/// A count: "900,000".
pub fn number(lang: Lang, n: i64) -> String {
    of(&NUMBER, lang).format(&n.into()).to_string()
}

/// A share with one decimal: "12.5%" (both languages put the sign after the number, unspaced).
pub fn percent(lang: Lang, p: f64) -> String {
    let mut d = fixed_decimal::Decimal::from((p * 10.0).round() as i64);
    d.multiply_pow10(-1);
    d.absolute.pad_end(-1);
    format!("{}%", of(&NUMBER, lang).format(&d))
}

type Money = CurrencyFormatter<DecimalFormatter>;

/// Currency formatters by language and ISO 4217 code, built on first use (a merchant has one
/// currency, so this holds a handful).
static MONEY: LazyLock<Mutex<MoneyCache>> = LazyLock::new(Default::default);

type MoneyCache = HashMap<(Lang, String), Arc<Money>>;

fn money_formatter(lang: Lang, currency: &str) -> Option<Arc<Money>> {
    let key = (lang, currency.to_ascii_uppercase());
    let mut cache = MONEY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = cache.get(&key) {
        return Some(f.clone());
    }
    let code = CurrencyType::try_from_str(&key.1.to_ascii_lowercase()).ok()?;
    let f = Arc::new(Money::try_new_symbol(locale_of(lang).into(), code, Default::default()).ok()?);
    cache.insert(key, f.clone());
    Some(f)
}

/// An amount in minor units (hundredths) of `currency`: "¥1,288.50" in Chinese, "CN¥1,288.50" in
/// English (CLDR's symbols: a reader of English also meets US and other dollars, so the yuan says
/// which it is). A code CLDR does not know is written after the number: "1,288.50 XYZ".
pub fn money(lang: Lang, minor: i64, currency: &str) -> String {
    let mut amount = fixed_decimal::Decimal::from(minor);
    amount.multiply_pow10(-2);
    amount.absolute.pad_end(-2);
    match money_formatter(lang, currency) {
        Some(f) => f.format_fixed_decimal(&amount).to_string(),
        None => format!("{} {currency}", of(&NUMBER, lang).format(&amount)),
    }
}

static DURATION: LazyLock<[DurationFormatter; 2]> = LazyLock::new(|| {
    let mut options = DurationFormatterOptions::default();
    options.base = BaseStyle::Long;
    let options = ValidatedDurationFormatterOptions::validate(options).expect("long style");
    Lang::ALL.map(|lang| {
        DurationFormatter::try_new(locale_of(lang).into(), options)
            .expect("the compiled CLDR data has zh-CN and en-GB")
    })
});

/// A length of time in minutes: "60分钟" / "60 minutes", "1小时30分钟" / "1 hour, 30 minutes".
pub fn minutes(lang: Lang, minutes: i64) -> String {
    let m = minutes.unsigned_abs();
    // Whole hours read as hours ("2 hr"), anything else keeps its minutes; an hour is said
    // "60 minutes" as shops say it.
    let (hours, minutes) = if m > 60 { (m / 60, m % 60) } else { (0, m) };
    let d = Duration {
        hours,
        minutes,
        ..Default::default()
    };
    of(&DURATION, lang).format(&d).to_string()
}

static RELATIVE: LazyLock<[[RelativeTimeFormatter; 4]; 2]> = LazyLock::new(|| {
    Lang::ALL.map(|lang| {
        let l = locale_of(lang);
        let o = RelativeTimeFormatterOptions::default();
        [
            RelativeTimeFormatter::try_new_long_second(l.clone().into(), o),
            RelativeTimeFormatter::try_new_long_minute(l.clone().into(), o),
            RelativeTimeFormatter::try_new_long_hour(l.clone().into(), o),
            RelativeTimeFormatter::try_new_long_day(l.into(), o),
        ]
        .map(|f| f.expect("the compiled CLDR data has zh-CN and en-GB"))
    })
});

/// How far an instant is from now, in the largest whole unit up to days: "5分钟后" / "in 5
/// minutes", "3小时前" / "3 hours ago", "2天后" / "in 2 days"; under a minute in seconds ("12 seconds
/// ago", not "in 0 minutes").
pub fn from_now(lang: Lang, delta_ms: i64) -> String {
    let minutes = delta_ms / 60_000;
    let (unit, n) = if minutes == 0 {
        (0, delta_ms / 1000)
    } else if minutes.abs() < 60 {
        (1, minutes)
    } else if minutes.abs() < 48 * 60 {
        (2, minutes / 60)
    } else {
        (3, minutes / (24 * 60))
    };
    of(&RELATIVE, lang)[unit].format(n.into()).to_string()
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

    #[test]
    fn numbers_money_and_durations_are_written_by_the_locale() {
        assert_eq!(number(Lang::En, 900_000), "900,000");
        assert_eq!(number(Lang::ZhCn, 900_000), "900,000");
        assert_eq!(number(Lang::En, -3), "-3");
        assert_eq!(money(Lang::ZhCn, 128_850, "CNY"), "¥1,288.50");
        assert_eq!(money(Lang::En, 128_850, "CNY"), "CN¥1,288.50");
        assert_eq!(money(Lang::En, 5, "cny"), "CN¥0.05");
        assert_eq!(money(Lang::En, 1_000, "USD"), "US$10.00");
        assert_eq!(money(Lang::En, 1_000, "??"), "10.00 ??");
        assert_eq!(minutes(Lang::ZhCn, 60), "60分钟");
        assert_eq!(minutes(Lang::En, 60), "60 minutes");
        assert_eq!(minutes(Lang::En, 90), "1 hour, 30 minutes");
        assert_eq!(minutes(Lang::En, 120), "2 hours");
        assert_eq!(minutes(Lang::ZhCn, 90), "1小时30分钟");
        assert_eq!(from_now(Lang::En, 5 * 60_000), "in 5 minutes");
        assert_eq!(from_now(Lang::ZhCn, 5 * 60_000), "5分钟后");
        assert_eq!(from_now(Lang::En, -3 * 3_600_000), "3 hours ago");
        assert_eq!(from_now(Lang::ZhCn, 3 * 86_400_000), "3天后");
        assert_eq!(from_now(Lang::En, -12_000), "12 seconds ago");
        assert_eq!(from_now(Lang::ZhCn, -12_000), "12秒钟前");
        assert_eq!(percent(Lang::En, 12.46), "12.5%");
        assert_eq!(percent(Lang::ZhCn, 100.0), "100.0%");
        assert_eq!(percent(Lang::En, 0.0), "0.0%");
    }

    #[test]
    fn time_zones_are_named_as_people_say_them() {
        assert_eq!(zone(Lang::ZhCn, "Asia/Shanghai"), "中国时间");
        assert_eq!(zone(Lang::En, "Asia/Shanghai"), "China Time");
        assert_eq!(zone(Lang::En, "Not/AZone"), "Not/AZone");
        assert_eq!(zone(Lang::ZhCn, "UTC"), "UTC");
    }

    #[test]
    fn whole_numbers_in_catalogue_sentences_are_grouped() {
        let n = 1_000_000_000_i64;
        assert!(Lang::En.t1("m-bad-qty", "max", n).contains("1,000,000,000"));
        assert!(Lang::ZhCn
            .t1("m-bad-qty", "max", n)
            .contains("1,000,000,000"));
    }
}
