//! The interface's languages: 简体中文 and English. Every user-facing sentence is a named Fluent
//! message in `locales/<lang>/*.ftl` (compiled into the binary), asked for by name; placeholders
//! and plural rules are Fluent's, so no sentence is assembled in Rust. The command line and the
//! machine-readable parts of the API (error codes, field names, states) never change language.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::{LanguageIdentifier, Loader};

fluent_templates::static_loader! {
    static LOCALES = {
        locales: "./locales",
        fallback_language: "en",
        // No Unicode isolation marks around placeholders: the pages are one direction (LTR)
        // and the marks would land in copied references and codes.
        customise: |bundle| {
            bundle.set_use_isolating(false);
            // Whole numbers in sentences are grouped as the language writes them ("1,000,000"):
            // fluent-bundle prints them bare unless given a formatter.
            let zh = bundle.locales.first().is_some_and(|l| l.language.as_str() == "zh");
            bundle.set_formatter(Some(if zh { grouped::<true, _> } else { grouped::<false, _> }));
        },
    };
}

/// A Fluent number placeholder written by ICU4X: whole numbers only, and only where the message
/// asks for no digits of its own (`NUMBER($n, minimumFractionDigits: 2)` keeps Fluent's).
fn grouped<const CHINESE: bool, M>(v: &FluentValue, _: &M) -> Option<String> {
    let FluentValue::Number(n) = v else {
        return None;
    };
    let plain = n.options.minimum_fraction_digits.is_none()
        && n.options.minimum_integer_digits.is_none()
        && n.options.minimum_significant_digits.is_none();
    let whole = n.value.fract() == 0.0 && n.value.abs() < 9_007_199_254_740_992.0;
    let lang = if CHINESE { Lang::ZhCn } else { Lang::En };
    (plain && whole).then(|| format::number(lang, n.value as i64))
}

tokio::task_local! {
    static CURRENT: std::cell::Cell<Lang>;
}

/// The language of the request being answered: set by the web layer's edge middleware for the
/// request's task, English outside a request (the CLI, jobs, logs).
pub fn current() -> Lang {
    CURRENT.try_with(std::cell::Cell::get).unwrap_or_default()
}

/// Changes the current request's language (once a handler knows the user or the store).
pub fn set_current(lang: Lang) {
    let _ = CURRENT.try_with(|c| c.set(lang));
}

/// Runs `f` (a request) with `lang` as its current language.
pub async fn scope<F: std::future::Future>(lang: Lang, f: F) -> F::Output {
    CURRENT.scope(std::cell::Cell::new(lang), f).await
}

/// A whole number however a template holds it (askama hands fields over by reference, and an
/// `if let` binding adds one more).
pub trait Int {
    fn int(&self) -> i64;
}

impl Int for i64 {
    fn int(&self) -> i64 {
        *self
    }
}

impl Int for usize {
    fn int(&self) -> i64 {
        i64::try_from(*self).unwrap_or(i64::MAX)
    }
}

impl Int for u64 {
    fn int(&self) -> i64 {
        i64::try_from(*self).unwrap_or(i64::MAX)
    }
}

impl<T: Int + ?Sized> Int for &T {
    fn int(&self) -> i64 {
        (**self).int()
    }
}

/// A language of the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    /// 简体中文, as written in mainland China.
    ZhCn,
    #[default]
    En,
}

static ZH_CN: LazyLock<LanguageIdentifier> = LazyLock::new(|| "zh-CN".parse().expect("zh-CN"));
static EN: LazyLock<LanguageIdentifier> = LazyLock::new(|| "en".parse().expect("en"));

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::ZhCn, Lang::En];

    /// The BCP 47 tag: `<html lang>`, `Content-Language`, `?lang=` and the stored setting.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::ZhCn => "zh-CN",
            Lang::En => "en",
        }
    }

    /// The language's own name, for the switcher (each language names itself).
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::ZhCn => "简体中文",
            Lang::En => "English",
        }
    }

    /// A tag as people and browsers write it: `zh-CN`, `zh`, `zh-Hans`, `zh_cn`, `en`, `en-US` …
    /// Traditional Chinese and other languages are not ours: None.
    pub fn parse(tag: &str) -> Option<Lang> {
        let id: LanguageIdentifier = tag.trim().replace('_', "-").parse().ok()?;
        match id.language.as_str() {
            "en" => Some(Lang::En),
            "zh" => {
                let traditional = id.script.is_some_and(|s| s.as_str() == "Hant")
                    || id
                        .region
                        .is_some_and(|r| matches!(r.as_str(), "TW" | "HK" | "MO"));
                (!traditional).then_some(Lang::ZhCn)
            }
            _ => None,
        }
    }

    /// The best of our languages for an `Accept-Language` header, by its weights; None when it
    /// names none of them.
    pub fn negotiate(accept_language: &str) -> Option<Lang> {
        let mut asked: Vec<(f32, usize, &str)> = accept_language
            .split(',')
            .enumerate()
            .filter_map(|(i, part)| {
                let mut it = part.split(';');
                let tag = it.next()?.trim();
                let q = it
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())?;
                (q > 0.0 && !tag.is_empty()).then_some((q, i, tag))
            })
            .collect();
        // Highest weight first; equal weights keep the header's order.
        asked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        asked.into_iter().find_map(|(_, _, tag)| Lang::parse(tag))
    }

    fn id(self) -> &'static LanguageIdentifier {
        match self {
            Lang::ZhCn => &ZH_CN,
            Lang::En => &EN,
        }
    }

    /// The message `key` in this language.
    pub fn t(self, key: &str) -> String {
        LOCALES.lookup(self.id(), key)
    }

    /// The message `key` with its placeholders filled.
    pub fn t_args(self, key: &str, args: &[(&'static str, Arg)]) -> String {
        let map: HashMap<Cow<'static, str>, FluentValue<'_>> = args
            .iter()
            .map(|(k, v)| (Cow::Borrowed(*k), v.to_fluent()))
            .collect();
        LOCALES.lookup_with_args(self.id(), key, &map)
    }

    /// One placeholder, the common case in templates: `{{ lang.t1("slots-left", "n", n) }}`.
    pub fn t1(self, key: &str, name: &'static str, value: impl Into<Arg>) -> String {
        self.t_args(key, &[(name, value.into())])
    }

    /// Two placeholders (templates pass each as a `(name, Arg)` pair, by reference).
    pub fn t2(
        self,
        key: &str,
        a: impl std::borrow::Borrow<(&'static str, Arg)>,
        b: impl std::borrow::Borrow<(&'static str, Arg)>,
    ) -> String {
        self.t_args(key, &[a.borrow().clone(), b.borrow().clone()])
    }

    /// An aside in brackets as this language writes them: "(6 minutes ago)", "（6分钟前）".
    pub fn paren(self, x: impl Into<Arg>) -> String {
        self.t1("paren", "x", x)
    }

    /// A count as this language writes it ("900,000"); see [`format`].
    pub fn num(self, n: impl Int) -> String {
        format::number(self, n.int())
    }

    /// A share with one decimal ("12.5%"), or a dash where there is nothing to divide by.
    pub fn percent(self, p: Option<f64>) -> String {
        p.map_or_else(|| "—".to_string(), |p| format::percent(self, p))
    }

    /// An amount in minor units of a currency ("¥1,288.50" / "CN¥1,288.50").
    pub fn money(self, minor: impl Int, currency: &str) -> String {
        format::money(self, minor.int(), currency)
    }

    /// A price as a customer reads it: "Free" / "免费" for 0 (a price set on purpose), else
    /// [`Lang::money`].
    pub fn price(self, minor: impl Int, currency: &str) -> String {
        match minor.int() {
            0 => self.t("public-free"),
            m => format::money(self, m, currency),
        }
    }

    /// A time zone as this language names it ("中国时间" / "China Time").
    pub fn zone(self, iana: &str) -> String {
        format::zone(self, iana)
    }

    /// A length of time in minutes ("60分钟" / "60 minutes").
    pub fn minutes(self, m: impl Int) -> String {
        format::minutes(self, m.int())
    }
}

/// From the stored TEXT column.
impl TryFrom<String> for Lang {
    type Error = String;
    fn try_from(s: String) -> Result<Lang, String> {
        Lang::parse(&s).ok_or_else(|| format!("unknown language {s:?}"))
    }
}

impl std::fmt::Display for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tag())
    }
}

/// A placeholder's value: a number (which selects the plural form) or a text.
#[derive(Debug, Clone)]
pub enum Arg {
    Num(i64),
    Text(String),
}

impl Arg {
    fn to_fluent(&self) -> FluentValue<'_> {
        match self {
            Arg::Num(n) => FluentValue::from(*n),
            Arg::Text(s) => FluentValue::from(s.as_str()),
        }
    }
}

impl From<i64> for Arg {
    fn from(n: i64) -> Arg {
        Arg::Num(n)
    }
}
// Templates hand their values over by reference.
impl From<&i64> for Arg {
    fn from(n: &i64) -> Arg {
        Arg::Num(*n)
    }
}
// …and a value bound by `if let` in a template, by reference once more.
impl From<&&i64> for Arg {
    fn from(n: &&i64) -> Arg {
        Arg::Num(**n)
    }
}
impl From<&usize> for Arg {
    fn from(n: &usize) -> Arg {
        Arg::from(*n)
    }
}
impl From<u64> for Arg {
    fn from(n: u64) -> Arg {
        Arg::Num(i64::try_from(n).unwrap_or(i64::MAX))
    }
}
impl From<usize> for Arg {
    fn from(n: usize) -> Arg {
        Arg::Num(n as i64)
    }
}
impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::Text(s.to_string())
    }
}
impl From<&&str> for Arg {
    fn from(s: &&str) -> Arg {
        Arg::Text(s.to_string())
    }
}
impl From<String> for Arg {
    fn from(s: String) -> Arg {
        Arg::Text(s)
    }
}
impl From<&String> for Arg {
    fn from(s: &String) -> Arg {
        Arg::Text(s.clone())
    }
}

pub mod format;

#[cfg(test)]
mod catalogue;

#[cfg(test)]
mod tests {
    use super::Lang;

    #[test]
    fn browser_tags_map_to_simplified_chinese_or_english_and_traditional_is_not_ours() {
        for t in ["zh-CN", "zh", "zh-Hans", "zh-Hans-CN", "zh_cn", "ZH-cn"] {
            assert_eq!(Lang::parse(t), Some(Lang::ZhCn), "{t}");
        }
        for t in ["en", "en-US", "en-GB"] {
            assert_eq!(Lang::parse(t), Some(Lang::En), "{t}");
        }
        for t in ["zh-TW", "zh-Hant", "zh-HK", "fr", "", "*", "x\u{0}y"] {
            assert_eq!(Lang::parse(t), None, "{t:?}");
        }
    }

    #[test]
    fn accept_language_picks_the_highest_weighted_language_we_have() {
        assert_eq!(Lang::negotiate("zh-CN,zh;q=0.9,en;q=0.8"), Some(Lang::ZhCn));
        assert_eq!(
            Lang::negotiate("fr-FR, en;q=0.5, zh;q=0.7"),
            Some(Lang::ZhCn)
        );
        assert_eq!(Lang::negotiate("en-US,en;q=0.9"), Some(Lang::En));
        assert_eq!(Lang::negotiate("zh-TW, de"), None);
        assert_eq!(Lang::negotiate("zh;q=0, en"), Some(Lang::En));
        assert_eq!(Lang::negotiate(""), None);
        assert_eq!(Lang::negotiate("en;q=abc, zh"), Some(Lang::ZhCn));
    }

    #[test]
    fn placeholders_and_plurals_come_from_the_catalogue() {
        assert_eq!(Lang::En.t1("public-places-left", "n", 1i64), "1 place left");
        assert_eq!(
            Lang::En.t1("public-places-left", "n", 3i64),
            "3 places left"
        );
        assert_eq!(
            Lang::ZhCn.t1("public-places-left", "n", 3i64),
            "剩余 3 个名额"
        );
    }
}
