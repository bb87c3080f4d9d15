//! Parse, don't validate: raw strings become checked values or a [`FieldError`] that names the field.

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

use crate::domain::FieldError;
use crate::messages::{self, label};

pub const NAME_MAX: usize = 200;
pub const SLUG_MAX: usize = 64;
pub const SKU_CODE_MAX: usize = 64;
pub const EMAIL_MAX: usize = 254;
/// Reasons for adjustments, closures and cancellations.
pub const REASON_MAX: usize = 500;
/// 10 billion in major units: far above any real price, far below i64 overflow.
pub const PRICE_MAX_MINOR: i64 = 1_000_000_000_000;

fn err(field: &str, code: &'static str, message: String) -> FieldError {
    FieldError::new(field, code, message)
}

/// A display name: trimmed, non-empty, bounded, no control characters.
pub fn name(field: &str, raw: &str, max: usize) -> Result<String, FieldError> {
    let v = raw.trim();
    if v.is_empty() {
        return Err(err(field, "required", messages::required(&label(field))));
    }
    if v.chars().count() > max {
        return Err(err(
            field,
            "too_long",
            messages::too_long(&label(field), max),
        ));
    }
    if v.chars().any(|c| c.is_control()) {
        return Err(err(
            field,
            "invalid_characters",
            messages::required(&label(field)),
        ));
    }
    Ok(v.to_string())
}

/// Free text that may be left empty (an address, a description): trimmed, bounded, lines kept,
/// no other control characters.
pub fn optional_text(field: &str, raw: &str, max: usize) -> Result<String, FieldError> {
    let v = raw.trim().replace("\r\n", "\n");
    if v.chars().count() > max {
        return Err(err(
            field,
            "too_long",
            messages::too_long(&label(field), max),
        ));
    }
    if v.chars().any(|c| c.is_control() && c != '\n') {
        return Err(err(
            field,
            "invalid_characters",
            messages::bad_text(&label(field)),
        ));
    }
    Ok(v)
}

pub fn slug(field: &str, raw: &str) -> Result<String, FieldError> {
    let v = raw.trim();
    if v.is_empty() {
        return Err(err(field, "required", messages::required(&label(field))));
    }
    if v.len() > SLUG_MAX {
        return Err(err(
            field,
            "too_long",
            messages::too_long(&label(field), SLUG_MAX),
        ));
    }
    if !v
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(err(
            field,
            "invalid_slug",
            messages::bad_slug(&label(field)),
        ));
    }
    Ok(v.to_string())
}

pub fn sku_code(field: &str, raw: &str) -> Result<String, FieldError> {
    let v = raw.trim();
    if v.is_empty() {
        return Err(err(field, "required", messages::required(&label("code"))));
    }
    if v.len() > SKU_CODE_MAX {
        return Err(err(
            field,
            "too_long",
            messages::too_long(&label("code"), SKU_CODE_MAX),
        ));
    }
    if !v
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(err(field, "invalid_code", messages::bad_code()));
    }
    Ok(v.to_string())
}

pub fn email(raw: &str) -> Result<String, FieldError> {
    let v = raw.trim().to_lowercase();
    if v.is_empty() {
        return Err(err(
            "email",
            "required",
            messages::required(&label("email")),
        ));
    }
    if v.len() > EMAIL_MAX {
        return Err(err(
            "email",
            "too_long",
            messages::too_long(&label("email"), EMAIL_MAX),
        ));
    }
    let ok = match v.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !v.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    };
    if !ok {
        return Err(err("email", "invalid_email", messages::bad_email()));
    }
    Ok(v)
}

pub fn choice<'a>(field: &str, raw: &str, allowed: &[&'a str]) -> Result<&'a str, FieldError> {
    let v = raw.trim();
    allowed.iter().find(|a| **a == v).copied().ok_or_else(|| {
        err(
            field,
            "invalid_choice",
            messages::bad_choice(&label(field), allowed),
        )
    })
}

pub fn timezone(raw: &str) -> Result<Tz, FieldError> {
    raw.trim().parse::<Tz>().map_err(|_| {
        err(
            "timezone",
            "invalid_timezone",
            messages::bad_timezone(raw.trim()),
        )
    })
}

pub fn currency(raw: &str) -> Result<String, FieldError> {
    let v = raw.trim().to_uppercase();
    if v.len() == 3 && v.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(v)
    } else {
        Err(err(
            "currency",
            "invalid_currency",
            messages::bad_currency(),
        ))
    }
}

/// Minor units from an API integer.
pub fn price_minor(field: &str, v: i64) -> Result<i64, FieldError> {
    if v < 0 {
        return Err(err(field, "invalid_price", messages::negative_price()));
    }
    if v > PRICE_MAX_MINOR {
        return Err(err(
            field,
            "invalid_price",
            messages::price_too_large(PRICE_MAX_MINOR),
        ));
    }
    Ok(v)
}

/// Minor units from a JSON number: integers only, bounded.
pub fn price_json(field: &str, v: &serde_json::Value) -> Result<i64, FieldError> {
    match v {
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => price_minor(field, i),
            None if n.as_u64().is_some() => Err(err(
                field,
                "invalid_price",
                messages::price_too_large(PRICE_MAX_MINOR),
            )),
            None => Err(err(field, "invalid_price", messages::bad_price())),
        },
        serde_json::Value::Null => Err(err(field, "required", messages::required(&label("price")))),
        _ => Err(err(field, "invalid_price", messages::bad_price())),
    }
}

/// A number as people type it on a Chinese or Western keyboard, made plain: full-width digits and
/// punctuation (`１２８８．５`, `，`) read as ASCII by Unicode NFKC, a currency sign or word before
/// or after it (`¥`, `￥`, `CN¥`, `RMB`, `CNY`, `元`) and thousands separators (`,` and `，`,
/// spaces) dropped. What is left is for the caller to parse strictly.
pub fn typed_number(raw: &str) -> String {
    let nfkc = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc().normalize(raw.trim());
    let mut v = nfkc.trim();
    for sign in ["CN¥", "RMB", "CNY", "¥"] {
        v = v.strip_prefix(sign).unwrap_or(v).trim_start();
    }
    for word in ["元", "CNY", "RMB"] {
        v = v.strip_suffix(word).unwrap_or(v).trim_end();
    }
    v.chars()
        .filter(|c| *c != ',' && !c.is_whitespace())
        .collect()
}

/// A whole number typed into a form ("１２", "1,000"), or None.
pub fn typed_int(raw: &str) -> Option<i64> {
    typed_number(raw).parse().ok()
}

/// Minor units from a form field in major units ("12.5", "12.50", "12", "¥1,288.50", "１２８８"),
/// two decimals.
/// A price as typed where it may be left empty: empty is no price yet (None).
pub fn price_major_opt(field: &str, raw: &str) -> Result<Option<i64>, FieldError> {
    if typed_number(raw).is_empty() {
        return Ok(None);
    }
    price_major(field, raw).map(Some)
}

pub fn price_major(field: &str, raw: &str) -> Result<i64, FieldError> {
    let v = typed_number(raw);
    if v.is_empty() {
        return Err(err(field, "required", messages::required(&label("price"))));
    }
    if v.starts_with('-') {
        return Err(err(field, "invalid_price", messages::negative_price()));
    }
    let (whole, frac) = v.split_once('.').unwrap_or((&v, ""));
    let digits_ok = !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.len() <= 2
        && frac.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok {
        return Err(err(field, "invalid_price", messages::bad_price()));
    }
    if whole.len() > 13 {
        return Err(err(
            field,
            "invalid_price",
            messages::price_too_large(PRICE_MAX_MINOR),
        ));
    }
    let whole: i64 = whole
        .parse()
        .map_err(|_| err(field, "invalid_price", messages::bad_price()))?;
    let frac: i64 = format!("{frac:0<2}").parse().unwrap_or(0);
    let minor = whole.checked_mul(100).and_then(|w| w.checked_add(frac));
    match minor {
        Some(m) => price_minor(field, m),
        None => Err(err(
            field,
            "invalid_price",
            messages::price_too_large(PRICE_MAX_MINOR),
        )),
    }
}

/// Formats minor units as major units with two decimals, for forms and tables.
pub fn format_price(minor: i64) -> String {
    format!("{}.{:02}", minor / 100, (minor % 100).abs())
}

/// An optional RFC 3339 instant from the API, as unix milliseconds.
pub fn rfc3339_opt(field: &str, raw: Option<&str>) -> Result<Option<i64>, FieldError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| Some(t.timestamp_millis()))
            .map_err(|_| err(field, "invalid_time", messages::bad_time(&label(field)))),
    }
}

/// Which end of a period a query bound is. A date alone (`2026-12-01`) means the start of that
/// day (`Start`) or its end, the start of the next day (`End`), in the timezone given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Start,
    End,
}

/// A time bound of a query: RFC 3339, or a date read in `tz` as `edge` says.
pub fn time_bound(
    field: &str,
    raw: Option<&str>,
    tz: Tz,
    edge: Edge,
) -> Result<Option<i64>, FieldError> {
    let Some(s) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(Some(t.timestamp_millis()));
    }
    let bad = || {
        err(
            field,
            "invalid_time",
            messages::bad_time_or_date(&label(field)),
        )
    };
    let day = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| bad())?;
    let day = match edge {
        Edge::Start => day,
        Edge::End => day.succ_opt().ok_or_else(bad)?,
    };
    // Midnight exists in every zone on almost every day; where a transition skips it, the
    // day starts at the first instant that exists.
    let midnight = day.and_hms_opt(0, 0, 0).ok_or_else(bad)?;
    let at = tz
        .from_local_datetime(&midnight)
        .earliest()
        .or_else(|| {
            tz.from_local_datetime(&(midnight + chrono::Duration::hours(1)))
                .earliest()
        })
        .ok_or_else(bad)?;
    Ok(Some(at.timestamp_millis()))
}

/// A whole number of a query (a page, a limit) from `min` up, or None when left out.
pub fn query_int(field: &str, raw: Option<&str>, min: i64) -> Result<Option<i64>, FieldError> {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => match s.parse::<i64>() {
            Ok(n) if n >= min => Ok(Some(n)),
            _ => Err(err(
                field,
                "invalid_number",
                messages::bad_whole_number(field),
            )),
        },
    }
}

/// An optional `datetime-local` form value, read in the merchant's timezone.
pub fn local_datetime_opt(field: &str, raw: &str, tz: Tz) -> Result<Option<i64>, FieldError> {
    let s = raw.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let naive = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S"))
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M"))
        .map_err(|_| err(field, "invalid_time", messages::bad_time(&label(field))))?;
    // In a daylight-saving gap there is no such local time; in an overlap take the earlier one.
    tz.from_local_datetime(&naive)
        .earliest()
        .map(|t| Some(t.timestamp_millis()))
        .ok_or_else(|| err(field, "invalid_time", messages::bad_time(&label(field))))
}

/// A required local date and time (see [`local_datetime_opt`]).
pub fn local_datetime(field: &str, raw: &str, tz: Tz) -> Result<i64, FieldError> {
    local_datetime_opt(field, raw, tz)?
        .ok_or_else(|| err(field, "required", messages::required(&label(field))))
}

pub fn sale_window(start: Option<i64>, end: Option<i64>) -> Result<(), FieldError> {
    match (start, end) {
        (Some(s), Some(e)) if s >= e => Err(err(
            "sale_ends_at",
            "invalid_sale_window",
            messages::sale_window_order(),
        )),
        _ => Ok(()),
    }
}

pub fn ms_to_rfc3339(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.to_rfc3339())
        .unwrap_or_default()
}

pub fn ms_to_local(ms: i64, tz: Tz, fmt: &str) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.with_timezone(&tz).format(fmt).to_string())
        .unwrap_or_default()
}

/// Collects field errors so a form can show all of them at once.
#[derive(Default)]
pub struct Errors(pub Vec<FieldError>);

impl Errors {
    pub fn take<T>(&mut self, r: Result<T, FieldError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.0.push(e);
                None
            }
        }
    }
    pub fn push(&mut self, e: FieldError) {
        self.0.push(e);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Adds another check's errors (a line of a list, a nested input).
    pub fn append(&mut self, other: &mut Vec<FieldError>) {
        self.0.append(other);
    }
    /// Every error at once, as the refusal of the whole input.
    pub fn refusal(self) -> crate::domain::DomainError {
        crate::domain::DomainError::Invalid(self.0)
    }
    pub fn into_result(self) -> Result<(), crate::domain::DomainError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(crate::domain::DomainError::Invalid(self.0))
        }
    }
}

/// An idempotency key as callers send it: trimmed, printable, at most IDEMPOTENCY_KEY_MAX bytes.
pub const IDEMPOTENCY_KEY_MAX: usize = 128;

pub fn idempotency_key(key: &str) -> Result<&str, FieldError> {
    let k = key.trim();
    if k.is_empty() {
        return Err(FieldError::new(
            "idempotency_key",
            "required",
            messages::required(&messages::label("idempotency_key")),
        ));
    }
    if k.len() > IDEMPOTENCY_KEY_MAX || k.chars().any(|c| c.is_control()) {
        return Err(FieldError::new(
            "idempotency_key",
            "too_long",
            messages::too_long(&messages::label("idempotency_key"), IDEMPOTENCY_KEY_MAX),
        ));
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_prices_parse_to_minor_units() {
        assert_eq!(price_major("price", "12.5").unwrap(), 1250);
        assert_eq!(price_major("price", "12").unwrap(), 1200);
        assert_eq!(price_major("price", "0.07").unwrap(), 7);
        assert!(price_major("price", "-1").is_err());
        assert!(price_major("price", "1.234").is_err());
        assert!(price_major("price", "abc").is_err());
        assert!(price_major("price", "99999999999999999999").is_err());
    }

    #[test]
    fn prices_are_read_as_people_type_them_on_chinese_and_western_keyboards() {
        for typed in [
            "¥1,288.50",
            "1288.5",
            "￥１，２８８．５０",
            "CN¥ 1 288.50",
            "1288.50元",
            "RMB1288.5",
        ] {
            assert_eq!(price_major("price", typed).unwrap(), 128_850, "{typed}");
        }
        assert_eq!(price_major("price", "１２８８").unwrap(), 128_800);
        assert_eq!(typed_int("１，０００"), Some(1000));
        assert_eq!(typed_int(" 12 "), Some(12));
        assert_eq!(typed_int("12.5"), None);
        assert!(price_major("price", "¥").is_err());
        assert!(price_major("price", "12元5").is_err());
    }

    #[test]
    fn local_times_are_read_in_the_merchant_timezone() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let ms = local_datetime_opt("sale_starts_at", "2026-12-01T09:00", tz)
            .unwrap()
            .unwrap();
        assert_eq!(ms_to_rfc3339(ms), "2026-12-01T01:00:00+00:00");
    }
}
