//! Which language a request is answered in (issue 16).
//!
//! - Signed-in pages: the user's own choice, else their merchant's language ([`User::lang`]),
//!   else what the request asks for.
//! - Anonymous pages (sign-in, booking pages): `?lang=` (remembered in the `sellable_lang`
//!   cookie), else that cookie, else `Accept-Language`, else the store's language, else English.
//! - The JSON API: `Accept-Language`, else English; its codes and field names never change.
//!
//! The edge middleware [`negotiate`] reads what the request asks for, keeps the answer's language
//! for the request's task (so an error page rendered far from any handler speaks it too), and
//! says `Content-Language` and `Vary` on the way out.
//!
//! [`User::lang`]: crate::domain::tenancy::users::User::lang

use axum::extract::Request;
use axum::http::header::{
    ACCEPT_LANGUAGE, CONTENT_LANGUAGE, CONTENT_TYPE, COOKIE, SET_COOKIE, VARY,
};
use axum::http::{HeaderMap, HeaderValue, Uri};
use axum::middleware::Next;
use axum::response::Response;

pub use crate::i18n::Lang;

/// The cookie that remembers an anonymous visitor's `?lang=`.
pub const COOKIE_NAME: &str = "sellable_lang";

/// What a request itself says about its language.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked {
    /// Chosen by the visitor: `?lang=` on this request, or the cookie an earlier one left.
    pub chosen: Option<Lang>,
    /// Their browser's `Accept-Language`, if it names one of ours.
    pub browser: Option<Lang>,
    /// `?lang=` was on this request (the cookie is to be set).
    from_query: bool,
}

impl Asked {
    pub fn of(uri: &Uri, headers: &HeaderMap) -> Asked {
        let query = uri.query().and_then(|q| {
            form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "lang")
                .and_then(|(_, v)| Lang::parse(&v))
        });
        let cookie = headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(cookie::Cookie::split_parse)
            .filter_map(Result::ok)
            .find(|c| c.name() == COOKIE_NAME)
            .and_then(|c| Lang::parse(c.value()));
        let browser = headers
            .get(ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
            .and_then(Lang::negotiate);
        Asked {
            chosen: query.or(cookie),
            browser,
            from_query: query.is_some(),
        }
    }

    /// An anonymous page's language: what the visitor asked for, else `fallback` (the store's).
    pub fn or(self, fallback: Lang) -> Lang {
        self.chosen.or(self.browser).unwrap_or(fallback)
    }
}

tokio::task_local! {
    static ASKED: Asked;
    static HERE: Uri;
}

/// The address of the page being answered in another language: the same path and query with
/// `lang` set (`/book/downtown?service=TEA&day=2026-12-03&lang=en`), for the switcher's links.
pub fn switch_href(lang: &Lang) -> String {
    let here = HERE.try_with(Uri::clone).unwrap_or_default();
    let mut q = form_urlencoded::Serializer::new(String::new());
    if let Some(query) = here.query() {
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            if k != "lang" {
                q.append_pair(&k, &v);
            }
        }
    }
    q.append_pair("lang", lang.tag());
    format!("{}?{}", here.path(), q.finish())
}

/// What the request being answered asked for (nothing outside a request).
pub fn asked() -> Asked {
    ASKED.try_with(|a| *a).unwrap_or_default()
}

/// An anonymous page about a store: the visitor's choice or browser, else the store's language.
pub fn for_store(store_lang: Lang) -> Lang {
    settle(asked().or(store_lang))
}

pub use crate::i18n::current;

/// Records the language a handler settled on (a signed-in user's, a store's), so that an error
/// answered after this point, and the `Content-Language` header, speak it.
pub fn settle(lang: Lang) -> Lang {
    crate::i18n::set_current(lang);
    lang
}

/// The edge middleware: see the module's documentation.
pub async fn negotiate(mut req: Request, next: Next) -> Response {
    let asked = Asked::of(req.uri(), req.headers());
    let api = req.uri().path().starts_with("/api/");
    let start = if api {
        asked.browser.unwrap_or_default()
    } else {
        asked.or(Lang::default())
    };
    req.extensions_mut().insert(asked);
    let here = req.uri().clone();
    let (mut res, lang) = HERE
        .scope(
            here,
            ASKED.scope(
                asked,
                crate::i18n::scope(start, async move {
                    let res = next.run(req).await;
                    (res, current())
                }),
            ),
        )
        .await;
    let h = res.headers_mut();
    let text = h
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/html") || t.starts_with("application/json"));
    if text {
        h.insert(CONTENT_LANGUAGE, HeaderValue::from_static(lang.tag()));
    }
    h.append(
        VARY,
        HeaderValue::from_static(if api {
            "Accept-Language"
        } else {
            "Accept-Language, Cookie"
        }),
    );
    if asked.from_query && !api {
        let c = cookie::Cookie::build((COOKIE_NAME, asked.chosen.unwrap_or(lang).tag()))
            .path("/")
            .http_only(true)
            .same_site(cookie::SameSite::Lax)
            .max_age(time::Duration::days(365))
            .build();
        if let Ok(v) = HeaderValue::from_str(&c.to_string()) {
            h.append(SET_COOKIE, v);
        }
    }
    res
}
