//! What back-office pages share besides the frame: choices in a select, a form's field errors,
//! links with a query string, pagination, and (in submodules) the store a page is about, dates in
//! the store's timezone and the banner of a frozen object. No page module imports another.

pub mod actor;
pub mod calendar;
pub mod frozen;
pub mod hooks;
pub mod links;
pub mod pager;
pub mod sort;
pub mod store;
pub mod time;
pub mod verdicts;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::domain::kernel::validate::Errors;
use crate::domain::FieldError;

/// A choice in a select: value, label, and whether it is the current one.
#[derive(Debug, Clone)]
pub struct Opt {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// Field errors of a form, looked up by field name from templates.
#[derive(Debug, Clone, Default)]
pub struct Errs(pub Vec<FieldError>);

impl Errs {
    pub fn get(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.message.as_str())
    }
    pub fn any(&self) -> bool {
        !self.0.is_empty()
    }
    /// Errors that belong to no visible field, shown at the top of the form.
    pub fn others(&self, shown: &[&str]) -> Vec<&str> {
        self.0
            .iter()
            .filter(|e| !shown.contains(&e.field.as_str()))
            .map(|e| e.message.as_str())
            .collect()
    }
}

impl From<Errors> for Errs {
    fn from(e: Errors) -> Errs {
        Errs(e.0)
    }
}

/// What a query value escapes: all but RFC 3986's unreserved characters and `/`, which is kept so
/// that `store=acme/main-store` and `next=/admin/products` read as they are.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// One query value, percent-encoded.
pub fn encode(value: &str) -> String {
    utf8_percent_encode(value, QUERY_VALUE).to_string()
}

/// `key=value&…` for links, empty values left out. The one query builder of the web layer.
pub fn query(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `path?query`, or the bare path when every value is empty.
pub fn link(path: &str, pairs: &[(&str, &str)]) -> String {
    let q = query(pairs);
    if q.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{q}")
    }
}

/// One page of a list already in memory: the rows, the page shown, the page count and the total.
pub fn paginate<T>(items: Vec<T>, page: &str, per: usize) -> (Vec<T>, i64, i64, i64) {
    let total = items.len();
    let pages = total.div_ceil(per).max(1);
    let page = page.parse::<usize>().unwrap_or(1).clamp(1, pages);
    let rows = items.into_iter().skip((page - 1) * per).take(per).collect();
    (rows, page as i64, pages as i64, total as i64)
}

/// `12345` as `12,345`.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_leaves_out_empty_values_and_escapes_all_but_unreserved_and_slash() {
        assert_eq!(
            query(&[("store", "acme/main-store"), ("q", ""), ("s", "a b&c=d?é")]),
            "store=acme/main-store&s=a%20b%26c%3Dd%3F%C3%A9"
        );
        assert_eq!(link("/admin/slots", &[("week", "")]), "/admin/slots");
    }

    proptest::proptest! {
        /// Any value survives the trip through a link: decoding gives back what was encoded.
        #[test]
        fn an_encoded_value_decodes_to_itself(v in "\\PC{0,40}") {
            let encoded = encode(&v);
            let decoded = percent_encoding::percent_decode_str(&encoded).decode_utf8().unwrap();
            proptest::prop_assert_eq!(decoded, v.as_str());
        }

        /// An encoded value never breaks the query apart.
        #[test]
        fn an_encoded_value_holds_no_separator(v in "\\PC{0,40}") {
            let e = encode(&v);
            proptest::prop_assert!(!e.contains(['&', '=', '#', '?', ' ', '+']));
        }
    }

    #[test]
    fn paginate_clamps_the_page_into_range() {
        let (rows, page, pages, total) = paginate((1..=25).collect(), "9", 10);
        assert_eq!(
            (rows, page, pages, total),
            (vec![21, 22, 23, 24, 25], 3, 3, 25)
        );
        let (rows, page, pages, _) = paginate(Vec::<i32>::new(), "x", 10);
        assert_eq!((rows.len(), page, pages), (0, 1, 1));
    }

    #[test]
    fn thousands_groups_digits_by_three() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
    }
}
